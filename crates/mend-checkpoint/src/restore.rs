//! Restoring a checkpoint: an exact, undoable function of two trees.
//!
//! Under the workspace lock, from the safety checkpoint to the last write:
//!
//! 1. the state now is checkpointed (the safety checkpoint), so the
//!    restore can be undone;
//! 2. the plan compares the checkpoint's tree with the safety
//!    checkpoint's: files to write, and files to delete (every file absent
//!    from the checkpoint that is not ignored now or under the
//!    checkpoint's own rules);
//! 3. a file becoming a folder, or a folder a file, adds what stands in
//!    the way to the deletions;
//! 4. anything the plan would overwrite or delete whose bytes are in no
//!    checkpoint (an ignored file, one too large to snapshot) is refused,
//!    or with `force` copied to `.mend/aside/<safety id>/` first;
//! 5. one `mend-workspace` transaction writes it all, links included,
//!    never through a folder that is now a link.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use git2::{FileMode, ObjectType, Oid, Tree};
use mend_core::report::Status;

use crate::{
    Checkpoint, Checkpoints, CreateOptions, Error, FileChange, Left, Restored, Skipped, git,
};

/// Settings for a restore.
#[derive(Debug, Clone, Copy, Default)]
pub struct RestoreOptions {
    /// Report what would change, writing nothing.
    pub dry_run: bool,
    /// Drop the checkpoints made after the one restored (the safety
    /// checkpoint is kept).
    pub prune_later: bool,
    /// Copy files whose current bytes no checkpoint holds into
    /// `.mend/aside/` before overwriting or deleting them, instead of
    /// refusing the restore.
    pub force: bool,
}

/// Path → (blob id, mode).
pub(crate) type Files = BTreeMap<String, (Oid, i32)>;

/// What a restore will do.
#[derive(Default)]
pub(crate) struct Plan {
    pub(crate) writes: Vec<(String, Oid, i32)>,
    pub(crate) deletes: BTreeSet<String>,
    pub(crate) kept: Vec<String>,
    /// Paths that differ but that no workspace change can name, and why.
    pub(crate) left: BTreeMap<String, String>,
    /// Writes and deletions made beside the workspace transaction (see
    /// `beside.rs`), by path: the blob the worktree held there when the
    /// plan was made, or none.
    pub(crate) beside: BTreeMap<String, Option<Oid>>,
}

/// What a restore puts back: a tree, what its snapshot skipped, and
/// (for a turn's reject) only some paths.
pub(crate) struct Scope<'a> {
    pub(crate) tree: &'a Tree<'a>,
    pub(crate) skipped: &'a [Skipped],
    /// Paths restored, each with everything under it; `None`: all.
    pub(crate) only: Option<&'a BTreeSet<String>>,
    /// A turn's ignore state at its start: see [`Then`].
    pub(crate) then: Option<Then<'a>>,
}

/// What a turn keeps of the worktree at its start beyond its tree, so
/// that a reject never deletes a file the start could not hold.
#[derive(Clone, Copy)]
pub(crate) struct Then<'a> {
    /// The excludes files' contents when the turn began, lowest priority
    /// first (a rule removed since still keeps its files).
    pub(crate) excludes: &'a [String],
    /// When the turn began (seconds and nanoseconds since the epoch): a
    /// file whose inode changed last before that existed then, and if its
    /// bytes are not in the start, it was somewhere the start did not
    /// hold (ignored, or in an ignored folder the agent moved here).
    pub(crate) began: (i64, i64),
}

impl Scope<'_> {
    /// Whether a restore in this scope touches `path`.
    fn covers(&self, path: &str) -> bool {
        self.only
            .is_none_or(|only| only.contains(path) || folders_of(path).any(|d| only.contains(d)))
    }
}

impl Checkpoints {
    /// Restores the worktree to checkpoint `id`, refusing to overwrite or
    /// delete bytes no checkpoint holds. See [`Checkpoints::restore_with`].
    pub fn restore(&self, id: &str, dry_run: bool, prune_later: bool) -> Result<Restored, Error> {
        self.restore_with(
            id,
            &RestoreOptions {
                dry_run,
                prune_later,
                force: false,
            },
        )
    }

