//! One editor's buffers, by path: events routed to their [`Buffer`], and
//! renames followed.
//!
//! A rename is not followed at once. The same events come from three
//! different things: a file really renamed (`git mv`, an agent's `mv`), a
//! backup-style save (`mv f f~`, write `f`, remove `f~`; or a new file
//! renamed over `f`), and a swap of two files through a temporary name.
//! While renames keep coming, the buffers involved wait, and the editor
//! follows each buffer's file by where it is now: a rename moves the file
//! at its old path (so `mv f g; mv g h` moves f's file twice, and g's file,
//! overwritten by the first, moves nowhere), and a file written or renamed
//! where a buffer's file left, once moved on, is followed too. [`GRACE`]
//! after the last one, every pending move is decided together:
//!
//! - a buffer whose file left a path that holds a file again, no open
//!   buffer's file (a save through a backup), **ends there**: on its own
//!   path, or on the path a file renamed onto it was saved at; of several
//!   such paths, the one written last, and of two buffers through one
//!   path, the one whose file left it last;
//! - otherwise it **follows** its file to where it is now;
//! - a buffer whose file another buffer's file overwrote is **replaced** by
//!   that buffer if it stays there: the server forgets it, and the editor
//!   keeps its text (nothing unsaved is lost);
//! - a buffer whose file is gone otherwise (deleted, or overwritten by a
//!   file no buffer has that moved on) stays on its path, or, that path
//!   taken, on the path its file had last, and is told of the deletion.
//!
//! Decided together, a swap (`a`→`t`, `b`→`a`, `t`→`b`) ends with each
//! buffer on its own file's new path. `tests/it/rename_model.rs` checks these
//! rules against random sequences of renames, swaps, saves, deletes and
//! writes.

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
        /// For a dirty buffer, the file's bytes its text derives from: the
        /// text the editor last loaded from the file (`disk`), else the file
        /// as the shell read it before answering the open; `None` when
        /// neither is known.
        base: Option<Bytes>,
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

impl Slot {
    /// Where its file is: its path, or where a rename took it; `None`
    /// once a rename overwrote it.
    fn file(&self) -> Option<&Path> {
        self.moving
            .as_ref()
            .map_or(Some(&self.path), |m| m.at.as_ref())
            .map(PathBuf::as_path)
    }
}

/// `p` after `from` was renamed to `to`, if it was at or under `from`.
fn moved(p: &Path, from: &Path, to: &Path) -> Option<PathBuf> {
    let rest = p.strip_prefix(from).ok()?;
    Some(if rest.as_os_str().is_empty() {
        to.to_path_buf()
    } else {
        to.join(rest)
    })
}

