//! A `pending accept` killed in the middle of its commit, then a hand edit
//! of a file it had not reached: whichever command runs next finishes the
//! accept first, never over the hand edit, whose place the accept's
//! version is set aside in; the session then shows what is on disk.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::{mend_bin, run_mend};

const FILES: usize = 12;
/// The last file in the accept's order, which a kill after the first write
/// leaves unreached.
const LAST: &str = "f11.txt";

fn name(i: usize) -> String {
    format!("f{i:02}.txt")
}

/// A folder whose `FILES` files have pending outputs in the default
/// session, and `other.txt` for commands that need a file.
pub(crate) fn proposed() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut response = String::new();
    for i in 0..FILES {
        std::fs::write(dir.path().join(name(i)), format!("old {i}\n")).unwrap();
        response.push_str(&format!(
            "{}\n<<<<<<< SEARCH\nold {i}\n=======\nnew {i}\n>>>>>>> REPLACE\n\n",
            name(i)
        ));
    }
    std::fs::write(dir.path().join("other.txt"), "z\n").unwrap();
    let out = run_mend(
        dir.path(),
        &["apply", "--pending"],
        Some(response.as_bytes()),
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    dir
}

/// Kills `mend pending accept` once it has moved the first file into place,
/// then edits the last one by hand.
fn killed_then_edited(d: &std::path::Path) {
    killed(d);
    std::fs::write(d.join(LAST), b"HAND EDIT\n").unwrap();
}

/// Kills `mend pending accept` once it has moved the first file into place,
/// before it reaches the last.
pub(crate) fn killed(d: &std::path::Path) {
    let mut child = Command::new(mend_bin())
        .args(["pending", "accept", "--commit-step-delay-ms", "40"])
        .current_dir(d)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let first = d.join(name(0));
    loop {
        if std::fs::read(&first).unwrap() == b"new 0\n" {
            break;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the accept ended unkilled"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    let _ = child.kill(); // SIGKILL
    let _ = child.wait();
    assert!(
        d.join(".mend/journal.json").exists(),
        "killed after its commit"
    );
    assert_eq!(std::fs::read(d.join(LAST)).unwrap(), b"old 11\n", "reached");
}

/// What the recovery left: the hand edit, the accept's version set aside,
/// every other file written, no journal or temporary file.
fn hand_edit_kept(d: &std::path::Path, stderr: &str) {
    assert_eq!(std::fs::read(d.join(LAST)).unwrap(), b"HAND EDIT\n");
    let said = format!(
        "{LAST} changed after the interrupted write; kept as it is, the interrupted write's version is in .mend/aside/interrupted-"
    );
    rest_finished(d, stderr, &said);
}

/// Every file but the last written, the last one's output set aside and
/// told (`said` is in `told`), no journal or temporary file left.
fn rest_finished(d: &std::path::Path, told: &str, said: &str) {
    for i in 0..FILES - 1 {
        assert_eq!(
            std::fs::read_to_string(d.join(name(i))).unwrap(),
            format!("new {i}\n")
        );
    }
    let aside: Vec<_> = std::fs::read_dir(d.join(".mend/aside"))
        .unwrap()
        .flatten()
        .map(|e| e.path().join(LAST))
        .collect();
    assert_eq!(aside.len(), 1, "{aside:?}");
    assert_eq!(std::fs::read(&aside[0]).unwrap(), b"new 11\n");
    assert!(told.contains(said), "{told}");
    assert!(!d.join(".mend/journal.json").exists());
    let temps: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".mend-"))
        .collect();
    assert!(temps.is_empty(), "{temps:?}");
}

/// The session's letters, by path.
fn letters(d: &std::path::Path) -> Vec<(String, String)> {
    let out = run_mend(d, &["pending", "status", "--json"], None);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let files = v.get("files").unwrap_or(&v).as_array().unwrap().clone();
    files
        .iter()
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap().to_owned();
            (s("path"), s("status"))
        })
        .collect()
}

