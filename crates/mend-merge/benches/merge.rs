//! Three-way merge of 120,000- and 200,000-line files with scattered edits on
//! both sides, against `git merge-file` in the same run.
//!
//! - `mend_in_process`: `merge` + `render`, as a library caller pays.
//! - `mend_safe_policy`: the same with the safe resolvers on (adjacent,
//!   contained, and structured for a `.rs` name: its parses of the three
//!   inputs are paid because git leaves conflicts).
//! - `git_merge_file`: `git merge-file -p` as a process.
//! - `mend_merge_cli`: `mend merge -p` as a process, when the binary has
//!   been built (`target/release/mend`), for a like-for-like comparison.
//!
//! Inputs are written once, outside the timed loops.
//!
//! Run: `cargo build --release -p mend && cargo bench -p mend-merge --bench merge`

// git and the CLI are run as reference processes; the library itself never
// spawns one.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::process::Command;

use mend_merge::{Labels, Options, Policy, Style, merge};

fn main() {
    divan::main();
}

/// The file sizes measured, in lines.
const SIZES: [usize; 2] = [120_000, 200_000];

struct Inputs {
    _dir: tempfile::TempDir,
    dir: PathBuf,
    base: Vec<u8>,
    ours: Vec<u8>,
    theirs: Vec<u8>,
}

fn inputs(lines: usize) -> Inputs {
    let mut seed: u64 = 0x1234_5678;
    let mut next = |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let base: Vec<String> = (0..lines)
        .map(|i| {
            format!(
                "    let value_{i} = compute({}, \"{}\");",
                next(1000),
                next(97)
            )
        })
        .collect();
    let mut ours = base.clone();
    let mut theirs = base.clone();
    // An edit every ~400 lines on each side; now and then both sides touch
    // the same lines (conflicts).
    let mut i = 0;
    while i < lines {
        i += 200 + next(400) as usize;
        if i >= lines {
            break;
        }
        ours[i] = format!("    let value_{i} = ours_changed({});", next(10));
        let j = if next(20) == 0 {
            i
        } else {
            (i + 100).min(lines - 1)
        };
        theirs[j] = format!("    let value_{j} = theirs_changed({});", next(10));
    }
    let join = |v: &[String]| (v.join("\n") + "\n").into_bytes();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_path_buf();
    let inputs = Inputs {
        base: join(&base),
        ours: join(&ours),
        theirs: join(&theirs),
        dir: path,
        _dir: dir,
    };
    std::fs::write(inputs.dir.join("base"), &inputs.base).unwrap();
    std::fs::write(inputs.dir.join("ours"), &inputs.ours).unwrap();
    std::fs::write(inputs.dir.join("theirs"), &inputs.theirs).unwrap();
    inputs
}

fn mend_binary() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/release/mend");
    root.exists().then_some(root)
}

#[divan::bench(args = SIZES)]
fn mend_in_process(bencher: divan::Bencher<'_, '_>, lines: usize) {
    let i = inputs(lines);
    bencher.bench(|| {
        let m = merge(&i.base, &i.ours, &i.theirs, &Options::default());
        m.render(&Labels::default(), Style::Merge, 7)
    });
}

#[divan::bench(args = SIZES)]
fn mend_safe_policy(bencher: divan::Bencher<'_, '_>, lines: usize) {
    let i = inputs(lines);
    let opts = Options::for_path("src/values.rs", Policy::Safe);
    bencher.bench(|| {
        let m = merge(&i.base, &i.ours, &i.theirs, &opts);
        m.render(&Labels::default(), Style::Merge, 7)
    });
}

#[divan::bench(args = SIZES)]
fn mend_adjacent_only(bencher: divan::Bencher<'_, '_>, lines: usize) {
    let i = inputs(lines);
    let opts = Options {
        adjacent: mend_merge::Adjacent::Merge,
        ..Options::default()
    };
    bencher.bench(|| {
        let m = merge(&i.base, &i.ours, &i.theirs, &opts);
        m.render(&Labels::default(), Style::Merge, 7)
    });
}

#[divan::bench(args = SIZES)]
fn git_merge_file(bencher: divan::Bencher<'_, '_>, lines: usize) {
    let i = inputs(lines);
    bencher.bench(|| {
        Command::new("git")
            .current_dir(&i.dir)
            .args(["merge-file", "-p", "ours", "base", "theirs"])
            .output()
            .unwrap()
    });
}

#[divan::bench(args = SIZES)]
fn mend_merge_cli(bencher: divan::Bencher<'_, '_>, lines: usize) {
    let Some(bin) = mend_binary() else {
        return;
    };
    let i = inputs(lines);
    bencher.bench(|| {
        Command::new(&bin)
            .current_dir(&i.dir)
            .args(["merge", "-p", "ours", "base", "theirs"])
            .output()
            .unwrap()
    });
}
