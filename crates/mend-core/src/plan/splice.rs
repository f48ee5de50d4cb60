//! Splicing a located match into bytes.
//!
//! The search is diffed against the replacement (line keys, with elision
//! markers standing for their elided lines). Lines the edit keeps are copied
//! from the file with their own bytes and endings; changed and new lines are
//! re-based into the file's indentation and get the line ending of the line
//! they replace, or the file's dominant one.

use std::ops::Range;

use super::Planner;
use crate::diff::{DiffOp, line_ops};
use crate::edit::Hints;
use crate::indent::Rebase;
use crate::locate::{Match, MatchPass};
use crate::normalize::{
    MarkerKind, Typography, ellipsis_is_code, fold_except, fold_loose, indent_of,
    is_elision_marker, marker_kind, says_elided,
};
use crate::report::{Failure, FailureKind, LineSpan};
use crate::similarity::{is_comment, similarity};
use crate::text::static_ending;

/// One region to replace, in bytes of the original.
#[derive(Debug)]
pub(crate) struct Splice {
    pub(crate) range: Range<usize>,
    pub(crate) text: String,
    pub(crate) lines: Range<usize>,
    pub(crate) owner: usize,
}

/// A line of the rendered region: its text and ending (`""` for "the
/// file's dominant ending").
type Out = Vec<(String, &'static str)>;

/// Whether a line the edit removes, found only by similarity, is close
/// enough to the file's line to be the same line with a slip: at most two
/// slips apart (a swap of neighbours is one), or 85% similar.
fn slip(search: &str, file: &str) -> bool {
    let (a, b) = (fold_loose(search), fold_loose(file));
    let d = rapidfuzz::distance::osa::distance(a.chars(), b.chars());
    d <= 2 || similarity(&a, &b) >= 0.85
}

struct Render<'r, 'c, 'a> {
    planner: &'r Planner<'c, 'a>,
    m: &'r Match,
    hints: &'r Hints,
    rebase: Rebase,
    /// Search lines the replacement keeps (after the diff).
    kept: Vec<bool>,
    /// The model's spaces per indentation level, from its replacement.
    model_unit: Option<usize>,
    /// Elision markers at the search's outer edges, which stand for an
    /// unknown stretch of the file beyond the region, and whether the diff
    /// has kept each yet.
    edges: [Option<usize>; 2],
    kept_edge: [bool; 2],
    /// What the two sides of the edit are called in this format.
    nouns: Nouns,
    /// Whether new lines lose the typography the transport gave them.
    typography: Typography,
    /// The diff op being rendered: search lines it removes and replacement
    /// lines it adds.
    op_sides: (Range<usize>, Range<usize>),
    out: Out,
}

impl Planner<'_, '_> {
    /// Builds the new bytes for a located match.
    pub(crate) fn render(
        &self,
        m: &Match,
        owner: usize,
        hints: &Hints,
        what: &str,
    ) -> Result<Splice, Failure> {
        let numbered;
        let m = match self.denumbered(m, hints, what)? {
            Some(n) => {
                numbered = n;
                &numbered
            }
            None => m,
        };
        self.placeholders(m, what)?;
        let marker = |flags: &[bool], j: usize| m.elided && flags.get(j) == Some(&true);
        let s_keys: Vec<String> = (0..m.search.len())
            .map(|j| key(&m.search[j], marker(&m.markers, j)))
            .collect();
        let r_keys: Vec<String> = (0..m.replace.len())
            .map(|k| key(&m.replace[k], marker(&m.replace_markers, k)))
            .collect();
        let ops = line_ops(&s_keys, &r_keys);
        let mut kept = vec![false; m.search.len()];
        for op in &ops {
            if let DiffOp::Equal { old_index, len, .. } = *op {
                kept[old_index..old_index + len].fill(true);
            }
        }
        let typography = self.typography(m, what)?;
        let mut r = Render {
            planner: self,
            m,
            hints,
            typography,
            rebase: self.rebase(m),
            kept,
            model_unit: model_unit(&m.replace),
            edges: edge_markers(m),
            kept_edge: [false; 2],
            nouns: Nouns::of(what),
            op_sides: (0..0, 0..0),
            out: Vec::new(),
        };
        r.check_window(what)?;
        if m.pass == MatchPass::Similarity {
            r.check_vocabulary(&ops, what)?;
        }
        r.emit_extra(None);
        for op in ops {
            r.op(op)?;
        }
        let (range, text) = r.bytes();
        Ok(Splice {
            range,
            text,
            lines: m.start..m.end,
            owner,
        })
    }

