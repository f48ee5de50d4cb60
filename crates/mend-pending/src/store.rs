//! A session on disk: `.mend/pending/<session>/index.json` lists each
//! file's context and output; texts live in `blobs/`, named by the SHA-256
//! of their UTF-8 text, and are checked against the name when read back.
//! `index.json` and `shown.json` are sealed with the `.mend`'s key (see
//! `mend_workspace::Seal`): an index mend did not write is refused, a
//! record of what was shown is ignored. `lock` is the session's lock: every action that reads the index to
//! change it holds it from that read to the save. `shown.json` records,
//! per file, the version `mend pending diff` last numbered hunks for.
//!
//! **Dropping.** `drop` takes the session's lock, renames the folder to a
//! tombstone (`.dropped-…`, a name no session can have, so nothing lists
//! or opens it), releases the lock and only then removes the tombstone.
//! Whoever takes a session's lock checks, once it holds it, that its lock
//! file is still the one at the session's path (the same inode); if not,
//! the session was dropped meanwhile, and it starts again from the path:
//! a proposal makes a new, empty session there, any other action is told
//! the session is gone. So no process ever works in a folder being
//! removed, and a session made after a drop holds only what came after.
//!
//! Every file of a session is reached through the descriptor of its
//! folder ([`PrivateDir`]), opened without following a link from the
//! verified `.mend`: a link at `pending`, at the session's folder, at
//! `blobs`, at `index.json` or at a blob is refused, never followed, and a
//! folder swapped for a link after the session was opened redirects
//! nothing.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::os::unix::fs::MetadataExt as _;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use mend_workspace::{ContentHash, Encoding, EntryKind, PrivateDir, Workspace};
use serde::{Deserialize, Serialize};

use crate::error::Error;

/// A text as the session holds it: where its UTF-8 text is, the encoding
/// its file uses, and the SHA-256 of its bytes in that encoding (the
/// workspace's file hash, so it compares with what is on disk).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Text {
    /// The hash of the UTF-8 text, which names its blob (bare hex).
    #[serde(with = "mend_core::hash::bare")]
    pub(crate) blob: ContentHash,
    pub(crate) encoding: Encoding,
    pub(crate) hash: ContentHash,
}

/// What the model proposes for a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Output {
    /// The file's new full content.
    Write { text: Text },
    /// Delete the file.
    Delete,
    /// Move the file to `to`, with this content.
    Rename { to: String, text: Text },
}

/// One file of a session.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub(crate) struct Entry {
    /// The file as the model saw it; `None` when it did not exist.
    pub(crate) context: Option<Text>,
    pub(crate) output: Option<Output>,
}

/// The session's index.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Index {
    pub(crate) files: BTreeMap<String, Entry>,
    /// The retry context of the last proposal that failed.
    pub(crate) retry: Option<String>,
}

/// The file whose pending rename moves it to `rel`, and the text it
/// moves there.
pub(crate) fn rename_source<'i>(index: &'i Index, rel: &str) -> Option<(&'i String, &'i Text)> {
    index.files.iter().find_map(|(from, e)| match &e.output {
        Some(Output::Rename { to, text }) if to == rel => Some((from, text)),
        _ => None,
    })
}

/// The session's lock, held for one action; released when dropped.
#[derive(Debug)]
pub(crate) struct Held {
    file: std::fs::File,
}

impl Drop for Held {
    /// Clears the holder's name before the lock is released, so whoever
    /// waits next never names a process that is done with it.
    fn drop(&mut self) {
        let _ = self.file.set_len(0);
    }
}

/// How waiting for the session's lock ended.
pub(crate) enum Wait {
    /// Taken.
    Held(Held),
    /// Still held by another after the timeout.
    Busy {
        /// What the holder wrote into the lock file.
        holder: String,
        /// How long this one waited.
        waited_ms: u128,
    },
}

/// The session's lock file.
pub(crate) const LOCK: &str = "lock";

