//! Hunks of a proposal: the runs of changed lines between a file's base
//! and its output, as git's diff pairs them (mend-merge's `line_hunks`).
//! They are recomputed for every action, so no stale coordinate is held.

/// One hunk: base lines `base.0..base.0+base.1` become output lines
/// `output.0..output.0+output.1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Hunk {
    pub(crate) base: (usize, usize),
    pub(crate) output: (usize, usize),
}

fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// The hunks from `base` to `output`, in file order.
pub(crate) fn hunks(base: &str, output: &str) -> Vec<Hunk> {
    mend_merge::line_hunks(base.as_bytes(), output.as_bytes())
        .into_iter()
        .map(|(b, blen, s, slen)| Hunk {
            base: (b, blen),
            output: (s, slen),
        })
        .collect()
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

/// A unified diff whose hunks are exactly [`hunks`], each with up to three
/// lines of context; `numbered`, each says its number as `--hunk` counts
/// them.
pub(crate) fn render(
    old_label: &str,
    new_label: &str,
    base: &str,
    output: &str,
    numbered: bool,
) -> String {
    let all = hunks(base, output);
    if all.is_empty() {
        return String::new();
    }
    let (old, new) = (lines(base), lines(output));
    let mut out = format!("--- {old_label}\n+++ {new_label}\n");
    for (k, h) in all.iter().enumerate() {
        let prev_end = if k == 0 {
            0
        } else {
            all[k - 1].base.0 + all[k - 1].base.1
        };
        let next_start = all.get(k + 1).map_or(old.len(), |n| n.base.0);
        let before = h.base.0 - h.base.0.saturating_sub(3).max(prev_end);
        let after = (h.base.0 + h.base.1 + 3).min(next_start) - (h.base.0 + h.base.1);
        let (b0, b1) = (h.base.0 - before, h.base.1 + before + after);
        let (s0, s1) = (h.output.0 - before, h.output.1 + before + after);
        out.push_str(&format!("@@ -{} +{} @@", range(b0, b1), range(s0, s1)));
        if numbered {
            out.push_str(&format!(" hunk {}", k + 1));
        }
        out.push('\n');
        push_lines(&mut out, ' ', &old[b0..h.base.0]);
        push_lines(&mut out, '-', &old[h.base.0..h.base.0 + h.base.1]);
        push_lines(&mut out, '+', &new[h.output.0..h.output.0 + h.output.1]);
        let end = h.base.0 + h.base.1;
        push_lines(&mut out, ' ', &old[end..end + after]);
    }
    out
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

    #[test]
    fn taking_every_hunk_gives_the_output_and_none_the_base() {
        let base = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let output = "a\nB\nc\nd\ne\nf\nG\nh\nz";
        assert_eq!(hunks(base, output).len(), 3);
        assert_eq!(with_hunks(base, output, &|_| true), output);
        assert_eq!(with_hunks(base, output, &|_| false), base);
        assert_eq!(
            with_hunks(base, output, &|k| k == 2),
            "a\nb\nc\nd\ne\nf\nG\nh\n"
        );
    }

    #[test]
    fn rendered_hunks_are_numbered_in_order() {
        let d = render(
            "a/f",
            "b/f",
            "1\n2\n3\n4\n5\n6\n7\n8\n9\n",
            "1\nTWO\n3\n4\n5\n6\n7\n8\nNINE\n",
            true,
        );
        assert!(d.contains("hunk 1\n 1\n-2\n+TWO\n 3\n 4\n 5\n"), "{d}");
        assert!(d.contains("hunk 2\n 6\n 7\n 8\n-9\n+NINE\n"), "{d}");
    }
}
