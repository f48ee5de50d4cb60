//! Recovery after a crash past the commit point, when the worktree changed
//! in ways a person or a tool (or an attacker) may leave: a target or its
//! folder swapped for a link leading out, a staged copy changed or removed.

use std::path::Path;

use mend_workspace::{Base, Became, Change, Lost, Recovery, Why, Workspace};

use crate::txn::{crash_at, leftovers, write_change};
use crate::{put, workspace};

/// `n` files `f<i>.txt` holding `old <i>`, and a commit writing `new <i>`
/// into each, "killed" once its journal says committed.
fn killed_after_commit(n: usize, extra: &[&str]) -> (tempfile::TempDir, Workspace) {
    let (dir, ws) = workspace();
    let mut paths: Vec<String> = (0..n).map(|i| format!("f{i}.txt")).collect();
    paths.extend(extra.iter().map(|p| (*p).to_owned()));
    for p in &paths {
        put(dir.path(), p, format!("old {p}\n").as_bytes());
    }
    let changes: Vec<Change> = paths
        .iter()
        .map(|p| {
            let h = ws.read(p).unwrap().text().unwrap().hash;
            write_change(p, &format!("new {p}\n"), Base::Hash(h))
        })
        .collect();
    let lock = ws.lock().unwrap();
    crash_at(&ws, &lock, &changes, "journal-committed");
    drop(lock);
    (dir, ws)
}

/// The staged copy (a `.mend-*.tmp` in `dir`) holding `text`.
fn staged_holding(dir: &Path, text: &str) -> std::path::PathBuf {
    let found: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(".mend-")
        })
        .filter(|p| std::fs::read(p).unwrap() == text.as_bytes())
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    found.into_iter().next().unwrap()
}

fn recover(ws: &Workspace) -> (Vec<mend_workspace::Kept>, Vec<Lost>, String) {
    // Taking the lock recovers; `recover` then says what was done.
    let lock = ws.lock().unwrap();
    let r = ws.recover(&lock).unwrap().unwrap();
    let msg = r.to_string();
    let Recovery::RolledForward { kept, lost } = r else {
        panic!("{msg}");
    };
    assert_eq!(ws.recover(&lock).unwrap(), None, "recovery is finished");
    (kept, lost, msg)
}

