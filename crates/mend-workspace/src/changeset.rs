//! A change set is valid as a whole before anything is written, and a dry
//! run checks it the same way: two changes that end at one path, a move
//! onto a file that exists, a path that would be both a file and a folder,
//! and a file over the size limit are refused up front, naming what
//! collides, instead of failing half-way through a commit or passing as a
//! clean dry run.
//!
//! A file may replace a folder when the same set deletes everything in
//! it, and a folder a file when the set deletes the file; a move onto a
//! name that is the moved file itself (a case-only rename on a
//! case-insensitive filesystem) is a rename, not a collision.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::error::Error;
use crate::{Base, Change, Workspace};

/// The links the set deletes (what stands there now is a link).
fn deleted_links(ws: &Workspace, changes: &[Change]) -> BTreeSet<String> {
    changes
        .iter()
        .filter(|c| matches!(c, Change::Delete { .. }))
        .map(Change::path)
        .filter(|p| {
            ws.root_dir()
                .join(p)
                .symlink_metadata()
                .is_ok_and(|m| m.file_type().is_symlink())
        })
        .map(str::to_owned)
        .collect()
}

/// What a change does, for messages: "moving a.py to c.py".
fn describe(changes: &[Change], i: usize) -> String {
    match &changes[i] {
        Change::Write {
            path,
            mode_from: Some(src),
            ..
        } => format!("moving {src} to {path}"),
        Change::Write {
            path,
            base: Base::Absent,
            ..
        } => format!("creating {path}"),
        Change::Write { path, .. } | Change::Bytes { path, .. } => format!("writing {path}"),
        Change::Restore { path, .. } => format!("restoring {path}"),
        Change::Delete { path, .. } => {
            let moved_to = changes.iter().find_map(|c| match c {
                Change::Write {
                    path: to,
                    mode_from: Some(src),
                    ..
                } if src == path => Some(to),
                _ => None,
            });
            match moved_to {
                Some(to) => format!("moving {path} to {to}"),
                None => format!("deleting {path}"),
            }
        }
    }
}

fn conflict(path: &str, detail: String) -> Error {
    Error::Conflict {
        path: path.to_owned(),
        detail,
    }
}

/// What validation found that the commit needs.
#[derive(Debug, Default)]
pub(crate) struct Checked {
    /// Targets that are folders now and become files: the folders to
    /// remove once the set's deletions have emptied them, deepest first
    /// (relative to the root, as the journal spells paths).
    pub(crate) emptied: BTreeMap<String, Vec<String>>,
    /// Move destinations that are the moved file itself under another
    /// spelling.
    pub(crate) same_file: BTreeSet<String>,
    /// Links the set deletes: what lands beneath one lands in the folder
    /// made in its place, so the link is not followed.
    pub(crate) unlinked: BTreeSet<String>,
}

