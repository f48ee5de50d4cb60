//! Checkpoints: snapshot a worktree into private git refs and restore it
//! without ever losing work.
//!
//! A checkpoint is a commit of what `git add -A` on an index read from
//! HEAD would record: HEAD's tracked files and the untracked, not-ignored
//! ones. It is built by mend's own walk (`snapshot`), in parallel, with a
//! **state file** (`.git/mend/snapshot-state`) of each file's stat data and
//! id, so a repeat checkpoint re-hashes only the files that changed, and a
//! first one takes ids from the user's index where its stat data matches.
//! Its parent is HEAD (none without one), it lives under
//! `refs/mend/checkpoints/<id>`, and its message carries the label, time,
//! anchor, HEAD and the previous checkpoint as trailers: the previous one is
//! no parent, so a dropped checkpoint's objects are held by nothing, and
//! [`Checkpoints::gc`] frees them.
//!
//! Guarantees:
//!
//! - HEAD, branches, the user's index and the stash are never touched.
//! - [`Checkpoints::restore`] first checkpoints the current state, so every
//!   restore can be undone by restoring that safety checkpoint.
//! - A restore is exact: it deletes every file absent from the checkpoint
//!   that is not ignored now or under the checkpoint's own `.gitignore`
//!   files, tracked or not, so restoring the safety checkpoint gives back
//!   the tree as it was. `.git` is never touched; nested repositories and
//!   submodules are skipped, never moved.
//! - Nothing whose bytes are in no checkpoint is overwritten or deleted
//!   (an ignored file in the way, one too large to snapshot): the restore
//!   is refused, or with `force` they are copied to `.mend/aside/` first.
//! - Files, links and file↔folder swaps are written back through one
//!   `mend-workspace` transaction: all or nothing, byte-exact, modes kept,
//!   never through a folder that is now a link.
//! - A folder that is not a git repository gets a private shadow repository
//!   at `.mend/shadow.git` whose worktree is the folder, and says so
//!   ([`Checkpoints::store`]); its first snapshot writes one pack.
//! - Every checkpoint ref points at a commit, and is 34 characters long.
//! - A root's first checkpoint is refused in a home directory or at a
//!   filesystem root unless forced ([`OpenOptions::force`]), and once it
//!   would hold more than [`OpenOptions::max_files`] files (counted as the
//!   walk goes, which stops there and keeps nothing it wrote).
//! - [`Checkpoints::gc`] frees what only dropped checkpoints held: a shadow
//!   repository is repacked with just what is held; in a git repository
//!   the loose objects nothing else reaches are removed (see `prune.rs`).

mod beside;
mod guard;
mod ignore_then;
pub mod names;
mod narrowed;
mod prune;
mod restore;
mod snapshot;
mod store;
pub mod turn;

pub use narrowed::{Created, FullReason, Hint, Scan, StateId};
pub use prune::Pruned;
pub use restore::RestoreOptions;
use snapshot::state::StateFile;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use git2::{Commit, Delta, DiffFormat, DiffOptions, ObjectType, Oid, Repository, Signature, Tree};
use mend_core::report::Status;
use serde::Serialize;

use store::REF_PREFIX;

/// Why a checkpoint operation could not proceed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A git operation failed.
    // Causes are part of the messages and not `source`s, so a report that
    // walks the chain does not print them twice.
    #[error("{context}: {cause}")]
    Git {
        /// What was being done.
        context: String,
        /// The libgit2 error.
        cause: git2::Error,
    },
    /// No checkpoint has that id.
    #[error("no checkpoint `{0}`; `mend checkpoint list` shows the ids")]
    NotFound(String),
    /// Several checkpoints' ids begin with the prefix given.
    #[error("`{prefix}` begins the ids of {} checkpoints ({}); give more of the id", .matches.len(), .matches.join(", "))]
    Ambiguous {
        /// The prefix given.
        prefix: String,
        /// The ids it matches.
        matches: Vec<String>,
    },
    /// A restore would go through a folder that is now a symbolic link.
    #[error(
        "{folder} is now a symbolic link, so restoring {path} would write through it into the link's target; nothing was changed. Replace the link with a folder (or move it away), then restore again"
    )]
    LinkedFolder {
        /// The folder that is a link.
        folder: String,
        /// The path the restore would write or delete.
        path: String,
    },
    /// A restore would overwrite or delete files whose current bytes are
    /// in no checkpoint.
    #[error(
        "restoring would overwrite or delete {} whose current content is in no checkpoint (ignored, or too large to snapshot): {}. Nothing was changed. Restore with --force to copy them into .mend/aside/ first, or move them away yourself", if .paths.len() == 1 { "a file".to_owned() } else { format!("{} files", .paths.len()) }, .paths.join(", ")
    )]
    Unheld {
        /// The files.
        paths: Vec<String>,
    },
    /// Writing the restored files failed.
    #[error(transparent)]
    Workspace(#[from] mend_workspace::Error),
    /// No turn is open in the root.
    #[error(
        "no turn is open in this root; `mend turn begin` starts one (if `.mend` was deleted, as `git clean -x` does, the starts of earlier turns are still listed by `mend checkpoint list`)"
    )]
    NoTurn,
    /// The turn's state cannot be read.
    #[error(
        "{what}. Run `mend turn end` to clear the turn's state, or `mend turn begin` to start a new turn"
    )]
    TurnCorrupt {
        /// What is wrong.
        what: String,
    },
    /// A turn action refused its selection (a path with no change, a hunk
    /// changed since it was shown); nothing was written.
    #[error("{0}")]
    TurnRefused(String),
    /// The root is a home directory or a filesystem root, and has no
    /// checkpoint yet.
    #[error(
        "{root} is no project folder to checkpoint: {why}. A checkpoint would snapshot everything under it. Nothing was written. Run mend from the project's own folder (or pass its --root), or, if this really is the folder to checkpoint, create the first checkpoint with `mend checkpoint create --force`"
    )]
    UnsafeRoot {
        /// The root.
        root: String,
        /// Why it was refused.
        why: String,
    },
    /// A root's first checkpoint would hold more files than the limit.
    #[error(
        "{root} holds more than {max} files that are not ignored (the count stopped at {counted}), too many for a first checkpoint; nothing was kept. Check that it is the project's folder, add bulky folders to .gitignore, or raise the limit with `mend checkpoint create --max-files N`"
    )]
    TooManyFiles {
        /// The root.
        root: String,
        /// The limit.
        max: usize,
        /// Files counted when the walk stopped.
        counted: usize,
    },
    /// A filesystem operation failed.
    #[error("{context}: {cause}")]
    Io {
        /// What was being done.
        context: String,
        /// The error.
        cause: std::io::Error,
    },
}

