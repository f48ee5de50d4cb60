//! The incremental parser behind every text format.
//!
//! Input arrives in chunks of any size. Complete lines are fed to a state
//! machine: in the idle state each line is offered to the block recognizers
//! (SEARCH/REPLACE, edit blocks, apply-patch envelopes, diffs) and to the
//! fence tracker (whole-file writes, JSON edits, shell commands); once a
//! block has started, its own parser consumes lines until the block ends.
//! Events are emitted as soon as a block is complete. Because a line is only
//! processed once its newline has arrived (or at [`StreamParser::finish`]),
//! the events never depend on how the input was split.

use std::collections::VecDeque;

use super::block::{BlockParser, Feed, PartialBlock, malformed};
use super::event::{Entry, Event, Malformed, ShellSuggestion};
use super::format::{BlockKind, Format};
use super::{
    anchored, apply_patch, edit_block, json, search_replace, str_replace, unified_diff, whole_file,
};
use crate::error::Error;

enum State {
    Idle,
    SearchReplace(search_replace::Block),
    EditBlock(edit_block::Block),
    Patch(apply_patch::Block),
    Diff(unified_diff::Block),
}

impl State {
    fn block(&self) -> Option<&dyn BlockParser> {
        match self {
            State::Idle => None,
            State::SearchReplace(b) => Some(b),
            State::EditBlock(b) => Some(b),
            State::Patch(b) => Some(b),
            State::Diff(b) => Some(b),
        }
    }

    fn block_mut(&mut self) -> Option<&mut dyn BlockParser> {
        match self {
            State::Idle => None,
            State::SearchReplace(b) => Some(b),
            State::EditBlock(b) => Some(b),
            State::Patch(b) => Some(b),
            State::Diff(b) => Some(b),
        }
    }
}

enum Recent {
    Line(usize, String),
    /// A block ended here: lines above it do not name the next block's file.
    Boundary,
}

struct Fence {
    open: usize,
    marker: String,
    lang: String,
    path: Option<(usize, String)>,
    content: Vec<String>,
    had_block: bool,
}

/// Parses a response incrementally. See the module doc.
pub struct StreamParser {
    mode: Format,
    pending: String,
    line_no: usize,
    /// `Some` once the input is known to be JSON: the whole text.
    json: Option<String>,
    /// Leading whitespace seen before auto mode could decide JSON or text.
    undecided: Option<String>,
    state: State,
    fence: Option<Fence>,
    recent: VecDeque<Recent>,
    last_sr_path: Option<String>,
    pending_minus: Option<(usize, String)>,
}

const SHELL_LANGS: &[&str] = &[
    "bash",
    "sh",
    "shell",
    "console",
    "zsh",
    "terminal",
    "shell-session",
];

impl StreamParser {
    /// A parser for `mode` ([`Format::Auto`] decides per block).
    pub fn new(mode: Format) -> Self {
        StreamParser {
            mode,
            pending: String::new(),
            line_no: 0,
            json: mode.is_json().then(String::new),
            undecided: (mode == Format::Auto).then(String::new),
            state: State::Idle,
            fence: None,
            recent: VecDeque::new(),
            last_sr_path: None,
            pending_minus: None,
        }
    }

