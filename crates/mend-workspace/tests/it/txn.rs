//! Transactions: staleness, all-or-nothing, recovery, locking.

use std::time::Duration;

use mend_workspace::{Base, Change, Encoding, Error, Options, Recovery, Workspace};

use crate::{put, workspace};

/// Runs a commit that "crashes" (unwinds out of the hook) at `step`.
pub(crate) fn crash_at(
    ws: &Workspace,
    lock: &mend_workspace::Lock,
    changes: &[Change],
    step: &str,
) {
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        ws.commit_with_hook(lock, changes, &|s| {
            if s == step {
                panic!("simulated crash at {s}");
            }
        })
    }));
    assert!(result.is_err(), "step {step} was never reached");
}

/// The `.mend-*` temporary files left in `dir`.
pub(crate) fn leftovers(dir: &std::path::Path) -> Vec<std::fs::DirEntry> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".mend-"))
        .collect()
}

pub(crate) fn write_change(path: &str, text: &str, base: Base) -> Change {
    Change::Write {
        path: path.into(),
        text: text.into(),
        encoding: Encoding::Utf8,
        base,
        mode_from: None,
        executable: None,
    }
}

#[test]
fn stale_file_is_refused_with_a_diff_and_nothing_written() {
    let (dir, ws) = workspace();
    put(dir.path(), "a.txt", b"one\ntwo\n");
    put(dir.path(), "b.txt", b"b\n");
    let a = ws.read("a.txt").unwrap();
    let a_file = a.text().unwrap().clone();
    ws.remember(&a_file).unwrap();
    let b_hash = ws.read("b.txt").unwrap().text().unwrap().hash;
    // Someone edits a.txt after the read.
    put(dir.path(), "a.txt", b"one\nTWO\n");
    let lock = ws.lock().unwrap();
    let err = ws
        .commit(
            &lock,
            &[
                write_change("b.txt", "B\n", Base::Hash(b_hash)),
                write_change("a.txt", "x\n", Base::Hash(a_file.hash)),
            ],
        )
        .unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, Error::Stale { .. }));
    assert!(msg.contains("file changed since you read it"), "{msg}");
    assert!(msg.contains("-two\n+TWO"), "{msg}");
    assert_eq!(std::fs::read(dir.path().join("b.txt")).unwrap(), b"b\n");
    assert_eq!(
        std::fs::read(dir.path().join("a.txt")).unwrap(),
        b"one\nTWO\n"
    );
}

#[test]
fn creation_over_an_existing_file_is_stale() {
    let (dir, ws) = workspace();
    put(dir.path(), "n.txt", b"appeared\n");
    let lock = ws.lock().unwrap();
    let err = ws
        .commit(&lock, &[write_change("n.txt", "mine\n", Base::Absent)])
        .unwrap_err();
    assert!(matches!(err, Error::Stale { .. }), "{err}");
}

#[test]
fn creates_deletes_and_renames_in_one_transaction() {
    let (dir, ws) = workspace();
    put(dir.path(), "old.txt", b"move me\n");
    put(dir.path(), "gone.txt", b"bye\n");
    let h = |p: &str| Base::Hash(ws.read(p).unwrap().text().unwrap().hash);
    let (old, gone) = (h("old.txt"), h("gone.txt"));
    let lock = ws.lock().unwrap();
    ws.commit(
        &lock,
        &[
            write_change("new/place.txt", "move me\n", Base::Absent),
            Change::Delete {
                path: "old.txt".into(),
                base: old,
            },
            Change::Delete {
                path: "gone.txt".into(),
                base: gone,
            },
            write_change("fresh.txt", "hi\n", Base::Absent),
        ],
    )
    .unwrap();
    assert!(!dir.path().join("old.txt").exists());
    assert!(!dir.path().join("gone.txt").exists());
    assert_eq!(
        std::fs::read(dir.path().join("new/place.txt")).unwrap(),
        b"move me\n"
    );
    assert_eq!(
        std::fs::read(dir.path().join("fresh.txt")).unwrap(),
        b"hi\n"
    );
    assert!(!dir.path().join(".mend/journal.json").exists());
}

