//! The root folder deleted and made again, or moved away and back: the
//! server tells the editor (`root/lost`, `root/restored`), watches the
//! folder at the root's path again, and its files reach their buffers as
//! before.

use std::path::Path;

use serde_json::{Value, json};

use super::client::Client;
use super::{open, workspace};

/// The next notification that is not a `buffer/deleted` (a file removed
/// with its root may be reported before the root is), which must be
/// `method`.
fn expect_past_deletions(c: &mut Client, method: &str) -> Value {
    loop {
        let n = c
            .notification()
            .unwrap_or_else(|| panic!("no notification; expected {method}"));
        if n.method != "buffer/deleted" {
            assert_eq!(n.method, method, "{:#}", n.params);
            return n.params;
        }
    }
}

/// The buffer of `a.txt` takes `text` from the file (a reload, or a merge
/// into a buffer whose file had gone), and the editor says so.
fn takes(c: &mut Client, text: &str, version: i64) {
    let n = c.notification().expect("the file reaches its buffer");
    assert!(
        ["buffer/reload", "buffer/merged"].contains(&n.method.as_str()),
        "{} {:#}",
        n.method,
        n.params
    );
    assert_eq!(n.params["text"], text, "{:#}", n.params);
    c.request(
        "buffer/changed",
        json!({"path": "a.txt", "text": text, "dirty": false, "version": version, "applied": n.params["seq"]}),
    )
    .unwrap();
}

fn root_lost(c: &mut Client) -> bool {
    let status = c.request("editor/status", Value::Null).unwrap();
    status["root_lost"].as_bool().expect("editor/status says")
}

fn restored(c: &mut Client, root: &Path) {
    let back = expect_past_deletions(c, "root/restored");
    assert_eq!(
        Path::new(back["root"].as_str().unwrap()),
        root.canonicalize().unwrap()
    );
    assert!(!root_lost(c));
}

#[test]
fn a_root_deleted_and_made_again_is_watched_again() {
    let dir = workspace(&[("a.txt", "one\n")]);
    let root = dir.path().to_path_buf();
    let mut c = Client::start(&root);
    open(&mut c, "a.txt", "one\n", false, 1);
    std::fs::remove_dir_all(&root).unwrap();
    let lost = expect_past_deletions(&mut c, "root/lost");
    assert_eq!(
        Path::new(lost["root"].as_str().unwrap()),
        Path::new(&root).canonicalize().unwrap_or(root.clone())
    );
    assert!(root_lost(&mut c));
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("a.txt"), "two\n").unwrap();
    restored(&mut c, &root);
    takes(&mut c, "two\n", 2);
    // Watched again: the next write reaches the buffer too.
    std::fs::write(root.join("a.txt"), "three\n").unwrap();
    takes(&mut c, "three\n", 3);
}

#[test]
fn a_root_moved_away_and_back_is_watched_again() {
    let dir = workspace(&[("a.txt", "one\n")]);
    let root = dir.path().to_path_buf();
    let away = root.with_extension("away");
    let mut c = Client::start(&root);
    open(&mut c, "a.txt", "one\n", false, 1);
    std::fs::rename(&root, &away).unwrap();
    expect_past_deletions(&mut c, "root/lost");
    // What happens to the folder elsewhere is not the root's.
    std::fs::write(away.join("a.txt"), "two\n").unwrap();
    let quiet = c.notification_within(std::time::Duration::from_millis(600));
    assert!(quiet.is_none(), "{quiet:?}");
    std::fs::rename(&away, &root).unwrap();
    restored(&mut c, &root);
    takes(&mut c, "two\n", 2);
    std::fs::write(root.join("a.txt"), "three\n").unwrap();
    takes(&mut c, "three\n", 3);
}
