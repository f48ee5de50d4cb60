//! One editor's buffers, by path: events routed to their [`Buffer`], and
//! renames followed.
//!
//! A rename is not followed at once. The same events come from three
//! different things: a file really renamed (`git mv`, an agent's `mv`), a
//! backup-style save (`mv f f~`, write `f`, remove `f~`), and a swap of two
//! files through a temporary name. While renames keep coming, the buffers
//! involved wait; [`GRACE`] after the last one, every pending move is
//! decided together:
//!
//! - a buffer whose old path holds a file again, and that file is not
//!   another open buffer's file moved there, **stays**: it was a save
//!   through a backup, and the new file is merged or reloaded;
//! - otherwise it **follows** its file to the new path;
//! - an open buffer whose path another buffer's file was moved onto is
//!   **replaced**: its own file is gone, the server forgets it, and the
//!   editor keeps its text (nothing unsaved is lost).
//!
//! Decided together, a swap (`a`→`t`, `b`→`a`, `t`→`b`) ends with each
//! buffer on its own file's new path.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::buffer::{Buffer, Effect, Event};
use crate::job::{Bytes, Computed, Job};
use crate::{Disk, Outcome};

/// How long after the last rename the pending moves are decided: long
/// enough for a backup-style save to write the file again.
pub const GRACE: Duration = Duration::from_millis(1000);

/// A buffer's identity, stable across renames.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BufferId(u64);

impl BufferId {
    /// The number, for the editor to name the buffer by (paths change with
    /// renames, and for a moment two buffers may hold one during a swap).
    pub fn get(self) -> u64 {
        self.0
    }
}

/// What the editor or the shell reports.
#[derive(Debug, Clone)]
pub enum Input {
    /// The editor shows this file (`buffer/open`).
    Open {
        /// Relative to the root.
        path: PathBuf,
        /// The buffer's text.
        text: Bytes,
        /// Whether it holds unsaved changes.
        dirty: bool,
        /// The editor's version of the buffer.
        version: Option<i64>,
    },
    /// The buffer now (`buffer/changed`, `buffer/resync`).
    Report {
        /// Relative to the root.
        path: PathBuf,
        /// The whole buffer.
        text: Bytes,
        /// Whether it holds unsaved changes.
        dirty: bool,
        /// The editor's version of the buffer.
        version: Option<i64>,
        /// The last notification the editor applied to the buffer.
        applied: Option<u64>,
    },
    /// The editor wrote the buffer (`buffer/saved`).
    Saved {
        /// Relative to the root.
        path: PathBuf,
        /// What it wrote.
        text: Bytes,
        /// The editor's version of the buffer.
        version: Option<i64>,
    },
    /// The editor no longer shows the file.
    Close {
        /// Relative to the root.
        path: PathBuf,
    },
    /// The shell read a file once it had settled.
    Disk {
        /// Relative to the root.
        path: PathBuf,
        /// What is there.
        disk: Disk,
        /// The [`Output::Recheck`] this answers; `None` for a change the
        /// watcher saw.
        recheck: Option<u64>,
    },
    /// A file or folder under the root was renamed.
    Renamed {
        /// Its old path.
        from: PathBuf,
        /// Its new path.
        to: PathBuf,
    },
    /// A timer set by [`Output::Timer`] went off.
    Timer(u64),
    /// A job finished.
    Computed {
        /// Whose job.
        buffer: BufferId,
        /// Its result.
        computed: Computed,
    },
}

/// Something the editor should do with one buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// The buffer.
    pub buffer: BufferId,
    /// The buffer's path (its old path for a rename).
    pub path: PathBuf,
    /// The editor's version the notice was computed against; an editor
    /// whose buffer has another version now must not apply a text change.
    pub version: Option<i64>,
    /// What to do.
    pub outcome: Outcome,
}

/// What the shell should do.
#[derive(Debug, Clone)]
pub enum Output {
    /// Tell the editor.
    Notice(Notice),
    /// Run the job off the event loop; send back [`Input::Computed`].
    Compute {
        /// Whose job.
        buffer: BufferId,
        /// The work.
        job: Job,
    },
    /// Read the file once settled; send back [`Input::Disk`] with this
    /// recheck's id.
    Recheck {
        /// The file.
        path: PathBuf,
        /// The id to answer with.
        id: u64,
    },
    /// Send [`Input::Timer`] with this id after this long.
    Timer {
        /// The timer.
        id: u64,
        /// When.
        after: Duration,
    },
}

