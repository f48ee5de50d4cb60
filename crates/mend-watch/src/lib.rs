//! Watching a workspace for changes made by other programs.
//!
//! A [`Watcher`] watches the root's folders recursively through `notify`
//! (which pairs the two halves of a rename). Events are only a hint:
//! whatever kind an event has, each tracked file it names is read again once
//! it has been quiet a moment. That catches every way of writing a file: in
//! place, truncate-and-write, and the temp-file-then-rename save, which on
//! Linux reaches a watcher only as a rename. Events are taken as they come,
//! not through a debouncer: a writer's first modification must mark its
//! file as being written at once, or a read in the next moment could take
//! the half-written file for the finished one.
//!
//! - **Tracked files** ([`Watcher::track`]) are reported on the channel as
//!   a [`Change`] when what is at their path differs from what was last
//!   reported: new bytes, gone, something that is not read (a FIFO, a
//!   device, a link out of the root, too large). Every rename of a file or
//!   folder under the root is reported as [`Kind::Renamed`], tracked or
//!   not; the caller decides what follows (tracking stays on paths).
//! - **Reads happen once a file has settled**, on one reader thread, never
//!   under the lock the event handler takes: a file some process still has
//!   open for writing (a modification seen, its close not yet) waits for the
//!   close, up to [`OPEN_LIMIT`]; a file modified in the last [`SETTLE`] is
//!   waited for; a file that changed while it was read is read again.
//!   Reads never block (see `read.rs`), so a FIFO or a device in a tracked
//!   path cannot hang the watcher.
//! - **Rechecks** ([`Watcher::recheck`]) read a tracked file on request,
//!   through the same reader and with the same waits, and always answer.
//! - **Self-writes** are suppressed by content hash, not by time windows:
//!   [`Watcher::expect`] names bytes about to be written, and the change
//!   that brings exactly those bytes is not reported.
//! - **Every path** that an event names bumps a monotonic change token, so
//!   a client can ask what changed since token T
//!   ([`Watcher::changed_since`]).
//! - **The root itself** is checked every [`ROOT_POLL`] (and at once after
//!   an event naming it): deleted, or moved away, it is reported as
//!   [`Kind::RootLost`] and nothing is read; once a folder is at its path
//!   again (recreated, or moved back) it is opened and watched afresh,
//!   reported as [`Kind::RootRestored`], and every tracked file is read
//!   again, so what changed meanwhile is reported as any change is.
//!
//! [`Buffers`] joins the watcher with `mend-sync`'s state machine for the
//! buffers of an editor.
//!
//! Paths in and out are relative to the root. `.git` and `.mend` are not
//! worktree content and are ignored.

mod barrier;
mod buffers;
mod log;
mod mounts;
mod read;
mod reader;

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use notify::event::{AccessKind, AccessMode, EventKind, ModifyKind, RenameMode};
use notify::{RecommendedWatcher, RecursiveMode, Watcher as _};

pub use buffers::{Buffers, Event, Opened};

/// What cannot be watched.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The root is not a folder that can be read.
    #[error("cannot watch {path}: {source}; pass an existing folder as the root")]
    Root {
        /// The root given.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A path the editor named is outside the root.
    #[error(
        "{0} is outside the workspace root; name files under the root, absolute or relative to it"
    )]
    Outside(String),
    /// A path inside `.git` or `.mend`.
    #[error("{0} is inside .git or .mend, which mend never syncs; open files of the worktree")]
    Private(String),
    /// A path that cannot name a file of the worktree.
    #[error("{path:?} {why}")]
    BadPath {
        /// The path as given.
        path: String,
        /// What is wrong with it, and what to send instead.
        why: &'static str,
    },
    /// An event for a buffer the editor never opened.
    #[error(transparent)]
    Sync(#[from] mend_sync::Error),
    /// The operating system refused the watch.
    #[error(
        "cannot watch {path}: {source}; on Linux, a large tree may need a higher \
         fs.inotify.max_user_watches (sysctl)"
    )]
    Watch {
        /// The root.
        path: PathBuf,
        /// Why.
        source: notify::Error,
    },
}

/// How often the root folder is checked for being still at its path.
pub const ROOT_POLL: Duration = Duration::from_millis(250);

