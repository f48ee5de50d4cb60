//! A person and other programs acting at once, over the real protocol and
//! real files: typing across an agent's writes, a writer that takes its
//! time, and renames between open buffers.

use std::io::Write as _;
use std::time::Duration;

use serde_json::{Value, json};

use super::client::Client;
use super::{AGENT_C, BASE, BOTH, USER_A, apply_hunks, expect, open, workspace};

fn lines(n: usize, f: impl Fn(usize) -> String) -> String {
    (0..n).map(|i| f(i) + "\n").collect()
}

/// The person's editor as the protocol wants it: applies a notification
/// only at its version, reports at once with `applied`, else resyncs.
struct Editor {
    path: &'static str,
    text: String,
    version: i64,
    applied: Option<u64>,
}

impl Editor {
    fn report(&self, c: &mut Client, method: &str) {
        c.request(
            method,
            json!({"path": self.path, "text": self.text, "dirty": true,
                   "version": self.version, "applied": self.applied}),
        )
        .unwrap();
    }

    fn type_text(&mut self, c: &mut Client, text: String) {
        self.text = text;
        self.version += 1;
        self.report(c, "buffer/changed");
    }

    /// Takes a notification as the plugin does; returns whether it applied.
    fn take(&mut self, c: &mut Client, n: &Value) -> bool {
        if n["version"] != json!(self.version) {
            self.report(c, "buffer/resync");
            return false;
        }
        self.text = apply_hunks(&self.text, n);
        assert_eq!(self.text, n["text"].as_str().unwrap());
        self.version += 1;
        self.applied = n["seq"].as_u64();
        self.report(c, "buffer/changed");
        true
    }
}

/// The protocol-level case: the agent writes line 10 twice while
/// the person types in line 1 and a notification is on its way. Every
/// step ends without markers, and the buffer ends with both.
#[test]
fn the_agent_writes_a_line_twice_while_the_person_types() {
    let base = lines(20, |i| format!("line {i}"));
    let dir = workspace(&[("f.txt", base.as_str())]);
    let file = dir.path().join("f.txt");
    let mut c = Client::start(dir.path());
    open(&mut c, "f.txt", &base, false, 1);
    let mut ed = Editor {
        path: "f.txt",
        text: base.clone(),
        version: 1,
        applied: None,
    };
    let person = |k: usize| base.replace("line 1\n", &format!("line 1 typed {k}\n"));
    ed.type_text(&mut c, person(1));
    std::fs::write(&file, base.replace("line 10\n", "line 10 agent A\n")).unwrap();
    let first = expect(&mut c, "buffer/merged");
    // The person types before the merge lands; the agent writes again.
    ed.type_text(&mut c, ed.text.replace("typed 1", "typed 2"));
    std::fs::write(&file, base.replace("line 10\n", "line 10 agent B\n")).unwrap();
    assert!(!ed.take(&mut c, &first), "computed before the typing");
    loop {
        let n = c.notification().expect("the merge comes again");
        assert_eq!(n.method, "buffer/merged", "{:#}", n.params);
        ed.take(&mut c, &n.params);
        if ed.text.contains("agent B") {
            break;
        }
    }
    let want = person(2).replace("line 10\n", "line 10 agent B\n");
    assert_eq!(ed.text, want);
    assert!(c.notification_within(Duration::from_millis(700)).is_none());
    let status = c.request("editor/status", Value::Null).unwrap();
    assert_eq!(status["buffers"][0]["waiting"], false);
}

