//! SEARCH/REPLACE blocks: aider, Roo Code and Cline dialects.
//!
//! # Grammar
//!
//! ```text
//! response  := { prose | block }
//! block     := [path-line] [fence-open] open [hints] search divider replace close [fence-close]
//! path-line := a line naming the file, e.g. `src/app.py`, `**src/app.py**`,
//!              `` `src/app.py` ``, `File: src/app.py`, `<path>src/app.py</path>`
//! open      := "<<<<<<< SEARCH" | "------- SEARCH"          (5–9 `<`, 3–9 `-`)
//! hints     := { ":start_line:" N | ":end_line:" N } ["-------"]     (Roo)
//! divider   := "======="                                    (exactly 7 `=`)
//! close     := ">>>>>>> REPLACE" | "+++++++ REPLACE"        (5–9 `>`, 3–9 `+`)
//! ```
//!
//! Markers are whole lines; surrounding whitespace is ignored, anything else
//! on the line makes it content. The block's file is the nearest path-like
//! line above it (skipping blank lines and a fence opening, whose info
//! string may name the file, ```` ```python:src/app.py ````); inside Roo's
//! `<apply_diff>` or Cline's `<replace_in_file>` call, the call's `<path>`
//! (`tool_call.rs`); a block with no path line above it continues the
//! previous block's file, which is how aider writes several blocks for one
//! file in one fence. A first block with neither takes the one path the
//! prose just above it names (`Replace the loop in src/app.py:`), but never
//! to create a file.
//!
//! # Tolerated deviations
//!
//! - Roo's `:start_line:N` becomes a start-line hint; `:end_line:N` is
//!   accepted and ignored; the `-------` line after them is optional.
//! - Cline's `------- SEARCH` / `+++++++ REPLACE` and aider's
//!   `<<<<<<< SEARCH` / `>>>>>>> REPLACE` may be mixed; models do.
//! - A content line that would read as a marker is escaped with a backslash
//!   (`\=======`, `\<<<<<<<`, `\>>>>>>>`, `\-------`, `\+++++++`,
//!   `\:start_line:`); the backslash is removed. This is how a model edits a
//!   file that itself contains merge-conflict markers.
//! - An empty SEARCH means "create this file"; it is refused later if the
//!   file exists and is not empty, never appended (`plan/whole.rs`).
//! - A path with backslashes (`src\app.py`) is read with slashes
//!   (`path.rs`); an unquoted path with spaces only in the narrow shape
//!   `spaced_path` accepts (`docs/my notes.md`).
//!
//! # Errors
//!
//! Marker order is validated by a state machine over the three markers,
//! and each error names the line and what was expected there, e.g.
//! `line 7: found >>>>>>> REPLACE, expected =======`. A malformed block is
//! reported (and fails the response); parsing resumes after it, and a SEARCH
//! marker that interrupted a block starts the next one.

use super::block::{BlockParser, Feed, PartialBlock, malformed};
use super::event::{Entry, Event};
use super::format::Format;
use crate::edit::{Edit, EditOp, Hints, Origin, Replace, Target};

/// The name used in reports.
pub const NAME: &str = Format::SearchReplace.name();

/// The three SEARCH/REPLACE marker lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MarkerKind {
    /// `<<<<<<< SEARCH` or `------- SEARCH`.
    Open,
    /// `=======`.
    Divider,
    /// `>>>>>>> REPLACE` or `+++++++ REPLACE`.
    Close,
}

pub(crate) fn marker_kind(line: &str) -> Option<MarkerKind> {
    let t = line.trim();
    let run = |s: &str, c: char| s.chars().take_while(|&x| x == c).count();
    if t.len() == 7 && run(t, '=') == 7 {
        return Some(MarkerKind::Divider);
    }
    for (c, lo, word, m) in [
        ('<', 5, "SEARCH", MarkerKind::Open),
        ('-', 3, "SEARCH", MarkerKind::Open),
        ('>', 5, "REPLACE", MarkerKind::Close),
        ('+', 3, "REPLACE", MarkerKind::Close),
    ] {
        let n = run(t, c);
        if (lo..=9).contains(&n) {
            let rest = t[n..].trim_start();
            let rest = rest
                .strip_suffix('>')
                .or_else(|| rest.strip_suffix('<'))
                .unwrap_or(rest);
            if rest == word {
                return Some(m);
            }
        }
    }
    None
}

