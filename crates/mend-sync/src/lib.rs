//! Keeping an editor buffer in step with its file while something else (an
//! agent, a formatter, `git checkout`) writes the file.
//!
//! A [`Buffer`] holds what the editor has and what it was derived from:
//!
//! - the **base**: the file's bytes the buffer last agreed with (loaded,
//!   saved, reloaded or merged from);
//! - the **text**: the buffer as the editor last reported it;
//! - **dirty**: whether the editor holds unsaved changes;
//! - **conflict mode**: set when a merge wrote conflict markers into the
//!   buffer; until the user saves, further disk changes are ignored, because
//!   merging into a buffer full of markers would produce garbage.
//!
//! [`Buffer::on`] takes an [`Event`] and returns an [`Outcome`]: what the
//! editor should do. When the file changes on disk, a clean buffer reloads;
//! a dirty one gets a line-level three-way merge (base→buffer against
//! base→disk) whose non-overlapping changes both land; overlapping changes
//! become git conflict markers (`<<<<<<< buffer` … `>>>>>>> disk`) and
//! conflict mode. Every change to the text comes with line [`Hunk`]s so an
//! editor can apply it piecewise and keep the cursor and marks where they
//! were.
//!
//! After a merge, clean or not, the base becomes the disk bytes just merged,
//! so an agent's next write beside its previous one is not a conflict. On
//! save, the base becomes the saved bytes.
//!
//! The crate is pure: the shell reads files and feeds their bytes in. When
//! the machine needs to know what is on disk now it says
//! [`Outcome::Recheck`], and the shell answers with [`Event::Disk`].

use std::ops::Range;

use mend_merge::{Adjacent, Labels, Options, Style};
use serde::Serialize;

/// Files larger than this are reported, never merged: merging is quadratic
/// in the worst case, and a buffer that large is rarely code.
pub const MAX_BYTES: usize = 8 << 20;

/// Something that happened to the buffer or its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event<'a> {
    /// The file's bytes are now these (it was written, or the shell
    /// re-read it after [`Outcome::Recheck`]).
    Disk(&'a [u8]),
    /// The editor's text is now `text`; `dirty` is the editor's own
    /// "modified" flag, which undo can clear.
    Edited {
        /// The whole buffer.
        text: &'a [u8],
        /// Whether the editor holds unsaved changes.
        dirty: bool,
    },
    /// The editor wrote these bytes to the file.
    Saved(&'a [u8]),
    /// The file was deleted.
    Deleted,
    /// The file was renamed to `to`.
    Renamed(&'a str),
    /// The editor did not apply an outcome (its text had moved on); this is
    /// its text now. The base goes back to what it was before the outcomes
    /// the editor has not acknowledged, and the disk is checked again.
    Refused {
        /// The whole buffer.
        text: &'a [u8],
        /// Whether the editor holds unsaved changes.
        dirty: bool,
    },
}

/// One piece of a text change: buffer lines `start..end` (0-based, of the
/// text before the change) become `text` (whole lines, with their line
/// endings). Hunks are in order and do not overlap; an editor applies them
/// from the last to the first so earlier line numbers stay valid.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hunk {
    /// First line replaced.
    pub start: usize,
    /// One past the last line replaced (`start` for a pure insertion).
    pub end: usize,
    /// The new lines.
    pub text: Vec<u8>,
}

/// A new buffer text and how to get there from the old one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    /// The whole new text.
    pub text: Vec<u8>,
    /// The edits that turn the old text into it.
    pub hunks: Vec<Hunk>,
}

/// Why a disk event changed nothing in the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ignored {
    /// The bytes are the base: the editor's own write, or an event that
    /// changed no content.
    Unchanged,
    /// The buffer already holds exactly these bytes.
    InBuffer,
    /// The buffer is in conflict mode; the change waits for the next save.
    ConflictMode,
}

/// Why a file's bytes cannot be merged into a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Skipped {
    /// A NUL byte, or bytes that are not UTF-8.
    Binary,
    /// More than [`MAX_BYTES`].
    TooLarge,
}

/// What the editor should do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "kebab-case")]
pub enum Outcome {
    /// Nothing: the state was updated.
    Noted,
    /// A clean buffer takes the disk's bytes.
    Reload(Change),
    /// A dirty buffer took the disk's changes beside its own.
    Merged(Change),
    /// Overlapping changes: the text has conflict markers, and the buffer
    /// is in conflict mode until it is saved.
    Conflict {
        /// The change with markers.
        change: Change,
        /// Lines (of the new text) from each `<<<<<<<` through its
        /// `>>>>>>>`.
        regions: Vec<Range<usize>>,
    },
    /// The disk changed, and the buffer keeps what it has.
    Ignored(Ignored),
    /// The file changed to something a text buffer cannot take.
    Skipped(Skipped),
    /// The shell should read the file and send [`Event::Disk`] (or
    /// [`Event::Deleted`] when it is gone).
    Recheck,
    /// The file was deleted: ask whether to save the buffer to recreate it
    /// or abandon it.
    AskRecreate,
    /// The file was renamed: the buffer now belongs to `to`.
    Follow {
        /// The new path.
        to: String,
    },
}

/// The state before the text-changing outcomes the editor has not yet
/// acknowledged, so a refusal can put it back.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Prior {
    base: Vec<u8>,
    conflict: bool,
}

/// One buffer's sync state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Buffer {
    base: Vec<u8>,
    text: Vec<u8>,
    dirty: bool,
    conflict: bool,
    deleted: bool,
    prior: Option<Prior>,
}

