//! Checkpoints narrowed by a watcher: a process that watches the root
//! (`mend mcp`, `mend editor`, `mend daemon`) tells a checkpoint which
//! paths changed, and only those are examined (`snapshot/narrow.rs`).
//!
//! The caller settles its watcher, takes its change token T, calls
//! [`Checkpoints::create_hinted`] with the paths changed since the token it
//! paired with the last [`Created::state`], then pairs T with the new one.
//! T is taken before the snapshot starts, so what changes while it runs is
//! looked at again next time.
//!
//! A narrowed snapshot equals a full one; any doubt means a full scan,
//! and [`Scan::Full`] says why. The state is narrowed only from what this
//! `Checkpoints` saved itself and still holds in memory, and only while:
//! the state file on disk is the one it saved (same stat data: another
//! process's checkpoint appends to it or replaces it); the hint is for
//! that state; its checkpoint's ref holds it; HEAD is where it was (the
//! tree holds the ignored files HEAD tracks); `info/exclude`, the global
//! excludes file and the git configuration are as they were; the file
//! size limit is the same. Files the last snapshot found racy are examined
//! again with the hint's paths.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::sync::PoisonError;
use std::sync::atomic::{AtomicUsize, Ordering};

use git2::{Oid, Repository};
use serde::Serialize;

use crate::snapshot::state::{Changes, Record, Stat, State};
use crate::snapshot::{self, narrow};
use crate::{Checkpoint, Checkpoints, CreateOptions, Error, Skipped, checkpoint_ref};

/// Identifies the saved snapshot state a watcher's token was paired with:
/// the checkpoint it was saved with.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct StateId(Oid);

impl std::fmt::Display for StateId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// What a watcher saw change since the snapshot whose state is `state`.
#[derive(Clone, Debug)]
pub struct Hint {
    /// The state the watcher's token was paired with.
    pub state: StateId,
    /// Every path any event named since that token, relative to the root
    /// (files or folders, gone or not; `x/.git` for a nested repository
    /// made or removed).
    pub paths: Vec<PathBuf>,
}

/// How a checkpoint's snapshot was taken.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, schemars::JsonSchema)]
#[serde(tag = "scan", rename_all = "snake_case")]
pub enum Scan {
    /// Only the paths of the hint (and the files found racy last time),
    /// folders among them walked whole.
    Narrowed {
        /// Files examined.
        examined: usize,
    },
    /// The whole worktree was walked.
    Full {
        /// Why it was not narrowed.
        why: FullReason,
    },
}

/// Why a checkpoint walked the whole worktree rather than the paths a
/// watcher named.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FullReason {
    /// No hint: the caller has no watcher, or its watcher is in doubt.
    NoHint,
    /// This process holds no snapshot state yet: its first checkpoint of
    /// the root, or the last one's state could not be saved.
    NoState,
    /// The hint is for another state than the one held (an older one).
    OtherState,
    /// The state file changed or went away since this process saved it:
    /// another process checkpointed, or it was removed.
    StateChanged,
    /// The checkpoint the state was saved with was dropped.
    CheckpointGone,
    /// HEAD moved: the tree holds the ignored files HEAD tracks.
    HeadMoved,
    /// `info/exclude`, the global excludes file or the git configuration
    /// changed.
    RulesChanged,
    /// The root's `.gitignore` changed: its rules apply everywhere.
    RootRules,
    /// Another file size limit than last time.
    OptionsChanged,
    /// A file gained another name (a hard link): its other names, which
    /// no event may reach, are found by a walk.
    NewHardLink,
    /// The hint named a path that is no worktree path (absolute, with
    /// `..`, or not UTF-8).
    BadPath,
}

