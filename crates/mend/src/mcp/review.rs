//! Review mode (`mend mcp --pending`): writing tools hold their results
//! as pending changes, `read_file` shows a file's pending output, and
//! `pending_status` lists the letters.

use std::collections::HashMap;
use std::path::Path;

use mend_core::formats::Parsed;
use mend_pending::Session;
use mend_workspace::{Options, Workspace};
use rmcp::model::CallToolResult;

use super::results::{self, PendingFile, PendingStatusResult, ReadResult};
use super::{failure, lines_of, report_fields};

/// Plans the edits into the session instead of writing; the caller holds
/// the workspace lock.
pub(super) fn propose(
    ws: &Workspace,
    session: &str,
    parsed: &Parsed,
    expect: HashMap<String, String>,
    syntax: mend_core::syntax::SyntaxPolicy,
) -> Result<CallToolResult, String> {
    let mut s = Session::open(ws, session).map_err(|e| e.to_string())?;
    s.set_syntax(syntax);
    let report = s
        .propose_expecting(parsed, expect)
        .map_err(|e| e.to_string())?;
    if !report.ok {
        return Ok(failure(
            report
                .retry_context
                .clone()
                .unwrap_or_else(|| "the edits failed".into()),
        ));
    }
    let mut v = report_fields(&report);
    for f in &report.files {
        let p = f.renamed_to.as_deref().unwrap_or(&f.path);
        if let Ok(snap) = s.read(p)
            && let Some(t) = snap.text()
        {
            v.versions.insert(snap.rel.clone(), t.hash.clone());
        }
    }
    v.pending = Some(session.to_owned());
    v.note = Some(format!(
        "nothing was written: the changes are held in pending session `{session}` for a person to review (`mend pending status`); read_file shows them"
    ));
    Ok(results::structured(&v))
}

/// `read_file` in review mode: the pending output where there is one, else
/// the file, which becomes its context.
pub(super) fn read(
    ws: &Workspace,
    session: &str,
    rel: &str,
    offset: Option<usize>,
    limit: Option<usize>,
) -> Result<ReadResult, String> {
    let _lock = ws.lock().map_err(|e| e.to_string())?;
    let mut s = Session::open(ws, session).map_err(|e| e.to_string())?;
    let snap = s.read(rel).map_err(|e| e.to_string())?;
    let mut v = lines_of(&snap, offset, limit)?;
    v.pending = Some(session.to_owned());
    Ok(v)
}

/// `pending_status`: the session's files and letters.
pub(super) fn status(root: &Path, session: &str) -> Result<PendingStatusResult, String> {
    let ws = Workspace::open(root, Options::default()).map_err(|e| e.to_string())?;
    let files = match Session::existing(&ws, session) {
        Ok(s) => s.status().map_err(|e| e.to_string())?,
        Err(mend_pending::Error::NoSession(_)) => Vec::new(),
        Err(e) => return Err(e.to_string()),
    };
    Ok(PendingStatusResult {
        session: session.to_owned(),
        files: files
            .into_iter()
            .map(|f| PendingFile {
                path: f.path,
                status: f.status.to_owned(),
                to: f.to,
            })
            .collect(),
    })
}
