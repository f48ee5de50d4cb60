//! What must not kill, hang or mislead the server: malformed frames, a
//! second `initialize`, paths in `.git`, FIFOs, devices and links out of
//! the root in place of a buffer's file.

use std::time::Duration;

use serde_json::{Value, json};

use super::client::{Client, PATIENCE};
use super::{expect, open, workspace};

fn frame(body: &[u8]) -> Vec<u8> {
    [
        format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes(),
        body,
    ]
    .concat()
}

/// Every malformed frame gets a JSON-RPC error, and the server goes on with
/// every buffer's state: a write after them still merges (with the safe
/// resolvers, which settle the neighbouring lines).
#[test]
fn malformed_frames_are_answered_and_the_server_goes_on() {
    let dir = workspace(&[("a.rs", "one\ntwo\n")]);
    let mut c = Client::start_with(dir.path(), json!({"merge": "safe"}));
    open(&mut c, "a.rs", "one\ntwo\n", false, 1);
    c.request(
        "buffer/changed",
        json!({"path": "a.rs", "text": "ONE\ntwo\n", "dirty": true, "version": 2}),
    )
    .unwrap();
    let bad: Vec<(Vec<u8>, i64)> = vec![
        (frame(b"{not json"), -32700),
        (
            frame(b"[{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"editor/status\"}]"),
            -32600,
        ),
        (frame(b"\"\xff\xfe\""), -32700),
        (frame(b"17"), -32600),
        (b"Content-Length: nine\r\n\r\n{}".to_vec(), -32700),
        (
            b"Content-Type: application/json\r\n\r\n{}\n".to_vec(),
            -32700,
        ),
        (
            [
                b"Content-Length: 70000000\r\n\r\n".as_slice(),
                &vec![b' '; 70_000_000],
            ]
            .concat(),
            -32600,
        ),
    ];
    for (bytes, code) in bad {
        c.send_raw(&bytes);
        let status = c.request("editor/status", Value::Null);
        assert!(status.is_ok(), "{status:?}");
        let errors: Vec<i64> = c.errors().iter().map(|e| e.0).collect();
        assert_eq!(
            errors,
            [code],
            "{}",
            String::from_utf8_lossy(&bytes[..40.min(bytes.len())])
        );
    }
    std::fs::write(dir.path().join("a.rs"), "one\nTWO\n").unwrap();
    let m = expect(&mut c, "buffer/merged");
    assert_eq!(m["text"], "ONE\nTWO\n");
}

/// A `Content-Length` of a terabyte or three gigabytes is neither
/// allocated nor fatal: the server waits for the body, and ends normally
/// when the input does.
#[test]
fn huge_lengths_are_not_allocated() {
    for length in ["1000000000000", "3000000000"] {
        let dir = workspace(&[("a.txt", "one\n")]);
        let mut c = Client::start(dir.path());
        c.send_raw(format!("Content-Length: {length}\r\n\r\n{{}}").as_bytes());
        let status = c.close_input(PATIENCE).expect("the server exits");
        assert!(status.success(), "{status:?}");
    }
}

/// A second `initialize` is refused and every buffer stays.
#[test]
fn a_second_initialize_is_refused() {
    let dir = workspace(&[("a.txt", "one\n")]);
    let mut c = Client::start(dir.path());
    open(&mut c, "a.txt", "one\n", false, 1);
    let again = c.request("initialize", json!({})).unwrap_err();
    assert_eq!(again.0, -32600, "{again:?}");
    assert!(again.1.contains("already initialized"), "{again:?}");
    let status = c.request("editor/status", Value::Null).unwrap();
    assert_eq!(status["buffers"][0]["path"], "a.txt");
}

/// Files in `.git` are refused at open, with the reason.
#[test]
fn git_paths_are_refused() {
    let dir = workspace(&[("a.txt", "one\n"), (".git/config", "[core]\n")]);
    let mut c = Client::start(dir.path());
    let e = c
        .request(
            "buffer/open",
            json!({"path": ".git/config", "text": "[core]\n"}),
        )
        .unwrap_err();
    assert!(e.1.contains(".git or .mend"), "{e:?}");
}

/// A buffer's file replaced by a link to a FIFO, to `/dev/zero`, or to a
/// file outside the root through a folder link: each is skipped with its
/// reason, nothing is read, the server still answers, and closing its
/// input ends it.
#[test]
fn fifos_devices_and_links_out_are_skipped_and_the_server_answers() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "secret\n").unwrap();
    let dir = workspace(&[("a.txt", "a\n"), ("b.txt", "b\n"), ("c.txt", "c\n")]);
    std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
    let mut c = Client::start(dir.path());
    for p in ["a.txt", "b.txt", "c.txt"] {
        open(&mut c, p, &format!("{}\n", &p[..1]), false, 1);
    }
    let fifo = dir.path().join("pipe");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    std::fs::remove_file(dir.path().join("a.txt")).unwrap();
    std::os::unix::fs::symlink("pipe", dir.path().join("a.txt")).unwrap();
    std::fs::remove_file(dir.path().join("b.txt")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("b.txt")).unwrap();
    std::fs::remove_file(dir.path().join("c.txt")).unwrap();
    std::os::unix::fs::symlink("out/secret.txt", dir.path().join("c.txt")).unwrap();
    let mut reasons = std::collections::BTreeMap::new();
    while reasons.len() < 3 {
        let n = c.notification().expect("a notification for each file");
        if n.method == "buffer/skipped" {
            reasons.insert(
                n.params["path"].as_str().unwrap().to_owned(),
                n.params.clone(),
            );
        } else {
            // A deletion may be seen between the removal and the link.
            assert_eq!(n.method, "buffer/deleted", "{:#}", n.params);
        }
    }
    assert_eq!(reasons["a.txt"]["reason"], "not-a-file");
    assert_eq!(reasons["a.txt"]["kind"], "a FIFO (named pipe)");
    assert_eq!(reasons["b.txt"]["reason"], "outside-root");
    assert_eq!(reasons["c.txt"]["reason"], "outside-root");
    let status = c.request("editor/status", Value::Null).unwrap();
    assert_eq!(status["buffers"].as_array().unwrap().len(), 3);
    let status = c.close_input(PATIENCE).expect("the server exits");
    assert!(status.success(), "{status:?}");
}

/// A line edit whose text lacks its final newline would join two lines:
/// it is refused, and the text is unchanged.
#[test]
fn line_edits_without_a_final_newline_are_refused() {
    let dir = workspace(&[("a.txt", "a\nb\nc\n")]);
    let mut c = Client::start(dir.path());
    open(&mut c, "a.txt", "a\nb\nc\n", false, 1);
    let e = c
        .request(
            "buffer/changed",
            json!({"path": "a.txt", "edits": [{"start": 0, "end": 1, "text": "A"}], "dirty": true, "version": 2}),
        )
        .unwrap_err();
    assert_eq!(e.0, -32602, "{e:?}");
    std::fs::write(dir.path().join("a.txt"), "a\nb\nC\n").unwrap();
    let r = expect(&mut c, "buffer/reload");
    assert_eq!(r["text"], "a\nb\nC\n");
    assert!(c.notification_within(Duration::from_millis(300)).is_none());
}
