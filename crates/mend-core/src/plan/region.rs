//! Anchored regions (the anchored format's `modify_file`): a start anchor, an optional
//! end anchor after it, and `content` that replaces the region.
//!
//! Anchors are matched line by line with the per-line passes (exact,
//! whitespace, Unicode, line numbers), never by a similarity ratio: an
//! anchor is short, and a merely similar line is a different line. One
//! looser reading is allowed, only when an anchor matches nowhere: the
//! anchor's lines as the file has them but for a typing slip or two in one
//! line ([`crate::similarity::slips`]: letters swapped, dropped, doubled or
//! struck for a neighbour, in at most two words, no operator or number
//! changed). The slipped words must name nothing in the file (a slip into
//! a name the file uses is another line), and every place the anchor
//! matches that way must have the same line there, so the slip corrects to
//! one spelling; a line elsewhere with other words as few character edits
//! away, slip or not (`botop` between `top` and `bottom`), is a tie and
//! refuses, naming both. That is what makes it safe: the
//! reading adds no choice the exact anchor would not have, and the places
//! it finds go through the same region choice below, ties refused.
//! Content lines that repeat the slipped anchor line pair with it, so the
//! file's line is kept and the slip is never written. Because anchors are
//! short, the region is chosen among *every* place they match:
//!
//! - start and end must share one indentation frame (a model shifts all
//!   its lines alike), so an end anchor that matches exactly at another
//!   nesting level is not taken;
//! - a start with two plausible ends is an ambiguity naming both;
//! - the strictest match wins, unless another frame explains a different
//!   region too: a frame-shifted anchor can match another place exactly,
//!   and mend will not guess which was meant.
//!
//! `content` then gets the robustness of the other formats:
//!
//! - blank lines at the region's outer edges follow the blank-edge rule: a
//!   surplus the file lacks is dropped from `content`'s same edge;
//! - when the anchors carried line numbers, `content` loses the same kind
//!   of prefix, so numbers are never written into the file;
//! - an elision marker in `content` keeps the region lines between the
//!   copied lines around it (`content.rs`); beside a new line it is
//!   refused, and a marker that stands for lines is never written.

use std::collections::HashMap;
use std::ops::Range;

mod blank;
mod rivals;

use super::Planner;
use super::batch::Planned;
use super::content::{self, Frame, Read, Reading, Unreadable};
use super::splice::Splice;
use crate::edit::Hints;
use crate::indent::columns;
use crate::locate::{
    Candidate, LineQuery, Match, MatchPass, Miss, drop_surplus, is_blank, locate, occurrences,
};
use crate::normalize::{Numbered, ellipsis_is_code, fold_loose, indent_of, strip_line_numbers};
use crate::report::{Failure, FailureKind, LineSpan};
use crate::similarity::{has_word, slips, window_edits};

/// An anchor as the model sent it, prepared for matching.
struct Anchor {
    /// The lines, line numbers stripped when every line had one and the
    /// numbered lines are not in the file as they are.
    lines: Vec<String>,
    numbered: Option<Numbered>,
    /// Blank lines at its start and end.
    lead: usize,
    trail: usize,
}

impl Anchor {
    /// The anchor as sent: its blank edge lines must match the file's.
    fn new(raw: &[String]) -> Anchor {
        Anchor {
            lines: raw.to_vec(),
            numbered: None,
            lead: 0,
            trail: 0,
        }
    }

    /// The anchor with its blank edge lines set aside, for a file that has
    /// fewer of them there (the blank-edge rule).
    fn trimmed(&self) -> Option<Anchor> {
        let lead = self.lines.iter().take_while(|l| is_blank(l)).count();
        if lead == self.lines.len() {
            return None;
        }
        let trail = self.lines.iter().rev().take_while(|l| is_blank(l)).count();
        (lead + trail > 0).then(|| Anchor {
            lines: self.lines.clone(),
            numbered: self.numbered.clone(),
            lead,
            trail,
        })
    }

    fn core(&self) -> &[String] {
        &self.lines[self.lead..self.lines.len() - self.trail]
    }

    fn stripped(&self) -> Option<Anchor> {
        let n = strip_line_numbers(&self.lines)?;
        let mut a = Anchor::new(&n.lines);
        a.numbered = Some(n);
        Some(a)
    }
}

