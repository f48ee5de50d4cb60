//! mend's application layer: the operations the `mend` CLI, its MCP
//! server and its editor protocol offer, each once, with typed outcomes.
//!
//! A front-end maps its arguments onto a request, calls one operation, and
//! renders the outcome: as text for a person, or as the outcome's one JSON
//! shape ([`to_json`]), which `--json`, MCP results and the editor's
//! `pending/*` answers all print. The service owns what the front-ends
//! used to repeat: taking the workspace lock and finishing an interrupted
//! transaction first ([`lock_recovered`]), routing paths to project roots
//! ([`Roots`]), applying or proposing with expectations, a checkpoint
//! before the write and the git stage list ([`apply`]), reading back
//! versions ([`files`]), the pending actions ([`pending`]), the one review model both
//! pending sessions and turns are shown in ([`review`]), checkpoints
//! ([`checkpoint`]), turns and agents' hooks ([`turn`]), merges and diffs ([`merge`]), checkpoints
//! narrowed by a watcher ([`Watched`]) and the daemon that keeps one
//! ([`daemon`]), and which errors are refusals a caller can act on
//! ([`Error::is_refusal`]).
//!
//! The command-line spelling of the libraries' value enums lives here too
//! ([`choice`]), so a variant added to a library reaches every front-end.

pub mod apply;
mod call;
pub mod checkpoint;
pub mod choice;
pub mod daemon;
mod error;
pub mod failure;
pub mod files;
pub mod merge;
pub mod outcome;
pub mod pending;
pub mod review;
pub mod roots;
pub mod stream;
pub mod turn;
pub mod watched;

pub use call::{Call, Note, ScanKind};
pub use error::{Error, chain, classify, usage};
pub use failure::{Failure, Kind};
pub use roots::{Roots, root};
pub use watched::{Registry, Watched};

use mend_workspace::{Lock, Recovery, Workspace};

/// Takes the workspace lock, which finishes an interrupted transaction
/// first, and returns what that recovery did (also told to the
/// workspace's `on_recovery` reporter). A failed recovery is an error:
/// committing over an unfinished journal would lose it.
pub fn lock_recovered(ws: &Workspace) -> Result<(Lock, Option<Recovery>), Error> {
    Ok(ws.lock_recovered()?)
}

/// An outcome's one JSON text, as every front-end prints it (pretty,
/// fields in declaration order).
pub fn to_json<T: serde::Serialize + ?Sized>(outcome: &T) -> Result<String, Error> {
    Ok(serde_json::to_string_pretty(outcome)?)
}

/// An outcome as a JSON value, for a protocol that embeds it (MCP's
/// structured content, the editor's results): the same value as
/// [`to_json`]'s text, its keys in the same order (the type's), since the
/// workspace builds `serde_json` with `preserve_order`.
pub fn to_value<T: serde::Serialize + ?Sized>(outcome: &T) -> Result<serde_json::Value, Error> {
    Ok(serde_json::to_value(outcome)?)
}
