//! Editor buffers kept in step with their files: the [`Watcher`] and the
//! pure state machine of `mend-sync`, joined.
//!
//! The editor reports its buffers (open, edited, saved, closed); the
//! watcher reports their files. Each report goes through the buffer's
//! state machine, and what comes out is a [`Notice`] for the editor. When
//! the machine asks what is on disk now, the file is read here.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use crossbeam_channel::Receiver;
use mend_sync::{Buffer, Event, Outcome, Skipped};
use serde::Serialize;
use sha2::{Digest as _, Sha256};

use crate::{Change, Error, Kind, Options, Watcher};

/// Something the editor should do with one buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// The buffer's file, relative to the root (its old path for a rename).
    pub path: PathBuf,
    /// The editor's version of the buffer that the outcome was computed
    /// against, as last reported; an editor whose buffer has moved on
    /// should refuse the outcome.
    pub version: Option<i64>,
    /// What to do.
    pub outcome: Outcome,
    /// For a reload, merge or conflict: the SHA-256 (hex) of the file's
    /// bytes the buffer now derives from. An editor that refuses to
    /// overwrite a file changed since it read it can check that the file
    /// still holds exactly these bytes, and write without asking.
    pub disk_sha256: Option<String>,
}

/// One open buffer, as [`Buffers::status`] lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BufferStatus {
    /// The file, relative to the root.
    pub path: String,
    /// Unsaved changes in the editor.
    pub dirty: bool,
    /// In conflict mode: disk changes wait until the next save.
    pub conflict: bool,
    /// The file was deleted and not recreated.
    pub deleted: bool,
}

struct Open {
    sync: Buffer,
    version: Option<i64>,
}

/// The buffers of one editor, under one root.
pub struct Buffers {
    watcher: Watcher,
    changes: Receiver<Change>,
    root: PathBuf,
    /// The root as the caller spelled it, for absolute paths that do not
    /// go through symbolic links the canonical root resolved.
    given: PathBuf,
    open: BTreeMap<PathBuf, Open>,
}