/// A place an anchor's core matches.
#[derive(Clone, Copy, Debug)]
struct Hit {
    at: usize,
    len: usize,
    pass: MatchPass,
    /// Which of the anchor's forms matched here (an index into the forms
    /// [`Planner::anchor_hits`] returns).
    form: usize,
    /// The file line of the anchor's first non-blank line: one place, in
    /// whichever form.
    key: usize,
    /// The anchor's blank edge lines the file does not have there.
    surplus: usize,
    /// File indentation minus the model's, in columns, where the anchor
    /// says anything about indentation.
    delta: Option<isize>,
}

/// A place an anchor matches but for one line ([`Planner::near_anchor`]).
struct NearHit<'h> {
    hit: Hit,
    /// The file's line where the anchor differs, normalized.
    line: &'h str,
    /// Character edits on the differing words.
    edits: usize,
    /// Whether the anchor's line is a slip of it that names nothing in
    /// the file.
    slip: bool,
}

/// A candidate region.
#[derive(Clone, Copy, Debug)]
struct Region {
    start: Hit,
    end: Option<Hit>,
}

impl Region {
    /// How strictly the anchors match: the looser anchor's pass, then
    /// how many of their blank edge lines the file lacks.
    fn rank(&self) -> (MatchPass, usize) {
        match self.end {
            Some(e) => (self.start.pass.max(e.pass), self.start.surplus + e.surplus),
            None => (self.start.pass, self.start.surplus),
        }
    }

    fn delta(&self) -> Option<isize> {
        self.start.delta.or(self.end.and_then(|e| e.delta))
    }
}

/// Every region the anchors can describe: the anchors' forms (hits index
/// into them), where each matched, the regions, and the starts with two
/// plausible ends.
pub(super) struct Candidates {
    sa: Vec<Anchor>,
    ea: Vec<Anchor>,
    starts: Vec<Hit>,
    /// Every end hit, in file order (for the nearer readings).
    ends: Vec<Hit>,
    regions: Vec<Region>,
    ends_of: Vec<(Hit, Vec<Hit>)>,
}

impl Planner<'_, '_> {
    pub(crate) fn plan_region(
        &self,
        start: &[String],
        end: &[String],
        content: &[String],
        owner: usize,
    ) -> Result<Planned, Failure> {
        let blank_start = start.iter().all(|l| is_blank(l));
        let blank_end = !end.is_empty() && end.iter().all(|l| is_blank(l));
        if blank_start && (end.is_empty() || blank_end) {
            return Err(Failure::new(
                FailureKind::Malformed,
                if start.is_empty() {
                    "The start anchor is empty"
                } else {
                    "The start anchor holds only blank lines, and no end anchor with text says where they are"
                },
                "Give 1-4 unique lines of the file in `start`.",
            ));
        }
        let c = if blank_start {
            self.blank_start_candidates(start, end)?
        } else if blank_end {
            self.blank_end_candidates(start, end)?
        } else {
            self.candidates(start, end)?
        };
        let region = self.choose_region(&c.regions, &c.ends_of, end, &c.starts)?;
        if blank_start || blank_end {
            self.one_block(&c, &region, content, blank_start)?;
        }
        let (pass, splice) = self.region_splice(&c, &region, content, owner)?;
        self.rival_readings(&c, &region, content, owner, &splice)?;
        Ok(Planned {
            splices: vec![splice],
            pass,
            similarity: 1.0,
            moves_cursor: true,
        })
    }

