//! The second reading of a batch: blocks in sequence.
//!
//! A batch is located against the text it started from (the *original*
//! reading: every block of one file found in the file as it was, overlaps
//! refused). aider applies SEARCH/REPLACE blocks in order, each to the text
//! the blocks before it left, and so do Claude's MultiEdit and Roo's
//! multi-block diffs; a model that writes for them may search for text an
//! earlier block wrote. The *sequence* reading locates each block that way,
//! with the same ladder and refusal rules, alongside the original one.
//!
//! When the batch ends, the readings decide together:
//!
//! - both apply every block and give one file: that file;
//! - both apply but give different files (a block's search also matches
//!   text another block writes): every block of the batch is refused;
//! - only the sequence reading applies: its file and reports (the blocks
//!   build on each other);
//! - only the original reading applies: the block the sequence reading
//!   could not apply is refused (read after the blocks before it, its
//!   search matches text they wrote too, or their result already holds
//!   its change: which the model meant is not known);
//! - neither: the original reading's failures.
//!
//! Diff hunks and patch chunks are numbered against the file as it was
//! (and a patch's chunks move a cursor), so a batch holding any is read
//! the original way only. The sequence reading starts at a batch's second
//! block (for one block the readings agree) and only while the original
//! reading has not failed; it stops at its own first failure. A response
//! of failing blocks costs nothing more.

use super::batch::{Batch, Prepared};
use super::{PlanOptions, Reports};
use crate::Format;
use crate::edit::{Edit, Replace};
use crate::report::{EditReport, EditStatus, Failure, FailureKind};

/// The sequence reading of the current batch.
pub(crate) struct Sequel {
    /// The text the blocks read so far leave.
    text: Prepared,
    /// Its reports of the batch's blocks since it started, in order.
    reports: Vec<EditReport>,
    /// Its first failure: the block's input index and the failure's kind.
    failed: Option<(usize, FailureKind)>,
    /// The original reading's final reports of blocks this reading
    /// applied: withheld until the batch ends decides which reading wins.
    held: Vec<EditReport>,
    /// Bytes of text indexed so far, one copy of the file per block
    /// applied: the reading is given up past [`BUDGET`].
    indexed: usize,
}

/// Bytes of text the sequence reading may index in one batch before it is
/// given up (its blocks then stand on the original reading alone): each
/// block applied in sequence indexes the whole file again, which for
/// thousands of blocks on a large file would take minutes.
pub(crate) const BUDGET: usize = 64 << 20;

/// Whether an edit's blocks are written to apply one after another: not
/// diff hunks and patch chunks, which are numbered against the file as it
/// was.
pub(crate) fn sequential(e: &Edit) -> bool {
    !(e.came_from(Format::UnifiedDiff) || e.came_from(Format::ApplyPatch))
}

impl Sequel {
    /// Starts the reading at the text the batch's first block left (where
    /// both readings agree), with that block's report while it is open.
    pub(crate) fn start(text: String, first: Option<EditReport>) -> Sequel {
        Sequel {
            indexed: text.len(),
            text: Prepared::of(text),
            reports: first.into_iter().collect(),
            failed: None,
            held: Vec::new(),
        }
    }

    /// Whether the reading has indexed more text than [`BUDGET`].
    pub(crate) fn over_budget(&self) -> bool {
        self.indexed > BUDGET
    }

    /// Drops its report of the newest block, which the original reading
    /// has made final.
    pub(crate) fn forget_last(&mut self) {
        self.reports.pop();
    }

    /// Its report of the newest block.
    pub(crate) fn last(&self) -> Option<&EditReport> {
        self.reports.last()
    }

    /// The original reading's withheld reports, when this reading is given
    /// up.
    pub(crate) fn into_held(self) -> Vec<EditReport> {
        self.held
    }

    /// Whether the reading failed, and so stopped.
    pub(crate) fn failed(&self) -> bool {
        self.failed.is_some()
    }