/// After the crash, `f1.txt` is swapped for a link to a file outside the
/// root, and the folder `sub` (holding a target and its staged copy) for a
/// link to a folder outside. The sealed journal is still mend's: the rest
/// is finished, nothing outside is read through or written, `f1.txt`'s
/// content is set aside, and both are reported as kept.
#[cfg(unix)]
#[test]
fn a_target_linked_outside_after_the_crash_is_kept_and_the_rest_finished() {
    let (dir, ws) = killed_after_commit(3, &["sub/s.txt"]);
    let d = dir.path();
    let outside = tempfile::tempdir().unwrap();
    let o = outside.path();
    std::fs::write(o.join("secret"), b"outside\n").unwrap();
    std::fs::create_dir(o.join("dir")).unwrap();
    std::fs::write(o.join("dir/s.txt"), b"outside s\n").unwrap();
    std::fs::remove_file(d.join("f1.txt")).unwrap();
    std::os::unix::fs::symlink(o.join("secret"), d.join("f1.txt")).unwrap();
    std::fs::rename(d.join("sub"), d.join("sub.moved")).unwrap();
    std::os::unix::fs::symlink(o.join("dir"), d.join("sub")).unwrap();

    let (kept, lost, msg) = recover(&ws);
    assert!(lost.is_empty(), "{lost:?}");
    let got: Vec<(&str, Became, Option<&str>)> = kept
        .iter()
        .map(|k| (k.path.as_str(), k.now, k.aside.as_deref()))
        .collect();
    let aside = ".mend/aside/interrupted-";
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!((got[0].0, got[0].1), ("f1.txt", Became::LeadsOut));
    assert!(got[0].2.unwrap().starts_with(aside), "{got:?}");
    assert!(got[0].2.unwrap().ends_with("/f1.txt"), "{got:?}");
    assert_eq!(got[1], ("sub/s.txt", Became::LeadsOut, None));
    assert_eq!(
        std::fs::read(d.join(got[0].2.unwrap())).unwrap(),
        b"new f1.txt\n"
    );
    // Finished where it could be; nothing outside touched.
    for p in ["f0.txt", "f2.txt"] {
        assert_eq!(
            std::fs::read(d.join(p)).unwrap(),
            format!("new {p}\n").as_bytes()
        );
    }
    assert!(
        std::fs::symlink_metadata(d.join("f1.txt"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read(o.join("secret")).unwrap(), b"outside\n");
    let out: Vec<_> = std::fs::read_dir(o.join("dir"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(out, ["s.txt"]);
    assert_eq!(std::fs::read(o.join("dir/s.txt")).unwrap(), b"outside s\n");
    assert!(leftovers(d).is_empty(), "{:?}", leftovers(d));
    assert!(!d.join(".mend/journal.json").exists());
    assert!(
        msg.starts_with("completed an interrupted transaction; f1.txt now leads outside the project root (or into .git or .mend) through a symbolic link; kept as it is, never written through, the interrupted write's version is in .mend/aside/interrupted-"),
        "{msg}"
    );
    assert!(
        msg.ends_with("; sub/s.txt now leads outside the project root (or into .git or .mend) through a symbolic link; kept as it is, never written through"),
        "{msg}"
    );
}

/// A staged copy changed (then removed) or removed after the crash is
/// never installed: its target keeps what it held, and recovery reports it
/// as not completed rather than "completed".
#[test]
fn a_staged_copy_changed_or_missing_after_the_crash_is_not_installed() {
    let cases: [(Why, &str); 2] = [
        (
            Why::Altered,
            "was changed after the crash, so it was removed, not installed",
        ),
        (Why::Missing, "is missing"),
    ];
    for (why, said) in cases {
        let (dir, ws) = killed_after_commit(3, &[]);
        let d = dir.path();
        let copy = staged_holding(d, "new f1.txt\n");
        match why {
            Why::Altered => std::fs::write(&copy, b"EVIL\n").unwrap(),
            _ => std::fs::remove_file(&copy).unwrap(),
        }
        let staged = copy.file_name().unwrap().to_string_lossy().into_owned();

        let (kept, lost, msg) = recover(&ws);
        assert!(kept.is_empty(), "{kept:?}");
        let path = "f1.txt".to_owned();
        let staged_too = staged.clone();
        assert_eq!(
            lost,
            [Lost {
                path,
                staged: staged_too,
                why
            }]
        );
        assert_eq!(std::fs::read(d.join("f1.txt")).unwrap(), b"old f1.txt\n");
        for p in ["f0.txt", "f2.txt"] {
            let new = format!("new {p}\n");
            assert_eq!(std::fs::read(d.join(p)).unwrap(), new.as_bytes());
        }
        assert!(leftovers(d).is_empty(), "{:?}", leftovers(d));
        assert_eq!(
            msg,
            format!(
                "finished an interrupted transaction except for 1 file it could not complete; f1.txt was not completed: its staged copy {staged} {said}; f1.txt is left as it was and the interrupted write's version is lost (if it came from `mend pending accept`, `mend pending` still holds it)"
            )
        );
    }
}

/// A file the commit wrote before the crash and a person edited after it
/// has no staged copy left, rightly: that is not reported as lost.
#[test]
fn a_written_then_edited_target_is_not_reported_lost() {
    let (dir, ws) = killed_after_commit(2, &[]);
    let d = dir.path();
    // Finish f0 as the killed commit would have, then edit it.
    let staged = staged_holding(d, "new f0.txt\n");
    std::fs::rename(&staged, d.join("f0.txt")).unwrap();
    std::fs::write(d.join("f0.txt"), b"edited\n").unwrap();
    let (kept, lost, msg) = recover(&ws);
    assert!(kept.is_empty() && lost.is_empty(), "{kept:?} {lost:?}");
    assert_eq!(msg, "completed an interrupted transaction");
    assert_eq!(std::fs::read(d.join("f0.txt")).unwrap(), b"edited\n");
    assert_eq!(std::fs::read(d.join("f1.txt")).unwrap(), b"new f1.txt\n");
}
