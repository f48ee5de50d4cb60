//! One filesystem operation of a transaction (as its journal records
//! it), and carrying one out: what a commit does (see `carry`) and what
//! recovery finishes (see `txn`).

use std::fs;
use std::io::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::files;
use crate::found::Found;

fn io(context: String) -> impl FnOnce(std::io::Error) -> Error {
    move |e| Error::io(context, e)
}

/// One filesystem operation of a transaction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub(crate) enum Op {
    /// Move `temp` over `target` (paths relative to the root). The
    /// temporary file is in the target's folder, or in the nearest folder
    /// above it that exists when the target's own is made by the commit.
    Put {
        target: String,
        temp: String,
        /// Copy into the existing file instead of renaming, to keep its
        /// hard links.
        in_place: bool,
        /// The temporary entry is a symbolic link (a restored link).
        #[serde(default)]
        link: bool,
        /// What stood at the target when the transaction was planned
        /// (`None` in journals of older versions, and for a move onto the
        /// moved file itself).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        before: Option<Found>,
        /// The hash of the staged content.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        after: Option<crate::ContentHash>,
    },
    /// Remove `target`.
    Delete {
        target: String,
        /// What stood there when the transaction was planned.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        before: Option<Found>,
        /// Where the entry is moved before it is removed, so the deletion
        /// can be undone until the transaction is done (a temporary name
        /// of mend's beside it; `None`: removed at once).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hold: Option<String>,
    },
    /// Remove the folder `target`, which the commit's deletions emptied (a
    /// folder becoming a file).
    RemoveDir { target: String },
}

impl Op {
    /// The order operations are carried out in: deletions first, then the
    /// folders they emptied, then new content, so a file can replace a
    /// folder and a folder a file.
    pub(crate) fn phase(&self) -> u8 {
        match self {
            Op::Delete { .. } => 0,
            Op::RemoveDir { .. } => 1,
            Op::Put { .. } => 2,
        }
    }
}

/// Whether `temp` is still the temporary entry a `Put` staged: a plain
/// file, or for a restored link, a link.
pub(crate) fn is_staged(temp: &Path, link: bool) -> bool {
    fs::symlink_metadata(temp).is_ok_and(|m| {
        if link {
            m.file_type().is_symlink()
        } else {
            m.is_file()
        }
    })
}

/// Moves one staged content into place.
pub(crate) fn put(root: &Path, op: &Op) -> Result<(), Error> {
    let Op::Put {
        target,
        temp,
        in_place,
        link,
        ..
    } = op
    else {
        return Ok(());
    };
    let temp = root.join(temp);
    if !is_staged(&temp, *link) {
        return Ok(());
    }
    install(&root.join(target), &temp, *in_place)
}

/// Moves `temp` over `target`, or copies it into a file written in place.
pub(crate) fn install(target: &Path, temp: &Path, in_place: bool) -> Result<(), Error> {
    // A folder the commit makes (one replacing a file, or a new one) is
    // made now, after the deletions.
    if let Some(dir) = target.parent()
        && fs::symlink_metadata(dir).is_err()
    {
        fs::create_dir_all(dir).map_err(io(format!("creating {}", dir.display())))?;
    }
    if in_place && fs::symlink_metadata(target).is_ok_and(|m| m.is_file()) {
        copy_into(temp, target)?;
        fs::remove_file(temp).map_err(io(format!("removing {}", temp.display())))
    } else {
        fs::rename(temp, target).map_err(io(format!("moving {} into place", target.display())))
    }
}

/// Deletes one target.
pub(crate) fn delete(root: &Path, rel: &str) -> Result<(), Error> {
    let target = root.join(rel);
    match fs::remove_file(&target) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(format!("deleting {}", target.display()), e)),
    }
}

/// Removes a folder the transaction emptied. After a crash, one that holds
/// something again (or is no longer a folder) stays; the write meant to
/// replace it is then set aside.
pub(crate) fn remove_dir(root: &Path, rel: &str, recovering: bool) -> Result<(), Error> {
    let target = root.join(rel);
    match fs::remove_dir(&target) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e)
            if recovering
                && matches!(
                    e.kind(),
                    std::io::ErrorKind::DirectoryNotEmpty | std::io::ErrorKind::NotADirectory
                ) =>
        {
            Ok(())
        }
        Err(e) => Err(Error::io(
            format!("removing the folder {}", target.display()),
            e,
        )),
    }
}

/// Overwrites `target`'s bytes in place (keeping its inode, so hard links
/// see the change) from `temp`.
fn copy_into(temp: &Path, target: &Path) -> Result<(), Error> {
    let bytes = files::read_regular(temp, u64::MAX, true)
        .map_err(|e| Error::io(format!("reading {}", temp.display()), e.into_io()))?;
    let mut f =
        files::open_for_overwrite(target).map_err(io(format!("opening {}", target.display())))?;
    f.write_all(&bytes)
        .and_then(|()| f.sync_all())
        .map_err(io(format!("writing {}", target.display())))
}
