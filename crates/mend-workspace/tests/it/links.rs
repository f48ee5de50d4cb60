//! Modes, symlinks and hard links survive a commit.

#![cfg(unix)]

use std::os::unix::fs::{MetadataExt, PermissionsExt};

use mend_workspace::{Base, Change, Encoding, Workspace};

use crate::{put, workspace};

fn write(ws: &Workspace, path: &str, text: &str) {
    let snap = ws.read(path).unwrap();
    let hash = snap.text().unwrap().hash.clone();
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

#[test]
fn hard_links_keep_their_identity() {
    let (dir, ws) = workspace();
    put(dir.path(), "a.txt", b"shared\n");
    std::fs::hard_link(dir.path().join("a.txt"), dir.path().join("b.txt")).unwrap();
    let ino = std::fs::metadata(dir.path().join("a.txt")).unwrap().ino();
    write(&ws, "a.txt", "changed\n");
    assert_eq!(
        std::fs::metadata(dir.path().join("a.txt")).unwrap().ino(),
        ino
    );
    assert_eq!(
        std::fs::read(dir.path().join("b.txt")).unwrap(),
        b"changed\n"
    );
}

#[test]
fn executable_bit_can_be_set() {
    let (dir, ws) = workspace();
    put(dir.path(), "s.sh", b"x\n");
    let p = dir.path().join("s.sh");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
    let hash = ws.read("s.sh").unwrap().text().unwrap().hash.clone();
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