    /// The regions of anchors with text: each start with the strictest end
    /// of its frame after it.
    fn candidates(&self, start: &[String], end: &[String]) -> Result<Candidates, Failure> {
        let has_end = !end.is_empty();
        let (sa, starts) = self.anchor_hits(start, 0, "start anchor")?;
        if starts.is_empty() {
            return Err(self.anchor_missing(start, 0, "start anchor"));
        }
        let (ea, ends) = if has_end {
            self.anchor_hits(end, 0, "end anchor")?
        } else {
            (Vec::new(), Vec::new())
        };
        let mut regions = Vec::new();
        let mut ends_of = Vec::new();
        for s in &starts {
            if !has_end {
                regions.push(Region {
                    start: *s,
                    end: None,
                });
                continue;
            }
            // The strictest ends only: an end as sent beats one whose blank
            // lines the file lacks, as in the ladder (the others are
            // weighed after: [`Planner::rival_readings`]).
            let after = ends_after(&ends, s);
            let best = after.iter().map(|e| (e.pass, e.surplus)).min();
            let after: Vec<Hit> = after
                .into_iter()
                .filter(|e| Some((e.pass, e.surplus)) == best)
                .collect();
            match after.as_slice() {
                [one] => regions.push(Region {
                    start: *s,
                    end: Some(*one),
                }),
                [] => {}
                many => ends_of.push((*s, many[..2].to_vec())),
            }
        }
        Ok(Candidates {
            sa,
            ea,
            starts,
            ends,
            regions,
            ends_of,
        })
    }

    /// The region rendered: `content` conformed to it and spliced in.
    fn region_splice(
        &self,
        c: &Candidates,
        region: &Region,
        content: &[String],
        owner: usize,
    ) -> Result<(MatchPass, Splice), Failure> {
        let sa = &c.sa[region.start.form];
        let ea = region.end.map(|e| &c.ea[e.form]);
        let content = self.conform_content(sa, ea, region, content)?;
        let located = self.region_match(sa, ea, region, content)?;
        let splice = self.render(&located, owner, &Hints::default(), "content")?;
        Ok((located.pass, splice))
    }

    /// Every place an anchor matches at or after `from`, in each of its
    /// forms: as sent and with blank edge lines set aside (the hit says
    /// which), or with line numbers stripped when neither matches anywhere,
    /// or, when nothing matches, the one place it matches but for a slip
    /// ([`Planner::slip_hits`]).
    fn anchor_hits(
        &self,
        raw: &[String],
        from: usize,
        what: &str,
    ) -> Result<(Vec<Anchor>, Vec<Hit>), Failure> {
        let plain = Anchor::new(raw);
        let mut forms: Vec<Anchor> = std::iter::once(Anchor::new(raw))
            .chain(plain.trimmed())
            .collect();
        let mut hits = self.form_hits(&forms, from, None);
        if hits.is_empty()
            && let Some(n) = plain.stripped()
        {
            forms = std::iter::once(Anchor::new(&n.lines))
                .chain(n.trimmed())
                .map(|mut a| {
                    a.numbered = n.numbered.clone();
                    a
                })
                .collect();
            hits = self.form_hits(&forms, from, Some(MatchPass::LineNumbers));
        }
        if hits.is_empty() {
            forms = std::iter::once(Anchor::new(raw))
                .chain(plain.trimmed())
                .collect();
            hits = self.slip_hits(&forms, from, what)?;
        }
        Ok((forms, hits))
    }

    /// The places where an anchor that matches nowhere matches but for a
    /// slip or two in one line ([`slips`]), when the slipped words name
    /// nothing in the file and every such place has the same line there:
    /// the slip then corrects to one spelling, and the region is chosen
    /// among those places exactly as among exact hits (frames, the other
    /// anchor, blank edges), ties refused. A place with another line there
    /// that is a slip too, or as few character edits away, refuses, naming
    /// both. Lines are compared in their most tolerant form, as the
    /// similarity pass compares them.
    fn slip_hits(&self, forms: &[Anchor], from: usize, what: &str) -> Result<Vec<Hit>, Failure> {
        let near = self.near_anchor(forms, from);
        let mut found: Vec<&NearHit<'_>> = near.iter().filter(|h| h.slip).collect();
        found.sort_by_key(|h| (h.hit.key, h.hit.surplus));
        found.dedup_by_key(|h| h.hit.key);
        let Some(first) = found.first() else {
            return Ok(Vec::new());
        };
        // Another spelling of the line as many character edits away (or
        // fewer), slip or not, is a tie: `botop` between `top` and `bottom`.
        let worst = found.iter().map(|h| h.edits).max().unwrap_or(0);
        if let Some(other) = near
            .iter()
            .find(|h| h.line != first.line && (h.slip || h.edits <= worst))
        {
            return Err(self.slip_tie(first.hit, other.hit, what));
        }
        let mut hits: Vec<Hit> = found.into_iter().map(|h| h.hit).collect();
        hits.sort_by_key(|h| h.at);
        Ok(hits)
    }

