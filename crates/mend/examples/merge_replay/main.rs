//! The merge replay benchmark: real merges replayed in every merge mode,
//! and a generated corpus of merges whose right answer is known.
//!
//! **Replay.** `../shared/merge-replay/cases-9.tar.gz` (beside the
//! workspace root, or the file or folder `$MEND_MERGE_REPLAY` names) holds
//! 1,677 files from nine projects that both parents of a merge commit
//! changed, with base, ours, theirs and what the person who merged
//! committed (`merged`). It is unpacked under `target/merge-replay/`,
//! never into the repository. Each case is merged in every mode (`git`;
//! each resolver alone: `adjacent`, `contained`, `structured`; and `safe`,
//! the set `--merge safe` runs) in the `merge` style with git's labels.
//! A mode is judged on the cases git leaves in conflict that it settles
//! (merges cleanly), each **match** (equal to `merged`), **undetermined**
//! (`merged` has a non-blank line neither side has: the person wrote
//! more, so no merge of the inputs could equal it) or **wrong** (anything
//! else, blank lines included), and on its **regressions**: a case git
//! merged to `merged` that it does not, or a case git merged cleanly where
//! its bytes differ from git's. "Determined matching" is match over match
//! plus wrong. The `git` mode itself is compared with `git merge-file -p`
//! when git is on PATH.
//!
//! The projects are split (see `cases::TUNE`): resolvers are tuned on the
//! tune projects and reported on the held-out ones; every table gives both
//! halves, per mode, per resolver and per project. `--projects tune` runs
//! only the tune projects (what a tuning loop should look at),
//! `--projects held-out` only the others, `--projects a,b` those named.
//!
//! **Synthetic** (`synthetic.rs`): merges generated, seeded, from real
//! files, in classes people and models produce (adjacent lines, a one-line
//! gap, identical changes, interleaved edits, two insertions at one point,
//! a block both sides insert, a span both replace, a delete against an
//! edit, and the shapes resolvers got wrong on real history), each with its
//! right answer: a merged text, or a conflict. Counted per class as right,
//! conflict or wrong.
//!
//! ```text
//! cargo run --release -p mend --example merge_replay -- [--check] [--require]
//!     [--projects all|tune|held-out|NAME,...] [--show-wrong] [--dump DIR]
//!     [--per-class N] [--seed N]
//! ```
//!
//! `--check` exits non-zero on any regression against git, any difference
//! between the `git` mode and `git merge-file`, a resolver on by default
//! (`Policy::default()` is `safe`) whose determined resolutions on the
//! held-out projects match under 95% of the time, and, on the synthetic
//! corpus, any wrong merge or a mode right less often than git on a class.
//! Without the tarball the replay is skipped with a loud line (exit 0;
//! `--require` makes that a failure); the synthetic corpus then draws from
//! this repository's own sources.

// A measurement tool: its output is the report.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod cases;
mod replay;
mod synthetic;

use std::path::PathBuf;
use std::process::ExitCode;

use mend_merge::{
    AdjacentResolver, ContainedResolver, Labels, Options, Policy, Resolver, StructuredResolver,
    Style, is_prose, language_for, merge, merge_with,
};

/// A merge mode: which resolvers run over git's conflicts. Each resolver
/// runs alone in a mode of its own, so it is judged on what it settles by
/// itself; `safe` is the set `--merge safe` runs, in its order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Mode {
    Git,
    Adjacent,
    Contained,
    Structured,
    Safe,
}

impl Mode {
    pub(crate) const ALL: [Mode; 5] = [
        Mode::Git,
        Mode::Adjacent,
        Mode::Contained,
        Mode::Structured,
        Mode::Safe,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Mode::Git => "git",
            Mode::Adjacent => "adjacent",
            Mode::Contained => "contained",
            Mode::Structured => "structured",
            Mode::Safe => "safe",
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
/// would, labels included. Prose keeps touching changes in conflict, as
/// `Options::for_path` decides for the editor, so `adjacent` does not run
/// on it.
pub(crate) fn run(mode: Mode, path: &str, base: &[u8], ours: &[u8], theirs: &[u8]) -> Merged {
    let structured = language_for(path).map(|language| StructuredResolver { language });
    let alone: Option<&dyn Resolver> = match mode {
        Mode::Adjacent if !is_prose(path) => Some(&AdjacentResolver),
        Mode::Contained => Some(&ContainedResolver),
        Mode::Structured => structured.as_ref().map(|s| s as &dyn Resolver),
        _ => None,
    };
    let m = if mode == Mode::Safe {
        merge(base, ours, theirs, &Options::for_path(path, Policy::Safe))
    } else {
        merge_with(base, ours, theirs, Style::Merge, alone.as_slice())
    };
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
    /// Which projects' cases run: `all`, `tune`, `held-out`, or names
    /// separated by commas.
    pub(crate) projects: String,
}

impl Args {
    /// Whether `project`'s cases run under `--projects`.
    pub(crate) fn keeps(&self, project: &str) -> bool {
        match self.projects.as_str() {
            "all" => true,
            "tune" | "held-out" => cases::half(project) == self.projects,
            names => names.split(',').any(|n| n == project),
        }
    }
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        check: false,
        require: false,
        show_wrong: false,
        dump: None,
        per_class: 90,
        seed: 26,
        projects: "all".to_owned(),
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
            "--projects" => {
                a.projects = it
                    .next()
                    .ok_or("--projects needs all, tune, held-out or project names")?;
            }
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
    let loaded = match cases::load(&|p| a.keeps(p)) {
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
            failing.extend(r.check(&a));
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