/// Which version of each file `mend pending diff` last numbered hunks for.
const SHOWN: &str = "shown.json";

/// How a dropped session's folder is named until it is removed: no
/// session name starts with a dot.
const TOMBSTONE: &str = ".dropped-";

/// A session's folder. The folder is the one at the session's path as of
/// the last time the lock was taken: a drop and a new session meanwhile
/// replace it.
pub(crate) struct Store {
    name: String,
    /// Whether taking the lock may make the session again after a drop
    /// (a proposal or a read for a model), or must report it gone.
    create: bool,
    dir: Mutex<PrivateDir>,
}

/// The most an index or a blob may hold: a text is at most the workspace's
/// size limit, and an index lists far fewer bytes of paths and hashes.
const MAX_BYTES: u64 = 1 << 30;

const INDEX: &str = "index.json";
/// Deeper than any session folder mend makes (`blobs/` is one level).
const MAX_DEPTH: usize = 8;
const BLOBS: &str = "blobs";

impl Store {
    /// The session's folder below `.mend/pending/`, made when missing.
    pub(crate) fn create(ws: &Workspace, name: &str) -> Result<Store, Error> {
        let dir = Store::make(ws, name)?;
        Ok(Store::new(name, true, dir))
    }

    /// The session's folder, or `None` when there is no such session.
    pub(crate) fn existing(ws: &Workspace, name: &str) -> Result<Option<Store>, Error> {
        let dir = Store::find(ws, name)?;
        Ok(dir.map(|d| Store::new(name, false, d)))
    }

    fn new(name: &str, create: bool, dir: PrivateDir) -> Store {
        Store {
            name: name.to_owned(),
            create,
            dir: Mutex::new(dir),
        }
    }

    /// The folder at the session's path, made when missing.
    fn make(ws: &Workspace, name: &str) -> Result<PrivateDir, Error> {
        let dir = ws
            .private_dir()?
            .create_dir(&format!("{SESSIONS}/{name}"))?;
        Store::checked(dir)
    }

    /// The folder at the session's path, if there is one.
    fn find(ws: &Workspace, name: &str) -> Result<Option<PrivateDir>, Error> {
        let dir = ws.private_dir()?.dir(&format!("{SESSIONS}/{name}"))?;
        dir.map(Store::checked).transpose()
    }

    /// A session folder holding a link anywhere (mend makes none) is
    /// refused when it is opened, naming the link, rather than part-way
    /// through an action; one made later is refused where it is met.
    fn checked(dir: PrivateDir) -> Result<PrivateDir, Error> {
        dir.refuse_links(MAX_DEPTH)?;
        Ok(dir)
    }