/// A request about a buffer the editor never opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No buffer is open at the path.
    #[error("{0} is not open; send buffer/open first")]
    NotOpen(String),
}

/// One open buffer, as `editor/status` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BufferStatus {
    /// The file, relative to the root.
    pub path: String,
    /// Unsaved changes in the editor.
    pub dirty: bool,
    /// In conflict mode.
    pub conflict: bool,
    /// The file was deleted and not recreated.
    pub deleted: bool,
    /// A notification waits for the editor's answer.
    pub waiting: bool,
}

struct Slot {
    path: PathBuf,
    buffer: Buffer,
    moving: Option<Moving>,
}

struct Moving {
    to: PathBuf,
    /// Order of the rename, so the later of two onto one path wins.
    seq: u64,
}

/// The buffers of one editor.
#[derive(Default)]
pub struct Editor {
    slots: BTreeMap<BufferId, Slot>,
    paths: BTreeMap<PathBuf, BufferId>,
    /// Paths buffers left by following a rename, for the editor's messages
    /// still under the old name.
    aliases: BTreeMap<PathBuf, BufferId>,
    next_id: u64,
    /// The grace timer running, if any.
    timer: u64,
    renames: u64,
    /// Which resolvers a dirty buffer's merge runs after git's.
    policy: mend_merge::Policy,
}

impl Editor {
    /// No buffers yet.
    pub fn new() -> Editor {
        Editor::default()
    }

    /// Sets which resolvers dirty buffers' merges run after git's (none by
    /// default, [`mend_merge::Policy::Git`]; [`mend_merge::Policy::Safe`]
    /// turns the safe ones on).
    pub fn set_policy(&mut self, policy: mend_merge::Policy) {
        self.policy = policy;
    }

    /// Every path whose changes the shell should report: open buffers'
    /// files, and where their files are being moved.
    pub fn paths(&self) -> BTreeSet<PathBuf> {
        let mut out: BTreeSet<PathBuf> = self.paths.keys().cloned().collect();
        out.extend(
            self.slots
                .values()
                .filter_map(|s| Some(s.moving.as_ref()?.to.clone())),
        );
        out
    }

    /// The id of the buffer open at `path`.
    pub fn id(&self, path: &Path) -> Option<BufferId> {
        self.paths.get(path).copied()
    }

    /// The buffer open at `path`.
    pub fn buffer(&self, path: &Path) -> Option<&Buffer> {
        let id = self.paths.get(path)?;
        Some(&self.slots.get(id)?.buffer)
    }

    /// The open buffers.
    pub fn status(&self) -> Vec<BufferStatus> {
        self.paths
            .iter()
            .filter_map(|(p, id)| {
                let b = &self.slots.get(id)?.buffer;
                Some(BufferStatus {
                    path: p.to_string_lossy().into_owned(),
                    dirty: b.is_dirty(),
                    conflict: b.in_conflict(),
                    deleted: b.is_deleted(),
                    waiting: b.is_waiting(),
                })
            })
            .collect()
    }

    /// Applies one input and says what the shell should do.
    pub fn on(&mut self, input: Input) -> Result<Vec<Output>, Error> {
        Ok(match input {
            Input::Open {
                path,
                text,
                dirty,
                version,
            } => self.open(path, text, dirty, version),
            Input::Report {
                path,
                text,
                dirty,
                version,
                applied,
            } => {
                let id = self.find(&path)?;
                self.event(
                    id,
                    Event::Report {
                        text,
                        dirty,
                        version,
                        applied,
                    },
                )
            }
            Input::Saved {
                path,
                text,
                version,
            } => {
                let id = self.find(&path)?;
                self.event(id, Event::Saved { text, version })
            }
            Input::Close { path } => {
                let id = self.find(&path)?;
                self.remove(id);
                Vec::new()
            }
            Input::Disk {
                path,
                disk,
                recheck,
            } => match self.paths.get(&path) {
                Some(&id) => {
                    let missing = disk == Disk::Missing;
                    let event = match recheck {
                        Some(r) => Event::Rechecked(r, disk),
                        None => Event::Disk(disk),
                    };
                    let mut out = self.event(id, event);
                    if missing {
                        out.extend(self.wait());
                    }
                    out
                }
                None => Vec::new(),
            },
            Input::Renamed { from, to } => self.renamed(&from, &to),
            Input::Timer(id) if id == self.timer && id != 0 => {
                self.timer = 0;
                self.resolve()
            }
            Input::Timer(_) => Vec::new(),
            Input::Computed { buffer, computed } => self.event(buffer, Event::Computed(computed)),
        })
    }

