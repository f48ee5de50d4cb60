//! Turns at the edges the tester found: a version given with a
//! whole-file action, links that point outside the root, names that are
//! not UTF-8 or that a model's paths may not use, large files, files that
//! become ignored, and repositories made during the turn.

use std::path::Path;

use mend_checkpoint::turn::{BeginOptions, Selection, Turns};
use mend_test_support::put;

fn begin(dir: &Path) -> Turns {
    let turns = Turns::open(dir).unwrap();
    turns.begin(&BeginOptions::default(), &mut |_| {}).unwrap();
    turns
}

fn whole(path: &str, seen: Option<String>) -> Selection {
    Selection {
        paths: vec![path.into()],
        hunks: Vec::new(),
        seen,
    }
}

fn hunks(path: &str, hunks: Vec<usize>) -> Selection {
    Selection {
        hunks,
        ..whole(path, None)
    }
}

/// A whole-file reject or accept given the version `status` showed is
/// refused, writing nothing, once the file changed since; at the version
/// it is now, it goes ahead.
#[test]
fn a_whole_file_action_checks_the_version_it_was_given() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let base: String = (1..=50).map(|i| format!("{i}\n")).collect();
    put(d, "f", &base);
    let turns = begin(d);
    put(d, "f", base.replace("30\n", "THIRTY\n"));
    let shown = turns.status(false).unwrap().files[0].version.clone();
    let person = format!("{}person\n", base.replace("30\n", "THIRTY\n"));
    put(d, "f", &person);
    let checkpoints = turns.checkpoints().list().unwrap().len();
    for reject in [true, false] {
        let sel = whole("f", Some(shown.clone()));
        let e = if reject {
            turns.reject(&sel).unwrap_err()
        } else {
            turns.accept(&sel).unwrap_err()
        };
        assert!(
            e.is_refusal() && e.to_string().contains("changed since"),
            "{e}"
        );
        assert_eq!(std::fs::read_to_string(d.join("f")).unwrap(), person);
        assert_eq!(turns.checkpoints().list().unwrap().len(), checkpoints);
        assert_eq!(turns.status(false).unwrap().files.len(), 1);
    }
    let now = turns.status(false).unwrap().files[0].version.clone();
    turns.reject(&whole("f", Some(now))).unwrap();
    assert_eq!(std::fs::read_to_string(d.join("f")).unwrap(), base);
}

/// Every entry under `root` (`.mend` and `.git` left out): a link as
/// `-> target`, never followed; a folder as `/`.
fn entries(root: &Path) -> Vec<(String, String)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let name = e.file_name();
            if name == ".mend" || name == ".git" {
                continue;
            }
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            let t = e.file_type().unwrap();
            if t.is_symlink() {
                let to = std::fs::read_link(&p).unwrap();
                out.push((rel, format!("-> {}", to.display())));
            } else if t.is_dir() {
                out.push((rel, "/".into()));
                walk(root, &p, out);
            } else {
                let bytes = std::fs::read(&p).unwrap();
                out.push((rel, String::from_utf8_lossy(&bytes).into_owned()));
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out.sort();
    out
}

/// Links that are themselves the changed paths (added, retargeted, a file
/// and a folder replaced by one, a loop), pointing outside the root:
/// rejecting one by name, the whole turn, and restoring the turn's start
/// each unlink the link itself and give back the start, writing nothing
/// where a link points; the reject's undo brings the links back.
#[test]
fn links_pointing_outside_are_replaced_not_followed() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let d = dir.path();
    put(d, "d/f", "in d\n");
    put(d, "top.txt", "top\n");
    put(d, "exe", "e\n");
    symlink("exe", d.join("lnk")).unwrap();
    let start = entries(d);
    let turns = begin(d);
    let out = outside.path();
    std::fs::remove_file(d.join("top.txt")).unwrap();
    symlink(out.join("top.txt"), d.join("top.txt")).unwrap();
    std::fs::remove_dir_all(d.join("d")).unwrap();
    symlink(out, d.join("d")).unwrap();
    symlink(out, d.join("added")).unwrap();
    symlink("..", d.join("up")).unwrap();
    symlink("/", d.join("r")).unwrap();
    std::fs::remove_file(d.join("lnk")).unwrap();
    symlink(out.join("secret"), d.join("lnk")).unwrap();
    symlink("loop", d.join("loop")).unwrap();
    let changed = entries(d);
    assert_eq!(turns.status(false).unwrap().files.len(), 8);
    turns.reject(&whole("top.txt", None)).unwrap();
    assert_eq!(std::fs::read_to_string(d.join("top.txt")).unwrap(), "top\n");
    let done = turns.reject(&Selection::default()).unwrap();
    assert_eq!(entries(d), start);
    assert_eq!(entries(out), Vec::new());
    turns
        .checkpoints()
        .restore(&done.safety.id, false, false)
        .unwrap();
    let mut undone = changed.clone();
    undone.retain(|(p, _)| p != "top.txt");
    undone.push(("top.txt".into(), "top\n".into()));
    undone.sort();
    assert_eq!(entries(d), undone);
    let id = turns.status(false).unwrap().turn.start;
    turns.checkpoints().restore(&id, false, false).unwrap();
    assert_eq!(entries(d), start);
    assert_eq!(entries(out), Vec::new());
}

