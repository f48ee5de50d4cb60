//! The syntax check on real code: released packages in every language the
//! check knows, fetched with pip, npm, cargo and apt into a cache folder.
//!
//! Each file that parses cleanly before is edited four ways, and each
//! result checked as `mend apply` checks it:
//!
//! - **correct** edits must give no finding: a name renamed everywhere in
//!   the file, and, for packages with two versions, the file replaced by
//!   its newer release;
//! - **broken** edits must give one: a closing bracket of the code dropped,
//!   and a string's closing quote dropped.
//!
//! ```text
//! cargo run --release -p mend --example syntax -- [--cache DIR] [--check]
//!     [--files N] [--show LANGUAGE]
//! ```
//!
//! Every edit is also checked as a server checks it, reparsing from the
//! parse of the text before (`mend_syntax::check_from`: a clean Python
//! text's outline, so the edited statements alone are parsed, or
//! tree-sitter's incremental reparse); its result must be the from-scratch
//! check's, exactly.
//!
//! `--check` exits non-zero when more than 0.5% of the correct edits get a
//! finding, or fewer than 95% of either kind of broken edit do, or when an
//! incremental check differs from the from-scratch one. `--files`
//! caps the files per language (default 200); `--show` prints that
//! language's false findings and misses.
#![expect(
    unreachable_pub,
    reason = "helpers shared by this target's modules are `pub`; the test layout settles them"
)]
// A measurement tool: its output is the report.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod corpus;
mod mutate;
#[path = "../shared/registry.rs"]
mod registry;

use std::collections::BTreeMap;
use std::path::PathBuf;

use mend_syntax::{Check, EditSpan, language_for};
use mutate::Rng;

struct Args {
    cache: PathBuf,
    check: bool,
    files: usize,
    show: Option<String>,
}

fn args() -> Args {
    let mut a = Args {
        cache: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/drift-corpus"),
        check: false,
        files: 200,
        show: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(x) = it.next() {
        match x.as_str() {
            "--cache" => a.cache = it.next().expect("--cache DIR").into(),
            "--check" => a.check = true,
            "--files" => a.files = it.next().and_then(|n| n.parse().ok()).expect("--files N"),
            "--show" => a.show = Some(it.next().expect("--show LANGUAGE")),
            other => panic!("unknown argument {other}"),
        }
    }
    a
}

/// One language's counts.
#[derive(Default, Clone, Copy)]
struct Tally {
    files: usize,
    unparsed: usize,
    correct: usize,
    false_findings: usize,
    brackets: usize,
    brackets_found: usize,
    strings: usize,
    strings_found: usize,
}

impl Tally {
    fn add(&mut self, o: &Tally) {
        self.files += o.files;
        self.unparsed += o.unparsed;
        self.correct += o.correct;
        self.false_findings += o.false_findings;
        self.brackets += o.brackets;
        self.brackets_found += o.brackets_found;
        self.strings += o.strings;
        self.strings_found += o.strings_found;
    }
}

fn pct(n: usize, of: usize) -> f64 {
    100.0 * n as f64 / of.max(1) as f64
}

/// Whether the check finds something in `new`, an edit of `old` on `line`
/// (0-based; `None` for a whole-file change).
fn finds(path: &str, old: &str, new: &str, line: Option<usize>) -> Option<String> {
    let span = EditSpan {
        index: 0,
        lines: line.map(|l| mend_core::report::LineSpan {
            start: l + 1,
            end: l + 1,
        }),
    };
    let scratch = mend_syntax::check(path, Some(old), new, &[span]);
    let base = mend_syntax::check_from(path, None, None, old, &[]).1;
    let (incremental, next) = mend_syntax::check_from(path, Some(old), base.as_ref(), new, &[span]);
    if next.is_some_and(|b| !b.is_whole_parse()) {
        BY_PIECES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    if incremental != scratch {
        DIFFERENT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        println!("INCREMENTAL CHECK DIFFERS in {path}:\n{incremental:?}\n{scratch:?}");
    }
    match scratch {
        Check::Findings(f) => Some(mend_core::report::syntax::render_findings(&f, "FINDING")),
        _ => None,
    }
}

/// Edits whose check from the old text's base parsed only the statements
/// they touched (its outline), and showed them clean.
static BY_PIECES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Edits whose incremental check differed from the from-scratch one.
static DIFFERENT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Measures one file, adding to `t`; prints what `show` asks for.
fn measure(path: &str, old: &str, newer: Option<&str>, t: &mut Tally, show: bool) {
    let lang = language_for(path).expect("corpus files have a language");
    if !matches!(
        mend_syntax::check(path, None, old, &[]),
        Check::Clean { .. }
    ) {
        t.unparsed += 1;
        return;
    }
    t.files += 1;
    let mut rng = Rng(path.bytes().fold(0xCBF2_9CE4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01B3)
    }));
    let correct = [mutate::rename(old, &mut rng), newer.map(str::to_owned)];
    for new in correct.into_iter().flatten() {
        t.correct += 1;
        if let Some(f) = finds(path, old, &new, None) {
            t.false_findings += 1;
            if show {
                println!("FALSE FINDING in {path}:\n{f}");
            }
        }
    }
    type Breaker = fn(mend_syntax::Language, &str, &mut Rng) -> Option<(String, usize)>;
    let breakers: [(&str, Breaker); 2] = [
        ("dropped bracket", mutate::drop_bracket),
        ("broken string", mutate::break_string),
    ];
    for (what, breaker) in breakers {
        let Some((new, line)) = breaker(lang, old, &mut rng) else {
            continue;
        };
        let (tried, found) = if what == "dropped bracket" {
            (&mut t.brackets, &mut t.brackets_found)
        } else {
            (&mut t.strings, &mut t.strings_found)
        };
        *tried += 1;
        match finds(path, old, &new, Some(line)) {
            Some(_) => *found += 1,
            None if show => println!("MISSED {what} in {path}:{}", line + 1),
            None => {}
        }
    }
}

