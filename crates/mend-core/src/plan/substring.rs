//! The substring target: `old_string` may start and end inside lines.
//!
//! It is looked for verbatim (a model's `\n` matches the file's `\r\n`),
//! then with typographic Unicode folded; occurrences that overlap count as
//! separate locations. When it is not a substring at all, its lines climb
//! the line ladder like a SEARCH block.

use std::ops::Range;

use super::Planner;
use super::batch::Planned;
use super::splice::Splice;
use crate::edit::{Edit, Replace};
use crate::locate::{Candidate, LineQuery, MatchPass, Miss, nearest};
use crate::normalize::{fold_with_offsets, has_numbered_line, marker_kind};
use crate::report::{Failure, FailureKind};
use crate::text::split_lines;

/// Every start of `needle` in `hay`, overlapping occurrences included.
fn occurrences(hay: &str, needle: &str) -> Vec<usize> {
    let finder = memchr::memmem::Finder::new(needle.as_bytes());
    let step = needle.chars().next().map_or(1, char::len_utf8);
    let mut out = Vec::new();
    let mut pos = 0;
    while let Some(i) = finder.find(&hay.as_bytes()[pos..]) {
        out.push(pos + i);
        pos += i + step;
    }
    out
}

/// Whether the text `range` of `hay` begins or ends inside a word. An
/// `old_string` that spans a line break stands for lines; found only with a
/// word cut in two (`et x = 1` inside `let x = 1`) it is a slip in the
/// first or last line, and replacing it as a substring would leave the cut
/// word's other half glued to the new text.
fn cuts_word(hay: &str, range: Range<usize>) -> bool {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let inner = &hay[range.clone()];
    let starts_inside = word(hay[..range.start].chars().next_back()) && word(inner.chars().next());
    let ends_inside = word(inner.chars().next_back()) && word(hay[range.end..].chars().next());
    starts_inside || ends_inside
}

/// Whether replacing the text `range` of `hay` (which is `old`) with
/// `new` would glue new text onto a line with text of its own: `old`
/// begins with a line break where `new` begins with text, after a line
/// with text, or ends with a line break where `new` ends with text, before
/// one. A model writes such an `old_string` for whole lines (a blank line
/// and the lines after it), so only places where the glued line is blank
/// count.
fn glues(hay: &str, range: Range<usize>, old: &str, new: &str) -> bool {
    if new.is_empty() {
        return false;
    }
    let before = || hay[..range.start].rsplit('\n').next().unwrap_or("");
    let after = || hay[range.end..].split('\n').next().unwrap_or("");
    (old.starts_with('\n') && !new.starts_with('\n') && !before().trim().is_empty())
        || (old.ends_with('\n') && !new.ends_with('\n') && !after().trim().is_empty())
}

/// The starts of `old` (found `len` bytes long) in `hay` that a
/// replacement with `new` may take: none that cuts a word in two where
/// `old` or `new` spans lines, or glues new text onto a line.
fn usable(hay: &str, hits: Vec<usize>, len: usize, old: &str, new: &str) -> Vec<usize> {
    hits.into_iter()
        .filter(|&o| {
            let range = o..o + len;
            // Either side spanning a line break makes it an edit of whole
            // lines, where a word cut in two is a slip, not a target.
            let lines = old.contains('\n') || new.contains('\n');
            let cut = lines && cuts_word(hay, range.clone());
            !cut && !glues(hay, range, old, new)
        })
        .collect()
}

/// Where `new`, a change of whole lines (it spans a line break) that adds
/// to `old`, already stands in `hay` around the match of `old` at `o`: the
/// edit was applied before and its `old_string` is found again inside its
/// own result.
fn around(hay: &str, o: usize, old: &str, new: &str) -> Option<usize> {
    if !new.trim_end().contains('\n') || new.len() <= old.len() {
        return None;
    }
    let lo = (o + old.len()).saturating_sub(new.len());
    let hi = (o + new.len()).min(hay.len());
    let window = hay.get(lo..hi)?;
    occurrences(window, new)
        .into_iter()
        .map(|p| lo + p)
        .find(|&p| p <= o && p + new.len() >= o + old.len())
}

