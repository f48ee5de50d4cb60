//! Turns: every change an agent's turn made to the worktree, however it
//! was made (its own edit tools, `sed -i`, a formatter, `git checkout`,
//! `rm`, `mv`), reviewed hunk by hunk.
//!
//! A turn is a checkpoint and a review overlay. `begin` checkpoints the
//! worktree (the turn's **start**); `status` and `diff` compare a snapshot
//! of the worktree now with the **review base**: the start, with what was
//! accepted laid over it. Whoever changed a file shows, the person too.
//!
//! - `reject` puts the review base's content of whole files or of single
//!   hunks back, after a safety checkpoint (so it can be undone exactly),
//!   in one `mend-workspace` transaction; bytes outside a rejected hunk are
//!   copied from the file as it is. A hunk whose region changed since
//!   `diff` numbered it is refused, and nothing is written.
//! - `accept` moves the review base: nothing in the worktree is written.
//! - `end` forgets the overlay; the start stays a checkpoint, so `mend
//!   checkpoint restore` can still rewind the whole turn, undoably.
//!
//! A root holds at most one open turn; its state is `.mend/turn.json`
//! (written atomically), and every operation runs under the workspace lock.
//! Hunks are numbered by [`mend_merge::hunks`], as `mend pending diff`
//! numbers them.

mod act;
mod changes;
mod report;
pub(crate) mod state;
mod undo;

pub use act::Selection;

/// Where the open turn's state file of `root` is, for a screen that
/// watches its metadata to know when to look again (nothing reads it by
/// this path: [`Turns`] reads it through the workspace).
pub fn state_path(root: &Path) -> std::path::PathBuf {
    root.join(".mend").join(state::FILE)
}
pub use report::{
    Acted, Begun, ChangeDiff, Ended, HeadMoved, IgnoredFile, TurnAccepted, TurnDiff, TurnFile,
    TurnInfo, TurnRejected, TurnStatus, TurnSummary, TurnUndone,
};

use std::path::Path;

use git2::{Oid, Tree};
use mend_workspace::{Lock, PrivateDir};

use crate::{Checkpoint, Checkpoints, CreateOptions, Error, Skipped, git};
use changes::Entry;
use state::{Held, State};

use crate::store::HOLD_PREFIX;

/// Files larger than this are listed with their sizes, never diffed.
pub const DIFF_LIMIT: u64 = 1024 * 1024;

/// How a turn begins.
#[derive(Debug, Clone, Default)]
pub struct BeginOptions {
    /// A label for humans (also the start checkpoint's).
    pub label: Option<String>,
    /// The agent's session id, when a hook begins the turn.
    pub session: Option<String>,
    /// The agent whose hook begins it.
    pub agent: Option<String>,
    /// Begin even where a first checkpoint is refused (a home directory,
    /// a filesystem root): open the turns with [`Turns::open_forced`].
    pub force: bool,
}

/// The turns of one worktree.
pub struct Turns {
    cps: Checkpoints,
}

/// The worktree now, as the turn compares it.
struct Now<'r> {
    tree: Tree<'r>,
    skipped: Vec<Skipped>,
}

impl Turns {
    /// Opens the turns of `root` (its checkpoints; see [`Checkpoints::open`]).
    pub fn open(root: &Path) -> Result<Self, Error> {
        Ok(Turns {
            cps: Checkpoints::open(root)?,
        })
    }

    /// [`Turns::open`], waiting at most `lock_timeout` for another mend
    /// writing in the root (an agent's hook must not wait long).
    pub fn open_with(root: &Path, lock_timeout: std::time::Duration) -> Result<Self, Error> {
        Self::open_forced(root, lock_timeout, false)
    }

    /// [`Turns::open_with`]; with `force`, a home directory or filesystem
    /// root is opened too (see [`crate::OpenOptions::force`]).
    pub fn open_forced(
        root: &Path,
        lock_timeout: std::time::Duration,
        force: bool,
    ) -> Result<Self, Error> {
        let opts = crate::OpenOptions {
            force,
            ..crate::OpenOptions::default()
        };
        let mut cps = Checkpoints::open_with(root, &opts)?;
        cps.set_lock_timeout(lock_timeout)?;
        Ok(Turns { cps })
    }

    /// The turns over checkpoints already open: a long-running process's,
    /// whose snapshot state stays in memory between turns.
    pub fn from_checkpoints(cps: Checkpoints) -> Self {
        Turns { cps }
    }

