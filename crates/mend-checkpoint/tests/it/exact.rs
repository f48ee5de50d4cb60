//! Restore is an exact, undoable function of two trees: file↔folder swaps
//! in both directions, bytes no checkpoint holds, and a property test of
//! restore-then-undo over random trees and changes.

use std::collections::BTreeMap;
use std::path::Path;

use mend_checkpoint::{Checkpoints, RestoreOptions};
use proptest::prelude::*;

use crate::{create, git, put, read, repo};

/// What a worktree holds, `.git` and `.mend` aside: files (bytes and the
/// executable bit) and links (their targets).
fn tree(root: &Path) -> BTreeMap<String, (Vec<u8>, bool)> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, (Vec<u8>, bool)>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            if rel == ".git" || rel == ".mend" {
                continue;
            }
            let t = e.file_type().unwrap();
            if t.is_symlink() {
                let to = std::fs::read_link(&p).unwrap();
                out.insert(rel, (to.to_string_lossy().as_bytes().to_vec(), false));
            } else if t.is_dir() {
                walk(root, &p, out);
            } else {
                #[cfg(unix)]
                let exec = {
                    use std::os::unix::fs::PermissionsExt as _;
                    e.metadata().unwrap().permissions().mode() & 0o100 != 0
                };
                #[cfg(not(unix))]
                let exec = false;
                out.insert(rel, (std::fs::read(&p).unwrap(), exec));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

#[test]
fn a_file_that_became_a_folder_is_restored_and_undone() {
    let dir = repo();
    let d = dir.path();
    put(d, "utils.py", b"def helper(): pass\n");
    let cps = Checkpoints::open(d).unwrap();
    let cp = create(&cps, "module");
    let before = tree(d);
    std::fs::remove_file(d.join("utils.py")).unwrap();
    put(d, "utils.py/__init__.py", b"from .core import helper\n");
    put(d, "utils.py/core.py", b"def helper(): return 1\n");
    let after = tree(d);
    let r = cps.restore(&cp.id, false, false).unwrap();
    assert_eq!(tree(d), before);
    cps.restore(&r.safety.unwrap().id, false, false).unwrap();
    assert_eq!(tree(d), after);
}

#[test]
fn a_folder_that_became_a_file_is_restored_and_undone() {
    let dir = repo();
    let d = dir.path();
    put(d, "pkg/__init__.py", b"\n");
    put(d, "pkg/deep/mod.py", b"x = 1\n");
    let cps = Checkpoints::open(d).unwrap();
    let cp = create(&cps, "package");
    let before = tree(d);
    std::fs::remove_dir_all(d.join("pkg")).unwrap();
    put(d, "pkg", b"now a file\n");
    let after = tree(d);
    for dry_run in [true, false] {
        let r = cps.restore(&cp.id, dry_run, false).unwrap();
        let statuses: Vec<_> = r
            .changes
            .iter()
            .map(|c| (c.path.as_str(), c.status.letter()))
            .collect();
        assert_eq!(
            statuses,
            [
                ("pkg", "D"),
                ("pkg/__init__.py", "A"),
                ("pkg/deep/mod.py", "A")
            ]
        );
        if !dry_run {
            assert_eq!(tree(d), before);
            cps.restore(&r.safety.unwrap().id, false, false).unwrap();
        }
        assert_eq!(tree(d), after);
    }
}

#[test]
fn an_ignored_file_in_a_folder_that_becomes_a_file_is_never_lost() {
    let dir = repo();
    let d = dir.path();
    put(d, "tool", b"a script\n");
    let cps = Checkpoints::open(d).unwrap();
    let cp = create(&cps, "script");
    std::fs::remove_file(d.join("tool")).unwrap();
    put(d, "tool/main.py", b"print(1)\n");
    put(d, "tool/debug.log", b"only copy of this log\n");
    let err = cps.restore(&cp.id, false, false).unwrap_err().to_string();
    assert!(
        err.contains("tool/debug.log") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(
        read(d, "tool/debug.log").unwrap(),
        b"only copy of this log\n"
    );
    let forced = RestoreOptions {
        force: true,
        ..RestoreOptions::default()
    };
    let r = cps.restore_with(&cp.id, &forced).unwrap();
    assert_eq!(read(d, "tool").unwrap(), b"a script\n");
    let safety = r.safety.unwrap();
    assert_eq!(
        r.aside,
        [format!(".mend/aside/{}/tool/debug.log", safety.id)]
    );
    assert_eq!(read(d, &r.aside[0]).unwrap(), b"only copy of this log\n");
}

/// `.env` was checkpointed before it was gitignored; its new content is
/// in no checkpoint, so a restore must not overwrite it silently.
#[test]
fn an_unheld_env_file_is_refused_or_copied_aside() {
    let dir = repo();
    let d = dir.path();
    put(d, ".env", b"TOKEN=old\n");
    let cps = Checkpoints::open(d).unwrap();
    let cp = create(&cps, "with env");
    // Deleted and checkpointed, then made again once ignored: no
    // checkpoint since has seen it.
    std::fs::remove_file(d.join(".env")).unwrap();
    create(&cps, "without env");
    put(d, ".gitignore", b"*.log\nbuild/\n.env\n");
    put(d, ".env", b"TOKEN=new-and-only-here\n");
    for dry_run in [true, false] {
        let err = cps.restore(&cp.id, dry_run, false).unwrap_err().to_string();
        assert!(
            err.contains(".env") && err.contains("no checkpoint"),
            "{err}"
        );
    }
    assert_eq!(read(d, ".env").unwrap(), b"TOKEN=new-and-only-here\n");
    // A refused restore leaves no safety checkpoint behind.
    assert_eq!(cps.list().unwrap().len(), 2);
    let forced = RestoreOptions {
        force: true,
        ..RestoreOptions::default()
    };
    let r = cps.restore_with(&cp.id, &forced).unwrap();
    assert_eq!(read(d, ".env").unwrap(), b"TOKEN=old\n");
    assert!(
        r.changes
            .iter()
            .any(|c| c.path == ".env" && c.status.letter() == "M")
    );
    assert_eq!(read(d, &r.aside[0]).unwrap(), b"TOKEN=new-and-only-here\n");
}

#[test]
fn a_file_too_large_to_snapshot_is_not_deleted_silently() {
    let dir = repo();
    let d = dir.path();
    let cps = Checkpoints::open(d).unwrap();
    let cp = create(&cps, "before the data");
    put(d, "data.bin", vec![7u8; 11 * 1024 * 1024]);
    let err = cps.restore(&cp.id, false, false).unwrap_err().to_string();
    assert!(err.contains("data.bin"), "{err}");
    assert!(d.join("data.bin").exists());
}

/// `big.bin` checkpointed small, then made too large to snapshot.
fn small_then_large() -> (tempfile::TempDir, Checkpoints, mend_checkpoint::Checkpoint) {
    let dir = repo();
    let d = dir.path();
    put(d, "big.bin", b"small\n");
    let cps = Checkpoints::open(d).unwrap();
    let cp = create(&cps, "small");
    put(d, "big.bin", vec![9u8; 11 * 1024 * 1024]);
    (dir, cps, cp)
}

/// A file too large to snapshot whose bytes `git add` (or any tool)
/// wrote into the object store and dropped: present there, held by no
/// checkpoint (`gc` removes it), so still refused.
#[test]
fn bytes_only_dangling_in_the_object_store_are_not_held() {
    let (dir, cps, cp) = small_then_large();
    let d = dir.path();
    git(d, &["add", "big.bin"]);
    git(d, &["reset", "-q", "big.bin"]);
    let err = cps.restore(&cp.id, false, false).unwrap_err().to_string();
    assert!(
        err.contains("big.bin") && err.contains("no checkpoint"),
        "{err}"
    );
    assert_eq!(
        std::fs::metadata(d.join("big.bin")).unwrap().len(),
        11 * 1024 * 1024
    );
}

/// Undoing a forced restore that replaced a file too large to snapshot:
/// the safety checkpoint left that file out, so restoring it keeps the
/// file there (the replaced bytes are in `.mend/aside/`), never deletes it.
#[test]
fn undoing_a_forced_restore_keeps_a_file_its_safety_checkpoint_left_out() {
    let (dir, cps, cp) = small_then_large();
    let d = dir.path();
    let forced = RestoreOptions {
        force: true,
        ..RestoreOptions::default()
    };
    let r = cps.restore_with(&cp.id, &forced).unwrap();
    assert_eq!(read(d, "big.bin").unwrap(), b"small\n");
    assert_eq!(
        std::fs::metadata(d.join(&r.aside[0])).unwrap().len(),
        11 * 1024 * 1024
    );
    let undo = cps.restore(&r.safety.unwrap().id, false, false).unwrap();
    assert_eq!(read(d, "big.bin").unwrap(), b"small\n");
    assert!(undo.kept.iter().any(|k| k == "big.bin"), "{:?}", undo.kept);
}

/// A file with another name outside the root (a `cp -al` backup): a
/// restore replaces the worktree's name, as git's checkout does, and the
/// other name keeps its bytes.
#[test]
fn a_restore_leaves_other_names_of_a_file_alone() {
    let dir = repo();
    let outside = tempfile::tempdir().unwrap();
    let d = dir.path();
    put(d, "a.txt", b"version 1\n");
    let cps = Checkpoints::open(d).unwrap();
    let cp = create(&cps, "v1");
    put(d, "a.txt", b"version 2\n");
    let backup = outside.path().join("a.txt");
    std::fs::hard_link(d.join("a.txt"), &backup).unwrap();
    cps.restore(&cp.id, false, false).unwrap();
    assert_eq!(read(d, "a.txt").unwrap(), b"version 1\n");
    assert_eq!(std::fs::read(&backup).unwrap(), b"version 2\n");
}

#[derive(Debug, Clone)]
enum Step {
    Write(usize, u8),
    Delete(usize),
    FileToFolder(usize),
    FolderToLink(usize),
    Chmod(usize),
    Ignore(usize),
}

const NAMES: [&str; 6] = ["a.txt", "b.rs", "src/c.rs", "src/d/e.md", "f", "g/h"];

fn apply(d: &Path, step: &Step) {
    let name = |i: usize| NAMES[i % NAMES.len()];
    let clear = |rel: &str| {
        let p = d.join(rel);
        if let Ok(m) = p.symlink_metadata() {
            if m.is_dir() {
                std::fs::remove_dir_all(&p).unwrap();
            } else {
                std::fs::remove_file(&p).unwrap();
            }
        }
    };
    // Whatever stands where a folder is needed goes first.
    let make_room = |rel: &str| {
        for at in crate::folders_above(rel) {
            if d.join(&at).symlink_metadata().is_ok_and(|m| !m.is_dir()) {
                clear(&at);
            }
        }
    };
    match *step {
        Step::Write(i, b) => {
            let rel = name(i);
            make_room(rel);
            if d.join(rel).symlink_metadata().is_ok_and(|m| !m.is_file()) {
                clear(rel);
            }
            put(d, rel, format!("content {b}\n").as_bytes());
        }
        Step::Delete(i) => clear(name(i)),
        Step::FileToFolder(i) => {
            let rel = name(i);
            clear(rel);
            make_room(rel);
            put(d, &format!("{rel}/inner.txt"), b"inner\n");
        }
        Step::FolderToLink(i) => {
            let rel = ["src", "src/d", "g"][i % 3];
            make_room(rel);
            clear(rel);
            let at = d.join(rel);
            std::fs::create_dir_all(at.parent().unwrap()).unwrap();
            #[cfg(unix)]
            std::os::unix::fs::symlink("elsewhere", at).unwrap();
        }
        Step::Chmod(i) => {
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt as _;
                let p = d.join(name(i));
                if p.symlink_metadata().is_ok_and(|m| m.is_file()) {
                    let mode = std::fs::metadata(&p).unwrap().permissions().mode() ^ 0o111;
                    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
                }
            }
        }
        // A file created and then ignored: kept by every restore.
        Step::Ignore(i) => put(d, &format!("build/out{i}.o"), b"object\n"),
    }
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (0usize..6, any::<u8>()).prop_map(|(i, b)| Step::Write(i, b)),
        (0usize..6).prop_map(Step::Delete),
        (0usize..6).prop_map(Step::FileToFolder),
        (0usize..3).prop_map(Step::FolderToLink),
        (0usize..6).prop_map(Step::Chmod),
        (0usize..3).prop_map(Step::Ignore),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Restore gives back the checkpoint's tree exactly, and restoring the
    /// safety checkpoint gives back the tree before the restore exactly,
    /// deleted tracked files and folders that became links included.
    #[test]
    fn restore_then_undo_is_exact(
        setup in prop::collection::vec(step(), 0..6),
        changes in prop::collection::vec(step(), 1..8),
        commit_first in any::<bool>(),
    ) {
        let dir = repo();
        let d = dir.path();
        for s in &setup {
            apply(d, s);
        }
        if commit_first {
            git(d, &["add", "-A"]);
            git(d, &["commit", "-q", "-m", "setup", "--allow-empty"]);
        }
        let cps = Checkpoints::open(d).unwrap();
        let cp = create(&cps, "start");
        let start = tree(d);
        for s in &changes {
            apply(d, s);
        }
        let changed = tree(d);
        let r = cps.restore(&cp.id, false, false).unwrap();
        // Ignored files stay through a restore; everything else is exact.
        let mut now = tree(d);
        now.retain(|p, _| !p.starts_with("build/") || start.contains_key(p));
        prop_assert_eq!(&now, &start);
        cps.restore(&r.safety.unwrap().id, false, false).unwrap();
        prop_assert_eq!(&tree(d), &changed);
    }
}
