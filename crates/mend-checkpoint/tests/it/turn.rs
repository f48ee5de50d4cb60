//! Turns: rejecting hunks touches only those hunks, a reject is undone
//! exactly by its safety checkpoint, and a person's edit between `diff`
//! and `reject` is never written over.

use std::path::Path;

use mend_checkpoint::turn::{BeginOptions, Selection, Turns};
use mend_test_support::{put, read_tree};
use proptest::prelude::*;

/// A text file as the properties draw it: lines, one ending or mixed
/// ones, a BOM or not, a final newline or not.
#[derive(Debug, Clone)]
struct Text {
    lines: Vec<String>,
    crlf: Vec<bool>,
    bom: bool,
    final_newline: bool,
}

impl Text {
    fn render(&self) -> String {
        let mut out = String::from(if self.bom { "\u{feff}" } else { "" });
        for (i, l) in self.lines.iter().enumerate() {
            out.push_str(l);
            let last = i + 1 == self.lines.len();
            if !last || self.final_newline {
                out.push_str(if self.crlf[i % self.crlf.len()] {
                    "\r\n"
                } else {
                    "\n"
                });
            }
        }
        out
    }
}

fn line() -> impl Strategy<Value = String> {
    // Few distinct lines, so the diff meets repeated lines.
    prop_oneof![
        Just(String::new()),
        Just("}".to_owned()),
        Just("fn x() {".to_owned()),
        "[a-e]{1,3}",
    ]
}

fn text() -> impl Strategy<Value = Text> {
    (
        prop::collection::vec(line(), 0..40),
        prop::collection::vec(prop::bool::weighted(0.3), 1..4),
        any::<bool>(),
        prop::bool::weighted(0.8),
    )
        .prop_map(|(lines, crlf, bom, final_newline)| Text {
            lines,
            crlf,
            bom,
            final_newline,
        })
}

/// Random edits: (what, where, new line).
fn edits() -> impl Strategy<Value = Vec<(u8, usize, String)>> {
    prop::collection::vec((0u8..3, any::<usize>(), line()), 1..8)
}

fn changed(base: &Text, edits: &[(u8, usize, String)], flip_newline: bool) -> Text {
    let mut t = base.clone();
    for (what, at, new) in edits {
        let n = t.lines.len();
        match what {
            0 if n > 0 => t.lines[at % n] = format!("{new}!"),
            1 => t.lines.insert(at % (n + 1), new.clone()),
            2 if n > 0 => {
                t.lines.remove(at % n);
            }
            _ => t.lines.push(new.clone()),
        }
    }
    t.final_newline ^= flip_newline;
    t
}

/// The file with the diff's hunks `reject` reverted, read from the
/// numbered diff text alone: each hunk's `+`/context lines, at its new
/// start, become its `-`/context lines.
fn reverted(current: &str, diff: &str, reject: &[usize]) -> String {
    // (new start, old lines, new lines) of each hunk.
    let mut hunks: Vec<(usize, Vec<String>, Vec<String>)> = Vec::new();
    let mut last = ' ';
    for l in diff.split_inclusive('\n') {
        if let Some(h) = l.strip_prefix("@@ ") {
            let plus = h.split(' ').nth(1).expect("a +start");
            let start: usize = plus[1..].split(',').next().unwrap().parse().unwrap();
            let k: usize = h.rsplit(' ').next().unwrap().trim().parse().unwrap();
            assert_eq!(k, hunks.len() + 1, "hunks are numbered in order");
            hunks.push((start, Vec::new(), Vec::new()));
            continue;
        }
        let Some((_, old, new)) = hunks.last_mut() else {
            continue;
        };
        if l.starts_with("\\ No newline") {
            // The renderer ended the unterminated line before the marker.
            let sides: Vec<&mut Vec<String>> = match last {
                '-' => vec![old],
                '+' => vec![new],
                _ => vec![old, new],
            };
            for side in sides {
                side.last_mut().expect("a line").pop();
            }
            continue;
        }
        let (tag, rest) = l.split_at(1);
        last = tag.chars().next().unwrap_or(' ');
        if tag != "+" {
            old.push(rest.to_owned());
        }
        if tag != "-" {
            new.push(rest.to_owned());
        }
    }
    let mut lines: Vec<String> = current.split_inclusive('\n').map(str::to_owned).collect();
    for (k, (start, old, new)) in hunks.iter().enumerate().rev() {
        if reject.contains(&(k + 1)) {
            // An empty side is numbered after the line it follows.
            let at = if new.is_empty() { *start } else { start - 1 };
            lines.splice(at..at + new.len(), old.iter().cloned());
        }
    }
    lines.concat()
}

fn base_tree(dir: &Path, base: &str) {
    put(dir, "f.txt", base);
    put(dir, "other.txt", "never touched\n");
}

fn begin(dir: &Path) -> Turns {
    let turns = Turns::open(dir).unwrap();
    turns.begin(&BeginOptions::default(), &mut |_| {}).unwrap();
    turns
}