    /// The checkpoints the turns are made of.
    pub fn checkpoints(&self) -> &Checkpoints {
        &self.cps
    }

    /// The checkpoints, to change how long they wait for the lock.
    pub fn checkpoints_mut(&mut self) -> &mut Checkpoints {
        &mut self.cps
    }

    fn private(&self) -> Result<PrivateDir, Error> {
        Ok(self.cps.ws.private_dir()?)
    }

    /// The open turn, or [`Error::NoTurn`].
    fn open_turn(&self) -> Result<State, Error> {
        state::load(&self.private()?)?.ok_or(Error::NoTurn)
    }

    /// Checkpoints the worktree as a new turn's start. An open turn is
    /// ended first (its start stays a checkpoint); a state file that
    /// cannot be read is replaced, and both are said in the outcome.
    pub fn begin(
        &self,
        opts: &BeginOptions,
        progress: &mut dyn FnMut(usize),
    ) -> Result<Begun, Error> {
        // A long-running caller may have lent a watcher's hint (see
        // `Checkpoints::set_hint`).
        let lent = self.cps.lent_hint();
        let (begun, state, scan) = self.begin_hinted(opts, lent.as_ref(), progress)?;
        self.cps.lent_made(crate::Made { state, scan });
        Ok(begun)
    }

    /// [`Turns::begin`] with a watcher's hint (see
    /// [`Checkpoints::create_hinted`]): the snapshot state to pair the
    /// watcher's token with, and how the start was snapshotted.
    pub fn begin_hinted(
        &self,
        opts: &BeginOptions,
        hint: Option<&crate::Hint>,
        progress: &mut dyn FnMut(usize),
    ) -> Result<(Begun, crate::StateId, crate::Scan), Error> {
        let lock = self.cps.lock()?;
        let dir = self.private()?;
        // Before the snapshot: what changes from here is the turn's.
        let began = began(&dir);
        let excludes = self.excludes();
        let (ended, replaced) = match state::load(&dir) {
            Ok(prev) => (prev.map(|s| s.turn), None),
            Err(Error::TurnCorrupt { what }) => (None, Some(what)),
            Err(e) => return Err(e),
        };
        // The turn ended here held its review in a ref of its own.
        self.release()?;
        let created = self.cps.create_hinted(
            &lock,
            &CreateOptions {
                label: Some(match &opts.label {
                    Some(l) => format!("turn start: {l}"),
                    None => "turn start".to_owned(),
                }),
                anchor: opts.session.clone(),
                ..CreateOptions::default()
            },
            hint,
            progress,
        )?;
        let cp = created.checkpoint;
        let st = State {
            turn: TurnInfo {
                id: cp.id.clone(),
                label: opts.label.clone(),
                start: cp.id.clone(),
                head: cp.head.clone(),
                session: opts.session.clone(),
                agent: opts.agent.clone(),
                time: cp.time,
            },
            commit: cp.commit.clone(),
            accepted: Default::default(),
            shown: Default::default(),
            last: None,
            began,
            excludes,
        };
        state::save(&dir, &st)?;
        let begun = Begun {
            turn: st.turn,
            ended,
            replaced,
        };
        Ok((begun, created.state, created.scan))
    }

    /// The contents of the excludes files git reads for the root, lowest
    /// priority first (see [`crate::snapshot::rules`]); one that cannot be
    /// read holds no rules, as for git.
    fn excludes(&self) -> Vec<String> {
        const MAX: u64 = 1024 * 1024;
        let repo = &self.cps.repo;
        let files = [
            crate::snapshot::rules::excludes_file(repo),
            Some(repo.commondir().join("info/exclude")),
        ];
        files
            .into_iter()
            .flatten()
            .filter_map(|f| {
                use std::io::Read as _;
                let mut bytes = Vec::new();
                let file = std::fs::File::open(f).ok()?;
                file.take(MAX).read_to_end(&mut bytes).ok()?;
                Some(String::from_utf8_lossy(&bytes).into_owned())
            })
            .filter(|t| !t.trim().is_empty())
            .collect()
    }

