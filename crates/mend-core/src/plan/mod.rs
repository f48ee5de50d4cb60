//! Planning: from a file's text and its edits to the new text and a report.
//!
//! [`plan_file`] walks a file's edits in order. Replacements that follow one
//! another form a batch (`batch.rs`), located against the same text, checked
//! for overlap and spliced bottom to top; a creation, whole-file write,
//! deletion, rename or mode change ends the batch. The new text is built
//! from byte ranges of the original, so bytes outside the located regions
//! are untouched by construction. Inside a region (`splice.rs`):
//!
//! - replacement lines that equal a search line (context the edit keeps) are
//!   taken from the *file*, with their own bytes and line ending, so a
//!   tolerant match never rewrites a line the edit did not change;
//! - new lines get the file's dominant line ending and, after a
//!   whitespace-tolerant pass, the file's indentation ([`crate::indent`]);
//! - an elision marker kept in the replacement stands for the elided lines,
//!   and a marker is never written into a file;
//! - whether the file ends with a newline is preserved;
//! - a control character the file did not have (a NUL that would make it
//!   binary) is refused.
//!
//! Substring targets (`substring.rs`), anchored regions (`region.rs`),
//! artifacts pasted on the new side (`artifacts.rs`) and the model-ready
//! explanations of failures (`explain.rs`) have modules of their own.

mod artifacts;
mod batch;
mod content;
use batch::{Batch, Prepared};
use sequel::{Sequel, Settled};
mod explain;
mod lazy;
mod lines;
mod readings;
mod region;
mod sequel;
mod splice;
mod substring;
mod whole;

use std::cell::OnceCell;

use crate::Format;
use crate::edit::{Edit, EditOp, Replace, Target};
use crate::indent::Style;
use crate::locate::{Haystack, LocateOptions};
use crate::normalize::{Elision, marker_kind};
use crate::report::{EditReport, EditStatus, Failure, FailureKind, Status};
use crate::text::{Document, introduced_control};

/// Options for planning.
#[derive(Debug, Clone, Copy, Default)]
pub struct PlanOptions {
    /// Locator tunables.
    pub locate: LocateOptions,
    /// After an edit to a file fails, skip that file's later edits
    /// ("previous edit to this file failed"); the partial-apply policy.
    pub skip_after_failure: bool,
}

/// The planned outcome for one path.
#[derive(Debug, Clone, PartialEq)]
pub struct FilePlan {
    /// The path the edits named.
    pub path: String,
    /// Where the content ends up, when the file is renamed.
    pub new_path: Option<String>,
    /// Whether the file existed before.
    pub existed: bool,
    /// The content after the plan; `None` when the file is deleted.
    pub content: Option<String>,
    /// A requested change of the executable bits.
    pub executable: Option<bool>,
    /// One report per edit, in input order.
    pub reports: Vec<EditReport>,
}

impl FilePlan {
    /// Whether every edit succeeded.
    pub fn is_ok(&self) -> bool {
        self.reports.iter().all(EditReport::is_ok)
    }

    /// The status letter (`M`, `A`, `D`, `R`), or `None` when nothing changes.
    pub fn status(&self, original: Option<&str>) -> Option<Status> {
        match (self.existed, &self.content, &self.new_path) {
            (true, None, _) => Some(Status::Deleted),
            (false, Some(_), _) => Some(Status::Added),
            (true, Some(_), Some(_)) => Some(Status::Renamed),
            (true, Some(c), None) if Some(c.as_str()) != original => Some(Status::Modified),
            (true, Some(_), None) if self.executable.is_some() => Some(Status::Modified),
            _ => None,
        }
    }
}

