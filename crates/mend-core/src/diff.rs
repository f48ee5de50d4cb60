//! Line diffs: the operations between two sequences of lines, and unified
//! diffs of planned changes for dry runs and reports.
//!
//! [`line_ops`] is the one diff the engine uses. Small inputs get
//! `similar`'s Myers diff, which is minimal; large ones get imara-diff's
//! Histogram diff, which keeps git's heuristics against pathological input,
//! so a 100,000-line rewrite costs milliseconds, not minutes.

use std::hash::Hash;
use std::ops::Range;

use serde::{Deserialize, Serialize};
pub use similar::DiffOp;

/// Above this many lines on both sides together, the bounded diff is used.
const MINIMAL_DIFF_LIMIT: usize = 2_000;

/// The operations that turn `old` into `new`, in order.
pub fn line_ops<T: Hash + Eq + Ord>(old: &[T], new: &[T]) -> Vec<DiffOp> {
    if old.len() + new.len() <= MINIMAL_DIFF_LIMIT {
        return similar::capture_diff_slices(similar::Algorithm::Myers, old, new);
    }
    let mut input = imara_diff::InternedInput {
        before: Vec::new(),
        after: Vec::new(),
        interner: imara_diff::Interner::new(old.len() + new.len()),
    };
    input.update_before(old.iter());
    input.update_after(new.iter());
    let mut diff = imara_diff::Diff::compute(imara_diff::Algorithm::Histogram, &input);
    diff.postprocess_no_heuristic(&input);
    let mut ops = Vec::new();
    let (mut o, mut n) = (0usize, 0usize);
    for h in diff.hunks() {
        let (b, a) = (
            h.before.start as usize..h.before.end as usize,
            h.after.start as usize..h.after.end as usize,
        );
        if b.start > o {
            ops.push(DiffOp::Equal {
                old_index: o,
                new_index: n,
                len: b.start - o,
            });
        }
        ops.push(match (b.is_empty(), a.is_empty()) {
            (false, true) => DiffOp::Delete {
                old_index: b.start,
                old_len: b.len(),
                new_index: a.start,
            },
            (true, false) => DiffOp::Insert {
                old_index: b.start,
                new_index: a.start,
                new_len: a.len(),
            },
            _ => DiffOp::Replace {
                old_index: b.start,
                old_len: b.len(),
                new_index: a.start,
                new_len: a.len(),
            },
        });
        (o, n) = (b.end, a.end);
    }
    if o < old.len() {
        ops.push(DiffOp::Equal {
            old_index: o,
            new_index: n,
            len: old.len() - o,
        });
    }
    ops
}

/// A range of lines and what replaces it: lines `start..end` (0-based,
/// half-open) of the text before a change become `text`. Hunks of one
/// change are in order and never overlap.
///
/// A diff's own hunks ([`changes`], `mend_merge::line_hunks`) say what
/// replaces the lines as a range of the text after (`T = Range<usize>`);
/// an editor's carry the lines themselves (`mend_sync::Change`, the editor
/// protocol's `hunks` and `edits`, whose JSON fields are these names).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineHunk<T = Range<usize>> {
    /// First line replaced.
    pub start: usize,
    /// One past the last line replaced (`start` for a pure insertion).
    pub end: usize,
    /// What replaces them.
    pub text: T,
}

/// The changed runs of [`line_ops`]'s diff, as line hunks.
pub fn changes<T: Hash + Eq + Ord>(old: &[T], new: &[T]) -> Vec<LineHunk> {
    line_ops(old, new)
        .iter()
        .filter(|op| !matches!(op, DiffOp::Equal { .. }))
        .map(|op| {
            let old = op.old_range();
            LineHunk {
                start: old.start,
                end: old.end,
                text: op.new_range(),
            }
        })
        .collect()
}

/// One side of a diff: a path, and its text (`None` when the file does not
/// exist on that side).
pub type Side<'a> = (&'a str, Option<&'a str>);

/// A unified diff from `old` to `new` by [`line_ops`], with git-style
/// `a/` and `b/` headers; `None` for a missing side renders as
/// `/dev/null`. Empty when nothing changes. See [`render`].
pub fn unified(old_path: Option<&str>, new_path: Option<&str>, old: &str, new: &str) -> String {
    let (a, b) = (lines(old), lines(new));
    let from = old_path.or(new_path).unwrap_or_default();
    let to = new_path.or(old_path).unwrap_or_default();
    render(
        (from, old_path.map(|_| old)),
        (to, new_path.map(|_| new)),
        &changes(&a, &b),
        false,
    )
}

