//! mend's filesystem shell: everything mend reads or writes in a project
//! goes through a [`Workspace`].
//!
//! - **Confinement**: [`Workspace::resolve`] refuses absolute paths outside
//!   the root (as given or canonical), `..` escapes, symlinks leading out,
//!   any `.git` or `.mend` at any depth and in any spelling that reaches
//!   one, control characters and Windows drive or UNC forms. Targets are
//!   checked again at commit time, and only regular files are read or
//!   written.
//! - **Nothing in the repository is trusted**: `.mend/` is used only when
//!   it carries mend's owner mark, a journal is acted on only when it
//!   carries this workspace's signature, and every other state file mend
//!   reads back is sealed ([`Seal`]; see the `private` and `trust`
//!   modules).
//!   Everything in it is then reached through a [`PrivateDir`], the
//!   folder's descriptor, never through a link (see the `beneath` module).
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
//!         base: Base::Hash(file.hash),
//!         mode_from: None,
//!         executable: None,
//!     }])?;
//! }
//! # Ok::<(), mend_workspace::Error>(())
//! ```

mod beneath;
mod carry;
mod cas;
mod changeset;
mod commit;
mod encoding;
mod error;
mod files;
mod found;
mod holder;
mod op;
mod path;
mod private;
mod replaceable;
mod trust;
mod txn;

use std::fs;
use std::io::Write as _;
use std::os::unix::fs::FileExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

pub use mend_core::ContentHash;

pub use beneath::{EntryKind, PrivateDir};
pub use encoding::Encoding;
pub use error::{Error, PathRule, Unsealed};
pub use path::reserved;
pub use private::{DAEMON_DIR, DAEMON_SOCKET};
pub use trust::Seal;
pub use txn::{Became, Kept, Lost, Recovery, Why};

/// Workspace settings.
#[derive(Debug, Clone)]
pub struct Options {
    /// Files larger than this are refused.
    pub max_bytes: u64,
    /// How long to wait for another mend process's lock.
    pub lock_timeout: Duration,
}

/// The default [`Options::max_bytes`]: 20 MiB.
pub const DEFAULT_MAX_BYTES: u64 = 20 * 1024 * 1024;

/// The default [`Options::lock_timeout`], in seconds.
pub const DEFAULT_LOCK_TIMEOUT_SECS: u64 = 30;

impl Default for Options {
    fn default() -> Self {
        Options {
            max_bytes: DEFAULT_MAX_BYTES,
            lock_timeout: Duration::from_secs(DEFAULT_LOCK_TIMEOUT_SECS),
        }
    }
}

/// A project root that mend may read and write inside.
#[derive(Debug, Clone)]
pub struct Workspace {
    root: path::Root,
    opts: Options,
    /// Made on first need: reading files never needs the per-user secret.
    key: OnceLock<trust::Key>,
    reporter: Reporter,
    /// A pause after each commit step (see [`Workspace::pause_commits`]).
    step_delay: Option<Duration>,
}

/// Who hears of each interrupted transaction that taking the lock
/// finished (see [`Workspace::on_recovery`]).
#[derive(Clone, Default)]
struct Reporter(Option<Arc<Report>>);

/// What [`Workspace::on_recovery`] calls.
type Report = dyn Fn(&Recovery) + Send + Sync;

impl std::fmt::Debug for Reporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Reporter(set)"
        } else {
            "Reporter(none)"
        })
    }
}

