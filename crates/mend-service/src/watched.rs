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

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use mend_checkpoint::turn::Turns;
use mend_checkpoint::{Checkpoints, CreateOptions, Hint, Scan, StateId};
use mend_watch::Watcher;
use serde::{Deserialize, Serialize};

use crate::Error;
use crate::checkpoint::CreateResult;

/// How a checkpoint's snapshot looked at the worktree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ScanKind {
    /// Every file was examined.
    Full,
    /// Only the paths a watcher saw change were examined.
    Narrowed,
}

impl ScanKind {
    /// The kind of a library scan.
    pub fn of(scan: &Scan) -> ScanKind {
        match scan {
            Scan::Narrowed { .. } => ScanKind::Narrowed,
            _ => ScanKind::Full,
        }
    }
}

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
/// process's own, or (the editor's) one lent at each call.
pub struct Watched {
    root: PathBuf,
    watcher: Option<Watcher>,
    held: Mutex<Held>,
}

impl Watched {
    /// A holder for `root` with its own watcher; `None` (watching failed,
    /// or was not wanted) means full scans.
    pub fn new(root: &Path, watcher: Option<Watcher>) -> Watched {
        Watched {
            root: root.to_path_buf(),
            watcher,
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
    /// snapshots narrowed by the holder's watcher or by `lent`; returns
    /// what `work` returned and how the last snapshot it took scanned.
    pub fn with<T>(
        &self,
        lent: Option<&Watcher>,
        work: impl FnOnce(&Turns) -> Result<T, Error>,
    ) -> Result<(T, Option<ScanKind>), Error> {
        self.with_waiting(lent, None, work)
    }

    /// [`Watched::with`], waiting at most `lock_timeout` (default: the
    /// workspace's 30 s) for another mend process writing in the root.
    pub fn with_waiting<T>(
        &self,
        lent: Option<&Watcher>,
        lock_timeout: Option<Duration>,
        work: impl FnOnce(&Turns) -> Result<T, Error>,
    ) -> Result<(T, Option<ScanKind>), Error> {
        let watcher = lent.or(self.watcher.as_ref());
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

    /// Creates a checkpoint (see [`crate::checkpoint::create`]), narrowed.
    pub fn create(
        &self,
        lent: Option<&Watcher>,
        opts: &CreateOptions,
        dry_run: bool,
        progress: &mut dyn FnMut(usize),
    ) -> Result<CreateResult, Error> {
        self.create_in(lent, None, opts, dry_run, progress)
    }

    /// [`Watched::create`] with the holder's own watcher, waiting at most
    /// `lock_timeout` for the workspace lock (see [`Watched::with_waiting`]).
    pub fn create_waiting(
        &self,
        lock_timeout: Option<Duration>,
        opts: &CreateOptions,
        dry_run: bool,
        progress: &mut dyn FnMut(usize),
    ) -> Result<CreateResult, Error> {
        self.create_in(None, lock_timeout, opts, dry_run, progress)
    }

    fn create_in(
        &self,
        lent: Option<&Watcher>,
        lock_timeout: Option<Duration>,
        opts: &CreateOptions,
        dry_run: bool,
        progress: &mut dyn FnMut(usize),
    ) -> Result<CreateResult, Error> {
        let (mut made, scan) = self.with_waiting(lent, lock_timeout, |t| {
            crate::checkpoint::create(t.checkpoints(), opts, dry_run, progress)
        })?;
        made.scan = scan;
        Ok(made)
    }
}

impl Watched {
    /// Runs a turn action (see [`crate::turn::act`]); `begin` and
    /// `reject` checkpoint, narrowed.
    pub fn turn(
        &self,
        lent: Option<&Watcher>,
        action: &crate::turn::Action,
        progress: &mut dyn FnMut(usize),
    ) -> Result<(crate::turn::Outcome, Option<ScanKind>), Error> {
        self.with(lent, |t| crate::turn::run(t, action, progress))
    }

    /// Restores a checkpoint (see [`crate::checkpoint::restore`]); its
    /// safety checkpoint is narrowed.
    pub fn restore(
        &self,
        lent: Option<&Watcher>,
        id: &str,
        opts: &mend_checkpoint::RestoreOptions,
        review: bool,
    ) -> Result<mend_checkpoint::Restored, Error> {
        let (restored, _) = self.with(lent, |t| {
            crate::checkpoint::restore(t.checkpoints(), id, opts, review)
        })?;
        Ok(restored)
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
