//! Reading files for a model: their content hashes (`mend hash`) and
//! lines with a version (`read_file`), each remembered so a later stale
//! edit can be shown what changed.

use mend_pending::Session;
use mend_workspace::{ContentHash, Snapshot, Workspace};
use serde::Serialize;

use crate::Error;
use crate::apply::Destination;

/// One file's content hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Hashed {
    /// The path relative to the root.
    pub path: String,
    /// Its hash, `None` when the file does not exist.
    pub hash: Option<ContentHash>,
    /// Why its content could not be kept for later (the hash is still
    /// good).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// The content hash of each file, in order.
pub fn hash(ws: &Workspace, paths: &[String]) -> Vec<Result<Hashed, Error>> {
    paths
        .iter()
        .map(|p| {
            let snap = ws.read(p)?;
            let Some(f) = snap.text() else {
                return Ok(Hashed {
                    path: snap.rel.clone(),
                    hash: None,
                    warning: None,
                });
            };
            // Keeping a snapshot helps a later stale edit explain itself;
            // a hash is still a hash without it.
            let warning = ws.remember(f).err().map(|e| e.to_string());
            Ok(Hashed {
                path: snap.rel.clone(),
                hash: Some(f.hash),
                warning,
            })
        })
        .collect()
}

/// Which lines to read: from `offset` (1-based, default 1), `limit` of
/// them (default all); both saturate at the end of the file.
#[derive(Debug, Clone, Copy, Default)]
pub struct Window {
    /// The first line, 1-based.
    pub offset: Option<usize>,
    /// How many lines.
    pub limit: Option<usize>,
}

/// `read_file`'s result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ReadResult {
    /// The path relative to the root.
    pub path: String,
    /// The content's hash: pass it as `expected_version`.
    pub version: ContentHash,
    /// How many lines the file has.
    pub total_lines: usize,
    /// The first line returned, 1-based.
    pub offset: usize,
    /// The lines asked for.
    pub content: String,
    /// In review mode: the session whose pending output this is, if any.
    pub pending: Option<String>,
}

/// The lines of a file and its version. With a pending destination, the
/// session's output where there is one, else the file, which becomes the
/// proposal's context.
pub fn read(
    ws: &Workspace,
    rel: &str,
    window: Window,
    from: Destination<'_>,
) -> Result<ReadResult, Error> {
    match from {
        Destination::Files => {
            let snap = ws.read(rel)?;
            if let Some(file) = snap.text() {
                // A version is still a version without its snapshot.
                let _ = ws.remember(file);
            }
            lines_of(&snap, window, None)
        }
        Destination::Pending { session, holder } => {
            let _lock = ws.lock()?;
            let mut s = Session::open(ws, session)?;
            s.set_holder(holder);
            let snap = s.read(rel)?;
            lines_of(&snap, window, Some(session))
        }
    }
}

/// The lines of a snapshot asked for, and its version.
fn lines_of(snap: &Snapshot, window: Window, pending: Option<&str>) -> Result<ReadResult, Error> {
    let Some(file) = snap.text() else {
        return Err(Error::NotFound(snap.rel.clone()));
    };
    // Lines as mend sees them (CR-only files included).
    let doc = mend_core::text::Document::new(&file.text);
    let n = doc.len();
    let start = window.offset.unwrap_or(1).max(1).saturating_sub(1).min(n);
    let end = window.limit.map_or(n, |l| start.saturating_add(l).min(n));
    let content = if start >= n {
        ""
    } else {
        &file.text[doc.byte_range(start..end)]
    };
    Ok(ReadResult {
        path: snap.rel.clone(),
        version: file.hash,
        total_lines: n,
        offset: start + 1,
        content: content.to_owned(),
        pending: pending.map(str::to_owned),
    })
}
