//! The line-number pass: a search pasted from a numbered listing
//! (`12 | code`, `12→code`, `cat -n`).
//!
//! It runs only when every search line carries a prefix of one style and
//! the numbers count up by one. The first number becomes a start-line hint.
//! The replacement loses the same kind of prefix from every line that has
//! one (models number the lines they copy, not the lines they write), so a
//! line number is never written into a file; when that cannot be told from
//! content, the edit is refused.

use super::edges::Edges;
use super::lines::{Norm, Search, run_with};
use super::{Haystack, LineQuery, LocateOptions, MatchPass, Miss, Step, is_blank};
use crate::normalize::strip_line_numbers;

pub(crate) fn run(hay: &Haystack<'_>, q: &LineQuery<'_>, opts: &LocateOptions) -> Step {
    let Some(numbered) = strip_line_numbers(q.search) else {
        return Step::Skip;
    };
    if numbered.lines.iter().all(|l| is_blank(l)) {
        return Step::Skip;
    }
    let unusable = |message: String| {
        Step::Done(Err(Miss::Unusable {
            message,
            fix: "Send the lines without line numbers: copy them from the file as they are, and write the replacement without numbers.".into(),
        }))
    };
    let replace = match numbered.strip_replacement(q.replace) {
        Ok(r) => r,
        Err(why) => {
            return unusable(format!(
                "the search carries line numbers, and {why}, so mend cannot tell what to write"
            ));
        }
    };
    let numbered_replacement = q.replace.iter().any(|l| numbered.styled(l));
    if numbered_replacement && let Some(i) = hay.lines().iter().position(|l| numbered.styled(l)) {
        return unusable(format!(
            "the search carries line numbers, but line {} of the file itself begins like a numbered line (`{}`), so mend cannot tell which numbers in the replacement are line numbers",
            i + 1,
            hay.lines()[i].trim()
        ));
    }
    let edges = Edges::of(&numbered.lines);
    let search = Search {
        lines: &numbered.lines,
        replace: &replace,
        edges: &edges,
        hint: q.hint.or(Some(numbered.first)),
    };
    run_with(hay, q, MatchPass::LineNumbers, Norm::Loose, &search, opts)
}
