//! What parsing a response produces: edits, malformed blocks and shell
//! suggestions, as events in input order. A leaf of the formats graph.

use serde::Serialize;

use super::format::BlockKind;
use crate::edit::Edit;

/// A block that looked like an edit but could not be read. It is reported
/// as a failed edit, so a response with one is never applied half-way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Malformed {
    /// What the block was read as.
    pub format: BlockKind,
    /// 1-based line of the input the problem is on.
    pub line: usize,
    /// The file the block names, when known.
    pub path: Option<String>,
    /// What was expected and what was found.
    pub message: String,
    /// The block's text as sent.
    pub text: String,
}

/// A shell command the model proposed. mend never runs it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ShellSuggestion {
    /// 1-based line of the input.
    pub line: usize,
    /// The command, without a `$ ` prompt.
    pub command: String,
}

/// One item of a parsed response, in input order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Entry {
    /// An edit.
    Edit(Edit),
    /// A block that could not be read.
    Malformed(Malformed),
}

/// What the stream parser produces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// An edit or a malformed block.
    Entry(Entry),
    /// A proposed shell command.
    Shell(ShellSuggestion),
}
