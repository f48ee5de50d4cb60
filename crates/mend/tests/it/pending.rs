//! `mend apply --pending` and `mend pending …` through the real binary.

use std::io::Write as _;
use std::process::{Command, Stdio};

use crate::{mend_bin, run_mend};

// Ten lines and a half: "two" and "nine" are seven lines apart, so changing
// both makes two hunks (git joins changes six or fewer lines apart).
const TEN: &str = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nhalf\nnine\nten\n";

use crate::search_replace as sr;

/// A folder with `f.txt` (TEN) and `edit` proposed in the default session.
fn proposed(edit: &str) -> tempfile::TempDir {
    let dir = ten(&["f.txt"]);
    let out = run_mend(dir.path(), &["apply", "--pending"], Some(edit.as_bytes()));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    dir
}

fn text(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn file(d: &std::path::Path, name: &str) -> String {
    std::fs::read_to_string(d.join(name)).unwrap()
}

/// `mend ARGS` in `d`, running, with its standard input open (its
/// standard error is not kept, so no log can fill a pipe and stall it).
pub(crate) fn spawn(
    d: &std::path::Path,
    args: &[&str],
) -> (std::process::Child, std::process::ChildStdin) {
    let mut child = Command::new(mend_bin())
        .args(args)
        .current_dir(d)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let input = child.stdin.take().unwrap();
    (child, input)
}

/// A folder holding TEN in each of `files`.
fn ten(files: &[&str]) -> tempfile::TempDir {
    crate::tree(&files.iter().map(|f| (*f, TEN)).collect::<Vec<_>>())
}

#[test]
fn a_pending_apply_writes_nothing_and_review_accepts_it() {
    let dir = ten(&["f.txt"]);
    let d = dir.path();
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
    assert_eq!(file(d, "f.txt"), TEN);
    let status = run_mend(d, &["pending", "status", "--session", "s1", "--json"], None);
    let v: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(v["files"][0]["status"], "M");
    let out = run_mend(
        d,
        &["pending", "accept", "--session", "s1", "--hunk", "2"],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(file(d, "f.txt"), TEN.replace("nine", "NINE"));
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

/// Starts `mend apply --pending --stream` on `first`, and returns once it
/// has checked that block (its first status line), with its standard
/// input still open.
fn streaming(d: &std::path::Path, first: &str) -> (std::process::Child, std::process::ChildStdin) {
    let (mut child, mut input) = spawn(d, &["apply", "--pending", "--stream"]);
    input.write_all(first.as_bytes()).unwrap();
    input.flush().unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.as_mut().unwrap()),
        &mut line,
    )
    .unwrap();
    assert!(line.starts_with("applied"), "{line}");
    (child, input)
}

/// A proposal reported as held while another streams in is still held
/// when the stream ends: the stream is held against the session as it is
/// at its end, not over it.
#[test]
fn a_proposal_held_while_another_streams_in_is_kept() {
    let dir = proposed(&sr("f.txt", "two", "TWO"));
    let d = dir.path();
    let (child, input) = streaming(d, &sr("f.txt", "nine", "NINE"));
    let out = run_mend(
        d,
        &["apply", "--pending"],
        Some(sr("f.txt", "five", "FIVE").as_bytes()),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains("held in pending session"),
        "{}",
        text(&out)
    );
    drop(input);
    let streamed = child.wait_with_output().unwrap();
    assert_eq!(streamed.status.code(), Some(0), "{}", text(&streamed));
    let out = run_mend(d, &["pending", "accept"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        file(d, "f.txt"),
        TEN.replace("two", "TWO")
            .replace("five", "FIVE")
            .replace("nine", "NINE")
    );
}

/// Holds a session's lock from this process, as another mend would, naming
/// itself in the lock file.
fn hold_session_lock(d: &std::path::Path, session: &str) -> std::fs::File {
    let path = d.join(".mend/pending").join(session).join("lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .open(path)
        .unwrap();
    file.try_lock().unwrap();
    (&file).write_all(b"a test holding it (pid 1)\n").unwrap();
    file
}

/// An action on a busy session waits for it up to `--lock-timeout`, then
/// refuses, naming what holds the lock; one that gets the lock in time goes
/// through.
#[test]
fn a_busy_session_is_waited_for_and_its_holder_named() {
    let dir = proposed(&(sr("f.txt", "two", "TWO") + "\n" + &sr("f.txt", "nine", "NINE")));
    let d = dir.path();
    let held = hold_session_lock(d, "default");
    let out = run_mend(
        d,
        &["pending", "reject", "--hunk", "1", "--lock-timeout", "1"],
        None,
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let refused = text(&out);
    assert!(
        refused.contains(
            "pending session `default` is busy: a test holding it (pid 1) holds its lock (waited 1"
        ),
        "{refused}"
    );
    assert!(!refused.contains("streaming"), "{refused}");
    let json = run_mend(
        d,
        &["pending", "sync", "--json", "--lock-timeout", "0"],
        None,
    );
    assert_eq!(json.status.code(), Some(1), "{}", text(&json));
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["error"]["kind"], "busy", "{v}");
    assert_eq!(v["error"]["session"], "default", "{v}");
    // Released while another waits: that one goes through.
    let release = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(300));
        drop(held);
    });
    let out = run_mend(d, &["pending", "reject", "--hunk", "1"], None);
    release.join().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let diff = text(&run_mend(d, &["pending", "diff"], None));
    assert!(!diff.contains("TWO") && diff.contains("NINE"), "{diff}");
}

