//! [`Format`]: the formats by name. A leaf: every format module takes its
//! `NAME` from here, so the names are spelled once.

use std::str::FromStr;

use serde::Serialize;

use crate::error::Error;

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
    pub const fn name(self) -> &'static str {
        match self {
            Format::Auto => "auto",
            Format::SearchReplace => "search-replace",
            Format::StrReplace => "str-replace",
            Format::Anchored => "anchored",
            Format::EditBlock => "edit-block",
            Format::ApplyPatch => "apply-patch",
            Format::UnifiedDiff => "unified-diff",
            Format::WholeFile => "whole-file",
        }
    }

    /// Every format's name, `auto` first, as a list for messages
    /// (`auto, search-replace, …`): built from [`Format::ALL`], so no
    /// message names fewer formats than mend reads.
    pub fn names() -> String {
        std::iter::once(Format::Auto)
            .chain(Format::ALL)
            .map(Format::name)
            .collect::<Vec<_>>()
            .join(", ")
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

/// What a block of a response was read as: the format of an edit or of a
/// malformed block, in [`Origin`](crate::Origin) and
/// [`Malformed`](super::event::Malformed).
///
/// Not a bare [`Format`]: in `auto` mode a ```` ```json ```` fence whose
/// text does not parse cannot be told to be `str-replace` or `anchored`,
/// yet it is reported (its parse error is what the model must fix), as
/// `json`; and `Format::Auto` is a choice, never what a block is. It is
/// serialised and displayed by name, so reports say what they always said.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockKind {
    /// A block of this format.
    Format(Format),
    /// A JSON fence that did not parse.
    Json,
    /// A model's reasoning whose end, not its start, is in the response
    /// (`</think>` alone): the blocks above it may be drafts.
    Reasoning,
}

impl BlockKind {
    /// The name reports give it: the format's, or `json`.
    pub const fn name(self) -> &'static str {
        match self {
            BlockKind::Format(f) => f.name(),
            BlockKind::Json => "json",
            BlockKind::Reasoning => "reasoning",
        }
    }

    /// The format, when the block is known to be one.
    pub fn format(self) -> Option<Format> {
        match self {
            BlockKind::Format(f) => Some(f),
            BlockKind::Json | BlockKind::Reasoning => None,
        }
    }
}

impl From<Format> for BlockKind {
    fn from(f: Format) -> BlockKind {
        BlockKind::Format(f)
    }
}

impl PartialEq<Format> for BlockKind {
    fn eq(&self, f: &Format) -> bool {
        *self == BlockKind::Format(*f)
    }
}

impl std::fmt::Display for BlockKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for BlockKind {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "json" => Ok(BlockKind::Json),
            "auto" => Err(Error::UnknownFormat(s.to_owned())),
            s => s.parse().map(BlockKind::Format),
        }
    }
}

impl Serialize for BlockKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for BlockKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_kind_keeps_its_name_on_the_wire() {
        let kinds = Format::ALL.map(BlockKind::from);
        for k in kinds.into_iter().chain([BlockKind::Json]) {
            let wire = serde_json::to_string(&k).unwrap();
            assert_eq!(wire, format!("\"{}\"", k.name()));
            assert_eq!(serde_json::from_str::<BlockKind>(&wire).unwrap(), k);
        }
        assert!("auto".parse::<BlockKind>().is_err());
        assert_eq!(BlockKind::Json.format(), None);
        assert_eq!(BlockKind::from(Format::EditBlock), Format::EditBlock);
    }
}