/// How many times [`Watcher::sync`] watches the root again for folders
/// renamed while it settles, before it gives up vouching.
const SYNC_REWATCHES: usize = 4;

/// Watcher settings.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// How long a path must be quiet before it is read.
    pub debounce: Duration,
    /// Files larger than this are reported as [`Kind::TooLarge`], unread.
    pub max_bytes: u64,
    /// Watch the whole tree (the default). Without it, or when the system
    /// refuses that many watches, only the root and the folders of tracked
    /// files are watched: buffers still follow their files, and the change
    /// token covers those folders only.
    pub recursive: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            debounce: Duration::from_millis(50),
            max_bytes: mend_sync::MAX_BYTES as u64,
            recursive: true,
        }
    }
}

/// What is at a tracked path now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// A regular file with these bytes.
    Content(Vec<u8>),
    /// A regular file larger than the limit (its size); not read.
    TooLarge(u64),
    /// Something that is not read: a FIFO, a device, a socket, a folder
    /// (its kind).
    NotAFile(&'static str),
    /// A link leading outside the root, or into `.git` or `.mend`.
    Outside,
    /// A file this process may not read.
    Denied,
    /// Nothing.
    Removed,
    /// The file was renamed to this path (relative to the root). Tracking
    /// stays on the old path until the caller moves it.
    Renamed(PathBuf),
    /// The root folder is gone from its path (deleted, or moved away):
    /// nothing is read until it is back. The change's path is empty.
    RootLost,
    /// A folder is at the root's path again and is watched: every tracked
    /// file is read again, and its changes follow. The change's path is
    /// empty.
    RootRestored,
}

/// A change at a tracked path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The change token after this change.
    pub token: u64,
    /// The file, relative to the root (its old path for a rename).
    pub path: PathBuf,
    /// What happened.
    pub kind: Kind,
    /// The [`Watcher::recheck`] this answers, if it answers one.
    pub recheck: Option<u64>,
}

type Hash = mend_core::ContentHash;

/// How long a file must have been left alone, by its modification time,
/// before its bytes are taken as what its writer meant.
pub const SETTLE: Duration = Duration::from_millis(50);

/// How long an empty file must have been left alone before it is taken as
/// emptied rather than truncated by a writer about to write.
pub const EMPTY_SETTLE: Duration = Duration::from_secs(1);

/// How long a file that a process still holds open for writing is waited
/// for, counted from its last event, before it is read anyway: long, since
/// reading it too early merges a half-written file, and a writer that
/// pauses this long mid-write is rare while one that holds a file open for
/// good (a log) is rarer still in an editor.
pub const OPEN_LIMIT: Duration = Duration::from_secs(30);

fn hash(bytes: &[u8]) -> Hash {
    Hash::of(bytes)
}

/// What was last reported of a tracked path, so the same is not reported
/// twice.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Seen {
    Unknown,
    Content(Hash),
    Other(Kind),
}

/// A read a tracked path waits for.
#[derive(Debug, Clone)]
struct Due {
    /// When the last event named it (or the recheck was asked).
    since: Instant,
    /// A writer opened it and has not closed it yet.
    writing: bool,
    /// Rechecks to answer.
    rechecks: Vec<u64>,
    /// Bumped by every event, so a read that raced one is repeated.
    generation: u64,
}

#[derive(Debug, Clone)]
struct Tracked {
    seen: Seen,
    due: Option<Due>,
}

/// The watcher's state, shared with the debouncer's and the reader's
/// threads. Nothing slow happens while it is locked.
struct Shared {
    root: PathBuf,
    /// How long a path must be quiet before it is read.
    quiet: Duration,
    token: u64,
    /// Every path an event named, with the token of its last change.
    changed: log::Log,
    tracked: HashMap<PathBuf, Tracked>,
    /// Content about to be written by this process, per file.
    expected: HashMap<PathBuf, Vec<Hash>>,
    generation: u64,
    /// The reader's sentinel, whose events mean every earlier one was
    /// handled (see `barrier.rs`).
    marker: Option<barrier::Marker>,
    /// [`Watcher::sync`]'s own sentinel.
    sync_marker: Option<barrier::Marker>,
    /// The token of the last event after which the token log may miss
    /// changes (see [`Watcher::changes_since`]).
    doubt: u64,
    /// A folder was renamed (or moved away): `notify`'s paths for the
    /// watches below it are stale until the root is watched again.
    rewatch: bool,
    /// The token log can never be trusted: the root's filesystem gives no
    /// reliable events, or the tree is not watched whole.
    unreliable: Option<&'static str>,
    /// The filesystems mounted in the tree when the watch began.
    mounts: Option<mounts::Mounts>,
    /// The root is gone from its path: nothing is read.
    root_lost: bool,
    /// An event named the root itself: check it now.
    root_event: bool,
    out: Sender<Change>,
}

