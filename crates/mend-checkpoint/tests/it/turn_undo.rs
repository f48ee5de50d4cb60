//! `Turns::undo` (issue 40): the last reject or accept undone path by
//! path, by compare and swap, keeping every change made after it, where
//! the reject's safety checkpoint would rewind the whole worktree.

use std::path::Path;

use mend_checkpoint::turn::{BeginOptions, Selection, Turns};
use mend_test_support::{git, put};

fn begin(dir: &Path) -> Turns {
    let turns = Turns::open(dir).unwrap();
    turns.begin(&BeginOptions::default(), &mut |_| {}).unwrap();
    turns
}

fn paths(paths: &[&str]) -> Selection {
    Selection {
        paths: paths.iter().map(|p| (*p).to_owned()).collect(),
        ..Selection::default()
    }
}

fn read(d: &Path, rel: &str) -> Option<String> {
    std::fs::read_to_string(d.join(rel)).ok()
}

/// A repository with `a`, `b` and `c` committed.
fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    put(d, "a", "a start\n");
    put(d, "b", "b start\n");
    put(d, "c", "c start\n");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "start"]);
    dir
}

/// Undoing a reject puts back what it replaced, on exactly its paths (an
/// edit, a creation, a deletion), and keeps what was done after it
/// elsewhere; a second undo has nothing to undo.
#[test]
fn an_undo_gives_back_the_reject_and_keeps_later_work() {
    let dir = repo();
    let d = dir.path();
    let turns = begin(d);
    put(d, "a", "a agent\n");
    put(d, "b", "b agent\n");
    put(d, "new", "made by the agent\n");
    std::fs::remove_file(d.join("c")).unwrap();
    let rejected = turns.reject(&paths(&["a", "new", "c"])).unwrap();
    assert_eq!(rejected.rejected.len(), 3);
    assert_eq!(read(d, "a").as_deref(), Some("a start\n"));
    assert_eq!(read(d, "new"), None);
    assert_eq!(read(d, "c").as_deref(), Some("c start\n"));
    // Work after the reject, elsewhere.
    put(d, "b", "b agent, then the person\n");
    put(d, "later", "written after the reject\n");
    let undone = turns.undo().unwrap();
    assert_eq!(undone.undone, "reject");
    assert!(undone.left.is_empty(), "{:?}", undone.left);
    let changed: Vec<(String, String)> = undone
        .changes
        .iter()
        .map(|c| (c.path.clone(), c.status.to_string()))
        .collect();
    let want = [("a", "M"), ("c", "D"), ("new", "A")];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(p, s)| ((*p).to_owned(), (*s).to_owned()))
        .collect();
    assert_eq!(changed, want);
    assert_eq!(read(d, "a").as_deref(), Some("a agent\n"));
    assert_eq!(read(d, "new").as_deref(), Some("made by the agent\n"));
    assert_eq!(read(d, "c"), None);
    assert_eq!(read(d, "b").as_deref(), Some("b agent, then the person\n"));
    assert_eq!(
        read(d, "later").as_deref(),
        Some("written after the reject\n")
    );
    let again = turns.undo().unwrap_err();
    assert!(again.is_refusal(), "{again}");
    assert!(again.to_string().contains("nothing to undo"), "{again}");
}

/// A path written since the reject is refused, not overwritten: it keeps
/// the new bytes and is named; the reject's other paths are undone. When
/// every path changed, nothing is written and no checkpoint is left.
#[test]
fn an_undo_never_overwrites_a_path_changed_since() {
    let dir = repo();
    let d = dir.path();
    let turns = begin(d);
    put(d, "a", "a agent\n");
    put(d, "b", "b agent\n");
    turns.reject(&paths(&["a", "b"])).unwrap();
    put(d, "a", "a typed after the reject\n");
    let undone = turns.undo().unwrap();
    assert_eq!(read(d, "a").as_deref(), Some("a typed after the reject\n"));
    assert_eq!(read(d, "b").as_deref(), Some("b agent\n"));
    let left: Vec<&str> = undone.left.iter().map(|l| l.path.as_str()).collect();
    assert_eq!(left, ["a"]);
    assert!(undone.left[0].reason.contains("changed since the reject"));

    turns.reject(&paths(&["a"])).unwrap();
    put(d, "a", "typed again\n");
    let checkpoints = turns.checkpoints().list().unwrap().len();
    let e = turns.undo().unwrap_err();
    assert!(
        e.is_refusal() && e.to_string().contains("nothing was undone"),
        "{e}"
    );
    assert_eq!(read(d, "a").as_deref(), Some("typed again\n"));
    assert_eq!(turns.checkpoints().list().unwrap().len(), checkpoints);
}

