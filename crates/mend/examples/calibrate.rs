//! Measures the similarity pass on real source files, to choose its
//! threshold and margin.
//!
//! For blocks drawn from every file under the given directories, it runs
//! the real locator (every guard included) and reports:
//!
//! - **drifted**: after model-like drift of the block (renamed tokens, a
//!   dropped or invented line, a one- or two-character slip), whether the
//!   block is located at its true place, refused, or located elsewhere;
//! - **impostor**: once the true region has been removed from the file,
//!   whether anything is accepted: what a fuzzy matcher would take by
//!   mistake.
//!
//! ```text
//! cargo run --release -p mend --example calibrate -- DIR [DIR…]
//! ```
//!
//! `IMPOSTORS_ONLY=1` skips the drifted blocks (the same blocks are drawn);
//! `SHOW_WRONG=1` and `SHOW_IMPOSTORS=1` print what the default setting
//! placed wrongly or accepted as an impostor.

// A measurement tool: its output is the report.
#![allow(clippy::print_stdout)]

use std::path::{Path, PathBuf};

use mend_core::locate::{Haystack, LineQuery, LocateOptions, locate};

/// The kinds of model drift the calibration applies to a copied block.
const DRIFT_KINDS: [&str; 7] = [
    "1 token",
    "2 tokens",
    "3 tokens",
    "line dropped",
    "line added",
    "slip (4+ lines)",
    "any-word slips (4+ lines)",
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

/// Identifier-like runs of a line, as byte ranges.
fn word_ranges(l: &str) -> Vec<(usize, usize)> {
    let mut v = Vec::new();
    let mut start = None;
    for (p, c) in l.char_indices().chain(std::iter::once((l.len(), ' '))) {
        if c.is_alphanumeric() || c == '_' {
            start.get_or_insert(p);
        } else if let Some(s) = start.take() {
            v.push((s, p));
        }
    }
    v
}

/// Changes one identifier-like token of one non-blank line: a plural, a
/// prefix, or the word reversed (a different name, as a model misremembers).
fn drift_token(lines: &mut [String], rng: &mut Rng) {
    let idx: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].chars().filter(|c| c.is_alphanumeric()).count() >= 3)
        .collect();
    if idx.is_empty() {
        return;
    }
    let i = idx[rng.below(idx.len())];
    let words = word_ranges(&lines[i]);
    if words.is_empty() {
        return;
    }
    let (a, b) = words[rng.below(words.len())];
    let w = lines[i][a..b].to_owned();
    let replacement = match rng.below(3) {
        0 => format!("{w}s"),
        1 => format!("new_{w}"),
        _ => w.chars().rev().collect(),
    };
    lines[i].replace_range(a..b, &replacement);
}

/// A typing slip in one name of five or more letters: two letters
/// swapped, one dropped or one doubled.
fn slip(lines: &mut [String], rng: &mut Rng) -> bool {
    let mut spots = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        for (a, b) in word_ranges(l) {
            if b - a >= 5 && l[a..b].chars().all(|c| c.is_ascii_alphabetic()) {
                spots.push((i, a, b));
            }
        }
    }
    if spots.is_empty() {
        return false;
    }
    let (i, a, b) = spots[rng.below(spots.len())];
    let mut w: Vec<char> = lines[i][a..b].chars().collect();
    let k = 1 + rng.below(w.len() - 2);
    match rng.below(3) {
        0 => w.swap(k, k + 1),
        1 => {
            w.remove(k);
        }
        _ => w.insert(k, w[k]),
    }
    let s: String = w.into_iter().collect();
    lines[i].replace_range(a..b, &s);
    true
}

