//! The worktree as a git tree, at close to the cost of one `lstat` per file.
//!
//! The tree holds what `git add -A` on a fresh index read from HEAD would
//! hold: every file not ignored, and every file HEAD tracks even where a
//! rule now ignores it. `.git`, `.mend`, nested repositories and files over
//! the size limit are left out (the last two are listed as skipped). Bytes
//! are stored as they are, without git's line-ending filters, so a restore
//! gives back exactly what was there.
//!
//! Two phases:
//!
//! 1. **Walk** (parallel, rayon): each folder is listed and its rules
//!    applied; each file is `lstat`ed and its object id taken from the
//!    state file when the stat data is unchanged (and was not racy), else
//!    from the user's index when its stat data matches there (a fresh
//!    clone's first snapshot hashes nothing), else by hashing the file and
//!    writing the blob (loose, or in a shadow repository's first snapshot
//!    into one pack, `pack.rs`). With a file limit, the walk stops once
//!    past it, and what it wrote is removed.
//! 2. **Trees** (one thread): bottom up, consulting HEAD (read only then)
//!    for ignored entries it tracks; a tree already known to be stored is
//!    not written, and a repeat snapshot's new trees are stored together,
//!    in parallel, at the end (each loose object is a new file, whose
//!    creation costs more than the rest of the tree's work).
//!
//! A file the state knows, unchanged, costs no allocation: names are read
//! into one buffer per folder, paths spelled in a buffer per task, and
//! the state's own keys stand for them in phase two.
//!
//! Racy timestamps: a file modified within a clock tick of being examined
//! (10 ms, or 2 s on a filesystem without sub-second times) could change
//! again without its stat data changing, so it is marked and hashed again
//! next time, as git does with racily clean index entries.

pub(crate) mod files;
pub(crate) mod narrow;
mod objects;
pub(crate) mod pack;
pub(crate) mod rules;
pub(crate) mod state;

use rustc_hash::FxHashMap as HashMap;
use std::borrow::Cow;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use std::io::Read as _;
use std::os::fd::{AsFd as _, BorrowedFd};

use git2::{ObjectType, Oid, Repository, Tree};
use rayon::prelude::*;
use rustix::fs::{AtFlags, FileType, Mode, OFlags, RawDir, openat, readlinkat, statat};

use crate::{Error, Skipped, git};
use objects::{Loose, Store};
use rules::Rules;
use state::{Changes, DirRecord, Entries, Record, Stat, State};

/// The result of a snapshot.
pub(crate) struct Snapshot {
    /// The tree (the empty tree for an empty worktree).
    pub tree: Oid,
    /// Files in it.
    pub files: usize,
    /// Files left out.
    pub skipped: Vec<Skipped>,
    /// The state to save for the next snapshot.
    pub state: State,
    /// How it differs from the previous one.
    pub changes: Changes,
    /// The checkpoint the previous state was saved with: the newest one,
    /// as every checkpoint saves the state.
    pub after: Option<Oid>,
}

/// What a snapshot needs to know.
pub(crate) struct Walk<'a> {
    pub repo: &'a Repository,
    pub root: &'a Path,
    pub max_file_bytes: u64,
    /// Files examined so far, for a progress display.
    pub seen: &'a AtomicUsize,
    /// Write a snapshot without a previous state into one pack (a shadow
    /// repository's, which mend alone writes and repacks).
    pub pack: bool,
    /// Refuse the snapshot once it holds more files than this.
    pub max_files: Option<usize>,
}

/// The user's index entries whose stat data can stand in for hashing.
struct IndexHint {
    entries: HashMap<Vec<u8>, (Stat, Oid)>,
    /// Entries modified at or after this time are racy in the index.
    written: (i64, i64),
}

impl IndexHint {
    fn load(repo: &Repository) -> Option<IndexHint> {
        let path = repo.path().join("index");
        let meta = std::fs::metadata(&path).ok()?;
        let written = Stat::of(&meta).mtime;
        let index = git2::Index::open(&path).ok()?;
        let mut entries = HashMap::with_capacity_and_hasher(index.len(), Default::default());
        for e in index.iter() {
            // Conflicts, intent-to-add and skip-worktree entries say
            // nothing about the worktree's bytes.
            let stage = (e.flags >> 12) & 3;
            if stage != 0 || e.flags_extended & (0x2000 | 0x4000) != 0 {
                continue;
            }
            let stat = Stat {
                mode: e.mode,
                size: u64::from(e.file_size),
                mtime: (
                    i64::from(e.mtime.seconds()),
                    i64::from(e.mtime.nanoseconds()),
                ),
                ctime: (
                    i64::from(e.ctime.seconds()),
                    i64::from(e.ctime.nanoseconds()),
                ),
                ino: u64::from(e.ino),
                dev: u64::from(e.dev),
            };
            entries.insert(e.path, (stat, e.id));
        }
        Some(IndexHint { entries, written })
    }

