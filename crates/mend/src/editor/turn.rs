//! The `turn/*` methods: the turn of the editor's root, with the same
//! operations (and the same JSON) as `mend turn`.

use std::path::Path;
use std::time::Duration;

use mend_checkpoint::turn::{BeginOptions, Selection};
use mend_service::turn::Action;
use serde::Deserialize;

use super::{Answer, Failure, Request, params};

#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct Select {
    /// `begin`: a label for humans.
    label: Option<String>,
    /// `begin`: the agent's session.
    session: Option<String>,
    /// `status`: list ignored files modified during the turn too.
    ignored: bool,
    /// Files or folders, relative to the root (default: every change).
    paths: Vec<String>,
    /// Hunk numbers, from 1, of one file, as `turn/diff` numbered them.
    hunks: Vec<usize>,
    /// The file's `version` from `turn/status` or `turn/diff`.
    seen: Option<String>,
}

/// The request as a service action.
fn action(method: &str, p: Select) -> Result<Action, Failure> {
    let selection = Selection {
        paths: p.paths,
        hunks: p.hunks,
        seen: p.seen,
    };
    Ok(match method {
        "turn/begin" => Action::Begin(BeginOptions {
            label: p.label,
            session: p.session,
            agent: Some("editor".into()),
            force: false,
        }),
        "turn/status" => Action::Status { ignored: p.ignored },
        "turn/diff" => Action::Diff(selection.paths),
        "turn/reject" => Action::Reject(selection),
        "turn/accept" => Action::Accept(selection),
        "turn/end" => Action::End,
        m => {
            return Err(Failure(
                super::METHOD_NOT_FOUND,
                format!("unknown method {m}; see docs/editor-protocol.md"),
            ));
        }
    })
}

pub(super) fn dispatch(root: &Path, req: &Request) -> Answer {
    let action = action(&req.method, params(req)?)?;
    let timeout = Duration::from_secs(mend_workspace::DEFAULT_LOCK_TIMEOUT_SECS);
    let outcome = mend_service::turn::act(root, &action, timeout, &mut |_| {})?;
    Ok(mend_service::to_value(&outcome)?)
}