    /// Feeds a chunk; returns the events of every block it completed.
    pub fn push(&mut self, chunk: &str) -> Vec<Event> {
        if let Some(buf) = &mut self.json {
            buf.push_str(chunk);
            return Vec::new();
        }
        let mut chunk = chunk;
        let mut replay = String::new();
        if let Some(head) = &mut self.undecided {
            match chunk.find(|c: char| !c.is_whitespace()) {
                None => {
                    head.push_str(chunk);
                    return Vec::new();
                }
                Some(i) => {
                    let first = chunk[i..].chars().next().unwrap_or(' ');
                    let mut whole = std::mem::take(head);
                    whole.push_str(chunk);
                    self.undecided = None;
                    if first == '{' || first == '[' {
                        self.json = Some(whole);
                        return Vec::new();
                    }
                    replay = whole;
                }
            }
        }
        if !replay.is_empty() {
            chunk = &replay;
        }
        // Only the unfinished last line is kept between pushes, so each
        // byte is scanned once for its line end and copied at most twice.
        let mut out = Vec::new();
        let mut rest = chunk;
        while let Some(i) = memchr::memchr(b'\n', rest.as_bytes()) {
            let piece = &rest[..i];
            rest = &rest[i + 1..];
            let line: std::borrow::Cow<'_, str> = if self.pending.is_empty() {
                std::borrow::Cow::Borrowed(piece)
            } else {
                let mut l = std::mem::take(&mut self.pending);
                l.push_str(piece);
                std::borrow::Cow::Owned(l)
            };
            let line = line.strip_suffix('\r').unwrap_or(&line);
            self.line_no += 1;
            let n = self.line_no;
            self.line(n, line, &mut out);
        }
        self.pending.push_str(rest);
        out
    }

    /// Ends the input: reads a last unterminated line, closes what is open
    /// (an unclosed block is malformed), and parses buffered JSON.
    pub fn finish(mut self) -> Result<Vec<Event>, Error> {
        if let Some(text) = self.json.take() {
            return parse_json_input(&text, self.mode);
        }
        if let Some(head) = self.undecided.take() {
            self.pending.insert_str(0, &head);
        }
        let mut out = Vec::new();
        if !self.pending.is_empty() {
            let line = std::mem::take(&mut self.pending);
            let line = line.strip_suffix('\r').unwrap_or(&line).to_owned();
            self.line_no += 1;
            let n = self.line_no;
            self.line(n, &line, &mut out);
        }
        let end = self.line_no;
        if let Some((pn, pl)) = self.pending_minus.take() {
            self.idle_plain(pn, &pl, &mut out);
        }
        match std::mem::replace(&mut self.state, State::Idle) {
            State::Idle => {}
            State::SearchReplace(b) => out.extend(b.eof(end)),
            State::EditBlock(b) => out.extend(b.eof(end)),
            State::Patch(b) => out.extend(b.eof(end)),
            State::Diff(mut b) => {
                let held = b.take_held();
                out.extend(b.eof(end));
                for (hn, h) in held {
                    self.idle(hn, &h, &mut out);
                }
            }
        }
        if let Some(f) = self.fence.take()
            && !f.had_block
            && f.path.is_some()
            && self.whole_file_candidate(&f)
        {
            let (line, path) = f.path.clone().expect("checked");
            out.push(Event::Entry(Entry::Malformed(Malformed {
                format: Format::WholeFile.into(),
                line: f.open,
                path: Some(path),
                message: format!(
                    "the fence opened at line {} is never closed, so the file's content may be cut short",
                    f.open
                ),
                text: format!("(from line {line})"),
            })));
        }
        Ok(out)
    }

    /// The block being read, if any.
    pub fn partial(&self) -> Option<PartialBlock> {
        self.state.block().map(BlockParser::partial)
    }

    fn on(&self, f: Format) -> bool {
        self.mode == Format::Auto || self.mode == f
    }

    fn line(&mut self, n: usize, line: &str, out: &mut Vec<Event>) {
        let Some(block) = self.state.block_mut() else {
            return self.idle(n, line, out);
        };
        let feed = block.feed(n, line);
        match feed {
            Feed::More(ev) => out.extend(ev),
            Feed::Done(ev) => {
                self.remember_paths(&ev);
                out.extend(ev);
                self.end_block();
            }
            Feed::Reject(ev) => {
                self.remember_paths(&ev);
                out.extend(ev);
                self.end_block();
                self.idle(n, line, out);
            }
            Feed::RejectHeld(ev, held) => {
                out.extend(ev);
                self.end_block();
                for (hn, h) in held {
                    self.idle(hn, &h, out);
                }
                self.idle(n, line, out);
            }
        }
    }

    fn remember_paths(&mut self, events: &[Event]) {
        if matches!(self.state, State::SearchReplace(_)) {
            for e in events {
                if let Event::Entry(Entry::Edit(e)) = e {
                    self.last_sr_path = Some(e.path.clone());
                }
            }
        }
    }

    fn end_block(&mut self) {
        self.state = State::Idle;
        self.recent.push_back(Recent::Boundary);
        self.trim_recent();
    }

    fn start(&mut self, state: State) {
        if let Some(f) = &mut self.fence {
            f.had_block = true;
        }
        self.state = state;
    }

    fn trim_recent(&mut self) {
        while self.recent.len() > 8 {
            self.recent.pop_front();
        }
    }

    fn idle(&mut self, n: usize, line: &str, out: &mut Vec<Event>) {
        let t = line.trim();
        if let Some((pn, pl)) = self.pending_minus.take() {
            if line.starts_with("+++ ") {
                self.start(State::Diff(unified_diff::Block::from_headers(
                    pn, &pl, n, line,
                )));
                return;
            }
            self.idle_plain(pn, &pl, out);
        }
        if let Some(f) = &self.fence
            && is_fence_close(line, &f.marker)
        {
            let f = self.fence.take().expect("checked");
            self.close_fence(&f, out);
            self.recent.push_back(Recent::Line(n, line.to_owned()));
            self.trim_recent();
            return;
        }
        if self.on(Format::SearchReplace) && search_replace::is_open(line) {
            let path = self.sr_path();
            let fallback = self.last_sr_path.clone();
            self.start(State::SearchReplace(search_replace::Block::start(
                n, line, path, fallback,
            )));
            return;
        }
        if self.on(Format::EditBlock) && edit_block::is_open(t) {
            let path = match self.recent.back() {
                Some(Recent::Line(p, l)) if *p + 1 == n => Some((*p, l.clone())),
                _ => None,
            };
            self.start(State::EditBlock(edit_block::Block::start(n, path)));
            return;
        }
        if self.on(Format::ApplyPatch) && t == "*** Begin Patch" {
            self.start(State::Patch(apply_patch::Block::start(n)));
            return;
        }
        if self.on(Format::UnifiedDiff) && line.starts_with("diff --git ") {
            self.start(State::Diff(unified_diff::Block::from_git(n, line)));
            return;
        }
        if self.on(Format::UnifiedDiff) && line.starts_with("--- ") {
            self.pending_minus = Some((n, line.to_owned()));
            return;
        }
        self.idle_plain(n, line, out);
    }

    /// A line that starts no block.
    fn idle_plain(&mut self, n: usize, line: &str, out: &mut Vec<Event>) {
        let t = line.trim();
        if self.on(Format::SearchReplace) {
            let stray = match search_replace::marker_kind(line) {
                Some(search_replace::MarkerKind::Close) => true,
                Some(search_replace::MarkerKind::Divider) => self.mode == Format::SearchReplace,
                _ => false,
            };
            if stray {
                out.push(malformed(
                    Format::SearchReplace.into(),
                    n,
                    None,
                    format!(
                        "line {n}: found {t} before <<<<<<< SEARCH; a block is <<<<<<< SEARCH, the lines to find, =======, the replacement, >>>>>>> REPLACE (escape a content line as \\{t})"
                    ),
                    line,
                ));
            }
        }
        match &mut self.fence {
            Some(f) => f.content.push(line.to_owned()),
            None => {
                if let Some((marker, lang)) = fence_open(line) {
                    let path = self.path_before_fence(n);
                    self.fence = Some(Fence {
                        open: n,
                        marker,
                        lang,
                        path,
                        content: Vec::new(),
                        had_block: false,
                    });
                } else if let Some(cmd) = t.strip_prefix("$ ")
                    && cmd.starts_with(|c: char| c.is_ascii_alphabetic())
                {
                    out.push(Event::Shell(ShellSuggestion {
                        line: n,
                        command: cmd.trim().to_owned(),
                    }));
                }
            }
        }
        self.recent.push_back(Recent::Line(n, line.to_owned()));
        self.trim_recent();
    }

    /// The file named above a SEARCH block: the nearest non-blank line,
    /// past one fence opening, unless a block ended in between. Some models
    /// put the file name in a fence of its own just before the block's
    /// fence (```` ``` ```` / `a.py` / ```` ``` ````), as aider accepts.
    fn sr_path(&self) -> Option<(usize, String)> {
        let mut fences = 0;
        let mut closed_name_fence = false;
        for r in self.recent.iter().rev() {
            match r {
                Recent::Boundary => return None,
                Recent::Line(_, l) if l.trim().is_empty() => continue,
                Recent::Line(_, l) if fence_open(l).is_some() && fences == 0 => fences += 1,
                Recent::Line(_, l) if fences == 1 && !closed_name_fence && is_bare_fence(l) => {
                    closed_name_fence = true;
                }
                Recent::Line(n, l) => {
                    return search_replace::path_from_line(l).map(|p| (*n, p));
                }
            }
        }
        None
    }

    /// The path line right above a fence (blank lines allowed between).
    fn path_before_fence(&self, n: usize) -> Option<(usize, String)> {
        for r in self.recent.iter().rev() {
            match r {
                Recent::Boundary => return None,
                Recent::Line(_, l) if l.trim().is_empty() => continue,
                Recent::Line(p, l) if n - p <= 3 => {
                    let path = if self.mode == Format::WholeFile {
                        search_replace::path_from_line(l)
                    } else {
                        whole_file::path_only(l)
                    };
                    return path.map(|p2| (*p, p2));
                }
                Recent::Line(..) => return None,
            }
        }
        None
    }

    fn whole_file_candidate(&self, f: &Fence) -> bool {
        let explicit = self.mode == Format::WholeFile;
        self.on(Format::WholeFile)
            && !SHELL_LANGS.contains(&f.lang.as_str())
            && (explicit || !matches!(f.lang.as_str(), "diff" | "patch" | "udiff" | "json"))
    }

    fn close_fence(&mut self, f: &Fence, out: &mut Vec<Event>) {
        if f.had_block {
            return;
        }
        if SHELL_LANGS.contains(&f.lang.as_str()) {
            for (k, l) in f.content.iter().enumerate() {
                let t = l.trim();
                let t = t.strip_prefix("$ ").unwrap_or(t);
                if t.is_empty() || t.starts_with('#') {
                    continue;
                }
                out.push(Event::Shell(ShellSuggestion {
                    line: f.open + 1 + k,
                    command: t.to_owned(),
                }));
            }
            return;
        }
        if f.lang == "json" && self.mode == Format::Auto {
            json_fence(f, out);
            return;
        }
        if let Some((line, path)) = &f.path
            && self.whole_file_candidate(f)
        {
            out.push(Event::Entry(Entry::Edit(whole_file::edit(
                path, *line, &f.content,
            ))));
        }
    }
}