/// A writer that truncates the file and writes it in pieces 300 ms apart,
/// holding it open: the buffer gets one merge of the finished file, not a
/// conflict with a half-written one.
#[test]
fn a_slow_writer_is_merged_once_it_is_done() {
    let base = lines(12, |i| format!("line {i}"));
    let dir = workspace(&[("f.txt", base.as_str())]);
    let mut c = Client::start(dir.path());
    open(&mut c, "f.txt", &base, false, 1);
    let mut ed = Editor {
        path: "f.txt",
        text: base.clone(),
        version: 1,
        applied: None,
    };
    ed.type_text(&mut c, base.replace("line 0\n", "line 0 typed\n"));
    let agent = base.replace("line 11\n", "line 11 agent\n");
    let mut f = std::fs::File::create(dir.path().join("f.txt")).unwrap();
    for piece in agent.as_bytes().chunks(agent.len() / 3 + 1) {
        f.write_all(piece).unwrap();
        f.flush().unwrap();
        std::thread::sleep(Duration::from_millis(300));
    }
    drop(f);
    let n = expect(&mut c, "buffer/merged");
    assert!(ed.take(&mut c, &n));
    assert_eq!(ed.text, agent.replace("line 0\n", "line 0 typed\n"));
    assert!(c.notification_within(Duration::from_millis(700)).is_none());
}

