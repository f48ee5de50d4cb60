//! Edit formats: one module each, with its grammar and every tolerated
//! deviation in the module doc.
//!
//! | name             | module             | what models send                           |
//! |------------------|--------------------|--------------------------------------------|
//! | `search-replace` | [`search_replace`] | aider / Roo / Cline SEARCH/REPLACE blocks  |
//! | `edit-block`     | [`edit_block`]     | `««« EDIT` / `═══════ REPL` / `»»» EDIT END` |
//! | `apply-patch`    | [`apply_patch`]    | Codex `*** Begin Patch` envelopes          |
//! | `unified-diff`   | [`unified_diff`]   | `diff --git` / `---` `+++` `@@` hunks      |
//! | `whole-file`     | [`whole_file`]     | a path line and a fence with the file      |
//! | `str-replace`    | [`str_replace`]    | `old_string`/`new_string` JSON             |
//! | `anchored`       | [`anchored`]       | `modify_file`/`write_file` tool-call JSON  |
//!
//! Text formats are parsed line by line by one [`StreamParser`], which
//! decides per block what it is ([`Format::Auto`]), so one response may mix
//! formats, and which can be fed a response in chunks as it streams. Parsing
//! a whole text is feeding it as one chunk, so both always agree. JSON input
//! (a response that starts with `{` or `[`) is parsed whole; a ```` ```json ````
//! fence inside a text response is parsed when the fence closes.
//!
//! Text outside blocks is ignored, except shell commands (```` ```bash ````
//! fences and `$ …` lines), which are collected as suggestions and never run.

pub mod anchored;
pub mod apply_patch;
pub mod edit_block;
mod json;
pub mod prompt;
pub mod schema;
pub mod search_replace;
pub mod str_replace;
mod stream;
pub mod unified_diff;
pub mod whole_file;

use std::str::FromStr;

use serde::Serialize;

use crate::edit::Edit;
use crate::error::Error;
pub use stream::{PartialBlock, StreamParser};

/// An input format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Format {
    /// Decide per block.
    Auto,
    /// SEARCH/REPLACE blocks.
    SearchReplace,
    /// `old_string`/`new_string` JSON.
    StrReplace,
    /// `modify_file`/`write_file` JSON.
    Anchored,
    /// Common-prefix edit blocks.
    EditBlock,
    /// Codex's apply-patch envelope.
    ApplyPatch,
    /// Unified diffs.
    UnifiedDiff,
    /// A path line and a fence holding the whole file.
    WholeFile,
}

impl Format {
    /// Every concrete format.
    pub const ALL: [Format; 7] = [
        Format::SearchReplace,
        Format::StrReplace,
        Format::Anchored,
        Format::EditBlock,
        Format::ApplyPatch,
        Format::UnifiedDiff,
        Format::WholeFile,
    ];

    /// The format's name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Format::Auto => "auto",
            Format::SearchReplace => search_replace::NAME,
            Format::StrReplace => str_replace::NAME,
            Format::Anchored => anchored::NAME,
            Format::EditBlock => edit_block::NAME,
            Format::ApplyPatch => apply_patch::NAME,
            Format::UnifiedDiff => unified_diff::NAME,
            Format::WholeFile => whole_file::NAME,
        }
    }

    /// Whether the format is JSON (parsed whole, not line by line).
    pub fn is_json(self) -> bool {
        matches!(self, Format::StrReplace | Format::Anchored)
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        std::iter::once(Format::Auto)
            .chain(Format::ALL)
            .find(|f| f.name() == s)
            .ok_or_else(|| Error::UnknownFormat(s.to_owned()))
    }
}

/// A block that looked like an edit but could not be read. It is reported
/// as a failed edit, so a response with one is never applied half-way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Malformed {
    /// The format the block was read as.
    pub format: &'static str,
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

/// A parsed response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Parsed {
    /// The formats the blocks were in, in order of first appearance.
    pub formats: Vec<Format>,
    /// Edits and malformed blocks, in input order.
    pub entries: Vec<Entry>,
    /// Shell commands proposed, never run.
    pub shell: Vec<ShellSuggestion>,
}

impl Parsed {
    /// The edits, in input order.
    pub fn edits(&self) -> impl Iterator<Item = &Edit> {
        self.entries.iter().filter_map(|e| match e {
            Entry::Edit(e) => Some(e),
            Entry::Malformed(_) => None,
        })
    }

    /// A name for the input's format: one format's name, or `mixed (…)`.
    pub fn format_name(&self) -> String {
        match self.formats.as_slice() {
            [] => "none".into(),
            [one] => one.name().into(),
            many => format!(
                "mixed ({})",
                many.iter().map(|f| f.name()).collect::<Vec<_>>().join(", ")
            ),
        }
    }

    /// Collects stream events (see [`StreamParser`]).
    pub fn from_events(events: Vec<Event>) -> Parsed {
        let mut p = Parsed {
            formats: Vec::new(),
            entries: Vec::new(),
            shell: Vec::new(),
        };
        for e in events {
            match e {
                Event::Entry(entry) => {
                    let name = match &entry {
                        Entry::Edit(e) => e.origin.as_ref().map(|o| o.format.clone()),
                        Entry::Malformed(m) => Some(m.format.into()),
                    };
                    if let Some(f) = name.and_then(|n| n.parse::<Format>().ok())
                        && !p.formats.contains(&f)
                    {
                        p.formats.push(f);
                    }
                    p.entries.push(entry);
                }
                Event::Shell(s) => p.shell.push(s),
            }
        }
        p
    }
}

/// Parses a whole response as `format` ([`Format::Auto`] decides per
/// block). A response with no edit and no malformed block is
/// [`Error::NoEdits`]; JSON that cannot be read is [`Error::Parse`].
pub fn parse(text: &str, format: Format) -> Result<Parsed, Error> {
    let mut parser = StreamParser::new(format);
    let mut events = parser.push(text);
    events.extend(parser.finish()?);
    let parsed = Parsed::from_events(events);
    if parsed.entries.is_empty() {
        return Err(Error::NoEdits);
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for f in Format::ALL {
            assert_eq!(f.name().parse::<Format>().unwrap(), f);
        }
        assert!("klingon".parse::<Format>().is_err());
    }

    #[test]
    fn detects_per_block() {
        let text = "a.py\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n\n*** Begin Patch\n*** Delete File: b.txt\n*** End Patch\n";
        let p = parse(text, Format::Auto).unwrap();
        assert_eq!(p.formats, vec![Format::SearchReplace, Format::ApplyPatch]);
        assert_eq!(p.edits().count(), 2);
    }

    #[test]
    fn no_edits() {
        assert!(matches!(
            parse("just prose", Format::Auto),
            Err(Error::NoEdits)
        ));
    }
}
