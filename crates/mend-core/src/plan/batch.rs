//! Planning a batch: consecutive replacements of one file, all located
//! against the same text, checked for overlap, then spliced bottom to top.

use std::cell::OnceCell;

use super::splice::Splice;
use super::{PlanOptions, Planner, previous_failed};
use crate::edit::{Edit, Replace};
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

/// Plans a batch of replacements against `text`; returns the new text and
/// one report per edit.
pub(crate) fn plan_batch(
    path: &str,
    text: &str,
    batch: &[(usize, &Edit, &Replace)],
    opts: &PlanOptions,
) -> (String, Vec<EditReport>) {
    let doc = Document::new(text);
    let hay = Haystack::new(doc.contents());
    let planner = Planner {
        doc: &doc,
        hay: &hay,
        style: OnceCell::new(),
        opts,
        path,
        elision: Elision::for_path(path),
    };
    let mut reports = Vec::with_capacity(batch.len());
    let mut splices: Vec<Splice> = Vec::new();
    let mut cursor = 0;
    let mut failed = false;
    for (pos, &(i, e, r)) in batch.iter().enumerate() {
        // Seed 001: after a failed block, later blocks for the same file are
        // not tried (their anchors may depend on the failed change).
        if failed
            && (opts.skip_after_failure
                || e.origin.as_ref().is_some_and(|o| o.format == "edit-block"))
        {
            reports.push(previous_failed(i, e));
            continue;
        }
        if e.is_noop() {
            reports.push(EditReport::new(i, e, EditStatus::Noop));
            continue;
        }
        let from = if r.hints.after_previous { cursor } else { 0 };
        let planned = planner.plan_replace(e, r, pos, from).and_then(|p| {
            match p
                .splices
                .iter()
                .find_map(|s| introduced_control(text, &s.text))
            {
                Some(c) => Err(super::control_failure(path, c)),
                None => Ok(p),
            }
        });
        match planned {
            Ok(p) => {
                if p.moves_cursor {
                    cursor = cursor.max(p.end_line());
                }
                reports.push(applied_report(i, e, &p));
                splices.extend(p.splices);
            }
            Err(f) => {
                failed = true;
                reports.push(EditReport::failed(i, e, f));
            }
        }
    }
    drop_overlaps(&mut splices, &mut reports, batch);
    let mut out = text.to_owned();
    for s in splices.iter().rev() {
        out.replace_range(s.range.clone(), &s.text);
    }
    (out, reports)
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

/// Overlapping edits: name both, drop both.
fn drop_overlaps(
    splices: &mut Vec<Splice>,
    reports: &mut [EditReport],
    batch: &[(usize, &Edit, &Replace)],
) {
    splices.sort_by_key(|s| (s.range.start, s.range.end));
    let mut bad: Vec<(usize, usize)> = Vec::new();
    for w in splices.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        if a.owner != b.owner && (a.range.end > b.range.start || a.range == b.range) {
            bad.push((a.owner, b.owner));
        }
    }
    for &(a, b) in &bad {
        let span = |o: usize| {
            let s = splices.iter().find(|s| s.owner == o).expect("splice");
            LineSpan::from_range(s.lines.start, s.lines.end)
        };
        let (sa, sb) = (span(a), span(b));
        let (ia, ib) = (batch[a].0, batch[b].0);
        for (me, other, my_span, other_span) in [(a, ib, sa, sb), (b, ia, sb, sa)] {
            let rep = &mut reports[me];
            if rep.status == EditStatus::Failed {
                continue;
            }
            let (i, e, _) = batch[me];
            let mut f = Failure::new(
                FailureKind::Overlap,
                format!(
                    "This edit (lines {my_span}) overlaps edit #{} (lines {other_span}) in {}",
                    other + 1,
                    e.path
                ),
                "Edits to one file must not overlap. Merge the overlapping edits into one edit that covers both regions.",
            );
            f.locations = vec![my_span, other_span];
            *rep = EditReport::failed(i, e, f);
        }
    }
    let dropped: Vec<usize> = bad.iter().flat_map(|&(a, b)| [a, b]).collect();
    splices.retain(|s| !dropped.contains(&s.owner));
}
