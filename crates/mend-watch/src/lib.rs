//! Watching a workspace for changes made by other programs.
//!
//! A [`Watcher`] watches the root's folders recursively through `notify`,
//! with `notify-debouncer-full` joining bursts (about 100 ms) and pairing
//! rename halves. Events are only a hint: whatever kind an event has, the
//! watcher re-reads and hashes each tracked file it names. That catches
//! every way of writing a file: in place, truncate-and-write, and the
//! temp-file-then-rename save, which on Linux reaches a watcher only as a
//! rename.
//!
//! - **Tracked files** ([`Watcher::track`]) are reported on the channel as
//!   a [`Change`] when their content differs from the last content seen,
//!   when they are removed, and when they are renamed (the tracking moves
//!   with them). Binary files and files over the size limit are reported,
//!   without their bytes.
//! - **Self-writes** are suppressed by content hash, not by time windows:
//!   [`Watcher::expect`] names bytes about to be written, and the change
//!   that brings exactly those bytes is not reported.
//! - **Every path** that an event names bumps a monotonic change token, so
//!   a client can ask what changed since token T
//!   ([`Watcher::changed_since`]).
//!
//! [`Buffers`] joins the watcher with `mend-sync`'s state machine for the
//! buffers of an editor.
//!
//! Paths in and out are relative to the root. `.git` and `.mend` are not
//! worktree content and are ignored.

mod buffers;

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};
use notify::RecursiveMode;
use notify::event::{EventKind, ModifyKind, RenameMode};
use notify_debouncer_full::{DebounceEventResult, DebouncedEvent, Debouncer, RecommendedCache};
use sha2::{Digest, Sha256};

pub use buffers::{BufferStatus, Buffers, Notice};

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
    /// An event for a buffer the editor never opened.
    #[error("{0} is not open; send buffer/open first")]
    NotOpen(String),
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

/// Watcher settings.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// How long a path must be quiet before its events are reported.
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
            debounce: Duration::from_millis(100),
            max_bytes: 8 << 20,
            recursive: true,
        }
    }
}

/// What happened to a tracked file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// Its content is now these bytes.
    Content(Vec<u8>),
    /// Its content changed to something with a NUL byte.
    Binary,
    /// Its content changed, and it is larger than the limit.
    TooLarge(u64),
    /// It no longer exists.
    Removed,
    /// It was renamed to this path (relative to the root); it is tracked
    /// there now.
    Renamed(PathBuf),
}

/// A change to a tracked file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The change token after this change.
    pub token: u64,
    /// The file, relative to the root (its old path for a rename).
    pub path: PathBuf,
    /// What happened.
    pub kind: Kind,
}

type Hash = [u8; 32];

/// How long a file must have been left alone before its bytes are taken
/// as what its writer meant.
const SETTLE: Duration = Duration::from_millis(50);

/// Reads a file once it has settled. The debouncer reports a path after
/// its events went quiet, but a writer may start again just then (truncate,
/// then write): bytes read in between are a half-written file, and merging
/// them would take most of the buffer out. A file modified less than
/// [`SETTLE`] ago is waited for, and a file that changed while it was read
/// is read again; after a few tries the last read stands.
fn read_settled(path: &Path) -> Option<Vec<u8>> {
    let stamp = |p: &Path| {
        std::fs::metadata(p)
            .ok()
            .map(|m| (m.len(), m.modified().ok()))
    };
    let mut last = None;
    for _ in 0..4 {
        let before = stamp(path)?;
        if let Some(age) = before.1.and_then(|t| t.elapsed().ok())
            && age < SETTLE
        {
            std::thread::sleep(SETTLE - age);
            continue;
        }
        let bytes = std::fs::read(path).ok()?;
        if stamp(path)? == before {
            return Some(bytes);
        }
        last = Some(bytes);
    }
    last.or_else(|| std::fs::read(path).ok())
}

fn hash(bytes: &[u8]) -> Hash {
    Sha256::digest(bytes).into()
}

/// The watcher's state, shared with the debouncer's thread.
struct Shared {
    root: PathBuf,
    max_bytes: u64,
    token: u64,
    /// Every path an event named, with the token of its last change.
    changed: HashMap<PathBuf, u64>,
    /// Tracked files and the hash of their last content seen (`None`:
    /// absent, or unknown).
    tracked: HashMap<PathBuf, Option<Hash>>,
    /// Content about to be written by this process, per file.
    expected: HashMap<PathBuf, Vec<Hash>>,
    out: Sender<Change>,
}

