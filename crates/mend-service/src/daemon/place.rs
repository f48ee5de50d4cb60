//! Where a root's daemon answers: `.mend/daemon/sock`, in a folder only
//! its user may enter, beside `.mend/daemon/lock`, which the serving
//! daemon holds locked for as long as it runs.
//!
//! A Unix socket's path is at most 107 bytes, and a deep root's
//! `.mend/daemon/sock` can be longer: both sides reach the socket through
//! the folder's descriptor, as `/proc/self/fd/N/sock`, which is short
//! whatever the root (and is reached without resolving `.mend` by path
//! again). Without `/proc`, the folder's own path is used when it fits.

use std::fs::File;
use std::io::Write as _;
use std::os::fd::{AsFd as _, AsRawFd as _};
use std::path::{Path, PathBuf};

use mend_workspace::{PrivateDir, Workspace};

use crate::Error;

// The folder, under `.mend`, and the socket in it: named once in
// mend-workspace, which drops a stale socket when it takes `.mend` over.
use mend_workspace::{DAEMON_DIR as DIR, DAEMON_SOCKET as SOCKET};
/// The lock a serving daemon holds, naming its process.
const LOCK: &str = "lock";

/// The longest path a Unix socket address holds (`sun_path` less its NUL).
const SUN_PATH: usize = 107;

/// A root's daemon folder, held open.
pub(crate) struct Place {
    dir: PrivateDir,
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> Error {
    let what = what.into();
    move |source| Error::Io { what, source }
}

impl Place {
    /// The folder, made when missing, with mode 0700.
    pub(crate) fn create(ws: &Workspace) -> Result<Place, Error> {
        let dir = ws.private_dir()?.create_dir(DIR)?;
        rustix::fs::fchmod(&dir, rustix::fs::Mode::from_raw_mode(0o700))
            .map_err(|e| io("making .mend/daemon private to its user")(e.into()))?;
        Ok(Place { dir })
    }

    /// The folder if a daemon ever served the root; nothing is made.
    pub(crate) fn existing(ws: &Workspace) -> Result<Option<Place>, Error> {
        let Some(private) = ws.existing_private_dir()? else {
            return Ok(None);
        };
        Ok(private.dir(DIR)?.map(|dir| Place { dir }))
    }

    /// The socket's address, short enough for `sun_path`.
    pub(crate) fn socket(&self) -> Result<PathBuf, Error> {
        let by_fd = PathBuf::from(format!(
            "/proc/self/fd/{}/{SOCKET}",
            self.dir.as_fd().as_raw_fd()
        ));
        if by_fd.parent().is_some_and(Path::is_dir) {
            return Ok(by_fd);
        }
        let direct = self.dir.path().join(SOCKET);
        if direct.as_os_str().len() <= SUN_PATH {
            return Ok(direct);
        }
        Err(Error::Daemon(format!(
            "{} is longer than a Unix socket address allows ({SUN_PATH} bytes) and /proc is not mounted; run the daemon for a shorter root, or mount /proc",
            direct.display()
        )))
    }

    /// Whether something is at the socket's name.
    pub(crate) fn has_socket(&self) -> bool {
        matches!(self.dir.kind(SOCKET), Ok(Some(_)))
    }

    /// Removes the socket (a stale one, or this daemon's as it stops).
    pub(crate) fn remove_socket(&self) -> Result<(), Error> {
        self.dir.remove_file(SOCKET)?;
        Ok(())
    }

    /// Takes the daemon lock without waiting, writing this process's id
    /// into it; `Err` names the daemon holding it.
    pub(crate) fn lock(&self) -> Result<File, Error> {
        let mut file = self.dir.open_write(LOCK, true, false)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(Error::Refused(format!(
                    "a daemon already serves this root{}; stop it with `mend daemon stop` first",
                    self.holder()
                        .map_or(String::new(), |p| format!(" (pid {p})"))
                )));
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(io("locking .mend/daemon/lock")(e));
            }
        }
        file.set_len(0)
            .and_then(|()| write!(file, "{}", std::process::id()))
            .map_err(io("writing .mend/daemon/lock"))?;
        Ok(file)
    }

    /// Whether a daemon holds the lock now.
    pub(crate) fn is_held(&self) -> bool {
        let Ok(file) = self.dir.open_write(LOCK, true, false) else {
            return false;
        };
        match file.try_lock() {
            Ok(()) => {
                let _ = file.unlock();
                false
            }
            Err(_) => true,
        }
    }

    /// The process id the lock file names, if that process still runs
    /// (a killed daemon's id may be another process's by now, or none).
    pub(crate) fn holder(&self) -> Option<u32> {
        let bytes = self.dir.read(LOCK, 32).ok()??;
        let pid: u32 = String::from_utf8(bytes).ok()?.trim().parse().ok()?;
        let running = rustix::process::Pid::from_raw(pid.try_into().ok()?)
            .is_some_and(|p| rustix::process::test_kill_process(p) != Err(rustix::io::Errno::SRCH));
        running.then_some(pid)
    }

    /// The device and inode of `name` in the folder (not followed).
    pub(crate) fn identity(&self, name: &str) -> Option<(u64, u64)> {
        let st = rustix::fs::statat(&self.dir, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).ok()?;
        Some((st.st_dev, st.st_ino))
    }

    /// Whether `ws`'s `.mend/daemon` is still this folder, and its lock and
    /// socket still the ones this daemon holds and bound: a `.mend`
    /// deleted or replaced leaves a daemon no client can reach, and one
    /// another daemon could start beside.
    pub(crate) fn still_ours(&self, ws: &Workspace, lock: &File, socket: (u64, u64)) -> bool {
        let same = |a: rustix::io::Result<rustix::fs::Stat>, b: Option<(u64, u64)>| matches!((a, b), (Ok(a), Some(b)) if (a.st_dev, a.st_ino) == b);
        let now = ws
            .existing_private_dir()
            .ok()
            .flatten()
            .and_then(|p| p.dir(DIR).ok().flatten())
            .and_then(|d| rustix::fs::fstat(&d).ok().map(|s| (s.st_dev, s.st_ino)));
        same(rustix::fs::fstat(&self.dir), now)
            && same(rustix::fs::fstat(lock), self.identity(LOCK))
            && self.identity(SOCKET) == Some(socket)
    }
}
