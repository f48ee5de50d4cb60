//! Line-block targets: SEARCH/REPLACE blocks, edit blocks, patch chunks
//! and diff hunks, located with the whole ladder.

use std::ops::Range;

use super::batch::Planned;
use super::splice::Splice;
use super::{Planner, search_noun};
use crate::edit::{Edit, Hints, Replace, Target};
use crate::locate::{
    LineQuery, Match, MatchPass, Miss, drop_surplus, find_loose, is_blank, locate,
};
use crate::normalize::fold_loose;
use crate::normalize::indent_of;
use crate::report::{Failure, FailureKind};

impl Planner<'_, '_> {
    /// Locates and renders one replacement of any target kind.
    pub(crate) fn plan_replace(
        &self,
        e: &Edit,
        r: &Replace,
        owner: usize,
        from: usize,
    ) -> Result<Planned, Failure> {
        match &r.target {
            Target::Lines { search, replace } => {
                if search.is_empty() && r.hints.at_eof {
                    return self.append(e, replace, &r.hints, owner);
                }
                if search.iter().all(|l| l.trim().is_empty()) {
                    return Err(Failure::new(
                        FailureKind::Malformed,
                        format!(
                            "The {} is empty, so it cannot locate anything",
                            search_noun(e)
                        ),
                        "Put the exact lines to replace in it. An empty search only creates a new file.",
                    ));
                }
                self.plan_lines(e, search, replace, r, owner, from)
            }
            Target::Text { old, new } => self.plan_text(e, old, new, r, owner),
            Target::Region {
                start,
                end,
                content,
            } => self.plan_region(start, end, content, owner),
        }
    }

    pub(crate) fn plan_lines(
        &self,
        e: &Edit,
        search: &[String],
        replace: &[String],
        r: &Replace,
        owner: usize,
        from: usize,
    ) -> Result<Planned, Failure> {
        let what = search_noun(e);
        let (from, within) = self.narrow(&r.hints.context, from)?;
        let q = LineQuery::new(search, replace)
            .hint(r.hints.start_line)
            .replace_all(r.replace_all)
            .from(from)
            .elision(self.elision_for(r.hints.literal))
            .within(within)
            .at_eof(r.hints.at_eof);
        let matches = match locate(self.hay, &q, &self.opts.locate) {
            Ok(ms) => ms,
            Err(m) => {
                if matches!(
                    m,
                    Miss::Ambiguous {
                        pass: MatchPass::Elision,
                        ..
                    }
                ) && let Some((m, splice)) = self.agreeing_elision(&q, owner, &r.hints, what)
                {
                    return Ok(Planned {
                        pass: m.pass,
                        similarity: m.similarity,
                        splices: vec![splice],
                        moves_cursor: true,
                    });
                }
                match (&m, r.hints.identical) {
                    (
                        Miss::Ambiguous {
                            pass, candidates, ..
                        },
                        Some((rank, n)),
                    ) if *pass <= MatchPass::Unicode && candidates.len() == n => {
                        // As many identical hunks as places: each takes its own.
                        let at = candidates[rank].start;
                        let q = q.clone().within(Some(at..at + 1));
                        locate(self.hay, &q, &self.opts.locate)
                            .map_err(|m| self.explain(m, what))?
                    }
                    _ => return Err(self.missed(m, (search, replace), r, what)),
                }
            }
        };
        if let [m] = matches.as_slice()
            && !r.replace_all
        {
            self.not_resent(m, &r.hints, what)?;
        }
        let splices = matches
            .iter()
            .map(|m| self.render(m, owner, &r.hints, what))
            .collect::<Result<Vec<_>, _>>()?;
        if matches[0].pass < MatchPass::Elision {
            self.check_readings(&q, &splices[0], owner, &r.hints, what)?;
        }
        Ok(Planned {
            pass: matches[0].pass,
            similarity: matches[0].similarity,
            splices,
            moves_cursor: true,
        })
    }

    /// The failure of a search the ladder did not place: applied already
    /// when it is gone and its replacement stands in the file, else
    /// explained.
    fn missed(
        &self,
        m: Miss,
        (search, replace): (&[String], &[String]),
        r: &Replace,
        what: &str,
    ) -> Failure {
        if let Miss::NotFound {
            already: Some(at), ..
        } = m
        {
            let len = drop_surplus(replace, usize::MAX, usize::MAX).len();
            return self.applied_already(at, len, None, what);
        }
        let deletes = matches!(m, Miss::NotFound { .. }) && replace.iter().all(|l| is_blank(l));
        let mut f = self.explain(m, what);
        if deletes {
            // A deletion leaves nothing to find: it may have been applied.
            f.fix.push_str(&format!(
                " This edit only deletes the {what}'s lines: if an earlier edit deleted them already, send nothing for it."
            ));
        }
        self.explain_anchor(f, search, r.hints.anchor_lines)
    }

