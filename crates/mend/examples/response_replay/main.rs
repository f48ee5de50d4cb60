//! The response replay benchmark: real model responses from aider
//! transcripts, replayed through the real `mend apply`.
//!
//! **Cases.** `../shared/response-replay/cases.tar.gz` beside the workspace
//! root (or the tarball or folder `$MEND_RESPONSE_REPLAY` names), unpacked
//! under `target/response-replay/`, never into the repository; `--cases
//! DIR` adds folders of cases in the same layout. Each case holds a
//! response, the files before it and the files aider committed after it
//! (`expected`); its kind is `ok` (aider applied it: `expected` is ground
//! truth) or `refuse_or_unknown` (aider refused it: `expected` is from a
//! later response).
//!
//! **Runs.** Each response is applied by the release binary
//! (`target/release/mend apply --json`, one process per call, timed) to a
//! fresh copy of `before/`, once in `auto` and once in the format the
//! transcript names (aider's `diff` formats as `search-replace`, `whole`
//! as `whole-file`, `udiff` as `unified-diff`; `unknown` runs in `auto`
//! only). Outcomes (`outcome.rs`): **equal**; **normalised** (equal but
//! for aider's own rewriting: line endings, a final newline, whitespace
//! on whitespace-only lines, a blank line at the end of a SEARCH or
//! REPLACE section); **wrong** (exit 0 and a written file differs, or a
//! file aider did not write); **broken** (exit 0 and a file aider changed
//! left as it was); **refused** (nonzero exit, nothing written); a
//! nonzero exit that wrote is its own failure. On a case aider refused,
//! any write **needs review** until `reviewed.txt` holds its verdict.
//! For those cases aider's own applier runs too (`aider.rs`).
//!
//! **Split.** Repositories fall in a `tune` half and a `report` half by a
//! hash of their name; each half is reported on its own.
//!
//! ```text
//! cargo build --release -p mend
//! cargo run --release -p mend --example response_replay -- [--check]
//!     [--floor PCT] [--cases DIR]... [--list] [--show ID] [--no-aider]
//!     [--aider-all] [--require]
//! ```
//!
//! `--check` exits non-zero on any wrong or broken result (either mode,
//! either half), a nonzero exit that wrote, an unreviewed write on a case
//! aider refused, or an equal share (equal and normalised, over the `ok`
//! cases not reviewed as `aider-wrong`) under `--floor` in either mode.
//! `--list` prints every case that is not equal; `--show ID` one case in
//! full. `--aider-all` runs aider's applier on every case and counts how
//! often it reproduces what aider committed (a check of the driver).
//! Without cases the replay is skipped with a loud line (exit 0;
//! `--require` makes that a failure).

// A measurement tool: its output is the report.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod aider;
mod cases;
mod outcome;
mod report;
mod reviewed;
mod run;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use cases::Case;
use outcome::{Kind, Raw, classify};
use reviewed::Verdict;
use run::{Call, Mode};

/// The least equal share `--check` accepts in each mode, in percent: the
/// value measured when the gate was set, rounded down. Raise it as
/// mend reads more of what models send.
const FLOOR: f64 = 89.0;

/// Command-line settings.
pub(crate) struct Args {
    check: bool,
    require: bool,
    floor: f64,
    extra: Vec<PathBuf>,
    list: bool,
    show: Option<String>,
    aider: bool,
    aider_all: bool,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        check: false,
        require: false,
        floor: FLOOR,
        extra: Vec::new(),
        list: false,
        show: None,
        aider: true,
        aider_all: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(x) = it.next() {
        match x.as_str() {
            "--check" => a.check = true,
            "--require" => a.require = true,
            "--list" => a.list = true,
            "--no-aider" => a.aider = false,
            "--aider-all" => a.aider_all = true,
            "--floor" => {
                a.floor = it
                    .next()
                    .and_then(|n| n.parse().ok())
                    .ok_or("--floor needs a percentage")?;
            }
            "--cases" => a
                .extra
                .push(it.next().ok_or("--cases needs a folder")?.into()),
            "--show" => a.show = Some(it.next().ok_or("--show needs a case id")?),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(a)
}

/// Which half of the repositories a case's repository is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Half {
    Tune,
    Report,
}

impl Half {
    pub(crate) const ALL: [Half; 2] = [Half::Tune, Half::Report];

