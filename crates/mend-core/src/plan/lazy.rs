//! Comments that take the place of code: a lazy edit's placeholders.
//!
//! A model that leaves lines out of its new text often writes a comment
//! where they were: `// ... token header`, `# ... validation`, `// existing
//! code`, `// unchanged`, `// rest of the methods`, `private headers() {
//! /* unchanged */ }`. The elision machinery pairs the markers it knows
//! (`normalize::marker_kind`, `readings.rs`); these it does not, and
//! writing one would delete the code it stands for.
//!
//! A new line is a **placeholder** ([`placeholder`]) when it is a comment
//! of at most a few words holding an ellipsis (`// ... token header`,
//! `// ...headers()`), or words that say code is left out or kept as it
//! was (`existing`, `unchanged`, `rest of`, `same as before`, `snip`, …),
//! or a declaration whose body is only such a comment. It **takes the
//! place of code** ([`over_code`]) when it is not a line of the old text
//! and the change around it (a run of removed and added lines, blank
//! lines inside it included) removes a code line that the new text has
//! nowhere, not even commented out, and that resembles none of the
//! change's new code lines: a line that vanished, not one rewritten,
//! moved or commented out. Such an edit is refused.
//!
//! So a comment added without removing code, a comment replacing a
//! comment, a line commented out, a comment beside code that is rewritten
//! line for line, and a descriptive comment (`// Validate the token before
//! use`, no placeholder words) are written as sent. In prose (Markdown and
//! the like) only an HTML comment counts: `#` makes a heading there, and a
//! `//` line belongs to a code example. Lines the elision machinery knows
//! as markers are left to it (`splice.rs`, `content.rs`, and the whole-file
//! rules in `plan/mod.rs`), which pairs them with the search's markers.

use std::collections::HashSet;
use std::ops::Range;

use super::Planner;
use super::content::{Read, Reading};
use super::splice::Nouns;
use crate::diff::{DiffOp, line_ops};
use crate::locate::Match;
use crate::normalize::{fold_loose, is_elision_marker, marker_kind};
use crate::report::{Failure, FailureKind};
use crate::similarity::{is_comment, similarity};

/// Words that say code is left out or kept as it was, wherever they stand
/// in a short comment.
const KEPT_WORDS: &[&str] = &[
    "existing",
    "unchanged",
    "unmodified",
    "untouched",
    "omitted",
    "elided",
    "snip",
    "snipped",
    "remains",
    "remain",
    "remaining",
    "etc",
];

/// Phrases that say the same, as runs of words.
const KEPT_PHRASES: &[&[&str]] = &[
    &["rest", "of"],
    &["the", "rest"],
    &["as", "before"],
    &["as", "is"],
    &["no", "changes"],
    &["no", "change"],
    &["keep", "original"],
    &["keep", "previous"],
    &["keep", "current"],
    &["original", "code"],
    &["previous", "code"],
    &["same", "code"],
];

/// At most this many words in a comment that is a placeholder by its words.
const WORDED_MAX: usize = 5;
/// At most this many words beside the ellipsis of a placeholder.
const ELLIPSIS_MAX: usize = 6;

/// Pairs of removed and added lines compared for resemblance, at most;
/// beyond it only exact copies account for a removed line (the stricter
/// reading: refused sooner than written).
const RESEMBLANCE_BUDGET: usize = 40_000;

impl Planner<'_, '_> {
    /// Refuses a located edit whose new lines hold a placeholder taking the
    /// place of the search's code ([`over_code`]).
    pub(crate) fn placeholders(&self, m: &Match, what: &str) -> Result<(), Failure> {
        let Some(at) = over_code(&m.search, &m.replace, is_prose(self.path)) else {
            return Ok(());
        };
        let line = m.map.get(at.old).filter(|r| r.len() == 1).map(|r| r.start);
        Err(refusal(
            what,
            (&m.replace[at.new], &m.search[at.old]),
            line,
            self.path,
        ))
    }