/// Plans one file's edits as they arrive: the planner behind
/// [`plan_file`], and behind `mend apply --stream`, where each block is
/// checked as soon as it is complete and never searched again.
///
/// Replacements that follow one another form a batch located against the
/// same text (prepared once: its lines and indexes); a creation,
/// whole-file write, deletion, rename or mode change ends the batch.
pub struct FilePlanner {
    path: String,
    opts: PlanOptions,
    existed: bool,
    /// The batch's base text and indexes; `None` while the file is absent.
    base: Option<Prepared>,
    /// The file as it was, once an edit changed `base` (a snippet may
    /// quote either).
    original: Option<Option<Prepared>>,
    batch: Batch,
    /// The batch read in sequence (`sequel.rs`), once it has a second
    /// block and while that reading can still win.
    seq: Option<Sequel>,
    /// The batch holds a block read only against the file as it was (a
    /// diff hunk, a patch chunk).
    seq_off: bool,
    new_path: Option<String>,
    executable: Option<bool>,
    reports: Reports,
    failed: bool,
}

/// A file's reports while it is planned. An applied replacement's report
/// stays open until its batch ends (a later edit that overlaps it fails
/// it); every other report is final at once and waits in `done` until
/// [`FilePlanner::take_done`] or [`FilePlanner::finish`] takes it, so a
/// caller that takes them as they come holds only the open ones.
#[derive(Default)]
pub(crate) struct Reports {
    /// The batch's applied reports, by the `owner` of their splices.
    open: Vec<EditReport>,
    done: Vec<EditReport>,
    /// Whether the newest report is open.
    last_open: bool,
}

impl Reports {
    /// The `owner` the next open report will have.
    pub(crate) fn next_open(&self) -> usize {
        self.open.len()
    }

    /// A final report.
    pub(crate) fn push(&mut self, r: EditReport) {
        self.last_open = false;
        self.done.push(r);
    }

    /// An applied replacement's report, open until its batch ends.
    pub(crate) fn push_open(&mut self, r: EditReport) {
        self.last_open = true;
        self.open.push(r);
    }

    /// The open report of the splices with `owner`.
    pub(crate) fn open_mut(&mut self, owner: usize) -> &mut EditReport {
        &mut self.open[owner]
    }

    /// The batch ended: its reports are final.
    fn close(&mut self) {
        self.done.append(&mut self.open);
        self.last_open = false;
    }

    fn last(&self) -> Option<&EditReport> {
        if self.last_open {
            self.open.last()
        } else {
            self.done.last()
        }
    }
}

impl FilePlanner {
    /// A planner for the file at `path` with content `original` (`None`
    /// when it does not exist).
    pub fn new(path: &str, original: Option<&str>, opts: &PlanOptions) -> FilePlanner {
        FilePlanner {
            path: path.to_owned(),
            opts: *opts,
            existed: original.is_some(),
            base: original.map(|t| Prepared::of(t.to_owned())),
            original: None,
            batch: Batch::default(),
            seq: None,
            seq_off: false,
            new_path: None,
            executable: None,
            reports: Reports::default(),
            failed: false,
        }
    }

    /// Plans edit `e` (the `index`-th of the response) after every edit
    /// pushed before, and returns its report as it stands now. A later edit
    /// that overlaps it can still fail it; [`FilePlanner::finish`] has the
    /// final reports.
    pub fn push(&mut self, index: usize, e: &Edit) -> &EditReport {
        if self.failed {
            self.reports.push(previous_failed(index, e));
        } else if let EditOp::Replace(r) = &e.op {
            match &self.base {
                Some(_) => {
                    if self.replace(index, e, r)
                        && let Some(shown) = self.seq.as_ref().and_then(Sequel::last)
                    {
                        return shown;
                    }
                }
                None => self.fail(
                    index,
                    e,
                    Failure::new(
                        FailureKind::FileNotFound,
                        format!("File not found: {}", e.path),
                        "Check the path. To create a new file, send its whole content with an empty search (or as a whole-file write).",
                    ),
                ),
            }
        } else {
            self.end_batch();
            if self.failed {
                self.reports.push(previous_failed(index, e));
            } else {
                self.file_op(index, e);
            }
        }
        self.reports.last().expect("a report per edit")
    }