/// A running watch of one root. Dropping it stops the watch and its reader.
pub struct Watcher {
    shared: Arc<Mutex<Shared>>,
    /// Shared with the reader, which watches the root again when it
    /// comes back.
    inner: Arc<Mutex<RecommendedWatcher>>,
    /// Wakes the reader; dropped with the watcher, which ends the reader.
    wake: Sender<()>,
    /// Whether the whole tree is watched; otherwise tracking a file watches
    /// its folder.
    recursive: bool,
    /// [`Watcher::sync`]'s sentinel, one sync at a time.
    sync_fence: Mutex<Option<barrier::Barrier>>,
}

fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    // The state stays consistent between statements, so a panic elsewhere
    // does not make it unusable.
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Watcher {
    /// Starts watching `root` recursively. Changes to tracked files arrive
    /// on the returned channel.
    pub fn start(root: &Path, opts: Options) -> Result<(Watcher, Receiver<Change>), Error> {
        let root_err = |source| Error::Root {
            path: root.to_path_buf(),
            source,
        };
        let root = root.canonicalize().map_err(root_err)?;
        let reader_root = read::Root::open(&root).map_err(root_err)?;
        let (tx, rx) = crossbeam_channel::unbounded();
        // Without a sentinel (no temporary folder), reads rely on timing
        // alone.
        let fence = barrier::Barrier::new().ok();
        let sync_fence = barrier::Barrier::new().ok();
        let mounts = mounts::Mounts::read(&root);
        let shared = Arc::new(Mutex::new(Shared {
            root: root.clone(),
            quiet: opts.debounce,
            token: 0,
            changed: log::Log::new(),
            tracked: HashMap::new(),
            expected: HashMap::new(),
            generation: 0,
            marker: fence.as_ref().map(|(_, m)| m.clone()),
            sync_marker: sync_fence.as_ref().map(|(_, m)| m.clone()),
            doubt: 0,
            rewatch: false,
            unreliable: unreliable_fs(&root).or_else(|| mounts.as_ref()?.remote()),
            mounts,
            root_lost: false,
            root_event: false,
            out: tx,
        }));
        let (wake, woken) = crossbeam_channel::unbounded();
        let (mut inner, recursive) = watch(&root, &shared, &wake, opts)?;
        let mut watched = |b: Option<(barrier::Barrier, barrier::Marker)>| {
            b.and_then(|(b, _)| {
                inner
                    .watch(b.dir(), RecursiveMode::NonRecursive)
                    .is_ok()
                    .then_some(b)
            })
        };
        let (fence, sync_fence) = (watched(fence), watched(sync_fence));
        {
            let mut s = lock(&shared);
            if fence.is_none() {
                s.marker = None;
            }
            if sync_fence.is_none() {
                s.sync_marker = None;
            }
            if !recursive {
                s.unreliable.get_or_insert("only some folders are watched");
            }
        }
        let inner = Arc::new(Mutex::new(inner));
        reader::spawn(
            Arc::clone(&shared),
            reader_root,
            reader::Rewatch {
                inner: Arc::downgrade(&inner),
                recursive,
            },
            opts.max_bytes,
            woken,
            fence,
        );
        Ok((
            Watcher {
                shared,
                inner,
                wake,
                recursive,
                sync_fence: Mutex::new(sync_fence),
            },
            rx,
        ))
    }

    /// Whether the whole tree is watched (see [`Options::recursive`]).
    pub fn is_recursive(&self) -> bool {
        self.recursive
    }

    /// The root, canonical.
    pub fn root(&self) -> PathBuf {
        lock(&self.shared).root.clone()
    }

    /// Reports changes to `path` from now on. `content` is what the caller
    /// knows the file holds (so an event that brings the same bytes is not
    /// a change); `None` when it is unknown. A path not tracked before is
    /// read once settled: an event that named it a moment before it was
    /// tracked (a file written where a renamed one left) is not lost.
    pub fn track(&self, path: &Path, content: Option<&[u8]>) {
        let root = {
            let mut s = lock(&self.shared);
            let seen = content.map_or(Seen::Unknown, |c| Seen::Content(hash(c)));
            s.generation += 1;
            let generation = s.generation;
            let t = s.tracked.entry(path.to_path_buf()).or_insert(Tracked {
                seen: Seen::Unknown,
                due: Some(Due {
                    since: Instant::now(),
                    writing: false,
                    rechecks: Vec::new(),
                    generation,
                }),
            });
            t.seen = seen;
            s.root.clone()
        };
        let _ = self.wake.send(());
        if !self.recursive
            && let Some(folder) = root.join(path).parent()
        {
            let mut d = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
            // A folder that does not exist yet cannot be watched; the file
            // is then reported when its folder's parent sees it appear, if
            // that one is watched.
            let _ = d.watch(folder, RecursiveMode::NonRecursive);
        }
    }

    /// Stops reporting changes to `path`.
    pub fn untrack(&self, path: &Path) {
        let mut s = lock(&self.shared);
        s.tracked.remove(path);
        s.expected.remove(path);
    }

    /// The tracked paths.
    pub fn tracked(&self) -> Vec<PathBuf> {
        lock(&self.shared).tracked.keys().cloned().collect()
    }

    /// Reads `path` once it has settled and reports it, changed or not,
    /// with `id` in [`Change::recheck`]. The path is tracked from now on.
    pub fn recheck(&self, path: &Path, id: u64) {
        {
            let mut s = lock(&self.shared);
            s.generation += 1;
            let generation = s.generation;
            let t = s.tracked.entry(path.to_path_buf()).or_insert(Tracked {
                seen: Seen::Unknown,
                due: None,
            });
            let due = t.due.get_or_insert(Due {
                since: Instant::now(),
                writing: false,
                rechecks: Vec::new(),
                generation,
            });
            due.rechecks.push(id);
        }
        let _ = self.wake.send(());
    }

    /// Reads `path` now, without waiting for it to settle: the file at
    /// this moment, as the same safe read finds it (beneath the root, a
    /// regular file, bounded). `None` when the root cannot be opened.
    pub fn read_now(&self, path: &Path, max: u64) -> Option<Kind> {
        let root = read::Root::open(&self.root()).ok()?;
        Some(match root.read(path, max) {
            read::Read::Bytes(bytes, _) => Kind::Content(bytes),
            read::Read::Missing | read::Read::Failed => Kind::Removed,
            read::Read::NotAFile(k) => Kind::NotAFile(k),
            read::Read::Outside => Kind::Outside,
            read::Read::Denied => Kind::Denied,
            read::Read::TooLarge(n) => Kind::TooLarge(n),
        })
    }

    /// Says that this process is about to write `bytes` to `path`: the
    /// change that brings exactly those bytes is not reported.
    pub fn expect(&self, path: &Path, bytes: &[u8]) {
        lock(&self.shared)
            .expected
            .entry(path.to_path_buf())
            .or_default()
            .push(hash(bytes));
    }

    /// The current change token: it grows with every path any event names.
    pub fn token(&self) -> u64 {
        lock(&self.shared).token
    }

    /// Returns once every event of a change made before the call has been
    /// handled, with the change token then: what changed before the call
    /// is in [`Watcher::changes_since`] of any earlier token. Waits up to
    /// `wait`; `None` when it could not know (no sentinel, or it timed
    /// out), and then the token vouches for nothing.
    ///
    /// A folder renamed since the last call makes the root be watched
    /// again first (`notify` keeps the old paths for the watches below a
    /// renamed folder), and is a doubt for every earlier token.
    pub fn sync(&self, wait: Duration) -> Option<u64> {
        let mut fence = self
            .sync_fence
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        // A rename handled while the fence was passing leaves the watches
        // below it with stale paths: the token vouches only once the root
        // is watched again and a fence has passed after that.
        for _ in 0..SYNC_REWATCHES {
            let rewatch = std::mem::take(&mut lock(&self.shared).rewatch);
            if rewatch && self.recursive {
                self.rewatch();
            }
            if !fence.as_mut()?.pass_counted(wait) {
                return None;
            }
            if !lock(&self.shared).rewatch {
                return Some(self.token());
            }
        }
        None
    }

    /// Watches the root afresh, so every watch has its folder's path now.
    fn rewatch(&self) {
        watch_again(&self.inner, &self.shared, true);
    }

    /// Whether the root folder is gone from its path (see
    /// [`Kind::RootLost`]).
    pub fn root_lost(&self) -> bool {
        lock(&self.shared).root_lost
    }

    /// The paths changed after `token`, sorted; `None` when the watcher
    /// may have missed a change since (an event queue overflow, a folder
    /// renamed, an error from the system), no longer holds the changes
    /// after so old a token (it keeps the last 32,768 to 65,536 paths), or
    /// can never know (see
    /// [`Watcher::unreliable`]). A nested repository made or removed at
    /// `x/.git` is named as `x`.
    pub fn changes_since(&self, token: u64) -> Option<Vec<PathBuf>> {
        let s = lock(&self.shared);
        if s.unreliable.is_some()
            || s.doubt > token
            || s.rewatch
            || s.root_lost
            || !s.changed.answers_for(token)
        {
            return None;
        }
        // No event tells of a mount made or removed in the tree, which
        // changes what it holds there.
        if mounts::Mounts::read(&s.root) != s.mounts {
            return None;
        }
        Some(s.changed.since(token))
    }

    /// Why the change token can never vouch for what changed: the root's
    /// filesystem gives no reliable events (a network or FUSE
    /// filesystem), or the tree is not watched whole. `None` when it can.
    pub fn unreliable(&self) -> Option<&'static str> {
        lock(&self.shared).unreliable
    }

    /// The paths changed after `token` that the watcher still holds,
    /// sorted (see [`Watcher::changes_since`] for whether that is all).
    pub fn changed_since(&self, token: u64) -> Vec<PathBuf> {
        lock(&self.shared).changed.since(token)
    }
}

