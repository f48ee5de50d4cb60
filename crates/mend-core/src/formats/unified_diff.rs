//! Unified diffs: git-style and plain.
//!
//! # Grammar
//!
//! ```text
//! diff     := { file }
//! file     := [ "diff --git a/" old " b/" new { extended-header } ]
//!             [ "--- " old-path "+++ " new-path ]
//!             { hunk }
//! extended := "old mode " m | "new mode " m | "new file mode " m
//!           | "deleted file mode " m | "rename from " p | "rename to " p
//!           | "similarity index " n | "index " …
//! hunk     := "@@ -" a [ "," b ] " +" c [ "," d ] " @@" [ section ]
//!             { " " line | "-" line | "+" line | "\ No newline at end of file" }
//! ```
//!
//! `/dev/null` as the old path creates the file, as the new path deletes
//! it. Each hunk becomes one edit: context and `-` lines are the search,
//! context and `+` lines the replacement. Line numbers are only a start-line
//! hint: hunks are located with the ladder, and the counts are recomputed
//! from the lines. A hunk's `-` lines must match the file (up to whitespace
//! and Unicode folding) even when the hunk was located by similarity: aider's
//! udiff applier reports success there, mend refuses. Hunks climb the whole
//! ladder, similarity and elided context (`// ... existing code ...`)
//! included; under similarity a removed line may differ from the file's by
//! a slip of at most two characters.
//!
//! # Tolerated deviations
//!
//! - aider's `@@ ... @@` (and bare `@@ @@`) hunk headers without numbers.
//! - Wrong counts: a hunk ends at the first line that is not a hunk line.
//!   Counts are only used to read a `--- ` line inside a hunk as a removed
//!   `-- ` line while the hunk still expects removed lines.
//! - A blank line inside a hunk is an empty context line; blank lines at a
//!   hunk's end are separators.
//! - `a/` and `b/` prefixes are stripped in git diffs (and in plain diffs
//!   when both sides carry them); a tab and timestamp after a path are
//!   ignored.
//! - A diff inside a ```` ```diff ```` fence.
//! - Line numbers pasted after the `+` (`+3→    x()`, `+  12 | y`): a
//!   diff's own numbers live in its `@@` headers, so a number after a
//!   `+` is never diff syntax. The added lines are the edit's new side
//!   like any replacement, and lose such prefixes under the rule of every
//!   format (`normalize::new_side_numbers`): numbered at their place in
//!   the new file, or every line counting up; numbers that may be content
//!   are written as they are, or refused.

use super::block::{BlockParser, Feed, PartialBlock, malformed};
use super::event::{Entry, Event};
use super::format::Format;
use crate::edit::{Edit, EditOp, Hints, Origin, Replace, Target};

/// The name used in reports.
pub const NAME: &str = Format::UnifiedDiff.name();

#[derive(Default)]
struct Hunk {
    line: usize,
    old_start: usize,
    old_count: Option<usize>,
    new_count: Option<usize>,
    body: Vec<(char, String)>,
    /// Trailing blank lines seen but not yet known to belong to the hunk.
    blanks: usize,
    old_no_newline: bool,
    new_no_newline: bool,
}

impl Hunk {
    fn counted(&self, kind: char) -> usize {
        self.body
            .iter()
            .filter(|(k, _)| *k == kind || *k == ' ')
            .count()
    }

    /// Whether the header's old count still expects lines.
    fn expects_old(&self) -> bool {
        self.old_count.is_some_and(|c| self.counted('-') < c)
    }
}

#[derive(Default)]
struct FilePatch {
    start: usize,
    git: bool,
    old: Option<String>,
    new: Option<String>,
    rename_from: Option<String>,
    rename_to: Option<String>,
    old_mode: Option<String>,
    new_mode: Option<String>,
    created: bool,
    deleted: bool,
    hunks: Vec<Hunk>,
    text: Vec<String>,
    error: Option<(usize, String)>,
}

/// A diff being read: one or more file sections.
pub(crate) struct Block {
    open: usize,
    file: FilePatch,
    lines: usize,
    /// A line inside a hunk that is no hunk line, held until the next
    /// line says whether the diff ended there or was hard-wrapped.
    held: Option<(usize, String)>,
}

