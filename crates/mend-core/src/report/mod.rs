//! Reports: what happened to each edit, as data.
//!
//! # JSON schema
//!
//! `mend apply --json` prints one [`ApplyReport`] object.
//!
//! **Positions are 1-based**, as the text output shows them: lines
//! (`lines`, `locations`, `best`, `origin.line`, `shell_suggestions[].line`,
//! `syntax[].line`), columns, and edits (`number`, `syntax[].edit_number`:
//! edit `#1` is the first edit of the response). Two fields older than
//! that rule keep their 0-based meaning for the tools that read them:
//! `index` (= `number` - 1) and `syntax[].edit` (= `edit_number` - 1).
//!
//! Its fields:
//!
//! ```text
//! {
//!   "ok": bool,                 // every edit applied (or was a no-op)
//!   "written": bool,            // files were changed on disk
//!   "dry_run": bool,
//!   "format": "search-replace", // the input's format, or "mixed (a, b)"
//!   "applied": 2, "requested": 3, // no-ops and snippets count as applied
//!   "files": [ { "path": "src/a.py", "status": "M",      // M, A, D or R
//!                "renamed_to": null, "diff": "--- a/src/a.py\n+++ …" } ],
//!   "edits": [ EditReport, … ],
//!   "retry_context": "…",       // present when an edit failed; capped
//!                               // at 64 KiB, the rest counted by kind
//!   "shell_suggestions": [{"line": 12, "command": "cargo test"}], // never run
//!   "omitted": {"edits": 99500, "applied": 0,   // present past 500 edits:
//!               "failed": {"not_found": 99500}}, // the ones not listed
//!   "syntax": [ {                 // errors the edits introduced
//!     "path": "src/a.py", "language": "python",
//!     "line": 14, "column": 1,    // 1-based, in the planned text
//!     "problem": "missing \")\"",   // or "unexpected \"else\"", "syntax error"
//!     "edit": 1,                  // the edit it follows, 0-based (kept)
//!     "edit_number": 2,           // the same, 1-based: edit #2, or null
//!     "excerpt": "  12 | …\n> 14 | …\n" } ],
//!   "syntax_unchecked": [{"path": "notes.txt",  // present when a changed
//!     "reason": "no grammar for .txt files"}],  // file was not checked
//!   "syntax_refused": true      // present when the findings refused it
//! }
//!
//! With `--syntax=refuse`, a finding makes `ok` false and nothing is
//! written; the findings are then also in `retry_context`.
//! ```
//!
//! An [`EditReport`]:
//!
//! ```text
//! {
//!   "index": 0,                       // position in the input, 0-based (kept)
//!   "number": 1,                      // the same, 1-based: edit #1
//!   "path": "src/a.py",
//!   "kind": "search/replace block",
//!   "status": "applied",              // applied | noop | failed | skipped
//!                                     // | snippet (a fence under the file's
//!                                     // name that only quotes `lines` of it)
//!   "pass": "whitespace",             // exact | trailing_whitespace |
//!                                     // whitespace | unicode | line_numbers |
//!                                     // elision | similarity | null
//!   "lines": {"start": 12, "end": 15},// 1-based, inclusive, in the original
//!   "occurrences": 1,                 // regions replaced (several with
//!                                     // replace_all); for an ambiguous
//!                                     // failure, every place it matched
//!   "similarity": 1.0,
//!   "origin": {"format": "search-replace", "line": 3, "text": "…"},
//!                                     // line 0: not known (JSON input)
//!   "failure": {                      // only when status is failed/skipped
//!     "kind": "not_found",            // see FailureKind: not_found,
//!                                     // ambiguous, already_applied, …
//!     "message": "…",
//!     "locations": [{"start": 4, "end": 6}, …],   // every ambiguous match
//!                                     // (the first 100), the overlapping
//!                                     // regions, or where it stands applied
//!     "best": {"line": 40, "similarity": 0.82,
//!              "lines": [{"number": 40, "text": "…"}, …]},
//!     "fix": "…"                      // what to send instead
//!   }
//! }
//! ```

mod collect;
pub mod syntax;

pub use collect::Collector;
use collect::Tally;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::edit::{Edit, Origin};
use crate::locate::MatchPass;

