//! A snapshot narrowed to the paths a watcher would name equals a full
//! one, tree id for tree id and skipped file for skipped file, over random
//! sequences of operations on a real folder.
//!
//! Each batch of operations reports the paths it touched as inotify names
//! them: the path itself, both ends of a rename, each folder it had to
//! make, a folder made and filled as the folder alone (its watch came too
//! late for its files), `x/.git` for a nested repository. After each
//! batch, one long-lived `Checkpoints` takes a narrowed checkpoint given
//! those paths, and a fresh one takes a full checkpoint of a copy of the
//! worktree with no state at all (every file hashed); both must agree.
//!
//! The same again with the hints taken from a real `mend_watch::Watcher`,
//! settled with `sync`, so what the watcher misses is caught too.
//!
//! `MEND_DIFF_CASES` sets the number of sequences (default 40), and
//! `MEND_WATCH_CASES` those with a watcher (default 16).

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use mend_checkpoint::{Checkpoints, CreateOptions, FullReason, Hint, Scan, Skipped};
use proptest::prelude::*;

use crate::git;

const DIRS: &[&str] = &["", "a", "a/b", "c", "c/d", "big"];
const NAMES: &[&str] = &["f1", "f2.txt", "x.log", "keep.log", "z"];
const IGNORES: &[&str] = &["*.log\n", "*.log\n!keep.log\n", "b/\n", "d\n", "z\n", ""];
/// Small, so appends and writes cross it and files come and go from the
/// skipped list.
const MAX_BYTES: u64 = 40;

#[derive(Debug, Clone)]
enum Op {
    Write(usize, usize, u8),
    Append(usize),
    Truncate(usize),
    /// Same size, other bytes, modification time put back: stat data the
    /// same but for the change time, which may not move within a tick.
    Racy(usize),
    Delete(usize),
    Rename(usize, usize),
    RenameDir(usize, usize),
    /// A folder made and filled before its watch existed.
    Fill(usize, u8),
    Rmdir(usize),
    Chmod(usize),
    Symlink(usize, u8),
    Ignore(usize, usize),
    /// A nested repository made, or removed.
    NestedGit(usize),
    /// HEAD moves, ignored files forced into it or not.
    Commit(bool),
    /// A FIFO, which no snapshot holds.
    Fifo(usize),
    /// A second name for a file, outside the worktree. Made only before
    /// the first checkpoint: a link made from outside later reaches no
    /// watched folder, and neither do writes through it (the documented
    /// limit of narrowing by folder watches).
    LinkOutside(usize),
    /// A write through a name outside the worktree: no event.
    WriteOutside(usize, usize, u8),
    /// A second name for a file inside the worktree: only the new name is
    /// seen (its folder's event), and later writes through either name
    /// change both.
    LinkInside(usize, usize),
}

fn op() -> impl Strategy<Value = Op> {
    let p = 0..DIRS.len() * NAMES.len();
    let p2 = p.clone();
    prop_oneof![
        4 => (p.clone(), 0usize..60, any::<u8>()).prop_map(|(a, b, c)| Op::Write(a, b, c)),
        2 => p.clone().prop_map(Op::Append),
        1 => p.clone().prop_map(Op::Truncate),
        3 => p.clone().prop_map(Op::Racy),
        2 => p.clone().prop_map(Op::Delete),
        2 => (p.clone(), p.clone()).prop_map(|(a, b)| Op::Rename(a, b)),
        1 => (1..DIRS.len(), 1..DIRS.len()).prop_map(|(a, b)| Op::RenameDir(a, b)),
        1 => (1..DIRS.len(), any::<u8>()).prop_map(|(a, b)| Op::Fill(a, b)),
        1 => (1..DIRS.len()).prop_map(Op::Rmdir),
        1 => p.clone().prop_map(Op::Chmod),
        1 => (p, any::<u8>()).prop_map(|(a, b)| Op::Symlink(a, b)),
        2 => (0..3usize, 0..IGNORES.len()).prop_map(|(a, b)| Op::Ignore(a, b)),
        1 => (1..DIRS.len()).prop_map(Op::NestedGit),
        1 => any::<bool>().prop_map(Op::Commit),
        1 => (0..DIRS.len() * NAMES.len()).prop_map(Op::Fifo),
        2 => p2.clone().prop_map(Op::LinkOutside),
        3 => (0..4usize, 0usize..60, any::<u8>()).prop_map(|(a, b, c)| Op::WriteOutside(a, b, c)),
        2 => (p2.clone(), p2).prop_map(|(a, b)| Op::LinkInside(a, b)),
    ]
}