/// Watches the root afresh: recursively (when `recursive`, and the system
/// allows), else the root and the folders of the tracked files. The watch
/// state is not locked meanwhile: `notify` waits for its event thread,
/// which takes it.
fn watch_again(inner: &Mutex<RecommendedWatcher>, shared: &Mutex<Shared>, recursive: bool) {
    let (root, folders) = {
        let s = lock(shared);
        let folders: Vec<PathBuf> = s
            .tracked
            .keys()
            .filter_map(|p| s.root.join(p).parent().map(Path::to_path_buf))
            .collect();
        (s.root.clone(), folders)
    };
    let mut d = inner.lock().unwrap_or_else(PoisonError::into_inner);
    // A root deleted has lost its watch already.
    let _ = d.unwatch(&root);
    if recursive {
        if d.watch(&root, RecursiveMode::Recursive).is_err() {
            // Not the whole tree any more: no token can vouch for it.
            let _ = d.watch(&root, RecursiveMode::NonRecursive);
            lock(shared).unreliable = Some("the tree could no longer be watched whole");
        }
        return;
    }
    let _ = d.watch(&root, RecursiveMode::NonRecursive);
    for folder in folders {
        let _ = d.watch(&folder, RecursiveMode::NonRecursive);
    }
}

/// The `notify` watcher, watching the root recursively if the system
/// allows.
fn watch(
    root: &Path,
    shared: &Arc<Mutex<Shared>>,
    wake: &Sender<()>,
    opts: Options,
) -> Result<(RecommendedWatcher, bool), Error> {
    let handler = {
        let shared = Arc::clone(shared);
        let wake = wake.clone();
        move |res: notify::Result<notify::Event>| {
            let mut s = lock(&shared);
            match res {
                Ok(e) => s.handle(&e),
                // A queue overflow or a folder gone: events may have been
                // lost, so every tracked file is read again.
                Err(_) => {
                    s.doubted();
                    s.rescan();
                }
            }
            drop(s);
            let _ = wake.send(());
        }
    };
    let watch_err = |source| Error::Watch {
        path: root.to_path_buf(),
        source,
    };
    // A link inside the tree may lead anywhere, the whole disk included:
    // never watch through one.
    let config = notify::Config::default().with_follow_symlinks(false);
    let mut inner = RecommendedWatcher::new(handler, config).map_err(watch_err)?;
    let mut recursive = opts.recursive;
    if recursive && inner.watch(root, RecursiveMode::Recursive).is_err() {
        // Typically the inotify watch limit in a very large tree.
        let _ = inner.unwatch(root);
        recursive = false;
    }
    if !recursive {
        inner
            .watch(root, RecursiveMode::NonRecursive)
            .map_err(watch_err)?;
    }
    Ok((inner, recursive))
}

