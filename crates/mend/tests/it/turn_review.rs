//! `mend review --turn` in a pseudo-terminal (`tests/review/drive.py`):
//! a turn made only of shell commands, reviewed with the keys of a
//! pending review, where `r` and `x` put the turn's start back.

use std::path::Path;

use mend_test_support::{read_tree_without, repo, run_mend};

use crate::pending::drive;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn sh(root: &Path, script: &str) {
    let out = std::process::Command::new("sh")
        .args(["-c", script])
        .current_dir(root)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
}

fn mend_ok(root: &Path, args: &[&str]) -> String {
    let out = run_mend(root, args, None);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        text(&out.stdout)
    );
    text(&out.stdout)
}

/// Thirty lines, `line N`: edits to lines 2, 12 and 22 are three hunks.
fn thirty() -> String {
    (1..=30).map(|n| format!("line {n}\n")).collect()
}

/// `sed -i` changes three lines of f.txt, `rm` deletes g.txt, a generator
/// writes n.txt. On the screen: `r` reverts hunk 2 of f.txt, `a` accepts
/// hunk 1, `x` brings g.txt back and `p` accepts n.txt. Afterwards the
/// files are exactly that, and the turn lists only f.txt's last hunk; the
/// screen's reverts are undone by their safety checkpoints like any other.
#[cfg(unix)]
#[test]
fn review_turn_rejects_and_accepts_hunks_of_shell_changes() {
    let dir = repo(&[("f.txt", thirty().as_str()), ("g.txt", "keep me\n")]);
    let root = dir.path();
    mend_ok(root, &["turn", "begin"]);
    sh(
        root,
        "sed -i 's/^line 2$/TWO/; s/^line 12$/TWELVE/; s/^line 22$/TWENTY-TWO/' f.txt \
         && rm g.txt && printf 'generated\\n' > n.txt",
    );
    let before_review = read_tree_without(root, &[".git", ".mend"]);
    drive(
        root,
        &[
            "arg:--turn",
            "wait:3 files: 1 A, 1 D, 1 M │ 5 hunks",
            "wait:TWELVE",
            "n",
            "wait:hunk 2 of 3",
            "r",
            "wait:reverted hunk 2 of f.txt to the turn's start",
            "wait:hunk 2 of 2",
            "N",
            "wait:hunk 1 of 2",
            "a",
            "wait:accepted hunk 1 of f.txt",
            "wait:hunk 1 of 1",
            "j",
            "wait:diff g.txt",
            "x",
            "wait:reverted g.txt to the turn's start",
            "wait:diff n.txt",
            "p",
            "wait:accepted n.txt",
            "wait:1 file: 1 M │ 1 hunk",
            "q",
        ],
    );
    let f = thirty()
        .replace("line 2\n", "TWO\n")
        .replace("line 22\n", "TWENTY-TWO\n");
    assert_eq!(std::fs::read_to_string(root.join("f.txt")).unwrap(), f);
    assert_eq!(
        std::fs::read_to_string(root.join("g.txt")).unwrap(),
        "keep me\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("n.txt")).unwrap(),
        "generated\n"
    );
    let status: serde_json::Value =
        serde_json::from_str(&mend_ok(root, &["turn", "status", "--json"])).unwrap();
    let files: Vec<(String, String, u64)> = status["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_owned(),
                f["status"].as_str().unwrap().to_owned(),
                f["hunks"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(files, [("f.txt".to_owned(), "M".to_owned(), 1)]);
    let diff = mend_ok(root, &["turn", "diff"]);
    assert!(
        diff.contains("+TWENTY-TWO") && !diff.contains("TWO\n line 3"),
        "{diff}"
    );
    // The first revert's safety checkpoint (the list is newest first)
    // holds the worktree as the review found it: restoring it gives back
    // every shell change.
    let list = mend_ok(root, &["checkpoint", "list", "--json"]);
    let list: serde_json::Value = serde_json::from_str(&list).unwrap();
    let first_revert = list
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|c| {
            c["label"]
                .as_str()
                .is_some_and(|l| l.starts_with("before a reject"))
        })
        .map(|c| c["id"].as_str().unwrap().to_owned())
        .unwrap();
    mend_ok(root, &["checkpoint", "restore", &first_revert]);
    assert_eq!(read_tree_without(root, &[".git", ".mend"]), before_review);
}

/// With no open turn, `mend review --turn` says so before it takes the
/// terminal, and exits 1.
#[test]
fn review_turn_without_a_turn_is_refused() {
    let dir = repo(&[("a.txt", "one\n")]);
    let out = run_mend(dir.path(), &["review", "--turn"], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(
        text(&out.stdout).contains("no turn"),
        "{}",
        text(&out.stdout)
    );
}