    /// Closes the open turn. Its start stays a checkpoint. A state file
    /// that cannot be read is removed (the start checkpoint is not).
    pub fn end(&self) -> Result<Ended, Error> {
        let _lock = self.cps.lock()?;
        let dir = self.private()?;
        let st = match state::load(&dir) {
            Ok(Some(st)) => Some(st),
            Ok(None) => return Err(Error::NoTurn),
            Err(Error::TurnCorrupt { .. }) => None,
            Err(e) => return Err(e),
        };
        self.release()?;
        state::remove(&dir)?;
        Ok(Ended {
            turn: st.map(|s| s.turn),
        })
    }

    /// What changed since the turn began, with letters; with `ignored`,
    /// ignored files modified since too (no checkpoint holds them).
    pub fn status(&self, ignored: bool) -> Result<TurnStatus, Error> {
        let lock = self.cps.lock()?;
        let st = self.open_turn()?;
        let now = self.snapshot(&lock)?;
        let entries = self.entries(&st, &now)?;
        let files = entries
            .iter()
            .map(|e| self.file(e))
            .collect::<Result<_, _>>()?;
        Ok(TurnStatus {
            turn: st.turn.clone(),
            head_moved: self.head_moved(&st),
            files,
            ignored: if ignored {
                Some(self.ignored_since(st.turn.time)?)
            } else {
                None
            },
        })
    }

    /// How many files changed since the turn began, by letter, without
    /// reading any file's content: what an agent's hook shows after each
    /// reply. [`Turns::status`] reads both sides of every file to count
    /// its hunks, which for a turn that rewrote many large files costs
    /// far more than an agent waits for its hook.
    pub fn summary(&self) -> Result<TurnSummary, Error> {
        let lock = self.cps.lock()?;
        let st = self.open_turn()?;
        let now = self.snapshot(&lock)?;
        let entries = self.entries(&st, &now)?;
        let mut letters: Vec<(mend_core::report::Status, usize)> = Vec::new();
        for e in &entries {
            match letters.iter_mut().find(|(l, _)| *l == e.status) {
                Some((_, n)) => *n += 1,
                None => letters.push((e.status, 1)),
            }
        }
        letters.sort();
        Ok(TurnSummary {
            turn: st.turn.clone(),
            head_moved: self.head_moved(&st),
            files: entries.len(),
            letters,
        })
    }

    /// The diff of each changed file (of those under `paths`; all when
    /// none is given), hunks numbered as `--hunk` takes them; recorded as
    /// shown, so `reject`/`accept --hunk` act only on hunks seen.
    pub fn diff(&self, paths: &[String]) -> Result<TurnDiff, Error> {
        let lock = self.cps.lock()?;
        let dir = self.private()?;
        let mut st = self.open_turn()?;
        let was = st.shown.clone();
        let now = self.snapshot(&lock)?;
        let entries = self.entries(&st, &now)?;
        let paths = self.normalized(paths)?;
        let mut files = Vec::new();
        for e in act::chosen(&entries, &paths)? {
            let (diff, shown) = self.file_diff(e)?;
            match shown {
                Some(fps) => st.shown.insert(e.path.clone(), fps),
                None => st.shown.remove(&e.path),
            };
            files.push(diff);
        }
        // Editors and panels ask for diffs often: the file is rewritten
        // only when what was shown changed.
        if st.shown != was {
            state::save(&dir, &st)?;
        }
        Ok(TurnDiff {
            turn: st.turn.clone(),
            head_moved: self.head_moved(&st),
            files,
        })
    }

    /// Paths as given, in the form the trees spell them.
    fn normalized(&self, paths: &[String]) -> Result<Vec<String>, Error> {
        paths.iter().map(|p| self.normalized_one(p)).collect()
    }

    /// A path argument as `status` spells it (see [`crate::names`]): a
    /// plain one by the workspace's rules, one with an escape read back
    /// to its bytes and spelled again.
    fn normalized_one(&self, p: &str) -> Result<String, Error> {
        if crate::names::is_plain(p) {
            return Ok(self.cps.ws.normalize_entry(p)?);
        }
        let bytes = crate::names::unspell(p).map_err(Error::TurnRefused)?;
        let trimmed = bytes.strip_prefix(b"./").unwrap_or(&bytes);
        let trimmed = trimmed.strip_suffix(b"/").unwrap_or(trimmed);
        let bad = trimmed.starts_with(b"/")
            || trimmed
                .split(|b| *b == b'/')
                .any(|n| n.is_empty() || n == b"." || n == b"..");
        if bad {
            return Err(Error::TurnRefused(format!(
                "{} is not a path under the root: give it as `mend turn status` lists it",
                mend_core::text::escape_controls(p)
            )));
        }
        Ok(crate::names::spell(trimmed).into_owned())
    }

