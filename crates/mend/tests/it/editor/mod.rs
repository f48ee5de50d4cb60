//! `mend editor` driven over real LSP framing: buffers merge, conflict and
//! recover as the editor protocol promises.
//!
//! `cargo test -p mend --test it editor::` runs these alone.

mod actors;
pub(crate) mod client;
mod dirty_open;
mod failures;
mod locks;
mod paths;
mod renames;
mod root;
mod safety;

use std::time::Duration;

use crate::{run_mend, tree as workspace};
use client::Client;
use serde_json::{Value, json};

const BASE: &str = "fn a() {\n    1\n}\n\nfn b() {\n    2\n}\n\nfn c() {\n    3\n}\n";
const USER_A: &str = "fn a() {\n    10\n}\n\nfn b() {\n    2\n}\n\nfn c() {\n    3\n}\n";
const AGENT_C: &str = "fn a() {\n    1\n}\n\nfn b() {\n    2\n}\n\nfn c() {\n    30\n}\n";
const BOTH: &str = "fn a() {\n    10\n}\n\nfn b() {\n    2\n}\n\nfn c() {\n    30\n}\n";
const AGENT_A: &str = "fn a() {\n    11\n}\n\nfn b() {\n    2\n}\n\nfn c() {\n    30\n}\n";

fn open(c: &mut Client, path: &str, text: &str, dirty: bool, version: i64) {
    c.request(
        "buffer/open",
        json!({"path": path, "text": text, "dirty": dirty, "version": version}),
    )
    .unwrap();
}

fn changed(c: &mut Client, path: &str, text: &str, version: i64) {
    c.request(
        "buffer/changed",
        json!({"path": path, "text": text, "dirty": true, "version": version}),
    )
    .unwrap();
}

fn expect(c: &mut Client, method: &str) -> Value {
    let n = c
        .notification()
        .unwrap_or_else(|| panic!("no notification; expected {method}"));
    assert_eq!(n.method, method, "{:#}", n.params);
    n.params
}

/// Applies a notification's hunks, last first, as an editor does.
fn apply_hunks(text: &str, params: &Value) -> String {
    let mut lines: Vec<String> = text.split_inclusive('\n').map(str::to_owned).collect();
    let hunks = params["hunks"].as_array().unwrap();
    for h in hunks.iter().rev() {
        let (s, e) = (
            h["start"].as_u64().unwrap() as usize,
            h["end"].as_u64().unwrap() as usize,
        );
        let new = h["text"]
            .as_str()
            .unwrap()
            .split_inclusive('\n')
            .map(str::to_owned);
        lines.splice(s..e, new);
    }
    lines.concat()
}

/// A write to the line next to the person's unsaved change: git conflicts,
/// and the default (git) policy leaves git's conflict; `initialize` with
/// `"merge": "safe"` merges it and names the resolver with the lines it
/// wrote.
#[test]
fn neighbouring_changes_merge_and_name_their_resolver() {
    let base = "fn a() {\n    let x = 1;\n    let y = 2;\n}\n";
    let user = base.replace("x = 1", "x = 10");
    let agent = base.replace("y = 2", "y = 20");
    let both = user.replace("y = 2", "y = 20");
    for (init, merged) in [(json!({"merge": "safe"}), true), (json!({}), false)] {
        let dir = workspace(&[("src/lib.rs", base)]);
        let mut c = Client::start_with(dir.path(), init);
        open(&mut c, "src/lib.rs", base, false, 1);
        changed(&mut c, "src/lib.rs", &user, 2);
        std::fs::write(dir.path().join("src/lib.rs"), &agent).unwrap();
        if merged {
            let m = expect(&mut c, "buffer/merged");
            assert_eq!(m["text"], both.as_str());
            assert_eq!(
                m["resolved"],
                json!([{"resolver": "adjacent", "start": 1, "end": 3}])
            );
        } else {
            let k = expect(&mut c, "buffer/conflict");
            assert_eq!(k["resolved"], json!([]));
        }
    }
}

