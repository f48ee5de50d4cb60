//! The incremental parser behind every text format.
//!
//! Input arrives in chunks of any size. Complete lines are fed to a state
//! machine: in the idle state each line is offered to the block recognizers
//! (SEARCH/REPLACE, edit blocks, apply-patch envelopes, diffs, a
//! `write_to_file` call's content) and to the fence tracker (whole-file
//! writes, JSON edits, shell commands); once a block has started, its own
//! parser consumes lines until the block ends. Events are emitted as soon
//! as a block is complete. Because a line is only processed once its
//! newline has arrived (or at [`StreamParser::finish`]), the events never
//! depend on how the input was split.
//!
//! Fences are tracked as CommonMark reads them (see `fence.rs`); a fence
//! under a path line is a whole-file write, explicit with `--format
//! whole-file`, inferred in `auto` (the planner decides from the file
//! whether it is one). Every path an edit names is read through
//! [`super::path::model_path`] (`src\app.py` is `src/app.py`).

use std::collections::VecDeque;

use super::block::{BlockParser, Feed, PartialBlock, malformed};
use super::event::{Entry, Event, Malformed, ShellSuggestion};
use super::fence::{self, Opening};
use super::format::{BlockKind, Format};
use super::path::model_path;
use super::search_replace::BlockPath;
use super::tool_call::{self, Call, TagLine, Tool};
use super::{
    anchored, apply_patch, edit_block, json, search_replace, str_replace, unified_diff, whole_file,
};
use crate::edit::EditOp;
use crate::error::Error;

enum State {
    Idle,
    SearchReplace(search_replace::Block),
    EditBlock(edit_block::Block),
    Patch(apply_patch::Block),
    Diff(unified_diff::Block),
    WriteTo(tool_call::WriteTo),
}

impl State {
    fn block(&self) -> Option<&dyn BlockParser> {
        match self {
            State::Idle => None,
            State::SearchReplace(b) => Some(b),
            State::EditBlock(b) => Some(b),
            State::Patch(b) => Some(b),
            State::Diff(b) => Some(b),
            State::WriteTo(b) => Some(b),
        }
    }

    fn block_mut(&mut self) -> Option<&mut dyn BlockParser> {
        match self {
            State::Idle => None,
            State::SearchReplace(b) => Some(b),
            State::EditBlock(b) => Some(b),
            State::Patch(b) => Some(b),
            State::Diff(b) => Some(b),
            State::WriteTo(b) => Some(b),
        }
    }
}

/// What is above a SEARCH block (see [`StreamParser::above_block`]).
enum Above {
    /// A fence opening whose info string names a path.
    Info(usize, String),
    /// The nearest line of text.
    Line(usize, String),
}

enum Recent {
    Line(usize, String),
    /// A block ended here: lines above it do not name the next block's file.
    Boundary,
}