/// What happened to one edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EditStatus {
    /// The edit was located and its change is in the plan.
    Applied,
    /// The replacement equals the search: nothing to change.
    Noop,
    /// The edit could not be applied.
    Failed,
    /// The edit was not tried because an earlier edit to the file failed.
    Skipped,
    /// Not an edit: a fence under a file's name that is an unchanged
    /// excerpt of the file (its `lines`), read as prose; nothing is
    /// written and the response is not failed by it.
    Snippet,
}

/// Why an edit failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FailureKind {
    /// No pass found the search.
    NotFound,
    /// Several locations matched equally well.
    Ambiguous,
    /// The edit's region overlaps another edit's region.
    Overlap,
    /// The edit itself is unusable (empty search, bad markers, …).
    Malformed,
    /// The target file does not exist.
    FileNotFound,
    /// A creation targets a file that already has content.
    FileExists,
    /// The target is a binary file.
    Binary,
    /// The target is not valid UTF-8 text.
    NotText,
    /// The target is larger than the size limit.
    TooLarge,
    /// The path is outside the workspace or otherwise refused.
    PathRefused,
    /// An earlier edit to the same file failed.
    PreviousFailed,
    /// Reading the file failed.
    Io,
    /// The file changed since the content the edit was based on.
    Stale,
    /// The edit's result is in the file already: its replacement stands
    /// where its search would be (applied before; sending it again would
    /// change nothing, or add its new lines a second time).
    AlreadyApplied,
}

impl FailureKind {
    /// Short human label.
    pub fn label(self) -> &'static str {
        match self {
            FailureKind::NotFound => "not found",
            FailureKind::Ambiguous => "ambiguous",
            FailureKind::Overlap => "overlap",
            FailureKind::Malformed => "malformed",
            FailureKind::FileNotFound => "file not found",
            FailureKind::FileExists => "file exists",
            FailureKind::Binary => "binary file",
            FailureKind::NotText => "not UTF-8 text",
            FailureKind::TooLarge => "file too large",
            FailureKind::PathRefused => "path refused",
            FailureKind::PreviousFailed => "previous edit failed",
            FailureKind::Io => "read error",
            FailureKind::Stale => "file changed since read",
            FailureKind::AlreadyApplied => "already applied",
        }
    }
}

/// An inclusive, 1-based line range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LineSpan {
    /// First line.
    pub start: usize,
    /// Last line (equal to `start` for one line).
    pub end: usize,
}

impl LineSpan {
    /// From a 0-based half-open range; an empty range shows as its start.
    pub fn from_range(start: usize, end: usize) -> Self {
        LineSpan {
            start: start + 1,
            end: end.max(start + 1),
        }
    }
}

impl LineSpan {
    /// "line 4" or "lines 4-9", for messages.
    pub fn phrase(&self) -> String {
        if self.start == self.end {
            format!("line {self}")
        } else {
            format!("lines {self}")
        }
    }
}

impl std::fmt::Display for LineSpan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.start == self.end {
            write!(f, "{}", self.start)
        } else {
            write!(f, "{}-{}", self.start, self.end)
        }
    }
}

/// A numbered file line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NumberedLine {
    /// 1-based line number.
    pub number: usize,
    /// The line's content.
    pub text: String,
}

/// The closest location to a search that was not found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BestCandidate {
    /// 1-based first line.
    pub line: usize,
    /// Similarity in `0.0..=1.0`.
    pub similarity: f64,
    /// The candidate's lines.
    pub lines: Vec<NumberedLine>,
}

/// A failed (or skipped) edit, explained for a model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Failure {
    /// Category.
    pub kind: FailureKind,
    /// What went wrong, with line numbers.
    pub message: String,
    /// Every location of an ambiguous match (the first 100), the regions
    /// that overlap, or where the edit stands applied already.
    pub locations: Vec<LineSpan>,
    /// The closest candidate, when the search was not found.
    pub best: Option<BestCandidate>,
    /// What to send instead.
    pub fix: String,
    /// For an ambiguity, how many places matched (`locations` lists at
    /// most 100 of them); the report's `occurrences`.
    #[serde(skip)]
    pub places: u32,
}

impl Failure {
    /// A failure with only a kind, message and fix.
    pub fn new(kind: FailureKind, message: impl Into<String>, fix: impl Into<String>) -> Self {
        Failure {
            kind,
            message: message.into(),
            locations: Vec::new(),
            best: None,
            fix: fix.into(),
            places: 0,
        }
    }
}

