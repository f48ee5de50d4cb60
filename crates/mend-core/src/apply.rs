//! Planning: from a file's text and its edits to the new text and a report.
//!
//! All replacements in a batch are located against the same original text,
//! checked for overlap, and spliced bottom to top. The new text is built from
//! byte ranges of the original, so bytes outside the located regions are
//! untouched by construction. Inside a region:
//!
//! - replacement lines that equal a search line (context the edit keeps) are
//!   taken from the *file*, with their own bytes and line ending, so a
//!   tolerant match never rewrites a line the edit did not change;
//! - new lines get the file's dominant line ending and, after a
//!   whitespace-tolerant pass, the file's indentation ([`crate::indent`]);
//! - an elision marker kept in the replacement stands for the elided lines;
//! - whether the file ends with a newline is preserved.

use std::cell::OnceCell;
use std::ops::Range;

use similar::{Algorithm, DiffOp, capture_diff_slices};

use crate::edit::{Edit, EditOp, Replace, Target};
use crate::indent::{Rebase, Unit, detect_unit};
use crate::locate::{
    Candidate, Haystack, LineQuery, LocateOptions, Match, MatchPass, Miss, locate,
};
use crate::normalize::{fold_trim, fold_with_offsets, indent_of, is_elision_marker};
use crate::report::{
    BestCandidate, EditReport, EditStatus, Failure, FailureKind, LineSpan, NumberedLine,
};
use crate::text::{Document, split_lines};

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
    pub fn status(&self, original: Option<&str>) -> Option<char> {
        match (self.existed, &self.content, &self.new_path) {
            (true, None, _) => Some('D'),
            (false, Some(_), _) => Some('A'),
            (true, Some(_), Some(_)) => Some('R'),
            (true, Some(c), None) if Some(c.as_str()) != original => Some('M'),
            (true, Some(_), None) if self.executable.is_some() => Some('M'),
            _ => None,
        }
    }
}