impl Error {
    /// Whether this is a refusal the caller can act on (no open turn, no
    /// checkpoint with that id, a selection that names nothing, a hunk
    /// changed since it was shown, a file changed while it was written, a
    /// turn state damaged or planted, whose message names the command that
    /// clears it): nothing was written, and the message says what to do
    /// instead.
    pub fn is_refusal(&self) -> bool {
        if let Error::Workspace(e) = self {
            return e.is_refusal();
        }
        matches!(
            self,
            Error::NoTurn
                | Error::TurnCorrupt { .. }
                | Error::NotFound(_)
                | Error::Ambiguous { .. }
                | Error::TurnRefused(_)
                | Error::UnsafeRoot { .. }
                | Error::TooManyFiles { .. }
                | Error::Unheld { .. }
                | Error::LinkedFolder { .. }
        )
    }
}

fn git(context: impl Into<String>) -> impl FnOnce(git2::Error) -> Error {
    let context = context.into();
    move |cause| Error::Git { context, cause }
}

/// A checkpoint's metadata.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Checkpoint {
    /// Short id (the first 12 hex digits of its commit).
    pub id: String,
    /// The commit.
    pub commit: String,
    /// Label given at creation.
    pub label: Option<String>,
    /// Anchor, such as a chat message id.
    pub anchor: Option<String>,
    /// Seconds since the Unix epoch.
    pub time: i64,
    /// HEAD when it was made, if the repository had one.
    pub head: Option<String>,
    /// Files left out, with the reason.
    pub skipped: Vec<Skipped>,
}

/// A file a checkpoint left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Skipped {
    /// Path relative to the root.
    pub path: String,
    /// Why (`too large`, `nested repository`).
    pub reason: String,
    /// For a file too large: its size and modification time then
    /// (`size:seconds.nanoseconds`), so a later snapshot can tell whether
    /// it changed without holding its bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stamp: Option<String>,
}

/// What a checkpoint would hold, found without writing one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Preview {
    /// How many files it would hold.
    pub files: usize,
    /// The files it would leave out.
    pub skipped: Vec<Skipped>,
}

/// Settings for creating a checkpoint.
#[derive(Debug, Clone)]
pub struct CreateOptions {
    /// A label for humans.
    pub label: Option<String>,
    /// An anchor for clients, such as the chat message it precedes.
    pub anchor: Option<String>,
    /// Files larger than this are skipped and listed.
    pub max_file_bytes: u64,
}

/// The default [`CreateOptions::max_file_bytes`]: 10 MiB.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;

impl Default for CreateOptions {
    fn default() -> Self {
        CreateOptions {
            label: None,
            anchor: None,
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
        }
    }
}

/// The default [`OpenOptions::max_files`]: a million.
pub const DEFAULT_MAX_FILES: usize = 1_000_000;

/// What a root's first checkpoint is allowed to cover.
#[derive(Debug, Clone, Copy)]
pub struct OpenOptions {
    /// Checkpoint a home directory or a filesystem root too.
    pub force: bool,
    /// A root's first checkpoint is refused once it would hold more files
    /// than this (later ones are not limited: the root was accepted).
    pub max_files: usize,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            force: false,
            max_files: DEFAULT_MAX_FILES,
        }
    }
}

/// One file a restore changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct FileChange {
    /// Path relative to the root.
    pub path: String,
    /// `A` created, `M` modified, `D` deleted (as seen from now).
    pub status: Status,
}

/// What a restore did (or, for a dry run, would do).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Restored {
    /// The checkpoint restored.
    pub checkpoint: Checkpoint,
    /// The safety checkpoint of the state before (absent for a dry run).
    pub safety: Option<Checkpoint>,
    /// Files changed.
    pub changes: Vec<FileChange>,
    /// Files absent from the checkpoint that were kept: ignored now, or
    /// ignored under the checkpoint's rules.
    pub kept: Vec<String>,
    /// Copies made in `.mend/aside/` (relative to the root) of files whose
    /// bytes no checkpoint held, before they were overwritten or deleted
    /// (for a dry run, the files that would be copied).
    pub aside: Vec<String>,
    /// Checkpoints dropped by `prune_later`.
    pub pruned: Vec<Checkpoint>,
    /// Files that differ but were left as they are, each with why: a
    /// name that is not UTF-8, or one with a control character or a
    /// backslash, which mend's paths cannot carry.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub left: Vec<Left>,
}