/// One or two slips (neighbours swapped, a letter dropped or doubled, a
/// neighbouring key struck) in words of three or more letters of one line:
/// two in one word, or one in each of two words.
fn slips_any_word(lines: &mut [String], rng: &mut Rng) -> bool {
    const KEYS: &str = "qwertyuiop asdfghjkl zxcvbnm";
    let words = |l: &str| -> Vec<(usize, usize)> {
        word_ranges(l)
            .into_iter()
            .filter(|&(a, b)| b - a >= 3 && l[a..b].chars().all(|c| c.is_ascii_alphabetic()))
            .collect()
    };
    let rows: Vec<usize> = (0..lines.len())
        .filter(|&i| !words(&lines[i]).is_empty())
        .collect();
    if rows.is_empty() {
        return false;
    }
    let i = rows[rng.below(rows.len())];
    let ws = words(&lines[i]);
    let first = rng.below(ws.len());
    let second = (first + 1 + rng.below(ws.len())) % ws.len();
    let mut picks = if rng.below(2) == 0 || first == second {
        vec![(first, 1 + rng.below(2))]
    } else {
        vec![(first.min(second), 1), (first.max(second), 1)]
    };
    picks.reverse();
    for (wi, n) in picks {
        let (a, b) = ws[wi];
        let mut w: Vec<char> = lines[i][a..b].chars().collect();
        for _ in 0..n {
            let k = rng.below(w.len());
            match rng.below(4) {
                0 if k + 1 < w.len() => w.swap(k, k + 1),
                1 if w.len() > 2 => {
                    w.remove(k);
                }
                2 => w.insert(k, w[k]),
                _ => {
                    let lower = w[k].to_ascii_lowercase();
                    let at = KEYS.find(lower).unwrap_or(0);
                    let beside = [at.checked_sub(1), Some(at + 1)]
                        .into_iter()
                        .flatten()
                        .filter_map(|j| KEYS.as_bytes().get(j).copied())
                        .filter(u8::is_ascii_alphabetic)
                        .collect::<Vec<u8>>();
                    if let Some(&c) = beside.get(rng.below(beside.len())) {
                        w[k] = char::from(c);
                    }
                }
            }
        }
        let s: String = w.into_iter().collect();
        lines[i].replace_range(a..b, &s);
    }
    true
}

#[derive(Default, Clone, Copy)]
struct Count {
    right: usize,
    wrong: usize,
    refused: usize,
}

impl Count {
    fn total(&self) -> usize {
        self.right + self.wrong + self.refused
    }
}

fn pct(n: usize, d: usize) -> f64 {
    100.0 * n as f64 / d.max(1) as f64
}

/// The file lines the locator maps `search` onto, if it accepts a place.
fn located(lines: &[&str], search: &[String], opts: &LocateOptions) -> Option<(usize, usize)> {
    let hay = Haystack::new(lines.to_vec());
    let m = locate(&hay, &LineQuery::new(search, search), opts).ok()?;
    // Blank lines pair with any blank line; where the others land decides.
    let mapped = m[0]
        .map
        .iter()
        .zip(&m[0].search)
        .filter(|(r, l)| !r.is_empty() && !l.trim().is_empty())
        .map(|(r, _)| r);
    let lo = mapped.clone().map(|r| r.start).min()?;
    let hi = mapped.map(|r| r.end).max()?;
    Some((lo, hi))
}

fn count_exact(lines: &[&str], block: &[String]) -> usize {
    let m = block.len();
    (0..=lines.len().saturating_sub(m))
        .filter(|&i| lines[i..i + m].iter().zip(block).all(|(a, b)| a == b))
        .count()
}

fn drifted(block: &[String], kind: &str, rng: &mut Rng) -> Option<Vec<String>> {
    let mut s = block.to_vec();
    match kind {
        "1 token" => drift_token(&mut s, rng),
        "2 tokens" => (0..2).for_each(|_| drift_token(&mut s, rng)),
        "3 tokens" => (0..3).for_each(|_| drift_token(&mut s, rng)),
        "line dropped" => {
            let k = 1 + rng.below(s.len() - 2);
            s.remove(k);
        }
        "line added" => {
            let k = 1 + rng.below(s.len() - 1);
            s.insert(k, "log(\"debug\");".into());
        }
        "slip (4+ lines)" => {
            if s.len() < 4 || !slip(&mut s, rng) {
                return None;
            }
        }
        _ => {
            if s.len() < 4 || !slips_any_word(&mut s, rng) {
                return None;
            }
        }
    }
    (s != block).then_some(s)
}

