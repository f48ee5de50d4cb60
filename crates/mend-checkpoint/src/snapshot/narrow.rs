//! A snapshot narrowed to the paths a watcher saw change: the previous
//! snapshot's trees, with only the entries along those paths examined
//! again, so it costs what changed, not what is there.
//!
//! It must give the tree a full walk would, so each path is widened to
//! what the walk would have to look at again:
//!
//! - a `.gitignore` stands for its folder (its rules apply to all below);
//!   a nested `x/.git` for `x` (which starts or stops being a repository);
//!   anything in a `.mend` means nothing, as the walk never enters one;
//! - on the way down to a path, the first folder the walk would not have
//!   entered as the state knows it (no tree of it in the state, ignored
//!   now, no longer a folder, a repository now) is examined instead, as a
//!   whole: a folder created and filled before its watch existed gives no
//!   event for its files.
//!
//! Each path examined is one entry of its folder, found as the walk finds
//! it (`Ctx::entry`: a file, a folder walked whole, an ignored entry HEAD
//! tracks, a skipped file). The folders above it are the previous trees
//! with that entry replaced, written bottom up. What the state held below
//! an examined path and the walk did not see again is gone.

use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::os::fd::{AsFd as _, OwnedFd};
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::time::{SystemTime, UNIX_EPOCH};

use git2::{ObjectType, Oid, Repository};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use rustix::fs::{AtFlags, FileType, Mode, OFlags, openat, statat};

use super::objects::{Loose, Store};
use super::rules::Rules;
use super::state::{Changes, DirRecord, State};
use super::{Ctx, Seen, TreeEntry, Trees, io, join};
use crate::{Error, FullReason, Skipped, git};

/// A narrowed snapshot's result.
pub(crate) struct Narrow {
    /// The root's tree.
    pub tree: Oid,
    /// Files left out, sorted by path, as a full walk lists them.
    pub skipped: Vec<Skipped>,
    /// How the previous state changes.
    pub changes: Changes,
}

/// What the walk needs to go on.
pub(crate) struct Inputs<'a> {
    pub repo: &'a Repository,
    pub root: &'a Path,
    pub max_file_bytes: u64,
    /// Files examined, as the full walk counts them.
    pub seen: &'a AtomicUsize,
    /// The previous snapshot's state and skipped files.
    pub prev: &'a State,
    pub prev_skipped: &'a [Skipped],
}

/// The snapshot after the paths in `changed` (relative to the root, `/`
/// separated) changed, the `racy` files of the last snapshot examined
/// again too; `Ok(Err(why))` when it cannot be narrowed.
pub(crate) fn narrow(
    w: &Inputs<'_>,
    changed: &[Vec<u8>],
    racy: &[Vec<u8>],
) -> Result<Result<Narrow, FullReason>, Error> {
    let Some(root_rec) = w.prev.dirs.get(&b""[..]).copied() else {
        return Ok(Err(FullReason::NoState));
    };
    let (down, targets) = match targets(w, changed, racy)? {
        Ok(t) => t,
        Err(why) => return Ok(Err(why)),
    };
    let ctx = Ctx {
        root: w.root.to_path_buf(),
        prev: w.prev,
        hint: None,
        store: Store::Loose(Loose::new(&w.repo.commondir().join("objects"))),
        max: w.max_file_bytes,
        seen: w.seen,
        max_files: None,
        over: AtomicBool::new(false),
        now: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default(),
    };
    let mut trees = Trees {
        repo: w.repo,
        ctx: &ctx,
        odb: w.repo.odb().map_err(git("opening the object store"))?,
        head: None,
        files: Seen::new(0),
        dirs: Seen::new(0),
        skipped: Vec::new(),
        new_trees: Vec::new(),
    };
    let mut updates = Updates::new();
    let mut held = Held::default();
    let mut path = Vec::new();
    for (parent, name) in &targets {
        let at = &down.dirs[parent];
        let (fd, unknown) = (at.fd.as_fd(), FileType::Unknown);
        let item = ctx.entry(parent, fd, &at.abs, &at.rules, (name, unknown), &mut path)?;
        let entry = match item {
            None => None,
            Some(Err(s)) => {
                trees.skipped.push(s);
                None
            }
            Some(Ok(item)) => trees.item(parent, &at.abs, item)?.0,
        };
        updates.put(parent, name, entry.map(|(_, mode, oid)| (mode, oid)));
        held.below(w.repo, w.prev, &join(parent, name))?;
    }
    ctx.store
        .finish()
        .map_err(io("installing the new objects".into()))?;
    let mut changes = held.gone(w.prev, &trees.files, &trees.dirs);
    changes.files = std::mem::take(&mut trees.files.changed);
    changes.dirs = std::mem::take(&mut trees.dirs.changed);
    let tree = match updates.apply(&mut trees, w.prev, &mut changes)? {
        Some(tree) => tree,
        None => root_rec.oid,
    };
    // Trees are stored together once all are known.
    trees.store_new()?;
    Ok(Ok(Narrow {
        tree,
        skipped: skipped(w.prev_skipped, &targets, trees.skipped),
        changes,
    }))
}