/// Names that are not UTF-8, or hold a control character or a
/// backslash, are spelled with escapes (see `names.rs`): no two print
/// alike, not even a name that is not UTF-8 and a real one with U+FFFD
/// in it, and each spelling, given back, rejects exactly its file. The
/// reject writes them beside the workspace transaction, and restoring its
/// safety checkpoint undoes it, those names included.
#[test]
fn odd_names_are_spelled_apart_and_can_be_rejected() {
    use std::os::unix::ffi::OsStrExt as _;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let odd = d.join(std::ffi::OsStr::from_bytes(b"bad\xffname"));
    std::fs::write(&odd, "orig\n").unwrap();
    put(d, "keep", "k\n");
    let turns = begin(d);
    std::fs::write(&odd, "changed\n").unwrap();
    put(d, "bad\u{fffd}name", "a real name\n");
    put(d, "keep", "agent\n");
    put(d, "nl\nname", "x\n");
    put(d, "back\\slash", "q\n");
    let listed: Vec<(String, String)> = (turns.status(false).unwrap().files.iter())
        .map(|f| (f.path.clone(), f.status.to_string()))
        .collect();
    let spelled = |p: &str, s: &str| (p.to_owned(), s.to_owned());
    assert_eq!(
        listed,
        [
            spelled("back\\\\slash", "A"),
            spelled("bad\\xffname", "M"),
            spelled("bad\u{fffd}name", "A"),
            spelled("keep", "M"),
            spelled("nl\\nname", "A"),
        ]
    );
    // The spelling rejects the file it names, and only that one.
    let done = turns.reject(&whole("bad\\xffname", None)).unwrap();
    let rejected: Vec<&str> = done.rejected.iter().map(|a| a.path.as_str()).collect();
    assert_eq!(rejected, ["bad\\xffname"]);
    assert!(done.left.is_empty(), "{:?}", done.left);
    assert_eq!(std::fs::read_to_string(&odd).unwrap(), "orig\n");
    assert_eq!(
        std::fs::read_to_string(d.join("bad\u{fffd}name")).unwrap(),
        "a real name\n"
    );
    // A backslash that starts no escape is refused with how to write one.
    let e = turns.reject(&whole("back\\slash", None)).unwrap_err();
    assert!(e.is_refusal() && e.to_string().contains("`\\\\`"), "{e}");
    std::fs::write(&odd, "again\n").unwrap();
    let done = turns.reject(&Selection::default()).unwrap();
    assert!(done.left.is_empty(), "{:?}", done.left);
    assert_eq!(done.rejected.len(), 5);
    assert_eq!(std::fs::read_to_string(&odd).unwrap(), "orig\n");
    assert_eq!(std::fs::read_to_string(d.join("keep")).unwrap(), "k\n");
    for gone in ["bad\u{fffd}name", "nl\nname", "back\\slash"] {
        assert!(!d.join(gone).exists(), "{gone:?}");
    }
    // Its safety checkpoint undoes it, odd names included.
    let undo = done.safety.id.clone();
    let restored = turns.checkpoints().restore(&undo, false, false).unwrap();
    assert!(restored.left.is_empty(), "{:?}", restored.left);
    assert_eq!(std::fs::read_to_string(&odd).unwrap(), "again\n");
    assert_eq!(std::fs::read_to_string(d.join("nl\nname")).unwrap(), "x\n");
    assert_eq!(
        std::fs::read_to_string(d.join("back\\slash")).unwrap(),
        "q\n"
    );
    assert_eq!(std::fs::read_to_string(d.join("keep")).unwrap(), "agent\n");
}