/// A running watch of one root. Dropping it stops the watch.
pub struct Watcher {
    shared: Arc<Mutex<Shared>>,
    debouncer: Mutex<Debouncer<notify::RecommendedWatcher, RecommendedCache>>,
    /// Whether the whole tree is watched; otherwise tracking a file watches
    /// its folder.
    recursive: bool,
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
        let root = root.canonicalize().map_err(|source| Error::Root {
            path: root.to_path_buf(),
            source,
        })?;
        let (tx, rx) = crossbeam_channel::unbounded();
        let shared = Arc::new(Mutex::new(Shared {
            root: root.clone(),
            max_bytes: opts.max_bytes,
            token: 0,
            changed: HashMap::new(),
            tracked: HashMap::new(),
            expected: HashMap::new(),
            out: tx,
        }));
        let handler = {
            let shared = Arc::clone(&shared);
            move |res: DebounceEventResult| {
                // Errors (a queue overflow, a folder gone) are followed by
                // events for what is still there; nothing to recover here.
                if let Ok(events) = res {
                    lock(&shared).handle(&events);
                }
            }
        };
        let watch_err = |source| Error::Watch {
            path: root.clone(),
            source,
        };
        // A link inside the tree may lead anywhere, the whole disk
        // included: never watch through one.
        let config = notify::Config::default().with_follow_symlinks(false);
        let mut debouncer = notify_debouncer_full::new_debouncer_opt(
            opts.debounce,
            None,
            handler,
            RecommendedCache::new(),
            config,
        )
        .map_err(watch_err)?;
        let mut recursive = opts.recursive;
        if recursive && debouncer.watch(&root, RecursiveMode::Recursive).is_err() {
            // Typically the inotify watch limit in a very large tree.
            let _ = debouncer.unwatch(&root);
            recursive = false;
        }
        if !recursive {
            debouncer
                .watch(&root, RecursiveMode::NonRecursive)
                .map_err(watch_err)?;
        }
        Ok((
            Watcher {
                shared,
                debouncer: Mutex::new(debouncer),
                recursive,
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
    /// a change); `None` when it does not exist or is unknown.
    pub fn track(&self, path: &Path, content: Option<&[u8]>) {
        let root = {
            let mut s = lock(&self.shared);
            s.tracked.insert(path.to_path_buf(), content.map(hash));
            s.root.clone()
        };
        if !self.recursive
            && let Some(folder) = root.join(path).parent()
        {
            let mut d = self
                .debouncer
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
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

    /// The paths changed after `token`, sorted.
    pub fn changed_since(&self, token: u64) -> Vec<PathBuf> {
        let s = lock(&self.shared);
        let mut paths: Vec<PathBuf> = s
            .changed
            .iter()
            .filter(|&(_, &t)| t > token)
            .map(|(p, _)| p.clone())
            .collect();
        paths.sort();
        paths
    }
}

impl Shared {
    fn handle(&mut self, events: &[DebouncedEvent]) {
        for e in events {
            let paths: Vec<PathBuf> = e.paths.iter().filter_map(|p| self.relative(p)).collect();
            if paths.is_empty() {
                continue;
            }
            for p in &paths {
                self.token += 1;
                self.changed.insert(p.clone(), self.token);
            }
            let rename = EventKind::Modify(ModifyKind::Name(RenameMode::Both));
            if e.kind == rename
                && let [from, to] = &e.paths[..]
                && let (Some(from), Some(to)) = (self.relative(from), self.relative(to))
            {
                self.renamed(&from, &to);
            }
            for p in paths {
                self.examine(&p);
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

    /// Moves the tracking of `from` (or of files under it, when a folder
    /// moved) to `to`, and reports each move.
    fn renamed(&mut self, from: &Path, to: &Path) {
        let moved: Vec<PathBuf> = self
            .tracked
            .keys()
            .filter(|p| p.starts_with(from))
            .cloned()
            .collect();
        for old in moved {
            let Ok(rest) = old.strip_prefix(from) else {
                continue;
            };
            let new = if rest.as_os_str().is_empty() {
                to.to_path_buf()
            } else {
                to.join(rest)
            };
            if let Some(h) = self.tracked.remove(&old) {
                self.tracked.insert(new.clone(), h);
            }
            self.send(old, Kind::Renamed(new));
        }
    }

    /// Re-reads a tracked file and reports it if its content changed.
    fn examine(&mut self, rel: &Path) {
        let Some(&known) = self.tracked.get(rel) else {
            return;
        };
        let abs = self.root.join(rel);
        let meta = match std::fs::symlink_metadata(&abs) {
            Ok(m) if m.is_file() || m.is_symlink() => m,
            // Gone, or a folder now.
            Ok(_) | Err(_) => {
                if known.is_some() {
                    self.tracked.insert(rel.to_path_buf(), None);
                    self.send(rel.to_path_buf(), Kind::Removed);
                }
                return;
            }
        };
        let len = std::fs::metadata(&abs).map_or(meta.len(), |m| m.len());
        if len > self.max_bytes {
            self.tracked.insert(rel.to_path_buf(), None);
            self.send(rel.to_path_buf(), Kind::TooLarge(len));
            return;
        }
        // A file that vanished between the event and now is reported by
        // the event that removed it.
        let Some(bytes) = read_settled(&abs) else {
            return;
        };
        let h = hash(&bytes);
        if known == Some(h) {
            return;
        }
        self.tracked.insert(rel.to_path_buf(), Some(h));
        if let Some(hashes) = self.expected.get_mut(rel)
            && let Some(i) = hashes.iter().position(|x| *x == h)
        {
            hashes.drain(..=i);
            return;
        }
        let kind = if bytes.contains(&0) {
            Kind::Binary
        } else {
            Kind::Content(bytes)
        };
        self.send(rel.to_path_buf(), kind);
    }

    fn send(&self, path: PathBuf, kind: Kind) {
        // A closed receiver means nobody listens any more; the token log
        // stays useful.
        let _ = self.out.send(Change {
            token: self.token,
            path,
            kind,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer that truncates, pauses and writes: reading right after the
    /// truncation waits for the write instead of taking the empty file.
    #[test]
    fn a_half_written_file_is_waited_for() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.txt");
        std::fs::write(&path, "old\n").unwrap();
        let f = std::fs::File::create(&path).unwrap();
        let writer = {
            let path = path.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                std::fs::write(path, "new\n").unwrap();
                drop(f);
            })
        };
        assert_eq!(read_settled(&path).as_deref(), Some(&b"new\n"[..]));
        writer.join().unwrap();
    }
}
