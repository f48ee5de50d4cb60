//! The drift benchmark: real edits from real projects, drifted the way
//! models drift, in every edit format.
//!
//! Each diff hunk between two released versions of an open-source package
//! (fetched with pip, npm and cargo into a cache folder) is an edit whose
//! right result is known: the old file with that hunk applied. Every hunk
//! is rendered in six formats after each kind of drift (trailing spaces,
//! a shifted frame, inner spacing, typographic quotes, line numbers, blank
//! edges, typos, elided context, a bare `...` eliding Python, `...` as
//! code, elided anchored `content`), planned with mend-core, and counted
//! as **success** (the expected text), **wrong** (applied, with any other
//! text) or **refused**. One kind must be refused: a search slipped to a
//! spelling equidistant from two near-identical windows of a real file
//! (`twins.rs`); there success is a refusal and any applied text is wrong.
//!
//! The replay (`replay.rs`) applies every changed file's whole diff, as
//! `git diff` prints it, to the old file: with its headers, with every
//! header shifted by seven lines, and with the numbers dropped.
//!
//! ```text
//! cargo run --release -p mend --example drift -- [--cache DIR] [--check]
//!     [--hunks N] [--show FORMAT:KIND] [--show replay:WAY]
//! ```
//!
//! `--check` exits non-zero when any edit is wrong anywhere, or when, per
//! format, success over the kinds that should apply is below 98% (anchored
//! 95%); a typo kind below 90% in any format; outside anchored, an elided
//! kind below 98%; a refusal kind below 100%; or a replay way below its
//! floor (100% exact and shifted, 98% without numbers).
#![expect(
    unreachable_pub,
    reason = "helpers shared by this target's modules are `pub`; the test layout settles them"
)]
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
mod replay;
mod twins;

use std::collections::BTreeMap;
use std::path::PathBuf;

use mend_core::formats::Format;

use corpus::FilePair;
use drift::{Class, Kind, Numbers, Rng};
use hunks::Hunk;
use judge::{Outcome, applies, plan};
use replay::Way;

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
    fn add(&mut self, o: &Tally) {
        self.success += o.success;
        self.wrong += o.wrong;
        self.refused += o.refused;
    }
    fn cell(&self) -> String {
        format!(
            "{:.1}% ({}/{}{})",
            self.rate(),
            self.success,
            self.total(),
            if self.wrong > 0 {
                format!(", {} WRONG", self.wrong)
            } else {
                String::new()
            }
        )
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

impl Args {
    fn shows(&self, what: &str, kind: &str) -> bool {
        self.show
            .as_ref()
            .is_some_and(|(f, k)| (f == what || f == "*") && (k == kind || k == "*"))
    }
}

/// (format, kind) cells.
type Table = BTreeMap<(usize, usize), Tally>;

/// Everything measured: (format, kind) cells, in all and per half of the
/// packages (see [`corpus::half`]), the replay per way.
#[derive(Default)]
struct Run {
    table: Table,
    halves: [Table; 2],
    /// The half of the package being measured.
    half: usize,
    replay: [Tally; 3],
    hunks: usize,
    files: usize,
    shown: usize,
}

/// A case's own generator, seeded by where it sits, so that adding a
/// kind or a package leaves every other case's drift as it was.
fn rng_for(package: &str, hunk: usize, format: usize, kind: usize) -> Rng {
    let seed = package.bytes().fold(0x9E37_79B9_7F4A_7C15_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    }) ^ ((hunk as u64) << 24)
        ^ ((format as u64) << 8)
        ^ kind as u64;
    let mut r = Rng(seed | 1);
    r.next();
    r
}