/// Why events on the filesystem holding `root` cannot be relied on: one
/// whose changes may come from elsewhere (a network filesystem) or from a
/// process the kernel does not see (FUSE), where inotify reports only what
/// this machine did through the kernel's own paths.
fn unreliable_fs(root: &Path) -> Option<&'static str> {
    #[cfg(target_os = "linux")]
    {
        let kind = rustix::fs::statfs(root).ok()?.f_type as u32;
        // NFS, SMB, CIFS, SMB2, FUSE, 9p, Ceph, AFS, Coda, vboxsf, Lustre,
        // GFS2, OCFS2 (their `statfs` magic numbers).
        const REMOTE: &[u32] = &[
            0x6969,
            0x517b,
            0xff53_4d42,
            0xfe53_4d42,
            0x6573_5546,
            0x0102_1997,
            0x00c3_6400,
            0x5346_414f,
            0x7375_7245,
            0x786f_4256,
            0x0bd0_0bd0,
            0x0116_1970,
            0x7461_636f,
        ];
        REMOTE.contains(&kind).then_some(
            "the root's filesystem does not report every change (a network or FUSE filesystem)",
        )
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = root;
        None
    }
}

/// How an event moves a path's "open for writing" state.
fn writing(kind: &EventKind) -> Option<bool> {
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) | EventKind::Remove(_) => {
            Some(false)
        }
        // Not a creation: links, folders, FIFOs and hard links are created
        // without a write to close, and a new file that stays empty is
        // waited for by [`EMPTY_SETTLE`] anyway.
        EventKind::Modify(ModifyKind::Data(_) | ModifyKind::Any) => Some(true),
        _ => None,
    }
}

