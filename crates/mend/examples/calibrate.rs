//! Measures the similarity pass on real source files, to choose its
//! threshold and margin.
//!
//! For blocks drawn from every file under the given directories it reports:
//!
//! - **drifted**: the score of the true location after model-like drift
//!   (a renamed identifier, a changed literal, a dropped or invented line);
//! - **impostor**: the best score anywhere in the file once the true region
//!   has been removed: what a fuzzy matcher would accept by mistake.
//!
//! ```text
//! cargo run --release -p mend --example calibrate -- DIR [DIR…]
//! ```

// A measurement tool: its output is the report.
#![allow(clippy::print_stdout)]

use std::path::{Path, PathBuf};

use mend_core::normalize::fold_loose;
use mend_core::similarity::{LineGrams, anchored_windows};
use mend_core::similarity::{has_word, meaningful_differences};

/// The kinds of model drift the calibration applies to a copied block.
const DRIFT_KINDS: [&str; 5] = [
    "1 token",
    "2 tokens",
    "3 tokens",
    "line dropped",
    "line added",
];

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else if matches!(
            p.extension().and_then(|x| x.to_str()),
            Some("rs" | "py" | "js" | "ts" | "go" | "c" | "h" | "java")
        ) {
            out.push(p);
        }
    }
}

/// Changes one identifier-like token of one non-blank line.
fn drift_token(lines: &mut [String], rng: &mut Rng) {
    let idx: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].chars().filter(|c| c.is_alphanumeric()).count() >= 3)
        .collect();
    if idx.is_empty() {
        return;
    }
    let i = idx[rng.below(idx.len())];
    let words: Vec<(usize, usize)> = {
        let l = &lines[i];
        let mut v = Vec::new();
        let mut start = None;
        for (p, c) in l.char_indices() {
            if c.is_alphanumeric() || c == '_' {
                start.get_or_insert(p);
            } else if let Some(s) = start.take() {
                v.push((s, p));
            }
        }
        if let Some(s) = start {
            v.push((s, l.len()));
        }
        v
    };
    if words.is_empty() {
        return;
    }
    let (a, b) = words[rng.below(words.len())];
    let w = &lines[i][a..b];
    let replacement = match rng.below(3) {
        0 => format!("{w}s"),
        1 => format!("new_{w}"),
        _ => w.chars().rev().collect(),
    };
    lines[i].replace_range(a..b, &replacement);
}