    fn open(
        &mut self,
        path: PathBuf,
        text: Bytes,
        dirty: bool,
        version: Option<i64>,
    ) -> Vec<Output> {
        if let Some(&old) = self.paths.get(&path) {
            self.remove(old);
        }
        self.aliases.remove(&path);
        self.next_id += 1;
        let id = BufferId(self.next_id);
        let (buffer, effects) = Buffer::open(text, dirty, version);
        self.paths.insert(path.clone(), id);
        self.slots.insert(
            id,
            Slot {
                path,
                buffer,
                moving: None,
            },
        );
        self.emit(id, effects)
    }

    fn find(&self, path: &Path) -> Result<BufferId, Error> {
        self.paths
            .get(path)
            .or_else(|| self.aliases.get(path))
            .copied()
            .ok_or_else(|| Error::NotOpen(path.to_string_lossy().into_owned()))
    }

    fn remove(&mut self, id: BufferId) {
        if let Some(slot) = self.slots.remove(&id)
            && self.paths.get(&slot.path) == Some(&id)
        {
            self.paths.remove(&slot.path);
        }
        self.aliases.retain(|_, a| *a != id);
    }

    fn event(&mut self, id: BufferId, event: Event) -> Vec<Output> {
        let Some(slot) = self.slots.get_mut(&id) else {
            return Vec::new();
        };
        let effects = slot.buffer.on(event);
        self.emit(id, effects)
    }

    fn emit(&self, id: BufferId, effects: Vec<Effect>) -> Vec<Output> {
        let Some(slot) = self.slots.get(&id) else {
            return Vec::new();
        };
        effects
            .into_iter()
            .map(|e| match e {
                Effect::Notify(outcome) => Output::Notice(Notice {
                    buffer: id,
                    path: slot.path.clone(),
                    version: slot.buffer.version(),
                    outcome,
                }),
                Effect::Compute(mut job) => {
                    job.options =
                        mend_merge::Options::for_path(&slot.path.to_string_lossy(), self.policy);
                    Output::Compute { buffer: id, job }
                }
                Effect::Recheck(r) => Output::Recheck {
                    path: slot.path.clone(),
                    id: r,
                },
            })
            .collect()
    }

    /// A file or folder moved: each buffer at or under its old path (or
    /// whose file is on its way there) waits, and the decision is
    /// (re)scheduled.
    fn renamed(&mut self, from: &Path, to: &Path) -> Vec<Output> {
        if from == to {
            return Vec::new();
        }
        let moved = |p: &Path| -> Option<PathBuf> {
            let rest = p.strip_prefix(from).ok()?;
            Some(if rest.as_os_str().is_empty() {
                to.to_path_buf()
            } else {
                to.join(rest)
            })
        };
        let mut movers: Vec<(BufferId, PathBuf)> = Vec::new();
        for (&id, slot) in &self.slots {
            // A file already on its way is followed by where it is now.
            let now = slot.moving.as_ref().map_or(&slot.path, |m| &m.to);
            if let Some(dest) = moved(now) {
                movers.push((id, dest));
            }
        }
        if movers.is_empty() {
            return Vec::new();
        }
        for (id, dest) in movers {
            self.renames += 1;
            let seq = self.renames;
            // A buffer whose path the file lands on must not take that
            // file's bytes as its own change.
            if let Some(&x) = self.paths.get(&dest)
                && let Some(other) = self.slots.get_mut(&x)
            {
                other.buffer.pause(true);
            }
            if let Some(slot) = self.slots.get_mut(&id) {
                slot.buffer.pause(true);
                slot.moving = Some(Moving { to: dest, seq });
            }
        }
        self.wait()
    }

    /// (Re)starts the grace timer: moves and deletions are decided once
    /// the files have been quiet that long.
    fn wait(&mut self) -> Vec<Output> {
        self.renames += 1;
        self.timer = self.renames;
        vec![Output::Timer {
            id: self.timer,
            after: GRACE,
        }]
    }

