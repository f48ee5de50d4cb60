//! The review model: what a person reviews, a pending session's outputs
//! or a turn's changes, in one shape for every front-end (the review
//! screen, the editors, MCP and `--json`).
//!
//! - A file ([`ReviewFile`]) has its path, status letter, a rename's
//!   `from` and `to` (both, whichever store keys it by which), its hunk
//!   count, the version an action takes back as `seen`, and a note.
//! - A diff ([`FileDiff`]) is a file with its numbered hunks as data
//!   ([`Hunk`]: number, header, lines) and its unified text, so no
//!   front-end reads hunks out of the text.
//! - Accept and reject take one [`Selection`]: paths, hunk numbers of one
//!   file, and the `seen` version the numbers were read from.
//!
//! The wire shape is written out in `docs/editor-protocol.md`.

use mend_checkpoint::turn::{ChangeDiff, TurnFile};
use mend_core::report::Status;
use serde::Serialize;

/// Which files, or which hunks of one file, an accept or reject takes.
pub use mend_checkpoint::turn::Selection;
/// One hunk of a file's diff: its number (what `hunks` in a
/// [`Selection`] takes), its `@@` header and its lines.
pub use mend_core::diff::DiffHunk as Hunk;

/// One file under review.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ReviewFile {
    /// The path the session or turn keys the file by, which `paths` in a
    /// [`Selection`] takes: for a pending rename the path it has now, for
    /// a turn's rename the path it has become.
    pub path: String,
    /// Its letter.
    pub status: Status,
    /// For a rename, the path it had.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// For a rename, the path it gets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// What a turn knows of the file's content (turns only).
    #[serde(flatten)]
    pub content: Option<Content>,
    /// How many numbered hunks its diff has (0: it is taken whole).
    pub hunks: usize,
    /// The version of its change as shown: accept and reject take it back
    /// as `seen`, and are refused once the change is another.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// What else to know of it, in words: why it cannot be read, that it
    /// is binary or large, a type change.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Why a pending `?` file cannot be read (the note; kept for older
    /// clients).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// What a turn says of a changed file's content: a type change, its
/// sizes, and whether it has no text diff (binary or large).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Content {
    /// A type or mode change: `file → link`, `file → executable file`, …
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change: Option<String>,
    /// Bytes now (for a deletion, at the start).
    pub size: Option<u64>,
    /// Bytes at the start, when its size changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size_before: Option<u64>,
    /// Not text: listed without a diff.
    pub binary: bool,
    /// Too large for a diff.
    pub large: bool,
}

/// One file's diff: the file, its unified text and its hunks as data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct FileDiff {
    /// The file.
    #[serde(flatten)]
    pub file: ReviewFile,
    /// Its unified diff, each hunk's header saying its number (`hunk k`)
    /// where hunks can be taken one by one; for a file without a text
    /// diff, a line saying why.
    pub diff: String,
    /// Its hunks, in order, numbered as `diff` shows them.
    pub diff_hunks: Vec<Hunk>,
}

impl From<&TurnFile> for ReviewFile {
    fn from(f: &TurnFile) -> ReviewFile {
        let note = f.change.clone().or_else(|| {
            let what = match (f.large, f.binary) {
                (true, _) => "large file",
                (false, true) => "binary file",
                _ => return None,
            };
            Some(what.to_owned())
        });
        ReviewFile {
            path: f.path.clone(),
            status: f.status,
            from: f.from.clone(),
            to: f.from.as_ref().map(|_| f.path.clone()),
            content: Some(Content {
                change: f.change.clone(),
                size: f.size,
                size_before: f.size_before,
                binary: f.binary,
                large: f.large,
            }),
            hunks: f.hunks,
            version: Some(f.version.clone()),
            note,
            reason: None,
        }
    }
}

impl From<ChangeDiff> for FileDiff {
    fn from(d: ChangeDiff) -> FileDiff {
        FileDiff {
            file: ReviewFile::from(&d.file),
            diff: d.diff,
            diff_hunks: d.shown,
        }
    }
}

impl From<mend_pending::FileStatus> for ReviewFile {
    fn from(f: mend_pending::FileStatus) -> ReviewFile {
        ReviewFile {
            from: f.to.as_ref().map(|_| f.path.clone()),
            path: f.path,
            status: f.status,
            to: f.to,
            content: None,
            hunks: f.hunks,
            version: f.version,
            note: f.reason.clone(),
            reason: f.reason,
        }
    }
}

impl FileDiff {
    /// A pending output's diff, for `file` as status lists it: its
    /// version is the diff's, set only when its hunks are numbered.
    pub fn pending(file: ReviewFile, d: mend_pending::OutputDiff) -> FileDiff {
        FileDiff {
            file: ReviewFile {
                version: d.version,
                ..file
            },
            diff: d.text,
            diff_hunks: d.hunks,
        }
    }
}

/// What a review screen compares to know that another command changed
/// what it shows: the size, times and identity of each watched path
/// (the session's index or the turn's state, and the files listed),
/// `None` for one that is missing. Every change to a session or a turn
/// replaces its file, so its identity changes.
pub type Stamp = Vec<Option<FileStamp>>;

/// One path's metadata in a [`Stamp`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
    /// The inode and change time, where there are such.
    id: (u64, i64, i64),
}

/// The [`Stamp`] of `paths` now: their metadata alone, cheap enough to
/// take between keys.
pub fn stamp(paths: impl Iterator<Item = std::path::PathBuf>) -> Stamp {
    paths
        .map(|p| {
            let m = std::fs::symlink_metadata(p).ok()?;
            Some(FileStamp {
                len: m.len(),
                modified: m.modified().ok(),
                id: identity(&m),
            })
        })
        .collect()
}

#[cfg(unix)]
fn identity(m: &std::fs::Metadata) -> (u64, i64, i64) {
    use std::os::unix::fs::MetadataExt as _;
    (m.ino(), m.ctime(), m.ctime_nsec())
}

#[cfg(not(unix))]
fn identity(_: &std::fs::Metadata) -> (u64, i64, i64) {
    (0, 0, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rename_is_spelled_from_and_to_in_both() {
        let turn = TurnFile {
            path: "new.txt".into(),
            status: Status::Renamed,
            from: Some("old.txt".into()),
            change: None,
            size: Some(3),
            size_before: None,
            binary: false,
            large: false,
            hunks: 1,
            version: "v1".into(),
        };
        let pending = mend_pending::FileStatus {
            path: "old.txt".into(),
            status: Status::Renamed,
            to: Some("new.txt".into()),
            reason: None,
            hunks: 0,
            version: None,
        };
        for f in [ReviewFile::from(&turn), ReviewFile::from(pending)] {
            assert_eq!(
                (f.from.as_deref(), f.to.as_deref()),
                (Some("old.txt"), Some("new.txt"))
            );
        }
    }

    #[test]
    fn a_file_that_cannot_be_read_says_why_in_its_note() {
        let f = ReviewFile::from(mend_pending::FileStatus {
            path: "b.bin".into(),
            status: Status::Unreadable,
            to: None,
            reason: Some("it is a binary file".into()),
            hunks: 0,
            version: None,
        });
        let json = serde_json::to_value(&f).unwrap();
        assert_eq!(json["note"], "it is a binary file");
        assert_eq!(json["reason"], "it is a binary file");
        assert_eq!(json["hunks"], 0);
    }
}
