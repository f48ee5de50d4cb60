//! How a front-end makes one turn or checkpoint call (the watcher it
//! lends, its lock wait, where progress and notes go), and how the
//! call's snapshot looked at the worktree.

use std::time::Duration;

use mend_checkpoint::Scan;
use mend_watch::Watcher;
use serde::{Deserialize, Serialize};

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

/// A note for a person about who took a snapshot, and why a daemon did
/// not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// What to say, without a prefix.
    pub text: String,
    /// Said only when asked to be verbose (`--verbose`); a note that is
    /// not (a daemon gone silent at work) is said always.
    pub verbose: bool,
}

/// How a front-end makes one call: the watcher it lends, how long it
/// waits for the workspace lock, and where progress (files examined so
/// far) and notes go.
pub struct Call<'a> {
    /// A watcher lent for this call (the editor's buffers').
    pub lent: Option<&'a Watcher>,
    /// How long to wait for another mend writing in the root (default:
    /// the workspace's 30 s).
    pub lock_timeout: Option<Duration>,
    /// Told how many files a snapshot has examined.
    pub progress: Box<dyn FnMut(usize) + 'a>,
    /// Told who took a snapshot and why a daemon did not.
    pub notes: Box<dyn FnMut(Note) + 'a>,
}

impl<'a> Call<'a> {
    /// A call waiting `lock_timeout`, with no progress and no notes.
    pub fn new(lent: Option<&'a Watcher>, lock_timeout: Option<Duration>) -> Call<'a> {
        Call {
            lent,
            lock_timeout,
            progress: Box::new(|_| {}),
            notes: Box::new(|_| {}),
        }
    }

    /// The call, telling `progress` how many files were examined.
    pub fn progress(mut self, progress: impl FnMut(usize) + 'a) -> Call<'a> {
        self.progress = Box::new(progress);
        self
    }

    /// The call, telling `notes` who took a snapshot.
    pub fn notes(mut self, notes: impl FnMut(Note) + 'a) -> Call<'a> {
        self.notes = Box::new(notes);
        self
    }

    pub(crate) fn verbose(&mut self, text: &str) {
        (self.notes)(Note {
            text: text.to_owned(),
            verbose: true,
        });
    }

    pub(crate) fn always(&mut self, text: &str) {
        (self.notes)(Note {
            text: text.to_owned(),
            verbose: false,
        });
    }

    pub(crate) fn wait(&self) -> Duration {
        self.lock_timeout.unwrap_or(Duration::from_secs(
            mend_workspace::DEFAULT_LOCK_TIMEOUT_SECS,
        ))
    }
}
