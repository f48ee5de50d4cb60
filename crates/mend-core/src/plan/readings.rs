//! Two readings of an elision marker.
//!
//! A line `...` is Python's Ellipsis as much as a model's "lines left out",
//! and a file may hold a `// ...` comment of its own. The ladder tries the
//! code reading first (the marker matched as a line); when the search's
//! markers also locate as elision and the two readings give different
//! files, the edit is refused with both places rather than one guessed.

use super::Planner;
use super::splice::Splice;
use crate::edit::Hints;
use crate::locate::{LineQuery, Match, Miss, elided_alternatives, locate_elided};
use crate::report::{Failure, FailureKind, LineSpan};

impl Planner<'_, '_> {
    /// Checks a code-reading splice against the elision reading of the same
    /// query: `Err` when the elision reading fits too and writes another
    /// file.
    pub(crate) fn check_readings(
        &self,
        q: &LineQuery<'_>,
        code: &Splice,
        owner: usize,
        hints: &Hints,
        what: &str,
    ) -> Result<(), Failure> {
        if q.replace_all {
            return Ok(());
        }
        let (flags, _) = q.elision.flags(q.search, q.replace);
        let Some(marker) = flags.iter().position(|&f| f) else {
            return Ok(());
        };
        let elided = match locate_elided(self.hay, q, &self.opts.locate) {
            // Each marker standing for just the line that is itself: the
            // code reading under another name.
            Some(Ok(ms)) if self.only_itself(&ms[0]) => return Ok(()),
            Some(Ok(ms)) => match self.render(&ms[0], owner, hints, what) {
                Ok(s) if self.spliced(&s) == self.spliced(code) => return Ok(()),
                Ok(s) => s.lines,
                // The elision reading cannot be carried out: code it is.
                Err(_) => return Ok(()),
            },
            Some(Err(Miss::Ambiguous { candidates, .. })) => {
                let c = candidates[0];
                c.start..c.start + c.len
            }
            Some(Err(_)) | None => return Ok(()),
        };
        let code_span = LineSpan::from_range(code.lines.start, code.lines.end);
        let elided_span = LineSpan::from_range(elided.start, elided.end);
        let lines = |s: LineSpan| {
            if s.start == s.end {
                format!("line {s}")
            } else {
                format!("lines {s}")
            }
        };
        let mut f = Failure::new(
            FailureKind::Ambiguous,
            format!(
                "The {what} holds `{}`, which reads two ways in {}: as a line of code it matches {}, and as an elision marker (lines left out) it matches {}; the two give different files, so mend will not choose",
                q.search[marker].trim(),
                self.path,
                lines(code_span),
                lines(elided_span)
            ),
            format!(
                "To leave lines out, write the marker as a comment that says so (`# ... existing code ...` or `// ... existing code ...`); to mean the line itself, copy the {what}'s lines exactly, with none left out."
            ),
        );
        f.locations = vec![code_span, elided_span];
        Err(f)
    }

    /// An elided search found in several ways, each giving the same file,
    /// is not ambiguous: the way with the smallest region, rendered.
    pub(crate) fn agreeing_elision(
        &self,
        q: &LineQuery<'_>,
        owner: usize,
        hints: &Hints,
        what: &str,
    ) -> Option<(Match, Splice)> {
        let ways = elided_alternatives(self.hay, q)?;
        if ways.len() < 2 {
            return None;
        }
        let mut rendered = Vec::new();
        for m in ways {
            let s = self.render(&m, owner, hints, what).ok()?;
            rendered.push((m, s));
        }
        let text = self.spliced(&rendered[0].1);
        if rendered.iter().any(|(_, s)| self.spliced(s) != text) {
            return None;
        }
        rendered.into_iter().min_by_key(|(_, s)| s.range.len())
    }

    /// Whether every marker of an elided match stands for one file line with
    /// the marker's own text.
    fn only_itself(&self, m: &Match) -> bool {
        let lines = self.hay.lines();
        (0..m.search.len())
            .filter(|&j| m.markers[j])
            .all(|j| m.map[j].len() == 1 && lines[m.map[j].start].trim() == m.search[j].trim())
    }

    /// The whole text with one splice applied.
    pub(crate) fn spliced(&self, s: &Splice) -> String {
        let text = self.doc.text();
        format!(
            "{}{}{}",
            &text[..s.range.start],
            s.text,
            &text[s.range.end..]
        )
    }
}