    /// HEAD at the start and now, when they differ.
    fn head_moved(&self, st: &State) -> Option<report::HeadMoved> {
        let now = self.cps.head().map(|c| c.id().to_string());
        (now != st.turn.head).then(|| report::HeadMoved {
            from: st.turn.head.clone(),
            to: now,
        })
    }

    /// The worktree as a tree, without making a checkpoint.
    fn snapshot(&self, _lock: &Lock) -> Result<Now<'_>, Error> {
        let snap = self.cps.walk(crate::DEFAULT_MAX_FILE_BYTES, &mut |_| {})?;
        let tree = self
            .cps
            .repo
            .find_tree(snap.tree)
            .map_err(git("reading the snapshot"))?;
        Ok(Now {
            tree,
            skipped: snap.skipped,
        })
    }

    /// The start checkpoint's tree and what it skipped.
    fn start(&self, st: &State) -> Result<(Tree<'_>, Checkpoint), Error> {
        let commit = self
            .cps
            .find_commit(&st.commit)
            .map_err(|_| Error::TurnCorrupt {
                what: format!(
                    "the turn's start checkpoint {} is gone (dropped by `mend checkpoint drop` or `gc`), so there is nothing to compare with",
                    st.turn.id
                ),
            })?;
        let cp = self.cps.describe(&st.turn.id, &commit);
        let tree = commit.tree().map_err(git("reading the turn's start"))?;
        Ok((tree, cp))
    }

    /// The review base: the start with the accepted entries laid over it.
    fn review_base(&self, st: &State) -> Result<(Tree<'_>, Checkpoint), Error> {
        let (start, cp) = self.start(st)?;
        if st.accepted.is_empty() {
            return Ok((start, cp));
        }
        let repo = &self.cps.repo;
        let oid = match updated(repo, &start, &st.accepted) {
            Some(oid) => oid,
            None => indexed(repo, &start, &st.accepted)?,
        };
        let tree = repo
            .find_tree(oid)
            .map_err(git("reading the review base"))?;
        Ok((tree, cp))
    }

    /// The changes from the review base to `now`.
    fn entries(&self, st: &State, now: &Now<'_>) -> Result<Vec<Entry>, Error> {
        let (base, start) = self.review_base(st)?;
        let mut entries = changes::between(
            &self.cps.repo,
            &base,
            &now.tree,
            &start.skipped,
            &now.skipped,
        )?;
        changes::became_ignored(&mut entries, self.cps.root());
        changes::became_special(&mut entries, self.cps.root());
        Ok(entries)
    }

    /// Ignored files (none that HEAD tracks) modified since `since`.
    fn ignored_since(&self, since: i64) -> Result<Vec<IgnoredFile>, Error> {
        let mut opts = git2::StatusOptions::new();
        opts.include_ignored(true)
            .recurse_ignored_dirs(true)
            .include_untracked(false)
            .exclude_submodules(true);
        let statuses = self
            .cps
            .repo
            .statuses(Some(&mut opts))
            .map_err(git("listing ignored files"))?;
        let mut out = Vec::new();
        for s in statuses.iter() {
            let Some(path) = s.path() else { continue };
            if !s.status().is_ignored() || path == ".mend" || path.starts_with(".mend/") {
                continue;
            }
            let Ok(meta) = self.cps.root().join(path).symlink_metadata() else {
                continue;
            };
            use std::os::unix::fs::MetadataExt as _;
            if meta.is_file() && meta.mtime() >= since {
                out.push(IgnoredFile {
                    path: path.to_owned(),
                    size: meta.len(),
                });
            }
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }

    /// Points the turn's hold ref at a commit of its review base, so the
    /// blobs it accepted (which no checkpoint holds) stay reachable and
    /// git's gc never expires them while the turn is open. Without
    /// accepted entries the start checkpoint holds everything: no ref.
    fn hold(&self, st: &State) -> Result<(), Error> {
        if st.accepted.is_empty() {
            return self.release();
        }
        let id = &st.turn.id;
        // The id names a ref: only what mend itself makes (hex).
        if id.is_empty() || id.len() > 40 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(Error::TurnCorrupt {
                what: format!("the turn state names a turn {id:?} that is no turn id"),
            });
        }
        let (base, _) = self.review_base(st)?;
        let repo = &self.cps.repo;
        let sig = git2::Signature::new("mend", "mend@localhost", &git2::Time::new(crate::now(), 0))
            .map_err(git("making the signature"))?;
        let message = format!("mend turn {id}: what its review holds\n");
        let commit = repo
            .commit(None, &sig, &sig, &message, &base, &[])
            .map_err(git("committing what the turn holds"))?;
        repo.reference(&format!("{HOLD_PREFIX}{id}"), commit, true, "mend turn")
            .map_err(git("writing the turn's ref"))?;
        Ok(())
    }

    /// Deletes every turn's hold ref: a root holds at most one open turn,
    /// and this is called when it ends (or its state is lost).
    fn release(&self) -> Result<(), Error> {
        let repo = &self.cps.repo;
        let refs = repo
            .references_glob(&format!("{HOLD_PREFIX}*"))
            .map_err(git("listing the turn's refs"))?;
        for r in refs {
            r.map_err(git("reading a turn's ref"))?
                .delete()
                .map_err(git("deleting a turn's ref"))?;
        }
        Ok(())
    }

    /// A blob's bytes.
    fn blob(&self, oid: Oid) -> Result<Vec<u8>, Error> {
        Ok(self
            .cps
            .repo
            .find_blob(oid)
            .map_err(git("reading a file of the turn"))?
            .content()
            .to_vec())
    }
}