/// A ```` ```json ```` fence in a text response: its edits, a malformed
/// entry when it reads as edit JSON but cannot be used, or nothing when it
/// is some other JSON (a config snippet in prose).
fn json_fence(f: &Fence, out: &mut Vec<Event>) {
    let text = f.content.join("\n");
    let v = match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(v) => v,
        // Broken JSON is reported only when it names edit fields: prose
        // often quotes JSON (with comments, elisions) that is no edit.
        Err(e) if names_edit_fields(&text) => {
            let message = json::syntax_message(&e, f.open);
            let path = json::path_in_broken(&text);
            out.push(malformed(BlockKind::Json, f.open, path, message, &text));
            return;
        }
        Err(_) => return,
    };
    let parsed = if anchored::matches(&v) {
        anchored::parse_value(&v)
    } else if str_replace::matches(&v) {
        str_replace::parse_value(&v)
    } else {
        return;
    };
    match parsed {
        Ok(edits) => {
            for mut e in edits {
                if let Some(o) = &mut e.origin {
                    o.line = f.open;
                }
                out.push(Event::Entry(Entry::Edit(e)));
            }
        }
        Err(e) => {
            let path = v.as_object().and_then(|o| json::field(o, json::PATH_KEYS));
            let path = path.and_then(|(_, p)| p.as_str()).map(str::to_owned);
            out.push(malformed(
                BlockKind::Json,
                f.open,
                path,
                e.to_string(),
                &text,
            ));
        }
    }
}

