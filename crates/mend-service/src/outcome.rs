//! The outcomes of apply and propose as their front-ends print them: the
//! CLI's `--json` ([`ApplyJson`], [`ApplyRefused`]) and a writing MCP
//! tool's result ([`EditResult`]).

use std::collections::BTreeMap;

use mend_core::ApplyReport;
use mend_core::report::syntax::{SyntaxFinding, SyntaxUnchecked, render_findings};
use mend_core::report::{CAPS, Omitted, cap_text};
use mend_pending::StatusReport;
use serde::Serialize;

use crate::Error;
use crate::apply::{Applied, Held};
use crate::failure::{Failure, Kind};

pub use crate::failure::Failed;

/// `mend apply --json`: the report, its edits capped at the listing cap
/// (`omitted` counts the rest), and for `--pending` the session and what
/// it now holds.
#[derive(Debug, Serialize)]
pub struct ApplyJson {
    /// The report.
    #[serde(flatten)]
    pub report: ApplyReport,
    /// With `--pending`: the session and what it holds.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub held: Option<Held>,
}

impl ApplyJson {
    /// The JSON of what an apply did.
    pub fn of(applied: Applied) -> ApplyJson {
        ApplyJson {
            report: applied.report.capped(CAPS.listed_edits),
            held: applied.held,
        }
    }
}

/// `mend apply --json` when the apply produced no report: the response
/// held no edits or could not be parsed, the change set was refused, (with
/// `--pending`) the session refused, or the command failed.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ApplyRefused {
    /// Always false.
    pub ok: bool,
    /// Always false: nothing was written (or held).
    pub written: bool,
    /// With `--pending` when the response had no usable edits: the session,
    /// and `held: null`.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub held: Option<Held>,
    /// What went wrong, in the shape every failure has.
    pub error: Failure,
    /// Whether the response held no edits at all (a parse failure).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_edits: Option<bool>,
    /// `changed` when a file changed while mend was writing (the change
    /// there was kept, nothing was written): `error.kind`, as this field
    /// said it before every failure had one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
}

impl ApplyRefused {
    /// The JSON of an apply that failed with `e`; with `pending` (the
    /// session) a response that could not be used names the session.
    pub fn of(e: &Error, pending: Option<&str>) -> ApplyRefused {
        let parse = match e {
            Error::Apply(mend_apply::ApplyError::Parse(p)) => Some(p),
            _ => None,
        };
        let mut error = e.failure();
        let held = match (pending, parse) {
            (Some(session), Some(_)) => {
                error.session = Some(session.to_owned());
                Some(Held {
                    pending: session.to_owned(),
                    held: None,
                })
            }
            _ => None,
        };
        ApplyRefused {
            held,
            no_edits: parse.map(|p| matches!(p, mend_core::Error::NoEdits)),
            ..ApplyRefused::failed(error)
        }
    }

    /// An apply that failed before the service ran (a usage error, input
    /// that could not be read).
    pub fn failed(error: Failure) -> ApplyRefused {
        ApplyRefused {
            ok: false,
            written: false,
            held: None,
            kind: (error.kind == Kind::Changed).then(|| error.kind.name().to_owned()),
            error,
            no_edits: None,
        }
    }
}

/// One edit's outcome.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct EditOutcome {
    /// The file the edit names.
    pub path: String,
    /// `applied`, `already-applied`, `failed` or `skipped`; `snippet` for a
    /// fence under the file's name that only quotes lines of it.
    #[schemars(with = "String")]
    pub status: mend_core::EditStatus,
    /// The matching pass that located it (`exact`, `whitespace`, …).
    #[schemars(with = "Option<String>")]
    pub pass: Option<mend_core::MatchPass>,
    /// Where it landed: first and last line, 1-based.
    #[schemars(with = "Option<LineRange>")]
    pub lines: Option<mend_core::report::LineSpan>,
    /// How similar the located text was to the search, for tolerant passes.
    pub similarity: Option<f64>,
}

/// An inclusive, 1-based line range (the schema of a `LineSpan`).
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct LineRange {
    /// First line.
    pub start: usize,
    /// Last line.
    pub end: usize,
}

/// The schema of [`Omitted`]: how many edits a capped list leaves out.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct OmittedCounts {
    /// How many edits are not listed.
    pub edits: usize,
    /// How many of them applied (or were no-ops).
    pub applied: usize,
    /// How many failed, by failure kind (`not_found`, `ambiguous`, …).
    pub failed: BTreeMap<String, usize>,
}

