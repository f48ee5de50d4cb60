//! Keeping editor buffers in step with their files while something else (an
//! agent, a formatter, `git checkout`) writes the files, and while a person
//! goes on typing.
//!
//! Two actors share each file: the person, through the editor's buffer, and
//! whatever writes the disk. Their messages cross: the editor may report an
//! edit the server has not yet seen the consequences of, and a notification
//! may reach a buffer that has moved on. The machine is built so that no
//! ordering of those messages loses either side's work:
//!
//! - **What both sides agree on.** A [`Buffer`] holds the editor's text as
//!   last reported (with the editor's `version`) and the **base**: the
//!   file's bytes that text derives from. A merge is always computed from
//!   that agreed pair and the file as it is now.
//! - **One notification in flight.** A text change sent to the editor
//!   (reload, merge, conflict) is *outstanding* until the editor reports the
//!   text it produced (its acknowledgement: only then does the base move to
//!   the file's bytes it was merged from) or reports anything else at
//!   another version (it did not apply it, and never will, since it applies
//!   only a notification computed against its current version). Until then
//!   no further change is sent; disk events are kept, and the next
//!   notification is computed once the outstanding one is settled. An
//!   editor therefore must report its buffer right after applying a
//!   notification, before any other change.
//! - **Conflict mode.** A merge whose changes overlap puts git conflict
//!   markers (`<<<<<<< buffer` … `>>>>>>> disk`) into the buffer. Until the
//!   person removes every marker (or saves), later disk changes are not
//!   merged into a buffer full of markers: each is announced
//!   ([`Skipped::Conflict`]) and merged as soon as the markers are gone.
//! - **Heavy work off the loop.** Merges and hunks are [`Job`]s the shell
//!   runs elsewhere; a [`Computed`] result is taken only if its inputs are
//!   still the current ones.
//!
//! [`Editor`] is the table of one editor's buffers by path: it routes
//! events, and follows renames (telling a rename from a backup-style save,
//! a swap, and a rename onto another open buffer).
//!
//! The crate is pure: the shell reads files (only once they have settled)
//! and feeds their bytes in, runs jobs, and keeps timers.

mod buffer;
mod editor;
mod job;

use std::ops::Range;
use std::path::PathBuf;

use serde::Serialize;

pub use buffer::{Buffer, Effect, Event};
pub use editor::{BufferId, BufferStatus, Editor, Error, GRACE, Input, Notice, Output};
pub use job::{Bytes, Change, Computed, Job, JobKind, MAX_BYTES, Merged, hunks};

/// What the shell found at a file's path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Disk {
    /// A regular file under the root, within the size limit: its bytes.
    Bytes(Bytes),
    /// Nothing is there.
    Missing,
    /// Something is there that is not read: why.
    Unreadable(Skipped),
}

/// Why a file's change did not reach the buffer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Skipped {
    /// A NUL byte, or bytes that are not UTF-8.
    Binary,
    /// More than [`MAX_BYTES`].
    TooLarge,
    /// Not a regular file: a FIFO, a device, a socket, a folder (its kind).
    NotAFile(String),
    /// A link that leads outside the workspace root (or into `.git`).
    Outside,
    /// The file may not be read (its permissions).
    Denied,
    /// The buffer is in conflict mode: the change waits until the markers
    /// are resolved, and is merged then.
    Conflict,
}

impl Skipped {
    /// The protocol's name for the reason.
    pub fn reason(&self) -> &'static str {
        match self {
            Skipped::Binary => "binary",
            Skipped::TooLarge => "too-large",
            Skipped::NotAFile(_) => "not-a-file",
            Skipped::Outside => "outside-root",
            Skipped::Denied => "unreadable",
            Skipped::Conflict => "conflict",
        }
    }

    /// A sentence for the person.
    pub fn explain(&self) -> String {
        match self {
            Skipped::Binary => "the file is now binary (a NUL byte or bytes that are not UTF-8); \
                                the buffer was left as it is"
                .into(),
            Skipped::TooLarge => {
                format!(
                    "the file is now larger than {MAX_BYTES} bytes; the buffer was left as it is"
                )
            }
            Skipped::NotAFile(kind) => {
                format!("the path is now {kind}, not a regular file; it was not read")
            }
            Skipped::Outside => "the path now leads outside the workspace root (or into .git) \
                                 through a link; it was not read"
                .into(),
            Skipped::Denied => "the file may not be read any more (its permissions); the buffer \
                                was left as it is"
                .into(),
            Skipped::Conflict => "the file changed on disk again while the buffer has conflict \
                                  markers; the change is merged once every marker is resolved"
                .into(),
        }
    }
}

/// What the editor should do with a buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// A clean buffer takes the disk's bytes.
    Reload(Change),
    /// A dirty buffer took the disk's changes beside its own.
    Merged(Change),
    /// Overlapping changes: the text has conflict markers, and the buffer
    /// is in conflict mode until every marker is gone or it is saved.
    Conflict {
        /// The change with markers.
        change: Change,
        /// Lines (of the new text) from each `<<<<<<<` through its
        /// `>>>>>>>`.
        regions: Vec<Range<usize>>,
    },
    /// The file was deleted: ask whether to save the buffer to recreate it
    /// or abandon it.
    Deleted,
    /// A change of the file was not brought into the buffer.
    Skipped(Skipped),
    /// The file was renamed: the buffer now belongs to `to`.
    Renamed {
        /// The new path.
        to: PathBuf,
    },
    /// Another open buffer's file was renamed onto this buffer's path, so
    /// this buffer's file is gone and the path belongs to that buffer now.
    /// The server forgets this buffer; the editor keeps its text.
    Replaced {
        /// The path of the buffer whose file took this path.
        by: PathBuf,
    },
}
