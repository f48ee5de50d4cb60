//! A response read as it arrives: decoded as UTF-8 across read
//! boundaries, parsed block by block, each complete block checked against
//! its file at once (each planned once, the plans kept for the apply).

use std::collections::HashMap;
use std::io::Read;

use mend_apply::{Preplanned, Source, StreamPlanner};
use mend_core::EditReport;
use mend_core::formats::{Entry, Event, Format, Parsed, StreamParser};
use mend_workspace::Workspace;

use crate::Error;

/// The file holding a model's response (`mend apply FILE`), opened for
/// reading; it is the caller's input, not a project file.
pub fn open_response(path: &std::path::Path) -> Result<std::fs::File, Error> {
    std::fs::File::open(path).map_err(|source| Error::Io {
        what: format!(
            "cannot read input {}",
            mend_core::text::escape_controls(&path.to_string_lossy())
        ),
        source,
    })
}

/// A response, parsed whole or as it streamed in.
pub struct Streamed {
    /// The parsed response, or why it holds no edits.
    pub parsed: Result<Parsed, mend_core::Error>,
    /// Each entry's status line as streaming knew it, by index.
    pub lines: HashMap<usize, String>,
    /// Each file's plan with the hash of the content it was made against.
    pub plans: HashMap<String, Preplanned>,
    /// For a pending destination: what the session's view read.
    pub recorded: Option<mend_pending::Streamed>,
    /// A response read whole and not parsed yet: an apply to the files
    /// parses and plans it a chunk at a time under the lock
    /// ([`mend_apply::run_text`]), so its edits are never all held.
    pub text: Option<(String, Format)>,
}

impl Streamed {
    /// A response parsed whole: nothing planned yet.
    pub fn whole(text: &str, format: Format) -> Streamed {
        Streamed::parsed(mend_core::formats::parse(text, format))
    }

    /// A response read whole, to be parsed when it is applied.
    pub fn text(text: String, format: Format) -> Streamed {
        Streamed {
            text: Some((text, format)),
            ..Streamed::default()
        }
    }

    /// The parse of the response (parsing it now if it was kept as text).
    pub fn into_parsed(self) -> Result<Parsed, mend_core::Error> {
        match self.text {
            Some((text, format)) => mend_core::formats::parse(&text, format),
            None => self.parsed,
        }
    }

    /// A response already parsed (or its parse error).
    pub fn parsed(parsed: Result<Parsed, mend_core::Error>) -> Streamed {
        Streamed {
            parsed,
            ..Streamed::default()
        }
    }
}

impl Default for Streamed {
    fn default() -> Self {
        Streamed {
            parsed: Err(mend_core::Error::NoEdits),
            lines: HashMap::new(),
            plans: HashMap::new(),
            recorded: None,
            text: None,
        }
    }
}

/// How much is read at a time.
const CHUNK: usize = 64 * 1024;

/// Reads `input` to its end; see the module doc. `line` is told each
/// entry's status line as soon as it is known.
pub(crate) fn parse(
    ws: &Workspace,
    source: &Source<'_>,
    input: &mut dyn Read,
    format: Format,
    partial: bool,
    line: &mut dyn FnMut(usize, &str) -> std::io::Result<()>,
) -> Result<Streamed, Error> {
    let mut parser = StreamParser::new(format);
    let mut checker = Checker {
        planner: StreamPlanner::new(ws, partial).with_source(source),
        events: Vec::new(),
        lines: HashMap::new(),
        count: 0,
        line,
    };
    let mut decoder = Utf8Decoder::default();
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = input.read(&mut buf).map_err(|source| Error::Io {
            what: "cannot read the input".into(),
            source,
        })?;
        if n == 0 {
            break;
        }
        let text = decoder.push(&buf[..n])?;
        checker.check(parser.push(&text))?;
    }
    decoder.finish()?;
    let tail = match parser.finish() {
        Ok(t) => t,
        Err(e) => return Ok(checker.into_streamed(Err(e))),
    };
    checker.check(tail)?;
    Ok(checker.finish())
}

/// Checks each entry as the parser completes it.
struct Checker<'p, 'l> {
    planner: StreamPlanner<'p>,
    events: Vec<Event>,
    lines: HashMap<usize, String>,
    /// Entries seen so far.
    count: usize,
    line: &'l mut dyn FnMut(usize, &str) -> std::io::Result<()>,
}

impl Checker<'_, '_> {
    fn check(&mut self, events: Vec<Event>) -> Result<(), Error> {
        for ev in events {
            if let Event::Entry(entry) = &ev {
                let index = self.count;
                self.count += 1;
                let line = match entry {
                    Entry::Malformed(m) => EditReport::malformed(index, m).summary(),
                    Entry::Edit(e) => self.planner.check(index, e).summary(),
                };
                (self.line)(index, &line).map_err(|source| Error::Io {
                    what: "cannot write the status of an edit".into(),
                    source,
                })?;
                // Only the listed edits are printed again at the end.
                if index < mend_core::report::CAPS.listed_edits {
                    self.lines.insert(index, line);
                }
            }
            self.events.push(ev);
        }
        Ok(())
    }

    fn into_streamed(self, parsed: Result<Parsed, mend_core::Error>) -> Streamed {
        Streamed {
            parsed,
            lines: self.lines,
            ..Streamed::default()
        }
    }

    fn finish(self) -> Streamed {
        let parsed = Parsed::from_events(self.events);
        if parsed.entries.is_empty() {
            return Streamed {
                parsed: Err(mend_core::Error::NoEdits),
                lines: self.lines,
                ..Streamed::default()
            };
        }
        Streamed {
            parsed: Ok(parsed),
            lines: self.lines,
            plans: self.planner.finish(),
            ..Streamed::default()
        }
    }
}

/// UTF-8 decoding across read boundaries: a character cut by a read is
/// completed by the next.
#[derive(Default)]
struct Utf8Decoder {
    carry: Vec<u8>,
}

impl Utf8Decoder {
    /// The text `bytes` complete.
    fn push(&mut self, bytes: &[u8]) -> Result<String, Error> {
        self.carry.extend_from_slice(bytes);
        let valid = match std::str::from_utf8(&self.carry) {
            Ok(s) => s.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(e) => {
                return Err(Error::Input(format!(
                    "the input is not valid UTF-8 (invalid byte near offset {})",
                    e.valid_up_to()
                )));
            }
        };
        let rest = self.carry.split_off(valid);
        let text = std::mem::replace(&mut self.carry, rest);
        String::from_utf8(text).map_err(|_| Error::Input("the input is not valid UTF-8".into()))
    }

    /// Fails when the input ended inside a character.
    fn finish(&self) -> Result<(), Error> {
        if self.carry.is_empty() {
            Ok(())
        } else {
            Err(Error::Input(
                "the input ends in the middle of a UTF-8 character".into(),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Utf8Decoder;

    #[test]
    fn a_character_cut_by_a_read_is_completed_by_the_next() {
        let mut d = Utf8Decoder::default();
        let bytes = "aé€".as_bytes();
        let mut text = String::new();
        for b in bytes {
            text.push_str(&d.push(std::slice::from_ref(b)).unwrap());
        }
        assert_eq!(text, "aé€");
        assert!(d.finish().is_ok());
        d.push(&bytes[..2]).unwrap();
        assert_eq!(
            d.finish().unwrap_err().to_string(),
            "the input ends in the middle of a UTF-8 character"
        );
        let mut d = Utf8Decoder::default();
        assert_eq!(
            d.push(b"ab\xffc").unwrap_err().to_string(),
            "the input is not valid UTF-8 (invalid byte near offset 2)"
        );
    }
}
