//! Every snapshot against the shell recipe it replaces, on the same
//! worktree:
//!
//! ```text
//! GIT_INDEX_FILE=tmp git read-tree HEAD && GIT_INDEX_FILE=tmp git add -A &&
//! GIT_INDEX_FILE=tmp git write-tree
//! ```
//!
//! Random sequences of creates, modifications (same size, in the same clock
//! tick as the last snapshot included), deletions, renames, mode changes,
//! links, `.gitignore` changes (ignoring files HEAD tracks included),
//! file↔folder swaps and new nested folders; after every step the
//! checkpoint's tree must be the recipe's, id for id.

use std::path::Path;

use mend_checkpoint::{Checkpoints, CreateOptions};

use super::{git, git_with, put};

/// `put`, skipped when a folder on the way is a file now.
fn try_put(dir: &Path, rel: &str, bytes: &[u8]) {
    let p = dir.join(rel);
    if std::fs::create_dir_all(p.parent().unwrap()).is_ok() && !p.is_dir() {
        std::fs::write(p, bytes).unwrap();
    }
}

/// A small deterministic generator (xorshift), so a failing sequence can be
/// replayed from its number.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
}

const DIRS: &[&str] = &["", "src", "src/a", "docs", "build", "d1/d2/d3", "logs"];
const NAMES: &[&str] = &["x.txt", "y.rs", "a.log", "keep.log", "z", "m.md"];
const IGNORES: &[&str] = &[
    "*.log\n",
    "build/\n",
    "*.log\n!keep.log\n",
    "d1/\n",
    "src/a/\n",
    "z\n",
    "",
];

fn recipe(dir: &Path) -> String {
    recipe_with(dir, &dir.join(".git/recipe-index"))
}

/// [`recipe`] with its index file at `index`.
fn recipe_with(dir: &Path, index: &Path) -> String {
    let _ = std::fs::remove_file(index);
    let run = |args: &[&str]| git_with(dir, &[("GIT_INDEX_FILE", index)], args);
    // No branch yet: the recipe starts from an empty index.
    if git(dir, &["for-each-ref", "--count=1", "refs/heads"]).is_empty() {
        run(&["read-tree", "--empty"]);
    } else {
        run(&["read-tree", "HEAD"]);
    }
    run(&["add", "-A"]);
    run(&["write-tree"]).trim().to_owned()
}

fn files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
            // The worktree's own files: mend's folder is not the
            // project's, and one whose mark is gone is refused.
            if rel == ".git" || rel == ".mend" {
                continue;
            }
            if e.file_type().unwrap().is_dir() {
                stack.push(p);
            } else {
                out.push(rel);
            }
        }
    }
    out.sort();
    out
}

fn path(rng: &mut Rng) -> String {
    let (d, n) = (rng.pick(DIRS), rng.pick(NAMES));
    if d.is_empty() {
        n.to_owned()
    } else {
        format!("{d}/{n}")
    }
}

/// One random change to the worktree.
fn step(dir: &Path, rng: &mut Rng, round: usize) {
    let existing = files(dir);
    let any =
        |rng: &mut Rng| (!existing.is_empty()).then(|| existing[rng.below(existing.len())].clone());
    match rng.below(11) {
        0 | 1 => try_put(
            dir,
            &path(rng),
            format!("new {round} {}\n", rng.next()).as_bytes(),
        ),
        2 => {
            // Same size, right after the last snapshot.
            if let Some(f) = any(rng) {
                let p = dir.join(&f);
                if let Ok(old) = std::fs::read(&p) {
                    let mut new = old.clone();
                    if let Some(b) = new.first_mut() {
                        *b = if *b == b'Q' { b'R' } else { b'Q' };
                    }
                    std::fs::write(&p, new).unwrap();
                }
            }
        }
        3 => {
            if let Some(f) = any(rng) {
                let _ = std::fs::remove_file(dir.join(f));
            }
        }
        4 => {
            if let Some(f) = any(rng) {
                let to = dir.join(path(rng));
                if std::fs::create_dir_all(to.parent().unwrap()).is_ok() {
                    let _ = std::fs::rename(dir.join(f), to);
                }
            }
        }
        5 => {
            if let Some(f) = any(rng) {
                use std::os::unix::fs::PermissionsExt as _;
                let p = dir.join(f);
                if let Ok(m) = std::fs::symlink_metadata(&p)
                    && m.is_file()
                {
                    let mode = m.permissions().mode() ^ 0o100;
                    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
                }
            }
        }
        6 => {
            let link = dir.join(path(rng));
            let _ = std::fs::create_dir_all(link.parent().unwrap());
            let _ = std::os::unix::fs::symlink(format!("../target{}", rng.below(3)), link);
        }
        7 => {
            let d = rng.pick(&["", "src", "d1"]);
            let p = if d.is_empty() {
                ".gitignore".to_owned()
            } else {
                format!("{d}/.gitignore")
            };
            try_put(dir, &p, rng.pick(IGNORES).as_bytes());
        }
        8 => {
            // A file where a folder was, or a folder where a file was.
            let d = rng.pick(&["docs", "logs", "src/a"]);
            let p = dir.join(d);
            if p.is_dir() {
                let _ = std::fs::remove_dir_all(&p);
                try_put(dir, d, b"now a file\n");
            } else {
                let _ = std::fs::remove_file(&p);
                try_put(dir, &format!("{d}/inner.txt"), b"now a folder\n");
            }
        }
        9 => try_put(dir, &format!("n{round}/o/p/q/deep.txt"), b"deep\n"),
        _ => {
            if let Some(f) = any(rng) {
                try_put(
                    dir,
                    &f,
                    format!("changed {round} {}\n", rng.next()).as_bytes(),
                );
            }
        }
    }
}