    /// The id of `path` if the index's stat data says the file is the one
    /// it hashed.
    fn id(&self, path: &[u8], git_mode: u32, s: &Stat) -> Option<Oid> {
        let (e, oid) = self.entries.get(path)?;
        let same = e.mode == git_mode
            && e.size == (s.size & 0xffff_ffff)
            && e.mtime == s.mtime
            && e.ctime == s.ctime
            && e.ino == (s.ino & 0xffff_ffff);
        (same && e.mtime < self.written).then_some(*oid)
    }
}

/// A path relative to the root: the previous state's own key when the
/// state has it (no copy for the files a repeat snapshot finds again),
/// else a new one.
enum PathOf<'a> {
    Known(&'a [u8]),
    New(Vec<u8>),
}

/// One entry of a walked folder.
enum Item<'a> {
    File {
        /// The whole path, relative to the root (the state's key); the
        /// name is its last `name_len` bytes.
        rel: PathOf<'a>,
        name_len: usize,
        mode: u32,
        rec: Record,
        /// The state's record as it was: nothing to update.
        unchanged: bool,
    },
    Dir {
        name: Vec<u8>,
        dir: Listing<'a>,
    },
    /// Ignored: in the tree only if HEAD tracks it.
    Ignored {
        name: Vec<u8>,
        is_dir: bool,
    },
}

#[derive(Default)]
struct Listing<'a> {
    items: Vec<Item<'a>>,
    skipped: Vec<Skipped>,
}

/// What [`Ctx::entry`] and [`Ctx::leaf`] give for one entry: an item,
/// a file left out, or nothing.
type Found<'a> = Result<Option<Result<Item<'a>, Skipped>>, Error>;

/// Phase one's shared, thread-safe part.
struct Ctx<'a> {
    root: PathBuf,
    prev: &'a State,
    hint: Option<IndexHint>,
    store: Store,
    max: u64,
    seen: &'a AtomicUsize,
    max_files: Option<usize>,
    /// Set once the snapshot is over `max_files`: the walk stops.
    over: AtomicBool,
    /// When the walk began: a file modified within a tick of it is racy
    /// (taken once, before any file is examined, so it marks at least the
    /// files a per-file clock would).
    now: Duration,
}

fn io(context: String) -> impl FnOnce(std::io::Error) -> Error {
    move |cause| Error::Io { context, cause }
}

fn join(rel: &[u8], name: &[u8]) -> Vec<u8> {
    if rel.is_empty() {
        return name.to_vec();
    }
    let mut p = Vec::with_capacity(rel.len() + 1 + name.len());
    p.extend_from_slice(rel);
    p.push(b'/');
    p.extend_from_slice(name);
    p
}

/// A path as checkpoints list it (what they skipped) and as restores
/// key it: spelled, so a name that is not UTF-8 is never taken for
/// another (see [`crate::names`]).
fn shown(rel: &[u8]) -> String {
    crate::names::spell(rel).into_owned()
}

/// git's mode for a file's stat mode.
fn git_mode(mode: u32) -> u32 {
    match mode & 0o170000 {
        0o120000 => 0o120000,
        _ if mode & 0o100 != 0 => 0o100755,
        _ => 0o100644,
    }
}

/// How a file's bytes are opened: never through a link, and never
/// waiting (a FIFO put where a file was after it was examined fails
/// instead of blocking; a regular file ignores the flag).
const READ_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::CLOEXEC)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::NONBLOCK);

/// The buffer one folder is listed through (`getdents64`).
const LISTING_BYTES: usize = 64 * 1024;

/// The bytes of the file `name` in the folder `dirfd`, or a link's target.
fn read_at(dirfd: BorrowedFd<'_>, name: &OsStr, link: bool) -> std::io::Result<Vec<u8>> {
    if link {
        return Ok(readlinkat(dirfd, name, Vec::new())?.into_bytes());
    }
    read_all(openat(dirfd, name, READ_FLAGS, Mode::empty())?)
}

