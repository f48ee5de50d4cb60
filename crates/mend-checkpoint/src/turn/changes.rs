//! What changed between the review base (the turn's start with what was
//! accepted laid over it) and the worktree's snapshot now, one entry per
//! path, with git's letters: renames found by content as `git diff -M`
//! finds them, type and mode changes as `T`.

use std::collections::{BTreeMap, BTreeSet};

use git2::{Delta, DiffFindOptions, DiffOptions, Oid, Repository, Tree};
use mend_core::report::Status;
use rustix::fs::FileType;

use crate::restore::on_disk;
use crate::{Error, Skipped, git};

/// An entry of a tree: its blob and git mode.
pub(crate) type Side = (Oid, i32);

/// One changed path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The path now (for a deletion, the path that was).
    pub path: String,
    /// The letter.
    pub status: Status,
    /// For a rename, the path it had.
    pub from: Option<String>,
    /// What the review base holds (`None`: nothing, or a folder).
    pub old: Option<Side>,
    /// What the worktree holds (`None`: nothing, or a folder).
    pub new: Option<Side>,
    /// Left out of the snapshots: listed, never diffed or put back.
    pub left_out: LeftOut,
}

/// What the snapshots left out of an entry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct LeftOut {
    /// Its size at the start, when it was too large to snapshot then.
    pub then: Option<u64>,
    /// Its size now, when it is too large to snapshot now.
    pub now: Option<u64>,
    /// A repository of its own (never snapshotted).
    pub repository: bool,
    /// Its size now, when it is still there but ignored now, so the
    /// snapshot left it out.
    pub ignored: Option<u64>,
    /// What stands at its path now when that is a FIFO, a socket or a
    /// device: no snapshot holds one, and none holds data, so the file's
    /// start can still be put back over it (not counted by
    /// [`LeftOut::any`]).
    pub special: Option<&'static str>,
}

impl LeftOut {
    /// Whether any side was left out, so that it cannot be put back.
    pub(crate) fn any(self) -> bool {
        self.then.is_some() || self.now.is_some() || self.repository || self.ignored.is_some()
    }
}

/// A file that shows as deleted but has a FIFO, a socket or a device at
/// its path now (the snapshot leaves those out: a FIFO's open could wait
/// forever, and none holds a file's bytes) changed type: it is listed
/// as `T`, and a reject puts the file back over it.
pub(crate) fn became_special(out: &mut [Entry], root: &std::path::Path) {
    for e in out.iter_mut() {
        if e.status != Status::Deleted || e.left_out.any() {
            continue;
        }
        let Some(st) = on_disk(root, &e.path) else {
            continue;
        };
        let kind = match FileType::from_raw_mode(st.st_mode) {
            FileType::Fifo => "FIFO",
            FileType::Socket => "socket",
            FileType::CharacterDevice | FileType::BlockDevice => "device",
            _ => continue,
        };
        e.status = Status::TypeChanged;
        e.left_out.special = Some(kind);
    }
}

/// A file that shows as deleted but is still in the worktree as a file
/// or link was left out of the snapshot now: it became ignored during
/// the turn. It is listed as `M`, with its size now.
pub(crate) fn became_ignored(out: &mut [Entry], root: &std::path::Path) {
    for e in out.iter_mut() {
        if e.status != Status::Deleted || e.left_out.any() {
            continue;
        }
        let Some(st) = on_disk(root, &e.path) else {
            continue;
        };
        let t = FileType::from_raw_mode(st.st_mode);
        if t == FileType::RegularFile || t == FileType::Symlink {
            e.status = Status::Modified;
            e.left_out.ignored = Some(st.st_size as u64);
        }
    }
}

impl Entry {
    /// The paths this entry touches: a rename's both names.
    pub(crate) fn paths(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.path.as_str()).chain(self.from.as_deref())
    }
}