/// A file a restore or reject left as it is, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Left {
    /// Path relative to the root (a name that is not UTF-8 shown with
    /// U+FFFD).
    pub path: String,
    /// Why it was left, and what to do instead.
    pub reason: String,
}

/// The checkpoints of one worktree.
pub struct Checkpoints {
    /// The root's workspace (its canonical path is the worktree root): its lock serialises snapshots with every
    /// other writer, and restores write through it.
    ws: mend_workspace::Workspace,
    repo: Repository,
    /// The snapshot state file (stat data and ids of the last snapshot).
    state: StateFile,
    /// Where mend keeps its own files for this repository.
    private: mend_workspace::PrivateDir,
    shadow: bool,
    /// What decided the store when it was opened (see `store.rs`).
    key: store::StoreKey,
    opts: OpenOptions,
    /// The state this process saved last, kept to narrow the next
    /// snapshot (see `narrowed.rs`).
    held: std::sync::Mutex<Option<narrowed::Held>>,
    /// The hint the next snapshot of [`Checkpoints::create_locked`] takes,
    /// and what that snapshot made (see [`Checkpoints::set_hint`]).
    lent: std::sync::Mutex<(Option<Hint>, Option<Made>)>,
}

/// What a snapshot taken with a lent hint made: the state to pair the
/// watcher's token with, and how it scanned.
#[derive(Clone, Copy, Debug)]
pub struct Made {
    /// The snapshot state saved with the checkpoint.
    pub state: StateId,
    /// How the snapshot was taken.
    pub scan: Scan,
}

/// The shadow repository `.mend/shadow.git` (made on first use), checked
/// for links right before git2 opens it by path.
///
/// What remains: git2 resolves the path again for every later operation,
/// so a link made in the shadow repository after this check, by a process
/// that can write in `.mend`, is followed until the next open. Loose
/// objects inside `objects/xx/` are not checked (there may be hundreds of
/// thousands); git2 verifies each object's hash when it reads one.
fn open_shadow(root: &Path) -> Result<(Repository, mend_workspace::PrivateDir), Error> {
    // Only a `.mend` that mend made itself holds the shadow repository: a
    // repository could ship one, or a link to one.
    let private =
        mend_workspace::Workspace::open(root, mend_workspace::Options::default())?.private_dir()?;
    const SHADOW: &str = "shadow.git";
    let repo = match private.dir(SHADOW)? {
        Some(dir) => {
            check_git_dir(&dir)?;
            Repository::open_bare(dir.path())
        }
        None => Repository::init_bare(private.path().join(SHADOW)),
    }
    .map_err(git("opening the shadow repository"))?;
    // The folder git2 opened by path must be the one checked through
    // `.mend`'s descriptor: a link swapped in meanwhile is caught here.
    let dir = private.dir(SHADOW)?;
    let same = dir.as_ref().is_some_and(|d| {
        use std::os::unix::fs::MetadataExt as _;
        let held = rustix::fs::fstat(d);
        let opened = std::fs::metadata(repo.path());
        matches!((held, opened), (Ok(h), Ok(o)) if h.st_dev == o.dev() && h.st_ino == o.ino())
    });
    let Some(dir) = dir.filter(|_| same) else {
        return Err(Error::Io {
            context: "opening the shadow repository".into(),
            cause: std::io::Error::other(
                ".mend/shadow.git was replaced while mend opened it; try again",
            ),
        });
    };
    repo.set_workdir(root, false)
        .map_err(git("setting the shadow worktree"))?;
    Ok((repo, dir))
}