/// A hunk reject's undo gives back the hunk, keeping an edit made since
/// in another file.
#[test]
fn an_undo_gives_back_a_rejected_hunk() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    let base: String = (1..=30).map(|i| format!("{i}\n")).collect();
    put(d, "f", &base);
    put(d, "g", "g\n");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "start"]);
    let turns = begin(d);
    let edit = |lines: &[usize]| -> String {
        (1..=30)
            .map(|i| match lines.contains(&i) {
                true => format!("{i} changed\n"),
                false => format!("{i}\n"),
            })
            .collect()
    };
    let agent = edit(&[2, 28]);
    put(d, "f", &agent);
    turns.diff(&["f".to_owned()]).unwrap();
    let sel = Selection {
        hunks: vec![2],
        ..paths(&["f"])
    };
    turns.reject(&sel).unwrap();
    assert_eq!(read(d, "f").unwrap(), edit(&[2]));
    put(d, "g", "g since\n");
    turns.undo().unwrap();
    assert_eq!(read(d, "f").unwrap(), agent);
    assert_eq!(read(d, "g").as_deref(), Some("g since\n"));
}

/// Undoing an accept puts the file back in review; nothing is written.
#[test]
fn an_undo_reopens_what_an_accept_took() {
    let dir = repo();
    let d = dir.path();
    let turns = begin(d);
    put(d, "a", "a agent\n");
    put(d, "b", "b agent\n");
    turns.accept(&paths(&["a"])).unwrap();
    let listed = |t: &Turns| -> Vec<String> {
        t.status(false)
            .unwrap()
            .files
            .into_iter()
            .map(|f| f.path)
            .collect()
    };
    assert_eq!(listed(&turns), ["b"]);
    let undone = turns.undo().unwrap();
    assert_eq!(undone.undone, "accept");
    assert_eq!(undone.reopened, ["a"]);
    assert!(undone.changes.is_empty());
    assert_eq!(listed(&turns), ["a", "b"]);
    assert_eq!(read(d, "a").as_deref(), Some("a agent\n"));
}

/// The changes an outcome lists, as (path, letter).
fn letters(changes: &[mend_checkpoint::FileChange]) -> Vec<(String, String)> {
    changes
        .iter()
        .map(|c| (c.path.clone(), c.status.to_string()))
        .collect()
}

fn rows(want: &[(&str, &str)]) -> Vec<(String, String)> {
    want.iter()
        .map(|(p, s)| ((*p).to_owned(), (*s).to_owned()))
        .collect()
}