/// Simulates a crash at each step of a commit by failing the hook's step,
/// then checks recovery leaves all-old or all-new.
#[test]
fn recovery_after_a_crash_at_every_step() {
    let steps = ["journal-pending", "staged", "journal-committed", "applied"];
    for (k, step) in steps.iter().enumerate() {
        let (dir, ws) = workspace();
        for i in 0..5 {
            put(
                dir.path(),
                &format!("f{i}.txt"),
                format!("old {i}\n").as_bytes(),
            );
        }
        let changes: Vec<Change> = (0..5)
            .map(|i| {
                let p = format!("f{i}.txt");
                let h = ws.read(&p).unwrap().text().unwrap().hash;
                write_change(&p, &format!("new {i}\n"), Base::Hash(h))
            })
            .collect();
        let lock = ws.lock().unwrap();
        // "Crash": unwind out of the hook at the first matching step.
        crash_at(&ws, &lock, &changes, step);
        let recovered = ws.recover(&lock).unwrap();
        let contents: Vec<String> = (0..5)
            .map(|i| std::fs::read_to_string(dir.path().join(format!("f{i}.txt"))).unwrap())
            .collect();
        let all_old = contents
            .iter()
            .enumerate()
            .all(|(i, c)| *c == format!("old {i}\n"));
        let all_new = contents
            .iter()
            .enumerate()
            .all(|(i, c)| *c == format!("new {i}\n"));
        if k < 2 {
            assert_eq!(recovered, Some(Recovery::RolledBack), "{step}");
            assert!(all_old, "{step}: {contents:?}");
        } else {
            assert_eq!(
                recovered,
                Some(Recovery::RolledForward {
                    kept: vec![],
                    lost: vec![]
                }),
                "{step}"
            );
            assert!(all_new, "{step}: {contents:?}");
        }
        let left = leftovers(dir.path());
        assert!(left.is_empty(), "{step}: {left:?}");
        assert_eq!(ws.recover(&lock).unwrap(), None);
    }
}

#[test]
fn a_second_locker_times_out_with_a_clear_message() {
    let (dir, ws) = workspace();
    let _held = ws.lock().unwrap();
    let other = Workspace::open(
        dir.path(),
        Options {
            lock_timeout: Duration::from_millis(100),
            ..Options::default()
        },
    )
    .unwrap();
    let err = other.lock().unwrap_err();
    assert!(matches!(err, Error::Locked { .. }), "{err}");
    let msg = err.to_string();
    assert!(msg.contains("another process is writing"), "{msg}");
    // The holder named itself in the lock file.
    let pid = format!("(pid {})", std::process::id());
    assert!(msg.contains(&pid), "{msg}");
    assert!(msg.contains("--lock-timeout"), "{msg}");
}

/// A lock held by something other than mend (a script's `flock`) while
/// the lock file still names the last mend to take it, long exited: the
/// refusal says another process holds it and that that mend has exited,
/// never that the dead mend holds it.
#[test]
fn a_lock_held_by_another_process_does_not_name_the_last_mend() {
    let (dir, ws) = workspace();
    drop(ws.lock().unwrap());
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    gone.wait().unwrap();
    let recorded = format!("mend turn reject f.txt --hunk 7 (pid {})", gone.id());
    let path = dir.path().join(".mend/lock");
    std::fs::write(&path, format!("{recorded}\n")).unwrap();
    let held = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    held.lock().unwrap();
    let other = Workspace::open(
        dir.path(),
        Options {
            lock_timeout: Duration::from_millis(50),
            ..Options::default()
        },
    )
    .unwrap();
    let msg = other.lock().unwrap_err().to_string();
    assert!(
        msg.contains(&format!(
            "the last mend that held it, {recorded}, has exited"
        )),
        "{msg}"
    );
    assert!(!msg.contains(&format!(": {recorded} holds")), "{msg}");
    if std::path::Path::new("/proc/locks").exists() {
        let here = format!("another process (pid {}", std::process::id());
        assert!(msg.contains(&here), "{msg}");
    }
}

#[test]
fn mend_dir_is_ignored_by_git_without_writing_into_git() {
    let (dir, ws) = workspace();
    std::fs::create_dir_all(dir.path().join(".git/info")).unwrap();
    std::fs::write(dir.path().join(".git/info/exclude"), "# local\n*.log").unwrap();
    let _lock = ws.lock().unwrap();
    let exclude = std::fs::read_to_string(dir.path().join(".git/info/exclude")).unwrap();
    assert_eq!(exclude, "# local\n*.log");
    assert_eq!(
        std::fs::read_to_string(dir.path().join(".mend/.gitignore")).unwrap(),
        "*\n"
    );
}