    /// Refuses an anchored `content` holding a placeholder that takes the
    /// place of region lines: `lines` are the region's, `first` its first
    /// line in the file, and each stretch a content marker elides (`read`)
    /// stands as that marker, so the two pair.
    pub(crate) fn content_placeholders(
        &self,
        lines: &[&str],
        first: usize,
        content: &[String],
        read: Option<&Read>,
    ) -> Result<(), Failure> {
        let mut region: Vec<&str> = Vec::with_capacity(lines.len());
        let mut at = Vec::with_capacity(lines.len());
        let elided = |i: usize| {
            read.into_iter()
                .flat_map(|r| &r.markers)
                .find_map(|(k, r)| match r {
                    Reading::Elided(g) if g.contains(&i) => Some((*k, g.start == i)),
                    _ => None,
                })
        };
        for (i, l) in lines.iter().enumerate() {
            match elided(i) {
                Some((k, true)) => region.push(content[k].as_str()),
                Some((_, false)) => continue,
                None => region.push(l),
            }
            at.push(i);
        }
        let content: Vec<&str> = content.iter().map(String::as_str).collect();
        let Some(o) = over_code(&region, &content, is_prose(self.path)) else {
            return Ok(());
        };
        Err(refusal(
            "content",
            (content[o.new], region[o.old]),
            Some(first + at[o.old]),
            self.path,
        ))
    }
}

/// The refusal of a placeholder (`lines`: it and an old line it stands for,
/// at file line `at`, 0-based) in the new side of a `what`.
fn refusal(what: &str, lines: (&str, &str), at: Option<usize>, path: &str) -> Failure {
    let nouns = Nouns::of(what);
    let plural = |s: &str| s.ends_with("lines");
    let place = at.map_or_else(String::new, |i| format!(" (line {} of {path})", i + 1));
    let (comment, old) = (lines.0.trim(), lines.1.trim());
    // The elision marker to suggest, in the placeholder's own comment syntax.
    let marker = if comment.starts_with('#') {
        "# ... existing code ..."
    } else if comment.starts_with("<!--") {
        "<!-- ... existing content ... -->"
    } else {
        "// ... existing code ..."
    };
    Failure::new(
        FailureKind::Malformed,
        format!(
            "The {r} {puts} the comment `{comment}` where the {s} {has} `{old}`{place}, and the comment reads as a placeholder for lines left out; writing it would delete the code it stands for, so mend will not",
            r = nouns.replace,
            s = nouns.search,
            puts = if plural(nouns.replace) { "put" } else { "puts" },
            has = if plural(nouns.search) { "have" } else { "has" },
        ),
        if what == "content" {
            // Anchored content has no search to pair a marker with.
            format!(
                "Copy the lines the comment stands for into the content. To leave lines out, write `{marker}` in their place, between unchanged lines of the region copied exactly."
            )
        } else {
            format!(
                "Copy the lines the comment stands for into the {r}. To leave lines out, write the same elision marker (`{marker}`) in the {s} and the {r} in their place.",
                r = nouns.replace,
                s = nouns.search,
            )
        },
    )
}

/// Whether the file at `path` is prose (Markdown and the like), where
/// only an HTML comment is a comment: a `#` line is a heading, and a `//`
/// line belongs to a code example, as does whatever it may elide.
pub(crate) fn is_prose(path: &str) -> bool {
    let ext = path.rsplit_once('.').map_or("", |(_, e)| e);
    matches!(
        ext.to_ascii_lowercase().as_str(),
        "md" | "markdown" | "mdx" | "rst" | "txt" | "adoc" | "org"
    )
}

/// Whether a line reads as a placeholder for code left out: a short comment
/// with an ellipsis or with words that say so, or a declaration whose body
/// is only such a comment (`f() { /* unchanged */ }`, `def f(): pass  #
/// unchanged`).
/// In prose ([`is_prose`]) only an HTML comment counts.
pub(crate) fn placeholder(line: &str, prose: bool) -> bool {
    let t = line.trim();
    if prose {
        return t
            .strip_prefix("<!--")
            .is_some_and(|r| reads_as_placeholder(r.strip_suffix("-->").unwrap_or(r)));
    }
    if let Some(body) = comment_body(t) {
        return reads_as_placeholder(body);
    }
    commented_body(t).is_some_and(reads_as_placeholder)
}