/// The error of a second `=======` in a block's REPLACE part.
fn second_divider(n: usize) -> String {
    format!(
        "line {n}: found =======, expected >>>>>>> REPLACE (escape a content line as \\=======)"
    )
}

/// Whether the file is prose, where a line of `=` underlines a heading.
fn prose_file(path: Option<&str>) -> bool {
    let ext = path
        .and_then(|p| p.rsplit_once('.'))
        .map(|(_, e)| e.to_ascii_lowercase());
    matches!(
        ext.as_deref(),
        Some("md" | "markdown" | "mdx" | "rst" | "txt" | "adoc" | "asciidoc" | "org")
    )
}

/// Whether a line opens a SEARCH/REPLACE block.
pub(crate) fn is_open(line: &str) -> bool {
    marker_kind(line) == Some(MarkerKind::Open)
}

fn unescape(line: &str) -> String {
    for m in [
        "\\<<<<<<<",
        "\\=======",
        "\\>>>>>>>",
        "\\-------",
        "\\+++++++",
        "\\:start_line:",
        "\\:end_line:",
    ] {
        if let Some(rest) = line.strip_prefix(m) {
            return format!("{}{rest}", &m[1..]);
        }
    }
    line.to_owned()
}

/// Extracts a file path from a line above a block, if it looks like one.
pub(crate) fn path_from_line(line: &str) -> Option<String> {
    let mut t = line.trim();
    if let Some(inner) = t
        .strip_prefix("<path>")
        .and_then(|r| r.strip_suffix("</path>"))
    {
        return non_empty(inner.trim());
    }
    // A backticked path wins: "Edit `src/a b.py`:". Code in backticks
    // (`sep.join(out)`) is skipped: it names no file.
    if let Some(p) = backticked(t).find(|p| looks_like_path(p, true) && !is_code(p)) {
        return Some(p.to_owned());
    }
    t = t.trim_start_matches('#').trim();
    for prefix in [
        "File:",
        "file:",
        "Path:",
        "path:",
        "Filename:",
        "filename:",
        "FILE:",
    ] {
        if let Some(r) = t.strip_prefix(prefix) {
            t = r.trim();
        }
    }
    let t = t
        .trim_matches(|c| c == '*' || c == '`' || c == '"' || c == '\'')
        .trim_end_matches(':')
        .trim_matches(|c| c == '*' || c == '`')
        .trim();
    looks_like_path(t, false).then(|| t.to_owned())
}

/// The one file a line of prose names: a backticked path, or a word with a
/// folder and an extension (`src/app.py`); `None` when it names none or
/// several. Read only for a first block without a path line, and never to
/// create a file: the search must then be found in the file named.
pub(crate) fn path_in_prose(line: &str) -> Option<String> {
    let mut found: Vec<String> = Vec::new();
    let mut add = |p: &str| {
        if !found.iter().any(|f| f == p) {
            found.push(p.to_owned());
        }
    };
    for token in backticked(line) {
        if looks_like_path(token, true) && !is_code(token) {
            add(token);
        }
    }
    let plain: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
    for word in plain.split_whitespace() {
        let w = word.trim_matches(|c: char| "*_\"'()[]{},;:.!?<>".contains(c));
        let ext = w.rsplit_once('.').map_or("", |(_, e)| e);
        let extension = (1..=8).contains(&ext.len())
            && ext.chars().all(|c| c.is_ascii_alphanumeric())
            && ext.chars().any(|c| c.is_ascii_alphabetic());
        if w.contains(['/', '\\']) && extension && looks_like_path(w, false) && !w.contains("://") {
            add(w);
        }
    }
    match found.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

/// The backticked spans of a line, trimmed (an unclosed one is not).
fn backticked(line: &str) -> impl Iterator<Item = &str> {
    let closed = line.matches('`').count() / 2;
    line.split('`')
        .skip(1)
        .step_by(2)
        .take(closed)
        .map(str::trim)
}

/// Whether a backticked span reads as code rather than a file name.
fn is_code(s: &str) -> bool {
    s.contains(['(', ')', '[', ']', '{', '}', '=', ',', ';', '"', '\''])
}

fn non_empty(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_owned())
}

