//! Compare-and-swap at the rename (issue 40): a write landing after a
//! commit's staleness check, while it stages and syncs, is kept; the whole
//! transaction is refused as changed and leaves nothing behind.

use std::io::Write as _;
use std::path::Path;

use mend_workspace::{Base, Change, Error, Workspace};

use crate::txn::{leftovers, write_change};
use crate::{put, workspace};

fn read(dir: &Path, rel: &str) -> String {
    std::fs::read_to_string(dir.join(rel)).unwrap_or_default()
}

fn append(dir: &Path, rel: &str, line: &str) {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(dir.join(rel))
        .unwrap();
    f.write_all(line.as_bytes()).unwrap();
}

/// A save as editors make it: written aside, renamed over.
fn save_by_rename(dir: &Path, rel: &str, text: &str) {
    let aside = dir.join(format!("{rel}~"));
    std::fs::write(&aside, text).unwrap();
    std::fs::rename(&aside, dir.join(rel)).unwrap();
}

/// Changes writing `new <p>` over each of `paths`, planned against what
/// they hold now.
fn writes(ws: &Workspace, paths: &[&str]) -> Vec<Change> {
    paths
        .iter()
        .map(|p| {
            let h = ws.read(p).unwrap().text().unwrap().hash;
            write_change(p, &format!("new {p}\n"), Base::Hash(h))
        })
        .collect()
}

/// Commits `changes`, running `meanwhile` once, at the `nth` time (from
/// 1) the commit reaches `step`.
fn commit_raced(
    ws: &Workspace,
    changes: &[Change],
    (step, nth): (&str, usize),
    meanwhile: &dyn Fn(),
) -> Result<usize, Error> {
    let lock = ws.lock().unwrap();
    let seen = std::cell::Cell::new(0);
    ws.commit_with_hook(&lock, changes, &|s| {
        if s == step {
            seen.set(seen.get() + 1);
            if seen.get() == nth {
                meanwhile();
            }
        }
    })
}

#[test]
fn a_lone_write_raced_by_an_append_keeps_it_and_is_refused() {
    let (dir, ws) = workspace();
    let d = dir.path();
    put(d, "a.txt", b"old\n");
    let changes = writes(&ws, &["a.txt"]);
    let err = commit_raced(&ws, &changes, ("staged", 1), &|| {
        append(d, "a.txt", "typed\n");
    });
    let err = err.unwrap_err();
    assert!(
        matches!(&err, Error::Changed { path } if path == "a.txt"),
        "{err}"
    );
    assert!(err.is_refusal());
    assert!(
        err.to_string()
            .contains("a.txt: changed while mend was writing")
    );
    assert_eq!(read(d, "a.txt"), "old\ntyped\n");
    assert!(leftovers(d).is_empty());
}

#[test]
fn a_lone_write_raced_by_a_save_by_rename_keeps_it_and_is_refused() {
    let (dir, ws) = workspace();
    let d = dir.path();
    put(d, "a.txt", b"old\n");
    let changes = writes(&ws, &["a.txt"]);
    // The same size, so only the inode tells.
    let err = commit_raced(&ws, &changes, ("staged", 1), &|| {
        save_by_rename(d, "a.txt", "OLD\n");
    });
    assert!(matches!(err, Err(Error::Changed { .. })), "{err:?}");
    assert_eq!(read(d, "a.txt"), "OLD\n");
}

#[test]
fn a_creation_raced_by_one_of_the_same_name_keeps_it() {
    let (dir, ws) = workspace();
    let d = dir.path();
    let changes = [write_change("n.txt", "mend's\n", Base::Absent)];
    let err = commit_raced(&ws, &changes, ("staged", 1), &|| {
        put(d, "n.txt", b"theirs\n");
    });
    assert!(matches!(err, Err(Error::Changed { .. })), "{err:?}");
    assert_eq!(read(d, "n.txt"), "theirs\n");
}

