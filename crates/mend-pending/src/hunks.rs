//! Hunks of a proposal: the runs of changed lines between a file's base
//! and its output, as git's diff pairs them (mend-merge's `line_hunks`),
//! with runs whose context lines would overlap joined into one hunk, as
//! git joins them, so a diff's hunks never share a line and `git apply`
//! takes it. They are recomputed for every action, so no stale coordinate
//! is held.

/// Lines of context around a hunk in a diff.
const CONTEXT: usize = 3;

/// One run of changed lines: base lines `b..b+blen` become output lines
/// `s..s+slen`.
type Run = (usize, usize, usize, usize);

/// One hunk: base lines `base.0..base.0+base.1` become output lines
/// `output.0..output.0+output.1`; `runs` are its changed lines, with
/// unchanged lines (the same in both) between them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hunk {
    pub(crate) base: (usize, usize),
    pub(crate) output: (usize, usize),
    runs: Vec<Run>,
}

fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// The hunks from `base` to `output`, in file order: runs fewer than
/// twice the context apart are one hunk.
pub(crate) fn hunks(base: &str, output: &str) -> Vec<Hunk> {
    let mut out: Vec<Hunk> = Vec::new();
    for run in mend_merge::line_hunks(base.as_bytes(), output.as_bytes()) {
        let (b, blen, s, slen) = run;
        match out.last_mut() {
            Some(h) if b - (h.base.0 + h.base.1) < 2 * CONTEXT => {
                h.base.1 = b + blen - h.base.0;
                h.output.1 = s + slen - h.output.0;
                h.runs.push(run);
            }
            _ => out.push(Hunk {
                base: (b, blen),
                output: (s, slen),
                runs: vec![run],
            }),
        }
    }
    out
}

/// `base` with the hunks for which `take` (given the hunk's number,
/// counting from 1) says yes, and the rest left as they were.
pub(crate) fn with_hunks(base: &str, output: &str, take: &dyn Fn(usize) -> bool) -> String {
    let (old, new) = (lines(base), lines(output));
    let mut out = String::with_capacity(base.len().max(output.len()));
    let mut at = 0;
    for (k, h) in hunks(base, output).iter().enumerate() {
        out.extend(old[at..h.base.0].iter().copied());
        if take(k + 1) {
            out.extend(new[h.output.0..h.output.0 + h.output.1].iter().copied());
        } else {
            out.extend(old[h.base.0..h.base.0 + h.base.1].iter().copied());
        }
        at = h.base.0 + h.base.1;
    }
    out.extend(old[at..].iter().copied());
    out
}

/// A file's diff from `from` (its path and text, `None` when it does not
/// exist) to `to`: its hunks with up to three lines of context, each
/// saying its number as `--hunk` counts them when `numbered`. A rename has
/// git's `rename from`/`rename to` lines; a file created or deleted empty,
/// which has no hunks, git's `new file`/`deleted file` lines, so every
/// output shows and `git apply` takes it. Nothing when nothing changes.
pub(crate) fn render_file(
    from: (&str, Option<&str>),
    to: (&str, Option<&str>),
    numbered: bool,
) -> String {
    let (base, output) = (from.1.unwrap_or(""), to.1.unwrap_or(""));
    let all = hunks(base, output);
    let git = format!("diff --git a/{} b/{}\n", from.0, to.0);
    let mut out = String::new();
    match (from.1, to.1) {
        (Some(_), Some(_)) if from.0 != to.0 => {
            out.push_str(&git);
            out.push_str(&format!("rename from {}\nrename to {}\n", from.0, to.0));
        }
        (None, Some(_)) if all.is_empty() => {
            return git + "new file mode 100644\n";
        }
        (Some(_), None) if all.is_empty() => {
            return git + "deleted file mode 100644\n";
        }
        _ if all.is_empty() => return String::new(),
        _ => {}
    }
    if all.is_empty() {
        return out;
    }
    let label = |side: (&str, Option<&str>), prefix: &str| match side.1 {
        Some(_) => format!("{prefix}/{}", side.0),
        None => "/dev/null".to_owned(),
    };
    out.push_str(&format!(
        "--- {}\n+++ {}\n",
        label(from, "a"),
        label(to, "b")
    ));
    render_hunks(&mut out, &lines(base), &lines(output), &all, numbered);
    out
}

fn render_hunks(out: &mut String, old: &[&str], new: &[&str], all: &[Hunk], numbered: bool) {
    for (k, h) in all.iter().enumerate() {
        let prev_end = if k == 0 {
            0
        } else {
            all[k - 1].base.0 + all[k - 1].base.1
        };
        let next_start = all.get(k + 1).map_or(old.len(), |n| n.base.0);
        let end = h.base.0 + h.base.1;
        let before = h.base.0 - h.base.0.saturating_sub(CONTEXT).max(prev_end);
        let after = (end + CONTEXT).min(next_start) - end;
        let (b0, b1) = (h.base.0 - before, h.base.1 + before + after);
        let (s0, s1) = (h.output.0 - before, h.output.1 + before + after);
        out.push_str(&format!("@@ -{} +{} @@", range(b0, b1), range(s0, s1)));
        if numbered {
            out.push_str(&format!(" hunk {}", k + 1));
        }
        out.push('\n');
        push_lines(out, ' ', &old[b0..h.base.0]);
        let mut at = h.base.0;
        for &(b, blen, s, slen) in &h.runs {
            push_lines(out, ' ', &old[at..b]);
            push_lines(out, '-', &old[b..b + blen]);
            push_lines(out, '+', &new[s..s + slen]);
            at = b + blen;
        }
        push_lines(out, ' ', &old[end..end + after]);
    }
}

/// A hunk range as unified diffs write it (a count of one left out; an
/// empty range numbered by the line before it).
fn range(start: usize, len: usize) -> String {
    match len {
        0 => format!("{start},0"),
        1 => format!("{}", start + 1),
        n => format!("{},{n}", start + 1),
    }
}

fn push_lines(out: &mut String, mark: char, lines: &[&str]) {
    for l in lines {
        out.push(mark);
        out.push_str(l);
        if !l.ends_with('\n') {
            out.push_str("\n\\ No newline at end of file\n");
        }
    }
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
        assert_eq!(hunks(&base, &output).len(), 3);
        assert_eq!(with_hunks(&base, &output, &|_| true), output);
        assert_eq!(with_hunks(&base, &output, &|_| false), base);
        assert_eq!(
            with_hunks(&base, &output, &|k| k == 2),
            base.replace("\n11\n", "\nELEVEN\n")
        );
    }

    /// Changes whose three lines of context would overlap are one hunk,
    /// as git makes it; contexts that only meet stay two hunks.
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
            "--- a/f\n+++ b/f\n@@ -1,5 +1,5 @@ hunk 1\n 1\n-2\n+TWO\n 3\n 4\n 5\n@@ -6,4 +6,4 @@ hunk 2\n 6\n 7\n 8\n-9\n+NINE\n"
        );
        assert_eq!(hunks(&base, &meeting).len(), 2);
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
