//! mend's own folders, held open.
//!
//! Everything mend keeps in `.mend/` (its lock, journal, staged writes,
//! copies set aside, remembered contents, pending sessions, the shadow
//! repository's bookkeeping) is reached relative to the descriptor of a
//! folder that was checked when it was opened: never by a path resolved
//! again later, and never through a symbolic link at any component. On
//! Linux a folder below it is opened with `openat2` and
//! `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`; where that call does not exist
//! (Linux before 5.6, a sandbox that filters it, other systems), one
//! component at a time with `openat(O_NOFOLLOW | O_DIRECTORY)`. The last
//! component is then acted on relative to its folder's descriptor with
//! the `*at` call that does not follow it (`O_NOFOLLOW`, `O_EXCL`,
//! `AT_SYMLINK_NOFOLLOW`, `unlinkat`, `renameat`).
//!
//! A link, or a file standing where mend keeps a folder, is refused with
//! [`Error::Tampered`], which names what to remove. A folder swapped for
//! a link after it was opened redirects nothing: the descriptor still
//! names the folder that was checked.

use std::ffi::OsString;
use std::fs::File;
use std::io::{Read as _, Write as _};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStringExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustix::fs::{AtFlags, CWD, Dir, FileType, Mode, OFlags};
use rustix::io::Errno;

use crate::error::Error;
use crate::files;
use crate::trust::Seal;

/// Flags of a folder opened to be acted in (listed, synced, used as the
/// base of `*at` calls).
const DIR: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// How deep [`PrivateDir::remove_tree`] and the checks descend.
const MAX_DEPTH: usize = 64;

/// A folder of mend's own, held open by descriptor; see the module docs.
///
/// Names below it are relative paths with `/` between components, none of
/// them empty, `.` or `..`.
#[derive(Debug, Clone)]
pub struct PrivateDir {
    fd: Arc<OwnedFd>,
    /// Where it was when opened: for messages, and for callers (git2) that
    /// can only take a path.
    path: PathBuf,
    /// How messages name it: relative to the root (`.mend/pending/s1`).
    shown: String,
    /// The seal of the `.mend` it is in, when it was reached from one.
    seal: Option<Seal>,
}

/// What an entry is, as seen without following it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A folder.
    Dir,
    /// A symbolic link.
    Link,
    /// A FIFO, socket or device.
    Other,
}

impl EntryKind {
    fn of(t: FileType) -> EntryKind {
        match t {
            FileType::RegularFile => EntryKind::File,
            FileType::Directory => EntryKind::Dir,
            FileType::Symlink => EntryKind::Link,
            _ => EntryKind::Other,
        }
    }
}

/// What an operation expects to find at its name, for naming what stands
/// in the way instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    File,
    Dir,
}

/// Opens `rel` below `dir` with `flags`, following no link at any
/// component and never leaving `dir`.
fn open_beneath(dir: BorrowedFd<'_>, rel: &str, flags: OFlags) -> rustix::io::Result<OwnedFd> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use rustix::fs::ResolveFlags;
        use std::sync::atomic::{AtomicBool, Ordering};
        static MISSING: AtomicBool = AtomicBool::new(false);
        if !MISSING.load(Ordering::Relaxed) {
            let how = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS;
            match rustix::fs::openat2(dir, rel, flags | OFlags::NOFOLLOW, Mode::empty(), how) {
                Err(Errno::NOSYS) => MISSING.store(true, Ordering::Relaxed),
                // A seccomp filter may answer EPERM; EAGAIN is a rename
                // racing the lookup. The walk is as strict, just slower.
                Err(Errno::PERM | Errno::AGAIN) => {}
                done => return done,
            }
        }
    }
    walk(dir, rel, flags)
}

/// [`open_beneath`] one component at a time: each folder opened with
/// `O_NOFOLLOW | O_DIRECTORY` relative to the one before.
fn walk(dir: BorrowedFd<'_>, rel: &str, flags: OFlags) -> rustix::io::Result<OwnedFd> {
    let (parents, last) = match rel.rsplit_once('/') {
        Some((p, l)) => (Some(p), l),
        None => (None, rel),
    };
    let mut held: Option<OwnedFd> = None;
    for c in parents.into_iter().flat_map(|p| p.split('/')) {
        let base = held.as_ref().map_or(dir, AsFd::as_fd);
        held = Some(rustix::fs::openat(base, c, DIR, Mode::empty())?);
    }
    let base = held.as_ref().map_or(dir, AsFd::as_fd);
    rustix::fs::openat(base, last, flags | OFlags::NOFOLLOW, Mode::empty())
}

