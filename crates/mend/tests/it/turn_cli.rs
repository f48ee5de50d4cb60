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
