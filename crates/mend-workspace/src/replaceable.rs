//! Whether a commit can replace or delete a target, asked before anything
//! is written: a rename over an immutable file, a deletion in a read-only
//! folder or a name over the filesystem's limit would otherwise fail after
//! the commit point, with some files written and others not.

use std::path::{Component, Path};

use crate::error::Error;

/// The longest name most filesystems take, in bytes (`NAME_MAX`).
const NAME_MAX: usize = 255;

fn refuse(rel: &str, reason: String) -> Error {
    Error::Unreplaceable {
        path: rel.to_owned(),
        reason,
    }
}

/// Refuses a target that cannot be replaced or deleted: a name (or a new
/// folder's name) too long, an immutable or append-only file, or a nearest
/// existing folder that is immutable or not writable.
pub(crate) fn check(root: &Path, path: &Path, rel: &str) -> Result<(), Error> {
    let inside = path.strip_prefix(root).unwrap_or(path);
    for c in inside.components() {
        if let Component::Normal(name) = c
            && name.len() > NAME_MAX
        {
            return Err(refuse(
                rel,
                format!(
                    "a name in it is {} bytes, over the {NAME_MAX}-byte limit of most filesystems; choose a shorter name",
                    name.len()
                ),
            ));
        }
    }
    if path.symlink_metadata().is_ok()
        && let Some(flag) = frozen(path)
    {
        return Err(refuse(
            rel,
            format!(
                "it is {flag}, so it can be neither replaced nor deleted; clear the flag with `chattr -i -a` first, or leave this file out"
            ),
        ));
    }
    let mut dir = path.parent().unwrap_or(root);
    // The nearest folder that exists: a new folder is made in it, and a
    // file the commit replaces with a folder is deleted from it.
    while dir != root && !std::fs::metadata(dir).is_ok_and(|m| m.is_dir()) {
        dir = dir.parent().unwrap_or(root);
    }
    let shown = dir
        .strip_prefix(root)
        .ok()
        .filter(|d| !d.as_os_str().is_empty())
        .map_or_else(
            || "the project root".to_owned(),
            |d| d.display().to_string(),
        );
    if let Some(flag) = frozen(dir) {
        return Err(refuse(
            rel,
            format!(
                "its folder {shown} is {flag}, so nothing in it can be added, replaced or deleted"
            ),
        ));
    }
    if !writable(dir) {
        return Err(refuse(
            rel,
            format!("its folder {shown} is not writable; check its permissions"),
        ));
    }
    Ok(())
}

/// "immutable" or "append-only" when the inode carries that flag.
#[cfg(target_os = "linux")]
fn frozen(path: &Path) -> Option<&'static str> {
    use rustix::fs::{AtFlags, CWD, StatxAttributes, StatxFlags, statx};
    let st = statx(
        CWD,
        path,
        AtFlags::SYMLINK_NOFOLLOW,
        StatxFlags::BASIC_STATS,
    )
    .ok()?;
    let known = st.stx_attributes_mask;
    let set = st.stx_attributes;
    if known.contains(StatxAttributes::IMMUTABLE) && set.contains(StatxAttributes::IMMUTABLE) {
        Some("immutable")
    } else if known.contains(StatxAttributes::APPEND) && set.contains(StatxAttributes::APPEND) {
        Some("append-only")
    } else {
        None
    }
}

#[cfg(not(target_os = "linux"))]
fn frozen(_path: &Path) -> Option<&'static str> {
    None
}

#[cfg(unix)]
fn writable(dir: &Path) -> bool {
    use rustix::fs::{Access, access};
    access(dir, Access::WRITE_OK | Access::EXEC_OK).is_ok()
}

#[cfg(not(unix))]
fn writable(dir: &Path) -> bool {
    std::fs::metadata(dir).is_ok_and(|m| !m.permissions().readonly())
}