fn sequence(seed: u64) {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    git(dir, &["init", "-q", "."]);
    // mend's own folder is never in a snapshot; tell the recipe too.
    put(dir, ".git/info/exclude", b".mend/\n");
    for _ in 0..6 {
        try_put(
            dir,
            &path(&mut rng),
            format!("base {}\n", rng.next()).as_bytes(),
        );
    }
    if rng.below(4) != 0 {
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", "base"]);
    }
    for round in 0..6 {
        let cps = Checkpoints::open(dir).unwrap();
        let cp = cps.create(&CreateOptions::default(), &mut |_| {}).unwrap();
        let ours = git(dir, &["rev-parse", &format!("{}^{{tree}}", cp.commit)]);
        let theirs = recipe(dir);
        if ours.trim() != theirs {
            let diff = git(dir, &["diff-tree", "-r", &theirs, ours.trim()]);
            panic!(
                "sequence {seed}, round {round}: the snapshot differs from the recipe (recipe → mend):\n{diff}"
            );
        }
        step(dir, &mut rng, round);
    }
}

/// 4 × 60 sequences of six snapshots each.
fn sequences(part: u64) {
    for seed in part * 60..(part + 1) * 60 {
        sequence(seed);
    }
}

#[test]
fn snapshots_match_the_recipe_0() {
    sequences(0);
}

#[test]
fn snapshots_match_the_recipe_1() {
    sequences(1);
}

#[test]
fn snapshots_match_the_recipe_2() {
    sequences(2);
}

#[test]
fn snapshots_match_the_recipe_3() {
    sequences(3);
}

/// A checkpoint's tree against the recipe's in `dir`, with the recipe's
/// index kept outside the worktree (a linked worktree's `.git` is a file).
fn same_as_git(dir: &Path, what: &str) {
    let index = tempfile::tempdir().unwrap();
    let cps = Checkpoints::open(dir).unwrap();
    let cp = cps.create(&CreateOptions::default(), &mut |_| {}).unwrap();
    let ours = git(dir, &["rev-parse", &format!("{}^{{tree}}", cp.commit)]);
    let theirs = recipe_with(dir, &index.path().join("index"));
    let diff = git(dir, &["diff-tree", "-r", &theirs, ours.trim()]);
    assert_eq!(ours.trim(), theirs, "{what}: recipe → mend:\n{diff}");
}

/// Rules from everywhere git reads them: `core.excludesFile` set in the
/// repository's own configuration, `info/exclude` of the repository a
/// linked worktree belongs to, and `.gitignore` links, which git does not
/// follow (so their rules do not apply).
#[test]
fn ignore_rules_come_from_where_git_reads_them() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let main = tmp.path().join("main");
    std::fs::create_dir(&main).unwrap();
    git(&main, &["init", "-q", "-b", "main", "."]);
    put(&main, ".git/info/exclude", b".mend/\n*.tmp\n");
    put(outside.path(), "excludes", b"*.zz\n");
    put(outside.path(), "rules", b"*.log\n");
    let excludes = outside.path().join("excludes");
    git(
        &main,
        &["config", "core.excludesFile", excludes.to_str().unwrap()],
    );
    for (rel, body) in [
        ("a.zz", "x"),
        ("b.tmp", "x"),
        ("c.log", "x"),
        ("sub/d.log", "x"),
        ("e.txt", "x"),
    ] {
        put(&main, rel, body.as_bytes());
    }
    let rules = outside.path().join("rules");
    std::os::unix::fs::symlink(&rules, main.join(".gitignore")).unwrap();
    std::os::unix::fs::symlink(&rules, main.join("sub/.gitignore")).unwrap();
    same_as_git(&main, "a repository");
    git(&main, &["add", "e.txt"]);
    git(&main, &["commit", "-q", "-m", "base"]);
    let linked = tmp.path().join("linked");
    git(&main, &["worktree", "add", "-q", linked.to_str().unwrap()]);
    for (rel, body) in [
        ("f.tmp", "x"),
        ("g.zz", "x"),
        ("h.log", "x"),
        ("i.txt", "x"),
    ] {
        put(&linked, rel, body.as_bytes());
    }
    std::os::unix::fs::symlink(&rules, linked.join(".gitignore")).unwrap();
    same_as_git(&linked, "a linked worktree");
}
