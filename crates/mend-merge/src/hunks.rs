//! Numbered hunks between a file's base and its output: the runs of
//! changed lines as git's diff pairs them ([`crate::line_hunks`]), with
//! runs whose context lines would overlap joined into one hunk, as git
//! joins them, so a diff's hunks never share a line and `git apply` takes
//! it. Pending sessions and turns both number hunks here, so `--hunk N`
//! means the same hunk to each; callers recompute them for every action,
//! so no stale coordinate is held.

use std::ops::Range;

use mend_core::diff::{LineHunk, Side, grouped, lines};

/// The changed runs from `base` to `output`, by git's diff.
fn changes(base: &str, output: &str) -> Vec<LineHunk> {
    mend_core::diff::git_changes(base, output)
}

/// How many hunks a diff from `base` to `output` has.
pub fn count(base: &str, output: &str) -> usize {
    grouped(&changes(base, output)).len()
}

/// `base` with the hunks for which `take` (given the hunk's number,
/// counting from 1) says yes, and the rest left as they were.
pub fn with_hunks(base: &str, output: &str, take: &dyn Fn(usize) -> bool) -> String {
    let (old, new) = (lines(base), lines(output));
    let mut out = String::with_capacity(base.len().max(output.len()));
    let mut at = 0;
    let all = changes(base, output);
    for (k, runs) in grouped(&all).iter().enumerate() {
        let (first, last) = (&runs[0], &runs[runs.len() - 1]);
        out.extend(old[at..first.start].iter().copied());
        if take(k + 1) {
            out.extend(new[first.text.start..last.text.end].iter().copied());
        } else {
            out.extend(old[first.start..last.end].iter().copied());
        }
        at = last.end;
    }
    out.extend(old[at..].iter().copied());
    out
}

/// Each hunk's lines: the range of `base`'s lines it replaces and the
/// range of `output`'s lines that replace them, in hunk order (the hunk
/// numbered `k` is at `k - 1`).
pub fn regions(base: &str, output: &str) -> Vec<(Range<usize>, Range<usize>)> {
    grouped(&changes(base, output))
        .iter()
        .map(|runs| {
            let (first, last) = (&runs[0], &runs[runs.len() - 1]);
            (first.start..last.end, first.text.start..last.text.end)
        })
        .collect()
}

/// A file's diff from `from` (its path and text, `None` when it does not
/// exist) to `to`, by git's diff, each hunk saying its number as `--hunk`
/// counts them when `numbered` (see [`mend_core::diff::render_file`]).
pub fn render_file(from: Side<'_>, to: Side<'_>, numbered: bool) -> String {
    mend_core::diff::render_file(from, to, numbered).text()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("{i}\n")).collect()
    }

    #[test]
    fn taking_every_hunk_gives_the_output_and_none_the_base() {
        let base = numbered(20);
        let output = base
            .replace("\n2\n", "\nTWO\n")
            .replace("\n11\n", "\nELEVEN\n")
            + "z";
        assert_eq!(count(&base, &output), 3);
        assert_eq!(with_hunks(&base, &output, &|_| true), output);
        assert_eq!(with_hunks(&base, &output, &|_| false), base);
        assert_eq!(
            with_hunks(&base, &output, &|k| k == 2),
            base.replace("\n11\n", "\nELEVEN\n")
        );
    }

    /// Changes whose three lines of context would overlap or meet are one
    /// hunk, as git makes it (at most six unchanged lines apart); seven
    /// apart are two.
    #[test]
    fn hunks_whose_context_would_overlap_are_joined() {
        let d = render_file(
            ("f.txt", Some("a\nb\nc\nd\ne\nf\ng\nh\n")),
            ("f.txt", Some("a\nB\nc\nd\ne\nf\nG\nh\n")),
            true,
        );
        assert_eq!(
            d,
            "--- a/f.txt\n+++ b/f.txt\n@@ -1,8 +1,8 @@ hunk 1\n a\n-b\n+B\n c\n d\n e\n f\n-g\n+G\n h\n"
        );
        let base = numbered(9);
        let meeting = base.replace("2\n", "TWO\n").replace("9\n", "NINE\n");
        let d = render_file(("f", Some(&base)), ("f", Some(&meeting)), true);
        assert_eq!(
            d,
            "--- a/f\n+++ b/f\n@@ -1,9 +1,9 @@ hunk 1\n 1\n-2\n+TWO\n 3\n 4\n 5\n 6\n 7\n 8\n-9\n+NINE\n"
        );
        assert_eq!(count(&base, &meeting), 1);
        let base = numbered(10);
        let apart = base.replace("2\n", "TWO\n").replace("10\n", "TEN\n");
        let d = render_file(("f", Some(&base)), ("f", Some(&apart)), true);
        assert_eq!(
            d,
            "--- a/f\n+++ b/f\n@@ -1,5 +1,5 @@ hunk 1\n 1\n-2\n+TWO\n 3\n 4\n 5\n@@ -7,4 +7,4 @@ hunk 2\n 7\n 8\n 9\n-10\n+TEN\n"
        );
        assert_eq!(count(&base, &apart), 2);
    }

    /// What has no hunks still shows: a file created or deleted empty,
    /// and a rename that changes nothing in the file.
    #[test]
    fn outputs_without_hunks_show_as_git_shows_them() {
        let new = render_file(("e.txt", None), ("e.txt", Some("")), true);
        assert_eq!(new, "diff --git a/e.txt b/e.txt\nnew file mode 100644\n");
        let gone = render_file(("e.txt", Some("")), ("e.txt", None), false);
        assert_eq!(
            gone,
            "diff --git a/e.txt b/e.txt\ndeleted file mode 100644\n"
        );
        let moved = render_file(("a.txt", Some("x\n")), ("b.txt", Some("x\n")), false);
        assert_eq!(
            moved,
            "diff --git a/a.txt b/b.txt\nrename from a.txt\nrename to b.txt\n"
        );
        assert_eq!(
            render_file(("a", Some("x\n")), ("a", Some("x\n")), true),
            ""
        );
    }
}