/// Each command that reads or changes the session or the worktree
/// finishes the interrupted accept first, keeping the hand edit.
#[cfg(unix)]
#[test]
fn every_command_finishes_a_killed_accept_without_overwriting_a_hand_edit() {
    let other = "other.txt\n<<<<<<< SEARCH\nz\n=======\nZ\n>>>>>>> REPLACE\n";
    let commands: [(&[&str], Option<&str>); 9] = [
        (&["pending", "status"], None),
        (&["pending", "diff"], None),
        (&["pending", "reject", LAST], None),
        (&["pending", "sync"], None),
        (&["pending", "add", "other.txt"], None),
        (&["pending", "accept", "f00.txt"], None),
        (&["apply", "--pending"], Some(other)),
        (&["apply"], Some(other)),
        (&["recover"], None),
    ];
    for (args, stdin) in commands {
        let dir = proposed();
        let d = dir.path();
        killed_then_edited(d);
        let out = run_mend(d, args, stdin.map(str::as_bytes));
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        // `mend recover` says what it did on standard output.
        hand_edit_kept(d, &(stderr + &stdout));
        // Every file the accept wrote is settled; the hand-edited one
        // keeps its output, beside the local change (unless rejected).
        let mut want: Vec<(String, String)> =
            (0..FILES - 1).map(|i| (name(i), " ".to_owned())).collect();
        if args != ["pending", "reject", LAST] {
            want.push((LAST.to_owned(), "~M".to_owned()));
        } else {
            want.push((LAST.to_owned(), "~".to_owned()));
        }
        let got: Vec<(String, String)> = letters(d)
            .into_iter()
            .filter(|(p, _)| p.starts_with('f'))
            .collect();
        assert_eq!(got, want, "{args:?}");
    }
}

/// Dropping the session after a killed accept finishes the accept too.
#[cfg(unix)]
#[test]
fn dropping_the_session_finishes_a_killed_accept_first() {
    let dir = proposed();
    let d = dir.path();
    killed_then_edited(d);
    let out = run_mend(d, &["pending", "drop", "default"], None);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    hand_edit_kept(d, &String::from_utf8_lossy(&out.stderr));
}

/// A killed accept whose unreached target is then swapped for a link to a
/// file outside the root: `mend recover` still finishes the accept (its
/// sealed journal is mend's), keeps the link, never writes through it, sets
/// the accept's version aside and leaves no temporary file.
#[cfg(unix)]
#[test]
fn a_target_linked_outside_after_a_killed_accept_is_kept_and_the_rest_finished() {
    let dir = proposed();
    let d = dir.path();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret");
    std::fs::write(&secret, b"outside\n").unwrap();
    killed(d);
    std::fs::remove_file(d.join(LAST)).unwrap();
    std::os::unix::fs::symlink(&secret, d.join(LAST)).unwrap();
    let out = run_mend(d, &["recover"], None);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let said = format!(
        "completed an interrupted transaction; {LAST} now leads outside the project root (or into .git or .mend) through a symbolic link; kept as it is, never written through, the interrupted write's version is in .mend/aside/interrupted-"
    );
    assert!(stdout.starts_with(&said), "{stdout}");
    assert_eq!(std::fs::read(&secret).unwrap(), b"outside\n");
    assert_eq!(std::fs::read_link(d.join(LAST)).unwrap(), secret);
    rest_finished(d, &stdout, &said);
    let out = run_mend(d, &["recover"], None);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "nothing to recover\n");
}

/// While another mend process writes (holding the workspace lock), a
/// pending accept that will not wait is refused as busy (exit 1), naming
/// the holder's command and process id.
#[cfg(unix)]
#[test]
fn a_busy_workspace_names_its_holder() {
    let dir = proposed();
    let d = dir.path();
    let other = "other.txt\n<<<<<<< SEARCH\nz\n=======\nZ\n>>>>>>> REPLACE\n";
    let edit = (0..FILES).fold(other.to_owned(), |r, i| {
        r + &format!(
            "\n{}\n<<<<<<< SEARCH\nold {i}\n=======\nmine {i}\n>>>>>>> REPLACE\n",
            name(i)
        )
    });
    let mut child = Command::new(mend_bin())
        .args(["apply", "--commit-step-delay-ms", "200", "-"])
        .current_dir(d)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    {
        use std::io::Write as _;
        let mut input = child.stdin.take().unwrap();
        input.write_all(edit.as_bytes()).unwrap();
    }
    // The journal is written under the lock, after the holder named itself.
    while !d.join(".mend/journal.json").exists() {
        assert!(child.try_wait().unwrap().is_none(), "the apply ended");
        std::thread::sleep(Duration::from_millis(1));
    }
    let out = run_mend(
        d,
        &["pending", "accept", "--json", "--lock-timeout", "0"],
        None,
    );
    let pid = child.id();
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let said = v.to_string();
    assert_eq!(v["error"]["kind"], "busy", "{said}");
    assert!(
        said.contains(&format!(
            "mend apply --commit-step-delay-ms 200 - (pid {pid})"
        )),
        "{said}"
    );
}