fn main() -> std::process::ExitCode {
    let a = args();
    // Every file of every package, by language, in a stable order.
    let mut by_lang: BTreeMap<&'static str, Vec<corpus::File>> = BTreeMap::new();
    for s in corpus::SOURCES {
        let files = match corpus::files(&a.cache, s) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("syntax: cannot fetch {}: {e}", s.name);
                return std::process::ExitCode::from(2);
            }
        };
        for mut f in files {
            let lang = language_for(&f.path).expect("wanted").name();
            f.path = format!("{}/{}", s.name, f.path);
            by_lang.entry(lang).or_default().push(f);
        }
    }
    let mut table: BTreeMap<&str, Tally> = BTreeMap::new();
    for (lang, files) in &by_lang {
        // An even sample across the language's files.
        let step = files.len().div_ceil(a.files.max(1)).max(1);
        let t = table.entry(lang).or_default();
        let show = a.show.as_deref() == Some(lang);
        for f in files.iter().step_by(step) {
            measure(&f.path, &f.text, f.newer.as_deref(), t, show);
        }
    }
    report(&table, a.check)
}

fn report(table: &BTreeMap<&str, Tally>, check: bool) -> std::process::ExitCode {
    println!(
        "{:<12} {:>6} {:>9} {:>8} {:>10} {:>16} {:>16}",
        "language", "files", "unparsed", "correct", "false", "bracket found", "string found"
    );
    let mut all = Tally::default();
    for (lang, t) in table {
        all.add(t);
        row(lang, t);
    }
    row("all", &all);
    let false_rate = pct(all.false_findings, all.correct);
    let (b, s) = (
        pct(all.brackets_found, all.brackets),
        pct(all.strings_found, all.strings),
    );
    println!(
        "\ncorrect edits with a finding: {false_rate:.2}% (at most 0.5%); dropped brackets found: {b:.1}%, broken strings found: {s:.1}% (at least 95% each)"
    );
    let different = DIFFERENT.load(std::sync::atomic::Ordering::Relaxed);
    println!("incremental checks that differ from the from-scratch check: {different} (must be 0)");
    println!(
        "of them shown clean by parsing only the edited statements: {}",
        BY_PIECES.load(std::sync::atomic::Ordering::Relaxed)
    );
    if check && (false_rate > 0.5 || b < 95.0 || s < 95.0 || different > 0) {
        return std::process::ExitCode::FAILURE;
    }
    std::process::ExitCode::SUCCESS
}

fn row(lang: &str, t: &Tally) {
    println!(
        "{lang:<12} {:>6} {:>9} {:>8} {:>10} {:>16} {:>16}",
        t.files,
        t.unparsed,
        t.correct,
        format!(
            "{} ({:.1}%)",
            t.false_findings,
            pct(t.false_findings, t.correct)
        ),
        format!(
            "{}/{} ({:.0}%)",
            t.brackets_found,
            t.brackets,
            pct(t.brackets_found, t.brackets)
        ),
        format!(
            "{}/{} ({:.0}%)",
            t.strings_found,
            t.strings,
            pct(t.strings_found, t.strings)
        ),
    );
}
