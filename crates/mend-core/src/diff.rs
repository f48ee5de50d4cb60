//! Line diffs: the operations between two sequences of lines, and unified
//! diffs of planned changes for dry runs and reports.
//!
//! [`line_ops`] is the one diff the engine uses. Small inputs get
//! `similar`'s Myers diff, which is minimal; large ones get imara-diff's
//! Histogram diff, which keeps git's heuristics against pathological input,
//! so a 100,000-line rewrite costs milliseconds, not minutes.

use std::hash::Hash;

use serde::Serialize;
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

/// A unified diff from `old` to `new` with git-style `a/` and `b/` headers;
/// `None` for a missing side renders as `/dev/null`. Empty when equal.
pub fn unified(old_path: Option<&str>, new_path: Option<&str>, old: &str, new: &str) -> String {
    if old == new && old_path == new_path {
        return String::new();
    }
    let a = old_path.map_or("/dev/null".to_owned(), |p| format!("a/{p}"));
    let b = new_path.map_or("/dev/null".to_owned(), |p| format!("b/{p}"));
    let mut out = format!("--- {a}\n+++ {b}\n");
    for h in hunks(old, new) {
        // As git writes them: a count of one is left out, and an empty
        // side is numbered after the line it follows.
        let side = |start: usize, lines: usize| match lines {
            0 => format!("{},0", start - 1),
            1 => start.to_string(),
            n => format!("{start},{n}"),
        };
        out.push_str(&format!(
            "@@ -{} +{} @@\n",
            side(h.old_start, h.old_lines),
            side(h.new_start, h.new_lines)
        ));
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
const CONTEXT: usize = 3;

/// The hunks of [`unified`]'s diff (three lines of context) as data.
pub fn hunks(old: &str, new: &str) -> Vec<Hunk> {
    let a: Vec<&str> = old.split_inclusive('\n').collect();
    let b: Vec<&str> = new.split_inclusive('\n').collect();
    let ops = line_ops(&a, &b);
    // Changed spans (old range, new range), then grouped with context.
    let changes: Vec<(std::ops::Range<usize>, std::ops::Range<usize>)> = ops
        .iter()
        .filter(|op| !matches!(op, DiffOp::Equal { .. }))
        .map(|op| (op.old_range(), op.new_range()))
        .collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < changes.len() {
        let mut j = i;
        while j + 1 < changes.len() && changes[j + 1].0.start - changes[j].0.end <= 2 * CONTEXT {
            j += 1;
        }
        let old_lo = changes[i].0.start.saturating_sub(CONTEXT);
        let shift = changes[i].0.start - old_lo;
        let new_lo = changes[i].1.start - shift;
        let old_hi = (changes[j].0.end + CONTEXT).min(a.len());
        let new_hi = changes[j].1.end + (old_hi - changes[j].0.end);
        let line = |tag: char, text: &str| HunkLine {
            tag,
            text: text.to_owned(),
        };
        let mut lines = Vec::new();
        let mut o = old_lo;
        for (or, nr) in &changes[i..=j] {
            lines.extend(a[o..or.start].iter().map(|t| line(' ', t)));
            lines.extend(a[or.clone()].iter().map(|t| line('-', t)));
            lines.extend(b[nr.clone()].iter().map(|t| line('+', t)));
            o = or.end;
        }
        lines.extend(a[o..old_hi].iter().map(|t| line(' ', t)));
        out.push(Hunk {
            old_start: old_lo + 1,
            old_lines: old_hi - old_lo,
            new_start: new_lo + 1,
            new_lines: new_hi - new_lo,
            lines,
        });
        i = j + 1;
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