    /// Decides every pending move at once.
    fn resolve(&mut self) -> Vec<Output> {
        let mut movers: Vec<(BufferId, PathBuf, Moving)> = Vec::new();
        for (&id, slot) in &mut self.slots {
            if let Some(m) = slot.moving.take() {
                movers.push((id, slot.path.clone(), m));
            }
        }
        movers.sort_by_key(|(_, _, m)| m.seq);
        // Who ends up owning each destination: the latest rename onto it,
        // named by its old path.
        let mut claims: BTreeMap<PathBuf, (BufferId, PathBuf)> = BTreeMap::new();
        for (id, from, m) in &movers {
            claims.insert(m.to.clone(), (*id, from.clone()));
        }
        let mut out = Vec::new();
        let mut followers = Vec::new();
        let mut replaced: Vec<(BufferId, PathBuf, PathBuf)> = Vec::new();
        for (id, from, m) in movers {
            let taken = claims.get(&from).is_some_and(|(o, _)| *o != id);
            let present = self.slots.get(&id).is_some_and(|s| s.buffer.file_present());
            match claims.get(&m.to) {
                _ if m.to == from || (present && !taken) => out.extend(self.unpause(id)),
                Some((owner, _)) if *owner == id => followers.push((id, from, m.to)),
                // A later rename onto the same path overwrote this file.
                Some((_, by)) => replaced.push((id, from, by.clone())),
                None => out.extend(self.unpause(id)),
            }
        }
        let leaving: BTreeSet<BufferId> = followers.iter().map(|(id, _, _)| *id).collect();
        for (to, (by, by_path)) in &claims {
            if let Some(&x) = self.paths.get(to)
                && x != *by
                && !leaving.contains(&x)
            {
                replaced.push((x, to.clone(), by_path.clone()));
            }
        }
        for (x, path, by) in replaced {
            out.extend(self.replace(x, path, by));
        }
        out.extend(self.follow(followers));
        // Buffers paused because a file was moved onto them, when that
        // move did not stand.
        let paused: Vec<BufferId> = self
            .slots
            .iter()
            .filter(|(_, s)| s.buffer.is_paused())
            .map(|(id, _)| *id)
            .collect();
        for id in paused {
            out.extend(self.unpause(id));
        }
        // Files still missing after the grace period were deleted.
        let ids: Vec<BufferId> = self.slots.keys().copied().collect();
        for id in ids {
            if let Some(slot) = self.slots.get_mut(&id) {
                let effects = slot.buffer.confirm_missing();
                out.extend(self.emit(id, effects));
            }
        }
        out
    }

    fn unpause(&mut self, id: BufferId) -> Vec<Output> {
        let Some(slot) = self.slots.get_mut(&id) else {
            return Vec::new();
        };
        if slot.moving.is_some() {
            return Vec::new();
        }
        let effects = slot.buffer.pause(false);
        self.emit(id, effects)
    }

    /// Tells the editor the buffer at `path` lost its file to the file that
    /// was at `by`, and forgets it.
    fn replace(&mut self, id: BufferId, path: PathBuf, by: PathBuf) -> Vec<Output> {
        let Some(slot) = self.slots.get(&id) else {
            return Vec::new();
        };
        let version = slot.buffer.version();
        self.remove(id);
        vec![Output::Notice(Notice {
            buffer: id,
            path,
            version,
            outcome: Outcome::Replaced { by },
        })]
    }

    /// Moves each follower to its new path, in an order that frees a path
    /// before another buffer takes it where the moves allow it.
    fn follow(&mut self, mut followers: Vec<(BufferId, PathBuf, PathBuf)>) -> Vec<Output> {
        for (id, from, _) in &followers {
            if self.paths.get(from) == Some(id) {
                self.paths.remove(from);
            }
        }
        let mut out = Vec::new();
        while !followers.is_empty() {
            let k = followers
                .iter()
                .position(|(_, _, to)| !followers.iter().any(|(_, f, _)| f == to))
                .unwrap_or(0);
            let (id, from, to) = followers.remove(k);
            self.paths.insert(to.clone(), id);
            self.aliases.remove(&to);
            if !self.paths.contains_key(&from) {
                self.aliases.insert(from.clone(), id);
            }
            let Some(slot) = self.slots.get_mut(&id) else {
                continue;
            };
            slot.path = to.clone();
            let mut effects = vec![slot.buffer.moved()];
            effects.extend(slot.buffer.pause(false));
            out.push(Output::Notice(Notice {
                buffer: id,
                path: from,
                version: slot.buffer.version(),
                outcome: Outcome::Renamed { to },
            }));
            out.extend(self.emit(id, effects));
        }
        out
    }
}
