//! A whole reject never deletes a file that was ignored when the turn
//! began (issue 40): the ignore state of the turn's start stays with the
//! turn, whatever the agent did to the rules or the files since.

use std::path::Path;

use mend_checkpoint::turn::{BeginOptions, Selection, Turns};
use mend_test_support::{git, put};

fn begin(dir: &Path) -> Turns {
    let turns = Turns::open(dir).unwrap();
    turns.begin(&BeginOptions::default(), &mut |_| {}).unwrap();
    turns
}

fn read(d: &Path, rel: &str) -> Option<String> {
    std::fs::read_to_string(d.join(rel)).ok()
}

/// A repository with one tracked file.
fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    put(d, "tracked.txt", "tracked\n");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "start"]);
    dir
}

/// Files ignored by `.git/info/exclude` when the turn began stay after
/// the rule is removed during the turn and the whole turn is rejected:
/// one untouched since, and one written since (its inode no longer tells
/// it was there before; the rules of the start do). A file the agent made
/// is still removed, and the rule is put back only by the user.
#[test]
fn a_removed_exclude_rule_still_keeps_its_files() {
    let dir = repo();
    let d = dir.path();
    put(d, ".git/info/exclude", "*.log\nsecrets/\n");
    put(d, "debug.log", "kept as it was\n");
    put(d, "secrets/key", "before the turn\n");
    let turns = begin(d);
    put(d, ".git/info/exclude", "# nothing ignored any more\n");
    put(d, "secrets/key", "written during the turn\n");
    put(d, "made.txt", "made by the agent\n");
    let listed: Vec<String> = (turns.status(false).unwrap().files.into_iter())
        .map(|f| f.path)
        .collect();
    assert_eq!(listed, ["debug.log", "made.txt", "secrets/key"]);
    let rejected = turns.reject(&Selection::default()).unwrap();
    let left: Vec<&str> = rejected.left.iter().map(|l| l.path.as_str()).collect();
    assert_eq!(left, ["debug.log", "secrets/key"]);
    assert!(
        rejected.left[1]
            .reason
            .contains("ignored when the turn began")
    );
    assert_eq!(read(d, "debug.log").as_deref(), Some("kept as it was\n"));
    assert_eq!(
        read(d, "secrets/key").as_deref(),
        Some("written during the turn\n")
    );
    assert_eq!(read(d, "made.txt"), None);
}

/// An ignored folder the agent moved to a name no rule ignores shows as
/// added files; a whole reject leaves them (one written after the move
/// too), names them with why, and removes what the agent made elsewhere.
#[test]
fn a_moved_ignored_folder_is_left_not_deleted() {
    let dir = repo();
    let d = dir.path();
    put(d, ".gitignore", "node_modules/\n");
    git(d, &["add", ".gitignore"]);
    git(d, &["commit", "-q", "-m", "ignore"]);
    put(d, "node_modules/pkg/index.js", "module.exports = 1;\n");
    put(d, "node_modules/pkg/package.json", "{}\n");
    let turns = begin(d);
    std::fs::rename(d.join("node_modules"), d.join("vendor")).unwrap();
    put(d, "vendor/pkg/package.json", "{\"edited\": true}\n");
    put(d, "made.txt", "made by the agent\n");
    let rejected = turns.reject(&Selection::default()).unwrap();
    assert_eq!(
        read(d, "vendor/pkg/index.js").as_deref(),
        Some("module.exports = 1;\n")
    );
    assert_eq!(
        read(d, "vendor/pkg/package.json").as_deref(),
        Some("{\"edited\": true}\n")
    );
    assert_eq!(read(d, "made.txt"), None);
    let left: Vec<&str> = rejected.left.iter().map(|l| l.path.as_str()).collect();
    assert_eq!(left, ["vendor/pkg/index.js", "vendor/pkg/package.json"]);
    assert!(
        rejected.left[0].reason.contains("before the turn began"),
        "{}",
        rejected.left[0].reason
    );
    let acted: Vec<&str> = rejected.rejected.iter().map(|a| a.path.as_str()).collect();
    assert_eq!(acted, ["made.txt"]);
}

/// A tracked folder the agent moved is still moved back: its files'
/// bytes are in the start, so removing them from the new name loses
/// nothing.
#[test]
fn a_moved_tracked_folder_is_still_moved_back() {
    let dir = repo();
    let d = dir.path();
    put(d, "src/a.rs", "fn a() {}\n");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "src"]);
    let turns = begin(d);
    std::fs::rename(d.join("src"), d.join("lib")).unwrap();
    let rejected = turns.reject(&Selection::default()).unwrap();
    assert!(rejected.left.is_empty(), "{:?}", rejected.left);
    assert_eq!(read(d, "src/a.rs").as_deref(), Some("fn a() {}\n"));
    assert!(!d.join("lib/a.rs").exists());
}