/// A text file as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextFile {
    /// The text (a UTF-8 BOM stays as U+FEFF at the start).
    pub text: String,
    /// How it was encoded on disk.
    pub encoding: Encoding,
    /// The hash of the bytes on disk.
    pub hash: ContentHash,
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
    Hash(ContentHash),
    /// A symbolic link whose target's bytes hash to this (what a restore
    /// found where it puts a file or link back).
    Link(ContentHash),
    /// Whatever is there is replaced (a restore of a path its safety
    /// checkpoint could not hold, which refuses or copies such bytes aside
    /// first).
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
    /// Put back an entry exactly as a snapshot held it (a checkpoint
    /// restore): a file with its bytes and executable bit, or a symbolic
    /// link. What is at `path` is replaced, a link included (never
    /// written through), while it is still `base`: the state the caller
    /// saved first (its safety checkpoint), so a write landing after that
    /// is never lost.
    Restore {
        /// What must be there now, compared byte for byte (a binary file
        /// or a link included).
        base: Base,
        /// Target, relative to the root.
        path: String,
        /// The file's bytes, or the link's target.
        bytes: Vec<u8>,
        /// Whether the entry is a symbolic link.
        link: bool,
        /// Whether the file is executable.
        executable: bool,
    },
}

impl Change {
    /// The target, as given.
    pub fn path(&self) -> &str {
        match self {
            Change::Write { path, .. }
            | Change::Bytes { path, .. }
            | Change::Delete { path, .. }
            | Change::Restore { path, .. } => path,
        }
    }

    /// Whether the change replaces or removes the entry at its path
    /// itself (never following a link there) rather than writing through
    /// it.
    pub fn replaces_entry(&self) -> bool {
        matches!(self, Change::Delete { .. } | Change::Restore { .. })
    }

    /// What must be there when the change commits.
    pub fn base(&self) -> &Base {
        match self {
            Change::Write { base, .. }
            | Change::Bytes { base, .. }
            | Change::Delete { base, .. }
            | Change::Restore { base, .. } => base,
        }
    }
}

/// The workspace lock; released when dropped.
#[derive(Debug)]
#[must_use = "the lock is released when dropped"]
pub struct Lock {
    _file: fs::File,
    /// The `.mend` the lock is in, verified when it was taken: what the
    /// holder's commit and recovery use, rather than opening and verifying
    /// it again on every call.
    dir: PrivateDir,
    /// What finishing an interrupted transaction did when the lock was
    /// taken, until [`Workspace::recover`] hands it over.
    recovered: Mutex<Option<Recovery>>,
}

impl Lock {
    /// The `.mend` the lock is in.
    pub(crate) fn dir(&self) -> &PrivateDir {
        &self.dir
    }
}

/// The bytes of `text` in `encoding`, exactly as a commit writes them.
pub fn encode(text: &str, encoding: Encoding) -> Vec<u8> {
    encoding::encode(text, encoding)
}

impl Workspace {
    /// Opens the workspace at `root`, an existing directory.
    pub fn open(root: &Path, opts: Options) -> Result<Self, Error> {
        let show = || mend_core::text::escape_controls(&root.to_string_lossy()).into_owned();
        let r =
            path::Root::open(root).map_err(|e| Error::io(format!("opening root {}", show()), e))?;
        if !r.canonical.is_dir() {
            return Err(Error::io(
                format!("opening root {}", show()),
                std::io::Error::new(std::io::ErrorKind::NotADirectory, "not a directory"),
            ));
        }
        Ok(Workspace {
            root: r,
            opts,
            key: OnceLock::new(),
            reporter: Reporter::default(),
            step_delay: None,
        })
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root.canonical
    }

    /// `p` relative to the root, when it is under the root as given or
    /// under its canonical form (lexically; [`Workspace::resolve`] then
    /// checks what it is).
    pub fn relative_to_root(&self, p: &Path) -> Option<String> {
        let rel = self.root.strip(p)?;
        Some(rel.to_string_lossy().into_owned())
    }

    fn key(&self) -> Result<&trust::Key, Error> {
        if let Some(k) = self.key.get() {
            return Ok(k);
        }
        let k = trust::Key::for_root(&self.root.canonical)?;
        Ok(self.key.get_or_init(|| k))
    }

