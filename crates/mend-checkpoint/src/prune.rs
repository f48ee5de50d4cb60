//! Freeing what dropped checkpoints held, in `gc`.
//!
//! - **A shadow repository** is mend's alone: everything a checkpoint (or
//!   the open turn) holds is written into one new pack, then every other
//!   pack and every loose object is removed. Under the workspace lock no
//!   other mend writes there.
//! - **A git repository** is the user's, and git may be writing in it at
//!   the same moment. Only loose objects that a dropped checkpoint reached
//!   (each drop records its commit, each line sealed) are candidates, and one is removed only
//!   if nothing else reaches it: no ref or its reflog, no worktree's HEAD
//!   or index, no other checkpoint, not the open turn. Whole history is
//!   walked to know. Nothing is removed while git holds the index lock,
//!   nor an object modified since the walk began (git refreshes an
//!   object's time when it writes it again). Packs are left to git's gc.

use std::collections::HashSet;
use std::time::SystemTime;

use git2::{ObjectType, Oid, Repository};
use mend_workspace::{EntryKind, PrivateDir};

use crate::{Checkpoints, Error, git};

/// The file of commits dropped since the last gc (git repositories only).
pub(crate) const DROPPED: &str = "dropped";

/// What a gc freed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pruned {
    /// Objects removed (for a shadow repository: objects before, less
    /// objects after).
    pub objects: usize,
    /// Bytes of object files removed, less the bytes of a new pack.
    pub bytes: u64,
    /// Why nothing was removed, when something could have been.
    pub skipped: Option<String>,
}

fn io(context: &str) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |cause| Error::Io {
        context: context.to_owned(),
        cause,
    }
}

/// The commits of the dropped list whose line carries its seal. A line
/// mend did not write (or one of an earlier version, unsealed) is left
/// out: it could name a person's unreachable objects for removal, and
/// leaving one out only leaves its objects to git's own gc.
fn sealed_lines(seal: &mend_workspace::Seal, bytes: &[u8]) -> Vec<Oid> {
    String::from_utf8_lossy(bytes)
        .lines()
        .filter_map(|l| {
            let (commit, tag) = l.trim().split_once(' ')?;
            seal.check_hex(DROPPED, &[commit.as_bytes()], tag)
                .then(|| Oid::from_str(commit).ok())?
        })
        .collect()
}

/// Objects reachable from commits, trees and blobs, each visited once;
/// blobs are never read.
struct Reach<'r> {
    repo: &'r Repository,
    seen: HashSet<Oid>,
    /// Follow commits' parents.
    history: bool,
}

impl Reach<'_> {
    /// Everything `roots` reach (following parents with `history`), and
    /// `blobs`.
    fn all(
        repo: &Repository,
        history: bool,
        blobs: impl IntoIterator<Item = Oid>,
        roots: impl IntoIterator<Item = Oid>,
    ) -> HashSet<Oid> {
        let mut reach = Reach {
            repo,
            seen: blobs.into_iter().collect(),
            history,
        };
        for oid in roots {
            reach.object(oid);
        }
        reach.seen
    }

    /// A blob (or anything not to be looked into).
    fn blob(&mut self, oid: Oid) {
        self.seen.insert(oid);
    }

    /// An object and everything it reaches.
    fn object(&mut self, oid: Oid) {
        let mut stack = vec![oid];
        while let Some(oid) = stack.pop() {
            if oid.is_zero() || !self.seen.insert(oid) {
                continue;
            }
            let Ok(obj) = self.repo.find_object(oid, None) else {
                continue;
            };
            if let Some(c) = obj.as_commit() {
                stack.push(c.tree_id());
                if self.history {
                    stack.extend(c.parent_ids());
                }
            } else if let Some(t) = obj.as_tree() {
                for e in t.iter() {
                    match e.kind() {
                        Some(ObjectType::Tree) => stack.push(e.id()),
                        // Submodules' commits live in other repositories.
                        Some(ObjectType::Commit) => {}
                        _ => self.blob(e.id()),
                    }
                }
            } else if let Some(t) = obj.as_tag() {
                stack.push(t.target_id());
            }
        }
    }
}

impl Checkpoints {
    /// Frees what no checkpoint holds any more; see the module's rules.
    pub(crate) fn prune(&self) -> Result<Pruned, Error> {
        if self.shadow {
            self.repack_shadow()
        } else {
            self.prune_loose()
        }
    }

