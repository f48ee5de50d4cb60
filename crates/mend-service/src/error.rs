//! The service's one error type, and how a front-end classifies it.

use mend_pending::ErrorReport;

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
    /// for, after its wait for the lock: the command's own refusal, with
    /// the kind the daemon gave it (as this error's report would).
    #[error("{message}")]
    ByDaemon {
        /// The refusal's kind (`error`, or a turn's `no_turn`, …).
        kind: String,
        /// The daemon's message.
        message: String,
    },
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
            Error::Refused(_) | Error::ByDaemon { .. } => true,
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

    /// The error as the one JSON shape every front-end prints:
    /// `{"kind", "message", "session"?, "path"?}`. A pending session's
    /// errors keep their own kinds, and a turn's (`no_turn`, `refused`,
    /// `corrupt`); a usage error is `usage`; anything else is `error`,
    /// with the whole chain of causes.
    pub fn report(&self) -> ErrorReport {
        if let Some(path) = self.changed() {
            return ErrorReport {
                kind: "changed".into(),
                message: self.to_string(),
                session: match self {
                    Error::Pending(e) => e.report().session,
                    _ => None,
                },
                path: Some(path.to_owned()),
            };
        }
        match self {
            Error::Pending(e) => e.report(),
            Error::Usage(message) => usage(message),
            Error::ByDaemon { kind, message } => ErrorReport {
                kind: kind.clone(),
                message: message.clone(),
                session: None,
                path: None,
            },
            Error::Checkpoint(e) if e.turn_kind().is_some() => ErrorReport {
                kind: e.turn_kind().unwrap_or("error").into(),
                message: e.to_string(),
                session: None,
                path: None,
            },
            other => ErrorReport {
                kind: "error".into(),
                message: chain(other),
                session: None,
                path: None,
            },
        }
    }
}

impl Error {
    /// The target that changed while mend was writing, when that is why a
    /// commit was refused (kind `changed`), whichever operation made it.
    pub fn changed(&self) -> Option<&str> {
        use mend_apply::ApplyError::Commit;
        let (Error::Workspace(ws)
        | Error::Apply(Commit(ws))
        | Error::Checkpoint(mend_checkpoint::Error::Workspace(ws))
        | Error::Pending(mend_pending::Error::Workspace(ws))
        | Error::Pending(mend_pending::Error::Apply(Commit(ws)))) = self
        else {
            return None;
        };
        match ws {
            mend_workspace::Error::Changed { path } => Some(path),
            // A restore's or a reject's base is what its safety checkpoint
            // saw under the same lock: a file that differs at the commit
            // changed while mend was writing.
            mend_workspace::Error::Stale { path, .. } if matches!(self, Error::Checkpoint(_)) => {
                Some(path)
            }
            _ => None,
        }
    }
}

/// A usage error's report.
pub fn usage(message: &str) -> ErrorReport {
    ErrorReport {
        kind: "usage".into(),
        message: message.to_owned(),
        session: None,
        path: None,
    }
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