/// Plans every edit for one file.
///
/// `original` is the file's text (`None` when it does not exist); `edits`
/// pairs each edit with its index in the input. Replacements that follow one
/// another form a batch located against the same text; a creation, write,
/// deletion or rename ends the batch.
pub fn plan_file(
    path: &str,
    original: Option<&str>,
    edits: &[(usize, &Edit)],
    opts: &PlanOptions,
) -> FilePlan {
    let mut text: Option<String> = original.map(str::to_owned);
    let mut new_path: Option<String> = None;
    let mut executable: Option<bool> = None;
    let mut reports: Vec<EditReport> = Vec::new();
    let mut batch: Vec<(usize, &Edit, &Replace)> = Vec::new();
    let mut failed = false;

    let flush = |batch: &mut Vec<(usize, &Edit, &Replace)>,
                 text: &mut Option<String>,
                 reports: &mut Vec<EditReport>,
                 failed: &mut bool| {
        if batch.is_empty() {
            return;
        }
        match text.as_deref() {
            None => {
                for (i, e, _) in batch.drain(..) {
                    reports.push(EditReport::failed(
                        i,
                        e,
                        Failure::new(
                            FailureKind::FileNotFound,
                            format!("File not found: {}", e.path),
                            "Check the path. To create a new file, send its whole content with an empty search (or as a whole-file write).",
                        ),
                    ));
                }
                *failed = true;
            }
            Some(t) => {
                let (new, rs) = plan_batch(t, batch, opts);
                *failed |= rs.iter().any(|r| !r.is_ok());
                reports.extend(rs);
                *text = Some(new);
                batch.clear();
            }
        }
    };

    for &(i, e) in edits {
        if failed {
            reports.push(previous_failed(i, e));
            continue;
        }
        if let EditOp::Replace(r) = &e.op {
            batch.push((i, e, r));
            continue;
        }
        flush(&mut batch, &mut text, &mut reports, &mut failed);
        if failed {
            reports.push(previous_failed(i, e));
            continue;
        }
        match &e.op {
            EditOp::Replace(_) => unreachable!("handled above"),
            EditOp::Create { content } => match text.as_deref() {
                Some(t) if !t.trim().is_empty() => {
                    failed = true;
                    reports.push(EditReport::failed(
                        i,
                        e,
                        Failure::new(
                            FailureKind::FileExists,
                            format!(
                                "{} already exists and is not empty, so an empty search cannot create it",
                                e.path
                            ),
                            "To change the file, put the lines to replace in the search. To replace all of it, send a whole-file write.",
                        ),
                    ));
                }
                _ => {
                    text = Some(content.clone());
                    let mut r = EditReport::new(i, e, EditStatus::Applied);
                    r.occurrences = 1;
                    reports.push(r);
                }
            },
            EditOp::WriteFile { content } => {
                if let Some(f) = lazy_whole_file(text.as_deref(), content, &e.path) {
                    failed = true;
                    reports.push(EditReport::failed(i, e, f));
                    continue;
                }
                text = Some(match text.as_deref() {
                    Some(old) => conform_whole_file(old, content),
                    None => content.clone(),
                });
                let mut r = EditReport::new(i, e, EditStatus::Applied);
                r.occurrences = 1;
                reports.push(r);
            }
            EditOp::SetMode { executable: x } => {
                if text.is_none() {
                    failed = true;
                    reports.push(EditReport::failed(
                        i,
                        e,
                        Failure::new(
                            FailureKind::FileNotFound,
                            format!("File not found: {} (cannot change its mode)", e.path),
                            "Check the path.",
                        ),
                    ));
                } else {
                    executable = Some(*x);
                    let mut r = EditReport::new(i, e, EditStatus::Applied);
                    r.occurrences = 1;
                    reports.push(r);
                }
            }
            EditOp::Delete => {
                if text.is_none() {
                    failed = true;
                    reports.push(EditReport::failed(
                        i,
                        e,
                        Failure::new(
                            FailureKind::FileNotFound,
                            format!("File not found: {} (cannot delete it)", e.path),
                            "Check the path of the file to delete.",
                        ),
                    ));
                } else {
                    text = None;
                    let mut r = EditReport::new(i, e, EditStatus::Applied);
                    r.occurrences = 1;
                    reports.push(r);
                }
            }
            EditOp::Rename { to } => {
                if text.is_none() {
                    failed = true;
                    reports.push(EditReport::failed(
                        i,
                        e,
                        Failure::new(
                            FailureKind::FileNotFound,
                            format!("File not found: {} (cannot move it)", e.path),
                            "Check the path of the file to move.",
                        ),
                    ));
                } else {
                    new_path = Some(to.clone());
                    let mut r = EditReport::new(i, e, EditStatus::Applied);
                    r.occurrences = 1;
                    reports.push(r);
                }
            }
        }
    }
    flush(&mut batch, &mut text, &mut reports, &mut failed);
    reports.sort_by_key(|r| r.index);
    FilePlan {
        path: path.to_owned(),
        new_path,
        existed: original.is_some(),
        content: text,
        executable,
        reports,
    }
}

/// Seed 001's "previous edit to this file failed": the report of an edit
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

/// A whole-file write that stands in for code with an elision comment
/// (`# ... existing code ...`) would delete that code: refuse it.
fn lazy_whole_file(old: Option<&str>, new: &str, path: &str) -> Option<Failure> {
    let old = old?;
    let (n, line) = new
        .lines()
        .enumerate()
        .find(|(_, l)| is_elision_marker(l) && l.chars().any(char::is_alphabetic))?;
    if old.lines().any(|l| l.trim() == line.trim()) {
        return None;
    }
    Some(Failure::new(
        FailureKind::Malformed,
        format!(
            "The new content of {path} elides code with `{}` (line {}); writing it would delete the code it stands for",
            line.trim(),
            n + 1
        ),
        "Send the entire file, or edit only the part that changes with a search/replace block.",
    ))
}

/// A whole-file write replaces every byte, but a model writes `\n` and no
/// BOM: keep the existing file's CRLF and BOM so a rewrite does not turn into
/// an every-line diff.
fn conform_whole_file(old: &str, new: &str) -> String {
    let doc = Document::new(old);
    let mut out = String::with_capacity(new.len() + 8);
    if doc.has_bom() && !new.starts_with(crate::text::BOM) {
        out.push(crate::text::BOM);
    }
    if doc.dominant_ending() == "\r\n" && !new.contains("\r\n") {
        out.push_str(&new.replace('\n', "\r\n"));
    } else {
        out.push_str(new);
    }
    out
}