    /// Every place an anchor's core matches but for one line whose words
    /// pair one for one ([`window_edits`]), and whether that line is a
    /// slip of the file's whose slipped words name nothing in the file.
    fn near_anchor<'h>(&'h self, forms: &[Anchor], from: usize) -> Vec<NearHit<'h>> {
        let grams = self.hay.grams();
        let n = grams.len();
        let file = || (0..n).map(|i| grams.line(i));
        let mut out = Vec::new();
        for (form, a) in forms.iter().enumerate() {
            let core: Vec<String> = a
                .core()
                .iter()
                .map(|l| fold_loose(l).into_owned())
                .collect();
            if core.is_empty() || n < core.len() {
                continue;
            }
            for at in from..=n - core.len() {
                let window: Vec<&str> = (at..at + core.len()).map(|i| grams.line(i)).collect();
                let mut differing = (0..core.len()).filter(|&j| core[j] != window[j]);
                let (Some(j), None) = (differing.next(), differing.next()) else {
                    continue;
                };
                // Words that pair one for one differ in length by a few
                // characters (of up to four bytes each) at most.
                if core[j].len().abs_diff(window[j].len()) > 16 {
                    continue;
                }
                let Some(edits) = window_edits(&core, &window) else {
                    continue;
                };
                let slip = slips(&core, &window)
                    .is_some_and(|slipped| !slipped.iter().any(|t| has_word(file(), t)));
                out.push(NearHit {
                    hit: Hit {
                        form,
                        ..self.hit_at(a, at, MatchPass::Similarity)
                    },
                    line: window[j],
                    edits,
                    slip,
                });
            }
        }
        out
    }

    fn slip_tie(&self, a: Hit, b: Hit, what: &str) -> Failure {
        let candidates = [a, b]
            .iter()
            .map(|h| Candidate {
                start: h.at,
                len: h.len,
                similarity: 1.0,
            })
            .collect();
        let mut f = self.explain(
            Miss::Ambiguous {
                pass: MatchPass::Similarity,
                candidates,
                hint: None,
            },
            what,
        );
        f.fix = format!("Copy the {what} exactly from {}.", self.path);
        f
    }

    fn form_hits(&self, forms: &[Anchor], from: usize, pass: Option<MatchPass>) -> Vec<Hit> {
        let mut hits: Vec<Hit> = forms
            .iter()
            .enumerate()
            .flat_map(|(i, a)| {
                self.hits_of(a, from, pass)
                    .into_iter()
                    .map(move |h| Hit { form: i, ..h })
            })
            .collect();
        // One place, one hit: the strictest form there.
        hits.sort_by_key(|h| (h.key, h.pass, h.surplus));
        hits.dedup_by_key(|h| h.key);
        hits.sort_by_key(|h| h.at);
        hits
    }

    fn hits_of(&self, a: &Anchor, from: usize, pass: Option<MatchPass>) -> Vec<Hit> {
        let core = a.core();
        if core.is_empty() {
            return Vec::new();
        }
        occurrences(self.hay, core, from)
            .into_iter()
            .map(|(at, p)| self.hit_at(a, at, pass.unwrap_or(p)))
            .collect()
    }

    /// The hit of anchor `a`'s core at file line `at`, matched by `pass`.
    fn hit_at(&self, a: &Anchor, at: usize, pass: MatchPass) -> Hit {
        let core = a.core();
        let tw = self.style().tab_width;
        let first = core.iter().position(|l| !is_blank(l)).unwrap_or(0);
        let model = columns(indent_of(&core[first]), tw) as isize;
        let file = columns(indent_of(self.hay.lines()[at + first]), tw) as isize;
        let lines = self.hay.lines();
        let before = (0..at).rev().take_while(|&i| is_blank(lines[i])).count();
        let after = (at + core.len()..lines.len())
            .take_while(|&i| is_blank(lines[i]))
            .count();
        Hit {
            at,
            len: core.len(),
            pass,
            form: 0,
            key: at + first,
            surplus: a.lead - a.lead.min(before) + a.trail - a.trail.min(after),
            delta: if pass.tolerates_indentation() {
                Some(file - model)
            } else {
                Some(0)
            },
        }
    }

    /// Picks the one region the anchors describe, or explains why not.
    fn choose_region(
        &self,
        regions: &[Region],
        ends_of: &[(Hit, Vec<Hit>)],
        end: &[String],
        starts: &[Hit],
    ) -> Result<Region, Failure> {
        let Some(best) = regions.iter().map(Region::rank).min() else {
            if let Some((s, ends)) = ends_of.first() {
                return Err(self.ambiguous_ends(s, ends));
            }
            let from = starts.iter().map(|s| s.at + s.len).min().unwrap_or(0);
            let mut f = self.anchor_missing(end, from, "end anchor");
            f.message.push_str(&format!(
                " (the end anchor is searched after the start anchor, which matched line {})",
                starts[0].at + 1
            ));
            return Err(f);
        };
        let top: Vec<&Region> = regions.iter().filter(|r| r.rank() == best).collect();
        let chosen = *top[0];
        // A start as strict as the best region's, or in another frame, with
        // two plausible ends, makes the region ambiguous too.
        if let Some((s, ends)) = ends_of
            .iter()
            .find(|(s, _)| s.pass <= best.0 || !consistent(s.delta, chosen.delta()))
        {
            return Err(self.ambiguous_ends(s, ends));
        }
        let other_frame = regions
            .iter()
            .find(|r| r.start.at != chosen.start.at && !consistent(r.delta(), chosen.delta()));
        if top.len() > 1 || other_frame.is_some() {
            let mut all: Vec<Region> = top.iter().map(|r| **r).collect();
            all.extend(other_frame.copied());
            // Listed in file order, wherever each was found.
            all.sort_by_key(|r| r.start.at);
            let mut f = self.explain(
                Miss::Ambiguous {
                    pass: best.0,
                    candidates: all
                        .iter()
                        .map(|r| Candidate {
                            start: r.start.at,
                            len: r.end.map_or(r.start.len, |e| e.at + e.len - r.start.at),
                            similarity: 1.0,
                        })
                        .collect(),
                    hint: None,
                },
                "pair of anchors",
            );
            if top.len() == 1 {
                f.message.push_str(
                    "; one of them only with different indentation, and a model's indentation can be shifted, so mend will not choose",
                );
            }
            f.fix = format!(
                "Use anchor lines that occur once in {}, or more of them (up to 4 per anchor).",
                self.path
            );
            return Err(f);
        }
        Ok(chosen)
    }

    fn ambiguous_ends(&self, s: &Hit, ends: &[Hit]) -> Failure {
        let mut f = self.explain(
            Miss::Ambiguous {
                pass: ends
                    .iter()
                    .map(|e| e.pass)
                    .min()
                    .unwrap_or(MatchPass::Exact),
                candidates: ends
                    .iter()
                    .map(|e| Candidate {
                        start: e.at,
                        len: e.len,
                        similarity: 1.0,
                    })
                    .collect(),
                hint: None,
            },
            "end anchor",
        );
        f.message
            .push_str(&format!(" after the start anchor at line {}", s.at + 1));
        f
    }

    /// The "not found" explanation for an anchor, from the locator.
    fn anchor_missing(&self, raw: &[String], from: usize, what: &str) -> Failure {
        let q = LineQuery::anchor(raw, MatchPass::LineNumbers).from(from);
        match locate(self.hay, &q, &self.opts.locate) {
            Err(m) => self.explain(m, what),
            Ok(_) => Failure::new(
                FailureKind::NotFound,
                format!("The {what} matches no place consistent with the other anchor"),
                "Copy both anchors exactly from the file, with their indentation.",
            ),
        }
    }

    /// `content` as the file should receive it: line numbers stripped when
    /// the anchors had them, and blank surplus at the outer edges dropped.
    fn conform_content(
        &self,
        sa: &Anchor,
        ea: Option<&Anchor>,
        r: &Region,
        content: &[String],
    ) -> Result<Vec<String>, Failure> {
        let mut content = content.to_vec();
        if let Some(numbered) = sa
            .numbered
            .as_ref()
            .or(ea.and_then(|a| a.numbered.as_ref()))
        {
            content = numbered.strip_replacement(&content).map_err(|why| {
                Failure::new(
                    FailureKind::Malformed,
                    format!(
                        "The anchors carry line numbers, and {why}, so mend cannot tell what to write"
                    ),
                    "Send the anchors and the content without line numbers.",
                )
            })?;
            if let Some(i) = self.hay.lines().iter().position(|l| numbered.styled(l))
                && content.iter().any(|l| numbered.styled(l))
            {
                return Err(Failure::new(
                    FailureKind::Malformed,
                    format!(
                        "The anchors carry line numbers, but line {} of the file itself begins like a numbered line, so mend cannot tell which numbers in the content are line numbers",
                        i + 1
                    ),
                    "Send the anchors and the content without line numbers.",
                ));
            }
        }
        let (lead, trail) = self.edge_surplus(sa, ea, r);
        Ok(drop_surplus(&content, lead, trail))
    }

    /// Blank lines at the region's outer edges: (kept before, kept after)
    /// of the file's, and the anchors' surplus over them.
    fn outer_blanks(&self, sa: &Anchor, ea: Option<&Anchor>, r: &Region) -> (usize, usize) {
        let lines = self.hay.lines();
        let before = (0..r.start.at)
            .rev()
            .take_while(|&i| is_blank(lines[i]))
            .count();
        let last = r.end.unwrap_or(r.start);
        let after = (last.at + last.len..lines.len())
            .take_while(|&i| is_blank(lines[i]))
            .count();
        let trail = ea.unwrap_or(sa).trail;
        (sa.lead.min(before), trail.min(after))
    }

    fn edge_surplus(&self, sa: &Anchor, ea: Option<&Anchor>, r: &Region) -> (usize, usize) {
        let (kl, kt) = self.outer_blanks(sa, ea, r);
        (sa.lead - kl, ea.unwrap_or(sa).trail - kt)
    }

    /// The region as one match: the anchors' lines mapped to the file's,
    /// or, when `content` elides some of the region, every region line
    /// `content` copies and every marker's lines ([`super::content`]).
    fn region_match(
        &self,
        sa: &Anchor,
        ea: Option<&Anchor>,
        r: &Region,
        content: Vec<String>,
    ) -> Result<Match, Failure> {
        let (kl, kt) = self.outer_blanks(sa, ea, r);
        let first = r.start.at - kl;
        let last = r.end.unwrap_or(r.start);
        let end = last.at + last.len + kt;
        let lines = &self.hay.lines()[first..end];
        let frame = Frame {
            lines,
            delta: r.delta().unwrap_or(0),
            tab_width: self.style().tab_width,
            ellipsis_code: ellipsis_is_code(self.path),
        };
        let read = match content::read(&frame, &content) {
            None => None,
            Some(Ok(read)) => Some(read),
            Some(Err(why)) => return Err(unreadable(&content, why, first)),
        };
        self.content_placeholders(lines, first, &content, read.as_ref())?;
        let mut m = match read {
            Some(read) if read.markers.iter().any(|(_, r)| r != &Reading::Code) => {
                elided_match(first, &content, &read)
            }
            _ => anchors_match(sa, ea, r, kl, kt, content),
        };
        m.pass = r.rank().0;
        m.end = end;
        Ok(m)
    }
}

