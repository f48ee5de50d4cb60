//! Checkpoints of generated repositories of 20,000 and 200,000 files,
//! against the usual shell recipe for a snapshot commit, in the same run:
//!
//! ```text
//! GIT_INDEX_FILE=tmp git read-tree HEAD && GIT_INDEX_FILE=tmp git add -A &&
//! GIT_INDEX_FILE=tmp git write-tree && git commit-tree …
//! ```
//!
//! - `first`: the first checkpoint of a fresh clone-like repository (no
//!   snapshot state yet; every file committed, so the index vouches for
//!   their ids).
//! - `first_without_git`: the first checkpoint of a folder that is no git
//!   repository (a shadow repository; every file hashed and stored, in
//!   one pack).
//! - `git_init_add_write_tree`: the same folder stored by git, `git init
//!   && git add -A && git write-tree` (the target: `first_without_git` at
//!   most half of it).
//! - `repeat_after_10_changes`: a checkpoint after 10 files changed.
//! - `shell_recipe_after_10_changes`: the recipe, which starts from a
//!   fresh index every time (so its first run costs the same).
//! - `narrowed_after_10_changes`: a checkpoint after 10 files changed, by
//!   a long-lived `Checkpoints` told which 10 (as a process with a watcher
//!   tells it; the target: at most 15 ms at 200,000 files).
//!
//! And `mend turn begin` and `mend turn status` against `git status
//! --porcelain` in the same run (the target: each at most 1.2× git's
//! time):
//!
//! - `turn_begin_after_10_changes`: a turn's start (a checkpoint) after
//!   10 files changed.
//! - `turn_status_after_10_changes`: a turn's status after 10 more files
//!   changed in it (the changes of a turn add up, as an agent's do).
//! - `git_status_after_10_changes`: `git status --porcelain` after 10
//!   files changed.
//!
//! And what an agent's Stop hook asks after a turn that reshuffled the
//! lines of 40 files of 1 MB (issue 40: 29 s, against Claude Code's 30 s
//! hook timeout; the target: at most 2 s), each run after a new rewrite
//! and opening the turns as the hook's process does:
//!
//! - `turn_summary_40_files_of_1mb_rewritten`: `Turns::summary`, the
//!   hook's counts (no file read, no hunk counted).
//! - `turn_status_40_files_of_1mb_rewritten`: `Turns::status`, which
//!   counts every file's hunks.
//!
//! Run: `cargo bench -p mend-checkpoint --bench checkpoint` (add `turn`
//! or `status` to run only those).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use mend_checkpoint::turn::{BeginOptions, Turns};
use mend_checkpoint::{Checkpoints, CreateOptions, Hint, Scan};

const SIZES: &[usize] = &[20_000, 200_000];

/// Repositories by size, made once and removed at the end.
static REPOS: Mutex<Vec<(usize, bool, PathBuf)>> = Mutex::new(Vec::new());

fn main() {
    divan::main();
    for (_, _, p) in REPOS.lock().unwrap().drain(..) {
        let _ = std::fs::remove_dir_all(p);
    }
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=b", "-c", "user.email=b@b"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

fn file(d: &Path, i: usize) -> PathBuf {
    // 50 files per folder, two levels deep, as in a source tree.
    let f = i / 50;
    d.join(format!("pkg{}/mod{}/file{i}.rs", f / 20, f % 20))
}

/// A repository of `n` files, committed (or, without `git`, a plain
/// folder), shared by the benchmarks of that size.
fn repo(n: usize, with_git: bool) -> PathBuf {
    let mut repos = REPOS.lock().unwrap();
    if let Some((_, _, p)) = repos.iter().find(|(m, g, _)| *m == n && *g == with_git) {
        return p.clone();
    }
    let d = tempfile::tempdir().unwrap().keep();
    for i in 0..n {
        let p = file(&d, i);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, format!("pub fn f{i}() -> u32 {{ {i} }}\n")).unwrap();
    }
    if with_git {
        git(&d, &["init", "-q", "."]);
        git(&d, &["add", "-A"]);
        git(&d, &["commit", "-q", "-m", "init"]);
        // git's own index is fresh, as after any git command.
        git(&d, &["status", "--porcelain"]);
    }
    // Written back now, not while the next benchmarks run: writeback of a
    // new 200,000-file tree slowed the 20,000-file runs after it.
    assert!(Command::new("sync").status().unwrap().success());
    repos.push((n, with_git, d.clone()));
    d
}

