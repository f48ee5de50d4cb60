//! The watcher against real files: every way of writing a file is seen as
//! a content change, a self-write is not, and renames and deletions are
//! followed.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crossbeam_channel::Receiver;
use mend_watch::{Change, Kind, Options, Watcher};

/// Long enough for a loaded CI machine; the watcher normally answers within
/// the 100 ms debounce.
const PATIENCE: Duration = Duration::from_secs(10);

fn setup(files: &[(&str, &str)]) -> (tempfile::TempDir, Watcher, Receiver<Change>) {
    let dir = tempfile::tempdir().unwrap();
    for (p, c) in files {
        let path = dir.path().join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, c).unwrap();
    }
    let (w, rx) = Watcher::start(dir.path(), Options::default()).unwrap();
    for (p, c) in files {
        w.track(Path::new(p), Some(c.as_bytes()));
    }
    (dir, w, rx)
}

fn next(rx: &Receiver<Change>) -> (PathBuf, Kind) {
    let c = rx.recv_timeout(PATIENCE).expect("no change reported");
    (c.path, c.kind)
}

fn content(s: &str) -> Kind {
    Kind::Content(s.as_bytes().to_vec())
}

#[test]
fn direct_write() {
    let (dir, _w, rx) = setup(&[("a.txt", "one\n")]);
    std::fs::write(dir.path().join("a.txt"), "two\n").unwrap();
    assert_eq!(next(&rx), ("a.txt".into(), content("two\n")));
}

#[test]
fn truncate_then_write() {
    use std::io::Write as _;
    let (dir, _w, rx) = setup(&[("a.txt", "one\n")]);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(dir.path().join("a.txt"))
        .unwrap();
    f.write_all(b"three\n").unwrap();
    f.sync_all().unwrap();
    drop(f);
    assert_eq!(next(&rx), ("a.txt".into(), content("three\n")));
}

#[test]
fn rename_over_the_file() {
    let (dir, _w, rx) = setup(&[("src/a.rs", "one\n")]);
    let tmp = dir.path().join("src/.a.rs.tmp");
    std::fs::write(&tmp, "atomic\n").unwrap();
    std::fs::rename(&tmp, dir.path().join("src/a.rs")).unwrap();
    assert_eq!(
        next(&rx),
        ("src/.a.rs.tmp".into(), Kind::Renamed("src/a.rs".into()))
    );
    assert_eq!(next(&rx), ("src/a.rs".into(), content("atomic\n")));
}

#[test]
fn delete() {
    let (dir, _w, rx) = setup(&[("a.txt", "one\n")]);
    std::fs::remove_file(dir.path().join("a.txt")).unwrap();
    assert_eq!(next(&rx), ("a.txt".into(), Kind::Removed));
}

#[test]
fn rename_is_reported_and_tracking_moves_when_told() {
    let (dir, w, rx) = setup(&[("a.txt", "one\n")]);
    std::fs::rename(dir.path().join("a.txt"), dir.path().join("b.txt")).unwrap();
    assert_eq!(next(&rx), ("a.txt".into(), Kind::Renamed("b.txt".into())));
    // The caller decides whether the file was moved; here it follows.
    w.untrack(Path::new("a.txt"));
    w.track(Path::new("b.txt"), Some(b"one\n"));
    std::fs::write(dir.path().join("b.txt"), "two\n").unwrap();
    // The old path, read after the rename, may be reported gone first.
    let mut c = next(&rx);
    if c == ("a.txt".into(), Kind::Removed) {
        c = next(&rx);
    }
    assert_eq!(c, ("b.txt".into(), content("two\n")));
}

#[test]
fn folder_and_untracked_renames_are_reported() {
    let (dir, _w, rx) = setup(&[("src/a.txt", "one\n"), ("x.txt", "x\n")]);
    std::fs::rename(dir.path().join("src"), dir.path().join("lib")).unwrap();
    assert_eq!(next(&rx), ("src".into(), Kind::Renamed("lib".into())));
    // The caller may not track a file yet that a rename concerns (the
    // second rename of a swap through a temporary name).
    std::fs::write(dir.path().join("t1"), "t\n").unwrap();
    std::fs::rename(dir.path().join("t1"), dir.path().join("t2")).unwrap();
    loop {
        let (p, k) = next(&rx);
        if p == Path::new("t1") {
            assert_eq!(k, Kind::Renamed("t2".into()));
            break;
        }
    }
}

