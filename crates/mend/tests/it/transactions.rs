//! Transactions through the real binary: SIGKILL at chosen commit steps,
//! concurrent processes, stale expected hashes, partial application.

use std::process::{Command, Stdio};

use crate::{mend_bin, run_mend};

const FILES: usize = 50;

fn fifty_file_root() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut response = String::new();
    for i in 0..FILES {
        let rel = format!("pkg{}/file{i}.txt", i % 5);
        let p = dir.path().join(&rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, format!("header {i}\nold body {i}\nfooter\n")).unwrap();
        response.push_str(&format!(
            "{rel}\n<<<<<<< SEARCH\nold body {i}\n=======\nnew body {i}\nmore {i}\n>>>>>>> REPLACE\n\n"
        ));
    }
    (dir, response)
}

/// Which version each file holds: `Some(false)` old, `Some(true)` new,
/// `None` torn.
fn states(root: &std::path::Path) -> Vec<Option<bool>> {
    (0..FILES)
        .map(|i| {
            let s =
                std::fs::read_to_string(root.join(format!("pkg{}/file{i}.txt", i % 5))).unwrap();
            if s == format!("header {i}\nold body {i}\nfooter\n") {
                Some(false)
            } else if s == format!("header {i}\nnew body {i}\nmore {i}\nfooter\n") {
                Some(true)
            } else {
                None
            }
        })
        .collect()
}

/// Where a kill lands, told by what is on disk when it is sent: the
/// commit is paused a few milliseconds after each step, and the test waits
/// for the step's trace rather than for a time.
#[derive(Clone, Copy, Debug)]
enum KillPoint {
    /// The pending journal is written and `n` temporary files are staged:
    /// before the commit point, so recovery rolls back to all old.
    Staged(usize),
    /// `n` targets (of fifty) hold the new text: past the commit point,
    /// so recovery rolls forward to all new.
    Renamed(usize),
}

impl KillPoint {
    /// Whether the tree at `root` has reached this point.
    fn reached(self, root: &std::path::Path) -> bool {
        match self {
            KillPoint::Staged(n) => {
                walk(root).iter().filter(|p| p.contains(".mend-")).count() >= n
                    && states(root).iter().all(|s| *s == Some(false))
            }
            KillPoint::Renamed(n) => states(root).iter().filter(|s| **s == Some(true)).count() >= n,
        }
    }

    /// Whether the kill left the state this point names (a loaded machine
    /// may run a step or two past it before the kill lands): for a staged
    /// point, a journal still pending; for a rename, a mixed tree.
    fn landed(self, root: &std::path::Path, after_kill: &[Option<bool>]) -> bool {
        let new = after_kill.iter().filter(|s| **s == Some(true)).count();
        match self {
            KillPoint::Staged(_) => std::fs::read_to_string(root.join(".mend/journal.json"))
                .is_ok_and(|j| j.contains("\"state\": \"pending\"")),
            KillPoint::Renamed(_) => new > 0 && new < FILES,
        }
    }
}

/// Runs `mend apply` on a fresh tree, SIGKILLs it once `point` is on disk
/// (or it exits), checks that nothing is torn, that `mend recover` leaves
/// all old or all new and no temporary file or journal, and returns
/// whether the kill landed on `point` and the state after recovery.
#[cfg(unix)]
fn kill_at(point: KillPoint) -> (bool, Vec<Option<bool>>) {
    let (dir, response) = fifty_file_root();
    let input = dir.path().join("response.txt");
    std::fs::write(&input, &response).unwrap();
    let mut child = Command::new(mend_bin())
        .args(["apply", "--commit-step-delay-ms", "3", "--root"])
        .arg(dir.path())
        .arg(&input)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    while !point.reached(dir.path()) && child.try_wait().unwrap().is_none() {
        std::thread::yield_now();
    }
    let _ = child.kill(); // SIGKILL
    let _ = child.wait();
    let after_kill = states(dir.path());
    let landed = point.landed(dir.path(), &after_kill);
    assert!(
        after_kill.iter().all(Option::is_some),
        "{point:?}: a file is torn: {after_kill:?}"
    );
    let out = run_mend(dir.path(), &["recover"], None);
    assert_eq!(out.status.code(), Some(0), "{point:?}");
    let after = states(dir.path());
    let all_old = after.iter().all(|s| *s == Some(false));
    let all_new = after.iter().all(|s| *s == Some(true));
    assert!(all_old || all_new, "{point:?}: after recovery {after:?}");
    let leftovers: Vec<String> = walk(dir.path())
        .into_iter()
        .filter(|p| p.contains(".mend-") || p.ends_with("journal.json"))
        .collect();
    assert!(leftovers.is_empty(), "{point:?}: {leftovers:?}");
    (landed, after)
}