/// The acceptance sequence: open, dirty, merge, conflict, a write held
/// while the markers stand, resolution merging it, save, merge again.
#[test]
fn merge_conflict_resolve_save_merge() {
    let dir = workspace(&[("src/lib.rs", BASE)]);
    let file = dir.path().join("src/lib.rs");
    let mut c = Client::start(dir.path());
    open(&mut c, "src/lib.rs", BASE, false, 1);
    changed(&mut c, "src/lib.rs", USER_A, 2);

    std::fs::write(&file, AGENT_C).unwrap();
    let m = expect(&mut c, "buffer/merged");
    assert_eq!(m["text"], BOTH);
    assert_eq!(m["version"], 2);
    assert_eq!(m["path"], "src/lib.rs");
    assert_eq!(apply_hunks(USER_A, &m), BOTH);
    changed(&mut c, "src/lib.rs", BOTH, 3);

    std::fs::write(&file, AGENT_A).unwrap();
    let k = expect(&mut c, "buffer/conflict");
    let text = k["text"].as_str().unwrap().to_owned();
    assert!(
        text.contains("<<<<<<< buffer\n    10\n=======\n    11\n>>>>>>> disk\n"),
        "{text}"
    );
    assert_eq!(k["conflicts"], json!([{"start": 1, "end": 6}]));
    assert_eq!(apply_hunks(BOTH, &k), text);
    changed(&mut c, "src/lib.rs", &text, 4);
    let status = c.request("editor/status", Value::Null).unwrap();
    assert_eq!(status["buffers"][0]["conflict"], true);

    // Conflict mode: another write is announced, not merged into markers.
    let agent_b = AGENT_A.replace("    2\n", "    22\n");
    std::fs::write(&file, &agent_b).unwrap();
    let s = expect(&mut c, "buffer/skipped");
    assert_eq!(s["reason"], "conflict");

    // The person resolves (keeps 10): the held write merges at once.
    changed(&mut c, "src/lib.rs", BOTH, 5);
    let m = expect(&mut c, "buffer/merged");
    let resolved = BOTH.replace("    2\n", "    22\n");
    assert_eq!(m["text"], resolved);
    changed(&mut c, "src/lib.rs", &resolved, 6);
    let status = c.request("editor/status", Value::Null).unwrap();
    assert_eq!(status["buffers"][0]["conflict"], false);

    // Save (a new version), then merging goes on.
    std::fs::write(&file, &resolved).unwrap();
    c.request(
        "buffer/saved",
        json!({"path": "src/lib.rs", "text": resolved, "version": 7}),
    )
    .unwrap();
    assert!(c.notification_within(Duration::from_millis(600)).is_none());
    let user_b = resolved.replace("    30\n", "    31\n");
    changed(&mut c, "src/lib.rs", &user_b, 8);
    std::fs::write(&file, "// header\n".to_owned() + &resolved).unwrap();
    let m = expect(&mut c, "buffer/merged");
    assert_eq!(m["text"], "// header\n".to_owned() + &user_b);
    assert!(c.finish().success());
}

#[test]
fn clean_buffer_reloads_and_atomic_rename_is_seen() {
    let dir = workspace(&[("a.txt", "one\ntwo\n")]);
    let mut c = Client::start(dir.path());
    let abs = dir.path().join("a.txt");
    open(&mut c, abs.to_str().unwrap(), "one\ntwo\n", false, 1);
    let tmp = dir.path().join(".a.txt.swp");
    std::fs::write(&tmp, "one\nTWO\n").unwrap();
    std::fs::rename(&tmp, &abs).unwrap();
    let r = expect(&mut c, "buffer/reload");
    assert_eq!(r["text"], "one\nTWO\n");
    assert_eq!(r["hunks"], json!([{"start": 1, "end": 2, "text": "TWO\n"}]));
}