/// A name as mend spells its own: components that are plain names.
fn valid(rel: &str) -> bool {
    !rel.is_empty()
        && rel
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != ".." && !c.contains('\0'))
}

/// A folder descriptor borrowed from a [`PrivateDir`] or opened below it.
enum Base<'a> {
    Borrowed(BorrowedFd<'a>),
    Owned(OwnedFd),
}

impl Base<'_> {
    fn fd(&self) -> BorrowedFd<'_> {
        match self {
            Base::Borrowed(b) => *b,
            Base::Owned(o) => o.as_fd(),
        }
    }
}

impl AsFd for PrivateDir {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

impl PrivateDir {
    /// Opens the folder at `path`, named `shown` in messages (relative to
    /// the root). `path` itself is resolved as the system does, except its
    /// last component, which must be a folder and not a link; everything
    /// below it is then reached only through the descriptor.
    pub fn open_path(path: &Path, shown: &str) -> Result<PrivateDir, Error> {
        let fd = rustix::fs::openat(CWD, path, DIR, Mode::empty()).map_err(|e| {
            Error::io(
                format!("opening {}", crate::esc(&path.to_string_lossy())),
                e.into(),
            )
        })?;
        Ok(PrivateDir {
            fd: Arc::new(fd),
            path: path.to_path_buf(),
            shown: shown.to_owned(),
            seal: None,
        })
    }

    /// Where the folder was when it was opened. Only for callers that must
    /// have a path (git2), which then resolve it again: see the module
    /// docs of `mend-checkpoint` for what that leaves open.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How messages name `rel` (relative to the root).
    pub fn shown(&self, rel: &str) -> String {
        match (self.shown.is_empty(), rel.is_empty()) {
            (true, _) => rel.to_owned(),
            (false, true) => self.shown.clone(),
            (false, false) => format!("{}/{rel}", self.shown),
        }
    }

    fn child(&self, fd: OwnedFd, rel: &str) -> PrivateDir {
        PrivateDir {
            fd: Arc::new(fd),
            path: self.path.join(rel),
            shown: self.shown(rel),
            seal: self.seal.clone(),
        }
    }

    /// The seal of the `.mend` this folder was reached from: what
    /// [`PrivateDir::write_sealed`] signs with. `None` for a folder opened
    /// by path.
    pub fn seal(&self) -> Option<&Seal> {
        self.seal.as_ref()
    }

    /// This folder, sealing with `seal` (a folder of mend's outside
    /// `.mend`, such as the one in a repository's git folder, sealed as
    /// the root's `.mend` is).
    pub fn sealed_with(mut self, seal: Seal) -> PrivateDir {
        self.seal = Some(seal);
        self
    }

    /// [`PrivateDir::write`] of `body` sealed for `purpose` (see
    /// [`Seal::wrap`]).
    pub fn write_sealed(&self, rel: &str, purpose: &str, body: &[u8]) -> Result<(), Error> {
        let seal = self.seal.as_ref().ok_or_else(|| self.unsealed(rel, None))?;
        self.write(rel, &seal.wrap(purpose, body))
    }

    /// [`PrivateDir::read`] of a file [`PrivateDir::write_sealed`] wrote for
    /// `purpose`: its body, or [`Error::Unsealed`] when its seal is not
    /// this folder's.
    pub fn read_sealed(
        &self,
        rel: &str,
        purpose: &str,
        limit: u64,
    ) -> Result<Option<Vec<u8>>, Error> {
        let seal = self.seal.as_ref().ok_or_else(|| self.unsealed(rel, None))?;
        let limit = limit.saturating_add(128);
        let Some(bytes) = self.read(rel, limit)? else {
            return Ok(None);
        };
        match seal.open(purpose, &bytes) {
            Ok(body) => Ok(Some(body.to_vec())),
            Err(why) => Err(self.unsealed(rel, Some(why))),
        }
    }

    fn unsealed(&self, rel: &str, why: Option<crate::error::Unsealed>) -> Error {
        Error::Unsealed {
            path: self.shown(rel),
            why,
        }
    }

    fn check(&self, rel: &str) -> Result<(), Error> {
        if valid(rel) {
            return Ok(());
        }
        Err(Error::io(
            format!("using {}", crate::esc(&self.shown(rel))),
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "not a plain relative name",
            ),
        ))
    }

    /// The folder holding `rel`, and `rel`'s last component.
    fn parent<'a, 'r>(&'a self, rel: &'r str) -> Result<(Base<'a>, &'r str), Error> {
        self.check(rel)?;
        match rel.rsplit_once('/') {
            None => Ok((Base::Borrowed(self.fd.as_fd()), rel)),
            Some((dir, name)) => match open_beneath(self.fd.as_fd(), dir, DIR) {
                Ok(fd) => Ok((Base::Owned(fd), name)),
                Err(e) => Err(self.fail(dir, "opening", e, Want::Dir)),
            },
        }
    }

