//! The `pending/*` methods: a pending-changes session for the editor's
//! review panel, with the same operations as `mend pending`.

use super::Request;
use mend_pending::{Against, HunkGuard, Session};
use mend_workspace::Workspace;
use serde::Deserialize;
use serde_json::json;

use super::{Answer, Failure, params};

#[derive(Deserialize, Default)]
#[serde(default)]
struct Select {
    /// The session (default: the one named at `initialize`).
    session: Option<String>,
    /// Files, relative to the root (default: all).
    paths: Vec<String>,
    /// `output`: the one file.
    path: Option<String>,
    /// Hunk numbers, from 1, of one file.
    hunks: Vec<usize>,
    /// The version of the file's proposal the hunk numbers were read from
    /// (`pending/diff`'s `versions`); without it, the last `pending/diff`
    /// of the file (or `mend pending diff`) must still be current.
    seen: Option<String>,
    /// `accept`: write conflict markers instead of refusing.
    markers: bool,
    /// `diff`: `context` (default) or `local`.
    against: Option<String>,
}

/// The named session, naming the editor server in its lock.
fn existing<'w>(ws: &'w Workspace, name: &str) -> Result<Session<'w>, mend_pending::Error> {
    let mut s = Session::existing(ws, name)?;
    s.set_holder("mend editor");
    Ok(s)
}

/// How hunk numbers were read: `seen`, else the last recorded diff.
fn guard(p: &Select) -> HunkGuard<'_> {
    p.seen
        .as_deref()
        .map_or(HunkGuard::LastDiff, HunkGuard::Version)
}

pub(super) fn dispatch(ws: &Workspace, default: &str, req: &Request) -> Answer {
    let p: Select = params(req)?;
    let name = p.session.as_deref().unwrap_or(default);
    match req.method.as_str() {
        "pending/list" => Ok(json!({"sessions": Session::list(ws)?})),
        "pending/status" => Ok(serde_json::to_value(existing(ws, name)?.report()?)?),
        "pending/diff" => {
            let against = match p.against.as_deref() {
                None | Some("context") => Against::Context,
                Some("local") => Against::Local,
                Some(other) => {
                    return Err(Failure(
                        super::INVALID_PARAMS,
                        format!("against must be \"context\" or \"local\", not {other:?}"),
                    ));
                }
            };
            // Recorded as shown: hunks are then picked by these numbers.
            let files = existing(ws, name)?.diff_files(&p.paths, against, true)?;
            let mut versions = serde_json::Map::new();
            let mut diff = String::new();
            for f in files {
                if let Some(v) = f.version {
                    versions.insert(f.path, v.into());
                }
                diff.push_str(&f.text);
            }
            Ok(json!({"diff": diff, "versions": versions}))
        }
        "pending/output" => {
            let Some(path) = p.path.as_deref() else {
                return Err(Failure(
                    super::INVALID_PARAMS,
                    "pending/output needs a path".into(),
                ));
            };
            // The model's output when there is one, else its context.
            let snap = existing(ws, name)?.seen(path)?;
            Ok(json!({"path": snap.rel, "text": snap.file.map(|f| f.text)}))
        }
        "pending/accept" => {
            let mut s = existing(ws, name)?;
            let lock = crate::lock_and_recover(ws)?;
            let done = s.accept_with(&lock, &p.paths, &p.hunks, p.markers, guard(&p))?;
            Ok(json!({"accepted": done}))
        }
        "pending/reject" => {
            let done = existing(ws, name)?.reject_with(&p.paths, &p.hunks, guard(&p))?;
            Ok(json!({"rejected": done}))
        }
        "pending/sync" => {
            let done = existing(ws, name)?.sync(&p.paths)?;
            let skipped: Vec<_> = done
                .skipped
                .iter()
                .map(|(path, why)| json!({"path": path, "why": why}))
                .collect();
            Ok(json!({"synced": done.synced, "skipped": skipped}))
        }
        m => Err(Failure(
            super::METHOD_NOT_FOUND,
            format!("unknown method {m}; see docs/editor-protocol.md"),
        )),
    }
}
