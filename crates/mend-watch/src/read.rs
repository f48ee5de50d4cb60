//! Reading a watched file safely: beneath the root, regular files only,
//! never blocking, with a bound.
//!
//! A watched path can become anything between two events: a link leading
//! out of the root, a FIFO (whose `open` or `read` would block the watcher
//! forever), `/dev/zero` (read until memory runs out), a folder. The file is
//! opened relative to a descriptor of the root with `openat2` and
//! `RESOLVE_BENEATH`, so no link leads outside; without blocking; and its
//! kind and size are checked on the open descriptor before a byte is read.

use std::fs::File;
use std::io::Read as _;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path};
use std::time::SystemTime;

use rustix::fs::{FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

/// What a read found.
#[derive(Debug)]
pub(crate) enum Read {
    /// A regular file's bytes, with its size and modification time when
    /// opened.
    Bytes(Vec<u8>, Stamp),
    /// Nothing there.
    Missing,
    /// Something that is not a regular file: its kind.
    NotAFile(&'static str),
    /// A link leading outside the root, or into `.git` or `.mend`.
    Outside,
    /// Not readable by this process (its permissions).
    Denied,
    /// Larger than the limit: its size.
    TooLarge(u64),
    /// The filesystem failed; treated like a missing file.
    Failed,
}

/// A file's size and modification time, to tell whether it changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    pub len: u64,
    pub modified: Option<SystemTime>,
}

/// A folder's identity: its device and inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Identity {
    dev: u64,
    ino: u64,
}

impl Identity {
    fn of(st: &rustix::fs::Stat) -> Identity {
        Identity {
            dev: st.st_dev,
            ino: st.st_ino,
        }
    }

    /// The folder at `path` now (links followed); `None` when there is
    /// none.
    pub(crate) fn of_folder(path: &Path) -> Option<Identity> {
        let st = rustix::fs::stat(path).ok()?;
        (FileType::from_raw_mode(st.st_mode) == FileType::Directory).then(|| Identity::of(&st))
    }
}

/// The root, held open so every read resolves beneath it.
pub(crate) struct Root {
    fd: OwnedFd,
    path: std::path::PathBuf,
}

impl Root {
    pub(crate) fn open(path: &Path) -> std::io::Result<Root> {
        let fd = rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(Root {
            fd,
            path: path.to_path_buf(),
        })
    }

    /// The folder held open.
    pub(crate) fn identity(&self) -> Option<Identity> {
        rustix::fs::fstat(&self.fd).ok().map(|st| Identity::of(&st))
    }

    /// Reads `rel` (relative to the root), at most `max` bytes.
    pub(crate) fn read(&self, rel: &Path, max: u64) -> Read {
        let fd = match self.open_beneath(rel) {
            Ok(fd) => fd,
            Err(r) => return r,
        };
        let Ok(st) = rustix::fs::fstat(&fd) else {
            return Read::Failed;
        };
        let kind = FileType::from_raw_mode(st.st_mode);
        if kind != FileType::RegularFile {
            return Read::NotAFile(name(kind));
        }
        if self.private(&fd) {
            return Read::Outside;
        }
        let len = u64::try_from(st.st_size).unwrap_or(0);
        if len > max {
            return Read::TooLarge(len);
        }
        let stamp = Stamp {
            len,
            modified: modified(&st),
        };
        let mut bytes = Vec::new();
        if File::from(fd)
            .take(max + 1)
            .read_to_end(&mut bytes)
            .is_err()
        {
            return Read::Failed;
        }
        if bytes.len() as u64 > max {
            return Read::TooLarge(bytes.len() as u64);
        }
        Read::Bytes(bytes, stamp)
    }