    /// The indentation mapping that explains the matched pairs.
    fn rebase(&self, m: &Match) -> Rebase {
        if !m.pass.tolerates_indentation() {
            return Rebase::Identity;
        }
        let lines = self.doc.lines();
        let pairs: Vec<(&str, &str)> = m
            .search
            .iter()
            .zip(&m.map)
            .enumerate()
            .filter(|(j, (_, r))| r.len() == 1 && !(m.elided && m.markers[*j]))
            .map(|(_, (s, r))| (s.as_str(), lines[r.start].content))
            .collect();
        Rebase::infer(&pairs, self.style())
    }
}

/// The model's indentation unit in spaces (4 or 2), from the lines it
/// indented with spaces only.
fn model_unit(lines: &[String]) -> Option<usize> {
    let g = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| indent_of(l))
        .filter(|i| !i.contains('\t'))
        .map(str::len)
        .fold(0, gcd);
    match g {
        0 => None,
        g if g % 4 == 0 => Some(4),
        g if g % 2 == 0 => Some(2),
        _ => None,
    }
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// The names of an edit's two sides in messages: a SEARCH block's search
/// and replacement, a chunk's old and new lines, an anchored change's
/// anchors and content.
#[derive(Clone, Copy)]
pub(crate) struct Nouns {
    pub(crate) search: &'static str,
    pub(crate) replace: &'static str,
}

impl Nouns {
    /// "the replacement's lines", "the chunk's new lines".
    pub(crate) fn new_lines(self) -> String {
        if self.replace.ends_with("lines") {
            format!("the {}", self.replace)
        } else {
            format!("the {}'s lines", self.replace)
        }
    }

    pub(crate) fn of(what: &str) -> Nouns {
        let (search, replace) = match what {
            "content" => ("region", "content"),
            "old_string" => ("old_string", "new_string"),
            "chunk" => ("chunk's old lines", "chunk's new lines"),
            "hunk" => ("hunk's old lines", "hunk's new lines"),
            "EDIT section" => ("EDIT section", "REPL section"),
            _ => ("search", "replacement"),
        };
        Nouns { search, replace }
    }
}

/// The search's first and last non-blank lines, when they are elision
/// markers standing for nothing inside the region.
fn edge_markers(m: &Match) -> [Option<usize>; 2] {
    if !m.elided {
        return [None, None];
    }
    let edge = |j: Option<usize>| j.filter(|&j| m.markers[j] && m.map[j].is_empty());
    let non_blank = |j: &usize| !m.search[*j].trim().is_empty();
    [
        edge((0..m.search.len()).find(non_blank)),
        edge((0..m.search.len()).rev().find(non_blank)),
    ]
}

/// The words of a line that can name something: runs of letters, digits
/// and `_` with a letter in them, two characters or more.
fn words(line: &str) -> impl Iterator<Item = &str> {
    line.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| w.chars().count() >= 2 && w.chars().any(char::is_alphabetic))
}

fn key(line: &str, elided: bool) -> String {
    if elided {
        "\u{0}elided".to_owned()
    } else {
        line.to_owned()
    }
}

