//! A change set is valid as a whole before anything is written, and a dry
//! run checks it the same way: two changes that end at one path, a move
//! onto a file that exists, a path that would be both a file and a folder,
//! and a file over the size limit are refused up front, naming what collides, instead of failing
//! half-way through a commit or passing as a clean dry run.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::Error;
use crate::{Base, Change, Workspace};

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

fn path_of(c: &Change) -> &str {
    match c {
        Change::Write { path, .. } | Change::Bytes { path, .. } | Change::Delete { path, .. } => {
            path
        }
    }
}

fn conflict(path: &str, detail: String) -> Error {
    Error::Conflict {
        path: path.to_owned(),
        detail,
    }
}

pub(crate) fn validate(ws: &Workspace, changes: &[Change]) -> Result<(), Error> {
    // Each change's target as spelled on disk, so two spellings of one
    // file collide.
    let mut targets: BTreeMap<String, usize> = BTreeMap::new();
    for (i, c) in changes.iter().enumerate() {
        let rel = ws.normalize(path_of(c))?;
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
    for (rel, &i) in &targets {
        let size = match &changes[i] {
            Change::Delete { .. } => continue,
            Change::Write { text, encoding, .. } => match encoding {
                crate::Encoding::Utf8 => text.len() as u64,
                _ => 2 * text.encode_utf16().count() as u64,
            },
            Change::Bytes { bytes, .. } => bytes.len() as u64,
        };
        let limit = ws.options().max_bytes;
        if size > limit {
            return Err(Error::WouldBeTooLarge {
                path: rel.clone(),
                size,
                limit,
            });
        }
        if let Change::Write {
            base: Base::Absent,
            mode_from: Some(src),
            ..
        } = &changes[i]
            && ws.resolve(rel)?.symlink_metadata().is_ok()
        {
            return Err(conflict(
                rel,
                format!(
                    "it already exists, so moving {src} there would overwrite it; delete it in the same change, or choose another name"
                ),
            ));
        }
        check_folders(ws, &targets, changes, rel, i)?;
    }
    Ok(())
}

/// No folder a written file needs is itself a file, now or after the set.
fn check_folders(
    ws: &Workspace,
    targets: &BTreeMap<String, usize>,
    changes: &[Change],
    rel: &str,
    i: usize,
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
        let on_disk = ws.resolve(&folder)?;
        if on_disk.symlink_metadata().is_ok() && !on_disk.is_dir() {
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