#[test]
fn self_write_is_suppressed() {
    let (dir, w, rx) = setup(&[("a.txt", "one\n")]);
    w.expect(Path::new("a.txt"), b"mine\n");
    std::fs::write(dir.path().join("a.txt"), "mine\n").unwrap();
    std::thread::sleep(Duration::from_millis(400));
    std::fs::write(dir.path().join("a.txt"), "theirs\n").unwrap();
    // The first change reported is the second write.
    assert_eq!(next(&rx), ("a.txt".into(), content("theirs\n")));
}

#[test]
fn same_bytes_and_metadata_changes_are_not_changes() {
    let (dir, _w, rx) = setup(&[("a.txt", "one\n")]);
    std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
    // A chmod is a metadata event naming the file.
    let path = dir.path().join("a.txt");
    let mut perms = std::fs::metadata(&path).unwrap().permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(&path, perms.clone()).unwrap();
    #[allow(
        clippy::permissions_set_readonly_false,
        reason = "restoring write access"
    )]
    perms.set_readonly(false);
    std::fs::set_permissions(&path, perms).unwrap();
    std::thread::sleep(Duration::from_millis(400));
    std::fs::write(dir.path().join("a.txt"), "two\n").unwrap();
    assert_eq!(next(&rx), ("a.txt".into(), content("two\n")));
}

#[test]
fn large_files_are_reported_without_bytes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.bin"), "text\n").unwrap();
    std::fs::write(dir.path().join("big.txt"), "small\n").unwrap();
    let opts = Options {
        max_bytes: 1000,
        ..Options::default()
    };
    let (w, rx) = Watcher::start(dir.path(), opts).unwrap();
    w.track(Path::new("a.bin"), Some(b"text\n"));
    w.track(Path::new("big.txt"), Some(b"small\n"));
    std::fs::write(dir.path().join("a.bin"), b"\0\x01\x02").unwrap();
    assert_eq!(
        next(&rx),
        ("a.bin".into(), Kind::Content(b"\0\x01\x02".to_vec()))
    );
    std::fs::write(dir.path().join("big.txt"), vec![b'x'; 2000]).unwrap();
    assert_eq!(next(&rx), ("big.txt".into(), Kind::TooLarge(2000)));
}

#[test]
fn change_token_names_untracked_paths_too() {
    let (dir, w, rx) = setup(&[("a.txt", "one\n")]);
    let t0 = w.token();
    std::fs::write(dir.path().join("other.txt"), "x\n").unwrap();
    std::fs::write(dir.path().join("a.txt"), "two\n").unwrap();
    let c = rx.recv_timeout(PATIENCE).unwrap();
    assert!(c.token > t0);
    let changed = w.changed_since(t0);
    assert!(changed.contains(&PathBuf::from("a.txt")), "{changed:?}");
    assert!(changed.contains(&PathBuf::from("other.txt")), "{changed:?}");
    assert!(w.changed_since(w.token()).is_empty());
    // `.git` is not worktree content.
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    std::fs::write(dir.path().join(".git/HEAD"), "x").unwrap();
    std::fs::write(dir.path().join("a.txt"), "three\n").unwrap();
    rx.recv_timeout(PATIENCE).unwrap();
    assert!(!w.changed_since(t0).iter().any(|p| p.starts_with(".git")));
}