/// Everything left to read from `fd`.
fn read_all(fd: rustix::fd::OwnedFd) -> std::io::Result<Vec<u8>> {
    let mut data = Vec::new();
    std::fs::File::from(fd).read_to_end(&mut data)?;
    Ok(data)
}

/// Whether a file modified at `mtime` may change again unseen.
fn is_racy(mtime: (i64, i64), now: Duration) -> bool {
    let tick = if mtime.1 == 0 {
        Duration::from_secs(2)
    } else {
        Duration::from_millis(10)
    };
    let m = Duration::new(mtime.0.max(0) as u64, mtime.1.clamp(0, 999_999_999) as u32);
    m + tick >= now
}

impl<'a> Ctx<'a> {
    /// One file: its record, hashing and storing it only when neither the
    /// state nor the index can vouch for its id, whether it is the state's
    /// record unchanged, and the state's key for it. `content` reads it (a
    /// link's target for a link).
    fn file(
        &self,
        rel: &[u8],
        stat: Stat,
        linked: bool,
        content: impl FnOnce() -> std::io::Result<Vec<u8>>,
    ) -> Result<(Record, bool, Option<&'a [u8]>), Error> {
        self.count()?;
        let racy = is_racy(stat.mtime, self.now);
        let prev: &'a State = self.prev;
        let known = prev.files.get_key_value(rel);
        let key = known.map(|(k, _)| k);
        if let Some((_, r)) = known
            && r.stat == stat
            && !r.racy
        {
            return Ok((
                Record { racy, linked, ..r },
                !racy && linked == r.linked,
                key,
            ));
        }
        let mode = git_mode(stat.mode);
        if let Some(oid) = self.hint.as_ref().and_then(|h| h.id(rel, mode, &stat)) {
            let rec = Record {
                stat,
                oid,
                racy,
                linked,
            };
            return Ok((rec, false, key));
        }
        let data = content().map_err(io(format!("reading {}", shown(rel))))?;
        let oid = Oid::hash_object(ObjectType::Blob, &data).map_err(git("hashing a file"))?;
        self.store
            .write(oid, ObjectType::Blob, &data)
            .map_err(io(format!("storing {}", shown(rel))))?;
        Ok((
            Record {
                stat,
                oid,
                racy,
                linked,
            },
            false,
            key,
        ))
    }

    /// Counts a file, refusing once there are more than `max_files`.
    fn count(&self) -> Result<(), Error> {
        let n = self.seen.fetch_add(1, Ordering::Relaxed) + 1;
        match self.max_files {
            Some(max) if n > max || self.over.load(Ordering::Relaxed) => {
                self.over.store(true, Ordering::Relaxed);
                Err(self.too_many())
            }
            _ => Ok(()),
        }
    }

    fn too_many(&self) -> Error {
        Error::TooManyFiles {
            root: self.root.display().to_string(),
            max: self.max_files.unwrap_or(0),
            counted: self.seen.load(Ordering::Relaxed),
        }
    }

