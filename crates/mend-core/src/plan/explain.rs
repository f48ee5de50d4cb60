//! Failure explanations: a locator miss, told so a model can fix its edit.
//!
//! Every explanation says what was expected, what was found, the closest
//! region with its line numbers and similarity, every location of an
//! ambiguous match, which differences were already forgiven, and what to
//! send instead.

use std::ops::Range;

use super::Planner;
use super::splice::Nouns;
use crate::Format;
use crate::edit::Edit;
use crate::locate::{Candidate, LineQuery, MatchPass, Miss, locate};
use crate::report::{BestCandidate, Failure, FailureKind, LineSpan, NumberedLine};

impl Planner<'_, '_> {
    /// Turns a locator miss into a model-ready failure. `what` names the
    /// part of the edit that was searched for ("search", "chunk", …).
    pub(crate) fn explain(&self, miss: Miss, what: &str) -> Failure {
        match miss {
            Miss::NotFound {
                best,
                differs,
                already,
                ignored,
            } => self.not_found(what, best, &differs, already, &ignored),
            Miss::Ambiguous {
                pass,
                candidates,
                hint,
            } => self.ambiguous(what, pass, &candidates, hint),
            Miss::Slipped { candidates } => self.slipped(what, &candidates),
            Miss::TooLarge {
                lines,
                chars,
                affordable,
            } => {
                let why = if affordable == 0 {
                    "too large to compare for small differences at all".to_owned()
                } else {
                    format!(
                        "so large that comparing it for small differences can cover only {affordable} of the places in the file that look like it"
                    )
                };
                Failure::new(
                    FailureKind::NotFound,
                    format!(
                        "The {what} was not found in {} as sent, even ignoring whitespace, typography and line numbers; it is {lines} lines ({chars} characters), {why}, so mend did not guess",
                        self.path
                    ),
                    format!(
                        "Copy the lines exactly as they are in {}, or send a smaller edit: only the lines that change, with a few lines around them.",
                        self.path
                    ),
                )
            }
            Miss::Adrift { best, edge, first } => self.adrift(what, best, &edge, first),
            Miss::Unusable { message, fix } => Failure::new(
                FailureKind::Malformed,
                format!("The {what} cannot be used: {message}"),
                fix,
            ),
        }
    }

    /// A similarity match refused because an edge line of the search is
    /// not where the rest of it is.
    fn adrift(&self, what: &str, best: Candidate, edge: &str, first: bool) -> Failure {
        let path = self.path;
        let which = if first { "first" } else { "last" };
        let mut f = Failure::new(
            FailureKind::NotFound,
            format!(
                "The {what} was not found in {path} as sent. Its lines are similar to lines {}, but its {which} line `{}` is not there, so the file may have changed since the {what} was copied, and mend will not guess where the region ends",
                LineSpan::from_range(best.start, best.start + best.len),
                edge.trim()
            ),
            format!(
                "Re-read {path} and copy the lines to replace exactly as they are now, from the first to the last."
            ),
        );
        // One more line on the adrift side: what the file has where the
        // search's edge line was expected.
        let from = if first {
            best.start.saturating_sub(1)
        } else {
            best.start
        };
        let shown = best.len + usize::from(from < best.start || !first);
        f.best = Some(BestCandidate {
            line: from + 1,
            similarity: best.similarity,
            lines: self.numbered(from, shown),
        });
        f
    }

    /// Where an edit stands applied already: its replacement's lines (`len`
    /// of them, blank edges aside) occur in the file at `at` (0-based),
    /// around the place its search matches (`found`, 0-based lines) or
    /// with its search gone.
    pub(crate) fn applied_already(
        &self,
        at: usize,
        len: usize,
        found: Option<Range<usize>>,
        what: &str,
    ) -> Failure {
        let path = self.path;
        let here = LineSpan::from_range(at, at + len);
        let lines = if here.start == here.end {
            "line"
        } else {
            "lines"
        };
        let new_lines = Nouns::of(what).new_lines();
        let (message, fix) = match found {
            None => (
                format!(
                    "The {what} was not found in {path}, and {new_lines} are already there, at {lines} {here}: this edit looks applied already"
                ),
                format!(
                    "Re-read {path}. If the change is already there, send nothing for it; otherwise copy the current lines into the {what}."
                ),
            ),
            Some(f) => (
                format!(
                    "The {what} matches {} of {path}, but {new_lines} already stand there, at {lines} {here}: this edit looks applied already, and applying it again would add its new lines a second time",
                    LineSpan::from_range(f.start, f.end).phrase()
                ),
                format!(
                    "Re-read {path}. If the change is already there, send nothing for it; to add the lines a second time, put the copy already there in the {what} too."
                ),
            ),
        };
        let mut f = Failure::new(FailureKind::AlreadyApplied, message, fix);
        f.locations = vec![here];
        f
    }

