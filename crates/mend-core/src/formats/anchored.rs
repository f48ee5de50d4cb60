//! Anchored region edits: the `modify_file` and `write_file` tool calls.
//!
//! # Grammar
//!
//! ```text
//! input       := call | [ call, … ]
//! call        := modify_file | write_file
//! modify_file := { "path": P, "changes": [ change, … ] }
//! change      := { "start": [line, …], "end"?: [line, …], "content": [line, …] }
//! write_file  := { "path": P, "content": "whole file text" }
//! ```
//!
//! The region runs from the first `start` line through the last `end` line
//! (or the last `start` line when `end` is absent), and `content` replaces
//! it exactly: an anchor survives only if `content` repeats it. Anchors are
//! matched line by line with the ladder's per-line passes (exact, trailing
//! whitespace, whitespace, Unicode, line numbers) but never by similarity:
//! an anchor is short, and a merely similar line is a different line. Each
//! anchor must match exactly once; the end anchor is searched after the
//! start anchor.
//!
//! # Tolerated deviations
//!
//! - Tool-call envelopes (`{"name": "modify_file", "arguments": …}`).
//! - `start`, `end` and `content` given as one string instead of an array of
//!   lines (split on newlines).
//! - `file_path`/`filePath`/`file` for `path`.
//! - The JSON may sit in a ```` ```json ```` fence.

use serde_json::Value;

use super::format::Format;
use super::json::{self, PATH_KEYS};
use super::schema;
use crate::edit::{Edit, EditOp, Origin};
use crate::error::Error;

/// The name used in reports.
pub const NAME: &str = Format::Anchored.name();

/// The tool names of anchored calls.
pub(crate) const TOOLS: &[&str] = &["modify_file", "write_file"];

/// Whether a JSON value looks like this format.
pub fn matches(v: &Value) -> bool {
    if json::call_name(v).is_some_and(|n| TOOLS.contains(&n)) {
        return true;
    }
    let v = json::unwrap_call(v).unwrap_or_else(|_| v.clone());
    match &v {
        Value::Array(items) => items.iter().any(matches),
        Value::Object(o) => {
            o.contains_key("changes")
                || (o.get("content").is_some_and(Value::is_string)
                    && !o.keys().any(|k| k.starts_with("old")))
        }
        _ => false,
    }
}

/// Parses anchored JSON.
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

/// Collects the edits of the value at JSON path `at`: a call, or an array
/// of them.
fn collect(v: &Value, at: &str, out: &mut Vec<Edit>) -> Result<(), String> {
    let unwrapped = json::unwrap_call(v).map_err(|e| format!("{at}: {e}"))?;
    match &unwrapped {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                collect(item, &format!("{at}[{i}]"), out)?;
            }
            Ok(())
        }
        Value::Object(obj) => {
            let path = json::string(obj, PATH_KEYS, at)?;
            if let Some(changes) = obj.get("changes") {
                return modify_file(changes, &path, at, out);
            }
            out.push(write_file(obj, &path, at)?);
            Ok(())
        }
        other => Err(format!(
            "{at}: expected a modify_file or write_file object, found {}",
            json::kind(other)
        )),
    }
}

/// The edits of a `modify_file` call's `changes`, one per change.
fn modify_file(changes: &Value, path: &str, at: &str, out: &mut Vec<Edit>) -> Result<(), String> {
    let Value::Array(items) = changes else {
        return Err(format!(
            "{at}.changes must be an array, found {}",
            json::kind(changes)
        ));
    };
    schema::non_empty("changes", items.len()).map_err(|e| format!("{at}.{e}"))?;
    for (i, c) in items.iter().enumerate() {
        out.push(change(c, path, &format!("{at}.changes[{i}]"))?);
    }
    Ok(())
}

/// The edit of one `modify_file` change, found at JSON path `here`.
fn change(c: &Value, path: &str, here: &str) -> Result<Edit, String> {
    let Value::Object(co) = c else {
        return Err(format!(
            "{here} must be an object with start and content, found {}",
            json::kind(c)
        ));
    };
    let start = json::lines(
        co.get("start")
            .ok_or_else(|| format!("{here}: missing `start` (1-4 lines that begin the region)"))?,
        &format!("{here}.start"),
    )?;
    let end = match co.get("end") {
        Some(e) => json::lines(e, &format!("{here}.end"))?,
        None => Vec::new(),
    };
    let content = json::lines(
        co.get("content")
            .ok_or_else(|| format!("{here}: missing `content` (use [] to delete the region)"))?,
        &format!("{here}.content"),
    )?;
    let change = schema::AnchoredChange {
        start,
        end: Some(end),
        content,
    };
    let op = change.into_op().map_err(|e| format!("{here}.{e}"))?;
    Ok(Edit {
        path: path.to_owned(),
        op,
        origin: Some(Origin {
            format: Format::Anchored.into(),
            line: 0,
            text: format!(
                "{here} of modify_file({path}): {}",
                serde_json::to_string_pretty(c).unwrap_or_default()
            )
            .into(),
        }),
    })
}

/// The edit of a `write_file` call (an object without `changes`).
fn write_file(obj: &serde_json::Map<String, Value>, path: &str, at: &str) -> Result<Edit, String> {
    match obj.get("content") {
        Some(Value::String(content)) => Ok(Edit {
            path: path.to_owned(),
            op: EditOp::WriteFile {
                content: content.clone(),
                inferred: false,
            },
            origin: Some(Origin {
                format: Format::Anchored.into(),
                line: 0,
                text: format!("{at}: write_file({path}, …)").into(),
            }),
        }),
        Some(other) => Err(format!(
            "{at}.content must be the whole file as a string, found {}",
            json::kind(other)
        )),
        None => Err(format!(
            "{at}: expected `changes` (modify_file) or `content` (write_file)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modify_and_write() {
        let t = r#"[{"name":"modify_file","arguments":{"path":"m.py","changes":[{"start":["def hello():"],"end":["def goodbye():"],"content":["def hello(name):","    print(name)","","def goodbye():"]}]}},
                   {"path":"new.py","content":"print(1)\n"}]"#;
        let e = parse(t).unwrap();
        assert_eq!(e.len(), 2);
        assert!(matches!(e[1].op, EditOp::WriteFile { .. }));
    }

    #[test]
    fn errors() {
        let e = parse(r#"{"path":"a","changes":[{"start":["x"]}]}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("missing `content`"), "{e}");
    }
}
