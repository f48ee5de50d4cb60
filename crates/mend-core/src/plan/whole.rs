//! Whole-file content over an existing file, judged against the file.
//!
//! A parser cannot read files, so a fence under a line naming a file is
//! only *inferred* to be a whole-file write ([`EditOp::WriteFile`]'s
//! `inferred`); the planner, which has the file, decides what it is. Lines
//! are compared after trimming trailing whitespace; "non-blank" lines hold
//! more than whitespace. Over an existing, non-blank file the fence is:
//!
//! 1. a **snippet** when its lines (blank lines at its edges aside) are a
//!    contiguous run of the file's lines, short of the whole file, or of
//!    the text the response's earlier edits left: prose, not an edit; the
//!    report says which lines it showed, nothing is written and the
//!    response is not failed by it;
//! 2. a **rewrite**, written, when it [`covers`] the file;
//! 3. a changed **near-copy** of part of the file (at least half of its
//!    non-blank lines are the file's, in order): refused, with a message
//!    to send the change as a SEARCH/REPLACE block;
//! 4. anything else: refused as not evidently the whole file.
//!
//! An excerpt comes first because writing one would delete the rest of the
//! file; a model that shows part of a file under its name means the part.
//!
//! An empty search on an existing non-empty file ([`EditOp::Create`]) is
//! refused too: on the responses aider applied it to, the model meant a
//! creation or a rewrite more often than an append (`docs/decisions.md`).
//!
//! [`EditOp::WriteFile`]: crate::EditOp::WriteFile
//! [`EditOp::Create`]: crate::EditOp::Create

use std::collections::{HashMap, HashSet};

use crate::diff::{DiffOp, line_ops};
use crate::edit::Edit;
use crate::report::{Failure, FailureKind, LineSpan};
use crate::text::Document;

/// What inferred whole-file content is, over an existing file.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Reading {
    /// Write it: the file is absent or blank, or the content covers it.
    Write,
    /// An unchanged excerpt: these lines of the text it was found in.
    Snippet(LineSpan),
    /// Refused.
    Refused(Failure),
}

/// Lines for comparing: trailing whitespace trimmed.
fn lines(text: &str) -> Vec<&str> {
    Document::new(text)
        .contents()
        .into_iter()
        .map(str::trim_end)
        .collect()
}

fn non_blank<'a>(lines: &[&'a str]) -> Vec<&'a str> {
    lines.iter().copied().filter(|l| !l.is_empty()).collect()
}

/// Reads inferred whole-file `content` over the file's current text
/// (`None`: absent) and its `original` text, when earlier edits changed it.
pub(crate) fn judge(
    current: Option<&str>,
    original: Option<&str>,
    content: &str,
    e: &Edit,
) -> Reading {
    let Some(current) = current.filter(|t| !t.trim().is_empty()) else {
        return fragment(content, e).map_or(Reading::Write, Reading::Refused);
    };
    let file = lines(current);
    let fence = lines(content);
    let shown_lines = non_blank(&fence).len();
    let short =
        |text: &[&str]| shown_lines <= SNIPPET_LINES || 2 * shown_lines <= non_blank(text).len();
    if let Some(span) = excerpt(&file, &fence) {
        return shown(span, short(&file), e);
    }
    if let Some(o) = original.map(lines)
        && let Some(span) = excerpt(&o, &fence)
    {
        return shown(span, short(&o), e);
    }
    if covers(&file, &fence) {
        return Reading::Write;
    }
    Reading::Refused(not_whole(&file, &fence, e))
}

/// A new file inferred from a fence whose every line with text is
/// indented: the body of a function or class shown from another file
/// (often one the path line names by its base name only), never a file's
/// start. Prose and data formats may indent throughout and are left.
fn fragment(content: &str, e: &Edit) -> Option<Failure> {
    let ext = e.path.rsplit_once('.').map(|(_, x)| x.to_ascii_lowercase());
    if matches!(
        ext.as_deref(),
        Some("md" | "markdown" | "txt" | "rst" | "csv" | "tsv")
    ) {
        return None;
    }
    let shown = non_blank(&lines(content));
    let indented = shown.iter().all(|l| l.starts_with([' ', '\t']));
    (shown.len() >= 2 && indented).then(|| {
        Failure::new(
            FailureKind::FileNotFound,
            format!(
                "{} does not exist, and every line of the fence under it is indented: it reads as part of another file (a function's body), not a new file",
                e.path
            ),
            "Name the file by its path from the project root, and send the change as a SEARCH/REPLACE block; to create the file, send all of it.",
        )
    })
}