    /// Lists a folder (open as `fd`) and walks it, subfolders in
    /// parallel. Everything below is reached relative to the folder's
    /// descriptor, so the kernel never walks a whole path again. `None`
    /// for a nested repository: a folder below the root whose listing
    /// has a `.git` (found in the listing, so a folder costs no `lstat`
    /// of a `.git` that is almost never there).
    fn dir(
        &self,
        rel: &[u8],
        fd: BorrowedFd<'_>,
        abs: &Path,
        rules: &Rules,
    ) -> Result<Option<Listing<'a>>, Error> {
        // Over the limit: every branch of the walk stops where it is.
        if self.over.load(Ordering::Relaxed) {
            return Err(self.too_many());
        }
        let listing_err = || io(format!("listing {}", abs.display()));
        // Every name in one buffer: one allocation per folder, not per file.
        let mut buf = Vec::new();
        let mut names = Vec::new();
        {
            // Room for a few thousand entries per `getdents`, so a usual
            // folder is listed in one call and the empty one that ends it.
            let mut space = Vec::with_capacity(LISTING_BYTES);
            let mut dir = RawDir::new(fd, space.spare_capacity_mut());
            while let Some(e) = dir.next() {
                let e = e.map_err(|e| listing_err()(e.into()))?;
                let n = e.file_name().to_bytes();
                if n != b"." && n != b".." {
                    names.push((buf.len()..buf.len() + n.len(), e.file_type()));
                    buf.extend_from_slice(n);
                }
            }
        }
        let named = |name: &[u8]| names.iter().any(|(n, _)| &buf[n.clone()] == name);
        if !rel.is_empty() && named(b".git") {
            return Ok(None);
        }
        let has_rules = named(b".gitignore");
        let dirfd = fd;
        let rules = if !rel.is_empty() && has_rules {
            rules.child(abs)
        } else {
            rules.clone()
        };
        // Folders fan out; a folder's files go in chunks, as a task costs
        // more than an `lstat`. Each chunk spells its files' paths in one
        // buffer, copied only for a file the state does not know.
        let (dirs, mut files): (Vec<_>, Vec<_>) = names
            .into_iter()
            .partition(|(_, ft)| *ft == FileType::Directory);
        // By name, as the state stores them (by path): each lookup then
        // reads the state's bytes just after the last one's.
        files.sort_unstable_by(|(a, _), (b, _)| buf[a.clone()].cmp(&buf[b.clone()]));
        let each = |path: &mut Vec<u8>, (name, ft): (std::ops::Range<usize>, FileType)| {
            self.entry(rel, dirfd, abs, &rules, (&buf[name], ft), path)
        };
        let (mut results, files): (Vec<_>, Vec<_>) = rayon::join(
            || dirs.into_par_iter().map_init(Vec::new, each).collect(),
            || {
                files
                    .into_par_iter()
                    .with_min_len(64)
                    .map_init(Vec::new, each)
                    .collect()
            },
        );
        results.extend(files);
        let mut out = Listing::default();
        for r in results {
            match r? {
                Some(Ok(item)) => out.items.push(item),
                Some(Err(s)) => out.skipped.push(s),
                None => {}
            }
        }
        Ok(Some(out))
    }

    /// One entry of a folder; `path` is a buffer to spell its path in.
    fn entry(
        &self,
        rel: &[u8],
        dirfd: BorrowedFd<'_>,
        abs: &Path,
        rules: &Rules,
        (name, ft): (&[u8], FileType),
        path: &mut Vec<u8>,
    ) -> Found<'a> {
        if name == b".mend" || (rel.is_empty() && name == b".git") {
            return Ok(None);
        }
        let os = OsStr::from_bytes(name);
        path.clear();
        if !rel.is_empty() {
            path.extend_from_slice(rel);
            path.push(b'/');
        }
        path.extend_from_slice(name);
        let child_rel = &path[..];
        // Only rules need the whole path; most folders have none.
        let child_abs = || abs.join(os);
        let ft = match ft {
            FileType::Unknown => match statat(dirfd, os, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) => FileType::from_raw_mode(st.st_mode),
                Err(_) => return Ok(None),
            },
            ft => ft,
        };
        match ft {
            FileType::Directory => {
                if !rules.is_empty() && rules.is_ignored(&child_abs(), true) {
                    return Ok(Some(Ok(Item::Ignored {
                        name: name.to_vec(),
                        is_dir: true,
                    })));
                }
                let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
                let Ok(fd) = openat(dirfd, os, flags, Mode::empty()) else {
                    return Ok(None);
                };
                match self.dir(child_rel, fd.as_fd(), &child_abs(), rules)? {
                    Some(dir) => Ok(Some(Ok(Item::Dir {
                        name: name.to_vec(),
                        dir,
                    }))),
                    None => Ok(Some(Err(Skipped {
                        path: shown(child_rel),
                        reason: "nested repository".into(),
                        stamp: None,
                    }))),
                }
            }
            FileType::RegularFile | FileType::Symlink => {
                if !rules.is_empty() && rules.is_ignored(&child_abs(), false) {
                    return Ok(Some(Ok(Item::Ignored {
                        name: name.to_vec(),
                        is_dir: false,
                    })));
                }
                let Ok(st) = statat(dirfd, os, AtFlags::SYMLINK_NOFOLLOW) else {
                    return Ok(None);
                };
                let link = ft == FileType::Symlink;
                let (stat, linked) = (Stat::from_raw(&st), st.st_nlink > 1);
                self.leaf(child_rel, name.len(), stat, linked, || {
                    read_at(dirfd, os, link)
                })
            }
            _ => Ok(None),
        }
    }

    /// A file or link that belongs in the tree, unless it is too large.
    fn leaf(
        &self,
        rel: &[u8],
        name_len: usize,
        stat: Stat,
        linked: bool,
        content: impl FnOnce() -> std::io::Result<Vec<u8>>,
    ) -> Found<'a> {
        let regular = stat.mode & 0o170000 == 0o100000;
        if regular && stat.size > self.max {
            return Ok(Some(Err(Skipped {
                path: shown(rel),
                reason: format!("too large ({} bytes)", stat.size),
                stamp: Some(format!(
                    "{}:{}.{:09}",
                    stat.size, stat.mtime.0, stat.mtime.1
                )),
            })));
        }
        let (rec, unchanged, key) = self.file(rel, stat, linked, content)?;
        let mode = git_mode(rec.stat.mode);
        Ok(Some(Ok(Item::File {
            rel: key.map_or_else(|| PathOf::New(rel.to_vec()), PathOf::Known),
            name_len,
            mode,
            rec,
            unchanged,
        })))
    }

    /// [`Ctx::leaf`] by path, for the rare walks outside the main one.
    fn leaf_at(&self, rel: &[u8], abs: &Path, name: &[u8]) -> Found<'a> {
        let Ok(meta) = std::fs::symlink_metadata(abs) else {
            return Ok(None);
        };
        let link = meta.file_type().is_symlink();
        // A FIFO, socket or device where HEAD has a file is no file: a
        // FIFO's open would wait for a writer forever.
        if !link && !meta.is_file() {
            return Ok(None);
        }
        self.leaf(rel, name.len(), Stat::of(&meta), meta.nlink() > 1, || {
            if link {
                return Ok(std::fs::read_link(abs)?.as_os_str().as_bytes().to_vec());
            }
            read_all(rustix::fs::open(abs, READ_FLAGS, Mode::empty())?)
        })
    }

    /// An ignored folder that HEAD tracks: only what HEAD tracks in it.
    fn tracked(
        &self,
        repo: &Repository,
        rel: &[u8],
        abs: &Path,
        head: &Tree<'_>,
    ) -> Result<Listing<'a>, Error> {
        let mut out = Listing::default();
        for e in head.iter() {
            let n = e.name_bytes();
            let (child_rel, child_abs) = (join(rel, n), abs.join(OsStr::from_bytes(n)));
            let Ok(meta) = std::fs::symlink_metadata(&child_abs) else {
                continue;
            };
            match e.kind() {
                Some(ObjectType::Blob) if !meta.is_dir() => {
                    match self.leaf_at(&child_rel, &child_abs, n)? {
                        Some(Ok(item)) => out.items.push(item),
                        Some(Err(s)) => out.skipped.push(s),
                        None => {}
                    }
                }
                Some(ObjectType::Tree) if meta.is_dir() => {
                    let sub = e
                        .to_object(repo)
                        .and_then(|o| o.peel_to_tree())
                        .map_err(git("reading HEAD's tree"))?;
                    let dir = self.tracked(repo, &child_rel, &child_abs, &sub)?;
                    out.items.push(Item::Dir {
                        name: n.to_vec(),
                        dir,
                    });
                }
                _ => {}
            }
        }
        Ok(out)
    }
}

