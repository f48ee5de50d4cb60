//! Checkpoints narrowed by a watcher: a long-running front-end (`mend
//! mcp`, `mend editor`, `mend daemon`) holds one [`Watched`] per root,
//! and every checkpoint it takes (create, a turn's begin and its reject's
//! safety checkpoint, a restore's) goes through it.
//!
//! The holder keeps one long-lived [`Checkpoints`] (whose snapshot state
//! stays in memory) and the pair (change token, snapshot state) of its
//! last snapshot. Before a snapshot it settles the watcher, takes the
//! token, and hands the snapshot the paths changed since the last pair's
//! token; the snapshot then examines only those. Without a pair, with a
//! watcher in doubt (an overflow, a renamed folder, a partial watch, a
//! filesystem without events) or without a watcher at all, the snapshot
//! is a full scan, as it always is when the library doubts the hint.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use mend_checkpoint::turn::Turns;
use mend_checkpoint::{Checkpoints, CreateOptions, Hint, OpenOptions, StateId};
use mend_watch::Watcher;

use crate::Error;
use crate::call::{Call, ScanKind};
use crate::checkpoint::CreateResult;
use crate::daemon::ask;

/// The last snapshot, paired with the token taken right before it.
#[derive(Debug, Clone, Copy)]
struct Last {
    token: u64,
    state: StateId,
}

/// What the holder keeps between snapshots.
struct Held {
    /// The root's turns, over the long-lived checkpoints; opened on first
    /// use (opening refuses a home directory, as every checkpoint does).
    turns: Option<Turns>,
    last: Option<Last>,
}

impl Held {
    /// The root's turns and the last pair. They are opened again (and the
    /// pair forgotten: the next snapshot is a full scan) when the store
    /// the root resolves to is no longer the one held: a repository made,
    /// removed or replaced, a shadow repository's `.mend` replaced. A
    /// checkpoint made in the old store would be one no command finds.
    /// Opening them can fail (an empty `.git`): nothing is held then, and
    /// the next call tries again, as a command would.
    fn open(
        &mut self,
        root: &Path,
        lock_timeout: Option<Duration>,
    ) -> Result<(&mut Turns, Option<Last>), Error> {
        if let Some(t) = &self.turns
            && t.checkpoints().store_changed()
        {
            self.turns = None;
            self.last = None;
        }
        let turns = match &mut self.turns {
            Some(t) => t,
            slot => slot.insert(Turns::from_checkpoints(Checkpoints::open(root)?)),
        };
        let wait = lock_timeout.unwrap_or(Duration::from_secs(
            mend_workspace::DEFAULT_LOCK_TIMEOUT_SECS,
        ));
        turns.checkpoints_mut().set_lock_timeout(wait)?;
        Ok((turns, self.last))
    }
}

/// A root's checkpoints with the watcher that narrows them: the
/// process's own, or (the editor's) one lent at each call. Every turn and
/// checkpoint action of every front-end goes through one, so which of
/// them snapshot, and whether a daemon is asked first, is decided here
/// once ([`Watched::turn`], [`Watched::create`]).
pub struct Watched {
    root: PathBuf,
    watcher: Option<Watcher>,
    /// Ask the daemon serving the root to take a create's or a begin's
    /// snapshot first (every holder but the daemon's own).
    asks: bool,
    /// Say how a snapshot scanned only when a daemon could have narrowed
    /// it (a command's holder, which watches nothing itself).
    once: bool,
    held: Mutex<Held>,
}

impl Watched {
    /// A holder for `root` with its own watcher; `None` (watching failed,
    /// or was not wanted) means full scans. It asks no daemon (it is the
    /// daemon's, or a test's).
    pub fn new(root: &Path, watcher: Option<Watcher>) -> Watched {
        Watched {
            root: root.to_path_buf(),
            watcher,
            asks: false,
            once: false,
            held: Mutex::new(Held {
                turns: None,
                last: None,
            }),
        }
    }

    /// A holder for `root` watching it itself; a failure to watch is no
    /// error: checkpoints then scan in full.
    pub fn watching(root: &Path) -> Watched {
        let watcher = Watcher::start(root, mend_watch::Options::default())
            .ok()
            .map(|(w, changes)| {
                // Nobody tracks files here; changes to tracked files
                // would only queue.
                drop(changes);
                w
            });
        Watched::new(root, watcher)
    }

    /// A holder for one command's call (`mend checkpoint`, `mend turn`):
    /// no watcher, so a create or a begin asks the daemon serving the
    /// root first, and scans in full without one.
    pub fn once(root: &Path) -> Watched {
        let mut w = Watched::new(root, None).asking();
        w.once = true;
        w
    }