/// Names a workspace change cannot carry (a backslash, a tab, a byte
/// that is not UTF-8), which a reject writes beside its transaction: the
/// reject lists a file it modified as `M`, not `A`, and the undo puts
/// each back, by compare and swap, with the ordinary file beside them;
/// alone, such a file is undone too (not "already as it was").
#[test]
fn an_undo_gives_back_files_with_odd_names() {
    use std::os::unix::ffi::OsStrExt as _;
    let dir = repo();
    let d = dir.path();
    let latin = d.join(std::ffi::OsStr::from_bytes(b"caf\xe9"));
    std::fs::write(&latin, "latin start\n").unwrap();
    put(d, "back\\slash", "slash start\n");
    put(d, "tab\tname", "tab start\n");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "odd names"]);
    let turns = begin(d);
    std::fs::write(&latin, "latin agent\n").unwrap();
    put(d, "back\\slash", "slash agent\n");
    put(d, "tab\tname", "tab agent\n");
    put(d, "a", "a agent\n");
    let rejected = turns.reject(&Selection::default()).unwrap();
    assert!(rejected.left.is_empty(), "{:?}", rejected.left);
    let want = rows(&[
        ("a", "M"),
        ("back\\\\slash", "M"),
        ("caf\\xe9", "M"),
        ("tab\\tname", "M"),
    ]);
    assert_eq!(letters(&rejected.changes), want);
    assert_eq!(read(d, "back\\slash").as_deref(), Some("slash start\n"));
    let undone = turns.undo().unwrap();
    assert!(undone.left.is_empty(), "{:?}", undone.left);
    assert_eq!(letters(&undone.changes), want);
    assert_eq!(std::fs::read_to_string(&latin).unwrap(), "latin agent\n");
    assert_eq!(read(d, "back\\slash").as_deref(), Some("slash agent\n"));
    assert_eq!(read(d, "tab\tname").as_deref(), Some("tab agent\n"));
    assert_eq!(read(d, "a").as_deref(), Some("a agent\n"));

    // Alone; and one written since the reject is left, named, not
    // overwritten.
    turns
        .reject(&paths(&["back\\\\slash", "tab\\tname"]))
        .unwrap();
    put(d, "tab\tname", "typed after the reject\n");
    let undone = turns.undo().unwrap();
    assert_eq!(letters(&undone.changes), rows(&[("back\\\\slash", "M")]));
    let left: Vec<&str> = undone.left.iter().map(|l| l.path.as_str()).collect();
    assert_eq!(left, ["tab\\tname"]);
    assert_eq!(read(d, "back\\slash").as_deref(), Some("slash agent\n"));
    assert_eq!(
        read(d, "tab\tname").as_deref(),
        Some("typed after the reject\n")
    );
}

/// Paths longer than `PATH_MAX` are undone through descriptors, with the
/// ordinary ones beside them: none blocks the rest. The reject lists the
/// long file it modified as `M`.
#[test]
fn an_undo_gives_back_paths_longer_than_path_max() {
    use super::turn_edges::deep;
    let dir = repo();
    let d = dir.path();
    let folders: Vec<String> = (0..20)
        .map(|i| format!("d{i:02}{}", "x".repeat(240)))
        .collect();
    let long = |name: &str| format!("{}/{name}", folders.join("/"));
    // Untracked (git cannot add it), but in the turn's start.
    deep(d, &long("tracked"), Some("start\n"));
    let turns = begin(d);
    deep(d, &long("tracked"), Some("agent\n"));
    deep(d, &long("added"), Some("new\n"));
    put(d, "a", "a agent\n");
    let rejected = turns.reject(&Selection::default()).unwrap();
    assert!(rejected.left.is_empty(), "{:?}", rejected.left);
    let added = long("added");
    let tracked = long("tracked");
    let want = rows(&[("a", "M"), (&added, "D"), (&tracked, "M")]);
    assert_eq!(letters(&rejected.changes), want);
    assert_eq!(deep(d, &long("added"), None), None);
    let undone = turns.undo().unwrap();
    assert!(undone.left.is_empty(), "{:?}", undone.left);
    let want = rows(&[("a", "M"), (&added, "A"), (&tracked, "M")]);
    assert_eq!(letters(&undone.changes), want);
    assert_eq!(read(d, "a").as_deref(), Some("a agent\n"));
    assert_eq!(deep(d, &long("added"), None).as_deref(), Some("new\n"));
    assert_eq!(deep(d, &long("tracked"), None).as_deref(), Some("agent\n"));
}

/// A reject that put a file back over a FIFO is undone by removing the
/// file; the FIFO is not made again, and the undo says so.
#[test]
fn an_undo_over_a_fifo_says_the_fifo_is_not_made_again() {
    let dir = repo();
    let d = dir.path();
    let turns = begin(d);
    std::fs::remove_file(d.join("a")).unwrap();
    let mode = rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR;
    rustix::fs::mknodat(
        rustix::fs::CWD,
        d.join("a"),
        rustix::fs::FileType::Fifo,
        mode,
        0,
    )
    .unwrap();
    turns.reject(&paths(&["a"])).unwrap();
    assert_eq!(read(d, "a").as_deref(), Some("a start\n"));
    let undone = turns.undo().unwrap();
    assert_eq!(letters(&undone.changes), rows(&[("a", "D")]));
    assert!(!d.join("a").exists());
    let [note] = &undone.left[..] else {
        panic!("{:?}", undone.left);
    };
    assert_eq!(note.path, "a");
    assert!(
        note.reason.contains("FIFO") && note.reason.contains("not made again"),
        "{}",
        note.reason
    );
}