#[test]
fn a_transaction_raced_on_its_last_file_undoes_the_others() {
    let (dir, ws) = workspace();
    let d = dir.path();
    for p in ["a.txt", "b.txt", "c.txt", "gone.txt"] {
        put(d, p, format!("old {p}\n").as_bytes());
    }
    let mut changes = writes(&ws, &["a.txt", "b.txt", "c.txt"]);
    let h = ws.read("gone.txt").unwrap().text().unwrap().hash;
    changes.push(Change::Delete {
        path: "gone.txt".into(),
        base: Base::Hash(h),
    });
    // Once the deletion and two writes are done, c.txt is saved.
    let err = commit_raced(&ws, &changes, ("applied", 3), &|| {
        save_by_rename(d, "c.txt", "old c.txt, saved\n");
    });
    assert!(
        matches!(&err, Err(Error::Changed { path }) if path == "c.txt"),
        "{err:?}"
    );
    assert_eq!(read(d, "a.txt"), "old a.txt\n");
    assert_eq!(read(d, "b.txt"), "old b.txt\n");
    assert_eq!(read(d, "c.txt"), "old c.txt, saved\n");
    assert_eq!(read(d, "gone.txt"), "old gone.txt\n");
    assert!(leftovers(d).is_empty(), "{:?}", leftovers(d));
    assert!(!d.join(".mend/journal.json").exists());
    // The root works on: the same change set, planned again, goes in.
    let lock = ws.lock().unwrap();
    ws.commit(&lock, &writes(&ws, &["a.txt", "b.txt", "c.txt"]))
        .unwrap();
    assert_eq!(read(d, "c.txt"), "new c.txt\n");
}

#[test]
fn a_deletion_raced_by_an_append_keeps_the_file() {
    let (dir, ws) = workspace();
    let d = dir.path();
    put(d, "a.txt", b"old a\n");
    put(d, "gone.txt", b"old gone\n");
    let mut changes = writes(&ws, &["a.txt"]);
    let h = ws.read("gone.txt").unwrap().text().unwrap().hash;
    changes.push(Change::Delete {
        path: "gone.txt".into(),
        base: Base::Hash(h),
    });
    let err = commit_raced(&ws, &changes, ("journal-committed", 1), &|| {
        append(d, "gone.txt", "typed\n");
    });
    assert!(matches!(err, Err(Error::Changed { .. })), "{err:?}");
    assert_eq!(read(d, "gone.txt"), "old gone\ntyped\n");
    assert_eq!(read(d, "a.txt"), "old a\n");
    assert!(leftovers(d).is_empty());
}

#[test]
fn a_crash_after_a_swap_is_finished_and_leaves_nothing_behind() {
    let (dir, ws) = workspace();
    let d = dir.path();
    for p in ["a.txt", "b.txt", "gone.txt"] {
        put(d, p, format!("old {p}\n").as_bytes());
    }
    let mut changes = writes(&ws, &["a.txt", "b.txt"]);
    let h = ws.read("gone.txt").unwrap().text().unwrap().hash;
    changes.push(Change::Delete {
        path: "gone.txt".into(),
        base: Base::Hash(h),
    });
    // Killed once every operation is done: the replaced and deleted
    // entries still wait beside their targets.
    let lock = ws.lock().unwrap();
    let n = std::cell::Cell::new(0);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        ws.commit_with_hook(&lock, &changes, &|s| {
            if s == "applied" && n.replace(n.get() + 1) == 2 {
                panic!("simulated crash");
            }
        })
    }));
    assert!(result.is_err());
    assert!(!leftovers(d).is_empty(), "nothing was held to undo");
    drop(lock);
    let lock = ws.lock().unwrap();
    assert!(ws.recover(&lock).unwrap().is_some());
    assert_eq!(read(d, "a.txt"), "new a.txt\n");
    assert_eq!(read(d, "b.txt"), "new b.txt\n");
    assert!(!d.join("gone.txt").exists());
    assert!(leftovers(d).is_empty(), "{:?}", leftovers(d));
}
