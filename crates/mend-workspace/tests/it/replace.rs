//! A commit never stops half-way: targets that cannot be replaced are
//! refused before anything is written, file↔folder swaps commit as one
//! transaction (and survive a crash at every step), and a recovery that
//! cannot finish names what blocks it.

use std::path::Path;

use mend_workspace::{Base, Change, Encoding, Error, Recovery};

use crate::{put, workspace};

fn create(path: &str, text: &str) -> Change {
    Change::Write {
        path: path.into(),
        text: text.into(),
        encoding: Encoding::Utf8,
        base: Base::Absent,
        mode_from: None,
        executable: None,
    }
}

fn delete(path: &str) -> Change {
    Change::Delete {
        path: path.into(),
        base: Base::Any,
    }
}

fn chattr(flag: &str, p: &Path) -> bool {
    std::process::Command::new("chattr")
        .arg(flag)
        .arg(p)
        .status()
        .is_ok_and(|s| s.success())
}

/// Says why a test could not run here (CI runs as root on ext4, where it
/// does).
#[allow(clippy::print_stderr)]
fn skip(why: &str) {
    eprintln!("skipped: {why}");
}

/// Clears the immutable flag even when the test fails, so the temporary
/// folder can be removed.
struct Immutable<'p>(&'p Path);

impl Drop for Immutable<'_> {
    fn drop(&mut self) {
        chattr("-i", self.0);
    }
}

#[test]
fn an_immutable_second_target_fails_the_commit_before_any_write() {
    let (dir, ws) = workspace();
    put(dir.path(), "a.txt", b"a\n");
    put(dir.path(), "b.txt", b"b\n");
    let b = dir.path().join("b.txt");
    if !chattr("+i", &b) {
        skip("chattr +i needs CAP_LINUX_IMMUTABLE and a filesystem with inode flags");
        return;
    }
    let _guard = Immutable(&b);
    let lock = ws.lock().unwrap();
    let changes = [
        Change::Bytes {
            path: "a.txt".into(),
            bytes: b"A\n".to_vec(),
            base: Base::Any,
            executable: None,
        },
        Change::Bytes {
            path: "b.txt".into(),
            bytes: b"B\n".to_vec(),
            base: Base::Any,
            executable: None,
        },
    ];
    let err = ws.commit(&lock, &changes).unwrap_err();
    assert!(matches!(err, Error::Unreplaceable { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("b.txt cannot be written: it is immutable"),
        "{err}"
    );
    assert_eq!(std::fs::read(dir.path().join("a.txt")).unwrap(), b"a\n");
    // Nothing is left to recover, and the next commit works.
    assert_eq!(ws.recover(&lock).unwrap(), None);
    ws.commit(&lock, &changes[..1]).unwrap();
    assert_eq!(std::fs::read(dir.path().join("a.txt")).unwrap(), b"A\n");
}

#[test]
fn a_name_over_255_bytes_is_refused_before_any_write() {
    let (dir, ws) = workspace();
    let long = format!("{}.py", "n".repeat(253));
    let lock = ws.lock().unwrap();
    let err = ws
        .commit(&lock, &[create("ok.txt", "fine\n"), create(&long, "x\n")])
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("is 256 bytes, over the 255-byte limit"),
        "{err}"
    );
    assert!(!dir.path().join("ok.txt").exists());
    assert_eq!(ws.recover(&lock).unwrap(), None);
    // A 250-byte name is fine, temporary name included.
    let fits = "m".repeat(250);
    ws.commit(&lock, &[create(&fits, "x\n")]).unwrap();
    assert_eq!(std::fs::read(dir.path().join(&fits)).unwrap(), b"x\n");
}

#[test]
fn a_file_replaces_a_folder_its_deletions_empty() {
    let (dir, ws) = workspace();
    put(dir.path(), "lib/mod.rs", b"mod a;\n");
    put(dir.path(), "lib/deep/a.rs", b"fn a() {}\n");
    let lock = ws.lock().unwrap();
    let changes = [
        delete("lib/mod.rs"),
        delete("lib/deep/a.rs"),
        create("lib", "now a file\n"),
    ];
    ws.check_changes(&changes).unwrap();
    ws.commit(&lock, &changes).unwrap();
    assert_eq!(
        std::fs::read(dir.path().join("lib")).unwrap(),
        b"now a file\n"
    );
}

#[test]
fn a_folder_still_holding_a_file_is_not_replaced() {
    let (dir, ws) = workspace();
    put(dir.path(), "lib/mod.rs", b"mod a;\n");
    put(dir.path(), "lib/keep.rs", b"kept\n");
    let changes = [delete("lib/mod.rs"), create("lib", "now a file\n")];
    let err = ws.check_changes(&changes).unwrap_err().to_string();
    assert!(err.contains("still holds lib/keep.rs"), "{err}");
    let lock = ws.lock().unwrap();
    assert!(ws.commit(&lock, &changes).is_err());
    assert!(dir.path().join("lib/mod.rs").exists());
}

#[test]
fn a_folder_replaces_a_file_the_set_deletes() {
    let (dir, ws) = workspace();
    put(dir.path(), "utils.py", b"def f(): pass\n");
    let lock = ws.lock().unwrap();
    let changes = [
        delete("utils.py"),
        create("utils.py/__init__.py", "from .f import f\n"),
    ];
    ws.commit(&lock, &changes).unwrap();
    assert_eq!(
        std::fs::read(dir.path().join("utils.py/__init__.py")).unwrap(),
        b"from .f import f\n"
    );
}

/// A crash at every step of a file→folder swap recovers to all-old or
/// all-new, with no temporary file left.
#[test]
fn a_swap_recovers_at_every_step() {
    let steps = ["journal-pending", "staged", "journal-committed", "applied"];
    for (k, step) in steps.iter().enumerate() {
        let (dir, ws) = workspace();
        put(dir.path(), "utils.py", b"old\n");
        let changes = [delete("utils.py"), create("utils.py/__init__.py", "new\n")];
        let lock = ws.lock().unwrap();
        let crashed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            ws.commit_with_hook(&lock, &changes, &|s| {
                if s == *step {
                    panic!("simulated crash at {s}");
                }
            })
        }));
        assert!(crashed.is_err());
        let recovered = ws.recover(&lock).unwrap();
        let old = std::fs::read(dir.path().join("utils.py")).ok();
        let new = std::fs::read(dir.path().join("utils.py/__init__.py")).ok();
        if k < 2 {
            assert_eq!(recovered, Some(Recovery::RolledBack));
            assert_eq!((old.as_deref(), new), (Some(&b"old\n"[..]), None), "{step}");
        } else {
            assert_eq!(
                recovered,
                Some(Recovery::RolledForward {
                    kept: vec![],
                    lost: vec![]
                })
            );
            assert_eq!(new.as_deref(), Some(&b"new\n"[..]), "{step}");
        }
        let stray = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with(".mend-"));
        assert!(!stray, "{step}");
    }
}