impl Buffer {
    /// A buffer whose text was derived from `base` (the file's bytes when
    /// the editor loaded it). A clean buffer has `text == base`; a buffer
    /// opened dirty should use the disk's current bytes as its base, since
    /// nothing older is known.
    pub fn new(base: &[u8], text: &[u8], dirty: bool) -> Buffer {
        Buffer {
            base: base.to_vec(),
            text: text.to_vec(),
            dirty,
            conflict: false,
            deleted: false,
            prior: None,
        }
    }

    /// The bytes the buffer derives from.
    pub fn base(&self) -> &[u8] {
        &self.base
    }

    /// The buffer's text as last known.
    pub fn text(&self) -> &[u8] {
        &self.text
    }

    /// Whether the editor holds unsaved changes.
    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    /// Whether the buffer is in conflict mode.
    pub fn in_conflict(&self) -> bool {
        self.conflict
    }

    /// Whether the file is gone (deleted, not yet recreated or saved).
    pub fn is_deleted(&self) -> bool {
        self.deleted
    }

    /// Applies `event` and says what the editor should do.
    pub fn on(&mut self, event: Event<'_>) -> Outcome {
        match event {
            Event::Disk(bytes) => self.disk(bytes),
            Event::Edited { text, dirty } => {
                let cleaned = self.dirty && !dirty;
                // The editor reporting the text an outcome produced is its
                // acknowledgement: that outcome can no longer be refused.
                if text == self.text.as_slice() {
                    self.prior = None;
                }
                self.text = text.to_vec();
                self.dirty = dirty;
                // Undo back to the saved state: the buffer is clean again,
                // and a file that moved on meanwhile should now reload.
                if cleaned && !self.conflict {
                    Outcome::Recheck
                } else {
                    Outcome::Noted
                }
            }
            Event::Saved(bytes) => {
                self.base = bytes.to_vec();
                self.text = bytes.to_vec();
                self.dirty = false;
                self.conflict = false;
                self.deleted = false;
                self.prior = None;
                // Something may have written the file between the save and
                // now, or while conflict mode ignored it.
                Outcome::Recheck
            }
            Event::Deleted => {
                self.deleted = true;
                Outcome::AskRecreate
            }
            Event::Renamed(to) => Outcome::Follow { to: to.to_owned() },
            Event::Refused { text, dirty } => {
                if let Some(prior) = self.prior.take() {
                    self.base = prior.base;
                    self.conflict = prior.conflict;
                }
                self.text = text.to_vec();
                self.dirty = dirty;
                Outcome::Recheck
            }
        }
    }

    fn disk(&mut self, bytes: &[u8]) -> Outcome {
        self.deleted = false;
        if bytes.len() > MAX_BYTES {
            return Outcome::Skipped(Skipped::TooLarge);
        }
        if bytes.contains(&0) || std::str::from_utf8(bytes).is_err() {
            return Outcome::Skipped(Skipped::Binary);
        }
        if self.conflict {
            let why = if bytes == self.base.as_slice() {
                Ignored::Unchanged
            } else {
                Ignored::ConflictMode
            };
            return Outcome::Ignored(why);
        }
        if bytes == self.text.as_slice() {
            let why = if bytes == self.base.as_slice() {
                Ignored::Unchanged
            } else {
                Ignored::InBuffer
            };
            self.base = bytes.to_vec();
            return Outcome::Ignored(why);
        }
        if !self.dirty {
            let change = self.take(bytes, bytes.to_vec(), false);
            return Outcome::Reload(change);
        }
        if bytes == self.base.as_slice() {
            return Outcome::Ignored(Ignored::Unchanged);
        }
        self.merge(bytes)
    }

    fn merge(&mut self, disk: &[u8]) -> Outcome {
        let opts = Options {
            style: Style::Merge,
            adjacent: Adjacent::Merge,
        };
        let merged = mend_merge::merge(&self.base, &self.text, disk, &opts);
        let labels = Labels {
            ours: Some("buffer".into()),
            base: Some("base".into()),
            theirs: Some("disk".into()),
        };
        let (text, regions) = merged.render_marked(&labels, Style::Merge, 7);
        if regions.is_empty() {
            if text == self.text {
                self.base = disk.to_vec();
                return Outcome::Ignored(Ignored::InBuffer);
            }
            return Outcome::Merged(self.take(disk, text, false));
        }
        Outcome::Conflict {
            change: self.take(disk, text, true),
            regions,
        }
    }

    /// Moves to `text` derived from `disk`, remembering the state before so
    /// a refusal can undo it.
    fn take(&mut self, disk: &[u8], text: Vec<u8>, conflict: bool) -> Change {
        // With outcomes still unacknowledged, a refusal goes back to the
        // state before the oldest of them.
        let base = std::mem::replace(&mut self.base, disk.to_vec());
        self.prior.get_or_insert(Prior {
            base,
            conflict: self.conflict,
        });
        self.conflict = conflict;
        let hunks = hunks(&self.text, &text);
        self.text.clone_from(&text);
        Change { text, hunks }
    }
}

/// The line hunks that turn `old` into `new`.
pub fn hunks(old: &[u8], new: &[u8]) -> Vec<Hunk> {
    let new_lines = line_starts(new);
    mend_merge::line_hunks(old, new)
        .into_iter()
        .map(|(b, blen, s, slen)| Hunk {
            start: b,
            end: b + blen,
            text: new[new_lines[s]..new_lines[s + slen]].to_vec(),
        })
        .collect()
}

/// The byte offset where each line starts, and the text's length last.
fn line_starts(text: &[u8]) -> Vec<usize> {
    let mut starts = vec![0];
    starts.extend(
        text.iter()
            .enumerate()
            .filter(|&(i, &b)| b == b'\n' && i + 1 < text.len())
            .map(|(i, _)| i + 1),
    );
    if text.is_empty() {
        return starts;
    }
    starts.push(text.len());
    starts
}