    /// mend's verified private folder, `.mend/`, created when missing, held
    /// open: everything in it is reached through the returned descriptor,
    /// never through a link. A `.mend` that is a link, or a folder without
    /// mend's owner mark for this user, is refused (see
    /// [`Error::Untrusted`]); one moved with its project is taken over
    /// unless git tracks it or it holds links or special files.
    pub fn private_dir(&self) -> Result<PrivateDir, Error> {
        let dir = private::open(&self.root.canonical, self.key()?, true)?;
        dir.ok_or_else(|| Error::Untrusted {
            what: "could not be made".into(),
            fix: "Check that the project root is writable.".into(),
        })
    }

    /// The seal of this root's `.mend` (made when missing), for state
    /// files mend keeps outside it (see [`PrivateDir::sealed_with`]).
    pub fn seal(&self) -> Result<Seal, Error> {
        let dir = self.private_dir()?;
        Ok(dir
            .seal()
            .expect("a verified .mend carries its seal")
            .clone())
    }

    /// [`Workspace::private_dir`] when `.mend/` exists already; `None`
    /// otherwise, and nothing is made (a client looking for a daemon
    /// leaves a root without `.mend` as it found it).
    pub fn existing_private_dir(&self) -> Result<Option<PrivateDir>, Error> {
        private::open(&self.root.canonical, self.key()?, false)
    }

    /// The settings.
    pub fn options(&self) -> &Options {
        &self.opts
    }

    /// Normalizes a model-supplied path to its root-relative form.
    /// The path is spelled as it is on disk: a name that matches an
    /// existing file only after Unicode normalization becomes that file's.
    pub fn normalize(&self, raw: &str) -> Result<String, Error> {
        Ok(path::resolve(&self.root, raw)?.0)
    }

    /// [`Workspace::normalize`] for a path whose entry is acted on itself
    /// (rejected, restored, deleted): a link there is not followed, so one
    /// pointing outside the root (or a loop) still has a name; every folder
    /// above it must resolve inside the root.
    pub fn normalize_entry(&self, raw: &str) -> Result<String, Error> {
        Ok(path::resolve_entry(&self.root, raw, true, &Default::default())?.0)
    }

    /// Where `change` lands, resolved as [`path::resolve_entry`] does:
    /// `unlinked` are the links the change set deletes.
    pub(crate) fn resolve_change(
        &self,
        change: &Change,
        unlinked: &std::collections::BTreeSet<String>,
    ) -> Result<(String, PathBuf), Error> {
        self.resolve_entry(change.path(), change.replaces_entry(), unlinked)
    }

    /// [`path::resolve_entry`] in this root.
    pub(crate) fn resolve_entry(
        &self,
        raw: &str,
        entry: bool,
        unlinked: &std::collections::BTreeSet<String>,
    ) -> Result<(String, PathBuf), Error> {
        path::resolve_entry(&self.root, raw, entry, unlinked)
    }

    /// The root, links resolved.
    pub(crate) fn root_dir(&self) -> &Path {
        &self.root.canonical
    }

    /// Resolves a model-supplied path to an absolute path inside the root.
    pub fn resolve(&self, raw: &str) -> Result<PathBuf, Error> {
        Ok(path::resolve(&self.root, raw)?.1)
    }

    /// Reads a file as text.
    pub fn read(&self, raw: &str) -> Result<Snapshot, Error> {
        let (rel, path) = path::resolve(&self.root, raw)?;
        let file = self.read_at(&path, &rel)?;
        Ok(Snapshot { rel, path, file })
    }