#[test]
fn stale_clean_buffer_reloads_when_opened() {
    let dir = workspace(&[("a.txt", "new\n")]);
    let mut c = Client::start(dir.path());
    open(&mut c, "a.txt", "old\n", false, 1);
    let r = expect(&mut c, "buffer/reload");
    assert_eq!(r["text"], "new\n");
}

#[test]
fn delete_and_rename_are_reported() {
    let dir = workspace(&[("a.txt", "a\n"), ("b.txt", "b\n")]);
    let mut c = Client::start(dir.path());
    open(&mut c, "a.txt", "a\n", false, 1);
    open(&mut c, "b.txt", "b\n", false, 1);
    std::fs::remove_file(dir.path().join("a.txt")).unwrap();
    let d = expect(&mut c, "buffer/deleted");
    assert_eq!(d["path"], "a.txt");
    std::fs::rename(dir.path().join("b.txt"), dir.path().join("c.txt")).unwrap();
    let r = expect(&mut c, "buffer/renamed");
    assert_eq!(
        (r["path"].as_str(), r["to"].as_str()),
        (Some("b.txt"), Some("c.txt"))
    );
    // The buffer follows: a write to the new name reaches it.
    std::fs::write(dir.path().join("c.txt"), "c\n").unwrap();
    let l = expect(&mut c, "buffer/reload");
    assert_eq!(l["path"], "c.txt");
}

#[test]
fn refused_merge_is_redone_against_the_editors_text() {
    let dir = workspace(&[("src/lib.rs", BASE)]);
    let mut c = Client::start(dir.path());
    open(&mut c, "src/lib.rs", BASE, false, 1);
    changed(&mut c, "src/lib.rs", USER_A, 2);
    std::fs::write(dir.path().join("src/lib.rs"), AGENT_C).unwrap();
    expect(&mut c, "buffer/merged");
    // The user typed in b() before the merge arrived.
    let typed = "fn a() {\n    10\n}\n\nfn b() {\n    20\n}\n\nfn c() {\n    3\n}\n";
    c.request(
        "buffer/resync",
        json!({"path": "src/lib.rs", "text": typed, "dirty": true, "version": 3}),
    )
    .unwrap();
    let m = expect(&mut c, "buffer/merged");
    assert_eq!(m["version"], 3);
    assert_eq!(
        apply_hunks(typed, &m),
        "fn a() {\n    10\n}\n\nfn b() {\n    20\n}\n\nfn c() {\n    30\n}\n"
    );
}

#[test]
fn line_edits_update_the_text() {
    let dir = workspace(&[("a.txt", "a\nb\nc\n")]);
    let mut c = Client::start(dir.path());
    open(&mut c, "a.txt", "a\nb\nc\n", false, 1);
    c.request(
        "buffer/changed",
        json!({"path": "a.txt", "edits": [{"start": 0, "end": 1, "text": "A\n"}], "dirty": true, "version": 2}),
    )
    .unwrap();
    std::fs::write(dir.path().join("a.txt"), "a\nb\nC\n").unwrap();
    let m = expect(&mut c, "buffer/merged");
    assert_eq!(m["text"], "A\nb\nC\n");
}

#[test]
fn bad_requests_get_errors_that_say_what_to_do() {
    let dir = workspace(&[("a.txt", "a\n")]);
    let mut c = Client::start(dir.path());
    let outside = c
        .request("buffer/open", json!({"path": "../x", "text": ""}))
        .unwrap_err();
    assert!(
        outside.1.contains("outside the workspace root"),
        "{outside:?}"
    );
    let not_open = c
        .request("buffer/saved", json!({"path": "a.txt", "text": "a\n"}))
        .unwrap_err();
    assert!(not_open.1.contains("buffer/open first"), "{not_open:?}");
    let unknown = c.request("buffer/fly", json!({})).unwrap_err();
    assert_eq!(unknown.0, -32601);
    let bad = c.request("buffer/open", json!({"path": 3})).unwrap_err();
    assert_eq!(bad.0, -32602);
    let no_session = c.request("pending/status", json!({})).unwrap_err();
    assert!(no_session.1.contains("default"), "{no_session:?}");
    assert!(c.finish().success());
}