    /// Restores the worktree to checkpoint `id`; see the module's steps.
    pub fn restore_with(&self, id: &str, opts: &RestoreOptions) -> Result<Restored, Error> {
        // Held from the safety checkpoint through the last write, so no
        // edit lands in between and is lost.
        let lock = self.lock()?;
        let target = self.get(id)?;
        // For a dry run, the state now in memory only: nothing changes, so
        // nothing needs undoing.
        let safety = if opts.dry_run {
            None
        } else {
            Some(self.create_safety(
                &lock,
                &CreateOptions {
                    label: Some(format!("before restoring {}", target.id)),
                    ..CreateOptions::default()
                },
            )?)
        };
        let prepared = self.prepare(&target, safety.as_ref(), opts);
        let (mut plan, changes, unheld) = match prepared {
            Ok(p) => p,
            Err(e) => {
                // Nothing was written: the safety checkpoint undoes nothing.
                if let Some(s) = &safety {
                    let _ = self.drop_ref(&s.id);
                }
                return Err(e);
            }
        };
        let mut aside = Vec::new();
        if let Some(s) = &safety {
            for p in &unheld {
                match self.ws.keep_aside(p, &s.id) {
                    Ok(copy) => aside.push(copy),
                    Err(e) => {
                        // Nothing was written over: the safety checkpoint
                        // undoes nothing.
                        let _ = self.drop_ref(&s.id);
                        return Err(e.into());
                    }
                }
            }
        } else {
            aside = unheld;
        }
        let mut report = plan.report(self.root());
        let mut pruned = Vec::new();
        if let Some(s) = &safety {
            self.ws.commit(&lock, &changes)?;
            self.apply_beside(&mut plan)?;
            report.retain(|c| !plan.left.contains_key(&c.path));
            if opts.prune_later {
                pruned = self.prune_after(&target, s)?;
            }
        }
        Ok(Restored {
            checkpoint: target,
            safety,
            changes: report,
            left: plan.left(),
            kept: plan.kept,
            aside,
            pruned,
        })
    }

    /// The plan, its change set (validated as a whole), and the paths
    /// whose bytes no checkpoint holds; refuses those unless `force`.
    fn prepare(
        &self,
        target: &Checkpoint,
        safety: Option<&Checkpoint>,
        opts: &RestoreOptions,
    ) -> Result<(Plan, Vec<mend_workspace::Change>, Vec<String>), Error> {
        let (now, skipped) = match safety {
            Some(s) => (self.tree_of(s)?, s.skipped.clone()),
            None => self.worktree_tree()?,
        };
        let tree = self.tree_of(target)?;
        let (plan, changes, unheld) = self.prepare_scoped(
            &Scope {
                tree: &tree,
                skipped: &target.skipped,
                only: None,
                then: None,
            },
            (&now, &skipped),
            opts.force,
        )?;
        self.ws.check_changes(&changes)?;
        Ok((plan, changes, unheld))
    }