    /// The session's folder as of the last lock taken.
    pub(crate) fn dir(&self) -> PrivateDir {
        self.dir
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn set_dir(&self, dir: PrivateDir) {
        *self.dir.lock().unwrap_or_else(PoisonError::into_inner) = dir;
    }

    /// The names of the session folders; a link among them is refused,
    /// naming what to remove, and anything else but a folder is not a
    /// session.
    pub(crate) fn names(ws: &Workspace) -> Result<Vec<String>, Error> {
        let Some(sessions) = ws.private_dir()?.dir(SESSIONS)? else {
            return Ok(Vec::new());
        };
        let mut names = Vec::new();
        for (name, kind) in sessions.list()? {
            let Some(name) = name.to_str().filter(|n| valid_name(n)) else {
                continue;
            };
            match kind {
                EntryKind::Dir => names.push(name.to_owned()),
                // Opening it names the link.
                EntryKind::Link => drop(sessions.dir(name)?),
                EntryKind::File | EntryKind::Other => {}
            }
        }
        Ok(names)
    }

    /// Drops the session: under its lock (`held`, taken through this
    /// store), renames its folder to a tombstone nothing lists or opens,
    /// releases the lock, and removes the tombstone. A tombstone left by a
    /// drop that was interrupted is removed too.
    pub(crate) fn remove(&self, ws: &Workspace, held: Held) -> Result<(), Error> {
        let sessions = ws
            .private_dir()?
            .dir(SESSIONS)?
            .ok_or_else(|| Error::Dropped(self.name.clone()))?;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let tomb = format!(
            "{TOMBSTONE}{}-{}-{}-{nanos}",
            self.name,
            std::process::id(),
            unique()
        );
        sessions.rename(&self.name, &tomb)?;
        drop(held);
        let mut tombs = vec![tomb];
        for (name, kind) in sessions.list()? {
            let name = name.to_string_lossy().into_owned();
            if kind == EntryKind::Dir && name.starts_with(TOMBSTONE) && !tombs.contains(&name) {
                tombs.push(name);
            }
        }
        for t in tombs {
            remove_tomb(&sessions, &t);
        }
        Ok(())
    }

    /// The session's name.
    pub(crate) fn name(&self) -> String {
        self.name.clone()
    }

    /// Takes the session's lock, waiting up to `timeout` for another
    /// holder, and checks that it is the lock of the folder at the
    /// session's path (see the module docs); after a drop it starts again
    /// from that path. The holder writes `holder` and its process id into
    /// the lock file, so one that waits can say what it waited for.
    pub(crate) fn lock(
        &self,
        ws: &Workspace,
        timeout: Duration,
        holder: &str,
    ) -> Result<Wait, Error> {
        let start = Instant::now();
        loop {
            let dir = self.dir();
            let file = match open_lock(&dir, LOCK) {
                Ok(file) => file,
                // The folder may have been dropped since it was opened.
                Err(_) if self.moved(ws, &dir)? => continue,
                Err(e) => return Err(e),
            };
            if let Some(busy) = wait_for(&dir, &file, start, timeout)? {
                return Ok(busy);
            }
            let Some(here) = self.at_path(ws)? else {
                return Err(Error::Dropped(self.name.clone()));
            };
            if same_file(&here, &file)? {
                // Who holds it is a courtesy to whoever waits; failing to
                // say so does not stop the action.
                let _ = file.set_len(0).and_then(|()| {
                    (&file).write_all(format!("{holder} (pid {})\n", std::process::id()).as_bytes())
                });
                return Ok(Wait::Held(Held { file }));
            }
            // Dropped while this one waited: a folder made since then is
            // another session, started again from its path.
            if !self.create {
                return Err(Error::Dropped(self.name.clone()));
            }
            self.set_dir(Store::checked(here)?);
        }
    }

    /// The folder at the session's path now (made when this store may
    /// make it), not checked for links: the caller checks a new one.
    fn at_path(&self, ws: &Workspace) -> Result<Option<PrivateDir>, Error> {
        let private = ws.private_dir()?;
        let rel = format!("{SESSIONS}/{}", self.name);
        Ok(if self.create {
            Some(private.create_dir(&rel)?)
        } else {
            private.dir(&rel)?
        })
    }

    /// Whether the folder at the session's path is another than `dir` (it
    /// was dropped, and perhaps made again), in which case the store now
    /// holds that one.
    pub(crate) fn moved(&self, ws: &Workspace, dir: &PrivateDir) -> Result<bool, Error> {
        let Some(here) = self.at_path(ws)? else {
            return Err(Error::Dropped(self.name.clone()));
        };
        if identity(&here).is_some() && identity(&here) == identity(dir) {
            return Ok(false);
        }
        self.set_dir(Store::checked(here)?);
        Ok(true)
    }

    /// Where the index is, for a watcher that compares its metadata; the
    /// session itself never reads or writes it by this path.
    pub(crate) fn index_path(&self) -> std::path::PathBuf {
        self.dir().path().join(INDEX)
    }

    /// What a file of the session is sealed for: its name within the
    /// session and the session's, so one moved from another session does
    /// not verify.
    fn purpose(&self, file: &str) -> String {
        format!("pending/{}/{file}", self.name())
    }

    /// The index. One whose seal does not verify is refused as damaged
    /// (`mend pending drop` clears it): a planted index would put words in
    /// the model's mouth that accepting writes.
    pub(crate) fn load(&self) -> Result<Index, Error> {
        let dir = self.dir();
        let bytes = match dir.read_sealed(INDEX, &self.purpose(INDEX), MAX_BYTES) {
            Ok(b) => b,
            Err(e @ mend_workspace::Error::Unsealed { .. }) => {
                return Err(Error::Corrupt {
                    session: self.name(),
                    what: format!("{e}, so what it proposes is not trusted"),
                });
            }
            Err(e) => return Err(e.into()),
        };
        match bytes {
            Some(bytes) => serde_json::from_slice(&bytes).map_err(|e| Error::Corrupt {
                session: self.name(),
                what: format!("{} is unreadable ({e})", dir.shown(INDEX)),
            }),
            None => Ok(Index::default()),
        }
    }

    pub(crate) fn save(&self, index: &Index) -> Result<(), Error> {
        let bytes = serde_json::to_vec_pretty(index).expect("the index serializes");
        self.dir()
            .write_sealed(INDEX, &self.purpose(INDEX), &bytes)?;
        Ok(())
    }

    /// The versions `mend pending diff` last numbered hunks for, by path.
    /// A record that cannot be read, or whose seal does not verify, is no
    /// record: it only ever makes `--hunk` stricter, while a planted one
    /// could let `--hunk` act on hunks nobody was shown.
    pub(crate) fn shown(&self) -> BTreeMap<String, String> {
        self.dir()
            .read_sealed(SHOWN, &self.purpose(SHOWN), MAX_BYTES)
            .ok()
            .flatten()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    pub(crate) fn save_shown(&self, shown: &BTreeMap<String, String>) -> Result<(), Error> {
        let bytes = serde_json::to_vec_pretty(shown).expect("the record serializes");
        self.dir()
            .write_sealed(SHOWN, &self.purpose(SHOWN), &bytes)?;
        Ok(())
    }

    /// Stores a text and returns how the index refers to it.
    pub(crate) fn put(&self, text: &str, encoding: Encoding) -> Result<Text, Error> {
        let blob = ContentHash::of(text.as_bytes());
        let blobs = self.dir().create_dir(BLOBS)?;
        if blobs.kind(&blob.hex())? != Some(EntryKind::File) {
            blobs.write(&blob.hex(), text.as_bytes())?;
        }
        let hash = ContentHash::of(&mend_workspace::encode(text, encoding));
        Ok(Text {
            blob,
            encoding,
            hash,
        })
    }

    /// A stored text, checked against its name.
    pub(crate) fn get(&self, text: &Text) -> Result<String, Error> {
        let rel = format!("{BLOBS}/{}", text.blob.hex());
        let dir = self.dir();
        let shown = dir.shown(&rel);
        let bytes = dir.read(&rel, MAX_BYTES)?.ok_or_else(|| Error::Corrupt {
            session: self.name(),
            what: format!("{shown} is missing"),
        })?;
        if ContentHash::of(&bytes) != text.blob {
            return Err(Error::Corrupt {
                session: self.name(),
                what: format!("{shown} does not hold the text it is named for"),
            });
        }
        String::from_utf8(bytes).map_err(|_| Error::Corrupt {
            session: self.name(),
            what: format!("{shown} is not UTF-8"),
        })
    }
}

/// Whether a session name is safe as one folder name.
pub(crate) fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// The sessions folder of a workspace's private folder.
const SESSIONS: &str = "pending";

/// Opens the lock file `rel` of `dir` (the session's lock, or the
/// request lock), made when missing. Anything else there (mend makes only
/// a regular file) is refused, naming what to remove.
pub(crate) fn open_lock(dir: &PrivateDir, rel: &str) -> Result<std::fs::File, Error> {
    let what = match dir.kind(rel)? {
        None | Some(EntryKind::File) => return Ok(dir.open_write(rel, true, false)?),
        Some(EntryKind::Dir) => "a folder",
        Some(EntryKind::Link) => "a symbolic link",
        Some(EntryKind::Other) => "a FIFO, socket or device",
    };
    let path = dir.shown(rel);
    Err(Error::Workspace(mend_workspace::Error::Tampered {
        fix: format!(
            "Remove it (`rm {}`; a folder: `rm -r`), then run the command again: mend makes a new lock file, and the session loses nothing.",
            mend_core::text::escape_controls(&path)
        ),
        what: format!("{what}, not the session's lock file"),
        path,
    }))
}

/// Waits for the lock of `file` until `timeout` has passed since `start`;
/// `Some` says who holds it when that time is up.
fn wait_for(
    dir: &PrivateDir,
    file: &std::fs::File,
    start: Instant,
    timeout: Duration,
) -> Result<Option<Wait>, Error> {
    poll_lock(dir, (file, LOCK), false, start, timeout)
}

/// Polls for the lock of `file` (named `rel` in messages), shared or
/// exclusive, until `timeout` has passed since `start`; `Some` says who
/// holds the session's lock when that time is up (an action holds both).
pub(crate) fn poll_lock(
    dir: &PrivateDir,
    (file, rel): (&std::fs::File, &str),
    shared: bool,
    start: Instant,
    timeout: Duration,
) -> Result<Option<Wait>, Error> {
    loop {
        let tried = if shared {
            file.try_lock_shared()
        } else {
            file.try_lock()
        };
        match tried {
            Ok(()) => return Ok(None),
            Err(std::fs::TryLockError::WouldBlock) if start.elapsed() >= timeout => {
                let said = dir.read(LOCK, 4096).ok().flatten().unwrap_or_default();
                let holder = match String::from_utf8_lossy(&said).trim() {
                    "" => "another process".to_owned(),
                    h => h.to_owned(),
                };
                return Ok(Some(Wait::Busy {
                    holder,
                    waited_ms: start.elapsed().as_millis(),
                }));
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(std::fs::TryLockError::Error(cause)) => {
                return Err(Error::Io {
                    context: format!("locking {}", dir.shown(rel)),
                    cause,
                });
            }
        }
    }
}

/// Whether `file` is the lock file of `dir` now (the same inode).
fn same_file(dir: &PrivateDir, file: &std::fs::File) -> Result<bool, Error> {
    if dir.kind(LOCK)? != Some(EntryKind::File) {
        return Ok(false);
    }
    let there = dir.open_write(LOCK, false, false)?;
    let io = |cause| Error::Io {
        context: format!("checking {}", dir.shown(LOCK)),
        cause,
    };
    let (a, b) = (file.metadata().map_err(io)?, there.metadata().map_err(io)?);
    Ok(a.dev() == b.dev() && a.ino() == b.ino())
}

/// Removes a dropped session's tombstone. A process that opened the
/// folder before the drop may still make its lock file in it once the
/// drop released the lock (it then sees the lock is not the session's,
/// and leaves); so emptying is tried a few times. What is left is removed
/// by the next drop: nothing lists or opens a tombstone meanwhile.
fn remove_tomb(sessions: &PrivateDir, tomb: &str) {
    for _ in 0..20 {
        if sessions.remove_tree(tomb).is_ok() {
            return;
        }
        std::thread::yield_now();
    }
}

/// The device and inode of a folder, to tell two folders apart.
fn identity(dir: &PrivateDir) -> Option<(u64, u64)> {
    use std::os::fd::AsFd as _;
    let fd = dir.as_fd().try_clone_to_owned().ok()?;
    let meta = std::fs::File::from(fd).metadata().ok()?;
    Some((meta.dev(), meta.ino()))
}

/// A number that differs between calls in one process.
fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}
