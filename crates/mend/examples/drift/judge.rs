//! Judging one rendered edit: plan it with mend-core against the old file
//! and compare with the file it should produce. Pure: the drift benchmark
//! and the property tests share it.

use mend_core::formats::{self, Format};
use mend_core::{PlanOptions, plan_file};

use crate::drift::Kind;
use crate::hunks::Hunk;

/// What became of one edit.
pub enum Outcome {
    /// The expected text.
    Success,
    /// Applied, with another text (the diff from the expected).
    Wrong(String),
    /// Not applied (why).
    Refused(String),
}

/// Plans `text` (a response in `format`) against `file`.
pub fn plan(format: Format, text: &str, file: &str, h: &Hunk) -> Outcome {
    let parsed = match formats::parse(text, format) {
        Ok(p) => p,
        Err(e) => return Outcome::Refused(format!("parse: {e}")),
    };
    let edits: Vec<_> = parsed.edits().enumerate().collect();
    if edits.len() != parsed.entries.len() {
        return Outcome::Refused("a block was malformed".into());
    }
    let p = plan_file(&h.path, Some(file), &edits, &PlanOptions::default());
    if !p.is_ok() {
        let why = p
            .reports
            .iter()
            .find_map(|r| r.failure.as_ref().map(|f| f.message.clone()))
            .unwrap_or_default();
        return Outcome::Refused(why);
    }
    match p.content {
        Some(c) if c == h.expected => Outcome::Success,
        other => Outcome::Wrong(diff_note(&h.expected, other.as_deref().unwrap_or(""))),
    }
}

fn diff_note(want: &str, got: &str) -> String {
    mend_core::diff::unified(Some("expected"), Some("got"), want, got)
}

/// Kinds a format cannot express (anchored `content` elides only between
/// its anchors).
pub fn applies(format: Format, kind: Kind) -> bool {
    match format {
        Format::ApplyPatch | Format::UnifiedDiff => kind != Kind::LineNumbers,
        Format::Anchored => kind != Kind::Elision,
        _ => true,
    }
}
