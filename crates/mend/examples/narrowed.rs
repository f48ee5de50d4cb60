//! A repeat checkpoint after 10 changed files, with a mend process
//! watching the root, at 200,000 files (the target: at most 15 ms):
//!
//! - **mcp**: a `checkpoint_create` round trip to `mend mcp`, which holds
//!   its own watcher (timed from the request written to the answer read);
//! - **cli+daemon**: `mend checkpoint create` run as a process while
//!   `mend daemon` serves the root (process start to exit);
//! - **cli alone**: the same command without a daemon (a full scan), and
//!   `git status --porcelain`, in the same run, for scale.
//!
//! The tree is built as `mend-checkpoint`'s checkpoint benchmark builds
//! it (50 files per folder, two levels deep, committed).
//!
//! ```text
//! cargo run --release -p mend --example narrowed -- [--files N] [--rounds R]
//! ```

// A measurement tool: its output is the report.
#![allow(clippy::print_stdout)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use mend_test_support::serve::{Daemon, Mcp};
use mend_test_support::{committed_files, number_arg, rewrite_scale_file, run_mend};

fn touch10(d: &Path, n: usize, round: usize) {
    for k in 0..10 {
        let i = (k * 1999 + round * 7) % n;
        rewrite_scale_file(d, i, round);
    }
}

/// Median and minimum of the samples, in milliseconds.
fn report(what: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "{what:<28} median {:>8.2} ms   min {:>8.2} ms   ({} rounds)",
        ms(samples[samples.len() / 2]),
        ms(samples[0]),
        samples.len()
    );
}

fn timed(mut f: impl FnMut()) -> Duration {
    let start = Instant::now();
    f();
    start.elapsed()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n = number_arg(&args, "--files", 200_000);
    let rounds = number_arg(&args, "--rounds", 10);
    println!("building {n} files…");
    let dir = committed_files(n);
    let d = dir.path();
    let mut round = 0;
    let mut next = || {
        round += 1;
        round
    };

    let mut mcp = Mcp::start(d, &[]);
    mcp.call("checkpoint_create", &serde_json::json!({}));
    let samples = (0..rounds)
        .map(|_| {
            touch10(d, n, next());
            let mut made = serde_json::Value::Null;
            let t = timed(|| made = mcp.call("checkpoint_create", &serde_json::json!({})));
            assert_eq!(made["scan"], "narrowed", "{made}");
            t
        })
        .collect();
    report("mcp checkpoint_create", samples);
    drop(mcp);

    let daemon = Daemon::start(d);
    run_mend(d, &["checkpoint", "create"], None);
    let samples = (0..rounds)
        .map(|_| {
            touch10(d, n, next());
            let mut out = None;
            let t = timed(|| out = Some(run_mend(d, &["checkpoint", "create", "--json"], None)));
            let made: serde_json::Value =
                serde_json::from_slice(&out.expect("ran").stdout).expect("JSON");
            assert_eq!(made["scan"], "narrowed", "{made}");
            t
        })
        .collect();
    report("cli checkpoint + daemon", samples);
    drop(daemon);

    let samples = (0..rounds.min(5))
        .map(|_| {
            touch10(d, n, next());
            timed(|| {
                run_mend(d, &["checkpoint", "create"], None);
            })
        })
        .collect();
    report("cli checkpoint, no daemon", samples);
    let samples = (0..rounds.min(5))
        .map(|_| {
            touch10(d, n, next());
            timed(|| {
                let _ = Command::new("git")
                    .current_dir(d)
                    .args(["status", "--porcelain"])
                    .output();
            })
        })
        .collect();
    report("git status --porcelain", samples);
}