    /// The error for a failed operation on `rel`: what stands in the way
    /// when a link or a non-folder does, else the system's error.
    fn fail(&self, rel: &str, doing: &str, e: Errno, want: Want) -> Error {
        if matches!(e, Errno::LOOP | Errno::NOTDIR | Errno::XDEV | Errno::EXIST)
            && let Some(t) = self.in_the_way(rel, want)
        {
            return t;
        }
        self.io(rel, doing, e.into())
    }

    fn io(&self, rel: &str, doing: &str, e: std::io::Error) -> Error {
        Error::io(format!("{doing} {}", crate::esc(&self.shown(rel))), e)
    }

    /// The first component of `rel` that is a link, or that is not a
    /// folder where one must be, as the refusal to report.
    fn in_the_way(&self, rel: &str, want: Want) -> Option<Error> {
        let parts: Vec<&str> = rel.split('/').collect();
        let mut held: Option<OwnedFd> = None;
        for (i, c) in parts.iter().enumerate() {
            let base = held.as_ref().map_or(self.fd.as_fd(), AsFd::as_fd);
            let st = rustix::fs::statat(base, *c, AtFlags::SYMLINK_NOFOLLOW).ok()?;
            let here = parts[..=i].join("/");
            let kind = FileType::from_raw_mode(st.st_mode);
            let must_be_dir = i + 1 < parts.len() || want == Want::Dir;
            if kind == FileType::Symlink {
                let to = rustix::fs::readlinkat(base, *c, Vec::new())
                    .map(|t| t.to_string_lossy().into_owned())
                    .unwrap_or_else(|_| "somewhere".into());
                return Some(self.link_refusal(&here, &to));
            }
            if must_be_dir && kind != FileType::Directory {
                return Some(self.not_folder(&here, files::describe(kind)));
            }
            if i + 1 < parts.len() {
                held = Some(rustix::fs::openat(base, *c, DIR, Mode::empty()).ok()?);
            }
        }
        None
    }

    fn link_refusal(&self, rel: &str, to: &str) -> Error {
        let shown = self.shown(rel);
        Error::Tampered {
            fix: format!(
                "Remove the link (`rm {}`, which leaves its target alone) and try again.",
                crate::esc(&shown)
            ),
            what: format!(
                "a symbolic link (to {})",
                mend_core::text::escape_controls(to)
            ),
            path: shown,
        }
    }

    fn not_folder(&self, rel: &str, kind: &str) -> Error {
        let shown = self.shown(rel);
        Error::Tampered {
            fix: format!(
                "Move it away or delete it (`rm {}`); mend then makes its own folder.",
                crate::esc(&shown)
            ),
            what: format!("{kind}, not a folder"),
            path: shown,
        }
    }

