//! mend's filesystem shell: everything mend reads or writes in a project
//! goes through a [`Workspace`].
//!
//! - **Confinement**: [`Workspace::resolve`] refuses absolute paths outside
//!   the root, `..` escapes, symlinks leading out, `.git/`, NUL bytes and
//!   Windows drive or UNC forms. Targets are checked again at commit time.
//! - **Exact encodings**: [`Workspace::read`] returns UTF-8 text as is (BOM
//!   included) and decodes UTF-16 with a BOM; a commit writes each file back
//!   in the encoding it was read in. Binary files and other encodings are
//!   refused; U+FFFD is never substituted.
//! - **Staleness**: each read carries a SHA-256 of the bytes; a commit
//!   re-reads every target under the lock and refuses one that changed,
//!   with a diff of what changed.
//! - **Atomicity**: [`Workspace::commit`] applies creates, writes, deletes
//!   and renames as one journaled transaction (see the `txn` module); after
//!   a crash, [`Workspace::recover`] rolls it back or forward.
//! - **Concurrency**: [`Workspace::lock`] takes an advisory lock on
//!   `.mend/lock`, so two mend processes never interleave their commits.
//!
//! ```no_run
//! use mend_workspace::{Base, Change, Options, Workspace};
//!
//! let ws = Workspace::open(".".as_ref(), Options::default())?;
//! let lock = ws.lock()?;
//! ws.recover(&lock)?;
//! let snap = ws.read("src/lib.rs")?;
//! if let Some(file) = snap.text() {
//!     let new = file.text.replace("old", "new");
//!     ws.commit(&lock, &[Change::Write {
//!         path: snap.rel.clone(),
//!         text: new,
//!         encoding: file.encoding,
//!         base: Base::Hash(file.hash.clone()),
//!         mode_from: None,
//!         executable: None,
//!     }])?;
//! }
//! # Ok::<(), mend_workspace::Error>(())
//! ```

mod encoding;
mod error;
mod path;
mod txn;

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

pub use encoding::Encoding;
pub use error::Error;
pub use txn::Recovery;

/// Workspace settings.
#[derive(Debug, Clone)]
pub struct Options {
    /// Files larger than this are refused.
    pub max_bytes: u64,
    /// How long to wait for another mend process's lock.
    pub lock_timeout: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_bytes: 20 * 1024 * 1024,
            lock_timeout: Duration::from_secs(30),
        }
    }
}

/// A project root that mend may read and write inside.
#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
    opts: Options,
}

/// A text file as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextFile {
    /// The text (a UTF-8 BOM stays as U+FEFF at the start).
    pub text: String,
    /// How it was encoded on disk.
    pub encoding: Encoding,
    /// `sha256:<hex>` of the bytes on disk.
    pub hash: String,
}

/// A path and what is there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The path relative to the root, normalized (`a/./b` → `a/b`).
    pub rel: String,
    /// The absolute path.
    pub path: PathBuf,
    /// The file, or `None` when nothing is there.
    pub file: Option<TextFile>,
}

impl Snapshot {
    /// The text file, when one exists.
    pub fn text(&self) -> Option<&TextFile> {
        self.file.as_ref()
    }
}

/// What a change expects to find on disk when it commits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Base {
    /// No file may exist (a creation).
    Absent,
    /// The file's bytes must still hash to this.
    Hash(String),
    /// Whatever is there is replaced (a checkpoint restore, which saved the
    /// current state first).
    Any,
}

/// One change of a transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Write `text` at `path` in `encoding`.
    Write {
        /// Target, relative to the root.
        path: String,
        /// New content.
        text: String,
        /// Encoding to write.
        encoding: Encoding,
        /// What must be there now.
        base: Base,
        /// Take the file mode from this file (a rename's source).
        mode_from: Option<String>,
        /// Set (`true`) or clear (`false`) the executable bits.
        executable: Option<bool>,
    },
    /// Write raw bytes (binary files included) at `path`.
    Bytes {
        /// Target, relative to the root.
        path: String,
        /// New content.
        bytes: Vec<u8>,
        /// What must be there now.
        base: Base,
        /// Set (`true`) or clear (`false`) the executable bits.
        executable: Option<bool>,
    },
    /// Delete the file at `path`.
    Delete {
        /// Target, relative to the root.
        path: String,
        /// What must be there now.
        base: Base,
    },
}