impl Render<'_, '_, '_> {
    fn lines(&self) -> &[crate::text::Line<'_>] {
        self.planner.doc.lines()
    }

    /// A similarity match against a window of another size: file lines the
    /// search lacks survive only beside lines the edit keeps, and a search
    /// line the file lacks may only be one the edit keeps.
    fn check_window(&self, what: &str) -> Result<(), Failure> {
        let m = self.m;
        let unsure = |why: String| {
            Failure::new(
                FailureKind::NotFound,
                format!(
                    "The closest region (lines {}) is {:.0}% similar to the {what} but {why}; mend will not guess where the change goes",
                    LineSpan::from_range(m.start, m.end),
                    m.similarity * 100.0
                ),
                format!(
                    "Re-read the file and copy the lines to replace exactly into the {what}, with every line between them."
                ),
            )
        };
        for &(after, line) in &m.extra {
            if !self.kept.get(after.unwrap_or(0)).copied().unwrap_or(false) {
                return Err(unsure(format!(
                    "the file has line {} (`{}`), which the {what} lacks, next to a line the edit changes",
                    line + 1,
                    self.lines()[line].content.trim()
                )));
            }
        }
        if m.pass == MatchPass::Similarity {
            for (j, r) in m.map.iter().enumerate() {
                if r.is_empty() && !self.kept[j] {
                    return Err(unsure(format!(
                        "its line `{}`, which the edit changes, is not in the file",
                        m.search[j].trim()
                    )));
                }
            }
        }
        Ok(())
    }

    /// A similarity match whose new lines use a name the search has where
    /// the file has another (`qty` for `amount`), and the file nowhere
    /// has: the replacement was written against text the file does not
    /// hold, and splicing it between the file's lines would give a file
    /// neither reading meant (a name used but never defined).
    fn check_vocabulary(&self, ops: &[DiffOp], what: &str) -> Result<(), Failure> {
        let m = self.m;
        let lines = self.lines();
        let in_file = |w: &str| crate::similarity::has_word(lines.iter().map(|l| l.content), w);
        let mut foreign: Vec<(&str, usize)> = Vec::new();
        for (j, r) in m.map.iter().enumerate() {
            if r.len() != 1 {
                continue;
            }
            let file_line = lines[r.start].content;
            for w in words(&m.search[j]) {
                let new = !words(file_line).any(|x| x == w);
                if new && !foreign.iter().any(|f| f.0 == w) && !in_file(w) {
                    foreign.push((w, r.start));
                }
            }
        }
        let added = ops.iter().filter_map(|op| match *op {
            DiffOp::Insert {
                new_index, new_len, ..
            }
            | DiffOp::Replace {
                new_index, new_len, ..
            } => Some(new_index..new_index + new_len),
            DiffOp::Equal { .. } | DiffOp::Delete { .. } => None,
        });
        for k in added.flatten() {
            let line = &m.replace[k];
            let Some(&(w, at)) = foreign.iter().find(|f| words(line).any(|x| x == f.0)) else {
                continue;
            };
            return Err(Failure::new(
                FailureKind::NotFound,
                format!(
                    "The closest region (lines {}) is {:.0}% similar to the {what}, but the {what} has `{w}` where the file has line {} (`{}`), and the file has no `{w}`; the {}'s new line `{}` uses it, so the edit was written against text the file does not hold",
                    LineSpan::from_range(m.start, m.end),
                    m.similarity * 100.0,
                    at + 1,
                    lines[at].content.trim(),
                    self.nouns.replace,
                    line.trim()
                ),
                format!(
                    "Re-read the file, copy the lines to replace exactly into the {what}, and write the new lines with the file's names."
                ),
            ));
        }
        Ok(())
    }

    fn keep(&mut self, j: usize) {
        let range = self.m.map[j].clone();
        for i in range {
            let l = self.planner.doc.lines()[i];
            self.out
                .push((l.content.to_owned(), static_ending(l.ending)));
        }
    }

    fn emit_extra(&mut self, after: Option<usize>) {
        for &(a, line) in &self.m.extra {
            if a == after {
                let l = self.planner.doc.lines()[line];
                self.out
                    .push((l.content.to_owned(), static_ending(l.ending)));
            }
        }
    }

    /// Checks that the edit may remove search line `j`.
    fn drop(&self, j: usize) -> Result<(), Failure> {
        let m = self.m;
        if self.hints.exact_removals && m.map[j].len() == 1 {
            let file_line = self.lines()[m.map[j].start].content;
            let same = fold_loose(&m.search[j]) == fold_loose(file_line);
            let slipped = m.pass == MatchPass::Similarity && slip(&m.search[j], file_line);
            if !(same || slipped) {
                return Err(Failure::new(
                    FailureKind::NotFound,
                    format!(
                        "The line the edit removes, `{}`, does not match line {} of the file, `{}`; the surrounding lines match, but mend will not remove a line that differs",
                        m.search[j].trim(),
                        m.map[j].start + 1,
                        file_line.trim()
                    ),
                    "Re-read the file and copy the line to remove exactly.",
                ));
            }
        }
        let beyond_edge =
            self.edges[0].is_some_and(|e| j < e) || self.edges[1].is_some_and(|e| j > e);
        if beyond_edge {
            return Err(Failure::new(
                FailureKind::Malformed,
                format!(
                    "The edit removes line {} of the {s}, which lies beyond the elision marker at the {s}'s edge; that marker stands for an unknown stretch of the file, so mend cannot tell which line it is",
                    j + 1,
                    s = self.nouns.search
                ),
                format!(
                    "End the {} and the {} with real lines of the file, not with an elision marker.",
                    self.nouns.search, self.nouns.replace
                ),
            ));
        }
        if m.elided && m.markers[j] && !m.map[j].is_empty() {
            return Err(Failure::new(
                FailureKind::Malformed,
                format!(
                    "The {} drops the elision marker `{}`, which stands for lines {} of the file; mend will not delete lines the edit did not show",
                    self.nouns.replace,
                    m.search[j].trim(),
                    LineSpan::from_range(m.map[j].start, m.map[j].end)
                ),
                format!(
                    "Repeat the elision marker in the {r} where the elided lines belong, or write those lines out in both the {s} and the {r}.",
                    r = self.nouns.replace,
                    s = self.nouns.search
                ),
            ));
        }
        Ok(())
    }

    /// Where the global mapping does not explain a search line's
    /// indentation (the model's drift was not uniform), a new line beside
    /// it may be in that line's frame or in the others': when the two give
    /// different indentation, mend cannot tell, and refuses.
    fn indent_for(&self, anchor: Option<usize>, line: &str) -> Result<String, Failure> {
        let m = self.m;
        let Some(j) = anchor.filter(|&j| m.map[j].len() == 1 && !m.search[j].trim().is_empty())
        else {
            return Ok(self.conformed(self.rebase.apply(line)));
        };
        if self.rebase == Rebase::Identity {
            return Ok(self.conformed(line.to_owned()));
        }
        let file_line = self.lines()[m.map[j].start].content;
        let global = self.rebase.apply(line);
        if indent_of(&self.rebase.apply(&m.search[j])) == indent_of(file_line) {
            return Ok(global);
        }
        let own =
            Rebase::infer(&[(m.search[j].as_str(), file_line)], self.planner.style()).apply(line);
        if own == global {
            return Ok(global);
        }
        Err(Failure::new(
            FailureKind::NotFound,
            format!(
                "Line {} of the {} (`{}`) is indented differently, relative to the file's line {}, than its other lines, so mend cannot tell how to indent the new line `{}` beside it",
                j + 1,
                self.nouns.search,
                m.search[j].trim(),
                m.map[j].start + 1,
                line.trim()
            ),
            format!(
                "Copy the {}'s lines with the file's indentation, exactly as they are.",
                self.nouns.search
            ),
        ))
    }

    /// A line the identity mapping kept as the model wrote it, in the
    /// file's indentation character.
    fn conformed(&self, line: String) -> String {
        if self.rebase != Rebase::Identity {
            return line;
        }
        self.planner.style().conform(&line, self.model_unit)
    }

    /// Writes replacement line `k`; an elision marker is never written.
    fn insert(
        &mut self,
        k: usize,
        anchor: Option<usize>,
        ending: &'static str,
    ) -> Result<(), Failure> {
        let line = &self.m.replace[k];
        let before_lead = self.edges[0].is_some() && !self.kept_edge[0];
        let after_tail = self.edges[1].is_some() && self.kept_edge[1];
        if before_lead || after_tail {
            let side = if before_lead { "before" } else { "after" };
            return Err(Failure::new(
                FailureKind::Malformed,
                format!(
                    "The {} adds `{}` {side} the elision marker that {} the {}, and that marker stands for an unknown stretch of the file, so mend cannot tell where the new lines go",
                    self.nouns.replace,
                    line.trim(),
                    if before_lead { "begins" } else { "ends" },
                    self.nouns.search
                ),
                "Put real lines of the file (not a marker) next to the place the new lines go.",
            ));
        }
        // A bare `...` no marker pairs with is Python's Ellipsis (an
        // overload's body); elsewhere it is no statement, and is never
        // written in place of the code it would drop.
        let marker_like = self.m.replace_markers.get(k) == Some(&true)
            || marker_kind(line) == Some(MarkerKind::Bare) && !ellipsis_is_code(self.planner.path);
        if marker_like && !self.marker_is_content(k) {
            return Err(Failure::new(
                FailureKind::Malformed,
                format!(
                    "The {} {} the elision marker `{}`, and no marker of the {} pairs with it, so mend cannot tell which lines it stands for; mend never writes a marker into a file",
                    self.nouns.replace,
                    if self.nouns.replace.ends_with("lines") {
                        "contain"
                    } else {
                        "contains"
                    },
                    line.trim(),
                    self.nouns.search
                ),
                format!(
                    "Write the {r} out in full, or use the same elision markers, in the same places, in the {s} and the {r}.",
                    r = self.nouns.replace,
                    s = self.nouns.search
                ),
            ));
        }
        let text = match self.copied_line(line) {
            Some(file_line) => file_line,
            None => match &self.typography {
                Typography::AsSent => self.indent_for(anchor, line)?,
                Typography::Fold { keep } => self.indent_for(anchor, &fold_except(line, keep))?,
            },
        };
        self.out.push((text, ending));
        Ok(())
    }

    /// Whether a marker-like replacement line is the file's new content: in
    /// an edit located without elision no search marker pairs with it, so it
    /// stands for nothing (a doctest's `...`, an example's `// ...`, a
    /// comment ending `etc...`, a line the search has too). Not when it says
    /// in words that code is left out, nor when it takes the place of two
    /// or more removed code lines that the change's other new lines do not
    /// account for, which is how a lazy edit drops them.
    fn marker_is_content(&self, k: usize) -> bool {
        let m = self.m;
        let flagged = m.replace_markers.get(k) == Some(&true);
        if flagged && m.elided || says_elided(&m.replace[k]) {
            return false;
        }
        // The file has the line itself: it is moved or re-indented, not
        // standing for anything.
        let line = m.replace[k].trim();
        if m.search.iter().any(|l| l.trim() == line) {
            return true;
        }
        let (removed, added) = self.op_sides.clone();
        let code = |l: &&String| {
            let t = l.trim();
            !t.is_empty() && !is_elision_marker(t) && !is_comment(t)
        };
        let removed_code = m.search[removed].iter().filter(code).count();
        let added_code = m.replace[added].iter().filter(code).count();
        removed_code < added_code + 2
    }

    /// The file's line for a replacement line identical to a search line
    /// the diff did not pair with it (a copied line that moved, or one of
    /// several equal lines): the model's copy carries its drift, the file's
    /// line does not.
    fn copied_line(&self, line: &str) -> Option<String> {
        let m = self.m;
        if m.pass == MatchPass::Exact || line.trim().is_empty() {
            return None;
        }
        let j = (0..m.search.len())
            .find(|&j| m.search[j] == line && m.map[j].len() == 1 && !(m.elided && m.markers[j]))?;
        Some(self.lines()[m.map[j].start].content.to_owned())
    }

    fn op(&mut self, op: DiffOp) -> Result<(), Failure> {
        match op {
            DiffOp::Equal { old_index, len, .. } => {
                for j in old_index..old_index + len {
                    for e in 0..2 {
                        self.kept_edge[e] |= self.edges[e] == Some(j);
                    }
                    self.keep(j);
                    self.emit_extra(Some(j));
                }
            }
            DiffOp::Delete {
                old_index, old_len, ..
            } => {
                for j in old_index..old_index + old_len {
                    self.drop(j)?;
                }
            }
            DiffOp::Insert {
                old_index,
                new_index,
                new_len,
            } => {
                let n = self.m.search.len();
                let anchor = if old_index > 0 {
                    Some(old_index - 1)
                } else {
                    (old_index < n).then_some(old_index)
                };
                self.op_sides = (old_index..old_index, new_index..new_index + new_len);
                for k in new_index..new_index + new_len {
                    self.insert(k, anchor, "")?;
                }
            }
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                for j in old_index..old_index + old_len {
                    self.drop(j)?;
                }
                self.op_sides = (
                    old_index..old_index + old_len,
                    new_index..new_index + new_len,
                );
                // A line changed in place keeps the ending of the line it
                // replaces; lines beyond the pairing are new.
                for (o, k) in (new_index..new_index + new_len).enumerate() {
                    let ending = match self.m.map.get(old_index + o) {
                        Some(r) if o < old_len && r.len() == 1 => {
                            static_ending(self.lines()[r.start].ending)
                        }
                        _ => "",
                    };
                    let anchor = old_index + o.min(old_len - 1);
                    self.insert(k, Some(anchor), ending)?;
                }
            }
        }
        Ok(())
    }

    /// The byte range the region covers and its new text.
    fn bytes(&self) -> (Range<usize>, String) {
        let m = self.m;
        let doc = self.planner.doc;
        let lines = doc.lines();
        let dominant = doc.dominant_ending();
        let at_eof_unterminated = m.end == lines.len()
            && !self
                .hints
                .final_newline
                .unwrap_or_else(|| doc.ends_with_newline());
        let n = self.out.len();
        let mut text = String::new();
        for (idx, (content, ending)) in self.out.iter().enumerate() {
            text.push_str(content);
            if idx + 1 == n && at_eof_unterminated {
                continue;
            }
            text.push_str(if ending.is_empty() { dominant } else { ending });
        }
        let mut range = doc.byte_range(m.start..m.end);
        if n == 0 && at_eof_unterminated && m.start > 0 {
            // Deleting the last lines: the new last line loses its ending, as
            // the old last line had none.
            range.start -= lines[m.start - 1].ending.len();
        }
        (range, text)
    }
}