/// The time the filesystem stamps on a file made now, read from a probe
/// made in the private folder (on the worktree's filesystem): the kernel
/// stamps files with a clock a tick coarser than the system's, so a file
/// made just after `begin` can carry a time before the system clock's
/// reading of the moment; against the probe's it cannot. `None` when no
/// probe can be made (a reject then protects nothing by time).
fn began(dir: &PrivateDir) -> Option<(i64, i64)> {
    use std::os::unix::fs::MetadataExt as _;
    const PROBE: &str = "turn.began";
    let _ = dir.remove_file(PROBE);
    let meta = (dir.create_new(PROBE).ok()).and_then(|f| f.metadata().ok());
    let _ = dir.remove_file(PROBE);
    meta.map(|m| (m.ctime(), m.ctime_nsec()))
}

/// `start` with `accepted` laid over it, rewriting only the folders on
/// the accepted paths (where an index of the whole tree would read and
/// write every entry). `None` when git's tree update cannot express it
/// (a mode it has no name for, an id that does not parse, a path that
/// is a file on one side and a folder on the other): [`indexed`] then.
fn updated(repo: &git2::Repository, start: &Tree<'_>, accepted: &Accepted) -> Option<Oid> {
    let is_tree = |p: &str| {
        start
            .get_path(&bytes_of(p))
            .ok()
            .map(|e| e.kind() == Some(git2::ObjectType::Tree))
    };
    let mut update = git2::build::TreeUpdateBuilder::new();
    for (path, held) in accepted {
        // A tree update removes or replaces whole folders, where the
        // index acts on files alone: a file-folder clash goes that way.
        let clash = crate::restore::folders_of(path)
            .any(|f| accepted.contains_key(f) || is_tree(f) == Some(false));
        let nul = {
            use std::os::unix::ffi::OsStrExt as _;
            bytes_of(path).as_os_str().as_bytes().contains(&0)
        };
        if nul || clash || is_tree(path) == Some(true) {
            return None;
        }
        match held {
            None => update.remove(bytes_of(path)),
            Some(Held { blob, mode }) => {
                let mode = [
                    git2::FileMode::Blob,
                    git2::FileMode::BlobExecutable,
                    git2::FileMode::Link,
                    git2::FileMode::Commit,
                ]
                .into_iter()
                .find(|m| i32::from(*m) == *mode)?;
                update.upsert(bytes_of(path), Oid::from_str(blob).ok()?, mode)
            }
        };
    }
    update.create_updated(repo, start).ok()
}

