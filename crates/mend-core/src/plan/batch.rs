//! A batch: consecutive replacements of one file, each located against the
//! same text as it arrives, checked for overlap with those before it, and
//! spliced in one pass when the batch ends.

use std::cell::OnceCell;

use super::splice::Splice;
use super::{PlanOptions, Planner, Reports, previous_failed};
use crate::Format;
use crate::edit::{Edit, Replace};
use crate::indent::Style;
use crate::locate::Haystack;
use crate::normalize::Elision;
use crate::report::{EditReport, EditStatus, Failure, FailureKind, LineSpan};
use crate::text::{Document, introduced_control};

/// What locating and rendering one replacement produced.
pub(crate) struct Planned {
    pub(crate) splices: Vec<Splice>,
    pub(crate) pass: crate::locate::MatchPass,
    pub(crate) similarity: f64,
    /// Whether a later chunk of the same patch is looked for after this
    /// edit (a context-free addition at the end of the file is not).
    pub(crate) moves_cursor: bool,
}

impl Planned {
    /// One past the last original line the edit covers.
    fn end_line(&self) -> usize {
        self.splices.iter().map(|s| s.lines.end).max().unwrap_or(0)
    }
}

/// A text with the indexes matching needs, built once per batch.
pub(crate) struct Indexed<'a> {
    doc: Document<'a>,
    hay: Haystack<'a>,
    style: OnceCell<Style>,
}

self_cell::self_cell!(
    /// A batch's base text and its indexes, kept together between edits.
    pub(crate) struct Prepared {
        owner: String,
        #[not_covariant]
        dependent: Indexed,
    }
);

impl Prepared {
    pub(crate) fn of(text: String) -> Prepared {
        Prepared::new(text, |t| {
            let doc = Document::new(t);
            let hay = Haystack::new(doc.contents());
            Indexed {
                doc,
                hay,
                style: OnceCell::new(),
            }
        })
    }

    pub(crate) fn text(&self) -> &str {
        self.borrow_owner()
    }
}

/// The replacements planned so far against one base text.
#[derive(Default)]
pub(crate) struct Batch {
    /// Every accepted splice, sorted by range; a splice's `owner` is its
    /// edit's open report.
    splices: Vec<Splice>,
    /// How many edits the batch has.
    len: usize,
    /// Where the next chunk of a patch is looked for.
    cursor: usize,
    /// How far the last diff hunk was found from the line its header
    /// named: the next hunk's header is read with the same offset, as
    /// `patch` does, so a diff made against a shifted file keeps telling
    /// twin hunks apart.
    offset: isize,
    /// Whether an edit of the batch failed.
    failed: bool,
}

/// Plans replacement `e` against `base`, looked for from line `from`.
fn plan_at(
    base: &Prepared,
    path: &str,
    opts: &PlanOptions,
    (e, r, pos): (&Edit, &Replace, usize),
    from: usize,
) -> Result<Planned, Failure> {
    base.with_dependent(|text, idx| {
        let planner = Planner {
            doc: &idx.doc,
            hay: &idx.hay,
            style: &idx.style,
            opts,
            path,
            elision: Elision::for_path(path),
        };
        planner.plan_replace(e, r, pos, from).and_then(|p| {
            match p
                .splices
                .iter()
                .find_map(|s| introduced_control(text, &s.text))
            {
                Some(c) => Err(super::control_failure(path, c)),
                None => Ok(p),
            }
        })
    })
}

/// A chunk looked for after the previous one (a patch's chunks come in
/// file order) and not found there, but found before it: said so, since
/// "not found" would have the model copy lines it copied right.
fn out_of_order(f: Failure, from: usize, earlier: Option<Planned>) -> Failure {
    let Some(p) = earlier.filter(|p| p.end_line() <= from) else {
        return f;
    };
    let span = p
        .splices
        .first()
        .map(|s| LineSpan::from_range(s.lines.start, s.lines.end));
    let Some(span) = span else {
        return f;
    };
    Failure {
        message: format!(
            "The chunk's lines are at lines {span}, above where the previous chunk of this file ended (line {from}); chunks of one file are read in the order of the file"
        ),
        locations: vec![span],
        fix: "Send the file's chunks in the order their lines appear in the file.".to_owned(),
        ..f
    }
}

impl Batch {
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether an edit of the batch failed.
    pub(crate) fn failed(&self) -> bool {
        self.failed
    }