fn clean_path(raw: &str, prefix: &str, strip: bool) -> Option<String> {
    let p = raw.split('\t').next().unwrap_or(raw).trim();
    let p = p.trim_matches('"');
    if p == "/dev/null" {
        return None;
    }
    let p = if strip {
        p.strip_prefix(prefix).unwrap_or(p)
    } else {
        p
    };
    Some(p.to_owned())
}

/// Whether a hunk header has no numbers: `@@ @@`, `@@ ... @@`, either
/// followed by the section heading git prints (`@@ ... @@ def f():`).
fn numberless(line: &str) -> bool {
    let rest = line
        .trim_end()
        .strip_prefix("@@")
        .unwrap_or("")
        .trim_start();
    let rest = rest.strip_prefix("...").unwrap_or(rest).trim_start();
    rest.starts_with("@@")
}

/// Parses `@@ -a,b +c,d @@`; `None` for aider's number-less headers.
fn hunk_header(line: &str) -> Option<(usize, Option<usize>, Option<usize>)> {
    let rest = line.strip_prefix("@@")?.trim_start();
    let rest = rest.strip_prefix('-')?;
    let (old, rest) = rest.split_once(' ')?;
    let new = rest
        .trim_start()
        .strip_prefix('+')?
        .split_whitespace()
        .next()?;
    let parse = |s: &str| -> Option<(usize, Option<usize>)> {
        match s.split_once(',') {
            Some((a, b)) => Some((a.parse().ok()?, Some(b.parse().ok()?))),
            None => Some((s.parse().ok()?, None)),
        }
    };
    let (a, b) = parse(old)?;
    let (_, d) = parse(new)?;
    Some((a, Some(b.unwrap_or(1)), Some(d.unwrap_or(1))))
}

impl Hunk {
    /// The hunk's old lines (context and `-`) and new lines (context and
    /// `+`).
    fn sides(&self) -> (Vec<String>, Vec<String>) {
        let side = |skip: char| -> Vec<String> {
            self.body
                .iter()
                .filter(|(k, _)| *k != skip)
                .map(|(_, l)| l.clone())
                .collect()
        };
        (side('+'), side('-'))
    }
}

impl Block {
    /// Starts at a `diff --git a/x b/y` line.
    pub(crate) fn from_git(n: usize, line: &str) -> Self {
        let mut b = Block {
            open: n,
            file: FilePatch::default(),
            lines: 0,
            held: None,
        };
        b.begin_git(n, line);
        b
    }

    /// Starts at a `--- ` line followed by a `+++ ` line.
    pub(crate) fn from_headers(pn: usize, minus: &str, n: usize, plus: &str) -> Self {
        let mut b = Block {
            open: pn,
            file: FilePatch {
                start: pn,
                ..FilePatch::default()
            },
            lines: 0,
            held: None,
        };
        b.file.text.push(minus.to_owned());
        b.set_paths(minus, plus);
        b.file.text.push(plus.to_owned());
        let _ = n;
        b
    }

    fn begin_git(&mut self, n: usize, line: &str) {
        self.file = FilePatch {
            start: n,
            git: true,
            ..FilePatch::default()
        };
        self.file.text.push(line.to_owned());
        let rest = line.trim_start_matches("diff --git ").trim();
        if let Some((a, b)) = rest.split_once(" b/") {
            self.file.old = clean_path(a, "a/", true);
            self.file.new = clean_path(&format!("b/{b}"), "b/", true);
        }
    }

    fn set_paths(&mut self, minus: &str, plus: &str) {
        let old_raw = &minus[4..];
        let new_raw = &plus[4..];
        let side = |raw: &str, prefix: &str| {
            let r = raw.trim_start();
            r.starts_with(prefix) || r.starts_with("/dev/null")
        };
        let strip = self.file.git || (side(old_raw, "a/") && side(new_raw, "b/"));
        self.file.old = clean_path(old_raw, "a/", strip);
        self.file.new = clean_path(new_raw, "b/", strip);
        if self.file.old.is_none() {
            self.file.created = true;
        }
        if self.file.new.is_none() {
            self.file.deleted = true;
        }
    }