/// Whether an event says nothing about content: a file opened, or closed
/// after reading (the reader's own reads among them).
fn only_read(kind: &EventKind) -> bool {
    matches!(kind, EventKind::Access(a) if !matches!(a, AccessKind::Close(AccessMode::Write)))
}

impl Shared {
    fn handle(&mut self, e: &notify::Event) {
        if let Some(m) = &self.marker
            && e.paths.contains(&m.file)
        {
            let _ = m.tell.send(());
            return;
        }
        // `sync`'s sentinel write is answered once, at its close, its last
        // event (see `Barrier::pass_counted`).
        if let Some(m) = &self.sync_marker
            && e.paths.contains(&m.file)
        {
            if e.kind == EventKind::Access(AccessKind::Close(AccessMode::Write)) {
                let _ = m.tell.send(());
            }
            return;
        }
        if e.need_rescan() {
            self.doubted();
            self.rescan();
            return;
        }
        // The root deleted or moved: the reader checks it at once.
        if e.paths.contains(&self.root) {
            self.root_event = true;
        }
        if only_read(&e.kind) {
            return;
        }
        if self.folder_renamed(e) {
            self.doubted();
            self.rewatch = true;
        }
        let paths: Vec<PathBuf> = e.paths.iter().filter_map(|p| self.relative(p)).collect();
        for p in &paths {
            self.token += 1;
            self.changed.note(p.clone(), self.token);
        }
        // A nested repository made or removed changes what its folder
        // holds for a snapshot; what happens inside its `.git` does not.
        let repos: Vec<PathBuf> = e
            .paths
            .iter()
            .filter_map(|p| self.repository_of(p))
            .collect();
        for p in repos {
            self.token += 1;
            self.changed.note(p, self.token);
        }
        let rename = EventKind::Modify(ModifyKind::Name(RenameMode::Both));
        if e.kind == rename
            && let [from, to] = &e.paths[..]
            && let (Some(from), Some(to)) = (self.relative(from), self.relative(to))
        {
            self.renamed(&from, &to);
        }
        let open = writing(&e.kind);
        for p in paths {
            self.mark(&p, open);
        }
    }