/// The occurrences that do not overlap an earlier one, for `replace_all`.
fn disjoint(hits: Vec<usize>, len: usize) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    for h in hits {
        if out.last().is_none_or(|&p| h >= p + len) {
            out.push(h);
        }
    }
    out
}

impl Planner<'_, '_> {
    pub(crate) fn plan_text(
        &self,
        e: &Edit,
        old: &str,
        new: &str,
        r: &Replace,
        owner: usize,
    ) -> Result<Planned, Failure> {
        if old.is_empty() {
            return Err(Failure::new(
                FailureKind::Malformed,
                "old_string is empty, so it cannot locate anything",
                "Put the exact text to replace in old_string. To create a new file, send it as a new file with its whole content.",
            ));
        }
        let old_n = old.replace("\r\n", "\n");
        let new_n = new.replace("\r\n", "\n");
        let (logical, starts) = self.doc.logical();
        let line_of = |o: usize| {
            self.doc
                .line_of_offset(self.doc.logical_to_original(&starts, o))
        };
        let hits = usable(
            &logical,
            occurrences(&logical, &old_n),
            old_n.len(),
            &old_n,
            &new_n,
        );
        if let Some(chosen) =
            self.choose(hits, old_n.len(), r, MatchPass::Exact, &old_n, line_of)?
        {
            let text = LineStarts::of(&logical, &starts);
            if let [o] = chosen[..]
                && !r.replace_all
            {
                self.not_resent_text(text, o, &old_n, &new_n)?;
            }
            if let [o] = chosen[..]
                && let Some(p) = self.lines_after_indent(text, o, &old_n, &new_n, r, owner)?
            {
                return Ok(p);
            }
            let as_lines = needs_lines(&new_n);
            if as_lines {
                let ranges: Vec<Range<usize>> =
                    chosen.iter().map(|&o| o..o + old_n.len()).collect();
                lines_apart(text, &ranges, (&old_n, &new_n))?;
            }
            let splices = chosen
                .into_iter()
                .map(|o| {
                    let range = o..o + old_n.len();
                    if as_lines {
                        let m = self.placed(text, range, (&old_n, &new_n), MatchPass::Exact, r);
                        return self.render(&m, owner, &r.hints, "old_string");
                    }
                    let a = self.doc.logical_to_original(&starts, range.start);
                    let b = self.doc.logical_to_original(&starts, range.end);
                    Ok(self.substring_splice(a..b, &new_n, owner))
                })
                .collect::<Result<Vec<_>, _>>()?;
            if let [one] = splices.as_slice() {
                let (search, replace) = (split_lines(&old_n), split_lines(&new_n));
                let q =
                    LineQuery::new(&search, &replace).elision(self.elision_for(r.hints.literal));
                self.check_readings(&q, one, owner, &r.hints, "old_string")?;
            }
            return Ok(Planned {
                splices,
                pass: MatchPass::Exact,
                similarity: 1.0,
                moves_cursor: true,
            });
        }
        if let Some(p) = self.plan_folded_text(&old_n, &new_n, &logical, &starts, r, owner)? {
            return Ok(p);
        }
        self.plan_text_lines(e, &old_n, &new_n, r, owner)
    }

    /// Refuses an `old_string` found at `o` inside its own earlier result
    /// ([`around`]): the edit was sent before.
    fn not_resent_text(
        &self,
        text: LineStarts<'_>,
        o: usize,
        old: &str,
        new: &str,
    ) -> Result<(), Failure> {
        let Some(at) = around(text.logical, o, old, new) else {
            return Ok(());
        };
        let lines = |a: usize, b: usize| text.line_of(a)..text.line_of(b.max(a + 1) - 1) + 1;
        let here = lines(at, at + new.len());
        let found = lines(o, o + old.len());
        Err(self.applied_already(here.start, here.len(), Some(found), "old_string"))
    }