fn file(i: usize) -> String {
    let (d, n) = (DIRS[i / NAMES.len()], NAMES[i % NAMES.len()]);
    if d.is_empty() {
        n.to_owned()
    } else {
        format!("{d}/{n}")
    }
}

/// The worktree under test, and what its watcher would have named.
struct World {
    root: PathBuf,
    seen: Vec<PathBuf>,
    /// Whether HEAD or the root's rules changed: the next checkpoint may
    /// not be narrowed.
    widened: bool,
    /// A folder outside the worktree, for second names of its files.
    outside: PathBuf,
    /// The second names made there.
    links: Vec<PathBuf>,
    /// Whether the first checkpoint was taken.
    started: bool,
    /// Whether a file was given a second name: a file may then turn up
    /// with more names than known (moved, or no longer ignored), which
    /// takes a full scan.
    hard_links: bool,
}

impl World {
    fn saw(&mut self, rel: &str) {
        self.seen.push(PathBuf::from(rel));
    }

    /// Makes the folders above `rel`, each seen as it is made.
    fn parents(&mut self, rel: &str) -> bool {
        for at in crate::folders_above(rel) {
            let p = self.root.join(&at);
            if p.is_dir() && !p.is_symlink() {
                continue;
            }
            if std::fs::create_dir(&p).is_err() {
                return false;
            }
            self.saw(&at);
        }
        true
    }

    /// A link or a FIFO where a file is to be written or read is removed
    /// first: a link is not written through (the watcher would name its
    /// target instead), a FIFO would block.
    fn unlink(&mut self, rel: &str) {
        let p = self.root.join(rel);
        let other = std::fs::symlink_metadata(&p).is_ok_and(|m| !m.is_file() && !m.is_dir());
        if other && std::fs::remove_file(p).is_ok() {
            self.saw(rel);
        }
    }

    fn write(&mut self, rel: &str, bytes: &[u8]) {
        self.unlink(rel);
        if self.parents(rel) && std::fs::write(self.root.join(rel), bytes).is_ok() {
            self.saw(rel);
        }
    }