struct Fence {
    open: usize,
    opening: Opening,
    /// The file it names: its info string's path, else the path line above.
    path: Option<(usize, String)>,
    content: Vec<String>,
    had_block: bool,
    /// Nested fences open inside it (openings with an info string whose
    /// closing line would also close it).
    depth: usize,
    /// The first line that closed a nested fence but could have closed
    /// this one: where it ends is then ambiguous.
    ambiguous: Option<usize>,
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
    /// The Roo/Cline tool call the stream is inside of.
    call: Option<Call>,
    recent: VecDeque<Recent>,
    last_sr_path: Option<String>,
    pending_minus: Option<(usize, String)>,
    /// Inside a model's reasoning (`<think>` … `</think>`): the closing
    /// tag that ends it. Drafts there are not edits.
    reasoning: Option<String>,
    /// A Markdown file's fence closed by a bare ```` ``` ````, held until the
    /// next line says whether that line closed it or opened a fence inside
    /// the file.
    closed: Option<Fence>,
    /// Whether an edit or a malformed block was emitted before the
    /// current push: a lone closing reasoning tag then says they were
    /// drafts.
    edits_seen: bool,
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
            call: None,
            recent: VecDeque::new(),
            last_sr_path: None,
            pending_minus: None,
            reasoning: None,
            closed: None,
            edits_seen: false,
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
        normalize_paths(&mut out);
        self.edits_seen |= out.iter().any(|e| matches!(e, Event::Entry(_)));
        out
    }

    /// Ends the input: reads a last unterminated line, closes what is open
    /// (an unclosed block is malformed), and parses buffered JSON.
    pub fn finish(mut self) -> Result<Vec<Event>, Error> {
        if let Some(text) = self.json.take() {
            let mut out = parse_json_input(&text, self.mode)?;
            normalize_paths(&mut out);
            return Ok(out);
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
        if let Some(f) = self.closed.take() {
            self.close_fence(&f, &mut out);
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
            State::WriteTo(b) => out.extend(b.eof(end)),
        }
        if let Some(f) = self.fence.take() {
            self.unclosed_fence(&f, &mut out);
        }
        normalize_paths(&mut out);
        Ok(out)
    }

    /// A fence still open at the end of the input: a whole-file write in it
    /// may be cut short, so it is malformed.
    fn unclosed_fence(&self, f: &Fence, out: &mut Vec<Event>) {
        if f.had_block || !self.on(Format::WholeFile) {
            return;
        }
        let Some((_, path)) = f.path.clone().filter(|_| self.whole_file_candidate(f)) else {
            return self.swallowed(f, out);
        };
        let mut message = format!(
            "the fence opened at line {} is never closed, so the file's content may be cut short",
            f.open
        );
        if let Some(at) = f.ambiguous {
            message.push_str(&format!(
                "; the fence at line {at} closed a fence nested in it, and may have been meant to close it: send the file in a longer outer fence (````), so that its own ``` lines cannot end it"
            ));
        }
        out.push(Event::Entry(Entry::Malformed(Malformed {
            format: Format::WholeFile.into(),
            line: f.open,
            text: quoted(&path, f),
            path: Some(path),
            message,
        })));
    }

    /// A fence without a file, never closed, that swallowed what reads as
    /// a whole-file block (a path line, then a fence): that write would be
    /// lost without a word, so the fence is malformed.
    fn swallowed(&self, f: &Fence, out: &mut Vec<Event>) {
        let mut lines = f
            .content
            .iter()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty());
        let mut prev: Option<(usize, &String)> = None;
        let hit = lines.find_map(|(k, l)| {
            let named = prev.and_then(|(pk, p)| whole_file::path_only(p).map(|path| (pk, path)));
            prev = Some((k, l));
            named.filter(|_| fence::open(l).is_some())
        });
        if let Some((k, path)) = hit {
            let at = f.open + 1 + k;
            out.push(malformed(
                Format::WholeFile.into(),
                at,
                Some(path),
                format!(
                    "the fence opened at line {} is never closed, so the file named at line {at} and the fence under it were read as its content, not as a whole-file write; close each fence",
                    f.open
                ),
                &f.content.join("\n"),
            ));
        }
    }

    /// The block being read, if any.
    pub fn partial(&self) -> Option<PartialBlock> {
        self.state.block().map(BlockParser::partial)
    }

    fn on(&self, f: Format) -> bool {
        self.mode == Format::Auto || self.mode == f
    }

    fn line(&mut self, n: usize, line: &str, out: &mut Vec<Event>) {
        if let Some(f) = self.closed.take() {
            self.after_markdown_close(&f, line, out);
        }
        if self.in_reasoning(line) || self.lone_reasoning_close(n, line, out) {
            return;
        }
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

    /// Whether `line` is part of a model's reasoning: from a line that
    /// opens it (`<think>`, `<thinking>`, `<reasoning>`, aider's
    /// `<thinking-content-…>`), outside any block or fence, through the
    /// line that closes it. A model drafts edits there and then sends the
    /// ones it settled on; aider drops the reasoning before reading edits.
    fn in_reasoning(&mut self, line: &str) -> bool {
        if let Some(close) = &self.reasoning {
            if line.contains(close.as_str()) {
                self.reasoning = None;
                self.recent.push_back(Recent::Boundary);
                self.trim_recent();
            }
            return true;
        }
        let quiet = matches!(self.state, State::Idle)
            && self.fence.is_none()
            && self.call.is_none()
            && self.pending_minus.is_none();
        let Some(close) = reasoning_close(line).filter(|_| quiet) else {
            return false;
        };
        let rest = &line.trim_start()[close.len() - 1..];
        if !rest.contains(close.as_str()) {
            self.reasoning = Some(close);
        }
        true
    }

    /// A closing reasoning tag (`</think>`) with no opening one: chat
    /// templates send `<think>` themselves, so a raw reply starts inside
    /// the reasoning. Every line above it was reasoning; edits read there
    /// may be drafts the model then corrected, so the response is refused
    /// rather than applied with them.
    fn lone_reasoning_close(&mut self, n: usize, line: &str, out: &mut Vec<Event>) -> bool {
        let t = line.trim();
        let quiet = matches!(self.state, State::Idle) && self.fence.is_none();
        if !quiet || !matches!(t, "</think>" | "</thinking>" | "</reasoning>") {
            return false;
        }
        self.recent.push_back(Recent::Boundary);
        self.trim_recent();
        if self.edits_seen || out.iter().any(|e| matches!(e, Event::Entry(_))) {
            let message = format!(
                "line {n} closes the model's reasoning with `{t}`, but nothing opened it: the blocks above it are reasoning, and may be drafts the model corrected below; drop everything above `{t}` and send the rest again"
            );
            out.push(malformed(BlockKind::Reasoning, n, None, message, t));
        }
        true
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
        if matches!(self.state, State::WriteTo(_)) {
            self.call = None;
        }
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
        if self.fence_closes(n, line, out) {
            return;
        }
        if self.on(Format::SearchReplace) && search_replace::is_open(line) {
            let path = self.block_path();
            self.start(State::SearchReplace(search_replace::Block::start(
                n, line, path,
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
        if self.on(Format::UnifiedDiff)
            && line.starts_with("@@")
            && let Some(path) = self.headerless_diff_path()
        {
            let (minus, plus) = (format!("--- {path}"), format!("+++ {path}"));
            self.start(State::Diff(unified_diff::Block::from_headers(
                n, &minus, n, &plus,
            )));
            return self.line(n, line, out);
        }
        if self.tool_call_line(n, line) {
            return;
        }
        self.idle_plain(n, line, out);
    }

    /// The file a hunk with no `---`/`+++` header belongs to: the path line
    /// above a `diff` fence whose first line the hunk is. Without one the
    /// fence is reported at its close ([`Self::close_fence`]).
    fn headerless_diff_path(&self) -> Option<String> {
        let f = self.fence.as_ref()?;
        let diff = matches!(f.opening.lang.as_str(), "diff" | "patch" | "udiff");
        let first = f.content.iter().all(|l| l.trim().is_empty());
        let path = f
            .opening
            .path
            .clone()
            .or_else(|| f.path.clone().map(|(_, p)| p));
        path.filter(|_| diff && first && !f.had_block)
    }

    /// Closes the open fence at `line` if it closes it; a line that closes
    /// a fence nested in it instead is content, and makes its extent
    /// ambiguous.
    fn fence_closes(&mut self, n: usize, line: &str, out: &mut Vec<Event>) -> bool {
        let Some(f) = &mut self.fence else {
            return false;
        };
        if !f.opening.closer.closes(line) {
            return false;
        }
        if f.depth > 0 {
            f.depth -= 1;
            f.ambiguous.get_or_insert(n);
            return false;
        }
        let f = self.fence.take().expect("checked");
        if self.bare_closed_markdown(&f) {
            self.closed = Some(f);
        } else {
            self.close_fence(&f, out);
        }
        self.recent.push_back(Recent::Line(n, line.to_owned()));
        self.trim_recent();
        true
    }

    /// Whether `f` is a whole file of Markdown in a fence of three
    /// backticks or tildes: there a bare fence line may close the file's
    /// fence or open a code block of the file's own, and only the line
    /// after it tells.
    fn bare_closed_markdown(&self, f: &Fence) -> bool {
        let markdown = f.path.as_ref().is_some_and(|(_, p)| {
            let ext = p.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
            matches!(ext.as_deref(), Some("md" | "markdown" | "mdx"))
        });
        let short = matches!(f.opening.closer, fence::Closer::Run { len: 3, .. });
        markdown && short && !f.had_block && self.whole_file_candidate(f)
    }

    /// The line after a Markdown file's bare closing fence: a closing fence
    /// is followed by a blank line, another fence, or the end; a line of
    /// text right under it is the first line of a code block inside the
    /// file, so the file goes on past the fence and where it ends is
    /// ambiguous: refused, never cut short.
    fn after_markdown_close(&mut self, f: &Fence, line: &str, out: &mut Vec<Event>) {
        let t = line.trim();
        if t.is_empty() || fence::open(line).is_some() {
            return self.close_fence(f, out);
        }
        let Some((_, path)) = &f.path else {
            return;
        };
        out.push(malformed(
            Format::WholeFile.into(),
            f.open,
            Some(path.clone()),
            format!(
                "the fence opened at line {} ends at a ``` line followed at once by `{}`: that line may instead open a code block inside the file, so where the file ends is ambiguous; send the file in a longer outer fence (````), so that its own ``` lines cannot end it",
                f.open,
                crate::text::escape_controls(t)
            ),
            &quoted(path, f),
        ));
    }

    /// Roo's and Cline's tool-call tags (see `tool_call.rs`): a call opens
    /// and closes, its `<path>` names the file of what follows, and a
    /// `write_to_file` call's `<content>` starts a block.
    fn tool_call_line(&mut self, n: usize, line: &str) -> bool {
        let Some(tag) = tool_call::tag_line(line) else {
            return false;
        };
        match tag {
            TagLine::Open(tool) => {
                self.call = Some(Call { tool, path: None });
                false
            }
            TagLine::Close(tool) => {
                if self.call.as_ref().is_some_and(|c| c.tool == tool) {
                    self.call = None;
                }
                false
            }
            TagLine::Path(p) => {
                if let Some(c) = &mut self.call {
                    c.path = Some((n, p));
                }
                false
            }
            TagLine::Content(rest) => {
                let Some(call) = &self.call else {
                    return false;
                };
                // Inside a fence under a file's name, the lines are that
                // file's (a document about these tools), not a call.
                let in_file = self.fence.as_ref().is_some_and(|f| f.path.is_some());
                if call.tool != Tool::WriteToFile || !self.on(Format::WholeFile) || in_file {
                    return false;
                }
                let path = call.path.clone();
                self.start(State::WriteTo(tool_call::WriteTo::start(
                    n, line, &rest, path,
                )));
                true
            }
        }
    }

    /// The path of the `apply_diff` or `replace_in_file` call the stream is
    /// inside of.
    fn call_path(&self) -> Option<(usize, String)> {
        self.call
            .as_ref()
            .filter(|c| c.tool != Tool::WriteToFile)
            .and_then(|c| c.path.clone())
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
            Some(f) => {
                if f.opening.closer.nests(line) {
                    f.depth += 1;
                }
                f.content.push(line.to_owned());
            }
            None => {
                if let Some(opening) = fence::open(line) {
                    let path = match &opening.path {
                        Some(p) => Some((n, p.clone())),
                        None => self.path_before_fence(n),
                    };
                    self.fence = Some(Fence {
                        open: n,
                        opening,
                        path,
                        content: Vec::new(),
                        had_block: false,
                        depth: 0,
                        ambiguous: None,
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

    /// The file of a SEARCH block: the path line above it, else the path
    /// of the tool call it is in, else the previous block's file, else the
    /// one path the prose just above it names.
    fn block_path(&self) -> Option<BlockPath> {
        let above = self.above_block();
        let line = match &above {
            Some(Above::Info(n, p)) => Some((*n, p.clone())),
            Some(Above::Line(n, l)) => search_replace::path_from_line(l).map(|p| (*n, p)),
            None => None,
        };
        if let Some((n, p)) = line.or_else(|| self.call_path()) {
            return Some(BlockPath::Line(n, p));
        }
        if let Some(p) = &self.last_sr_path {
            return Some(BlockPath::Previous(p.clone()));
        }
        match above {
            Some(Above::Line(n, l)) => {
                search_replace::path_in_prose(&l).map(|p| BlockPath::Prose(n, p))
            }
            _ => None,
        }
    }

    /// What names the file above a SEARCH block: the nearest non-blank
    /// line, past one fence opening (whose info string may name the file),
    /// unless a block ended in between. Some models put the file name in a
    /// fence of its own just before the block's fence (```` ``` ```` /
    /// `a.py` / ```` ``` ````), as aider accepts.
    fn above_block(&self) -> Option<Above> {
        let mut fences = 0;
        let mut closed_name_fence = false;
        for r in self.recent.iter().rev() {
            match r {
                Recent::Boundary => return None,
                Recent::Line(_, l) if l.trim().is_empty() => continue,
                Recent::Line(n, l) if fences == 0 && fence::open(l).is_some() => {
                    if let Some(p) = fence::open(l).and_then(|o| o.path) {
                        return Some(Above::Info(*n, p));
                    }
                    fences += 1;
                }
                Recent::Line(_, l) if fences == 1 && !closed_name_fence && is_bare_fence(l) => {
                    closed_name_fence = true;
                }
                Recent::Line(n, l) => return Some(Above::Line(*n, l.clone())),
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
                    return whole_file::path_only(l).map(|p2| (*p, p2));
                }
                Recent::Line(..) => return None,
            }
        }
        None
    }

    /// Whether a fence with a path may be a whole-file write. Fences in a
    /// shell language are commands and `diff`/`json` fences are read as
    /// such, unless the info string itself names the file; a citation of
    /// lines is never a write.
    fn whole_file_candidate(&self, f: &Fence) -> bool {
        let explicit = self.mode == Format::WholeFile;
        let lang = f.opening.lang.as_str();
        let named = f.opening.path.is_some() || names_script(f);
        // A `json` fence that is no edit JSON, under a path line, is the
        // file's content (a `package.json`), as any other language's is.
        let json_file = lang == "json" && f.path.is_some();
        self.on(Format::WholeFile)
            && !f.opening.citation
            && (named || !SHELL_LANGS.contains(&lang))
            && (explicit
                || named
                || json_file
                || !matches!(lang, "diff" | "patch" | "udiff" | "json"))
    }

    fn close_fence(&mut self, f: &Fence, out: &mut Vec<Event>) {
        if f.had_block {
            return;
        }
        let lang = f.opening.lang.as_str();
        if SHELL_LANGS.contains(&lang) && f.opening.path.is_none() && !names_script(f) {
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
        if lang == "json" && self.mode == Format::Auto && json_fence(f, out) {
            return;
        }
        if matches!(lang, "diff" | "patch" | "udiff") && holds_hunk(&f.content) {
            out.push(malformed(
                Format::UnifiedDiff.into(),
                f.open,
                f.path.as_ref().map(|(_, p)| p.clone()),
                format!(
                    "the diff in the fence opened at line {} has hunks but no `--- a/PATH` and `+++ b/PATH` lines naming its file; put them above the first `@@` line, or the file's path alone on the line above the fence",
                    f.open
                ),
                &f.content.join("\n"),
            ));
            return;
        }
        let Some((line, path)) = &f.path else {
            return;
        };
        if !self.whole_file_candidate(f) {
            return;
        }
        if let Some(at) = f.ambiguous {
            out.push(malformed(
                Format::WholeFile.into(),
                f.open,
                Some(path.clone()),
                format!(
                    "the fence opened at line {} holds fences of its own, and the fence at line {at} may close either: where the file ends is ambiguous; send the file in a longer outer fence (```` for a file that holds ``` fences)",
                    f.open
                ),
                &quoted(path, f),
            ));
            return;
        }
        if holds_search_blocks(&f.content) {
            out.push(malformed(
                Format::WholeFile.into(),
                f.open,
                Some(path.clone()),
                format!(
                    "the fence opened at line {} holds SEARCH/REPLACE blocks, not the file's content: written whole, the file would hold their markers; send the blocks as search-replace (`--format search-replace` or `auto`), or the whole file without markers",
                    f.open
                ),
                &quoted(path, f),
            ));
            return;
        }
        let inferred = self.mode != Format::WholeFile;
        out.push(Event::Entry(Entry::Edit(whole_file::edit(
            path, *line, &f.content, inferred,
        ))));
    }
}

/// Whether a shell-language fence is a script's content, not commands to
/// run: the path line above it names a shell script (`scripts/check.sh`).
fn names_script(f: &Fence) -> bool {
    const SCRIPTS: &[&str] = &["sh", "bash", "zsh", "fish", "ps1", "bat", "cmd"];
    f.path.as_ref().is_some_and(|(_, p)| {
        p.rsplit_once('.')
            .is_some_and(|(_, e)| SCRIPTS.contains(&e.to_ascii_lowercase().as_str()))
    })
}

/// Whether a fence's lines hold a diff hunk header (`@@ … @@`).
fn holds_hunk(content: &[String]) -> bool {
    content.iter().any(|l| l.starts_with("@@"))
}

/// Whether fenced content holds a SEARCH/REPLACE block's opening and
/// closing markers: edit blocks a whole-file reading would write as text.
fn holds_search_blocks(content: &[String]) -> bool {
    use search_replace::{MarkerKind, marker_kind};
    let open = content
        .iter()
        .position(|l| marker_kind(l) == Some(MarkerKind::Open));
    open.is_some_and(|k| {
        content[k..]
            .iter()
            .any(|l| marker_kind(l) == Some(MarkerKind::Close))
    })
}

/// A fence's path and content as the model sent them, for a report.
fn quoted(path: &str, f: &Fence) -> String {
    let e = whole_file::edit(path, f.open, &f.content, false);
    e.origin.map_or_else(String::new, |o| o.text.to_string())
}

/// Every path an event names, read as a model means it
/// ([`model_path`]: backslash separators).
fn normalize_paths(events: &mut [Event]) {
    let fix = |p: &mut String| {
        if let std::borrow::Cow::Owned(o) = model_path(p) {
            *p = o;
        }
    };
    for e in events {
        match e {
            Event::Entry(Entry::Edit(edit)) => {
                fix(&mut edit.path);
                if let EditOp::Rename { to } = &mut edit.op {
                    fix(to);
                }
            }
            Event::Entry(Entry::Malformed(m)) => {
                if let Some(p) = &mut m.path {
                    fix(p);
                }
            }
            Event::Shell(_) => {}
        }
    }
}

/// The closing tag of the reasoning `line` opens, if it opens one: a
/// line that starts with `<think>`, `<thinking>`, `<reasoning>` or
/// `<thinking-content-HEX>`.
fn reasoning_close(line: &str) -> Option<String> {
    let t = line.trim_start();
    let rest = t.strip_prefix('<')?;
    let end = rest.find('>')?;
    let name = &rest[..end];
    let known = matches!(name, "think" | "thinking" | "reasoning")
        || name
            .strip_prefix("thinking-content-")
            .is_some_and(|h| !h.is_empty() && h.chars().all(|c| c.is_ascii_hexdigit()));
    known.then(|| format!("</{name}>"))
}

/// A ```` ```json ```` fence in a text response: its edits, a malformed
/// entry when it reads as edit JSON but cannot be used, or nothing (and
/// `false`) when it is some other JSON (a config snippet in prose).
fn json_fence(f: &Fence, out: &mut Vec<Event>) -> bool {
    let text = f.content.join("\n");
    let v = match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(v) => v,
        // Broken JSON is reported only when it names edit fields: prose
        // often quotes JSON (with comments, elisions) that is no edit.
        Err(e) if names_edit_fields(&text) => {
            let message = json::syntax_message(&e, f.open);
            let path = json::path_in_broken(&text);
            out.push(malformed(BlockKind::Json, f.open, path, message, &text));
            return true;
        }
        Err(_) => return false,
    };
    let parsed = if anchored::matches(&v) {
        anchored::parse_value(&v)
    } else if str_replace::matches(&v) {
        str_replace::parse_value(&v)
    } else {
        return false;
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
    true
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

// A fence line with no info string (```` ``` ```` or `~~~`).
fn is_bare_fence(line: &str) -> bool {
    fence::open(line).is_some_and(|o| o.is_bare())
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

    fn edits_and_errors(text: &str, mode: Format) -> Vec<String> {
        all(text, mode)
            .into_iter()
            .filter_map(|e| match e {
                Event::Entry(Entry::Edit(e)) => Some(format!("{} {}", e.path, e.describe())),
                Event::Entry(Entry::Malformed(m)) => Some(format!("malformed: {}", m.message)),
                Event::Shell(_) => None,
            })
            .collect()
    }

    #[test]
    fn nested_fences_make_a_whole_file_ambiguous() {
        let even = "R.md\n```markdown\n# R\n```sh\nx\n```\nmore\n```\n";
        let got = edits_and_errors(even, Format::Auto);
        assert_eq!(got.len(), 1);
        assert!(got[0].contains("longer outer fence"), "{got:?}");
        let odd = "R.md\n```markdown\n# R\n```sh\nx\n```\n";
        assert!(edits_and_errors(odd, Format::WholeFile)[0].contains("never closed"));
        // A longer outer fence holds them unambiguously.
        let longer = "R.md\n````markdown\n# R\n```sh\nx\n```\nmore\n````\n";
        assert_eq!(
            edits_and_errors(longer, Format::Auto),
            vec!["R.md whole-file write"]
        );
        // Nesting outside a whole-file fence only decides where it ends.
        let prose = "Example:\n```markdown\n```sh\nx\n```\n```\n\na.py\n```\nprint(1)\n```\n";
        assert_eq!(
            edits_and_errors(prose, Format::Auto),
            vec!["a.py whole-file write"]
        );
    }

    #[test]
    fn an_unclosed_fence_does_not_swallow_a_whole_file_silently() {
        let text = "Wrap it:\n<pre>\n\nb.py\n```python\nprint(2)\n```\n";
        let got = edits_and_errors(text, Format::Auto);
        assert_eq!(got.len(), 1);
        assert!(got[0].contains("never closed"), "{got:?}");
        // Without a whole-file block in it, an unclosed fence is prose.
        assert!(edits_and_errors("Wrap it:\n<pre>\nx\n", Format::Auto).is_empty());
    }

    #[test]
    fn fences_name_the_file_of_their_blocks() {
        let sr = "<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n";
        for open in [
            "```python:src/a.py",
            "```python src/a.py",
            "```py file=\"src/a.py\"",
        ] {
            let text = format!("{open}\n{sr}```\n");
            assert_eq!(
                edits_and_errors(&text, Format::Auto),
                vec!["src/a.py search/replace block"],
                "{open}"
            );
        }
        let tagged = format!("src\\a.py\n<source>python\n{sr}</source>\n");
        assert_eq!(
            edits_and_errors(&tagged, Format::Auto),
            vec!["src/a.py search/replace block"]
        );
    }

    #[test]
    fn tool_calls_name_the_file_of_their_blocks() {
        let roo = "<apply_diff>\n<path>src\\a.py</path>\n<diff>\n<<<<<<< SEARCH\n:start_line:3\n-------\nx\n=======\ny\n>>>>>>> REPLACE\n</diff>\n</apply_diff>\n";
        assert_eq!(
            edits_and_errors(roo, Format::Auto),
            vec!["src/a.py search/replace block"]
        );
        let cline = "<replace_in_file>\n<path>b.ts</path>\n<diff>\n------- SEARCH\nx\n=======\ny\n+++++++ REPLACE\n</diff>\n</replace_in_file>\n";
        assert_eq!(
            edits_and_errors(cline, Format::Auto),
            vec!["b.ts search/replace block"]
        );
    }

    #[test]
    fn json_fence_in_prose() {
        let text =
            "Here:\n```json\n{\"path\":\"a.py\",\"old_string\":\"x\",\"new_string\":\"y\"}\n```\n";
        let ev = all(text, Format::Auto);
        assert!(matches!(&ev[0], Event::Entry(Entry::Edit(e)) if e.path == "a.py"));
    }

    #[test]
    fn reasoning_drafts_are_not_edits() {
        let draft = "a.py\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n";
        let kept = "a.py\n<<<<<<< SEARCH\nx = 1\n=======\nx = 3\n>>>>>>> REPLACE\n";
        for (open, close) in [
            ("<think>", "</think>"),
            ("<thinking>", "</thinking>"),
            (
                "<thinking-content-7bbeb8e1>",
                "</thinking-content-7bbeb8e1>",
            ),
        ] {
            let text = format!("{open}\nFirst try:\n{draft}{close}\n\nThe fix:\n\n{kept}");
            let p = crate::formats::parse(&text, Format::Auto).unwrap();
            let edits: Vec<_> = p.edits().collect();
            assert_eq!(edits.len(), 1, "{open}");
            let crate::EditOp::Replace(r) = &edits[0].op else {
                panic!("a replacement")
            };
            assert!(
                matches!(&r.target, crate::Target::Lines { replace, .. } if replace == &["x = 3"])
            );
        }
        // A tag inside a fence is content, and a closed one-line tag ends
        // at once.
        let text = format!("<think>short</think>\n{kept}");
        assert_eq!(
            crate::formats::parse(&text, Format::Auto)
                .unwrap()
                .edits()
                .count(),
            1
        );
    }
}