#[test]
fn pending_session_is_served() {
    let dir = workspace(&[("a.txt", "one\n")]);
    let run = |args: &[&str], input: &str| {
        let out = run_mend(dir.path(), args, Some(input.as_bytes()));
        assert!(out.status.success(), "{out:?}");
    };
    run(&["pending", "add", "a.txt"], "");
    run(
        &["apply", "--pending"],
        "a.txt\n```\n<<<<<<< SEARCH\none\n=======\nONE\n>>>>>>> REPLACE\n```\n",
    );
    let mut c = Client::start(dir.path());
    open(&mut c, "a.txt", "one\n", false, 1);
    let s = c.request("pending/status", json!({})).unwrap();
    assert_eq!(s["files"], json!([{"path": "a.txt", "status": "M"}]));
    let d = c
        .request("pending/diff", json!({"paths": ["a.txt"]}))
        .unwrap();
    assert!(d["diff"].as_str().unwrap().contains("+ONE"));
    let a = c
        .request("pending/accept", json!({"paths": ["a.txt"]}))
        .unwrap();
    assert_eq!(a["accepted"][0]["path"], "a.txt");
    // The accepted write reaches the open buffer.
    let r = expect(&mut c, "buffer/reload");
    assert_eq!(r["text"], "ONE\n");
}