impl std::fmt::Display for FullReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FullReason::NoHint => "no watcher named the changed paths",
            FullReason::NoState => "no snapshot state held yet",
            FullReason::OtherState => "the watcher's changes are for another snapshot state",
            FullReason::StateChanged => "another process wrote the snapshot state",
            FullReason::CheckpointGone => "the last checkpoint was dropped",
            FullReason::HeadMoved => "HEAD moved",
            FullReason::RulesChanged => "ignore rules outside the worktree or git's config changed",
            FullReason::RootRules => "the root's .gitignore changed",
            FullReason::OptionsChanged => "the file size limit changed",
            FullReason::NewHardLink => "a file gained another name (a hard link)",
            FullReason::BadPath => "the watcher named a path outside the worktree",
        })
    }
}

/// A checkpoint made, with the state to pair the watcher's token with.
#[derive(Clone, Debug)]
pub struct Created {
    /// The checkpoint.
    pub checkpoint: Checkpoint,
    /// The snapshot state saved with it.
    pub state: StateId,
    /// How its snapshot was taken.
    pub scan: Scan,
}

/// The snapshot state this process saved last, with what must be as it
/// was for the next snapshot to be narrowed from it.
pub(crate) struct Held {
    state: State,
    id: StateId,
    /// The state file's stat data right after the save.
    file: Stat,
    env: Env,
    skipped: Vec<Skipped>,
    /// Files found racy: examined again whatever the hint says.
    racy: Vec<Vec<u8>>,
    /// Files with more than one name: examined again whatever the hint
    /// says, since a write through another name reaches no watched folder.
    linked: Vec<Vec<u8>>,
}

/// What the walk reads besides the worktree.
#[derive(PartialEq, Eq, Debug)]
struct Env {
    head: Option<Oid>,
    exclude: Option<Stat>,
    config: Option<Stat>,
    global: Option<(PathBuf, Option<Stat>)>,
    max_file_bytes: u64,
}

impl Env {
    fn read(repo: &Repository, max_file_bytes: u64) -> Env {
        let stamp = |p: &Path| std::fs::metadata(p).ok().map(|m| Stat::of(&m));
        let global = snapshot::rules::excludes_file(repo).map(|p| {
            let s = stamp(&p);
            (p, s)
        });
        Env {
            head: repo
                .head()
                .ok()
                .and_then(|h| h.peel_to_commit().ok())
                .map(|c| c.id()),
            exclude: stamp(&repo.commondir().join("info/exclude")),
            config: stamp(&repo.commondir().join("config")),
            global,
            max_file_bytes,
        }
    }
}

/// The files with more than one name after a snapshot: all of them after
/// a full one; after a narrowed one, those known before that still are
/// and those it examined.
fn hard_linked(
    scan: &Scan,
    before: Option<Vec<Vec<u8>>>,
    snap: &snapshot::Snapshot,
) -> Vec<Vec<u8>> {
    let state = &snap.state;
    let linked = |p: &Vec<u8>| state.files.get(p).is_some_and(|r| r.linked);
    match (scan, before) {
        (Scan::Narrowed { .. }, Some(mut before)) => {
            before.retain(linked);
            let examined =
                (snap.changes.files.iter()).filter(|(p, r)| r.linked && !before.contains(p));
            let examined: Vec<Vec<u8>> = examined.map(|(p, _)| p.clone()).collect();
            before.extend(examined);
            before
        }
        _ => (state.files.iter())
            .filter(|(_, r)| r.linked)
            .map(|(p, _)| p.to_vec())
            .collect(),
    }
}

/// What a narrowed snapshot examines whatever the hint says: files found
/// racy, files with more than one name, and files left out as too large
/// (few; whether they have more names is not held, and a write through
/// another name would leave their stamp stale).
fn again(held: &Held) -> Vec<Vec<u8>> {
    let large = (held.skipped.iter())
        .filter(|s| s.stamp.is_some() && !s.path.contains(char::REPLACEMENT_CHARACTER))
        .map(|s| s.path.as_bytes().to_vec());
    (held.racy.iter().chain(&held.linked).cloned())
        .chain(large)
        .collect()
}