    fn in_hunk(&self) -> bool {
        !self.file.hunks.is_empty()
    }

    /// Blank lines at the end of a hunk were separators.
    fn close_hunk_blanks(&mut self) {
        if let Some(h) = self.file.hunks.last_mut() {
            h.blanks = 0;
        }
    }

    fn finish_file(&mut self) -> Vec<Event> {
        self.close_hunk_blanks();
        std::mem::take(&mut self.file).events()
    }

    /// A line that starts a file, its headers or a hunk, in any state:
    /// `diff --git`, `--- `, `+++ ` (before the first hunk) and `@@`.
    fn boundary(&mut self, n: usize, line: &str) -> Option<Feed> {
        // A `--- ` line inside a hunk that still expects removed lines is a
        // removed `-- …` line, not a header.
        let hunk_wants_minus = self.file.hunks.last().is_some_and(Hunk::expects_old);
        if line.starts_with("diff --git ") {
            let out = self.finish_file();
            self.begin_git(n, line);
            Some(Feed::More(out))
        } else if line.starts_with("--- ") && !hunk_wants_minus {
            Some(Feed::More(self.minus_header(n, line)))
        } else if line.starts_with("+++ ") && !self.in_hunk() {
            self.plus_header(line);
            Some(Feed::More(Vec::new()))
        } else if line.starts_with("@@") {
            self.hunk_header(n, line);
            Some(Feed::More(Vec::new()))
        } else {
            None
        }
    }

    /// A `--- ` line: this file's old path, or the start of the next file.
    fn minus_header(&mut self, n: usize, line: &str) -> Vec<Event> {
        let mut out = Vec::new();
        if self.in_hunk() || self.file.old.is_some() && !self.file.git {
            // The next file's headers.
            out = self.finish_file();
            self.file = FilePatch {
                start: n,
                ..FilePatch::default()
            };
        }
        self.file.text.push(line.to_owned());
        self.file.old = Some(line.to_owned());
        out
    }

    /// A `+++ ` line: the paths are known.
    fn plus_header(&mut self, line: &str) {
        let minus = self
            .file
            .text
            .iter()
            .rev()
            .find(|l| l.starts_with("--- "))
            .cloned()
            .unwrap_or_else(|| "--- /dev/null".into());
        self.set_paths(&minus, line);
        self.file.text.push(line.to_owned());
    }

    /// An `@@` line opens a hunk.
    fn hunk_header(&mut self, n: usize, line: &str) {
        self.close_hunk_blanks();
        self.file.text.push(line.to_owned());
        let mut h = Hunk {
            line: n,
            ..Hunk::default()
        };
        match hunk_header(line) {
            Some((a, b, d)) => {
                h.old_start = a;
                h.old_count = b;
                h.new_count = d;
            }
            // Aider's `@@ ... @@`, bare or with git's section heading.
            None if numberless(line) => {}
            None => {
                self.file.error.get_or_insert((
                    n,
                    format!(
                        "`{}` is not a hunk header; expected `@@ -a,b +c,d @@`",
                        line.trim()
                    ),
                ));
            }
        }
        self.file.hunks.push(h);
    }

    /// Between a file's first line and its first hunk: git's extended
    /// headers; anything else ends the diff.
    fn in_headers(&mut self, n: usize, line: &str) -> Feed {
        let t = line.trim();
        if let Some(h) = EXTENDED_HEADERS.iter().find(|h| line.starts_with(**h)) {
            self.file.text.push(line.to_owned());
            self.file.extended_header(n, h, line[h.len()..].trim());
            return Feed::More(Vec::new());
        }
        if t.starts_with("Binary files ") || t == "GIT binary patch" {
            self.file.text.push(line.to_owned());
            self.file.error.get_or_insert((
                n,
                "binary patches are not supported; mend edits text files".into(),
            ));
            return Feed::More(Vec::new());
        }
        if self.file.git && t.is_empty() {
            return Feed::More(Vec::new());
        }
        // Not a diff line: the diff is over.
        Feed::Reject(self.finish_file())
    }