/// One outcome, one JSON: `mend pending status --json`, the text of MCP's
/// `pending_status`, its structured content and the editor's
/// `pending/status` result are the same JSON with the same keys in the
/// same order (the outcome type's), so printed alike they are the same
/// bytes; so are `mend pending diff --json` and `pending/diff`, and `mend
/// pending accept --json` and `pending/accept`.
#[test]
fn every_front_end_prints_one_outcome_the_same() {
    let dir = workspace(&[("a.txt", "one\n"), ("b.txt", "two\n")]);
    let d = dir.path();
    let edit = "a.txt\n<<<<<<< SEARCH\none\n=======\nONE\n>>>>>>> REPLACE\n\nb.txt\n<<<<<<< SEARCH\ntwo\n=======\nTWO\n>>>>>>> REPLACE\n";
    let proposed = run_mend(d, &["apply", "--pending"], Some(edit.as_bytes()));
    assert!(proposed.status.success(), "{proposed:?}");
    let cli = |args: &[&str]| {
        let out = run_mend(d, args, None);
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let value = |text: &str| serde_json::from_str::<Value>(text).unwrap();
    let pretty = |v: &Value| format!("{}\n", serde_json::to_string_pretty(v).unwrap());
    let status = cli(&["pending", "status", "--json"]);
    let mcp = std::process::Command::new(crate::python())
        .arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/call.py"))
        .arg(crate::mend_bin())
        .arg(json!([[{"tool": "pending_status"}]]).to_string())
        .arg("--root")
        .arg(d)
        .arg("--pending")
        .output()
        .unwrap();
    assert!(mcp.status.success(), "{mcp:?}");
    let mcp: Value = serde_json::from_slice(&mcp.stdout).unwrap();
    let call = &mcp["steps"][0][0];
    assert_eq!(call["error"], false, "{call}");
    assert_eq!(format!("{}\n", call["text"].as_str().unwrap()), status);
    assert_eq!(call["structured"], value(&status));
    assert_eq!(pretty(&call["structured"]), status);
    let mut c = Client::start(d);
    let editor = c.request("pending/status", json!({})).unwrap();
    assert_eq!(editor, value(&status));
    assert_eq!(pretty(&editor), status);
    let diff = cli(&["pending", "diff", "--json", "a.txt"]);
    assert!(diff.contains("# a.txt: version "), "{diff}");
    let shown = c
        .request("pending/diff", json!({"paths": ["a.txt"]}))
        .unwrap();
    assert_eq!(shown, value(&diff));
    assert_eq!(pretty(&shown), diff);
    let accepted = cli(&["pending", "accept", "--json", "a.txt"]);
    assert_eq!(
        accepted,
        "{\n  \"accepted\": [\n    {\n      \"path\": \"a.txt\",\n      \"how\": \"written\"\n    }\n  ]\n}\n"
    );
    let editor = c
        .request("pending/accept", json!({"paths": ["b.txt"]}))
        .unwrap();
    assert_eq!(editor, value(&accepted.replace("a.txt", "b.txt")));
    assert_eq!(pretty(&editor), accepted.replace("a.txt", "b.txt"));
    assert!(c.finish().success());
}

/// The editor's `turn/*` methods: a turn begun there lists a change an
/// agent wrote, `turn/status` is the JSON of `mend turn status --json`, a
/// hunk rejected through `turn/reject` reaches the open buffer, and a
/// method mend does not know is answered as such.
#[test]
fn the_turn_is_served() {
    let base: String = (0..20).map(|i| format!("line {i}\n")).collect();
    let dir = workspace(&[("a.txt", base.as_str())]);
    let d = dir.path();
    let mut c = Client::start(d);
    open(&mut c, "a.txt", &base, false, 1);
    let begun = c.request("turn/begin", json!({"label": "t"})).unwrap();
    assert_eq!(begun["turn"]["label"], "t");
    let changed = base
        .replace("line 1\n", "one\n")
        .replace("line 18\n", "eighteen\n");
    std::fs::write(d.join("a.txt"), &changed).unwrap();
    let reload = expect(&mut c, "buffer/reload");
    assert_eq!(reload["text"], changed.as_str());
    // The editor applies it and says so, as the plugin does.
    c.request(
        "buffer/changed",
        json!({"path": "a.txt", "text": changed, "dirty": false, "version": 2, "applied": reload["seq"]}),
    )
    .unwrap();
    let status = c.request("turn/status", json!({})).unwrap();
    let cli = run_mend(d, &["turn", "status", "--json"], None);
    assert!(cli.status.success(), "{cli:?}");
    assert_eq!(
        status,
        serde_json::from_slice::<Value>(&cli.stdout).unwrap()
    );
    assert_eq!(status["files"][0]["hunks"], 2, "{status}");
    let diff = c.request("turn/diff", json!({"paths": ["a.txt"]})).unwrap();
    assert!(
        diff["files"][0]["diff"]
            .as_str()
            .unwrap()
            .contains(" hunk 2\n")
    );
    let rejected = c
        .request("turn/reject", json!({"paths": ["a.txt"], "hunks": [1]}))
        .unwrap();
    assert_eq!(rejected["rejected"][0]["hunks"], json!([1]));
    let back = base.replace("line 18\n", "eighteen\n");
    assert_eq!(expect(&mut c, "buffer/reload")["text"], back.as_str());
    let accepted = c.request("turn/accept", json!({})).unwrap();
    assert_eq!(accepted["accepted"][0]["path"], "a.txt");
    assert_eq!(
        c.request("turn/status", json!({})).unwrap()["files"],
        json!([])
    );
    // turn/undo takes the accept back: the file is in review again.
    let undone = c.request("turn/undo", json!({})).unwrap();
    assert_eq!(undone["undone"], "accept", "{undone}");
    assert_eq!(undone["reopened"], json!(["a.txt"]));
    let listed = c.request("turn/status", json!({})).unwrap();
    assert_eq!(listed["files"][0]["path"], "a.txt", "{listed}");
    c.request("turn/accept", json!({})).unwrap();
    let ended = c.request("turn/end", json!({})).unwrap();
    assert_eq!(ended["turn"]["id"], begun["turn"]["id"]);
    let none = c.request("turn/status", json!({})).unwrap_err();
    assert!(none.1.contains("no turn is open"), "{none:?}");
    assert_eq!(c.request("turn/fly", json!({})).unwrap_err().0, -32601);
    assert!(c.finish().success());
}
