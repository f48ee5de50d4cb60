//! The crate's error type: reasons parsing cannot proceed.
//!
//! Failures to *locate* an edit are not errors: they are data in the
//! [`crate::report::EditReport`], because the other edits still have a
//! result and the model needs all of them.

/// Why input could not be turned into edits.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The input does not follow its format's grammar.
    #[error("{format} input{}: {message}", at_line(*line))]
    Parse {
        /// The format being parsed.
        format: &'static str,
        /// 1-based line of the input (0 for JSON paths, which the message names).
        line: usize,
        /// What was expected and what was found.
        message: String,
    },
    /// The format name is not one mend knows.
    #[error("unknown format `{0}`; expected one of: {names}", names = crate::Format::names())]
    UnknownFormat(String),
    /// Auto-detection could not tell the format.
    #[error("could not detect the edit format: {0}; pass --format explicitly")]
    Undetected(String),
    /// The input holds no edit at all.
    #[error(
        "no edits found: the input has no SEARCH/REPLACE or EDIT block, patch, diff or whole-file fence, and is not edit JSON (old_string/new_string or modify_file/write_file)"
    )]
    NoEdits,
}

/// ", line N" for a text format's line; nothing for JSON, whose message
/// names the location as a JSON path instead.
fn at_line(line: usize) -> String {
    if line == 0 {
        String::new()
    } else {
        format!(", line {line}")
    }
}

#[cfg(test)]
mod tests {
    use crate::Format;

    #[test]
    fn an_unknown_format_lists_every_format() {
        let e = "bogus".parse::<Format>().unwrap_err().to_string();
        for f in std::iter::once(Format::Auto).chain(Format::ALL) {
            assert!(e.contains(&format!(" {}", f.name())), "{f} missing: {e}");
        }
    }
}
