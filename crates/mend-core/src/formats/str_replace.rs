//! `old_string` / `new_string` edits in JSON (Claude Code's Edit and
//! MultiEdit tools, Anthropic's text-editor tool, opencode's edit tool).
//!
//! # Grammar
//!
//! ```text
//! input  := edit | [ edit, … ] | { "path"?: P, "edits": [ change, … ] }
//! edit   := { "path": P, change-fields }
//! change := { "path"?: P, "old_string": S, "new_string": S, "replace_all"?: bool }
//! ```
//!
//! In an `edits` list each change takes the list's path unless it names
//! its own, so one list may span files; a change with neither is refused.
//!
//! # Tolerated deviations
//!
//! - Aliases: `old_str`/`new_str` (Anthropic), `oldText`/`newText`
//!   (opencode), `old_text`/`new_text`; `file_path`/`filePath`/`file` for
//!   `path`; `replaceAll` for `replace_all`.
//! - Tool-call envelopes: `{"name": …, "arguments": {…}}` (with `arguments`
//!   possibly a JSON string), `{"input": {…}}`, `{"parameters": {…}}`.
//! - Anthropic's `"command": "str_replace"` is accepted; `"command":
//!   "create"` with `file_text` is a whole-file write.
//! - The JSON may sit in a ```` ```json ```` fence.
//!
//! `old_string` is a substring: it may start and end inside lines. It must
//! occur exactly once unless `replace_all` is true; when it does not occur
//! verbatim, its lines climb the locator's ladder like a SEARCH block.
//! A `new_string` with a line that may be an elision marker or carries a
//! line-number prefix, and one whose `old_string` matched only with
//! typography folded, is planned as the whole lines it touches, so the
//! rules of every line format hold for it: a marker standing for code is
//! refused, pasted numbers are not written, curled quotes are folded.

use serde_json::{Map, Value};

use super::format::Format;
use super::json::{self, PATH_KEYS};
use super::schema;
use crate::edit::{Edit, EditOp, Origin};
use crate::error::Error;

/// The name used in reports.
pub const NAME: &str = Format::StrReplace.name();

pub(crate) const OLD: &[&str] = &["old_string", "old_str", "oldText", "old_text"];
pub(crate) const NEW: &[&str] = &["new_string", "new_str", "newText", "new_text"];

/// Whether a JSON object looks like this format.
pub fn matches(v: &Value) -> bool {
    let v = json::unwrap_call(v).unwrap_or_else(|_| v.clone());
    match &v {
        Value::Array(items) => items.iter().any(matches),
        Value::Object(o) => {
            OLD.iter().any(|k| o.contains_key(*k))
                || o.get("edits")
                    .is_some_and(|e| e.as_array().is_some_and(|a| a.iter().any(matches)))
                || o.get("command").and_then(Value::as_str) == Some("str_replace")
        }
        _ => false,
    }
}

/// Parses str-replace JSON.
pub fn parse(text: &str) -> Result<Vec<Edit>, Error> {
    let v = json::parse_value(text, NAME)?;
    parse_value(&v)
}

/// Parses an already-decoded JSON value.
pub fn parse_value(v: &Value) -> Result<Vec<Edit>, Error> {
    let mut out = Vec::new();
    collect(v, "$", &mut out).map_err(|message| Error::Parse {
        format: NAME,
        line: 0,
        message,
    })?;
    Ok(out)
}

fn collect(v: &Value, at: &str, out: &mut Vec<Edit>) -> Result<(), String> {
    let v = json::unwrap_call(v).map_err(|e| format!("{at}: {e}"))?;
    match &v {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                collect(item, &format!("{at}[{i}]"), out)?;
            }
            Ok(())
        }
        Value::Object(obj) => {
            if let Some(edits) = obj.get("edits") {
                return collect_list(obj, edits, at, out);
            }
            let path = json::string(obj, PATH_KEYS, at)?;
            if let Some(cmd) = obj.get("command").and_then(Value::as_str) {
                match cmd {
                    "str_replace" => {}
                    "create" => {
                        let content = json::string(obj, &["file_text", "content"], at)?;
                        out.push(Edit {
                            path,
                            op: EditOp::WriteFile {
                                content,
                                inferred: false,
                            },
                            origin: Some(origin(&v, at)),
                        });
                        return Ok(());
                    }
                    other => {
                        return Err(format!(
                            "{at}: command `{other}` is not an edit mend applies; use `str_replace` (old_str/new_str) or `create` (file_text)"
                        ));
                    }
                }
            }
            out.push(change_edit(&path, obj, &v, at)?);
            Ok(())
        }
        other => Err(format!(
            "{at}: expected an object with path, old_string and new_string, found {}",
            json::kind(other)
        )),
    }
}

