//! The MCP tools' typed results: each tool declares its result's JSON
//! Schema as its output schema and returns the value as structured content,
//! with the same JSON as text beside it for clients that read text only.

use std::collections::BTreeMap;

use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::schemars::{self, JsonSchema};
use serde::Serialize;

/// One edit's outcome.
#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct EditOutcome {
    /// The file the edit names.
    pub(super) path: String,
    /// `applied`, `already-applied`, `failed` or `skipped`.
    pub(super) status: String,
    /// The matching pass that located it (`exact`, `whitespace`, …).
    pub(super) pass: Option<String>,
    /// Where it landed: first and last line, 1-based.
    pub(super) lines: Option<LineRange>,
    /// How similar the located text was to the search, for tolerant passes.
    pub(super) similarity: Option<f64>,
}

/// An inclusive, 1-based line range.
#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct LineRange {
    /// First line.
    pub(super) start: usize,
    /// Last line.
    pub(super) end: usize,
}

/// What a writing tool did (or, in review mode, proposed).
#[derive(Debug, Default, Serialize, JsonSchema)]
pub(super) struct EditResult {
    /// Whether files were written.
    pub(super) written: bool,
    /// The unified diff of what changed (or would, or is proposed).
    pub(super) diff: String,
    /// Each edit's outcome, up to the listing cap.
    pub(super) edits: Vec<EditOutcome>,
    /// How many edits the list leaves out, by outcome.
    pub(super) omitted: Option<serde_json::Value>,
    /// Each changed file's new version, for `expected_version`.
    pub(super) versions: BTreeMap<String, String>,
    /// Whether this was a dry run.
    pub(super) dry_run: bool,
    /// What recovery did first, when an interrupted transaction was found.
    pub(super) recovery: Option<String>,
    /// In review mode: the pending session holding the changes.
    pub(super) pending: Option<String>,
    /// In review mode: that nothing was written, and how it is reviewed.
    pub(super) note: Option<String>,
    /// In review mode: the files the call holds outputs for, with their
    /// letters (as `pending_status` and `mend pending status --json` show
    /// them); absent for a dry run.
    pub(super) held: Option<mend_pending::StatusReport>,
    /// Syntax errors the edits introduced into files that parsed before.
    pub(super) syntax: Vec<mend_core::report::syntax::SyntaxFinding>,
    /// The same findings as text to act on, when there are any.
    pub(super) syntax_warning: Option<String>,
    /// Changed files the syntax check did not look at, and why.
    pub(super) syntax_unchecked: Vec<mend_core::report::syntax::SyntaxUnchecked>,
}

/// `read_file`'s result.
#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct ReadResult {
    /// The path relative to the root.
    pub(super) path: String,
    /// The content's hash: pass it as `expected_version`.
    pub(super) version: String,
    /// How many lines the file has.
    pub(super) total_lines: usize,
    /// The first line returned, 1-based.
    pub(super) offset: usize,
    /// The lines asked for.
    pub(super) content: String,
    /// In review mode: the session whose pending output this is, if any.
    pub(super) pending: Option<String>,
}

/// `checkpoint_create`'s result: the checkpoint made (its fields), or
/// with `dry_run` what it would hold.
#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct CreateResult {
    /// The checkpoint made.
    #[serde(flatten)]
    pub(super) checkpoint: Option<mend_checkpoint::Checkpoint>,
    /// Set for a dry run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) dry_run: Option<bool>,
    /// For a dry run: the files it would hold and those it would skip.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) would_hold: Option<mend_checkpoint::Preview>,
}

/// `checkpoint_list`'s result.
#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct ListResult {
    /// The checkpoints, newest first.
    pub(super) checkpoints: Vec<mend_checkpoint::Checkpoint>,
}

/// A successful result carrying `value` as structured content and as text.
pub(super) fn structured<T: Serialize>(value: &T) -> CallToolResult {
    let v = serde_json::to_value(value).unwrap_or_default();
    let mut r = CallToolResult::structured(v.clone());
    r.content = vec![ContentBlock::text(
        serde_json::to_string_pretty(&v).unwrap_or_default(),
    )];
    r
}

/// The outcome of each edit of a report, up to the listing cap.
pub(super) fn outcomes(report: &mend_core::ApplyReport, cap: usize) -> Vec<EditOutcome> {
    let name = |v: serde_json::Value| v.as_str().map(str::to_owned);
    report
        .edits
        .iter()
        .take(cap)
        .map(|e| EditOutcome {
            path: e.path.clone(),
            status: name(serde_json::to_value(e.status).unwrap_or_default()).unwrap_or_default(),
            pass: e
                .pass
                .and_then(|p| name(serde_json::to_value(p).unwrap_or_default())),
            lines: e.lines.map(|l| LineRange {
                start: l.start,
                end: l.end,
            }),
            similarity: e.similarity,
        })
        .collect()
}
