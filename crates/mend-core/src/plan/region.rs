//! Anchored regions (seed 000's `modify_file`): a start anchor, an optional
//! end anchor searched after it, and `content` that replaces the region.
//!
//! Anchors climb the per-line passes (up to line numbers, never similarity:
//! an anchor is short, and a merely similar line is a different line), and
//! `content` then gets the robustness of the other formats:
//!
//! - blank lines at the region's outer edges follow the blank-edge rule: a
//!   surplus the file lacks is dropped from `content`'s same edge;
//! - when the anchors carried line numbers, `content` loses the same kind
//!   of prefix, so numbers are never written into the file;
//! - an elision marker in `content` stands for the region's interior (the
//!   lines between the anchors) when it pairs with it; otherwise the edit is
//!   refused as lazy, and the marker is never written.

use super::Planner;
use super::batch::Planned;
use crate::edit::Hints;
use crate::locate::{LineQuery, Match, MatchPass, drop_surplus, is_blank, locate};
use crate::normalize::{Numbered, strip_line_numbers};
use crate::report::{Failure, FailureKind};

/// An anchor as it was matched: its lines, numbers stripped when the
/// line-number pass found it.
fn as_matched(anchor: &[String], m: &Match) -> (Vec<String>, Option<Numbered>) {
    if m.pass == MatchPass::LineNumbers
        && let Some(n) = strip_line_numbers(anchor)
    {
        return (n.lines.clone(), Some(n));
    }
    (anchor.to_vec(), None)
}

fn leading_blanks(lines: &[String]) -> usize {
    lines.iter().take_while(|l| is_blank(l)).count()
}

fn trailing_blanks(lines: &[String]) -> usize {
    lines.iter().rev().take_while(|l| is_blank(l)).count()
}

impl Planner<'_, '_> {
    pub(crate) fn plan_region(
        &self,
        start: &[String],
        end: &[String],
        content: &[String],
        owner: usize,
    ) -> Result<Planned, Failure> {
        if start.iter().all(|l| is_blank(l)) {
            return Err(Failure::new(
                FailureKind::Malformed,
                "The start anchor is empty",
                "Give 1-4 unique lines of the file in `start`.",
            ));
        }
        let opts = &self.opts.locate;
        let ms = locate(
            self.hay,
            &LineQuery::anchor(start, MatchPass::LineNumbers),
            opts,
        )
        .map_err(|m| self.explain(m, "start anchor"))?
        .remove(0);
        let me = if end.iter().all(|l| is_blank(l)) {
            None
        } else {
            let q = LineQuery::anchor(end, MatchPass::LineNumbers).from(ms.end);
            let me = locate(self.hay, &q, opts).map_err(|m| {
                let mut f = self.explain(m, "end anchor");
                f.message.push_str(&format!(
                    " (the end anchor is searched after the start anchor, which matched line {})",
                    ms.start + 1
                ));
                f
            })?;
            Some(me.into_iter().next().expect("one match"))
        };
        let content = self.conform_content(start, end, content, &ms, me.as_ref())?;
        let located = self.region_match(ms, me, content);
        let splice = self.render(&located, owner, &Hints::default(), "content")?;
        Ok(Planned {
            splices: vec![splice],
            pass: located.pass,
            similarity: 1.0,
            moves_cursor: true,
        })
    }

    /// `content` as the file should receive it: line numbers stripped when
    /// the anchors had them, and blank surplus at the outer edges dropped.
    fn conform_content(
        &self,
        start: &[String],
        end: &[String],
        content: &[String],
        ms: &Match,
        me: Option<&Match>,
    ) -> Result<Vec<String>, Failure> {
        let (start_lines, start_numbers) = as_matched(start, ms);
        let (last_lines, last_numbers, last_match) = match me {
            Some(me) => {
                let (l, n) = as_matched(end, me);
                (l, n, me)
            }
            None => (start_lines.clone(), None, ms),
        };
        let mut content = content.to_vec();
        if let Some(numbered) = start_numbers.or(last_numbers) {
            content = numbered.strip_replacement(&content).map_err(|why| {
                Failure::new(
                    FailureKind::Malformed,
                    format!("The anchors carry line numbers, and {why}, so mend cannot tell what to write"),
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
        let lead = leading_blanks(&start_lines) - leading_blanks(&ms.search);
        let trail = trailing_blanks(&last_lines) - trailing_blanks(&last_match.search);
        Ok(drop_surplus(&content, lead, trail))
    }

    /// The region from the start anchor through the end anchor, as one
    /// match whose interior is elided when `content` elides it.
    fn region_match(&self, ms: Match, me: Option<Match>, content: Vec<String>) -> Match {
        let Some(me) = me else {
            let (markers, replace_markers) = self.elision.flags(&ms.search, &content);
            return Match {
                replace: content,
                markers,
                replace_markers,
                ..ms
            };
        };
        let interior = ms.end..me.start;
        let probe: Vec<String> = vec!["...".into()];
        let (_, content_markers) = self.elision.flags(&probe, &content);
        let elides = content_markers.iter().any(|&m| m);
        let mut search = ms.search.clone();
        let mut map = ms.map.clone();
        if elides {
            search.push("...".into());
            map.push(interior);
        }
        search.extend(me.search.iter().cloned());
        map.extend(me.map.iter().cloned());
        let mut markers = vec![false; search.len()];
        if elides {
            markers[ms.search.len()] = true;
        }
        Match {
            pass: ms.pass.max(me.pass),
            start: ms.start,
            end: me.end,
            similarity: 1.0,
            search,
            replace: content,
            map,
            extra: Vec::new(),
            markers,
            replace_markers: content_markers,
            elided: elides,
        }
    }
}
