//! The crate's error type. Messages say what is wrong and what to do.

/// Why a pending-changes action could not proceed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A session name that cannot be a folder name.
    #[error(
        "`{0}` is not a session name: use 1 to 64 letters, digits, `-`, `_` or `.`, not starting with `.`"
    )]
    BadSession(String),
    /// No such session.
    #[error("there is no pending session `{0}`; `mend pending list` shows them")]
    NoSession(String),
    /// A proposal is streaming into the session.
    #[error(
        "a request is streaming into session `{0}`; wait for it to finish (status and diff still work)"
    )]
    Streaming(String),
    /// The path is not in the session, or has no output for the action.
    #[error("{path}: {why}")]
    Nothing {
        /// The path.
        path: String,
        /// What is missing.
        why: String,
    },
    /// The file changed locally in a way the action cannot combine.
    #[error("{path}: {why}")]
    Diverged {
        /// The path.
        path: String,
        /// What happened, and what to do.
        why: String,
    },
    /// A three-way merge of local and proposed changes conflicts.
    #[error(
        "{path}: your changes and the proposal overlap ({conflicts} conflict(s), starting at line(s) {lines} of the merge); nothing was written. Accept with --markers to write git conflict markers, sync, or reject the output"
    )]
    Conflict {
        /// The path.
        path: String,
        /// How many conflicts.
        conflicts: usize,
        /// Where they are in the merged text.
        lines: String,
    },
    /// A hunk number out of range.
    #[error(
        "{path} has {count} hunk(s); hunk {hunk} does not exist (`mend pending diff {path}` numbers them)"
    )]
    NoHunk {
        /// The path.
        path: String,
        /// The number asked for.
        hunk: usize,
        /// How many there are.
        count: usize,
    },
    /// The session's files are damaged.
    #[error("the pending session is damaged: {what}; drop it with `mend pending drop SESSION`")]
    Corrupt {
        /// What is wrong.
        what: String,
    },
    /// Reading or writing project files failed.
    #[error(transparent)]
    Workspace(#[from] mend_workspace::Error),
    /// Planning a proposal failed before any report.
    #[error(transparent)]
    Apply(#[from] mend_apply::ApplyError),
    /// A filesystem operation on the session failed.
    #[error("{context}: {cause}")]
    Io {
        /// What was being done.
        context: String,
        /// The error.
        cause: std::io::Error,
    },
}
