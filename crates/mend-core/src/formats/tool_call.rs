//! The XML tool calls Roo Code and Cline write in their responses.
//!
//! # Grammar
//!
//! ```text
//! apply-diff      := "<apply_diff>" path "<diff>" { search-replace block } "</diff>" "</apply_diff>"
//! replace-in-file := "<replace_in_file>" path "<diff>" { search-replace block } "</diff>" "</replace_in_file>"
//! write-to-file   := "<write_to_file>" path "<content>" { line } "</content>"
//!                    [ "<line_count>" N "</line_count>" ] "</write_to_file>"
//! path            := "<path>" file "</path>"
//! ```
//!
//! Each tag is a line of its own (surrounding whitespace ignored). The
//! SEARCH/REPLACE blocks of a diff are read by [`super::search_replace`]
//! (Roo's `:start_line:` hints and Cline's `------- SEARCH` markers
//! included), each taking the call's path. Roo's multi-file `apply_diff`
//! (`<args><file><path>…</path><diff><content>…`) is read the same way:
//! each `<path>` line names the file of the blocks after it.
//!
//! A `write_to_file` call is an explicit whole-file write: its content is
//! written as sent, whatever the file holds. The content is every line
//! between `<content>` and `</content>` (text on the tag lines themselves
//! included), read opaquely: fences and markers in it are the file's. A
//! `</content>` line followed by anything but `<line_count>`,
//! `</write_to_file>` or the end of the response is the file's own line,
//! and the content goes on. `<line_count>` is checked loosely, as models
//! count loosely: content well short of it (under four fifths, and five
//! lines or more) is a file the model stopped writing early, refused.
//!
//! # Errors
//!
//! A `<content>` that never closes, or a call without a `<path>` before its
//! content, is malformed.

use super::block::{BlockParser, Feed, PartialBlock, malformed};
use super::event::{Entry, Event};
use super::format::Format;
use super::whole_file;

/// A tool whose call holds edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tool {
    /// Roo's `<apply_diff>`.
    ApplyDiff,
    /// Cline's `<replace_in_file>`.
    ReplaceInFile,
    /// Roo's and Cline's `<write_to_file>`.
    WriteToFile,
}

impl Tool {
    const ALL: [Tool; 3] = [Tool::ApplyDiff, Tool::ReplaceInFile, Tool::WriteToFile];

    fn name(self) -> &'static str {
        match self {
            Tool::ApplyDiff => "apply_diff",
            Tool::ReplaceInFile => "replace_in_file",
            Tool::WriteToFile => "write_to_file",
        }
    }
}

/// A line of a tool call, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TagLine {
    /// `<apply_diff>` and the like.
    Open(Tool),
    /// `</apply_diff>` and the like.
    Close(Tool),
    /// `<path>src/app.py</path>`.
    Path(String),
    /// `<content>`, with any text after the tag on its line.
    Content(String),
}

/// Reads a tool-call tag line.
pub(crate) fn tag_line(line: &str) -> Option<TagLine> {
    let t = line.trim();
    if let Some(inner) = t
        .strip_prefix("<path>")
        .and_then(|r| r.strip_suffix("</path>"))
    {
        let p = inner.trim();
        return (!p.is_empty()).then(|| TagLine::Path(p.to_owned()));
    }
    if let Some(rest) = line.trim_start().strip_prefix("<content>") {
        return Some(TagLine::Content(rest.to_owned()));
    }
    for tool in Tool::ALL {
        let name = tool.name();
        if t.strip_prefix('<').and_then(|r| r.strip_suffix('>')) == Some(name) {
            return Some(TagLine::Open(tool));
        }
        if t.strip_prefix("</").and_then(|r| r.strip_suffix('>')) == Some(name) {
            return Some(TagLine::Close(tool));
        }
    }
    None
}

/// A call the stream is inside of: its tool, the line it opened on and the
/// file its `<path>` named.
#[derive(Debug, Clone)]
pub(crate) struct Call {
    pub(crate) tool: Tool,
    pub(crate) path: Option<(usize, String)>,
}

#[derive(Debug, PartialEq, Eq)]
enum Phase {
    Content,
    /// After a `</content>` line (`close`, whose text before the tag is
    /// the content's last line): blank lines and `<line_count>` are held in
    /// case the close was the file's own line.
    After {
        close: String,
        held: Vec<String>,
    },
}

/// A line that closes the content: its text before `</content>`.
fn closing(line: &str) -> Option<&str> {
    line.trim_end().strip_suffix("</content>")
}

