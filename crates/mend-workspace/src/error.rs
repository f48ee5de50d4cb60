//! The crate's error type. Messages say what is wrong and what to do.

use std::path::PathBuf;

use mend_core::FailureKind;

/// Why a workspace operation could not proceed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A path was refused by confinement.
    #[error("{path}: {reason}")]
    PathRefused {
        /// The path as given.
        path: String,
        /// Why it is refused.
        reason: String,
    },
    /// The file holds binary data.
    #[error("Cannot edit binary file {path}")]
    Binary {
        /// The file.
        path: String,
    },
    /// The file is text in an encoding mend does not write back exactly.
    #[error(
        "{path} is not UTF-8 or UTF-16 text with a BOM ({detail}); mend never guesses an encoding or replaces bytes"
    )]
    NotText {
        /// The file.
        path: String,
        /// What was found.
        detail: String,
    },
    /// The file is over the size limit.
    #[error("{path} is {size} bytes, over the {limit}-byte limit")]
    TooLarge {
        /// The file.
        path: String,
        /// Its size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// The file changed between the read the edit is based on and now.
    #[error("{path}: file changed since you read it{}", if .diff.is_empty() { String::new() } else { format!("; what changed:\n{}", .diff) })]
    Stale {
        /// The file.
        path: String,
        /// A unified diff from the content that was read to the content now,
        /// when mend still has the former.
        diff: String,
    },
    /// Another mend process holds the workspace lock.
    #[error(
        "another mend process is writing in {root} (waited {waited_ms} ms for its lock at .mend/lock); try again when it is done"
    )]
    Locked {
        /// The workspace root.
        root: PathBuf,
        /// How long this process waited.
        waited_ms: u128,
    },
    /// A filesystem operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done, with the path.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The transaction journal is unreadable.
    #[error(
        "the transaction journal {path} is unreadable ({detail}); inspect it, then delete it to continue"
    )]
    Journal {
        /// The journal file.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
}

impl Error {
    /// The report category for a failed edit.
    pub fn kind(&self) -> FailureKind {
        match self {
            Error::PathRefused { .. } => FailureKind::PathRefused,
            Error::Binary { .. } => FailureKind::Binary,
            Error::NotText { .. } => FailureKind::NotText,
            Error::TooLarge { .. } => FailureKind::TooLarge,
            Error::Stale { .. } => FailureKind::Stale,
            _ => FailureKind::Io,
        }
    }

    /// What to do instead, for a model.
    pub fn fix(&self) -> &'static str {
        match self {
            Error::PathRefused { .. } => {
                "Use a path relative to the project root, inside it, without `..`, outside .git/."
            }
            Error::Binary { .. } => {
                "Binary files cannot be edited as text; use a shell command instead."
            }
            Error::NotText { .. } => "Convert the file to UTF-8 first, or edit it another way.",
            Error::TooLarge { .. } => "Edit a smaller file, or raise the size limit.",
            Error::Stale { .. } => "Re-read the file and base the edit on its current content.",
            _ => "Check the file's permissions and try again.",
        }
    }

    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }
}
