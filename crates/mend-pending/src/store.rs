//! A session on disk: `.mend/pending/<session>/index.json` lists each
//! file's context and output; texts live in `blobs/`, named by the SHA-256
//! of their UTF-8 text, and are checked against the name when read back.
//! `lock` is the session's lock: every action that reads the index to
//! change it holds it from that read to the save.
//!
//! Every file of a session is reached through the descriptor of its
//! folder ([`PrivateDir`]), opened without following a link from the
//! verified `.mend`: a link at `pending`, at the session's folder, at
//! `blobs`, at `index.json` or at a blob is refused, never followed, and a
//! folder swapped for a link after the session was opened redirects
//! nothing.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::time::{Duration, Instant};

use mend_workspace::{Encoding, EntryKind, PrivateDir, Workspace};
use serde::{Deserialize, Serialize};

use crate::error::Error;

/// A text as the session holds it: where its UTF-8 text is, the encoding
/// its file uses, and the SHA-256 of its bytes in that encoding (the
/// workspace's file hash, so it compares with what is on disk).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Text {
    pub(crate) blob: String,
    pub(crate) encoding: Encoding,
    pub(crate) hash: String,
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
    _file: std::fs::File,
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
const LOCK: &str = "lock";

/// A session's folder.
pub(crate) struct Store {
    pub(crate) dir: PrivateDir,
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
        let dir = ws
            .private_dir()?
            .create_dir(&format!("{SESSIONS}/{name}"))?;
        Store::checked(dir)
    }

    /// The session's folder, or `None` when there is no such session.
    pub(crate) fn existing(ws: &Workspace, name: &str) -> Result<Option<Store>, Error> {
        let dir = ws.private_dir()?.dir(&format!("{SESSIONS}/{name}"))?;
        dir.map(Store::checked).transpose()
    }

    /// A session folder holding a link anywhere (mend makes none) is
    /// refused when it is opened, naming the link, rather than part-way
    /// through an action; one made later is refused where it is met.
    fn checked(dir: PrivateDir) -> Result<Store, Error> {
        dir.refuse_links(MAX_DEPTH)?;
        Ok(Store { dir })
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

    /// Removes the session `name`'s folder and everything in it, following
    /// no link. A link inside (mend never makes one) is refused, naming it,
    /// so whoever planted it learns of it rather than losing the trace.
    pub(crate) fn remove(ws: &Workspace, name: &str) -> Result<bool, Error> {
        let Some(sessions) = ws.private_dir()?.dir(SESSIONS)? else {
            return Ok(false);
        };
        if let Some(dir) = sessions.dir(name)? {
            Store::checked(dir)?;
        }
        Ok(sessions.remove_tree(name)?)
    }

    /// The session's name: its folder's.
    pub(crate) fn name(&self) -> String {
        self.dir
            .path()
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// Takes the session's lock, waiting up to `timeout` for another
    /// holder. The holder writes `holder` and its process id into the lock
    /// file, so one that waits can say what it waited for.
    pub(crate) fn lock(&self, timeout: Duration, holder: &str) -> Result<Wait, Error> {
        let file = self.dir.open_write(LOCK, true, false)?;
        let start = Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(std::fs::TryLockError::WouldBlock) if start.elapsed() >= timeout => {
                    let said = self.dir.read(LOCK, 4096).ok().flatten().unwrap_or_default();
                    let holder = match String::from_utf8_lossy(&said).trim() {
                        "" => "another mend process".to_owned(),
                        h => h.to_owned(),
                    };
                    return Ok(Wait::Busy {
                        holder,
                        waited_ms: start.elapsed().as_millis(),
                    });
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(std::fs::TryLockError::Error(cause)) => {
                    return Err(Error::Io {
                        context: format!("locking {}", self.dir.shown(LOCK)),
                        cause,
                    });
                }
            }
        }
        // Who holds it is a courtesy to whoever waits; failing to say so
        // does not stop the action.
        let _ = file.set_len(0).and_then(|()| {
            (&file).write_all(format!("{holder} (pid {})\n", std::process::id()).as_bytes())
        });
        Ok(Wait::Held(Held { _file: file }))
    }

    /// Where the index is, for a watcher that compares its metadata; the
    /// session itself never reads or writes it by this path.
    pub(crate) fn index_path(&self) -> std::path::PathBuf {
        self.dir.path().join(INDEX)
    }

    pub(crate) fn load(&self) -> Result<Index, Error> {
        match self.dir.read(INDEX, MAX_BYTES)? {
            Some(bytes) => serde_json::from_slice(&bytes).map_err(|e| Error::Corrupt {
                session: self.name(),
                what: format!("{} is unreadable ({e})", self.dir.shown(INDEX)),
            }),
            None => Ok(Index::default()),
        }
    }

    pub(crate) fn save(&self, index: &Index) -> Result<(), Error> {
        let bytes = serde_json::to_vec_pretty(index).expect("the index serializes");
        self.dir.write(INDEX, &bytes)?;
        Ok(())
    }

    /// Stores a text and returns how the index refers to it.
    pub(crate) fn put(&self, text: &str, encoding: Encoding) -> Result<Text, Error> {
        let blob = mend_workspace::hash_bytes(text.as_bytes())
            .trim_start_matches("sha256:")
            .to_owned();
        let blobs = self.dir.create_dir(BLOBS)?;
        if blobs.kind(&blob)? != Some(EntryKind::File) {
            blobs.write(&blob, text.as_bytes())?;
        }
        let hash = mend_workspace::hash_bytes(&mend_workspace::encode(text, encoding));
        Ok(Text {
            blob,
            encoding,
            hash,
        })
    }

    /// A stored text, checked against its name.
    pub(crate) fn get(&self, text: &Text) -> Result<String, Error> {
        let rel = format!("{BLOBS}/{}", text.blob);
        let shown = self.dir.shown(&rel);
        let bytes = self
            .dir
            .read(&rel, MAX_BYTES)?
            .ok_or_else(|| Error::Corrupt {
                session: self.name(),
                what: format!("{shown} is missing"),
            })?;
        let name = mend_workspace::hash_bytes(&bytes);
        if name.trim_start_matches("sha256:") != text.blob {
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
