//! The `pending/*` methods: a pending-changes session for the editor's
//! review panel, with the same operations (and the same JSON) as
//! `mend pending`.

use mend_pending::Against;
use mend_service::choice::Choice;
use mend_service::pending::{Action, Actor};
use mend_service::review::Selection;
use mend_workspace::Workspace;
use serde::Deserialize;

use super::{Answer, Failure, Request, params, refused};

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
    /// (its `version` in `pending/status` or `pending/diff`); without it, the last `pending/diff`
    /// of the file (or `mend pending diff`) must still be current.
    seen: Option<String>,
    /// `accept`: write conflict markers instead of refusing.
    markers: bool,
    /// `diff`: `context` (default) or `local`.
    against: Option<String>,
}

/// The request as a service action.
fn action(method: &str, p: Select) -> Result<Action, Failure> {
    let selection = Selection {
        paths: p.paths,
        hunks: p.hunks,
        seen: p.seen,
    };
    Ok(match method {
        "pending/list" => Action::List,
        "pending/status" => Action::Status,
        "pending/diff" => {
            let against = match p.against.as_deref() {
                None => Against::Context,
                Some(word) => Against::named(word).ok_or_else(|| {
                    Failure::new(
                        super::INVALID_PARAMS,
                        format!("against must be {}, not {word:?}", Against::spelled()),
                    )
                })?,
            };
            Action::Diff {
                paths: selection.paths,
                against,
            }
        }
        "pending/output" => {
            Action::Output(p.path.ok_or_else(|| {
                Failure::new(super::INVALID_PARAMS, "pending/output needs a path")
            })?)
        }
        "pending/accept" => Action::Accept {
            selection,
            markers: p.markers,
        },
        "pending/reject" => Action::Reject(selection),
        "pending/sync" => Action::Sync(selection.paths),
        m => {
            return Err(Failure::new(
                super::METHOD_NOT_FOUND,
                format!("unknown method {m}; see docs/editor-protocol.md"),
            ));
        }
    })
}

/// A `pending/*` request on `ws` (whose lock timeout is the request's
/// wait), in `default` unless it names another session.
pub(super) fn dispatch(ws: &Workspace, default: &str, req: &Request) -> Answer {
    let mut p: Select = params(req)?;
    let session = p.session.take().unwrap_or_else(|| default.to_owned());
    let action = action(&req.method, p)?;
    let who = Actor {
        session: &session,
        holder: "mend editor",
        merge: None,
    };
    let outcome = mend_service::pending::act(ws, &who, action).map_err(|e| refused(&e))?;
    Ok(mend_service::to_value(&outcome)?)
}