    /// The holder, asking the daemon serving its root to take a create's
    /// or a begin's snapshot first.
    pub fn asking(mut self) -> Watched {
        self.asks = true;
        self
    }

    /// The root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The holder's own watcher, if it has one.
    pub fn watcher(&self) -> Option<&Watcher> {
        self.watcher.as_ref()
    }

    fn held(&self) -> MutexGuard<'_, Held> {
        // A snapshot that panicked leaves a consistent pair (it is
        // recorded only after a snapshot succeeded).
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `work` on the root's turns (and their checkpoints), its
    /// snapshots narrowed by the holder's watcher or by `lent`, waiting
    /// at most `lock_timeout` (default: the workspace's 30 s) for another
    /// mend process writing in the root; returns what `work` returned and
    /// how the last snapshot it took scanned.
    pub fn with_waiting<T>(
        &self,
        lent: Option<&Watcher>,
        lock_timeout: Option<Duration>,
        work: impl FnOnce(&Turns) -> Result<T, Error>,
    ) -> Result<(T, Option<ScanKind>), Error> {
        self.held_work(lent, lock_timeout, true, work)
    }

    /// [`Watched::with_waiting`]; the watcher is settled for a hint only
    /// when the work may `snapshot` (a settle can take [`SETTLE`]).
    fn held_work<T>(
        &self,
        lent: Option<&Watcher>,
        lock_timeout: Option<Duration>,
        snapshot: bool,
        work: impl FnOnce(&Turns) -> Result<T, Error>,
    ) -> Result<(T, Option<ScanKind>), Error> {
        let watcher = lent.or(self.watcher.as_ref()).filter(|_| snapshot);
        let mut held = self.held();
        let held = &mut *held;
        let (turns, last) = held.open(&self.root, lock_timeout)?;
        let (token, hint) = match watcher {
            Some(w) => hint(w, last),
            None => (None, None),
        };
        let cps = turns.checkpoints();
        cps.set_hint(hint);
        let result = work(turns);
        let made = cps.take_made();
        let Some(made) = made else {
            return Ok((result?, None));
        };
        let scan = ScanKind::of(&made.scan);
        held.last = token.map(|token| Last {
            token,
            state: made.state,
        });
        Ok((result?, Some(scan)))
    }

    /// Runs checkpoint work that takes no snapshot of its own (list,
    /// show, diff, drop, gc) on the held checkpoints.
    pub fn checkpoints<T>(
        &self,
        call: &Call<'_>,
        work: impl FnOnce(&Checkpoints) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let (t, _) = self.held_work(call.lent, call.lock_timeout, false, |t| {
            work(t.checkpoints())
        })?;
        Ok(t)
    }
}

impl Watched {
    /// Creates a checkpoint (see [`crate::checkpoint::create`]), narrowed:
    /// by the daemon serving the root when the holder asks one, else
    /// here. A first checkpoint allowed more than the defaults (`open`:
    /// forced, more files) is taken by a fresh open, in full.
    pub fn create(
        &self,
        call: &mut Call<'_>,
        opts: &CreateOptions,
        open: &OpenOptions,
        dry_run: bool,
    ) -> Result<CreateResult, Error> {
        if !is_default(open) {
            let mut cps = Checkpoints::open_with(&self.root, open)?;
            cps.set_lock_timeout(call.wait())?;
            return crate::checkpoint::create(&cps, opts, dry_run, &mut *call.progress);
        }
        let mut lock_timeout = call.lock_timeout;
        let mut asked_scan = None;
        if self.asks && !dry_run {
            let wait = call.wait();
            let asked = ask::by_daemon(&self.root, call, wait, |c, wait, progress| {
                c.checkpoint(opts, false, wait, progress)
            })?;
            match asked {
                Ok(made) => {
                    ask::said(call, made.scan);
                    return Ok(made);
                }
                Err(here) => (asked_scan, lock_timeout) = (here.scan, Some(here.lock_timeout)),
            }
        }
        let progress = &mut *call.progress;
        let (mut made, scan) = self.with_waiting(call.lent, lock_timeout, |t| {
            crate::checkpoint::create(t.checkpoints(), opts, dry_run, progress)
        })?;
        made.scan = if self.once { asked_scan } else { scan };
        Ok(made)
    }

