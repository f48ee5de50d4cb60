//! `mend apply --pending` and `mend pending …` through the real binary.

use std::io::Write as _;
use std::process::{Command, Stdio};

use crate::{mend_bin, run_mend};

const TEN: &str = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n";

fn sr(path: &str, search: &str, replace: &str) -> String {
    format!("{path}\n<<<<<<< SEARCH\n{search}\n=======\n{replace}\n>>>>>>> REPLACE\n")
}

/// A folder with `f.txt` (TEN) and `edit` proposed in the default session.
fn proposed(edit: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.txt"), TEN).unwrap();
    let out = run_mend(dir.path(), &["apply", "--pending"], Some(edit.as_bytes()));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    dir
}

fn text(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_pending_apply_writes_nothing_and_review_accepts_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("f.txt"), TEN).unwrap();
    let edit = sr("f.txt", "two", "TWO") + "\n" + &sr("f.txt", "nine", "NINE");
    let out = run_mend(
        d,
        &["apply", "--pending", "--session", "s1"],
        Some(edit.as_bytes()),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains("held in pending session `s1`"),
        "{}",
        text(&out)
    );
    assert_eq!(std::fs::read_to_string(d.join("f.txt")).unwrap(), TEN);
    let status = run_mend(d, &["pending", "status", "--session", "s1", "--json"], None);
    let v: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(v["files"][0]["status"], "M");
    let out = run_mend(
        d,
        &["pending", "accept", "--session", "s1", "--hunk", "2"],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        std::fs::read_to_string(d.join("f.txt")).unwrap(),
        TEN.replace("nine", "NINE")
    );
    // A local edit that overlaps what is left is refused with exit 1.
    std::fs::write(
        d.join("f.txt"),
        TEN.replace("two", "two by hand").replace("nine", "NINE"),
    )
    .unwrap();
    let out = run_mend(d, &["pending", "accept", "--session", "s1"], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("overlap"), "{}", text(&out));
    let out = run_mend(d, &["pending", "status", "--session", "s1"], None);
    assert_eq!(text(&out), "~M f.txt\n");
}