fn main() {
    let dirs: Vec<PathBuf> = std::env::args().skip(1).map(PathBuf::from).collect();
    // The impostor count alone, on the same blocks, in a fraction of the time.
    let impostors_only = std::env::var_os("IMPOSTORS_ONLY").is_some();
    let mut files = Vec::new();
    for d in &dirs {
        walk(d, &mut files);
    }
    files.sort();
    // (threshold, margin, slip rule)
    let settings: Vec<(f64, f64, bool)> = vec![
        (0.75, 0.10, true),
        (0.80, 0.10, true),
        (0.85, 0.05, true),
        (0.85, 0.10, false),
        (0.85, 0.10, true),
        (0.85, 0.15, true),
        (0.90, 0.10, true),
        (0.95, 0.10, true),
    ];
    let mut drift: Vec<Vec<Count>> =
        vec![vec![Count::default(); DRIFT_KINDS.len()]; settings.len()];
    let mut impostor: Vec<Count> = vec![Count::default(); settings.len()];
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut used = 0;
    for f in &files {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        let lines: Vec<&str> = text.lines().collect();
        if lines.len() < 80 || lines.iter().any(|l| l.len() > 300) {
            continue;
        }
        used += 1;
        for _ in 0..4 {
            let m = 3 + rng.below(14);
            let start = rng.below(lines.len() - m);
            let block: Vec<String> = lines[start..start + m]
                .iter()
                .map(|l| (*l).to_owned())
                .collect();
            if block.iter().filter(|l| !l.trim().is_empty()).count() < 2
                || block.iter().map(|l| l.trim().len()).sum::<usize>() < 20
                || count_exact(&lines, &block) != 1
            {
                continue;
            }
            for (k, kind) in DRIFT_KINDS.iter().enumerate() {
                let seed = rng.next();
                if impostors_only {
                    continue;
                }
                let Some(s) = drifted(&block, kind, &mut Rng(seed)) else {
                    continue;
                };
                if count_exact(&lines, &s) > 0 {
                    continue;
                }
                for (i, &(threshold, margin, slips)) in settings.iter().enumerate() {
                    let opts = LocateOptions {
                        threshold,
                        margin,
                        slips,
                        ..LocateOptions::default()
                    };
                    let c = &mut drift[i][k];
                    match located(&lines, &s, &opts) {
                        // Every search line mapped inside the true region.
                        Some((lo, hi)) if lo >= start && hi <= start + m => c.right += 1,
                        Some((at, _)) => {
                            c.wrong += 1;
                            if i == 4 && std::env::var_os("SHOW_WRONG").is_some() {
                                println!(
                                    "--- {kind}: {} at {at}, truly {start}\n{}\n+++ search\n{}",
                                    f.display(),
                                    block.join("\n"),
                                    s.join("\n")
                                );
                            }
                        }
                        None => c.refused += 1,
                    }
                }
            }
            // The region removed: whatever is accepted now is an impostor.
            let mut rest = lines.clone();
            rest.drain(start..start + m);
            if count_exact(&rest, &block) > 0 {
                continue;
            }
            for (i, &(threshold, margin, slips)) in settings.iter().enumerate() {
                let opts = LocateOptions {
                    threshold,
                    margin,
                    slips,
                    ..LocateOptions::default()
                };
                match located(&rest, &block, &opts) {
                    Some((at, _)) => {
                        impostor[i].wrong += 1;
                        if i == 4 && std::env::var_os("SHOW_IMPOSTORS").is_some() {
                            println!(
                                "--- impostor: {} at {at}, removed from {start}\n{}",
                                f.display(),
                                block.join("\n")
                            );
                        }
                    }
                    None => impostor[i].refused += 1,
                }
            }
        }
    }
    println!("files used: {used}\n");
    print!("| threshold | margin | slip rule | impostors accepted |");
    for k in DRIFT_KINDS {
        print!(" {k} |");
    }
    println!(
        "\n|---:|---:|:---:|---:|{}",
        "---:|".repeat(DRIFT_KINDS.len())
    );
    for (i, (t, mg, slips)) in settings.iter().enumerate() {
        let imp = impostor[i];
        print!(
            "| {t:.2} | {mg:.2} | {} | {:.1}% ({}/{}) |",
            if *slips { "on" } else { "off" },
            pct(imp.wrong, imp.total()),
            imp.wrong,
            imp.total()
        );
        for c in &drift[i] {
            print!(
                " {:.1}%{} |",
                pct(c.right, c.total()),
                if c.wrong > 0 {
                    format!(" ({} wrong)", c.wrong)
                } else {
                    String::new()
                }
            );
        }
        println!();
    }
}
