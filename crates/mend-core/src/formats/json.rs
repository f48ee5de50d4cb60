//! Shared helpers for the JSON formats: tool-call unwrapping and lenient
//! field access with errors that name the JSON location.

use serde_json::{Map, Value};

use crate::error::Error;

/// Parses JSON input. Models sometimes wrap JSON in a ```json fence; the
/// fence is removed first.
pub(crate) fn parse_value(text: &str, format: &'static str) -> Result<Value, Error> {
    let t = text.trim();
    let t = strip_fence(t).unwrap_or(t);
    serde_json::from_str(t).map_err(|e| Error::Parse {
        format,
        line: e.line(),
        message: format!("invalid JSON: {e}"),
    })
}

/// A JSON syntax error inside a fence opened at response line `fence`, with
/// the line and column counted in the response, not in the fence.
pub(crate) fn syntax_message(e: &serde_json::Error, fence: usize) -> String {
    let what = e.to_string();
    // serde_json appends " at line L column C", counted within the fence.
    let what = what.split(" at line ").next().unwrap_or(&what);
    format!(
        "the JSON does not parse: {what} at line {} column {} of your response; send valid JSON (no trailing commas or comments, strings escaped)",
        fence + e.line(),
        e.column()
    )
}

/// The path named in JSON that does not parse, when a path key is followed
/// by a plain string (no escapes), so a report can still name the file.
pub(crate) fn path_in_broken(text: &str) -> Option<String> {
    PATH_KEYS.iter().find_map(|k| {
        let (_, rest) = text.split_once(&format!("\"{k}\""))?;
        let rest = rest.trim_start().strip_prefix(':')?.trim_start();
        let (path, _) = rest.strip_prefix('"')?.split_once('"')?;
        (!path.is_empty() && !path.contains('\\')).then(|| path.to_owned())
    })
}

fn strip_fence(t: &str) -> Option<&str> {
    let rest = t.strip_prefix("```")?;
    let body_start = rest.find('\n')? + 1;
    let body = rest[body_start..].trim_end();
    Some(body.strip_suffix("```")?.trim())
}

/// Unwraps tool-call envelopes: `{"name": …, "arguments": {…}}`,
/// `{"input": {…}}`, `{"parameters": {…}}`, with `arguments` possibly a JSON
/// string (as OpenAI-style APIs send it).
pub(crate) fn unwrap_call(v: &Value) -> Result<Value, String> {
    let Some(obj) = v.as_object() else {
        return Ok(v.clone());
    };
    for key in ["arguments", "input", "parameters", "args"] {
        if let Some(inner) = obj.get(key) {
            return match inner {
                Value::String(s) => serde_json::from_str(s)
                    .map_err(|e| format!("`{key}` is a string but not valid JSON: {e}")),
                Value::Object(_) => Ok(inner.clone()),
                _ => continue,
            };
        }
    }
    Ok(v.clone())
}

/// The tool name of a call envelope, if any.
pub(crate) fn call_name(v: &Value) -> Option<&str> {
    v.get("name").and_then(Value::as_str)
}

/// The first present key among `keys`, with its value.
pub(crate) fn field<'v, 'k>(
    obj: &'v Map<String, Value>,
    keys: &[&'k str],
) -> Option<(&'k str, &'v Value)> {
    keys.iter().find_map(|&k| obj.get(k).map(|v| (k, v)))
}

/// Keys that name the target path.
pub(crate) const PATH_KEYS: &[&str] = &["path", "file_path", "filePath", "file"];

/// A required string field.
pub(crate) fn string(obj: &Map<String, Value>, keys: &[&str], at: &str) -> Result<String, String> {
    match field(obj, keys) {
        Some((_, Value::String(s))) => Ok(s.clone()),
        Some((k, other)) => Err(format!(
            "{at}: `{k}` must be a string, found {}",
            kind(other)
        )),
        None => Err(format!("{at}: missing `{}`", keys[0])),
    }
}

/// A list of lines given as an array of strings, or as one string.
pub(crate) fn lines(v: &Value, at: &str) -> Result<Vec<String>, String> {
    match v {
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, x)| match x {
                Value::String(s) => Ok(s.strip_suffix('\r').unwrap_or(s).to_owned()),
                other => Err(format!(
                    "{at}[{i}] must be a string (one line), found {}",
                    kind(other)
                )),
            })
            .collect(),
        Value::String(s) => Ok(crate::text::split_lines(s)),
        Value::Null => Ok(Vec::new()),
        other => Err(format!(
            "{at} must be an array of lines, found {}",
            kind(other)
        )),
    }
}

/// A JSON value's kind, for messages.
pub(crate) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
