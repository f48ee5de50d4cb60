//! A byte-exact view of a text file as lines.
//!
//! [`Document`] splits a text into lines without losing a byte: each line
//! keeps its own ending (`\n`, `\r\n` or none), the byte-order mark is
//! remembered, and every line knows where it starts in the original. The
//! locator compares line *contents*; the planner splices byte ranges of the
//! original, so bytes no edit touches are never re-encoded.

use std::borrow::Cow;
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
    dominant: &'static str,
}

impl<'a> Document<'a> {
    /// Splits `text` into lines. A leading U+FEFF is treated as a BOM and is
    /// not part of the first line. A lone `\r` ends a line only in a file
    /// whose line endings are mostly lone CRs (classic Mac OS); elsewhere it
    /// is content, as editors treat a stray CR inside an LF file.
    pub fn new(text: &'a str) -> Self {
        let bom = text.starts_with(BOM);
        let body_start = if bom { BOM.len_utf8() } else { 0 };
        let bytes = text.as_bytes();
        let cr_ends = cr_is_line_ending(&bytes[body_start..]);
        let mut lines = Vec::new();
        let mut pos = body_start;
        while pos < text.len() {
            let rest = &bytes[pos..];
            let hit = if cr_ends {
                memchr::memchr2(b'\n', b'\r', rest)
            } else {
                memchr::memchr(b'\n', rest)
            };
            let (content_end, next) = match hit {
                Some(i) => {
                    let at = pos + i;
                    if bytes[at] == b'\r' {
                        // Only reached for CR files: CRLF stays one ending.
                        let len = if bytes.get(at + 1) == Some(&b'\n') {
                            2
                        } else {
                            1
                        };
                        (at, at + len)
                    } else if at > pos && bytes[at - 1] == b'\r' {
                        (at - 1, at + 1)
                    } else {
                        (at, at + 1)
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
        let count = |e: &str| lines.iter().filter(|l| l.ending == e).count();
        let (lf, crlf, cr) = (count("\n"), count("\r\n"), count("\r"));
        let dominant = if crlf > lf && crlf >= cr {
            "\r\n"
        } else if cr > lf && cr > crlf {
            "\r"
        } else {
            "\n"
        };
        Document {
            text,
            bom,
            lines,
            dominant,
        }
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

    /// The ending most lines use, for new lines: `"\r\n"` or `"\r"` only
    /// when they outnumber LF lines, so an ending-less file gets `"\n"`.
    pub fn dominant_ending(&self) -> &'static str {
        self.dominant
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

/// Whether lone CRs are the file's line endings: they outnumber LFs.
fn cr_is_line_ending(bytes: &[u8]) -> bool {
    let mut lone_cr = 0usize;
    for i in memchr::memchr_iter(b'\r', bytes) {
        if bytes.get(i + 1) != Some(&b'\n') {
            lone_cr += 1;
        }
    }
    lone_cr > 0 && lone_cr > memchr::memchr_iter(b'\n', bytes).count()
}

/// The ending of a line as a `'static` string (`""` for none).
pub fn static_ending(e: &str) -> &'static str {
    match e {
        "\r\n" => "\r\n",
        "\n" => "\n",
        "\r" => "\r",
        _ => "",
    }
}

/// The first control character in `text` that would make a file binary or
/// unreadable as text (NUL, or a C0 control other than tab, line feed,
/// carriage return and form feed), if `before` does not already have it.
/// mend refuses to write such a character into a file: it is almost always
/// a model's escaping mistake, and a file with a NUL is then refused as
/// binary by every later command.
pub fn introduced_control(before: &str, text: &str) -> Option<char> {
    let bad = |c: char| c < ' ' && !matches!(c, '\t' | '\n' | '\r' | '\u{c}');
    text.chars().find(|&c| bad(c) && !before.contains(c))
}

/// A control character: C0, DEL or C1.
pub fn is_control(c: char) -> bool {
    c < ' ' || ('\u{7f}'..='\u{9f}').contains(&c)
}

/// `s` with control characters and bidirectional overrides escaped
/// (`\n`, `\u{1b}`), safe to print to a terminal or a log: a file name a
/// model or a repository chose cannot forge report lines or send escape
/// sequences.
pub fn escape_controls(s: &str) -> Cow<'_, str> {
    let unsafe_char =
        |c: char| is_control(c) || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
    if !s.chars().any(unsafe_char) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if unsafe_char(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// [`escape_controls`] for multi-line text quoted back to a reader (an
/// edit as sent, lines of a file): line breaks and tabs stay as they are,
/// every other control character is escaped.
pub fn escape_controls_in_text(s: &str) -> Cow<'_, str> {
    if !s
        .chars()
        .any(|c| is_control(c) && c != '\n' && c != '\t' && c != '\r')
    {
        return Cow::Borrowed(s);
    }
    s.split_inclusive('\n')
        .map(|line| {
            let (body, end) = match line.strip_suffix("\r\n") {
                Some(b) => (b, "\r\n"),
                None => match line.strip_suffix('\n') {
                    Some(b) => (b, "\n"),
                    None => (line, ""),
                },
            };
            let body: String = body
                .split('\t')
                .map(|part| escape_controls(part).into_owned())
                .collect::<Vec<_>>()
                .join("\t");
            body + end
        })
        .collect::<String>()
        .into()
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
    fn escapes_what_could_forge_a_line_or_drive_a_terminal() {
        assert!(matches!(escape_controls("src/café.rs"), Cow::Borrowed(_)));
        assert_eq!(
            escape_controls("ok.txt\napplied  #9 \u{1b}[2Kx\u{202e}"),
            "ok.txt\\napplied  #9 \\u{1b}[2Kx\\u{202e}"
        );
        assert_eq!(escape_controls("a\u{85}b\u{7f}"), "a\\u{85}b\\u{7f}");
        assert!(is_control('\u{9f}') && !is_control('\u{a0}') && !is_control(' '));
        assert_eq!(
            escape_controls_in_text("a\tb\r\nc\u{1b}[0m\n\u{9b}x"),
            "a\tb\r\nc\\u{1b}[0m\n\\u{9b}x"
        );
    }

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
            "a1\rb2\rc3\r",
            "x\ry\r\nz\r",
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
    fn cr_only_files() {
        let doc = Document::new("a1\rb2\rc3\r");
        assert_eq!(doc.contents(), vec!["a1", "b2", "c3"]);
        assert_eq!(doc.dominant_ending(), "\r");
        // A stray CR in an LF file is content.
        let doc = Document::new("a\rb\nc\n");
        assert_eq!(doc.contents(), vec!["a\rb", "c"]);
    }

    #[test]
    fn control_characters() {
        assert_eq!(introduced_control("a", "a\0b"), Some('\0'));
        assert_eq!(introduced_control("a\u{1b}", "\u{1b}b"), None);
        assert_eq!(introduced_control("", "tab\there\r\n"), None);
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
