//! Editor buffers kept in step with their files: the [`Watcher`] and the
//! pure state machine of `mend-sync`, joined.
//!
//! The editor reports its buffers (open, changed, saved, closed); the
//! watcher reports their files. Both go through [`mend_sync::Editor`], and
//! what comes out is either a notice for the editor or work for this shell:
//! a file to read (through the watcher's reader, so every read waits for the
//! file to settle), a merge to run, a timer to set. Merges of large texts
//! run on their own threads, one at a time per buffer with only the latest
//! waiting, so a slow buffer never delays another buffer or a request; the
//! caller's event loop only ever does quick work.

use std::collections::{BTreeSet, HashSet, VecDeque};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender};
use mend_sync::{
    BufferId, BufferStatus, Bytes, Computed, Disk, Editor, Input, Job, JobKind, Notice, Output,
    Skipped,
};

use crate::{Change, Error, Kind, Options, Watcher};

/// Jobs on inputs smaller than this run at once, on the caller's thread:
/// even a merge of very repetitive lines takes a few milliseconds there.
/// (At 256 KiB, one of 39,000 short repeated lines held the loop 0.9 s.)
const INLINE_BYTES: usize = 32 << 10;

/// Something for [`Buffers::handle`], from the watcher or from the work
/// this shell started.
#[derive(Debug)]
pub enum Event {
    /// The watcher reported a file.
    Watched(Change),
    /// A merge finished.
    Computed(BufferId, Computed),
    /// A timer went off.
    Timer(u64),
    /// The root folder went from its path (`lost`) or is back there and
    /// watched again (see [`Kind::RootLost`]): the caller tells the
    /// editor; it changes no buffer by itself.
    Root {
        /// Gone (`true`) or back (`false`).
        lost: bool,
    },
}

/// A buffer just opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opened {
    /// Its id, named by every notice about it.
    pub id: u64,
    /// The path the server knows it by, relative to the root.
    pub path: PathBuf,
}

/// The buffers of one editor, under one root.
pub struct Buffers {
    core: Editor,
    /// Shared with whoever snapshots the root (see [`Buffers::shared_watcher`]).
    watcher: Arc<Watcher>,
    root: PathBuf,
    /// The root as the caller spelled it, for absolute paths that do not
    /// go through symbolic links the canonical root resolved.
    given: PathBuf,
    events: Receiver<Event>,
    send: Sender<Event>,
    /// Buffers with a merge running.
    running: HashSet<BufferId>,
    /// Jobs waiting for a thread, at most one per buffer (the latest).
    waiting: VecDeque<(BufferId, Job)>,
}