    fn numbered(&self, start: usize, len: usize) -> Vec<NumberedLine> {
        let lines = self.doc.lines();
        let hi = (start + len.max(1)).min(lines.len());
        (start..hi)
            .map(|i| NumberedLine {
                number: i + 1,
                text: lines[i].content.to_owned(),
            })
            .collect()
    }

    fn not_found(
        &self,
        what: &str,
        best: Option<Candidate>,
        differs: &[String],
        already: Option<usize>,
        ignored: &[MatchPass],
    ) -> Failure {
        let path = self.path;
        let forgiven: Vec<&str> = ignored.iter().filter_map(|p| p.forgives()).collect();
        let even = match forgiven.as_slice() {
            [] => String::new(),
            [one] => format!(", even ignoring {one}"),
            [rest @ .., last] => format!(", even ignoring {} and {last}", rest.join(", ")),
        };
        let mut f = Failure::new(
            FailureKind::NotFound,
            format!("The {what} was not found in {path}{even}"),
            format!(
                "Re-read {path} and copy the lines to replace exactly as they are now, including indentation. Do not add line numbers."
            ),
        );
        if let Some(c) = best {
            f.best = Some(BestCandidate {
                line: c.start + 1,
                similarity: c.similarity,
                lines: self.numbered(c.start, c.len),
            });
            f.fix = format!(
                "If the closest match shown is the place you mean, copy its lines exactly into the {what} and make your change to that copy. Otherwise re-read {path}."
            );
        }
        if !differs.is_empty() {
            f.message = format!(
                "The {what} was not found in {path}. The closest region is similar, but {}, so the {what} may describe a different place; mend will not guess",
                describe_differences(what, differs)
            );
        }
        if let Some(at) = already {
            // The closest region is beside the point: the change is there.
            let mut applied = self.applied_already(at, 1, None, what);
            applied.locations = Vec::new();
            applied.message = format!(
                "The {what} was not found in {path}, and {} are already there, starting at line {}: this edit looks applied already",
                Nouns::of(what).new_lines(),
                at + 1
            );
            return applied;
        }
        f
    }

    fn ambiguous(
        &self,
        what: &str,
        pass: MatchPass,
        candidates: &[Candidate],
        hint: Option<usize>,
    ) -> Failure {
        let path = self.path;
        let spans: Vec<LineSpan> = candidates
            .iter()
            .map(|c| LineSpan::from_range(c.start, c.start + c.len))
            .collect();
        let listed = join_lines(&spans, candidates, pass == MatchPass::Similarity);
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
        let fix = match what {
            "old_string" => "Add surrounding text to old_string that makes it unique to the one place you mean, or set replace_all if every occurrence should change.".to_owned(),
            "search" => "Add neighbouring lines that make the search unique to the one place you mean, or give its start line as a hint (`:start_line:N` after SEARCH).".to_owned(),
            _ => format!("Add neighbouring lines that make the {what} unique to the one place you mean."),
        };
        let mut f = Failure::new(FailureKind::Ambiguous, message, fix);
        f.places = u32::try_from(spans.len()).unwrap_or(u32::MAX);
        f.locations = spans.into_iter().take(100).collect();
        f
    }

    /// A short search that is, but for a typing slip, a copy of several
    /// places: a hint does not choose among them, an exact copy does.
    fn slipped(&self, what: &str, candidates: &[Candidate]) -> Failure {
        let path = self.path;
        let mut f = self.ambiguous(what, MatchPass::Similarity, candidates, None);
        let spans: Vec<LineSpan> = candidates
            .iter()
            .map(|c| LineSpan::from_range(c.start, c.start + c.len))
            .collect();
        f.message = format!(
            "The {what} is not in {path} exactly, and read as a copy with a typing slip it could be lines {}: the same line is there more than once, or another spelling is as near. mend will not guess which was meant",
            join_lines(&spans, candidates, false)
        );
        f.fix = format!(
            "Copy the {what} exactly from {path}, with a neighbouring line that makes it unique if the line is there more than once."
        );
        f
    }