/// The outcome of one edit. Serialized with `number` beside `index`.
#[derive(Debug, Clone, PartialEq)]
pub struct EditReport {
    /// Position of the edit in the input, 0-based (its number, `#1` in
    /// the text and `number` in JSON, is one more).
    pub index: usize,
    /// Target path.
    pub path: String,
    /// For a rename, the new path.
    pub renamed_to: Option<String>,
    /// Kind of edit, for humans.
    pub kind: &'static str,
    /// What happened.
    pub status: EditStatus,
    /// The pass that located it.
    pub pass: Option<MatchPass>,
    /// Where it applied in the original file (the first region when several).
    pub lines: Option<LineSpan>,
    /// How many regions were replaced; for an ambiguous failure, how many
    /// places the search matched.
    pub occurrences: usize,
    /// Similarity of the located region to the search.
    pub similarity: Option<f64>,
    /// Where the edit came from.
    pub origin: Option<Origin>,
    /// Why it failed.
    pub failure: Option<Failure>,
}

impl EditReport {
    /// A report for `edit` with the given status and nothing else filled in.
    pub fn new(index: usize, edit: &Edit, status: EditStatus) -> Self {
        EditReport {
            index,
            path: edit.path.clone(),
            renamed_to: match &edit.op {
                crate::EditOp::Rename { to } => Some(to.clone()),
                _ => None,
            },
            kind: edit.describe(),
            status,
            pass: None,
            lines: None,
            occurrences: 0,
            similarity: None,
            origin: edit.origin.clone(),
            failure: None,
        }
    }

    /// A failed report for a block the parser could not read.
    pub fn malformed(index: usize, m: &crate::formats::Malformed) -> Self {
        EditReport {
            index,
            path: m.path.clone().unwrap_or_default(),
            renamed_to: None,
            kind: "malformed block",
            status: EditStatus::Failed,
            pass: None,
            lines: None,
            occurrences: 0,
            similarity: None,
            origin: Some(Origin {
                format: m.format,
                line: m.line,
                text: m.text.as_str().into(),
            }),
            failure: Some(Failure::new(
                FailureKind::Malformed,
                format!("unreadable block ({}), {}", m.format, m.message),
                malformed_fix(m),
            )),
        }
    }

    /// A failed report. An ambiguity's `occurrences` is the number of
    /// places that matched.
    pub fn failed(index: usize, edit: &Edit, failure: Failure) -> Self {
        let status = if failure.kind == FailureKind::PreviousFailed {
            EditStatus::Skipped
        } else {
            EditStatus::Failed
        };
        let occurrences = match failure.kind {
            FailureKind::Ambiguous => (failure.places as usize).max(failure.locations.len()),
            _ => 0,
        };
        EditReport {
            failure: Some(failure),
            occurrences,
            ..EditReport::new(index, edit, status)
        }
    }

    /// Whether the edit did not fail.
    pub fn is_ok(&self) -> bool {
        matches!(
            self.status,
            EditStatus::Applied | EditStatus::Noop | EditStatus::Snippet
        )
    }

    /// The path for humans, escaped: both paths of a rename (`old → new`),
    /// and `(no path)` when the edit names none, so a line never reads
    /// `#1 :`.
    fn shown_path(&self) -> std::borrow::Cow<'_, str> {
        let esc = crate::text::escape_controls;
        match &self.renamed_to {
            _ if self.path.is_empty() => NO_PATH.into(),
            Some(to) if *to != self.path => format!("{} → {}", esc(&self.path), esc(to)).into(),
            _ => esc(&self.path),
        }
    }

    /// One line for humans: status, path, lines and pass.
    /// The path is escaped: a file name cannot forge a line or send
    /// terminal escapes.
    pub fn summary(&self) -> String {
        let n = self.index + 1;
        let path = self.shown_path();
        match self.status {
            EditStatus::Applied => {
                let mut s = format!("applied  #{n} {path}");
                if let Some(l) = self.lines {
                    s.push_str(&format!(":{l}"));
                }
                if let Some(p) = self.pass {
                    s.push_str(&format!(" (pass: {p}"));
                    if p == MatchPass::Similarity
                        && let Some(sim) = self.similarity
                    {
                        s.push_str(&format!(", {:.0}% similar", sim * 100.0));
                    }
                    s.push(')');
                }
                if self.occurrences > 1 {
                    s.push_str(&format!(" ×{}", self.occurrences));
                }
                s
            }
            EditStatus::Noop => format!("no-op    #{n} {path} (replacement equals search)"),
            EditStatus::Snippet => {
                let at = self
                    .lines
                    .map_or(String::new(), |l| format!(" {}", l.phrase()));
                format!("snippet  #{n} {path} (read as a snippet of {path}{at}, not an edit)")
            }
            EditStatus::Failed | EditStatus::Skipped => {
                let word = if self.status == EditStatus::Failed {
                    "FAILED "
                } else {
                    "skipped"
                };
                // A message that starts with the path (a refused path says
                // it) is not prefixed with it twice.
                let why = self.failure.as_ref().map_or(String::new(), |f| {
                    let own = format!("{}: ", crate::text::escape_controls(&self.path));
                    format!(": {}", f.message.strip_prefix(&own).unwrap_or(&f.message))
                });
                format!("{word}  #{n} {path}{why}")
            }
        }
    }
}

