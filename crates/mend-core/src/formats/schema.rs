//! The JSON edit formats' canonical types: their JSON Schemas (`mend
//! schema`, generated with `schemars`), the MCP tools' arguments, and what
//! each means as an edit ([`StrReplaceChange::into_op`],
//! [`AnchoredChange::into_op`], [`non_empty`]), so the parsers and the MCP
//! server agree. The parsers accept more (aliases, tool-call envelopes, one
//! string instead of a list of lines); the schemas describe the canonical
//! shapes a model should send.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::edit::{EditOp, Hints, Replace, Target};

/// Replace one exact, unique occurrence of `old_string` with `new_string`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct StrReplaceEdit {
    /// File path relative to the project root.
    pub path: String,
    /// Text copied exactly from the file, with enough surrounding lines to
    /// occur exactly once. Empty creates a new file.
    pub old_string: String,
    /// The text that replaces it.
    pub new_string: String,
    /// Replace every occurrence instead of requiring exactly one.
    #[serde(default)]
    pub replace_all: bool,
}

/// One change of a multi-edit to a single file.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StrReplaceChange {
    /// Text copied exactly from the file.
    pub old_string: String,
    /// The text that replaces it.
    pub new_string: String,
    /// Replace every occurrence.
    #[serde(default)]
    pub replace_all: bool,
}

/// Several changes to one file, located against its current content.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct StrReplaceMulti {
    /// File path relative to the project root.
    pub path: String,
    /// The changes; they must not overlap.
    pub edits: Vec<StrReplaceChange>,
}

/// The str-replace format: one edit, a list of edits, or a multi-edit.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum StrReplaceInput {
    /// One edit.
    One(StrReplaceEdit),
    /// Several edits, possibly to several files.
    Many(Vec<StrReplaceEdit>),
    /// Several edits to one file.
    Multi(StrReplaceMulti),
}

/// One anchored change of `modify_file`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnchoredChange {
    /// 1-4 lines copied from the file that begin the region.
    pub start: Vec<String>,
    /// 1-4 lines that end the region; omit to replace just the `start` lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<Vec<String>>,
    /// The region's new lines, anchors included if they should stay.
    pub content: Vec<String>,
}

/// `modify_file`: replace regions located by anchors.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ModifyFile {
    /// File path relative to the project root.
    pub path: String,
    /// The changes; they must not overlap.
    pub changes: Vec<AnchoredChange>,
}

/// `write_file`: the whole content of a new or rewritten file.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct WriteFile {
    /// File path relative to the project root.
    pub path: String,
    /// The entire file.
    pub content: String,
}

/// The anchored format: `modify_file` or `write_file` calls, one or a list.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum AnchoredInput {
    /// One `modify_file` call.
    Modify(ModifyFile),
    /// One `write_file` call.
    Write(WriteFile),
    /// Several calls.
    Many(Vec<AnchoredCall>),
}

/// One call in a list of anchored calls.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum AnchoredCall {
    /// A `modify_file` call.
    Modify(ModifyFile),
    /// A `write_file` call.
    Write(WriteFile),
}

impl StrReplaceChange {
    /// The edit it asks for: the creation of a file when `old_string` is
    /// empty, else the replacement of `old_string`.
    pub fn into_op(self) -> EditOp {
        if self.old_string.is_empty() {
            EditOp::Create {
                content: self.new_string,
            }
        } else {
            EditOp::Replace(Replace {
                target: Target::Text {
                    old: self.old_string,
                    new: self.new_string,
                },
                replace_all: self.replace_all,
                hints: Hints::default(),
            })
        }
    }
}

impl AnchoredChange {
    /// The region replacement it asks for; refused when `start` is empty.
    pub fn into_op(self) -> Result<EditOp, String> {
        if self.start.is_empty() {
            return Err("start is empty; give 1-4 lines of the file".into());
        }
        Ok(EditOp::Replace(Replace {
            target: Target::Region {
                start: self.start,
                end: self.end.unwrap_or_default(),
                content: self.content,
            },
            replace_all: false,
            hints: Hints::default(),
        }))
    }
}

/// A list of changes (`edits` of a multi-edit, `changes` of
/// `modify_file`) may not be empty: asking for nothing is a mistake the
/// model should hear about, from every way in.
pub fn non_empty(field: &str, len: usize) -> Result<(), String> {
    if len > 0 {
        return Ok(());
    }
    let one = field.strip_suffix('s').unwrap_or(field);
    Err(format!("{field} is empty; give at least one {one}"))
}

/// Every JSON format's schema, keyed by format name.
pub fn schemas() -> serde_json::Value {
    serde_json::json!({
        "str-replace": schemars::schema_for!(StrReplaceInput),
        "anchored": schemars::schema_for!(AnchoredInput),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_describe_the_fields() {
        let s = schemas().to_string();
        for field in [
            "old_string",
            "new_string",
            "replace_all",
            "changes",
            "start",
            "content",
        ] {
            assert!(s.contains(field), "{field}");
        }
    }

    #[test]
    fn canonical_shapes_parse() {
        let one = r#"{"path":"a","old_string":"x","new_string":"y"}"#;
        assert!(serde_json::from_str::<StrReplaceInput>(one).is_ok());
        assert!(crate::formats::str_replace::parse(one).is_ok());
        let m = r#"{"path":"a","changes":[{"start":["x"],"content":[]}]}"#;
        assert!(serde_json::from_str::<AnchoredInput>(m).is_ok());
        assert!(crate::formats::anchored::parse(m).is_ok());
    }
}
