//! Locks another process holds never stop buffer sync: `pending/*`,
//! `turn/*` and `checkpoint/create` run off the server's loop, and a lock
//! held past the request's own wait is answered `busy`, naming its holder.

use std::io::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::client::{Client, PATIENCE};
use super::{expect, open, workspace};
use crate::run_mend;

/// How soon buffer sync must go on while a lock is held. On a server that
/// waits on its loop, nothing comes for the lock's 30 s.
const FLOWING: Duration = Duration::from_secs(3);

/// Takes the lock file at `path` as another mend would, naming `holder`.
fn hold(path: &Path, holder: &str) -> std::fs::File {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .unwrap();
    file.lock().unwrap();
    file.set_len(0).unwrap();
    (&file).write_all(holder.as_bytes()).unwrap();
    file
}

/// A write to `b.txt` reaches its buffer, and the editor's answer is
/// answered, within [`FLOWING`] of `since`.
fn sync_flows(c: &mut Client, root: &Path, text: &str, since: Instant) {
    std::fs::write(root.join("b.txt"), text).unwrap();
    let n = c
        .notification_within(FLOWING)
        .expect("buffer sync goes on while the lock is held");
    assert_eq!(
        (n.method.as_str(), n.params["text"].as_str()),
        ("buffer/reload", Some(text))
    );
    // Taken, as an editor takes it.
    c.request(
        "buffer/changed",
        json!({"path": "b.txt", "text": text, "dirty": false, "applied": n.params["seq"]}),
    )
    .unwrap();
    assert!(since.elapsed() < FLOWING, "{:?}", since.elapsed());
}

fn busy(reply: &Value) -> &Value {
    let e = &reply["error"];
    assert_eq!(e["data"]["kind"], "busy", "{reply:#}");
    assert_eq!(e["code"], -32001, "{reply:#}");
    e
}

/// The session's lock held by another process: a `pending/accept` that
/// may wait 4 s for it does not stop a write reaching a buffer meanwhile,
/// and is then answered `busy`, naming the holder; one with `wait_ms: 0`
/// is answered at once. Once the lock is free, the accept goes through.
#[test]
fn a_held_session_lock_never_stops_buffer_sync() {
    let dir = workspace(&[("a.txt", "one\n"), ("b.txt", "b\n")]);
    let d = dir.path();
    let proposed = run_mend(
        d,
        &["apply", "--pending"],
        Some(b"a.txt\n<<<<<<< SEARCH\none\n=======\nONE\n>>>>>>> REPLACE\n"),
    );
    assert!(proposed.status.success(), "{proposed:?}");
    let lock = d.join(".mend/pending/default/lock");
    assert!(
        lock.is_file(),
        "the session's lock is at {}",
        lock.display()
    );
    let mut c = Client::start(d);
    open(&mut c, "a.txt", "one\n", false, 1);
    open(&mut c, "b.txt", "b\n", false, 1);
    let held = hold(&lock, "mend apply --pending --stream (pid 4242)\n");

    let start = Instant::now();
    let waiting = c.send_request(
        "pending/accept",
        json!({"paths": ["a.txt"], "wait_ms": 4000}),
    );
    sync_flows(&mut c, d, "b2\n", start);
    let reply = c.reply_within(waiting, PATIENCE).expect("an answer");
    let e = busy(&reply);
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("mend apply --pending --stream (pid 4242)"),
        "{reply:#}"
    );
    assert!(
        start.elapsed() >= Duration::from_secs(4),
        "{:?}",
        start.elapsed()
    );

    let start = Instant::now();
    let at_once = c.send_request("pending/accept", json!({"wait_ms": 0}));
    let reply = c.reply_within(at_once, FLOWING).expect("an answer at once");
    busy(&reply);
    assert!(start.elapsed() < FLOWING, "{:?}", start.elapsed());

    drop(held);
    let accepted = c
        .request("pending/accept", json!({"paths": ["a.txt"]}))
        .unwrap();
    assert_eq!(accepted["accepted"][0]["path"], "a.txt");
    assert_eq!(expect(&mut c, "buffer/reload")["text"], "ONE\n");
    let bad = c
        .request("pending/status", json!({"wait_ms": "soon"}))
        .unwrap_err();
    assert_eq!(bad.0, -32602, "{bad:?}");
    assert!(c.finish().success());
}

/// The workspace lock held by another process: `checkpoint/create` and
/// `turn/begin` wait only their own time for it, buffer sync goes on
/// meanwhile, and both are answered `busy`, naming the holder.
#[test]
fn a_held_workspace_lock_never_stops_buffer_sync() {
    let dir = workspace(&[("a.txt", "one\n"), ("b.txt", "b\n")]);
    let d = dir.path();
    let mut c = Client::start(d);
    open(&mut c, "b.txt", "b\n", false, 1);
    // The first checkpoint makes the private folder and its lock file.
    c.request("checkpoint/create", json!({"label": "first"}))
        .unwrap();
    let held = hold(&d.join(".mend/lock"), "mend turn reject (pid 4343)\n");
    let start = Instant::now();
    // With no `wait_ms`, the default wait; then one that waits 3 s.
    let made = c.send_request("checkpoint/create", json!({}));
    sync_flows(&mut c, d, "b2\n", start);
    let waited = c.send_request("checkpoint/create", json!({"wait_ms": 3000}));
    let begun = c.send_request("turn/begin", json!({"wait_ms": 0}));
    sync_flows(&mut c, d, "b3\n", start);
    for id in [made, waited, begun] {
        let reply = c.reply_within(id, PATIENCE).expect("an answer");
        let e = busy(&reply);
        assert!(
            e["message"].as_str().unwrap().contains("pid 4343"),
            "{reply:#}"
        );
    }
    drop(held);
    let begun = c.request("turn/begin", json!({})).unwrap();
    assert!(begun["turn"]["id"].is_string(), "{begun:#}");
    assert!(c.finish().success());
}