/// Whether `s` reads as a file path: a dot, a slash or a well-known
/// extensionless name. Unquoted, a path with spaces must pass
/// [`spaced_path`].
pub(crate) fn looks_like_path(s: &str, quoted: bool) -> bool {
    if s.is_empty() || s.len() > 4096 || marker_kind(s).is_some() {
        return false;
    }
    if s.chars().any(char::is_control) {
        return false;
    }
    if !quoted && s.chars().any(char::is_whitespace) && !spaced_path(s) {
        return false;
    }
    // Prose rarely ends like a path; a path has a dot, a slash, or is a
    // well-known extensionless file name.
    let last = s.rsplit(['/', '\\']).next().unwrap_or(s);
    let bare_names = [
        "Makefile",
        "Dockerfile",
        "LICENSE",
        "README",
        "Gemfile",
        "Rakefile",
        "Procfile",
        "Justfile",
        "Vagrantfile",
    ];
    !s.ends_with('.')
        && !s.ends_with(',')
        && (s.contains('/') || last.contains('.') || bare_names.contains(&last))
}

/// Words that make a line with spaces prose rather than a file name.
const PROSE_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "by", "for", "from", "in", "is", "it", "now", "of", "on",
    "or", "the", "then", "this", "to", "with",
];

/// An unquoted path with spaces, alone on its line: a folder, then a file
/// name whose words (at most four, none a little word of prose like `in`
/// or `the`) end with an extension, the spaces only in the file name:
/// `docs/my notes.md`. "Update the file src/app.py" has spaces in a folder
/// name, "src/app.py is updated" no extension at its end: both are prose.
pub(crate) fn spaced_path(s: &str) -> bool {
    if s.contains("  ") || s.chars().any(|c| c.is_whitespace() && c != ' ') {
        return false;
    }
    if s.chars().any(|c| ",;:!?()[]{}<>\"'*=`".contains(c)) {
        return false;
    }
    let Some((dirs, name)) = s.rsplit_once(['/', '\\']) else {
        return false;
    };
    if dirs.is_empty() || dirs.contains(' ') || name.starts_with(' ') {
        return false;
    }
    let words: Vec<&str> = name.split(' ').collect();
    let (last, before) = words.split_last().expect("split yields one");
    let ext = last.rsplit_once('.').map_or("", |(_, e)| e);
    let extension = (1..=8).contains(&ext.len())
        && ext.chars().all(|c| c.is_ascii_alphanumeric())
        && ext.chars().any(|c| c.is_ascii_alphabetic());
    extension
        && words.len() <= 4
        && before.iter().all(|w| !w.contains('.'))
        && words
            .iter()
            .all(|w| !PROSE_WORDS.contains(&w.to_lowercase().as_str()))
}

#[derive(Debug, PartialEq, Eq)]
enum Phase {
    /// Right after the open marker: Roo's `:start_line:` and `-------`.
    Hints,
    Search,
    Replace,
}

/// The file a block names, and how it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BlockPath {
    /// A path line above it (or a fence's info string, or a tool call's
    /// `<path>`), at this line.
    Line(usize, String),
    /// The previous block's file.
    Previous(String),
    /// The one path the prose just above names, for a first block that has
    /// no path line: never used to create a file.
    Prose(usize, String),
}

/// A SEARCH/REPLACE block being read.
pub(crate) struct Block {
    open: usize,
    first_line: usize,
    path: Option<String>,
    /// The path was read from prose.
    prose: bool,
    text: Vec<String>,
    phase: Phase,
    hints: Hints,
    saw_hint: bool,
    /// A second `=======` in the REPLACE part, at this line: stray when
    /// `>>>>>>> REPLACE` follows it at once.
    stray: Option<usize>,
    search: Vec<String>,
    replace: Vec<String>,
}

impl Block {
    /// Starts a block at its open marker, for the file `path` names.
    pub(crate) fn start(n: usize, line: &str, path: Option<BlockPath>) -> Self {
        let mut text = Vec::new();
        let prose = matches!(path, Some(BlockPath::Prose(..)));
        let (first_line, path) = match path {
            Some(BlockPath::Line(pn, p) | BlockPath::Prose(pn, p)) => {
                text.push(p.clone());
                (pn, Some(p))
            }
            Some(BlockPath::Previous(p)) => (n, Some(p)),
            None => (n, None),
        };
        text.push(line.to_owned());
        Block {
            open: n,
            first_line,
            path,
            prose,
            text,
            phase: Phase::Hints,
            hints: Hints::default(),
            saw_hint: false,
            stray: None,
            search: Vec::new(),
            replace: Vec::new(),
        }
    }

