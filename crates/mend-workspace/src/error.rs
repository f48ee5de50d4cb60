//! The crate's error type. Messages say what is wrong and what to do.

use std::path::PathBuf;

use mend_core::FailureKind;
use mend_core::text::escape_controls as esc;

/// `path: ` before a refusal's reason; nothing for an empty path, whose
/// reason says it is empty.
fn subject(path: &str) -> String {
    if path.is_empty() {
        String::new()
    } else {
        format!("{}: ", esc(path))
    }
}

/// Which confinement rule a refused path broke: each has its own fix, so
/// a model is told the one that applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PathRule {
    /// Empty, or the project root itself: it names no file.
    NoFile,
    /// It leaves the root (`..`, an absolute path elsewhere, a drive or
    /// network path).
    Outside,
    /// It reaches `.git` or `.mend`.
    Reserved,
    /// It holds a control character or a NUL byte.
    Control,
    /// It separates folders with backslashes.
    Backslash,
    /// A symbolic link on the way leads out of the root or into `.git` or
    /// `.mend`, or cannot be resolved.
    Link,
    /// Several files' names differ from it only in Unicode normalization.
    LookAlike,
}

impl PathRule {
    /// What to do instead, for a model.
    pub fn fix(self) -> &'static str {
        match self {
            PathRule::NoFile => "Name a file by its path relative to the project root.",
            PathRule::Outside => {
                "Use a path relative to the project root and inside it, without `..`."
            }
            PathRule::Reserved => {
                "Edit only the project's own files: mend never changes a .git or .mend folder."
            }
            PathRule::Control => "Use a path without control characters.",
            PathRule::Backslash => "Separate folders with `/`.",
            PathRule::Link => {
                "Name the file by a path whose folders are inside the project root, not through a link that leads out of it or into .git or .mend."
            }
            PathRule::LookAlike => {
                "Rename the look-alike files so their names differ, then name the one you mean."
            }
        }
    }
}

/// Why a workspace operation could not proceed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A path was refused by confinement.
    #[error("{}{reason}", subject(.path))]
    PathRefused {
        /// The path as given.
        path: String,
        /// Why it is refused.
        reason: String,
        /// The rule it broke, which decides the fix.
        rule: PathRule,
    },
    /// The file holds binary data.
    #[error("Cannot edit binary file {}", esc(.path))]
    Binary {
        /// The file.
        path: String,
    },
    /// The file is text in an encoding mend does not write back exactly.
    #[error(
        "{} is not UTF-8 or UTF-16 text with a BOM ({detail}); mend never guesses an encoding or replaces bytes", esc(.path)
    )]
    NotText {
        /// The file.
        path: String,
        /// What was found.
        detail: String,
    },
    /// The file is over the size limit.
    #[error("{} is {size} bytes, over the {limit}-byte limit", esc(.path))]
    TooLarge {
        /// The file.
        path: String,
        /// Its size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// The file changed between the read the edit is based on and now.
    #[error("{}: file changed since you read it{}", esc(.path), if .diff.is_empty() { String::new() } else { format!("; what changed:\n{}", .diff) })]
    Stale {
        /// The file.
        path: String,
        /// A unified diff from the content that was read to the content now,
        /// when mend still has the former.
        diff: String,
    },
    /// A target changed after the staleness check, while the commit was
    /// staging and syncing, just before it would have been replaced: the
    /// whole transaction was refused and what was already put in place
    /// undone, so the change that landed is kept and nothing of mend's is
    /// written.
    #[error(
        "{}: changed while mend was writing; that change is kept and nothing was written. Read the file again and send the edit against what it holds now",
        esc(.path)
    )]
    Changed {
        /// The target, relative to the root.
        path: String,
    },
    /// Another process (mend, or something else) holds the workspace lock.
    #[error(
        "another process is writing in {}: {holder} holds its lock at .mend/lock (waited {waited_ms} ms); nothing was done. Try again when it is done, or wait longer with --lock-timeout", esc(&.root.to_string_lossy())
    )]
    Locked {
        /// The workspace root.
        root: PathBuf,
        /// What holds the lock: the command line and process id it wrote
        /// when it took the lock.
        holder: String,
        /// How long this process waited.
        waited_ms: u128,
    },
    /// A filesystem operation failed.
    // The cause is part of the message and not a `source`, so a report
    // that walks the chain does not print it twice.
    #[error("{context}: {cause}")]
    Io {
        /// What was being done, with the path.
        context: String,
        /// The underlying error.
        cause: std::io::Error,
    },
    /// The path names something other than a regular file.
    #[error("{} is {kind}; mend reads and writes regular files only", esc(.path))]
    NotAFile {
        /// The path as given.
        path: String,
        /// What it is ("a FIFO (named pipe)", "a directory", …).
        kind: &'static str,
    },
    /// The changes of one set collide with each other or with the disk.
    #[error("{}: {detail}", esc(.path))]
    Conflict {
        /// Where they collide.
        path: String,
        /// What collides, naming both sides.
        detail: String,
    },
    /// What mend would write is over the size limit.
    #[error(
        "the new content of {} would be {size} bytes, over the {limit}-byte limit",
        esc(.path)
    )]
    WouldBeTooLarge {
        /// The file.
        path: String,
        /// The size it would have.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// A target cannot be replaced or deleted, so nothing was written.
    #[error("{} cannot be written: {reason}. Nothing was written", esc(.path))]
    Unreplaceable {
        /// The target.
        path: String,
        /// Why, and what to do.
        reason: String,
    },
    /// An interrupted transaction could not be finished; until it is,
    /// nothing is written over it.
    #[error(
        "an interrupted transaction could not be {}: {context}: {cause}. Nothing will be written in this project until it is: clear what blocks that path (permissions, `chattr -i`, a full disk), then run mend again{}",
        if *.finishing { "completed" } else { "rolled back" },
        if *.finishing { "" } else { "; or, to abandon it, move .mend/journal.json away and delete the .mend-*.tmp files it names" }
    )]
    RecoveryBlocked {
        /// Whether the transaction had committed (and is being completed)
        /// rather than being rolled back.
        finishing: bool,
        /// The step that failed, with its path.
        context: String,
        /// The underlying error.
        cause: std::io::Error,
    },
    /// `.mend` exists but is not mend's own, so mend will not use it.
    #[error(
        ".mend {what}; mend keeps its lock, journal and checkpoints only in a folder it made itself. {fix}"
    )]
    Untrusted {
        /// What is wrong with it.
        what: String,
        /// How to clear it.
        fix: String,
    },
    /// A state file mend reads back does not carry the seal of the `.mend`
    /// it is in (see [`crate::Seal`]): mend did not write it, or it was
    /// changed since. Its reader decides: a cache is rebuilt, anything
    /// else is refused with the command that clears it.
    #[error("{} {}", esc(.path), .why.map_or_else(|| "cannot be sealed or checked here: mend holds no key for this folder".to_owned(), |w| w.to_string()))]
    Unsealed {
        /// Where, relative to the root (`.mend/turn.json`).
        path: String,
        /// Why it failed; `None` when the folder has no seal at all.
        why: Option<Unsealed>,
    },
    /// Something inside a folder mend keeps its own files in is not what
    /// mend made there: a symbolic link, or a file where a folder belongs.
    /// Nothing was read, written or deleted through it.
    #[error(
        "{} is {what}, where mend keeps its own files; mend reads, writes and deletes nothing through it. {fix}",
        esc(.path)
    )]
    Tampered {
        /// Where, relative to the root (`.mend/pending/s1`).
        path: String,
        /// What is there.
        what: String,
        /// How to clear it.
        fix: String,
    },
}

