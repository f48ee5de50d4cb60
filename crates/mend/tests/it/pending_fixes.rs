//! Pending review under attack: drops racing proposals, hunk numbers the
//! person never saw, stuck `?` files, and the messages and exit codes of
//! the odd cases.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::{run_mend, tree};

use crate::search_replace as sr;

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

/// `mend pending drop`, run again while it is refused because a proposal
/// is coming in (the request lock), so that it lands between two
/// proposals and races the next; its last outcome.
fn drop_between_proposals(d: &std::path::Path) -> std::process::Output {
    let deadline = Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let o = run_mend(d, &["pending", "drop", "default"], None);
        let busy = o.status.code() == Some(1) && out(&o).contains("a request is streaming in");
        if !busy || Instant::now() > deadline {
            return o;
        }
    }
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
        // (Or until the proposers are done with the files they propose
        // while drops go on: a drop refused while a proposal comes in is
        // run again, so the drops take longer than they did.)
        let before = ran.lock().unwrap().len();
        let first_half = PROPOSERS * (EACH / 2);
        while ran.lock().unwrap().len() < (before + 2).min(first_half) {
            std::thread::yield_now();
        }
        drops.push(drop_between_proposals(&d));
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

/// Forty numbered lines with two reviewed changes, hunks 1 and 2 (lines 20
/// and 36: far enough apart that a change at line 28 is a hunk of its own).
fn reviewed() -> tempfile::TempDir {
    let forty: String = (1..=40).map(|n| format!("line {n}\n")).collect();
    let dir = tree(&[("f.txt", forty)]);
    let both =
        sr("f.txt", "line 20", "REVIEWED 20") + "\n" + &sr("f.txt", "line 36", "REVIEWED 36");
    assert_eq!(propose(dir.path(), &both).status.code(), Some(0));
    dir
}

/// The person reads the diff (hunk 2 is `REVIEWED 36`); an agent then
/// proposes a change between the two. `--hunk 2` now names the agent's
/// hunk, which the person never saw: refused, exit 1, nothing written;
/// after diff again, the numbers are the ones shown and it works.
#[test]
fn a_hunk_number_from_a_diff_before_a_new_proposal_is_refused() {
    let dir = reviewed();
    let d = dir.path();
    let before = std::fs::read_to_string(d.join("f.txt")).unwrap();
    let diff = run_mend(d, &["pending", "diff"], None);
    assert!(out(&diff).contains("+REVIEWED 36"), "{}", out(&diff));
    assert_eq!(
        propose(d, &sr("f.txt", "line 28", "UNREVIEWED"))
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
    assert_eq!(now, before.replace("line 36\n", "REVIEWED 36\n"));
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
        propose(d, &sr("f.txt", "line 28", "UNREVIEWED"))
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
    assert!(diff.contains("+REVIEWED 36"), "{diff}");
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

/// `--json` asks for one JSON document whatever happens: usage errors,
/// clap's included, are `{"error": {"kind": "usage", …}}` with exit 2.
#[test]
fn json_usage_errors_are_one_json_document() {
    let dir = tree(&[("a.txt", "a\n")]);
    let d = dir.path();
    for args in [
        &["pending", "accept", "--json", "--hunk", "x"][..],
        &["pending", "diff", "--json", "--against", "bogus"][..],
        &["pending", "status", "--json", "--lock-timeout", "abc"][..],
        &["pending", "drop", "--json"][..],
        &["pending", "bogus", "--json"][..],
        &["apply", "--pending", "--json", "--dry-run", "-"][..],
    ] {
        let o = run_mend(d, args, Some(b""));
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", out(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", out(&o)));
        assert_eq!(v["error"]["kind"], "usage", "{args:?}: {v}");
        assert!(v["error"]["message"].as_str().unwrap().contains("error: "));
        assert_eq!(v.get("written").is_some(), args[0] == "apply", "{v}");
    }
}

