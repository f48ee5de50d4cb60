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