/// The anchors' lines mapped to the file's; the rest of the region is
/// replaced, and marker-like content lines are content.
fn anchors_match(
    sa: &Anchor,
    ea: Option<&Anchor>,
    r: &Region,
    kl: usize,
    kt: usize,
    content: Vec<String>,
) -> Match {
    let blank = |n: usize| std::iter::repeat_n(String::new(), n);
    let lines_at =
        |at: usize, n: usize| -> Vec<Range<usize>> { (at..at + n).map(|i| i..i + 1).collect() };
    let mut search: Vec<String> = blank(kl).chain(sa.core().iter().cloned()).collect();
    let mut map = lines_at(r.start.at - kl, kl + r.start.len);
    match (ea, r.end) {
        (Some(ea), Some(e)) => {
            search.extend(ea.core().iter().cloned().chain(blank(kt)));
            map.extend(lines_at(e.at, e.len + kt));
        }
        _ => {
            search.extend(blank(kt));
            map.extend(lines_at(r.start.at + r.start.len, kt));
        }
    }
    Match {
        markers: vec![false; search.len()],
        replace_markers: vec![false; content.len()],
        map,
        ..Match::one_to_one(MatchPass::Exact, r.start.at - kl, search, content)
    }
}

/// The region lines `content` copies, in the content's own words, and one
/// marker line for each elided stretch; region lines neither copied nor
/// elided are left out of the search, so the splice drops them.
fn elided_match(first: usize, content: &[String], read: &Read) -> Match {
    let copied_by: HashMap<usize, usize> = read
        .kept
        .iter()
        .enumerate()
        .filter_map(|(k, r)| r.map(|r| (r, k)))
        .collect();
    let mut items: Vec<(usize, String, Range<usize>, bool)> = copied_by
        .iter()
        .map(|(&r, &k)| (r, content[k].clone(), first + r..first + r + 1, false))
        .collect();
    let mut replace_markers = vec![false; content.len()];
    for (k, reading) in &read.markers {
        if let Reading::Elided(g) = reading {
            items.push((
                g.start,
                content[*k].clone(),
                first + g.start..first + g.end,
                true,
            ));
            replace_markers[*k] = true;
        }
    }
    items.sort_by_key(|(r, ..)| *r);
    let search: Vec<String> = items.iter().map(|(_, l, ..)| l.clone()).collect();
    Match {
        map: items.iter().map(|(_, _, m, _)| m.clone()).collect(),
        markers: items.iter().map(|(.., f)| *f).collect(),
        replace_markers,
        elided: true,
        ..Match::one_to_one(MatchPass::Exact, first, search, content.to_vec())
    }
}