    /// For edit-block searches (anchor + old lines), says which part failed,
    /// in the terms of the edit-block format (anchor, old lines).
    pub(crate) fn explain_anchor(
        &self,
        mut f: Failure,
        search: &[String],
        anchor: usize,
    ) -> Failure {
        if f.kind != FailureKind::NotFound || anchor == 0 || anchor >= search.len() {
            return f;
        }
        let head = &search[..anchor];
        let q = LineQuery::anchor(head, MatchPass::Unicode);
        match locate(self.hay, &q, &self.opts.locate) {
            Ok(m) => {
                let at = m[0].end;
                f.message = format!(
                    "Old lines don't match content after anchor: the anchor ({} line(s)) matches at line {}, but the lines after it differ from the old lines of the edit",
                    anchor,
                    m[0].start + 1
                );
                f.best = Some(BestCandidate {
                    line: at + 1,
                    similarity: f.best.as_ref().map_or(0.0, |b| b.similarity),
                    lines: self.numbered(at, search.len() - anchor),
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
}

/// The refusal of a creation whose file exists and is not empty, in the
/// terms of the format that asked for it; `None` for a search block, whose
/// refusal depends on the file (`whole::create_over_existing`).
pub(crate) fn create_over(e: &Edit) -> Option<Failure> {
    let path = &e.path;
    let (message, fix) = match e.origin.as_ref().and_then(|o| o.format.format()) {
        Some(Format::ApplyPatch) => (
            format!("`*** Add File: {path}` creates a file, but {path} already exists and is not empty"),
            format!(
                "To change {path}, send `*** Update File: {path}` with chunks of the lines to change. To replace all of it, send `*** Delete File: {path}` and then `*** Add File: {path}` with the whole new content."
            ),
        ),
        Some(Format::UnifiedDiff) => (
            format!("The diff creates {path} (its old side is `/dev/null`), but {path} already exists and is not empty"),
            format!(
                "Send a diff of {path} against its current content (`--- a/{path}`), with hunks of the lines to change."
            ),
        ),
        Some(Format::StrReplace) => (
            format!("An empty old_string creates {path}, but {path} already exists and is not empty"),
            "Put the exact text to replace in old_string. To replace all of the file, send it whole as a new file (`\"command\": \"create\"` with `file_text`).".to_owned(),
        ),
        Some(Format::EditBlock) => (
            format!("An empty EDIT section creates {path}, but {path} already exists and is not empty"),
            "To change the file, put the lines to replace in the EDIT section. To replace all of it, send a whole-file write.".to_owned(),
        ),
        // A search block's empty search: `whole::create_over_existing`
        // says whether it repeats the file and how to append.
        _ => return None,
    };
    Some(Failure::new(FailureKind::FileExists, message, fix))
}

/// Why a similar window was refused, in words: names the file has
/// elsewhere, and operators that differ.
fn describe_differences(what: &str, differs: &[String]) -> String {
    let quoted = |v: Vec<&String>| v.iter().map(|d| format!("`{d}`")).collect::<Vec<_>>();
    let (ops, names): (Vec<&String>, Vec<&String>) = differs
        .iter()
        .partition(|d| !d.starts_with(|c: char| c.is_alphanumeric() || c == '_'));
    let mut parts = Vec::new();
    if !names.is_empty() {
        let n = names.len();
        parts.push(format!(
            "where the {what} has {} the file has something else, and {} used elsewhere in the file",
            quoted(names).join(", "),
            if n == 1 { "that name is" } else { "those names are" }
        ));
    }
    if !ops.is_empty() {
        parts.push(format!(
            "the {what} has the operator {} where the file has another (an operator is never a typo)",
            quoted(ops).join(", ")
        ));
    }
    parts.join("; and ")
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
    // A boilerplate line can match thousands of times: name the first few.
    const SHOWN: usize = 12;
    match parts.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        many if many.len() > SHOWN => format!(
            "{} and {} more",
            many[..SHOWN].join(", "),
            many.len() - SHOWN
        ),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}
