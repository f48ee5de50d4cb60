//! Modes, symlinks and hard links survive a commit.

#![cfg(unix)]

use std::os::unix::fs::{MetadataExt, PermissionsExt};

use mend_workspace::{Base, Change, Encoding, Workspace};

use crate::{put, workspace};

fn write(ws: &Workspace, path: &str, text: &str) {
    let snap = ws.read(path).unwrap();
    let hash = snap.text().unwrap().hash;
    let lock = ws.lock().unwrap();
    ws.commit(
        &lock,
        &[Change::Write {
            path: path.into(),
            text: text.into(),
            encoding: Encoding::Utf8,
            base: Base::Hash(hash),
            mode_from: None,
            executable: None,
        }],
    )
    .unwrap();
}

#[test]
fn mode_is_preserved() {
    let (dir, ws) = workspace();
    put(dir.path(), "run.sh", b"echo 1\n");
    let p = dir.path().join("run.sh");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o750)).unwrap();
    write(&ws, "run.sh", "echo 2\n");
    assert_eq!(
        std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
        0o750
    );
}

#[test]
fn symlink_inside_the_root_is_written_through() {
    let (dir, ws) = workspace();
    put(dir.path(), "real/config.toml", b"a = 1\n");
    std::os::unix::fs::symlink("real/config.toml", dir.path().join("link.toml")).unwrap();
    write(&ws, "link.toml", "a = 2\n");
    let link = dir.path().join("link.toml");
    assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
    assert_eq!(
        std::fs::read(dir.path().join("real/config.toml")).unwrap(),
        b"a = 2\n"
    );
}

/// An edit of a file with another hard link gives it a new inode: the
/// other name keeps its bytes, wherever it is (under `.git`, outside the
/// root), as after git's checkout.
#[test]
fn an_edit_leaves_a_hard_links_other_name_alone() {
    let (dir, ws) = workspace();
    put(dir.path(), "a.txt", b"shared\n");
    std::fs::create_dir_all(dir.path().join(".git/hooks")).unwrap();
    let hook = dir.path().join(".git/hooks/pre-commit");
    std::fs::hard_link(dir.path().join("a.txt"), &hook).unwrap();
    let outside = tempfile::tempdir().unwrap();
    let copy = outside.path().join("backup.txt");
    std::fs::hard_link(dir.path().join("a.txt"), &copy).unwrap();
    write(&ws, "a.txt", "changed\n");
    assert_eq!(
        std::fs::read(dir.path().join("a.txt")).unwrap(),
        b"changed\n"
    );
    assert_eq!(std::fs::read(&hook).unwrap(), b"shared\n");
    assert_eq!(std::fs::read(&copy).unwrap(), b"shared\n");
    assert_eq!(
        std::fs::metadata(dir.path().join("a.txt")).unwrap().nlink(),
        1
    );
}

#[test]
fn executable_bit_can_be_set() {
    let (dir, ws) = workspace();
    put(dir.path(), "s.sh", b"x\n");
    let p = dir.path().join("s.sh");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
    let hash = ws.read("s.sh").unwrap().text().unwrap().hash;
    let lock = ws.lock().unwrap();
    ws.commit(
        &lock,
        &[Change::Write {
            path: "s.sh".into(),
            text: "x\n".into(),
            encoding: Encoding::Utf8,
            base: Base::Hash(hash),
            mode_from: None,
            executable: Some(true),
        }],
    )
    .unwrap();
    assert_eq!(
        std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
        0o755
    );
}

fn change(ws: &Workspace, path: &str, text: &str) -> Change {
    let base = match ws.read(path).unwrap().text() {
        Some(f) => Base::Hash(f.hash),
        None => Base::Absent,
    };
    crate::txn::write_change(path, text, base)
}

/// Writes one file under two names (`first`, then `second`) and expects a
/// refusal naming both, with nothing written.
fn refused_under_two_names(first: &str, second: &str) {
    let (dir, ws) = workspace();
    let d = dir.path();
    put(d, "d1/a.txt", b"one\n");
    put(d, "real.txt", b"one\n");
    std::os::unix::fs::symlink("real.txt", d.join("link.txt")).unwrap();
    std::os::unix::fs::symlink("d1", d.join("d2")).unwrap();
    let changes = [
        change(&ws, first, "first\n"),
        change(&ws, second, "second\n"),
    ];
    let lock = ws.lock().unwrap();
    let err = ws.check_changes(&changes).unwrap_err();
    let msg = err.to_string();
    for name in [first, second, "one file", "under one name"] {
        assert!(msg.contains(name), "{name}: {msg}");
    }
    assert!(ws.commit(&lock, &changes).is_err());
    assert_eq!(std::fs::read(d.join("real.txt")).unwrap(), b"one\n");
    assert_eq!(std::fs::read(d.join("d1/a.txt")).unwrap(), b"one\n");
}