/// The changes from `base` to `now`, sorted by path. `skipped_then` and
/// `skipped_now` are the files each snapshot left out.
pub(crate) fn between(
    repo: &Repository,
    base: &Tree<'_>,
    now: &Tree<'_>,
    skipped_then: &[Skipped],
    skipped_now: &[Skipped],
) -> Result<Vec<Entry>, Error> {
    let changed = differing(repo, base, now)?;
    let mut out = if changed.is_empty() {
        Vec::new()
    } else {
        deltas(repo, base, now, Some(&changed))?
    };
    folders_swapped(&mut out);
    left_out(&mut out, skipped_then, skipped_now, base);
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// git's diff from `base` to `now` with renames found, as entries; with
/// `only`, of exactly those paths: its tree walk then skips every other
/// subtree, where unlimited it visits every file.
fn deltas(
    repo: &Repository,
    base: &Tree<'_>,
    now: &Tree<'_>,
    only: Option<&[Vec<u8>]>,
) -> Result<Vec<Entry>, Error> {
    let mut opts = DiffOptions::new();
    opts.include_typechange(true);
    if let Some(paths) = only {
        opts.disable_pathspec_match(true);
        for path in paths {
            opts.pathspec(path.as_slice());
        }
    }
    let mut diff = repo
        .diff_tree_to_tree(Some(base), Some(now), Some(&mut opts))
        .map_err(git("comparing the turn's start with the worktree"))?;
    let mut find = DiffFindOptions::new();
    find.renames(true);
    diff.find_similar(Some(&mut find))
        .map_err(git("finding renames"))?;
    let side = |f: git2::DiffFile<'_>| f.exists().then(|| (f.id(), i32::from(f.mode())));
    let mut out = Vec::new();
    for d in diff.deltas() {
        let (old, new) = (side(d.old_file()), side(d.new_file()));
        // Spelled, so that no two names print alike and each is typed back.
        let path =
            |f: git2::DiffFile<'_>| f.path_bytes().map(|p| crate::names::spell(p).into_owned());
        let (Some(old_path), Some(new_path)) = (path(d.old_file()), path(d.new_file())) else {
            continue;
        };
        let (status, from) = match d.status() {
            Delta::Added => (Status::Added, None),
            Delta::Deleted => (Status::Deleted, None),
            Delta::Renamed => (Status::Renamed, Some(old_path)),
            Delta::Typechange => (Status::TypeChanged, None),
            Delta::Modified if old.map(|o| o.1) != new.map(|n| n.1) => (Status::TypeChanged, None),
            Delta::Modified => (Status::Modified, None),
            _ => continue,
        };
        out.push(Entry {
            path: new_path,
            status,
            from,
            old: if status == Status::Added { None } else { old },
            new: if status == Status::Deleted { None } else { new },
            left_out: LeftOut::default(),
        });
    }
    Ok(out)
}

/// Every path whose entry differs between `base` and `now` (a blob's or a
/// link's, or everything under a folder on one side only), found by
/// descending only into folders whose ids differ: an unchanged subtree
/// costs one comparison, whatever it holds.
pub(crate) fn differing(
    repo: &Repository,
    base: &Tree<'_>,
    now: &Tree<'_>,
) -> Result<Vec<Vec<u8>>, Error> {
    let mut out = Vec::new();
    if base.id() != now.id() {
        compare(repo, Some(base), Some(now), b"", &mut out)?;
    }
    Ok(out)
}

/// The paths that differ between two versions of one folder (`None`:
/// the folder is not on that side), under `prefix`.
fn compare(
    repo: &Repository,
    old: Option<&Tree<'_>>,
    new: Option<&Tree<'_>>,
    prefix: &[u8],
    out: &mut Vec<Vec<u8>>,
) -> Result<(), Error> {
    let entries = |t: Option<&Tree<'_>>| -> BTreeMap<Vec<u8>, (Oid, i32)> {
        t.map(|t| {
            t.iter()
                .map(|e| (e.name_bytes().to_vec(), (e.id(), e.filemode())))
                .collect()
        })
        .unwrap_or_default()
    };
    let (old, new) = (entries(old), entries(new));
    let names: BTreeSet<&Vec<u8>> = old.keys().chain(new.keys()).collect();
    let tree = |e: Option<&(Oid, i32)>| -> Result<Option<Tree<'_>>, Error> {
        match e {
            Some((id, mode)) if *mode == i32::from(git2::FileMode::Tree) => repo
                .find_tree(*id)
                .map(Some)
                .map_err(git("reading a folder of the turn")),
            _ => Ok(None),
        }
    };
    for name in names {
        let (o, n) = (old.get(name), new.get(name));
        if o == n {
            continue;
        }
        let path = [prefix, name.as_slice()].concat();
        let (ot, nt) = (tree(o)?, tree(n)?);
        // A file (or link) on either side is a path of its own.
        if (o.is_some() && ot.is_none()) || (n.is_some() && nt.is_none()) {
            out.push(path.clone());
        }
        if ot.is_some() || nt.is_some() {
            compare(
                repo,
                ot.as_ref(),
                nt.as_ref(),
                &[&path, b"/".as_slice()].concat(),
                out,
            )?;
        }
    }
    Ok(())
}