#[cfg(unix)]
#[test]
fn sigkill_at_chosen_commit_steps_leaves_old_or_new_and_recovers() {
    // Before the commit point (as staging starts, midway, at its end) and
    // during the renames (first, middle, last but one). Each point is
    // retried until a kill lands on it, so coverage does not depend on how
    // busy the machine is; every try checks the invariant.
    let points = [
        KillPoint::Staged(1),
        KillPoint::Staged(FILES / 2),
        KillPoint::Staged(FILES),
        KillPoint::Renamed(1),
        KillPoint::Renamed(FILES / 2),
        KillPoint::Renamed(FILES - 5),
    ];
    for point in points {
        let landed = (0..20).find_map(|_| {
            let (landed, after) = kill_at(point);
            landed.then_some(after)
        });
        let after = landed.unwrap_or_else(|| panic!("{point:?}: no kill landed there in 20 tries"));
        let want_new = matches!(point, KillPoint::Renamed(_));
        assert!(
            after.iter().all(|s| *s == Some(want_new)),
            "{point:?}: recovery should leave all {}: {after:?}",
            if want_new { "new" } else { "old" }
        );
    }
}

fn walk(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p.to_string_lossy().into_owned());
        }
    }
    out
}

#[test]
fn concurrent_processes_lose_no_edit() {
    let dir = tempfile::tempdir().unwrap();
    let lines: Vec<String> = (0..8).map(|i| format!("line {i}")).collect();
    std::fs::write(dir.path().join("shared.txt"), lines.join("\n") + "\n").unwrap();
    let children: Vec<_> = (0..8)
        .map(|i| {
            let input = dir.path().join(format!("r{i}.txt"));
            std::fs::write(
                &input,
                format!("shared.txt\n<<<<<<< SEARCH\nline {i}\n=======\nLINE {i} edited by process {i}\n>>>>>>> REPLACE\n"),
            )
            .unwrap();
            Command::new(mend_bin())
                .args(["apply", "--commit-step-delay-ms", "2", "--root"])
                .arg(dir.path())
                .arg(&input)
                .stdout(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    let text = std::fs::read_to_string(dir.path().join("shared.txt")).unwrap();
    for i in 0..8 {
        assert!(
            text.contains(&format!("LINE {i} edited by process {i}")),
            "{text}"
        );
    }
}

#[test]
fn stale_expected_hash_is_refused_with_what_changed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
    let out = run_mend(dir.path(), &["hash", "a.txt"], None);
    let line = String::from_utf8_lossy(&out.stdout).to_string();
    let hash = line.split_whitespace().next().unwrap().to_owned();
    assert!(hash.starts_with("sha256:"), "{line}");
    // The file changes after the model read it.
    std::fs::write(dir.path().join("a.txt"), "one\nTWO\n").unwrap();
    let edit = "a.txt\n<<<<<<< SEARCH\none\n=======\n1\n>>>>>>> REPLACE\n";
    let expect = format!("a.txt={hash}");
    let out = run_mend(
        dir.path(),
        &["apply", "--expect", &expect],
        Some(edit.as_bytes()),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("file changed since you read it"),
        "{stdout}"
    );
    assert!(stdout.contains("-two"), "{stdout}");
    assert!(stdout.contains("+TWO"), "{stdout}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "one\nTWO\n"
    );
    // With the current hash the edit applies.
    let out = run_mend(dir.path(), &["hash", "a.txt"], None);
    let hash = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned();
    let expect = format!("a.txt={hash}");
    let out = run_mend(
        dir.path(),
        &["apply", "--expect", &expect],
        Some(edit.as_bytes()),
    );
    assert_eq!(out.status.code(), Some(0));
}

/// A version mend never gave out (a typo, bare hex, a truncated hash) is
/// refused as stale, as a wrong one is: the model is told to read the file
/// again, not why its string failed to parse, and nothing is written.
#[test]
fn malformed_expected_hash_is_refused_as_stale() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("a.txt"),
        "one
",
    )
    .unwrap();
    let hex = mend_workspace::ContentHash::of(b"one\n").hex();
    let edit = "a.txt\n<<<<<<< SEARCH\none\n=======\n1\n>>>>>>> REPLACE\n";
    for version in [
        "garbage".to_owned(),
        String::new(),
        hex.clone(),
        format!("sha256:{}", &hex[..63]),
        format!("SHA256:{hex}"),
    ] {
        let expect = format!("a.txt={version}");
        let out = run_mend(
            dir.path(),
            &["apply", "--expect", &expect],
            Some(edit.as_bytes()),
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{version}: {stdout}");
        assert!(
            stdout.contains("a.txt: file changed since you read it"),
            "{version}: {stdout}"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
            "one\n"
        );
    }
    // The same hash, spelled as `mend hash` prints it, applies.
    let expect = format!("a.txt=sha256:{hex}");
    let out = run_mend(
        dir.path(),
        &["apply", "--expect", &expect],
        Some(edit.as_bytes()),
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}

#[test]
fn partial_applies_what_succeeds_and_skips_after_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "a1\na2\na3\n").unwrap();
    std::fs::write(dir.path().join("b.txt"), "b1\n").unwrap();
    let edit = "a.txt\n<<<<<<< SEARCH\na1\n=======\nA1\n>>>>>>> REPLACE\n\
a.txt\n<<<<<<< SEARCH\nmissing\n=======\nx\n>>>>>>> REPLACE\n\
a.txt\n<<<<<<< SEARCH\na3\n=======\nA3\n>>>>>>> REPLACE\n\
b.txt\n<<<<<<< SEARCH\nb1\n=======\nB1\n>>>>>>> REPLACE\n";
    let out = run_mend(
        dir.path(),
        &["apply", "--partial", "--json"],
        Some(edit.as_bytes()),
    );
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["written"], true);
    assert_eq!(v["applied"], 2);
    assert_eq!(v["requested"], 4);
    assert_eq!(v["edits"][2]["status"], "skipped");
    assert_eq!(v["edits"][2]["failure"]["kind"], "previous_failed");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "A1\na2\na3\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("b.txt")).unwrap(),
        "B1\n"
    );
}

#[test]
fn utf16_file_is_edited_in_its_encoding() {
    let dir = tempfile::tempdir().unwrap();
    let text = "\u{feff}hello\r\nworld\r\n";
    let bytes: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
    std::fs::write(dir.path().join("w.txt"), &bytes).unwrap();
    let edit = "w.txt\n<<<<<<< SEARCH\nworld\n=======\nmend\n>>>>>>> REPLACE\n";
    let out = run_mend(dir.path(), &["apply"], Some(edit.as_bytes()));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let want: Vec<u8> = "\u{feff}hello\r\nmend\r\n"
        .encode_utf16()
        .flat_map(u16::to_le_bytes)
        .collect();
    assert_eq!(std::fs::read(dir.path().join("w.txt")).unwrap(), want);
}