    /// Right after the open marker: Roo's `:start_line:`/`:end_line:` and
    /// the `-------` under them. `None` once the search has begun.
    fn hint_line(&mut self, n: usize, line: &str) -> Option<Feed> {
        let t = line.trim();
        if let Some(num) = t.strip_prefix(":start_line:") {
            self.text.push(line.to_owned());
            match num.trim().parse::<usize>() {
                Ok(v) => self.hints.start_line = Some(v.max(1)),
                Err(_) => {
                    return Some(Feed::Done(self.fail(
                        n,
                        format!("line {n}: `{t}`: expected a line number after :start_line:"),
                    )));
                }
            }
            self.saw_hint = true;
            return Some(Feed::More(Vec::new()));
        }
        if t.starts_with(":end_line:") {
            self.text.push(line.to_owned());
            self.saw_hint = true;
            return Some(Feed::More(Vec::new()));
        }
        self.phase = Phase::Search;
        if t == "-------" && (self.saw_hint || n == self.open + 1) {
            self.text.push(line.to_owned());
            return Some(Feed::More(Vec::new()));
        }
        None
    }

    /// The search and the replacement: content lines, and the markers
    /// that move on, end or break the block.
    fn body_line(&mut self, n: usize, line: &str) -> Feed {
        let t = line.trim();
        let kind = marker_kind(line);
        if let Some(at) = self.stray.take() {
            if kind == Some(MarkerKind::Close) && !prose_file(self.path.as_deref()) {
                self.text.push(line.to_owned());
                return Feed::Done(self.finish());
            }
            return Feed::Reject(self.fail(at, second_divider(at)));
        }
        match (&self.phase, kind) {
            (Phase::Search, Some(MarkerKind::Divider)) => {
                self.text.push(line.to_owned());
                self.phase = Phase::Replace;
                Feed::More(Vec::new())
            }
            (Phase::Search, Some(MarkerKind::Open)) => Feed::Reject(self.fail(
                n,
                format!(
                    "line {n}: found {t}, expected ======= (the block opened at line {} is still in its SEARCH part)",
                    self.open
                ),
            )),
            (Phase::Search, Some(MarkerKind::Close)) => {
                self.text.push(line.to_owned());
                Feed::Done(self.fail(
                    n,
                    format!("line {n}: found {t}, expected ======= between the SEARCH and REPLACE parts"),
                ))
            }
            (Phase::Replace, Some(MarkerKind::Close)) => {
                self.text.push(line.to_owned());
                Feed::Done(self.finish())
            }
            (Phase::Replace, Some(MarkerKind::Open)) => Feed::Reject(self.fail(
                n,
                format!("line {n}: found {t}, expected >>>>>>> REPLACE"),
            )),
            // A second divider is a slip models make right before the
            // close marker (aider reads past it); anywhere else it is an
            // error, and in prose files, where seven `=` underline a
            // heading, it may be content.
            (Phase::Replace, Some(MarkerKind::Divider)) => {
                self.text.push(line.to_owned());
                self.stray = Some(n);
                Feed::More(Vec::new())
            }
            (Phase::Replace, None)
                if t.starts_with(":start_line:") || t.starts_with(":end_line:") =>
            {
                self.text.push(line.to_owned());
                Feed::Done(self.fail(
                    n,
                    format!("line {n}: line markers like :start_line: belong after <<<<<<< SEARCH, not in the REPLACE part (escape content as \\:start_line:)"),
                ))
            }
            (_, _) => {
                self.text.push(line.to_owned());
                let l = unescape(line);
                if self.phase == Phase::Replace {
                    self.replace.push(l);
                } else {
                    self.search.push(l);
                }
                Feed::More(Vec::new())
            }
        }
    }

    fn fail(&self, n: usize, message: String) -> Vec<Event> {
        vec![malformed(
            Format::SearchReplace.into(),
            n,
            self.path.clone(),
            message,
            &self.text.join("\n"),
        )]
    }