    /// Plans replacement `e` against `base`, appends its report to
    /// `reports`, and records its splices. An edit that overlaps an earlier
    /// one fails, and so does the earlier one.
    pub(crate) fn push(
        &mut self,
        base: &Prepared,
        path: &str,
        opts: &PlanOptions,
        reports: &mut Reports,
        (i, e, r): (usize, &Edit, &Replace),
    ) {
        self.len += 1;
        let pos = reports.next_open();
        // After a failed block, later blocks for the same file are
        // not tried (their anchors may depend on the failed change).
        if self.failed && (opts.skip_after_failure || e.came_from(Format::EditBlock)) {
            reports.push(previous_failed(i, e));
            return;
        }
        let from = if r.hints.after_previous {
            self.cursor
        } else {
            0
        };
        let diff_hunk = e.came_from(Format::UnifiedDiff);
        let hinted = r.hints.start_line.filter(|_| diff_hunk);
        let shifted;
        let r = match hinted {
            Some(h) if self.offset != 0 => {
                let mut moved = r.clone();
                moved.hints.start_line = Some(h.saturating_add_signed(self.offset).max(1));
                shifted = moved;
                &shifted
            }
            _ => r,
        };
        let plan_from = |from: usize| plan_at(base, path, opts, (e, r, pos), from);
        let planned = plan_from(from).map_err(|f| match f.kind {
            FailureKind::NotFound if from > 0 => out_of_order(f, from, plan_from(0).ok()),
            _ => f,
        });
        match planned {
            // A block whose replacement equals its search changes nothing,
            // but when its search is not in the file the model believes
            // the file holds lines it does not: that is said, not
            // reported as done.
            Err(f) if e.is_noop() && f.kind != FailureKind::NotFound => {
                reports.push(EditReport::new(i, e, EditStatus::Noop));
            }
            Ok(_) if e.is_noop() => reports.push(EditReport::new(i, e, EditStatus::Noop)),
            Ok(p) => {
                if p.moves_cursor {
                    self.cursor = self.cursor.max(p.end_line());
                }
                if let (Some(h), Some(s)) = (hinted, p.splices.first()) {
                    self.offset = (s.lines.start + 1) as isize - h as isize;
                }
                reports.push_open(applied_report(i, e, &p));
                self.accept(p.splices, reports);
            }
            Err(f) => {
                self.failed = true;
                reports.push(EditReport::failed(i, e, f));
            }
        }
    }

    /// Adds an edit's splices, or fails it and every earlier edit it
    /// overlaps, naming each other.
    fn accept(&mut self, new: Vec<Splice>, reports: &mut Reports) {
        let Some(owner) = new.first().map(|s| s.owner) else {
            return;
        };
        let mut clashes: Vec<usize> = Vec::new();
        for s in &new {
            let at = self
                .splices
                .partition_point(|t| t.range.end <= s.range.start);
            for t in &self.splices[at.saturating_sub(1)..] {
                if t.range.start > s.range.end {
                    break;
                }
                let overlap = t.range.start < s.range.end && s.range.start < t.range.end;
                if (overlap || t.range == s.range) && !clashes.contains(&t.owner) {
                    clashes.push(t.owner);
                }
            }
        }
        if clashes.is_empty() {
            for s in new {
                let at = self
                    .splices
                    .partition_point(|t| t.range.start <= s.range.start);
                self.splices.insert(at, s);
            }
            return;
        }
        let span_of = |splices: &[Splice], o: usize| {
            let s = splices.iter().find(|s| s.owner == o).expect("a splice");
            LineSpan::from_range(s.lines.start, s.lines.end)
        };
        let mine = span_of(&new, owner);
        for other in clashes {
            let theirs = span_of(&self.splices, other);
            let idx_mine = reports.open_mut(owner).index;
            let idx_other = reports.open_mut(other).index;
            overlap(reports.open_mut(owner), mine, theirs, idx_other);
            overlap(reports.open_mut(other), theirs, mine, idx_mine);
            self.splices.retain(|s| s.owner != other);
        }
        self.failed = true;
    }

    /// Takes out the splices of the edit whose open report is `owner`
    /// (refused after it was placed).
    pub(crate) fn drop_owner(&mut self, owner: usize) {
        self.splices.retain(|s| s.owner != owner);
        self.failed = true;
    }

    /// The base text with every accepted splice in place.
    pub(crate) fn apply(&self, text: &str) -> String {
        splice_all(text, &self.splices)
    }
}

/// Marks `rep` as overlapping the edit at input index `other`.
fn overlap(rep: &mut EditReport, my_span: LineSpan, other_span: LineSpan, other: usize) {
    if rep.status == EditStatus::Failed {
        return;
    }
    let mut f = Failure::new(
        FailureKind::Overlap,
        format!(
            "This edit (lines {my_span}) overlaps edit #{} (lines {other_span}) in {}",
            other + 1,
            rep.path
        ),
        "Edits to one file must not overlap. Merge the overlapping edits into one edit that covers both regions.",
    );
    f.locations = vec![my_span, other_span];
    rep.status = EditStatus::Failed;
    rep.pass = None;
    rep.lines = None;
    rep.occurrences = 0;
    rep.similarity = None;
    rep.failure = Some(f);
}

fn applied_report(i: usize, e: &Edit, p: &Planned) -> EditReport {
    let mut rep = EditReport::new(i, e, EditStatus::Applied);
    rep.pass = Some(p.pass);
    rep.similarity = Some(p.similarity);
    rep.occurrences = p.splices.len();
    rep.lines = p
        .splices
        .first()
        .map(|s| LineSpan::from_range(s.lines.start, s.lines.end));
    rep
}

/// The text with every splice in place, built in one pass (splices are
/// sorted and disjoint): thousands of edits cost one copy of the file.
fn splice_all(text: &str, splices: &[Splice]) -> String {
    let extra: usize = splices.iter().map(|s| s.text.len()).sum();
    let mut out = String::with_capacity(text.len() + extra);
    let mut at = 0;
    for s in splices {
        out.push_str(&text[at..s.range.start]);
        out.push_str(&s.text);
        at = s.range.end;
    }
    out.push_str(&text[at..]);
    out
}