/// Files too large to snapshot, at the start or now, are listed with
/// their sizes (`M` by size and time when too large at both), and so is
/// a repository made during the turn; a reject of each says what cannot
/// be done and why, writes nothing, and does not stop the rest.
#[test]
fn what_the_snapshots_leave_out_is_listed_and_explained() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let limit = mend_checkpoint::DEFAULT_MAX_FILE_BYTES as usize;
    let large = |c: u8, extra: usize| vec![c; limit + 1 + extra];
    put(d, "big", large(b'a', 0));
    put(d, "gone", large(b'b', 0));
    put(d, "s", "small\n");
    put(d, "plain", "p\n");
    let turns = begin(d);
    put(d, "big", large(b'a', 5));
    std::fs::remove_file(d.join("gone")).unwrap();
    put(d, "s", large(b'c', 0));
    put(d, "new", large(b'd', 0));
    put(d, "sub/.git/HEAD", "ref: refs/heads/main\n");
    put(d, "sub/n", "n\n");
    put(d, "plain", "agent\n");
    let status = turns.status(false).unwrap();
    let got: Vec<String> = status
        .files
        .iter()
        .map(|f| {
            let note = f.change.clone().unwrap_or_default();
            format!(
                "{} {} {:?} {:?} {note}",
                f.status, f.path, f.size_before, f.size
            )
        })
        .collect();
    let (n, b) = (limit as u64 + 1, limit as u64 + 6);
    assert_eq!(
        got,
        [
            format!("M big Some({n}) Some({b}) "),
            format!("D gone None Some({n}) "),
            format!("A new None Some({n}) "),
            "M plain Some(2) Some(6) ".to_owned(),
            format!("M s Some(6) Some({n}) "),
            "A sub None None repository, not snapshotted".to_owned(),
        ]
    );
    let done = turns.reject(&Selection::default()).unwrap();
    assert_eq!(done.rejected.len(), 1);
    assert_eq!(std::fs::read_to_string(d.join("plain")).unwrap(), "p\n");
    let why: Vec<(String, String)> = done
        .left
        .iter()
        .map(|l| (l.path.clone(), l.reason.clone()))
        .collect();
    let has = |p: &str, words: &str| why.iter().any(|(path, r)| path == p && r.contains(words));
    assert!(has("big", "at the turn's start it was"), "{why:?}");
    assert!(has("gone", "no checkpoint holds that content"), "{why:?}");
    assert!(has("s", "save its current content for the undo"), "{why:?}");
    assert!(has("new", "delete or move it yourself"), "{why:?}");
    assert!(has("sub", "repository of its own"), "{why:?}");
    assert_eq!(std::fs::read(d.join("s")).unwrap(), large(b'c', 0));
    let e = turns.reject(&whole("s", None)).unwrap_err();
    assert!(e.to_string().contains("for the undo"), "{e}");
}

/// A file that becomes ignored during the turn while it is still there
/// is `M`, not `D`; a reject leaves it, saying why (no `--force` hint),
/// and once it is no longer ignored the reject puts it back.
#[test]
fn a_file_that_became_ignored_is_modified_not_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    put(d, "a", "a\n");
    put(d, "notes.txt", "my notes\n");
    let turns = begin(d);
    put(d, ".gitignore", "notes.txt\n");
    put(d, "notes.txt", "agent overwrote\n");
    let status = turns.status(false).unwrap();
    let notes = status.files.iter().find(|f| f.path == "notes.txt").unwrap();
    assert_eq!(notes.status.to_string(), "M");
    assert_eq!(notes.size, Some(16));
    let e = turns.reject(&whole("notes.txt", None)).unwrap_err();
    assert!(e.to_string().contains("became ignored"), "{e}");
    assert!(!e.to_string().contains("--force"), "{e}");
    assert_eq!(
        std::fs::read_to_string(d.join("notes.txt")).unwrap(),
        "agent overwrote\n"
    );
    turns.reject(&whole(".gitignore", None)).unwrap();
    turns.reject(&whole("notes.txt", None)).unwrap();
    assert_eq!(
        std::fs::read_to_string(d.join("notes.txt")).unwrap(),
        "my notes\n"
    );
}