    /// `old_string` as whole lines on the line ladder, once it is not a
    /// usable substring. A final newline only in new_string adds a line
    /// break after the region. One only in old_string joins the next line
    /// onto the new text: where that line is blank, it is deleted (the
    /// search gains it as a blank last line, which must be found); where it
    /// has text, a loose match cannot tell where the joined line ends.
    fn plan_text_lines(
        &self,
        e: &Edit,
        old_n: &str,
        new_n: &str,
        r: &Replace,
        owner: usize,
    ) -> Result<Planned, Failure> {
        let joins_next = old_n.ends_with('\n') && !new_n.ends_with('\n') && !new_n.is_empty();
        let mut search = split_lines(old_n);
        if joins_next {
            // Only the one line after old_string's last may be joined: a
            // blank line there is the edge the file must have.
            if search.last().is_none_or(|l| l.trim().is_empty()) {
                return Err(self.joined_line());
            }
            search.push(String::new());
        }
        let mut replace = split_lines(new_n);
        if new_n.ends_with('\n') && !old_n.ends_with('\n') {
            replace.push(String::new());
        }
        // An old_string that starts with a line break starts at the end of
        // the line before; replaced by nothing, it leaves that line whole
        // (`\n    x = 1` → `` deletes `x = 1`, never the blank line above
        // it). As lines, the search's leading blank line is then kept: the
        // replacement is that one blank line, which the blank-edge rule
        // drops where the line before is not blank.
        if new_n.is_empty() && old_n.starts_with('\n') && !old_n.ends_with('\n') {
            replace.push(String::new());
        }
        let planned = self.plan_lines(e, &search, &replace, r, owner, 0)?;
        // The blank-edge rule takes the blank last line only where the
        // file has one; anywhere else the join is refused.
        let blank_last = |s: &Splice| {
            s.lines.end > s.lines.start && self.hay.lines()[s.lines.end - 1].trim().is_empty()
        };
        if joins_next && !planned.splices.iter().all(blank_last) {
            return Err(self.joined_line());
        }
        Ok(planned)
    }

    /// The refusal of an old_string whose final line break new_string
    /// lacks, where the line it joins is not one blank line.
    fn joined_line(&self) -> Failure {
        Failure::new(
            FailureKind::NotFound,
            format!(
                "old_string ends with a line break that new_string lacks: where {} has it with text on the next line, that line would be joined onto the new text, and anywhere else a loose match cannot tell where the joined line ends",
                self.path
            ),
            "Copy old_string exactly from the file, or end old_string and new_string alike (both with a line break, or both without).",
        )
    }

    /// Picks the occurrences to replace: one, every disjoint one with
    /// `replace_all`, or the one a start-line hint singles out. `None` when
    /// there are none.
    fn choose(
        &self,
        hits: Vec<usize>,
        len: usize,
        r: &Replace,
        pass: MatchPass,
        old: &str,
        line_of: impl Fn(usize) -> usize,
    ) -> Result<Option<Vec<usize>>, Failure> {
        match hits.len() {
            0 => Ok(None),
            1 => Ok(Some(hits)),
            _ if r.replace_all => Ok(Some(disjoint(hits, len))),
            _ => {
                let lines: Vec<usize> = hits.iter().map(|&o| line_of(o)).collect();
                let picked = r
                    .hints
                    .start_line
                    .and_then(|h| nearest(&lines, h, self.opts.locate.hint_window));
                match picked {
                    Some(l) if lines.iter().filter(|&&x| x == l).count() == 1 => {
                        let at = lines.iter().position(|&x| x == l).expect("picked");
                        Ok(Some(vec![hits[at]]))
                    }
                    _ => Err(self.text_ambiguity(pass, lines, old, r)),
                }
            }
        }
    }