fn select(hunks: Vec<usize>) -> Selection {
    Selection {
        paths: vec!["f.txt".into()],
        hunks,
        seen: None,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Rejecting any hunks gives the file with exactly those hunks
    /// reverted (read from the diff text), touches no other file, and its
    /// safety checkpoint gives back the exact tree.
    #[test]
    fn a_reject_touches_only_its_hunks(
        base in text(),
        edits in edits(),
        flip in prop::bool::weighted(0.2),
        pick in prop::collection::vec(any::<bool>(), 8),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let (old, new) = (base.render(), changed(&base, &edits, flip).render());
        prop_assume!(old != new);
        base_tree(d, &old);
        let turns = begin(d);
        put(d, "f.txt", &new);
        let diffs = turns.diff(&["f.txt".into()]).unwrap();
        let f = &diffs.files[0];
        prop_assert!(f.file.hunks > 0, "{}", f.diff);
        let mut chosen: Vec<usize> = (1..=f.file.hunks).filter(|k| pick[(k - 1) % 8]).collect();
        if chosen.is_empty() {
            chosen.push(1);
        }
        let before = read_tree(d);
        let done = turns.reject(&select(chosen.clone())).unwrap();
        let got = std::fs::read_to_string(d.join("f.txt")).unwrap();
        prop_assert_eq!(&got, &reverted(&new, &f.diff, &chosen));
        if chosen.len() == f.file.hunks {
            prop_assert_eq!(&got, &old);
        }
        let others = |t: Vec<(String, Vec<u8>)>| t.into_iter().filter(|(p, _)| p != "f.txt").collect::<Vec<_>>();
        prop_assert_eq!(others(read_tree(d)), others(before.clone()));
        turns.checkpoints().restore(&done.safety.id, false, false).unwrap();
        prop_assert_eq!(read_tree(d), before);
    }

    /// A person's edit between `diff` and `reject`: an edit inside the
    /// hunk refuses the reject and nothing is written (the safety
    /// checkpoint is dropped too); an edit far from every hunk leaves the
    /// reject to go ahead, and keeps the person's line.
    #[test]
    fn a_person_editing_between_diff_and_reject(
        n in 30usize..60,
        at in 0usize..10,
        far in any::<bool>(),
    ) {
        let base: String = (0..n).map(|i| format!("line {i}\n")).collect();
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        base_tree(d, &base);
        let turns = begin(d);
        let agent = base.replace(&format!("line {at}\n"), &format!("agent {at}\n"));
        put(d, "f.txt", &agent);
        let f = turns.diff(&["f.txt".into()]).unwrap().files.remove(0);
        prop_assert_eq!(f.file.hunks, 1);
        let target = if far { n - 1 } else { at };
        let from = if far { format!("line {target}\n") } else { format!("agent {at}\n") };
        let person = agent.replace(&from, "person\n");
        put(d, "f.txt", &person);
        let checkpoints = turns.checkpoints().list().unwrap().len();
        let result = turns.reject(&select(vec![1]));
        let got = std::fs::read_to_string(d.join("f.txt")).unwrap();
        if far {
            prop_assert!(result.is_ok(), "{:?}", result.err());
            prop_assert_eq!(got, base.replace(&format!("line {target}\n"), "person\n"));
        } else {
            let e = result.unwrap_err();
            prop_assert!(e.is_refusal(), "{e}");
            prop_assert!(e.to_string().contains("changed since"), "{e}");
            prop_assert_eq!(got, person);
            prop_assert_eq!(turns.checkpoints().list().unwrap().len(), checkpoints);
        }
    }
}

/// Accepting a hunk takes it out of the diff and writes nothing; the
/// other hunk is still numbered and still rejectable.
#[test]
fn accepted_hunks_leave_the_diff() {
    let base: String = (0..30).map(|i| format!("line {i}\n")).collect();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    base_tree(d, &base);
    let turns = begin(d);
    let agent = base
        .replace("line 2\n", "two\n")
        .replace("line 25\n", "twenty-five\n");
    put(d, "f.txt", &agent);
    assert_eq!(turns.diff(&[]).unwrap().files[0].file.hunks, 2);
    turns.accept(&select(vec![1])).unwrap();
    assert_eq!(std::fs::read_to_string(d.join("f.txt")).unwrap(), agent);
    let left = turns.diff(&[]).unwrap();
    assert_eq!(left.files[0].file.hunks, 1);
    assert!(
        left.files[0].diff.contains("+twenty-five"),
        "{}",
        left.files[0].diff
    );
    turns.reject(&select(vec![1])).unwrap();
    assert_eq!(
        std::fs::read_to_string(d.join("f.txt")).unwrap(),
        base.replace("line 2\n", "two\n")
    );
    assert!(turns.status(false).unwrap().files.is_empty());
}

/// A state file that cannot be read is a clear error; the start
/// checkpoint is kept, and `end` or `begin` gets past it.
#[test]
fn a_corrupt_state_loses_no_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    base_tree(d, "a\n");
    let turns = begin(d);
    let start = turns.status(false).unwrap().turn.start;
    std::fs::write(d.join(".mend/turn.json"), b"{ not json").unwrap();
    let e = turns.status(false).unwrap_err().to_string();
    assert!(
        e.contains("turn.json carries no seal") && e.contains("mend turn end"),
        "{e}"
    );
    assert!(turns.checkpoints().get(&start).is_ok());
    let begun = turns.begin(&BeginOptions::default(), &mut |_| {}).unwrap();
    assert!(begun.replaced.is_some());
    assert!(turns.checkpoints().get(&start).is_ok());
    std::fs::write(d.join(".mend/turn.json"), b"[]").unwrap();
    assert!(turns.end().unwrap().turn.is_none());
    assert!(turns.end().unwrap_err().is_refusal());
}

