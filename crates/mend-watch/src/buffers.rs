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

use std::collections::{BTreeSet, HashMap};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender};
use mend_sync::{
    BufferId, BufferStatus, Bytes, Computed, Disk, Editor, Input, Job, JobKind, Notice, Output,
    Skipped,
};

use crate::{Change, Error, Kind, Options, Watcher};

/// Jobs on inputs smaller than this run at once, on the caller's thread:
/// they take well under a millisecond.
const INLINE_BYTES: usize = 256 << 10;

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
}

/// The buffers of one editor, under one root.
pub struct Buffers {
    core: Editor,
    watcher: Watcher,
    root: PathBuf,
    /// The root as the caller spelled it, for absolute paths that do not
    /// go through symbolic links the canonical root resolved.
    given: PathBuf,
    events: Receiver<Event>,
    send: Sender<Event>,
    /// Buffers with a merge running, and the job waiting behind it.
    running: HashMap<BufferId, Option<Job>>,
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
                    if forward.send(Event::Watched(c)).is_err() {
                        return;
                    }
                }
            });
        Ok(Buffers {
            core: Editor::new(),
            watcher,
            root: canonical,
            given: std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf()),
            events,
            send,
            running: HashMap::new(),
        })
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

    /// The open buffers.
    pub fn status(&self) -> Vec<BufferStatus> {
        self.core.status()
    }

    /// The text of an open buffer, as last reported.
    pub fn text(&self, rel: &Path) -> Option<&[u8]> {
        self.core.buffer(rel).map(mend_sync::Buffer::text)
    }

    /// `path` (absolute inside the root, or relative to it) as a clean
    /// relative path, refused outside the root and inside `.git`/`.mend`.
    pub fn relative(&self, path: &str) -> Result<PathBuf, Error> {
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
                _ => return Err(Error::Outside(path.to_owned())),
            }
        }
        if out.as_os_str().is_empty() {
            return Err(Error::Outside(path.to_owned()));
        }
        Ok(out)
    }

    /// The editor opened a buffer.
    pub fn open(
        &mut self,
        path: &str,
        text: &[u8],
        dirty: bool,
        version: Option<i64>,
    ) -> Result<Vec<Notice>, Error> {
        let path = self.relative(path)?;
        self.feed(Input::Open {
            path,
            text: Arc::from(text),
            dirty,
            version,
        })
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
            Event::Watched(c) => watched(c),
            Event::Computed(buffer, computed) => {
                self.finished(buffer);
                Input::Computed { buffer, computed }
            }
            Event::Timer(id) => Input::Timer(id),
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

    /// Runs a small job now (its result is returned), or starts a large
    /// one on its own thread, one at a time per buffer.
    fn compute(&mut self, buffer: BufferId, job: Job) -> Option<Input> {
        if size(&job) < INLINE_BYTES && !self.running.contains_key(&buffer) {
            let computed = job.run();
            return Some(Input::Computed { buffer, computed });
        }
        match self.running.get_mut(&buffer) {
            Some(next) => *next = Some(job),
            None => {
                self.running.insert(buffer, None);
                self.spawn(buffer, job);
            }
        }
        None
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

    /// A buffer's merge finished: start the one waiting behind it.
    fn finished(&mut self, buffer: BufferId) {
        match self.running.get_mut(&buffer).map(Option::take) {
            Some(Some(next)) => self.spawn(buffer, next),
            Some(None) => {
                self.running.remove(&buffer);
            }
            None => {}
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
fn watched(c: Change) -> Input {
    let disk = match c.kind {
        Kind::Renamed(to) => return Input::Renamed { from: c.path, to },
        Kind::Content(bytes) => Disk::Bytes(Bytes::from(bytes)),
        Kind::TooLarge(_) => Disk::Unreadable(Skipped::TooLarge),
        Kind::NotAFile(kind) => Disk::Unreadable(Skipped::NotAFile(kind.into())),
        Kind::Outside => Disk::Unreadable(Skipped::Outside),
        Kind::Removed => Disk::Missing,
    };
    Input::Disk {
        path: c.path,
        disk,
        recheck: c.recheck,
    }
}
