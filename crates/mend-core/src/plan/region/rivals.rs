//! Rival regions: other places the anchors describe, weighed against the
//! one chosen.
//!
//! The strictest region wins among the places the anchors match, but blank
//! lines at an anchor's edge choose nothing by themselves, and a looser
//! match nearer the other anchor is a reading too: an end anchor with a
//! blank line the file lacks at the place meant can match as sent far
//! below (or nearer), and the region it bounds would drop lines `content`
//! does not account for, or keep lines `content` repeats. The rivals are
//! the other places of either anchor as strict in its lines (blank edge
//! lines set aside), and those nearer the other anchor in any pass.
//!
//! A rival sharing an edge with the chosen region (one inside the other)
//! is weighed by `content` against the lines only the larger one has, in
//! the file's frame, compared as a diff pairs them:
//!
//! - the larger region is the content's when `content` pairs with every
//!   one of those lines, one of them a line the smaller region does not
//!   have (else it would drop lines `content` does not account for, or the
//!   copies may be new lines repeating the smaller region's);
//! - the smaller one is not when `content` pairs with any of them (it runs
//!   on into lines it would keep twice). Pairing with none, it is only when
//!   `content` has fewer lines with text than they are: it could not have
//!   rewritten them line for line (a rewritten line, even into a blank one,
//!   leaves no trace a diff pairs), so the larger reading would delete
//!   lines `content` says nothing of.
//!
//! Any other rival, or one these leave open, is weighed by the file it
//! gives (up to eight). When the chosen region is not the content's, or
//! another file comes out, or the chosen one changes nothing (a model
//! sends a change), the edit is refused, naming both.

use std::ops::Range;

use super::{Candidates, Region, consistent, ends_after};
use crate::diff::{DiffOp, line_ops};
use crate::indent::columns;
use crate::locate::is_blank;
use crate::normalize::{fold_loose, indent_of};
use crate::plan::Planner;
use crate::plan::splice::Splice;
use crate::report::{Failure, FailureKind, LineSpan};

/// Two nested regions sharing an edge, as line ranges.
struct Nested {
    big: Range<usize>,
    small: Range<usize>,
    chosen_larger: bool,
}

impl Nested {
    fn of(chosen: &Region, alt: &Region) -> Option<Nested> {
        let (c, a) = (span(chosen), span(alt));
        if c == a || c.start != a.start && c.end != a.end {
            return None;
        }
        let chosen_larger = c.len() > a.len();
        let (big, small) = if chosen_larger { (c, a) } else { (a, c) };
        Some(Nested {
            big,
            small,
            chosen_larger,
        })
    }

    /// The lines only the larger region has.
    fn only(&self) -> impl Iterator<Item = usize> {
        (self.big.start..self.small.start).chain(self.small.end..self.big.end)
    }
}

fn span(r: &Region) -> Range<usize> {
    let last = r.end.unwrap_or(r.start);
    r.start.at..last.at + last.len
}

/// A line's comparison key: its text folded, at its indentation in the
/// file's frame (`shift` added), as `content.rs` pairs lines.
fn key(l: &str, shift: isize, tab_width: usize) -> String {
    let cols = columns(indent_of(l), tab_width) as isize + shift;
    format!("{cols}\u{0}{}", fold_loose(l.trim()))
}

/// The lines with text of a list, with their indexes and keys.
fn keyed<'l>(
    lines: impl Iterator<Item = (usize, &'l str)>,
    shift: isize,
    tw: usize,
) -> Vec<(usize, String)> {
    lines
        .filter(|(_, l)| !is_blank(l))
        .map(|(i, l)| (i, key(l, shift, tw)))
        .collect()
}

/// The pairs (index in `a`, index in `b`) a diff of two keyed lists makes.
fn pairs(a: &[(usize, String)], b: &[(usize, String)]) -> Vec<(usize, usize)> {
    let ka: Vec<&str> = a.iter().map(|(_, k)| k.as_str()).collect();
    let kb: Vec<&str> = b.iter().map(|(_, k)| k.as_str()).collect();
    let mut out = Vec::new();
    for op in line_ops(&ka, &kb) {
        if let DiffOp::Equal {
            old_index,
            new_index,
            len,
        } = op
        {
            out.extend((0..len).map(|o| (a[old_index + o].0, b[new_index + o].0)));
        }
    }
    out
}

