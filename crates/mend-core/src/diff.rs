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

/// The changed runs from `old` to `new` as git's diff finds them
/// ([`crate::xdiff`]): what every diff shown to a person is cut from.
pub fn git_changes(old: &str, new: &str) -> Vec<LineHunk> {
    git_line_changes(&as_bytes(&lines(old)), &as_bytes(&lines(new)))
}

/// [`git_changes`] of texts already cut into lines (each with its line
/// ending), as bytes.
pub fn git_line_changes(old: &[&[u8]], new: &[&[u8]]) -> Vec<LineHunk> {
    crate::xdiff::diff(old, new)
        .iter()
        .map(|c| LineHunk {
            start: c.b,
            end: c.b + c.blen,
            text: c.s..c.s + c.slen,
        })
        .collect()
}

/// A unified diff from `old` to `new` by git's diff, with git-style
/// `a/` and `b/` headers; `None` for a missing side renders as
/// `/dev/null`. Empty when nothing changes. See [`render_file`].
pub fn unified(old_path: Option<&str>, new_path: Option<&str>, old: &str, new: &str) -> String {
    let from = old_path.or(new_path).unwrap_or_default();
    let to = new_path.or(old_path).unwrap_or_default();
    render_file(
        (from, old_path.map(|_| old)),
        (to, new_path.map(|_| new)),
        false,
    )
    .text()
}

/// One hunk of a shown diff: its number (from 1, what `--hunk` takes),
/// its `@@` header and its lines as the unified text has them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DiffHunk {
    /// Its number, from 1, as [`grouped`] counts them.
    pub number: usize,
    /// Its header, `@@ -a,b +c,d @@`, without the number.
    pub header: String,
    /// Its lines without their endings, each starting with ` `, `-` or
    /// `+`, or `\` for git's `\ No newline at end of file`.
    pub lines: Vec<String>,
}

/// A file's diff, cut into hunks: the lines before the first hunk (git's
/// `diff --git`, rename and `---`/`+++` lines) and the hunks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rendered {
    /// The lines before the first hunk, each with its ending.
    pub head: String,
    /// The hunks, in order.
    pub hunks: Vec<DiffHunk>,
    /// Whether the text says each hunk's number after its header.
    pub numbered: bool,
}

impl Rendered {
    /// The unified text: the head, then each hunk's header (with ` hunk k`
    /// when numbered) and lines.
    pub fn text(&self) -> String {
        let mut out = self.head.clone();
        for h in &self.hunks {
            out.push_str(&h.header);
            if self.numbered {
                out.push_str(&format!(" hunk {}", h.number));
            }
            out.push('\n');
            for l in &h.lines {
                out.push_str(l);
                out.push('\n');
            }
        }
        out
    }
}

/// A file's diff from `from` to `to` by git's diff ([`git_changes`]),
/// hunks cut as git cuts them ([`grouped`]). This is the one diff mend
/// shows: dry runs, stale-file errors, `mend diff`, pending sessions and
/// turns all write their diffs here, so a hunk and its number are the
/// same in each and in `git diff`.
pub fn render_file(from: Side<'_>, to: Side<'_>, numbered: bool) -> Rendered {
    let (old, new) = (lines(from.1.unwrap_or("")), lines(to.1.unwrap_or("")));
    let all = git_line_changes(&as_bytes(&old), &as_bytes(&new));
    render_lines(from, to, (&old, &new), &all, numbered)
}

/// The diff from `from` to `to` whose changed runs are `changes`: its
/// hunks with up to three lines of context, each saying its number (`hunk
/// k`, from 1, as [`grouped`] counts them) in the text when `numbered`. A
/// rename has git's `rename from`/`rename to` lines; a file created or
/// deleted empty, which has no hunks, git's `new file`/`deleted file`
/// lines, so every output shows and `git apply` takes it. Nothing when
/// nothing changes.
pub fn render(from: Side<'_>, to: Side<'_>, changes: &[LineHunk], numbered: bool) -> Rendered {
    let (old, new) = (lines(from.1.unwrap_or("")), lines(to.1.unwrap_or("")));
    render_lines(from, to, (&old, &new), changes, numbered)
}

/// Lines as bytes, for [`git_line_changes`].
fn as_bytes<'t>(lines: &[&'t str]) -> Vec<&'t [u8]> {
    lines.iter().map(|l| l.as_bytes()).collect()
}

/// [`render`] of texts already cut into [`lines`].
fn render_lines(
    from: Side<'_>,
    to: Side<'_>,
    (old, new): (&[&str], &[&str]),
    changes: &[LineHunk],
    numbered: bool,
) -> Rendered {
    let git = format!("diff --git a/{} b/{}\n", from.0, to.0);
    let mut out = Rendered {
        numbered,
        ..Rendered::default()
    };
    match (from.1, to.1) {
        (Some(_), Some(_)) if from.0 != to.0 => {
            out.head.push_str(&git);
            out.head
                .push_str(&format!("rename from {}\nrename to {}\n", from.0, to.0));
        }
        (None, Some(_)) if changes.is_empty() => {
            out.head = git + "new file mode 100644\n";
            return out;
        }
        (Some(_), None) if changes.is_empty() => {
            out.head = git + "deleted file mode 100644\n";
            return out;
        }
        _ => {}
    }
    if changes.is_empty() {
        return out;
    }
    let label = |side: Side<'_>, prefix: &str| match side.1 {
        Some(_) => format!("{prefix}/{}", side.0),
        None => "/dev/null".to_owned(),
    };
    out.head.push_str(&format!(
        "--- {}\n+++ {}\n",
        label(from, "a"),
        label(to, "b")
    ));
    for (k, h) in context_hunks(old, new, changes).iter().enumerate() {
        // As git writes them: a count of one is left out, and an empty
        // side is numbered after the line it follows.
        let side = |start: usize, lines: usize| match lines {
            0 => format!("{},0", start - 1),
            1 => start.to_string(),
            n => format!("{start},{n}"),
        };
        let mut lines = Vec::with_capacity(h.lines.len());
        for l in &h.lines {
            let text = l.text.strip_suffix('\n');
            lines.push(format!("{}{}", l.tag, text.unwrap_or(&l.text)));
            if text.is_none() {
                lines.push("\\ No newline at end of file".to_owned());
            }
        }
        out.hunks.push(DiffHunk {
            number: k + 1,
            header: format!(
                "@@ -{} +{} @@",
                side(h.old_start, h.old_lines),
                side(h.new_start, h.new_lines)
            ),
            lines,
        });
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
    let mut out = Vec::new();
    let mut from = 0;
    for end in memchr::memchr_iter(b'\n', text.as_bytes()) {
        // A newline is one byte: each cut is at a char boundary.
        out.push(&text[from..=end]);
        from = end + 1;
    }
    if from < text.len() {
        out.push(&text[from..]);
    }
    out
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
    context_hunks(&a, &b, &git_changes(old, new))
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
