//! The request lock: while a proposal comes into a session (a model's
//! response read by `mend apply --pending`, streamed or not, or an MCP
//! proposal in review mode), the actions that change what the model was
//! shown or what it proposed (accept, reject, sync, add, drop) are refused,
//! naming the command that is proposing and its process id; status and
//! diff are not. Request running: read-only; request done: review and act.
//! The stream's end is still merged three ways onto anything another
//! proposal changed meanwhile (see `propose.rs`).
//!
//! Two kinds of files in the session's folder carry it, both held with
//! `flock`, which the kernel releases when the holding process ends, so a
//! killed proposer (even by SIGKILL) frees the session at once and no
//! stale lock is ever waited out:
//!
//! - `request`: every proposer holds a shared lock on it for as long as
//!   its request runs (several may propose at once). An action takes an
//!   exclusive lock without waiting, under the session's lock, and keeps
//!   it to its end; it is refused when a proposer holds the file. So no
//!   proposal starts in the middle of an action either: the proposer
//!   waits for it (up to the workspace's lock timeout).
//! - `requests/<pid>-<n>`: one record per proposer, saying its command and
//!   process id. It is made under a dotted name, locked by its proposer,
//!   written, and only then renamed into place, so every record in place
//!   was locked when it appeared; one whose lock can be taken belongs to a
//!   process that is gone, and is removed by whoever finds it (so is one
//!   left aside, written, by a proposer killed before its rename).

use std::io::Write as _;
use std::time::{Duration, Instant};

use mend_workspace::{EntryKind, PrivateDir};

use crate::Session;
use crate::error::Error;

/// The lock every proposer shares.
const REQUEST: &str = "request";
/// The folder of the proposers' records.
const RECORDS: &str = "requests";

/// A request coming into a session, from [`Session::request`]: while it
/// is held, accept, reject, sync, add and drop are refused. Dropping it
/// (or the process ending) ends the request.
#[derive(Debug)]
pub struct Request {
    dir: PrivateDir,
    /// The shared lock on `request`.
    _shared: std::fs::File,
    /// The record, locked while this process lives.
    _record: std::fs::File,
    /// The record's name in `requests/`.
    name: String,
}

impl Drop for Request {
    /// Removes the record before the locks are released (the files close
    /// after this), so no one reads a finished request as a live one.
    fn drop(&mut self) {
        let _ = self.dir.remove_file(&format!("{RECORDS}/{}", self.name));
    }
}

/// An action's exclusive lock on `request`: no request starts until the
/// action is done.
#[derive(Debug)]
pub(crate) struct Quiet {
    _file: std::fs::File,
}

impl<'w> Session<'w> {
    /// Starts a request into the session by `command` (such as `mend apply
    /// --pending --stream`), named with this process's id to whoever is
    /// refused meanwhile. An action running now is waited for, up to the
    /// workspace's lock timeout.
    pub fn request(&self, command: &str) -> Result<Request, Error> {
        let timeout = self.ws.options().lock_timeout;
        let start = Instant::now();
        loop {
            let dir = self.store.dir();
            let shared = open(&dir, REQUEST)?;
            wait_shared(&dir, &shared, start, timeout, &self.name)?;
            // Dropped while this one waited: start again from the path.
            if self.store.moved(self.ws, &dir)? {
                continue;
            }
            let (record, name) = record(&dir, command)?;
            return Ok(Request {
                dir,
                _shared: shared,
                _record: record,
                name,
            });
        }
    }

    /// The requests coming into the session now, each as its command and
    /// process id; empty when there are none. A record left by a process
    /// that is gone is removed.
    pub fn streaming(&self) -> Result<Vec<String>, Error> {
        live(&self.store.dir())
    }

    /// The session's lock for an action that changes it (accept, reject,
    /// sync, add, drop), refused while a request comes in.
    pub(crate) fn lock_acting(&self) -> Result<(crate::store::Held, Quiet), Error> {
        let held = self.lock()?;
        let dir = self.store.dir();
        let file = open(&dir, REQUEST)?;
        match file.try_lock() {
            Ok(()) => Ok((held, Quiet { _file: file })),
            Err(std::fs::TryLockError::WouldBlock) => Err(Error::Streaming {
                session: self.name.clone(),
                holders: live(&dir)?,
            }),
            Err(std::fs::TryLockError::Error(cause)) => Err(Error::Io {
                context: format!("locking {}", dir.shown(REQUEST)),
                cause,
            }),
        }
    }
}

