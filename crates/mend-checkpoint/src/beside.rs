//! The writes a restore makes beside its workspace transaction: files whose
//! paths a workspace change cannot name. A workspace change names its path
//! in UTF-8 text, without control characters or backslashes (the rules of
//! the paths a model sends), and reaches it by its whole path, which the
//! kernel refuses past `PATH_MAX`. A checkpoint holds such files all the
//! same (the snapshot walks folders by descriptor), so a restore or a
//! turn's reject puts them back here.
//!
//! Each path is reached from the root one folder at a time, by descriptor,
//! never through a link (`O_NOFOLLOW` on every folder), so no path is ever
//! resolved whole. Before each write or deletion, what stands at the path
//! is compared with what the plan was made against (the safety
//! checkpoint's content, or nothing): anything else (a person's save, a
//! file no checkpoint holds) is left as it is and named, with why. Then a
//! write goes to a new file beside the target, synced, and renamed over it;
//! a deletion unlinks it; the folder is synced.
//!
//! These writes come after the workspace transaction, under the same lock:
//! they are not part of its all-or-nothing commit, and the window between
//! the comparison and the rename is as small as the workspace's own.

use std::io::{Read as _, Write as _};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;

use git2::{ObjectType, Oid};
use rustix::fs::{AtFlags, FileType, Mode, OFlags, mkdirat, openat, readlinkat, renameat, statat};
use rustix::io::Errno;

/// One write or deletion beside the transaction.
pub(crate) enum Op {
    /// `bytes` at `path` (a link's target when `link`), replacing what
    /// the plan saw there: `expect`, the blob it was, or nothing.
    Put {
        path: Vec<u8>,
        bytes: Vec<u8>,
        link: bool,
        executable: bool,
        expect: Option<Oid>,
    },
    /// Removes `path`, which the plan saw as the blob `expect`.
    Delete { path: Vec<u8>, expect: Oid },
}

/// What stands at a path.
#[derive(PartialEq, Eq)]
enum Found {
    Absent,
    /// A file or link, by its blob id.
    Blob(Oid),
    /// A FIFO, socket or device: no bytes of its own.
    Special,
    Folder,
}

const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// Does `op` under `root`; why not, for a path left as it is.
pub(crate) fn apply(root: &Path, op: &Op) -> Result<(), String> {
    let path = match op {
        Op::Put { path, .. } | Op::Delete { path, .. } => path,
    };
    let (folders, name) = match path.iter().rposition(|b| *b == b'/') {
        Some(i) => (&path[..i], &path[i + 1..]),
        None => (&[][..], &path[..]),
    };
    if let Some(why) = refused(path) {
        return Err(why);
    }
    let dir = folder(root, folders, matches!(op, Op::Put { .. }))?;
    let name = std::ffi::OsStr::from_bytes(name);
    let found = found(&dir, name).map_err(|e| format!("it could not be read ({e})"))?;
    match op {
        Op::Put {
            bytes,
            link,
            executable,
            expect,
            ..
        } => {
            let same = match expect {
                Some(o) => found == Found::Blob(*o),
                None => matches!(found, Found::Absent | Found::Special),
            };
            if !same {
                return Err(changed(&found));
            }
            put(&dir, name, bytes, *link, *executable)
                .map_err(|e| format!("it could not be written ({e})"))
        }
        Op::Delete { expect, .. } => {
            if found != Found::Blob(*expect) {
                return Err(changed(&found));
            }
            rustix::fs::unlinkat(&dir, name, AtFlags::empty())
                .and_then(|()| rustix::fs::fsync(&dir))
                .map_err(|e| format!("it could not be deleted ({e})"))
        }
    }
}

/// Why a path is never written: a name that is empty, `.` or `..`, or a
/// folder of git's or mend's under any spelling the workspace refuses.
fn refused(path: &[u8]) -> Option<String> {
    for name in path.split(|b| *b == b'/') {
        if name.is_empty() || name == b"." || name == b".." {
            return Some("its path has an empty, `.` or `..` name".to_owned());
        }
        if mend_workspace::reserved(&String::from_utf8_lossy(name)).is_some() {
            return Some("it is inside .git or .mend, which mend never writes".to_owned());
        }
    }
    None
}

