//! Daemon or scan: a snapshot a process without a watcher of its own
//! would take in full (`mend checkpoint create`, `mend turn begin`, an
//! MCP server's first) is asked of the daemon serving its root first; one
//! that finds none, or none that answers in time, takes it itself.

use std::path::Path;
use std::time::{Duration, Instant};

use super::client::{CONNECT_WAIT, Client, Fallback, Found, SILENCE};
use crate::Error;
use crate::call::{Call, ScanKind};

/// What became of work asked of a daemon, when the daemon did not do it.
pub(crate) struct Here {
    /// For the outcome's `scan`: `full` when a daemon was there but the
    /// work is done here, `None` when there was none.
    pub(crate) scan: Option<ScanKind>,
    /// What is left of the call's wait for the lock.
    pub(crate) lock_timeout: Duration,
}

/// Has the daemon serving `root` do `work`, waiting at most the call's
/// lock timeout in all. `Ok(Err(here))` when the caller does the work
/// itself; a daemon's refusal is the call's ([`Error::ByDaemon`]), not
/// tried again. Who did it, and why the daemon did not, is noted to the
/// call (a daemon gone silent at work is noted for everyone: the caller
/// waited).
pub(crate) fn by_daemon<T>(
    root: &Path,
    call: &mut Call<'_>,
    lock_timeout: Duration,
    work: impl FnOnce(&mut Client, Duration, &mut dyn FnMut(usize)) -> Result<T, Fallback>,
) -> Result<Result<T, Here>, Error> {
    let asked = Instant::now();
    let here = |scan| Here {
        scan,
        lock_timeout: lock_timeout.saturating_sub(asked.elapsed()),
    };
    let mut client = match find(root, call) {
        Asked::Daemon(c) => c,
        Asked::None => return Ok(Err(here(None))),
        Asked::Silent => return Ok(Err(here(Some(ScanKind::Full)))),
    };
    let done = work(&mut client, lock_timeout, &mut *call.progress);
    let pid = client.status().pid;
    let why = match done {
        Ok(t) => return Ok(Ok(t)),
        Err(Fallback::Refused(e)) => {
            call.verbose(&format!(
                "the daemon (pid {pid}) refused; its refusal is this command's, not tried again"
            ));
            return Err(Error::ByDaemon(Box::new(e.into_failure())));
        }
        Err(Fallback::Hung) => {
            call.always(&format!(
                "the daemon (pid {pid}) sent nothing for {} s; scanning in full here (`mend daemon stop` stops it)",
                SILENCE.as_secs()
            ));
            return Ok(Err(here(Some(ScanKind::Full))));
        }
        Err(Fallback::Lost(why)) => why,
    };
    call.verbose(&format!(
        "the daemon (pid {pid}) did not do the work: {why}; scanning in full"
    ));
    Ok(Err(here(Some(ScanKind::Full))))
}

/// What a call that would snapshot found at its root.
enum Asked {
    /// A daemon, to do the work.
    Daemon(Client),
    /// No daemon at all: the caller does what it always did.
    None,
    /// A daemon, but no answer in time: a full scan, said.
    Silent,
}

/// Looks for the daemon serving `root`; says (verbosely) when there is
/// none behind a socket, or one that does not answer.
fn find(root: &Path, call: &mut Call<'_>) -> Asked {
    match Client::connect(root, CONNECT_WAIT) {
        Ok(Found::Serving(c)) => Asked::Daemon(c),
        Ok(Found::Absent) | Err(_) => Asked::None,
        Ok(Found::Stale) => {
            call.verbose("no daemon is running (a stopped one left its socket); scanning in full");
            Asked::None
        }
        Ok(Found::Silent) => {
            call.verbose(&format!(
                "the daemon did not answer in {} ms; scanning in full",
                CONNECT_WAIT.as_millis()
            ));
            Asked::Silent
        }
    }
}

/// Says, verbosely, how a daemon's snapshot looked at the worktree.
pub(crate) fn said(call: &mut Call<'_>, scan: Option<ScanKind>) {
    let how = match scan {
        Some(ScanKind::Narrowed) => "only the paths its watcher saw change",
        _ => "every file",
    };
    call.verbose(&format!("the daemon examined {how}"));
}
