//! Common-prefix edit blocks: a search whose first lines are repeated as
//! the start of the replacement, anchoring it.
//!
//! # Grammar
//!
//! ```text
//! block := path-line
//!          "««« EDIT"
//!          { line }            -- the EDIT section: anchor + old lines
//!          "═══════ REPL"
//!          { line }            -- the REPL section: anchor + new lines
//!          "»»» EDIT END"
//! ```
//!
//! The anchor is the common prefix of the two sections: the lines they
//! share at the top. The EDIT section (anchor and old lines) is located in
//! the file and replaced by the REPL section. A 100% prefix (EDIT is the
//! start of REPL) inserts lines after the anchor; a 0% prefix replaces every
//! line; an empty EDIT section creates the file.
//!
//! # Edge cases
//!
//! - The whole line before `««« EDIT` is the path, trimmed, so it may hold
//!   spaces. An empty path skips the block.
//! - Markers are whole lines (surrounding whitespace ignored); `x ═══════
//!   REPL y` is content.
//! - Inside a block, a further `««« EDIT` is content: the outer block is
//!   parsed, nested markers are text.
//! - An unclosed block, or one closed without `═══════ REPL`, is skipped and
//!   parsing continues. Skipped blocks are reported as malformed, so the
//!   response is not applied half-way.
//! - After a block fails to apply, later blocks for the same file are not
//!   tried ("previous edit to this file failed").
//!
//! # Tolerated deviations
//!
//! - 3 to 9 `═` in the separator (models miscount box-drawing characters).

use super::block::{BlockParser, Feed, PartialBlock, malformed};
use super::event::{Entry, Event};
use super::format::Format;
use crate::edit::{Edit, EditOp, Hints, Origin, Replace, Target};

/// The name used in reports.
pub const NAME: &str = Format::EditBlock.name();

/// Whether a (trimmed) line opens an edit block.
pub(crate) fn is_open(t: &str) -> bool {
    t == "««« EDIT"
}

fn is_separator(t: &str) -> bool {
    let run = t.chars().take_while(|&c| c == '═').count();
    (3..=9).contains(&run) && t.chars().skip(run).collect::<String>() == " REPL"
}

fn is_end(t: &str) -> bool {
    t == "»»» EDIT END"
}

/// An edit block being read.
pub(crate) struct Block {
    open: usize,
    first_line: usize,
    path: String,
    text: Vec<String>,
    edit: Vec<String>,
    repl: Option<Vec<String>>,
}

impl Block {
    /// Starts at `««« EDIT`; `path` is the line right above it.
    pub(crate) fn start(n: usize, path: Option<(usize, String)>) -> Self {
        let (first_line, path) = match path {
            Some((p, l)) => (p, l),
            None => (n, String::new()),
        };
        let mut text = Vec::new();
        if first_line != n {
            text.push(path.clone());
        }
        text.push("««« EDIT".to_owned());
        Block {
            open: n,
            first_line,
            path: path.trim().to_owned(),
            text,
            edit: Vec::new(),
            repl: None,
        }
    }

    fn skip(&self, n: usize, why: &str) -> Vec<Event> {
        vec![malformed(
            Format::EditBlock.into(),
            n,
            (!self.path.is_empty()).then(|| self.path.clone()),
            format!("line {n}: {why}; the block was skipped"),
            &self.text.join("\n"),
        )]
    }

    fn finish(&mut self, n: usize) -> Vec<Event> {
        if self.path.is_empty() {
            return self.skip(
                n,
                &format!(
                    "the edit block at line {} has no file path on the line before ««« EDIT",
                    self.open
                ),
            );
        }
        let edit = std::mem::take(&mut self.edit);
        let repl = self.repl.take().unwrap_or_default();
        let anchor = edit.iter().zip(&repl).take_while(|(a, b)| a == b).count();
        let op = if edit.iter().all(|l| l.trim().is_empty()) {
            let mut content = repl.join("\n");
            if !repl.is_empty() {
                content.push('\n');
            }
            EditOp::Create { content }
        } else {
            EditOp::Replace(Replace {
                target: Target::Lines {
                    search: edit,
                    replace: repl,
                },
                replace_all: false,
                hints: Hints {
                    anchor_lines: anchor,
                    ..Hints::default()
                },
            })
        };
        vec![Event::Entry(Entry::Edit(Edit {
            path: self.path.clone(),
            op,
            origin: Some(Origin {
                format: Format::EditBlock.into(),
                line: self.first_line,
                text: self.text.join("\n").into(),
            }),
        }))]
    }
}