/// A lone write needs no journal: a crash before its rename leaves the old
/// file and nothing in the worktree, a crash after leaves the new one, and
/// recovery clears what was staged.
#[test]
fn a_lone_write_survives_a_crash_at_every_step() {
    for step in ["staged", "applied"] {
        let (dir, ws) = workspace();
        put(dir.path(), "only.txt", b"old\n");
        let h = ws.read("only.txt").unwrap().text().unwrap().hash;
        let change = write_change("only.txt", "new\n", Base::Hash(h));
        let lock = ws.lock().unwrap();
        let crashed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            ws.commit_with_hook(&lock, std::slice::from_ref(&change), &|s| {
                if s == step {
                    panic!("simulated crash at {s}");
                }
            })
        }));
        assert!(crashed.is_err(), "{step} was never reached");
        assert!(!dir.path().join(".mend/journal.json").exists());
        let now = std::fs::read(dir.path().join("only.txt")).unwrap();
        assert_eq!(now, if step == "staged" { b"old\n" } else { b"new\n" });
        let in_worktree: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n != ".mend")
            .collect();
        assert_eq!(in_worktree, ["only.txt"], "{step}");
        assert_eq!(ws.recover(&lock).unwrap(), None);
        let staged = std::fs::read_dir(dir.path().join(".mend/tmp"))
            .unwrap()
            .count();
        assert_eq!(staged, 0, "{step}: recovery leaves .mend/tmp empty");
    }
}

/// A folder on a lone write's way swapped for a link out of the root
/// after the checks, before the rename (an agent racing its own write):
/// the write is refused, nothing lands outside, and nothing is left
/// behind. The new file and the replaced one alike.
#[cfg(unix)]
#[test]
fn a_folder_swapped_for_a_link_out_during_a_write_leads_it_nowhere() {
    for existing in [false, true] {
        let (dir, ws) = workspace();
        let outside = tempfile::tempdir().unwrap();
        put(dir.path(), "sub/keep.txt", b"keep\n");
        let base = if existing {
            put(dir.path(), "sub/f.txt", b"old\n");
            Base::Hash(ws.read("sub/f.txt").unwrap().text().unwrap().hash)
        } else {
            Base::Absent
        };
        let change = write_change("sub/f.txt", "new\n", base);
        let lock = ws.lock().unwrap();
        let root = dir.path().to_path_buf();
        let out = ws.commit_with_hook(&lock, std::slice::from_ref(&change), &|s| {
            if s == "staged" {
                std::fs::rename(root.join("sub"), root.join("sub-moved")).unwrap();
                std::os::unix::fs::symlink(outside.path(), root.join("sub")).unwrap();
            }
        });
        let err = out.unwrap_err();
        assert!(matches!(err, Error::PathRefused { .. }), "{err}");
        assert_eq!(
            std::fs::read_dir(outside.path()).unwrap().count(),
            0,
            "existing {existing}: nothing lands outside"
        );
        let kept = std::fs::read(dir.path().join("sub-moved/f.txt")).ok();
        assert_eq!(kept, existing.then(|| b"old\n".to_vec()));
        let staged = std::fs::read_dir(dir.path().join(".mend/tmp"))
            .unwrap()
            .count();
        assert_eq!(staged, 0, "existing {existing}: nothing staged is left");
    }
}

/// The same swap in a transaction of two files, after both are staged:
/// the transaction is refused and undone, nothing lands outside.
#[cfg(unix)]
#[test]
fn a_folder_swapped_for_a_link_out_during_a_transaction_leads_it_nowhere() {
    let (dir, ws) = workspace();
    let outside = tempfile::tempdir().unwrap();
    put(dir.path(), "sub/keep.txt", b"keep\n");
    put(dir.path(), "a.txt", b"a\n");
    let a = Base::Hash(ws.read("a.txt").unwrap().text().unwrap().hash);
    let changes = [
        write_change("a.txt", "a2\n", a),
        write_change("sub/f.txt", "new\n", Base::Absent),
    ];
    let lock = ws.lock().unwrap();
    let root = dir.path().to_path_buf();
    let out = ws.commit_with_hook(&lock, &changes, &|s| {
        if s == "journal-committed" {
            std::fs::rename(root.join("sub"), root.join("sub-moved")).unwrap();
            std::os::unix::fs::symlink(outside.path(), root.join("sub")).unwrap();
        }
    });
    let err = out.unwrap_err();
    assert!(matches!(err, Error::Changed { .. }), "{err}");
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    assert_eq!(std::fs::read(dir.path().join("a.txt")).unwrap(), b"a\n");
    assert!(!dir.path().join(".mend/journal.json").exists());
}