    /// Plans a replacement in both readings of the batch (`sequel.rs`);
    /// whether the sequence reading applied a block the original reading
    /// could not (its report is then the one to show).
    fn replace(&mut self, index: usize, e: &Edit, r: &Replace) -> bool {
        if self.batch.is_empty() {
            self.seq_off = false;
        }
        if !sequel::sequential(e) || self.seq.as_ref().is_some_and(Sequel::over_budget) {
            self.stop_sequel();
            self.seq_off = true;
        }
        let base = self.base.as_ref().expect("a base to replace in");
        if self.seq.is_none() && !self.seq_off && !self.batch.is_empty() && !self.batch.failed() {
            let first = self.reports.open.first().cloned();
            self.seq = Some(Sequel::start(self.batch.apply(base.text()), first));
        }
        self.batch.push(
            base,
            &self.path,
            &self.opts,
            &mut self.reports,
            (index, e, r),
        );
        let Some(seq) = self.seq.as_mut().filter(|s| !s.failed()) else {
            return false;
        };
        let applied = seq.push(&self.path, &self.opts, (index, e, r));
        if !applied || self.reports.last_open {
            return false;
        }
        let original = self.reports.done.pop().expect("the block's report");
        if original.is_ok() {
            // Final in both readings (a no-op): the sequence reading must
            // not report it again.
            self.reports.done.push(original);
            seq.forget_last();
            return false;
        }
        seq.hold(original);
        true
    }

    /// Gives up the sequence reading: the original reading's withheld
    /// reports are final.
    fn stop_sequel(&mut self) {
        if let Some(seq) = self.seq.take() {
            self.reports.done.extend(seq.into_held());
        }
    }

    /// The reports that are final, taken out of the planner: every report
    /// but those of the current batch's applied replacements. A caller that
    /// takes them after each push holds only those; [`FilePlanner::finish`]
    /// returns the rest.
    pub fn take_done(&mut self) -> Vec<EditReport> {
        std::mem::take(&mut self.reports.done)
    }

    /// Whether an edit pushed so far failed (an applied one can still be
    /// failed by a later overlapping edit of the batch, and a failed one
    /// can still be applied by the batch's sequence reading).
    pub fn failed(&self) -> bool {
        self.failed || self.batch.failed()
    }

    /// The plan: the file's new content and one report per edit not taken
    /// by [`FilePlanner::take_done`], in input order.
    pub fn finish(mut self) -> FilePlan {
        self.end_batch();
        self.reports.close();
        let mut reports = self.reports.done;
        reports.sort_by_key(|r| r.index);
        FilePlan {
            path: self.path,
            new_path: self.new_path,
            existed: self.existed,
            content: self.base.map(Prepared::into_owner),
            executable: self.executable,
            reports,
        }
    }

    /// Splices the batch into its base text, which becomes the next base.
    fn end_batch(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        let mut batch = std::mem::take(&mut self.batch);
        let Some(base) = &self.base else {
            self.failed |= batch.failed();
            self.stop_sequel();
            self.reports.close();
            return;
        };
        let original = (!batch.failed()).then(|| batch.apply(base.text()));
        let settled = match self.seq.take() {
            Some(seq) => seq.settle(original.as_deref(), &mut self.reports.open),
            None => Settled::Original(Vec::new(), Vec::new()),
        };
        match settled {
            Settled::Sequence(text, reports) => {
                self.reports.open.clear();
                self.reports.done.extend(reports);
                self.reports.close();
                self.set_base(Some(Prepared::of(text)));
            }
            Settled::Original(held, refused) => {
                for owner in refused {
                    batch.drop_owner(owner);
                }
                self.reports.done.extend(held);
                self.failed |= batch.failed() || self.reports.open.iter().any(|r| !r.is_ok());
                self.reports.close();
                let next = Prepared::of(batch.apply(base.text()));
                self.set_base(Some(next));
            }
        }
    }

    fn text(&self) -> Option<&str> {
        self.base.as_ref().map(Prepared::text)
    }