/// Changes 10 files; their paths, relative to `d`.
fn touch10(d: &Path, n: usize, round: usize) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    for k in 0..10 {
        let i = (k * 1999 + round * 7) % n;
        std::fs::write(file(d, i), format!("pub fn f{i}() -> u32 {{ {round} }}\n")).unwrap();
        paths.push(file(d, i).strip_prefix(d).unwrap().to_path_buf());
    }
    paths
}

fn checkpoint(d: &Path) {
    let cps = Checkpoints::open(d).unwrap();
    cps.create(&CreateOptions::default(), &mut |_| {}).unwrap();
}

fn forget_state(d: &Path) {
    let _ = std::fs::remove_file(d.join(".git/mend/snapshot-state"));
    let _ = std::fs::remove_file(d.join(".mend/shadow.git/mend-snapshot-state"));
}

#[divan::bench(args = SIZES, sample_count = 5, sample_size = 1)]
fn first(bencher: divan::Bencher<'_, '_>, n: usize) {
    let d = repo(n, true);
    bencher
        .with_inputs(|| forget_state(&d))
        .bench_values(|()| checkpoint(&d));
}

/// A folder without git again: no shadow repository, no `.git`.
fn without_git(d: &Path) {
    let _ = std::fs::remove_dir_all(d.join(".mend"));
    let _ = std::fs::remove_dir_all(d.join(".git"));
}

#[divan::bench(args = SIZES, sample_count = 3, sample_size = 1)]
fn first_without_git(bencher: divan::Bencher<'_, '_>, n: usize) {
    let d = repo(n, false);
    bencher
        // A new shadow repository each time: every object written.
        .with_inputs(|| without_git(&d))
        .bench_values(|()| checkpoint(&d));
}

#[divan::bench(args = SIZES, sample_count = 3, sample_size = 1)]
fn git_init_add_write_tree(bencher: divan::Bencher<'_, '_>, n: usize) {
    let d = repo(n, false);
    bencher.with_inputs(|| without_git(&d)).bench_values(|()| {
        let out = Command::new("sh")
            .current_dir(&d)
            .arg("-c")
            .arg("git init -q . && git add -A && git write-tree")
            .output()
            .unwrap();
        assert!(out.status.success());
    });
}

/// Includes opening the repository, as `mend checkpoint create` does.
#[divan::bench(args = SIZES, sample_count = 20, sample_size = 1)]
fn repeat_after_10_changes(bencher: divan::Bencher<'_, '_>, n: usize) {
    let d = repo(n, true);
    checkpoint(&d);
    let round = AtomicUsize::new(0);
    bencher
        .with_inputs(|| touch10(&d, n, round.fetch_add(1, Ordering::Relaxed) + 1))
        .bench_values(|_| checkpoint(&d));
}

/// Without opening the repository: the process that watches holds it.
#[divan::bench(args = SIZES, sample_count = 20, sample_size = 1)]
fn narrowed_after_10_changes(bencher: divan::Bencher<'_, '_>, n: usize) {
    let d = repo(n, true);
    let cps = Checkpoints::open(&d).unwrap();
    let opts = CreateOptions::default();
    let lock = cps.lock().unwrap();
    let mut state = cps
        .create_hinted(&lock, &opts, None, &mut |_| {})
        .unwrap()
        .state;
    drop(lock);
    let mut round = 5000;
    bencher
        .with_inputs(|| {
            round += 1;
            touch10(&d, n, round)
        })
        .bench_local_values(|paths| {
            let lock = cps.lock().unwrap();
            let hint = Hint { state, paths };
            let made = cps
                .create_hinted(&lock, &opts, Some(&hint), &mut |_| {})
                .unwrap();
            assert!(
                matches!(made.scan, Scan::Narrowed { .. }),
                "{:?}",
                made.scan
            );
            state = made.state;
        });
}

#[divan::bench(args = SIZES, sample_count = 10, sample_size = 1)]
fn shell_recipe_after_10_changes(bencher: divan::Bencher<'_, '_>, n: usize) {
    let d = repo(n, true);
    let round = AtomicUsize::new(1000);
    bencher
        .with_inputs(|| touch10(&d, n, round.fetch_add(1, Ordering::Relaxed) + 1))
        .bench_values(|_| {
            let out = Command::new("sh")
                .current_dir(&d)
                .arg("-c")
                .arg(
                    "TMP=$(mktemp) && GIT_INDEX_FILE=\"$TMP\" git read-tree HEAD \
                     && GIT_INDEX_FILE=\"$TMP\" git add -A \
                     && TREE=$(GIT_INDEX_FILE=\"$TMP\" git write-tree) \
                     && git -c user.name=b -c user.email=b@b commit-tree \"$TREE\" -p HEAD -m checkpoint \
                     && rm -f \"$TMP\"",
                )
                .output()
                .unwrap();
            assert!(out.status.success());
        });
}

