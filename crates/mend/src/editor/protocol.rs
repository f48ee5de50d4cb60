//! The editor protocol's messages: what each request takes and what each
//! notification carries. `docs/editor-protocol.md` documents them.

use std::borrow::Cow;
use std::path::Path;

use mend_merge::LineHunk;
use mend_sync::{Change, Notice, Outcome};
use serde::Deserialize;
use serde_json::{Value, json};

/// `initialize` (other fields an LSP client adds are ignored).
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct Initialize {
    /// The workspace root (default: the server's working directory).
    pub root: Option<String>,
    /// The pending-changes session the `pending/*` methods use.
    pub session: Option<String>,
    /// Which resolvers dirty buffers' merges run after git's: `safe` or
    /// `git` (default: the server's `--merge`).
    pub merge: Option<mend_merge::Policy>,
}

/// `buffer/open` and `buffer/resync`: a buffer's whole text.
#[derive(Deserialize)]
pub(super) struct Report {
    pub path: String,
    pub text: String,
    #[serde(default)]
    pub dirty: bool,
    pub version: Option<i64>,
    /// The last notification applied to the buffer (its `seq`).
    pub applied: Option<u64>,
    /// `buffer/open` of a dirty buffer: the text the editor last loaded from
    /// the file (or took from the server), which the buffer derives from.
    pub disk: Option<String>,
}

/// `buffer/changed`: the whole text, or edits to the text last sent.
#[derive(Deserialize)]
pub(super) struct Changed {
    pub path: String,
    pub text: Option<String>,
    /// Edits in order, each to the text the one before left: lines
    /// `start..end` become `text` (whole lines with their endings).
    pub edits: Option<Vec<LineHunk<String>>>,
    pub dirty: bool,
    pub version: Option<i64>,
    /// The last notification applied to the buffer (its `seq`).
    pub applied: Option<u64>,
}

/// `buffer/saved`.
#[derive(Deserialize)]
pub(super) struct Saved {
    pub path: String,
    pub text: String,
    pub version: Option<i64>,
}

/// `buffer/close`.
#[derive(Deserialize)]
pub(super) struct Close {
    pub path: String,
}

/// `changes/since`.
#[derive(Deserialize)]
pub(super) struct Since {
    pub token: u64,
}

/// Applies line edits, in order, each to the text the previous one left.
/// An edit's text is whole lines: one that does not end with a newline is
/// refused unless it reaches the end of the buffer, since it would join
/// its last line with the next.
pub(super) fn apply_edits(text: &str, edits: &[LineHunk<String>]) -> Result<String, String> {
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
        if !e.text.is_empty() && !e.text.ends_with('\n') && e.end < lines.len() {
            return Err(format!(
                "edit {}..{}: its text does not end with a line ending, so its last line would \
                 join line {}; end the text with a newline, or send the whole text",
                e.start, e.end, e.end
            ));
        }
        lines.splice(e.start..e.end, e.text.split_inclusive('\n'));
        cur = lines.concat();
    }
    Ok(cur)
}

/// A change's hunks as the editor reads them: their text as a string.
fn hunks(hs: &[LineHunk<Vec<u8>>]) -> Vec<LineHunk<Cow<'_, str>>> {
    hs.iter()
        .map(|h| LineHunk {
            start: h.start,
            end: h.end,
            text: String::from_utf8_lossy(&h.text),
        })
        .collect()
}

fn change(base: Value, c: &Change) -> Value {
    let mut v = base;
    v["seq"] = json!(c.seq);
    v["disk_sha256"] = json!(c.disk_sha256.hex());
    v["text"] = json!(String::from_utf8_lossy(&c.text));
    if c.disk[..] != c.text[..] {
        // What the buffer derives from once it takes the change, which the
        // editor keeps to open the buffer again after a restart.
        v["disk"] = json!(String::from_utf8_lossy(&c.disk));
    }
    v["hunks"] = json!(hunks(&c.hunks));
    v["resolved"] = json!(
        c.resolved
            .iter()
            .map(|r| json!({"resolver": r.resolver, "start": r.lines.start, "end": r.lines.end}))
            .collect::<Vec<_>>()
    );
    v
}

/// The notification for a notice: its method and params.
pub(super) fn notification(root: &Path, n: &Notice) -> (&'static str, Value) {
    let base = json!({
        "buffer": n.buffer.get(),
        "path": n.path.to_string_lossy(),
        "abspath": root.join(&n.path).to_string_lossy(),
        "version": n.version,
    });
    match &n.outcome {
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
        Outcome::Deleted => ("buffer/deleted", base),
        Outcome::Renamed { to } => {
            let mut v = base;
            v["to"] = json!(to.to_string_lossy());
            v["to_abspath"] = json!(root.join(to).to_string_lossy());
            ("buffer/renamed", v)
        }
        Outcome::Replaced { by } => {
            let mut v = base;
            v["by"] = json!(by.to_string_lossy());
            v["by_abspath"] = json!(root.join(by).to_string_lossy());
            ("buffer/replaced", v)
        }
        Outcome::Skipped(why) => {
            let mut v = base;
            v["reason"] = json!(why.reason());
            v["message"] = json!(why.explain());
            if let mend_sync::Skipped::NotAFile(kind) = why {
                v["kind"] = json!(kind);
            }
            ("buffer/skipped", v)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(start: usize, end: usize, text: &str) -> LineHunk<String> {
        LineHunk {
            start,
            end,
            text: text.into(),
        }
    }

    #[test]
    fn an_edit_without_a_final_newline_never_joins_lines() {
        let err = apply_edits("a\nb\nc\n", &[edit(0, 1, "x")]).unwrap_err();
        assert!(err.contains("join line 1"), "{err}");
        // At the end of the buffer it is the buffer's last line.
        assert_eq!(apply_edits("a\nb\n", &[edit(1, 2, "x")]).unwrap(), "a\nx");
        assert_eq!(
            apply_edits("a\nb\nc\n", &[edit(0, 1, "x\n")]).unwrap(),
            "x\nb\nc\n"
        );
    }
}