/// A file that became a folder shows as the file deleted and files added
/// beneath its path (a folder that became a file, the reverse): the
/// file's own entry is `T`.
fn folders_swapped(out: &mut [Entry]) {
    let under = |status: Status| -> BTreeSet<String> {
        out.iter()
            .filter(|e| e.status == status)
            .flat_map(|e| {
                crate::restore::folders_of(&e.path)
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    let (added_below, deleted_below) = (under(Status::Added), under(Status::Deleted));
    for e in out.iter_mut() {
        let swapped = match e.status {
            Status::Deleted => added_below.contains(&e.path),
            Status::Added => deleted_below.contains(&e.path),
            _ => false,
        };
        if swapped {
            e.status = Status::TypeChanged;
        }
    }
}

/// Files too large to snapshot, and repositories of their own, are in no
/// tree: one too large now shows as deleted (or not at all, when it is
/// new), one too large at the start as added, and one too large at both
/// not at all. Each is listed instead, with its sizes: `M` when its size
/// or modification time differs from the start's, `A` or `D` when it
/// appeared or went. A repository that appeared or went is `A` or `D`.
fn left_out(
    out: &mut Vec<Entry>,
    skipped_then: &[Skipped],
    skipped_now: &[Skipped],
    base: &Tree<'_>,
) {
    let large = |s: &'_ [Skipped]| -> BTreeMap<String, (u64, Option<String>)> {
        s.iter()
            .filter_map(|s| {
                Some((
                    s.path.clone(),
                    (size_of_reason(&s.reason)?, s.stamp.clone()),
                ))
            })
            .collect()
    };
    let (then, now) = (large(skipped_then), large(skipped_now));
    for e in out.iter_mut() {
        if e.status == Status::Deleted && now.contains_key(&e.path) {
            e.status = Status::Modified;
            e.left_out.now = now.get(&e.path).map(|n| n.0);
        } else if e.status == Status::Added && then.contains_key(&e.path) {
            e.status = Status::Modified;
            e.left_out.then = then.get(&e.path).map(|t| t.0);
        }
    }
    let listed: BTreeSet<String> = out.iter().map(|e| e.path.clone()).collect();
    let in_base = |p: &str| base.get_path(std::path::Path::new(p)).is_ok();
    let entry = |path: &str, status, left_out| Entry {
        path: path.to_owned(),
        status,
        from: None,
        old: None,
        new: None,
        left_out,
    };
    for (path, (size, stamp)) in &now {
        if listed.contains(path) {
            continue;
        }
        let left_out = LeftOut {
            now: Some(*size),
            ..LeftOut::default()
        };
        match then.get(path) {
            // Too large at both: changed when its size or time did.
            Some((before, then_stamp)) => {
                let same = *before == *size && (then_stamp.is_none() || then_stamp == stamp);
                if !same {
                    let left_out = LeftOut {
                        then: Some(*before),
                        ..left_out
                    };
                    out.push(entry(path, Status::Modified, left_out));
                }
            }
            None if !in_base(path) => out.push(entry(path, Status::Added, left_out)),
            None => {}
        }
    }
    for (path, (size, _)) in &then {
        // Gone since: no tree holds it, so no deletion was found.
        if !now.contains_key(path) && !listed.contains(path) {
            let left_out = LeftOut {
                then: Some(*size),
                ..LeftOut::default()
            };
            out.push(entry(path, Status::Deleted, left_out));
        }
    }
    repositories(out, skipped_then, skipped_now);
}

/// Repositories of their own that appeared or went during the turn, as
/// `A` or `D` (one there at both ends is not looked into).
fn repositories(out: &mut Vec<Entry>, skipped_then: &[Skipped], skipped_now: &[Skipped]) {
    let repos = |s: &[Skipped]| -> BTreeSet<String> {
        s.iter()
            .filter(|s| s.reason == "nested repository")
            .map(|s| s.path.clone())
            .collect()
    };
    let (then, now) = (repos(skipped_then), repos(skipped_now));
    let repository = LeftOut {
        repository: true,
        ..LeftOut::default()
    };
    let entry = |path: &String, status| Entry {
        path: path.clone(),
        status,
        from: None,
        old: None,
        new: None,
        left_out: repository,
    };
    out.extend(now.difference(&then).map(|p| entry(p, Status::Added)));
    out.extend(then.difference(&now).map(|p| entry(p, Status::Deleted)));
}

/// The size in a snapshot's `too large (N bytes)` reason.
fn size_of_reason(reason: &str) -> Option<u64> {
    reason
        .strip_prefix("too large (")?
        .strip_suffix(" bytes)")?
        .parse()
        .ok()
}

#[cfg(test)]
pub(super) mod tests {
    use git2::{Index, Oid, Repository};
    use proptest::prelude::*;

    use super::{deltas, differing};

    /// Paths that clash as a file and a folder ("e" and "e/f"), nest, and
    /// sit in folders of their own.
    pub(in crate::turn) const PATHS: &[&str] =
        &["f", "g", "d/f", "d/g", "d/e/f", "e", "e/f", "x/y/z"];
    /// Contents that make exact renames, similar ones, and binary files.
    pub(in crate::turn) const TEXTS: &[&str] = &[
        "one\ntwo\nthree\nfour\nfive\n",
        "one\ntwo\nthree\nfour\nsix\n",
        "x\n",
        "",
        "bin\0ary\n",
    ];
    pub(in crate::turn) const MODES: &[u32] = &[0o100644, 0o100755, 0o120000];

    /// A tree of the chosen paths (a path under one chosen as a file is
    /// left out), each with a text and a mode.
    pub(in crate::turn) fn tree(repo: &Repository, chosen: &[(usize, usize, usize)]) -> Oid {
        let mut index = Index::new().unwrap();
        let mut files: Vec<&str> = Vec::new();
        for &(p, t, m) in chosen {
            let path = PATHS[p];
            let clash = files.iter().any(|f| {
                *f == path
                    || path.starts_with(&format!("{f}/"))
                    || f.starts_with(&format!("{path}/"))
            });
            if clash {
                continue;
            }
            files.push(path);
            let id = repo.blob(TEXTS[t].as_bytes()).unwrap();
            let mut entry =
                super::super::index_entry(path, &id.to_string(), MODES[m] as i32).unwrap();
            entry.mode = MODES[m];
            index.add(&entry).unwrap();
        }
        index.write_tree_to(repo).unwrap()
    }

    pub(in crate::turn) fn side() -> impl Strategy<Value = Vec<(usize, usize, usize)>> {
        proptest::collection::vec((0..PATHS.len(), 0..TEXTS.len(), 0..MODES.len()), 0..8)
    }

    proptest! {
        /// git's diff limited to the paths the subtree walk finds equals
        /// its diff of the whole trees: letters, renames, sides.
        #[test]
        fn the_limited_diff_is_the_whole_diff(old in side(), new in side()) {
            let dir = tempfile::tempdir().unwrap();
            let repo = Repository::init_bare(dir.path()).unwrap();
            let (a, b) = (tree(&repo, &old), tree(&repo, &new));
            let (a, b) = (repo.find_tree(a).unwrap(), repo.find_tree(b).unwrap());
            let changed = differing(&repo, &a, &b).unwrap();
            let mut whole = deltas(&repo, &a, &b, None).unwrap();
            let mut limited = if changed.is_empty() {
                Vec::new()
            } else {
                deltas(&repo, &a, &b, Some(&changed)).unwrap()
            };
            whole.sort_by(|x, y| x.path.cmp(&y.path));
            limited.sort_by(|x, y| x.path.cmp(&y.path));
            prop_assert_eq!(limited, whole);
        }
    }
}