    /// Replaces the base text, keeping the file's original text the first
    /// time.
    fn set_base(&mut self, next: Option<Prepared>) {
        let before = std::mem::replace(&mut self.base, next);
        self.original.get_or_insert(before);
    }

    /// The file's original text, when an edit changed it.
    fn original_text(&self) -> Option<&str> {
        self.original.as_ref()?.as_ref().map(Prepared::text)
    }

    fn applied(&mut self, i: usize, e: &Edit) {
        let mut r = EditReport::new(i, e, EditStatus::Applied);
        r.occurrences = 1;
        self.reports.push(r);
    }

    fn fail(&mut self, i: usize, e: &Edit, f: Failure) {
        self.failed = true;
        self.reports.push(EditReport::failed(i, e, f));
    }

    /// Applies an edit that is not a located replacement.
    fn file_op(&mut self, i: usize, e: &Edit) {
        let missing = |what: &str| {
            Failure::new(
                FailureKind::FileNotFound,
                format!("File not found: {} (cannot {what})", e.path),
                format!("Check the path of the file to {what}."),
            )
        };
        match &e.op {
            EditOp::Replace(_) => unreachable!("replacements are batched"),
            EditOp::Create { content } => match self.text() {
                Some(t) if !t.trim().is_empty() => {
                    let f = explain::create_over(e)
                        .unwrap_or_else(|| whole::create_over_existing(t, content, e));
                    self.fail(i, e, f);
                }
                _ => match artifacts::whole_unnumbered(None, content, &e.path) {
                    Ok(stripped) => self.write(i, e, stripped.unwrap_or_else(|| content.clone())),
                    Err(f) => self.fail(i, e, f),
                },
            },
            EditOp::WriteFile { content, inferred } => self.write_file(i, e, content, *inferred),
            EditOp::SetMode { executable } => match self.base {
                None => self.fail(i, e, missing("change its mode")),
                Some(_) => {
                    self.executable = Some(*executable);
                    self.applied(i, e);
                }
            },
            EditOp::Delete => match self.base {
                None => self.fail(i, e, missing("delete it")),
                Some(_) => {
                    self.set_base(None);
                    self.applied(i, e);
                }
            },
            EditOp::Rename { to } => match self.base {
                None => self.fail(i, e, missing("move it")),
                Some(_) => {
                    self.new_path = Some(to.clone());
                    self.applied(i, e);
                }
            },
        }
    }

    /// A whole-file write: an explicit one is written (unless it elides
    /// code); an inferred one only when the file evidently is what it
    /// holds (`whole.rs`), and an excerpt of the file is a snippet.
    fn write_file(&mut self, i: usize, e: &Edit, content: &str, inferred: bool) {
        let stripped = match artifacts::whole_unnumbered(self.text(), content, &e.path) {
            Ok(stripped) => stripped,
            Err(f) => return self.fail(i, e, f),
        };
        let content = stripped.as_deref().unwrap_or(content);
        if let Some(f) = lazy_whole_file(self.text(), content, &e.path) {
            return self.fail(i, e, f);
        }
        if inferred {
            match whole::judge(self.text(), self.original_text(), content, e) {
                whole::Reading::Write => {}
                whole::Reading::Snippet(span) => {
                    let mut r = EditReport::new(i, e, EditStatus::Snippet);
                    r.lines = Some(span);
                    return self.reports.push(r);
                }
                whole::Reading::Refused(f) => return self.fail(i, e, f),
            }
        }
        let new = match self.text() {
            Some(old) => conform_whole_file(old, content),
            None => content.to_owned(),
        };
        if let Some(f) = self.undoes_earlier(&new, e) {
            return self.fail(i, e, f);
        }
        self.write(i, e, new);
    }