    /// [`Checkpoints::prepare`] for any tree and, with `only`, just the
    /// paths in scope: the plan, its change set (not yet checked as a
    /// whole, so a caller can add to it) and the unheld paths.
    pub(crate) fn prepare_scoped(
        &self,
        scope: &Scope<'_>,
        (now, skipped): (&Tree<'_>, &[Skipped]),
        force: bool,
    ) -> Result<(Plan, Vec<mend_workspace::Change>, Vec<String>), Error> {
        let now = &self.files(now)?;
        let mut plan = self.plan(scope, now, skipped)?;
        plan.put_beside(self.root(), now);
        plan.clear_the_way(self.root());
        self.no_linked_folders(&plan)?;
        let unheld = self.unheld(&plan, now)?;
        if !unheld.is_empty() && !force {
            return Err(Error::Unheld { paths: unheld });
        }
        let changes = self.change_set(&plan, now)?;
        Ok((plan, changes, unheld))
    }

    /// Writes and deletes from the two trees (see the module's step 2).
    fn plan(&self, scope: &Scope<'_>, now: &Files, skipped: &[Skipped]) -> Result<Plan, Error> {
        let then = self.files(scope.tree)?;
        let excludes = scope.then.map_or(&[][..], |t| t.excludes);
        let then_ignores =
            crate::ignore_then::Rules::from_tree(&self.repo, scope.tree, self.root(), excludes);
        // The start's blobs, gathered once a file may need them.
        let mut held: Option<std::collections::HashSet<Oid>> = None;
        let mut plan = Plan::default();
        for (path, (oid, mode)) in &then {
            if scope.covers(path) && now.get(path) != Some(&(*oid, *mode)) {
                plan.writes.push((path.clone(), *oid, *mode));
            }
        }
        // Tracked or not: a file in the safety checkpoint can be deleted,
        // since restoring that checkpoint brings it back.
        let too_large = skipped
            .iter()
            .filter(|s| s.reason.starts_with("too large"))
            .filter(|s| !scope.skipped.iter().any(|t| t.path == s.path))
            .map(|s| &s.path);
        // What the checkpoint left out as too large, it says nothing of:
        // the file there now stays (undoing a forced restore keeps what it
        // wrote; the bytes it replaced are in `.mend/aside/`).
        let left_out = |path: &String| {
            (scope.skipped.iter()).any(|t| &t.path == path && t.reason.starts_with("too large"))
        };
        for path in now.keys().chain(too_large) {
            if then.contains_key(path) || !scope.covers(path) {
                continue;
            }
            if left_out(path) {
                plan.kept.push(path.clone());
                continue;
            }
            let ignored_now = self.repo.is_path_ignored(path).unwrap_or(true);
            let ignored_then = then_ignores.is_ignored(path);
            if ignored_then && !ignored_now && scope.then.is_some() {
                // A turn's reject names it: it shows in the turn, as added.
                plan.left.insert(path.clone(), IGNORED_THEN.to_owned());
            } else if ignored_now || ignored_then {
                plan.kept.push(path.clone());
            } else if let Some(t) = scope.then
                && self.there_before(path, t.began)
                && now.get(path).is_none_or(|(oid, _)| {
                    let held = held.get_or_insert_with(|| then.values().map(|(o, _)| *o).collect());
                    !held.contains(oid)
                })
            {
                plan.left.insert(path.clone(), THERE_BEFORE.to_owned());
            } else {
                plan.deletes.insert(path.clone());
            }
        }
        plan.leave_moved_in(&then);
        Ok(plan)
    }

    /// Whether the file at `path` existed before `began`, its inode
    /// unchanged since (a file moved with its folder keeps its ctime; one
    /// written, renamed itself or made since has a later one). The caller
    /// then asks whether the start holds its bytes.
    fn there_before(&self, path: &str, began: (i64, i64)) -> bool {
        use std::os::unix::fs::MetadataExt as _;
        self.root()
            .join(path)
            .symlink_metadata()
            .is_ok_and(|m| (m.ctime(), m.ctime_nsec()) < began)
    }

    /// Paths the plan overwrites or deletes whose current bytes are in no
    /// checkpoint: not in the safety checkpoint, and not an object of the
    /// repository.
    fn unheld(&self, plan: &Plan, now: &Files) -> Result<Vec<String>, Error> {
        let mut out = Vec::new();
        let touched = plan.writes.iter().map(|w| &w.0).chain(&plan.deletes);
        for path in touched {
            // Through a folder that is a link, the path names the link's
            // target, which the restore never touches: the link is deleted
            // (or the restore refused) first.
            let through_link = folders_of(path).any(|d| {
                self.root()
                    .join(d)
                    .symlink_metadata()
                    .is_ok_and(|m| m.file_type().is_symlink())
            });
            if now.contains_key(path) || through_link {
                continue;
            }
            let full = self.root().join(path);
            let Ok(meta) = full.symlink_metadata() else {
                continue;
            };
            let id = if meta.file_type().is_symlink() {
                let to = std::fs::read_link(&full).map_err(|e| Error::Io {
                    context: format!("reading the link {path}"),
                    cause: e,
                })?;
                Oid::hash_object(ObjectType::Blob, to.to_string_lossy().as_bytes())
            } else if meta.is_file() {
                Oid::hash_file(ObjectType::Blob, &full)
            } else {
                continue;
            }
            .map_err(git(format!("hashing {path}")))?;
            if !self.held_at(path, id) {
                out.push(path.clone());
            }
        }
        out.sort();
        Ok(out)
    }

    /// Whether a checkpoint, an open turn's hold or HEAD has blob `id` at
    /// `path`: bytes merely present in the object store (a blob `git add`
    /// wrote and dropped) are not held, since `gc` may remove them.
    fn held_at(&self, path: &str, id: Oid) -> bool {
        let at = |tree: git2::Tree<'_>| tree.get_path(Path::new(path)).is_ok_and(|e| e.id() == id);
        let head = self.repo.head().ok().and_then(|h| h.peel_to_tree().ok());
        if head.is_some_and(at) {
            return true;
        }
        [crate::store::REF_PREFIX, crate::store::HOLD_PREFIX]
            .iter()
            .any(|prefix| {
                let refs = self.repo.references_glob(&format!("{prefix}*"));
                refs.into_iter()
                    .flat_map(Iterator::flatten)
                    .filter_map(|r| r.peel_to_tree().ok())
                    .any(at)
            })
    }

    /// The plan's writes and deletions beside the workspace transaction,
    /// made once it has committed: each one that cannot be made (what is
    /// there changed, a folder on its way is a link) moves to `left`, with
    /// why.
    pub(crate) fn apply_beside(&self, plan: &mut Plan) -> Result<(), Error> {
        let beside = std::mem::take(&mut plan.beside);
        for (path, expect) in beside {
            let Ok(bytes) = crate::names::unspell(&path) else {
                continue;
            };
            let write = plan.writes.iter().find(|w| w.0 == path).map(|w| (w.1, w.2));
            let op = match (write, expect) {
                (Some((oid, mode)), expect) => {
                    let blob = self
                        .repo
                        .find_blob(oid)
                        .map_err(git("reading a file of the checkpoint"))?;
                    crate::beside::Op::Put {
                        path: bytes.into_owned(),
                        bytes: blob.content().to_vec(),
                        link: mode == i32::from(FileMode::Link),
                        executable: mode == i32::from(FileMode::BlobExecutable),
                        expect,
                    }
                }
                (None, Some(expect)) => crate::beside::Op::Delete {
                    path: bytes.into_owned(),
                    expect,
                },
                (None, None) => {
                    // Not in the worktree's snapshot: too large, or ignored.
                    plan.deletes.remove(&path);
                    let why = "its content now is in no checkpoint (too large to snapshot, or ignored), so it is not deleted; move it aside yourself";
                    plan.left.insert(path, why.to_owned());
                    continue;
                }
            };
            if let Err(why) = crate::beside::apply(self.root(), &op) {
                plan.writes.retain(|w| w.0 != path);
                plan.deletes.remove(&path);
                plan.left.insert(path, why);
            }
        }
        Ok(())
    }

    /// The plan as one change set for the workspace (what goes beside it
    /// left out). Each change expects
    /// its path to be what `now` (the safety checkpoint) holds, so a write
    /// landing after that checkpoint is refused, never overwritten; a path
    /// it does not hold (ignored, too large) is checked by `unheld`.
    fn change_set(&self, plan: &Plan, now: &Files) -> Result<Vec<mend_workspace::Change>, Error> {
        let mut changes = Vec::with_capacity(plan.writes.len() + plan.deletes.len());
        let writes = plan
            .writes
            .iter()
            .filter(|w| !plan.beside.contains_key(&w.0));
        for (path, oid, mode) in writes {
            let blob = self
                .repo
                .find_blob(*oid)
                .map_err(git("reading a file of the checkpoint"))?;
            changes.push(mend_workspace::Change::Restore {
                path: path.clone(),
                base: self.base_of(path, now)?,
                bytes: blob.content().to_vec(),
                link: *mode == i32::from(FileMode::Link),
                executable: *mode == i32::from(FileMode::BlobExecutable),
            });
        }
        for path in plan
            .deletes
            .iter()
            .filter(|p| !plan.beside.contains_key(*p))
        {
            changes.push(mend_workspace::Change::Delete {
                path: path.clone(),
                base: self.base_of(path, now)?,
            });
        }
        Ok(changes)
    }

    /// What a restore expects at `path`: the entry `now` holds there, or
    /// nothing when the path is free now; `Any` for what `now` could not
    /// hold (whose bytes `unheld` refused or copied aside).
    fn base_of(&self, path: &str, now: &Files) -> Result<mend_workspace::Base, Error> {
        use mend_workspace::{Base, ContentHash};
        let Some((oid, mode)) = now.get(path) else {
            let there = self.root().join(path).symlink_metadata().is_ok();
            return Ok(if there { Base::Any } else { Base::Absent });
        };
        let blob = self
            .repo
            .find_blob(*oid)
            .map_err(git("reading a file of the safety checkpoint"))?;
        let hash = ContentHash::of(blob.content());
        Ok(if *mode == i32::from(FileMode::Link) {
            Base::Link(hash)
        } else {
            Base::Hash(hash)
        })
    }

    /// Refuses a restore that would write or delete through a folder that
    /// is now a symbolic link (and stays one): it would change the link's
    /// target (an ignored folder, say) and then report the path as
    /// restored. A link the restore deletes is replaced by a folder.
    fn no_linked_folders(&self, plan: &Plan) -> Result<(), Error> {
        let paths = plan.writes.iter().map(|w| &w.0).chain(&plan.deletes);
        for path in paths {
            for d in folders_of(path) {
                let linked = self
                    .root()
                    .join(d)
                    .symlink_metadata()
                    .is_ok_and(|m| m.file_type().is_symlink());
                if linked && !plan.deletes.contains(d) {
                    return Err(Error::LinkedFolder {
                        folder: d.to_owned(),
                        path: path.clone(),
                    });
                }
            }
        }
        Ok(())
    }

    fn prune_after(
        &self,
        target: &Checkpoint,
        safety: &Checkpoint,
    ) -> Result<Vec<Checkpoint>, Error> {
        let mut pruned = Vec::new();
        let start = self.open_turn_start();
        for c in self.list()? {
            if start.as_deref() == Some(c.commit.as_str()) {
                continue;
            }
            if c.time >= target.time
                && c.id != target.id
                && c.id != safety.id
                && self.is_later(&c, target)
            {
                self.drop_ref(&c.id)?;
                pruned.push(c);
            }
        }
        Ok(pruned)
    }

    fn is_later(&self, c: &Checkpoint, than: &Checkpoint) -> bool {
        c.time > than.time || self.order(c, than) == std::cmp::Ordering::Less
    }

    /// The worktree's snapshot-able files and what a snapshot would skip,
    /// without writing a checkpoint (the same scan as `create`, so a dry
    /// run lists what a restore does).
    fn worktree_tree(&self) -> Result<(Tree<'_>, Vec<Skipped>), Error> {
        let snap = self.walk(CreateOptions::default().max_file_bytes, &mut |_| {})?;
        let skipped = snap.skipped;
        let tree = self
            .repo
            .find_tree(snap.tree)
            .map_err(git("reading the tree"))?;
        Ok((tree, skipped))
    }
}

/// The folders above a path, nearest first (`a/b/c` → `a/b`, `a`).
pub(crate) fn folders_of(path: &str) -> impl Iterator<Item = &str> {
    path.match_indices('/').rev().map(move |(i, _)| &path[..i])
}

/// The longest path the kernel resolves whole (`PATH_MAX`, its NUL
/// included): a longer one is reached by descriptor, beside the
/// workspace transaction.
const PATH_MAX: usize = 4096;

/// Whether a (spelled) path is one a workspace change cannot name, so
/// its write or deletion goes beside the transaction (see `beside.rs`):
/// spelled with an escape (not UTF-8, a backslash, a control character),
/// or too long to resolve whole.
pub(crate) fn goes_beside(root: &Path, path: &str) -> bool {
    !crate::names::is_plain(path) || root.as_os_str().len() + 1 + path.len() >= PATH_MAX
}

/// What stands at a spelled path, not followed if it is a link, reached
/// one folder at a time by descriptor: by its bytes, not its spelling,
/// and past `PATH_MAX` too.
pub(crate) fn on_disk(root: &Path, spelled: &str) -> Option<rustix::fs::Stat> {
    crate::beside::lstat(root, &crate::names::unspell(spelled).ok()?)
}

/// Why a turn's reject leaves a file a rule ignored when the turn began.
const IGNORED_THEN: &str = "it was ignored when the turn began (by a rule since removed), so the turn's start does not hold it and a reject never deletes it; delete it yourself if it should go";

/// Why a turn's reject leaves a file that was there, unheld, before the
/// turn began.
const THERE_BEFORE: &str = "it was there before the turn began, at a path the turn's start did not hold (it was ignored then, or it is in an ignored folder that was moved here), so a reject never deletes it; move it back or delete it yourself";

/// Why a turn's reject leaves a file in a folder that was moved in.
const MOVED_IN: &str = "it is in a folder the turn's start did not have that holds files from before the turn began (an ignored folder moved here?), so a reject never deletes it; move the folder back or delete it yourself";

impl Plan {
    /// Moves beside the workspace transaction the writes and deletions of
    /// paths a workspace change cannot name: spelled with an escape (not
    /// UTF-8, a backslash, a control character), or too long to resolve
    /// whole. Each is checked against `now`, the worktree's files the plan
    /// was made against, before it is made.
    fn put_beside(&mut self, root: &Path, now: &Files) {
        let paths = self.writes.iter().map(|w| &w.0).chain(&self.deletes);
        self.beside = paths
            .filter(|p| goes_beside(root, p))
            .map(|p| (p.clone(), now.get(p).map(|n| n.0)))
            .collect();
    }

