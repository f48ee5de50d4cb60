//! `.mend/` is mend's own, or it is not used.
//!
//! A repository can ship a `.mend` folder, a `.mend` symbolic link pointing
//! anywhere, or a `.mend` that git tracks. mend keeps its lock, journal,
//! snapshots and shadow repository in `.mend` only when it is a real folder
//! carrying mend's owner mark, a tag signed with this workspace's key (see
//! `trust`). A real, untracked folder without the mark (one made by an
//! earlier mend, say) is adopted when nothing in it is a link or a special
//! file; a journal in it still has to verify on its own before it is acted
//! on.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::files;
use crate::trust::Key;

const OWNER: &str = "owner";
const OWNER_PURPOSE: &str = "owner";

fn untrusted(what: impl Into<String>, fix: impl Into<String>) -> Error {
    Error::Untrusted {
        what: what.into(),
        fix: fix.into(),
    }
}

/// The verified `.mend` of `root`, or `None` when there is none and
/// `create` is false.
pub(crate) fn open(root: &Path, key: &Key, create: bool) -> Result<Option<PathBuf>, Error> {
    let dir = root.join(".mend");
    match fs::symlink_metadata(&dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if !create {
                return Ok(None);
            }
            make(&dir, key)?;
            Ok(Some(dir))
        }
        Err(e) => Err(Error::io("inspecting .mend", e)),
        Ok(m) if m.file_type().is_symlink() => {
            let to = fs::read_link(&dir)
                .map(|t| mend_core::text::escape_controls(&t.to_string_lossy()).into_owned())
                .unwrap_or_else(|_| "somewhere".into());
            Err(untrusted(
                format!("is a symbolic link (to {to}), not a folder mend made"),
                "Remove the link (`rm .mend`, which leaves its target alone); mend then makes its own folder.",
            ))
        }
        Ok(m) if !m.is_dir() => Err(untrusted(
            format!(
                "is {}, not a folder mend made",
                files::kind(&m).unwrap_or("a file")
            ),
            "Move it away or delete it (`rm .mend`); mend then makes its own folder.",
        )),
        Ok(_) if owned(&dir, key) => Ok(Some(dir)),
        Ok(_) => {
            adopt(root, &dir, key)?;
            Ok(Some(dir))
        }
    }
}

fn owned(dir: &Path, key: &Key) -> bool {
    files::read_regular(&dir.join(OWNER), 256, true)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .is_some_and(|tag| key.verify(OWNER_PURPOSE, b"", &tag))
}

fn make(dir: &Path, key: &Key) -> Result<(), Error> {
    match fs::create_dir(dir) {
        Ok(()) => {}
        // Another process made it first: check it as any existing folder.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(Error::io("creating .mend", e)),
    }
    let m = fs::symlink_metadata(dir).map_err(|e| Error::io("inspecting .mend", e))?;
    if !m.is_dir() {
        return Err(untrusted(
            "appeared as something other than a folder while mend was creating it",
            "Remove it and try again.",
        ));
    }
    mark(dir, key)
}

/// Writes `.gitignore` (so the folder stays out of version control) and the
/// owner mark.
fn mark(dir: &Path, key: &Key) -> Result<(), Error> {
    files::write_own(&dir.join(".gitignore"), b"*\n")?;
    files::write_own(&dir.join(OWNER), key.sign(OWNER_PURPOSE, b"").as_bytes())
}

/// Takes over a real `.mend` that lacks a valid mark, unless git tracks it
/// (then it came with the repository) or it holds links or special files.
fn adopt(root: &Path, dir: &Path, key: &Key) -> Result<(), Error> {
    if let Some(n) = tracked_entries(root) {
        return Err(untrusted(
            format!("is tracked by git ({n} files), so it came with the repository"),
            "Stop tracking it and delete it: `git rm -r --cached .mend && rm -rf .mend`, then commit. mend then makes its own, ignored folder.",
        ));
    }
    if let Some(bad) = first_unsafe_entry(dir, 0) {
        return Err(untrusted(
            format!("holds {bad}, which mend never makes"),
            "Delete the folder (`rm -rf .mend`; its checkpoints and snapshots are lost) and mend makes a new one.",
        ));
    }
    mark(dir, key)
}

/// How many files under `.mend/` git's index holds for the repository
/// containing `root`, when any.
fn tracked_entries(root: &Path) -> Option<usize> {
    let repo = git2::Repository::discover(root).ok()?;
    let workdir = repo.workdir()?.canonicalize().ok()?;
    let below = root.strip_prefix(&workdir).ok()?;
    let mut prefix = below.to_string_lossy().replace('\\', "/");
    if !prefix.is_empty() {
        prefix.push('/');
    }
    prefix.push_str(".mend/");
    let index = repo.index().ok()?;
    let n = index
        .iter()
        .filter(|e| e.path.starts_with(prefix.as_bytes()))
        .count();
    (n > 0).then_some(n)
}

/// The first symbolic link or special file under `dir`, described.
fn first_unsafe_entry(dir: &Path, depth: usize) -> Option<String> {
    if depth > 32 {
        return Some("folders nested too deep".into());
    }
    for entry in fs::read_dir(dir).ok()?.flatten() {
        let Ok(meta) = entry.metadata() else { continue };
        let show =
            || mend_core::text::escape_controls(&entry.path().to_string_lossy()).into_owned();
        if meta.is_dir() {
            if let Some(bad) = first_unsafe_entry(&entry.path(), depth + 1) {
                return Some(bad);
            }
        } else if let Some(k) = files::kind(&meta) {
            return Some(format!("{}, {k}", show()));
        }
    }
    None
}
