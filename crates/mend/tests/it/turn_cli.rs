//! `mend turn` run from a folder inside the worktree: without `--root` it
//! acts on the worktree's one turn (as agents' hooks do), and its path
//! arguments are relative to the current folder; with `--root` they are
//! relative to the root.

use mend_test_support::{put, read_tree_without, repo, run_mend};

fn ok(dir: &std::path::Path, args: &[&str]) -> String {
    let out = run_mend(dir, args, None);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn a_subfolder_acts_on_the_worktrees_turn_with_paths_from_there() {
    let dir = repo(&[
        ("sub/a.txt", "a\n"),
        ("b.txt", "b\n"),
        ("sub/b.txt", "sub b\n"),
    ]);
    let root = dir.path();
    let sub = root.join("sub");
    ok(&sub, &["turn", "begin"]);
    assert!(
        !sub.join(".mend").exists(),
        "no second turn in the subfolder"
    );
    put(root, "sub/a.txt", "A\n");
    put(root, "b.txt", "B\n");
    put(root, "sub/b.txt", "SUB B\n");
    let status = ok(&sub, &["turn", "status"]);
    assert!(status.contains("3 changes"), "{status}");
    // `b.txt` here is sub/b.txt; `../b.txt` is the root's.
    ok(&sub, &["turn", "reject", "b.txt"]);
    ok(&sub, &["turn", "reject", "../b.txt"]);
    let tree = read_tree_without(root, &[".git", ".mend"]);
    let want = [
        ("b.txt", "b\n"),
        ("sub/a.txt", "A\n"),
        ("sub/b.txt", "sub b\n"),
    ];
    let want: Vec<(String, Vec<u8>)> = want
        .iter()
        .map(|(p, b)| ((*p).to_owned(), b.as_bytes().to_vec()))
        .collect();
    assert_eq!(tree, want);
    // With --root, paths are the root's.
    ok(&sub, &["turn", "--root", "..", "reject", "sub/a.txt"]);
    assert_eq!(std::fs::read(root.join("sub/a.txt")).unwrap(), b"a\n");
}

/// A name that is not UTF-8 is printed spelled (`caf\xe9`), in text and
/// in JSON alike, apart from a real name with U+FFFD in it; the spelling
/// given back on the command line, from a subfolder too, rejects it.
#[test]
fn a_spelled_name_is_printed_and_taken_back() {
    use std::os::unix::ffi::OsStrExt as _;
    let dir = repo(&[("sub/keep.txt", "k\n")]);
    let root = dir.path();
    let sub = root.join("sub");
    let odd = sub.join(std::ffi::OsStr::from_bytes(b"caf\xe9"));
    ok(root, &["turn", "begin"]);
    std::fs::write(&odd, "latin-1\n").unwrap();
    put(root, "sub/caf\u{fffd}", "real\n");
    let status = ok(root, &["turn", "status"]);
    assert!(
        status.contains("A sub/caf\\xe9 ") && status.contains("A sub/caf\u{fffd} "),
        "{status}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&ok(root, &["turn", "status", "--json"])).unwrap();
    let paths: Vec<&str> = (json["files"].as_array().unwrap().iter())
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["sub/caf\\xe9", "sub/caf\u{fffd}"]);
    ok(&sub, &["turn", "reject", "caf\\xe9"]);
    assert!(!odd.exists());
    assert_eq!(
        std::fs::read_to_string(sub.join("caf\u{fffd}")).unwrap(),
        "real\n"
    );
}

/// `mend turn undo` (issue 40): with nothing to undo it is refused (exit
/// 1); after a reject it gives the rejected file back and keeps a file
/// written since; the reject's message names it.
#[test]
fn undo_gives_back_the_last_reject() {
    let dir = repo(&[("a.txt", "a\n"), ("b.txt", "b\n")]);
    let root = dir.path();
    ok(root, &["turn", "begin"]);
    let none = run_mend(root, &["turn", "undo"], None);
    assert_eq!(none.status.code(), Some(1), "{none:?}");
    assert!(String::from_utf8_lossy(&none.stdout).contains("nothing to undo"));
    put(root, "a.txt", "a by the agent\n");
    let rejected = ok(root, &["turn", "reject", "a.txt"]);
    assert!(
        rejected.contains("`mend turn undo` undoes this reject"),
        "{rejected}"
    );
    assert!(!rejected.contains("checkpoint restore"), "{rejected}");
    put(root, "b.txt", "b since\n");
    let undone = ok(root, &["turn", "undo"]);
    assert!(
        undone.starts_with("undid the last reject\n  M a.txt\n"),
        "{undone}"
    );
    let read = |p: &str| std::fs::read_to_string(root.join(p)).unwrap();
    assert_eq!(read("a.txt"), "a by the agent\n");
    assert_eq!(read("b.txt"), "b since\n");
}

/// A name with a literal backslash (printed `a\\x41.txt`) goes beside the
/// workspace transaction: the reject lists it as modified, `mend turn
/// undo` gives the agent's change back (it once said every path already
/// held what it held before, exit 1), and a checkpoint restore lists it
/// as modified too.
#[test]
fn undo_gives_back_a_file_whose_name_is_spelled() {
    let dir = repo(&[("a\\x41.txt", "orig\n")]);
    let root = dir.path();
    ok(root, &["turn", "begin"]);
    put(root, "a\\x41.txt", "orig\nAGENT\n");
    let rejected = ok(root, &["turn", "reject", "a\\\\x41.txt"]);
    assert!(rejected.contains("  M a\\\\x41.txt\n"), "{rejected}");
    let read = || std::fs::read_to_string(root.join("a\\x41.txt")).unwrap();
    assert_eq!(read(), "orig\n");
    let undone = ok(root, &["turn", "undo"]);
    assert!(
        undone.starts_with("undid the last reject\n  M a\\\\x41.txt\n"),
        "{undone}"
    );
    assert_eq!(read(), "orig\nAGENT\n");
    let made = ok(root, &["checkpoint", "create", "--json"]);
    let id = serde_json::from_str::<serde_json::Value>(&made).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    put(root, "a\\x41.txt", "later\n");
    let restored = ok(root, &["checkpoint", "restore", &id]);
    assert!(restored.contains("M a\\\\x41.txt"), "{restored}");
    assert_eq!(read(), "orig\nAGENT\n");
}

/// Linked worktrees share the repository's checkpoint refs: a gc in one
/// keeps the start of the turn open in another, which then still rejects
/// back to what it had (an untracked file's bytes included).
#[test]
fn gc_in_one_worktree_keeps_another_worktrees_turn_start() {
    let dir = repo(&[("x.txt", "x\n")]);
    let main = dir.path();
    let other = tempfile::tempdir().unwrap();
    let linked = other.path().join("wt");
    let made = std::process::Command::new("git")
        .current_dir(main)
        .args(["worktree", "add", "-q"])
        .arg(&linked)
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    put(&linked, "notes.txt", "my untracked notes\n");
    ok(&linked, &["turn", "begin"]);
    put(&linked, "notes.txt", "agent clobbered\n");
    ok(main, &["checkpoint", "create"]);
    ok(main, &["checkpoint", "gc", "--keep", "1"]);
    ok(&linked, &["turn", "reject"]);
    assert_eq!(
        std::fs::read_to_string(linked.join("notes.txt")).unwrap(),
        "my untracked notes\n"
    );
}

/// A turn's hunk refusals have the review model's kinds, as pending's do:
/// a hunk the diff does not have is `no_hunk`, a version or hunk that
/// changed since it was shown is `unseen`, each naming the file; exit 1.
#[test]
fn turn_hunk_refusals_are_unseen_and_no_hunk() {
    let lines: String = (1..=20).map(|i| format!("line {i}\n")).collect();
    let dir = repo(&[("f.txt", lines.as_str())]);
    let d = dir.path();
    ok(d, &["turn", "begin"]);
    let edited = lines
        .replace("line 2\n", "agent 2\n")
        .replace("line 18\n", "agent 18\n");
    put(d, "f.txt", &edited);
    let shown: serde_json::Value =
        serde_json::from_str(&ok(d, &["turn", "diff", "--json"])).unwrap();
    let version = shown["files"][0]["version"].as_str().unwrap().to_owned();
    let refusal = |args: &[&str]| {
        let out = run_mend(d, args, None);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {out:?}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (
            v["error"]["kind"].as_str().unwrap_or("").to_owned(),
            v["error"]["path"].as_str().unwrap_or("").to_owned(),
        )
    };
    let hunk9 = ["turn", "reject", "--json", "f.txt", "--hunk", "9"];
    assert_eq!(refusal(&hunk9), ("no_hunk".into(), "f.txt".into()));
    put(d, "f.txt", edited.replace("line 4\n", "person 4\n"));
    let hunk1 = ["turn", "reject", "--json", "f.txt", "--hunk", "1"];
    assert_eq!(refusal(&hunk1), ("unseen".into(), "f.txt".into()));
    let seen = [
        "turn", "reject", "--json", "f.txt", "--hunk", "1", "--seen", &version,
    ];
    assert_eq!(refusal(&seen), ("unseen".into(), "f.txt".into()));
    assert_eq!(
        std::fs::read_to_string(d.join("f.txt")).unwrap(),
        edited.replace("line 4\n", "person 4\n")
    );
}