/// A tree entry: its name, git mode and id. A file's name is borrowed
/// from the state's key where the state knows the file.
type TreeEntry<'a> = (Cow<'a, [u8]>, u32, Oid);

/// git's order of tree entries: by name, a folder's name as if it ended in
/// `/`.
fn tree_order<N: AsRef<[u8]>>(a: &(N, u32, Oid), b: &(N, u32, Oid)) -> std::cmp::Ordering {
    fn key<N: AsRef<[u8]>>(e: &(N, u32, Oid)) -> impl Iterator<Item = u8> + '_ {
        let slash: &[u8] = if e.1 == 0o40000 { b"/" } else { b"" };
        e.0.as_ref().iter().chain(slash).copied()
    }
    key(a).cmp(key(b))
}

/// A tree entry's mode as git writes it.
fn mode_text(mode: u32) -> &'static [u8] {
    match mode {
        0o40000 => b"40000",
        0o120000 => b"120000",
        0o100755 => b"100755",
        _ => b"100644",
    }
}

/// Phase two: trees, bottom up.
struct Trees<'r, 'a> {
    repo: &'r Repository,
    ctx: &'a Ctx<'a>,
    odb: git2::Odb<'r>,
    /// HEAD's tree, read only once an ignored entry needs it.
    head: Option<Option<Tree<'r>>>,
    /// Files and folders seen, against the previous state.
    files: Seen<'a, Record>,
    dirs: Seen<'a, DirRecord>,
    skipped: Vec<Skipped>,
    /// New trees of a repeat snapshot, stored together (in parallel) once
    /// all are known.
    new_trees: Vec<(Oid, Vec<u8>)>,
}