fn main() {
    let dirs: Vec<PathBuf> = std::env::args().skip(1).map(PathBuf::from).collect();
    let mut files = Vec::new();
    for d in &dirs {
        walk(d, &mut files);
    }
    files.sort();
    let margin: f64 = std::env::var("MARGIN")
        .ok()
        .and_then(|m| m.parse().ok())
        .unwrap_or(0.05);
    println!("margin {margin}");
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut drifted: Vec<(String, f64, bool, f64)> = Vec::new();
    let mut impostor: Vec<(f64, bool, f64)> = Vec::new();
    let mut examples: Vec<(f64, String, String)> = Vec::new();
    let mut used = 0;
    for f in files.iter() {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        let lines: Vec<&str> = text.lines().collect();
        if lines.len() < 80 {
            continue;
        }
        used += 1;
        let norm: Vec<String> = lines.iter().map(|l| fold_loose(l).into_owned()).collect();
        let hay = LineGrams::new(norm.iter().map(|l| l.as_str().into()).collect());
        for _ in 0..4 {
            let m = 3 + rng.below(14);
            let start = rng.below(lines.len() - m);
            let block: Vec<String> = norm[start..start + m].to_vec();
            if block.iter().filter(|l| !l.is_empty()).count() < 2
                || block.iter().map(String::len).sum::<usize>() < 20
            {
                continue;
            }
            // Drifted copies, located in the intact file.
            for kind in DRIFT_KINDS {
                let mut s = block.clone();
                match kind {
                    "1 token" => drift_token(&mut s, &mut rng),
                    "2 tokens" => {
                        drift_token(&mut s, &mut rng);
                        drift_token(&mut s, &mut rng);
                    }
                    "3 tokens" => {
                        for _ in 0..3 {
                            drift_token(&mut s, &mut rng);
                        }
                    }
                    "line dropped" => {
                        let k = 1 + rng.below(s.len() - 2);
                        s.remove(k);
                    }
                    _ => {
                        let k = 1 + rng.below(s.len() - 1);
                        s.insert(k, "log(\"debug\");".into());
                    }
                }
                let found = anchored_windows(&hay, &s, margin, 0..usize::MAX);
                if let Some(b) = found.best {
                    let right = b.start.abs_diff(start) <= 1;
                    let score = if right { b.score } else { 0.0 };
                    let w: Vec<&str> = norm[b.start..b.start + b.len]
                        .iter()
                        .map(String::as_str)
                        .collect();
                    let guard = passes_guard(&norm, &s, &w, b.start);
                    drifted.push((
                        kind.to_owned(),
                        score,
                        found.rivals.is_empty(),
                        if guard { 1.0 } else { 0.0 },
                    ));
                }
            }
            // The region removed: whatever matches now is an impostor.
            let mut rest = norm.clone();
            rest.drain(start..start + m);
            let hay2 = LineGrams::new(rest.iter().map(|l| l.as_str().into()).collect());
            let found = anchored_windows(&hay2, &block, margin, 0..usize::MAX);
            // Ignore exact duplicates elsewhere (the earlier passes would call
            // those ambiguous or exact, not fuzzy).
            if let Some(b) = found.best
                && b.score < 0.999
            {
                let all = hay2_lines(&norm, start, m);
                let w = &all[b.start..b.start + b.len];
                let wr: Vec<&str> = w.iter().map(String::as_str).collect();
                let lf = if passes_guard(&all, &block, &wr, b.start) {
                    1.0
                } else {
                    0.0
                };
                impostor.push((b.score, found.rivals.is_empty(), lf));
                if b.score >= 0.85 && found.rivals.is_empty() && lf > 0.5 {
                    examples.push((b.score, block.join("\n"), w.join("\n")));
                }
            }
        }
    }
    println!("files used: {used}");
    examples.sort_by(|a, b| b.0.total_cmp(&a.0));
    if std::env::var_os("SHOW_IMPOSTORS").is_some() {
        for (sc, a, b) in examples.iter().take(14) {
            println!("--- impostor accepted at {sc:.3}\n{a}\n+++ window\n{b}");
        }
    }
    for l in [0.0, 1.0] {
        println!("== token guard: {}", l > 0.5);
        for t in [0.70, 0.75, 0.80, 0.85, 0.88, 0.90, 0.92, 0.95] {
            let false_accept = impostor
                .iter()
                .filter(|s| s.0 >= t && s.1 && s.2 >= l)
                .count();
            print!(
                "threshold {t:.2}: impostors accepted {false_accept}/{} ({:.2}%)",
                impostor.len(),
                100.0 * false_accept as f64 / impostor.len().max(1) as f64
            );
            for kind in DRIFT_KINDS {
                let all: Vec<&(String, f64, bool, f64)> =
                    drifted.iter().filter(|d| d.0 == kind).collect();
                let ok = all.iter().filter(|d| d.1 >= t && d.2 && d.3 >= l).count();
                print!(
                    " | {kind}: {:.1}%",
                    100.0 * ok as f64 / all.len().max(1) as f64
                );
            }
            println!();
        }
    }
}

fn passes_guard(file: &[String], search: &[String], window: &[&str], start: usize) -> bool {
    let (lo, hi) = (start, start + window.len());
    meaningful_differences(search, window, |t| {
        has_word(file[..lo].iter().chain(&file[hi..]).map(String::as_str), t)
    })
    .is_empty()
}

fn hay2_lines(norm: &[String], start: usize, m: usize) -> Vec<String> {
    let mut rest = norm.to_vec();
    rest.drain(start..start + m);
    rest
}