/// One region to replace, in bytes of the original.
#[derive(Debug)]
struct Splice {
    range: Range<usize>,
    text: String,
    lines: Range<usize>,
    owner: usize,
}

/// What locating and rendering one replacement produced.
struct Planned {
    splices: Vec<Splice>,
    pass: MatchPass,
    similarity: f64,
}

impl Planned {
    /// One past the last original line the edit covers.
    fn end_line(&self) -> usize {
        self.splices.iter().map(|s| s.lines.end).max().unwrap_or(0)
    }
}

fn plan_batch(
    text: &str,
    batch: &[(usize, &Edit, &Replace)],
    opts: &PlanOptions,
) -> (String, Vec<EditReport>) {
    let doc = Document::new(text);
    let hay = Haystack::new(doc.contents());
    let unit = OnceCell::new();
    let ctx = Ctx {
        doc: &doc,
        hay: &hay,
        unit: &unit,
        opts,
    };
    let mut reports = Vec::with_capacity(batch.len());
    let mut splices: Vec<Splice> = Vec::new();
    let mut prev_end = 0;
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
        let from = if r.hints.after_previous { prev_end } else { 0 };
        match ctx.plan_replace(r, &e.path, pos, from) {
            Ok(p) => {
                prev_end = prev_end.max(p.end_line());
                let mut rep = EditReport::new(i, e, EditStatus::Applied);
                rep.pass = Some(p.pass);
                rep.similarity = Some(p.similarity);
                rep.occurrences = p.splices.len();
                rep.lines = p
                    .splices
                    .first()
                    .map(|s| LineSpan::from_range(s.lines.start, s.lines.end));
                splices.extend(p.splices);
                reports.push(rep);
            }
            Err(f) => {
                failed = true;
                reports.push(EditReport::failed(i, e, f));
            }
        }
    }

    // Overlaps: name both edits, drop both.
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

    let mut out = text.to_owned();
    for s in splices.iter().rev() {
        out.replace_range(s.range.clone(), &s.text);
    }
    (out, reports)
}

struct Ctx<'c, 'a> {
    doc: &'c Document<'a>,
    hay: &'c Haystack<'a>,
    unit: &'c OnceCell<Unit>,
    opts: &'c PlanOptions,
}

impl Ctx<'_, '_> {
    fn unit(&self) -> Unit {
        *self.unit.get_or_init(|| detect_unit(self.hay.lines()))
    }

    fn plan_replace(
        &self,
        r: &Replace,
        path: &str,
        owner: usize,
        from: usize,
    ) -> Result<Planned, Failure> {
        match &r.target {
            Target::Lines { search, replace } => {
                if search.is_empty() && r.hints.at_eof {
                    return Ok(self.append(replace, &r.hints, owner));
                }
                if search.iter().all(|l| l.trim().is_empty()) {
                    return Err(Failure::new(
                        FailureKind::Malformed,
                        "The search is empty, so it cannot locate anything",
                        "Put the exact lines to replace in the search. An empty search only creates a new file.",
                    ));
                }
                self.plan_lines(search, replace, r, path, owner, from)
            }
            Target::Text { old, new } => self.plan_text(old, new, r, path, owner),
            Target::Region {
                start,
                end,
                content,
            } => self.plan_region(start, end, content, path, owner),
        }
    }

