//! Full scans as processes against `git status --porcelain`: a committed
//! repository of N files (built as `mend-checkpoint`'s checkpoint benchmark
//! builds it, 50 files per folder), a turn begun, a few files changed, then
//! rounds that run `git status --porcelain`, `mend turn status` and
//! `mend checkpoint create` one after another, rotating which goes first,
//! so load drift falls on all three alike. Each sample is a whole process,
//! spawn to exit. It prints each command's median and min and the medians'
//! ratios to git's.
//!
//! ```text
//! cargo build --release -p mend
//! cargo run --release -p mend --example scan_process -- [--files N] [--rounds R] [--changed C] [--baseline PATH]
//! ```
//!
//! With `--baseline PATH`, a second `mend` binary (say, one built from an
//! earlier commit) runs the same two commands in the same rounds, so a
//! change is measured against what it changed on one tree, at one load.
//!
//! The tree goes under the system's temporary folder and is removed at the
//! end (200,000 files take about 1 GB there).

// A measurement tool: its output is the report.
#![allow(clippy::print_stdout)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mend_test_support::{committed_files, mend_bin, number_arg, rewrite_scale_file};

/// Rewrites `changed` files spread over the tree (the same ones each time,
/// so each command sees the same work every round).
fn change(d: &Path, n: usize, changed: usize, round: usize) {
    for k in 0..changed {
        let i = (k * 1999 + 7) % n;
        rewrite_scale_file(d, i, round);
    }
}

/// Runs `program args` in `d` with its output discarded; panics unless it
/// exits 0, so a failing command is never timed as a fast one.
fn run(d: &Path, program: &Path, args: &[&str]) -> Duration {
    let start = Instant::now();
    let status = Command::new(program)
        .args(args)
        .current_dir(d)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("spawn");
    let took = start.elapsed();
    assert!(status.success(), "{} {args:?}: {status}", program.display());
    took
}

fn median(samples: &mut [Duration]) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// One timed command: its label, program and arguments.
type Job = (String, PathBuf, [&'static str; 2]);

/// `git status --porcelain`, then each binary's `turn status` and
/// `checkpoint create`.
fn jobs(mend: &Path, baseline: Option<&Path>) -> Vec<Job> {
    let mut jobs: Vec<Job> = vec![(
        "git status --porcelain".into(),
        "git".into(),
        ["status", "--porcelain"],
    )];
    let bins = std::iter::once(("mend", mend)).chain(baseline.map(|b| ("baseline", b)));
    for (who, bin) in bins {
        jobs.push((format!("{who} turn status"), bin.into(), ["turn", "status"]));
        let create = ["checkpoint", "create"];
        jobs.push((format!("{who} checkpoint create"), bin.into(), create));
    }
    jobs
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n = number_arg(&args, "--files", 20_000);
    let rounds = number_arg(&args, "--rounds", 21);
    let changed = number_arg(&args, "--changed", 3);
    let baseline = args
        .iter()
        .position(|a| a == "--baseline")
        .and_then(|i| args.get(i + 1))
        .map(PathBuf::from);
    println!("building {n} files…");
    let dir = committed_files(n);
    let d = dir.path();
    let jobs = jobs(&mend_bin(), baseline.as_deref());
    run(d, &mend_bin(), &["turn", "begin"]);
    change(d, n, changed, 0);
    // Warm every cache (page cache, git's index refresh, mend's state).
    for _ in 0..2 {
        for (_, program, args) in &jobs {
            run(d, program, args);
        }
    }
    // Each round starts one command later, so none always runs first.
    let mut samples = vec![Vec::new(); jobs.len()];
    for round in 0..rounds {
        for k in 0..jobs.len() {
            let which = (round + k) % jobs.len();
            let (_, program, args) = &jobs[which];
            samples[which].push(run(d, program, args));
        }
    }
    let ms = |t: Duration| t.as_secs_f64() * 1000.0;
    let base = median(&mut samples[0]);
    println!("{n} files, {changed} changed, {rounds} alternating rounds");
    for ((name, _, _), s) in jobs.iter().zip(samples.iter_mut()) {
        let m = median(s);
        println!(
            "{name:<28} median {:>8.2} ms   min {:>8.2} ms   {:.2}×",
            ms(m),
            ms(s[0]),
            m.as_secs_f64() / base.as_secs_f64()
        );
    }
}