/// While `mend apply --pending --stream` is still reading its response,
/// another process's accept on that session is refused; once the stream
/// ends, it goes through.
#[test]
fn a_streaming_proposal_holds_the_session() {
    let dir = proposed(&sr("f.txt", "two", "TWO"));
    let d = dir.path();
    let mut streaming = Command::new(mend_bin())
        .args(["apply", "--pending", "--stream"])
        .current_dir(d)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = streaming.stdin.take().unwrap();
    input
        .write_all(sr("f.txt", "nine", "NINE").as_bytes())
        .unwrap();
    input.flush().unwrap();
    // Its first status line means it holds the lock (taken before it
    // reads) and has read a block.
    let mut first = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(streaming.stdout.as_mut().unwrap()),
        &mut first,
    )
    .unwrap();
    assert!(first.starts_with("applied"), "{first}");
    let out = run_mend(d, &["pending", "accept"], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let refused = text(&out);
    assert!(
        refused.contains("a request is streaming into session `default`"),
        "{refused}"
    );
    let status = run_mend(d, &["pending", "status"], None);
    assert_eq!(status.status.code(), Some(0));
    drop(input);
    assert!(streaming.wait().unwrap().success());
    let out = run_mend(d, &["pending", "accept"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        std::fs::read_to_string(d.join("f.txt")).unwrap(),
        TEN.replace("two", "TWO").replace("nine", "NINE")
    );
}

/// Runs `mend review` on `d` in a pseudo-terminal through
/// `tests/review/drive.py` with these steps, and checks it exited 0.
#[cfg(unix)]
fn drive(d: &std::path::Path, steps: &[&str]) {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/review/drive.py");
    let out = Command::new("python3")
        .arg(script)
        .arg(mend_bin())
        .arg(d)
        .args(steps)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        text(&out),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `mend review` in a pseudo-terminal: `n` moves to hunk 2, `a` accepts
/// it, `q` quits; the file then has exactly that hunk.
#[cfg(unix)]
#[test]
fn review_accepts_a_hunk_with_keystrokes() {
    let dir = proposed(&(sr("f.txt", "two", "TWO") + "\n" + &sr("f.txt", "nine", "NINE")));
    let d = dir.path();
    drive(d, &["wait:NINE", "n", "a", "wait:accepted hunk 2", "q"]);
    assert_eq!(
        std::fs::read_to_string(d.join("f.txt")).unwrap(),
        TEN.replace("nine", "NINE")
    );
    let status = run_mend(d, &["pending", "status"], None);
    assert_eq!(text(&status), "M  f.txt\n");
}

/// The screen follows changes other commands make while it is open: a
/// file added to the session shows up with the header's counts, and a
/// local edit turns the file `~M` with its merge preview, with no key
/// pressed.
#[cfg(unix)]
#[test]
fn review_refreshes_when_the_session_changes_outside() {
    let dir = proposed(&sr("f.txt", "two", "TWO"));
    let d = dir.path();
    std::fs::write(d.join("g.txt"), TEN).unwrap();
    drive(
        d,
        &[
            "wait:1 file: 1 M",
            "mend:pending add g.txt",
            "wait:2 files: 1 unchanged, 1 M",
            "wait:g.txt",
            "write:f.txt:one\\ntwo by hand\\nthree\\n",
            "wait:the merge has 1 conflict(s)",
            "wait:1 unchanged, 1 ~M",
            "q",
        ],
    );
    assert_eq!(
        std::fs::read_to_string(d.join("f.txt")).unwrap(),
        "one\ntwo by hand\nthree\n"
    );
}

/// The person selects FIVE's hunk (hunk 2 of 3); another command rejects
/// hunk 1. The screen refreshes with the selection still on FIVE's hunk,
/// now hunk 1, and `a` accepts FIVE, never NINE, which took number 2.
#[cfg(unix)]
#[test]
fn review_keeps_the_selected_hunk_when_another_command_renumbers_it() {
    let edits = [("two", "TWO"), ("five", "FIVE"), ("nine", "NINE")];
    let response: Vec<String> = edits.iter().map(|(a, b)| sr("f.txt", a, b)).collect();
    let dir = proposed(&response.join("\n"));
    let d = dir.path();
    drive(
        d,
        &[
            "wait:hunk 1 of 3",
            "n",
            "wait:hunk 2 of 3",
            "mend:pending reject f.txt --hunk 1",
            "wait:hunk 1 of 2",
            "a",
            "wait:accepted hunk 1 of f.txt",
            "q",
        ],
    );
    assert_eq!(
        std::fs::read_to_string(d.join("f.txt")).unwrap(),
        TEN.replace("five", "FIVE")
    );
}

/// A `~M` file whose merge conflicts: `p` is refused with advice for the
/// screen, `m` asks first (any other key cancels and writes nothing), and
/// `m` `y` writes the merge with conflict markers.
#[cfg(unix)]
#[test]
fn review_writes_conflict_markers_after_a_confirmation() {
    let dir = proposed(&(sr("f.txt", "two", "TWO") + "\n" + &sr("f.txt", "nine", "NINE")));
    let d = dir.path();
    let local = TEN.replace("two", "two by hand");
    std::fs::write(d.join("f.txt"), &local).unwrap();
    drive(
        d,
        &[
            "wait:m writes conflict markers",
            "p",
            "wait:overlap",
            "m",
            "wait:y writes",
            "n",
            "wait:cancelled: nothing was written",
            "q",
        ],
    );
    assert_eq!(std::fs::read_to_string(d.join("f.txt")).unwrap(), local);
    drive(
        d,
        &[
            "wait:m writes conflict markers",
            "m",
            "wait:y writes",
            "y",
            "wait:accepted f.txt (merged with conflict markers)",
            "q",
        ],
    );
    let merged = TEN
        .replace(
            "two\n",
            "<<<<<<< local\ntwo by hand\n=======\nTWO\n>>>>>>> proposal\n",
        )
        .replace("nine", "NINE");
    assert_eq!(std::fs::read_to_string(d.join("f.txt")).unwrap(), merged);
    let status = run_mend(d, &["pending", "status"], None);
    assert_eq!(text(&status), "   f.txt\n", "accepted: nothing left");
}

/// A streamed proposal is checked block by block against the session's
/// view, so an edit on top of an earlier proposal is not reported failed
/// while it streams.
#[test]
fn a_streamed_proposal_checks_blocks_against_the_session() {
    let dir = proposed(&sr("f.txt", "two", "TWO"));
    let d = dir.path();
    let on_top = sr("f.txt", "TWO\nthree", "TWO\nTHREE");
    let out = run_mend(
        d,
        &["apply", "--pending", "--stream"],
        Some(on_top.as_bytes()),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(!text(&out).contains("FAILED"), "{}", text(&out));
    assert!(text(&out).starts_with("applied"), "{}", text(&out));
}