impl Serialize for EditReport {
    /// The report's fields in order, with `number` (1-based, as `#1` in
    /// the text) after `index` (0-based, kept as it always was).
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Wire<'a> {
            index: usize,
            number: usize,
            path: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            renamed_to: &'a Option<String>,
            kind: &'static str,
            status: EditStatus,
            pass: Option<MatchPass>,
            lines: Option<LineSpan>,
            occurrences: usize,
            similarity: Option<f64>,
            origin: &'a Option<Origin>,
            failure: &'a Option<Failure>,
        }
        Wire {
            index: self.index,
            number: self.index + 1,
            path: &self.path,
            renamed_to: &self.renamed_to,
            kind: self.kind,
            status: self.status,
            pass: self.pass,
            lines: self.lines,
            occurrences: self.occurrences,
            similarity: self.similarity,
            origin: &self.origin,
            failure: &self.failure,
        }
        .serialize(s)
    }
}

/// A file's status letter: what a change does to it (`M`, `A`, `D`, `R`
/// in apply reports and checkpoint restores) and, in a pending session,
/// how its output stands against the file now. Written (text and JSON) as
/// its letter.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
pub enum Status {
    /// In a session: in context, no output, unchanged locally (shown as a
    /// blank).
    #[serde(rename = " ")]
    Clean,
    /// The text changes (`M`).
    #[serde(rename = "M")]
    Modified,
    /// The file is created (`A`).
    #[serde(rename = "A")]
    Added,
    /// In a session: the output creates a file that now exists locally
    /// (`!A`).
    #[serde(rename = "!A")]
    AddedOverLocal,
    /// The file is deleted (`D`); in a session also when the file is
    /// already gone, where accepting only clears the entry.
    #[serde(rename = "D")]
    Deleted,
    /// The file is renamed (`R`).
    #[serde(rename = "R")]
    Renamed,
    /// In a session: the output renames the file onto a path that exists
    /// now (`!R`); accepting it is refused until that path is free.
    #[serde(rename = "!R")]
    RenamedOverLocal,
    /// In a session: the file changed locally since the context, no
    /// output (`~`).
    #[serde(rename = "~")]
    LocalChange,
    /// In a session: the file changed locally and there is an output, a
    /// conflict (`~M`).
    #[serde(rename = "~M")]
    Conflict,
    /// In a session: the file cannot be read as text now (binary, a
    /// folder, too large): `?`, with the reason.
    #[serde(rename = "?")]
    Unreadable,
    /// In a turn: the entry's type or mode changed (`T`): a file became a
    /// link or a folder, or the reverse, or its executable bit changed.
    #[serde(rename = "T")]
    TypeChanged,
}

impl Status {
    /// The letter: `" "`, `M`, `A`, `!A`, `D`, `R`, `!R`, `~`, `~M`, `?`
    /// or `T`.
    pub fn letter(self) -> &'static str {
        match self {
            Status::Clean => " ",
            Status::Modified => "M",
            Status::Added => "A",
            Status::AddedOverLocal => "!A",
            Status::Deleted => "D",
            Status::Renamed => "R",
            Status::RenamedOverLocal => "!R",
            Status::LocalChange => "~",
            Status::Conflict => "~M",
            Status::Unreadable => "?",
            Status::TypeChanged => "T",
        }
    }
}

impl std::fmt::Display for Status {
    /// The letter, padded as a `{:<2}` format asks.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.letter())
    }
}

