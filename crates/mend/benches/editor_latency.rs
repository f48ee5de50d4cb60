//! Latency of editor sync, end to end: from another process's write of a
//! file to the notification that reaches the editor through `mend editor`
//! (watcher, debounce, merge, framing), for a clean buffer (reload) and a
//! dirty one (merge).
//!
//! A third measure is the worst case for the merge itself: a 40,000-line
//! buffer rewritten on every line (reindented) against an agent that
//! changes every third line, timed from the write to the notification,
//! while another buffer's requests are answered meanwhile (the slowest of
//! those answers is reported).
//!
//! `cargo bench -p mend --bench editor_latency [-- ROUNDS]` prints the
//! median, p95 and maximum.
#![expect(
    unreachable_pub,
    reason = "helpers shared by this target's modules are `pub`; the test layout settles them"
)]

#[path = "../tests/it/editor/client.rs"]
#[allow(dead_code, reason = "shared with the protocol tests")]
mod client;

use std::time::{Duration, Instant};

use client::Client;
use serde_json::json;

fn file(lines: usize, changed: Option<(usize, &str)>) -> String {
    (0..lines)
        .map(|i| match changed {
            Some((at, text)) if at == i => format!("{text}\n"),
            _ => format!("    let line_{i} = compute({i});\n"),
        })
        .collect()
}

/// Writes `rounds` versions of the file and times each notification.
fn measure(dirty: bool, rounds: usize) -> Vec<Duration> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lib.rs");
    let base = file(400, None);
    std::fs::write(&path, &base).unwrap();
    let mut c = Client::start(dir.path());
    let mut version = 1;
    c.request(
        "buffer/open",
        json!({"path": "lib.rs", "text": base, "dirty": false, "version": version}),
    )
    .unwrap();
    if dirty {
        version += 1;
        let text = file(400, Some((3, "    let user = 1;")));
        c.request(
            "buffer/changed",
            json!({"path": "lib.rs", "text": text, "dirty": true, "version": version}),
        )
        .unwrap();
    }
    let expected = if dirty {
        "buffer/merged"
    } else {
        "buffer/reload"
    };
    let mut times = Vec::with_capacity(rounds);
    for i in 0..rounds {
        let mut disk = file(400, Some((300, &format!("    let agent = {i};"))));
        if dirty {
            // The disk keeps the user's line once saved; here it never was.
            disk = disk.replace("    let user = 1;\n", "    let line_3 = compute(3);\n");
        }
        let t0 = Instant::now();
        std::fs::write(&path, &disk).unwrap();
        let n = c.notification().expect("a notification");
        times.push(t0.elapsed());
        assert_eq!(n.method, expected, "{:#}", n.params);
        let text = n.params["text"].as_str().unwrap().to_owned();
        version += 1;
        c.request(
            "buffer/changed",
            json!({"path": "lib.rs", "text": text, "dirty": dirty, "version": version}),
        )
        .unwrap();
        // Let the debouncer forget this write before the next one.
        std::thread::sleep(Duration::from_millis(50));
    }
    times
}

fn report(name: &str, mut t: Vec<Duration>) {
    t.sort();
    let at = |q: f64| t[((t.len() - 1) as f64 * q).round() as usize];
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    #[allow(clippy::print_stdout, reason = "a benchmark's report")]
    {
        println!(
            "{name:<14} n={:<4} median {:6.1} ms   p95 {:6.1} ms   max {:6.1} ms",
            t.len(),
            ms(at(0.5)),
            ms(at(0.95)),
            ms(t[t.len() - 1])
        );
    }
}

/// The 40,000-line merge, and the slowest answer to another buffer's
/// request while it runs.
fn large(rounds: usize) -> (Vec<Duration>, Vec<Duration>) {
    const LINES: usize = 40_000;
    let dir = tempfile::tempdir().unwrap();
    let base = file(LINES, None);
    std::fs::write(dir.path().join("big.rs"), &base).unwrap();
    std::fs::write(dir.path().join("small.rs"), "one\n").unwrap();
    let (mut merges, mut answers) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let mut c = Client::start(dir.path());
        let rewritten = base.replace("    let", "\tlet");
        for (path, text, dirty) in [
            ("big.rs", &base, false),
            ("small.rs", &"one\n".to_owned(), false),
        ] {
            c.request(
                "buffer/open",
                json!({"path": path, "text": text, "dirty": dirty, "version": 1}),
            )
            .unwrap();
        }
        c.request(
            "buffer/changed",
            json!({"path": "big.rs", "text": rewritten, "dirty": true, "version": 2}),
        )
        .unwrap();
        let agent: String = base
            .split_inclusive('\n')
            .enumerate()
            .map(|(i, l)| {
                if i % 3 == 0 {
                    l.replace(");", ") + 1;")
                } else {
                    l.to_owned()
                }
            })
            .collect();
        let t0 = Instant::now();
        std::fs::write(dir.path().join("big.rs"), &agent).unwrap();
        let mut slowest = Duration::ZERO;
        let mut version = 1;
        loop {
            version += 1;
            let t = Instant::now();
            c.request(
                "buffer/changed",
                json!({"path": "small.rs", "text": format!("one {round} {version}\n"), "dirty": true, "version": version}),
            )
            .unwrap();
            slowest = slowest.max(t.elapsed());
            if let Some(n) = c.notification_within(Duration::from_millis(2)) {
                assert!(n.method.starts_with("buffer/"), "{:#}", n.params);
                merges.push(t0.elapsed());
                break;
            }
        }
        answers.push(slowest);
    }
    (merges, answers)
}

fn main() {
    // `cargo bench` passes `--bench`; a bare number sets the rounds.
    let rounds = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(100);
    report("reload (clean)", measure(false, rounds));
    report("merge (dirty)", measure(true, rounds));
    let (merges, answers) = large(rounds.clamp(1, 10));
    report("40k-line merge", merges);
    report("other buffer", answers);
}