/// A content marker mend cannot read, told so the model can resend
/// (`first`: the file line of the region's first line).
fn unreadable(content: &[String], why: Unreadable, first: usize) -> Failure {
    match why {
        Unreadable::TwoReadings {
            marker,
            copy,
            elided,
        } => {
            let code = match copy {
                Some(r) => format!("the file's own line {}, kept", first + r + 1),
                None => "Python's Ellipsis, written in place of those lines".to_owned(),
            };
            let mut f = Failure::new(
                FailureKind::Ambiguous,
                format!(
                    "The content's `{}` (content line {}) reads two ways: as an elision marker it stands for lines {} of the file, and as code it is {code}; the two give different files, so mend will not choose",
                    content[marker].trim(),
                    marker + 1,
                    LineSpan::from_range(first + elided.start, first + elided.end),
                ),
                "To leave lines out, write the marker as a comment that says so (`# ... existing code ...`) between unchanged lines copied exactly; to mean the line itself, write the region's lines out in full.",
            );
            f.locations = vec![LineSpan::from_range(
                first + elided.start,
                first + elided.end,
            )];
            f
        }
        Unreadable::Undetermined { marker } => Failure::new(
            FailureKind::Malformed,
            format!(
                "The content's elision marker `{}` (content line {}) sits next to lines that are new, or that the region has more than once near it, so mend cannot tell which of the region's lines it stands for and which lines are new",
                content[marker].trim(),
                marker + 1
            ),
            "Put an unchanged line of the file right before and right after the marker in `content` (copied exactly, one the region has only once there), or write the region's lines out in full.",
        ),
        Unreadable::StandsForNothing { marker } => Failure::new(
            FailureKind::Malformed,
            format!(
                "The content's elision marker `{}` (content line {}) stands for no line of the region, and mend never writes a marker into a file",
                content[marker].trim(),
                marker + 1
            ),
            "Give an end anchor after the lines the marker stands for, with unchanged lines of the file around the marker, or write the lines out in full.",
        ),
    }
}

/// The end hits in start `s`'s indentation frame after it, in file order.
fn ends_after(ends: &[Hit], s: &Hit) -> Vec<Hit> {
    ends.iter()
        .filter(|e| e.delta == s.delta && e.at >= s.at + s.len)
        .copied()
        .collect()
}

/// Whether two anchors' indentation deltas agree (either may say nothing).
fn consistent(a: Option<isize>, b: Option<isize>) -> bool {
    match (a, b) {
        (Some(x), Some(y)) => x == y,
        _ => true,
    }
}
