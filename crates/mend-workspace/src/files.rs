//! Regular files only: what mend opens is checked for its kind before and
//! after opening, opened without blocking and without following a final
//! symbolic link where that matters, and read with a bound.
//!
//! A FIFO would block a read forever (with the workspace lock held), a
//! character device would be read until memory runs out, and a socket or a
//! directory is not something an edit can mean, so each is refused by name.

use std::fs;
use std::io::Read as _;
use std::path::Path;

/// A name part no other writer, in this process or another, uses at the
/// same time: for files written aside and renamed into place.
pub(crate) fn unique() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!(
        "{:x}-{:x}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// The kind of a non-regular file, as a reader would name it.
pub(crate) fn kind(meta: &fs::Metadata) -> Option<&'static str> {
    use std::os::unix::fs::MetadataExt;
    let t = rustix::fs::FileType::from_raw_mode(meta.mode());
    (t != rustix::fs::FileType::RegularFile).then(|| describe(t))
}

/// A file type as a reader would name it.
pub(crate) fn describe(t: rustix::fs::FileType) -> &'static str {
    use rustix::fs::FileType;
    match t {
        FileType::RegularFile => "a regular file",
        FileType::Directory => "a directory",
        FileType::Symlink => "a symbolic link",
        FileType::Fifo => "a FIFO (named pipe)",
        FileType::Socket => "a socket",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        FileType::Unknown => "not a regular file",
    }
}

/// Opening flags: never block on a FIFO or device, and optionally refuse a
/// symbolic link as the last component.
#[cfg(unix)]
fn flags(opts: &mut fs::OpenOptions, nofollow: bool) {
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = libc::O_NONBLOCK | libc::O_CLOEXEC;
    if nofollow {
        f |= libc::O_NOFOLLOW;
    }
    opts.custom_flags(f);
}

#[cfg(not(unix))]
fn flags(_opts: &mut fs::OpenOptions, _nofollow: bool) {}

/// Why a read did not return bytes.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// Nothing is there.
    Missing,
    /// Something is there, but not a regular file.
    Kind(&'static str),
    /// Larger than the limit (the size seen).
    TooLarge(u64),
    /// The filesystem failed.
    Io(std::io::Error),
}

impl ReadError {
    /// As an I/O error, for a caller that expected a regular file.
    pub(crate) fn into_io(self) -> std::io::Error {
        match self {
            ReadError::Io(e) => e,
            ReadError::Missing => std::io::ErrorKind::NotFound.into(),
            ReadError::Kind(kind) => std::io::Error::other(format!("it is {kind}")),
            ReadError::TooLarge(n) => std::io::Error::other(format!("it is {n} bytes")),
        }
    }
}

/// Reads a regular file of at most `limit` bytes. With `nofollow`, a
/// symbolic link as the last component is refused rather than followed.
pub(crate) fn read_regular(path: &Path, limit: u64, nofollow: bool) -> Result<Vec<u8>, ReadError> {
    let meta = if nofollow {
        fs::symlink_metadata(path)
    } else {
        fs::metadata(path)
    };
    let meta = match meta {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(ReadError::Missing),
        Err(e) => return Err(ReadError::Io(e)),
    };
    if let Some(k) = kind(&meta) {
        return Err(ReadError::Kind(k));
    }
    if meta.len() > limit {
        return Err(ReadError::TooLarge(meta.len()));
    }
    let mut opts = fs::OpenOptions::new();
    opts.read(true);
    flags(&mut opts, nofollow);
    let file = match opts.open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(ReadError::Missing),
        Err(e) => return Err(ReadError::Io(e)),
    };
    // The path may have been swapped between the check and the open.
    let meta = file.metadata().map_err(ReadError::Io)?;
    if let Some(k) = kind(&meta) {
        return Err(ReadError::Kind(k));
    }
    let mut bytes = Vec::with_capacity(meta.len().min(limit) as usize);
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge(bytes.len() as u64));
    }
    Ok(bytes)
}

/// The hash of a regular file's bytes, read in pieces, without
/// following a final symbolic link or blocking; `None` when what stands
/// there is not a regular file.
pub(crate) fn hash_regular(path: &Path) -> std::io::Result<Option<crate::ContentHash>> {
    let mut opts = fs::OpenOptions::new();
    opts.read(true);
    flags(&mut opts, true);
    let file = match opts.open(path) {
        Ok(f) => f,
        // O_NOFOLLOW refuses a link with ELOOP.
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Ok(None),
        Err(e) => return Err(e),
    };
    if !file.metadata()?.is_file() {
        return Ok(None);
    }
    hash_file(file).map(Some)
}

/// The hash of an open file's bytes from where it stands, read in pieces.
pub(crate) fn hash_file(mut file: fs::File) -> std::io::Result<crate::ContentHash> {
    use sha2::Digest as _;
    let mut digest = sha2::Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        digest.update(&buf[..n]);
    }
    Ok(crate::ContentHash::from_digest(digest.finalize().into()))
}

/// Opens an existing regular file for writing in place, never through a
/// final symbolic link and never blocking.
pub(crate) fn open_for_overwrite(path: &Path) -> std::io::Result<fs::File> {
    let mut opts = fs::OpenOptions::new();
    opts.write(true);
    flags(&mut opts, true);
    let f = opts.open(path)?;
    let meta = f.metadata()?;
    if let Some(k) = kind(&meta) {
        return Err(std::io::Error::other(format!("is {k}")));
    }
    f.set_len(0)?;
    Ok(f)
}

/// Creates a new file; fails if anything, a symbolic link included, is
/// already at `path`. (On Unix a commit creates its files in a folder it
/// holds open instead.)
#[cfg(not(unix))]
pub(crate) fn create_new(path: &Path) -> std::io::Result<fs::File> {
    let mut opts = fs::OpenOptions::new();
    opts.write(true).create_new(true);
    flags(&mut opts, true);
    opts.open(path)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn special_files_are_named_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("p.txt");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            assert!(matches!(
                read_regular(&fifo, 100, false),
                Err(ReadError::Kind("a FIFO (named pipe)"))
            ));
        }
        assert!(matches!(
            read_regular(Path::new("/dev/zero"), 100, false),
            Err(ReadError::Kind("a character device"))
        ));
        assert!(matches!(
            read_regular(dir.path(), 100, false),
            Err(ReadError::Kind("a directory"))
        ));
        let big = dir.path().join("big");
        fs::write(&big, [b'x'; 10]).unwrap();
        assert!(matches!(
            read_regular(&big, 9, false),
            Err(ReadError::TooLarge(10))
        ));
        assert_eq!(read_regular(&big, 10, false).unwrap().len(), 10);
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&big, &link).unwrap();
        assert!(read_regular(&link, 10, false).is_ok());
        assert!(matches!(
            read_regular(&link, 10, true),
            Err(ReadError::Kind("a symbolic link"))
        ));
    }
}