/// One missing blob: the message names the file, says the rest of the
/// session works and that rejecting that file repairs it; a proposal to
/// that file is told the same, not to check permissions.
#[test]
fn one_missing_blob_names_its_file_and_the_repair() {
    let dir = tree(&[("a.txt", "a\n"), ("b.txt", "b\n")]);
    let d = dir.path();
    let both = sr("a.txt", "a", "A") + "\n" + &sr("b.txt", "b", "B");
    assert_eq!(propose(d, &both).status.code(), Some(0));
    let blobs = d.join(".mend/pending/default/blobs");
    let a_blob = blobs.join(sha256_hex("A\n"));
    std::fs::remove_file(&a_blob).unwrap();
    let diff = run_mend(d, &["pending", "diff", "a.txt"], None);
    assert_ne!(diff.status.code(), Some(0), "{}", out(&diff));
    let said = out(&diff);
    assert!(
        said.contains("so the proposal for a.txt cannot be read back"),
        "{said}"
    );
    assert!(
        said.contains("The session's other files are intact"),
        "{said}"
    );
    assert!(
        said.contains("`mend pending reject a.txt` removes"),
        "{said}"
    );
    assert!(!said.contains("mend pending drop"), "{said}");
    let o = propose(d, &sr("a.txt", "A", "AA"));
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));
    assert!(
        out(&o).contains("Ask the person to run `mend pending reject a.txt`"),
        "{}",
        out(&o)
    );
    assert!(!out(&o).contains("permissions"), "{}", out(&o));
    let b = run_mend(d, &["pending", "accept", "b.txt"], None);
    assert_eq!(b.status.code(), Some(0), "{}", out(&b));
    let o = run_mend(d, &["pending", "reject", "a.txt"], None);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    let diff = run_mend(d, &["pending", "diff"], None);
    assert_eq!(diff.status.code(), Some(0), "{}", out(&diff));
    assert_eq!(std::fs::read_to_string(d.join("b.txt")).unwrap(), "B\n");
}

fn sha256_hex(text: &str) -> String {
    mend_workspace::ContentHash::of(text.as_bytes()).hex()
}

/// A proposal that deletes a file changed since: sync's advice works
/// (reject it, or delete the file and accept), and names no --markers.
#[test]
fn sync_of_a_changed_file_the_proposal_deletes_gives_advice_that_works() {
    let dir = tree(&[("d.txt", "1\n2\n")]);
    let d = dir.path();
    let delete = "*** Begin Patch\n*** Delete File: d.txt\n*** End Patch\n";
    assert_eq!(propose(d, delete).status.code(), Some(0));
    std::fs::write(d.join("d.txt"), "1\n2\nmine\n").unwrap();
    let sync = run_mend(d, &["pending", "sync"], None);
    assert_eq!(sync.status.code(), Some(1), "{}", out(&sync));
    assert!(!out(&sync).contains("--markers"), "{}", out(&sync));
    assert!(
        out(&sync).contains("`mend pending reject d.txt`"),
        "{}",
        out(&sync)
    );
    std::fs::remove_file(d.join("d.txt")).unwrap();
    let o = run_mend(d, &["pending", "accept", "d.txt"], None);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
}

/// A rename onto a path made locally since the proposal shows `!R`, and
/// accepting it is a collision (exit 1) with advice for a person; the
/// rename is named by its new name too.
#[test]
fn a_rename_onto_a_new_local_file_is_a_collision() {
    let dir = tree(&[("b.txt", "1\n2\n3\n")]);
    let d = dir.path();
    let rename = "*** Begin Patch\n*** Update File: b.txt\n*** Move to: z.txt\n@@\n 1\n-2\n+TWO\n*** End Patch\n";
    assert_eq!(propose(d, rename).status.code(), Some(0));
    std::fs::write(d.join("z.txt"), "local\n").unwrap();
    let status = run_mend(d, &["pending", "status"], None);
    assert_eq!(
        String::from_utf8_lossy(&status.stdout),
        "!R b.txt -> z.txt\n"
    );
    let o = run_mend(d, &["pending", "accept", "--json"], None);
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["error"]["kind"], "collision", "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Move your z.txt aside"),
        "{v}"
    );
    assert_eq!(std::fs::read_to_string(d.join("z.txt")).unwrap(), "local\n");
    std::fs::remove_file(d.join("z.txt")).unwrap();
    let o = run_mend(d, &["pending", "accept", "z.txt"], None);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    assert_eq!(
        std::fs::read_to_string(d.join("z.txt")).unwrap(),
        "1\nTWO\n3\n"
    );
}

/// A FIFO where the session's lock file belongs: a clear message with the
/// command that fixes it, no raw OS error.
#[cfg(unix)]
#[test]
fn a_fifo_at_the_session_lock_says_how_to_fix_it() {
    let dir = tree(&[("a.txt", "a\n")]);
    let d = dir.path();
    assert_eq!(propose(d, &sr("a.txt", "a", "A")).status.code(), Some(0));
    let lock = d.join(".mend/pending/default/lock");
    std::fs::remove_file(&lock).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(&lock)
        .status()
        .unwrap();
    assert!(made.success());
    let o = run_mend(d, &["pending", "status"], None);
    assert_ne!(o.status.code(), Some(0), "{}", out(&o));
    assert!(!out(&o).contains("os error"), "{}", out(&o));
    assert!(
        out(&o).contains("rm .mend/pending/default/lock"),
        "{}",
        out(&o)
    );
}