/// Whether a narrowed snapshot found a file with more than one name whose
/// file the last snapshot did not know as such: its other names in the
/// worktree may hold writes no event told of, and only a walk finds them.
/// (A file known to have more names had each of them examined again.)
/// `named` are the files the hint named that have more than one name,
/// ignored ones included (a name in an ignored place is never examined,
/// but a write through it changes a file the snapshot holds).
fn gained_a_name(
    changes: &Changes,
    before: &State,
    linked: &[Vec<u8>],
    named: &[(u64, u64)],
) -> bool {
    let known: HashSet<(u64, u64)> = (linked.iter())
        .filter_map(|p| before.files.get(p))
        .map(|r| (r.stat.dev, r.stat.ino))
        .collect();
    let unknown = |r: &Record| r.linked && !known.contains(&(r.stat.dev, r.stat.ino));
    if changes.files.iter().any(|(_, r)| unknown(r)) {
        return true;
    }
    let named: HashSet<&(u64, u64)> = named.iter().filter(|id| !known.contains(id)).collect();
    !named.is_empty() && (before.files.values()).any(|r| named.contains(&(r.stat.dev, r.stat.ino)))
}

/// The (device, inode) of each file `paths` names under `root` that has
/// more than one name.
fn with_other_names(root: &Path, paths: &[Vec<u8>]) -> Vec<(u64, u64)> {
    use std::os::unix::fs::MetadataExt as _;
    (paths.iter())
        .filter_map(|p| std::fs::symlink_metadata(root.join(OsStr::from_bytes(p))).ok())
        .filter(|m| m.is_file() && m.nlink() > 1)
        .map(|m| (m.dev(), m.ino()))
        .collect()
}

/// Why not to narrow, with the state still good for a full walk.
type NotNarrowed = (Option<State>, FullReason);

impl Checkpoints {
    /// [`Checkpoints::create_locked`], examining only the paths `hint`
    /// names when the state it is for is the one this `Checkpoints` saved
    /// last and nothing else casts doubt on it (see the module docs);
    /// otherwise the whole worktree, saying why in [`Created::scan`].
    pub fn create_hinted(
        &self,
        _lock: &mend_workspace::Lock,
        opts: &CreateOptions,
        hint: Option<&Hint>,
        progress: &mut dyn FnMut(usize),
    ) -> Result<Created, Error> {
        let env = Env::read(&self.repo, opts.max_file_bytes);
        let held = self
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let was_hard_linked = held.as_ref().map(|h| h.linked.clone());
        let (mut snap, scan) = match self.narrowing(held, hint, &env) {
            Ok((held, paths)) => self.narrowed(held, &paths, opts, progress)?,
            Err((state, why)) => (
                self.walk_from(state, opts.max_file_bytes, progress)?,
                Scan::Full { why },
            ),
        };
        let (checkpoint, saved) = self.commit_snapshot(&mut snap, opts)?;
        let id =
            StateId(Oid::from_str(&checkpoint.commit).map_err(crate::git("reading a commit id"))?);
        let file = self.state.identity();
        if let (true, Some(file)) = (saved, file) {
            let racy = (snap.changes.files.iter())
                .filter(|(_, r)| r.racy)
                .map(|(p, _)| p.clone())
                .collect();
            let linked = hard_linked(&scan, was_hard_linked, &snap);
            *self.held.lock().unwrap_or_else(PoisonError::into_inner) = Some(Held {
                state: snap.state,
                id,
                file,
                env,
                skipped: snap.skipped,
                racy,
                linked,
            });
        }
        Ok(Created {
            checkpoint,
            state: id,
            scan,
        })
    }