    /// Records a dropped checkpoint's commit for the next gc.
    pub(crate) fn record_dropped(&self, commit: &str) -> Result<(), Error> {
        use std::io::Write as _;
        if self.shadow {
            return Ok(());
        }
        let tag = self.ws.seal()?.tag_hex(DROPPED, &[commit.as_bytes()]);
        let mut f = self.private.open_write(DROPPED, true, true)?;
        f.write_all(format!("{commit} {tag}\n").as_bytes())
            .map_err(io("recording a dropped checkpoint"))
    }

    /// What the open turn holds: its start and the blobs it accepted.
    fn turn_roots(&self) -> Result<Vec<Oid>, Error> {
        let Some(st) = crate::turn::state::load(&self.ws.private_dir()?)? else {
            return Ok(Vec::new());
        };
        let blobs = st.accepted.values().flatten().map(|h| h.blob.as_str());
        Ok(std::iter::once(st.commit.as_str())
            .chain(blobs)
            .filter_map(|s| Oid::from_str(s).ok())
            .collect())
    }

    fn objects_dir(&self) -> Result<PrivateDir, Error> {
        let objects = self.repo.path().join("objects");
        Ok(PrivateDir::open_path(&objects, &objects.to_string_lossy())?)
    }

    /// Rewrites a shadow repository's store as one pack of what its refs
    /// and the open turn hold.
    fn repack_shadow(&self) -> Result<Pruned, Error> {
        let objects = self.objects_dir()?;
        let before = census(&objects)?;
        let mut roots = self.turn_roots()?;
        for r in self.repo.references().map_err(git("listing refs"))? {
            let r = r.map_err(git("reading a ref"))?;
            roots.extend(r.resolve().ok().and_then(|r| r.target()));
        }
        let held = Reach::all(&self.repo, true, [], roots);
        let pack = crate::snapshot::pack::Pack::new(&objects).map_err(io("starting a pack"))?;
        let odb = self.repo.odb().map_err(git("opening the object store"))?;
        for oid in &held {
            let obj = odb.read(*oid).map_err(git("reading an object to repack"))?;
            pack.write(*oid, obj.kind(), obj.data())
                .map_err(io("writing the pack"))?;
        }
        let made = pack.finish().map_err(io("installing the pack"))?;
        let pack_dir = objects.create_dir("pack")?;
        for (name, _) in pack_dir.list()? {
            let name = name.to_string_lossy().into_owned();
            let keep = made.as_deref().is_some_and(|m| name.starts_with(m));
            if !keep && name.starts_with("pack-") {
                pack_dir.remove_file(&name)?;
            }
        }
        for (fan, hex) in loose(&objects)? {
            fan.remove_file(&hex[2..])?;
        }
        let after = census(&objects)?;
        Ok(Pruned {
            objects: before.0.saturating_sub(after.0),
            bytes: before.1.saturating_sub(after.1),
            skipped: None,
        })
    }

    /// Removes the loose objects only dropped checkpoints reached, in a
    /// git repository.
    fn prune_loose(&self) -> Result<Pruned, Error> {
        let Some(bytes) = self.private.read(DROPPED, 64 << 20)? else {
            return Ok(Pruned::default());
        };
        let seal = self.ws.seal()?;
        let dropped = sealed_lines(&seal, &bytes);
        let objects = self.objects_dir()?;
        if self.repo.path().join("index.lock").exists() {
            return Ok(Pruned {
                skipped: Some("git is writing its index (index.lock); run gc again later".into()),
                ..Pruned::default()
            });
        }
        let started = SystemTime::now();
        // A dropped checkpoint's parent is HEAD then: the user's history,
        // never a candidate.
        let mut gone = Reach::all(&self.repo, false, [], dropped);
        gone.retain(|oid| is_loose(&objects, *oid));
        if !gone.is_empty() {
            for held in self.held()? {
                gone.remove(&held);
            }
        }
        let mut pruned = Pruned::default();
        for oid in gone {
            let hex = oid.to_string();
            let Some(fan) = objects.dir(&hex[..2])? else {
                continue;
            };
            // Written again (by git) since the walk began: someone holds it.
            let fresh = std::fs::symlink_metadata(fan.path().join(&hex[2..]))
                .and_then(|m| m.modified())
                .map_or(true, |t| t >= started);
            if fresh {
                continue;
            }
            let size = std::fs::symlink_metadata(fan.path().join(&hex[2..])).map_or(0, |m| m.len());
            if fan.remove_file(&hex[2..])? {
                pruned.objects += 1;
                pruned.bytes += size;
            }
        }
        self.private.remove_file(DROPPED)?;
        Ok(pruned)
    }