impl Error {
    /// Whether the change set was refused as the edits asked for it (a file
    /// changed since it was read or while it was written, two changes
    /// collide at one path, a file would grow past the limit): nothing was
    /// written, and the message tells the sender what to change. (A busy
    /// lock is a refusal only where a pending session is acted on.) A front-end answers it as a failed
    /// apply (exit 1), not as an error of mend's own.
    pub fn is_refusal(&self) -> bool {
        matches!(
            self,
            Error::Stale { .. }
                | Error::Changed { .. }
                | Error::Conflict { .. }
                | Error::WouldBeTooLarge { .. }
        )
    }

    /// The report category for a failed edit.
    pub fn kind(&self) -> FailureKind {
        match self {
            Error::PathRefused { .. } => FailureKind::PathRefused,
            Error::Binary { .. } => FailureKind::Binary,
            Error::NotText { .. } => FailureKind::NotText,
            Error::TooLarge { .. } | Error::WouldBeTooLarge { .. } => FailureKind::TooLarge,
            Error::NotAFile { .. } => FailureKind::PathRefused,
            Error::Conflict { .. } => FailureKind::FileExists,
            Error::Stale { .. } | Error::Changed { .. } => FailureKind::Stale,
            _ => FailureKind::Io,
        }
    }

    /// What to do instead, for a model.
    pub fn fix(&self) -> &'static str {
        match self {
            Error::PathRefused { rule, .. } => rule.fix(),
            Error::Binary { .. } => {
                "Binary files cannot be edited as text; use a shell command instead."
            }
            Error::NotText { .. } => "Convert the file to UTF-8 first, or edit it another way.",
            Error::TooLarge { .. } | Error::WouldBeTooLarge { .. } => {
                "Edit a smaller file, or raise the size limit."
            }
            Error::NotAFile { .. } => "Name a regular file inside the project root.",
            Error::Conflict { .. } => {
                "Send one change per path, and move files only to free names."
            }
            Error::Locked { .. } => {
                "Another mend process is writing in this project; try again when it is done."
            }
            Error::Untrusted { .. }
            | Error::Tampered { .. }
            | Error::Unsealed { .. }
            | Error::RecoveryBlocked { .. } => {
                "Follow the instructions in the message, then try again."
            }
            Error::Unreplaceable { .. } => {
                "Clear what the message names, or leave that file out of the change."
            }
            Error::Stale { .. } | Error::Changed { .. } => {
                "Re-read the file and base the edit on its current content."
            }
            Error::Io { cause, .. } if cause.kind() == std::io::ErrorKind::InvalidFilename => {
                "Use a shorter file name: most filesystems allow 255 bytes per name."
            }
            Error::Io { cause, .. } if cause.kind() == std::io::ErrorKind::NotADirectory => {
                "A file stands where the path needs a folder; choose another path."
            }
            _ => "Check the file's permissions and try again.",
        }
    }

    pub(crate) fn io(context: impl Into<String>, cause: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            cause,
        }
    }
}

/// Why a state file's seal did not verify.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unsealed {
    /// It carries no seal: an earlier version of mend wrote it, or
    /// something else did.
    Missing,
    /// It carries a seal, but not this `.mend`'s for this file: it was
    /// changed since mend wrote it, or brought from elsewhere.
    Foreign,
}

impl std::fmt::Display for Unsealed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Unsealed::Missing => {
                "carries no seal of mend's (an earlier version of mend wrote it, or something else did)"
            }
            Unsealed::Foreign => {
                "does not carry this folder's seal (it was changed after mend wrote it, or brought from elsewhere)"
            }
        })
    }
}
