//! Unified diffs of planned changes, for dry runs and reports.

use serde::Serialize;
use similar::{ChangeTag, TextDiff};

/// A unified diff from `old` to `new` with git-style `a/` and `b/` headers;
/// `None` for a missing side renders as `/dev/null`. Empty when equal.
pub fn unified(old_path: Option<&str>, new_path: Option<&str>, old: &str, new: &str) -> String {
    if old == new && old_path == new_path {
        return String::new();
    }
    let a = old_path.map_or("/dev/null".to_owned(), |p| format!("a/{p}"));
    let b = new_path.map_or("/dev/null".to_owned(), |p| format!("b/{p}"));
    let diff = TextDiff::from_lines(old, new);
    let mut out = diff
        .unified_diff()
        .context_radius(3)
        .header(&a, &b)
        .to_string();
    if out.is_empty() {
        // A rename without content change.
        out = format!("--- {a}\n+++ {b}\n");
    }
    out
}

/// One hunk of a line diff, with 1-based starts as in a `@@` header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hunk {
    /// First old line (1-based).
    pub old_start: usize,
    /// Number of old lines the hunk covers.
    pub old_lines: usize,
    /// First new line (1-based).
    pub new_start: usize,
    /// Number of new lines the hunk covers.
    pub new_lines: usize,
    /// The lines, context included, each with its ending.
    pub lines: Vec<HunkLine>,
}

/// A line of a [`Hunk`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HunkLine {
    /// `' '` context, `'-'` removed, `'+'` added.
    pub tag: char,
    /// The line's text with its ending.
    pub text: String,
}

/// The hunks of [`unified`]'s diff (three lines of context) as data.
pub fn hunks(old: &str, new: &str) -> Vec<Hunk> {
    let td = TextDiff::from_lines(old, new);
    td.grouped_ops(3)
        .iter()
        .map(|group| {
            let (first, last) = (&group[0], &group[group.len() - 1]);
            let old_range = first.old_range().start..last.old_range().end;
            let new_range = first.new_range().start..last.new_range().end;
            let lines = group
                .iter()
                .flat_map(|op| td.iter_changes(op))
                .map(|c| HunkLine {
                    tag: match c.tag() {
                        ChangeTag::Equal => ' ',
                        ChangeTag::Delete => '-',
                        ChangeTag::Insert => '+',
                    },
                    text: c.value().to_owned(),
                })
                .collect();
            Hunk {
                old_start: old_range.start + 1,
                old_lines: old_range.len(),
                new_start: new_range.start + 1,
                new_lines: new_range.len(),
                lines,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunks_match_the_unified_header() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n";
        let new = "1\n2\n3\n4\n5\n6\nseven\n8\n9\n10\n11\n";
        let h = hunks(old, new);
        assert_eq!(h.len(), 1);
        let (o, n) = (
            (h[0].old_start, h[0].old_lines),
            (h[0].new_start, h[0].new_lines),
        );
        let header = format!("@@ -{},{} +{},{} @@", o.0, o.1, n.0, n.1);
        assert!(
            unified(Some("f"), Some("f"), old, new).contains(&header),
            "{header}"
        );
        let tags: String = h[0].lines.iter().map(|l| l.tag).collect();
        assert_eq!(tags, "   -+   +");
        assert_eq!(h[0].lines[4].text, "seven\n");
        assert!(hunks(old, old).is_empty());
    }
}