/// A `write_to_file` call's content being read.
pub(crate) struct WriteTo {
    open: usize,
    path: Option<(usize, String)>,
    content: Vec<String>,
    phase: Phase,
    text: Vec<String>,
}

impl WriteTo {
    /// Starts at the `<content>` line `n`, whose text after the tag is
    /// `rest`; `path` is the call's `<path>`.
    pub(crate) fn start(n: usize, line: &str, rest: &str, path: Option<(usize, String)>) -> Self {
        let mut w = WriteTo {
            open: n,
            path,
            content: Vec::new(),
            phase: Phase::Content,
            text: vec![line.to_owned()],
        };
        if closing(rest).is_some() {
            w.phase = Phase::After {
                close: rest.to_owned(),
                held: Vec::new(),
            };
        } else if !rest.trim().is_empty() {
            w.content.push(rest.to_owned());
        }
        w
    }

    /// A line of the content, or the line that closes it.
    fn content_line(&mut self, line: &str) {
        self.text.push(line.to_owned());
        if closing(line).is_some() {
            self.phase = Phase::After {
                close: line.to_owned(),
                held: Vec::new(),
            };
        } else {
            self.content.push(line.to_owned());
        }
    }

    /// The content is complete: its last line is the text before the
    /// closing tag, if any.
    fn done(&mut self) -> Vec<Event> {
        let mut counted = None;
        if let Phase::After { close, held } = &self.phase {
            counted = held.iter().find_map(|l| line_count(l.trim()));
            if let Some(before) = closing(close).filter(|b| !b.is_empty()) {
                let before = before.to_owned();
                self.content.push(before);
            }
        }
        let text = self.text.join("\n");
        if let Some(said) = counted.filter(|&c| cut_short(self.content.len(), c)) {
            return vec![malformed(
                Format::WholeFile.into(),
                self.open,
                self.path.as_ref().map(|(_, p)| p.clone()),
                format!(
                    "line {}: this <write_to_file> call's <line_count> says {said} lines, but its <content> holds {}: the file looks cut short, and writing it would drop the rest",
                    self.open,
                    self.content.len()
                ),
                &text,
            )];
        }
        let Some((line, path)) = &self.path else {
            return vec![malformed(
                Format::WholeFile.into(),
                self.open,
                None,
                format!(
                    "line {}: this <write_to_file> call has no <path> before its <content>; put <path>file</path> first",
                    self.open
                ),
                &text,
            )];
        };
        let mut edit = whole_file::edit(path, *line, &self.content, false);
        if let Some(o) = &mut edit.origin {
            o.text = text.into();
        }
        vec![Event::Entry(Entry::Edit(edit))]
    }
}

impl BlockParser for WriteTo {
    fn feed(&mut self, _n: usize, line: &str) -> Feed {
        let t = line.trim();
        match &mut self.phase {
            Phase::Content => self.content_line(line),
            Phase::After { .. } if t == "</write_to_file>" => {
                self.text.push(line.to_owned());
                return Feed::Done(self.done());
            }
            Phase::After { held, .. } if t.is_empty() || is_line_count(t) => {
                held.push(line.to_owned());
            }
            Phase::After { close, held } => {
                // The `</content>` was the file's own line: it and what
                // was held after it are content, and the content goes on.
                self.content.push(std::mem::take(close));
                let held = std::mem::take(held);
                self.content.extend(held.iter().cloned());
                self.text.extend(held);
                self.phase = Phase::Content;
                self.content_line(line);
            }
        }
        Feed::More(Vec::new())
    }

    fn eof(mut self, n: usize) -> Vec<Event> {
        match self.phase {
            Phase::After { .. } => self.done(),
            Phase::Content => vec![malformed(
                Format::WholeFile.into(),
                self.open,
                self.path.map(|(_, p)| p),
                format!(
                    "line {}: the <content> opened here is never closed (the input ends at line {n}), so the file's content may be cut short",
                    self.open
                ),
                &self.text.join("\n"),
            )],
        }
    }

    fn partial(&self) -> PartialBlock {
        PartialBlock {
            format: whole_file::NAME,
            path: self.path.as_ref().map(|(_, p)| p.clone()),
            start_line: self.open,
            lines: self.text.len(),
        }
    }
}

fn is_line_count(t: &str) -> bool {
    line_count(t).is_some()
}

/// The number a `<line_count>N</line_count>` line gives.
fn line_count(t: &str) -> Option<usize> {
    t.strip_prefix("<line_count>")?
        .strip_suffix("</line_count>")?
        .trim()
        .parse()
        .ok()
}