impl Planner<'_, '_> {
    /// Refuses the chosen region when a rival is as good a reading
    /// (module doc).
    pub(super) fn rival_readings(
        &self,
        c: &Candidates,
        region: &Region,
        content: &[String],
        owner: usize,
        chosen: &Splice,
    ) -> Result<(), Failure> {
        let text = self.spliced(chosen);
        // Read as changing nothing where a rival reading is there: the
        // model meant a change, so not this one.
        let unchanged = text == self.doc.text();
        for (i, alt) in rivals(c, region).iter().enumerate() {
            if unchanged {
                return Err(self.rival_reading(region, alt));
            }
            match self.content_agrees(region, alt, content) {
                Some(true) => continue,
                Some(false) => return Err(self.rival_reading(region, alt)),
                None => {}
            }
            let same = i < 8
                && self
                    .region_splice(c, alt, content, owner)
                    .is_ok_and(|(_, s)| self.spliced(&s) == text);
            if !same {
                return Err(self.rival_reading(region, alt));
            }
        }
        Ok(())
    }

    /// For a rival inside the chosen region or around it, sharing an edge:
    /// whether `content` makes the chosen one its reading (module doc);
    /// `None` when the two are not so nested, the lines only the larger
    /// has are blank, or `content` leaves it open.
    fn content_agrees(&self, chosen: &Region, alt: &Region, content: &[String]) -> Option<bool> {
        let n = Nested::of(chosen, alt)?;
        let lines = self.hay.lines();
        let only: Vec<usize> = n.only().filter(|&i| !is_blank(lines[i])).collect();
        if only.is_empty() {
            return None;
        }
        let tw = self.style().tab_width;
        let file = |r: Range<usize>| keyed(r.map(|i| (i, lines[i])), 0, tw);
        let ours = keyed(
            content.iter().map(String::as_str).enumerate(),
            chosen.delta().unwrap_or(0),
            tw,
        );
        let small = file(n.small.clone());
        let gain = pairs(&file(n.big.clone()), &ours).len() - pairs(&small, &ours).len();
        if n.chosen_larger {
            // Every line only the larger has paired, one the smaller lacks.
            let lacks = only.iter().any(|&i| {
                let k = key(lines[i], 0, tw);
                small.iter().all(|(_, s)| *s != k)
            });
            return if gain < only.len() {
                Some(false)
            } else {
                lacks.then_some(true)
            };
        }
        // Running on into the larger one's lines, the smaller region is
        // not the content's. Pairing with none, it is only when `content`
        // has fewer lines with text than they are: it could not have
        // rewritten them line for line (rewritten lines, a line into a
        // blank one, leave no trace a diff pairs), so the larger reading
        // would delete lines `content` says nothing of.
        match gain {
            0 if only.len() > ours.len() => Some(true),
            0 => None,
            _ => Some(false),
        }
    }

    fn rival_reading(&self, chosen: &Region, rival: &Region) -> Failure {
        let lines = |r: &Region| {
            let s = span(r);
            LineSpan::from_range(s.start, s.end)
        };
        let (one, other) = (lines(chosen), lines(rival));
        let which = if chosen.start.at == rival.start.at {
            "end"
        } else {
            "start"
        };
        let mut f = Failure::new(
            FailureKind::Ambiguous,
            format!(
                "The anchors match lines {one} of {}, but the {which} anchor also matches so that the region is lines {other}, but for its blank lines or spacing; the two regions give different files (one would replace lines the content does not repeat), so mend will not choose",
                self.path
            ),
            format!(
                "Copy the {which} anchor exactly as the file has it at the place you mean, with only the blank lines the file has there, or use more lines of text in it."
            ),
        );
        f.locations = vec![one, other];
        f
    }
}

/// The rival regions of the chosen one (module doc).
fn rivals(c: &Candidates, region: &Region) -> Vec<Region> {
    let s = region.start;
    let pass = region.rank().0;
    let mut out: Vec<Region> = c
        .regions
        .iter()
        .filter(|r| r.start.at != s.at && r.rank().0 <= pass)
        .copied()
        .collect();
    let Some(end) = region.end else {
        return out;
    };
    let rival_ends = ends_after(&c.ends, &s)
        .into_iter()
        .filter(|e| e.at != end.at && (e.pass <= end.pass || e.at < end.at))
        .map(|e| Region {
            start: s,
            end: Some(e),
        });
    let nearer_starts = c
        .starts
        .iter()
        .filter(|t| t.at > s.at && t.at + t.len <= end.at && consistent(t.delta, s.delta))
        .map(|t| Region {
            start: *t,
            end: Some(end),
        });
    out.extend(rival_ends.chain(nearer_starts));
    out
}