#[test]
fn a_file_changed_through_a_link_and_its_name_is_refused() {
    refused_under_two_names("real.txt", "link.txt");
    refused_under_two_names("link.txt", "real.txt");
}

#[test]
fn a_file_changed_through_a_folder_link_and_its_name_is_refused() {
    refused_under_two_names("d1/a.txt", "d2/a.txt");
    // A new file under both names is one file too.
    refused_under_two_names("d2/new.txt", "d1/new.txt");
}

#[test]
fn hard_links_changed_together_are_refused() {
    let (dir, ws) = workspace();
    put(dir.path(), "a.txt", b"one\n");
    std::fs::hard_link(dir.path().join("a.txt"), dir.path().join("b.txt")).unwrap();
    let changes = [change(&ws, "a.txt", "x\n"), change(&ws, "b.txt", "y\n")];
    let msg = ws.check_changes(&changes).unwrap_err().to_string();
    assert!(msg.contains("a.txt") && msg.contains("b.txt"), "{msg}");
}

/// A link or FIFO planted at `.mend/owner` leaves the folder without a
/// mark: it is refused as a folder mend did not make, and nothing in it is
/// removed or followed.
#[test]
fn a_planted_owner_entry_is_refused_and_nothing_removed() {
    for fifo in [false, true] {
        let (dir, ws) = workspace();
        put(dir.path(), "a.txt", b"one\n");
        drop(ws.lock().unwrap());
        let owner = dir.path().join(".mend/owner");
        std::fs::remove_file(&owner).unwrap();
        put(dir.path(), ".mend/pending/s/keep", b"kept\n");
        if fifo {
            rustix::fs::mknodat(
                rustix::fs::CWD,
                &owner,
                rustix::fs::FileType::Fifo,
                rustix::fs::Mode::from_raw_mode(0o600),
                0,
            )
            .unwrap();
        } else {
            std::os::unix::fs::symlink("/etc/passwd", &owner).unwrap();
        }
        let ws = Workspace::open(dir.path(), Default::default()).unwrap();
        let msg = ws.lock().unwrap_err().to_string();
        assert!(msg.contains("no owner mark"), "{msg}");
        assert!(msg.contains("mv .mend .mend.unknown"), "{msg}");
        assert!(owner.symlink_metadata().is_ok(), "the entry is left");
        let kept = dir.path().join(".mend/pending/s/keep");
        assert_eq!(std::fs::read(kept).unwrap(), b"kept\n");
    }
}

/// A worktree moved (or copied) while `mend daemon` ran carries the
/// daemon's socket in `.mend/daemon/`; at the new place `.mend` is taken
/// over with the socket dropped, not refused as holding a special file
/// (which left every command failing until it was removed by hand).
#[test]
fn a_moved_worktree_with_a_daemon_socket_still_works() {
    let top = tempfile::tempdir().unwrap();
    let old = top.path().join("old");
    std::fs::create_dir(&old).unwrap();
    put(&old, "a.txt", b"one\n");
    let ws = Workspace::open(&old, Default::default()).unwrap();
    drop(ws.lock().unwrap());
    put(&old, ".mend/pending/s/keep", b"kept\n");
    std::fs::create_dir(old.join(".mend/daemon")).unwrap();
    let listener = std::os::unix::net::UnixListener::bind(old.join(".mend/daemon/sock")).unwrap();
    let new = top.path().join("new");
    std::fs::rename(&old, &new).unwrap();
    let ws = Workspace::open(&new, Default::default()).unwrap();
    drop(ws.lock().unwrap());
    assert!(
        !new.join(".mend/daemon/sock").exists(),
        "the stale socket is gone"
    );
    let kept = std::fs::read(new.join(".mend/pending/s/keep")).unwrap();
    assert_eq!(kept, b"kept\n");
    drop(listener);
}