    /// A whole-file write after earlier edits of the response changed the
    /// file must hold what they left: a model that adds "for reference,
    /// the original file" or "the complete file" missing a change would
    /// otherwise undo the edits above it, reported applied.
    fn undoes_earlier(&self, new: &str, e: &Edit) -> Option<Failure> {
        let now = self.text();
        let changed = self.original.is_some() && now != self.original_text();
        if !changed || now == Some(new) {
            return None;
        }
        let (what, lines) = match now {
            Some(now) => {
                let first = now
                    .lines()
                    .zip(new.lines())
                    .take_while(|(a, b)| a == b)
                    .count();
                ("differs from", format!(", from line {}", first + 1))
            }
            None => ("writes a file", String::new()),
        };
        Some(Failure::new(
            FailureKind::Overlap,
            format!(
                "The whole file sent for {} {what} what the edits above it to the same file leave{lines}: written, it would undo or drop their changes.",
                e.path
            ),
            "Send either the edits or the whole file with every change in it, not both; a copy shown for reference belongs outside a fence under the file's name.",
        ))
    }

    /// Sets the file's whole content, refusing control characters it did
    /// not have.
    fn write(&mut self, i: usize, e: &Edit, content: String) {
        let before = self.text().unwrap_or("");
        if let Some(c) = introduced_control(before, &content) {
            return self.fail(i, e, control_failure(&e.path, c));
        }
        self.set_base(Some(Prepared::of(content)));
        self.applied(i, e);
    }
}

/// Plans every edit for one file.
///
/// `original` is the file's text (`None` when it does not exist); `edits`
/// pairs each edit with its index in the input.
pub fn plan_file(
    path: &str,
    original: Option<&str>,
    edits: &[(usize, &Edit)],
    opts: &PlanOptions,
) -> FilePlan {
    let mut planner = FilePlanner::new(path, original, opts);
    for &(i, e) in edits {
        planner.push(i, e);
    }
    planner.finish()
}

/// "Previous edit to this file failed": the report of an edit
/// not tried because an earlier one to the same file failed.
fn previous_failed(i: usize, e: &Edit) -> EditReport {
    EditReport::failed(
        i,
        e,
        Failure::new(
            FailureKind::PreviousFailed,
            format!(
                "Previous edit to {} failed, so this one was not tried",
                e.path
            ),
            "Fix the earlier edit to this file first, then send both again.",
        ),
    )
}

/// The refusal of new content with a control character.
fn control_failure(path: &str, c: char) -> Failure {
    Failure::new(
        FailureKind::Malformed,
        format!(
            "The new content of {path} contains the control character U+{:04X}, which the file does not have; writing it would make the file binary or unreadable",
            c as u32
        ),
        "Check the escaping of the new text (a `\\u0000` or `\\x00` in JSON is a real NUL), and send it again without the control character.",
    )
}

/// A whole-file write that stands in for code with an elision marker
/// would delete that code: refuse it. A marker is a comment that says
/// code is left out (`# ... existing code ...`), or any marker line (`//
/// ...`, a bare `...`) that takes the place of lines the file has, which
/// its two readings (a real comment or `Ellipsis`, or elided code) would
/// make two different files.
fn lazy_whole_file(old: Option<&str>, new: &str, path: &str) -> Option<Failure> {
    let old = old?;
    let old_lines: Vec<&str> = old.lines().map(str::trim).collect();
    let new_lines: Vec<&str> = new.lines().map(str::trim).collect();
    let known = |l: &str| old_lines.contains(&l);
    let worded = new_lines.iter().position(|l| {
        marker_kind(l) == Some(crate::normalize::MarkerKind::Comment)
            && l.chars().any(char::is_alphabetic)
            && !known(l)
    });
    let n = worded
        .or_else(|| marker_over_code(&old_lines, &new_lines))
        .or_else(|| {
            lazy::over_code(&old_lines, &new_lines, lazy::is_prose(path)).map(|at| at.new)
        })?;
    Some(Failure::new(
        FailureKind::Malformed,
        format!(
            "The new content of {path} elides code with `{}` (line {}); writing it would delete the code it stands for",
            new_lines[n],
            n + 1
        ),
        "Send the entire file, or edit only the part that changes with a search/replace block.",
    ))
}