    /// What is at `rel`, not following a link, or `None` when nothing is.
    pub fn kind(&self, rel: &str) -> Result<Option<EntryKind>, Error> {
        let (base, name) = self.parent(rel)?;
        match rustix::fs::statat(base.fd(), name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some(EntryKind::of(FileType::from_raw_mode(st.st_mode)))),
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(self.fail(rel, "inspecting", e, Want::File)),
        }
    }

    /// The folder `rel` below this one, or `None` when nothing is there.
    pub fn dir(&self, rel: &str) -> Result<Option<PrivateDir>, Error> {
        self.check(rel)?;
        match open_beneath(self.fd.as_fd(), rel, DIR) {
            Ok(fd) => Ok(Some(self.child(fd, rel))),
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(self.fail(rel, "opening", e, Want::Dir)),
        }
    }

    /// The folder `rel` below this one, made (with any folder above it)
    /// when missing.
    pub fn create_dir(&self, rel: &str) -> Result<PrivateDir, Error> {
        self.check(rel)?;
        let mut held: Option<OwnedFd> = None;
        let mut done = 0;
        for c in rel.split('/') {
            done += c.len() + 1;
            let here = &rel[..done - 1];
            let base = held.as_ref().map_or(self.fd.as_fd(), AsFd::as_fd);
            let fd = match rustix::fs::openat(base, c, DIR, Mode::empty()) {
                Err(Errno::NOENT) => {
                    match rustix::fs::mkdirat(base, c, Mode::from_raw_mode(0o777)) {
                        Ok(()) | Err(Errno::EXIST) => {}
                        Err(e) => return Err(self.io(here, "creating", e.into())),
                    }
                    rustix::fs::openat(base, c, DIR, Mode::empty())
                }
                other => other,
            };
            held = Some(fd.map_err(|e| self.fail(here, "opening", e, Want::Dir))?);
        }
        let fd = held.expect("a valid name has a component");
        Ok(self.child(fd, rel))
    }

    /// Makes the folder `rel` (one component) and opens it: `None` when
    /// something is there already, so the caller knows it made it.
    pub(crate) fn make_dir(&self, rel: &str) -> Result<Option<PrivateDir>, Error> {
        let (base, name) = self.parent(rel)?;
        match rustix::fs::mkdirat(base.fd(), name, Mode::from_raw_mode(0o777)) {
            Ok(()) => {}
            Err(Errno::EXIST) => return Ok(None),
            Err(e) => return Err(self.io(rel, "creating", e.into())),
        }
        match open_beneath(self.fd.as_fd(), rel, DIR) {
            Ok(fd) => Ok(Some(self.child(fd, rel))),
            Err(e) => Err(self.fail(rel, "opening", e, Want::Dir)),
        }
    }

    /// Reads the regular file `rel` of at most `limit` bytes; `None` when
    /// nothing is there. Its kind is checked before it is opened (a device
    /// is never opened) and again after.
    pub fn read(&self, rel: &str, limit: u64) -> Result<Option<Vec<u8>>, Error> {
        let (base, name) = self.parent(rel)?;
        let st = match rustix::fs::statat(base.fd(), name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => st,
            Err(Errno::NOENT) => return Ok(None),
            Err(e) => return Err(self.fail(rel, "reading", e, Want::File)),
        };
        self.regular(rel, FileType::from_raw_mode(st.st_mode), base.fd(), name)?;
        let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let file = match rustix::fs::openat(base.fd(), name, flags, Mode::empty()) {
            Ok(fd) => File::from(fd),
            Err(Errno::NOENT) => return Ok(None),
            Err(e) => return Err(self.fail(rel, "reading", e, Want::File)),
        };
        let meta = file.metadata().map_err(|e| self.io(rel, "reading", e))?;
        if let Some(kind) = files::kind(&meta) {
            return Err(self.not_a_file(rel, kind));
        }
        let too_large = |size| Error::TooLarge {
            path: self.shown(rel),
            size,
            limit,
        };
        if meta.len() > limit {
            return Err(too_large(meta.len()));
        }
        let mut bytes = Vec::with_capacity(meta.len().min(limit) as usize);
        file.take(limit.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| self.io(rel, "reading", e))?;
        if bytes.len() as u64 > limit {
            return Err(too_large(bytes.len() as u64));
        }
        Ok(Some(bytes))
    }

    /// Refuses anything at `name` but a regular file: a link as
    /// [`Error::Tampered`], anything else as [`Error::NotAFile`].
    fn regular(
        &self,
        rel: &str,
        t: FileType,
        base: BorrowedFd<'_>,
        name: &str,
    ) -> Result<(), Error> {
        match t {
            FileType::RegularFile => Ok(()),
            FileType::Symlink => {
                let to = rustix::fs::readlinkat(base, name, Vec::new())
                    .map(|t| t.to_string_lossy().into_owned())
                    .unwrap_or_else(|_| "somewhere".into());
                Err(self.link_refusal(rel, &to))
            }
            other => Err(self.not_a_file(rel, files::describe(other))),
        }
    }

    fn not_a_file(&self, rel: &str, kind: &'static str) -> Error {
        Error::NotAFile {
            path: self.shown(rel),
            kind,
        }
    }

    /// Creates the file `rel`, which must not exist (a link there counts).
    pub fn create_new(&self, rel: &str) -> Result<File, Error> {
        let (base, name) = self.parent(rel)?;
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW;
        rustix::fs::openat(
            base.fd(),
            name,
            flags | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o666),
        )
        .map(File::from)
        .map_err(|e| self.fail(rel, "creating", e, Want::File))
    }

    /// Opens the regular file `rel` for writing, creating it when missing
    /// and keeping its bytes (a lock file, open for reading too), or
    /// appending when `append`.
    pub fn open_write(&self, rel: &str, create: bool, append: bool) -> Result<File, Error> {
        let (base, name) = self.parent(rel)?;
        let mut flags = OFlags::NONBLOCK | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        if create {
            flags |= OFlags::CREATE;
        }
        if append {
            flags |= OFlags::APPEND | OFlags::WRONLY;
        } else {
            flags |= OFlags::RDWR;
        }
        let fd = rustix::fs::openat(base.fd(), name, flags, Mode::from_raw_mode(0o666))
            .map_err(|e| self.fail(rel, "opening", e, Want::File))?;
        let st = rustix::fs::fstat(&fd).map_err(|e| self.io(rel, "opening", e.into()))?;
        self.regular(rel, FileType::from_raw_mode(st.st_mode), base.fd(), name)?;
        Ok(File::from(fd))
    }

    /// Replaces `rel` with `bytes` atomically and durably: a new file
    /// beside it, synced, renamed over it (a link there is replaced, never
    /// written through), and the folder synced.
    pub fn write(&self, rel: &str, bytes: &[u8]) -> Result<(), Error> {
        self.replace(rel, bytes, true)
    }

    /// [`PrivateDir::write_sealed`] for a cache: replaced atomically but
    /// not synced, so a crash may leave the old file, or an empty or torn
    /// one, which fails its seal and reads as missing. For what can always
    /// be found again; never for state.
    pub fn write_sealed_cache(&self, rel: &str, purpose: &str, body: &[u8]) -> Result<(), Error> {
        let seal = self.seal.as_ref().ok_or_else(|| self.unsealed(rel, None))?;
        self.replace(rel, &seal.wrap(purpose, body), false)
    }

    fn replace(&self, rel: &str, bytes: &[u8], durable: bool) -> Result<(), Error> {
        let (base, name) = self.parent(rel)?;
        let aside = format!("{name}.{}.new", files::unique());
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW;
        let mut f = rustix::fs::openat(
            base.fd(),
            &*aside,
            flags | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o666),
        )
        .map(File::from)
        .map_err(|e| self.fail(rel, "creating a file beside", e, Want::File))?;
        let undo = |e: Error| {
            let _ = rustix::fs::unlinkat(base.fd(), &*aside, AtFlags::empty());
            e
        };
        f.write_all(bytes)
            .and_then(|()| if durable { f.sync_all() } else { Ok(()) })
            .map_err(|e| undo(self.io(rel, "writing", e)))?;
        rustix::fs::renameat(base.fd(), &*aside, base.fd(), name)
            .map_err(|e| undo(self.fail(rel, "writing", e, Want::File)))?;
        if !durable {
            return Ok(());
        }
        rustix::fs::fsync(base.fd()).map_err(|e| self.io(rel, "syncing the folder of", e.into()))
    }

    /// Makes a symbolic link `rel` pointing at `target` (a copy of a link
    /// set aside); nothing may be at `rel`.
    pub fn symlink(&self, rel: &str, target: &[u8]) -> Result<(), Error> {
        let (base, name) = self.parent(rel)?;
        let target = OsString::from_vec(target.to_vec());
        rustix::fs::symlinkat(target.as_os_str(), base.fd(), name)
            .map_err(|e| self.fail(rel, "creating", e, Want::File))
    }

    /// Renames `from` to `to`, both below this folder; whatever is at `to`
    /// (a file or a link, never followed) is replaced.
    pub fn rename(&self, from: &str, to: &str) -> Result<(), Error> {
        let (fb, fname) = self.parent(from)?;
        let (tb, tname) = self.parent(to)?;
        rustix::fs::renameat(fb.fd(), fname, tb.fd(), tname)
            .map_err(|e| self.fail(from, "moving", e, Want::File))
    }

    /// Runs `f` with the descriptor of the folder holding `rel` and its
    /// last name, for a `*at` call of the caller's own.
    pub(crate) fn with_entry<R>(
        &self,
        rel: &str,
        f: impl FnOnce(BorrowedFd<'_>, &Path) -> R,
    ) -> Result<R, Error> {
        let (base, name) = self.parent(rel)?;
        Ok(f(base.fd(), Path::new(name)))
    }

    /// Removes the file or link `rel` (a link itself, never its target);
    /// `false` when nothing was there.
    pub fn remove_file(&self, rel: &str) -> Result<bool, Error> {
        let (base, name) = self.parent(rel)?;
        match rustix::fs::unlinkat(base.fd(), name, AtFlags::empty()) {
            Ok(()) => Ok(true),
            Err(Errno::NOENT) => Ok(false),
            Err(e) => Err(self.fail(rel, "removing", e, Want::File)),
        }
    }

    /// The entries of this folder, by name and kind, in no order.
    pub fn list(&self) -> Result<Vec<(OsString, EntryKind)>, Error> {
        list_fd(self.fd.as_fd()).map_err(|e| self.io("", "listing", e.into()))
    }

    /// When `rel` was last modified, not following a link.
    pub(crate) fn modified(&self, rel: &str) -> Option<(i64, u64)> {
        let (base, name) = self.parent(rel).ok()?;
        let st = rustix::fs::statat(base.fd(), name, AtFlags::SYMLINK_NOFOLLOW).ok()?;
        Some((st.st_mtime as i64, st.st_mtime_nsec as u64))
    }

    /// Removes the folder `rel` and everything in it; links inside are
    /// removed as links, never followed. `false` when nothing was there;
    /// a link or a file at `rel` itself is refused.
    pub fn remove_tree(&self, rel: &str) -> Result<bool, Error> {
        let (base, name) = self.parent(rel)?;
        let fd = match rustix::fs::openat(base.fd(), name, DIR, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Ok(false),
            Err(e) => return Err(self.fail(rel, "opening", e, Want::Dir)),
        };
        empty(fd.as_fd(), 0).map_err(|e| self.io(rel, "emptying", e.into()))?;
        rustix::fs::unlinkat(base.fd(), name, AtFlags::REMOVEDIR)
            .map_err(|e| self.fail(rel, "removing", e, Want::Dir))?;
        Ok(true)
    }

    /// Makes what was done in this folder durable.
    pub fn sync(&self) -> Result<(), Error> {
        rustix::fs::fsync(self.fd.as_fd()).map_err(|e| self.io("", "syncing", e.into()))
    }

    /// Removes `rel` if it is a Unix socket; anything else stays. A socket
    /// is never read (opening one fails), so one left by a process that is
    /// gone is only in the way.
    pub(crate) fn remove_socket(&self, rel: &str) {
        let Ok((base, name)) = self.parent(rel) else {
            return;
        };
        let is_socket = rustix::fs::statat(base.fd(), name, AtFlags::SYMLINK_NOFOLLOW)
            .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Socket);
        if is_socket {
            let _ = rustix::fs::unlinkat(base.fd(), name, AtFlags::empty());
        }
    }

    /// The first link or special file below this folder, or folder that
    /// cannot be read, when any (a folder mend is asked to adopt holds
    /// none): where it is (relative to the root) and what it is.
    pub(crate) fn first_unsafe_entry(&self) -> Option<(String, &'static str)> {
        let (rel, kind) = first_unsafe(self.fd.as_fd(), "", MAX_DEPTH)?;
        Some((self.shown(&rel), kind))
    }

    /// Refuses ([`Error::Tampered`]) the first link or special file in
    /// this folder or at most `depth` folders below it: for a folder a
    /// library will open by path (git2), checked right before it does.
    pub fn refuse_links(&self, depth: usize) -> Result<(), Error> {
        let Some((rel, kind)) = first_unsafe(self.fd.as_fd(), "", depth) else {
            return Ok(());
        };
        if kind == "a symbolic link" {
            let to = self
                .parent(&rel)
                .ok()
                .and_then(|(base, name)| rustix::fs::readlinkat(base.fd(), name, Vec::new()).ok())
                .map(|t| t.to_string_lossy().into_owned())
                .unwrap_or_else(|| "somewhere".into());
            return Err(self.link_refusal(&rel, &to));
        }
        let shown = self.shown(&rel);
        Err(Error::Tampered {
            fix: format!(
                "Remove it (`rm {}`), which mend never makes there, and try again.",
                crate::esc(&shown)
            ),
            what: kind.to_owned(),
            path: shown,
        })
    }
}