    /// Everything the user's repository and the remaining checkpoints
    /// reach: every ref and its reflog, every worktree's HEAD and index,
    /// the open turn.
    fn held(&self) -> Result<HashSet<Oid>, Error> {
        let mut roots = self.turn_roots()?;
        let mut blobs = Vec::new();
        let mut repos = vec![];
        if let Ok(names) = self.repo.worktrees() {
            for name in names.iter().flatten() {
                if let Ok(wt) = self.repo.find_worktree(name)
                    && let Ok(r) = Repository::open_from_worktree(&wt)
                {
                    repos.push(r);
                }
            }
        }
        for repo in std::iter::once(&self.repo).chain(&repos) {
            roots.extend(repo.head().ok().and_then(|h| h.target()));
            let index = repo.index().map_err(git("reading git's index"))?;
            blobs.extend(index.iter().map(|e| e.id));
        }
        for r in self.repo.references().map_err(git("listing refs"))? {
            let r = r.map_err(git("reading a ref"))?;
            roots.extend(r.resolve().ok().and_then(|r| r.target()));
            let Some(name) = r.name() else { continue };
            if let Ok(log) = self.repo.reflog(name) {
                for e in log.iter() {
                    roots.extend([e.id_old(), e.id_new()]);
                }
            }
        }
        if let Ok(log) = self.repo.reflog("HEAD") {
            for e in log.iter() {
                roots.extend([e.id_old(), e.id_new()]);
            }
        }
        Ok(Reach::all(&self.repo, true, blobs, roots))
    }
}

fn is_loose(objects: &PrivateDir, oid: Oid) -> bool {
    let hex = oid.to_string();
    objects
        .dir(&hex[..2])
        .ok()
        .flatten()
        .is_some_and(|d| matches!(d.kind(&hex[2..]), Ok(Some(EntryKind::File))))
}

/// Every loose object: its fan-out folder and id.
fn loose(objects: &PrivateDir) -> Result<Vec<(PrivateDir, String)>, Error> {
    let mut out = Vec::new();
    for (name, kind) in objects.list()? {
        let name = name.to_string_lossy().into_owned();
        let fan_out = name.len() == 2 && name.bytes().all(|b| b.is_ascii_hexdigit());
        if kind != EntryKind::Dir || !fan_out {
            continue;
        }
        let Some(dir) = objects.dir(&name)? else {
            continue;
        };
        for (rest, kind) in dir.list()? {
            let rest = rest.to_string_lossy().into_owned();
            if kind == EntryKind::File && rest.len() == 38 {
                out.push((dir.clone(), format!("{name}{rest}")));
            }
        }
    }
    Ok(out)
}

/// Objects and bytes in a store: loose objects, and each pack's count
/// (from its index) and size.
pub(crate) fn census(objects: &PrivateDir) -> Result<(usize, u64), Error> {
    let mut count = 0;
    let mut bytes = 0;
    for (dir, hex) in loose(objects)? {
        count += 1;
        bytes += std::fs::symlink_metadata(dir.path().join(&hex[2..])).map_or(0, |m| m.len());
    }
    if let Some(pack) = objects.dir("pack")? {
        for (name, _) in pack.list()? {
            let name = name.to_string_lossy().into_owned();
            let size = std::fs::symlink_metadata(pack.path().join(&name)).map_or(0, |m| m.len());
            if name.ends_with(".pack") {
                bytes += size;
            } else if name.ends_with(".idx") {
                bytes += size;
                // The count sits at the end of the fan-out table.
                if let Some(idx) = pack.read(&name, 1 << 40)?
                    && let Some(n) = idx.get(8 + 255 * 4..8 + 256 * 4)
                {
                    count += u32::from_be_bytes([n[0], n[1], n[2], n[3]]) as usize;
                }
            }
        }
    }
    Ok((count, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only lines mend sealed name commits for gc: a planted line, an
    /// altered one and an earlier version's bare line are left out.
    #[test]
    fn only_sealed_dropped_lines_are_candidates() {
        let dir = tempfile::tempdir().unwrap();
        let ws = mend_workspace::Workspace::open(dir.path(), Default::default()).unwrap();
        let seal = ws.seal().unwrap();
        let [a, b, c] = [1u8, 2, 3].map(|n| {
            Oid::hash_object(ObjectType::Commit, &[n])
                .unwrap()
                .to_string()
        });
        let tag = |c: &str| seal.tag_hex(DROPPED, &[c.as_bytes()]);
        let list = format!(
            "{a} {}\n{b}\n{c} {}\n{b} {}\n",
            tag(&a),
            tag(&b),
            "00".repeat(32)
        );
        let got = sealed_lines(&seal, list.as_bytes());
        assert_eq!(got, vec![Oid::from_str(&a).unwrap()]);
    }
}
