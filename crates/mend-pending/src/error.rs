//! The crate's error type. Messages say what is wrong and what to do, and
//! never advise a step that could lose a person's or a model's work.

use mend_core::text::escape_controls as esc;

/// Why a pending-changes action could not proceed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A session name that cannot be a folder name.
    #[error(
        "`{}` is not a session name: use 1 to 64 letters, digits, `-`, `_` or `.`, not starting with `.`",
        esc(.0)
    )]
    BadSession(String),
    /// No such session.
    #[error("there is no pending session `{}`; `mend pending list` shows them", esc(.0))]
    NoSession(String),
    /// The session was dropped while this action waited for its lock.
    #[error(
        "pending session `{}` was dropped (`mend pending drop`) while this command waited for it; nothing was done. `mend pending list` shows the sessions there are",
        esc(.0)
    )]
    Dropped(String),
    /// Another action holds the session's lock, past the lock timeout.
    #[error(
        "pending session `{}` is busy: {} holds its lock (waited {waited_ms} ms); try again when it is done, or wait longer with --lock-timeout",
        esc(.session),
        esc(.holder)
    )]
    Busy {
        /// The session.
        session: String,
        /// What holds the lock: the command and its process id, as it
        /// wrote them when it took the lock.
        holder: String,
        /// How long this action waited.
        waited_ms: u128,
    },
    /// A request is coming into the session (a proposal streaming in):
    /// what it was shown and what it proposes must not change under it.
    #[error(
        "pending session `{}` is taking a proposal: a request is streaming in from {}. Accept, reject, sync, add and drop wait until it ends (status and diff work meanwhile); nothing was done. Run this again once it has finished",
        esc(.session),
        requests(.holders)
    )]
    Streaming {
        /// The session.
        session: String,
        /// Each request's command and process id, as it recorded them.
        holders: Vec<String>,
    },
    /// The path is not in the session, or has no output for the action.
    #[error("{}: {why}", esc(.path))]
    Nothing {
        /// The path.
        path: String,
        /// What is missing.
        why: String,
    },
    /// `--hunk` names hunks of one file, and the action selected another
    /// number of files.
    #[error(
        "--hunk picks hunks of exactly one file, and {files} file(s) with an output were selected; name the file (`mend pending diff PATH` numbers its hunks)"
    )]
    HunksOfOneFile {
        /// How many files with an output were selected.
        files: usize,
    },
    /// The file changed locally in a way the action cannot combine.
    #[error("{}: {why}", esc(.path))]
    Diverged {
        /// The path.
        path: String,
        /// What happened, and what to do.
        why: String,
    },
    /// A three-way merge of local and proposed changes conflicts.
    #[error(
        "{}: your changes and the proposal overlap ({conflicts} conflict(s), starting at line(s) {lines} of the merge); nothing was written. Accept with --markers to write git conflict markers into the file and resolve them by hand, or edit the file so your change no longer overlaps the proposal's and accept again (`mend pending diff --against local` shows the proposal against your file); reject the output only if you do not want the proposal",
        esc(.path)
    )]
    Conflict {
        /// The path.
        path: String,
        /// How many conflicts.
        conflicts: usize,
        /// Where they are in the merged text.
        lines: String,
    },
    /// `sync` could not carry outputs over to the files as they are now.
    #[error(
        "nothing was synced: {}. Each of these outputs still holds the proposal as the model made it",
        unsyncable(.files)
    )]
    Unsyncable {
        /// Each file that could not be synced, and why.
        files: Vec<(String, String)>,
    },
    /// A hunk number out of range.
    #[error(
        "{} has {count} hunk(s); hunk {hunk} does not exist (`mend pending diff {}` numbers them)",
        esc(.path),
        esc(.path)
    )]
    NoHunk {
        /// The path.
        path: String,
        /// The number asked for.
        hunk: usize,
        /// How many there are.
        count: usize,
    },
    /// A file of the session cannot be read as text now (binary, a folder,
    /// too large, …).
    #[error(
        "{}: {reason}; nothing was done. Name the other files to act on them, or reject this file (`mend pending reject {}` drops its output, or forgets it when it has none)",
        esc(.path),
        esc(.path)
    )]
    Unreadable {
        /// The path.
        path: String,
        /// Why it cannot be read.
        reason: String,
    },
    /// The response moves a file onto one that exists, or changes one path
    /// twice.
    #[error(
        "nothing was held: {}: {detail}. Free that path and propose again, or ask the model for a change that moves files only to free names",
        esc(.path)
    )]
    Collision {
        /// Where the changes collide.
        path: String,
        /// What collides, naming both sides.
        detail: String,
    },
    /// A proposal renames a file onto a path that exists now (made since
    /// the proposal).
    #[error(
        "{}: the proposal renames {} to it, and it exists now (it was made after the proposal); nothing was written. Move your {} aside or delete it and accept again, or reject the rename (`mend pending reject {}`)",
        esc(.path),
        esc(.from),
        esc(.path),
        esc(.from)
    )]
    RenameOnto {
        /// The rename's target.
        path: String,
        /// The file the proposal renames.
        from: String,
    },
    /// `--hunk` numbers hunks as a diff showed them, and the file's
    /// proposal changed since.
    #[error("{}: {why}", esc(.path))]
    Unseen {
        /// The path.
        path: String,
        /// What was shown, and what to do.
        why: String,
    },
    /// One file's stored text is missing or damaged; the rest of the
    /// session is intact.
    #[error(
        "the pending session `{}` is damaged: {what}, so the proposal for {} cannot be read back. The session's other files are intact (name them to act on them); `mend pending reject {}` removes this file's damaged entry and repairs the session",
        esc(.session),
        esc(.path),
        esc(.path)
    )]
    Damaged {
        /// The session.
        session: String,
        /// The file whose text is damaged.
        path: String,
        /// What is wrong.
        what: String,
    },
    /// The session's files are damaged.
    #[error(
        "the pending session `{}` is damaged: {what}. Its proposals cannot be read back; `mend pending drop {}` deletes it",
        esc(.session),
        esc(.session)
    )]
    Corrupt {
        /// The session.
        session: String,
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

fn requests(holders: &[String]) -> String {
    if holders.is_empty() {
        // Between taking the request's lock and recording itself.
        return "a mend process that has just started one".to_owned();
    }
    holders
        .iter()
        .map(|h| esc(h))
        .collect::<Vec<_>>()
        .join(" and ")
}

fn unsyncable(files: &[(String, String)]) -> String {
    files
        .iter()
        .map(|(path, why)| format!("{}: {why}", esc(path)))
        .collect::<Vec<_>>()
        .join("; ")
}

impl Error {
    /// Whether this is a workspace error a person can act on: its lock
    /// is busy, the change set writes one file under two names, or a file
    /// changed while it was being written (the change is kept and nothing
    /// was written). `mend-service` names each one's kind.
    fn workspace_refusal(&self) -> bool {
        use mend_workspace::Error::{Changed, Conflict, Locked, Stale};
        matches!(
            self,
            Error::Workspace(Locked { .. } | Conflict { .. } | Changed { .. } | Stale { .. })
                | Error::Apply(mend_apply::ApplyError::Commit(
                    Changed { .. } | Stale { .. }
                ))
        )
    }

    /// Whether this is a refusal a person can act on (the CLI exits 1),
    /// rather than a usage error or a failure (exit 2). A damaged or
    /// planted session is one: its message names the command that clears
    /// it (`mend pending drop`, or `reject` for one file).
    pub fn is_refusal(&self) -> bool {
        if self.workspace_refusal() {
            return true;
        }
        !matches!(
            self,
            Error::BadSession(_) | Error::Workspace(_) | Error::Apply(_) | Error::Io { .. }
        )
    }
}