    /// An `old_string` that spans a line break, found right after a line's
    /// indentation and ending at a line's end, is whole lines whose
    /// indentation the model dropped: replacing it as a substring would
    /// leave the indentation before the first new line and none before the
    /// others. It is planned as those whole lines instead, so new lines
    /// take the file's frame.
    fn lines_after_indent(
        &self,
        LineStarts { logical, starts }: LineStarts<'_>,
        o: usize,
        old: &str,
        new: &str,
        r: &Replace,
        owner: usize,
    ) -> Result<Option<Planned>, Failure> {
        let line = match starts.binary_search(&o) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        };
        let prefix = &logical[starts[line]..o];
        let end = o + old.len();
        let ends_line =
            old.ends_with('\n') || logical[end..].starts_with('\n') || end == logical.len();
        if prefix.is_empty()
            || !prefix.chars().all(|c| c == ' ' || c == '\t')
            || !old.contains('\n')
            || !ends_line
        {
            return Ok(None);
        }
        let mut search = split_lines(old);
        let mut replace = split_lines(new);
        if new.ends_with('\n') && !old.ends_with('\n') {
            replace.push(String::new());
        }
        // A final line break only in old_string: new_string's last line
        // takes the (blank: see `glues`) line after the match.
        if old.ends_with('\n') && !new.is_empty() && !new.ends_with('\n') {
            if end >= logical.len() {
                return Ok(None);
            }
            search.push(String::new());
        }
        let m = crate::locate::Match::placed(
            MatchPass::Whitespace,
            line,
            search,
            replace,
            self.elision_for(r.hints.literal),
        );
        let splice = self.render(&m, owner, &r.hints, "old_string")?;
        Ok(Some(Planned {
            splices: vec![splice],
            pass: MatchPass::Whitespace,
            similarity: 1.0,
            moves_cursor: true,
        }))
    }

    /// The Unicode pass for substrings: `old_string` may start or end inside
    /// a line, so it is matched on folded text and mapped back to bytes.
    fn plan_folded_text(
        &self,
        old: &str,
        new: &str,
        logical: &str,
        starts: &[usize],
        r: &Replace,
        owner: usize,
    ) -> Result<Option<Planned>, Failure> {
        let (folded_file, map) = fold_with_offsets(logical);
        let (folded_old, _) = fold_with_offsets(old);
        if folded_old.trim().is_empty() || (folded_file == logical && folded_old == old) {
            return Ok(None);
        }
        // Only matches that begin and end on character boundaries of the
        // original count (a folded `…` is three bytes).
        let aligned = |o: usize| o == 0 || o >= map.len() - 1 || map[o - 1] != map[o];
        let hits: Vec<usize> = occurrences(&folded_file, &folded_old)
            .into_iter()
            .filter(|&o| aligned(o) && aligned(o + folded_old.len()))
            .collect();
        let hits = usable(&folded_file, hits, folded_old.len(), old, new);
        let line_of = |o: usize| {
            self.doc
                .line_of_offset(self.doc.logical_to_original(starts, map[o]))
        };
        let Some(chosen) =
            self.choose(hits, folded_old.len(), r, MatchPass::Unicode, old, line_of)?
        else {
            return Ok(None);
        };
        // As whole lines: copied lines are taken from the file, and new
        // lines lose the typography the match had to fold.
        let text = LineStarts::of(logical, starts);
        let ranges: Vec<Range<usize>> = chosen
            .iter()
            .map(|&o| map[o]..map[o + folded_old.len()])
            .collect();
        lines_apart(text, &ranges, (old, new))?;
        let splices = chosen
            .into_iter()
            .map(|o| {
                let range = map[o]..map[o + folded_old.len()];
                let m = self.placed(text, range, (old, new), MatchPass::Unicode, r);
                self.render(&m, owner, &r.hints, "old_string")
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Some(Planned {
            splices,
            pass: MatchPass::Unicode,
            similarity: 1.0,
            moves_cursor: true,
        }))
    }

    /// The substring match at logical `range` as a match of whole lines,
    /// found by `pass`.
    fn placed(
        &self,
        text: LineStarts<'_>,
        range: Range<usize>,
        (old, new): (&str, &str),
        pass: MatchPass,
        r: &Replace,
    ) -> crate::locate::Match {
        let (line, search, replace) = text.whole_lines(range, old, new);
        crate::locate::Match::placed(
            pass,
            line,
            search,
            replace,
            self.elision_for(r.hints.literal),
        )
    }

    /// Replaces bytes `range` of the original with `new` (whose `\n` become
    /// the ending the region used, when uniform, else the dominant one).
    fn substring_splice(&self, range: Range<usize>, new: &str, owner: usize) -> Splice {
        let (a, b) = (range.start, range.end);
        let l0 = self.doc.line_of_offset(a);
        let l1 = if b > a {
            self.doc.line_of_offset(b - 1)
        } else {
            l0
        };
        // The endings that lie inside the region.
        let endings: Vec<&str> = self.doc.lines()[l0..=l1]
            .iter()
            .filter(|l| !l.ending.is_empty() && (a..b).contains(&(l.start + l.content.len())))
            .map(|l| l.ending)
            .collect();
        let ending = match endings.first() {
            Some(&first) if endings.iter().all(|&e| e == first) => {
                crate::text::static_ending(first)
            }
            _ => self.doc.dominant_ending(),
        };
        let text = if ending == "\n" {
            new.to_owned()
        } else {
            new.replace('\n', ending)
        };
        Splice {
            range,
            text,
            lines: l0..l1 + 1,
            owner,
        }
    }

    /// A substring that occurs at several `lines` (0-based).
    fn text_ambiguity(
        &self,
        pass: MatchPass,
        lines: Vec<usize>,
        old: &str,
        r: &Replace,
    ) -> Failure {
        let m = split_lines(old).len().max(1);
        self.explain(
            Miss::Ambiguous {
                pass,
                candidates: lines
                    .into_iter()
                    .map(|start| Candidate {
                        start,
                        len: m,
                        similarity: 1.0,
                    })
                    .collect(),
                hint: r.hints.start_line,
            },
            "old_string",
        )
    }
}

