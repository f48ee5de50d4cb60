//! A byte-exact view of a text file as lines.
//!
//! [`Document`] splits a text into lines without losing a byte: each line
//! keeps its own ending (`\n`, `\r\n` or none), the byte-order mark is
//! remembered, and every line knows where it starts in the original. The
//! locator compares line *contents*; the planner splices byte ranges of the
//! original, so bytes no edit touches are never re-encoded.

use std::ops::Range;

/// The UTF-8 byte-order mark as it appears at the start of a `&str`.
pub const BOM: char = '\u{feff}';

/// One line of a [`Document`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line<'a> {
    /// The line without its ending.
    pub content: &'a str,
    /// `"\n"`, `"\r\n"`, or `""` for a last line without a newline.
    pub ending: &'a str,
    /// Byte offset of the line's first byte in the full text.
    pub start: usize,
}

impl Line<'_> {
    /// Byte offset just past the line's ending.
    pub fn end(&self) -> usize {
        self.start + self.content.len() + self.ending.len()
    }
}

/// A text split into lines, with its byte-order mark and line-ending facts.
#[derive(Debug, Clone)]
pub struct Document<'a> {
    text: &'a str,
    bom: bool,
    lines: Vec<Line<'a>>,
}

impl<'a> Document<'a> {
    /// Splits `text` into lines. A leading U+FEFF is treated as a BOM and is
    /// not part of the first line.
    pub fn new(text: &'a str) -> Self {
        let bom = text.starts_with(BOM);
        let body_start = if bom { BOM.len_utf8() } else { 0 };
        let mut lines = Vec::new();
        let mut pos = body_start;
        let bytes = text.as_bytes();
        while pos < text.len() {
            let (content_end, next) = match memchr_newline(&bytes[pos..]) {
                Some(i) => {
                    let nl = pos + i;
                    if nl > pos && bytes[nl - 1] == b'\r' {
                        (nl - 1, nl + 1)
                    } else {
                        (nl, nl + 1)
                    }
                }
                None => (text.len(), text.len()),
            };
            lines.push(Line {
                content: &text[pos..content_end],
                ending: &text[content_end..next],
                start: pos,
            });
            pos = next;
        }
        Document { text, bom, lines }
    }

    /// The full original text, BOM included.
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// Whether the text starts with a byte-order mark.
    pub fn has_bom(&self) -> bool {
        self.bom
    }

    /// Byte offset where the first line starts (after the BOM).
    pub fn body_start(&self) -> usize {
        if self.bom { BOM.len_utf8() } else { 0 }
    }

    /// The lines, in order.
    pub fn lines(&self) -> &[Line<'a>] {
        &self.lines
    }

    /// Number of lines.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// Whether the text has no lines (it is empty or only a BOM).
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Line contents, for matching.
    pub fn contents(&self) -> Vec<&'a str> {
        self.lines.iter().map(|l| l.content).collect()
    }

    /// The ending most lines use: `"\r\n"` only when CRLF lines outnumber LF
    /// lines, so an ending-less file gets `"\n"`.
    pub fn dominant_ending(&self) -> &'static str {
        let crlf = self.lines.iter().filter(|l| l.ending == "\r\n").count();
        let lf = self.lines.iter().filter(|l| l.ending == "\n").count();
        if crlf > lf { "\r\n" } else { "\n" }
    }

    /// Whether the last line ends with a newline. An empty text counts as
    /// ending with one, so appending to it produces terminated lines.
    pub fn ends_with_newline(&self) -> bool {
        self.lines.last().is_none_or(|l| !l.ending.is_empty())
    }

    /// Byte range of lines `range` (line indices), endings included.
    pub fn byte_range(&self, range: Range<usize>) -> Range<usize> {
        if range.start >= self.lines.len() {
            return self.text.len()..self.text.len();
        }
        let start = self.lines[range.start].start;
        let end = if range.end == 0 {
            start
        } else {
            self.lines[range.end - 1].end()
        };
        start..end.max(start)
    }

    /// The line index containing byte `offset` (clamped to the last line).
    pub fn line_of_offset(&self, offset: usize) -> usize {
        match self.lines.binary_search_by(|l| l.start.cmp(&offset)) {
            Ok(i) => i,
            Err(0) => 0,
            Err(i) => i - 1,
        }
    }

    /// The text with every line ending turned into `\n` and no BOM, plus the
    /// offset of each line in it. Used for substring search, where a model's
    /// `\n` must match a file's `\r\n`.
    pub fn logical(&self) -> (String, Vec<usize>) {
        let mut out = String::with_capacity(self.text.len());
        let mut starts = Vec::with_capacity(self.lines.len());
        for line in &self.lines {
            starts.push(out.len());
            out.push_str(line.content);
            if !line.ending.is_empty() {
                out.push('\n');
            }
        }
        (out, starts)
    }

    /// Maps an offset in [`Document::logical`] back to the original text.
    pub fn logical_to_original(&self, logical_starts: &[usize], offset: usize) -> usize {
        let i = match logical_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(0) => 0,
            Err(i) => i - 1,
        };
        let Some(line) = self.lines.get(i) else {
            return self.text.len();
        };
        let col = offset - logical_starts[i];
        if col <= line.content.len() {
            line.start + col
        } else {
            // Just past the logical `\n`: the start of the next line.
            line.end()
        }
    }
}

fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}

/// Splits an edit's text into lines the way models mean them: `\r\n` and `\n`
/// both end a line, and one final newline does not start an empty line.
pub fn split_lines(text: &str) -> Vec<String> {
    if text.is_empty() {
        return Vec::new();
    }
    let body = text.strip_suffix('\n').unwrap_or(text);
    body.split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l).to_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_every_byte() {
        for text in [
            "",
            "a",
            "a\n",
            "a\r\nb\nc",
            "\u{feff}x\r\n",
            "\n\n",
            "a\rb\n",
        ] {
            let doc = Document::new(text);
            let mut rebuilt = String::new();
            if doc.has_bom() {
                rebuilt.push(BOM);
            }
            for l in doc.lines() {
                rebuilt.push_str(l.content);
                rebuilt.push_str(l.ending);
            }
            assert_eq!(rebuilt, text);
        }
    }

    #[test]
    fn endings_and_final_newline() {
        let doc = Document::new("a\r\nb\r\nc\n");
        assert_eq!(doc.dominant_ending(), "\r\n");
        assert!(doc.ends_with_newline());
        let doc = Document::new("a\nb");
        assert_eq!(doc.dominant_ending(), "\n");
        assert!(!doc.ends_with_newline());
        assert_eq!(doc.lines()[1].ending, "");
    }

    #[test]
    fn logical_offsets_map_back() {
        let doc = Document::new("ab\r\ncd\r\n");
        let (logical, starts) = doc.logical();
        assert_eq!(logical, "ab\ncd\n");
        assert_eq!(doc.logical_to_original(&starts, 3), 4);
        assert_eq!(doc.logical_to_original(&starts, 2), 2);
        assert_eq!(doc.logical_to_original(&starts, 6), 8);
    }

    #[test]
    fn split_lines_drops_one_final_newline() {
        assert_eq!(split_lines("a\r\nb\n"), vec!["a", "b"]);
        assert_eq!(split_lines("a\n\n"), vec!["a", ""]);
        assert!(split_lines("").is_empty());
    }
}