/// One file's change, as reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileSummary {
    /// Path.
    pub path: String,
    /// `M` modified, `A` added, `D` deleted, `R` renamed.
    pub status: Status,
    /// New path for a rename.
    pub renamed_to: Option<String>,
    /// Unified diff of the change.
    pub diff: String,
}

/// The report of a whole `apply`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ApplyReport {
    /// Every edit applied or was a no-op.
    pub ok: bool,
    /// Files were changed on disk.
    pub written: bool,
    /// This was a dry run.
    pub dry_run: bool,
    /// The input format.
    pub format: String,
    /// Edits applied (no-ops and snippets included).
    pub applied: usize,
    /// Edits requested.
    pub requested: usize,
    /// Changed files.
    pub files: Vec<FileSummary>,
    /// Per-edit outcomes, in input order.
    pub edits: Vec<EditReport>,
    /// The model-ready explanation of the failures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_context: Option<String>,
    /// Shell commands the response proposed; mend never runs them.
    pub shell_suggestions: Vec<crate::formats::ShellSuggestion>,
    /// Edits not listed in `edits` (see [`ApplyReport::capped`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub omitted: Option<Omitted>,
    /// Syntax errors the edits introduced (see [`syntax`]).
    pub syntax: Vec<syntax::SyntaxFinding>,
    /// Changed files the syntax check did not look at, and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub syntax_unchecked: Vec<syntax::SyntaxUnchecked>,
    /// The syntax findings refused the apply (`--syntax=refuse`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub syntax_refused: bool,
}

/// How much a report shows, so no response can produce an unbounded one:
/// a retry context stops adding failures in full past
/// [`Caps::retry_context`] bytes and summarises the rest by kind; a listing
/// of edits (JSON, MCP) shows [`Caps::listed_edits`] and counts the rest; a
/// diff in an MCP result is cut at [`Caps::diff`] bytes.
#[derive(Debug, Clone, Copy)]
pub struct Caps {
    /// Bytes of failures shown in full in a retry context.
    pub retry_context: usize,
    /// Edits listed one by one.
    pub listed_edits: usize,
    /// Bytes of diff in a result a model reads.
    pub diff: usize,
}

/// The caps every output of mend uses.
pub const CAPS: Caps = Caps {
    retry_context: 64 * 1024,
    listed_edits: 500,
    diff: 256 * 1024,
};

/// The edits a capped report does not list one by one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Omitted {
    /// How many edits are not listed.
    pub edits: usize,
    /// How many of them applied (or were no-ops).
    pub applied: usize,
    /// How many failed, by failure kind (`not_found`, `ambiguous`, …).
    pub failed: std::collections::BTreeMap<String, usize>,
}

impl Omitted {
    /// The summary of `reports`.
    pub fn of<'r>(reports: impl IntoIterator<Item = &'r EditReport>) -> Omitted {
        let mut o = Omitted::default();
        for r in reports {
            o.count(Tally::of(r));
        }
        o
    }

    /// Counts one more edit.
    fn count(&mut self, t: Tally) {
        self.edits += 1;
        match t {
            Tally::Ok => self.applied += 1,
            Tally::Failed(Some(kind)) => {
                let key = serde_json::to_value(kind)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
                *self.failed.entry(key).or_default() += 1;
            }
            Tally::Failed(None) => {}
        }
    }

    /// Adds the counts of `other`.
    fn merge(&mut self, other: &Omitted) {
        self.edits += other.edits;
        self.applied += other.applied;
        for (k, n) in &other.failed {
            *self.failed.entry(k.clone()).or_default() += n;
        }
    }

    /// "12 applied, 3 not found, 1 ambiguous".
    pub fn describe(&self) -> String {
        let mut parts = vec![format!("{} applied", self.applied)];
        parts.extend(
            self.failed
                .iter()
                .map(|(k, n)| format!("{n} {}", k.replace('_', " "))),
        );
        parts.join(", ")
    }
}

impl ApplyReport {
    /// The report with at most `max` edits listed; the rest are counted in
    /// `omitted`.
    pub fn capped(mut self, max: usize) -> ApplyReport {
        if self.edits.len() > max {
            let rest = self.edits.split_off(max);
            self.omitted = Some(Omitted::of(&rest));
        }
        self
    }
}