/// The workspace lock; released when dropped.
#[derive(Debug)]
#[must_use = "the lock is released when dropped"]
pub struct Lock {
    _file: fs::File,
}

/// `sha256:<hex>` of some bytes.
pub fn hash_bytes(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut s = String::with_capacity(71);
    s.push_str("sha256:");
    for b in digest {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

impl Workspace {
    /// Opens the workspace at `root`, an existing directory.
    pub fn open(root: &Path, opts: Options) -> Result<Self, Error> {
        let root = root
            .canonicalize()
            .map_err(|e| Error::io(format!("opening root {}", root.display()), e))?;
        if !root.is_dir() {
            return Err(Error::io(
                format!("opening root {}", root.display()),
                std::io::Error::new(std::io::ErrorKind::NotADirectory, "not a directory"),
            ));
        }
        Ok(Workspace { root, opts })
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The settings.
    pub fn options(&self) -> &Options {
        &self.opts
    }

    /// Normalizes a model-supplied path to its root-relative form.
    pub fn normalize(&self, raw: &str) -> Result<String, Error> {
        Ok(path::normalize(&self.root, raw)?.join("/"))
    }

    /// Resolves a model-supplied path to an absolute path inside the root.
    pub fn resolve(&self, raw: &str) -> Result<PathBuf, Error> {
        path::resolve(&self.root, raw)
    }

    /// Reads a file as text.
    pub fn read(&self, raw: &str) -> Result<Snapshot, Error> {
        let rel = self.normalize(raw)?;
        let path = self.resolve(raw)?;
        let file = self.read_at(&path, &rel)?;
        Ok(Snapshot { rel, path, file })
    }

    fn read_at(&self, path: &Path, rel: &str) -> Result<Option<TextFile>, Error> {
        let meta = match fs::metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(format!("reading {rel}"), e)),
        };
        if meta.is_dir() {
            return Err(Error::PathRefused {
                path: rel.to_owned(),
                reason: "is a directory, not a file".into(),
            });
        }
        if meta.len() > self.opts.max_bytes {
            return Err(Error::TooLarge {
                path: rel.to_owned(),
                size: meta.len(),
                limit: self.opts.max_bytes,
            });
        }
        let bytes = fs::read(path).map_err(|e| Error::io(format!("reading {rel}"), e))?;
        let (text, encoding) = encoding::decode(&bytes).map_err(|u| match u {
            encoding::Undecodable::Binary => Error::Binary {
                path: rel.to_owned(),
            },
            encoding::Undecodable::NotText(detail) => Error::NotText {
                path: rel.to_owned(),
                detail,
            },
        })?;
        Ok(Some(TextFile {
            text,
            encoding,
            hash: hash_bytes(&bytes),
        }))
    }

    /// `.mend/`, created on first use and kept out of version control.
    fn mend_dir(&self) -> Result<PathBuf, Error> {
        let dir = self.root.join(".mend");
        if !dir.is_dir() {
            fs::create_dir_all(&dir).map_err(|e| Error::io("creating .mend", e))?;
            fs::write(dir.join(".gitignore"), "*\n")
                .map_err(|e| Error::io("writing .mend/.gitignore", e))?;
            self.exclude_from_git()?;
        }
        Ok(dir)
    }

    /// Adds `.mend/` to `.git/info/exclude` when the root is a git repo.
    fn exclude_from_git(&self) -> Result<(), Error> {
        let git = self.root.join(".git");
        if !git.is_dir() {
            return Ok(());
        }
        let info = git.join("info");
        fs::create_dir_all(&info).map_err(|e| Error::io("creating .git/info", e))?;
        let exclude = info.join("exclude");
        let current = fs::read_to_string(&exclude).unwrap_or_default();
        if current
            .lines()
            .any(|l| l.trim() == ".mend/" || l.trim() == "/.mend/")
        {
            return Ok(());
        }
        let mut f = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&exclude)
            .map_err(|e| Error::io("opening .git/info/exclude", e))?;
        let sep = if current.is_empty() || current.ends_with('\n') {
            ""
        } else {
            "\n"
        };
        writeln!(f, "{sep}.mend/").map_err(|e| Error::io("writing .git/info/exclude", e))
    }

    /// Takes the workspace lock, waiting up to the configured timeout.
    pub fn lock(&self) -> Result<Lock, Error> {
        let dir = self.mend_dir()?;
        let path = dir.join("lock");
        let file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| Error::io("opening .mend/lock", e))?;
        let start = Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(Lock { _file: file }),
                Err(fs::TryLockError::WouldBlock) => {
                    if start.elapsed() >= self.opts.lock_timeout {
                        return Err(Error::Locked {
                            root: self.root.clone(),
                            waited_ms: start.elapsed().as_millis(),
                        });
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(fs::TryLockError::Error(e)) => {
                    return Err(Error::io("locking .mend/lock", e));
                }
            }
        }
    }

    /// Finishes a transaction a killed process left behind.
    pub fn recover(&self, _lock: &Lock) -> Result<Option<Recovery>, Error> {
        let dir = self.root.join(".mend");
        if !dir.is_dir() {
            return Ok(None);
        }
        txn::recover(&self.root, &dir)
    }

    /// Keeps a copy of content a client has read, so a later stale edit can
    /// be shown what changed since. Returns its hash.
    pub fn remember(&self, file: &TextFile) -> Result<String, Error> {
        let dir = self.mend_dir()?.join("snapshots");
        fs::create_dir_all(&dir).map_err(|e| Error::io("creating .mend/snapshots", e))?;
        let name = file.hash.trim_start_matches("sha256:");
        let p = dir.join(name);
        if !p.exists() {
            fs::write(&p, file.text.as_bytes()).map_err(|e| Error::io("writing a snapshot", e))?;
            prune(&dir, 256);
        }
        Ok(file.hash.clone())
    }

    /// The text remembered for a hash, if any.
    pub fn recall(&self, hash: &str) -> Option<String> {
        let name = hash.trim_start_matches("sha256:");
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        fs::read_to_string(self.root.join(".mend/snapshots").join(name)).ok()
    }

    /// The staleness error for `rel`, with a diff from the remembered
    /// content (or `previous`) to `now`.
    pub fn stale(&self, rel: &str, expected: &str, previous: Option<&str>, now: &str) -> Error {
        let before = previous
            .map(str::to_owned)
            .or_else(|| self.recall(expected));
        let diff = before
            .map(|b| mend_core::diff::unified(Some(rel), Some(rel), &b, now))
            .unwrap_or_default();
        Error::Stale {
            path: rel.to_owned(),
            diff,
        }
    }

    /// Applies `changes` as one transaction. Every target is re-resolved and
    /// re-read first; one that changed since its `base` fails the whole
    /// commit before anything is written.
    pub fn commit(&self, lock: &Lock, changes: &[Change]) -> Result<usize, Error> {
        self.commit_with_hook(lock, changes, &|_| {})
    }

    /// [`Workspace::commit`] with a callback between steps (for
    /// crash-injection tests).
    #[doc(hidden)]
    pub fn commit_with_hook(
        &self,
        _lock: &Lock,
        changes: &[Change],
        hook: &dyn Fn(&str),
    ) -> Result<usize, Error> {
        if changes.is_empty() {
            return Ok(0);
        }
        let mend = self.mend_dir()?;
        let id = format!(
            "{:x}{:x}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        );
        struct Staged {
            temp: PathBuf,
            target: PathBuf,
            bytes: Vec<u8>,
            perms: Option<fs::Permissions>,
            executable: Option<bool>,
        }
        let mut ops = Vec::new();
        let mut staged: Vec<Option<Staged>> = Vec::new();
        for (n, change) in changes.iter().enumerate() {
            let (raw, base) = match change {
                Change::Write { path, base, .. }
                | Change::Bytes { path, base, .. }
                | Change::Delete { path, base } => (path, base),
            };
            let path = self.resolve(raw)?;
            let rel = self.normalize(raw)?;
            // Staleness, under the lock.
            let now = if *base == Base::Any {
                None
            } else {
                self.read_at(&path, &rel)?
            };
            match (base, &now) {
                (Base::Any, _) => {}
                (Base::Absent, None) => {}
                (Base::Absent, Some(f)) => {
                    return Err(self.stale(&rel, "", Some(""), &f.text));
                }
                (Base::Hash(h), Some(f)) if *h == f.hash => {}
                (Base::Hash(h), Some(f)) => return Err(self.stale(&rel, h, None, &f.text)),
                (Base::Hash(_), None) => {
                    return Err(Error::Stale {
                        path: rel,
                        diff: "the file was deleted".into(),
                    });
                }
            }
            match change {
                Change::Delete { .. } => {
                    ops.push(txn::Op::Delete {
                        target: self.relative(&path),
                    });
                    staged.push(None);
                }
                Change::Write { .. } | Change::Bytes { .. } => {
                    let (bytes, mode_from, executable) = match change {
                        Change::Write {
                            text,
                            encoding,
                            mode_from,
                            executable,
                            ..
                        } => (
                            encoding::encode(text, *encoding),
                            mode_from.as_ref(),
                            *executable,
                        ),
                        Change::Bytes {
                            bytes, executable, ..
                        } => (bytes.clone(), None, *executable),
                        Change::Delete { .. } => unreachable!("handled above"),
                    };
                    // A symlink inside the root is written through.
                    let target = if path
                        .symlink_metadata()
                        .is_ok_and(|m| m.file_type().is_symlink())
                    {
                        path.canonicalize()
                            .map_err(|e| Error::io(format!("resolving {rel}"), e))?
                    } else {
                        path.clone()
                    };
                    path::check_real(&self.root, raw, &target)?;
                    let meta = fs::metadata(&target).ok();
                    let in_place = meta.as_ref().is_some_and(hard_linked);
                    let perms = match mode_from {
                        Some(src) => fs::metadata(self.resolve(src)?)
                            .ok()
                            .map(|m| m.permissions()),
                        None => meta.map(|m| m.permissions()),
                    };
                    let dir = target.parent().unwrap_or(&self.root).to_path_buf();
                    let name = target
                        .file_name()
                        .map(|s| s.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    let temp = dir.join(format!(".mend-{id}-{n}-{name}.tmp"));
                    ops.push(txn::Op::Put {
                        target: self.relative(&target),
                        temp: self.relative(&temp),
                        in_place,
                    });
                    staged.push(Some(Staged {
                        temp,
                        target,
                        bytes,
                        perms,
                        executable,
                    }));
                }
            }
        }
        let count = ops.len();
        let root = self.root.clone();
        let mut next = 0;
        let mut stage = |_op: &txn::Op| -> Result<(), Error> {
            let item = staged[next].take();
            next += 1;
            let Some(s) = item else { return Ok(()) };
            let dir = s.temp.parent().unwrap_or(&root);
            create_dirs_inside(&root, dir)?;
            path::check_real(&root, &s.target.to_string_lossy(), dir)?;
            let mut f = fs::File::create(&s.temp)
                .map_err(|e| Error::io(format!("creating {}", s.temp.display()), e))?;
            f.write_all(&s.bytes)
                .map_err(|e| Error::io(format!("writing {}", s.temp.display()), e))?;
            if let Some(p) = s.perms {
                fs::set_permissions(&s.temp, p).map_err(|e| {
                    Error::io(format!("setting the mode of {}", s.temp.display()), e)
                })?;
            }
            if let Some(x) = s.executable {
                set_executable(&s.temp, x)?;
            }
            f.sync_all()
                .map_err(|e| Error::io(format!("syncing {}", s.temp.display()), e))?;
            Ok(())
        };
        txn::run(&self.root, &mend, &id, ops, &mut stage, hook)?;
        Ok(count)
    }

    fn relative(&self, p: &Path) -> String {
        p.strip_prefix(&self.root)
            .unwrap_or(p)
            .to_string_lossy()
            .replace('\\', "/")
    }
}

/// Replaces one file's bytes atomically, outside any workspace (for
/// `mend merge`, which writes a file named on the command line as git
/// merge-file does): a synced temporary file beside it, renamed over it,
/// keeping its mode; a file with several hard links is rewritten in place.
pub fn replace_file(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let show = path.display().to_string();
    let target = if path
        .symlink_metadata()
        .is_ok_and(|m| m.file_type().is_symlink())
    {
        path.canonicalize()
            .map_err(|e| Error::io(format!("resolving {show}"), e))?
    } else {
        path.to_path_buf()
    };
    let meta = fs::metadata(&target).ok();
    if meta.as_ref().is_some_and(hard_linked) {
        let mut f = fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(&target)
            .map_err(|e| Error::io(format!("opening {show}"), e))?;
        return f
            .write_all(bytes)
            .and_then(|()| f.sync_all())
            .map_err(|e| Error::io(format!("writing {show}"), e));
    }
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".mend-")
        .suffix(".tmp")
        .tempfile_in(&dir)
        .map_err(|e| Error::io(format!("creating a temporary file beside {show}"), e))?;
    tmp.write_all(bytes)
        .map_err(|e| Error::io(format!("writing {show}"), e))?;
    if let Some(m) = meta {
        fs::set_permissions(tmp.path(), m.permissions())
            .map_err(|e| Error::io(format!("setting the mode of {show}"), e))?;
    }
    tmp.as_file()
        .sync_all()
        .map_err(|e| Error::io(format!("syncing {show}"), e))?;
    tmp.persist(&target)
        .map_err(|e| Error::io(format!("replacing {show}"), e.error))?;
    txn::sync_dir(&dir)
}