/// An excerpt of at most this many lines with text is a snippet, however
/// small the file: a function shown from a short file is most of it.
const SNIPPET_LINES: usize = 8;

/// An unchanged excerpt: a snippet when it is short, at most
/// [`SNIPPET_LINES`] lines with text or half of the file's. A longer one is
/// as likely the whole file with its head or tail deleted (a model
/// dropping a job at the end of a workflow sends exactly that): writing it
/// or ignoring it would each be a guess, so it is refused. (A response
/// whose every fence is a snippet fails as a response without edits.)
fn shown(span: LineSpan, short: bool, e: &Edit) -> Reading {
    if short {
        return Reading::Snippet(span);
    }
    Reading::Refused(Failure::new(
        FailureKind::Malformed,
        format!(
            "The fence under {} copies {} of it unchanged and stops short of the rest: as the whole file it would delete the other lines, as a snippet it would change nothing, and mend cannot tell which was meant",
            e.path,
            span.phrase()
        ),
        "To delete lines, send a SEARCH/REPLACE block whose SEARCH holds them and whose REPLACE leaves them out; to rewrite the file, send all of it. Code shown only for reference needs no file name on the line above it.",
    ))
}

/// Where `fence` (its blank edge lines dropped) is a contiguous run of
/// `file`'s lines, short of the whole file: the first such run.
fn excerpt(file: &[&str], fence: &[&str]) -> Option<LineSpan> {
    let start = fence.iter().position(|l| !l.is_empty())?;
    let end = fence.iter().rposition(|l| !l.is_empty())? + 1;
    let run = &fence[start..end];
    let first_text = file.iter().position(|l| !l.is_empty())?;
    let last_text = file.iter().rposition(|l| !l.is_empty())? + 1;
    let k = find_run(file, run)?;
    (k > first_text || k + run.len() < last_text).then(|| LineSpan::from_range(k, k + run.len()))
}

/// Where `run` first occurs in `lines`, by Knuth-Morris-Pratt: linear
/// whatever the lines repeat.
fn find_run(lines: &[&str], run: &[&str]) -> Option<usize> {
    if run.is_empty() || run.len() > lines.len() {
        return None;
    }
    let mut fail = vec![0usize; run.len()];
    let mut k = 0;
    for i in 1..run.len() {
        while k > 0 && run[i] != run[k] {
            k = fail[k - 1];
        }
        if run[i] == run[k] {
            k += 1;
        }
        fail[i] = k;
    }
    let mut m = 0;
    for (i, line) in lines.iter().enumerate() {
        while m > 0 && *line != run[m] {
            m = fail[m - 1];
        }
        if *line == run[m] {
            m += 1;
            if m == run.len() {
                return Some(i + 1 - m);
            }
        }
    }
    None
}

/// Whether `fence` covers `file`, lines compared trimmed and blank lines
/// left out: take the first and the last of the file's lines that occur
/// only once in it and also in the fence (the file's first and last lines
/// when no line occurs once in it, and then the fence must have as many
/// lines as the file); the fence holds at least as many lines before the
/// first and after the last as the file does, and a longest common
/// subsequence holds more than half of the file's lines.
///
/// Unique lines, because a snippet that stops before the file's end may
/// still end with a `}` like the file's; the counts around them, because a
/// fence that drops the file's head or tail (a snippet, even with a line
/// changed) holds fewer lines there, while a rewrite that changes the
/// file's last lines holds about as many. Trimmed, because re-indenting a
/// file keeps it the same file.
pub(crate) fn covers(file: &[&str], fence: &[&str]) -> bool {
    let file: Vec<&str> = file
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect();
    let fence: Vec<&str> = fence
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect();
    let Some(((head, h), (tail, t))) = ends(&file, &fence) else {
        return false;
    };
    h <= t
        && head <= h
        && file.len() - 1 - tail <= fence.len() - 1 - t
        && 2 * common(&file, &fence) > file.len()
}