    /// Inside a hunk: context, removed and added lines, `\ No newline`,
    /// and blank lines that may be empty context; anything else ends the
    /// diff.
    fn in_hunk_body(&mut self, n: usize, line: &str) -> Feed {
        let hunk = self.file.hunks.last_mut().expect("in a hunk");
        match line.chars().next() {
            Some(c @ (' ' | '-' | '+')) => {
                for _ in 0..hunk.blanks {
                    hunk.body.push((' ', String::new()));
                }
                hunk.blanks = 0;
                hunk.body.push((c, line[1..].to_owned()));
                self.file.text.push(line.to_owned());
            }
            Some('\\') => {
                match hunk.body.last().map(|(k, _)| *k) {
                    Some('-') => hunk.old_no_newline = true,
                    Some('+') => hunk.new_no_newline = true,
                    _ => {
                        hunk.old_no_newline = true;
                        hunk.new_no_newline = true;
                    }
                }
                self.file.text.push(line.to_owned());
            }
            None => {
                hunk.blanks += 1;
                self.file.text.push(String::new());
            }
            // A closing fence ends the diff; any other line may be the
            // tail of a hard-wrapped line, which only the next line tells.
            Some('`' | '~') => return Feed::Reject(self.finish_file()),
            Some(_) => self.held = Some((n, line.to_owned())),
        }
        Feed::More(Vec::new())
    }

    /// The line after a held one: the diff goes on after it (the held
    /// line was the tail of a hard-wrapped line, and the diff cannot be
    /// read as sent), or it ended at the held line (`Some`: both are read
    /// again as prose). A hunk line counts as going on only while the
    /// hunk's header still expects lines, or has no numbers: after a
    /// complete hunk, a `- item` is prose.
    fn after_held(&mut self, (hn, held): (usize, String), line: &str) -> Option<Feed> {
        let hunk = self.file.hunks.last()?;
        let unfinished = match (hunk.old_count, hunk.new_count) {
            (Some(o), Some(d)) => hunk.counted('-') < o || hunk.counted('+') < d,
            _ => true,
        };
        let body = matches!(line.chars().next(), Some(' ' | '+' | '-'))
            && !line.starts_with("--- ")
            && !line.starts_with("+++ ");
        if line.starts_with("@@") || (body && unfinished) {
            self.file.error.get_or_insert((
                hn,
                format!(
                    "`{}` is not a diff line, yet the diff goes on after it: the diff looks hard-wrapped, and reading it would drop the lines after the break; send every line of the diff whole, starting with ` `, `-` or `+`",
                    held.trim()
                ),
            ));
            self.file.text.push(held);
            return None;
        }
        Some(Feed::RejectHeld(self.finish_file(), vec![(hn, held)]))
    }

    /// The held line, when the input ends right after it: prose to read
    /// again.
    pub(crate) fn take_held(&mut self) -> Vec<(usize, String)> {
        self.held.take().into_iter().collect()
    }
}

/// git's extended header lines, matched by prefix.
const EXTENDED_HEADERS: [&str; 11] = [
    "old mode ",
    "new mode ",
    "new file mode ",
    "deleted file mode ",
    "rename from ",
    "rename to ",
    "similarity index ",
    "dissimilarity index ",
    "index ",
    "copy from ",
    "copy to ",
];

impl BlockParser for Block {
    fn partial(&self) -> PartialBlock {
        PartialBlock {
            format: NAME,
            path: self.file.new.clone().or_else(|| self.file.old.clone()),
            start_line: self.open,
            lines: self.lines,
        }
    }

    fn feed(&mut self, n: usize, line: &str) -> Feed {
        self.lines += 1;
        if let Some(held) = self.held.take()
            && let Some(feed) = self.after_held(held, line)
        {
            return feed;
        }
        if let Some(feed) = self.boundary(n, line) {
            feed
        } else if self.in_hunk() {
            self.in_hunk_body(n, line)
        } else {
            self.in_headers(n, line)
        }
    }

    fn eof(mut self, _n: usize) -> Vec<Event> {
        self.finish_file()
    }
}