/// The text of a whole-line comment, its opener and closer removed.
fn comment_body(t: &str) -> Option<&str> {
    const PAIRS: &[(&str, &str)] = &[("<!--", "-->"), ("{/*", "*/}"), ("/*", "*/"), ("//", "")];
    for (open, close) in PAIRS {
        if let Some(rest) = t.strip_prefix(open) {
            let rest = rest.trim_start_matches('/');
            return Some(rest.strip_suffix(close).unwrap_or(rest).trim());
        }
    }
    // `#include`, `#[derive]`, `#!` are code, and so is a `--flag` line of a
    // command: a `#` or `--` comment is followed by a space or an ellipsis.
    let rest = t
        .strip_prefix("--")
        .or_else(|| t.strip_prefix('#').map(|r| r.trim_start_matches('#')))?;
    (rest.starts_with(char::is_whitespace) || rest.starts_with(['.', '…'])).then(|| rest.trim())
}

/// The comment that is a declaration's whole body: `… { /* x */ }`,
/// `… { // x`, `… {}  // x`, or in Python `pass  # x`, `…: pass  # x`,
/// `…: ...  # x`. A Python line ending `:  # x` opens a block whose body
/// may follow, so its comment is only a placeholder by its words.
fn commented_body(t: &str) -> Option<&str> {
    if let Some(open) = t.find('{') {
        let after = t[open + 1..].trim_start();
        if let Some(c) = after.strip_prefix("/*") {
            let (body, rest) = c.split_once("*/")?;
            let rest = rest.trim();
            return matches!(rest, "" | "}" | "};" | "},").then(|| body.trim());
        }
        if let Some(c) = after.strip_prefix("//") {
            return Some(c.trim()).filter(|c| worded(c));
        }
        if let Some(c) = after.strip_prefix('}') {
            return c.trim_start().strip_prefix("//").map(str::trim);
        }
        return None;
    }
    let (code, comment) = t.split_once(" #")?;
    let (code, comment) = (code.trim_end(), comment.trim());
    let empty_body = ["pass", "...", "…"].iter().any(|b| {
        code.strip_suffix(b)
            .is_some_and(|c| c.is_empty() || c.trim_end().ends_with(':'))
    });
    (empty_body || code.ends_with(':') && worded(comment)).then_some(comment)
}

/// Whether a comment's text reads as a placeholder.
fn reads_as_placeholder(body: &str) -> bool {
    let body = unwrapped(body);
    // Code commented out, not a note.
    if body.is_empty() || body.ends_with([';', '{', '}']) || body.contains(" = ") {
        return false;
    }
    ellipsis_stands_apart(body) && words(body).len() <= ELLIPSIS_MAX || worded(body)
}

/// A comment's text without the brackets around it (`(unchanged)`,
/// `[unchanged]`, `<existing headers method>`).
fn unwrapped(body: &str) -> &str {
    body.trim()
        .trim_start_matches(['(', '[', '<'])
        .trim_end_matches([')', ']', '>'])
        .trim()
}

fn words(body: &str) -> Vec<String> {
    body.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Whether a short text says in words that code is left out or kept.
fn worded(body: &str) -> bool {
    let words = words(unwrapped(body));
    words.len() <= WORDED_MAX
        && (words.iter().any(|w| KEPT_WORDS.contains(&w.as_str()))
            || KEPT_PHRASES
                .iter()
                .any(|p| words.windows(p.len()).any(|w| w == *p)))
}

/// Whether the text has an ellipsis that stands apart as a note's: at its
/// start or after a space, not glued to the end of a word (`Retrying...`,
/// prose) nor among the items of a list (`t.Tuple[t.Any, ...]`, code).
fn ellipsis_stands_apart(body: &str) -> bool {
    let folded = body.replace('…', "...");
    folded.match_indices("...").any(|(i, _)| {
        let before = folded[..i].trim_end();
        let after = folded[i + 3..].trim_start();
        (i == 0 || folded[..i].ends_with(char::is_whitespace))
            && !before.ends_with([',', '(', '['])
            && !after.starts_with([',', ')', ']'])
    })
}

/// A placeholder that takes the place of code: the new line's index and
/// the index of an old code line it stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OverCode {
    pub(crate) new: usize,
    pub(crate) old: usize,
}