    /// A folder the start did not have that holds a file there before
    /// the turn began (left above) was moved in, most likely an ignored
    /// folder under a new name: none of its files is deleted, those
    /// written during the turn included, since the start never held what
    /// they were before.
    fn leave_moved_in(&mut self, then: &Files) {
        let before: Vec<&String> = (self.left.iter())
            .filter(|(_, why)| *why == THERE_BEFORE)
            .map(|(p, _)| p)
            .collect();
        if before.is_empty() {
            return;
        }
        let start_folders: BTreeSet<&str> = then.keys().flat_map(|p| folders_of(p)).collect();
        let moved_in: BTreeSet<String> = before
            .iter()
            .flat_map(|p| folders_of(p))
            .filter(|f| !start_folders.contains(f))
            .map(str::to_owned)
            .collect();
        let inside: Vec<String> = (self.deletes.iter())
            .filter(|p| folders_of(p).any(|f| moved_in.contains(f)))
            .cloned()
            .collect();
        for path in inside {
            self.deletes.remove(&path);
            self.left.insert(path, MOVED_IN.to_owned());
        }
    }

    /// What was left, as the outcome lists it.
    pub(crate) fn left(&self) -> Vec<Left> {
        self.left
            .iter()
            .map(|(path, reason)| Left {
                path: path.clone(),
                reason: reason.clone(),
            })
            .collect()
    }