/// An added or deleted text file's one hunk, as `diff` numbers it, is
/// the whole file: `--hunk 1` rejects or accepts it; a hunk named twice
/// is acted on once, and counts are worded in the singular.
#[test]
fn the_one_hunk_of_an_added_or_deleted_file_is_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    put(d, "old", "old\n");
    let turns = begin(d);
    put(d, "new", "one\ntwo\n");
    std::fs::remove_file(d.join("old")).unwrap();
    let diff = turns.diff(&[]).unwrap();
    assert!(diff.files.iter().all(|f| f.file.hunks == 1));
    let e = turns.reject(&hunks("new", vec![2])).unwrap_err();
    assert!(e.to_string().contains("showed 1 hunk;"), "{e}");
    // Said as the whole file it is.
    let done = turns.reject(&hunks("new", vec![1])).unwrap();
    assert!(done.rejected[0].hunks.is_empty());
    assert!(!d.join("new").exists());
    let accepted = turns.accept(&hunks("old", vec![1, 1])).unwrap();
    assert_eq!(accepted.accepted[0].hunks, [1]);
    assert!(!d.join("old").exists());
    assert!(turns.status(false).unwrap().files.is_empty());
}

/// The open turn's start is kept: `drop` refuses it, `gc` passes it by;
/// once the turn ends, it can be dropped.
#[test]
fn the_open_turns_start_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    put(d, "f", "start\n");
    let turns = begin(d);
    let start = turns.status(false).unwrap().turn.start;
    let cps = turns.checkpoints();
    let e = cps.drop(&start).unwrap_err();
    assert!(
        e.is_refusal() && e.to_string().contains("mend turn end"),
        "{e}"
    );
    cps.gc(Some(0), None).unwrap();
    assert!(cps.get(&start).is_ok());
    put(d, "f", "changed\n");
    assert_eq!(turns.status(false).unwrap().files.len(), 1);
    turns.end().unwrap();
    cps.drop(&start).unwrap();
}

/// A FIFO or a socket put where a file was is a type change, not a
/// deletion: listed as `T` with what it is now, and a whole reject puts
/// the file back over it (neither holds data, and mend never opens a
/// FIFO to wait for a writer), with the rest of the reject.
#[test]
fn a_fifo_or_socket_over_a_file_is_a_type_change_that_a_reject_puts_back() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    put(d, "pipe", "was a file\n");
    put(d, "sock", "also a file\n");
    put(d, "other", "o\n");
    let turns = begin(d);
    std::fs::remove_file(d.join("pipe")).unwrap();
    let mode = rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR;
    rustix::fs::mknodat(
        rustix::fs::CWD,
        d.join("pipe"),
        rustix::fs::FileType::Fifo,
        mode,
        0,
    )
    .unwrap();
    std::fs::remove_file(d.join("sock")).unwrap();
    let listener = std::os::unix::net::UnixListener::bind(d.join("sock")).unwrap();
    put(d, "other", "agent\n");
    let files = turns.status(false).unwrap().files;
    let listed: Vec<(&str, String, Option<&str>)> = files
        .iter()
        .map(|f| (f.path.as_str(), f.status.to_string(), f.change.as_deref()))
        .collect();
    assert_eq!(
        listed,
        [
            ("other", "M".to_owned(), None),
            ("pipe", "T".to_owned(), Some("file → FIFO")),
            ("sock", "T".to_owned(), Some("file → socket")),
        ]
    );
    let done = turns.reject(&Selection::default()).unwrap();
    let rejected: Vec<&str> = done.rejected.iter().map(|a| a.path.as_str()).collect();
    assert_eq!(rejected, ["other", "pipe", "sock"]);
    assert!(done.left.is_empty(), "{:?}", done.left);
    assert_eq!(
        std::fs::read_to_string(d.join("pipe")).unwrap(),
        "was a file\n"
    );
    assert_eq!(
        std::fs::read_to_string(d.join("sock")).unwrap(),
        "also a file\n"
    );
    assert_eq!(std::fs::read_to_string(d.join("other")).unwrap(), "o\n");
    assert!(turns.status(false).unwrap().files.is_empty());
    drop(listener);
}