/// A folder (relative to the root) and a name in it to examine again.
type Target = (Vec<u8>, Vec<u8>);

/// The folders and names to examine again for `changed` and `racy`, each
/// widened to what a full walk would look at, with the descent that
/// opened their folders; `Ok(Err(why))` when a path cannot be narrowed.
fn targets<'a>(
    w: &Inputs<'a>,
    changed: &[Vec<u8>],
    racy: &[Vec<u8>],
) -> Result<Result<(Descent<'a>, Vec<Target>), FullReason>, Error> {
    let mut subjects = Vec::with_capacity(changed.len() + racy.len());
    // A racy `.gitignore` with the bytes it had changed no rules: it is
    // examined as the file it is.
    subjects.extend(racy.iter().filter(|p| same_rules(w, p)).cloned());
    let racy = racy.iter().filter(|p| !same_rules(w, p));
    for path in changed.iter().chain(racy) {
        match subject(path) {
            Ok(Some(s)) => subjects.push(s),
            Ok(None) => {}
            Err(why) => return Ok(Err(why)),
        }
    }
    let mut down = Descent::new(w)?;
    let mut targets: Vec<Target> = subjects.iter().map(|s| down.target(s)).collect();
    targets.sort();
    targets.dedup();
    let whole: HashSet<Vec<u8>> = targets.iter().map(|(p, n)| join(p, n)).collect();
    // A path below another examined one is covered by it.
    targets.retain(|(parent, _)| !ancestors(parent).any(|a| whole.contains(a)));
    Ok(Ok((down, targets)))
}

/// Whether `path` is a `.gitignore` whose bytes are still those the state
/// has the id of.
fn same_rules(w: &Inputs<'_>, path: &[u8]) -> bool {
    let Some(rec) = w.prev.files.get(path) else {
        return false;
    };
    let named = path == b".gitignore" || path.ends_with(b"/.gitignore");
    if !named || rec.stat.mode & 0o170000 != 0o100000 {
        return false;
    }
    // Never blocks: whatever is there now is opened without waiting, and
    // read only if it is a regular file.
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let abs = w.root.join(OsStr::from_bytes(path));
    let Ok(fd) = rustix::fs::open(&abs, flags, Mode::empty()) else {
        return false;
    };
    let mut file = std::fs::File::from(fd);
    let mut bytes = Vec::new();
    file.metadata().is_ok_and(|m| m.is_file())
        && std::io::Read::read_to_end(&mut file, &mut bytes).is_ok()
        && Oid::hash_object(ObjectType::Blob, &bytes).ok() == Some(rec.oid)
}

/// What a changed path means for the tree: the path whose entry is to be
/// examined again; `None` when it means nothing (inside a `.mend`, or the
/// root's `.git`, whose changes the caller checks itself).
fn subject(path: &[u8]) -> Result<Option<Vec<u8>>, FullReason> {
    // Skipped files are named by text: a path that is not UTF-8 could not
    // be told apart from another there.
    if std::str::from_utf8(path).is_err() {
        return Err(FullReason::BadPath);
    }
    let mut parts: Vec<&[u8]> = path.split(|&b| b == b'/').collect();
    if parts
        .iter()
        .any(|c| c.is_empty() || *c == b"." || *c == b"..")
    {
        return Err(FullReason::BadPath);
    }
    if parts.contains(&&b".mend"[..]) {
        return Ok(None);
    }
    if let Some(i) = parts.iter().position(|c| *c == b".git") {
        if i == 0 {
            return Ok(None);
        }
        parts.truncate(i);
    } else if parts.last() == Some(&&b".gitignore"[..]) {
        parts.pop();
        if parts.is_empty() {
            return Err(FullReason::RootRules);
        }
    }
    Ok(Some(parts.join(&b'/')))
}

/// The proper ancestors of the folder `rel` itself included, deepest
/// first, the root (the empty path) excluded.
fn ancestors(rel: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut next = (!rel.is_empty()).then_some(rel);
    std::iter::from_fn(move || {
        let cur = next?;
        next = cur.iter().rposition(|&b| b == b'/').map(|i| &cur[..i]);
        Some(cur)
    })
}

/// A folder the walk would enter, open, with the rules in force in it.
struct Opened {
    fd: OwnedFd,
    abs: PathBuf,
    rules: Rules,
}

