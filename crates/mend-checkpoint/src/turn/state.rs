//! The open turn's state: `.mend/turn.json`, read and written only
//! through the private folder's descriptor, replaced atomically (a new file
//! renamed over the old), and only under the workspace lock.
//!
//! The file is sealed with the `.mend`'s key: a planted or altered one is
//! refused (`mend turn end` clears it), since trusting it could hide an
//! agent's change from review.
//!
//! The state names its start checkpoint; the checkpoint itself lives in a
//! ref, so a lost or corrupt state file never loses the start: `mend
//! checkpoint list` still shows it (labelled `turn <id>`).

use std::collections::BTreeMap;

use mend_workspace::PrivateDir;
use serde::{Deserialize, Serialize};

use super::TurnInfo;
use crate::Error;

/// The state file's name in `.mend/`.
pub(crate) const FILE: &str = "turn.json";

/// The state is small (a few paths and ids); a larger file is not ours.
const MAX_BYTES: u64 = 16 * 1024 * 1024;

/// An entry as the review base holds it: a blob and its git mode, or
/// nothing (the path is absent).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Held {
    /// The blob's id.
    pub blob: String,
    /// Its git file mode (`0o100644`, `0o100755`, `0o120000`).
    pub mode: i32,
}

/// What `diff` numbered for one file: each hunk's fingerprint, in order.
pub(crate) type Shown = Vec<String>;

/// The open turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct State {
    /// The turn as its outcomes show it.
    #[serde(flatten)]
    pub turn: TurnInfo,
    /// The start checkpoint's commit.
    pub commit: String,
    /// Reviewed entries, by path: what the review base holds there in
    /// place of the start (`None`: nothing). Status and diff compare the
    /// worktree with the start overlaid with these.
    #[serde(default)]
    pub accepted: BTreeMap<String, Option<Held>>,
    /// What `diff` numbered last, by path: `--hunk` acts only on hunks a
    /// person was shown and that are still there.
    #[serde(default)]
    pub shown: BTreeMap<String, Shown>,
    /// What the last reject or accept changed, for `mend turn undo`
    /// (`None`: nothing to undo).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last: Option<Last>,
    /// When the turn began, in seconds and nanoseconds since the epoch,
    /// as the filesystem stamps files (taken before its start was
    /// snapshotted): a reject never deletes a file there before it that
    /// the start does not hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub began: Option<(i64, i64)>,
    /// The repository's excludes files (`core.excludesFile`, then
    /// `info/exclude`) as they read when the turn began: no tree holds
    /// them, and a rule removed during the turn must still keep what it
    /// ignored from a reject.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub excludes: Vec<String>,
}

/// Which action [`Last`] records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Kind {
    /// A reject: the worktree was written.
    Reject,
    /// An accept: the review base moved; nothing was written.
    Accept,
}

/// The last reject or accept, path by path: what each path held just
/// before and just after it, so an undo can put back exactly that where
/// the path still holds what the action left, and nowhere else.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Last {
    /// What was done.
    pub kind: Kind,
    /// A reject's safety checkpoint, which holds every `before` blob.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub safety: Option<String>,
    /// Each path the action changed.
    pub paths: Vec<Swap>,
}

/// One path's change: for a reject, the worktree's entry before and after
/// it; for an accept, the review base's overlay entry (`listed`: whether
/// the overlay named the path before the accept at all).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Swap {
    /// The path.
    pub path: String,
    /// What it held before (`None`: nothing).
    pub before: Option<Held>,
    /// What the action left there (`None`: nothing).
    pub after: Option<Held>,
    /// An accept's: whether the overlay listed the path before it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub listed: bool,
    /// A reject's: what stood at the path before it when that was a
    /// FIFO, a socket or a device (`before` is then none: no snapshot
    /// holds one), which an undo does not make again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub special: Option<String>,
}

/// The state in the private folder: `Ok(None)` when no turn is open; a
/// file that cannot be read is an error that says how to get past it.
/// The file is sealed (see `mend_workspace::Seal`): one mend did not
/// write, or one changed since, could hide an agent's change from review,
/// so it is refused, never read.
pub(crate) fn load(dir: &PrivateDir) -> Result<Option<State>, Error> {
    let bytes = match dir.read_sealed(FILE, FILE, MAX_BYTES) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return Ok(None),
        Err(e @ mend_workspace::Error::Unsealed { .. }) => {
            return Err(Error::TurnCorrupt {
                what: format!(
                    "{e}, so the review it holds is not trusted; the turn's start is a checkpoint and is kept (`mend checkpoint list` shows it, labelled `turn start`)"
                ),
            });
        }
        Err(e) => return Err(e.into()),
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| Error::TurnCorrupt {
            what: format!(
                "{} is unreadable ({e}); the turn's start is a checkpoint and is kept (`mend checkpoint list` shows it, labelled `turn start`)",
                dir.shown(FILE)
            ),
        })
}

/// Writes the state atomically.
pub(crate) fn save(dir: &PrivateDir, state: &State) -> Result<(), Error> {
    let bytes = serde_json::to_vec_pretty(state).map_err(|e| Error::Io {
        context: "writing the turn state".into(),
        cause: std::io::Error::other(e),
    })?;
    dir.write_sealed(FILE, FILE, &bytes)?;
    Ok(())
}

/// Removes the state (the turn is closed).
pub(crate) fn remove(dir: &PrivateDir) -> Result<(), Error> {
    dir.remove_file(FILE)?;
    Ok(())
}
