//! Confinement: every model-supplied path resolves inside the root.

use std::path::{Component, Path, PathBuf};

use crate::error::Error;

fn refuse(raw: &str, reason: impl Into<String>) -> Error {
    Error::PathRefused {
        path: raw.to_owned(),
        reason: reason.into(),
    }
}

/// Lexically normalizes a relative path (`a/./b/../c` → `a/c`), refusing
/// every form that could leave the root or touch `.git/`.
pub(crate) fn normalize(root: &Path, raw: &str) -> Result<Vec<String>, Error> {
    if raw.is_empty() {
        return Err(refuse(raw, "the path is empty"));
    }
    if raw.contains('\0') {
        return Err(refuse(raw, "the path contains a NUL byte"));
    }
    let b = raw.as_bytes();
    if raw.starts_with("\\\\")
        || raw.starts_with("//")
        || (b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':')
    {
        return Err(refuse(
            raw,
            "a Windows drive or network path; paths must be relative to the project root",
        ));
    }
    if raw.contains('\\') {
        return Err(refuse(
            raw,
            "backslashes are not path separators here; use `/`",
        ));
    }
    let rel = Path::new(raw);
    let rel: PathBuf = if rel.is_absolute() {
        match rel.strip_prefix(root) {
            Ok(inside) => inside.to_path_buf(),
            Err(_) => return Err(refuse(raw, "an absolute path outside the project root")),
        }
    } else {
        rel.to_path_buf()
    };
    let mut parts: Vec<String> = Vec::new();
    for c in rel.components() {
        match c {
            Component::CurDir => {}
            Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
            Component::ParentDir => {
                if parts.pop().is_none() {
                    return Err(refuse(raw, "leads outside the project root"));
                }
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(refuse(raw, "is not a relative path"));
            }
        }
    }
    if parts.is_empty() {
        return Err(refuse(raw, "names the project root, not a file"));
    }
    if parts[0] == ".git" {
        return Err(refuse(raw, "is inside .git, which mend never edits"));
    }
    if parts[0] == ".mend" {
        return Err(refuse(raw, "is inside .mend, mend's own bookkeeping"));
    }
    Ok(parts)
}

/// Resolves `raw` under `root` (canonical), following symlinks only while
/// they stay inside the root.
pub(crate) fn resolve(root: &Path, raw: &str) -> Result<PathBuf, Error> {
    let parts = normalize(root, raw)?;
    let mut path = root.to_path_buf();
    for p in &parts {
        path.push(p);
    }
    check_real(root, raw, &path)?;
    Ok(path)
}

/// The deepest existing ancestor of `path` (or `path` itself) must resolve
/// inside the root and outside `.git`, so no symlink at any component leads
/// out. Called again at commit time, so a symlink swapped in after planning
/// is caught.
pub(crate) fn check_real(root: &Path, raw: &str, path: &Path) -> Result<(), Error> {
    let mut probe = path.to_path_buf();
    loop {
        if probe.symlink_metadata().is_ok() {
            let real = probe
                .canonicalize()
                .map_err(|e| refuse(raw, format!("cannot resolve {}: {e}", probe.display())))?;
            if !real.starts_with(root) {
                return Err(refuse(
                    raw,
                    "goes through a symbolic link that points outside the project root",
                ));
            }
            if real.starts_with(root.join(".git")) {
                return Err(refuse(raw, "resolves into .git"));
            }
            return Ok(());
        }
        if !probe.pop() {
            return Ok(());
        }
    }
}