/// What a writing MCP tool did (or, in review mode, proposed).
#[derive(Debug, Default, Serialize, schemars::JsonSchema)]
pub struct EditResult {
    /// Whether files were written.
    pub written: bool,
    /// The unified diff of what changed (or would, or is proposed).
    pub diff: String,
    /// Each edit's outcome, up to the listing cap.
    pub edits: Vec<EditOutcome>,
    /// How many edits the list leaves out, by outcome.
    #[schemars(with = "Option<OmittedCounts>")]
    pub omitted: Option<Omitted>,
    /// Each changed file's new version, for `expected_version`.
    pub versions: BTreeMap<String, mend_workspace::ContentHash>,
    /// Whether this was a dry run.
    pub dry_run: bool,
    /// What recovery did first, when an interrupted transaction was found.
    pub recovery: Option<String>,
    /// In review mode: the pending session holding the changes.
    pub pending: Option<String>,
    /// In review mode: that nothing was written, and how it is reviewed.
    pub note: Option<String>,
    /// In review mode: the files the call holds outputs for, with their
    /// letters (as `pending_status` and `mend pending status --json` show
    /// them); absent for a dry run.
    pub held: Option<StatusReport>,
    /// Syntax errors the edits introduced into files that parsed before.
    pub syntax: Vec<SyntaxFinding>,
    /// The same findings as text to act on, when there are any.
    pub syntax_warning: Option<String>,
    /// Changed files the syntax check did not look at, and why.
    pub syntax_unchecked: Vec<SyntaxUnchecked>,
}

impl EditResult {
    /// The result of an apply whose edits all succeeded; `Err` carries
    /// the text a failed one answers with instead: what recovery did
    /// first, and the retry context.
    pub fn of(applied: Applied) -> Result<EditResult, String> {
        let Applied {
            report,
            recovery,
            versions,
            held,
        } = applied;
        let recovery = recovery.map(|r| r.to_string());
        if !report.ok {
            let why = report
                .retry_context
                .unwrap_or_else(|| "the edits failed".into());
            return Err(match recovery {
                Some(n) => format!("mend: {n}\n\n{why}"),
                None => why,
            });
        }
        let note = held
            .as_ref()
            .map(|h| review_note(&h.pending, report.dry_run));
        let (pending, held) = held.map_or((None, None), |h| (Some(h.pending), h.held));
        Ok(EditResult {
            written: report.written,
            diff: diff_of(&report),
            edits: outcomes(&report),
            omitted: report.omitted.clone(),
            versions,
            dry_run: report.dry_run,
            recovery,
            pending,
            note,
            held,
            syntax_warning: (!report.syntax.is_empty())
                .then(|| render_findings(&report.syntax, "WARNING")),
            syntax: report.syntax,
            syntax_unchecked: report.syntax_unchecked,
        })
    }
}

/// Every file's diff, capped.
fn diff_of(report: &ApplyReport) -> String {
    let diff: String = report.files.iter().map(|f| f.diff.as_str()).collect();
    cap_text(&diff, CAPS.diff).into_owned()
}

/// The outcome of each edit, up to the listing cap.
fn outcomes(report: &ApplyReport) -> Vec<EditOutcome> {
    report
        .edits
        .iter()
        .take(CAPS.listed_edits)
        .map(|e| EditOutcome {
            path: e.path.clone(),
            status: e.status,
            pass: e.pass,
            lines: e.lines,
            similarity: e.similarity,
        })
        .collect()
}

/// What review mode tells the model about where its changes went.
fn review_note(session: &str, dry_run: bool) -> String {
    if dry_run {
        format!(
            "dry run: nothing was held in pending session `{session}` and nothing was written; the diff is what the call would propose"
        )
    } else {
        format!(
            "nothing was written: the changes are held in pending session `{session}` for a person to review (`mend pending status`); read_file shows them"
        )
    }
}

/// `mend parse`: the edits a response holds, as JSON.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum ParseJson {
    /// The response parsed.
    Parsed {
        /// The format, or `mixed (…)`.
        format: String,
        /// The edits and malformed blocks, in order.
        entries: Vec<mend_core::formats::Entry>,
        /// Shell commands the response proposed (never run).
        shell_suggestions: Vec<mend_core::formats::ShellSuggestion>,
    },
    /// It held no edits, or could not be read.
    Failed {
        /// Why.
        error: String,
        /// Always empty.
        entries: [(); 0],
    },
}

impl ParseJson {
    /// The JSON of a parse, and whether every block was read.
    pub fn of(parsed: Result<mend_core::formats::Parsed, mend_core::Error>) -> (ParseJson, bool) {
        match parsed {
            Ok(p) => {
                let bad = p
                    .entries
                    .iter()
                    .any(|e| matches!(e, mend_core::formats::Entry::Malformed(_)));
                let json = ParseJson::Parsed {
                    format: p.format_name(),
                    entries: p.entries,
                    shell_suggestions: p.shell,
                };
                (json, !bad)
            }
            Err(e) => (
                ParseJson::Failed {
                    error: e.to_string(),
                    entries: [],
                },
                false,
            ),
        }
    }
}