/// A buffer whose file a rename moved or overwrote, until the moves are
/// decided.
struct Moving {
    /// Where its file is now; `None` once another file was renamed over it.
    at: Option<PathBuf>,
    /// Where another buffer's file was renamed over it, if one was.
    lost: Option<PathBuf>,
    /// Where its file was last known to be.
    last: PathBuf,
    /// A file was written where its file left (a save through a backup, as
    /// it may turn out): its own file is then the backup, never followed.
    saved: bool,
    /// The paths its file was at in this window, oldest first (the
    /// buffer's own path first), each with the order of its arrival there
    /// (so the later of two files through one path wins it) and the path
    /// it came from.
    via: Vec<(PathBuf, u64, Option<PathBuf>)>,
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
    /// While moves wait to be decided: whether a file is at each path a
    /// rename or a read named, as last learnt.
    present: BTreeMap<PathBuf, bool>,
    /// While moves wait: when each path last got a file (a rename onto it,
    /// or a read finding a file where a rename took one away), in the
    /// order of [`Editor::renames`].
    filled: BTreeMap<PathBuf, u64>,
    /// While moves wait: when a rename last took a file from each path.
    emptied: BTreeMap<PathBuf, u64>,
    /// While moves wait: when each path last got a file that is no open
    /// buffer's (written there, or renamed there from elsewhere), and whose
    /// save it may be (the buffer whose file was there, or left last).
    written: BTreeMap<PathBuf, (u64, Option<BufferId>)>,
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
        for m in self.slots.values().filter_map(|s| s.moving.as_ref()) {
            out.extend(m.via.iter().map(|(p, _, _)| p.clone()));
        }
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
                base,
            } => self.open(path, text, dirty, version, base),
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
            } => match self.paths.get(&path).copied() {
                _ if self.noted(&path, &disk) && !self.paths.contains_key(&path) => Vec::new(),
                Some(id) => {
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
        base: Option<Bytes>,
    ) -> Vec<Output> {
        if let Some(&old) = self.paths.get(&path) {
            self.remove(old);
        }
        self.aliases.remove(&path);
        self.next_id += 1;
        let id = BufferId(self.next_id);
        let (buffer, effects) = Buffer::open(text, dirty, version, base);
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

    /// A file or folder moved: each buffer whose file is at or under its
    /// old path follows it for now, a buffer whose file it lands on loses
    /// that file, and the decision is (re)scheduled.
    fn renamed(&mut self, from: &Path, to: &Path) -> Vec<Output> {
        if from == to {
            return Vec::new();
        }
        let movers: Vec<(BufferId, PathBuf)> = self
            .slots
            .iter()
            .filter_map(|(&id, s)| Some((id, moved(s.file()?, from, to)?)))
            .collect();
        // A file put where a moving file left (a save through a backup, as
        // it may turn out) and then moved on: where it went may be where
        // that buffer's file is saved. (Renamed from there, it was there,
        // read or not yet.)
        let refilled = if movers.is_empty() {
            self.last_through(from)
        } else {
            None
        };
        let by_buffer = !movers.is_empty() || refilled.is_some();
        let mut overwritten = self.overwritten(from, to, by_buffer);
        for o in &mut overwritten {
            // Its own save renamed over its backup takes nothing from it.
            if Some(o.0) == refilled {
                o.2 = false;
            }
        }
        let waiting = self.slots.values().any(|s| s.moving.is_some());
        if movers.is_empty() && overwritten.is_empty() && !waiting {
            return Vec::new();
        }
        self.renames += 1;
        let seq = self.renames;
        self.filled.insert(to.to_path_buf(), seq);
        self.emptied.insert(from.to_path_buf(), seq);
        if !by_buffer {
            let whose = overwritten
                .iter()
                .find(|o| o.1)
                .map(|o| o.0)
                .or_else(|| self.last_through(to));
            self.written.insert(to.to_path_buf(), (seq, whose));
        }
        // Until read again (the watcher reports the next read of a renamed
        // path whatever it finds).
        self.present.insert(from.to_path_buf(), false);
        self.present.insert(to.to_path_buf(), true);
        for (id, here, lost) in overwritten {
            let m = self.question(id);
            if here {
                m.at = None;
            }
            if lost {
                m.lost = Some(to.to_path_buf());
            }
        }
        if let Some(id) = refilled {
            let m = self.question(id);
            m.via
                .push((to.to_path_buf(), seq, Some(from.to_path_buf())));
            m.last = to.to_path_buf();
            m.saved = true;
        }
        for (id, dest) in movers {
            // A buffer whose path the file lands on must not take that
            // file's bytes as its own change.
            if let Some(&x) = self.paths.get(&dest)
                && let Some(other) = self.slots.get_mut(&x)
            {
                other.buffer.pause(true);
            }
            let m = self.question(id);
            m.at = Some(dest.clone());
            m.last.clone_from(&dest);
            m.via.push((dest, seq, Some(from.to_path_buf())));
        }
        self.wait()
    }

    /// The buffers whose file a rename onto `to` overwrites, each with
    /// whether it was its file itself there (not a file written where its
    /// file left: a save through a backup, as it may turn out, which is its
    /// file too) and whether another buffer's file took its place
    /// (`by_buffer`). A file already read as gone is not overwritten: it
    /// ends nowhere.
    fn overwritten(&self, from: &Path, to: &Path, by_buffer: bool) -> Vec<(BufferId, bool, bool)> {
        let held = self.slots.values().any(|s| s.file() == Some(to));
        let saved = (by_buffer && !held && self.present.get(to) == Some(&true))
            .then(|| self.last_through(to))
            .flatten();
        let mut out = Vec::new();
        for (&id, slot) in &self.slots {
            let file = slot.file();
            let hit = file.is_some_and(|p| p.starts_with(to) && moved(p, from, to).is_none());
            if saved == Some(id) {
                out.push((id, false, true));
            } else if hit {
                // (Nor is a buffer's own file once a save through a backup
                // made it the backup.)
                let gone = file.is_some_and(|p| self.present.get(p) == Some(&false));
                let backup = slot.moving.as_ref().is_some_and(|m| m.saved);
                out.push((id, true, by_buffer && !gone && !backup));
            }
        }
        out
    }

    /// Notes what a read found, while moves wait to be decided: whether a
    /// file is at each path a moving file went through decides a save
    /// through a backup, and a moving file read as gone ends nowhere.
    /// Returns whether moves are waiting.
    fn noted(&mut self, path: &Path, disk: &Disk) -> bool {
        if !self.slots.values().any(|s| s.moving.is_some()) {
            return false;
        }
        let here = *disk != Disk::Missing;
        self.present.insert(path.to_path_buf(), here);
        // A file found where a rename took one away, and none was put
        // since, was written there: a file of its own.
        let emptied = self.emptied.get(path).copied().unwrap_or(0);
        let refilled = emptied > self.filled.get(path).copied().unwrap_or(0);
        if here && refilled {
            self.renames += 1;
            self.filled.insert(path.to_path_buf(), self.renames);
            let whose = self.last_through(path);
            self.written
                .insert(path.to_path_buf(), (self.renames, whose));
            if let Some(id) = whose
                && let Some(m) = self.slots.get_mut(&id).and_then(|s| s.moving.as_mut())
            {
                m.saved = true;
                m.last = path.to_path_buf();
            }
        }
        true
    }

    /// The moving buffer whose file was last at `path` and left it (the
    /// one a file written there afterwards may be a save of).
    fn last_through(&self, path: &Path) -> Option<BufferId> {
        self.slots
            .iter()
            .filter_map(|(&id, s)| {
                let m = s.moving.as_ref()?;
                if m.at.as_deref() == Some(path) {
                    return None;
                }
                let (_, when, _) = m.via.iter().rev().find(|(v, _, _)| v == path)?;
                Some((*when, id))
            })
            .max()
            .map(|(_, id)| id)
    }

    /// The pending move of a buffer, begun (and the buffer paused) if it
    /// has none yet.
    fn question(&mut self, id: BufferId) -> &mut Moving {
        let slot = self.slots.get_mut(&id).expect("a slot found just before");
        slot.buffer.pause(true);
        let path = slot.path.clone();
        slot.moving.get_or_insert_with(|| Moving {
            at: Some(path.clone()),
            lost: None,
            last: path.clone(),
            saved: false,
            via: vec![(path, 0, None)],
        })
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

    /// Whether a file is at `path`, as last learnt.
    fn is_present(&self, path: &Path) -> bool {
        self.present.get(path).copied().unwrap_or_else(|| {
            self.paths
                .get(path)
                .and_then(|id| self.slots.get(id))
                .is_some_and(|s| s.buffer.file_present())
        })
    }

    /// Decides every pending move at once.
    fn resolve(&mut self) -> Vec<Output> {
        let mut movers: Vec<(BufferId, PathBuf, Moving)> = Vec::new();
        for (&id, slot) in &mut self.slots {
            if let Some(m) = slot.moving.take() {
                movers.push((id, slot.path.clone(), m));
            }
        }
        // In the order of their last moves, as the editor saw them.
        movers.sort_by_key(|(_, _, m)| m.via.last().map_or(0, |(_, when, _)| *when));
        let ends = self.ends(&movers);
        self.present.clear();
        self.filled.clear();
        self.emptied.clear();
        self.written.clear();
        // Who takes each path, by its old path.
        let mut taken: BTreeMap<PathBuf, PathBuf> = movers
            .iter()
            .filter_map(|(id, from, _)| Some((ends.get(id)?.clone(), from.clone())))
            .collect();
        let mut out = Vec::new();
        let mut followers = Vec::new();
        let mut replaced: Vec<(BufferId, PathBuf, PathBuf)> = Vec::new();
        let mut staying = Vec::new();
        for (id, from, m) in &movers {
            // A file of its own overwritten by another buffer's file that
            // stays where it landed: replaced by that buffer.
            let by = m.lost.as_ref().and_then(|l| taken.get(l));
            if let Some(by) = by.filter(|b| *b != from) {
                replaced.push((*id, from.clone(), by.clone()));
                continue;
            }
            match (ends.get(id), taken.get(from)) {
                (Some(to), _) if to != from => followers.push((*id, from.clone(), to.clone())),
                (Some(_), _) => staying.push(*id),
                // Its file is gone. Its path free, it stays there (a save
                // may still come; a deletion is told once the file stays
                // missing); its path taken, it goes where its file was
                // last, or is replaced.
                (None, None) => {
                    taken.insert(from.clone(), from.clone());
                    staying.push(*id);
                }
                (None, Some(_)) if !taken.contains_key(&m.last) => {
                    taken.insert(m.last.clone(), from.clone());
                    followers.push((*id, from.clone(), m.last.clone()));
                }
                (None, Some(by)) => replaced.push((*id, from.clone(), by.clone())),
            }
        }
        // A buffer opened meanwhile where a moving file lands.
        let leaving: BTreeSet<BufferId> = followers.iter().map(|(id, _, _)| *id).collect();
        for (id, _, to) in &followers {
            if let Some(&x) = self.paths.get(to)
                && x != *id
                && !leaving.contains(&x)
                && !replaced.iter().any(|(r, _, _)| *r == x)
            {
                let by = self
                    .slots
                    .get(id)
                    .map(|s| s.path.clone())
                    .unwrap_or_default();
                replaced.push((x, to.clone(), by));
            }
        }
        for (x, path, by) in replaced {
            out.extend(self.replace(x, path, by));
        }
        out.extend(self.follow(followers));
        for id in staying {
            if let Some(slot) = self.slots.get_mut(&id) {
                // Its path may hold another file now: read it afresh.
                let effects = vec![slot.buffer.moved()];
                out.extend(self.emit(id, effects));
            }
        }
        out.extend(self.settled());
        out
    }

    /// Where each moving buffer ends: the latest path its file left that
    /// holds a file again, and not one of the moving files (a save through
    /// a backup: `mv f f~`, write `f`), the later arrival winning a path
    /// two went through; else where its file is now; `None` when its file
    /// is gone (overwritten, or deleted after its moves).
    fn ends(&self, movers: &[(BufferId, PathBuf, Moving)]) -> BTreeMap<BufferId, PathBuf> {
        let held: BTreeSet<&PathBuf> = movers
            .iter()
            .filter_map(|(_, _, m)| m.at.as_ref())
            .collect();
        let moving: BTreeSet<BufferId> = movers.iter().map(|(id, _, _)| *id).collect();
        // Each path saved over belongs to the buffer whose file was there
        // last.
        let mut owner: BTreeMap<&PathBuf, (u64, BufferId)> = BTreeMap::new();
        for (id, _, m) in movers.iter().filter(|(_, _, m)| m.lost.is_none()) {
            for (v, when, source) in &m.via {
                // A file moved on from a path saved over afterwards is the
                // backup of that save, not a save of its own.
                let backup = source.as_ref().is_some_and(|u| {
                    self.written
                        .get(u)
                        .is_some_and(|(w, whose)| w > when && *whose == Some(*id))
                });
                let usable = Some(v) != m.at.as_ref()
                    && !backup
                    && !held.contains(v)
                    && self.is_present(v)
                    && self.paths.get(v).is_none_or(|o| moving.contains(o));
                if usable && owner.get(v).is_none_or(|(w, _)| w <= when) {
                    owner.insert(v, (*when, *id));
                }
            }
        }
        // Of its paths, the one written last.
        let mut saved: BTreeMap<BufferId, &PathBuf> = BTreeMap::new();
        for (v, (_, id)) in &owner {
            let fill = |p: &PathBuf| self.filled.get(p).copied().unwrap_or(0);
            if saved.get(id).is_none_or(|best| fill(best) < fill(v)) {
                saved.insert(*id, v);
            }
        }
        let mut ends: BTreeMap<BufferId, PathBuf> =
            saved.into_iter().map(|(id, v)| (id, v.clone())).collect();
        for (id, _, m) in movers {
            // A file moved and then deleted ends nowhere: its buffer stays
            // on its own path, and is told of the deletion there.
            if let (false, false, Some(at)) = (ends.contains_key(id), m.saved, &m.at)
                && self.is_present(at)
            {
                ends.insert(*id, at.clone());
            }
        }
        ends
    }

    /// After the moves: buffers still paused take up their files again, and
    /// files still missing after the grace period were deleted.
    fn settled(&mut self) -> Vec<Output> {
        let mut out = Vec::new();
        let paused: Vec<BufferId> = self
            .slots
            .iter()
            .filter(|(_, s)| s.buffer.is_paused())
            .map(|(id, _)| *id)
            .collect();
        for id in paused {
            out.extend(self.unpause(id));
        }
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
