//! Buffers are named by number and by their real path: links inside the
//! root, paths that cannot name a file, a new file typed before it exists,
//! and a server that has shut down.

use std::time::Duration;

use serde_json::{Value, json};

use super::client::Client;
use super::{expect, workspace};

fn open(c: &mut Client, path: &str, text: &str, dirty: bool) -> Value {
    c.request(
        "buffer/open",
        json!({"path": path, "text": text, "dirty": dirty, "version": 1}),
    )
    .unwrap()
}

/// `buffer/open` answers the buffer's number, and every notification for
/// it carries that number, so an editor matches them even while a swap
/// makes one path name two buffers for a moment.
#[test]
fn notices_carry_the_number_open_answered() {
    let dir = workspace(&[("a.txt", "a\n"), ("b.txt", "b\n")]);
    let mut c = Client::start(dir.path());
    let a = open(&mut c, "a.txt", "a\n", false);
    let b = open(&mut c, "b.txt", "b\n", false);
    assert_eq!(a["path"], "a.txt");
    assert_ne!(a["buffer"], b["buffer"], "{a} {b}");
    std::fs::write(dir.path().join("b.txt"), "B\n").unwrap();
    let n = expect(&mut c, "buffer/reload");
    assert_eq!(n["buffer"], b["buffer"], "{n:#}");
    assert_eq!(n["path"], "b.txt");
}

/// A link inside the root opens the file it names, under its real path:
/// one file is one buffer, and a write through either name reaches it.
#[test]
fn a_link_inside_the_root_opens_its_target() {
    let dir = workspace(&[("src/real.txt", "one\n")]);
    std::os::unix::fs::symlink("src", dir.path().join("alias")).unwrap();
    let mut c = Client::start(dir.path());
    let opened = open(&mut c, "alias/real.txt", "one\n", false);
    assert_eq!(opened["path"], "src/real.txt", "{opened}");
    std::fs::write(dir.path().join("alias/real.txt"), "two\n").unwrap();
    let n = expect(&mut c, "buffer/reload");
    assert_eq!(n["path"], "src/real.txt");
    assert_eq!(n["text"], "two\n");
}

/// Paths that cannot name a file of the worktree are refused with what to
/// send instead, and nothing is opened.
#[test]
fn paths_that_cannot_name_a_worktree_file_are_refused() {
    let dir = workspace(&[("a.txt", "a\n"), ("src/b.txt", "b\n")]);
    let mut c = Client::start(dir.path());
    let cases = [
        ("../x", "outside the workspace root"),
        ("./../x", "outside the workspace root"),
        ("src/../a.txt", "without `..`"),
        ("src/", "names a folder"),
        ("a\tb.txt", "control character"),
        (".mend/owner", ".git or .mend"),
    ];
    for (path, says) in cases {
        let e = c
            .request("buffer/open", json!({"path": path, "text": ""}))
            .unwrap_err();
        assert_eq!(e.0, -32001, "{path}: {e:?}");
        assert!(e.1.contains(says), "{path}: {e:?}");
    }
    let status = c.request("editor/status", Value::Null).unwrap();
    assert_eq!(status["buffers"], json!([]));
}

/// A person types into a buffer for a file that does not exist yet, and
/// another program creates it: the two are merged against the empty file
/// (here they conflict), and neither text is taken over by the other.
#[test]
fn a_new_file_typed_before_it_exists_is_merged_with_what_appears() {
    let dir = workspace(&[("a.txt", "a\n")]);
    let mut c = Client::start(dir.path());
    open(&mut c, "new/f.txt", "mine\n", true);
    // A dirty buffer's base is the file as the server first reads it after
    // the open; the program creates the file only after that read.
    std::thread::sleep(Duration::from_millis(1500));
    std::fs::create_dir(dir.path().join("new")).unwrap();
    std::fs::write(dir.path().join("new/f.txt"), "theirs\n").unwrap();
    let n = expect(&mut c, "buffer/conflict");
    let text = n["text"].as_str().unwrap();
    assert!(
        text.contains("mine\n") && text.contains("theirs\n"),
        "{text}"
    );
}

/// After `shutdown` the server sends no notification, whatever changes on
/// disk: the editor is tearing its buffers down.
#[test]
fn nothing_is_sent_after_shutdown() {
    let dir = workspace(&[("a.txt", "a\n")]);
    let mut c = Client::start(dir.path());
    open(&mut c, "a.txt", "a\n", false);
    c.request("shutdown", Value::Null).unwrap();
    std::fs::write(dir.path().join("a.txt"), "b\n").unwrap();
    // Long enough for the watcher to settle and merge several times over.
    let late = c.notification_within(Duration::from_secs(2));
    assert!(late.is_none(), "{late:?}");
}