    /// Runs a turn action (see [`crate::turn::run`]) on the held turns;
    /// `begin`, `reject` and `undo` checkpoint, narrowed. A `begin` is
    /// asked of the daemon serving the root first when the holder asks
    /// one; a forced `begin` opens what the held checkpoints refused.
    pub fn turn(
        &self,
        call: &mut Call<'_>,
        action: &crate::turn::Action,
    ) -> Result<(crate::turn::Outcome, Option<ScanKind>), Error> {
        use crate::turn::{Action, Outcome};
        let mut lock_timeout = call.lock_timeout;
        match action {
            Action::Begin(opts) if opts.force => {
                let turns = Turns::open_forced(&self.root, call.wait(), true)?;
                let outcome = crate::turn::run(&turns, action, &mut *call.progress)?;
                return Ok((outcome, None));
            }
            Action::Begin(opts) if self.asks => {
                let wait = call.wait();
                let asked = ask::by_daemon(&self.root, call, wait, |c, wait, progress| {
                    c.turn_begin(opts, wait, progress)
                })?;
                match asked {
                    Ok((begun, scan)) => {
                        ask::said(call, scan);
                        return Ok((Outcome::Begun(begun), scan));
                    }
                    Err(here) => lock_timeout = Some(here.lock_timeout),
                }
            }
            _ => {}
        }
        let progress = &mut *call.progress;
        self.held_work(call.lent, lock_timeout, snapshots(action), |t| {
            crate::turn::run(t, action, progress)
        })
    }

    /// Restores a checkpoint (see [`crate::checkpoint::restore`]); its
    /// safety checkpoint is narrowed.
    pub fn restore(
        &self,
        call: &Call<'_>,
        id: &str,
        opts: &mend_checkpoint::RestoreOptions,
        review: bool,
    ) -> Result<mend_checkpoint::Restored, Error> {
        let (restored, _) = self.with_waiting(call.lent, call.lock_timeout, |t| {
            crate::checkpoint::restore(t.checkpoints(), id, opts, review)
        })?;
        Ok(restored)
    }
}

/// Whether a turn action takes a snapshot: a begin (the turn's start), a
/// reject and an undo (their safety checkpoints). Only these settle the
/// watcher for a hint.
fn snapshots(action: &crate::turn::Action) -> bool {
    use crate::turn::Action;
    matches!(action, Action::Begin(_) | Action::Reject(_) | Action::Undo)
}

/// Whether `open` allows a first checkpoint no more than the defaults,
/// which the held checkpoints were opened with.
fn is_default(open: &OpenOptions) -> bool {
    let d = OpenOptions::default();
    open.force == d.force && open.max_files == d.max_files
}

/// Each root's holder, made (and its watcher started) at the first call
/// there: one per process, whichever front-end serves it (`mend mcp`'s
/// roots, `mend editor`'s, `mend daemon`'s).
pub struct Registry {
    /// Start a watcher of each root's own (`mend mcp --no-watch`, and the
    /// editor, which lends its buffers' at each call, say not to).
    watch: bool,
    /// Ask the daemon serving a root first (all but the daemon itself).
    asks: bool,
    held: Mutex<HashMap<PathBuf, Arc<Watched>>>,
}

impl Registry {
    /// A front-end's registry: watching each root itself when `watch`,
    /// and asking the daemon serving a root first.
    pub fn new(watch: bool) -> Registry {
        Registry {
            watch,
            asks: true,
            held: Mutex::new(HashMap::new()),
        }
    }

    /// The daemon's own: it watches, and asks no daemon.
    pub fn daemon() -> Registry {
        Registry {
            watch: true,
            asks: false,
            held: Mutex::new(HashMap::new()),
        }
    }

    /// The holder of `root`, made on first use.
    pub fn get(&self, root: &Path) -> Arc<Watched> {
        let mut all = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        let w = all.entry(root.to_path_buf()).or_insert_with(|| {
            let mut w = if self.watch {
                Watched::watching(root)
            } else {
                Watched::new(root, None)
            };
            w.asks = self.asks;
            Arc::new(w)
        });
        Arc::clone(w)
    }
}

/// How long a snapshot waits for the watcher to settle before it gives up
/// on the hint and scans in full.
const SETTLE: Duration = Duration::from_secs(2);

/// Settles the watcher and takes its token; the hint is the paths changed
/// since the last snapshot's token, unless there is none or the watcher
/// doubts what it saw.
fn hint(w: &Watcher, last: Option<Last>) -> (Option<u64>, Option<Hint>) {
    if w.unreliable().is_some() {
        return (None, None);
    }
    let Some(token) = w.sync(SETTLE) else {
        return (None, None);
    };
    let hint = last.and_then(|last| {
        Some(Hint {
            state: last.state,
            paths: w.changes_since(last.token)?,
        })
    });
    (Some(token), hint)
}