    fn plan_lines(
        &self,
        search: &[String],
        replace: &[String],
        r: &Replace,
        path: &str,
        owner: usize,
        from: usize,
    ) -> Result<Planned, Failure> {
        let (from, within) = self.narrow(&r.hints.context, from, path)?;
        let q = LineQuery {
            search,
            replace,
            hint: r.hints.start_line,
            replace_all: r.replace_all,
            max_pass: MatchPass::Similarity,
            from,
            literal: r.hints.literal,
            within,
            at_eof: r.hints.at_eof,
        };
        let matches = locate(self.hay, &q, &self.opts.locate).map_err(|m| {
            let f = self.explain(m, path, "search");
            self.explain_anchor(f, search, r.hints.anchor_lines)
        })?;
        let pass = matches[0].pass;
        let similarity = matches[0].similarity;
        let splices = matches
            .iter()
            .map(|m| self.render(m, owner, &r.hints))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Planned {
            splices,
            pass,
            similarity,
        })
    }

    /// Follows apply-patch `@@` context lines: each is the first occurrence
    /// at or after the previous one. Returns where the search may start and
    /// the scope of the last context line (its indented block).
    fn narrow(
        &self,
        context: &[String],
        mut from: usize,
        path: &str,
    ) -> Result<(usize, Option<Range<usize>>), Failure> {
        let mut within = None;
        for c in context {
            if c.trim().is_empty() {
                continue;
            }
            let line = std::slice::from_ref(c);
            let q = LineQuery {
                search: line,
                replace: line,
                hint: None,
                replace_all: true,
                max_pass: MatchPass::Unicode,
                from,
                literal: true,
                within: None,
                at_eof: false,
            };
            let found = locate(self.hay, &q, &self.opts.locate).map_err(|_| {
                Failure::new(
                    FailureKind::NotFound,
                    format!(
                        "The context line `@@ {}` was not found in {path}{}",
                        c.trim(),
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
        let width = |l: &str| indent_of(l).chars().count();
        let base = width(lines[at]);
        (at + 1..lines.len())
            .find(|&i| !lines[i].trim().is_empty() && width(lines[i]) <= base)
            .map_or(lines.len(), |i| i + 1)
    }

    /// Appends lines at the end of the file (a pure-addition patch chunk
    /// without context).
    fn append(&self, lines: &[String], hints: &crate::edit::Hints, owner: usize) -> Planned {
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
        let n = self.doc.len();
        Planned {
            splices: vec![Splice {
                range: end..end,
                text,
                lines: n..n,
                owner,
            }],
            pass: MatchPass::Exact,
            similarity: 1.0,
        }
    }

    /// For edit-block searches (anchor + old lines), says which part failed,
    /// in seed 001's terms.
    fn explain_anchor(&self, mut f: Failure, search: &[String], anchor: usize) -> Failure {
        if f.kind != FailureKind::NotFound || anchor == 0 || anchor >= search.len() {
            return f;
        }
        let head = &search[..anchor];
        let q = LineQuery {
            search: head,
            replace: head,
            hint: None,
            replace_all: false,
            max_pass: MatchPass::Unicode,
            from: 0,
            literal: true,
            within: None,
            at_eof: false,
        };
        match locate(self.hay, &q, &self.opts.locate) {
            Ok(m) => {
                let at = m[0].end;
                let lines = self.doc.lines();
                let hi = (at + search.len() - anchor).min(lines.len());
                f.message = format!(
                    "Old lines don't match content after anchor: the anchor ({} line(s)) matches at line {}, but the lines after it differ from the old lines of the edit",
                    anchor,
                    m[0].start + 1
                );
                f.best = Some(BestCandidate {
                    line: at + 1,
                    similarity: f.best.as_ref().map_or(0.0, |b| b.similarity),
                    lines: (at..hi)
                        .map(|i| NumberedLine {
                            number: i + 1,
                            text: lines[i].content.to_owned(),
                        })
                        .collect(),
                });
                f.fix = "Copy the lines that follow the anchor exactly from the file (shown above) into the edit's old lines.".into();
            }
            Err(Miss::Ambiguous { candidates, .. }) => {
                let at: Vec<String> = candidates
                    .iter()
                    .map(|c| (c.start + 1).to_string())
                    .collect();
                f.message = format!(
                    "Anchor is ambiguous (matches at lines {}) and the old lines match after none of them",
                    at.join(", ")
                );
            }
            Err(_) => {
                f.message = "Anchor not found in file: the edit's leading context lines are not in the file".into();
            }
        }
        f
    }

    fn plan_text(
        &self,
        old: &str,
        new: &str,
        r: &Replace,
        path: &str,
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
        let hits: Vec<usize> = logical.match_indices(&old_n).map(|(o, _)| o).collect();
        let chosen: Vec<usize> = match hits.len() {
            0 => Vec::new(),
            1 => hits.clone(),
            _ if r.replace_all => hits.clone(),
            _ => {
                let line_of = |o: usize| {
                    self.doc
                        .line_of_offset(self.doc.logical_to_original(&starts, o))
                };
                let lines: Vec<usize> = hits.iter().map(|&o| line_of(o)).collect();
                let picked = r
                    .hints
                    .start_line
                    .and_then(|h| crate::locate::nearest(&lines, h, self.opts.locate.hint_window));
                match picked {
                    Some(l) => vec![hits[lines.iter().position(|&x| x == l).expect("picked")]],
                    None => {
                        return Err(self.text_ambiguity(MatchPass::Exact, lines, &old_n, r, path));
                    }
                }
            }
        };
        if !chosen.is_empty() {
            let splices = chosen
                .into_iter()
                .map(|o| {
                    let a = self.doc.logical_to_original(&starts, o);
                    let b = self.doc.logical_to_original(&starts, o + old_n.len());
                    self.substring_splice(a..b, &new_n, owner)
                })
                .collect();
            return Ok(Planned {
                splices,
                pass: MatchPass::Exact,
                similarity: 1.0,
            });
        }
        if let Some(p) = self.plan_folded_text(&old_n, &new_n, &logical, &starts, r, path, owner)? {
            return Ok(p);
        }
        // Not a substring: climb the line ladder with whole lines.
        let search = split_lines(&old_n);
        let replace = split_lines(&new_n);
        self.plan_lines(&search, &replace, r, path, owner, 0)
    }

    /// The Unicode pass for substrings: `old_string` may start or end inside
    /// a line, so it is matched on folded text and mapped back to bytes.
    #[allow(clippy::too_many_arguments)]
    fn plan_folded_text(
        &self,
        old: &str,
        new: &str,
        logical: &str,
        starts: &[usize],
        r: &Replace,
        path: &str,
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
        let hits: Vec<usize> = folded_file
            .match_indices(&folded_old)
            .map(|(o, _)| o)
            .filter(|&o| aligned(o) && aligned(o + folded_old.len()))
            .collect();
        let line_of = |o: usize| {
            self.doc
                .line_of_offset(self.doc.logical_to_original(starts, map[o]))
        };
        if hits.len() > 1 && !r.replace_all {
            let lines = hits.iter().map(|&o| line_of(o)).collect();
            return Err(self.text_ambiguity(MatchPass::Unicode, lines, old, r, path));
        }
        if hits.is_empty() {
            return Ok(None);
        }
        let splices = hits
            .into_iter()
            .map(|o| {
                let a = self.doc.logical_to_original(starts, map[o]);
                let b = self
                    .doc
                    .logical_to_original(starts, map[o + folded_old.len()]);
                self.substring_splice(a..b, new, owner)
            })
            .collect();
        Ok(Some(Planned {
            splices,
            pass: MatchPass::Unicode,
            similarity: 1.0,
        }))
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
        let region = &self.doc.text()[a..b];
        let ending = if region.contains("\r\n") && !region.replace("\r\n", "").contains('\n') {
            "\r\n"
        } else if region.contains('\n') && !region.contains("\r\n") {
            "\n"
        } else {
            self.doc.dominant_ending()
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
        path: &str,
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
            path,
            "old_string",
        )
    }

    fn plan_region(
        &self,
        start: &[String],
        end: &[String],
        content: &[String],
        path: &str,
        owner: usize,
    ) -> Result<Planned, Failure> {
        if start.iter().all(|l| l.trim().is_empty()) {
            return Err(Failure::new(
                FailureKind::Malformed,
                "The start anchor is empty",
                "Give 1-4 unique lines of the file in `start`.",
            ));
        }
        fn anchor_query(search: &[String], from: usize) -> LineQuery<'_> {
            LineQuery {
                search,
                replace: &[],
                hint: None,
                replace_all: false,
                max_pass: MatchPass::LineNumbers,
                from,
                literal: true,
                within: None,
                at_eof: false,
            }
        }
        let ms = locate(self.hay, &anchor_query(start, 0), &self.opts.locate)
            .map_err(|m| self.explain(m, path, "start anchor"))?;
        let ms = ms.into_iter().next().expect("one match");
        let located = if end.iter().all(|l| l.trim().is_empty()) {
            Match {
                replace: content.to_vec(),
                ..ms
            }
        } else {
            let me = locate(self.hay, &anchor_query(end, ms.end), &self.opts.locate)
                .map_err(|m| {
                    let mut f = self.explain(m, path, "end anchor");
                    f.message.push_str(&format!(
                        " (the end anchor is searched after the start anchor, which matched line {})",
                        ms.start + 1
                    ));
                    f
                })?;
            let me = me.into_iter().next().expect("one match");
            let mut search = ms.search.clone();
            search.extend(me.search.iter().cloned());
            let mut map = ms.map.clone();
            map.extend(me.map.iter().cloned());
            Match {
                pass: ms.pass.max(me.pass),
                start: ms.start,
                end: me.end,
                similarity: 1.0,
                search,
                replace: content.to_vec(),
                map,
                extra: Vec::new(),
            }
        };
        let splice = self.render(&located, owner, &crate::edit::Hints::default())?;
        Ok(Planned {
            splices: vec![splice],
            pass: located.pass,
            similarity: 1.0,
        })
    }

    /// Builds the new bytes for a located match.
    /// `literal` says elision-looking lines are text (a format without
    /// elision); otherwise a replacement may not introduce a marker the
    /// search lacks, since the lines it stands for would be lost.
    fn render(
        &self,
        m: &Match,
        owner: usize,
        hints: &crate::edit::Hints,
    ) -> Result<Splice, Failure> {
        let literal = hints.literal;
        // Search markers stand for file lines only when the elision pass
        // matched; otherwise they matched file text literally.
        let elided = m.pass == MatchPass::Elision;
        let lines = self.doc.lines();
        let dominant = self.doc.dominant_ending();
        let key = |l: &String| {
            if elided && is_elision_marker(l) {
                "\u{0}elided".to_owned()
            } else {
                l.clone()
            }
        };
        let s_keys: Vec<String> = m.search.iter().map(key).collect();
        let r_keys: Vec<String> = m.replace.iter().map(key).collect();
        let rebase = if m.pass.tolerates_indentation() {
            let pairs: Vec<(&str, &str)> = m
                .search
                .iter()
                .zip(&m.map)
                .filter(|(s, r)| r.len() == 1 && !(elided && is_elision_marker(s)))
                .map(|(s, r)| (s.as_str(), lines[r.start].content))
                .collect();
            Rebase::infer(&pairs, self.unit())
        } else {
            Rebase::Identity
        };

        let mut out: Vec<(String, &'static str)> = Vec::new();
        let keep = |j: usize, out: &mut Vec<(String, &'static str)>| {
            for l in &lines[m.map[j].clone()] {
                out.push((l.content.to_owned(), static_ending(l.ending)));
            }
        };
        let drop = |j: usize| -> Result<(), Failure> {
            if hints.exact_removals && m.map[j].len() == 1 {
                let file_line = lines[m.map[j].start].content;
                if fold_trim(&m.search[j]) != fold_trim(file_line) {
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
            if elided && is_elision_marker(&m.search[j]) && !m.map[j].is_empty() {
                return Err(Failure::new(
                    FailureKind::Malformed,
                    format!(
                        "The replacement drops the elision marker `{}`, which stands for lines {} of the file; mend will not delete lines the edit did not show",
                        m.search[j].trim(),
                        LineSpan::from_range(m.map[j].start, m.map[j].end)
                    ),
                    "Repeat the elision marker in the replacement where the elided lines belong, or write those lines out in both the search and the replacement.",
                ));
            }
            Ok(())
        };
        // Where the global mapping does not explain a search line's
        // indentation (the model's drift was not uniform), lines near it are
        // re-based on that line alone.
        let indent_for = |anchor: Option<usize>, line: &str| -> String {
            let Some(j) = anchor.filter(|&j| m.map[j].len() == 1 && !m.search[j].trim().is_empty())
            else {
                return rebase.apply(line);
            };
            if rebase == Rebase::Identity {
                return line.to_owned();
            }
            let file_line = lines[m.map[j].start].content;
            let explained = indent_of(&rebase.apply(&m.search[j])) == indent_of(file_line);
            if explained {
                rebase.apply(line)
            } else {
                Rebase::infer(&[(m.search[j].as_str(), file_line)], self.unit()).apply(line)
            }
        };
        let insert = |k: usize,
                      anchor: Option<usize>,
                      ending: &'static str,
                      out: &mut Vec<(String, &'static str)>|
         -> Result<(), Failure> {
            let line = &m.replace[k];
            if !literal && is_elision_marker(line) && line.chars().any(char::is_alphabetic) {
                return Err(Failure::new(
                    FailureKind::Malformed,
                    format!(
                        "The replacement contains the elision marker `{}` but the search has no matching marker, so mend cannot tell which lines it stands for",
                        line.trim()
                    ),
                    "Write the replacement out in full, or use the same elision markers in the search and the replacement.",
                ));
            }
            out.push((indent_for(anchor, line), ending));
            Ok(())
        };
        let ops = capture_diff_slices(Algorithm::Myers, &s_keys, &r_keys);
        // A similarity match against a window of another size: file lines
        // the search lacks survive only beside lines the edit keeps, and a
        // search line the file lacks may only be one the edit keeps.
        let mut kept = vec![false; m.search.len()];
        for op in &ops {
            if let DiffOp::Equal { old_index, len, .. } = *op {
                kept[old_index..old_index + len].fill(true);
            }
        }
        let unsure = |what: String| {
            Failure::new(
                FailureKind::NotFound,
                format!(
                    "The closest region (lines {}) is {:.0}% similar but {what}; mend will not guess where the change goes",
                    LineSpan::from_range(m.start, m.end),
                    m.similarity * 100.0
                ),
                "Re-read the file and copy the lines to replace exactly, with every line between them.",
            )
        };
        for &(after, line) in &m.extra {
            if !kept.get(after.unwrap_or(0)).copied().unwrap_or(false) {
                return Err(unsure(format!(
                    "the file has line {} (`{}`), which the search lacks, next to a line the edit changes",
                    line + 1,
                    lines[line].content.trim()
                )));
            }
        }
        if m.pass == MatchPass::Similarity {
            for (j, r) in m.map.iter().enumerate() {
                if r.is_empty() && !kept[j] {
                    return Err(unsure(format!(
                        "the search line `{}`, which the edit changes, is not in the file",
                        m.search[j].trim()
                    )));
                }
            }
        }
        let emit_extra = |after: Option<usize>, out: &mut Vec<(String, &'static str)>| {
            for &(a, line) in &m.extra {
                if a == after {
                    let l = &lines[line];
                    out.push((l.content.to_owned(), static_ending(l.ending)));
                }
            }
        };
        emit_extra(None, &mut out);
        for op in ops {
            match op {
                DiffOp::Equal { old_index, len, .. } => {
                    for j in old_index..old_index + len {
                        keep(j, &mut out);
                        emit_extra(Some(j), &mut out);
                    }
                }
                DiffOp::Delete {
                    old_index, old_len, ..
                } => {
                    for j in old_index..old_index + old_len {
                        drop(j)?;
                    }
                }
                DiffOp::Insert {
                    old_index,
                    new_index,
                    new_len,
                } => {
                    let anchor = if old_index > 0 {
                        Some(old_index - 1)
                    } else if old_index < m.search.len() {
                        Some(old_index)
                    } else {
                        None
                    };
                    for k in new_index..new_index + new_len {
                        insert(k, anchor, "", &mut out)?;
                    }
                }
                DiffOp::Replace {
                    old_index,
                    old_len,
                    new_index,
                    new_len,
                } => {
                    for j in old_index..old_index + old_len {
                        drop(j)?;
                    }
                    // A line changed in place keeps the ending of the line it
                    // replaces; lines beyond the pairing are new.
                    for (o, k) in (new_index..new_index + new_len).enumerate() {
                        let ending = match m.map.get(old_index + o) {
                            Some(r) if o < old_len && r.len() == 1 => {
                                static_ending(lines[r.start].ending)
                            }
                            _ => "",
                        };
                        let anchor = old_index + o.min(old_len - 1);
                        insert(k, Some(anchor), ending, &mut out)?;
                    }
                }
            }
        }

        let at_eof_unterminated = m.end == lines.len()
            && !hints
                .final_newline
                .unwrap_or_else(|| self.doc.ends_with_newline());
        let n = out.len();
        let mut text = String::new();
        for (idx, (content, ending)) in out.iter().enumerate() {
            text.push_str(content);
            if idx + 1 == n && at_eof_unterminated {
                continue;
            }
            text.push_str(if ending.is_empty() { dominant } else { ending });
        }
        let mut range = self.doc.byte_range(m.start..m.end);
        if n == 0 && at_eof_unterminated && m.start > 0 {
            // Deleting the last lines: the new last line loses its ending, as
            // the old last line had none.
            range.start -= lines[m.start - 1].ending.len();
        }
        Ok(Splice {
            range,
            text,
            lines: m.start..m.end,
            owner,
        })
    }

    /// Turns a locator miss into a model-ready failure.
    fn explain(&self, miss: Miss, path: &str, what: &str) -> Failure {
        let lines = self.doc.lines();
        match miss {
            Miss::NotFound {
                best,
                differs,
                already,
            } => {
                let mut f = Failure::new(
                    FailureKind::NotFound,
                    format!(
                        "The {what} was not found in {path}, even ignoring whitespace, typographic quotes, line numbers and small differences"
                    ),
                    format!(
                        "Re-read {path} and copy the lines to replace exactly as they are now, including indentation. Do not add line numbers."
                    ),
                );
                if let Some(c) = best {
                    let hi = (c.start + c.len.max(1)).min(lines.len());
                    f.best = Some(BestCandidate {
                        line: c.start + 1,
                        similarity: c.similarity,
                        lines: (c.start..hi)
                            .map(|i| NumberedLine {
                                number: i + 1,
                                text: lines[i].content.to_owned(),
                            })
                            .collect(),
                    });
                    f.fix = format!(
                        "If the closest match shown is the place you mean, copy its lines exactly into the {what} and make your change to that copy. Otherwise re-read {path}."
                    );
                }
                if !differs.is_empty() {
                    let names: Vec<String> = differs.iter().map(|d| format!("`{d}`")).collect();
                    f.message = format!(
                        "The {what} was not found in {path}. The closest region is similar, but where the {what} has {} the file has something else, and {} used elsewhere in the file, so the {what} may describe a different place; mend will not guess",
                        names.join(", "),
                        if names.len() == 1 {
                            "that name is"
                        } else {
                            "those names are"
                        }
                    );
                }
                if let Some(at) = already {
                    f.message.push_str(&format!(
                        ". The replacement's lines are already in the file at line {}: this edit may have been applied before",
                        at + 1
                    ));
                    f.fix = format!(
                        "Re-read {path}. If the change is already there, send nothing for it; otherwise copy the current lines into the {what}."
                    );
                }
                f
            }
            Miss::Ambiguous {
                pass,
                candidates,
                hint,
            } => {
                let spans: Vec<LineSpan> = candidates
                    .iter()
                    .map(|c| LineSpan::from_range(c.start, c.start + c.len))
                    .collect();
                let listed = join_lines(&spans, &candidates, pass == MatchPass::Similarity);
                let hint_note = match hint {
                    Some(h) => format!(
                        "; the start-line hint {h} did not single one out within {} lines",
                        self.opts.locate.hint_window
                    ),
                    None => String::new(),
                };
                let message = if pass == MatchPass::Similarity {
                    format!(
                        "The {what} is not in {path} exactly, and several regions are almost equally similar to it ({listed}){hint_note}. mend will not guess between near-identical regions"
                    )
                } else {
                    format!(
                        "The {what} matches {} places in {path} (pass: {pass}): lines {listed}{hint_note}",
                        candidates.len()
                    )
                };
                let mut f = Failure::new(
                    FailureKind::Ambiguous,
                    message,
                    format!(
                        "Add neighbouring lines that make the {what} unique to the one place you mean, or give its start line as a hint (`:start_line:N` after SEARCH)."
                    ),
                );
                f.locations = spans;
                f
            }
            Miss::Unusable(msg) => Failure::new(
                FailureKind::Malformed,
                format!("The {what} cannot be used: {msg}"),
                format!("Put real lines of {path} in the {what}."),
            ),
        }
    }
}

fn static_ending(e: &str) -> &'static str {
    match e {
        "\r\n" => "\r\n",
        "\n" => "\n",
        _ => "",
    }
}

fn join_lines(spans: &[LineSpan], candidates: &[Candidate], with_scores: bool) -> String {
    let parts: Vec<String> = spans
        .iter()
        .zip(candidates)
        .map(|(s, c)| {
            if with_scores {
                format!("line {} ({:.0}% similar)", s.start, c.similarity * 100.0)
            } else {
                s.to_string()
            }
        })
        .collect();
    match parts.len() {
        0 => String::new(),
        1 => parts[0].clone(),
        _ => format!(
            "{} and {}",
            parts[..parts.len() - 1].join(", "),
            parts[parts.len() - 1]
        ),
    }
}