    fn apply(&mut self, op: &Op) {
        let root = self.root.clone();
        let abs = |r: &str| root.join(r);
        match *op {
            Op::Write(f, n, b) => self.write(&file(f), &vec![b'a' + b % 26; n]),
            Op::Append(f) => {
                self.unlink(&file(f));
                let p = abs(&file(f));
                if let Ok(mut old) = std::fs::read(&p) {
                    old.extend_from_slice(b"more bytes appended\n");
                    self.write(&file(f), &old);
                }
            }
            Op::Truncate(f) => {
                self.unlink(&file(f));
                if std::fs::File::options()
                    .write(true)
                    .open(abs(&file(f)))
                    .and_then(|h| h.set_len(0))
                    .is_ok()
                {
                    self.saw(&file(f));
                }
            }
            Op::Racy(f) => {
                self.unlink(&file(f));
                self.racy(&file(f));
            }
            Op::Fifo(f) => {
                let rel = file(f);
                let (mode, kind) = (
                    rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
                    rustix::fs::FileType::Fifo,
                );
                if self.parents(&rel)
                    && rustix::fs::mknodat(rustix::fs::CWD, abs(&rel), kind, mode, 0).is_ok()
                {
                    self.saw(&rel);
                }
            }
            Op::Delete(f) => {
                if std::fs::remove_file(abs(&file(f))).is_ok() {
                    self.saw(&file(f));
                }
            }
            Op::Rename(a, b) => self.rename(&file(a), &file(b)),
            Op::RenameDir(a, b) => self.rename(DIRS[a], &format!("{}/moved", DIRS[b])),
            Op::Fill(d, n) => self.fill(DIRS[d], n),
            Op::Rmdir(d) => {
                if std::fs::remove_dir_all(abs(DIRS[d])).is_ok() {
                    self.saw(DIRS[d]);
                }
            }
            Op::Chmod(f) => {
                let p = abs(&file(f));
                if let Ok(m) = std::fs::symlink_metadata(&p)
                    && !m.file_type().is_symlink()
                {
                    let mode = m.permissions().mode() ^ 0o100;
                    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
                    self.saw(&file(f));
                }
            }
            Op::Symlink(f, t) => {
                let rel = file(f);
                if self.parents(&rel)
                    && std::os::unix::fs::symlink(format!("../t{}", t % 3), abs(&rel)).is_ok()
                {
                    self.saw(&rel);
                }
            }
            Op::Ignore(d, i) => {
                let rel = [".gitignore", "a/.gitignore", "c/.gitignore"][d];
                self.widened |= d == 0;
                self.write(rel, IGNORES[i].as_bytes());
            }
            Op::NestedGit(d) => {
                let g = format!("{}/.git", DIRS[d]);
                let p = abs(&g);
                let done = if p.exists() {
                    std::fs::remove_dir_all(&p).is_ok()
                } else {
                    std::fs::create_dir(&p).is_ok()
                };
                if done {
                    self.saw(&g);
                }
            }
            Op::Commit(force) => {
                let add: &[&str] = if force {
                    &["add", "-A", "-f"]
                } else {
                    &["add", "-A"]
                };
                let ok = |args: &[&str]| {
                    std::process::Command::new("git")
                        .current_dir(&self.root)
                        .args([
                            "-c",
                            "user.name=t",
                            "-c",
                            "user.email=t@t",
                            "-c",
                            "commit.gpgsign=false",
                        ])
                        .args(args)
                        .output()
                        .is_ok_and(|o| o.status.success())
                };
                if ok(add) && ok(&["commit", "-q", "--allow-empty", "-m", "step"]) {
                    self.widened = true;
                }
            }
            Op::LinkOutside(f) => {
                let to = self.outside.join(format!("link{}", self.links.len()));
                if !self.started && !abs(&file(f)).is_file() {
                    self.write(&file(f), b"linked from outside\n");
                }
                if !self.started && std::fs::hard_link(abs(&file(f)), &to).is_ok() {
                    self.links.push(to);
                    self.hard_links = true;
                }
            }
            Op::WriteOutside(k, n, b) => {
                if let Some(p) = self.links.get(k % self.links.len().max(1)) {
                    // In place, as an editor saving through that name.
                    std::fs::write(p, vec![b'A' + b % 26; n]).unwrap();
                }
            }
            Op::LinkInside(a, b) => {
                let (from, to) = (file(a), file(b));
                // Into a folder that exists: a name made in a new folder
                // is reported as the folder (its watch came too late), and
                // an ignored name there is never examined (the documented
                // limit, as for a name outside the worktree).
                let parent = Path::new(&to).parent().map(|p| abs(&p.to_string_lossy()));
                if abs(&from).is_file()
                    && !abs(&from).is_symlink()
                    && std::fs::symlink_metadata(abs(&to)).is_err()
                    && parent.is_some_and(|p| p.is_dir() && !p.is_symlink())
                    && std::fs::hard_link(abs(&from), abs(&to)).is_ok()
                {
                    self.hard_links = true;
                    self.saw(&to);
                }
            }
        }
    }

    /// Same size, other bytes, modification time put back; seen only if
    /// the stat data shows it (otherwise only racy marking can catch it).
    fn racy(&mut self, rel: &str) {
        let p = self.root.join(rel);
        let Ok(old) = std::fs::read(&p) else { return };
        let Ok(before) = std::fs::symlink_metadata(&p) else {
            return;
        };
        if !before.is_file() || old.is_empty() {
            return;
        }
        let mut new = old.clone();
        new[0] = if new[0] == b'Q' { b'R' } else { b'Q' };
        std::fs::write(&p, &new).unwrap();
        use std::os::unix::fs::MetadataExt as _;
        let mtime = rustix::fs::Timestamps {
            last_access: rustix::fs::Timespec {
                tv_sec: before.atime(),
                tv_nsec: before.atime_nsec() as _,
            },
            last_modification: rustix::fs::Timespec {
                tv_sec: before.mtime(),
                tv_nsec: before.mtime_nsec() as _,
            },
        };
        rustix::fs::utimensat(rustix::fs::CWD, &p, &mtime, rustix::fs::AtFlags::empty()).unwrap();
        let after = std::fs::symlink_metadata(&p).unwrap();
        let stat = |m: &std::fs::Metadata| {
            (
                m.mtime(),
                m.mtime_nsec(),
                m.ctime(),
                m.ctime_nsec(),
                m.size(),
                m.ino(),
            )
        };
        if stat(&before) != stat(&after) {
            self.saw(rel);
        }
    }

