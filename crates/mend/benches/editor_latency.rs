//! Latency of editor sync, end to end: from another process's write of a
//! file to the notification that reaches the editor through `mend editor`
//! (watcher, debounce, merge, framing), for a clean buffer (reload) and a
//! dirty one (merge).
//!
//! `cargo bench -p mend --bench editor_latency [-- ROUNDS]` prints the
//! median, p95 and maximum.

#[path = "../tests/editor/client.rs"]
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

fn main() {
    // `cargo bench` passes `--bench`; a bare number sets the rounds.
    let rounds = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(100);
    report("reload (clean)", measure(false, rounds));
    report("merge (dirty)", measure(true, rounds));
}