    /// By the low bit of the SHA-256 of `owner/name`: fixed, and blind to
    /// what the repository's cases hold.
    pub(crate) fn of(repo: &str) -> Half {
        if mend_core::ContentHash::of(repo.as_bytes()).as_bytes()[0] & 1 == 0 {
            Half::Tune
        } else {
            Half::Report
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Half::Tune => "tune",
            Half::Report => "report",
        }
    }
}

/// A result as counted: the raw outcome, or a person's verdict on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Outcome {
    Equal,
    Normalised,
    Wrong,
    Broken,
    Refused,
    RefusedButWrote,
    NeedsReview,
    AiderWrong,
    ReviewedRight,
}

impl Outcome {
    pub(crate) const ALL: [Outcome; 9] = [
        Outcome::Equal,
        Outcome::Normalised,
        Outcome::Wrong,
        Outcome::Broken,
        Outcome::Refused,
        Outcome::RefusedButWrote,
        Outcome::NeedsReview,
        Outcome::AiderWrong,
        Outcome::ReviewedRight,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Outcome::Equal => "equal",
            Outcome::Normalised => "normalised",
            Outcome::Wrong => "wrong",
            Outcome::Broken => "broken",
            Outcome::Refused => "refused",
            Outcome::RefusedButWrote => "refused but wrote",
            Outcome::NeedsReview => "needs review",
            Outcome::AiderWrong => "aider wrong (reviewed)",
            Outcome::ReviewedRight => "written, reviewed right",
        }
    }

    /// The outcomes `--check` fails on.
    pub(crate) fn fails(self) -> bool {
        matches!(
            self,
            Outcome::Wrong | Outcome::Broken | Outcome::RefusedButWrote | Outcome::NeedsReview
        )
    }

    fn of(raw: &Raw, verdict: Option<Verdict>) -> Outcome {
        match (verdict, raw) {
            (Some(Verdict::AiderWrong), _) => Outcome::AiderWrong,
            (Some(Verdict::Right), _) => Outcome::ReviewedRight,
            (Some(Verdict::Wrong), _) | (None, Raw::Wrong { .. }) => Outcome::Wrong,
            (None, Raw::Equal) => Outcome::Equal,
            (None, Raw::Normalised) => Outcome::Normalised,
            (None, Raw::Broken { .. }) => Outcome::Broken,
            (None, Raw::Refused) => Outcome::Refused,
            (None, Raw::RefusedButWrote { .. }) => Outcome::RefusedButWrote,
            (None, Raw::Wrote) => Outcome::NeedsReview,
        }
    }
}

/// One case run in one mode, judged.
pub(crate) struct ModeRun {
    pub(crate) format: &'static str,
    pub(crate) call: Call,
    pub(crate) raw: Raw,
    pub(crate) hash: String,
    pub(crate) outcome: Outcome,
    pub(crate) reason: Option<String>,
}

/// One case, every mode it runs in, and what aider's applier did.
pub(crate) struct Replayed<'a> {
    pub(crate) case: &'a Case,
    pub(crate) half: Half,
    pub(crate) runs: BTreeMap<Mode, ModeRun>,
    pub(crate) aider: Option<aider::Applied>,
}

fn load(a: &Args) -> Result<Option<Vec<Case>>, String> {
    let mut dirs: Vec<PathBuf> = cases::unpacked()?.into_iter().collect();
    dirs.extend(a.extra.iter().cloned());
    if dirs.is_empty() {
        return Ok(None);
    }
    let mut all: Vec<Case> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for d in &dirs {
        let mut dup = 0;
        for c in cases::read_all(d)? {
            if seen.insert(c.id.clone()) {
                all.push(c);
            } else {
                dup += 1;
            }
        }
        if dup > 0 {
            println!(
                "{}: {dup} cases already read from an earlier folder, skipped",
                d.display()
            );
        }
    }
    Ok(Some(all))
}