fn changed(found: &Found) -> String {
    let what = match found {
        Found::Absent => "nothing is there now",
        Found::Folder => "a folder stands there now",
        Found::Special => "a FIFO, socket or device stands there now",
        Found::Blob(_) => "its content now is not what the plan was made against",
    };
    format!(
        "{what} (it changed while mend was writing, or its content is in no checkpoint); it was left as it is, move it aside and try again"
    )
}

/// The folder `folders` (a `/`-separated path, empty for the root),
/// opened one name at a time without following a link; with `make`,
/// missing folders are made.
fn folder(root: &Path, folders: &[u8], make: bool) -> Result<OwnedFd, String> {
    let mut dir = rustix::fs::open(root, DIR_FLAGS, Mode::empty())
        .map_err(|e| format!("the root could not be opened ({e})"))?;
    if folders.is_empty() {
        return Ok(dir);
    }
    for name in folders.split(|b| *b == b'/') {
        let os = std::ffi::OsStr::from_bytes(name);
        let next = match openat(&dir, os, DIR_FLAGS, Mode::empty()) {
            Err(Errno::NOENT) if make => mkdirat(&dir, os, Mode::from_bits_truncate(0o777))
                .and_then(|()| openat(&dir, os, DIR_FLAGS, Mode::empty())),
            other => other,
        };
        dir = next.map_err(|e| match e {
            Errno::LOOP | Errno::NOTDIR => {
                "a folder on its way is a link or a file now; it was left as it is".to_owned()
            }
            e => format!("a folder on its way could not be opened ({e})"),
        })?;
    }
    Ok(dir)
}

/// What stands at `path` (bytes, `/`-separated, under `root`), not
/// followed if it is a link, reached one folder at a time: a path past
/// `PATH_MAX` too. `None` when nothing is there or a folder on its way is
/// not one.
pub(crate) fn lstat(root: &Path, path: &[u8]) -> Option<rustix::fs::Stat> {
    let (folders, name) = match path.iter().rposition(|b| *b == b'/') {
        Some(i) => (&path[..i], &path[i + 1..]),
        None => (&[][..], path),
    };
    let dir = folder(root, folders, false).ok()?;
    statat(
        &dir,
        std::ffi::OsStr::from_bytes(name),
        AtFlags::SYMLINK_NOFOLLOW,
    )
    .ok()
}

/// What stands at `name` in `dir`, a file's or link's bytes hashed; a
/// FIFO is never opened.
fn found(dir: &OwnedFd, name: &std::ffi::OsStr) -> std::io::Result<Found> {
    let st = match statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => st,
        Err(Errno::NOENT) => return Ok(Found::Absent),
        Err(e) => return Err(e.into()),
    };
    let bytes = match FileType::from_raw_mode(st.st_mode) {
        FileType::Directory => return Ok(Found::Folder),
        FileType::Symlink => readlinkat(dir, name, Vec::new())?.into_bytes(),
        FileType::RegularFile => {
            let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
            let mut data = Vec::new();
            std::fs::File::from(openat(dir, name, flags, Mode::empty())?).read_to_end(&mut data)?;
            data
        }
        _ => return Ok(Found::Special),
    };
    let oid = Oid::hash_object(ObjectType::Blob, &bytes).map_err(std::io::Error::other)?;
    Ok(Found::Blob(oid))
}

/// Writes `bytes` beside `name`, syncs it, and renames it over `name`.
fn put(
    dir: &OwnedFd,
    name: &std::ffi::OsStr,
    bytes: &[u8],
    link: bool,
    executable: bool,
) -> std::io::Result<()> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let temp = format!(
        ".mend-beside-{:x}-{:x}.tmp",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let made = if link {
        rustix::fs::symlinkat(std::ffi::OsStr::from_bytes(bytes), dir, temp.as_str())
            .map_err(std::io::Error::from)
    } else {
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let mode = Mode::from_bits_truncate(if executable { 0o777 } else { 0o666 });
        openat(dir, temp.as_str(), flags, mode)
            .map_err(std::io::Error::from)
            .and_then(|fd| {
                let mut f = std::fs::File::from(fd);
                f.write_all(bytes)?;
                f.sync_all()
            })
    };
    let moved =
        made.and_then(|()| renameat(dir, temp.as_str(), dir, name).map_err(std::io::Error::from));
    if moved.is_err() {
        let _ = rustix::fs::unlinkat(dir, temp.as_str(), AtFlags::empty());
    }
    moved?;
    rustix::fs::fsync(dir.as_fd()).map_err(std::io::Error::from)
}