/// The first entry below `fd` (named `prefix` relative to the folder the
/// search started in) that is a link or a special file, or a folder that
/// cannot be listed, descending at most `depth` more levels.
fn first_unsafe(fd: BorrowedFd<'_>, prefix: &str, depth: usize) -> Option<(String, &'static str)> {
    let here = |name: &OsString| {
        let name = name.to_string_lossy();
        if prefix.is_empty() {
            name.into_owned()
        } else {
            format!("{prefix}/{name}")
        }
    };
    let Ok(entries) = list_fd(fd) else {
        return Some((prefix.to_owned(), "a folder that cannot be listed"));
    };
    for (name, kind) in entries {
        match kind {
            EntryKind::File => {}
            EntryKind::Dir if depth == 0 => {}
            EntryKind::Dir => {
                let sub = match rustix::fs::openat(fd, name.as_os_str(), DIR, Mode::empty()) {
                    Ok(sub) => sub,
                    // Removed since it was listed (a pending set dropped by
                    // another process): nothing there to be unsafe.
                    Err(Errno::NOENT) => continue,
                    Err(_) => return Some((here(&name), "a folder that cannot be opened")),
                };
                if let Some(found) = first_unsafe(sub.as_fd(), &here(&name), depth - 1) {
                    return Some(found);
                }
            }
            EntryKind::Link => return Some((here(&name), "a symbolic link")),
            EntryKind::Other => return Some((here(&name), "a special file")),
        }
    }
    None
}

