//! Diff hunks between two versions of a file, each one an edit a model
//! could have proposed, with the file it should produce. Pure: the drift
//! benchmark and the property tests share it.

use similar::{ChangeTag, TextDiff};

/// A line of a hunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tag {
    /// Unchanged context: in the search and in the replacement.
    Ctx,
    /// Removed: in the search only.
    Del,
    /// Added: in the replacement only.
    Add,
}

/// One hunk of a file's change.
#[derive(Clone, Debug)]
pub struct Hunk {
    pub path: String,
    pub lines: Vec<(Tag, String)>,
    /// 0-based first old line.
    pub old_start: usize,
    /// The old file with this hunk (and only it) applied.
    pub expected: String,
}

impl Hunk {
    pub fn search(&self) -> Vec<String> {
        side(&self.lines, Tag::Add)
    }

    pub fn replace(&self) -> Vec<String> {
        side(&self.lines, Tag::Del)
    }
}

/// The lines of a hunk without those tagged `skip`.
pub fn side(lines: &[(Tag, String)], skip: Tag) -> Vec<String> {
    lines
        .iter()
        .filter(|(t, _)| *t != skip)
        .map(|(_, l)| l.clone())
        .collect()
}

/// Every hunk (three lines of context) between two versions of the file
/// at `path` that a model could send as one edit: its search is unique in
/// the old file, it is not only whitespace, and it is not huge.
pub fn hunks(path: &str, old: &str, new: &str) -> Vec<Hunk> {
    // A missing final newline is its own fixtures' subject.
    if !old.ends_with('\n') || !new.ends_with('\n') {
        return Vec::new();
    }
    let diff = TextDiff::from_lines(old, new);
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let mut out = Vec::new();
    for group in diff.grouped_ops(3) {
        let Some(first) = group.first() else {
            continue;
        };
        let old_start = first.old_range().start;
        let mut lines = Vec::new();
        for op in &group {
            for c in diff.iter_changes(op) {
                let tag = match c.tag() {
                    ChangeTag::Equal => Tag::Ctx,
                    ChangeTag::Delete => Tag::Del,
                    ChangeTag::Insert => Tag::Add,
                };
                let v = c.value();
                lines.push((tag, v.strip_suffix('\n').unwrap_or(v).to_owned()));
            }
        }
        // The old file with the hunk's lines in place of its search: by
        // construction what the hunk says, whatever ranges the diff reports.
        let old_len = lines.iter().filter(|(t, _)| *t != Tag::Add).count();
        let mut expected = String::with_capacity(old.len());
        old_lines[..old_start]
            .iter()
            .for_each(|l| expected.push_str(l));
        for (t, l) in &lines {
            if *t != Tag::Del {
                expected.push_str(l);
                expected.push('\n');
            }
        }
        old_lines[old_start + old_len..]
            .iter()
            .for_each(|l| expected.push_str(l));
        let h = Hunk {
            path: path.to_owned(),
            lines,
            old_start,
            expected,
        };
        if usable(&h, &old_lines) {
            out.push(h);
        }
    }
    out
}

fn usable(h: &Hunk, old_lines: &[&str]) -> bool {
    let search = h.search();
    let replace = h.replace();
    let trimmed = |v: &[String]| v.iter().map(|l| l.trim().to_owned()).collect::<Vec<_>>();
    if search.len() > 60 || search.iter().all(|l| l.trim().is_empty()) {
        return false;
    }
    if trimmed(&search) == trimmed(&replace) {
        return false;
    }
    // Changes to the last line's newline are their own fixtures.
    if h.lines.iter().any(|(_, l)| l.contains('\r')) || !h.expected.ends_with('\n') {
        return false;
    }
    let contents: Vec<&str> = old_lines
        .iter()
        .map(|l| l.strip_suffix('\n').unwrap_or(l))
        .collect();
    let m = search.len();
    let count = (0..=contents.len().saturating_sub(m))
        .filter(|&i| contents[i..i + m].iter().zip(&search).all(|(a, b)| *a == b))
        .count();
    count == 1
}