/// The first new marker line the file lacks that replaces lines with text.
fn marker_over_code(old: &[&str], new: &[&str]) -> Option<usize> {
    crate::diff::line_ops(old, new).iter().find_map(|op| {
        let crate::diff::DiffOp::Replace {
            old_index,
            old_len,
            new_index,
            new_len,
        } = *op
        else {
            return None;
        };
        let drops_text = old[old_index..old_index + old_len]
            .iter()
            .any(|l| !l.is_empty());
        (new_index..new_index + new_len)
            .find(|&k| marker_kind(new[k]).is_some() && !old.contains(&new[k]))
            .filter(|_| drops_text)
    })
}

/// A whole-file write replaces every byte, but a model writes `\n` and no
/// BOM: keep the existing file's CRLF or CR endings and BOM, so a rewrite
/// does not turn into an every-line diff.
fn conform_whole_file(old: &str, new: &str) -> String {
    let doc = Document::new(old);
    let kept = keep_untouched(&doc, new);
    let new = kept.as_str();
    let mut out = String::with_capacity(new.len() + 8);
    if doc.has_bom() && !new.starts_with(crate::text::BOM) {
        out.push(crate::text::BOM);
    }
    let ending = doc.dominant_ending();
    if ending != "\n" && !new.contains('\r') {
        out.push_str(&new.replace('\n', ending));
    } else {
        out.push_str(new);
    }
    out
}

/// A model retypes a whole file without what it cannot see or does not
/// copy: trailing whitespace, and the missing final newline. A line of
/// `new` that is a line of the file but for its trailing whitespace (paired
/// in order) is the file's line, and when the file's last line is `new`'s,
/// the file's lack of a final newline is kept. Leading whitespace is never
/// taken from the file: a different indentation may be the change.
fn keep_untouched(doc: &Document<'_>, new: &str) -> String {
    let old: Vec<&str> = doc.lines().iter().map(|l| l.content).collect();
    let ends_open = doc.lines().last().is_some_and(|l| l.ending.is_empty());
    let lines: Vec<&str> = new.lines().collect();
    let key = |l: &&str| l.trim_end().to_owned();
    let (ok, nk): (Vec<String>, Vec<String>) = (
        old.iter().map(key).collect(),
        lines.iter().map(key).collect(),
    );
    let mut out: Vec<&str> = lines.clone();
    let mut last_kept = false;
    for op in crate::diff::line_ops(&ok, &nk) {
        if let similar::DiffOp::Equal {
            old_index,
            new_index,
            len,
        } = op
        {
            out[new_index..new_index + len].copy_from_slice(&old[old_index..old_index + len]);
            last_kept |= old_index + len == old.len() && new_index + len == lines.len();
        }
    }
    let mut text = out.join("\n");
    if !(ends_open && last_kept) && new.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// What one file's batch is planned against: its text, its lines indexed
/// for matching, and the rules that follow from its path.
pub(crate) struct Planner<'c, 'a> {
    doc: &'c Document<'a>,
    hay: &'c Haystack<'a>,
    style: &'c OnceCell<Style>,
    opts: &'c PlanOptions,
    path: &'c str,
    elision: Elision,
}

impl Planner<'_, '_> {
    fn style(&self) -> Style {
        *self.style.get_or_init(|| Style::detect(self.hay.lines()))
    }

    /// The elision rule for an edit with `literal` set or not.
    fn elision_for(&self, literal: bool) -> Elision {
        if literal { Elision::Off } else { self.elision }
    }
}

/// What the search of a line-block edit is called in messages, by format.
pub(crate) fn search_noun(e: &Edit) -> &'static str {
    match (&e.op, e.origin.as_ref().and_then(|o| o.format.format())) {
        (EditOp::Replace(r), _) if matches!(r.target, Target::Text { .. }) => "old_string",
        (_, Some(Format::ApplyPatch)) => "chunk",
        (_, Some(Format::UnifiedDiff)) => "hunk",
        (_, Some(Format::EditBlock)) => "EDIT section",
        _ => "search",
    }
}