fn list_fd(fd: BorrowedFd<'_>) -> rustix::io::Result<Vec<(OsString, EntryKind)>> {
    let mut out = Vec::new();
    let mut dir = Dir::read_from(fd)?;
    while let Some(entry) = dir.read() {
        let entry = entry?;
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        let kind = match entry.file_type() {
            FileType::Unknown => {
                match rustix::fs::statat(fd, entry.file_name(), AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(st) => EntryKind::of(FileType::from_raw_mode(st.st_mode)),
                    // Removed since the folder was read.
                    Err(Errno::NOENT) => continue,
                    Err(e) => return Err(e),
                }
            }
            t => EntryKind::of(t),
        };
        out.push((OsString::from_vec(name.to_vec()), kind));
    }
    Ok(out)
}

/// Removes everything in the folder `fd`, folders first emptied through
/// their own descriptors.
fn empty(fd: BorrowedFd<'_>, depth: usize) -> rustix::io::Result<()> {
    if depth > MAX_DEPTH {
        return Err(Errno::LOOP);
    }
    for (name, kind) in list_fd(fd)? {
        if kind == EntryKind::Dir {
            let sub = rustix::fs::openat(fd, name.as_os_str(), DIR, Mode::empty())?;
            empty(sub.as_fd(), depth + 1)?;
            rustix::fs::unlinkat(fd, name.as_os_str(), AtFlags::REMOVEDIR)?;
        } else {
            rustix::fs::unlinkat(fd, name.as_os_str(), AtFlags::empty())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// `held/` (the folder held open) and `outside/` beside it:
    ///
    /// ```text
    /// held/dir/file.txt        held/dir/back -> ../dir
    /// held/dir/out -> outside  held/in -> dir
    /// held/out -> outside      held/out_file -> outside/secret.txt
    /// held/plain.txt           outside/secret.txt
    /// ```
    fn tree() -> (tempfile::TempDir, PrivateDir) {
        let t = tempfile::tempdir().unwrap();
        let (held, outside) = (t.path().join("held"), t.path().join("outside"));
        std::fs::create_dir_all(held.join("dir")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret.txt"), "secret\n").unwrap();
        std::fs::write(held.join("dir/file.txt"), "file\n").unwrap();
        std::fs::write(held.join("plain.txt"), "plain\n").unwrap();
        symlink("../dir", held.join("dir/back")).unwrap();
        symlink(&outside, held.join("dir/out")).unwrap();
        symlink("dir", held.join("in")).unwrap();
        symlink(&outside, held.join("out")).unwrap();
        symlink(outside.join("secret.txt"), held.join("out_file")).unwrap();
        let dir = PrivateDir::open_path(&held, ".mend").unwrap();
        (t, dir)
    }

    fn outside_intact(t: &tempfile::TempDir) {
        let o = t.path().join("outside");
        let names: Vec<_> = std::fs::read_dir(&o).unwrap().flatten().collect();
        assert_eq!(names.len(), 1, "something was made outside");
        assert_eq!(std::fs::read(o.join("secret.txt")).unwrap(), b"secret\n");
    }

    /// Each lookup, by `openat2` and by the walk, with its outcome: opened,
    /// or the errno.
    #[test]
    fn both_lookups_refuse_every_link() {
        let (_t, dir) = tree();
        let file = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC;
        // A link is a loop to `openat2`, and "not a folder" to the walk's
        // `O_DIRECTORY | O_NOFOLLOW`; either is a refusal.
        let link = &[Errno::LOOP, Errno::NOTDIR][..];
        let cases: &[(&str, OFlags, &[Errno])] = &[
            ("dir", DIR, &[]),
            ("dir/file.txt", file, &[]),
            ("plain.txt", file, &[]),
            ("missing", file, &[Errno::NOENT]),
            ("dir/missing/x", file, &[Errno::NOENT]),
            ("in", DIR, link),
            ("in/file.txt", file, link),
            ("out", DIR, link),
            ("out/secret.txt", file, link),
            ("out_file", file, link),
            ("dir/back/file.txt", file, link),
            ("dir/out/secret.txt", file, link),
            ("plain.txt/x", file, &[Errno::NOTDIR]),
        ];
        for (rel, flags, want) in cases {
            let fd = dir.as_fd();
            for (how, got) in [
                ("openat2", open_beneath(fd, rel, *flags)),
                ("walk", walk(fd, rel, *flags)),
            ] {
                match got {
                    Ok(_) => assert!(want.is_empty(), "{how} {rel} opened"),
                    Err(e) => assert!(want.contains(&e), "{how} {rel}: {e:?}"),
                }
            }
        }
    }

    /// What each operation says about the first link on its way.
    #[test]
    fn every_operation_names_the_link_in_its_way() {
        let (t, dir) = tree();
        type Op = fn(&PrivateDir) -> Result<(), Error>;
        let cases: &[(&str, Op, &str)] = &[
            ("read", |d| d.read("in/file.txt", 99).map(drop), ".mend/in"),
            (
                "read",
                |d| d.read("out_file", 99).map(drop),
                ".mend/out_file",
            ),
            (
                "read",
                |d| d.read("dir/out/secret.txt", 99).map(drop),
                ".mend/dir/out",
            ),
            ("dir", |d| d.dir("out").map(drop), ".mend/out"),
            (
                "create_dir",
                |d| d.create_dir("out/new").map(drop),
                ".mend/out",
            ),
            (
                "create_new",
                |d| d.create_new("out_file").map(drop),
                ".mend/out_file",
            ),
            (
                "create_new",
                |d| d.create_new("out/new").map(drop),
                ".mend/out",
            ),
            ("write", |d| d.write("in/new", b"x"), ".mend/in"),
            (
                "open_write",
                |d| d.open_write("out_file", true, false).map(drop),
                ".mend/out_file",
            ),
            ("kind", |d| d.kind("out/secret.txt").map(drop), ".mend/out"),
            (
                "remove_file",
                |d| d.remove_file("out/secret.txt").map(drop),
                ".mend/out",
            ),
            (
                "remove_tree",
                |d| d.remove_tree("out").map(drop),
                ".mend/out",
            ),
            ("refuse_links", |d| d.refuse_links(0), ".mend/"),
        ];
        for (what, op, link) in cases {
            match op(&dir) {
                Err(Error::Tampered { path, fix, .. }) => {
                    assert!(path.starts_with(link), "{what}: {path}");
                    assert!(fix.contains(&format!("rm {path}")), "{what}: {fix}");
                }
                other => panic!("{what}: {other:?}"),
            }
        }
        outside_intact(&t);
    }

    #[test]
    fn a_link_is_replaced_or_removed_never_followed() {
        let (t, dir) = tree();
        dir.write("out_file", b"mine\n").unwrap();
        assert_eq!(dir.kind("out_file").unwrap(), Some(EntryKind::File));
        assert_eq!(dir.read("out_file", 99).unwrap().unwrap(), b"mine\n");
        assert!(dir.remove_file("out").unwrap());
        assert_eq!(dir.kind("out").unwrap(), None);
        // The folder's own links go as links.
        assert!(dir.remove_tree("dir").unwrap());
        assert_eq!(dir.kind("dir").unwrap(), None);
        outside_intact(&t);
    }

    #[test]
    fn a_folder_swapped_for_a_link_after_opening_redirects_nothing() {
        let (t, dir) = tree();
        let sub = dir.create_dir("sessions/s1").unwrap();
        let held = t.path().join("held");
        std::fs::rename(held.join("sessions"), held.join("moved")).unwrap();
        symlink(t.path().join("outside"), held.join("sessions")).unwrap();
        sub.write("index.json", b"{}").unwrap();
        sub.create_dir("blobs").unwrap().write("b", b"x").unwrap();
        assert_eq!(
            std::fs::read(held.join("moved/s1/index.json")).unwrap(),
            b"{}"
        );
        assert!(matches!(
            dir.dir("sessions/s1"),
            Err(Error::Tampered { .. })
        ));
        outside_intact(&t);
    }

    #[test]
    fn listing_and_reading_name_kinds() {
        let (_t, dir) = tree();
        let mut seen = dir.list().unwrap();
        seen.sort_by(|a, b| a.0.cmp(&b.0));
        let kinds: Vec<(String, EntryKind)> = seen
            .into_iter()
            .map(|(n, k)| (n.to_string_lossy().into_owned(), k))
            .collect();
        let want = [
            ("dir", EntryKind::Dir),
            ("in", EntryKind::Link),
            ("out", EntryKind::Link),
            ("out_file", EntryKind::Link),
            ("plain.txt", EntryKind::File),
        ];
        let want: Vec<(String, EntryKind)> =
            want.iter().map(|(n, k)| (n.to_string(), *k)).collect();
        assert_eq!(kinds, want);
        assert!(matches!(
            dir.read("dir", 99),
            Err(Error::NotAFile {
                kind: "a directory",
                ..
            })
        ));
        assert!(matches!(
            dir.read("plain.txt", 3),
            Err(Error::TooLarge { size: 6, .. })
        ));
        assert_eq!(dir.read("missing", 9).unwrap(), None);
        assert!(matches!(
            dir.create_dir("plain.txt/x"),
            Err(Error::Tampered { ref path, .. }) if path == ".mend/plain.txt"
        ));
        for bad in ["", "/abs", "a//b", "../up", "a/./b"] {
            assert!(matches!(dir.read(bad, 9), Err(Error::Io { .. })), "{bad}");
        }
    }
}