    /// The root is gone from its path: reads stop until it is back.
    fn root_gone(&mut self) {
        self.root_lost = true;
        self.doubted();
        self.send(PathBuf::new(), Kind::RootLost, None);
    }

    /// A folder is at the root's path again and watched: every tracked
    /// file is read again (what changed meanwhile is reported then).
    fn root_back(&mut self) {
        self.root_lost = false;
        self.doubted();
        self.send(PathBuf::new(), Kind::RootRestored, None);
        self.rescan();
    }

    /// Events may have been missed: no earlier token vouches for the
    /// paths changed since.
    fn doubted(&mut self) {
        self.token += 1;
        self.doubt = self.token;
    }

    /// Whether `e` moves a folder to a new place in the tree, or moves
    /// something there that is gone already (what it was cannot be told).
    /// A folder moved out of the tree only makes `notify` name paths that
    /// no longer exist, which a snapshot finds gone.
    fn folder_renamed(&self, e: &notify::Event) -> bool {
        let EventKind::Modify(ModifyKind::Name(mode)) = e.kind else {
            return false;
        };
        if mode == RenameMode::From {
            return false;
        }
        e.paths.last().is_some_and(|to| {
            self.relative(to).is_some()
                && std::fs::symlink_metadata(to)
                    .ok()
                    .is_none_or(|m| m.is_dir())
        })
    }

    /// `x` for the path `x/.git` (a nested repository's own folder, not
    /// the root's).
    fn repository_of(&self, path: &Path) -> Option<PathBuf> {
        let rel = path.strip_prefix(&self.root).ok()?;
        if rel.file_name()? != ".git" {
            return None;
        }
        let parent = rel.parent()?;
        (!parent.as_os_str().is_empty() && self.relative(&self.root.join(parent)).is_some())
            .then(|| parent.to_path_buf())
    }

    /// Every tracked file is read again.
    fn rescan(&mut self) {
        let all: Vec<PathBuf> = self.tracked.keys().cloned().collect();
        for p in all {
            self.mark(&p, None);
        }
    }

    /// A tracked path (or tracked paths under a folder) an event named:
    /// read it once settled.
    fn mark(&mut self, path: &Path, open: Option<bool>) {
        self.generation += 1;
        let generation = self.generation;
        let now = Instant::now();
        for (p, t) in &mut self.tracked {
            if !p.starts_with(path) {
                continue;
            }
            let due = t.due.get_or_insert(Due {
                since: now,
                writing: false,
                rechecks: Vec::new(),
                generation,
            });
            due.since = now;
            due.generation = generation;
            // The writer state belongs to the path the event named, not to
            // files under a folder it named.
            if p == path
                && let Some(w) = open
            {
                due.writing = w;
            }
        }
    }

    /// The path relative to the root, unless it is outside it or inside
    /// `.git` or `.mend`.
    fn relative(&self, path: &Path) -> Option<PathBuf> {
        let rel = path.strip_prefix(&self.root).ok()?;
        let private = rel
            .components()
            .any(|c| matches!(c, Component::Normal(n) if n == ".git" || n == ".mend"));
        (!private && !rel.as_os_str().is_empty()).then(|| rel.to_path_buf())
    }

    /// Reports a rename, of a file or a folder, tracked or not: tracking
    /// follows the caller, which may not have caught up with the renames
    /// before this one (a swap through a temporary name is three).
    /// The next read of a tracked path at or under either side is
    /// reported whatever it finds: after a rename, the same bytes at a path
    /// may be another file (a save through a backup writing what was there).
    fn renamed(&mut self, from: &Path, to: &Path) {
        for (p, t) in &mut self.tracked {
            if p.starts_with(from) || p.starts_with(to) {
                t.seen = Seen::Unknown;
            }
        }
        self.send(from.to_path_buf(), Kind::Renamed(to.to_path_buf()), None);
    }

    fn send(&self, path: PathBuf, kind: Kind, recheck: Option<u64>) {
        // A closed receiver means nobody listens any more; the token log
        // stays useful.
        let _ = self.out.send(Change {
            token: self.token,
            path,
            kind,
            recheck,
        });
    }
}
