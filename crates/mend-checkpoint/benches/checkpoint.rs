//! Checkpoints of a generated repository of 20,000 files, against seed
//! 004's shell recipe in the same run:
//!
//! ```text
//! GIT_INDEX_FILE=tmp git read-tree HEAD && GIT_INDEX_FILE=tmp git add -A &&
//! GIT_INDEX_FILE=tmp git write-tree && git commit-tree …
//! ```
//!
//! - `first`: the first checkpoint (every file hashed).
//! - `repeat_after_10_changes`: a checkpoint after 10 files changed; the
//!   persistent private index re-hashes only those.
//! - `shell_recipe_after_10_changes`: the recipe, which starts from a fresh
//!   index every time.
//!
//! Run: `cargo bench -p mend-checkpoint --bench checkpoint`

use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use mend_checkpoint::{Checkpoints, CreateOptions};

fn main() {
    divan::main();
}

const FILES: usize = 20_000;

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

fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q", "."]);
    for i in 0..FILES {
        let p = d.join(format!("pkg{}/mod{}/file{i}.rs", i % 40, i % 7));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, format!("pub fn f{i}() -> u32 {{ {i} }}\n")).unwrap();
    }
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "init"]);
    dir
}

fn touch10(d: &Path, round: usize) {
    for k in 0..10 {
        let i = (k * 1999 + round * 7) % FILES;
        let p = d.join(format!("pkg{}/mod{}/file{i}.rs", i % 40, i % 7));
        std::fs::write(p, format!("pub fn f{i}() -> u32 {{ {round} }}\n")).unwrap();
    }
}

#[divan::bench(sample_count = 5, sample_size = 1)]
fn first(bencher: divan::Bencher<'_, '_>) {
    bencher.with_inputs(repo).bench_values(|dir| {
        let cps = Checkpoints::open(dir.path()).unwrap();
        cps.create(&CreateOptions::default(), &mut |_| {}).unwrap();
        dir
    });
}

/// Includes opening the repository, as `mend checkpoint create` does.
#[divan::bench(sample_count = 20, sample_size = 1)]
fn repeat_after_10_changes(bencher: divan::Bencher<'_, '_>) {
    let dir = repo();
    let d = dir.path().to_path_buf();
    Checkpoints::open(&d)
        .unwrap()
        .create(&CreateOptions::default(), &mut |_| {})
        .unwrap();
    let round = AtomicUsize::new(0);
    bencher
        .with_inputs(|| touch10(&d, round.fetch_add(1, Ordering::Relaxed) + 1))
        .bench_values(|()| {
            let cps = Checkpoints::open(&d).unwrap();
            cps.create(&CreateOptions::default(), &mut |_| {}).unwrap();
        });
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn shell_recipe_after_10_changes(bencher: divan::Bencher<'_, '_>) {
    let dir = repo();
    let d = dir.path().to_path_buf();
    let round = AtomicUsize::new(0);
    bencher
        .with_inputs(|| touch10(&d, round.fetch_add(1, Ordering::Relaxed) + 1))
        .bench_values(|()| {
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
