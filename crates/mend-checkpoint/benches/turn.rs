//! `mend turn begin` and `mend turn status` on generated repositories of
//! 20,000 and 200,000 files, against `git status --porcelain` in the same
//! run (the target: each at most 1.2× git's time).
//!
//! - `turn_begin_after_10_changes`: a turn's start (a checkpoint) after 10
//!   files changed.
//! - `turn_status_after_10_changes`: a turn's status after 10 more files
//!   changed in it (the changes of a turn add up, as an agent's do).
//! - `git_status_after_10_changes`: `git status --porcelain` after 10
//!   files changed.
//!
//! Each includes opening the repository, as the commands do.
//! Run: `cargo bench -p mend-checkpoint --bench turn`

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use mend_checkpoint::turn::{BeginOptions, Turns};

const SIZES: &[usize] = &[20_000, 200_000];

/// Repositories by size, made once and removed at the end.
static REPOS: Mutex<Vec<(usize, PathBuf)>> = Mutex::new(Vec::new());

fn main() {
    divan::main();
    for (_, p) in REPOS.lock().unwrap().drain(..) {
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
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn file(d: &Path, i: usize) -> PathBuf {
    // 50 files per folder, two levels deep, as in a source tree.
    let f = i / 50;
    d.join(format!("pkg{}/mod{}/file{i}.rs", f / 20, f % 20))
}

/// A committed repository of `n` files, shared by the benchmarks of that
/// size.
fn repo(n: usize) -> PathBuf {
    let mut repos = REPOS.lock().unwrap();
    if let Some((_, p)) = repos.iter().find(|(m, _)| *m == n) {
        return p.clone();
    }
    let d = tempfile::tempdir().unwrap().keep();
    for i in 0..n {
        let p = file(&d, i);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, format!("pub fn f{i}() -> u32 {{ {i} }}\n")).unwrap();
    }
    git(&d, &["init", "-q", "."]);
    git(&d, &["add", "-A"]);
    git(&d, &["commit", "-q", "-m", "init"]);
    // git's own index is fresh, as after any git command.
    git(&d, &["status", "--porcelain"]);
    repos.push((n, d.clone()));
    d
}

fn touch10(d: &Path, n: usize, round: usize) {
    for k in 0..10 {
        let i = (k * 1999 + round * 7) % n;
        std::fs::write(file(d, i), format!("pub fn f{i}() -> u32 {{ {round} }}\n")).unwrap();
    }
}

fn begin(d: &Path) {
    let turns = Turns::open(d).unwrap();
    turns.begin(&BeginOptions::default(), &mut |_| {}).unwrap();
}

#[divan::bench(args = SIZES, sample_count = 10, sample_size = 1)]
fn turn_begin_after_10_changes(bencher: divan::Bencher<'_, '_>, n: usize) {
    let d = repo(n);
    begin(&d);
    let round = AtomicUsize::new(0);
    bencher
        .with_inputs(|| touch10(&d, n, round.fetch_add(1, Ordering::Relaxed) + 1))
        .bench_values(|()| begin(&d));
}

#[divan::bench(args = SIZES, sample_count = 10, sample_size = 1)]
fn turn_status_after_10_changes(bencher: divan::Bencher<'_, '_>, n: usize) {
    let d = repo(n);
    begin(&d);
    let round = AtomicUsize::new(100);
    bencher
        .with_inputs(|| touch10(&d, n, round.fetch_add(1, Ordering::Relaxed) + 1))
        .bench_values(|()| {
            let status = Turns::open(&d).unwrap().status(false).unwrap();
            assert!(!status.files.is_empty());
        });
}

#[divan::bench(args = SIZES, sample_count = 10, sample_size = 1)]
fn git_status_after_10_changes(bencher: divan::Bencher<'_, '_>, n: usize) {
    let d = repo(n);
    let round = AtomicUsize::new(1000);
    bencher
        .with_inputs(|| touch10(&d, n, round.fetch_add(1, Ordering::Relaxed) + 1))
        .bench_values(|()| git(&d, &["status", "--porcelain"]));
}