/// `{"path": P, "edits": [change, …]}`, where a change may name its own
/// path (a list spanning files), which the list's path then need not give.
fn collect_list(
    obj: &Map<String, Value>,
    edits: &Value,
    at: &str,
    out: &mut Vec<Edit>,
) -> Result<(), String> {
    let Value::Array(items) = edits else {
        return Err(format!(
            "{at}.edits must be an array, found {}",
            json::kind(edits)
        ));
    };
    schema::non_empty("edits", items.len()).map_err(|e| format!("{at}.{e}"))?;
    let shared = json::field(obj, PATH_KEYS).map(|_| json::string(obj, PATH_KEYS, at));
    for (i, item) in items.iter().enumerate() {
        let here = format!("{at}.edits[{i}]");
        let Value::Object(change) = item else {
            return Err(format!(
                "{here} must be an object with old_string and new_string, found {}",
                json::kind(item)
            ));
        };
        let path = match (json::field(change, PATH_KEYS), &shared) {
            (Some(_), _) => json::string(change, PATH_KEYS, &here)?,
            (None, Some(p)) => p.clone()?,
            (None, None) => {
                return Err(format!(
                    "{here}: missing `path`; give it beside `edits` or in each edit"
                ));
            }
        };
        out.push(change_edit(&path, change, item, &here)?);
    }
    Ok(())
}

fn change_edit(
    path: &str,
    obj: &Map<String, Value>,
    raw: &Value,
    at: &str,
) -> Result<Edit, String> {
    let old = json::string(obj, OLD, at)?;
    let new = json::string(obj, NEW, at)?;
    let replace_all = match json::field(obj, &["replace_all", "replaceAll"]) {
        None | Some((_, Value::Null)) => false,
        Some((_, Value::Bool(b))) => *b,
        Some((k, other)) => {
            return Err(format!(
                "{at}: `{k}` must be true or false, found {}",
                json::kind(other)
            ));
        }
    };
    let change = schema::StrReplaceChange {
        old_string: old,
        new_string: new,
        replace_all,
    };
    Ok(Edit {
        path: path.to_owned(),
        op: change.into_op(),
        origin: Some(origin(raw, at)),
    })
}

fn origin(v: &Value, at: &str) -> Origin {
    Origin {
        format: Format::StrReplace.into(),
        line: 0,
        text: format!(
            "{at}: {}",
            serde_json::to_string_pretty(v).unwrap_or_default()
        )
        .into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_and_aliases() {
        let single = r#"{"path":"a.py","old_string":"x","new_string":"y"}"#;
        assert_eq!(parse(single).unwrap().len(), 1);
        let list = r#"[{"file_path":"a.py","old_str":"x","new_str":"y"},{"path":"b.py","oldText":"1","newText":"2","replace_all":true}]"#;
        let e = parse(list).unwrap();
        assert_eq!(e[1].path, "b.py");
        let EditOp::Replace(r) = &e[1].op else {
            panic!()
        };
        assert!(r.replace_all);
        let multi = r#"{"path":"a.py","edits":[{"old_string":"a","new_string":"b"},{"old_string":"c","new_string":"d"}]}"#;
        assert_eq!(parse(multi).unwrap().len(), 2);
        let call = r#"{"name":"Edit","arguments":"{\"file_path\":\"a.py\",\"old_string\":\"q\",\"new_string\":\"r\"}"}"#;
        assert_eq!(parse(call).unwrap()[0].path, "a.py");
    }

    #[test]
    fn errors_name_the_location() {
        let e = parse(r#"[{"path":"a","old_string":"x"}]"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("$[0]: missing `new_string`"), "{e}");
        let e = parse(r#"{"path":"a","old_string":1,"new_string":""}"#)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`old_string` must be a string, found a number"),
            "{e}"
        );
    }
}