/// `text` cut at the last line break within `max` bytes, with a note of
/// how much was left out; unchanged when it fits.
pub fn cap_text(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= max {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let cut = text[..cut].rfind('\n').map_or(cut, |i| i + 1);
    let left = text[cut..].lines().count();
    std::borrow::Cow::Owned(format!(
        "{}[… {left} more lines ({} bytes) not shown: the output is capped at {max} bytes]\n",
        &text[..cut],
        text.len() - cut
    ))
}

/// Whether `reports` are all of fences read as snippets: the response
/// asked for no change at all, which fails it as a response without edits
/// would (see [`Collector::all_ok`]).
pub fn only_snippets(reports: &[EditReport]) -> bool {
    !reports.is_empty() && reports.iter().all(|r| r.status == EditStatus::Snippet)
}

/// Renders failures as one block a model can act on: for each failed edit,
/// the error, the edit as it was sent, and an instruction to fix it (the
/// retry context a model is sent back). Past [`Caps::retry_context`] bytes, the
/// remaining failures are counted by kind instead of shown.
pub fn render_retry_context(reports: &[EditReport]) -> Option<String> {
    let mut c = Collector::with_listed(0);
    for r in reports {
        c.observe(r);
    }
    c.retry_context()
}

/// What a model does about a block it sent that could not be read,
/// pointing at the prompt of the format it was read as.
fn malformed_fix(m: &crate::formats::Malformed) -> String {
    let prompt = match m.format.format() {
        Some(f) => format!("`mend prompt {f}`"),
        None => "`mend prompt str-replace` or `mend prompt anchored`".to_owned(),
    };
    if m.format == crate::formats::BlockKind::Reasoning {
        return "Send the response again without the reasoning above that line, or with the line that opens it (`<think>`), so its drafts are not read as edits.".to_owned();
    }
    // A whole file whose own fences may have closed its fence: a longer
    // fence is the cure, not another closing line.
    if m.message.contains("longer outer fence") {
        return format!(
            "Send the whole file again in a fence longer than any fence inside it (```` when the file holds ``` lines; see {prompt})."
        );
    }
    // A block cut short: its closing line is what is missing.
    if m.message.contains("not closed") || m.message.contains("never closed") {
        let closing = match m.format.format() {
            Some(crate::Format::ApplyPatch) => "a `*** End Patch` line",
            Some(crate::Format::EditBlock) => "a `»»» EDIT END` line",
            Some(crate::Format::SearchReplace) => "a `>>>>>>> REPLACE` line",
            Some(crate::Format::WholeFile) => "its closing fence",
            _ => "its closing line",
        };
        return format!(
            "Close the block with {closing} after its last line, and send the whole block again (see {prompt})."
        );
    }
    match m.path {
        // Without a path nothing says which file it changes.
        None => format!(
            "Name the file the block changes, where the format puts its path (see {prompt}), and send the block again."
        ),
        Some(_) => format!("Send the block again, following the format exactly (see {prompt})."),
    }
}

/// How a report without a path shows it.
const NO_PATH: &str = "(no path)";

/// One failed edit, explained in full.
fn failure_section(r: &EditReport) -> String {
    let mut out = String::new();
    let Some(f) = &r.failure else {
        return out;
    };
    let about = if r.path.is_empty() {
        format!("{} without a path", r.kind)
    } else {
        format!("{} for {}", r.kind, r.shown_path())
    };
    out.push_str(&format!(
        "\n## Edit #{} ({about}) — {}\n",
        r.index + 1,
        f.kind.label()
    ));
    if let Some(o) = &r.origin
        && o.line > 0
    {
        out.push_str(&format!("(at line {} of your response)\n", o.line));
    }
    out.push_str(&f.message);
    out.push('\n');
    if let Some(best) = &f.best {
        out.push_str(&format!(
            "\nClosest match in the file, {:.0}% similar, at line {}:\n",
            best.similarity * 100.0,
            best.line
        ));
        let width = best.lines.last().map_or(1, |l| l.number.to_string().len());
        for l in &best.lines {
            out.push_str(&format!(
                "{:>width$} | {}\n",
                l.number,
                crate::text::escape_controls_in_text(&l.text)
            ));
        }
    }
    if let Some(o) = &r.origin
        && !o.text.is_empty()
    {
        out.push_str("\nYour edit was:\n");
        let quoted = crate::text::escape_controls_in_text(&o.text);
        out.push_str(&cap_text(&quoted, CAPS.retry_context / 4));
        if !o.text.ends_with('\n') {
            out.push('\n');
        }
    }
    out.push_str(&format!("\nFix: {}\n", f.fix));
    out
}