/// A commit "killed" after moving one of five files into place; then a
/// person edits one file the commit had not reached, deletes another and
/// puts a folder where a third was. Recovery finishes only the untouched
/// file and keeps the rest as they are, the commit's content set aside.
#[test]
fn recovery_never_overwrites_what_changed_after_the_crash() {
    use mend_workspace::{Became, Kept};
    let (dir, ws) = workspace();
    for i in 0..5 {
        put(
            dir.path(),
            &format!("f{i}.txt"),
            format!("old {i}\n").as_bytes(),
        );
    }
    put(dir.path(), "gone.txt", b"to delete\n");
    let h = |p: &str| Base::Hash(ws.read(p).unwrap().text().unwrap().hash);
    let mut changes: Vec<Change> = (0..5)
        .map(|i| {
            let p = format!("f{i}.txt");
            write_change(&p, &format!("new {i}\n"), h(&p))
        })
        .collect();
    changes.push(Change::Delete {
        path: "gone.txt".into(),
        base: h("gone.txt"),
    });
    let lock = ws.lock().unwrap();
    crash_at(&ws, &lock, &changes, "journal-committed");
    let d = dir.path();
    std::fs::write(d.join("f2.txt"), b"HAND EDIT\n").unwrap();
    std::fs::remove_file(d.join("f3.txt")).unwrap();
    std::fs::remove_file(d.join("f4.txt")).unwrap();
    std::fs::create_dir(d.join("f4.txt")).unwrap();
    std::fs::write(d.join("gone.txt"), b"still wanted\n").unwrap();
    let recovered = ws.recover(&lock).unwrap().unwrap();
    let Recovery::RolledForward { kept, lost } = &recovered else {
        panic!("{recovered:?}");
    };
    let paths: Vec<(&str, Became, Option<&str>)> = kept
        .iter()
        .map(|k: &Kept| (k.path.as_str(), k.now, k.aside.as_deref()))
        .collect();
    let aside = |i: usize| {
        let found = paths.iter().find(|p| p.0 == format!("f{i}.txt")).unwrap();
        found.2.unwrap().to_owned()
    };
    assert_eq!(paths.len(), 4, "{paths:?}");
    assert!(lost.is_empty(), "{lost:?}");
    assert!(paths.contains(&("f2.txt", Became::Changed, Some(aside(2).as_str()))));
    assert!(paths.contains(&("f3.txt", Became::Deleted, Some(aside(3).as_str()))));
    assert!(paths.contains(&("f4.txt", Became::Replaced, Some(aside(4).as_str()))));
    assert!(paths.contains(&("gone.txt", Became::Changed, None)));
    for i in 2..5 {
        let at = aside(i);
        assert!(at.starts_with(".mend/aside/"), "{at}");
        assert_eq!(
            std::fs::read(d.join(&at)).unwrap(),
            format!("new {i}\n").as_bytes()
        );
    }
    // The untouched files are finished; the changed ones are as left.
    assert_eq!(std::fs::read(d.join("f0.txt")).unwrap(), b"new 0\n");
    assert_eq!(std::fs::read(d.join("f1.txt")).unwrap(), b"new 1\n");
    assert_eq!(std::fs::read(d.join("f2.txt")).unwrap(), b"HAND EDIT\n");
    assert!(!d.join("f3.txt").exists());
    assert!(d.join("f4.txt").is_dir());
    assert_eq!(
        std::fs::read(d.join("gone.txt")).unwrap(),
        b"still wanted\n"
    );
    let msg = recovered.to_string();
    assert!(
        msg.contains("f2.txt changed after the interrupted write; kept as it is, the interrupted write's version is in .mend/aside/"),
        "{msg}"
    );
    assert!(leftovers(d).is_empty());
    assert_eq!(ws.recover(&lock).unwrap(), None);
}

/// Taking the lock finishes an interrupted transaction: whoever holds it
/// never sees a half-done write.
#[test]
fn taking_the_lock_finishes_an_interrupted_transaction() {
    let (dir, ws) = workspace();
    put(dir.path(), "a.txt", b"old\n");
    put(dir.path(), "b.txt", b"old\n");
    let h = |p: &str| Base::Hash(ws.read(p).unwrap().text().unwrap().hash);
    {
        let lock = ws.lock().unwrap();
        // Two files: a lone write needs no journal.
        let changes = [
            write_change("a.txt", "new\n", h("a.txt")),
            write_change("b.txt", "new\n", h("b.txt")),
        ];
        crash_at(&ws, &lock, &changes, "journal-committed");
    }
    assert!(ws.journal_present().unwrap());
    let lock = ws.lock().unwrap();
    assert!(!ws.journal_present().unwrap());
    assert_eq!(std::fs::read(dir.path().join("a.txt")).unwrap(), b"new\n");
    assert_eq!(std::fs::read(dir.path().join("b.txt")).unwrap(), b"new\n");
    assert_eq!(
        ws.recover(&lock).unwrap(),
        Some(Recovery::RolledForward {
            kept: vec![],
            lost: vec![]
        })
    );
}
