//! The service's one error type, and how a front-end classifies it.

use crate::failure::{Failure, Kind};

/// Why an operation could not produce its outcome. A failed edit is not
/// an error: it is part of the outcome (its report says what to send
/// instead). [`Error::is_refusal`] tells a refusal the caller can act on
/// (exit 1) from a failure (exit 2).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An argument the operation cannot use; the message names the form
    /// it takes.
    #[error("{0}")]
    Usage(String),
    /// The response could not be read (not UTF-8, cut in a character, an
    /// I/O error).
    #[error("{0}")]
    Input(String),
    /// A path outside every project root, or one call spanning roots.
    #[error("{0}")]
    Roots(String),
    /// `read_file` of a file that does not exist.
    #[error("File not found: {}", mend_core::text::escape_controls(.0))]
    NotFound(String),
    /// The workspace refused or failed.
    #[error(transparent)]
    Workspace(#[from] mend_workspace::Error),
    /// The apply pipeline could not produce a report.
    #[error(transparent)]
    Apply(#[from] mend_apply::ApplyError),
    /// A pending session refused or failed.
    #[error(transparent)]
    Pending(#[from] mend_pending::Error),
    /// A checkpoint operation failed.
    #[error(transparent)]
    Checkpoint(#[from] mend_checkpoint::Error),
    /// Adding the written files to git's index failed (the cause is the
    /// error's source).
    #[error("{what}")]
    Stage {
        /// What was being done.
        what: &'static str,
        /// git's error.
        source: git2::Error,
    },
    /// An outcome could not be turned into JSON.
    #[error("cannot serialise the outcome as JSON")]
    Json(#[from] serde_json::Error),
    /// A daemon could not start, stop or answer; the message says why
    /// and what to do.
    #[error("{0}")]
    Daemon(String),
    /// A daemon refused: another serves the root already, or the daemon
    /// serving it refused the work (the message is its refusal).
    #[error("{0}")]
    Refused(String),
    /// The daemon serving the root refused the work a command asked it
    /// for, after its wait for the lock: the command's own refusal, the
    /// failure the daemon sent (its kind kept).
    #[error("{}", .0.message)]
    ByDaemon(Box<Failure>),
    /// Reading or writing a file outside the workspace (`mend merge`,
    /// `mend diff`, the daemon's socket) failed (the cause is the
    /// error's source).
    #[error("{what}")]
    Io {
        /// What was being done, naming the file.
        what: String,
        /// The cause.
        source: std::io::Error,
    },
}

impl Error {
    /// Whether this is a refusal the caller can act on (a busy session, a
    /// file changed since it was read, a response with no edits, a
    /// conflict): the CLI exits 1 and prints the message as a result, MCP
    /// answers it as a failed call. Anything else is an error (exit 2).
    pub fn is_refusal(&self) -> bool {
        match self {
            Error::Pending(e) => e.is_refusal(),
            Error::Apply(e) => e.is_refusal(),
            Error::Workspace(e) => e.is_refusal(),
            Error::Checkpoint(e) => e.is_refusal(),
            Error::Refused(_) | Error::ByDaemon(_) => true,
            Error::Usage(_)
            | Error::Input(_)
            | Error::Roots(_)
            | Error::NotFound(_)
            | Error::Stage { .. }
            | Error::Json(_)
            | Error::Daemon(_)
            | Error::Io { .. } => false,
        }
    }

    /// The error as the one failure shape every front-end reports (see
    /// [`Failure`]): its kind, its message with the whole chain of causes,
    /// and the session, path and lock holder it concerns.
    pub fn failure(&self) -> Failure {
        let kind = match self {
            Error::Usage(_) => Kind::Usage,
            Error::Roots(_) => Kind::Roots,
            Error::NotFound(_) => Kind::NotFound,
            Error::Refused(_) => Kind::Refused,
            Error::ByDaemon(f) => return (**f).clone(),
            _ => match self.lib() {
                Some(lib) => return lib.failure(chain(self)),
                None => Kind::Error,
            },
        };
        Failure::new(kind, chain(self))
    }

    /// The library error this wraps, when it does.
    fn lib(&self) -> Option<Lib<'_>> {
        Some(match self {
            Error::Workspace(e) => Lib::Workspace(e),
            Error::Apply(e) => Lib::Apply(e),
            Error::Pending(e) => Lib::Pending(e),
            Error::Checkpoint(e) => Lib::Checkpoint(e),
            _ => return None,
        })
    }

    /// The target that changed while mend was writing, when that is why a
    /// commit was refused (kind `changed`), whichever operation made it.
    pub fn changed(&self) -> Option<&str> {
        self.lib().and_then(Lib::changed)
    }
}

/// The failure `e` is, and whether it is a refusal, when it is the
/// service's error or a library's the service wraps (a front-end that
/// called a library directly, or an error with context around it).
pub fn classify(e: &(dyn std::error::Error + 'static)) -> Option<(Failure, bool)> {
    if let Some(s) = e.downcast_ref::<Error>() {
        return Some((s.failure(), s.is_refusal()));
    }
    let lib = if let Some(e) = e.downcast_ref::<mend_pending::Error>() {
        Lib::Pending(e)
    } else if let Some(e) = e.downcast_ref::<mend_checkpoint::Error>() {
        Lib::Checkpoint(e)
    } else if let Some(e) = e.downcast_ref::<mend_apply::ApplyError>() {
        Lib::Apply(e)
    } else {
        Lib::Workspace(e.downcast_ref::<mend_workspace::Error>()?)
    };
    Some((lib.failure(chain(e)), lib.is_refusal()))
}

/// A library's error, borrowed, as the service classifies it.
#[derive(Clone, Copy)]
enum Lib<'a> {
    Workspace(&'a mend_workspace::Error),
    Apply(&'a mend_apply::ApplyError),
    Pending(&'a mend_pending::Error),
    Checkpoint(&'a mend_checkpoint::Error),
}

impl<'a> Lib<'a> {
    fn is_refusal(self) -> bool {
        match self {
            Lib::Workspace(e) => e.is_refusal(),
            Lib::Apply(e) => e.is_refusal(),
            Lib::Pending(e) => e.is_refusal(),
            Lib::Checkpoint(e) => e.is_refusal(),
        }
    }

    /// The failure, with `message`.
    fn failure(self, message: String) -> Failure {
        let (session, path) = match self {
            Lib::Pending(e) => concerns(e),
            _ => (None, None),
        };
        Failure {
            kind: self.kind(),
            message,
            session,
            path: self.changed().map(str::to_owned).or(path),
            holder: self.holder(),
        }
    }

    /// The workspace error under this one, if any.
    fn workspace(self) -> Option<&'a mend_workspace::Error> {
        use mend_apply::ApplyError::Commit;
        match self {
            Lib::Workspace(ws)
            | Lib::Apply(Commit(ws))
            | Lib::Checkpoint(mend_checkpoint::Error::Workspace(ws))
            | Lib::Pending(mend_pending::Error::Workspace(ws))
            | Lib::Pending(mend_pending::Error::Apply(Commit(ws))) => Some(ws),
            _ => None,
        }
    }

    /// The target that changed while mend was writing.
    fn changed(self) -> Option<&'a str> {
        match self.workspace()? {
            mend_workspace::Error::Changed { path } => Some(path),
            // A restore's or a reject's base is what its safety checkpoint
            // saw under the same lock: a file that differs at the commit
            // changed while mend was writing.
            mend_workspace::Error::Stale { path, .. } if matches!(self, Lib::Checkpoint(_)) => {
                Some(path)
            }
            _ => None,
        }
    }

    /// What holds the lock this error waited for, when that is why it
    /// failed: the root's lock, or a pending session's (several requests
    /// streaming in are named together).
    fn holder(self) -> Option<String> {
        match (self, self.workspace()) {
            (_, Some(mend_workspace::Error::Locked { holder, .. }))
            | (Lib::Pending(mend_pending::Error::Busy { holder, .. }), _) => Some(holder.clone()),
            (Lib::Pending(mend_pending::Error::Streaming { holders, .. }), _) => {
                Some(holders.join(" and "))
            }
            _ => None,
        }
    }

    fn kind(self) -> Kind {
        if let Some(kind) = self.workspace().and_then(workspace_kind) {
            return kind;
        }
        match self {
            Lib::Pending(e) => pending_kind(e),
            Lib::Checkpoint(e) => checkpoint_kind(e),
            Lib::Apply(mend_apply::ApplyError::Parse(mend_core::Error::NoEdits)) => Kind::NoEdits,
            Lib::Apply(mend_apply::ApplyError::Parse(_)) => Kind::Parse,
            _ => Kind::Error,
        }
    }
}

/// The kind of a workspace error that refused the change set as asked,
/// or waited for a lock.
fn workspace_kind(e: &mend_workspace::Error) -> Option<Kind> {
    use mend_workspace::Error as W;
    match e {
        W::Changed { .. } | W::Stale { .. } => Some(Kind::Changed),
        W::Conflict { .. } => Some(Kind::Collision),
        W::WouldBeTooLarge { .. } => Some(Kind::TooLarge),
        W::Locked { .. } => Some(Kind::Busy),
        _ => None,
    }
}

/// The kind of a checkpoint's or a turn's error.
fn checkpoint_kind(e: &mend_checkpoint::Error) -> Kind {
    use mend_checkpoint::Error as C;
    match e {
        C::NoTurn => Kind::NoTurn,
        C::TurnCorrupt { .. } => Kind::Corrupt,
        C::NotFound(_) | C::Ambiguous { .. } => Kind::NoCheckpoint,
        _ if e.is_refusal() => Kind::Refused,
        _ => Kind::Error,
    }
}

/// The kind of a pending session's error (its workspace's refusals are
/// [`workspace_kind`]'s).
fn pending_kind(e: &mend_pending::Error) -> Kind {
    use mend_pending::Error as P;
    match e {
        P::BadSession(_) => Kind::BadSession,
        P::NoSession(_) | P::Dropped(_) => Kind::NoSession,
        P::Busy { .. } | P::Streaming { .. } => Kind::Busy,
        P::Nothing { .. } => Kind::Nothing,
        P::HunksOfOneFile { .. } => Kind::HunksOfOneFile,
        P::Diverged { .. } => Kind::Diverged,
        P::Conflict { .. } => Kind::Conflict,
        P::Unsyncable { .. } => Kind::Unsyncable,
        P::NoHunk { .. } => Kind::NoHunk,
        P::Unreadable { .. } => Kind::Unreadable,
        P::Collision { .. } | P::RenameOnto { .. } => Kind::Collision,
        P::Unseen { .. } => Kind::Unseen,
        P::Corrupt { .. } | P::Damaged { .. } => Kind::Corrupt,
        P::Workspace(_) => Kind::Workspace,
        P::Apply(_) => Kind::Apply,
        P::Io { .. } => Kind::Io,
        _ => Kind::Error,
    }
}

/// The session and the path a pending session's error concerns.
fn concerns(e: &mend_pending::Error) -> (Option<String>, Option<String>) {
    use mend_pending::Error as P;
    match e {
        P::BadSession(s) | P::NoSession(s) | P::Dropped(s) => (Some(s.clone()), None),
        P::Busy { session, .. } | P::Streaming { session, .. } | P::Corrupt { session, .. } => {
            (Some(session.clone()), None)
        }
        P::Damaged { session, path, .. } => (Some(session.clone()), Some(path.clone())),
        P::Nothing { path, .. }
        | P::Diverged { path, .. }
        | P::Conflict { path, .. }
        | P::NoHunk { path, .. }
        | P::Unreadable { path, .. }
        | P::Unseen { path, .. }
        | P::RenameOnto { path, .. }
        | P::Collision { path, .. } => (None, Some(path.clone())),
        _ => (None, None),
    }
}

/// A usage error's failure.
pub fn usage(message: &str) -> Failure {
    Failure::new(Kind::Usage, message)
}

/// An error and its causes, `outer: inner: …` (as `anyhow` prints them
/// with `{:#}`), skipping a cause whose message its wrapper already shows.
pub fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let more = c.to_string();
        if !text.ends_with(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        cause = c.source();
    }
    text
}