    /// The held state and the paths to examine, or why not to narrow.
    fn narrowing(
        &self,
        held: Option<Held>,
        hint: Option<&Hint>,
        env: &Env,
    ) -> Result<(Held, Vec<Vec<u8>>), NotNarrowed> {
        // The held state is good for a full walk while the file is the
        // one it was saved as.
        let replaced = held
            .as_ref()
            .is_some_and(|h| self.state.identity() != Some(h.file));
        let held = held.filter(|_| !replaced);
        let Some(hint) = hint else {
            return Err((held.map(|h| h.state), FullReason::NoHint));
        };
        let Some(held) = held else {
            let why = if replaced {
                FullReason::StateChanged
            } else {
                FullReason::NoState
            };
            return Err((None, why));
        };
        let why = if hint.state != held.id {
            Some(FullReason::OtherState)
        } else if self.repo.refname_to_id(&checkpoint_ref(held.id.0)).ok() != Some(held.id.0) {
            Some(FullReason::CheckpointGone)
        } else if held.env.head != env.head {
            Some(FullReason::HeadMoved)
        } else if held.env.max_file_bytes != env.max_file_bytes {
            Some(FullReason::OptionsChanged)
        } else if held.env != *env {
            Some(FullReason::RulesChanged)
        } else {
            None
        };
        if let Some(why) = why {
            return Err((Some(held.state), why));
        }
        let paths: Vec<Vec<u8>> = (hint.paths.iter())
            .map(|p| p.as_os_str().as_bytes().to_vec())
            .collect();
        Ok((held, paths))
    }