    fn read_at(&self, path: &Path, rel: &str) -> Result<Option<TextFile>, Error> {
        let bytes = match files::read_regular(path, self.opts.max_bytes, false) {
            Ok(b) => b,
            Err(files::ReadError::Missing) => return Ok(None),
            Err(files::ReadError::Kind(kind)) => {
                return Err(Error::NotAFile {
                    path: rel.to_owned(),
                    kind,
                });
            }
            Err(files::ReadError::TooLarge(size)) => {
                return Err(Error::TooLarge {
                    path: rel.to_owned(),
                    size,
                    limit: self.opts.max_bytes,
                });
            }
            // A file where a folder of the path should be: nothing is there.
            Err(files::ReadError::Io(e)) if e.kind() == std::io::ErrorKind::NotADirectory => {
                return Ok(None);
            }
            Err(files::ReadError::Io(e)) => {
                return Err(Error::io(format!("reading {}", esc(rel)), e));
            }
        };
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
            hash: ContentHash::of(&bytes),
        }))
    }

    /// Calls `report` with what finishing an interrupted transaction did,
    /// each time taking the lock (by this handle or a clone) finished one:
    /// a front-end shows it wherever the lock was taken.
    pub fn on_recovery(&mut self, report: impl Fn(&Recovery) + Send + Sync + 'static) {
        self.reporter = Reporter(Some(Arc::new(report)));
    }

    /// Takes the workspace lock, waiting up to the configured timeout, and
    /// finishes a transaction a killed process left behind (see
    /// [`Workspace::recover`]), so whoever holds the lock never acts on a
    /// half-done write. The holder writes its command line and process id
    /// into the lock file; one that times out names it.
    pub fn lock(&self) -> Result<Lock, Error> {
        let dir = self.private_dir()?;
        let file = dir.open_write(LOCK, true, false)?;
        let start = Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(fs::TryLockError::WouldBlock) => {
                    if start.elapsed() >= self.opts.lock_timeout {
                        return Err(Error::Locked {
                            root: self.root.canonical.clone(),
                            holder: self.lock_holder(&file),
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
        // Naming the holder is a courtesy to whoever waits; failing to
        // does not stop the command. A server takes the lock for every
        // call: when the file names it already, it is left as it is (a
        // truncation is a journalled metadata change, and costs more than
        // the read).
        let said = format!("{} (pid {})\n", holder(), std::process::id());
        let mut now = vec![0; said.len() + 1];
        let same = file
            .read_at(&mut now, 0)
            .is_ok_and(|n| now[..n] == *said.as_bytes());
        if !same {
            let _ = file
                .set_len(0)
                .and_then(|()| file.write_all_at(said.as_bytes(), 0));
        }
        let recovered = self.finish_interrupted(&dir)?;
        Ok(Lock {
            _file: file,
            dir,
            recovered: Mutex::new(recovered),
        })
    }

    /// Who holds the lock on `file`: the mend the lock file names, when
    /// it is alive and holding it, else another process (see `holder`).
    fn lock_holder(&self, file: &fs::File) -> String {
        let said = self
            .private_dir()
            .and_then(|d| d.read(LOCK, 4096))
            .ok()
            .flatten()
            .unwrap_or_default();
        holder::describe(&String::from_utf8_lossy(&said), file)
    }

    /// Whether a transaction journal is present: a multi-file commit is
    /// under way in another process, or a killed one left it to be
    /// finished (which taking the lock does). Cheap: one lookup.
    pub fn journal_present(&self) -> Result<bool, Error> {
        let Some(dir) = private::open(&self.root.canonical, self.key()?, false)? else {
            return Ok(false);
        };
        Ok(dir.kind(txn::JOURNAL)?.is_some())
    }

    /// [`Workspace::lock`], and what finishing an interrupted transaction
    /// did as it was taken: [`Workspace::recover`] right after taking it,
    /// without looking again (nothing else can have left a journal in
    /// between).
    pub fn lock_recovered(&self) -> Result<(Lock, Option<Recovery>), Error> {
        let lock = self.lock()?;
        let done = lock
            .recovered
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        Ok((lock, done))
    }

    /// Finishes a transaction a killed process left behind, and returns
    /// what was done since `lock` was taken (taking it finishes one
    /// already; see [`Workspace::lock`]).
    ///
    /// A journal that does not carry this workspace's signature (one a
    /// repository shipped, or one copied from elsewhere) is never acted on:
    /// it is moved aside and reported as [`Recovery::Ignored`]. A target
    /// changed after the crash is never overwritten: see
    /// [`Recovery::RolledForward`].
    pub fn recover(&self, lock: &Lock) -> Result<Option<Recovery>, Error> {
        let earlier = lock
            .recovered
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        match earlier {
            Some(r) => Ok(Some(r)),
            None => self.finish_interrupted(&lock.dir),
        }
    }

    /// Recovery itself, in `dir` (the `.mend` the lock is in), told to the
    /// reporter.
    fn finish_interrupted(&self, dir: &PrivateDir) -> Result<Option<Recovery>, Error> {
        // A lone write a killed process staged never reached the worktree.
        if let Some(tmp) = dir.dir("tmp")? {
            for (name, kind) in tmp.list()? {
                if let (Some(name), EntryKind::File | EntryKind::Link) = (name.to_str(), kind) {
                    tmp.remove_file(name)?;
                }
            }
        }
        let done = txn::recover(&self.root, dir, self.key()?)?;
        if let (Some(r), Some(report)) = (&done, &self.reporter.0) {
            report(r);
        }
        Ok(done)
    }

    /// Keeps a copy of content a client has read, so a later stale edit can
    /// be shown what changed since. Returns its hash.
    pub fn remember(&self, file: &TextFile) -> Result<ContentHash, Error> {
        remember_in(&self.private_dir()?, file)
    }

    /// [`Workspace::remember`] while holding `lock`, in the `.mend` it
    /// verified.
    pub fn remember_locked(&self, lock: &Lock, file: &TextFile) -> Result<ContentHash, Error> {
        remember_in(lock.dir(), file)
    }

    /// The text remembered for a hash, if any, and only if its bytes still
    /// hash to that name.
    pub fn recall(&self, hash: &ContentHash) -> Option<String> {
        let name = hash.hex();
        let dir = private::open(&self.root.canonical, self.key().ok()?, false).ok()??;
        let bytes = dir
            .read(&format!("snapshots/{name}"), self.opts.max_bytes)
            .ok()??;
        if ContentHash::of(&bytes) != *hash {
            return None;
        }
        encoding::decode(&bytes).ok().map(|(text, _)| text)
    }

    /// The staleness error for `rel`, with a diff from the remembered
    /// content (or `previous`) to `now`.
    pub fn stale(
        &self,
        rel: &str,
        expected: Option<&ContentHash>,
        previous: Option<&str>,
        now: &str,
    ) -> Error {
        let before = previous
            .map(str::to_owned)
            .or_else(|| expected.and_then(|h| self.recall(h)));
        let diff = before
            .map(|b| mend_core::diff::unified(Some(rel), Some(rel), &b, now))
            .unwrap_or_default();
        Error::Stale {
            path: rel.to_owned(),
            diff,
        }
    }

    /// Checks a change set as a whole, writing nothing: two changes ending
    /// at one path, a move onto an existing file, and a path that would be
    /// both a file and a folder are refused ([`Error::Conflict`]). A
    /// commit runs this first; a dry run should too.
    pub fn check_changes(&self, changes: &[Change]) -> Result<(), Error> {
        changeset::validate(self, changes).map(drop)
    }

    /// Copies the file or link at `raw` into `.mend/aside/<under>/`, at its
    /// path relative to the root, before a change removes the only copy of
    /// its bytes. Returns where the copy is, relative to the root.
    pub fn keep_aside(&self, raw: &str, under: &str) -> Result<String, Error> {
        let (rel, path) = path::resolve(&self.root, raw)?;
        let (folder, name) = match rel.rsplit_once('/') {
            Some((dir, name)) => (format!("aside/{under}/{dir}"), name),
            None => (format!("aside/{under}"), rel.as_str()),
        };
        let folder = self.private_dir()?.create_dir(&folder)?;
        let meta = fs::symlink_metadata(&path)
            .map_err(|e| Error::io(format!("reading {}", esc(&rel)), e))?;
        if meta.file_type().is_symlink() {
            let to = fs::read_link(&path)
                .map_err(|e| Error::io(format!("reading the link {}", esc(&rel)), e))?;
            use std::os::unix::ffi::OsStrExt as _;
            folder.symlink(name, to.as_os_str().as_bytes())?;
        } else {
            let bytes = files::read_regular(&path, u64::MAX, true)
                .map_err(|e| Error::io(format!("reading {}", esc(&rel)), e.into_io()))?;
            folder.write(name, &bytes)?;
        }
        Ok(folder.shown(name))
    }

    /// Applies `changes` as one transaction. Every target is re-resolved and
    /// re-read first; one that changed since its `base` fails the whole
    /// commit before anything is written.
    pub fn commit(&self, lock: &Lock, changes: &[Change]) -> Result<usize, Error> {
        match self.step_delay {
            Some(d) => self.commit_with_hook(lock, changes, &|_| std::thread::sleep(d)),
            None => self.commit_with_hook(lock, changes, &|_| {}),
        }
    }

    /// Pauses after each step of every commit (`None`: never), so crash
    /// tests can kill a process in the middle of one.
    pub fn pause_commits(&mut self, delay: Option<Duration>) {
        self.step_delay = delay;
    }
}

/// The workspace lock's file in `.mend/`.
const LOCK: &str = "lock";

/// How a holder names itself in the lock file: its command line, as far
/// as a person needs to recognize it.
fn holder() -> String {
    let mut args = std::env::args_os();
    let program = args
        .next()
        .map(|p| {
            Path::new(&p).file_name().map_or_else(
                || p.to_string_lossy().into_owned(),
                |n| n.to_string_lossy().into_owned(),
            )
        })
        .unwrap_or_else(|| "mend".to_owned());
    let mut line = program;
    for a in args {
        line.push(' ');
        line.push_str(&a.to_string_lossy());
    }
    let mut line = esc(&line).into_owned();
    if line.len() > 200 {
        let mut cut = 200;
        while !line.is_char_boundary(cut) {
            cut -= 1;
        }
        line.truncate(cut);
        line.push('…');
    }
    line
}

/// Whether a name can be a snapshot's: a SHA-256 in hex.
fn is_snapshot_name(name: &str) -> bool {
    name.len() == 64 && name.bytes().all(|b| b.is_ascii_hexdigit())
}

fn esc(s: &str) -> std::borrow::Cow<'_, str> {
    mend_core::text::escape_controls(s)
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
    if meta.as_ref().is_some_and(commit::hard_linked) {
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

/// [`Workspace::remember`] in the verified `.mend` `mend`.
fn remember_in(mend: &PrivateDir, file: &TextFile) -> Result<ContentHash, Error> {
    let dir = mend.create_dir("snapshots")?;
    let name = file.hash.hex();
    if dir.kind(&name)?.is_none() {
        // The bytes as on disk, so a recall can check them against
        // their name.
        let bytes = encoding::encode(&file.text, file.encoding);
        dir.write(&name, &bytes)?;
        prune(&dir, 256);
    }
    Ok(file.hash)
}

/// Keeps the `keep` most recent snapshots. Only regular files named as
/// snapshots are considered, so nothing else in the folder is deleted.
fn prune(dir: &PrivateDir, keep: usize) {
    let Ok(entries) = dir.list() else { return };
    let mut files: Vec<((i64, u64), String)> = entries
        .into_iter()
        // Not followed: a link is never a snapshot.
        .filter(|(_, kind)| *kind == EntryKind::File)
        .filter_map(|(name, _)| name.into_string().ok())
        .filter(|name| is_snapshot_name(name))
        .filter_map(|name| Some((dir.modified(&name)?, name)))
        .collect();
    if files.len() <= keep {
        return;
    }
    files.sort();
    for (_, name) in &files[..files.len() - keep] {
        let _ = dir.remove_file(name);
    }
}