/// The diff from `from` to `to` whose changed runs are `changes` (from
/// whichever line diff the caller counts hunks by): its hunks with up to
/// three lines of context, each saying its number (`hunk k`, from 1, as
/// [`grouped`] counts them) when `numbered`. A rename has git's `rename
/// from`/`rename to` lines; a file created or deleted empty, which has no
/// hunks, git's `new file`/`deleted file` lines, so every output shows
/// and `git apply` takes it. Nothing when nothing changes.
///
/// This is the one unified-diff renderer: dry runs, stale-file errors,
/// `mend diff` and pending sessions all write their diffs here.
pub fn render(from: Side<'_>, to: Side<'_>, changes: &[LineHunk], numbered: bool) -> String {
    let git = format!("diff --git a/{} b/{}\n", from.0, to.0);
    let mut out = String::new();
    match (from.1, to.1) {
        (Some(_), Some(_)) if from.0 != to.0 => {
            out.push_str(&git);
            out.push_str(&format!("rename from {}\nrename to {}\n", from.0, to.0));
        }
        (None, Some(_)) if changes.is_empty() => {
            return git + "new file mode 100644\n";
        }
        (Some(_), None) if changes.is_empty() => {
            return git + "deleted file mode 100644\n";
        }
        _ if changes.is_empty() => return String::new(),
        _ => {}
    }
    if changes.is_empty() {
        return out;
    }
    let label = |side: Side<'_>, prefix: &str| match side.1 {
        Some(_) => format!("{prefix}/{}", side.0),
        None => "/dev/null".to_owned(),
    };
    out.push_str(&format!(
        "--- {}\n+++ {}\n",
        label(from, "a"),
        label(to, "b")
    ));
    let (old, new) = (lines(from.1.unwrap_or("")), lines(to.1.unwrap_or("")));
    for (k, h) in context_hunks(&old, &new, changes).iter().enumerate() {
        // As git writes them: a count of one is left out, and an empty
        // side is numbered after the line it follows.
        let side = |start: usize, lines: usize| match lines {
            0 => format!("{},0", start - 1),
            1 => start.to_string(),
            n => format!("{start},{n}"),
        };
        out.push_str(&format!(
            "@@ -{} +{} @@",
            side(h.old_start, h.old_lines),
            side(h.new_start, h.new_lines)
        ));
        if numbered {
            out.push_str(&format!(" hunk {}", k + 1));
        }
        out.push('\n');
        for l in &h.lines {
            out.push(l.tag);
            out.push_str(&l.text);
            if !l.text.ends_with('\n') {
                out.push_str("\n\\ No newline at end of file\n");
            }
        }
    }
    out
}

/// One hunk of a line diff, with 1-based starts as in a `@@` header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hunk {
    /// First old line (1-based; for an empty side, one past the line it
    /// follows).
    pub old_start: usize,
    /// Number of old lines the hunk covers.
    pub old_lines: usize,
    /// First new line (1-based, likewise).
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

/// Lines of context around each change.
pub const CONTEXT: usize = 3;

/// The lines of a text, each with its ending.
pub fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// `changes` cut into the hunks of a unified diff, in order: runs at most
/// twice the context apart are one hunk, as git joins them (two runs six
/// unchanged lines apart make one hunk whose contexts meet), so no two
/// hunks share or abut a line. A hunk's number (from 1) is its place here:
/// what `--hunk` takes.
pub fn grouped(changes: &[LineHunk]) -> Vec<&[LineHunk]> {
    let mut out: Vec<&[LineHunk]> = Vec::new();
    let mut first = 0;
    for (i, pair) in changes.windows(2).enumerate() {
        if pair[1].start - pair[0].end > 2 * CONTEXT {
            out.push(&changes[first..=i]);
            first = i + 1;
        }
    }
    if first < changes.len() {
        out.push(&changes[first..]);
    }
    out
}

/// The hunks of [`unified`]'s diff (three lines of context) as data.
pub fn hunks(old: &str, new: &str) -> Vec<Hunk> {
    let (a, b) = (lines(old), lines(new));
    context_hunks(&a, &b, &changes(&a, &b))
}

/// The hunks of `changes` between the lines `a` and `b`, with context.
fn context_hunks(a: &[&str], b: &[&str], changes: &[LineHunk]) -> Vec<Hunk> {
    let line = |tag: char, text: &str| HunkLine {
        tag,
        text: text.to_owned(),
    };
    let mut out = Vec::new();
    for runs in grouped(changes) {
        let (first, last) = (&runs[0], &runs[runs.len() - 1]);
        let old_lo = first.start.saturating_sub(CONTEXT);
        let new_lo = first.text.start - (first.start - old_lo);
        let old_hi = (last.end + CONTEXT).min(a.len());
        let new_hi = last.text.end + (old_hi - last.end);
        let mut lines = Vec::new();
        let mut o = old_lo;
        for run in runs {
            lines.extend(a[o..run.start].iter().map(|t| line(' ', t)));
            lines.extend(a[run.start..run.end].iter().map(|t| line('-', t)));
            lines.extend(b[run.text.clone()].iter().map(|t| line('+', t)));
            o = run.end;
        }
        lines.extend(a[o..old_hi].iter().map(|t| line(' ', t)));
        out.push(Hunk {
            old_start: old_lo + 1,
            old_lines: old_hi - old_lo,
            new_start: new_lo + 1,
            new_lines: new_hi - new_lo,
            lines,
        });
    }
    out
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

    #[test]
    fn created_and_unterminated_files() {
        let d = unified(None, Some("n"), "", "a\nb");
        assert_eq!(
            d,
            "--- /dev/null\n+++ b/n\n@@ -0,0 +1,2 @@\n+a\n+b\n\\ No newline at end of file\n"
        );
    }

    #[test]
    fn large_inputs_use_the_bounded_diff() {
        let old: Vec<String> = (0..5_000).map(|i| format!("line {i}")).collect();
        let new: Vec<String> = vec!["only".to_owned()];
        let ops = line_ops(&old, &new);
        let removed: usize = ops.iter().map(|op| op.old_range().len()).sum();
        assert_eq!(removed, 5_000);
        assert!(ops.iter().all(|op| !matches!(op, DiffOp::Equal { .. })));
    }
}
