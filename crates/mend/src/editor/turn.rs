//! The `turn/*` methods: the turn of the editor's root, with the same
//! operations (and the same JSON) as `mend turn`; and `checkpoint/create`.

use std::time::Duration;

use mend_checkpoint::turn::{BeginOptions, Selection};
use mend_service::turn::Action;
use mend_service::{Call, Watched};
use mend_watch::Watcher;
use serde::Deserialize;

use super::{Answer, Failure, Request, params, refused};

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
        "turn/undo" => Action::Undo,
        "turn/end" => Action::End,
        m => {
            return Err(Failure::new(
                super::METHOD_NOT_FOUND,
                format!("unknown method {m}; see docs/editor-protocol.md"),
            ));
        }
    })
}

/// A `turn/*` request, waiting at most `wait` for the workspace lock,
/// through the root's holder (which decides what checkpoints), narrowed
/// by the buffers' watcher.
pub(super) fn dispatch(
    watched: &Watched,
    watcher: &Watcher,
    wait: Duration,
    req: &Request,
) -> Answer {
    let action = action(&req.method, params(req)?)?;
    let (outcome, _) = watched
        .turn(&mut Call::new(Some(watcher), Some(wait)), &action)
        .map_err(|e| refused(&e))?;
    Ok(mend_service::to_value(&outcome)?)
}

#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct Create {
    /// A label for humans.
    label: Option<String>,
    /// An anchor, such as the chat message it precedes.
    anchor: Option<String>,
}

/// `checkpoint/create`: a checkpoint of the root, narrowed by the
/// buffers' watcher, waiting at most `wait` for the workspace lock; the
/// answer is `mend checkpoint create --json`'s, with `scan`.
pub(super) fn checkpoint(
    watched: &Watched,
    watcher: &Watcher,
    wait: Duration,
    req: &Request,
) -> Answer {
    let p: Create = params(req)?;
    let opts = mend_checkpoint::CreateOptions {
        label: p.label,
        anchor: p.anchor,
        ..Default::default()
    };
    let made = watched
        .create(
            &mut Call::new(Some(watcher), Some(wait)),
            &opts,
            &Default::default(),
            false,
        )
        .map_err(|e| refused(&e))?;
    Ok(mend_service::to_value(&made)?)
}