/// The file's logical text (line endings as `\n`) with the offset where
/// each of its lines starts: what a substring is found in, and how an
/// offset in it becomes a line.
#[derive(Clone, Copy)]
struct LineStarts<'a> {
    logical: &'a str,
    starts: &'a [usize],
}

impl<'a> LineStarts<'a> {
    fn of(logical: &'a str, starts: &'a [usize]) -> LineStarts<'a> {
        LineStarts { logical, starts }
    }

    /// The line holding offset `o`.
    fn line_of(&self, o: usize) -> usize {
        match self.starts.binary_search(&o) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        }
    }

    /// Where line `i` ends, its `\n` included.
    fn line_end(&self, i: usize) -> usize {
        self.starts
            .get(i + 1)
            .copied()
            .unwrap_or(self.logical.len())
    }

    /// The replacement of the text `range` (which `old` matched) by `new`,
    /// as the whole lines it touches: their first line, the lines with
    /// `old` in place, and the lines with `new`. A match ending with a line
    /// break that `new` lacks joins the next line onto the new text, so
    /// that line is part of the region.
    fn whole_lines(
        &self,
        range: Range<usize>,
        old: &str,
        new: &str,
    ) -> (usize, Vec<String>, Vec<String>) {
        let l0 = self.line_of(range.start);
        let mut l1 = self.line_of(range.end.saturating_sub(1).max(range.start));
        let mut end = self.line_end(l1);
        if range.end == end
            && old.ends_with('\n')
            && !new.ends_with('\n')
            && l1 + 1 < self.starts.len()
        {
            l1 += 1;
            end = self.line_end(l1);
        }
        let prefix = &self.logical[self.starts[l0]..range.start];
        let suffix = &self.logical[range.end..end];
        (
            l0,
            split_lines(&format!("{prefix}{old}{suffix}")),
            split_lines(&format!("{prefix}{new}{suffix}")),
        )
    }
}