/// Refuses a link or special file where git2 would follow or read it: in
/// the repository's folder, `objects/` and its `pack/` and `info/`, and
/// anywhere under `refs/` and `logs/`.
fn check_git_dir(dir: &mend_workspace::PrivateDir) -> Result<(), Error> {
    dir.refuse_links(0)?;
    for (sub, depth) in [
        ("objects", 0),
        ("objects/pack", 0),
        ("objects/info", 0),
        ("refs", 64),
        ("logs", 64),
    ] {
        if let Some(d) = dir.dir(sub)? {
            d.refuse_links(depth)?;
        }
    }
    Ok(())
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Every value of a trailer, read with git's own trailer parser.
fn trailers(message: &str, key: &str) -> Vec<String> {
    git2::message_trailers_strs(message)
        .map(|t| {
            t.iter()
                .filter(|(k, _)| *k == key)
                .map(|(_, v)| v.to_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn trailer(message: &str, key: &str) -> Option<String> {
    trailers(message, key).into_iter().next()
}

/// A skipped file as its trailer holds it: JSON, so any path and reason
/// read back exactly.
fn skipped_trailer(s: &Skipped) -> serde_json::Value {
    match &s.stamp {
        Some(st) => serde_json::json!({ "path": s.path, "reason": s.reason, "stamp": st }),
        None => serde_json::json!({ "path": s.path, "reason": s.reason }),
    }
}

/// A skipped file from its trailer: JSON, or the `path (reason)` form of
/// checkpoints made before, split at the first ` (`.
fn parse_skipped(value: &str) -> Skipped {
    #[derive(serde::Deserialize)]
    struct Entry {
        path: String,
        reason: String,
        stamp: Option<String>,
    }
    if let Ok(e) = serde_json::from_str::<Entry>(value) {
        return Skipped {
            path: e.path,
            reason: e.reason,
            stamp: e.stamp,
        };
    }
    let (path, reason) = value.split_once(" (").unwrap_or((value, ""));
    Skipped {
        path: path.to_owned(),
        reason: reason.strip_suffix(')').unwrap_or(reason).to_owned(),
        stamp: None,
    }
}

/// The root's workspace as checkpoints use it: files of any size, the
/// lock waited for at most `lock_timeout`.
fn workspace(root: &Path, lock_timeout: Duration) -> Result<mend_workspace::Workspace, Error> {
    let opts = mend_workspace::Options {
        max_bytes: u64::MAX,
        lock_timeout,
    };
    Ok(mend_workspace::Workspace::open(root, opts)?)
}

/// Whether any checkpoint ref exists.
fn has_checkpoints(repo: &Repository) -> Result<bool, Error> {
    let mut refs = repo
        .references_glob(&format!("{REF_PREFIX}*"))
        .map_err(git("listing checkpoints"))?;
    Ok(refs.next().is_some())
}

/// The ref of the checkpoint whose commit is `oid`.
fn checkpoint_ref(oid: Oid) -> String {
    format!("{REF_PREFIX}{}", &oid.to_string()[..12])
}

impl Checkpoints {
    /// Opens the checkpoints of `root`: its git repository, or a private
    /// shadow repository when `root` is not one (created on first use).
    /// A home directory or a filesystem root without checkpoints is
    /// refused; see [`Checkpoints::open_with`].
    pub fn open(root: &Path) -> Result<Self, Error> {
        Self::open_with(root, &OpenOptions::default())
    }

    /// [`Checkpoints::open`] with what a root's first checkpoint may
    /// cover: a home directory or a filesystem root is refused (before
    /// anything is written there) unless `opts.force` or it has
    /// checkpoints already.
    pub fn open_with(root: &Path, opts: &OpenOptions) -> Result<Self, Error> {
        let root = root.canonicalize().map_err(|e| Error::Io {
            context: format!("opening {}", root.display()),
            cause: e,
        })?;
        let refused = if opts.force {
            None
        } else {
            guard::refusal(&root, &guard::Machine::read(&root))
        };
        let refuse = |why: String| Error::UnsafeRoot {
            root: root.display().to_string(),
            why,
        };
        // Taken before the repository is opened: one replaced meanwhile
        // shows as a changed store at the next check, never the reverse.
        let git_key = store::StoreKey::git(&root);
        let (repo, shadow) = if git_key.is_some() {
            (
                Repository::open(&root).map_err(git("opening the git repository"))?,
                None,
            )
        } else {
            // No shadow repository is made where none may be.
            let made = root
                .join(".mend/shadow.git")
                .symlink_metadata()
                .is_ok_and(|m| m.is_dir());
            if let Some(why) = refused.clone().filter(|_| !made) {
                return Err(refuse(why));
            }
            let (repo, dir) = open_shadow(&root)?;
            (repo, Some(dir))
        };
        if let Some(why) = refused
            && !has_checkpoints(&repo)?
        {
            return Err(refuse(why));
        }
        // mend's own bookkeeping is never part of a snapshot.
        repo.add_ignore_rule(".mend/\n")
            .map_err(git("adding the .mend ignore rule"))?;
        let gitdir = match &shadow {
            Some(dir) => dir.clone(),
            None => {
                mend_workspace::PrivateDir::open_path(repo.path(), &repo.path().to_string_lossy())?
            }
        };
        // mend's files beside the repository's: the snapshot state, the
        // commits dropped since the last gc.
        let private = match &shadow {
            Some(dir) => dir.clone(),
            None => gitdir.create_dir("mend")?,
        };
        let state = match &shadow {
            Some(_) => StateFile::new(private.clone(), "mend-snapshot-state"),
            None => StateFile::new(private.clone(), "snapshot-state"),
        };
        // The private index of earlier versions is no longer used.
        for old in ["mend/checkpoint-index", "mend-checkpoint-index"] {
            let _ = gitdir.remove_file(old);
        }
        let wait = mend_workspace::Options::default().lock_timeout;
        Ok(Checkpoints {
            ws: workspace(&root, wait)?,
            repo,
            state,
            private,
            key: store::StoreKey::held(git_key, shadow.as_ref()),
            shadow: shadow.is_some(),
            opts: *opts,
            held: std::sync::Mutex::new(None),
            lent: std::sync::Mutex::new((None, None)),
        })
    }

    /// The repository that holds the checkpoints (`.git`, or the shadow
    /// repository `.mend/shadow.git` of a folder without git).
    pub fn store(&self) -> &Path {
        self.repo.path()
    }

    /// The worktree root (canonical).
    pub fn root(&self) -> &Path {
        self.ws.root()
    }

    /// Whether this worktree uses a shadow repository.
    pub fn is_shadow(&self) -> bool {
        self.shadow
    }

    /// Waits at most `lock_timeout` for another mend process writing in
    /// the root from now on (the default is the workspace's 30 s).
    pub fn set_lock_timeout(&mut self, lock_timeout: Duration) -> Result<(), Error> {
        if self.ws.options().lock_timeout == lock_timeout {
            return Ok(());
        }
        self.ws = workspace(self.ws.root(), lock_timeout)?;
        Ok(())
    }

    fn head(&self) -> Option<Commit<'_>> {
        self.repo.head().ok()?.peel_to_commit().ok()
    }

    /// Snapshots the worktree. `progress` is called with the number of
    /// files examined so far.
    ///
    /// Takes the workspace lock (after finishing an interrupted transaction),
    /// so a snapshot never sees a half-written commit and two snapshots
    /// never share the snapshot state.
    pub fn create(
        &self,
        opts: &CreateOptions,
        progress: &mut dyn FnMut(usize),
    ) -> Result<Checkpoint, Error> {
        let lock = self.lock()?;
        self.create_locked(&lock, opts, progress)
    }

    /// The workspace lock, with any interrupted transaction finished.
    pub fn lock(&self) -> Result<mend_workspace::Lock, Error> {
        let lock = self.ws.lock()?;
        self.ws.recover(&lock)?;
        Ok(lock)
    }

    /// [`Checkpoints::create`] for a caller that holds the lock already
    /// (an apply checkpointing before it writes).
    pub fn create_locked(
        &self,
        lock: &mend_workspace::Lock,
        opts: &CreateOptions,
        progress: &mut dyn FnMut(usize),
    ) -> Result<Checkpoint, Error> {
        let hint = self.lent_hint();
        self.create_recorded(lock, opts, hint.as_ref(), progress)
    }

    /// [`Checkpoints::create_locked`] walking every file whatever hint was
    /// lent: the safety checkpoint of a restore or a reject, whose tree is
    /// taken for the bytes on disk now, must not miss a write no event told
    /// of (one through a second name outside the worktree).
    pub(crate) fn create_safety(
        &self,
        lock: &mend_workspace::Lock,
        opts: &CreateOptions,
    ) -> Result<Checkpoint, Error> {
        drop(self.lent_hint());
        self.create_recorded(lock, opts, None, &mut |_| {})
    }

    /// [`Checkpoints::create_hinted`], recording what it made for
    /// [`Checkpoints::take_made`].
    fn create_recorded(
        &self,
        lock: &mend_workspace::Lock,
        opts: &CreateOptions,
        hint: Option<&Hint>,
        progress: &mut dyn FnMut(usize),
    ) -> Result<Checkpoint, Error> {
        let created = self.create_hinted(lock, opts, hint, progress)?;
        self.lent_made(Made {
            state: created.state,
            scan: created.scan,
        });
        Ok(created.checkpoint)
    }

    /// The hint lent by [`Checkpoints::set_hint`], taken by the snapshot
    /// about to start.
    pub(crate) fn lent_hint(&self) -> Option<Hint> {
        self.lent().0.take()
    }

    /// Records what a snapshot made, for [`Checkpoints::take_made`].
    pub(crate) fn lent_made(&self, made: Made) {
        self.lent().1 = Some(made);
    }

    /// Lends the next snapshot taken through [`Checkpoints::create_locked`]
    /// or [`turn::Turns::begin`] a watcher's hint: so the checkpoints taken inside other operations
    /// (a turn's start, a reject's or a restore's safety checkpoint) are
    /// narrowed for a long-running caller that holds a watcher. `None`
    /// withdraws a hint not yet taken.
    pub fn set_hint(&self, hint: Option<Hint>) {
        *self.lent() = (hint, None);
    }

    /// What the last snapshot since [`Checkpoints::set_hint`] made, if one
    /// was taken; the hint, if none took it, is withdrawn.
    pub fn take_made(&self) -> Option<Made> {
        let mut lent = self.lent();
        lent.0 = None;
        lent.1.take()
    }

    fn lent(&self) -> std::sync::MutexGuard<'_, (Option<Hint>, Option<Made>)> {
        self.lent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Commits a snapshot as a checkpoint with its ref, then saves the
    /// snapshot's state; whether it was saved.
    fn commit_snapshot(
        &self,
        snap: &mut snapshot::Snapshot,
        opts: &CreateOptions,
    ) -> Result<(Checkpoint, bool), Error> {
        let skipped = snap.skipped.clone();
        let tree = self
            .repo
            .find_tree(snap.tree)
            .map_err(git("reading the tree"))?;
        // The state's checkpoint is the newest, short of a listing of
        // every checkpoint.
        let after = snap.after.and_then(|c| self.repo.find_commit(c).ok());
        let previous = after.map_or_else(|| self.newest(), |c| Ok(Some(c)))?;
        // The previous checkpoint is named in a trailer, not as a parent:
        // a parent would keep every dropped checkpoint's objects alive
        // for as long as any later checkpoint is kept.
        let parent = self.head();
        let head = parent.as_ref().map(|c| c.id().to_string());
        let time = now();
        let mut message = format!(
            "mend checkpoint{}\n\n",
            opts.label
                .as_ref()
                .map_or(String::new(), |l| format!(": {l}"))
        );
        if let Some(l) = &opts.label {
            message.push_str(&format!("Mend-Label: {}\n", l.replace('\n', " ")));
        }
        if let Some(a) = &opts.anchor {
            message.push_str(&format!("Mend-Anchor: {}\n", a.replace('\n', " ")));
        }
        message.push_str(&format!("Mend-Time: {time}\n"));
        if let Some(h) = &head {
            message.push_str(&format!("Mend-Head: {h}\n"));
        }
        if let Some(p) = &previous {
            message.push_str(&format!("Mend-Previous: {}\n", p.id()));
        }
        for s in &skipped {
            message.push_str(&format!("Mend-Skipped: {}\n", skipped_trailer(s)));
        }
        let sig = Signature::new("mend", "mend@localhost", &git2::Time::new(time, 0))
            .map_err(git("making the signature"))?;
        let parents: Vec<&Commit<'_>> = parent.iter().collect();
        let oid = self
            .repo
            .commit(None, &sig, &sig, &message, &tree, &parents)
            .map_err(git("committing the checkpoint"))?;
        let id = oid.to_string()[..12].to_owned();
        self.repo
            .reference(&checkpoint_ref(oid), oid, true, "mend checkpoint")
            .map_err(git("writing the checkpoint ref"))?;
        // Saved only now that a ref holds every object it names. It is a
        // cache: if it cannot be saved, the next snapshot hashes more, and
        // is still right.
        let saved = self.ws.seal().is_ok_and(|seal| {
            self.state
                .save(&seal, &mut snap.state, &snap.changes, oid)
                .is_ok()
        });
        if !saved {
            // An older state would name an older checkpoint as the newest.
            let _ = self.state.remove();
        }
        let checkpoint = Checkpoint {
            id,
            commit: oid.to_string(),
            label: opts.label.clone(),
            anchor: opts.anchor.clone(),
            time,
            head,
            skipped,
        };
        Ok((checkpoint, saved))
    }

    /// What [`Checkpoints::create`] would snapshot, without writing a
    /// checkpoint or a ref.
    pub fn preview(&self, opts: &CreateOptions) -> Result<Preview, Error> {
        let snap = self.walk(opts.max_file_bytes, &mut |_| {})?;
        Ok(Preview {
            files: snap.files,
            skipped: snap.skipped,
        })
    }

    /// The walk, on a thread of its own (with its own repository handle)
    /// so this one can report progress while it runs.
    fn walk(
        &self,
        max_file_bytes: u64,
        progress: &mut dyn FnMut(usize),
    ) -> Result<snapshot::Snapshot, Error> {
        self.walk_from(None, max_file_bytes, progress)
    }

    /// [`Checkpoints::walk`] from `held`, the state file's content when
    /// this process holds it already.
    fn walk_from(
        &self,
        held: Option<snapshot::state::State>,
        max_file_bytes: u64,
        progress: &mut dyn FnMut(usize),
    ) -> Result<snapshot::Snapshot, Error> {
        let state = &self.state;
        // The state is sealed with the root's `.mend`; without its seal it
        // is not read, and the snapshot hashes every file.
        let seal = self.ws.seal().ok();
        let seal = &seal;
        let seen = std::sync::atomic::AtomicUsize::new(0);
        let gitdir = self.repo.path().to_path_buf();
        let root = self.root().to_path_buf();
        // Only a root's first checkpoint is limited.
        let max_files = (!has_checkpoints(&self.repo)?).then_some(self.opts.max_files);
        let pack = self.shadow;
        std::thread::scope(|s| {
            let (tx, rx) = std::sync::mpsc::channel();
            let (gitdir, root, seen) = (&gitdir, &root, &seen);
            s.spawn(move || {
                let run = || {
                    let repo = Repository::open(gitdir).map_err(git("opening the repository"))?;
                    let prev = held.unwrap_or_else(|| {
                        seal.as_ref()
                            .map_or_else(Default::default, |s| state.load(s))
                    });
                    // Objects the state names may be pruned once no ref
                    // holds them.
                    let held = prev
                        .commit
                        .is_some_and(|c| repo.refname_to_id(&checkpoint_ref(c)).ok() == Some(c));
                    let prev = if held { prev } else { Default::default() };
                    snapshot::snapshot(
                        &snapshot::Walk {
                            repo: &repo,
                            root,
                            max_file_bytes,
                            seen,
                            pack,
                            max_files,
                        },
                        prev,
                    )
                };
                let _ = tx.send(run());
            });
            let snap = loop {
                match rx.recv_timeout(Duration::from_millis(100)) {
                    Ok(result) => break result?,
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                        progress(seen.load(std::sync::atomic::Ordering::Relaxed));
                    }
                    Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                        return Err(Error::Io {
                            context: "snapshotting the worktree".into(),
                            cause: std::io::Error::other("the snapshot thread panicked"),
                        });
                    }
                }
            };
            progress(snap.files);
            Ok(snap)
        })
    }

    fn find_commit(&self, sha: &str) -> Result<Commit<'_>, Error> {
        let oid = Oid::from_str(sha).map_err(git("reading a commit id"))?;
        self.repo
            .find_commit(oid)
            .map_err(git("reading a checkpoint"))
    }

    fn describe(&self, id: &str, c: &Commit<'_>) -> Checkpoint {
        let msg = c.message().unwrap_or("");
        let skipped = trailers(msg, "Mend-Skipped")
            .iter()
            .map(|s| parse_skipped(s))
            .collect();
        Checkpoint {
            id: id.to_owned(),
            commit: c.id().to_string(),
            label: trailer(msg, "Mend-Label"),
            anchor: trailer(msg, "Mend-Anchor"),
            time: trailer(msg, "Mend-Time")
                .and_then(|t| t.parse().ok())
                .unwrap_or_else(|| c.time().seconds()),
            head: trailer(msg, "Mend-Head"),
            skipped,
        }
    }

    /// Every checkpoint, newest first.
    pub fn list(&self) -> Result<Vec<Checkpoint>, Error> {
        let mut out = Vec::new();
        let refs = self
            .repo
            .references_glob(&format!("{REF_PREFIX}*"))
            .map_err(git("listing checkpoints"))?;
        for r in refs {
            let r = r.map_err(git("reading a checkpoint ref"))?;
            let Some(name) = r.name() else { continue };
            let id = name.trim_start_matches(REF_PREFIX).to_owned();
            let c = r.peel_to_commit().map_err(git("reading a checkpoint"))?;
            out.push(self.describe(&id, &c));
        }
        // Newest first; ties (same second) by commit ancestry order.
        out.sort_by(|a, b| b.time.cmp(&a.time).then_with(|| self.order(a, b)));
        Ok(out)
    }

    fn order(&self, a: &Checkpoint, b: &Checkpoint) -> std::cmp::Ordering {
        let (Ok(oa), Ok(ob)) = (Oid::from_str(&a.commit), Oid::from_str(&b.commit)) else {
            return std::cmp::Ordering::Equal;
        };
        if self.follows(oa, ob) {
            std::cmp::Ordering::Less
        } else if self.follows(ob, oa) {
            std::cmp::Ordering::Greater
        } else {
            std::cmp::Ordering::Equal
        }
    }

    /// The checkpoint made before the one whose commit is `c`: its
    /// `Mend-Previous` trailer, or for a checkpoint made before there was
    /// one, its parent.
    fn previous(&self, c: &Commit<'_>) -> Option<Oid> {
        let msg = c.message_raw().unwrap_or("");
        match trailer(msg, "Mend-Previous") {
            Some(p) => Oid::from_str(&p).ok(),
            None if trailer(msg, "Mend-Time").is_some() => c.parent_id(0).ok(),
            None => None,
        }
    }

    /// Whether checkpoint `later` was made after `earlier`: `earlier` is
    /// among the checkpoints before it, followed back while they are no
    /// older than `earlier` (ties are within one second).
    fn follows(&self, later: Oid, earlier: Oid) -> bool {
        let Ok(stop) = self.repo.find_commit(earlier).map(|c| c.time().seconds()) else {
            return false;
        };
        let mut at = self.repo.find_commit(later).ok();
        while let Some(c) = at {
            let Some(p) = self.previous(&c) else {
                return false;
            };
            if p == earlier {
                return true;
            }
            at = self
                .repo
                .find_commit(p)
                .ok()
                .filter(|c| c.time().seconds() >= stop);
        }
        false
    }

    /// The newest checkpoint's commit (a same-second tie goes to the
    /// one made later), as `list` would put first, without describing and
    /// sorting every checkpoint: a create's parent.
    fn newest(&self) -> Result<Option<Commit<'_>>, Error> {
        let refs = self
            .repo
            .references_glob(&format!("{REF_PREFIX}*"))
            .map_err(git("listing checkpoints"))?;
        let mut best: Option<Commit<'_>> = None;
        for r in refs {
            let r = r.map_err(git("reading a checkpoint ref"))?;
            let c = r.peel_to_commit().map_err(git("reading a checkpoint"))?;
            let newer = match &best {
                None => true,
                Some(b) => {
                    let (ct, bt) = (c.time().seconds(), b.time().seconds());
                    ct > bt || (ct == bt && self.follows(c.id(), b.id()))
                }
            };
            if newer {
                best = Some(c);
            }
        }
        Ok(best)
    }

    /// The checkpoint with this id (or a unique prefix of it).
    pub fn get(&self, id: &str) -> Result<Checkpoint, Error> {
        let id = id.to_ascii_lowercase();
        // Ref names only: describing and ordering every checkpoint (as
        // `list` does) made each restore slower as safety checkpoints
        // piled up.
        let refs = self
            .repo
            .references_glob(&format!("{REF_PREFIX}*"))
            .map_err(git("listing checkpoints"))?;
        let mut found = Vec::new();
        for r in refs {
            let r = r.map_err(git("reading a checkpoint ref"))?;
            let Some(name) = r.name() else { continue };
            let ref_id = name.trim_start_matches(REF_PREFIX);
            // An id, a prefix of one, or the commit's longer id (what
            // `create --json` gives as `commit`).
            let longer = id.len() > ref_id.len() && id.starts_with(ref_id);
            if !id.is_empty() && (ref_id.starts_with(id.as_str()) || longer) {
                let c = r.peel_to_commit().map_err(git("reading a checkpoint"))?;
                if !longer || c.id().to_string().starts_with(id.as_str()) {
                    found.push(self.describe(ref_id, &c));
                }
            }
        }
        match found.len() {
            1 => Ok(found.into_iter().next().expect("one")),
            0 => Err(Error::NotFound(id)),
            _ => Err(Error::Ambiguous {
                prefix: id,
                matches: found.into_iter().map(|c| c.id).collect(),
            }),
        }
    }

    fn tree_of(&self, c: &Checkpoint) -> Result<Tree<'_>, Error> {
        self.find_commit(&c.commit)?
            .tree()
            .map_err(git("reading a checkpoint tree"))
    }

    /// The files a checkpoint changed compared with the previous one.
    pub fn show(&self, id: &str) -> Result<Vec<FileChange>, Error> {
        let cp = self.get(id)?;
        let commit = self.find_commit(&cp.commit)?;
        let tree = commit.tree().map_err(git("reading the tree"))?;
        // The previous checkpoint; once it is gone, HEAD then.
        let before = self
            .previous(&commit)
            .and_then(|p| self.repo.find_commit(p).ok())
            .or_else(|| commit.parent(0).ok());
        let parent_tree = before.and_then(|p| p.tree().ok());
        let diff = self
            .repo
            .diff_tree_to_tree(parent_tree.as_ref(), Some(&tree), None)
            .map_err(git("comparing checkpoints"))?;
        Ok(diff
            .deltas()
            .filter_map(|d| {
                let status = match d.status() {
                    Delta::Added => Status::Added,
                    Delta::Deleted => Status::Deleted,
                    Delta::Modified | Delta::Typechange => Status::Modified,
                    _ => return None,
                };
                let path = d.new_file().path().or_else(|| d.old_file().path())?;
                Some(FileChange {
                    path: path.to_string_lossy().into_owned(),
                    status,
                })
            })
            .collect())
    }

    /// A unified diff from a checkpoint to the worktree now (untracked,
    /// not-ignored files included).
    pub fn diff(&self, id: &str) -> Result<String, Error> {
        let cp = self.get(id)?;
        let tree = self.tree_of(&cp)?;
        let mut opts = DiffOptions::new();
        opts.include_untracked(true)
            .recurse_untracked_dirs(true)
            .show_untracked_content(true);
        let diff = self
            .repo
            .diff_tree_to_workdir(Some(&tree), Some(&mut opts))
            .map_err(git("comparing with the worktree"))?;
        let mut out = String::new();
        diff.print(DiffFormat::Patch, |_, _, line| {
            match line.origin() {
                '+' | '-' | ' ' => out.push(line.origin()),
                _ => {}
            }
            out.push_str(&String::from_utf8_lossy(line.content()));
            true
        })
        .map_err(git("printing the diff"))?;
        Ok(out)
    }

    /// Files of a tree: path → (blob id, mode), each path spelled as
    /// [`names::spell`] spells its bytes (a name that is not UTF-8, or
    /// holds a backslash or a control character, escaped), so no two
    /// files share a key and each key gives its bytes back.
    pub(crate) fn files(&self, tree: &Tree<'_>) -> Result<restore::Files, Error> {
        let mut out = BTreeMap::new();
        let mut folders = vec![(Vec::new(), tree.id())];
        while let Some((prefix, id)) = folders.pop() {
            let t = self.repo.find_tree(id).map_err(git("walking a tree"))?;
            for e in t.iter() {
                let path = [prefix.as_slice(), e.name_bytes()].concat();
                match e.kind() {
                    Some(ObjectType::Tree) => {
                        folders.push(([path, b"/".to_vec()].concat(), e.id()));
                    }
                    Some(ObjectType::Blob) => {
                        out.insert(names::spell(&path).into_owned(), (e.id(), e.filemode()));
                    }
                    _ => {}
                }
            }
        }
        Ok(out)
    }

    /// Deletes a checkpoint's ref (its objects go at git's next gc). The
    /// open turn's start is refused: the turn compares with it.
    pub fn drop(&self, id: &str) -> Result<Checkpoint, Error> {
        let _lock = self.lock()?;
        let cp = self.get(id)?;
        if self.open_turn_start().as_deref() == Some(cp.commit.as_str()) {
            return Err(Error::TurnRefused(format!(
                "checkpoint {} is the start of the open turn, which compares with it; `mend turn end` closes the turn, then it can be dropped",
                cp.id
            )));
        }
        self.drop_ref(id)
    }

    /// The commit of the open turn's start, which `drop`, `gc` and a
    /// restore's pruning keep (none when no turn is open or its state is
    /// unreadable).
    pub(crate) fn open_turn_start(&self) -> Option<String> {
        let dir = self.ws.private_dir().ok()?;
        Some(turn::state::load(&dir).ok()??.commit)
    }

    /// [`Checkpoints::drop`] under a lock the caller holds.
    fn drop_ref(&self, id: &str) -> Result<Checkpoint, Error> {
        let cp = self.get(id)?;
        let mut r = self
            .repo
            .find_reference(&format!("{REF_PREFIX}{}", cp.id))
            .map_err(git("finding the checkpoint ref"))?;
        r.delete().map_err(git("deleting the checkpoint ref"))?;
        self.record_dropped(&cp.commit)?;
        Ok(cp)
    }

    /// Drops all but the newest `keep` checkpoints and those older than
    /// `older_than`, then frees what no checkpoint holds any more. The
    /// open turn's start is kept.
    pub fn gc(
        &self,
        keep: Option<usize>,
        older_than: Option<Duration>,
    ) -> Result<Vec<Checkpoint>, Error> {
        Ok(self.gc_with(keep, older_than)?.0)
    }

    /// [`Checkpoints::gc`], with what it freed: in a shadow repository
    /// everything no checkpoint holds; in a git repository the loose
    /// objects that only dropped checkpoints held (see `prune.rs`).
    pub fn gc_with(
        &self,
        keep: Option<usize>,
        older_than: Option<Duration>,
    ) -> Result<(Vec<Checkpoint>, Pruned), Error> {
        let _lock = self.lock()?;
        let now = now();
        let mut dropped = Vec::new();
        let start = self.open_turn_start();
        for (k, c) in self.list()?.into_iter().enumerate() {
            if start.as_deref() == Some(c.commit.as_str()) {
                continue;
            }
            let too_many = keep.is_some_and(|n| k >= n);
            // Saturating: an age limit past i64 seconds keeps everything.
            let too_old = older_than.is_some_and(|d| {
                now.saturating_sub(c.time) > i64::try_from(d.as_secs()).unwrap_or(i64::MAX)
            });
            if too_many || too_old {
                dropped.push(self.drop_ref(&c.id)?);
            }
        }
        Ok((dropped, self.prune()?))
    }
}
