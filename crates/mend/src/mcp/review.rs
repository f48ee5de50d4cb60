//! Review mode (`mend mcp --pending`): writing tools hold their results
//! as pending changes (a dry run holds nothing), `read_file` shows a
//! file's pending text, `pending_status` lists the letters, and
//! `checkpoint_restore` is refused, since it would write the worktree.

use std::collections::HashMap;
use std::path::Path;

use mend_core::formats::Parsed;
use mend_pending::{Propose, Session, StatusReport};
use mend_workspace::{Options, Workspace};
use rmcp::model::CallToolResult;

use super::results::{self, ReadResult};
use super::{Call, failure, lines_of, report_fields};

/// What names this server in a session's lock.
const HOLDER: &str = "mend mcp --pending";

/// Plans the edits into the session instead of writing (with `dry_run`,
/// plans only); the caller holds the workspace lock.
pub(super) fn propose(
    ws: &Workspace,
    session: &str,
    parsed: &Parsed,
    expect: HashMap<String, String>,
    call: Call,
    syntax: mend_core::report::syntax::SyntaxPolicy,
) -> Result<CallToolResult, String> {
    let mut s = Session::open(ws, session).map_err(|e| e.to_string())?;
    s.set_syntax(syntax);
    s.set_holder(HOLDER);
    let opts = Propose {
        expect,
        dry_run: call.dry_run,
        streamed: None,
    };
    let proposal = s.propose_with(parsed, opts).map_err(|e| e.to_string())?;
    let report = &proposal.report;
    if !report.ok {
        return Ok(failure(
            report
                .retry_context
                .clone()
                .unwrap_or_else(|| "the edits failed".into()),
        ));
    }
    let mut v = report_fields(report);
    for f in &report.files {
        let p = f.renamed_to.as_deref().unwrap_or(&f.path);
        if let Ok(snap) = s.seen(p)
            && let Some(t) = snap.text()
        {
            v.versions.insert(snap.rel.clone(), t.hash.clone());
        }
    }
    v.dry_run = call.dry_run;
    v.pending = Some(session.to_owned());
    v.held = proposal.held;
    v.note = Some(if call.dry_run {
        format!(
            "dry run: nothing was held in pending session `{session}` and nothing was written; the diff is what the call would propose"
        )
    } else {
        format!(
            "nothing was written: the changes are held in pending session `{session}` for a person to review (`mend pending status`); read_file shows them"
        )
    });
    Ok(results::structured(&v))
}

/// `read_file` in review mode: the pending text where there is one, else
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
    s.set_holder(HOLDER);
    let snap = s.read(rel).map_err(|e| e.to_string())?;
    let mut v = lines_of(&snap, offset, limit)?;
    v.pending = Some(session.to_owned());
    Ok(v)
}

/// `pending_status`: the session's files and letters (a file that cannot
/// be read has `?` and a reason).
pub(super) fn status(root: &Path, session: &str) -> Result<StatusReport, String> {
    let ws = Workspace::open(root, Options::default())
        .map(crate::prepared)
        .map_err(|e| e.to_string())?;
    match Session::existing(&ws, session) {
        Ok(s) => s.report().map_err(|e| e.to_string()),
        Err(mend_pending::Error::NoSession(_)) => Ok(StatusReport {
            session: session.to_owned(),
            files: Vec::new(),
        }),
        Err(e) => Err(e.to_string()),
    }
}

/// Why `checkpoint_restore` is refused in review mode.
pub(super) const NO_RESTORE: &str = "checkpoint_restore is refused in review mode (`mend mcp --pending`): a restore writes the worktree directly, and in review mode writing tools only propose. A dry run still lists what it would change; ask the person to run `mend checkpoint restore ID` if it is needed.";