/// Runs every case in every mode it has.
fn replay<'a>(
    mend: &Path,
    state: &Path,
    cases: &'a [Case],
    list: &[reviewed::Entry],
) -> Result<Vec<Replayed<'a>>, String> {
    let mut out = Vec::new();
    for case in cases {
        let mut runs = BTreeMap::new();
        for mode in Mode::ALL {
            let Some(format) = mode.format(case) else {
                continue;
            };
            let call = run::call(mend, state, case, format)?;
            let raw = classify(
                case.kind,
                (&case.before, &case.expected, &call.after),
                call.exit_ok,
                &case.blocks,
            );
            let hash = reviewed::result_hash(call.exit_ok, &call.after);
            let entry = reviewed::find(list, &case.id, format, &hash);
            let outcome = Outcome::of(&raw, entry.map(|e| e.verdict));
            let reason = entry.map(|e| format!("{}: {}", e.verdict.name(), e.reason));
            runs.insert(
                mode,
                ModeRun {
                    format,
                    call,
                    raw,
                    hash,
                    outcome,
                    reason,
                },
            );
        }
        out.push(Replayed {
            case,
            half: Half::of(&case.repo),
            runs,
            aider: None,
        });
    }
    Ok(out)
}

/// Runs aider's applier on the cases aider refused (every case with
/// `--aider-all`); a loud line, and no failure, when it cannot.
fn run_aider(a: &Args, replayed: &mut [Replayed<'_>]) {
    let wanted: Vec<&Case> = replayed
        .iter()
        .map(|r| r.case)
        .filter(|c| a.aider_all || c.kind == Kind::RefuseOrUnknown)
        .filter(|c| run::mend_format(&c.aider_format).is_some())
        .collect();
    if !a.aider || wanted.is_empty() {
        return;
    }
    let result = aider::ensure().and_then(|py| aider::apply(&py, &wanted));
    match result {
        Ok(mut by_id) => {
            for r in replayed.iter_mut() {
                r.aider = by_id.remove(&r.case.id);
            }
        }
        Err(e) => println!(
            "\n*** AIDER'S OWN APPLIER DID NOT RUN: {e}\n*** (what aider does with the \
             responses it refused is not shown; this is not a failure) ***\n"
        ),
    }
}

fn main() -> ExitCode {
    let a = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("response_replay: {e}");
            return ExitCode::from(2);
        }
    };
    match main_with(&a) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("response_replay: {e}");
            ExitCode::from(2)
        }
    }
}

fn main_with(a: &Args) -> Result<ExitCode, String> {
    let list = reviewed::parse(reviewed::LIST)?;
    let Some(cases) = load(a)? else {
        if a.require {
            eprintln!("response_replay: --require: the replay cases are missing");
            return Ok(ExitCode::FAILURE);
        }
        return Ok(ExitCode::SUCCESS);
    };
    let mend = run::mend_binary()?;
    let state = tempfile::tempdir().map_err(|e| format!("temporary folder: {e}"))?;
    let mut replayed = replay(&mend, state.path(), &cases, &list)?;
    run_aider(a, &mut replayed);
    if let Some(id) = &a.show {
        let r = replayed
            .iter()
            .find(|r| &r.case.id == id)
            .ok_or(format!("no case {id}"))?;
        report::show(&mend, state.path(), r);
        return Ok(ExitCode::SUCCESS);
    }
    report::report(&replayed, &list, a.aider_all);
    if a.list {
        report::list(&replayed);
    }
    let failing = report::check(&replayed, a.floor);
    if a.check && !failing.is_empty() {
        eprintln!("response_replay check failed:\n  {}", failing.join("\n  "));
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}