#[test]
fn folders_only_mode_still_follows_tracked_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src/deep")).unwrap();
    std::fs::write(dir.path().join("src/deep/a.rs"), "one\n").unwrap();
    let opts = Options {
        recursive: false,
        ..Options::default()
    };
    let (w, rx) = Watcher::start(dir.path(), opts).unwrap();
    assert!(!w.is_recursive());
    w.track(Path::new("src/deep/a.rs"), Some(b"one\n"));
    std::fs::write(dir.path().join("src/deep/a.rs"), "two\n").unwrap();
    assert_eq!(next(&rx), ("src/deep/a.rs".into(), content("two\n")));
    let tmp = dir.path().join("src/deep/.a.rs.tmp");
    std::fs::write(&tmp, "three\n").unwrap();
    std::fs::rename(&tmp, dir.path().join("src/deep/a.rs")).unwrap();
    // The rename itself is reported first, then the new content.
    let mut c = next(&rx);
    if let (_, Kind::Renamed(_)) = c {
        c = next(&rx);
    }
    assert_eq!(c, ("src/deep/a.rs".into(), content("three\n")));
}

#[test]
fn links_are_not_followed_out_of_the_tree() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("x.txt"), "x\n").unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
    let (w, rx) = Watcher::start(dir.path(), Options::default()).unwrap();
    w.track(Path::new("a.txt"), Some(b"one\n"));
    let t0 = w.token();
    std::fs::write(outside.path().join("x.txt"), "y\n").unwrap();
    std::thread::sleep(Duration::from_millis(300));
    std::fs::write(dir.path().join("a.txt"), "two\n").unwrap();
    assert_eq!(next(&rx), ("a.txt".into(), content("two\n")));
    let changed = w.changed_since(t0);
    assert_eq!(changed, vec![PathBuf::from("a.txt")]);
}

/// A writer that truncates the file and writes it in pieces far apart,
/// holding it open: the watcher waits for the close, and reports only the
/// finished file.
#[test]
fn a_file_still_open_for_writing_is_waited_for() {
    use std::io::Write as _;
    let (dir, _w, rx) = setup(&[("a.txt", "old\n")]);
    let mut f = std::fs::File::create(dir.path().join("a.txt")).unwrap();
    for piece in ["one\n", "two\n", "three\n"] {
        std::thread::sleep(Duration::from_millis(300));
        f.write_all(piece.as_bytes()).unwrap();
        f.flush().unwrap();
    }
    std::thread::sleep(Duration::from_millis(300));
    drop(f);
    assert_eq!(next(&rx), ("a.txt".into(), content("one\ntwo\nthree\n")));
    assert!(
        rx.recv_timeout(Duration::from_millis(500)).is_err(),
        "a partial read was reported"
    );
}

/// A recheck answers even when nothing changed, and waits for a file
/// written a moment ago to settle.
#[test]
fn a_recheck_always_answers_with_a_settled_file() {
    let (dir, w, rx) = setup(&[("a.txt", "one\n")]);
    w.recheck(Path::new("a.txt"), 7);
    let c = rx.recv_timeout(PATIENCE).unwrap();
    assert_eq!((c.kind, c.recheck), (content("one\n"), Some(7)));
    let path = dir.path().join("a.txt");
    let writer = std::thread::spawn(move || {
        std::fs::write(&path, "").unwrap();
        std::thread::sleep(Duration::from_millis(20));
        std::fs::write(&path, "two\n").unwrap();
    });
    std::thread::sleep(Duration::from_millis(5));
    w.recheck(Path::new("a.txt"), 8);
    writer.join().unwrap();
    loop {
        let c = rx.recv_timeout(PATIENCE).unwrap();
        if c.recheck == Some(8) {
            assert_eq!(c.kind, content("two\n"));
            break;
        }
    }
}

fn mkfifo(path: &Path) {
    let ok = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap()
        .success();
    assert!(ok, "mkfifo");
}

