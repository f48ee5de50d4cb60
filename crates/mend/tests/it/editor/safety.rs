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

/// A socket or a FIFO renamed over a buffer's file is not the file
/// deleted: it is reported as `buffer/skipped` with its kind, and the
/// buffer stays. (A socket cannot be opened for reading at all, which was
/// taken for a missing file.)
#[test]
fn a_socket_or_fifo_at_a_buffers_path_is_skipped() {
    let dir = workspace(&[("a.txt", "a\n"), ("b.txt", "b\n")]);
    let d = dir.path();
    let mut c = Client::start(d);
    open(&mut c, "a.txt", "a\n", false, 1);
    open(&mut c, "b.txt", "b\n", false, 1);
    let _socket = std::os::unix::net::UnixListener::bind(d.join("sock")).unwrap();
    std::fs::rename(d.join("sock"), d.join("a.txt")).unwrap();
    let s = expect(&mut c, "buffer/skipped");
    assert_eq!(
        (&s["path"], &s["reason"], &s["kind"]),
        (&json!("a.txt"), &json!("not-a-file"), &json!("a socket")),
        "{s:#}"
    );
    let fifo = d.join("pipe");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    std::fs::rename(&fifo, d.join("b.txt")).unwrap();
    let s = expect(&mut c, "buffer/skipped");
    assert_eq!(
        (&s["path"], &s["kind"]),
        (&json!("b.txt"), &json!("a FIFO (named pipe)")),
        "{s:#}"
    );
    // Nothing says the files were deleted, and both buffers stay.
    assert!(c.notification_within(Duration::from_millis(1500)).is_none());
    let status = c.request("editor/status", Value::Null).unwrap();
    assert_eq!(status["buffers"][0]["deleted"], false, "{status:#}");
    assert_eq!(status["buffers"][1]["deleted"], false, "{status:#}");
}

/// Bytes without a line end before a header do not swallow the frame
/// they precede: they are answered, and the request after them is too.
#[test]
fn stray_bytes_before_a_header_are_passed_over() {
    let dir = workspace(&[("a.txt", "one\n")]);
    let mut c = Client::start(dir.path());
    for stray in [&b"abc"[..], b"}}", b"\x00\xff"] {
        c.send_raw(stray);
        let status = c.request("editor/status", Value::Null);
        assert!(status.is_ok(), "{status:?}");
        let errors: Vec<i64> = c.errors().iter().map(|e| e.0).collect();
        assert_eq!(errors, [-32700], "{stray:?}");
    }
}

/// A `Content-Length` over the limit is answered at once, before its
/// bytes come (for 10^12 they never do), and the next frame is read.
#[test]
fn an_oversized_length_is_answered_at_once() {
    let dir = workspace(&[("a.txt", "one\n")]);
    let mut c = Client::start(dir.path());
    c.send_raw(b"Content-Length: 1000000000000\r\n\r\n{\"id\":");
    let status = c.request("editor/status", Value::Null);
    assert!(status.is_ok(), "{status:?}");
    let errors = c.errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].0, -32600, "{errors:?}");
    assert!(errors[0].1.contains("over the limit"), "{errors:?}");
}

/// A request's id comes back as it was sent: an integer past 64 bits is
/// not turned into a float (the reply is read as bytes, since a JSON
/// parser would round it too).
#[test]
fn ids_are_echoed_exactly() {
    let dir = workspace(&[("a.txt", "one\n")]);
    let bin = std::env::var_os("MEND_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_mend").into());
    let mut child = std::process::Command::new(bin)
        .arg("editor")
        .current_dir(dir.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let ids = [
        "123456789012345678901234567890",
        "-18446744073709551617",
        "2.50",
    ];
    let mut input = child.stdin.take().unwrap();
    for (n, id) in ids.iter().enumerate() {
        let method = if n == 0 {
            "initialize"
        } else {
            "editor/status"
        };
        let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}"}}"#);
        std::io::Write::write_all(&mut input, &frame(body.as_bytes())).unwrap();
    }
    drop(input);
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for id in ids {
        assert!(text.contains(&format!(r#""id":{id},"#)), "{id}: {text}");
    }
}