#[cfg(unix)]
fn hard_linked(m: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    m.nlink() > 1
}

#[cfg(not(unix))]
fn hard_linked(_m: &fs::Metadata) -> bool {
    false
}

#[cfg(unix)]
fn set_executable(path: &Path, on: bool) -> Result<(), Error> {
    use std::os::unix::fs::PermissionsExt;
    let mut p = fs::metadata(path)
        .map_err(|e| Error::io(format!("reading the mode of {}", path.display()), e))?
        .permissions();
    let mode = p.mode();
    // Executable for whoever may read it, as git does for 100755.
    p.set_mode(if on {
        mode | ((mode & 0o444) >> 2)
    } else {
        mode & !0o111
    });
    fs::set_permissions(path, p)
        .map_err(|e| Error::io(format!("setting the mode of {}", path.display()), e))
}

#[cfg(not(unix))]
fn set_executable(_path: &Path, _on: bool) -> Result<(), Error> {
    Ok(())
}

fn create_dirs_inside(root: &Path, dir: &Path) -> Result<(), Error> {
    if !dir.starts_with(root) {
        return Err(Error::PathRefused {
            path: dir.display().to_string(),
            reason: "is outside the project root".into(),
        });
    }
    fs::create_dir_all(dir).map_err(|e| Error::io(format!("creating {}", dir.display()), e))
}

/// Keeps the `keep` most recent files of a directory.
fn prune(dir: &Path, keep: usize) {
    let Ok(rd) = fs::read_dir(dir) else { return };
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = rd
        .flatten()
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    if files.len() <= keep {
        return;
    }
    files.sort();
    for (_, p) in &files[..files.len() - keep] {
        let _ = fs::remove_file(p);
    }
}