/// The way down from the root to each changed path, folder by folder.
struct Descent<'a> {
    prev: &'a State,
    /// Folders entered so far, by path (the root is the empty path).
    dirs: HashMap<Vec<u8>, Opened>,
}

impl<'a> Descent<'a> {
    fn new(w: &Inputs<'a>) -> Result<Self, Error> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let fd = rustix::fs::open(w.root, flags, Mode::empty())
            .map_err(|e| io(format!("opening {}", w.root.display()))(e.into()))?;
        let root = Opened {
            fd,
            abs: w.root.to_path_buf(),
            rules: Rules::root(w.root, w.repo),
        };
        let mut dirs = HashMap::default();
        dirs.insert(Vec::new(), root);
        Ok(Descent { prev: w.prev, dirs })
    }

    /// The entry to examine for `path`, as its folder and its name: the
    /// first folder on the way that the walk would not enter as the state
    /// knows it, else `path` itself.
    fn target(&mut self, path: &[u8]) -> (Vec<u8>, Vec<u8>) {
        let mut rel = Vec::new();
        let mut parts = path.split(|&b| b == b'/').peekable();
        while let Some(name) = parts.next() {
            if parts.peek().is_none() || !self.enter(&rel, name) {
                return (rel, name.to_vec());
            }
            rel = join(&rel, name);
        }
        (rel, Vec::new())
    }

    /// Enters `name` in the folder `rel` (entered already) if the walk
    /// would have entered it as the state knows it.
    fn enter(&mut self, rel: &[u8], name: &[u8]) -> bool {
        let child = join(rel, name);
        if self.dirs.contains_key(&child) {
            return true;
        }
        if !self.prev.dirs.contains_key(&child) {
            return false;
        }
        let parent = &self.dirs[rel];
        let os = OsStr::from_bytes(name);
        let abs = parent.abs.join(os);
        if !parent.rules.is_empty() && parent.rules.is_ignored(&abs, true) {
            return false;
        }
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let Ok(fd) = openat(parent.fd.as_fd(), os, flags, Mode::empty()) else {
            return false;
        };
        if statat(&fd, ".git", AtFlags::SYMLINK_NOFOLLOW).is_ok() {
            return false;
        }
        let rules = if statat(&fd, ".gitignore", AtFlags::SYMLINK_NOFOLLOW).is_ok() {
            parent.rules.child(&abs)
        } else {
            parent.rules.clone()
        };
        self.dirs.insert(child, Opened { fd, abs, rules });
        true
    }
}

/// What the previous state held at and below the examined paths.
#[derive(Default)]
struct Held {
    files: Vec<Vec<u8>>,
    dirs: Vec<Vec<u8>>,
}

impl Held {
    /// Notes what the state held at `path`: a file, or a folder's tree.
    fn below(&mut self, repo: &Repository, prev: &State, path: &[u8]) -> Result<(), Error> {
        if prev.files.contains_key(path) {
            self.files.push(path.to_vec());
        }
        if let Some(d) = prev.dirs.get(path) {
            self.tree(repo, d.oid, path)?;
        }
        Ok(())
    }

    fn tree(&mut self, repo: &Repository, oid: Oid, rel: &[u8]) -> Result<(), Error> {
        self.dirs.push(rel.to_vec());
        let tree = repo
            .find_tree(oid)
            .map_err(git("reading a tree of the last checkpoint"))?;
        for e in tree.iter() {
            let path = join(rel, e.name_bytes());
            match e.kind() {
                Some(ObjectType::Tree) => self.tree(repo, e.id(), &path)?,
                _ => self.files.push(path),
            }
        }
        Ok(())
    }

    /// The changes that remove what was held and not seen again.
    fn gone(
        self,
        prev: &State,
        files: &Seen<'_, super::state::Record>,
        dirs: &Seen<'_, DirRecord>,
    ) -> Changes {
        let seen_files: HashSet<&[u8]> = files
            .kept
            .iter()
            .copied()
            .chain(files.changed.iter().map(|(p, _)| &p[..]))
            .collect();
        let seen_dirs: HashSet<&[u8]> = dirs
            .kept
            .iter()
            .copied()
            .chain(dirs.changed.iter().map(|(p, _)| &p[..]))
            .collect();
        Changes {
            gone_files: (self.files.into_iter())
                .filter(|p| !seen_files.contains(&p[..]) && prev.files.contains_key(p))
                .collect(),
            gone_dirs: (self.dirs.into_iter())
                .filter(|p| !seen_dirs.contains(&p[..]) && prev.dirs.contains_key(p))
                .collect(),
            ..Changes::default()
        }
    }
}

/// A folder's new entries by name (`None`: no entry any more), deepest
/// folders first.
struct Updates(BTreeMap<(Reverse<usize>, Vec<u8>), Vec<Update>>);