/// Makes `path` (relative, `/`-separated, longer than the kernel resolves
/// whole) under `root` one folder at a time, and writes `text` there;
/// `None` removes it instead. Returns what it held.
pub(crate) fn deep(root: &Path, path: &str, text: Option<&str>) -> Option<String> {
    use rustix::fs::{AtFlags, Mode, OFlags, mkdirat, openat};
    use std::io::{Read as _, Write as _};
    let dir_flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let mut dir = rustix::fs::open(root, dir_flags, Mode::empty()).unwrap();
    let (folders, name) = path.rsplit_once('/').unwrap();
    for f in folders.split('/') {
        let _ = mkdirat(&dir, f, Mode::from_bits_truncate(0o755));
        dir = openat(&dir, f, dir_flags, Mode::empty()).unwrap();
    }
    let mut was = String::new();
    if let Ok(fd) = openat(&dir, name, OFlags::RDONLY | OFlags::NONBLOCK, Mode::empty()) {
        std::fs::File::from(fd).read_to_string(&mut was).unwrap();
    }
    match text {
        Some(t) => {
            let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC;
            let fd = openat(&dir, name, flags, Mode::from_bits_truncate(0o644)).unwrap();
            std::fs::File::from(fd).write_all(t.as_bytes()).unwrap();
        }
        None => {
            let _ = rustix::fs::unlinkat(&dir, name, AtFlags::empty());
        }
    }
    (!was.is_empty()).then_some(was)
}

/// Puts a FIFO at `path` (as [`deep`] reaches it) in place of what is there.
pub(crate) fn deep_fifo(root: &Path, path: &str) {
    use rustix::fs::{FileType, Mode, OFlags, openat};
    deep(root, path, None);
    let dir_flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let mut dir = rustix::fs::open(root, dir_flags, Mode::empty()).unwrap();
    let (folders, name) = path.rsplit_once('/').unwrap();
    for f in folders.split('/') {
        dir = openat(&dir, f, dir_flags, Mode::empty()).unwrap();
    }
    let mode = Mode::RUSR | Mode::WUSR;
    rustix::fs::mknodat(&dir, name, FileType::Fifo, mode, 0).unwrap();
}

/// Paths longer than `PATH_MAX` are walked, listed and put back through
/// folder descriptors: they never block a whole reject, and its safety
/// checkpoint undoes it.
#[test]
fn paths_longer_than_path_max_are_rejected_through_descriptors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let folders: Vec<String> = (0..20)
        .map(|i| format!("d{i:02}{}", "x".repeat(240)))
        .collect();
    let long = |name: &str| format!("{}/{name}", folders.join("/"));
    assert!(long("f").len() > 4096);
    deep(d, &long("tracked"), Some("start\n"));
    deep(d, &long("pipe"), Some("a file\n"));
    put(d, "short", "s\n");
    let turns = begin(d);
    deep(d, &long("tracked"), Some("agent\n"));
    deep(d, &long("added"), Some("new\n"));
    deep_fifo(d, &long("pipe"));
    put(d, "short", "agent\n");
    let listed: Vec<(String, String)> = (turns.status(false).unwrap().files.iter())
        .map(|f| (f.path.clone(), f.status.to_string()))
        .collect();
    let row = |p: String, s: &str| (p, s.to_owned());
    assert_eq!(
        listed,
        [
            row(long("added"), "A"),
            row(long("pipe"), "T"),
            row(long("tracked"), "M"),
            row("short".to_owned(), "M"),
        ]
    );
    let done = turns.reject(&Selection::default()).unwrap();
    assert!(done.left.is_empty(), "{:?}", done.left);
    assert_eq!(done.rejected.len(), 4);
    assert_eq!(
        deep(d, &long("pipe"), Some("a file\n")).as_deref(),
        Some("a file\n")
    );
    assert_eq!(deep(d, &long("added"), None), None);
    assert_eq!(deep(d, &long("tracked"), None).as_deref(), Some("start\n"));
    assert_eq!(std::fs::read_to_string(d.join("short")).unwrap(), "s\n");
    deep(d, &long("tracked"), Some("start\n"));
    let restored = (turns.checkpoints())
        .restore(&done.safety.id, false, false)
        .unwrap();
    assert!(restored.left.is_empty(), "{:?}", restored.left);
    assert_eq!(deep(d, &long("added"), None).as_deref(), Some("new\n"));
    assert_eq!(deep(d, &long("tracked"), None).as_deref(), Some("agent\n"));
}