/// The first new line that is a placeholder ([`placeholder`]) taking the
/// place of code: not a line of `old`, in a change that removes a code
/// line `new` has nowhere (as a line or commented out) and that resembles
/// none of the change's new code lines. Lines the elision machinery knows as markers are left to it.
/// `prose`: whether the text is prose ([`is_prose`]).
pub(crate) fn over_code<S: AsRef<str>>(old: &[S], new: &[S], prose: bool) -> Option<OverCode> {
    let old: Vec<&str> = old.iter().map(|l| l.as_ref().trim()).collect();
    let new: Vec<&str> = new.iter().map(|l| l.as_ref().trim()).collect();
    let candidate =
        |l: &str| marker_kind(l).is_none() && placeholder(l, prose) && !old.contains(&l);
    if !new.iter().any(|l| candidate(l)) {
        return None;
    }
    // A removed line the new text still has, or has commented out.
    let in_new: HashSet<&str> = new
        .iter()
        .flat_map(|l| [Some(*l), comment_body(l)])
        .flatten()
        .collect();
    for (o, n) in changes(&old, &new) {
        let Some(k) = n.clone().find(|&k| candidate(new[k])) else {
            continue;
        };
        let added: Vec<&str> = new[n]
            .iter()
            .copied()
            .filter(|l| is_code(l) && !placeholder(l, prose))
            .collect();
        let vanished = o.clone().find(|&j| {
            is_code(old[j]) && !in_new.contains(old[j]) && !resembles(old[j], &added, o.len())
        });
        if let Some(j) = vanished {
            return Some(OverCode { new: k, old: j });
        }
    }
    None
}

/// A line of code: not blank, not a comment, not an elision marker.
fn is_code(l: &str) -> bool {
    !l.is_empty() && !is_comment(l) && !is_elision_marker(l)
}

/// Whether a removed line is rewritten as one of the change's new lines:
/// at least half the same, by edit distance.
fn resembles(line: &str, added: &[&str], removed: usize) -> bool {
    if removed.saturating_mul(added.len()) > RESEMBLANCE_BUDGET {
        return false;
    }
    let a = fold_loose(line);
    added.iter().any(|b| similarity(&a, &fold_loose(b)) >= 0.5)
}