impl FilePatch {
    /// Records an extended header's value.
    fn extended_header(&mut self, n: usize, header: &str, value: &str) {
        let v = value.to_owned();
        match header {
            "old mode " => self.old_mode = Some(v),
            "new mode " => self.new_mode = Some(v),
            "new file mode " => {
                self.created = true;
                self.new_mode = Some(v);
            }
            "deleted file mode " => self.deleted = true,
            "rename from " => self.rename_from = Some(v),
            "rename to " => self.rename_to = Some(v),
            "copy from " | "copy to " => {
                self.error.get_or_insert((
                    n,
                    "copies are not supported; send the new file as an added file".into(),
                ));
            }
            _ => {}
        }
    }

    fn origin(&self, line: usize) -> Origin {
        Origin {
            format: Format::UnifiedDiff.into(),
            line,
            text: self.text.join("\n").into(),
        }
    }

    fn edit(&self, path: &str, op: EditOp, line: usize) -> Event {
        Event::Entry(Entry::Edit(Edit {
            path: path.to_owned(),
            op,
            origin: Some(self.origin(line)),
        }))
    }

    fn malformed(&self, line: usize, path: Option<String>, message: String) -> Event {
        malformed(
            Format::UnifiedDiff.into(),
            line,
            path,
            message,
            &self.text.join("\n"),
        )
    }

    /// The file section's edits, or why it cannot be read.
    fn events(&self) -> Vec<Event> {
        if self.text.is_empty() {
            return Vec::new();
        }
        let path = self
            .new
            .clone()
            .filter(|_| !self.deleted)
            .or_else(|| self.old.clone())
            .filter(|p| !p.starts_with("--- "));
        let Some(path) = path else {
            return vec![self.malformed(
                self.start,
                None,
                format!(
                    "line {}: this diff names no file (both sides are /dev/null or missing)",
                    self.start
                ),
            )];
        };
        if let Some((line, msg)) = &self.error {
            return vec![self.malformed(*line, Some(path), format!("line {line}: {msg}"))];
        }
        if self.deleted {
            let target = self.old.clone().unwrap_or(path);
            vec![self.edit(&target, EditOp::Delete, self.start)]
        } else if self.created {
            self.creation(&path)
        } else {
            self.modification(path)
        }
    }

    /// A created file: its content is the hunks' added lines.
    fn creation(&self, path: &str) -> Vec<Event> {
        let mut lines: Vec<&str> = Vec::new();
        let mut no_nl = false;
        for h in &self.hunks {
            lines.extend(
                h.body
                    .iter()
                    .filter(|(k, _)| *k == '+')
                    .map(|(_, l)| l.as_str()),
            );
            no_nl |= h.new_no_newline;
        }
        let mut content = lines.join("\n");
        if !lines.is_empty() && !no_nl {
            content.push('\n');
        }
        let mut out = vec![self.edit(path, EditOp::Create { content }, self.start)];
        if let Some(m) = &self.new_mode {
            let executable = m.ends_with("755");
            out.push(self.edit(path, EditOp::SetMode { executable }, self.start));
        }
        out
    }

    /// An existing file: one replacement per hunk, then a mode change and
    /// a rename.
    fn modification(&self, path: String) -> Vec<Event> {
        // Content edits apply to the file as it is now: the old path when
        // the diff renames it.
        let renamed_to = self.rename_to.clone().or_else(|| {
            (self.git && self.old != self.new)
                .then(|| self.new.clone())
                .flatten()
        });
        let target = if renamed_to.is_some() {
            self.rename_from
                .clone()
                .or_else(|| self.old.clone())
                .unwrap_or(path)
        } else {
            path
        };
        let sides: Vec<(Vec<String>, Vec<String>)> = self.hunks.iter().map(Hunk::sides).collect();
        let mut out: Vec<Event> = (0..self.hunks.len())
            .map(|i| self.hunk_edit(&target, &sides, i))
            .collect();
        if let (Some(old), Some(new)) = (&self.old_mode, &self.new_mode)
            && old != new
        {
            let executable = new.ends_with("755");
            out.push(self.edit(&target, EditOp::SetMode { executable }, self.start));
        }
        if let Some(to) = renamed_to {
            out.push(self.edit(&target, EditOp::Rename { to }, self.start));
        }
        out
    }