/// A move onto a name that is the moved file itself (here a hard link of
/// it; on a case-insensitive filesystem, a case-only rename) is a rename,
/// not "already exists".
#[cfg(unix)]
#[test]
fn a_move_onto_the_same_file_is_a_rename() {
    let (dir, ws) = workspace();
    put(dir.path(), "Readme.md", b"# hi\n");
    std::fs::hard_link(dir.path().join("Readme.md"), dir.path().join("README.md")).unwrap();
    let lock = ws.lock().unwrap();
    let changes = [
        Change::Write {
            path: "README.md".into(),
            text: "# hi\n".into(),
            encoding: Encoding::Utf8,
            base: Base::Absent,
            mode_from: Some("Readme.md".into()),
            executable: None,
        },
        delete("Readme.md"),
    ];
    ws.commit(&lock, &changes).unwrap();
    assert!(!dir.path().join("Readme.md").exists());
    assert_eq!(
        std::fs::read(dir.path().join("README.md")).unwrap(),
        b"# hi\n"
    );
}

/// A committed transaction whose roll-forward is blocked stops every
/// later write with a message naming the path, and finishes once the
/// block is gone.
#[test]
fn a_blocked_recovery_names_the_path_and_writes_nothing_else() {
    let (dir, ws) = workspace();
    put(dir.path(), "a.txt", b"old a\n");
    put(dir.path(), "b.txt", b"old b\n");
    let changes = [
        Change::Bytes {
            path: "a.txt".into(),
            bytes: b"new a\n".to_vec(),
            base: Base::Any,
            executable: None,
        },
        Change::Bytes {
            path: "b.txt".into(),
            bytes: b"new b\n".to_vec(),
            base: Base::Any,
            executable: None,
        },
    ];
    let lock = ws.lock().unwrap();
    let crashed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        ws.commit_with_hook(&lock, &changes, &|s| {
            if s == "journal-committed" {
                panic!("simulated crash");
            }
        })
    }));
    assert!(crashed.is_err());
    let b = dir.path().join("b.txt");
    if !chattr("+i", &b) {
        skip("chattr +i needs CAP_LINUX_IMMUTABLE and a filesystem with inode flags");
        return;
    }
    let guard = Immutable(&b);
    let err = ws.recover(&lock).unwrap_err();
    assert!(matches!(err, Error::RecoveryBlocked { .. }), "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("b.txt") && msg.contains("could not be completed"),
        "{msg}"
    );
    // Still blocked on the next try; the journal stays.
    assert!(ws.recover(&lock).is_err());
    drop(guard);
    assert_eq!(
        ws.recover(&lock).unwrap(),
        Some(Recovery::RolledForward {
            kept: vec![],
            lost: vec![]
        })
    );
    assert_eq!(std::fs::read(&b).unwrap(), b"new b\n");
    assert_eq!(std::fs::read(dir.path().join("a.txt")).unwrap(), b"new a\n");
}
