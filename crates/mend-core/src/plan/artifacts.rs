//! Artifacts on the new side of an edit: what a model pasted into the
//! text it writes, judged once the region is located, for every format.
//!
//! - Line-number prefixes ([`new_side_numbers`]) are stripped when they
//!   follow the region's numbering or count up, kept when they may be
//!   content, refused when mend cannot tell.
//! - Typography ([`new_typography`]): when the match had to fold the
//!   search's quotes, dashes or spaces, new lines lose the typographic
//!   characters the matched lines do not have.
//!
//! Markers in new text are judged where lines are written (`splice.rs`).

use super::Planner;
use super::splice::Nouns;
use crate::edit::Hints;
use crate::locate::{Match, MatchPass};
use crate::normalize::{
    NewNumbers, NumberStyle, Typography, Unsure, has_numbered_line, new_side_numbers,
    new_typography, split_line_number,
};
use crate::report::{Failure, FailureKind, LineSpan};

impl Planner<'_, '_> {
    /// `m` with line-number prefixes pasted on its new side removed, when
    /// they follow the region's numbering or count up
    /// ([`new_side_numbers`]); `None` when there are none to remove. A
    /// search that carried numbers had its replacement stripped by the
    /// line-number pass already.
    pub(crate) fn denumbered(
        &self,
        m: &Match,
        hints: &Hints,
        what: &str,
    ) -> Result<Option<Match>, Failure> {
        if m.pass == MatchPass::LineNumbers
            || !has_numbered_line(m.replace.iter().map(String::as_str))
        {
            return Ok(None);
        }
        let file = self.hay.lines();
        let region = &file[m.start..m.end.min(file.len())];
        let lines = match new_side_numbers(&m.replace, m.start + 1, region, file) {
            NewNumbers::Keep => return Ok(None),
            NewNumbers::Strip(lines) => lines,
            NewNumbers::Unsure(why) => return Err(self.unsure_numbers(m, &why, what)),
        };
        // A line that became a marker once its number went is judged as
        // a marker, like any other.
        let (_, flags) = self.elision_for(hints.literal).flags(&m.search, &lines);
        let replace_markers = (0..lines.len())
            .map(|k| match m.replace_markers.get(k) {
                Some(&f) if lines[k] == m.replace[k] => f,
                _ => flags[k],
            })
            .collect();
        Ok(Some(Match {
            replace: lines,
            replace_markers,
            ..m.clone()
        }))
    }

    /// The refusal of new lines whose number prefixes may be content.
    fn unsure_numbers(&self, m: &Match, why: &Unsure, what: &str) -> Failure {
        let nouns = Nouns::of(what);
        let sample = number_sample(&m.replace);
        let message = match why {
            Unsure::FileHasThem { line } => format!(
                "{} begin with line numbers (`{sample}`), but line {} of {} itself begins like a numbered line (`{}`), so mend cannot tell line numbers from the file's text",
                capitalized(&nouns.new_lines()),
                line + 1,
                self.path,
                self.hay.lines()[*line].trim()
            ),
            Unsure::Inconsistent => format!(
                "Every line of the {} begins with a number (`{sample}`), but they are not the numbers of the lines they replace (lines {}), so mend cannot tell line numbers from text",
                nouns.replace,
                LineSpan::from_range(m.start, m.end)
            ),
            Unsure::LoneColon => format!(
                "One of {} begins with `{sample}`, its own line number, but one `N: ` prefix may as well be text (a key or a label), so mend cannot tell whether to write it",
                nouns.new_lines()
            ),
            Unsure::BareNumber(line) => format!(
                "The {} carries line numbers, and its line `{line}` may be a blank line's number or text, so mend cannot tell what to write",
                nouns.replace
            ),
        };
        Failure::new(
            FailureKind::Malformed,
            message,
            format!(
                "Send the {r} without line numbers. If the numbers are part of the text, include an unchanged line next to them in both the {s} and the {r}.",
                r = nouns.replace,
                s = nouns.search
            ),
        )
    }