    fn open_beneath(&self, rel: &Path) -> Result<OwnedFd, Read> {
        let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
        let how = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
        match self.open_as(rel, flags, how) {
            // A socket (or a device without its driver) cannot be opened
            // for reading at all; it is there all the same, so its kind
            // is told from a descriptor that only names it.
            Err(Read::Failed) => match self.open_as(rel, OFlags::PATH | OFlags::CLOEXEC, how) {
                Ok(fd) => {
                    match rustix::fs::fstat(&fd).map(|st| FileType::from_raw_mode(st.st_mode)) {
                        Ok(FileType::RegularFile) | Err(_) => Err(Read::Failed),
                        Ok(kind) => Err(Read::NotAFile(name(kind))),
                    }
                }
                Err(r) => Err(r),
            },
            other => other,
        }
    }

    fn open_as(&self, rel: &Path, flags: OFlags, how: ResolveFlags) -> Result<OwnedFd, Read> {
        match self.openat2(rel, flags, how) {
            // An absolute link counts as leaving the root for openat2 even
            // when it points back inside: resolve it, and open the result
            // without following any link.
            Err(Errno::XDEV) => {
                let real = self
                    .path
                    .join(rel)
                    .canonicalize()
                    .map_err(|_| Read::Outside)?;
                let inside = real.strip_prefix(&self.path).map_err(|_| Read::Outside)?;
                self.openat2(inside, flags, how | ResolveFlags::NO_SYMLINKS)
                    .map_err(refusal)
            }
            Err(Errno::NOSYS | Errno::PERM) => self.open_checked(rel, flags),
            other => other.map_err(refusal),
        }
    }

    fn openat2(&self, rel: &Path, flags: OFlags, how: ResolveFlags) -> Result<OwnedFd, Errno> {
        // openat2 fails with EAGAIN when a rename raced the resolution.
        let mut last = Errno::AGAIN;
        for _ in 0..8 {
            match rustix::fs::openat2(&self.fd, rel, flags, Mode::empty(), how) {
                Err(e @ (Errno::AGAIN | Errno::INTR)) => last = e,
                done => return done,
            }
        }
        Err(last)
    }

    /// Without openat2 (kernels before 5.6, some sandboxes): resolve the
    /// path, check it is under the root, and open what was checked.
    fn open_checked(&self, rel: &Path, flags: OFlags) -> Result<OwnedFd, Read> {
        let real = match self.path.join(rel).canonicalize() {
            Ok(p) => p,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Read::Missing),
            Err(_) => return Err(Read::Failed),
        };
        if !real.starts_with(&self.path) {
            return Err(Read::Outside);
        }
        rustix::fs::open(&real, flags | OFlags::NOFOLLOW, Mode::empty()).map_err(refusal)
    }

    /// Whether the open file is inside a `.git` or `.mend` (reached through
    /// a link inside the root), as the kernel names it.
    fn private(&self, fd: &impl AsFd) -> bool {
        let link = format!(
            "/proc/self/fd/{}",
            std::os::fd::AsRawFd::as_raw_fd(&fd.as_fd())
        );
        let Ok(real) = std::fs::read_link(link) else {
            return false;
        };
        let Ok(rest) = real.strip_prefix(&self.path) else {
            return true;
        };
        rest.components()
            .any(|c| matches!(c, Component::Normal(n) if n == ".git" || n == ".mend"))
    }
}

fn modified(st: &rustix::fs::Stat) -> Option<SystemTime> {
    let secs = u64::try_from(st.st_mtime).ok()?;
    let nanos = u32::try_from(st.st_mtime_nsec).ok()?;
    SystemTime::UNIX_EPOCH.checked_add(std::time::Duration::new(secs, nanos))
}

fn refusal(e: Errno) -> Read {
    match e {
        Errno::NOENT | Errno::NOTDIR => Read::Missing,
        Errno::XDEV => Read::Outside,
        Errno::LOOP => Read::NotAFile("a link that cannot be followed"),
        Errno::ISDIR => Read::NotAFile("a directory"),
        Errno::ACCESS | Errno::PERM => Read::Denied,
        _ => Read::Failed,
    }
}

fn name(kind: FileType) -> &'static str {
    match kind {
        FileType::Directory => "a directory",
        FileType::Fifo => "a FIFO (named pipe)",
        FileType::Socket => "a socket",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        FileType::Symlink => "a symbolic link",
        _ => "not a regular file",
    }
}