impl BlockParser for Block {
    fn partial(&self) -> PartialBlock {
        PartialBlock {
            format: NAME,
            path: (!self.path.is_empty()).then(|| self.path.clone()),
            start_line: self.first_line,
            lines: self.text.len(),
        }
    }
    fn feed(&mut self, n: usize, line: &str) -> Feed {
        self.text.push(line.to_owned());
        let t = line.trim();
        match &mut self.repl {
            None if is_separator(t) => {
                self.repl = Some(Vec::new());
                Feed::More(Vec::new())
            }
            None if is_end(t) => Feed::Done(self.skip(
                n,
                &format!(
                    "the edit block opened at line {} has no ═══════ REPL separator",
                    self.open
                ),
            )),
            None => {
                self.edit.push(line.to_owned());
                Feed::More(Vec::new())
            }
            Some(_) if is_end(t) => Feed::Done(self.finish(n)),
            Some(repl) => {
                repl.push(line.to_owned());
                Feed::More(Vec::new())
            }
        }
    }
    fn eof(self, n: usize) -> Vec<Event> {
        self.skip(
            n,
            &format!(
                "the edit block opened at line {} is never closed with »»» EDIT END",
                self.open
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use crate::formats::{Entry, Format, parse};
    use crate::{EditOp, Target};

    fn entries(t: &str) -> Vec<Entry> {
        parse(t, Format::EditBlock)
            .map(|p| p.entries)
            .unwrap_or_default()
    }

    #[test]
    fn common_prefix_is_the_anchor() {
        let t = "src/my file.py\n««« EDIT\ndef multiply(a, b):\n    return a + b  # BUG\n═══════ REPL\ndef multiply(a, b):\n    return a * b\n»»» EDIT END\n";
        let e = entries(t);
        let Entry::Edit(e) = &e[0] else {
            panic!("{e:?}")
        };
        assert_eq!(e.path, "src/my file.py");
        let EditOp::Replace(r) = &e.op else { panic!() };
        assert_eq!(r.hints.anchor_lines, 1);
        assert!(matches!(&r.target, Target::Lines { search, .. } if search.len() == 2));
    }

    #[test]
    fn edge_cases_skip_and_continue() {
        // Empty path, missing separator, then a good block.
        let t = "\n««« EDIT\na\n═══════ REPL\nb\n»»» EDIT END\nf.txt\n««« EDIT\na\n»»» EDIT END\ng.txt\n««« EDIT\nx\n═══════ REPL\ny\n»»» EDIT END\n";
        let e = entries(t);
        assert_eq!(e.len(), 3);
        assert!(matches!(&e[0], Entry::Malformed(m) if m.message.contains("no file path")));
        assert!(matches!(&e[1], Entry::Malformed(m) if m.message.contains("no ═══════ REPL")));
        assert!(matches!(&e[2], Entry::Edit(x) if x.path == "g.txt"));
    }

    #[test]
    fn nested_and_mid_line_markers_are_content() {
        let t = "f.md\n««« EDIT\nx ═══════ REPL y\n««« EDIT\n═══════ REPL\nz\n»»» EDIT END\n";
        let e = entries(t);
        let Entry::Edit(e) = &e[0] else {
            panic!("{e:?}")
        };
        let EditOp::Replace(r) = &e.op else { panic!() };
        let Target::Lines { search, .. } = &r.target else {
            panic!()
        };
        assert_eq!(
            search,
            &vec!["x ═══════ REPL y".to_owned(), "««« EDIT".to_owned()]
        );
    }

    #[test]
    fn unclosed_block_is_skipped() {
        let e = entries("f.txt\n««« EDIT\na\n═══════ REPL\nb\n");
        assert!(matches!(&e[0], Entry::Malformed(m) if m.message.contains("never closed")));
    }
}
