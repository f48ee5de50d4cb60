//! Anchors made only of blank lines.
//!
//! Blank lines occur all over a file, so an anchor of blank lines alone
//! says nothing about where it is. It is read only *nearby*: in the block
//! of the other anchor, precisely
//!
//! - an end anchor of `k` blank lines, in the file lines after the start
//!   anchor while they are blank or indented deeper than the start
//!   anchor's first line with text (its body and the blank lines after it,
//!   up to its next sibling or the end of its parent);
//! - a start anchor of `k` blank lines, in the file lines before the end
//!   anchor, upward, while they are blank or indented deeper than the end
//!   anchor's first line with text.
//!
//! The block is taken past the other anchor's own blank edge lines. There
//! it must have exactly one run of blank lines, of exactly `k` lines, that
//! lies wholly in the block (a model's count of blank lines is no surer
//! than their place). `content` must repeat those blank lines at its edge,
//! no more and no fewer, and keep to that block: besides its first lines
//! with text (last, for a start anchor), as many as the other anchor has,
//! no line of `content` with text may be indented as little as that
//! anchor's first line with text, as a region running on past the block
//! would be (a second function after the first). Anything else is
//! refused: a blank-only anchor that picked the first blank line would cut
//! a function at the blank line inside it, or keep the function after it
//! twice.

use super::{Anchor, Candidates, Hit, Region};
use crate::indent::columns;
use crate::locate::{MatchPass, is_blank};
use crate::normalize::indent_of;
use crate::plan::Planner;
use crate::report::{Failure, FailureKind, LineSpan};

impl Planner<'_, '_> {
    /// The regions of a start anchor with text and an end anchor of blank
    /// lines: each start with the one place its block has them.
    pub(super) fn blank_end_candidates(
        &self,
        start: &[String],
        end: &[String],
    ) -> Result<Candidates, Failure> {
        let (sa, starts) = self.anchor_hits(start, 0, "start anchor")?;
        if starts.is_empty() {
            return Err(self.anchor_missing(start, 0, "start anchor"));
        }
        let mut regions = Vec::new();
        for s in competing(&starts) {
            let beside = Beside {
                hit: s,
                edge: sa[s.form].trail,
                after: true,
            };
            let Some(e) = self.blank_place(&beside, end.len()) else {
                return Err(self.blank_missing(&beside, end.len()));
            };
            regions.push(Region {
                start: *s,
                end: Some(e),
            });
        }
        Ok(Candidates {
            sa,
            ea: vec![Anchor::new(end)],
            starts,
            ends: Vec::new(),
            regions,
            ends_of: Vec::new(),
        })
    }

    /// The regions of a start anchor of blank lines and an end anchor with
    /// text: each end with the one place its block has them, above it.
    pub(super) fn blank_start_candidates(
        &self,
        start: &[String],
        end: &[String],
    ) -> Result<Candidates, Failure> {
        let (ea, ends) = self.anchor_hits(end, 0, "end anchor")?;
        if ends.is_empty() {
            return Err(self.anchor_missing(end, 0, "end anchor"));
        }
        let mut regions = Vec::new();
        for e in competing(&ends) {
            let beside = Beside {
                hit: e,
                edge: ea[e.form].lead,
                after: false,
            };
            let Some(s) = self.blank_place(&beside, start.len()) else {
                return Err(self.blank_missing(&beside, start.len()));
            };
            regions.push(Region {
                start: s,
                end: Some(*e),
            });
        }
        Ok(Candidates {
            sa: vec![Anchor::new(start)],
            ea,
            starts: regions.iter().map(|r| r.start).collect(),
            ends,
            regions,
            ends_of: Vec::new(),
        })
    }

    /// The file lines of the block of the anchor beside a blank-only one:
    /// after it (or before), past its own blank edge lines, while blank or
    /// deeper than its first line with text.
    fn anchor_block(&self, b: &Beside<'_>) -> std::ops::Range<usize> {
        let lines = self.hay.lines();
        let tw = self.style().tab_width;
        let h = b.hit;
        let depth = columns(indent_of(lines[h.key]), tw);
        let inside = |i: &usize| is_blank(lines[*i]) || columns(indent_of(lines[*i]), tw) > depth;
        if b.after {
            let core = h.at + h.len;
            let own = (core..lines.len())
                .take_while(|&i| is_blank(lines[i]))
                .count();
            let from = core + own.min(b.edge);
            from..(from..lines.len())
                .find(|i| !inside(i))
                .unwrap_or(lines.len())
        } else {
            let own = (0..h.at).rev().take_while(|&i| is_blank(lines[i])).count();
            let to = h.at - own.min(b.edge);
            (0..to).rev().find(|i| !inside(i)).map_or(0, |i| i + 1)..to
        }
    }

