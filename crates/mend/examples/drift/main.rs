//! The drift benchmark: real edits from real projects, drifted the way
//! models drift, in every edit format.
//!
//! Each diff hunk between two released versions of an open-source package
//! (fetched with pip, npm and cargo into a cache folder) is an edit whose
//! right result is known: the old file with that hunk applied. Every hunk
//! is rendered in six formats after each kind of drift (trailing spaces,
//! a shifted frame, inner spacing, typographic quotes, line numbers, blank
//! edges, typos, elided context), planned with mend-core, and counted as
//! **success** (the expected text), **wrong** (applied, with any other
//! text) or **refused**.
//!
//! ```text
//! cargo run --release -p mend --example drift -- [--cache DIR] [--check]
//!     [--hunks N] [--show FORMAT:KIND]
//! ```
//!
//! `--check` exits non-zero when any edit is wrong, or when a format's
//! success on a kind that should apply is below 95%.

// A measurement tool: its output is the report.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod corpus;
// Debian's packages serve the syntax-check corpus, not this benchmark.
mod drift;
mod hunks;
mod judge;
#[allow(dead_code, reason = "shared with the syntax-check corpus")]
#[path = "../shared/registry.rs"]
mod registry;
mod render;

use std::collections::BTreeMap;
use std::path::PathBuf;

use mend_core::formats::Format;

use drift::{Kind, Numbers, Rng};
use hunks::Hunk;
use judge::{Outcome, applies, plan};

#[derive(Default, Clone, Copy)]
struct Tally {
    success: usize,
    wrong: usize,
    refused: usize,
}

impl Tally {
    fn total(&self) -> usize {
        self.success + self.wrong + self.refused
    }
    fn rate(&self) -> f64 {
        100.0 * self.success as f64 / self.total().max(1) as f64
    }
}

struct Args {
    cache: PathBuf,
    check: bool,
    hunks: usize,
    show: Option<(String, String)>,
}

fn args() -> Args {
    let mut a = Args {
        cache: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/drift-corpus"),
        check: false,
        hunks: 200,
        show: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(x) = it.next() {
        match x.as_str() {
            "--cache" => a.cache = it.next().expect("--cache DIR").into(),
            "--check" => a.check = true,
            "--hunks" => a.hunks = it.next().and_then(|n| n.parse().ok()).expect("--hunks N"),
            "--show" => {
                let v = it.next().expect("--show FORMAT:KIND");
                let (f, k) = v.split_once(':').expect("FORMAT:KIND");
                a.show = Some((f.to_owned(), k.to_owned()));
            }
            other => panic!("unknown argument {other}"),
        }
    }
    a
}

fn main() -> std::process::ExitCode {
    let a = args();
    let mut table: BTreeMap<(usize, usize), Tally> = BTreeMap::new();
    let mut shown = 0;
    let mut hunk_count = 0;
    for p in corpus::PACKAGES {
        let (old, new) = match (
            corpus::fetch(&a.cache, p, p.old),
            corpus::fetch(&a.cache, p, p.new),
        ) {
            (Ok(o), Ok(n)) => (o, n),
            (Err(e), _) | (_, Err(e)) => {
                eprintln!("drift: cannot fetch {}: {e}", p.name);
                return std::process::ExitCode::from(2);
            }
        };
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ p.name.len() as u64);
        let pairs = corpus::pairs(&old, &new);
        let all: Vec<Hunk> = pairs
            .iter()
            .flat_map(|f| hunks::hunks(&f.path, &f.old, &f.new))
            .collect();
        let files: BTreeMap<&str, &str> = pairs
            .iter()
            .map(|f| (f.path.as_str(), f.old.as_str()))
            .collect();
        // An even sample across the package's hunks.
        let step = all.len().div_ceil(a.hunks.max(1)).max(1);
        for h in all.iter().step_by(step) {
            hunk_count += 1;
            let file = files[h.path.as_str()];
            for (fi, &format) in render::FORMATS.iter().enumerate() {
                for (ki, &kind) in Kind::ALL.iter().enumerate() {
                    if !applies(format, kind) {
                        continue;
                    }
                    let numbers = if format == Format::StrReplace {
                        Numbers::Arrow
                    } else {
                        Numbers::Bar
                    };
                    let mut r = Rng(rng.next());
                    let Some(lines) = drift::apply(kind, h, numbers, &mut r) else {
                        continue;
                    };
                    let Some(text) = render::render(format, h, &lines, kind, file) else {
                        continue;
                    };
                    let t = table.entry((fi, ki)).or_default();
                    let outcome = plan(format, &text, file, h);
                    let show = a.show.as_ref().is_some_and(|(f, k)| {
                        (f == format.name() || f == "*") && (k == kind.name() || k == "*")
                    });
                    match outcome {
                        Outcome::Success => t.success += 1,
                        Outcome::Wrong(d) => {
                            t.wrong += 1;
                            println!(
                                "WRONG {} {} {}:{}\n{text}\n{d}",
                                format.name(),
                                kind.name(),
                                h.path,
                                h.old_start + 1
                            );
                        }
                        Outcome::Refused(why) => {
                            t.refused += 1;
                            if show && shown < 40 {
                                shown += 1;
                                println!(
                                    "REFUSED {} {} {}:{}: {why}\n{text}",
                                    format.name(),
                                    kind.name(),
                                    h.path,
                                    h.old_start + 1
                                );
                            }
                        }
                    }
                }
            }
        }
    }
    report(&table, hunk_count);
    if a.check {
        let failing: Vec<String> = table
            .iter()
            .filter(|(_, t)| t.wrong > 0 || t.rate() < 95.0)
            .map(|(&(f, k), t)| {
                format!(
                    "{} / {}: {:.1}% success, {} wrong",
                    render::FORMATS[f].name(),
                    Kind::ALL[k].name(),
                    t.rate(),
                    t.wrong
                )
            })
            .collect();
        if !failing.is_empty() {
            eprintln!("drift check failed:\n  {}", failing.join("\n  "));
            return std::process::ExitCode::FAILURE;
        }
    }
    std::process::ExitCode::SUCCESS
}

fn report(table: &BTreeMap<(usize, usize), Tally>, hunks: usize) {
    println!("{hunks} hunks from {} packages\n", corpus::PACKAGES.len());
    print!("| kind |");
    for f in render::FORMATS {
        print!(" {} |", f.name());
    }
    println!("\n|---|{}", "---:|".repeat(render::FORMATS.len()));
    for (ki, kind) in Kind::ALL.iter().enumerate() {
        print!("| {} |", kind.name());
        for fi in 0..render::FORMATS.len() {
            match table.get(&(fi, ki)) {
                Some(t) => print!(
                    " {:.1}% ({}/{}{}) |",
                    t.rate(),
                    t.success,
                    t.total(),
                    if t.wrong > 0 {
                        format!(", {} WRONG", t.wrong)
                    } else {
                        String::new()
                    }
                ),
                None => print!(" n/a |"),
            }
        }
        println!();
    }
    let mut sum = Tally::default();
    for t in table.values() {
        sum.success += t.success;
        sum.wrong += t.wrong;
        sum.refused += t.refused;
    }
    println!(
        "\nall: {} edits, {} success ({:.2}%), {} wrong, {} refused",
        sum.total(),
        sum.success,
        sum.rate(),
        sum.wrong,
        sum.refused
    );
}
