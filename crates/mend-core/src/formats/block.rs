//! What every line-fed block parser shares: how it answers a line
//! ([`Feed`]), what it shows while open ([`PartialBlock`]), the
//! [`BlockParser`] the stream machine drives, and the malformed-block
//! event. A leaf of the formats graph: the format modules build on it and
//! `stream` drives them through it.

use super::event::{Entry, Event, Malformed};
use super::format::BlockKind;

/// How a block parser answers a line.
pub(crate) enum Feed {
    /// The line was consumed; the block goes on.
    More(Vec<Event>),
    /// The line was consumed and ended the block.
    Done(Vec<Event>),
    /// The block ended before this line, which must be read again as idle.
    Reject(Vec<Event>),
    /// The block ended before these earlier lines, which it held to see
    /// what came next: they are read again as idle, then this line.
    RejectHeld(Vec<Event>, Vec<(usize, String)>),
}

/// What the parser is in the middle of, for progress displays.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartialBlock {
    /// The format of the block being read.
    pub format: &'static str,
    /// Its file, when known yet.
    pub path: Option<String>,
    /// 1-based line where it started.
    pub start_line: usize,
    /// Lines read so far.
    pub lines: usize,
}

/// A block of one text format being read line by line, from its opening
/// line (seen by the stream machine) to its end.
pub(crate) trait BlockParser {
    /// Reads line `n` of the input.
    fn feed(&mut self, n: usize, line: &str) -> Feed;

    /// The input ended at line `n` with the block still open.
    fn eof(self, n: usize) -> Vec<Event>
    where
        Self: Sized;

    /// The block so far, for progress displays.
    fn partial(&self) -> PartialBlock;
}

/// A malformed-block event.
pub(crate) fn malformed(
    format: BlockKind,
    line: usize,
    path: Option<String>,
    message: String,
    text: &str,
) -> Event {
    Event::Entry(Entry::Malformed(Malformed {
        format,
        line,
        path,
        message,
        text: text.to_owned(),
    }))
}