    /// Reads block `e` against the text the blocks before it left; whether
    /// it applied.
    pub(crate) fn push(
        &mut self,
        path: &str,
        opts: &PlanOptions,
        (i, e, r): (usize, &Edit, &Replace),
    ) -> bool {
        let mut batch = Batch::default();
        let mut reports = Reports::default();
        batch.push(&self.text, path, opts, &mut reports, (i, e, r));
        let changes = !batch.failed();
        let next = changes.then(|| batch.apply(self.text.text()));
        reports.close();
        let report = reports.done.pop().expect("a report per block");
        let ok = report.is_ok();
        if let Some(next) = next.filter(|_| report.status == EditStatus::Applied) {
            self.indexed += next.len();
            self.text = Prepared::of(next);
        }
        if !ok {
            let kind = report
                .failure
                .as_ref()
                .map_or(FailureKind::NotFound, |f| f.kind);
            self.failed = Some((i, kind));
        }
        self.reports.push(report);
        ok
    }

    /// Withholds the original reading's final report of a block this
    /// reading applied.
    pub(crate) fn hold(&mut self, r: EditReport) {
        self.held.push(r);
    }

    /// The batch ended: which reading wins, given the original reading's
    /// result (`None` when it failed) and its open reports (the owners of
    /// the batch's splices, by position).
    pub(crate) fn settle(self, original: Option<&str>, open: &mut [EditReport]) -> Settled {
        match (original, self.failed) {
            (Some(o), None) if o == self.text.text() => Settled::Original(self.held, Vec::new()),
            (Some(_), None) => {
                let first = self.reports.first().map_or(0, |r| r.index);
                let last = self.reports.last().map_or(first, |r| r.index);
                let refused = (0..open.len())
                    .filter(|&k| differ(&mut open[k], first, last))
                    .collect();
                Settled::Original(self.held, refused)
            }
            (None, None) => Settled::Sequence(self.text.into_owner(), self.reports),
            (Some(_), Some((i, _))) => {
                let theirs = self.reports.into_iter().find(|r| r.index == i);
                let mine = open.iter().position(|r| r.index == i);
                let refused = match (mine, theirs) {
                    (Some(k), Some(theirs)) => {
                        open[k] = ambiguous_in_sequence(theirs);
                        vec![k]
                    }
                    _ => Vec::new(),
                };
                Settled::Original(self.held, refused)
            }
            (None, Some(_)) => Settled::Original(self.held, Vec::new()),
        }
    }
}

/// What a batch's two readings decided.
pub(crate) enum Settled {
    /// The original reading stands: these withheld reports are final, and
    /// the open reports at these positions were refused (their splices
    /// must go).
    Original(Vec<EditReport>, Vec<usize>),
    /// The sequence reading wins: the text it leaves, and its reports of
    /// the blocks since it started (the original reading's are dropped).
    Sequence(String, Vec<EditReport>),
}

/// Fails an applied block of a batch whose two readings give different
/// files (its blocks `first` to `last`, input indexes): which one the model
/// meant is not known.
fn differ(r: &mut EditReport, first: usize, last: usize) -> bool {
    if r.status != EditStatus::Applied {
        return false;
    }
    let f = Failure::new(
        FailureKind::Ambiguous,
        format!(
            "Edits #{} to #{} of {} give one file when each is applied to the text the edits before it left (as aider applies them), and another when each is found in the file as it is: a search matches text another edit writes as well as text in the file, so which place was meant is not known",
            first + 1,
            last + 1,
            r.path
        ),
        "Make each search match one place both in the file as it is now and after the edits before it: copy more lines around the change into it, or merge edits that touch the same code into one.",
    );
    r.status = EditStatus::Failed;
    r.pass = None;
    r.lines = None;
    r.occurrences = 0;
    r.similarity = None;
    r.failure = Some(f);
    true
}

/// The sequence reading's failure of a block the original reading placed,
/// told as such: read after the edits before it, as the model may have
/// meant, the block does not apply, so where it was placed is a guess.
fn ambiguous_in_sequence(mut r: EditReport) -> EditReport {
    if let Some(f) = &mut r.failure {
        f.message.push_str(
            ". That is once the edits before it are applied, as aider applies them; in the file as it was, the search matched one place, so the two readings disagree and mend will not guess",
        );
    }
    r
}