/// `sync` carries the output over to the file as it is, so accepting
/// afterwards keeps the local edit; a sync whose merge conflicts is
/// refused, listing the conflict, and changes nothing. No refusal advises
/// a step that would lose the local edit.
#[test]
fn sync_keeps_local_edits_and_refuses_conflicts() {
    let dir = proposed(&sr("f.txt", "nine", "NINE"));
    let d = dir.path();
    let local = TEN.replace("two", "two by hand");
    std::fs::write(d.join("f.txt"), &local).unwrap();
    assert_eq!(
        text(&run_mend(d, &["pending", "status"], None)),
        "~M f.txt\n"
    );
    let out = run_mend(d, &["pending", "sync"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        text(&run_mend(d, &["pending", "status"], None)),
        "M  f.txt\n"
    );
    let out = run_mend(d, &["pending", "accept"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(file(d, "f.txt"), local.replace("nine", "NINE"));

    let dir = proposed(&sr("f.txt", "nine", "NINE"));
    let d = dir.path();
    let local = TEN.replace("nine", "nine by hand");
    std::fs::write(d.join("f.txt"), &local).unwrap();
    let out = run_mend(d, &["pending", "accept"], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let refused = text(&out);
    assert!(refused.contains("--markers"), "{refused}");
    assert!(!refused.contains("sync"), "{refused}");
    let out = run_mend(d, &["pending", "sync"], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains(
            "nothing was synced: f.txt: your changes and the proposal overlap (1 conflict(s)"
        ),
        "{}",
        text(&out)
    );
    assert_eq!(
        text(&run_mend(d, &["pending", "status"], None)),
        "~M f.txt\n"
    );
    let hunk = run_mend(d, &["pending", "accept", "--hunk", "1"], None);
    assert_eq!(hunk.status.code(), Some(1), "{}", text(&hunk));
    assert!(!text(&hunk).contains("or sync first"), "{}", text(&hunk));
    assert_eq!(file(d, "f.txt"), local);
}

/// A local change on the line next to the proposal's: git conflicts, the
/// default (`--merge git`) refuses it as git would, and `--merge safe`
/// settles it (and the accept names the resolver). In prose the adjacent
/// resolver stays off.
#[test]
fn accept_settles_neighbouring_changes_and_names_the_resolver() {
    let setup = |name: &str| {
        let dir = ten(&[name]);
        let edit = sr(name, "five", "FIVE");
        let out = run_mend(dir.path(), &["apply", "--pending"], Some(edit.as_bytes()));
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        std::fs::write(dir.path().join(name), TEN.replace("four", "four by hand")).unwrap();
        dir
    };
    let dir = setup("f.py");
    let d = dir.path();
    let out = run_mend(d, &["pending", "accept"], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(file(d, "f.py"), TEN.replace("four", "four by hand"));
    let out = run_mend(d, &["pending", "accept", "--merge", "safe"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        text(&out),
        "accepted f.py (merged; settled where git conflicts: lines 4-5 (adjacent))\n"
    );
    // The JSON names each settled region, with its resolver and lines.
    let again = setup("g.py");
    let json = run_mend(
        again.path(),
        &["pending", "accept", "--merge", "safe", "--json"],
        None,
    );
    assert_eq!(json.status.code(), Some(0), "{}", text(&json));
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(
        v["accepted"][0]["settled"],
        serde_json::json!([{"resolver": "adjacent", "start": 4, "end": 5}]),
        "{v}"
    );
    assert_eq!(
        file(d, "f.py"),
        TEN.replace("four", "four by hand").replace("five", "FIVE")
    );

    let dir = setup("notes.md");
    let out = run_mend(dir.path(), &["pending", "accept", "--merge", "safe"], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
}

/// `reject --hunk` picks hunks of one file, as `accept --hunk` does; with
/// several files it is refused and nothing is rejected.
#[test]
fn reject_hunk_needs_exactly_one_file() {
    let dir = ten(&["a.txt", "b.txt"]);
    let d = dir.path();
    let edit = sr("a.txt", "two", "TWO") + "\n" + &sr("b.txt", "two", "TWO");
    let out = run_mend(d, &["apply", "--pending"], Some(edit.as_bytes()));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    for verb in ["reject", "accept"] {
        let out = run_mend(d, &["pending", verb, "--hunk", "1"], None);
        assert_eq!(out.status.code(), Some(1), "{verb}: {}", text(&out));
        assert!(text(&out).contains("exactly one file"), "{}", text(&out));
    }
    let status = text(&run_mend(d, &["pending", "status"], None));
    assert_eq!(status, "M  a.txt\nM  b.txt\n");
    let out = run_mend(d, &["pending", "reject", "b.txt", "--hunk", "1"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let status = text(&run_mend(d, &["pending", "status"], None));
    assert_eq!(status, "M  a.txt\n   b.txt\n");
}

const RENAME: &str = "*** Begin Patch\n*** Update File: f.txt\n*** Move to: moved.txt\n@@\n-one\n+ONE\n*** End Patch\n";

/// After a proposed rename, a later proposal reads and edits the new path
/// (the rename carries its text), and accepting writes both changes there.
#[test]
fn a_rename_target_is_edited_by_later_proposals() {
    let dir = proposed(RENAME);
    let d = dir.path();
    let out = run_mend(
        d,
        &["apply", "--pending"],
        Some(sr("moved.txt", "ONE\ntwo", "ONE\nTWO").as_bytes()),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let status = text(&run_mend(d, &["pending", "status"], None));
    assert_eq!(status, "R  f.txt -> moved.txt\n");
    let out = run_mend(d, &["pending", "accept"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(!d.join("f.txt").exists());
    assert_eq!(file(d, "moved.txt"), TEN.replace("one\ntwo", "ONE\nTWO"));
}

/// A failed proposal enters nothing in the session: no file it named is
/// listed afterwards.
#[test]
fn a_failed_proposal_leaves_no_entries() {
    let dir = ten(&["a.txt", "b.txt"]);
    let d = dir.path();
    let edit = sr("a.txt", "two", "TWO") + "\n" + &sr("b.txt", "eleven", "ELEVEN");
    let out = run_mend(d, &["apply", "--pending"], Some(edit.as_bytes()));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let status = run_mend(d, &["pending", "status"], None);
    assert_eq!(status.status.code(), Some(0), "{}", text(&status));
    assert_eq!(text(&status), "");
}

/// A file that turned into a folder or a binary file gets `?` and its
/// reason; status, diff, and accept and reject of the other files work.
#[test]
fn one_unreadable_file_does_not_block_the_session() {
    let dir = ten(&["a.txt", "b.txt", "c.txt"]);
    let d = dir.path();
    let edit = ["a.txt", "b.txt", "c.txt"]
        .map(|f| sr(f, "two", "TWO"))
        .join("\n");
    let out = run_mend(d, &["apply", "--pending"], Some(edit.as_bytes()));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    std::fs::remove_file(d.join("b.txt")).unwrap();
    std::fs::create_dir(d.join("b.txt")).unwrap();
    std::fs::write(d.join("c.txt"), b"\0\x01binary\0").unwrap();
    let status = run_mend(d, &["pending", "status"], None);
    assert_eq!(status.status.code(), Some(0), "{}", text(&status));
    assert_eq!(
        text(&status),
        "M  a.txt\n?  b.txt  (it is a directory, not a regular file)\n?  c.txt  (it is a binary file)\n"
    );
    let diff = run_mend(d, &["pending", "diff"], None);
    assert_eq!(diff.status.code(), Some(0), "{}", text(&diff));
    assert!(text(&diff).contains("+++ b/a.txt"), "{}", text(&diff));
    let local = run_mend(d, &["pending", "diff", "--against", "local"], None);
    assert_eq!(local.status.code(), Some(0), "{}", text(&local));
    assert!(
        text(&local).contains("# b.txt: it is a directory"),
        "{}",
        text(&local)
    );
    let out = run_mend(d, &["pending", "accept"], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("b.txt: it is a directory"),
        "{}",
        text(&out)
    );
    let out = run_mend(d, &["pending", "accept", "a.txt"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = run_mend(d, &["pending", "reject", "b.txt", "c.txt"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(file(d, "a.txt"), TEN.replace("two", "TWO"));
}

/// `mend review` opens on a session with a file that cannot be read: the
/// file is listed with `?`, its diff from the context shows, and accepting
/// it is refused with the reason while the other file is accepted.
#[cfg(unix)]
#[test]
fn review_works_beside_an_unreadable_file() {
    let dir = ten(&["a.txt", "b.txt"]);
    let d = dir.path();
    let edit = sr("a.txt", "two", "TWO") + "\n" + &sr("b.txt", "two", "BEE");
    let out = run_mend(d, &["apply", "--pending"], Some(edit.as_bytes()));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    std::fs::remove_file(d.join("b.txt")).unwrap();
    std::fs::create_dir(d.join("b.txt")).unwrap();
    drive(
        d,
        &[
            "wait:+TWO",
            "p",
            "wait:accepted a.txt",
            "j",
            "wait:+BEE",
            "p",
            "wait:it is a directory",
            "q",
        ],
    );
    assert_eq!(file(d, "a.txt"), TEN.replace("two", "TWO"));
}

/// A session whose index is damaged says so with its real name, and
/// `mend pending drop NAME` removes it.
#[test]
fn a_damaged_session_can_be_dropped() {
    let dir = ten(&["f.txt"]);
    let d = dir.path();
    let edit = sr("f.txt", "two", "TWO");
    let out = run_mend(
        d,
        &["apply", "--pending", "--session", "broken"],
        Some(edit.as_bytes()),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    std::fs::write(d.join(".mend/pending/broken/index.json"), "{ not json").unwrap();
    let out = run_mend(d, &["pending", "status", "--session", "broken"], None);
    // A refusal naming the command that clears it (docs/exit-codes.md),
    // printed as a result, as every refusal is.
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(err.contains("`mend pending drop broken`"), "{err}");
    assert!(!err.contains("SESSION"), "{err}");
    let out = run_mend(d, &["pending", "drop", "broken"], None);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(text(&run_mend(d, &["pending", "list"], None)), "");
    assert_eq!(file(d, "f.txt"), TEN);
}

/// Runs `mend` in `d`, checks its exit code, and parses its standard
/// output as one JSON document.
fn json(d: &std::path::Path, args: &[&str], stdin: Option<&str>, code: i32) -> serde_json::Value {
    let out = run_mend(d, args, stdin.map(str::as_bytes));
    assert_eq!(out.status.code(), Some(code), "{args:?}: {}", text(&out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {}", text(&out)))
}

/// `mend apply --pending --json` names the session and the files it held
/// with their letters, and is not a dry run; a failed proposal held
/// nothing.
#[test]
fn apply_pending_json_names_the_session_and_what_was_held() {
    let dir = proposed(&sr("f.txt", "five", "FIVE"));
    let d = dir.path();
    let held = json(
        d,
        &["apply", "--pending", "--json", "--session", "s1"],
        Some(&sr("f.txt", "two", "TWO")),
        0,
    );
    assert_eq!(held["ok"], true, "{held}");
    assert_eq!(held["dry_run"], false, "{held}");
    assert_eq!(held["written"], false, "{held}");
    assert_eq!(held["pending"], "s1", "{held}");
    // Each file with its hunk count and the version a hunk action takes
    // back as `seen`.
    let version = held["held"]["files"][0]["version"].clone();
    assert!(version.as_str().is_some_and(|v| v.len() == 12), "{held}");
    assert_eq!(
        held["held"],
        serde_json::json!({"session": "s1", "files": [
            {"path": "f.txt", "status": "M", "hunks": 1, "version": version}
        ]})
    );
    let failed = json(
        d,
        &["apply", "--pending", "--json"],
        Some(&sr("f.txt", "eleven", "ELEVEN")),
        1,
    );
    assert_eq!(failed["ok"], false, "{failed}");
    assert_eq!(failed["held"], serde_json::Value::Null, "{failed}");
}

/// With `--json`, refusals and errors of `mend pending` and `mend apply
/// --pending` are one JSON document too (`{"error": {"kind", "message",
/// …}}`), with the exit codes of the text output.
#[test]
fn refusals_and_errors_are_json_with_json() {
    let dir = proposed(&sr("f.txt", "five", "FIVE"));
    let d = dir.path();
    std::fs::write(d.join("f.txt"), TEN.replace("five", "five by hand")).unwrap();
    let conflict = json(d, &["pending", "accept", "--json"], None, 1);
    assert_eq!(conflict["error"]["kind"], "conflict", "{conflict}");
    assert_eq!(conflict["error"]["path"], "f.txt", "{conflict}");
    let message = conflict["error"]["message"].as_str().unwrap();
    assert!(message.contains("overlap"), "{conflict}");
    let missing = json(
        d,
        &["pending", "status", "--json", "--session", "nope"],
        None,
        1,
    );
    assert_eq!(missing["error"]["kind"], "no_session", "{missing}");
    let bad = json(
        d,
        &["pending", "status", "--json", "--session", "../x"],
        None,
        2,
    );
    assert_eq!(bad["error"]["kind"], "bad_session", "{bad}");
    let no_root = json(
        d,
        &["pending", "status", "--json", "--root", "no/such/root"],
        None,
        2,
    );
    assert_eq!(no_root["error"]["kind"], "error", "{no_root}");
    let no_edits = json(
        d,
        &["apply", "--pending", "--json"],
        Some("no edits here\n"),
        1,
    );
    assert_eq!(no_edits["error"]["kind"], "no_edits", "{no_edits}");
    let apply_bad = json(
        d,
        &["apply", "--pending", "--json", "--session", ".x"],
        Some(&sr("f.txt", "two", "TWO")),
        2,
    );
    assert_eq!(apply_bad["error"]["kind"], "bad_session", "{apply_bad}");
    assert_eq!(apply_bad["ok"], false, "{apply_bad}");
}

/// `retry-context --json` is a document with the context, or `null` and
/// exit 1 when the last proposal did not fail; the text form says so.
#[test]
fn retry_context_answers_in_json_and_says_when_there_is_none() {
    let dir = proposed(&sr("f.txt", "five", "FIVE"));
    let d = dir.path();
    let none = json(d, &["pending", "retry-context", "--json"], None, 1);
    assert_eq!(none["session"], "default", "{none}");
    assert_eq!(none["retry_context"], serde_json::Value::Null, "{none}");
    let out = run_mend(d, &["pending", "retry-context"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out).contains("holds no retry context"),
        "{}",
        text(&out)
    );
    let edit = sr("f.txt", "eleven", "ELEVEN");
    let out = run_mend(d, &["apply", "--pending"], Some(edit.as_bytes()));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let retry = json(d, &["pending", "retry-context", "--json"], None, 0);
    assert!(
        retry["retry_context"].as_str().unwrap().contains("eleven"),
        "{retry}"
    );
}

/// A search quoted from the file on disk, after a local edit, fails
/// against the session's older context; the failure says so and what to
/// do, and after `mend pending sync` the same proposal is held.
#[test]
fn a_stale_context_says_the_text_is_on_disk() {
    let dir = ten(&["f.txt"]);
    let d = dir.path();
    let out = run_mend(d, &["pending", "add", "f.txt"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    std::fs::write(d.join("f.txt"), TEN.replace("two", "two by hand")).unwrap();
    let edit = sr("f.txt", "two by hand", "TWO BY HAND");
    let out = run_mend(d, &["apply", "--pending"], Some(edit.as_bytes()));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let says = text(&out);
    assert!(
        says.contains("The session holds an older text of f.txt: the file changed on disk after the model saw it"),
        "{says}"
    );
    assert!(says.contains("`mend pending sync f.txt`"), "{says}");
    let out = run_mend(d, &["pending", "sync", "f.txt"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = run_mend(d, &["apply", "--pending"], Some(edit.as_bytes()));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

/// A proposed rename onto an existing file is a refusal (exit 1) that
/// says nothing was held, not an error with advice for a model.
#[test]
fn a_rename_onto_an_existing_file_is_refused() {
    let dir = proposed(&sr("f.txt", "two", "TWO"));
    let d = dir.path();
    std::fs::write(d.join("taken.txt"), "mine\n").unwrap();
    let onto = RENAME.replace("moved.txt", "taken.txt");
    let out = run_mend(d, &["apply", "--pending"], Some(onto.as_bytes()));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let says = text(&out);
    assert!(
        says.contains("nothing was held") && says.contains("taken.txt"),
        "{says}"
    );
    assert_eq!(
        text(&run_mend(d, &["pending", "status"], None)),
        "M  f.txt\n"
    );
}

/// `mend pending add` of a file that does not exist fails, and adds
/// nothing.
#[test]
fn adding_a_missing_file_fails() {
    let dir = ten(&["f.txt"]);
    let d = dir.path();
    let out = run_mend(d, &["pending", "add", "f.txt", "missing.txt"], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("missing.txt: does not exist"),
        "{}",
        text(&out)
    );
    assert_eq!(text(&run_mend(d, &["pending", "status"], None)), "");
}

/// Accepting the deletion of a file that is already gone succeeds, says
/// so, and clears the entry.
#[test]
fn accepting_the_deletion_of_a_deleted_file_succeeds() {
    let dir = proposed("*** Begin Patch\n*** Delete File: f.txt\n*** End Patch\n");
    let d = dir.path();
    std::fs::remove_file(d.join("f.txt")).unwrap();
    assert_eq!(
        text(&run_mend(d, &["pending", "status"], None)),
        "D  f.txt\n"
    );
    let out = run_mend(d, &["pending", "accept", "f.txt"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(text(&out), "accepted f.txt (already deleted)\n");
    assert_eq!(text(&run_mend(d, &["pending", "status"], None)), "");
}

/// Hunk numbers are shown only where `--hunk` acts on them: not on
/// deletions or renames, and against the file on disk only while it is
/// unchanged (then they are the context's numbers).
#[test]
fn diff_numbers_only_the_hunks_hunk_acts_on() {
    let dir = ten(&["f.txt", "gone.txt", "m.txt"]);
    let d = dir.path();
    let edit = "*** Begin Patch\n*** Delete File: gone.txt\n*** End Patch\n".to_owned()
        + RENAME
        + "\n"
        + &sr("m.txt", "two", "TWO");
    let out = run_mend(d, &["apply", "--pending"], Some(edit.as_bytes()));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let diff = text(&run_mend(d, &["pending", "diff"], None));
    assert_eq!(diff.matches(" hunk ").count(), 1, "{diff}");
    assert!(
        diff.contains("+++ b/m.txt\n@@ -1,5 +1,5 @@ hunk 1\n"),
        "{diff}"
    );
    let local = text(&run_mend(
        d,
        &["pending", "diff", "m.txt", "--against", "local"],
        None,
    ));
    assert!(local.contains("@@ -1,5 +1,5 @@ hunk 1\n"), "{local}");
    std::fs::write(d.join("m.txt"), TEN.replace("one", "ONE by hand")).unwrap();
    let local = text(&run_mend(
        d,
        &["pending", "diff", "m.txt", "--against", "local"],
        None,
    ));
    assert!(local.contains("-ONE by hand\n"), "{local}");
    assert!(!local.contains("hunk"), "{local}");
}

/// The diff `mend apply --pending` prints is the one `--hunk` counts:
/// its hunk k, applied to the file, gives what `mend pending accept
/// --hunk k` writes. Changes whose contexts only meet (six lines apart)
/// are two hunks in both, and the printed hunks say their numbers.
#[test]
fn apply_pending_prints_the_hunks_accept_takes() {
    let edit = sr("f.txt", "two", "TWO") + "\n" + &sr("f.txt", "nine", "NINE");
    let dir = ten(&["f.txt"]);
    let out = run_mend(dir.path(), &["apply", "--pending"], Some(edit.as_bytes()));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let shown = text(&out);
    let printed = printed_hunks(&shown);
    assert_eq!(printed.len(), 2, "{shown}");
    for (k, hunk) in printed.iter().enumerate() {
        let n = (k + 1).to_string();
        assert!(hunk[0].ends_with(&format!(" hunk {n}")), "{hunk:?}");
        let dir = proposed(&edit);
        let out = run_mend(dir.path(), &["pending", "accept", "--hunk", &n], None);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        assert_eq!(file(dir.path(), "f.txt"), patched(TEN, hunk), "hunk {n}");
    }
}

/// The hunks of a printed diff, each its `@@` line and body lines.
fn printed_hunks(out: &str) -> Vec<Vec<&str>> {
    let mut hunks: Vec<Vec<&str>> = Vec::new();
    let mut inside = false;
    for line in out.lines() {
        if line.starts_with("@@ ") {
            hunks.push(vec![line]);
            inside = true;
        } else if inside && line.starts_with([' ', '-', '+']) && !line.starts_with("--- ") {
            hunks.last_mut().unwrap().push(line);
        } else {
            inside = false;
        }
    }
    hunks
}

/// `base` with one printed hunk applied by its `@@` line's old range.
fn patched(base: &str, hunk: &[&str]) -> String {
    let old = hunk[0]
        .strip_prefix("@@ -")
        .unwrap()
        .split(' ')
        .next()
        .unwrap();
    let (start, len) = match old.split_once(',') {
        Some((s, l)) => (s.parse::<usize>().unwrap(), l.parse::<usize>().unwrap()),
        None => (old.parse::<usize>().unwrap(), 1),
    };
    let start = if len == 0 { start } else { start - 1 };
    let mut lines: Vec<String> = base.lines().map(|l| format!("{l}\n")).collect();
    let new = hunk[1..]
        .iter()
        .filter(|l| !l.starts_with('-'))
        .map(|l| format!("{}\n", &l[1..]));
    lines.splice(start..start + len, new);
    lines.concat()
}

/// A session name with control characters is never echoed raw.
#[test]
fn a_session_name_with_escapes_is_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for args in [
        &["pending", "status", "--session", "\u{1b}[31mX"][..],
        &["pending", "drop", "\u{1b}[31mX"][..],
        &["apply", "--pending", "--session", "\u{1b}[31mX"][..],
    ] {
        let out = run_mend(d, args, Some(b"f.txt\n```\nx\n```\n"));
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            !out.stdout.contains(&0x1b) && !out.stderr.contains(&0x1b),
            "{out:?}"
        );
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(err.contains("is not a session name"), "{err}");
    }
}

/// Runs `mend review` on `d` in a pseudo-terminal through
/// `tests/review/drive.py` with these steps, and checks it exited 0.
#[cfg(unix)]
pub fn drive(d: &std::path::Path, steps: &[&str]) {
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
    assert_eq!(file(d, "f.txt"), TEN.replace("nine", "NINE"));
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
    // Far enough apart that their contexts do not join them into one hunk.
    let thirty: String = (1..=30).map(|n| format!("line {n}\n")).collect();
    let dir = crate::tree(&[("f.txt", thirty.as_str())]);
    let d = dir.path();
    let edits = [("line 2", "TWO"), ("line 12", "FIVE"), ("line 22", "NINE")];
    let response: Vec<String> = edits.iter().map(|(a, b)| sr("f.txt", a, b)).collect();
    let out = run_mend(
        d,
        &["apply", "--pending"],
        Some(response.join("\n").as_bytes()),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
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
        thirty.replace("line 12\n", "FIVE\n")
    );
}

/// Another process holds the session's lock. A key that writes says at
/// once who holds it and waits at most --lock-timeout; a key typed
/// meanwhile is dropped, not run blind afterwards. Moving to another file
/// never waits: its pane says why it cannot be shown, wrapped, and fills
/// in once the lock is free. Ctrl-C quits.
#[cfg(unix)]
#[test]
fn review_never_freezes_on_a_busy_lock() {
    let dir = proposed(&(sr("f.txt", "two", "TWO") + "\n" + &sr("f.txt", "nine", "NINE")));
    let d = dir.path();
    std::fs::write(d.join("g.txt"), TEN).unwrap();
    let out = run_mend(
        d,
        &["apply", "--pending"],
        Some(sr("g.txt", "six", "SIX").as_bytes()),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    drive(
        d,
        &[
            "arg:--lock-timeout",
            "arg:2",
            "wait:NINE",
            "lock:.mend/pending/default/lock",
            "a",
            "wait:busy: held by drive.py (pid",
            "a",
            "wait:were dropped)",
            "j",
            "wait:cannot show g.txt: pending session",
            "wait:holds its lock",
            "unlock:",
            "wait:+SIX",
            "k",
            "wait:NINE",
            "a",
            "wait:accepted hunk 1 of f.txt",
            "\u{3}",
        ],
    );
    assert_eq!(file(d, "f.txt"), TEN.replace("two", "TWO"));
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

/// A response file that cannot be opened fails before anything is made:
/// no empty session is left to answer the next `pending accept`.
#[test]
fn an_unreadable_response_leaves_no_session() {
    let dir = ten(&["f.txt"]);
    let d = dir.path();
    let out = run_mend(d, &["apply", "--pending", "--json", "missing.md"], None);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let list = run_mend(d, &["pending", "list", "--json"], None);
    let v: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(v["sessions"], serde_json::json!([]), "{v}");
    let accept = run_mend(d, &["pending", "accept", "--json"], None);
    assert_eq!(accept.status.code(), Some(1), "{}", text(&accept));
    assert!(text(&accept).contains("no_session"), "{}", text(&accept));
}