impl Buffers {
    /// Starts watching `root`.
    pub fn start(root: &Path, opts: Options) -> Result<Buffers, Error> {
        let (watcher, changes) = Watcher::start(root, opts)?;
        let canonical = watcher.root();
        let (send, events) = crossbeam_channel::unbounded();
        let forward = send.clone();
        // One channel for the caller's loop: the watcher's changes join the
        // merges and timers this shell starts.
        let _ = std::thread::Builder::new()
            .name("mend-watch-forward".into())
            .spawn(move || {
                for c in changes {
                    let event = match c.kind {
                        Kind::RootLost => Event::Root { lost: true },
                        Kind::RootRestored => Event::Root { lost: false },
                        _ => Event::Watched(c),
                    };
                    if forward.send(event).is_err() {
                        return;
                    }
                }
            });
        Ok(Buffers {
            core: Editor::new(),
            watcher: Arc::new(watcher),
            root: canonical,
            given: std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf()),
            events,
            send,
            running: HashSet::new(),
            waiting: VecDeque::new(),
        })
    }

    /// Sets which resolvers dirty buffers' merges run after git's.
    pub fn set_policy(&mut self, policy: mend_merge::Policy) {
        self.core.set_policy(policy);
    }

    /// The root, canonical.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Everything [`Buffers::handle`] should be given, for the caller's
    /// event loop.
    pub fn events(&self) -> &Receiver<Event> {
        &self.events
    }

    /// The watcher (for its change token).
    pub fn watcher(&self) -> &Watcher {
        &self.watcher
    }

    /// The watcher, for another thread: one that takes checkpoints of the
    /// root narrowed by what it saw change.
    pub fn shared_watcher(&self) -> Arc<Watcher> {
        Arc::clone(&self.watcher)
    }

    /// The open buffers.
    pub fn status(&self) -> Vec<BufferStatus> {
        self.core.status()
    }

    /// The text of an open buffer, as last reported.
    pub fn text(&self, rel: &Path) -> Option<&[u8]> {
        self.core.buffer(rel).map(mend_sync::Buffer::text)
    }

    /// `path` (absolute inside the root, or relative to it) as the clean
    /// relative path of the file it names, links inside the root followed
    /// (a buffer opened through a link is synced with the file the link
    /// names, whose changes are the ones the watcher sees). Refused outside
    /// the root, inside `.git`/`.mend`, and for names no file can have.
    pub fn relative(&self, path: &str) -> Result<PathBuf, Error> {
        let bad = |why| Error::BadPath {
            path: path.to_owned(),
            why,
        };
        if path.chars().any(char::is_control) {
            return Err(bad(
                "has a control character; send the file's path as it is on disk",
            ));
        }
        if path.ends_with('/') {
            return Err(bad("ends with `/`, which names a folder; name a file"));
        }
        let p = Path::new(path);
        let rel = if p.is_absolute() {
            p.strip_prefix(&self.root)
                .or_else(|_| p.strip_prefix(&self.given))
                .map_err(|_| Error::Outside(path.to_owned()))?
        } else {
            p
        };
        let mut out = PathBuf::new();
        for c in rel.components() {
            match c {
                Component::Normal(n) if n == ".git" || n == ".mend" => {
                    return Err(Error::Private(path.to_owned()));
                }
                Component::Normal(n) => out.push(n),
                Component::CurDir => {}
                // `..` past the root leaves it; any other `..` is refused
                // rather than folded, since after a link it names another
                // folder than the text suggests.
                Component::ParentDir if out.as_os_str().is_empty() => {
                    return Err(Error::Outside(path.to_owned()));
                }
                Component::ParentDir => {
                    return Err(bad("has `..`; name the file from the root without `..`"));
                }
                _ => return Err(Error::Outside(path.to_owned())),
            }
        }
        if out.as_os_str().is_empty() {
            return Err(Error::Outside(path.to_owned()));
        }
        self.resolve(&out, path)
    }

    /// `rel` with the links inside the root resolved, as far as it exists.
    fn resolve(&self, rel: &Path, given: &str) -> Result<PathBuf, Error> {
        let mut existing = self.root.join(rel);
        let mut rest = Vec::new();
        let real = loop {
            if let Ok(real) = existing.canonicalize() {
                break real;
            }
            match (existing.file_name(), existing.parent()) {
                (Some(name), Some(parent)) if parent.starts_with(&self.root) => {
                    rest.push(name.to_owned());
                    existing = parent.to_path_buf();
                }
                _ => return Ok(rel.to_path_buf()),
            }
        };
        let inside = real
            .strip_prefix(&self.root)
            .map_err(|_| Error::Outside(given.to_owned()))?;
        let mut out = inside.to_path_buf();
        out.extend(rest.iter().rev());
        if out
            .components()
            .any(|c| matches!(c, Component::Normal(n) if n == ".git" || n == ".mend"))
        {
            return Err(Error::Private(given.to_owned()));
        }
        if out.as_os_str().is_empty() {
            return Err(Error::Outside(given.to_owned()));
        }
        Ok(out)
    }

    /// The editor opened a buffer: its id and the path the server knows it
    /// by (links inside the root resolved), and the first notices. A dirty
    /// buffer derives from `disk`, the text the editor last loaded from the
    /// file, when it says; else from the file as read here, before the open
    /// is answered: a write after that moment is merged into the buffer.
    pub fn open(
        &mut self,
        path: &str,
        text: &[u8],
        dirty: bool,
        version: Option<i64>,
        disk: Option<&[u8]>,
    ) -> Result<(Opened, Vec<Notice>), Error> {
        let rel = self.relative(path)?;
        let base = match disk {
            _ if !dirty => None,
            Some(d) => Some(Bytes::from(d)),
            None => self.read_base(&rel),
        };
        let notices = self.feed(Input::Open {
            path: rel.clone(),
            text: Arc::from(text),
            dirty,
            version,
            base,
        })?;
        let id = self.core.id(&rel).map_or(0, BufferId::get);
        Ok((Opened { id, path: rel }, notices))
    }

    /// The file a dirty buffer is opened over, as it is now: its bytes, or
    /// nothing for a missing file; `None` when it cannot be read as text
    /// (then the first read after the open is taken).
    fn read_base(&self, rel: &Path) -> Option<Bytes> {
        match self.watcher.read_now(rel, mend_sync::MAX_BYTES as u64)? {
            Kind::Content(bytes) => Some(Bytes::from(bytes)),
            Kind::Removed => Some(Bytes::from(&b""[..])),
            _ => None,
        }
    }

    /// The editor's buffer is now `text` (`buffer/changed`, and
    /// `buffer/resync` when it passed over a notification).
    pub fn report(
        &mut self,
        path: &str,
        text: &[u8],
        dirty: bool,
        version: Option<i64>,
        applied: Option<u64>,
    ) -> Result<Vec<Notice>, Error> {
        let path = self.relative(path)?;
        self.feed(Input::Report {
            path,
            text: Arc::from(text),
            dirty,
            version,
            applied,
        })
    }

    /// The editor wrote the buffer to its file.
    pub fn saved(
        &mut self,
        path: &str,
        text: &[u8],
        version: Option<i64>,
    ) -> Result<Vec<Notice>, Error> {
        let path = self.relative(path)?;
        self.feed(Input::Saved {
            path,
            text: Arc::from(text),
            version,
        })
    }

    /// The editor closed the buffer.
    pub fn close(&mut self, path: &str) -> Result<(), Error> {
        let path = self.relative(path)?;
        self.feed(Input::Close { path }).map(drop)
    }

    /// Takes one event from [`Buffers::events`].
    pub fn handle(&mut self, event: Event) -> Vec<Notice> {
        let input = match event {
            Event::Watched(c) => match watched(c) {
                Some(input) => input,
                None => return Vec::new(),
            },
            Event::Computed(buffer, computed) => {
                self.finished(buffer);
                Input::Computed { buffer, computed }
            }
            Event::Timer(id) => Input::Timer(id),
            Event::Root { .. } => return Vec::new(),
        };
        // Events never name a buffer the editor must have opened.
        self.feed(input).unwrap_or_default()
    }

    /// Runs the core and carries out what it asks, until only notices
    /// are left.
    fn feed(&mut self, input: Input) -> Result<Vec<Notice>, Error> {
        let mut queue = std::collections::VecDeque::from([input]);
        let mut notices = Vec::new();
        let mut first = true;
        while let Some(input) = queue.pop_front() {
            let outputs = match self.core.on(input) {
                Ok(o) => o,
                Err(e) if first => return Err(e.into()),
                Err(_) => continue,
            };
            first = false;
            self.sync_tracking();
            for o in outputs {
                match o {
                    Output::Notice(n) => notices.push(n),
                    Output::Compute { buffer, job } => {
                        if let Some(done) = self.compute(buffer, job) {
                            queue.push_back(done);
                        }
                    }
                    Output::Recheck { path, id } => self.watcher.recheck(&path, id),
                    Output::Timer { id, after } => self.timer(id, after),
                }
            }
        }
        Ok(notices)
    }

    /// Makes the watcher track exactly the paths the core cares about.
    fn sync_tracking(&self) {
        let want: BTreeSet<PathBuf> = self.core.paths();
        let have: BTreeSet<PathBuf> = self.watcher.tracked().into_iter().collect();
        for p in have.difference(&want) {
            self.watcher.untrack(p);
        }
        for p in want.difference(&have) {
            self.watcher.track(p, None);
        }
    }

    /// Runs a small job now (its result is returned), or queues a large
    /// one for a merge thread: one at a time per buffer, only its latest
    /// job waiting, and no more threads than leave a core to the loop.
    fn compute(&mut self, buffer: BufferId, job: Job) -> Option<Input> {
        let queued = self.waiting.iter().position(|(b, _)| *b == buffer);
        if size(&job) < INLINE_BYTES && !self.running.contains(&buffer) && queued.is_none() {
            let computed = job.run();
            return Some(Input::Computed { buffer, computed });
        }
        match queued {
            Some(i) => self.waiting[i].1 = job,
            None => self.waiting.push_back((buffer, job)),
        }
        self.pump();
        None
    }

    /// Starts waiting jobs while threads are free.
    fn pump(&mut self) {
        let limit = std::thread::available_parallelism()
            .map_or(1, |n| n.get().saturating_sub(1))
            .max(1);
        while self.running.len() < limit {
            let Some(i) = self
                .waiting
                .iter()
                .position(|(b, _)| !self.running.contains(b))
            else {
                return;
            };
            let Some((buffer, job)) = self.waiting.remove(i) else {
                return;
            };
            self.running.insert(buffer);
            self.spawn(buffer, job);
        }
    }

    fn spawn(&self, buffer: BufferId, job: Job) {
        let send = self.send.clone();
        let work = Arc::new(job);
        let shared = Arc::clone(&work);
        let spawned = std::thread::Builder::new()
            .name("mend-merge".into())
            .spawn(move || {
                let _ = send.send(Event::Computed(buffer, shared.run()));
            });
        if spawned.is_err() {
            // No thread to be had: merge here rather than never.
            let _ = self.send.send(Event::Computed(buffer, work.run()));
        }
    }

    /// A buffer's merge finished: its thread is free.
    fn finished(&mut self, buffer: BufferId) {
        if self.running.remove(&buffer) {
            self.pump();
        }
    }

    fn timer(&self, id: u64, after: std::time::Duration) {
        let send = self.send.clone();
        let _ = std::thread::Builder::new()
            .name("mend-timer".into())
            .spawn(move || {
                std::thread::sleep(after);
                let _ = send.send(Event::Timer(id));
            });
    }
}

fn size(job: &Job) -> usize {
    match &job.kind {
        JobKind::Reload { text, disk } => text.len() + disk.len(),
        JobKind::Merge { base, text, disk } => base.len() + text.len() + disk.len(),
    }
}

/// The core's input for a watcher change.
fn watched(c: Change) -> Option<Input> {
    let disk = match c.kind {
        Kind::Renamed(to) => return Some(Input::Renamed { from: c.path, to }),
        // Not a buffer's: the forwarding thread makes them `Event::Root`.
        Kind::RootLost | Kind::RootRestored => return None,
        Kind::Content(bytes) => Disk::Bytes(Bytes::from(bytes)),
        Kind::TooLarge(_) => Disk::Unreadable(Skipped::TooLarge),
        Kind::NotAFile(kind) => Disk::Unreadable(Skipped::NotAFile(kind.into())),
        Kind::Outside => Disk::Unreadable(Skipped::Outside),
        Kind::Denied => Disk::Unreadable(Skipped::Denied),
        Kind::Removed => Disk::Missing,
    };
    Some(Input::Disk {
        path: c.path,
        disk,
        recheck: c.recheck,
    })
}
