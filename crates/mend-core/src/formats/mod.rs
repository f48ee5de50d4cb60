//! Edit formats: one module each, with its grammar and every tolerated
//! deviation in the module doc.
//!
//! | name             | module             | what models send                           |
//! |------------------|--------------------|--------------------------------------------|
//! | `search-replace` | [`search_replace`] | aider / Roo / Cline SEARCH/REPLACE blocks, in or out of their XML tool calls |
//! | `edit-block`     | [`edit_block`]     | `««« EDIT` / `═══════ REPL` / `»»» EDIT END` |
//! | `apply-patch`    | [`apply_patch`]    | Codex `*** Begin Patch` envelopes          |
//! | `unified-diff`   | [`unified_diff`]   | `diff --git` / `---` `+++` `@@` hunks      |
//! | `whole-file`     | [`whole_file`]     | a path line and a fence with the file; `<write_to_file>` |
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

//!
//! The modules depend one way: the leaves ([`Format`]'s names, the events,
//! and `block`: what every line-fed block parser shares) → the format
//! modules → `stream`, the machine that drives them → this facade.

pub mod anchored;
pub mod apply_patch;
mod block;
pub mod edit_block;
mod event;
mod fence;
pub(crate) mod format;
mod json;
mod path;
pub mod prompt;
pub mod schema;
pub mod search_replace;
pub mod str_replace;
mod stream;
mod tool_call;
pub mod unified_diff;
pub mod whole_file;

use serde::Serialize;

use crate::edit::Edit;
use crate::error::Error;
pub use block::PartialBlock;
pub use event::{Entry, Event, Malformed, ShellSuggestion};
pub use format::{BlockKind, Format};
pub use path::model_path;
pub use stream::StreamParser;

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

    /// Adds the format of `entry` to [`Parsed::formats`] if it is new
    /// (for a caller that plans entries as they come instead of keeping
    /// them).
    pub fn note_format(&mut self, entry: &Entry) {
        let kind = match entry {
            Entry::Edit(e) => e.origin.as_ref().map(|o| o.format),
            Entry::Malformed(m) => Some(m.format),
        };
        if let Some(f) = kind.and_then(BlockKind::format)
            && !self.formats.contains(&f)
        {
            self.formats.push(f);
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
                    p.note_format(&entry);
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