/// Beginning while a turn is open ends it first and says so; an ended
/// turn's start is still a checkpoint, whose restore rewinds the whole
/// turn and is itself undoable.
#[test]
fn an_ended_turn_can_still_be_rewound() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    base_tree(d, "start\n");
    let turns = begin(d);
    let first = turns.status(false).unwrap().turn;
    let again = turns.begin(&BeginOptions::default(), &mut |_| {}).unwrap();
    assert_eq!(again.ended, Some(first.clone()));
    put(d, "f.txt", "changed\n");
    put(d, "made.txt", "new\n");
    std::fs::remove_file(d.join("other.txt")).unwrap();
    let changed = read_tree(d);
    let ended = turns.end().unwrap().turn.unwrap();
    let restored = turns
        .checkpoints()
        .restore(&ended.start, false, false)
        .unwrap();
    let expected = vec![
        ("f.txt".to_owned(), b"start\n".to_vec()),
        ("other.txt".to_owned(), b"never touched\n".to_vec()),
    ];
    assert_eq!(read_tree(d), expected);
    let undo = restored.safety.unwrap();
    turns.checkpoints().restore(&undo.id, false, false).unwrap();
    assert_eq!(read_tree(d), changed);
    assert!(turns.checkpoints().get(&first.start).is_ok());
}

/// The inode of the turn's state file (it is replaced whole, by a rename,
/// whenever it is written).
fn state_inode(d: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::metadata(d.join(".mend/turn.json")).unwrap().ino()
}

/// `diff` (which editors and panels call on every refresh) writes the
/// turn's state only when what it showed changed.
#[test]
fn a_diff_that_shows_the_same_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    base_tree(d, "a\nb\nc\n");
    let turns = begin(d);
    put(d, "f.txt", "a\nB\nc\n");
    turns.diff(&[]).unwrap();
    let written = state_inode(d);
    turns.diff(&[]).unwrap();
    turns.diff(&["f.txt".into()]).unwrap();
    assert_eq!(state_inode(d), written, "the same diff rewrote turn.json");
    put(d, "f.txt", "A\nB\nc\n");
    turns.diff(&[]).unwrap();
    assert_ne!(state_inode(d), written, "a new hunk was not recorded");
}

/// The refs under `refs/mend/turns/` and what they point at.
fn turn_refs(d: &Path) -> Vec<(String, git2::Oid)> {
    let repo = git2::Repository::open(d).unwrap();
    repo.references_glob("refs/mend/turns/*")
        .unwrap()
        .map(|r| r.unwrap())
        .map(|r| (r.name().unwrap().to_owned(), r.target().unwrap()))
        .collect()
}

/// An accepted hunk's blob is in no checkpoint: the open turn holds it in
/// a ref of its own (a commit of the review base), so git's gc, even one
/// that prunes everything unreachable at once, leaves the turn whole. The
/// ref goes when the turn ends.
#[test]
fn accepted_hunks_survive_git_gc_while_the_turn_is_open() {
    let base: String = (0..30).map(|i| format!("line {i}\n")).collect();
    let dir =
        mend_test_support::repo(&[("f.txt", base.as_str()), ("other.txt", "never touched\n")]);
    let d = dir.path();
    let turns = begin(d);
    let agent = base
        .replace("line 2\n", "two\n")
        .replace("line 25\n", "twenty-five\n");
    put(d, "f.txt", &agent);
    turns.diff(&[]).unwrap();
    turns.accept(&select(vec![1])).unwrap();
    let refs = turn_refs(d);
    assert_eq!(refs.len(), 1, "{refs:?}");
    let repo = git2::Repository::open(d).unwrap();
    assert!(refs[0].0.len() <= 64);
    assert!(repo.find_commit(refs[0].1).is_ok());
    drop(repo);
    // Nothing but refs keeps an object: the worktree's blobs are written
    // only by mend's snapshots.
    mend_test_support::git(d, &["reflog", "expire", "--expire=now", "--all"]);
    mend_test_support::git(d, &["gc", "-q", "--prune=now"]);
    let left = turns.diff(&[]).unwrap();
    assert_eq!(left.files[0].file.hunks, 1);
    assert!(left.files[0].diff.contains("+twenty-five"));
    turns.end().unwrap();
    assert!(turn_refs(d).is_empty());
}