    /// The runs of blank lines of the file (start, length) that meet the
    /// block, each whole (a run that goes on into the anchor's own blank
    /// edge lines included).
    fn blank_runs(&self, b: &Beside<'_>) -> Vec<(usize, usize)> {
        let lines = self.hay.lines();
        let block = self.anchor_block(b);
        let mut runs = Vec::new();
        let mut i = block.start;
        while i < block.end {
            if !is_blank(lines[i]) {
                i += 1;
                continue;
            }
            let from = (0..i)
                .rev()
                .find(|&j| !is_blank(lines[j]))
                .map_or(0, |j| j + 1);
            while i < lines.len() && is_blank(lines[i]) {
                i += 1;
            }
            runs.push((from, i - from));
        }
        runs
    }

    /// The hit of `k` blank lines in the block: the block's only run of
    /// blank lines, when it lies wholly in the block and has exactly `k`
    /// lines (a model's count of blank lines is no surer than their place).
    fn blank_place(&self, b: &Beside<'_>, k: usize) -> Option<Hit> {
        let block = self.anchor_block(b);
        match self.blank_runs(b).as_slice() {
            &[(at, len)] if len == k && at >= block.start && at + len <= block.end => Some(Hit {
                at,
                len: k,
                pass: MatchPass::Exact,
                form: 0,
                key: at,
                surplus: 0,
                delta: b.hit.delta,
            }),
            _ => None,
        }
    }

    fn blank_missing(&self, b: &Beside<'_>, k: usize) -> Failure {
        let (which, other) = if b.after {
            ("end", "start")
        } else {
            ("start", "end")
        };
        let found = match self.blank_runs(b).as_slice() {
            [] => "it has no blank line".to_owned(),
            [(_, n)] if *n != k => format!("its one run of blank lines has {n}"),
            [_] => "its run of blank lines goes on into the anchor's own".to_owned(),
            runs => format!("it has {} runs of blank lines", runs.len()),
        };
        let block = self.anchor_block(b);
        let place = if block.is_empty() {
            format!(
                "no line {} it is blank or indented deeper than it",
                if b.after { "after" } else { "before" }
            )
        } else {
            let span = LineSpan::from_range(block.start, block.end);
            let lines = if span.start == span.end {
                "line"
            } else {
                "lines"
            };
            format!(
                "that is {lines} {span} of {}, where they must be its one run of blank lines, but {found}",
                self.path
            )
        };
        Failure::new(
            FailureKind::NotFound,
            format!(
                "The {which} anchor holds only blank lines ({k}); mend looks for them only in the block of the {other} anchor (line {}), the lines {} it that are blank or indented deeper than it, and {place}",
                b.hit.key + 1,
                if b.after { "after" } else { "before" },
            ),
            format!(
                "Give 1-4 lines of the file with text in `{which}`: the {} lines the region replaces (repeat them in `content` to keep them).",
                if b.after { "last" } else { "first" }
            ),
        )
    }

