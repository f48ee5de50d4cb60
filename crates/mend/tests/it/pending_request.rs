//! The request lock (seed 000, "Cannot modify context while a request is
//! active"): while a proposal comes into a session, accept, reject, sync,
//! add and drop are refused with kind `busy`, naming the proposing
//! command and its pid; status and diff work. The lock ends with the
//! proposal, or with its process, even one killed by SIGKILL.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Child, ChildStdin};

use serde_json::Value;

use crate::pending::spawn;
use crate::{run_mend, search_replace as sr, tree};

const TEN: &str = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nhalf\nnine\nten\n";

fn text(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn file(d: &std::path::Path) -> String {
    std::fs::read_to_string(d.join("f.txt")).unwrap()
}

/// A folder with f.txt (TEN) and TWO proposed for it.
fn proposed() -> tempfile::TempDir {
    let dir = tree(&[("f.txt", TEN)]);
    let edit = sr("f.txt", "two", "TWO");
    let out = run_mend(dir.path(), &["apply", "--pending"], Some(edit.as_bytes()));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    dir
}

/// `mend apply --pending --stream` with NINE for f.txt, returned once it
/// has checked that block, its input still open: a request streaming in.
fn streaming(d: &std::path::Path) -> (Child, ChildStdin) {
    let (mut child, mut input) = spawn(d, &["apply", "--pending", "--stream"]);
    input
        .write_all(sr("f.txt", "nine", "NINE").as_bytes())
        .unwrap();
    input.flush().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.starts_with("applied"), "{line}");
    (child, input)
}

/// The five actions that change a session, as `mend pending` runs them.
const ACTIONS: [&[&str]; 5] = [
    &["pending", "accept"],
    &["pending", "reject"],
    &["pending", "sync"],
    &["pending", "add", "f.txt"],
    &["pending", "drop", "default"],
];

/// Each action is refused with exit 1 and kind `busy`, naming the
/// streaming command and its pid, and changes nothing.
fn assert_refused(d: &std::path::Path, pid: u32) {
    let named = format!("mend apply --pending --stream (pid {pid})");
    for args in ACTIONS {
        let out = run_mend(d, args, None);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", text(&out));
        assert!(
            text(&out).contains(&format!("a request is streaming in from {named}")),
            "{args:?}: {}",
            text(&out)
        );
        let json = [args, &["--json"]].concat();
        let out = run_mend(d, &json, None);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", text(&out));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["error"]["kind"], "busy", "{v}");
        assert_eq!(v["error"]["session"], "default", "{v}");
    }
    assert_eq!(file(d), TEN, "nothing was written");
}

/// Status and diff work while a request streams in, and status names it.
fn assert_viewable(d: &std::path::Path, pid: u32) {
    let out = run_mend(d, &["pending", "status", "--json"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["files"][0]["status"], "M", "{v}");
    assert_eq!(
        v["streaming"],
        serde_json::json!([format!("mend apply --pending --stream (pid {pid})")]),
        "{v}"
    );
    // The text lists the letters alone, and notes the request aside.
    let out = run_mend(d, &["pending", "status"], None);
    assert_eq!(text(&out), "M  f.txt\n");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "mend: a request is streaming in from mend apply --pending --stream (pid {pid}): accept, reject, sync, add and drop wait until it ends\n"
        )
    );
    let out = run_mend(d, &["pending", "diff"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("+TWO"), "{}", text(&out));
}