/// Opens a lock file of `dir`, made when missing; anything but a regular
/// file there is refused, naming the `rm` that fixes it.
fn open(dir: &PrivateDir, rel: &str) -> Result<std::fs::File, Error> {
    crate::store::open_lock(dir, rel)
}

/// Waits for a shared lock on `file` until `timeout` has passed since
/// `start`: an action holds it exclusively only while it runs.
fn wait_shared(
    dir: &PrivateDir,
    file: &std::fs::File,
    start: Instant,
    timeout: Duration,
    session: &str,
) -> Result<(), Error> {
    match crate::store::poll_lock(dir, (file, REQUEST), true, start, timeout)? {
        None | Some(crate::store::Wait::Held(_)) => Ok(()),
        Some(crate::store::Wait::Busy { holder, waited_ms }) => Err(Error::Busy {
            session: session.to_owned(),
            holder,
            waited_ms,
        }),
    }
}

/// Makes this process's record in `requests/`: locked before it appears
/// under its name (see the module docs).
fn record(dir: &PrivateDir, command: &str) -> Result<(std::fs::File, String), Error> {
    dir.create_dir(RECORDS)?;
    let name = format!("{}-{}", std::process::id(), unique());
    let aside = format!("{RECORDS}/.{name}.new");
    let mut file = dir.create_new(&aside)?;
    let io = |cause| Error::Io {
        context: format!("writing {}", dir.shown(&aside)),
        cause,
    };
    let locked = match file.try_lock() {
        Ok(()) => Ok(()),
        Err(std::fs::TryLockError::WouldBlock) => Err(std::io::ErrorKind::WouldBlock.into()),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    };
    let written = locked
        .and_then(|()| writeln!(file, "{command} (pid {})", std::process::id()))
        .map_err(io);
    if let Err(e) = written {
        let _ = dir.remove_file(&aside);
        return Err(e);
    }
    if let Err(e) = dir.rename(&aside, &format!("{RECORDS}/{name}")) {
        let _ = dir.remove_file(&aside);
        return Err(e.into());
    }
    Ok((file, name))
}

/// The commands of the live records of `dir`, in name order; the records
/// of processes that are gone are removed.
fn live(dir: &PrivateDir) -> Result<Vec<String>, Error> {
    let Some(records) = dir.dir(RECORDS)? else {
        return Ok(Vec::new());
    };
    let (aside, mut names): (Vec<String>, Vec<String>) = records
        .list()?
        .into_iter()
        .filter(|(_, kind)| *kind == EntryKind::File)
        .filter_map(|(name, _)| name.into_string().ok())
        .partition(|name| name.starts_with('.'));
    for name in aside {
        clear_aside(&records, &name);
    }
    names.sort();
    let mut out = Vec::new();
    for name in names {
        // Gone since it was listed: its request ended.
        let Ok(file) = records.open_write(&name, false, false) else {
            continue;
        };
        match file.try_lock() {
            Ok(()) => {
                // Its process is gone. Removed under its lock, which no
                // live process will ask for again.
                let _ = records.remove_file(&name);
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                let said = records.read(&name, 4096).ok().flatten().unwrap_or_default();
                let said = String::from_utf8_lossy(&said).trim().to_owned();
                out.push(if said.is_empty() {
                    "another mend process".to_owned()
                } else {
                    said
                });
            }
            Err(std::fs::TryLockError::Error(_)) => {}
        }
    }
    Ok(out)
}

/// Removes a record left under its dotted name by a proposer killed
/// before it renamed it into place: one that holds its text (written under
/// the proposer's lock) and whose lock can be taken. An empty one may be a
/// proposer's that has not locked it yet, and is left (it holds nothing).
fn clear_aside(records: &PrivateDir, name: &str) {
    let Ok(file) = records.open_write(name, false, false) else {
        return;
    };
    let written = file.metadata().is_ok_and(|m| m.len() > 0);
    if written && file.try_lock().is_ok() {
        let _ = records.remove_file(name);
    }
}

/// A number that differs between calls in one process.
fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}
