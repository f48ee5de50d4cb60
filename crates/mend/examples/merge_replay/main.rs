//! The merge replay benchmark: real merges replayed in every merge mode,
//! and a generated corpus of merges whose right answer is known.
//!
//! **Replay.** `../shared/merge-replay/cases.tar.gz` (beside the workspace
//! root, or the file or folder `$MEND_MERGE_REPLAY` names) holds 600 files
//! that both parents of a merge commit changed, with base, ours, theirs and
//! what the person who merged committed (`merged`). It is unpacked under
//! `target/merge-replay/`, never into the repository. Each case is merged
//! in every mode (`git`, `adjacent`, `structured`, `adjacent+structured`)
//! in the `merge` style with git's labels, and counted as **match** (clean
//! and equal to `merged`), **differs** (clean, not equal) or **conflict**.
//! Against the `git` mode each mode also counts the git conflicts it
//! resolves (and how many of those match `merged`) and its **regressions**:
//! a case git merged to `merged` that the mode does not, or a case git
//! merged cleanly where the mode's bytes differ from git's. The `git` mode
//! itself is compared with `git merge-file -p` when git is on PATH.
//!
//! **Synthetic** (`synthetic.rs`): about 900 merges generated, seeded, from
//! real files, in classes people and models produce (adjacent lines, a
//! one-line gap, identical changes, interleaved edits, two insertions at
//! one point, a block both sides insert, a span both replace, a delete
//! against an edit...), each with its right answer: a merged text, or a
//! conflict. Counted per class as right, conflict or wrong.
//!
//! ```text
//! cargo run --release -p mend --example merge_replay -- [--check] [--require]
//!     [--show-wrong] [--dump DIR] [--per-class N] [--seed N]
//! ```
//!
//! `--check` exits non-zero on any regression against git, any difference
//! between the `git` mode and `git merge-file`, a mode whose resolved
//! conflicts match `merged` under 90% of the time (when it resolves any),
//! and, on the synthetic corpus, any wrong merge or a mode right less often
//! than git on a class. Without the tarball the replay is skipped with a
//! loud line (exit 0; `--require` makes that a failure); the synthetic
//! corpus then draws from this repository's own sources.

// A measurement tool: its output is the report.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod cases;
mod replay;
mod synthetic;

use std::path::PathBuf;
use std::process::ExitCode;

use mend_merge::{Adjacent, Labels, Options, Style, is_prose, language_for, merge};

/// A merge mode: which resolvers run over git's conflicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Mode {
    Git,
    Adjacent,
    Structured,
    Both,
}

impl Mode {
    pub(crate) const ALL: [Mode; 4] = [Mode::Git, Mode::Adjacent, Mode::Structured, Mode::Both];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Mode::Git => "git",
            Mode::Adjacent => "adjacent",
            Mode::Structured => "structured",
            Mode::Both => "adjacent+structured",
        }
    }

    /// The options of this mode for a file at `path`: its language turns
    /// the structured resolver on, and prose keeps touching changes in
    /// conflict, as `Options::for_path` decides for the editor.
    pub(crate) fn options(self, path: &str) -> Options {
        let adjacent = match self {
            Mode::Adjacent | Mode::Both => Adjacent::Merge,
            Mode::Git | Mode::Structured => Adjacent::Conflict,
        };
        let structured = match self {
            Mode::Structured | Mode::Both => language_for(path),
            Mode::Git | Mode::Adjacent => None,
        };
        Options {
            style: Style::Merge,
            adjacent,
            structured,
            prose: is_prose(path),
        }
    }
}

/// One merge's result, as the benchmark judges it.
#[derive(Debug, Clone)]
pub(crate) struct Merged {
    /// The rendered text, with git's markers and labels where it conflicts.
    pub(crate) bytes: Vec<u8>,
    pub(crate) clean: bool,
    /// The resolver of each resolved region, in order.
    pub(crate) resolvers: Vec<&'static str>,
}

/// Merges in `mode` and renders as `git merge-file -p ours base theirs`
/// would, labels included.
pub(crate) fn run(mode: Mode, path: &str, base: &[u8], ours: &[u8], theirs: &[u8]) -> Merged {
    let m = merge(base, ours, theirs, &mode.options(path));
    let labels = Labels {
        ours: Some("ours".into()),
        base: Some("base".into()),
        theirs: Some("theirs".into()),
    };
    Merged {
        bytes: m.render(&labels, Style::Merge, 7),
        clean: m.is_clean(),
        resolvers: m.regions().iter().filter_map(|r| r.resolver).collect(),
    }
}

/// Command-line settings.
pub(crate) struct Args {
    pub(crate) check: bool,
    pub(crate) require: bool,
    pub(crate) show_wrong: bool,
    pub(crate) dump: Option<PathBuf>,
    pub(crate) per_class: usize,
    pub(crate) seed: u64,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        check: false,
        require: false,
        show_wrong: false,
        dump: None,
        per_class: 90,
        seed: 26,
    };
    let mut it = std::env::args().skip(1);
    while let Some(x) = it.next() {
        let mut number = |flag: &str| {
            it.next()
                .and_then(|n| n.parse::<u64>().ok())
                .ok_or(format!("{flag} needs a number"))
        };
        match x.as_str() {
            "--check" => a.check = true,
            "--require" => a.require = true,
            "--show-wrong" => a.show_wrong = true,
            "--per-class" => a.per_class = number("--per-class")? as usize,
            "--seed" => a.seed = number("--seed")?,
            "--dump" => a.dump = Some(it.next().ok_or("--dump needs a folder")?.into()),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(a)
}

fn main() -> ExitCode {
    let a = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("merge_replay: {e}");
            return ExitCode::from(2);
        }
    };
    let mut failing = Vec::new();
    let loaded = match cases::load() {
        Ok(l) => l,
        Err(e) => {
            eprintln!("merge_replay: {e}");
            return ExitCode::from(2);
        }
    };
    let sources = match &loaded {
        Some(cases) => {
            let r = replay::replay(&a, cases);
            r.report(&a);
            failing.extend(r.check());
            cases::sources_from_cases(cases)
        }
        None => {
            if a.require {
                eprintln!("merge_replay: --require: the replay cases are missing");
                return ExitCode::FAILURE;
            }
            cases::own_sources()
        }
    };
    let s = synthetic::synthetic(&a, &sources);
    s.report();
    failing.extend(s.check());
    if a.check && !failing.is_empty() {
        eprintln!("merge_replay check failed:\n  {}", failing.join("\n  "));
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