    /// Hunk `i` as a replacement located by its old lines (`sides[i]`),
    /// told apart from identical hunks by its position among them.
    fn hunk_edit(&self, target: &str, sides: &[(Vec<String>, Vec<String>)], i: usize) -> Event {
        let h = &self.hunks[i];
        let (search, replace) = sides[i].clone();
        let twins: Vec<usize> = (0..sides.len()).filter(|&j| sides[j] == sides[i]).collect();
        let identical = (twins.len() > 1)
            .then(|| (twins.iter().position(|&j| j == i).unwrap_or(0), twins.len()));
        if search.is_empty() {
            return self.malformed(
                h.line,
                Some(target.to_owned()),
                format!(
                    "line {}: this hunk only adds lines and has no context line, so it cannot be located; include the unchanged line above or below the addition",
                    h.line
                ),
            );
        }
        let final_newline = if h.new_no_newline {
            Some(false)
        } else if h.old_no_newline {
            Some(true)
        } else {
            None
        };
        // `\ No newline at end of file` says the hunk ends the file.
        let at_eof = h.old_no_newline || h.new_no_newline;
        let hints = Hints {
            start_line: (h.old_start > 0).then_some(h.old_start),
            identical,
            exact_removals: true,
            final_newline,
            at_eof,
            ..Hints::default()
        };
        let op = EditOp::Replace(Replace {
            target: Target::Lines { search, replace },
            replace_all: false,
            hints,
        });
        self.edit(target, op, h.line)
    }
}

#[cfg(test)]
mod tests {
    use crate::formats::{Entry, Format, parse};
    use crate::{Edit, EditOp, Target};

    fn edits(t: &str) -> Vec<Edit> {
        parse(t, Format::UnifiedDiff)
            .unwrap()
            .entries
            .into_iter()
            .map(|e| match e {
                Entry::Edit(e) => e,
                Entry::Malformed(m) => panic!("{}", m.message),
            })
            .collect()
    }

    #[test]
    fn git_diff_with_rename_and_mode() {
        let t = "diff --git a/old.sh b/new.sh\nold mode 100644\nnew mode 100755\nsimilarity index 90%\nrename from old.sh\nrename to new.sh\n--- a/old.sh\n+++ b/new.sh\n@@ -1,2 +1,2 @@\n #!/bin/sh\n-echo hi\n+echo bye\n";
        let e = edits(t);
        assert_eq!(e[0].path, "old.sh");
        assert!(matches!(&e[0].op, EditOp::Replace(r) if r.hints.start_line == Some(1)));
        assert!(matches!(&e[1].op, EditOp::SetMode { executable: true }));
        assert!(matches!(&e[2].op, EditOp::Rename { to } if to == "new.sh"));
    }

    #[test]
    fn dev_null_and_no_newline() {
        let t = "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n\\ No newline at end of file\n--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n";
        let e = edits(t);
        assert!(matches!(&e[0].op, EditOp::Create { content } if content == "a\nb"));
        assert_eq!(e[1].path, "gone.txt");
        assert!(matches!(&e[1].op, EditOp::Delete));
    }

    #[test]
    fn aider_hunks_and_prose_after() {
        let t = "```diff\n--- src/a.py\n+++ src/a.py\n@@ ... @@\n def f():\n-    return 1\n+    return 2\n```\nDone!\n";
        let e = parse(t, Format::Auto).unwrap();
        let edits: Vec<&Edit> = e.edits().collect();
        assert_eq!(edits.len(), 1);
        let EditOp::Replace(r) = &edits[0].op else {
            panic!()
        };
        assert!(matches!(&r.target, Target::Lines { search, .. } if search.len() == 2));
        assert_eq!(r.hints.start_line, None);
    }

    #[test]
    fn minus_minus_line_inside_hunk() {
        let t = "--- a/x.sql\n+++ b/x.sql\n@@ -1,2 +1,1 @@\n--- a comment\n keep\n";
        let e = edits(t);
        let EditOp::Replace(r) = &e[0].op else {
            panic!()
        };
        assert!(
            matches!(&r.target, Target::Lines { search, replace } if search.len() == 2 && replace.len() == 1)
        );
    }
}