    /// With a blank-only anchor, `content` must keep to the other anchor's
    /// block: past the lines that repeat that anchor, no line with text as
    /// shallow as the anchor's first line with text.
    pub(super) fn one_block(
        &self,
        c: &Candidates,
        region: &Region,
        content: &[String],
        blank_start: bool,
    ) -> Result<(), Failure> {
        let anchor = match (blank_start, region.end) {
            (true, Some(e)) => &c.ea[e.form],
            _ => &c.sa[region.start.form],
        };
        let (which, other) = if blank_start {
            ("start", "end")
        } else {
            ("end", "start")
        };
        // The blank lines kept as they are: repeated in `content`, no more
        // and no fewer (a count no surer than their place is not written).
        let k = if blank_start {
            region.start.len
        } else {
            region.end.map_or(0, |e| e.len)
        };
        let edge = if blank_start {
            content.iter().take_while(|l| is_blank(l)).count()
        } else {
            content.iter().rev().take_while(|l| is_blank(l)).count()
        };
        if edge != k || edge == content.len() {
            return Err(Failure::new(
                FailureKind::Malformed,
                format!(
                    "The {which} anchor holds only blank lines ({k}), and `content` {} with {edge}, so mend cannot tell how many blank lines the region ends with",
                    if blank_start { "begins" } else { "ends" }
                ),
                format!(
                    "Give 1-4 lines of the file with text in `{which}`, the {} lines of the region, or repeat its blank lines in `content` exactly.",
                    if blank_start { "first" } else { "last" }
                ),
            ));
        }
        let tw = self.style().tab_width;
        let Some(first) = anchor.core().iter().find(|l| !is_blank(l)) else {
            return inner_blank(content, edge, blank_start, which);
        };
        let depth = columns(indent_of(first), tw);
        // The content lines with text that stand for the anchor's own (as
        // many as it has, at content's edge on its side) may be as shallow.
        let own = anchor.lines.iter().filter(|l| !is_blank(l)).count();
        let mut text: Vec<usize> = (0..content.len())
            .filter(|&k| !is_blank(&content[k]))
            .collect();
        if blank_start {
            text.truncate(text.len().saturating_sub(own));
        } else {
            text.drain(..own.min(text.len()));
        }
        let Some(k) = text
            .into_iter()
            .find(|&k| columns(indent_of(&content[k]), tw) <= depth)
        else {
            return inner_blank(content, edge, blank_start, which);
        };
        Err(Failure::new(
            FailureKind::Ambiguous,
            format!(
                "The {which} anchor holds only blank lines, which mend reads as the edge of the block of the {other} anchor, but content line {} (`{}`) is indented no deeper than the {other} anchor, as if the region ran on past that block",
                k + 1,
                content[k].trim()
            ),
            format!(
                "Give 1-4 lines of the file with text in `{which}`, the {} lines of the region, so mend need not guess where it ends.",
                if blank_start { "first" } else { "last" }
            ),
        ))
    }
}

/// Refuses `content` with a blank line inside it, besides its edge: that
/// is a place the blank-only anchor could be read as well, so the region
/// the model meant may end there or past it, however many blank runs the
/// file's block shows (a blank end read at the first blank line after the
/// start kept the lines after it twice).
fn inner_blank(
    content: &[String],
    edge: usize,
    blank_start: bool,
    which: &str,
) -> Result<(), Failure> {
    let (inner, offset) = if blank_start {
        (&content[edge..], edge)
    } else {
        (&content[..content.len() - edge], 0)
    };
    let Some(i) = inner.iter().position(|l| is_blank(l)) else {
        return Ok(());
    };
    Err(Failure::new(
        FailureKind::Ambiguous,
        format!(
            "The {which} anchor holds only blank lines, and content line {} is blank too, so mend cannot tell which blank lines the region is bounded by",
            i + offset + 1
        ),
        format!(
            "Give 1-4 lines of the file with text in `{which}`, the {} lines of the region, so mend need not guess where it ends.",
            if blank_start { "first" } else { "last" }
        ),
    ))
}

/// The anchor with text that a blank-only anchor is read beside.
struct Beside<'h> {
    hit: &'h Hit,
    /// Its blank edge lines on the blank-only anchor's side, as sent.
    edge: usize,
    /// Whether the blank-only anchor is the end (read after this one).
    after: bool,
}

/// The places of the anchor with text that a blank-only anchor must
/// each be read beside: those matched by the strictest pass any of them
/// has (blank edge lines set aside, equally good places), and any in
/// another indentation frame (a model's frame can be shifted, and the
/// region there competes). Blank lines never choose among them.
fn competing(hits: &[Hit]) -> Vec<&Hit> {
    let best = hits.iter().map(|h| h.pass).min();
    let strict: Vec<&Hit> = hits.iter().filter(|h| Some(h.pass) == best).collect();
    hits.iter()
        .filter(|h| Some(h.pass) == best || strict.iter().all(|t| t.delta != h.delta))
        .collect()
}
