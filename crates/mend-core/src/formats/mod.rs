//! Edit formats: one module each, with its grammar and every tolerated
//! deviation in the module doc.
//!
//! | name             | module              | what models send                      |
//! |------------------|---------------------|---------------------------------------|
//! | `search-replace` | [`search_replace`]  | aider / Roo / Cline SEARCH/REPLACE    |
//! | `str-replace`    | [`str_replace`]     | `old_string`/`new_string` JSON        |
//! | `anchored`       | [`anchored`]        | seed 000's `modify_file`/`write_file` |
//!
//! [`Format::Auto`] picks one per input: JSON whose objects carry `changes`
//! or a string `content` is anchored, other JSON is str-replace, and text
//! with SEARCH markers is search-replace.

pub mod anchored;
mod json;
pub mod search_replace;
pub mod str_replace;

use std::str::FromStr;

use crate::edit::Edit;
use crate::error::Error;

/// An input format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Format {
    /// Decide from the input.
    Auto,
    /// SEARCH/REPLACE blocks.
    SearchReplace,
    /// `old_string`/`new_string` JSON.
    StrReplace,
    /// `modify_file`/`write_file` JSON.
    Anchored,
}

impl Format {
    /// Every concrete format, in detection order.
    pub const ALL: [Format; 3] = [Format::SearchReplace, Format::StrReplace, Format::Anchored];

    /// The format's name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Format::Auto => "auto",
            Format::SearchReplace => search_replace::NAME,
            Format::StrReplace => str_replace::NAME,
            Format::Anchored => anchored::NAME,
        }
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
        match s {
            "auto" => Ok(Format::Auto),
            "search-replace" => Ok(Format::SearchReplace),
            "str-replace" => Ok(Format::StrReplace),
            "anchored" => Ok(Format::Anchored),
            other => Err(Error::UnknownFormat(other.to_owned())),
        }
    }
}

/// Parsed input: the concrete format and its edits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    /// The format the input was read as.
    pub format: Format,
    /// The edits, in input order.
    pub edits: Vec<Edit>,
}

fn looks_like_json(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with('{') || t.starts_with('[') || (t.starts_with("```json") && t.contains('{'))
}

/// Decides which format a whole input is in.
pub fn detect(text: &str) -> Result<Format, Error> {
    if looks_like_json(text) {
        let value = json::parse_value(text, "json")?;
        if anchored::matches(&value) {
            return Ok(Format::Anchored);
        }
        if str_replace::matches(&value) {
            return Ok(Format::StrReplace);
        }
        return Err(Error::Undetected(
            "the input is JSON, but neither old_string/new_string edits nor modify_file/write_file calls".into(),
        ));
    }
    if search_replace::looks_like(text) {
        return Ok(Format::SearchReplace);
    }
    Err(Error::NoEdits)
}

/// Parses `text` as `format` (detecting it for [`Format::Auto`]).
///
/// An input that parses but holds no edit is [`Error::NoEdits`].
pub fn parse(text: &str, format: Format) -> Result<Parsed, Error> {
    let format = match format {
        Format::Auto => detect(text)?,
        f => f,
    };
    let edits = match format {
        Format::SearchReplace => search_replace::parse(text)?,
        Format::StrReplace => str_replace::parse(text)?,
        Format::Anchored => anchored::parse(text)?,
        Format::Auto => unreachable!("resolved above"),
    };
    if edits.is_empty() {
        return Err(Error::NoEdits);
    }
    Ok(Parsed { format, edits })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects() {
        assert_eq!(
            detect(r#"{"path":"a","old_string":"x","new_string":"y"}"#).unwrap(),
            Format::StrReplace
        );
        assert_eq!(
            detect(r#"{"path":"a","changes":[]}"#).unwrap(),
            Format::Anchored
        );
        assert_eq!(
            detect("a.py\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE").unwrap(),
            Format::SearchReplace
        );
        assert!(matches!(detect("just prose"), Err(Error::NoEdits)));
    }
}