    /// The narrowed snapshot, or the full walk when narrowing finds a
    /// doubt of its own.
    fn narrowed(
        &self,
        held: Held,
        paths: &[Vec<u8>],
        opts: &CreateOptions,
        progress: &mut dyn FnMut(usize),
    ) -> Result<(snapshot::Snapshot, Scan), Error> {
        let seen = AtomicUsize::new(0);
        let inputs = narrow::Inputs {
            repo: &self.repo,
            root: self.root(),
            max_file_bytes: opts.max_file_bytes,
            seen: &seen,
            prev: &held.state,
            prev_skipped: &held.skipped,
        };
        let again = again(&held);
        let named = with_other_names(self.root(), paths);
        let n = match narrow::narrow(&inputs, paths, &again)? {
            Ok(n) if gained_a_name(&n.changes, &held.state, &held.linked, &named) => {
                Err(FullReason::NewHardLink)
            }
            n => n,
        };
        let n = match n {
            Ok(n) => n,
            Err(why) => {
                let snap = self.walk_from(Some(held.state), opts.max_file_bytes, progress)?;
                return Ok((snap, Scan::Full { why }));
            }
        };
        let examined = seen.load(Ordering::Relaxed);
        progress(examined);
        let mut state = held.state;
        let after = state.commit;
        state.apply_changes(&n.changes);
        let snap = snapshot::Snapshot {
            tree: n.tree,
            files: state.files.len(),
            skipped: n.skipped,
            state,
            changes: n.changes,
            after,
        };
        Ok((snap, Scan::Narrowed { examined }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hinted(cps: &Checkpoints, hint: Option<&Hint>) -> Created {
        let lock = cps.lock().unwrap();
        cps.create_hinted(&lock, &CreateOptions::default(), hint, &mut |_| {})
            .unwrap()
    }

    fn blob(cps: &Checkpoints, c: &Created, path: &str) -> Oid {
        let commit = cps.repo.find_commit(c.state.0).unwrap();
        let tree = commit.tree().unwrap();
        tree.get_path(Path::new(path)).unwrap().id()
    }

    /// A file rewritten in the clock tick the last snapshot hashed it in
    /// keeps its stat data, and no event may come after the token: the
    /// racy mark alone makes the next snapshot hash it again.
    #[test]
    fn racy_files_are_examined_again_without_an_event() {
        let dir = tempfile::tempdir().unwrap();
        Repository::init(dir.path()).unwrap();
        std::fs::write(dir.path().join("a.txt"), "version 1\n").unwrap();
        std::fs::write(dir.path().join("b.txt"), "other\n").unwrap();
        let cps = Checkpoints::open(dir.path()).unwrap();
        let first = hinted(&cps, None);
        let v1 = blob(&cps, &first, "a.txt");
        std::fs::write(dir.path().join("a.txt"), "version 2\n").unwrap();
        // As if the snapshot had hashed version 1 in the tick version 2
        // was written in: the stat data now, the id then, marked racy.
        {
            let mut held = cps.held.lock().unwrap();
            let held = held.as_mut().unwrap();
            let meta = std::fs::symlink_metadata(dir.path().join("a.txt")).unwrap();
            let rec = Record {
                stat: Stat::of(&meta),
                oid: v1,
                racy: true,
                linked: false,
            };
            held.state.files.insert(b"a.txt".to_vec(), rec);
            held.racy = vec![b"a.txt".to_vec()];
        }
        let hint = Hint {
            state: first.state,
            paths: Vec::new(),
        };
        let next = hinted(&cps, Some(&hint));
        assert_eq!(next.scan, Scan::Narrowed { examined: 1 });
        let v2 = Oid::hash_object(git2::ObjectType::Blob, b"version 2\n").unwrap();
        assert_eq!(blob(&cps, &next, "a.txt"), v2);
    }

    /// Each doubt is a full scan that says why.
    #[test]
    fn doubts_are_full_scans_that_say_why() {
        let dir = tempfile::tempdir().unwrap();
        Repository::init(dir.path()).unwrap();
        std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
        let cps = Checkpoints::open(dir.path()).unwrap();
        let full = |c: &Created| match c.scan {
            Scan::Full { why } => Some(why),
            Scan::Narrowed { .. } => None,
        };
        let hint = |c: &Created| Hint {
            state: c.state,
            paths: vec![PathBuf::from("a.txt")],
        };
        let none = Hint {
            state: StateId(Oid::zero()),
            paths: Vec::new(),
        };
        let first = hinted(&cps, Some(&none));
        assert_eq!(full(&first), Some(FullReason::NoState));
        let c = hinted(&cps, None);
        assert_eq!(full(&c), Some(FullReason::NoHint));
        // A hint for the state before the last one.
        let old = hinted(&cps, Some(&hint(&first)));
        assert_eq!(full(&old), Some(FullReason::OtherState));
        let ok = hinted(&cps, Some(&hint(&old)));
        assert_eq!(full(&ok), None);
        // Another process checkpoints.
        Checkpoints::open(dir.path())
            .unwrap()
            .create(&CreateOptions::default(), &mut |_| {})
            .unwrap();
        let other = hinted(&cps, Some(&hint(&ok)));
        assert_eq!(full(&other), Some(FullReason::StateChanged));
        std::fs::write(dir.path().join(".git/info/exclude"), "*.tmp\n").unwrap();
        let rules = hinted(&cps, Some(&hint(&other)));
        assert_eq!(full(&rules), Some(FullReason::RulesChanged));
        let root = Hint {
            state: rules.state,
            paths: vec![PathBuf::from(".gitignore")],
        };
        let root = hinted(&cps, Some(&root));
        assert_eq!(full(&root), Some(FullReason::RootRules));
        mend_test_support::git(dir.path(), &["commit", "-q", "--allow-empty", "-m", "x"]);
        let head = hinted(&cps, Some(&hint(&root)));
        assert_eq!(full(&head), Some(FullReason::HeadMoved));
        cps.drop(&head.checkpoint.id).unwrap();
        let gone = hinted(&cps, Some(&hint(&head)));
        assert_eq!(full(&gone), Some(FullReason::CheckpointGone));
        let wider = CreateOptions {
            max_file_bytes: 3,
            ..CreateOptions::default()
        };
        let lock = cps.lock().unwrap();
        let made = cps.create_hinted(&lock, &wider, Some(&hint(&gone)), &mut |_| {});
        drop(lock);
        let made = made.unwrap();
        assert_eq!(full(&made), Some(FullReason::OptionsChanged));
        std::fs::remove_file(dir.path().join(".git/mend/snapshot-state")).unwrap();
        let removed = hinted(&cps, Some(&hint(&made)));
        assert_eq!(full(&removed), Some(FullReason::StateChanged));
    }
}
