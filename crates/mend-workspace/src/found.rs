//! What stands at a target, as a journal records it when a transaction is
//! planned and as recovery finds it after a crash.
//!
//! Recovery completes a committed transaction only where each target is
//! still what the transaction found (or already what it writes). Anything
//! else changed after the crash, by a person or another tool, and is kept
//! as it is: the transaction's content for it is set aside instead.

use std::fs;
use std::io::ErrorKind;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::ContentHash;
use crate::files;

/// One entry, not followed if it is a link.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Found {
    /// Nothing (a missing folder on the way included).
    Absent,
    /// A regular file with these bytes.
    File { hash: ContentHash },
    /// A symbolic link to this target (the hash of its bytes).
    Link { hash: ContentHash },
    /// A folder.
    Folder,
    /// A FIFO, socket or device.
    Other,
}

impl Found {
    /// What is at `path` now.
    pub(crate) fn at(path: &Path) -> std::io::Result<Found> {
        let meta = match fs::symlink_metadata(path) {
            Ok(m) => m,
            Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
                return Ok(Found::Absent);
            }
            Err(e) => return Err(e),
        };
        let t = meta.file_type();
        if t.is_symlink() {
            use std::os::unix::ffi::OsStrExt as _;
            let to = fs::read_link(path)?;
            return Ok(Found::Link {
                hash: ContentHash::of(to.as_os_str().as_bytes()),
            });
        }
        if t.is_dir() {
            return Ok(Found::Folder);
        }
        if !t.is_file() {
            return Ok(Found::Other);
        }
        // Swapped for something else since the stat: not the file it was.
        Ok(files::hash_regular(path)?.map_or(Found::Other, |hash| Found::File { hash }))
    }

    /// Whether this is the content a `Put` stages: a file (or, for a
    /// restored link, a link) whose bytes hash to `hash`.
    pub(crate) fn holds(&self, hash: &ContentHash, link: bool) -> bool {
        match self {
            Found::File { hash: h } => !link && h == hash,
            Found::Link { hash: h } => link && h == hash,
            _ => false,
        }
    }
}

/// Whether the nearest existing folder on `path`'s way is a folder: a file
/// standing where a folder of the path belongs blocks creating it.
pub(crate) fn way_is_clear(root: &Path, path: &Path) -> bool {
    let mut dir = path.parent();
    while let Some(d) = dir {
        // A link to a folder on the way is followed, as a write through it
        // would be.
        if fs::symlink_metadata(d).is_ok() {
            return fs::metadata(d).is_ok_and(|m| m.is_dir());
        }
        if d == root {
            return false;
        }
        dir = d.parent();
    }
    false
}

/// [`Found::at`] for the entry `name` in the folder `dir`, resolved
/// relative to its descriptor and never followed.
pub(crate) fn in_dir(dir: std::os::fd::BorrowedFd<'_>, name: &Path) -> std::io::Result<Found> {
    use rustix::fs::{AtFlags, FileType, Mode, OFlags};
    let st = match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => st,
        Err(rustix::io::Errno::NOENT | rustix::io::Errno::NOTDIR) => return Ok(Found::Absent),
        Err(e) => return Err(e.into()),
    };
    match FileType::from_raw_mode(st.st_mode) {
        FileType::Symlink => {
            let to = rustix::fs::readlinkat(dir, name, Vec::new())?;
            Ok(Found::Link {
                hash: ContentHash::of(to.as_bytes()),
            })
        }
        FileType::Directory => Ok(Found::Folder),
        FileType::RegularFile => {
            let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
            let fd = rustix::fs::openat(dir, name, flags, Mode::empty())?;
            let file = fs::File::from(fd);
            if !file.metadata()?.is_file() {
                return Ok(Found::Other);
            }
            Ok(Found::File {
                hash: files::hash_file(file)?,
            })
        }
        _ => Ok(Found::Other),
    }
}