    /// Refuses a located edit whose replacement already stands around its
    /// region ([`Planner::around`]): it was sent before.
    fn not_resent(&self, m: &Match, hints: &Hints, what: &str) -> Result<(), Failure> {
        match self.around(m, hints, what)? {
            Some(at) => {
                let len = drop_surplus(&m.replace, usize::MAX, usize::MAX).len();
                Err(self.applied_already(at, len, Some(m.start..m.end), what))
            }
            None => Ok(()),
        }
    }

    /// Where the replacement of a located match already stands around it:
    /// its lines, which add to the region lines the search does not have,
    /// occur at a place that holds the whole region. The search is then
    /// found again inside the edit's own earlier result (a re-sent
    /// insertion), and applying it would add its new lines a second time.
    fn around(&self, m: &Match, hints: &Hints, what: &str) -> Result<Option<usize>, Failure> {
        let region = m.end - m.start;
        if m.elided || m.replace.len() <= region {
            return Ok(None);
        }
        let clean = self.denumbered(m, hints, what)?;
        let replace = drop_surplus(&clean.as_ref().unwrap_or(m).replace, usize::MAX, usize::MAX);
        let searched: Vec<String> = m
            .search
            .iter()
            .map(|l| fold_loose(l).into_owned())
            .collect();
        let adds = replace
            .iter()
            .any(|l| !l.trim().is_empty() && !searched.contains(&fold_loose(l).into_owned()));
        if !adds || replace.len() <= region {
            return Ok(None);
        }
        let starts = m.end.saturating_sub(replace.len())..m.start + 1;
        Ok(find_loose(self.hay, &replace, starts)
            .into_iter()
            .find(|&at| at <= m.start && at + replace.len() >= m.end))
    }

    /// Follows apply-patch `@@` context lines: each is the first occurrence
    /// at or after the previous one. Returns where the search may start and
    /// the scope of the last context line (its indented block).
    fn narrow(
        &self,
        context: &[String],
        mut from: usize,
    ) -> Result<(usize, Option<Range<usize>>), Failure> {
        let mut within = None;
        for c in context {
            if c.trim().is_empty() {
                continue;
            }
            let line = std::slice::from_ref(c);
            let q = LineQuery::anchor(line, MatchPass::Unicode)
                .replace_all(true)
                .from(from);
            let found = locate(self.hay, &q, &self.opts.locate).map_err(|_| {
                Failure::new(
                    FailureKind::NotFound,
                    format!(
                        "The context line `@@ {}` was not found in {}{}",
                        c.trim(),
                        self.path,
                        if from > 0 {
                            format!(" after line {from}")
                        } else {
                            String::new()
                        }
                    ),
                    "Use an `@@` line copied exactly from the file (a function or class header above the change), or leave it out.",
                )
            })?;
            let at = found[0].start;
            from = at + 1;
            within = Some(from..self.scope_end(at));
        }
        Ok((from, within))
    }

    /// The end of the indented block opened by line `at`: the first later
    /// non-blank line indented no deeper (included, so a closing `}` counts).
    fn scope_end(&self, at: usize) -> usize {
        let lines = self.hay.lines();
        let tw = self.style().tab_width;
        let width = |l: &str| crate::indent::columns(indent_of(l), tw);
        let base = width(lines[at]);
        (at + 1..lines.len())
            .find(|&i| !lines[i].trim().is_empty() && width(lines[i]) <= base)
            .map_or(lines.len(), |i| i + 1)
    }

    /// Appends lines at the end of the file (a pure-addition patch chunk
    /// without context). Codex appends such a chunk and leaves the cursor
    /// where it was, so a later chunk may still edit an earlier line.
    fn append(
        &self,
        e: &Edit,
        lines: &[String],
        hints: &Hints,
        owner: usize,
    ) -> Result<Planned, Failure> {
        // Numbered new lines at the end follow the file's last line.
        let n = self.doc.len();
        let at_end = Match::one_to_one(MatchPass::Exact, n, Vec::new(), lines.to_vec());
        let stripped = self.denumbered(&at_end, hints, search_noun(e))?;
        let lines = stripped.as_ref().map_or(lines, |m| m.replace.as_slice());
        let ending = self.doc.dominant_ending();
        let ends_nl = self.doc.ends_with_newline();
        let mut text = String::new();
        if !ends_nl {
            text.push_str(ending);
        }
        for (k, l) in lines.iter().enumerate() {
            text.push_str(l);
            let last = k + 1 == lines.len();
            if !last || hints.final_newline.unwrap_or(ends_nl) {
                text.push_str(ending);
            }
        }
        let end = self.doc.text().len();
        Ok(Planned {
            splices: vec![Splice {
                range: end..end,
                text,
                lines: n..n,
                owner,
            }],
            pass: MatchPass::Exact,
            similarity: 1.0,
            moves_cursor: false,
        })
    }
}