/// The anchors [`covers`] compares around: for the first and the last
/// anchor line, its index in the file and in the fence (first occurrence
/// for the first anchor, last for the last, the stricter choice).
fn ends(file: &[&str], fence: &[&str]) -> Option<((usize, usize), (usize, usize))> {
    let mut count: HashMap<&str, usize> = HashMap::new();
    for l in file {
        *count.entry(l).or_default() += 1;
    }
    let held: HashSet<&str> = fence.iter().copied().collect();
    let anchor = |k: &usize| count[file[*k]] == 1 && held.contains(file[*k]);
    let any_unique = count.values().any(|&c| c == 1);
    let (head, tail) = if any_unique {
        (
            (0..file.len()).find(anchor)?,
            (0..file.len()).rev().find(anchor)?,
        )
    } else if fence.len() >= file.len() {
        (0, file.len().checked_sub(1)?)
    } else {
        // Without a unique line, nothing tells a fence that stops early
        // from the whole file: it must be at least as long.
        return None;
    };
    let h = fence.iter().position(|l| *l == file[head])?;
    let t = fence.iter().rposition(|l| *l == file[tail])?;
    Some(((head, h), (tail, t)))
}

/// The length of a longest common subsequence (a lower bound past the
/// minimal diff's size limit, which only makes [`covers`] stricter).
fn common(a: &[&str], b: &[&str]) -> usize {
    line_ops(a, b)
        .iter()
        .map(|op| match op {
            DiffOp::Equal { len, .. } => *len,
            _ => 0,
        })
        .sum()
}

/// The refusal of content that is not evidently the whole file: a changed
/// copy of part of it, or anything else.
fn not_whole(file: &[&str], fence: &[&str], e: &Edit) -> Failure {
    let f = non_blank(file);
    let n = non_blank(fence);
    let near = !n.is_empty() && 2 * common(&f, &n) >= n.len();
    let at = e
        .origin
        .as_ref()
        .filter(|o| o.line > 0)
        .map_or(String::new(), |o| {
            format!(" (line {} of your response)", o.line)
        });
    if near {
        let span = matched_span(file, fence);
        return Failure::new(
            FailureKind::Malformed,
            format!(
                "The fence under {}{at} is not the whole file: it copies {} of it with some lines changed. A fence under a file's name replaces the whole file, so this one was not applied",
                e.path,
                span.phrase()
            ),
            "Send the change as a SEARCH/REPLACE block: the lines as they are now in SEARCH, as they should be in REPLACE. To rewrite the file, send all of it.",
        );
    }
    Failure::new(
        FailureKind::Malformed,
        format!(
            "The fence under {}{at} does not hold the whole file (the file's first and last lines, and most of its lines, are not in it in order), so it is not read as a rewrite of it",
            e.path
        ),
        "To change part of the file, send SEARCH/REPLACE blocks; to rewrite it, send the entire file. Code shown only for reference needs no file name on the line above it.",
    )
}

/// The file lines a near-copy matched: from its first common line to its
/// last.
fn matched_span(file: &[&str], fence: &[&str]) -> LineSpan {
    let mut lo = usize::MAX;
    let mut hi = 0;
    for op in line_ops(file, fence) {
        if let DiffOp::Equal { old_index, len, .. } = op {
            let nonblank = (old_index..old_index + len).filter(|&k| !file[k].is_empty());
            for k in nonblank {
                lo = lo.min(k);
                hi = hi.max(k + 1);
            }
        }
    }
    if lo == usize::MAX {
        return LineSpan::from_range(0, file.len());
    }
    LineSpan::from_range(lo, hi)
}

/// The lines that hold a word: a `}` or a blank is no sign of a repeat.
fn worded<'a>(lines: &[&'a str]) -> Vec<&'a str> {
    lines
        .iter()
        .copied()
        .filter(|l| l.chars().any(char::is_alphanumeric))
        .collect()
}