/// Whether text that does not parse as JSON still names the fields of an
/// edit, so that it was meant as one and its syntax error is worth reporting.
fn names_edit_fields(text: &str) -> bool {
    let fields = str_replace::OLD.iter().chain(str_replace::NEW);
    let mut fields = fields.chain(anchored::TOOLS);
    fields.any(|f| text.contains(&format!("\"{f}\"")))
}

fn parse_json_input(text: &str, mode: Format) -> Result<Vec<Event>, Error> {
    let format = match mode {
        Format::StrReplace | Format::Anchored => mode,
        _ => {
            let v = json::parse_value(text, "json")?;
            if anchored::matches(&v) {
                Format::Anchored
            } else if str_replace::matches(&v) {
                Format::StrReplace
            } else {
                return Err(Error::Undetected(
                    "the input is JSON, but neither old_string/new_string edits nor modify_file/write_file calls".into(),
                ));
            }
        }
    };
    let edits = match format {
        Format::StrReplace => str_replace::parse(text)?,
        _ => anchored::parse(text)?,
    };
    Ok(edits
        .into_iter()
        .map(|e| Event::Entry(Entry::Edit(e)))
        .collect())
}

/// A fence opening: three or more backticks or tildes, then an optional
/// info string whose first word is the language.
fn fence_open(line: &str) -> Option<(String, String)> {
    let t = line.trim_start();
    let c = t.chars().next().filter(|&c| c == '`' || c == '~')?;
    let run = t.chars().take_while(|&x| x == c).count();
    if run < 3 {
        return None;
    }
    let info = t[run..].trim();
    if c == '`' && info.contains('`') {
        return None;
    }
    let lang = info
        .split(|ch: char| ch.is_whitespace() || ch == '{' || ch == ',')
        .next()
        .unwrap_or("")
        .to_lowercase();
    Some((t[..run].to_owned(), lang))
}