pub(crate) fn validate(ws: &Workspace, changes: &[Change]) -> Result<Checked, Error> {
    // Each change's target as spelled on disk, so two spellings of one
    // file collide.
    let mut targets: BTreeMap<String, usize> = BTreeMap::new();
    let unlinked = deleted_links(ws, changes);
    for (i, c) in changes.iter().enumerate() {
        let rel = ws.resolve_change(c, &unlinked)?.0;
        if let Some(&j) = targets.get(&rel) {
            let (a, b) = (describe(changes, j), describe(changes, i));
            // A move's own pair names two paths, so this is never it.
            let same = if a == b { a } else { format!("{a}, and {b}") };
            return Err(conflict(
                &rel,
                format!("two changes end at it: {same}; send one change per path"),
            ));
        }
        targets.insert(rel, i);
    }
    one_name_per_file(ws, changes, &unlinked)?;
    let mut checked = Checked {
        unlinked,
        ..Checked::default()
    };
    for (rel, &i) in &targets {
        let size = match &changes[i] {
            Change::Delete { .. } => continue,
            Change::Write { text, encoding, .. } => match encoding {
                crate::Encoding::Utf8 => text.len() as u64,
                _ => 2 * text.encode_utf16().count() as u64,
            },
            Change::Bytes { bytes, .. } | Change::Restore { bytes, .. } => bytes.len() as u64,
        };
        let limit = ws.options().max_bytes;
        if size > limit {
            return Err(Error::WouldBeTooLarge {
                path: rel.clone(),
                size,
                limit,
            });
        }
        let on_disk = ws.resolve_change(&changes[i], &checked.unlinked)?.1;
        if let Change::Write {
            base: Base::Absent,
            mode_from: Some(src),
            ..
        } = &changes[i]
            && on_disk.symlink_metadata().is_ok()
        {
            if !same_file(&on_disk, &ws.resolve(src)?) {
                return Err(conflict(
                    rel,
                    format!(
                        "it already exists, so moving {src} there would overwrite it; delete it in the same change, or choose another name"
                    ),
                ));
            }
            checked.same_file.insert(rel.clone());
        }
        check_folders(ws, &targets, changes, (rel, i), &checked.unlinked)?;
        if on_disk.symlink_metadata().is_ok_and(|m| m.is_dir()) {
            let dirs = emptied_folder(ws, &targets, changes, rel, &on_disk, i)?;
            checked.emptied.insert(rel.clone(), dirs);
        }
    }
    Ok(checked)
}

/// Where a change lands once links are followed: a write goes through a
/// link (to a file, or on the way to a folder) to the file it names; a
/// deletion removes the entry itself, so only a regular file counts.
struct Lands {
    /// The file's device and inode, when it exists.
    inode: Option<(u64, u64)>,
    /// Its path with every link resolved (for a new file, its folder's).
    real: std::path::PathBuf,
    write: bool,
}

fn lands(
    ws: &Workspace,
    change: &Change,
    unlinked: &BTreeSet<String>,
) -> Result<Option<Lands>, Error> {
    use std::os::unix::fs::MetadataExt as _;
    let write = match change {
        Change::Write { .. } | Change::Bytes { .. } => true,
        Change::Delete { .. } => false,
        // A restore replaces the entry itself, a link included.
        Change::Restore { .. } => return Ok(None),
    };
    let path = ws.resolve_change(change, unlinked)?.1;
    let meta = if write {
        path.metadata()
    } else {
        path.symlink_metadata()
    };
    let inode = match meta {
        Ok(m) if m.is_file() => Some((m.dev(), m.ino())),
        // Folders and special files are refused by name elsewhere.
        Ok(_) => return Ok(None),
        Err(_) if !write => return Ok(None),
        Err(_) => None,
    };
    let real = if write && inode.is_some() {
        crate::path::canonical(&ws.root.canonical, &path).unwrap_or(path)
    } else {
        // A new file, or an entry deleted as itself: its folder resolved,
        // its own name as it is.
        match (path.parent(), path.file_name()) {
            (Some(dir), Some(name)) => crate::path::real_dir(&ws.root, dir).join(name),
            _ => path,
        }
    };
    Ok(Some(Lands { inode, real, write }))
}

/// No file is changed under two names (a symbolic link to it, a link to a
/// folder on its way, a hard link): both changes would be planned against
/// the same bytes and only the last written would remain. A move onto the
/// moved file itself is a rename, not two changes.
fn one_name_per_file(
    ws: &Workspace,
    changes: &[Change],
    unlinked: &BTreeSet<String>,
) -> Result<(), Error> {
    let mut seen: Vec<(usize, Lands)> = Vec::new();
    for (i, c) in changes.iter().enumerate() {
        let Some(here) = lands(ws, c, unlinked)? else {
            continue;
        };
        for (j, there) in &seen {
            let same_inode =
                here.write && there.write && here.inode.is_some() && here.inode == there.inode;
            let same_path = (here.write || there.write) && here.real == there.real;
            if (same_inode || same_path) && !is_move(changes, *j, i) {
                return Err(two_names(changes, *j, i));
            }
        }
        seen.push((i, here));
    }
    Ok(())
}