    fn finish(&mut self) -> Vec<Event> {
        let Some(path) = self.path.clone() else {
            return self.fail(
                self.open,
                format!(
                    "line {}: this SEARCH block has no file path; put the path alone on the line before the block (or before its ``` fence)",
                    self.open
                ),
            );
        };
        let search = std::mem::take(&mut self.search);
        let replace = std::mem::take(&mut self.replace);
        let empty = search.iter().all(|l| l.trim().is_empty());
        if empty && self.prose {
            return self.fail(
                self.open,
                format!(
                    "line {}: this SEARCH block would create {path}, which only the prose above it names; put the path alone on the line before the block (or before its ``` fence)",
                    self.open
                ),
            );
        }
        let op = if empty {
            let mut content = replace.join("\n");
            if !replace.is_empty() {
                content.push('\n');
            }
            EditOp::Create { content }
        } else {
            EditOp::Replace(Replace {
                target: Target::Lines { search, replace },
                replace_all: false,
                hints: std::mem::take(&mut self.hints),
            })
        };
        vec![Event::Entry(Entry::Edit(Edit {
            path,
            op,
            origin: Some(Origin {
                format: Format::SearchReplace.into(),
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
            path: self.path.clone(),
            start_line: self.first_line,
            lines: self.text.len(),
        }
    }
    fn feed(&mut self, n: usize, line: &str) -> Feed {
        if self.phase == Phase::Hints
            && let Some(feed) = self.hint_line(n, line)
        {
            return feed;
        }
        self.body_line(n, line)
    }
    fn eof(self, _n: usize) -> Vec<Event> {
        if let Some(at) = self.stray {
            return self.fail(at, second_divider(at));
        }
        let message = if self.phase == Phase::Replace {
            "unexpected end of input: expected >>>>>>> REPLACE to close this block"
        } else {
            "unexpected end of input: the block opened here has no ======= line"
        };
        self.fail(self.open, format!("line {}: {message}", self.open))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::Entry;

    /// Every SEARCH/REPLACE block of a response.
    fn parse(text: &str) -> Result<Vec<Entry>, crate::Error> {
        crate::formats::parse(text, Format::SearchReplace).map(|p| p.entries)
    }

    fn edits(t: &str) -> Vec<Edit> {
        parse(t)
            .unwrap()
            .into_iter()
            .map(|e| match e {
                Entry::Edit(e) => e,
                Entry::Malformed(m) => panic!("malformed: {}", m.message),
            })
            .collect()
    }

    fn first_error(t: &str) -> String {
        parse(t)
            .unwrap()
            .into_iter()
            .find_map(|e| match e {
                Entry::Malformed(m) => Some(m.message),
                Entry::Edit(_) => None,
            })
            .expect("a malformed block")
    }

    fn lines_of(e: &Edit) -> (Vec<String>, Vec<String>) {
        match &e.op {
            EditOp::Replace(Replace {
                target: Target::Lines { search, replace },
                ..
            }) => (search.clone(), replace.clone()),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn aider_block_with_fence() {
        let t = "Here is the change:\n\nsrc/app.py\n```python\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n```\n";
        let e = edits(t);
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].path, "src/app.py");
        assert_eq!(lines_of(&e[0]), (vec!["old".into()], vec!["new".into()]));
        assert_eq!(e[0].origin.as_ref().unwrap().line, 3);
    }

    #[test]
    fn second_block_reuses_path() {
        let t = "a.py\n```\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n\n<<<<<<< SEARCH\nz\n=======\nw\n>>>>>>> REPLACE\n```";
        let e = edits(t);
        assert_eq!(e.len(), 2);
        assert_eq!(e[1].path, "a.py");
    }

    #[test]
    fn roo_hints_and_escapes() {
        let t = "f.txt\n<<<<<<< SEARCH\n:start_line:12\n-------\n\\=======\nkeep\n=======\n\\>>>>>>> theirs\n>>>>>>> REPLACE";
        let e = edits(t);
        let EditOp::Replace(r) = &e[0].op else {
            panic!()
        };
        assert_eq!(r.hints.start_line, Some(12));
        assert_eq!(
            lines_of(&e[0]),
            (
                vec!["=======".into(), "keep".into()],
                vec![">>>>>>> theirs".into()]
            )
        );
    }

    #[test]
    fn cline_markers() {
        let t = "lib.rs\n------- SEARCH\nfn a() {}\n=======\nfn b() {}\n+++++++ REPLACE\n";
        let e = edits(t);
        assert_eq!(e[0].path, "lib.rs");
    }

    #[test]
    fn marker_order_errors() {
        let cases = [
            ("a.py\n=======\n", "line 2: found ======= before"),
            (
                "a.py\n<<<<<<< SEARCH\nx\n>>>>>>> REPLACE\n",
                "line 4: found >>>>>>> REPLACE, expected =======",
            ),
            (
                "a.py\n<<<<<<< SEARCH\nx\n=======\n=======\n",
                "line 5: found =======, expected >>>>>>> REPLACE",
            ),
            (
                "a.py\n<<<<<<< SEARCH\nx\n",
                "line 2: unexpected end of input",
            ),
            (
                "<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE",
                "line 1: this SEARCH block has no file path",
            ),
        ];
        for (input, want) in cases {
            let msg = first_error(input);
            assert!(msg.contains(want), "{input:?}: {msg}");
        }
    }

    #[test]
    fn marker_mid_line_is_content() {
        let t = "a.md\n<<<<<<< SEARCH\nx ======= y\n=======\nz\n>>>>>>> REPLACE";
        assert_eq!(lines_of(&edits(t)[0]).0, vec!["x ======= y"]);
    }

    #[test]
    fn empty_search_creates() {
        let e = edits("new.txt\n<<<<<<< SEARCH\n=======\nhello\n>>>>>>> REPLACE");
        assert_eq!(
            e[0].op,
            EditOp::Create {
                content: "hello\n".into()
            }
        );
    }

    #[test]
    fn path_lines() {
        assert_eq!(path_from_line("**src/a.py**").as_deref(), Some("src/a.py"));
        assert_eq!(
            path_from_line("`my dir/a.py`:").as_deref(),
            Some("my dir/a.py")
        );
        assert_eq!(
            path_from_line("File: lib/x.rs").as_deref(),
            Some("lib/x.rs")
        );
        assert_eq!(path_from_line("Here is the change.").as_deref(), None);
        assert_eq!(path_from_line("Makefile").as_deref(), Some("Makefile"));
    }

    #[test]
    fn paths_named_in_prose() {
        let cases = [
            (
                "Now let's fix the loop in `src/app.py`:",
                Some("src/app.py"),
            ),
            (
                "Replace `foo()` with `bar()` in `src/app.py`:",
                Some("src/app.py"),
            ),
            ("Update src/app.py as follows:", Some("src/app.py")),
            (
                "In **src\\app.py**, change the import:",
                Some("src\\app.py"),
            ),
            ("`src/app.py` calls `src/app.py`:", Some("src/app.py")),
            ("Change `a.py` and `b.py`:", None),
            ("Change src/a.py and src/b.py:", None),
            ("See https://example.com/a.html for details:", None),
            ("Change the loop, e.g. like this:", None),
            ("Change the loop:", None),
        ];
        for (line, want) in cases {
            assert_eq!(path_in_prose(line).as_deref(), want, "{line}");
        }
    }

    #[test]
    fn unquoted_paths_with_spaces() {
        for path in [
            "docs/my notes.md",
            "docs/Meeting Notes 2024.md",
            "src\\My Component.tsx",
            "a/b/c d.py",
        ] {
            assert_eq!(path_from_line(path).as_deref(), Some(path), "{path}");
        }
        assert_eq!(
            path_from_line("**docs/my notes.md**").as_deref(),
            Some("docs/my notes.md")
        );
        for prose in [
            "Update the file src/app.py",
            "src/app.py is updated",
            "src/app.py and tests/x.py",
            "src/foo is done in bar.py",
            "docs/a.md and notes.md",
            "see docs/my notes.md",
            "my notes.md",
            "docs/my notes.md.",
            "docs/my  notes.md",
            "docs/one two three four five.md",
            "docs/notes (draft).md",
        ] {
            assert_eq!(path_from_line(prose), None, "{prose}");
        }
    }

    #[test]
    fn a_second_divider_right_before_the_close_is_a_slip() {
        let t = "a.py\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n=======\n>>>>>>> REPLACE\n";
        assert_eq!(
            lines_of(&edits(t)[0]),
            (vec!["x = 1".to_owned()], vec!["x = 2".to_owned()])
        );
        // In a prose file seven `=` may underline a heading: not dropped.
        let md = t.replace("a.py", "README.md");
        assert!(first_error(&md).contains("found =======, expected >>>>>>> REPLACE"));
        // Anywhere else in the REPLACE part it is an error.
        let mid = "a.py\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n=======\ny = 3\n>>>>>>> REPLACE\n";
        assert!(first_error(mid).starts_with("line 6: found ======="));
    }
}