fn status_paths(c: &mut Client) -> Vec<(String, bool)> {
    let s = c.request("editor/status", Value::Null).unwrap();
    s["buffers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["path"].as_str().unwrap().to_owned(), b["deleted"] == true))
        .collect()
}

/// Writes `text` to `path` and returns the reload the buffer there gets.
fn write_and_reload(c: &mut Client, dir: &std::path::Path, path: &str, text: &str) -> Value {
    std::fs::write(dir.join(path), text).unwrap();
    let r = expect(c, "buffer/reload");
    assert_eq!(r["path"], path);
    r
}

/// A workspace with the given files, each open in the editor.
fn all_open(files: &[(&str, &str)]) -> (tempfile::TempDir, Client) {
    let dir = workspace(files);
    let mut c = Client::start(dir.path());
    for (path, text) in files {
        open(&mut c, path, text, false, 1);
    }
    (dir, c)
}

/// Two open files swapped through a temporary name: each buffer follows
/// its own file, and a write to either path reaches the right buffer.
#[test]
fn a_swap_of_two_open_files_moves_both_buffers() {
    let (dir, mut c) = all_open(&[("a.txt", "alpha\n"), ("b.txt", "beta\n")]);
    let d = dir.path();
    std::fs::rename(d.join("a.txt"), d.join("tmp")).unwrap();
    std::fs::rename(d.join("b.txt"), d.join("a.txt")).unwrap();
    std::fs::rename(d.join("tmp"), d.join("b.txt")).unwrap();
    let mut moves = Vec::new();
    while moves.len() < 2 {
        let n = c.notification().expect("both renames");
        assert_eq!(n.method, "buffer/renamed", "{:#}", n.params);
        moves.push((n.params["path"].clone(), n.params["to"].clone()));
    }
    moves.sort_by_key(|m| m.0.to_string());
    assert_eq!(
        moves,
        [
            (json!("a.txt"), json!("b.txt")),
            (json!("b.txt"), json!("a.txt"))
        ]
    );
    // The buffer now at a.txt is the one that held "beta".
    let r = write_and_reload(&mut c, d, "a.txt", "beta 2\n");
    assert_eq!(apply_hunks("beta\n", &r), "beta 2\n");
    let r = write_and_reload(&mut c, d, "b.txt", "alpha 2\n");
    assert_eq!(apply_hunks("alpha\n", &r), "alpha 2\n");
}

/// `mv a b` with both open: b's buffer is told its file was replaced, and
/// a's buffer follows onto b.
#[test]
fn a_rename_onto_an_open_buffer_replaces_it() {
    let (dir, mut c) = all_open(&[("a.txt", "alpha\n"), ("b.txt", "beta\n")]);
    let d = dir.path();
    std::fs::rename(d.join("a.txt"), d.join("b.txt")).unwrap();
    let r = expect(&mut c, "buffer/replaced");
    assert_eq!(
        (r["path"].as_str(), r["by"].as_str()),
        (Some("b.txt"), Some("a.txt"))
    );
    let m = expect(&mut c, "buffer/renamed");
    assert_eq!(
        (m["path"].as_str(), m["to"].as_str()),
        (Some("a.txt"), Some("b.txt"))
    );
    assert_eq!(status_paths(&mut c), [("b.txt".to_owned(), false)]);
    let r = write_and_reload(&mut c, d, "b.txt", "alpha 2\n");
    assert_eq!(apply_hunks("alpha\n", &r), "alpha 2\n");
}

/// A folder renamed with two open files in it: both follow, neither is
/// left flagged deleted, and no deletion is reported.
#[test]
fn a_folder_rename_moves_its_buffers() {
    let (dir, mut c) = all_open(&[("src/a.txt", "alpha\n"), ("src/b.txt", "beta\n")]);
    let d = dir.path();
    std::fs::rename(d.join("src"), d.join("lib")).unwrap();
    for _ in 0..2 {
        let n = c.notification().expect("a rename for each");
        assert_eq!(n.method, "buffer/renamed", "{:#}", n.params);
    }
    assert_eq!(
        status_paths(&mut c),
        [
            ("lib/a.txt".to_owned(), false),
            ("lib/b.txt".to_owned(), false)
        ]
    );
    write_and_reload(&mut c, d, "lib/a.txt", "alpha 2\n");
}

/// Another program saves through a backup, slowly: `mv f f~`, write `f`,
/// remove `f~`, 300 ms apart. The buffer stays on `f` and reloads.
#[test]
fn a_slow_backup_style_save_keeps_the_buffer_on_its_file() {
    let dir = workspace(&[("f.txt", "one\n")]);
    let d = dir.path();
    let mut c = Client::start(d);
    open(&mut c, "f.txt", "one\n", false, 1);
    std::fs::rename(d.join("f.txt"), d.join("f.txt~")).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    std::fs::write(d.join("f.txt"), "two\n").unwrap();
    std::thread::sleep(Duration::from_millis(300));
    std::fs::remove_file(d.join("f.txt~")).unwrap();
    let r = expect(&mut c, "buffer/reload");
    assert_eq!(
        (r["path"].as_str(), r["text"].as_str()),
        (Some("f.txt"), Some("two\n"))
    );
    assert!(c.notification_within(Duration::from_millis(1500)).is_none());
    assert_eq!(status_paths(&mut c), [("f.txt".to_owned(), false)]);
}

/// An editor that sends its buffer reports as JSON-RPC notifications (no
/// id), as LSP's `didChange` is: they are carried out all the same. Left
/// unread, the server took the typed buffer for a clean one, reloaded it
/// over the person's text, and waited for good for an answer that had
/// been sent (`waiting` stuck, `dirty` false, the file's later writes
/// never reaching the buffer).
#[test]
fn buffer_reports_sent_as_notifications_are_taken() {
    let dir = workspace(&[("f.rs", BASE)]);
    let mut c = Client::start(dir.path());
    open(&mut c, "f.rs", BASE, false, 1);
    let report = json!({"path": "f.rs", "text": USER_A, "dirty": true, "version": 2});
    c.notify("buffer/changed", &report);
    // Requests are answered in order: the report was taken before this.
    assert_eq!(status(&mut c), (true, false));
    std::fs::write(dir.path().join("f.rs"), AGENT_C).unwrap();
    let n = expect(&mut c, "buffer/merged");
    assert_eq!(n["text"], BOTH);
    assert_eq!(n["version"], 2);
    let ack = json!({"path": "f.rs", "text": BOTH, "dirty": true, "version": 3,
                     "applied": n["seq"]});
    c.notify("buffer/changed", &ack);
    assert_eq!(status(&mut c), (true, false));
    // A failure cannot be answered; the buffer is synced as before.
    c.notify(
        "buffer/changed",
        &json!({"path": "nope.rs", "text": "", "dirty": true}),
    );
    let agent = AGENT_C.replace("    2\n", "    20\n");
    std::fs::write(dir.path().join("f.rs"), &agent).unwrap();
    let n = expect(&mut c, "buffer/merged");
    assert_eq!(n["text"], BOTH.replace("    2\n", "    20\n"));
}

/// `editor/status` of the only buffer: (dirty, waiting).
fn status(c: &mut Client) -> (bool, bool) {
    let s = c.request("editor/status", Value::Null).unwrap();
    let b = &s["buffers"][0];
    (b["dirty"] == true, b["waiting"] == true)
}