impl Buffers {
    /// Starts watching `root`.
    pub fn start(root: &Path, opts: Options) -> Result<Buffers, Error> {
        let (watcher, changes) = Watcher::start(root, opts)?;
        let canonical = watcher.root();
        Ok(Buffers {
            watcher,
            changes,
            root: canonical,
            given: std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf()),
            open: BTreeMap::new(),
        })
    }

    /// The root, canonical.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The watcher's changes, for the caller's event loop: hand each one
    /// to [`Buffers::on_change`].
    pub fn changes(&self) -> &Receiver<Change> {
        &self.changes
    }

    /// The watcher (for its change token).
    pub fn watcher(&self) -> &Watcher {
        &self.watcher
    }

    /// `path` (absolute inside the root, or relative to it) as a clean
    /// relative path.
    pub fn relative(&self, path: &str) -> Result<PathBuf, Error> {
        let p = Path::new(path);
        let rel = if p.is_absolute() {
            p.strip_prefix(&self.root)
                .or_else(|_| p.strip_prefix(&self.given))
                .map_err(|_| Error::Outside(path.to_owned()))?
        } else {
            p
        };
        let mut out = PathBuf::new();
        for c in rel.components() {
            match c {
                Component::Normal(n) => out.push(n),
                Component::CurDir => {}
                _ => return Err(Error::Outside(path.to_owned())),
            }
        }
        if out.as_os_str().is_empty() {
            return Err(Error::Outside(path.to_owned()));
        }
        Ok(out)
    }

    /// The editor opened a buffer: `text` as it is, and whether it has
    /// unsaved changes. A clean buffer that differs from the file reloads
    /// at once.
    pub fn open(
        &mut self,
        path: &str,
        text: &[u8],
        dirty: bool,
        version: Option<i64>,
    ) -> Result<Vec<Notice>, Error> {
        let rel = self.relative(path)?;
        let disk = self.read(&rel);
        self.watcher.track(&rel, disk.as_deref());
        // A clean buffer was loaded from the file, so its text is the base
        // and any difference from the disk is news. A dirty buffer's origin
        // is unknown; the disk as it is now is the safest base.
        let base = if dirty {
            disk.as_deref().unwrap_or_default()
        } else {
            text
        };
        let mut sync = Buffer::new(base, text, dirty);
        let first = match &disk {
            Some(bytes) if !dirty => Some(sync.on(Event::Disk(bytes))),
            _ => None,
        };
        self.open.insert(rel.clone(), Open { sync, version });
        Ok(first.map(|o| self.settle(&rel, o)).unwrap_or_default())
    }

    /// The editor's buffer changed.
    pub fn edited(
        &mut self,
        path: &str,
        text: &[u8],
        dirty: bool,
        version: Option<i64>,
    ) -> Result<Vec<Notice>, Error> {
        self.event(path, version, Event::Edited { text, dirty })
    }

    /// The editor wrote the buffer to its file.
    pub fn saved(
        &mut self,
        path: &str,
        text: &[u8],
        version: Option<i64>,
    ) -> Result<Vec<Notice>, Error> {
        let rel = self.relative(path)?;
        // The watcher will see these bytes; they are no news.
        self.watcher.track(&rel, Some(text));
        self.event(path, version, Event::Saved(text))
    }

    /// The editor did not apply an outcome; `text` is what it has.
    pub fn refused(
        &mut self,
        path: &str,
        text: &[u8],
        dirty: bool,
        version: Option<i64>,
    ) -> Result<Vec<Notice>, Error> {
        self.event(path, version, Event::Refused { text, dirty })
    }

    /// The editor closed the buffer.
    pub fn close(&mut self, path: &str) -> Result<(), Error> {
        let rel = self.relative(path)?;
        self.open.remove(&rel);
        self.watcher.untrack(&rel);
        Ok(())
    }

    /// The text of an open buffer, as last reported or produced.
    pub fn text(&self, rel: &Path) -> Option<&[u8]> {
        self.open.get(rel).map(|o| o.sync.text())
    }

    /// The open buffers.
    pub fn status(&self) -> Vec<BufferStatus> {
        self.open
            .iter()
            .map(|(p, o)| BufferStatus {
                path: p.to_string_lossy().into_owned(),
                dirty: o.sync.is_dirty(),
                conflict: o.sync.in_conflict(),
                deleted: o.sync.is_deleted(),
            })
            .collect()
    }

    /// Turns a watcher change into notices.
    pub fn on_change(&mut self, change: Change) -> Vec<Notice> {
        let rel = change.path;
        let Some(open) = self.open.get_mut(&rel) else {
            return Vec::new();
        };
        let outcome = match change.kind {
            Kind::Content(bytes) => open.sync.on(Event::Disk(&bytes)),
            Kind::Binary => Outcome::Skipped(Skipped::Binary),
            Kind::TooLarge(_) => Outcome::Skipped(Skipped::TooLarge),
            Kind::Removed => open.sync.on(Event::Deleted),
            Kind::Renamed(to) => {
                let to_str = to.to_string_lossy().into_owned();
                let outcome = open.sync.on(Event::Renamed(&to_str));
                if let Some(o) = self.open.remove(&rel) {
                    self.open.insert(to, o);
                }
                outcome
            }
        };
        self.settle(&rel, outcome)
    }

    fn event(
        &mut self,
        path: &str,
        version: Option<i64>,
        event: Event<'_>,
    ) -> Result<Vec<Notice>, Error> {
        let rel = self.relative(path)?;
        let open = self
            .open
            .get_mut(&rel)
            .ok_or_else(|| Error::NotOpen(path.to_owned()))?;
        if version.is_some() {
            open.version = version;
        }
        let outcome = open.sync.on(event);
        Ok(self.settle(&rel, outcome))
    }

    /// Answers every [`Outcome::Recheck`] by reading the file, and turns
    /// the final outcome into a notice (none for the silent ones).
    fn settle(&mut self, rel: &Path, mut outcome: Outcome) -> Vec<Notice> {
        // A recheck's answer is a disk event, which never asks again; the
        // bound is only a guard.
        for _ in 0..4 {
            if outcome != Outcome::Recheck {
                break;
            }
            let disk = self.read(rel);
            let Some(open) = self.open.get_mut(rel) else {
                return Vec::new();
            };
            outcome = match &disk {
                Some(bytes) => open.sync.on(Event::Disk(bytes)),
                None if open.sync.is_deleted() => Outcome::Noted,
                None => open.sync.on(Event::Deleted),
            };
        }
        let open = self.open.get(rel);
        let version = open.and_then(|o| o.version);
        let mut disk_sha256 = None;
        if let (Some(o), Outcome::Reload(_) | Outcome::Merged(_) | Outcome::Conflict { .. }) =
            (open, &outcome)
        {
            // The buffer now derives from the disk's bytes: the watcher
            // compares what it sees next with them.
            self.watcher.track(rel, Some(o.sync.base()));
            disk_sha256 = Some(format!("{:x}", Sha256::digest(o.sync.base())));
        }
        match outcome {
            Outcome::Noted | Outcome::Ignored(_) | Outcome::Recheck => Vec::new(),
            outcome => vec![Notice {
                path: rel.to_path_buf(),
                version,
                outcome,
                disk_sha256,
            }],
        }
    }

    /// The file's bytes, or `None` when it is not a readable file.
    fn read(&self, rel: &Path) -> Option<Vec<u8>> {
        let abs = self.root.join(rel);
        std::fs::metadata(&abs)
            .ok()
            .filter(std::fs::Metadata::is_file)?;
        std::fs::read(abs).ok()
    }
}