/// Whether changes `a` and `b` are one move: the write takes its mode from
/// the file the deletion removes.
fn is_move(changes: &[Change], a: usize, b: usize) -> bool {
    let moved = |w: &Change, d: &Change| match (w, d) {
        (
            Change::Write {
                mode_from: Some(src),
                ..
            },
            Change::Delete { path, .. },
        ) => src == path,
        _ => false,
    };
    moved(&changes[a], &changes[b]) || moved(&changes[b], &changes[a])
}

fn two_names(changes: &[Change], j: usize, i: usize) -> Error {
    let (first, second) = (changes[j].path(), changes[i].path());
    conflict(
        second,
        format!(
            "{second} and {first} are one file (through a symbolic link or a hard link), and the change set changes it under both names ({}, and {}); only one of the two would remain, so nothing was written. Send every edit of this file under one name",
            describe(changes, j),
            describe(changes, i)
        ),
    )
}

/// Whether two paths name one file (one inode): a case-only rename on a
/// case-insensitive filesystem, or a move onto a hard link of itself.
#[cfg(unix)]
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    match (a.symlink_metadata(), b.symlink_metadata()) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// A file written where a folder is now: every entry under the folder must
/// be deleted by the same set. Returns the folders to remove, deepest
/// first, the folder itself last.
fn emptied_folder(
    ws: &Workspace,
    targets: &BTreeMap<String, usize>,
    changes: &[Change],
    rel: &str,
    folder: &Path,
    i: usize,
) -> Result<Vec<String>, Error> {
    let mut dirs = Vec::new();
    let mut pending = vec![(folder.to_path_buf(), rel.to_owned())];
    while let Some((dir, dir_rel)) = pending.pop() {
        let entries =
            std::fs::read_dir(&dir).map_err(|e| Error::io(format!("listing {dir_rel}"), e))?;
        for entry in entries {
            let entry = entry.map_err(|e| Error::io(format!("listing {dir_rel}"), e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let child = format!("{dir_rel}/{name}");
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            if is_dir {
                pending.push((entry.path(), child));
                continue;
            }
            let deleted = ws
                .normalize(&child)
                .ok()
                .and_then(|c| targets.get(&c))
                .is_some_and(|&j| matches!(changes[j], Change::Delete { .. }));
            if !deleted {
                return Err(conflict(
                    rel,
                    format!(
                        "it is a folder, and {} would replace it with a file while it still holds {child}; delete what it holds in the same change, or choose another name",
                        describe(changes, i)
                    ),
                ));
            }
        }
        dirs.push(ws.relative(&dir));
    }
    // Children were listed after their parents; remove them first.
    dirs.reverse();
    Ok(dirs)
}

/// No folder a written file needs is itself a file, now or after the set.
fn check_folders(
    ws: &Workspace,
    targets: &BTreeMap<String, usize>,
    changes: &[Change],
    (rel, i): (&str, usize),
    unlinked: &BTreeSet<String>,
) -> Result<(), Error> {
    let mut dir = Path::new(rel).parent();
    while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty()) {
        let folder = d.to_string_lossy();
        if let Some(&j) = targets.get(folder.as_ref())
            && !matches!(changes[j], Change::Delete { .. })
        {
            return Err(conflict(
                &folder,
                format!(
                    "it would be both a file ({}) and a folder ({}); send one of them",
                    describe(changes, j),
                    describe(changes, i)
                ),
            ));
        }
        let deleted = targets
            .get(folder.as_ref())
            .is_some_and(|&j| matches!(changes[j], Change::Delete { .. }));
        let on_disk = ws.resolve_entry(&folder, deleted, unlinked)?.1;
        if on_disk.symlink_metadata().is_ok() && !on_disk.is_dir() && !deleted {
            return Err(conflict(
                &folder,
                format!(
                    "it is a file, so {} cannot put a file inside it",
                    describe(changes, i)
                ),
            ));
        }
        dir = d.parent();
    }
    Ok(())
}
