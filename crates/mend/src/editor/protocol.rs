//! The editor protocol's messages: what each request takes and what each
//! notification carries. `docs/editor-protocol.md` documents them.

use std::path::Path;

use mend_sync::{Change, Hunk, Outcome, Skipped};
use mend_watch::Notice;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// `initialize`.
#[derive(Deserialize, Default)]
#[serde(default)]
pub struct Initialize {
    /// The workspace root (default: the server's working directory).
    pub root: Option<String>,
    /// The pending-changes session the `pending/*` methods use.
    pub session: Option<String>,
}

/// `buffer/open` and `buffer/resync`: a buffer's whole text.
#[derive(Deserialize)]
pub struct Report {
    pub path: String,
    pub text: String,
    #[serde(default)]
    pub dirty: bool,
    pub version: Option<i64>,
}

/// One edit of `buffer/changed`: lines `start..end` of the text before it
/// become `text` (whole lines with their endings).
#[derive(Deserialize)]
pub struct LineEdit {
    pub start: usize,
    pub end: usize,
    pub text: String,
}

/// `buffer/changed`: the whole text, or edits to the text last sent.
#[derive(Deserialize)]
pub struct Changed {
    pub path: String,
    pub text: Option<String>,
    pub edits: Option<Vec<LineEdit>>,
    pub dirty: bool,
    pub version: Option<i64>,
}

/// `buffer/saved`.
#[derive(Deserialize)]
pub struct Saved {
    pub path: String,
    pub text: String,
    pub version: Option<i64>,
}

/// `buffer/close`.
#[derive(Deserialize)]
pub struct Close {
    pub path: String,
}

/// `changes/since`.
#[derive(Deserialize)]
pub struct Since {
    pub token: u64,
}

/// Applies line edits, in order, each to the text the previous one left.
pub fn apply_edits(text: &str, edits: &[LineEdit]) -> Result<String, String> {
    let mut cur = text.to_owned();
    for e in edits {
        let mut lines: Vec<&str> = cur.split_inclusive('\n').collect();
        if e.start > e.end || e.end > lines.len() {
            return Err(format!(
                "edit {}..{} is outside the buffer's {} lines; send the whole text instead",
                e.start,
                e.end,
                lines.len()
            ));
        }
        lines.splice(e.start..e.end, e.text.split_inclusive('\n'));
        cur = lines.concat();
    }
    Ok(cur)
}

#[derive(Serialize)]
struct WireHunk<'a> {
    start: usize,
    end: usize,
    text: std::borrow::Cow<'a, str>,
}

fn hunks(hs: &[Hunk]) -> Vec<WireHunk<'_>> {
    hs.iter()
        .map(|h| WireHunk {
            start: h.start,
            end: h.end,
            text: String::from_utf8_lossy(&h.text),
        })
        .collect()
}

fn change(base: Value, c: &Change) -> Value {
    let mut v = base;
    v["text"] = json!(String::from_utf8_lossy(&c.text));
    v["hunks"] = json!(hunks(&c.hunks));
    v
}

/// The notification for a notice: its method and params.
pub fn notification(root: &Path, n: &Notice) -> Option<(&'static str, Value)> {
    let rel = n.path.to_string_lossy();
    let mut base = json!({
        "path": rel,
        "abspath": root.join(&n.path).to_string_lossy(),
        "version": n.version,
    });
    if let Some(sha) = &n.disk_sha256 {
        base["disk_sha256"] = json!(sha);
    }
    Some(match &n.outcome {
        Outcome::Reload(c) => ("buffer/reload", change(base, c)),
        Outcome::Merged(c) => ("buffer/merged", change(base, c)),
        Outcome::Conflict { change: c, regions } => {
            let mut v = change(base, c);
            v["conflicts"] = json!(
                regions
                    .iter()
                    .map(|r| json!({"start": r.start, "end": r.end}))
                    .collect::<Vec<_>>()
            );
            ("buffer/conflict", v)
        }
        Outcome::AskRecreate => ("buffer/deleted", base),
        Outcome::Follow { to } => {
            let mut v = base;
            v["to"] = json!(to);
            v["to_abspath"] = json!(root.join(to).to_string_lossy());
            ("buffer/renamed", v)
        }
        Outcome::Skipped(why) => {
            let mut v = base;
            v["reason"] = json!(match why {
                Skipped::Binary => "binary",
                Skipped::TooLarge => "too-large",
            });
            ("buffer/skipped", v)
        }
        Outcome::Noted | Outcome::Ignored(_) | Outcome::Recheck => return None,
    })
}