    fn rename(&mut self, from: &str, to: &str) {
        if from == to || to.starts_with(&format!("{from}/")) || !self.root.join(from).exists() {
            return;
        }
        if self.parents(to) && std::fs::rename(self.root.join(from), self.root.join(to)).is_ok() {
            self.saw(from);
            self.saw(to);
        }
    }

    fn fill(&mut self, dir: &str, n: u8) {
        let top = format!("{dir}/new{n}");
        if !self.parents(&format!("{top}/x")) {
            return;
        }
        for (i, rel) in ["a.txt", "sub/b.txt", "sub/deeper/c.log", "sub/.gitignore"]
            .iter()
            .enumerate()
        {
            let p = self.root.join(&top).join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            let body = if rel.ends_with(".gitignore") {
                b"*.txt\n".to_vec()
            } else {
                vec![b'0' + n % 10; i * 17]
            };
            std::fs::write(p, body).unwrap();
        }
    }
}

/// Skipped files without the modification time in their stamps: the full
/// scan's copy of the worktree has times of its own.
fn without_times(skipped: &[Skipped]) -> Vec<(String, String, Option<String>)> {
    let size = |s: &str| s.split(':').next().unwrap_or("").to_owned();
    skipped
        .iter()
        .map(|s| {
            (
                s.path.clone(),
                s.reason.clone(),
                s.stamp.as_deref().map(size),
            )
        })
        .collect()
}

/// A full checkpoint by a fresh `Checkpoints`, of a copy of the worktree
/// in a repository with the same HEAD and rules and no snapshot state:
/// its tree and skipped files.
fn full(root: &Path, opts: &CreateOptions) -> (String, Vec<Skipped>, tempfile::TempDir) {
    let copy = tempfile::tempdir().unwrap();
    copy_worktree(root, copy.path(), true);
    let orig = git2::Repository::open(root).unwrap();
    let repo = git2::Repository::init(copy.path()).unwrap();
    let objects = root.join(".git/objects");
    std::fs::write(
        copy.path().join(".git/objects/info/alternates"),
        format!("{}\n", objects.display()),
    )
    .unwrap();
    if let Ok(head) = orig.head().and_then(|h| h.peel_to_commit()) {
        repo.set_head_detached(head.id()).unwrap();
    }
    std::fs::copy(
        root.join(".git/info/exclude"),
        copy.path().join(".git/info/exclude"),
    )
    .unwrap();
    let cps = Checkpoints::open(copy.path()).unwrap();
    let cp = cps.create(opts, &mut |_| {}).unwrap();
    let tree = repo
        .find_commit(git2::Oid::from_str(&cp.commit).unwrap())
        .unwrap()
        .tree_id();
    drop(repo);
    (tree.to_string(), cp.skipped, copy)
}