/// An entry's new mode and id by name; `None`: no entry any more.
type Update = (Vec<u8>, Option<(u32, Oid)>);

impl Updates {
    fn new() -> Self {
        Updates(BTreeMap::new())
    }

    fn put(&mut self, dir: &[u8], name: &[u8], entry: Option<(u32, Oid)>) {
        let depth = if dir.is_empty() {
            0
        } else {
            1 + dir.iter().filter(|&&b| b == b'/').count()
        };
        let key = (Reverse(depth), dir.to_vec());
        self.0.entry(key).or_default().push((name.to_vec(), entry));
    }

    /// Writes the folders' new trees, bottom up, each into its parent;
    /// the root's new tree, if it changed.
    fn apply(
        mut self,
        trees: &mut Trees<'_, '_>,
        prev: &State,
        changes: &mut Changes,
    ) -> Result<Option<Oid>, Error> {
        while let Some(((_, dir), news)) = self.0.pop_first() {
            let Some(rec) = prev.dirs.get(&dir).copied() else {
                // Only folders the state has a tree of are entered.
                return Err(io("narrowing a checkpoint".into())(std::io::Error::other(
                    "a folder without a tree in the state was entered",
                )));
            };
            let tree = trees
                .repo
                .find_tree(rec.oid)
                .map_err(git("reading a tree of the last checkpoint"))?;
            let mut entries: Vec<TreeEntry<'_>> = tree
                .iter()
                .map(|e| {
                    (
                        Cow::Owned(e.name_bytes().to_vec()),
                        e.filemode() as u32,
                        e.id(),
                    )
                })
                .collect();
            for (name, new) in news {
                entries.retain(|e| *e.0 != name[..]);
                entries.extend(new.map(|(mode, oid)| (Cow::Owned(name), mode, oid)));
            }
            let (parent, name) = match dir.iter().rposition(|&b| b == b'/') {
                Some(i) => (dir[..i].to_vec(), dir[i + 1..].to_vec()),
                None => (Vec::new(), dir.clone()),
            };
            if entries.is_empty() && !dir.is_empty() {
                changes.gone_dirs.push(dir);
                self.put(&parent, &name, None);
                continue;
            }
            let n = u32::try_from(entries.len()).unwrap_or(u32::MAX);
            let new = DirRecord {
                oid: trees.write_tree(entries, Some(rec.oid))?,
                entries: n,
            };
            if new != rec {
                changes.dirs.push((dir.clone(), new));
            }
            if dir.is_empty() {
                return Ok(Some(new.oid));
            }
            if new.oid != rec.oid {
                self.put(&parent, &name, Some((0o40000, new.oid)));
            }
        }
        Ok(None)
    }
}

/// The previous skipped files, less those at or below the examined paths,
/// with those found there now; sorted as the full walk sorts them.
fn skipped(prev: &[Skipped], targets: &[(Vec<u8>, Vec<u8>)], found: Vec<Skipped>) -> Vec<Skipped> {
    let examined: Vec<String> = targets
        .iter()
        .map(|(p, n)| String::from_utf8_lossy(&join(p, n)).into_owned())
        .collect();
    let under = |path: &str| {
        examined.iter().any(|t| {
            path.strip_prefix(t.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        })
    };
    let mut out: Vec<Skipped> = prev.iter().filter(|s| !under(&s.path)).cloned().collect();
    out.extend(found);
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changed_paths_stand_for_what_the_walk_looks_at() {
        let s = |p: &str| subject(p.as_bytes()).map(|o| o.map(|v| String::from_utf8(v).unwrap()));
        assert_eq!(s("a/b.txt"), Ok(Some("a/b.txt".into())));
        assert_eq!(s("a/.gitignore"), Ok(Some("a".into())));
        assert_eq!(s("a/b/.git"), Ok(Some("a/b".into())));
        assert_eq!(s("a/b/.git/index"), Ok(Some("a/b".into())));
        assert_eq!(s(".git/HEAD"), Ok(None));
        assert_eq!(s("x/.mend/y"), Ok(None));
        assert_eq!(s(".gitignore"), Err(FullReason::RootRules));
        assert_eq!(s("a/../b"), Err(FullReason::BadPath));
        assert_eq!(s("/a"), Err(FullReason::BadPath));
        assert_eq!(subject(b"a/\xff"), Err(FullReason::BadPath));
    }

    #[test]
    fn ancestors_go_up_to_the_root() {
        let v: Vec<&[u8]> = ancestors(b"a/b/c").collect();
        assert_eq!(v, [&b"a/b/c"[..], b"a/b", b"a"]);
        assert_eq!(ancestors(b"").count(), 0);
    }
}
