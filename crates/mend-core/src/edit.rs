//! The format-independent edit model.
//!
//! Every format parser produces [`Edit`]s; the planner consumes nothing else.
//! An edit names its target path (relative to the workspace root, as the
//! model wrote it), says what to do ([`EditOp`]), and remembers where it came
//! from in the model's response ([`Origin`]) so failures can quote it.

use serde::{Deserialize, Serialize};

use crate::formats::format::{BlockKind, Format};

/// One requested change to one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edit {
    /// Target path, relative to the workspace root, with `/` separators.
    pub path: String,
    /// What to do.
    pub op: EditOp,
    /// Where the edit came from in the input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<Origin>,
}

/// Where an edit was found in the model's response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Origin {
    /// What produced it: a format, or (for a malformed block's report) a
    /// JSON fence that did not parse; serialised by name (`search-replace`,
    /// `str-replace`, …, `json`).
    pub format: BlockKind,
    /// 1-based line of the input where the edit starts (0 when unknown, as
    /// for JSON input).
    pub line: usize,
    /// The edit as the model sent it, for retry messages; shared with the
    /// edit's report rather than copied.
    pub text: std::sync::Arc<str>,
}

/// The kinds of change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EditOp {
    /// Replace a located region.
    Replace(Replace),
    /// Create a file that does not exist (or is empty).
    Create {
        /// The new file's content.
        content: String,
    },
    /// Delete the file.
    Delete,
    /// Move the file to another path.
    Rename {
        /// The new path.
        to: String,
    },
    /// Set or clear the executable bits (a diff's mode change).
    SetMode {
        /// Whether the file becomes executable (`100755`).
        executable: bool,
    },
    /// Replace the whole file's content (or create it).
    WriteFile {
        /// The new content.
        content: String,
        /// The write was inferred, not asked for: in `auto`, from a fence
        /// under a line naming the file. The planner writes it over an
        /// existing file only when the fence evidently holds that whole
        /// file; an excerpt of it is a snippet, not an edit. Absent (as in
        /// JSON written before it existed) means an explicit write.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        inferred: bool,
    },
}

/// A located replacement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Replace {
    /// How the region is found.
    pub target: Target,
    /// Replace every occurrence instead of requiring exactly one.
    #[serde(default)]
    pub replace_all: bool,
    /// Optional hints.
    #[serde(default)]
    pub hints: Hints,
}

/// How a replacement finds its region, and what replaces it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "target", rename_all = "snake_case")]
pub enum Target {
    /// A block of whole lines (SEARCH/REPLACE, diff hunks). The search may
    /// contain elision markers.
    Lines {
        /// Lines to find.
        search: Vec<String>,
        /// Lines to put in their place.
        replace: Vec<String>,
    },
    /// A substring that may start or end inside a line (`old_string`).
    Text {
        /// Text to find.
        old: String,
        /// Text to put in its place.
        new: String,
    },
    /// A region from a start anchor through an optional end anchor
    /// (`modify_file`). `content` replaces the whole region, anchors
    /// included.
    Region {
        /// 1–4 lines that begin the region.
        start: Vec<String>,
        /// 1–4 lines that end it; empty means the region is `start` alone.
        end: Vec<String>,
        /// The region's new lines.
        content: Vec<String>,
    },
}

/// Optional hints that narrow matching.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hints {
    /// 1-based line where the search is expected to start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_line: Option<usize>,
    /// This diff hunk is one of several identical ones of one file's diff:
    /// its rank among them and how many there are. The same change at
    /// exactly that many places gives one file whichever hunk goes where.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identical: Option<(usize, usize)>,
    /// Lines that look like elision markers (`...`, `// ... existing code
    /// ...`) are literal text, not elided code. Set by formats that have no
    /// elision, such as diff hunks, where such a line is real content.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub literal: bool,
    /// The first this-many search lines are an anchor the replacement
    /// repeats (an edit block's common prefix); used to explain failures.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub anchor_lines: usize,
    /// Lines that must be found, in order, before the search (apply-patch's
    /// `@@ def f():` lines); the search is then looked for after the last.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context: Vec<String>,
    /// The search is looked for after the previous edit of the same batch
    /// (chunks of one patch apply in order).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub after_previous: bool,
    /// The search must end at the end of the file (`*** End of File`); with
    /// an empty search, the replacement is appended.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub at_eof: bool,
    /// Lines the edit removes must equal the file's lines up to whitespace
    /// and Unicode folding, even when the similarity pass located the block
    /// (a diff's `-` lines say exactly what is removed).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exact_removals: bool,
    /// Whether the file must end with a newline after the edit, when the
    /// edit reaches the end of the file (a diff's `\ No newline at end of
    /// file`). `None` keeps the file's own state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_newline: Option<bool>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Edit {
    /// A short description of the operation for messages, in the terms of
    /// the format it came from.
    pub fn describe(&self) -> &'static str {
        let format = self.origin.as_ref().and_then(|o| o.format.format());
        match &self.op {
            EditOp::Replace(r) => match r.target {
                Target::Lines { .. } => match format {
                    Some(Format::ApplyPatch) => "patch chunk",
                    Some(Format::UnifiedDiff) => "diff hunk",
                    Some(Format::EditBlock) => "edit block",
                    _ => "search/replace block",
                },
                Target::Text { .. } => "string replacement",
                Target::Region { .. } => "anchored change",
            },
            EditOp::Create { .. } => match format {
                Some(Format::ApplyPatch) => "patch Add File",
                Some(Format::UnifiedDiff) => "diff creating a file",
                _ => "file creation",
            },
            EditOp::Delete => "file deletion",
            EditOp::Rename { .. } => "file rename",
            EditOp::WriteFile { .. } => "whole-file write",
            EditOp::SetMode { .. } => "mode change",
        }
    }

    /// Whether the edit was read from a block of format `f`.
    pub fn came_from(&self, f: Format) -> bool {
        self.origin.as_ref().is_some_and(|o| o.format == f)
    }

    /// Whether applying the edit can change nothing, whatever the file holds.
    /// A diff that only adds or removes the final newline changes no line,
    /// but is not a no-op.
    pub fn is_noop(&self) -> bool {
        match &self.op {
            EditOp::Replace(r) if r.hints.final_newline.is_some() => false,
            EditOp::Replace(r) => match &r.target {
                Target::Lines { search, replace } => search == replace,
                Target::Text { old, new } => old == new,
                Target::Region { .. } => false,
            },
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_without_inferred_reads_as_explicit() {
        let old = r#"{"path":"a.py","op":{"kind":"write_file","content":"x\n"}}"#;
        let e: Edit = serde_json::from_str(old).unwrap();
        assert_eq!(
            e.op,
            EditOp::WriteFile {
                content: "x\n".into(),
                inferred: false
            }
        );
        // An explicit write is written as it always was; an inferred one
        // says so.
        assert_eq!(serde_json::to_string(&e).unwrap(), old);
        let inferred = Edit {
            op: EditOp::WriteFile {
                content: "x\n".into(),
                inferred: true,
            },
            ..e
        };
        let wire = serde_json::to_string(&inferred).unwrap();
        assert!(wire.contains(r#""inferred":true"#), "{wire}");
        assert_eq!(serde_json::from_str::<Edit>(&wire).unwrap(), inferred);
    }
}