/// What phase two saw of one kind of state entry.
struct Seen<'a, K> {
    /// Entries that differ from the previous state's.
    changed: Entries<K>,
    /// The previous state's paths seen again: its own keys, not copies.
    kept: Vec<&'a [u8]>,
    /// Paths seen in all.
    count: usize,
}

impl<'a, K: Copy> Seen<'a, K> {
    fn new(capacity: usize) -> Self {
        Seen {
            changed: Vec::new(),
            kept: Vec::with_capacity(capacity),
            count: 0,
        }
    }

    fn see(&mut self, path: PathOf<'a>, value: K, unchanged: bool) {
        self.count += 1;
        match path {
            PathOf::Known(p) => {
                self.kept.push(p);
                if !unchanged {
                    self.changed.push((p.to_vec(), value));
                }
            }
            PathOf::New(p) => self.changed.push((p, value)),
        }
    }

    /// The changes from the previous state's entries (`prev_len` paths,
    /// `prev`), and the paths that went away.
    fn finish<'p>(
        self,
        prev_len: usize,
        prev: impl Iterator<Item = &'p [u8]>,
    ) -> (Entries<K>, Vec<Vec<u8>>) {
        let mut gone = Vec::new();
        if self.kept.len() < prev_len {
            let seen: rustc_hash::FxHashSet<&[u8]> = self.kept.iter().copied().collect();
            gone = prev
                .filter(|p| !seen.contains(p))
                .map(<[u8]>::to_vec)
                .collect();
        }
        (self.changed, gone)
    }
}