/// [`updated`] through an index of the whole tree: every case, at the
/// cost of every entry.
fn indexed(repo: &git2::Repository, start: &Tree<'_>, accepted: &Accepted) -> Result<Oid, Error> {
    let mut index = git2::Index::new().map_err(git("making an index"))?;
    index
        .read_tree(start)
        .map_err(git("reading the turn's start"))?;
    for path in accepted.keys() {
        let _ = index.remove_path(&bytes_of(path));
    }
    for (path, held) in accepted {
        let Some(Held { blob, mode }) = held else {
            continue;
        };
        index
            .add(&index_entry(path, blob, *mode)?)
            .map_err(git("laying over what was accepted"))?;
    }
    index
        .write_tree_to(repo)
        .map_err(git("writing the review base"))
}

/// A spelled path (as entries and the state name it) as the bytes git
/// holds; see [`crate::names`].
fn bytes_of(spelled: &str) -> std::path::PathBuf {
    use std::os::unix::ffi::OsStrExt as _;
    let bytes =
        crate::names::unspell(spelled).unwrap_or(std::borrow::Cow::Borrowed(spelled.as_bytes()));
    std::path::PathBuf::from(std::ffi::OsStr::from_bytes(&bytes))
}

/// What a turn's state says was accepted, by path.
type Accepted = std::collections::BTreeMap<String, Option<Held>>;

/// An index entry for a blob at `path`.
fn index_entry(path: &str, blob: &str, mode: i32) -> Result<git2::IndexEntry, Error> {
    let id = Oid::from_str(blob).map_err(|_| Error::TurnCorrupt {
        what: format!("the turn state names a file {path} with a bad id {blob}"),
    })?;
    let bytes = {
        use std::os::unix::ffi::OsStrExt as _;
        bytes_of(path).as_os_str().as_bytes().to_vec()
    };
    Ok(git2::IndexEntry {
        ctime: git2::IndexTime::new(0, 0),
        mtime: git2::IndexTime::new(0, 0),
        dev: 0,
        ino: 0,
        mode: mode as u32,
        uid: 0,
        gid: 0,
        file_size: 0,
        id,
        flags: bytes.len().min(0xfff) as u16,
        flags_extended: 0,
        path: bytes,
    })
}

#[cfg(test)]
mod tests {
    use git2::Repository;
    use proptest::prelude::*;

    use super::changes::tests::{MODES, PATHS, TEXTS, side, tree};
    use super::{Accepted, Held, indexed, updated};

    /// The usual accepts (a change, an addition, a deletion, a mode) go
    /// by the tree update.
    #[test]
    fn plain_accepts_go_by_the_tree_update() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init_bare(dir.path()).unwrap();
        let start = repo
            .find_tree(tree(&repo, &[(2, 0, 0), (3, 1, 0), (0, 2, 0)]))
            .unwrap();
        let held = |t: usize, m: usize| {
            Some(Held {
                blob: repo.blob(TEXTS[t].as_bytes()).unwrap().to_string(),
                mode: MODES[m] as i32,
            })
        };
        let accepted: Accepted = [
            ("d/f".to_owned(), held(1, 0)),
            ("d/g".to_owned(), None),
            ("f".to_owned(), held(2, 1)),
            ("x/y/z".to_owned(), held(3, 0)),
        ]
        .into_iter()
        .collect();
        let by_update = updated(&repo, &start, &accepted);
        assert!(by_update.is_some());
        assert_eq!(by_update, indexed(&repo, &start, &accepted).ok());
    }

    proptest! {
        /// Laying accepted entries over a tree by git's tree update gives
        /// the tree the whole-index way gives, or declines.
        #[test]
        fn the_tree_update_is_the_index_update(
            start in side(),
            accepted in proptest::collection::btree_map(
                0..PATHS.len(),
                proptest::option::of((0..TEXTS.len(), 0..MODES.len())),
                0..5,
            ),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let repo = Repository::init_bare(dir.path()).unwrap();
            let start = repo.find_tree(tree(&repo, &start)).unwrap();
            let accepted: Accepted = accepted
                .into_iter()
                .map(|(p, held)| {
                    let held = held.map(|(t, m)| Held {
                        blob: repo.blob(TEXTS[t].as_bytes()).unwrap().to_string(),
                        mode: MODES[m] as i32,
                    });
                    (PATHS[p].to_owned(), held)
                })
                .collect();
            let by_index = indexed(&repo, &start, &accepted);
            if let Some(by_update) = updated(&repo, &start, &accepted) {
                prop_assert_eq!(Some(by_update), by_index.ok());
            }
        }
    }
}