    /// How new lines are written ([`new_typography`]): when the match had
    /// to fold the search's typography, the transport changed it, and the
    /// new lines lose the typographic characters the matched lines lack.
    /// Refused when a character stands both for a plain one and for itself
    /// in the matched lines.
    pub(crate) fn typography(&self, m: &Match, what: &str) -> Result<Typography, Failure> {
        if m.search.iter().all(|l| l.is_ascii()) {
            return Ok(Typography::AsSent);
        }
        let lines = self.hay.lines();
        let pairs = (0..m.search.len())
            .filter(|&j| m.map[j].len() == 1 && !(m.elided && m.markers.get(j) == Some(&true)))
            .map(|j| (m.search[j].as_str(), lines[m.map[j].start]));
        new_typography(pairs).map_err(|c| {
            let nouns = Nouns::of(what);
            let plain = crate::normalize::fold_unicode(&c.to_string()).into_owned();
            Failure::new(
                FailureKind::Malformed,
                format!(
                    "The {s} matches {} only with `{c}` read as `{plain}`, yet `{c}` also stands for itself in the lines it matches, so mend cannot tell whether the {r}'s `{c}` is the file's character or one the transport changed",
                    self.path,
                    s = nouns.search,
                    r = nouns.replace
                ),
                format!(
                    "Copy the {s} with the file's characters exactly as they are, and write the {r} with the characters you mean.",
                    s = nouns.search,
                    r = nouns.replace
                ),
            )
        })
    }
}

/// `s` with its first letter upper case.
fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map_or_else(String::new, |f| f.to_uppercase().chain(c).collect())
}

/// A whole file's new content (a creation, or a rewrite of the file
/// `old`) without the line numbers pasted on its lines, when they are
/// unmistakably line numbers: every line with text numbered, from 1 or
/// counting up in a bar, arrow or padded-tab style, in one style
/// ([`new_side_numbers`], the old file's lines as the region). `None` when
/// there are none to remove, or when they may be content: the old file's
/// lines begin that way, not every line has one, or, in a new file, `N: `
/// prefixes that do not count up by one (a YAML map with number keys).
/// Refused when mend cannot tell (a lone `1: ` line, numbers that skip).
pub(crate) fn whole_unnumbered(
    old: Option<&str>,
    content: &str,
    path: &str,
) -> Result<Option<String>, Failure> {
    if !has_numbered_line(content.lines()) {
        return Ok(None);
    }
    let lines = crate::text::split_lines(content);
    let numbered = |l: &String| l.trim().is_empty() || split_line_number(l).is_some();
    if !lines.iter().all(numbered) {
        return Ok(None);
    }
    let old: Vec<&str> = old.map(|t| t.lines().collect()).unwrap_or_default();
    let stripped = match new_side_numbers(&lines, 1, &old, &old) {
        NewNumbers::Keep => return Ok(None),
        NewNumbers::Strip(stripped) => stripped,
        NewNumbers::Unsure(Unsure::Inconsistent) if old.is_empty() && colon_styled(&lines) => {
            return Ok(None);
        }
        NewNumbers::Unsure(why) => return Err(unsure_whole(&lines, &why, path)),
    };
    let ending = if content.contains("\r\n") {
        "\r\n"
    } else {
        "\n"
    };
    let mut out = stripped.join(ending);
    if content.ends_with('\n') {
        out.push_str(ending);
    }
    Ok(Some(out))
}

/// Whether the numbered lines are `N: ` lines, as `grep -n` and YAML keys
/// both write them.
fn colon_styled(lines: &[String]) -> bool {
    lines
        .iter()
        .filter_map(|l| split_line_number(l))
        .all(|(_, _, s)| matches!(s, NumberStyle::Colon | NumberStyle::Bare))
}

/// The first number prefix of `lines` in a bar, arrow, tab or colon
/// style, as the model wrote it, for a message.
fn number_sample(lines: &[String]) -> String {
    lines
        .iter()
        .find_map(|l| {
            split_line_number(l)
                .filter(|(_, _, s)| *s != NumberStyle::Bare)
                .map(|(_, rest, _)| l[..l.len() - rest.len()].trim_start().to_owned())
        })
        .unwrap_or_default()
}

/// The refusal of a whole file whose number prefixes may be content.
fn unsure_whole(lines: &[String], why: &Unsure, path: &str) -> Failure {
    let sample = number_sample(lines);
    let why = match why {
        Unsure::Inconsistent => "they do not count up by one from line 1".to_owned(),
        Unsure::LoneColon => "only one line has one, and one `N: ` may as well be text".to_owned(),
        Unsure::BareNumber(line) => {
            format!("the line `{line}` may be a blank line's number or text")
        }
        Unsure::FileHasThem { line } => {
            format!("line {} of the file begins like a numbered line", line + 1)
        }
    };
    Failure::new(
        FailureKind::Malformed,
        format!(
            "The new content of {path} begins its lines with numbers (`{sample}`) that may be line numbers or the file's text: {why}, so mend cannot tell what to write"
        ),
        "Send the file's lines without line numbers pasted before them.",
    )
}