impl<'a> Trees<'_, 'a> {
    /// A folder's tree (none for an empty folder below the root), and
    /// whether it is the previous snapshot's tree of that folder.
    fn build(
        &mut self,
        rel: &[u8],
        abs: &Path,
        listing: Listing<'a>,
    ) -> Result<Option<(Oid, bool)>, Error> {
        // A folder whose entries are all as they were, and as many, is the
        // tree it was: no need to sort, hash or look it up again.
        let mut same = listing.skipped.is_empty();
        self.skipped.extend(listing.skipped);
        let mut entries: Vec<TreeEntry<'a>> = Vec::with_capacity(listing.items.len());
        for item in listing.items {
            let (entry, unchanged) = self.item(rel, abs, item)?;
            same &= unchanged;
            entries.extend(entry);
        }
        if entries.is_empty() && !rel.is_empty() {
            return Ok(None);
        }
        let prev_state: &'a State = self.ctx.prev;
        let known = prev_state.dirs.get_key_value(rel);
        let prev = known.map(|(_, d)| *d);
        let path = || known.map_or_else(|| PathOf::New(rel.to_vec()), |(k, _)| PathOf::Known(k));
        let entries_n = u32::try_from(entries.len()).unwrap_or(u32::MAX);
        if let Some(p) = prev.filter(|p| same && p.entries == entries_n) {
            self.dirs.see(path(), p, true);
            return Ok(Some((p.oid, true)));
        }
        let oid = self.write_tree(entries, prev.map(|p| p.oid))?;
        let rec = DirRecord {
            oid,
            entries: entries_n,
        };
        self.dirs.see(path(), rec, prev == Some(rec));
        Ok(Some((oid, prev.is_some_and(|p| p.oid == oid))))
    }

    /// One entry of the folder `rel` (at `abs`): its tree entry (none for
    /// an empty folder, or an ignored entry HEAD does not track), and
    /// whether it is as the previous snapshot saw it.
    fn item(
        &mut self,
        rel: &[u8],
        abs: &Path,
        item: Item<'a>,
    ) -> Result<(Option<TreeEntry<'a>>, bool), Error> {
        match item {
            Item::File {
                rel: path,
                name_len,
                mode,
                rec,
                unchanged,
            } => {
                let name = match &path {
                    PathOf::Known(p) => Cow::Borrowed(&p[p.len() - name_len..]),
                    PathOf::New(p) => Cow::Owned(p[p.len() - name_len..].to_vec()),
                };
                self.files.see(path, rec, unchanged);
                Ok((Some((name, mode, rec.oid)), unchanged))
            }
            Item::Dir { name, dir } => {
                let child_abs = abs.join(OsStr::from_bytes(&name));
                Ok(match self.build(&join(rel, &name), &child_abs, dir)? {
                    Some((oid, same)) => (Some((Cow::Owned(name), 0o40000, oid)), same),
                    None => (None, true),
                })
            }
            Item::Ignored { name, is_dir } => {
                Ok((self.tracked_by_head(rel, abs, &name, is_dir)?, false))
            }
        }
    }

    /// Hashes a tree and stores it unless it is `known` or stored already
    /// (a loose one is queued for [`Trees::store_new`]).
    fn write_tree(
        &mut self,
        mut entries: Vec<TreeEntry<'_>>,
        known: Option<Oid>,
    ) -> Result<Oid, Error> {
        entries.sort_by(tree_order);
        let mut bytes = Vec::with_capacity(entries.len() * 40);
        for (name, mode, oid) in &entries {
            bytes.extend_from_slice(mode_text(*mode));
            bytes.push(b' ');
            bytes.extend_from_slice(name);
            bytes.push(0);
            bytes.extend_from_slice(oid.as_bytes());
        }
        let oid = Oid::hash_object(ObjectType::Tree, &bytes).map_err(git("hashing a tree"))?;
        if known == Some(oid) {
            return Ok(oid);
        }
        match &self.ctx.store {
            Store::Pack(pack) if !pack.has(oid) && !self.odb.exists(oid) => pack
                .write(oid, ObjectType::Tree, &bytes)
                .map_err(io("storing a tree".into()))?,
            Store::Pack(_) => {}
            Store::Loose(_) if !self.odb.exists(oid) => self.new_trees.push((oid, bytes)),
            Store::Loose(_) => {}
        }
        Ok(oid)
    }

    /// Stores the queued trees, in parallel: each loose object is a new
    /// file, whose creation costs more than the rest of its tree's work.
    fn store_new(&mut self) -> Result<(), Error> {
        let store = &self.ctx.store;
        std::mem::take(&mut self.new_trees)
            .par_iter()
            .try_for_each(|(oid, bytes)| store.write(*oid, ObjectType::Tree, bytes))
            .map_err(io("storing a tree".into()))
    }

    /// An ignored entry HEAD tracks goes in as `git add -A` keeps it.
    fn tracked_by_head(
        &mut self,
        rel: &[u8],
        abs: &Path,
        name: &[u8],
        is_dir: bool,
    ) -> Result<Option<TreeEntry<'a>>, Error> {
        let repo = self.repo;
        let head = self
            .head
            .get_or_insert_with(|| repo.head().ok().and_then(|h| h.peel_to_tree().ok()));
        let Some(head) = head else {
            return Ok(None);
        };
        let path = join(rel, name);
        let Ok(entry) = head.get_path(Path::new(OsStr::from_bytes(&path))) else {
            return Ok(None);
        };
        let child_abs = abs.join(OsStr::from_bytes(name));
        match (entry.kind(), is_dir) {
            (Some(ObjectType::Blob), false) => match self.ctx.leaf_at(&path, &child_abs, name)? {
                Some(Ok(Item::File {
                    rel,
                    mode,
                    rec,
                    unchanged,
                    ..
                })) => {
                    self.files.see(rel, rec, unchanged);
                    Ok(Some((Cow::Owned(name.to_vec()), mode, rec.oid)))
                }
                Some(Err(s)) => {
                    self.skipped.push(s);
                    Ok(None)
                }
                _ => Ok(None),
            },
            (Some(ObjectType::Tree), true) => {
                let sub = entry
                    .to_object(self.repo)
                    .and_then(|o| o.peel_to_tree())
                    .map_err(git("reading HEAD's tree"))?;
                let listing = self.ctx.tracked(self.repo, &path, &child_abs, &sub)?;
                Ok(self
                    .build(&path, &child_abs, listing)?
                    .map(|(oid, _)| (Cow::Owned(name.to_vec()), 0o40000, oid)))
            }
            _ => Ok(None),
        }
    }
}