/// Occurrences replaced as the whole lines they touch must touch no line
/// in common (`replace_all` with two on one line), or their regions would
/// overlap.
fn lines_apart(
    text: LineStarts<'_>,
    ranges: &[Range<usize>],
    (old, new): (&str, &str),
) -> Result<(), Failure> {
    let mut last_end = 0;
    for (k, r) in ranges.iter().enumerate() {
        let (first, search, _) = text.whole_lines(r.clone(), old, new);
        if k > 0 && first < last_end {
            return Err(Failure::new(
                FailureKind::Ambiguous,
                format!(
                    "old_string occurs more than once on line {} and replace_all is set, but its new_string must be placed as whole lines (it has a line that may be an elision marker or a line number, or the match folded typography), and those places share a line",
                    first + 1
                ),
                "Send one edit per line, each with old_string covering the whole line, or write new_string without marker or numbered lines.",
            ));
        }
        last_end = first + search.len();
    }
    Ok(())
}

/// Whether a substring replacement is planned as the whole lines it
/// touches, so the line formats' rules hold for it too: its new text has a
/// line that may be an elision marker (which must never be written where
/// it stands for code) or that begins like a numbered line (a pasted line
/// number is never written), or a comment that may be a placeholder for
/// code it replaces (`lazy.rs`).
fn needs_lines(new: &str) -> bool {
    new.split('\n')
        .any(|l| marker_kind(l).is_some() || super::lazy::placeholder(l, false))
        || has_numbered_line(new.split('\n'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_edit(old: &str, new: &str, all: bool) -> crate::Edit {
        crate::Edit {
            path: "a.py".into(),
            op: crate::EditOp::Replace(crate::Replace {
                target: crate::Target::Text {
                    old: old.into(),
                    new: new.into(),
                },
                replace_all: all,
                hints: crate::Hints::default(),
            }),
            origin: None,
        }
    }

    #[test]
    fn whole_line_occurrences_sharing_a_line_are_refused_not_overlapped() {
        let plan = |text: &str, e: &crate::Edit| {
            crate::plan_file(
                "a.py",
                Some(text),
                &[(0, e)],
                &crate::PlanOptions::default(),
            )
        };
        // Folded typography, twice on one line.
        let p = plan(
            "a = 'x' + 'x'\n",
            &text_edit("\u{2018}x\u{2019}", "\u{2018}y\u{2019}", true),
        );
        assert_eq!(p.reports[0].status, crate::EditStatus::Failed);
        assert_eq!(p.content.as_deref(), Some("a = 'x' + 'x'\n"));
        // On lines of their own, each is replaced, and folded.
        let p = plan(
            "a = 'x'\nb = 'x'\n",
            &text_edit("\u{2018}x\u{2019}", "\u{2018}y\u{2019}", true),
        );
        assert_eq!(p.content.as_deref(), Some("a = 'y'\nb = 'y'\n"));
    }

    /// A one-line `old_string` that stops inside a word, with a
    /// replacement that adds a line: a slip for the whole line (`items`
    /// typed `item`), never a substring to cut the word at.
    #[test]
    fn a_cut_word_with_a_replacement_of_lines_is_not_taken() {
        let text = "let a = 1;\n    // render the items\nlet b = 2;\n";
        let e = text_edit("    // render the item", "    // render the item\n", false);
        let p = crate::plan_file(
            "a.rs",
            Some(text),
            &[(0, &e)],
            &crate::PlanOptions::default(),
        );
        assert_ne!(
            p.content.as_deref(),
            Some("let a = 1;\n    // render the item\ns\nlet b = 2;\n")
        );
        // A word edit inside one line is still a substring edit.
        let e = text_edit("items", "things", false);
        let p = crate::plan_file(
            "a.rs",
            Some(text),
            &[(0, &e)],
            &crate::PlanOptions::default(),
        );
        assert_eq!(
            p.content.as_deref(),
            Some("let a = 1;\n    // render the things\nlet b = 2;\n")
        );
    }

    #[test]
    fn overlapping_occurrences_are_all_found() {
        assert_eq!(occurrences("end\nend\nend\n", "end\nend"), vec![0, 4]);
        assert_eq!(disjoint(vec![0, 4], 7), vec![0]);
        assert_eq!(occurrences("ééé", "éé"), vec![0, 2]);
    }
}