// A fence line with no info string (```` ``` ```` or `~~~`).
fn is_bare_fence(line: &str) -> bool {
    fence_open(line).is_some_and(|(_, lang)| lang.is_empty())
}

fn is_fence_close(line: &str, marker: &str) -> bool {
    let t = line.trim();
    let c = marker.chars().next().unwrap_or('`');
    t.len() >= marker.len() && t.chars().all(|x| x == c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &str, mode: Format) -> Vec<Event> {
        let mut p = StreamParser::new(mode);
        let mut ev = p.push(text);
        ev.extend(p.finish().unwrap());
        ev
    }

    #[test]
    fn chunking_does_not_matter() {
        let text = "x.py\n```python\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n```\n\n```bash\n$ git add x.py\n```\n";
        let whole = all(text, Format::Auto);
        for size in 1..8 {
            let mut p = StreamParser::new(Format::Auto);
            let mut ev = Vec::new();
            let chars: Vec<char> = text.chars().collect();
            for c in chars.chunks(size) {
                ev.extend(p.push(&c.iter().collect::<String>()));
            }
            ev.extend(p.finish().unwrap());
            assert_eq!(ev, whole);
        }
        assert_eq!(whole.len(), 2);
    }

    #[test]
    fn emits_a_block_as_soon_as_it_closes() {
        let mut p = StreamParser::new(Format::Auto);
        assert!(p.push("a.py\n<<<<<<< SEARCH\nx\n=======\n").is_empty());
        assert_eq!(p.partial().unwrap().format, "search-replace");
        assert_eq!(p.push("y\n>>>>>>> REPLACE\n").len(), 1);
        assert!(p.partial().is_none());
    }

    #[test]
    fn json_fence_in_prose() {
        let text =
            "Here:\n```json\n{\"path\":\"a.py\",\"old_string\":\"x\",\"new_string\":\"y\"}\n```\n";
        let ev = all(text, Format::Auto);
        assert!(matches!(&ev[0], Event::Entry(Entry::Edit(e)) if e.path == "a.py"));
    }
}