/// Snapshots the worktree at `w.root` into `w.repo`'s object store, given
/// the previous snapshot's state.
pub(crate) fn snapshot(w: &Walk<'_>, prev: State) -> Result<Snapshot, Error> {
    let repo = w.repo;
    // A first snapshot may take ids from the user's index; later ones have
    // their own state for nearly every file.
    let hint = if prev.files.is_empty() {
        IndexHint::load(repo)
    } else {
        None
    };
    let objects = repo.commondir().join("objects");
    let store = if w.pack && prev.files.is_empty() {
        let dir = mend_workspace::PrivateDir::open_path(&objects, &objects.to_string_lossy())?;
        Store::Pack(pack::Pack::new(&dir).map_err(io("starting a pack of objects".into()))?)
    } else {
        Store::Loose(Loose::new(&objects))
    };
    let ctx = Ctx {
        root: w.root.to_path_buf(),
        prev: &prev,
        hint,
        store,
        max: w.max_file_bytes,
        seen: w.seen,
        max_files: w.max_files,
        over: AtomicBool::new(false),
        now: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default(),
    };
    let built = trees(w, &ctx);
    if matches!(built, Err(Error::TooManyFiles { .. })) {
        // Refused: none of the objects written so far is kept.
        ctx.store.discard();
    }
    let (tree, files, dirs, mut skipped) = built?;
    ctx.store
        .finish()
        .map_err(io("installing the pack of new objects".into()))?;
    let count = files.count;
    let files = files.finish(prev.files.len(), prev.files.keys());
    let dirs = dirs.finish(prev.dirs.len(), prev.dirs.keys().map(|k| &k[..]));
    drop(ctx);
    let after = prev.commit;
    let (state, changes) = next_state(prev, files, dirs);
    skipped.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(Snapshot {
        tree,
        files: count,
        skipped,
        state,
        changes,
        after,
    })
}

/// Both phases' result: the root's tree, the files and folders seen, and
/// what was skipped.
type Built<'a> = (Oid, Seen<'a, Record>, Seen<'a, DirRecord>, Vec<Skipped>);

/// Both phases: the walk, then the trees.
fn trees<'a>(w: &Walk<'_>, ctx: &'a Ctx<'a>) -> Result<Built<'a>, Error> {
    let repo = w.repo;
    let rules = Rules::root(w.root, repo);
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let fd = rustix::fs::open(&ctx.root, flags, Mode::empty())
        .map_err(|e| io(format!("opening {}", ctx.root.display()))(e.into()))?;
    // The root is never a nested repository: its listing is always one.
    let listing = ctx
        .dir(b"", fd.as_fd(), &ctx.root, &rules)?
        .unwrap_or_default();
    let mut trees = Trees {
        repo,
        ctx,
        odb: repo.odb().map_err(git("opening the object store"))?,
        head: None,
        files: Seen::new(ctx.prev.files.len()),
        dirs: Seen::new(ctx.prev.dirs.len()),
        skipped: Vec::new(),
        new_trees: Vec::new(),
    };
    // The root always has a tree, the empty one at least.
    let tree = trees
        .build(b"", &ctx.root, listing)?
        .map_or_else(Oid::zero, |(oid, _)| oid);
    trees.store_new()?;
    Ok((tree, trees.files, trees.dirs, trees.skipped))
}

/// A state entry's changes: what differs, and the paths that went away.
type Delta<K> = (Entries<K>, Vec<Vec<u8>>);

/// The previous state with this snapshot's changes, and the changes.
fn next_state(mut prev: State, files: Delta<Record>, dirs: Delta<DirRecord>) -> (State, Changes) {
    for p in &files.1 {
        prev.files.remove(p);
    }
    for (p, v) in &files.0 {
        prev.files.insert(p.clone(), *v);
    }
    for p in &dirs.1 {
        prev.dirs.remove(p);
    }
    for (p, v) in &dirs.0 {
        prev.dirs.insert(p.clone(), *v);
    }
    let changes = Changes {
        files: files.0,
        gone_files: files.1,
        dirs: dirs.0,
        gone_dirs: dirs.1,
    };
    (prev, changes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn racy_is_within_a_tick_of_now() {
        let now = Duration::new(1_000_000, 500_000_000);
        // Fine timestamps: within 10 ms.
        assert!(is_racy((1_000_000, 495_000_000), now));
        assert!(!is_racy((1_000_000, 480_000_000), now));
        // Whole seconds (a coarse filesystem): within 2 s.
        assert!(is_racy((999_999, 0), now));
        assert!(!is_racy((999_997, 0), now));
        // In the future (a clock set back): racy.
        assert!(is_racy((2_000_000, 1), now));
    }

    #[test]
    fn trees_sort_folders_as_if_they_ended_in_a_slash() {
        let z = Oid::zero();
        let mut v = [
            (b"a.b".to_vec(), 0o100644, z),
            (b"a".to_vec(), 0o40000, z),
            (b"a-".to_vec(), 0o100644, z),
        ];
        v.sort_by(tree_order);
        let names: Vec<&[u8]> = v.iter().map(|(n, _, _)| &n[..]).collect();
        assert_eq!(names, [&b"a-"[..], b"a.b", b"a"]);
    }
}
