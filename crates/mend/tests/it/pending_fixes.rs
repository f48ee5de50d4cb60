//! Pending review under attack: drops racing proposals, hunk numbers the
//! person never saw, stuck `?` files, and the messages and exit codes of
//! the odd cases.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::{run_mend, tree};

fn sr(path: &str, search: &str, replace: &str) -> String {
    format!("{path}\n<<<<<<< SEARCH\n{search}\n=======\n{replace}\n>>>>>>> REPLACE\n")
}

fn out(o: &std::process::Output) -> String {
    format!(
        "exit {:?}\nstdout: {}\nstderr: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn propose(d: &std::path::Path, response: &str) -> std::process::Output {
    run_mend(d, &["apply", "--pending"], Some(response.as_bytes()))
}

/// One proposal as it ran: its file, when it started, and how it ended.
struct Ran {
    file: String,
    start: Instant,
    output: std::process::Output,
}

/// Proposers race `mend pending drop`: every command ends with exit 0 (a
/// drop may find no session: exit 1), none prints a raw OS error, the
/// session is never left damaged, and every proposal acknowledged after
/// the last drop returned is held intact.
#[test]
fn drops_racing_proposals_leave_no_damage_and_lose_no_later_proposal() {
    const PROPOSERS: usize = 4;
    const EACH: usize = 14;
    let files: Vec<(String, String)> = (0..PROPOSERS)
        .flat_map(|t| (0..EACH).map(move |k| (format!("f{t}_{k}.txt"), format!("o {t} {k}\n"))))
        .collect();
    let files: Vec<(&str, &String)> = files.iter().map(|(p, c)| (p.as_str(), c)).collect();
    let dir = tree(&files);
    let d = dir.path().to_owned();
    let ran = Arc::new(Mutex::new(Vec::new()));
    let dropping = Arc::new(AtomicBool::new(true));
    let proposers: Vec<_> = (0..PROPOSERS)
        .map(|t| {
            let (d, ran, dropping) = (d.clone(), ran.clone(), dropping.clone());
            std::thread::spawn(move || {
                let mut after = 0;
                for k in 0..EACH {
                    // Half the files at least after the drops are over.
                    if k >= EACH / 2 {
                        while dropping.load(Ordering::SeqCst) {
                            std::thread::yield_now();
                        }
                    }
                    let file = format!("f{t}_{k}.txt");
                    let start = Instant::now();
                    let output = propose(&d, &sr(&file, &format!("o {t} {k}"), "N"));
                    after += usize::from(!dropping.load(Ordering::SeqCst));
                    ran.lock().unwrap().push(Ran {
                        file,
                        start,
                        output,
                    });
                }
                after
            })
        })
        .collect();
    let mut drops = Vec::new();
    let mut last_drop_end = Instant::now();
    for _ in 0..5 {
        // Wait for a proposal or two between drops, so each drop races.
        let before = ran.lock().unwrap().len();
        while ran.lock().unwrap().len() < before + 2 {
            std::thread::yield_now();
        }
        drops.push(run_mend(&d, &["pending", "drop", "default"], None));
        last_drop_end = Instant::now();
    }
    dropping.store(false, Ordering::SeqCst);
    for p in proposers {
        assert!(p.join().unwrap() > 0);
    }
    for o in &drops {
        assert!(matches!(o.status.code(), Some(0 | 1)), "{}", out(o));
        assert!(!out(o).contains("os error"), "{}", out(o));
    }
    let status = run_mend(&d, &["pending", "status"], None);
    assert_eq!(status.status.code(), Some(0), "{}", out(&status));
    let status = String::from_utf8_lossy(&status.stdout).into_owned();
    let ran = ran.lock().unwrap();
    let mut later = 0;
    for r in ran.iter() {
        assert_eq!(
            r.output.status.code(),
            Some(0),
            "{}: {}",
            r.file,
            out(&r.output)
        );
        assert!(!out(&r.output).contains("os error"), "{}", out(&r.output));
        if r.start > last_drop_end {
            later += 1;
            assert!(
                status.contains(&format!("M  {}\n", r.file)),
                "{} lost:\n{status}",
                r.file
            );
        }
    }
    assert!(later >= PROPOSERS * EACH / 2, "{later}");
    let diff = run_mend(&d, &["pending", "diff"], None);
    assert_eq!(diff.status.code(), Some(0), "{}", out(&diff));
    let accept = run_mend(&d, &["pending", "accept"], None);
    assert_eq!(accept.status.code(), Some(0), "{}", out(&accept));
    let left = std::fs::read_dir(d.join(".mend/pending")).unwrap().count();
    assert_eq!(left, 1, "only the session's folder; tombstones are removed");
}

/// A session made again after a drop is a new, empty one, and dropping a
/// session whose index is damaged still works.
#[test]
fn a_session_after_a_drop_is_new_and_a_damaged_one_drops() {
    let dir = tree(&[("a.txt", "a\n"), ("b.txt", "b\n")]);
    let d = dir.path();
    assert_eq!(propose(d, &sr("a.txt", "a", "A")).status.code(), Some(0));
    let drop = run_mend(d, &["pending", "drop", "default"], None);
    assert_eq!(drop.status.code(), Some(0), "{}", out(&drop));
    assert_eq!(propose(d, &sr("b.txt", "b", "B")).status.code(), Some(0));
    let status = run_mend(d, &["pending", "status"], None);
    assert_eq!(String::from_utf8_lossy(&status.stdout), "M  b.txt\n");
    std::fs::write(d.join(".mend/pending/default/index.json"), "{ damaged").unwrap();
    let drop = run_mend(d, &["pending", "drop", "default"], None);
    assert_eq!(drop.status.code(), Some(0), "{}", out(&drop));
    let list = run_mend(d, &["pending", "list"], None);
    assert_eq!(String::from_utf8_lossy(&list.stdout), "");
    let again = run_mend(d, &["pending", "drop", "default"], None);
    assert_eq!(again.status.code(), Some(1), "{}", out(&again));
    assert!(
        out(&again).contains("no pending session `default`"),
        "{}",
        out(&again)
    );
}

/// Forty numbered lines with two reviewed changes, hunks 1 and 2.
fn reviewed() -> tempfile::TempDir {
    let forty: String = (1..=40).map(|n| format!("line {n}\n")).collect();
    let dir = tree(&[("f.txt", forty)]);
    let both =
        sr("f.txt", "line 20", "REVIEWED 20") + "\n" + &sr("f.txt", "line 35", "REVIEWED 35");
    assert_eq!(propose(dir.path(), &both).status.code(), Some(0));
    dir
}

/// The person reads the diff (hunk 2 is `REVIEWED 35`); an agent then
/// proposes a change between the two. `--hunk 2` now names the agent's
/// hunk, which the person never saw: refused, exit 1, nothing written;
/// after diff again, the numbers are the ones shown and it works.
#[test]
fn a_hunk_number_from_a_diff_before_a_new_proposal_is_refused() {
    let dir = reviewed();
    let d = dir.path();
    let before = std::fs::read_to_string(d.join("f.txt")).unwrap();
    let diff = run_mend(d, &["pending", "diff"], None);
    assert!(out(&diff).contains("+REVIEWED 35"), "{}", out(&diff));
    assert_eq!(
        propose(d, &sr("f.txt", "line 27", "UNREVIEWED"))
            .status
            .code(),
        Some(0)
    );
    for verb in ["accept", "reject"] {
        let o = run_mend(d, &["pending", verb, "f.txt", "--hunk", "2"], None);
        assert_eq!(o.status.code(), Some(1), "{}", out(&o));
        assert!(
            out(&o).contains("f.txt: changed since `mend pending diff` showed it"),
            "{}",
            out(&o)
        );
    }
    assert_eq!(std::fs::read_to_string(d.join("f.txt")).unwrap(), before);
    let diff =
        String::from_utf8_lossy(&run_mend(d, &["pending", "diff"], None).stdout).into_owned();
    assert!(
        diff.contains("@@ hunk 3\n") || diff.matches(" hunk ").count() == 3,
        "{diff}"
    );
    let o = run_mend(d, &["pending", "accept", "f.txt", "--hunk", "3"], None);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    let now = std::fs::read_to_string(d.join("f.txt")).unwrap();
    assert_eq!(now, before.replace("line 35\n", "REVIEWED 35\n"));
}

/// `--seen ID` checks against the version a diff printed, for a script
/// that does not rely on the recorded last diff.
#[test]
fn seen_takes_the_version_a_diff_printed() {
    let dir = reviewed();
    let d = dir.path();
    let json = run_mend(d, &["pending", "diff", "--json"], None);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let version = v["versions"]["f.txt"].as_str().unwrap().to_owned();
    let diff = v["diff"].as_str().unwrap();
    assert!(
        diff.starts_with(&format!("# f.txt: version {version}\n")),
        "{diff}"
    );
    assert_eq!(
        propose(d, &sr("f.txt", "line 27", "UNREVIEWED"))
            .status
            .code(),
        Some(0)
    );
    let o = run_mend(
        d,
        &[
            "pending", "accept", "f.txt", "--hunk", "2", "--seen", &version, "--json",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));
    let e: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(e["error"]["kind"], "unseen", "{e}");
    let shown = run_mend(d, &["pending", "diff", "--json"], None);
    let v: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    let now = v["versions"]["f.txt"].as_str().unwrap().to_owned();
    assert_ne!(now, version);
    let o = run_mend(
        d,
        &["pending", "reject", "f.txt", "--hunk", "2", "--seen", &now],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    let diff =
        String::from_utf8_lossy(&run_mend(d, &["pending", "diff"], None).stdout).into_owned();
    assert!(!diff.contains("UNREVIEWED"), "{diff}");
    assert!(diff.contains("+REVIEWED 35"), "{diff}");
}

/// A `?` file whose folder became a link out of the project is rejected
/// by name (reject reads nothing there); a context-only entry that became
/// a folder does not block a sync of every file, and `reject PATH`
/// forgets it; a context-only entry that is fine is still refused.
#[cfg(unix)]
#[test]
fn stuck_question_mark_files_can_be_rejected_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let (d, outside) = (dir.path().join("proj"), dir.path().join("outside"));
    std::fs::create_dir_all(d.join("sub")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(d.join("sub/x.txt"), "x\n").unwrap();
    std::fs::write(d.join("y.txt"), "y\n").unwrap();
    std::fs::write(d.join("z.txt"), "z\n").unwrap();
    assert_eq!(
        propose(&d, &sr("sub/x.txt", "x", "X")).status.code(),
        Some(0)
    );
    std::fs::rename(d.join("sub"), d.join("sub.real")).unwrap();
    std::os::unix::fs::symlink("../outside", d.join("sub")).unwrap();
    let o = run_mend(&d, &["pending", "reject", "sub/x.txt"], None);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "rejected sub/x.txt\n");

    let add = run_mend(&d, &["pending", "add", "y.txt", "z.txt"], None);
    assert_eq!(add.status.code(), Some(0), "{}", out(&add));
    std::fs::remove_file(d.join("y.txt")).unwrap();
    std::fs::create_dir(d.join("y.txt")).unwrap();
    std::fs::write(d.join("z.txt"), "z by hand\n").unwrap();
    let sync = run_mend(&d, &["pending", "sync"], None);
    assert_eq!(sync.status.code(), Some(0), "{}", out(&sync));
    let said = String::from_utf8_lossy(&sync.stdout).into_owned();
    assert!(said.contains("synced z.txt\n"), "{said}");
    assert!(
        said.contains("skipped y.txt: it is a directory")
            && said.contains("mend pending reject y.txt"),
        "{said}"
    );
    let fine = run_mend(&d, &["pending", "reject", "z.txt"], None);
    assert_eq!(fine.status.code(), Some(1), "{}", out(&fine));
    assert!(out(&fine).contains("has no output"), "{}", out(&fine));
    // Both stuck entries (sub/x.txt kept its context) are forgotten.
    let o = run_mend(&d, &["pending", "reject", "y.txt", "sub/x.txt"], None);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    let status = run_mend(&d, &["pending", "status"], None);
    assert_eq!(String::from_utf8_lossy(&status.stdout), "   z.txt\n");
}

/// `mend review` of a session that does not exist fails before it takes
/// the terminal, exit 1, as `mend pending status` does.
#[test]
fn review_of_no_session_exits_one_like_status() {
    let dir = tree(&[("a.txt", "a\n")]);
    let d = dir.path();
    for args in [
        &["review", "--session", "nosuch"][..],
        &["pending", "status", "--session", "nosuch"][..],
    ] {
        let o = run_mend(d, args, None);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", out(&o));
        assert!(
            out(&o).contains("there is no pending session `nosuch`"),
            "{}",
            out(&o)
        );
    }
}