/// Hunks whose context would overlap are one hunk, so `git apply` takes
/// the diff; a new empty file is in the diff; an output equal to the file
/// is not reported written; a file named twice is added once.
#[test]
fn diffs_apply_with_git_and_odd_outputs_are_reported_plainly() {
    let ten = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n";
    let dir = tree(&[("m.txt", ten), ("t.txt", "t\n"), ("n.txt", "1\n2\n3\n")]);
    let d = dir.path();
    let near = sr("m.txt", "2", "TWO") + "\n" + &sr("m.txt", "6", "SIX");
    assert_eq!(propose(d, &near).status.code(), Some(0));
    let diff = run_mend(d, &["pending", "diff", "m.txt"], None);
    let diff = String::from_utf8_lossy(&diff.stdout).into_owned();
    assert_eq!(diff.matches("\n@@ ").count(), 1, "{diff}");
    let git = std::process::Command::new("git")
        .args(["apply", "-"])
        .current_dir(d)
        .stdin(std::process::Stdio::piped())
        .spawn();
    if let Ok(mut git) = git {
        use std::io::Write as _;
        git.stdin
            .take()
            .unwrap()
            .write_all(diff.as_bytes())
            .unwrap();
        assert!(git.wait().unwrap().success(), "{diff}");
        assert_eq!(
            std::fs::read_to_string(d.join("m.txt")).unwrap(),
            ten.replace("2\n", "TWO\n").replace("\n6\n", "\nSIX\n")
        );
    }
    let empty = "*** Begin Patch\n*** Add File: empty.txt\n*** End Patch\n";
    assert_eq!(propose(d, empty).status.code(), Some(0));
    let diff = run_mend(d, &["pending", "diff", "empty.txt"], None);
    assert!(
        String::from_utf8_lossy(&diff.stdout)
            .contains("diff --git a/empty.txt b/empty.txt\nnew file"),
        "{}",
        out(&diff)
    );
    assert_eq!(propose(d, &sr("n.txt", "2", "TWO")).status.code(), Some(0));
    assert_eq!(propose(d, &sr("n.txt", "TWO", "2")).status.code(), Some(0));
    // An output back to the file as it is holds nothing to write: it is
    // settled as the context, and nothing says `written`.
    let status = run_mend(d, &["pending", "status"], None);
    assert!(
        String::from_utf8_lossy(&status.stdout).contains("   n.txt\n"),
        "{}",
        out(&status)
    );
    let o = run_mend(d, &["pending", "accept", "n.txt"], None);
    assert!(!out(&o).contains("written"), "{}", out(&o));
    assert_eq!(
        std::fs::read_to_string(d.join("n.txt")).unwrap(),
        "1\n2\n3\n"
    );
    let o = run_mend(d, &["pending", "add", "t.txt", "t.txt"], None);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).matches("t.txt").count(),
        1,
        "{}",
        out(&o)
    );
}

/// Control characters from a file reach a pipe exactly (a diff for `git
/// apply`) and a terminal escaped.
#[cfg(unix)]
#[test]
fn control_characters_are_escaped_for_a_terminal_only() {
    let dir = tree(&[("e.txt", "red \u{1b}[31m here\nplain\n")]);
    let d = dir.path();
    let o = propose(d, &sr("e.txt", "plain", "PLAIN"));
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    let piped = run_mend(d, &["pending", "diff"], None);
    assert!(
        piped.stdout.windows(2).any(|w| w == b"\x1b["),
        "{}",
        out(&piped)
    );
    let script = "import os, pty, sys\n\
        pid, fd = pty.fork()\n\
        if pid == 0:\n    os.execv(sys.argv[1], [sys.argv[1], 'pending', 'diff', '--root', sys.argv[2]])\n\
        out = b''\n\
        while True:\n    try:\n        chunk = os.read(fd, 65536)\n    except OSError:\n        break\n    if not chunk:\n        break\n    out += chunk\n\
        os.waitpid(pid, 0)\n\
        sys.stdout.buffer.write(out)\n";
    let tty = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(crate::mend_bin())
        .arg(d)
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&tty.stdout).into_owned();
    assert!(shown.contains(" red \\u{1b}[31m here"), "{shown}");
    assert!(!tty.stdout.contains(&0x1b), "{shown}");
}

/// A refused path's message names the path; the summary line does not
/// name it a second time.
#[cfg(unix)]
#[test]
fn a_refused_path_is_named_once_in_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("proj");
    std::fs::create_dir_all(dir.path().join("outside")).unwrap();
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(dir.path().join("outside/x.txt"), "x\n").unwrap();
    std::os::unix::fs::symlink("../outside", d.join("sub")).unwrap();
    for args in [&["apply", "--pending"][..], &["apply"][..]] {
        let o = run_mend(&d, args, Some(sr("sub/x.txt", "x", "X").as_bytes()));
        let said = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(
            said.starts_with("FAILED   #1 sub/x.txt: goes through a symbolic link"),
            "{args:?}: {said}"
        );
    }
}