/// Whether content of `have` lines is well short of the `said` lines a
/// call announced: models miscount by a line or two, a file stopped early
/// misses a large part.
fn cut_short(have: usize, said: usize) -> bool {
    // Widened: a model (or a fuzzer) may claim any count up to usize::MAX.
    let (have, said) = (have as u128, said as u128);
    said >= have + 5 && have * 5 < said * 4
}

#[cfg(test)]
mod tests {
    use crate::edit::EditOp;
    use crate::formats::{Entry, Format, parse};

    fn written(text: &str) -> Vec<(String, String)> {
        parse(text, Format::Auto)
            .unwrap()
            .entries
            .into_iter()
            .map(|e| match e {
                Entry::Edit(e) => match e.op {
                    EditOp::WriteFile { content, inferred } => {
                        assert!(!inferred, "a tool call is explicit");
                        (e.path, content)
                    }
                    other => panic!("{other:?}"),
                },
                Entry::Malformed(m) => ("malformed".into(), m.message),
            })
            .collect()
    }

    #[test]
    fn content_between_the_tags() {
        let t = "<write_to_file>\n<path>a.md</path>\n<content>\n# A\n```\nx\n```\n</content>\n<line_count>4</line_count>\n</write_to_file>\n";
        assert_eq!(
            written(t),
            vec![("a.md".into(), "# A\n```\nx\n```\n".into())]
        );
    }

    #[test]
    fn a_line_count_near_usize_max_refuses_without_overflow() {
        let t = format!(
            "<write_to_file>\n<path>a.txt</path>\n<content>\nx\n</content>\n<line_count>{}</line_count>\n</write_to_file>\n",
            usize::MAX
        );
        let got = written(&t);
        assert_eq!(got[0].0, "malformed");
        assert!(got[0].1.contains("but its <content> holds 1"), "{got:?}");
    }

    #[test]
    fn a_line_count_well_above_the_content_refuses() {
        let call = |lines: usize, said: usize| {
            let body: String = (0..lines).map(|i| format!("line {i}\n")).collect();
            format!(
                "<write_to_file>\n<path>a.txt</path>\n<content>\n{body}</content>\n<line_count>{said}</line_count>\n</write_to_file>\n"
            )
        };
        let got = written(&call(42, 92));
        assert_eq!(got[0].0, "malformed");
        assert!(
            got[0]
                .1
                .contains("says 92 lines, but its <content> holds 42")
        );
        // Models miscount by a line or two: that is written.
        for (lines, said) in [(42, 44), (20, 24), (3, 7), (100, 100), (50, 40)] {
            assert_eq!(
                written(&call(lines, said))[0].0,
                "a.txt",
                "{lines} of {said}"
            );
        }
    }

    #[test]
    fn content_on_the_tag_lines() {
        let t =
            "<write_to_file>\n<path>a.txt</path>\n<content>one\ntwo</content>\n</write_to_file>\n";
        assert_eq!(written(t), vec![("a.txt".into(), "one\ntwo\n".into())]);
        let one = "<write_to_file>\n<path>a.txt</path>\n<content>only</content>\n</write_to_file>";
        assert_eq!(written(one), vec![("a.txt".into(), "only\n".into())]);
    }

    #[test]
    fn a_close_tag_the_file_holds_is_content() {
        let t = "<write_to_file>\n<path>f.xml</path>\n<content>\n<a>\n<content>x</content>\n\n</a>\n</content>\n</write_to_file>\n";
        assert_eq!(
            written(t),
            vec![("f.xml".into(), "<a>\n<content>x</content>\n\n</a>\n".into())]
        );
    }

    #[test]
    fn the_end_of_input_closes_after_the_content() {
        let t = "<write_to_file>\n<path>a.txt</path>\n<content>\nx\n</content>\n";
        assert_eq!(written(t), vec![("a.txt".into(), "x\n".into())]);
    }

    #[test]
    fn malformed_calls() {
        let unclosed = "<write_to_file>\n<path>a.txt</path>\n<content>\nx\n";
        let got = written(unclosed);
        assert_eq!(got[0].0, "malformed");
        assert!(got[0].1.contains("never closed"), "{}", got[0].1);
        let pathless = "<write_to_file>\n<content>\nx\n</content>\n</write_to_file>\n";
        let got = written(pathless);
        assert!(got[0].1.contains("no <path>"), "{}", got[0].1);
    }

    #[test]
    fn content_outside_a_write_call_is_prose() {
        let t = "<apply_diff>\n<path>a.py</path>\n<content>\nx\n</content>\n</apply_diff>\n";
        assert!(parse(t, Format::Auto).is_err(), "no edits");
    }
}