/// The changes between `old` and `new` (trimmed lines): for each, the old
/// lines it removes and the new lines it adds. Changes separated only by
/// blank lines are one change: a placeholder may stand apart from the
/// lines it replaces by a blank line.
fn changes(old: &[&str], new: &[&str]) -> Vec<(Range<usize>, Range<usize>)> {
    let mut out: Vec<(Range<usize>, Range<usize>)> = Vec::new();
    // Whether the last change may still grow: only blank lines since.
    let mut open = false;
    for op in line_ops(old, new) {
        let (o, n) = match op {
            DiffOp::Equal { old_index, len, .. } => {
                open &= old[old_index..old_index + len].iter().all(|l| l.is_empty());
                continue;
            }
            DiffOp::Delete {
                old_index,
                old_len,
                new_index,
            } => (old_index..old_index + old_len, new_index..new_index),
            DiffOp::Insert {
                old_index,
                new_index,
                new_len,
            } => (old_index..old_index, new_index..new_index + new_len),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => (
                old_index..old_index + old_len,
                new_index..new_index + new_len,
            ),
        };
        match out.last_mut() {
            Some(last) if open => *last = (last.0.start..o.end, last.1.start..n.end),
            _ => out.push((o, n)),
        }
        open = true;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_read_as_lines_left_out() {
        for l in [
            "    // ... token header",
            "# ... validation",
            "  // ...headers()",
            "  // ... (headers)",
            "// existing code",
            "// Existing code here",
            "// unchanged",
            "// headers() unchanged",
            "// (unchanged)",
            "// [unchanged]",
            "// rest of the code",
            "// rest of the methods",
            "// same as before",
            "// keep existing headers()",
            "// <existing headers method>",
            "// snip",
            "/* Existing styles... */",
            "<!-- existing sections -->",
            "-- rest of the columns",
            "# token header ...",
            "private headers() { /* unchanged */ }",
            "private headers() { // unchanged",
            "def headers(self):  # unchanged",
            "function headers() { /* ... */ }",
            "def headers(self): pass  # same as before",
            "    pass  # rest of the method",
        ] {
            assert!(placeholder(l, false), "{l}");
        }
    }

    #[test]
    fn comments_and_code_are_not_placeholders() {
        for l in [
            "// Validate the token before use",
            "// Retrying...",
            "# Initialize the cache before the first request arrives",
            "// headers.Authorization = `Bearer ${token}`;",
            "// const rest = { ...existing };",
            "#include <existing.h>",
            "    --keep-existing \\",
            "#[derive(Debug)]",
            "const existing = load();",
            "if (unchanged) { return; }",
            "x = compute()  # unchanged",
            "def convert(value: t.Any) -> t.Any:  # t.Tuple[t.Any, ...]",
            "def convert(value):  # ... then the tuple",
            "// call(a, ...)",
            "// REST API client",
            "// TODO: handle errors",
            "",
        ] {
            assert!(!placeholder(l, false), "{l}");
        }
        assert!(!placeholder("## Existing features", true));
        assert!(!placeholder(
            "// ... complex login implementation ...",
            true
        ));
        assert!(placeholder("<!-- existing features -->", true));
    }

    fn over(old: &[&str], new: &[&str]) -> Option<usize> {
        over_code(old, new, false).map(|at| at.new)
    }

    #[test]
    fn a_placeholder_over_vanished_code_is_found() {
        let old = [
            "headers = {}",
            "if token:",
            "    headers['Authorization'] = token",
            "return headers",
        ];
        let new = ["headers = {}", "# ... token header", "return headers"];
        assert_eq!(over(&old, &new), Some(1));
        // Across a blank line inside the change.
        let new = ["headers = {}", "", "# existing code", "return headers"];
        let old2 = [
            "headers = {}",
            "if token:",
            "",
            "    use(token)",
            "return headers",
        ];
        assert_eq!(over(&old2, &new), Some(2));
    }

    #[test]
    fn comments_that_replace_nothing_are_not_found() {
        let old = ["a = 1", "b = 2", "return a + b"];
        // Inserted, no code removed.
        assert_eq!(
            over(&old, &["a = 1", "# existing code", "b = 2", "return a + b"]),
            None
        );
        // Replacing a comment.
        assert_eq!(
            over(&["# old note", "a = 1"], &["# unchanged since v1", "a = 1"]),
            None
        );
        // Beside code rewritten line for line.
        assert_eq!(
            over(
                &old,
                &["a = 10", "# keep existing sum", "b = 20", "return a + b"]
            ),
            None
        );
        // Beside code that moved: every removed line is still in the new text.
        assert_eq!(
            over(
                &old,
                &["return a + b", "# rest of the setup", "a = 1", "b = 2"]
            ),
            None
        );
        // A line commented out.
        assert_eq!(over(&old, &["a = 1", "# b = 2", "return a + b"]), None);
        assert_eq!(
            over(&["keep(existing)", "run()"], &["# keep(existing)", "run()"]),
            None
        );
        // A line the old text has.
        assert_eq!(over(&["# unchanged", "a = 1"], &["# unchanged"]), None);
        // A descriptive comment over deleted code.
        assert_eq!(
            over(
                &old,
                &["a = 1", "# Validate the inputs first", "return a + b"]
            ),
            None
        );
    }
}