fn main() -> std::process::ExitCode {
    let a = args();
    let mut run = Run::default();
    for (i, p) in corpus::PACKAGES.iter().enumerate() {
        run.half = corpus::half(i);
        let (old, mid, new) = match (
            corpus::fetch(&a.cache, p, p.old),
            corpus::fetch(&a.cache, p, p.mid),
            corpus::fetch(&a.cache, p, p.new),
        ) {
            (Ok(o), Ok(m), Ok(n)) => (o, m, n),
            (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => {
                eprintln!("drift: cannot fetch {}: {e}", p.name);
                return std::process::ExitCode::from(2);
            }
        };
        let pairs = corpus::pairs(&old, &new);
        drift_package(&a, p.name, &pairs, &mut run);
        twins_package(&a, &pairs, &mut run);
        // The whole span and its two consecutive steps.
        let steps = [(p.old, p.new), (p.old, p.mid), (p.mid, p.new)];
        for ((from, to), pairs) in
            steps
                .into_iter()
                .zip([pairs, corpus::pairs(&old, &mid), corpus::pairs(&mid, &new)])
        {
            replay_package(&a, &format!("{} {from}..{to}", p.name), &pairs, &mut run);
        }
    }
    report(&run);
    if a.check {
        let failing = check(&run);
        if !failing.is_empty() {
            eprintln!("drift check failed:\n  {}", failing.join("\n  "));
            return std::process::ExitCode::FAILURE;
        }
    }
    std::process::ExitCode::SUCCESS
}

/// Every kind of drift on an even sample of the package's hunks, and the
/// rare kinds (Python, `...`) on every hunk that has what they need, up
/// to `--hunks` each.
fn drift_package(a: &Args, package: &str, pairs: &[FilePair], run: &mut Run) {
    let all: Vec<Hunk> = pairs
        .iter()
        .flat_map(|f| hunks::hunks(&f.path, &f.old, &f.new))
        .collect();
    let files: BTreeMap<&str, &str> = pairs
        .iter()
        .map(|f| (f.path.as_str(), f.old.as_str()))
        .collect();
    let step = all.len().div_ceil(a.hunks.max(1)).max(1);
    let mut rare = [0usize; Kind::ALL.len()];
    for (hi, h) in all.iter().enumerate() {
        let sampled = hi % step == 0;
        run.hunks += usize::from(sampled);
        let file = files[h.path.as_str()];
        for (ki, &kind) in Kind::ALL.iter().enumerate() {
            if !(sampled || kind.rare() && rare[ki] < a.hunks) {
                continue;
            }
            let Some(h) = drift::reshape(kind, h, file) else {
                continue;
            };
            let mut any = false;
            for (fi, &format) in render::FORMATS.iter().enumerate() {
                if !applies(format, kind) || !kind.fits(format) {
                    continue;
                }
                let numbers = if format == Format::StrReplace {
                    Numbers::Arrow
                } else {
                    Numbers::Bar
                };
                let mut r = rng_for(package, hi, fi, ki);
                let Some(lines) = drift::apply(kind, &h, numbers, &mut r) else {
                    continue;
                };
                let Some(text) = render::render(format, &h, &lines, kind, file) else {
                    continue;
                };
                any = true;
                judge_case(a, run, (fi, ki), &h, &text, file);
            }
            rare[ki] += usize::from(any && kind.rare());
        }
    }
}

/// Plans one rendered case and counts it in its cell.
fn judge_case(a: &Args, run: &mut Run, (fi, ki): (usize, usize), h: &Hunk, text: &str, file: &str) {
    let (format, kind) = (render::FORMATS[fi], Kind::ALL[ki]);
    let at = format!(
        "{} {} {}:{}",
        format.name(),
        kind.name(),
        h.path,
        h.old_start + 1
    );
    let outcome = plan(format, text, file, h);
    if let Outcome::Refused(why) = &outcome
        && a.shows(format.name(), kind.name())
        && run.shown < 2000
    {
        run.shown += 1;
        println!("REFUSED {at}: {why}\n{text}");
    }
    let outcome = match (outcome, kind.class()) {
        (Outcome::Refused(_), Class::Refuse) => Outcome::Success,
        (Outcome::Success, Class::Refuse) => {
            Outcome::Wrong("applied, at the window the search was copied from".into())
        }
        (o, _) => o,
    };
    let mut one = Tally::default();
    match outcome {
        Outcome::Success => one.success += 1,
        Outcome::Wrong(d) => {
            one.wrong += 1;
            println!("WRONG {at}\n{text}\n{d}");
        }
        Outcome::Refused(_) => one.refused += 1,
    }
    run.table.entry((fi, ki)).or_default().add(&one);
    run.halves[run.half].entry((fi, ki)).or_default().add(&one);
}

/// The refusal kind: twin windows of the package's changed files, in
/// every format.
fn twins_package(a: &Args, pairs: &[FilePair], run: &mut Run) {
    let ki = Kind::ALL
        .iter()
        .position(|&k| k == Kind::Twins)
        .expect("twins is a kind");
    let mut left = (a.hunks / 4).max(1);
    for f in pairs {
        for case in twins::cases(&f.path, &f.old, left.min(3)) {
            left -= 1;
            for (fi, &format) in render::FORMATS.iter().enumerate() {
                if let Some(text) =
                    render::render(format, &case.hunk, &case.lines, Kind::Twins, &f.old)
                {
                    judge_case(a, run, (fi, ki), &case.hunk, &text, &f.old);
                }
            }
        }
        if left == 0 {
            break;
        }
    }
}

/// Every changed file's `git diff`, three ways.
fn replay_package(a: &Args, step: &str, pairs: &[FilePair], run: &mut Run) {
    for f in pairs {
        run.files += 1;
        for (wi, &way) in Way::ALL.iter().enumerate() {
            let (text, outcome) = replay::replay(&f.path, &f.old, &f.new, way);
            let t = &mut run.replay[wi];
            match outcome {
                Outcome::Success => t.success += 1,
                Outcome::Wrong(d) => {
                    t.wrong += 1;
                    println!("WRONG replay {} {step} {}\n{text}\n{d}", way.name(), f.path);
                }
                Outcome::Refused(why) => {
                    t.refused += 1;
                    if a.shows("replay", way.name()) {
                        println!("REFUSED replay {} {step} {}: {why}", way.name(), f.path);
                    }
                }
            }
        }
    }
}

/// The floor of one cell, in percent of its edits.
fn floor(format: Format, kind: Kind) -> f64 {
    let anchored = format == Format::Anchored;
    match (kind.class(), kind) {
        (Class::Refuse, _) => 100.0,
        (Class::Either, _) => 0.0,
        (Class::Typo, _) => 90.0,
        (_, Kind::AnchoredEndBlank) => 95.0,
        (Class::Elided, _) if anchored => 55.0,
        (Class::Elided, _) => 98.0,
        (Class::Apply, _) => 0.0,
    }
}

/// The cells and totals the gate names, with their floors.
fn check(run: &Run) -> Vec<String> {
    let mut failing = Vec::new();
    for (&(fi, ki), t) in &run.table {
        let (format, kind) = (render::FORMATS[fi], Kind::ALL[ki]);
        if t.wrong > 0 || t.rate() < floor(format, kind) {
            failing.push(format!("{} / {}: {}", format.name(), kind.name(), t.cell()));
        }
    }
    for (fi, format) in render::FORMATS.iter().enumerate() {
        let t = format_total(&run.table, fi);
        let floor = if *format == Format::Anchored {
            95.0
        } else {
            98.0
        };
        if t.rate() < floor {
            failing.push(format!(
                "{} / all that should apply: {}",
                format.name(),
                t.cell()
            ));
        }
    }
    for (wi, way) in Way::ALL.iter().enumerate() {
        let t = run.replay[wi];
        if t.wrong > 0 || t.rate() < way.floor() {
            failing.push(format!("replay / {}: {}", way.name(), t.cell()));
        }
    }
    failing
}

/// A format's success over the kinds that should apply.
fn format_total(table: &Table, fi: usize) -> Tally {
    let mut sum = Tally::default();
    for (&(f, k), t) in table {
        if f == fi && !matches!(Kind::ALL[k].class(), Class::Refuse | Class::Either) {
            sum.add(t);
        }
    }
    sum
}

fn report(run: &Run) {
    println!(
        "{} hunks from {} packages\n",
        run.hunks,
        corpus::PACKAGES.len()
    );
    print_table(&run.table);
    let mut sum = Tally::default();
    run.table.values().for_each(|t| sum.add(t));
    println!(
        "\nall: {} edits, {} success ({:.2}%), {} wrong, {} refused",
        sum.total(),
        sum.success,
        sum.rate(),
        sum.wrong,
        sum.refused
    );
    for (half, table) in run.halves.iter().enumerate() {
        let names: Vec<&str> = corpus::PACKAGES
            .iter()
            .enumerate()
            .filter(|(i, _)| corpus::half(*i) == half)
            .map(|(_, p)| p.name)
            .collect();
        println!(
            "\n{} ({}):\n",
            if half == 0 {
                "half A, tuned on"
            } else {
                "half B, held out"
            },
            names.join(", ")
        );
        print_table(table);
    }
    println!(
        "\ngit diff replay: {} changed files (old to new, old to mid, mid to new)\n",
        run.files
    );
    println!("| headers | success | wrong | refused |\n|---|---:|---:|---:|");
    for (wi, way) in Way::ALL.iter().enumerate() {
        let t = run.replay[wi];
        println!(
            "| {} | {:.1}% ({}/{}) | {} | {} |",
            way.name(),
            t.rate(),
            t.success,
            t.total(),
            t.wrong,
            t.refused
        );
    }
}

/// One table: a row per kind, a column per format, and the totals of the
/// kinds that should apply.
fn print_table(table: &Table) {
    print!("| kind |");
    for f in render::FORMATS {
        print!(" {} |", f.name());
    }
    println!("\n|---|{}", "---:|".repeat(render::FORMATS.len()));
    for (ki, kind) in Kind::ALL.iter().enumerate() {
        let refuse = match kind.class() {
            Class::Refuse => " (refused)",
            Class::Either => " (or refused)",
            _ => "",
        };
        print!("| {}{refuse} |", kind.name());
        for fi in 0..render::FORMATS.len() {
            match table.get(&(fi, ki)) {
                Some(t) => print!(" {} |", t.cell()),
                None => print!(" n/a |"),
            }
        }
        println!();
    }
    print!("| **should apply** |");
    for fi in 0..render::FORMATS.len() {
        print!(" {} |", format_total(table, fi).cell());
    }
    println!();
}