/// Files, links, folders and modes under `from`, the root's `.git` aside.
fn copy_worktree(from: &Path, to: &Path, top: bool) {
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let (src, dst) = (e.path(), to.join(e.file_name()));
        let t = e.file_type().unwrap();
        // mend's own folder is never snapshotted, and a copy of it is
        // refused at the copy's root (it is not the folder mend made).
        if top && (e.file_name() == ".git" || e.file_name() == ".mend") {
            continue;
        }
        if t.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&src).unwrap(), &dst).unwrap();
        } else if t.is_dir() {
            std::fs::create_dir(&dst).unwrap();
            copy_worktree(&src, &dst, false);
            std::fs::set_permissions(&dst, e.metadata().unwrap().permissions()).unwrap();
        } else if t.is_file() {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

/// Where a batch's hint comes from: the paths the operations say they
/// touched, or a real watcher.
enum Source {
    Ops,
    Watcher(mend_watch::Watcher, u64),
}

impl Source {
    /// Settles the watcher; its token now.
    fn settle(w: &mend_watch::Watcher) -> u64 {
        w.sync(std::time::Duration::from_secs(30))
            .expect("the watcher settles")
    }

    /// The paths changed in the batch, taking the token for the next one
    /// before the snapshot starts; `None` when the watcher is in doubt.
    fn paths(&mut self, world: &World) -> Option<Vec<PathBuf>> {
        match self {
            Source::Ops => Some(world.seen.clone()),
            Source::Watcher(w, last) => {
                let now = Source::settle(w);
                let paths = w.changes_since(*last);
                *last = now;
                paths
            }
        }
    }
}

fn sequence(setup: &[Op], batches: &[Vec<Op>], watched: bool) -> Result<(), TestCaseError> {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    git(&root, &["init", "-q", "-b", "main", "."]);
    std::fs::write(root.join(".git/info/exclude"), ".mend/\n").unwrap();
    let outside = tempfile::tempdir().unwrap();
    let mut w = World {
        root: root.clone(),
        seen: Vec::new(),
        widened: false,
        outside: outside.path().to_path_buf(),
        links: Vec::new(),
        started: false,
        hard_links: false,
    };
    for o in setup {
        w.apply(o);
    }
    w.started = true;
    let mut source = if watched {
        let (watcher, _changes) = mend_watch::Watcher::start(&root, Default::default()).unwrap();
        assert_eq!(watcher.unreliable(), None);
        let t = Source::settle(&watcher);
        Source::Watcher(watcher, t)
    } else {
        Source::Ops
    };
    let opts = CreateOptions {
        max_file_bytes: MAX_BYTES,
        ..CreateOptions::default()
    };
    let cps = Checkpoints::open(&root).unwrap();
    let lock = cps.lock().unwrap();
    let mut last = cps.create_hinted(&lock, &opts, None, &mut |_| {}).unwrap();
    drop(lock);
    for (k, batch) in batches.iter().enumerate() {
        w.seen.clear();
        w.widened = false;
        for o in batch {
            w.apply(o);
        }
        let paths = source.paths(&w);
        let doubt = paths.is_none();
        let hint = paths.map(|paths| Hint {
            state: last.state,
            paths,
        });
        let lock = cps.lock().unwrap();
        let made = cps
            .create_hinted(&lock, &opts, hint.as_ref(), &mut |_| {})
            .unwrap();
        drop(lock);
        let expected = match made.scan {
            Scan::Narrowed { .. } => true,
            Scan::Full {
                why: FullReason::NoHint,
            } => doubt,
            Scan::Full {
                why: FullReason::HeadMoved | FullReason::RootRules,
            } => w.widened,
            Scan::Full {
                why: FullReason::NewHardLink,
            } => w.hard_links,
            Scan::Full { .. } => false,
        };
        prop_assert!(expected, "batch {}: {:?}", k, made.scan);
        let ours = git(
            &root,
            &["rev-parse", &format!("{}^{{tree}}", made.checkpoint.commit)],
        );
        let (theirs, skipped, copy) = full(&root, &opts);
        if ours.trim() != theirs {
            let diff = git(copy.path(), &["diff-tree", "-r", &theirs, ours.trim()]);
            prop_assert!(
                false,
                "batch {k} after {batch:?}, hint {:?}: narrowed differs from full (full → narrowed):\n{diff}",
                hint.map(|h| h.paths)
            );
        }
        prop_assert_eq!(
            without_times(&made.checkpoint.skipped),
            without_times(&skipped),
            "batch {}",
            k
        );
        last = made;
    }
    Ok(())
}

fn cases(var: &str, default: u32) -> u32 {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases("MEND_DIFF_CASES", 40), ..ProptestConfig::default() })]

    /// Hints from the paths each operation touched, as inotify names them.
    #[test]
    fn narrowed_snapshots_equal_full_ones(
        setup in prop::collection::vec(op(), 0..12),
        batches in prop::collection::vec(prop::collection::vec(op(), 1..5), 1..6),
    ) {
        sequence(&setup, &batches, false)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases("MEND_WATCH_CASES", 16), ..ProptestConfig::default() })]

    /// Hints from a real watcher, settled with `sync` before each
    /// checkpoint: what the watcher misses, the comparison catches.
    #[test]
    fn snapshots_narrowed_by_a_watcher_equal_full_ones(
        setup in prop::collection::vec(op(), 0..12),
        batches in prop::collection::vec(prop::collection::vec(op(), 1..5), 1..6),
    ) {
        sequence(&setup, &batches, true)?;
    }
}