/// A tracked file replaced by a link to a FIFO or to a device is reported
/// by kind, never opened for a blocking read, and the watcher goes on.
#[test]
fn fifos_and_devices_are_reported_not_read() {
    let (dir, w, rx) = setup(&[("a.txt", "one\n"), ("b.txt", "one\n"), ("c.txt", "one\n")]);
    let fifo = dir.path().join("pipe");
    mkfifo(&fifo);
    std::fs::remove_file(dir.path().join("a.txt")).unwrap();
    std::os::unix::fs::symlink(&fifo, dir.path().join("a.txt")).unwrap();
    std::fs::remove_file(dir.path().join("b.txt")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("b.txt")).unwrap();
    let mut seen = std::collections::BTreeMap::new();
    while seen.len() < 2 {
        let (p, k) = next(&rx);
        if k != Kind::Removed {
            seen.insert(p, k);
        }
    }
    assert_eq!(
        seen[Path::new("a.txt")],
        Kind::NotAFile("a FIFO (named pipe)")
    );
    // /dev/zero is outside the root: refused before its kind matters.
    assert!(
        matches!(seen[Path::new("b.txt")], Kind::Outside | Kind::NotAFile(_)),
        "{seen:?}"
    );
    std::fs::write(dir.path().join("c.txt"), "two\n").unwrap();
    assert_eq!(next(&rx), ("c.txt".into(), content("two\n")));
    w.recheck(Path::new("a.txt"), 1);
    assert_eq!(next(&rx).1, Kind::NotAFile("a FIFO (named pipe)"));
}

/// A folder link that leads outside the root is never read through.
#[test]
fn a_folder_link_out_of_the_root_is_not_read() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "secret\n").unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
    let (w, rx) = Watcher::start(dir.path(), Options::default()).unwrap();
    w.recheck(Path::new("out/secret.txt"), 1);
    assert_eq!(next(&rx), ("out/secret.txt".into(), Kind::Outside));
    // A link inside the root to a file inside it is read.
    std::fs::write(dir.path().join("real.txt"), "real\n").unwrap();
    std::os::unix::fs::symlink("real.txt", dir.path().join("alias.txt")).unwrap();
    w.recheck(Path::new("alias.txt"), 2);
    assert_eq!(next(&rx), ("alias.txt".into(), content("real\n")));
    // A link into .git is refused like one out of the root.
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    std::fs::write(dir.path().join(".git/config"), "[core]\n").unwrap();
    std::os::unix::fs::symlink(".git/config", dir.path().join("cfg")).unwrap();
    w.recheck(Path::new("cfg"), 3);
    assert_eq!(next(&rx), ("cfg".into(), Kind::Outside));
}

fn settled(w: &Watcher) -> u64 {
    w.sync(PATIENCE).expect("the watcher settles")
}

fn paths(ps: &[&str]) -> Option<Vec<PathBuf>> {
    Some(ps.iter().map(PathBuf::from).collect())
}

/// Once `sync` returns, every change made before it is in the token log:
/// no waiting, no timing.
#[test]
fn sync_settles_every_change_made_before_it() {
    let (dir, w, _rx) = setup(&[("a.txt", "one\n")]);
    assert_eq!(w.unreliable(), None);
    let t0 = settled(&w);
    for i in 0..50 {
        std::fs::write(dir.path().join(format!("f{i}.txt")), "x").unwrap();
        let t = settled(&w);
        let changed = w.changes_since(t0).unwrap();
        assert!(
            changed.contains(&PathBuf::from(format!("f{i}.txt"))),
            "{changed:?}"
        );
        assert_eq!(w.changes_since(t), paths(&[]));
    }
}

/// `x/.git` made or removed is a change of `x` (it starts or stops being a
/// nested repository); what happens inside it, or in the root's `.git`,
/// is not.
#[test]
fn a_nested_repository_made_or_removed_names_its_folder() {
    let (dir, w, _rx) = setup(&[("x/a.txt", "one\n")]);
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    let t0 = settled(&w);
    std::fs::create_dir(dir.path().join("x/.git")).unwrap();
    let t1 = settled(&w);
    assert_eq!(w.changes_since(t0), paths(&["x"]));
    std::fs::write(dir.path().join("x/.git/HEAD"), "ref: x\n").unwrap();
    std::fs::write(dir.path().join(".git/HEAD"), "ref: y\n").unwrap();
    let t2 = settled(&w);
    assert_eq!(w.changes_since(t1), paths(&[]));
    std::fs::remove_dir_all(dir.path().join("x/.git")).unwrap();
    settled(&w);
    assert_eq!(w.changes_since(t2), paths(&["x"]));
}