/// The refusal of an empty search on an existing, non-empty file.
pub(crate) fn create_over_existing(current: &str, content: &str, e: &Edit) -> Failure {
    let file = non_blank(&lines(current));
    let new = non_blank(&lines(content));
    let (file_w, new_w) = (worded(&file), worded(&new));
    let shared = common(&file_w, &new_w);
    let append = "To add lines at the end, search for the file's last lines and replace them with those lines followed by the new ones";
    if !new_w.is_empty() && 2 * shared > new_w.len() {
        return Failure::new(
            FailureKind::FileExists,
            format!(
                "{} already exists, and the replacement of this empty search repeats {shared} of its lines: it looks like the whole file, and adding it to the file would hold the file twice",
                e.path
            ),
            format!("To rewrite the file, send it as a whole-file write. {append}."),
        );
    }
    Failure::new(
        FailureKind::FileExists,
        format!(
            "{} already exists and is not empty, so an empty search cannot create it (mend does not read it as \"append\": models send it as often for a file they think is absent)",
            e.path
        ),
        format!("{append}. To replace the whole file, send a whole-file write."),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ls(t: &str) -> Vec<&str> {
        t.lines().map(str::trim_end).collect()
    }

    #[test]
    fn covers_needs_the_ends_and_most_lines() {
        let file = ls("import os\n\ndef a():\n    return 1\n\ndef b():\n    return 2\n");
        // A rewrite: a line changed, one added at the end.
        let rewrite = ls("import os\n\ndef a():\n    return 10\n\ndef b():\n    return 2\n\nb()\n");
        assert!(covers(&file, &rewrite));
        // The head dropped.
        assert!(!covers(
            &file,
            &ls("def a():\n    return 1\n\ndef b():\n    return 2\n")
        ));
        // The tail dropped, with or without a changed last line.
        assert!(!covers(
            &file,
            &ls("import os\n\ndef a():\n    return 1\n\ndef b():\n")
        ));
        assert!(!covers(
            &file,
            &ls("import os\n\ndef a():\n    return 1\n\ndef c():\n")
        ));
        // The ends in the wrong order.
        assert!(!covers(&file, &ls("    return 2\nimport os\n")));
        // The ends alone are not most of the file.
        assert!(!covers(&file, &ls("import os\nx = 1\n    return 2\n")));
        // Exactly half is not more than half.
        let four = ls("a1\nb2\nc3\nd4\n");
        assert!(!covers(&four, &ls("a1\nx\ny\nd4\n")));
        assert!(covers(&four, &ls("a1\nb2\ny\nd4\n")));
        // Whitespace does not count: a re-indented file is the same file.
        assert!(covers(&four, &ls("  a1  \n\tb2\t\nc3\nd4 \n")));
        // The last lines rewritten: as many lines after the last kept one.
        assert!(covers(&four, &ls("a1\nb2\nc3\nd5\n")));
        assert!(!covers(&four, &ls("a1\nb2\nc3\n")));
        // The first line rewritten, one more line before the first kept.
        assert!(covers(&four, &ls("a0\nextra\nb2\nc3\nd4\n")));
    }

    #[test]
    fn covers_skips_repeated_ends() {
        // `}` is the file's last line, but a snippet that stops at an
        // earlier `}` lacks the lines after the file's last unique line.
        let file = ls("fn a() {\n    x();\n}\n\nfn b() {\n    y();\n}\n");
        let head = ls("fn a() {\n    x();\n}\n\nfn b() {\n    z();\n");
        assert!(!covers(&file, &head));
        let snippet = ls("fn a() {\n    w();\n}\n");
        assert!(!covers(&file, &snippet));
        // The last function's body rewritten: still the whole file.
        let whole = ls("fn a() {\n    x();\n}\n\nfn b() {\n    z();\n}\n");
        assert!(covers(&file, &whole));
        // No unique line at all: the plain first and last lines.
        let same = ls("x\nx\nx\n");
        assert!(covers(&same, &ls("x\nx\nx\nx\n")));
        assert!(covers(&same, &ls("x\ny\nx\n")));
        assert!(!covers(&same, &ls("x\nx\n")), "shorter: it may stop early");
        assert!(!covers(&same, &ls("y\n")));
    }

    #[test]
    fn excerpts() {
        let file = ls("a\nb\n\nc\nd\n");
        assert_eq!(
            excerpt(&file, &ls("b\n\nc\n")),
            Some(LineSpan { start: 2, end: 4 })
        );
        assert_eq!(
            excerpt(&file, &ls("\n\nb\n\nc\n\n")),
            Some(LineSpan { start: 2, end: 4 })
        );
        assert_eq!(excerpt(&file, &ls("b\nc\n")), None, "a blank line dropped");
        assert_eq!(
            excerpt(&file, &ls("a\nb\n\nc\nd\n")),
            None,
            "the whole file"
        );
        assert_eq!(
            excerpt(&file, &ls("a\nb\n")),
            Some(LineSpan { start: 1, end: 2 })
        );
        assert_eq!(excerpt(&file, &ls("")), None);
        let repeated = ls("x\nx\ny\nx\nx\nx\nz\n");
        assert_eq!(find_run(&repeated, &ls("x\nx\nx\nz\n")), Some(3));
        assert_eq!(find_run(&repeated, &ls("x\nx\ny\n")), Some(0));
        assert_eq!(find_run(&repeated, &ls("y\nx\nx\nx\nx\n")), None);
    }
}