fn begin(d: &Path) {
    let turns = Turns::open(d).unwrap();
    turns.begin(&BeginOptions::default(), &mut |_| {}).unwrap();
}

#[divan::bench(args = SIZES, sample_count = 10, sample_size = 1)]
fn turn_begin_after_10_changes(bencher: divan::Bencher<'_, '_>, n: usize) {
    let d = repo(n, true);
    begin(&d);
    let round = AtomicUsize::new(2000);
    bencher
        .with_inputs(|| touch10(&d, n, round.fetch_add(1, Ordering::Relaxed) + 1))
        .bench_values(|_| begin(&d));
}

#[divan::bench(args = SIZES, sample_count = 10, sample_size = 1)]
fn turn_status_after_10_changes(bencher: divan::Bencher<'_, '_>, n: usize) {
    let d = repo(n, true);
    begin(&d);
    let round = AtomicUsize::new(3000);
    bencher
        .with_inputs(|| touch10(&d, n, round.fetch_add(1, Ordering::Relaxed) + 1))
        .bench_values(|_| {
            let status = Turns::open(&d).unwrap().status(false).unwrap();
            assert!(!status.files.is_empty());
        });
}

#[divan::bench(args = SIZES, sample_count = 10, sample_size = 1)]
fn git_status_after_10_changes(bencher: divan::Bencher<'_, '_>, n: usize) {
    let d = repo(n, true);
    let round = AtomicUsize::new(4000);
    bencher
        .with_inputs(|| touch10(&d, n, round.fetch_add(1, Ordering::Relaxed) + 1))
        .bench_values(|_| git(&d, &["status", "--porcelain"]));
}

/// 40 files of 1 MB, committed, with a turn begun: made once.
fn big_turn() -> PathBuf {
    static DIR: Mutex<Option<PathBuf>> = Mutex::new(None);
    let mut dir = DIR.lock().unwrap();
    if let Some(d) = dir.as_ref() {
        return d.clone();
    }
    let d = std::env::temp_dir().join(format!("mend-bench-big-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    git(&d, &["init", "-q", "-b", "main"]);
    for f in 0..40 {
        std::fs::write(d.join(format!("big{f}.txt")), reshuffled(f, 0)).unwrap();
    }
    git(&d, &["add", "-A"]);
    git(&d, &["commit", "-q", "-m", "big"]);
    Turns::open(&d)
        .unwrap()
        .begin(&BeginOptions::default(), &mut |_| {})
        .unwrap();
    REPOS.lock().unwrap().push((0, true, d.clone()));
    *dir = Some(d.clone());
    d
}

/// File `f`'s 1 MB of lines (about 20,000), in an order that `round`
/// shuffles: round 0 is the start, every other round a different order,
/// so each diff of a file has thousands of hunks.
fn reshuffled(f: usize, round: usize) -> String {
    let lines: Vec<String> = (0..20_000)
        .map(|i| format!("file {f:02} line {i:05}: the quick brown fox jumps\n"))
        .collect();
    let mut out = String::with_capacity(1_000_000);
    let n = lines.len();
    for k in 0..n {
        // A permutation per round (a stride coprime with n), blocks of 7.
        let i = if round == 0 {
            k
        } else {
            let block = (k / 7 * (2 * round + 1) * 7919) % (n / 7);
            (block * 7 + k % 7).min(n - 1)
        };
        out.push_str(&lines[i]);
    }
    out
}

fn rewrite_all(d: &Path, round: usize) {
    for f in 0..40 {
        std::fs::write(d.join(format!("big{f}.txt")), reshuffled(f, round)).unwrap();
    }
}

#[divan::bench(sample_count = 5, sample_size = 1)]
fn turn_summary_40_files_of_1mb_rewritten(bencher: divan::Bencher<'_, '_>) {
    let d = big_turn();
    let round = AtomicUsize::new(1);
    bencher
        .with_inputs(|| rewrite_all(&d, round.fetch_add(1, Ordering::Relaxed)))
        .bench_values(|()| {
            let s = Turns::open(&d).unwrap().summary().unwrap();
            assert_eq!(s.files, 40);
        });
}

#[divan::bench(sample_count = 2, sample_size = 1)]
fn turn_status_40_files_of_1mb_rewritten(bencher: divan::Bencher<'_, '_>) {
    let d = big_turn();
    let round = AtomicUsize::new(100);
    bencher
        .with_inputs(|| rewrite_all(&d, round.fetch_add(1, Ordering::Relaxed)))
        .bench_values(|()| {
            let s = Turns::open(&d).unwrap().status(false).unwrap();
            assert_eq!(s.files.len(), 40);
        });
}