/// A renamed folder leaves `notify` naming its old path for what happens
/// below it: every earlier token is in doubt, and the next `sync` watches
/// the root again, so later changes are named where they are.
#[test]
fn a_renamed_folder_is_a_doubt_until_the_root_is_watched_again() {
    let (dir, w, _rx) = setup(&[("a/b/f.txt", "one\n")]);
    let t0 = settled(&w);
    std::fs::rename(dir.path().join("a"), dir.path().join("c")).unwrap();
    let t1 = settled(&w);
    assert_eq!(w.changes_since(t0), None);
    std::fs::write(dir.path().join("c/b/g.txt"), "x").unwrap();
    let t2 = settled(&w);
    assert_eq!(w.changes_since(t1), paths(&["c/b/g.txt"]));
    // A file renamed is no doubt.
    std::fs::rename(dir.path().join("c/b/g.txt"), dir.path().join("c/h.txt")).unwrap();
    settled(&w);
    assert_eq!(w.changes_since(t2), paths(&["c/b/g.txt", "c/h.txt"]));
}

/// A watch of some folders only vouches for nothing.
#[test]
fn a_watch_of_some_folders_vouches_for_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        recursive: false,
        ..Options::default()
    };
    let (w, _rx) = Watcher::start(dir.path(), opts).unwrap();
    let t0 = settled(&w);
    std::fs::write(dir.path().join("a.txt"), "x").unwrap();
    settled(&w);
    assert!(w.unreliable().is_some());
    assert_eq!(w.changes_since(t0), None);
}

/// The root moved away and a new folder made at its path, then that one
/// deleted and the first moved back: each loss and each return is
/// reported, the token vouches for nothing while the root is lost, and a
/// tracked file is read from whichever folder is at the path.
#[test]
fn a_root_lost_and_restored_is_reported_and_watched_again() {
    let (dir, w, rx) = setup(&[("a.txt", "one\n")]);
    let root = dir.path().to_path_buf();
    let away = root.with_extension("away");
    let token = w.sync(PATIENCE).expect("settled");
    std::fs::rename(&root, &away).unwrap();
    assert_eq!(next(&rx), (PathBuf::new(), Kind::RootLost));
    assert!(w.root_lost());
    assert_eq!(w.changes_since(token), None);
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("a.txt"), "new\n").unwrap();
    assert_eq!(next(&rx), (PathBuf::new(), Kind::RootRestored));
    assert_eq!(next(&rx), ("a.txt".into(), content("new\n")));
    std::fs::remove_dir_all(&root).unwrap();
    let mut seen = next(&rx);
    if seen == ("a.txt".into(), Kind::Removed) {
        seen = next(&rx);
    }
    assert_eq!(seen, (PathBuf::new(), Kind::RootLost));
    std::fs::rename(&away, &root).unwrap();
    assert_eq!(next(&rx), (PathBuf::new(), Kind::RootRestored));
    assert_eq!(next(&rx), ("a.txt".into(), content("one\n")));
    assert!(!w.root_lost());
    std::fs::write(root.join("a.txt"), "two\n").unwrap();
    assert_eq!(next(&rx), ("a.txt".into(), content("two\n")));
}

/// A root deleted and made again at once, quicker than the root is
/// checked: the new folder is another, so it is still reported lost and
/// restored, and watched.
#[test]
fn a_root_made_again_at_once_is_watched_again() {
    let (dir, _w, rx) = setup(&[("a.txt", "one\n")]);
    let root = dir.path().to_path_buf();
    std::fs::remove_dir_all(&root).unwrap();
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("a.txt"), "two\n").unwrap();
    let mut got = Vec::new();
    while got.last() != Some(&("a.txt".into(), content("two\n"))) {
        got.push(next(&rx));
    }
    got.retain(|c| c.1 != Kind::Removed);
    assert_eq!(
        got,
        [
            (PathBuf::new(), Kind::RootLost),
            (PathBuf::new(), Kind::RootRestored),
            ("a.txt".into(), content("two\n"))
        ]
    );
    std::fs::write(root.join("a.txt"), "three\n").unwrap();
    assert_eq!(next(&rx), ("a.txt".into(), content("three\n")));
}