    /// A file becoming a folder, or a folder a file: what stands in the way
    /// is deleted too (and so checked for unheld bytes like any deletion).
    fn clear_the_way(&mut self, root: &Path) {
        let mut extra = Vec::new();
        for (path, _, _) in &self.writes {
            let full = root.join(path);
            if full.symlink_metadata().is_ok_and(|m| m.is_dir()) {
                files_under(&full, path, &mut extra);
            }
            for d in folders_of(path) {
                let m = root.join(d).symlink_metadata();
                // A link to a folder is left to `no_linked_folders`.
                let in_the_way = m.is_ok_and(|m| {
                    m.is_file() || (m.file_type().is_symlink() && !root.join(d).is_dir())
                });
                if in_the_way {
                    extra.push(d.to_owned());
                }
            }
        }
        for p in extra {
            self.kept.retain(|k| *k != p);
            self.deletes.insert(p);
        }
    }

    /// What changes, as seen from now: a path is looked up by its bytes
    /// (not its spelling) and by descriptor, so a file with an odd or
    /// long name that is there is modified, not added.
    pub(crate) fn report(&self, root: &Path) -> Vec<FileChange> {
        let mut changes: Vec<FileChange> = self
            .writes
            .iter()
            .map(|(path, _, _)| FileChange {
                path: path.clone(),
                status: if on_disk(root, path).is_some() {
                    Status::Modified
                } else {
                    Status::Added
                },
            })
            .chain(self.deletes.iter().map(|path| FileChange {
                path: path.clone(),
                status: Status::Deleted,
            }))
            .collect();
        changes.sort_by(|a, b| a.path.cmp(&b.path));
        changes
    }
}

/// Every file and link under a folder, as paths relative to the root.
fn files_under(dir: &Path, rel: &str, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let child = format!("{rel}/{name}");
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            files_under(&e.path(), &child, out);
        } else {
            out.push(child);
        }
    }
}