#[test]
fn every_action_waits_while_a_proposal_streams_in_and_works_after() {
    let dir = proposed();
    let d = dir.path();
    let (child, input) = streaming(d);
    let pid = child.id();
    assert_refused(d, pid);
    assert_viewable(d, pid);
    drop(input);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // The stream was held on top of TWO; the session is free again.
    let status = run_mend(d, &["pending", "status", "--json"], None);
    let v: Value = serde_json::from_slice(&status.stdout).unwrap();
    assert!(v.get("streaming").is_none(), "{v}");
    for args in [&["pending", "sync"][..], &["pending", "add", "f.txt"]] {
        let out = run_mend(d, args, None);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", text(&out));
    }
    // The diff shown during the stream numbered an older proposal.
    let out = run_mend(d, &["pending", "diff"], None);
    assert!(text(&out).contains("+NINE"), "{}", text(&out));
    let out = run_mend(d, &["pending", "reject", "--hunk", "1", "f.txt"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = run_mend(d, &["pending", "accept"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(file(d), TEN.replace("nine", "NINE"));
    let out = run_mend(d, &["pending", "drop", "default"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

/// A proposer killed with SIGKILL cannot say it is done: the kernel drops
/// its lock with it, and the session is free at once.
#[test]
fn a_streamer_killed_with_sigkill_frees_the_session_at_once() {
    let dir = proposed();
    let d = dir.path();
    let (mut child, input) = streaming(d);
    let out = run_mend(d, &["pending", "accept"], None);
    assert_eq!(out.status.code(), Some(1), "held: {}", text(&out));
    child.kill().unwrap();
    child.wait().unwrap();
    drop(input);
    let status = run_mend(d, &["pending", "status", "--json"], None);
    let v: Value = serde_json::from_slice(&status.stdout).unwrap();
    assert!(
        v.get("streaming").is_none(),
        "the dead request is gone: {v}"
    );
    let out = run_mend(d, &["pending", "accept"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(file(d), TEN.replace("two", "TWO"));
    let records = d.join(".mend/pending/default/requests");
    let left: Vec<_> = std::fs::read_dir(records).unwrap().collect();
    assert!(left.is_empty(), "its record was removed: {left:?}");
}

/// `mend apply --pending` reading a response that has not ended is a
/// request too, streamed or not: a reject waits for it.
#[test]
fn a_proposal_still_reading_its_input_holds_the_session() {
    let dir = proposed();
    let d = dir.path();
    let (child, mut input) = spawn(d, &["apply", "--pending"]);
    input
        .write_all(sr("f.txt", "nine", "NINE").as_bytes())
        .unwrap();
    input.flush().unwrap();
    let pid = child.id();
    let named = format!("mend apply --pending (pid {pid})");
    // It names itself before it reads: wait until status shows it.
    let mut said = Value::Null;
    for _ in 0..500 {
        let out = run_mend(d, &["pending", "status", "--json"], None);
        said = serde_json::from_slice(&out.stdout).unwrap();
        if said["streaming"] == serde_json::json!([named]) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(said["streaming"], serde_json::json!([named]), "{said}");
    let out = run_mend(d, &["pending", "reject"], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains(&named), "{}", text(&out));
    drop(input);
    let held = child.wait_with_output().unwrap();
    assert_eq!(held.status.code(), Some(0), "{}", text(&held));
    let out = run_mend(d, &["pending", "accept"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(file(d), TEN.replace("two", "TWO").replace("nine", "NINE"));
}

/// The editor's `pending/*` requests see the request too: status names it,
/// and accept, reject and sync are refused at once (not waited on), with
/// the message naming the streaming command and its pid; once the stream
/// ends they work.
#[test]
fn the_editor_sees_a_request_and_its_actions_are_refused_until_it_ends() {
    let dir = proposed();
    let d = dir.path();
    let mut c = crate::editor::client::Client::start(d);
    let (child, input) = streaming(d);
    let named = format!("mend apply --pending --stream (pid {})", child.id());
    let s = c.request("pending/status", serde_json::json!({})).unwrap();
    assert_eq!(s["streaming"], serde_json::json!([named]), "{s}");
    for method in ["pending/accept", "pending/reject", "pending/sync"] {
        let (code, message) = c.request(method, serde_json::json!({})).unwrap_err();
        assert_eq!(code, -32001, "{method}: {message}");
        assert!(
            message.contains(&format!("a request is streaming in from {named}")),
            "{method}: {message}"
        );
    }
    let diff = c.request("pending/diff", serde_json::json!({})).unwrap();
    assert!(diff["diff"].as_str().unwrap().contains("+TWO"), "{diff}");
    drop(input);
    assert_eq!(child.wait_with_output().unwrap().status.code(), Some(0));
    let s = c.request("pending/status", serde_json::json!({})).unwrap();
    assert!(s.get("streaming").is_none(), "{s}");
    let a = c.request("pending/accept", serde_json::json!({})).unwrap();
    assert_eq!(a["accepted"][0]["path"], "f.txt", "{a}");
    assert_eq!(file(d), TEN.replace("two", "TWO").replace("nine", "NINE"));
    assert!(c.finish().success());
}

/// Anything but a regular file at the request lock (mend makes only a
/// file) is refused with the `rm` that fixes it, never an OS error, by a
/// proposal and by an action alike.
#[test]
fn a_fifo_at_the_request_lock_says_how_to_fix_it() {
    let dir = proposed();
    let d = dir.path();
    let lock = d.join(".mend/pending/default/request");
    let _ = std::fs::remove_file(&lock);
    let made = std::process::Command::new("mkfifo")
        .arg(&lock)
        .status()
        .unwrap();
    assert!(made.success());
    let edit = sr("f.txt", "nine", "NINE");
    let proposal = run_mend(d, &["apply", "--pending"], Some(edit.as_bytes()));
    let accept = run_mend(d, &["pending", "accept"], None);
    for o in [proposal, accept] {
        assert_ne!(o.status.code(), Some(0), "{}", text(&o));
        let said = text(&o) + &String::from_utf8_lossy(&o.stderr);
        assert!(!said.contains("os error"), "{said}");
        assert!(said.contains("rm .mend/pending/default/request"), "{said}");
    }
    assert_eq!(file(d), TEN);
    std::fs::remove_file(&lock).unwrap();
    let out = run_mend(d, &["pending", "accept"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

/// `mend review` in a pseudo-terminal while a proposal streams in: the
/// header says so, `a` does nothing but name the stream, and once the
/// stream ends (the screen asks for it by writing a file) the streamed
/// hunk shows and `a` accepts.
#[cfg(unix)]
#[test]
fn review_shows_a_request_streaming_and_acts_once_it_ends() {
    let dir = proposed();
    let d = dir.path().to_owned();
    let (child, input) = streaming(&d);
    let pid = child.id();
    let ender = {
        let d = d.clone();
        std::thread::spawn(move || {
            let asked = d.join("end-the-stream");
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
            while !asked.exists() && std::time::Instant::now() < deadline {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            drop(input);
            child.wait_with_output().unwrap()
        })
    };
    let named =
        format!("wait:a request is streaming in from mend apply --pending --stream (pid {pid})");
    crate::pending::drive(
        &d,
        &[
            "wait:│ a request is streaming",
            "a",
            &named,
            "write:end-the-stream:now",
            "wait:NINE",
            "a",
            "wait:accepted hunk 1 of f.txt",
            "q",
        ],
    );
    assert_eq!(ender.join().unwrap().status.code(), Some(0));
    assert_eq!(file(&d), TEN.replace("two", "TWO"));
}

/// No proposal starts in the middle of an action: while one holds the
/// request lock exclusively (as an accept does while it runs), a proposal
/// waits for it, and past `--lock-timeout` it is refused (busy, exit 1),
/// holding nothing; once the action is done it goes through.
#[test]
fn a_proposal_waits_for_an_action_and_is_refused_past_the_timeout() {
    let dir = proposed();
    let d = dir.path();
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(d.join(".mend/pending/default/request"))
        .unwrap();
    lock.lock().unwrap();
    let edit = sr("f.txt", "nine", "NINE");
    let started = std::time::Instant::now();
    let args = ["apply", "--pending", "--lock-timeout", "1", "--json"];
    let out = run_mend(d, &args, Some(edit.as_bytes()));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(started.elapsed() >= std::time::Duration::from_secs(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["error"]["kind"], "busy", "{v}");
    drop(lock);
    let out = run_mend(d, &["apply", "--pending"], Some(edit.as_bytes()));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = run_mend(d, &["pending", "accept"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(file(d), TEN.replace("two", "TWO").replace("nine", "NINE"));
}