/// The cases a watcher must name for narrowing, in a fixed order: a
/// folder made and filled, a nested repository made and removed, a folder
/// renamed (a doubt, then a full scan), rules changed below the root, a
/// link where a file was.
#[test]
fn a_watcher_names_what_narrowing_needs() {
    let setup = [
        Op::Write(5, 10, 1),
        Op::Write(10, 10, 2),
        Op::Write(26, 5, 3),
    ];
    let batches = [
        vec![Op::Fill(1, 7)],
        vec![Op::NestedGit(1)],
        vec![Op::Write(6, 3, 4)],
        vec![Op::NestedGit(1)],
        vec![Op::RenameDir(2, 3)],
        vec![Op::Ignore(1, 4), Op::Write(9, 4, 5)],
        vec![Op::Symlink(5, 1)],
        vec![Op::Racy(10), Op::Chmod(26)],
    ];
    sequence(&setup, &batches, true).unwrap();
}

/// Files with more than one name, inside the worktree or out: a write
/// through one name is seen at that name only (or not at all from
/// outside), and every name must show it.
#[test]
fn writes_through_another_name_are_seen_at_every_name() {
    let setup = [Op::Write(0, 10, 1), Op::LinkOutside(0), Op::Write(6, 4, 2)];
    let batches = [
        vec![Op::WriteOutside(0, 12, 3)],
        vec![Op::LinkInside(6, 12)],
        vec![Op::Write(12, 7, 4)],
        vec![Op::Rename(12, 13), Op::Write(6, 9, 5)],
        vec![Op::Delete(6), Op::Write(13, 3, 6)],
        vec![Op::WriteOutside(0, 2, 7), Op::Racy(0)],
    ];
    for watched in [false, true] {
        sequence(&setup, &batches, watched).unwrap();
    }
    // A second name in an ignored place is never examined, but a write
    // through it changes the file the snapshot holds.
    let setup = [Op::Write(24, 0, 0)];
    let batches = [
        vec![Op::Ignore(0, 0), Op::Write(11, 1, 1)],
        vec![Op::LinkInside(24, 12), Op::Append(12)],
    ];
    for watched in [false, true] {
        sequence(&setup, &batches, watched).unwrap();
    }
}

/// A write through a name made outside the worktree after the last
/// snapshot reaches no watched folder, so a narrowed snapshot cannot see
/// it; a restore (lent a hint that names nothing, as a watcher would)
/// still keeps it in its safety checkpoint instead of overwriting it
/// unheld.
#[test]
fn a_restore_keeps_a_write_through_an_outside_name() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    git(&root, &["init", "-q", "-b", "main", "."]);
    std::fs::write(root.join(".git/info/exclude"), ".mend/\n").unwrap();
    std::fs::write(root.join("a.txt"), "version 1\n").unwrap();
    let cps = Checkpoints::open(&root).unwrap();
    let opts = CreateOptions::default();
    let lock = cps.lock().unwrap();
    let first = cps.create_hinted(&lock, &opts, None, &mut |_| {}).unwrap();
    std::fs::write(root.join("a.txt"), "version 2\n").unwrap();
    // Long ago: not racy, so only an event could have it examined again.
    let old = rustix::fs::Timespec {
        tv_sec: 1_600_000_000,
        tv_nsec: 0,
    };
    let times = rustix::fs::Timestamps {
        last_access: old,
        last_modification: old,
    };
    let flags = rustix::fs::AtFlags::empty();
    rustix::fs::utimensat(rustix::fs::CWD, root.join("a.txt"), &times, flags).unwrap();
    let hint = Hint {
        state: first.state,
        paths: vec![PathBuf::from("a.txt")],
    };
    let second = cps
        .create_hinted(&lock, &opts, Some(&hint), &mut |_| {})
        .unwrap();
    assert_eq!(second.scan, Scan::Narrowed { examined: 1 });
    drop(lock);
    let other = outside.path().join("other-name");
    std::fs::hard_link(root.join("a.txt"), &other).unwrap();
    std::fs::write(&other, "version 3, written elsewhere\n").unwrap();
    cps.set_hint(Some(Hint {
        state: second.state,
        paths: Vec::new(),
    }));
    let restored = cps.restore(&first.checkpoint.id, false, false).unwrap();
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "version 1\n"
    );
    let safety = restored.safety.unwrap();
    cps.restore(&safety.id, false, false).unwrap();
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "version 3, written elsewhere\n"
    );
}
