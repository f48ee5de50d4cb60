//! From a change set to one journaled transaction.
//!
//! Every change is checked against the disk before anything is written:
//! confinement, the kind of what is there, staleness, and whether the
//! target can be replaced at all (see `replaceable`). Each new content is
//! staged in a temporary file, and the journal carries the operations in
//! the order that lets a file replace a folder and a folder a file:
//! deletions, then the folders they emptied, then new content.

use std::fs;
use std::io::Write as _;
use std::os::fd::AsFd as _;
use std::path::{Path, PathBuf};

use crate::beneath::PrivateDir;
use crate::cas::{self, Expect, Swapped};
use crate::changeset::Checked;
use crate::error::Error;
use crate::found::Found;
use crate::{Base, Change, Lock, Workspace, encoding, esc, files, path, replaceable, txn};

impl Workspace {
    /// [`Workspace::commit`] with a callback between steps (for
    /// crash-injection tests).
    #[doc(hidden)]
    pub fn commit_with_hook(
        &self,
        lock: &Lock,
        changes: &[Change],
        hook: &dyn Fn(&str),
    ) -> Result<usize, Error> {
        if changes.is_empty() {
            return Ok(0);
        }
        let checked = crate::changeset::validate(self, changes)?;
        // The `.mend` the lock was taken in, verified then; a lock of
        // another workspace (never handed in by mend itself) gets this
        // root's opened and verified as before.
        let mend = match lock.dir() {
            d if d.path() == self.root.canonical.join(".mend") => d.clone(),
            _ => self.private_dir()?,
        };
        let id = format!(
            "{:x}{:x}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        );
        let mut planned = Vec::with_capacity(changes.len());
        for (n, change) in changes.iter().enumerate() {
            planned.push(self.plan_change(change, &checked, &id, n)?);
        }
        for dirs in checked.emptied.values() {
            for d in dirs {
                planned.push((txn::Op::RemoveDir { target: d.clone() }, None, None));
            }
        }
        // Stable: emptied folders stay deepest first.
        planned.sort_by_key(|(op, _, _)| op.phase());
        let alone = planned.len() == 1
            && matches!(
                planned[0].0,
                txn::Op::Put {
                    in_place: false,
                    ..
                }
            )
            && planned[0].1.as_ref().is_some_and(|s| {
                same_filesystem(&mend, &staging_dir(&self.root.canonical, &s.target))
            });
        if let Some((_, Some(staged), expect)) = planned.pop_if(|_| alone) {
            self.put_alone(&mend, staged, expect.as_ref(), &id, hook)?;
            return Ok(changes.len());
        }
        let mut ops = Vec::with_capacity(planned.len());
        let mut staged = Vec::with_capacity(planned.len());
        let mut expects = Vec::with_capacity(planned.len());
        for (op, s, e) in planned {
            ops.push(op);
            staged.push(s);
            expects.push(e);
        }
        let mut next = 0;
        let mut stage = |_op: &txn::Op| -> Result<(), Error> {
            let item = staged[next].take();
            next += 1;
            match item {
                Some(s) => s.write(&self.root),
                None => Ok(()),
            }
        };
        let txn = txn::Txn {
            id: &id,
            ops,
            expects,
        };
        txn::run(&self.root, &mend, self.key()?, txn, &mut stage, hook)?;
        Ok(changes.len())
    }

    /// One new content needs no journal: a rename is atomic. The temporary
    /// file is staged in `.mend/tmp/` (so a crash leaves nothing in the
    /// worktree, and recovery clears it), through that folder's descriptor,
    /// synced, swapped in only while the target is what was planned
    /// against (see `cas`), and the folder synced: two fsyncs instead of
    /// seven.
    fn put_alone(
        &self,
        mend: &PrivateDir,
        staged: Staged,
        expect: Option<&Expect>,
        id: &str,
        hook: &dyn Fn(&str),
    ) -> Result<(), Error> {
        let tmp = mend.create_dir("tmp")?;
        let name = format!("{id}.tmp");
        let target = staged.target.clone();
        let show = || esc(&self.relative(&target)).into_owned();
        let undo = |e: Error| {
            let _ = tmp.remove_file(&name);
            e
        };
        staged.write_private(&tmp, &name).map_err(undo)?;
        hook("staged");
        let dir = target.parent().unwrap_or(&self.root.canonical);
        let (Some(file), rel) = (target.file_name(), self.relative(&target)) else {
            return Err(undo(Error::io(
                format!("moving {} into place", show()),
                std::io::ErrorKind::InvalidInput.into(),
            )));
        };
        // The rename goes into the folder held open, reached from the
        // root without following a link, so none swapped in since the
        // checks can lead it out of the root.
        let folder = self.root.open_dir(dir, &rel).map_err(undo)?;
        let at = cas::Source {
            dir: folder.as_fd(),
            name: Path::new(file),
        };
        let moved = tmp.with_entry(&name, |dir, name| {
            let staged = cas::Source { dir, name };
            match expect {
                Some(x) => cas::swap_in_or_drop_at(staged, at, x),
                None => rustix::fs::renameat(dir, name, at.dir, at.name)
                    .map(|()| Swapped::Renamed)
                    .map_err(|e| cas::Refused::Io(e.into())),
            }
        })?;
        match moved {
            // What it displaced is what was planned against.
            Ok(Swapped::Exchanged { .. }) => drop(tmp.remove_file(&name)?),
            Ok(_) => {}
            Err(cas::Refused::Changed) => {
                return Err(Error::Changed {
                    path: self.relative(&target),
                });
            }
            Err(cas::Refused::Io(e)) => {
                return Err(undo(Error::io(format!("moving {} into place", show()), e)));
            }
        }
        hook("applied");
        rustix::fs::fsync(&folder)
            .map_err(|e| Error::io(format!("syncing {}", dir.display()), e.into()))
    }

    /// Checks one change against the disk (confinement, kind, staleness,
    /// replaceability) and turns it into a journal operation and what to
    /// stage.
    fn plan_change(
        &self,
        change: &Change,
        checked: &Checked,
        id: &str,
        n: usize,
    ) -> Result<Planned, Error> {
        let (rel, path) = self.resolve_change(change, &checked.unlinked)?;
        // Before the check reads it: what is stamped is what was checked.
        // One that cannot be stamped (a name too long) is refused by the
        // check, or by the stamp after it.
        let first = cas::Stamp::before_read(&path, change.replaces_entry()).unwrap_or(None);
        self.check_change(change, checked, &path, &rel)?;
        // What stands at a path through a link the set deletes is not
        // what the commit replaces: a folder is made in the link's place.
        let through_unlinked = checked.unlinked.iter().any(|l| {
            rel.strip_prefix(l.as_str())
                .is_some_and(|r| r.starts_with('/'))
        });
        let watched = !checked.emptied.contains_key(&rel)
            && !checked.same_file.contains(&rel)
            && !through_unlinked;
        let Some(content) = Content::of(change) else {
            let target = self.relative(&path);
            let found = found_at(&path, &rel)?;
            let expect = self.expect(watched, &path, &rel, first, &found)?;
            let hold = expect.as_ref().map(|_| {
                let dir = self.hold_dir(&path, checked);
                self.relative(&dir.join(format!(".mend-{id}-{n}.tmp")))
            });
            let before = Some(found);
            return Ok((
                txn::Op::Delete {
                    target,
                    before,
                    hold,
                },
                None,
                expect,
            ));
        };
        // The bytes the check just read there hashed to the change's base:
        // what it replaces is recorded as that, not read a third time. A
        // write that lands meanwhile is caught by the stamps, and if they
        // cannot tell, by the displaced file's hash, which must be this.
        let verified = match change.base() {
            Base::Hash(h) if !change.replaces_entry() && watched => Some(*h),
            _ => None,
        };
        let target = self.write_target(change, path, &rel)?;
        // The target's name is left out so a long name cannot make the
        // temporary one exceed the filesystem's limit.
        let temp = staging_dir(&self.root.canonical, &target).join(format!(".mend-{id}-{n}.tmp"));
        let (op, staged) = self.plan_put(content, (target, temp), &rel, checked, verified)?;
        let expect = match &op {
            txn::Op::Put {
                before: Some(found),
                ..
            } => self.expect(watched, &staged.target, &rel, first, found)?,
            _ => None,
        };
        Ok((op, Some(staged), expect))
    }

    /// Where a deleted entry waits until its transaction is done: beside
    /// it, or above every folder the transaction removes.
    fn hold_dir<'p>(&'p self, path: &'p Path, checked: &Checked) -> &'p Path {
        let removed = |d: &Path| {
            let rel = self.relative(d);
            checked.emptied.values().flatten().any(|e| *e == rel)
        };
        let mut dir = path.parent().unwrap_or(&self.root.canonical);
        while dir != self.root.canonical && removed(dir) {
            dir = dir.parent().unwrap_or(&self.root.canonical);
        }
        dir
    }

    /// What `target` must still be when it is replaced: the stat taken
    /// before its check (`first`) and what it held. A target that changed
    /// while it was being checked is refused now.
    fn expect(
        &self,
        watched: bool,
        target: &Path,
        rel: &str,
        first: Option<cas::Stamp>,
        found: &Found,
    ) -> Result<Option<Expect>, Error> {
        if !watched || matches!(found, Found::Folder | Found::Other) {
            return Ok(None);
        }
        let expect = Expect::planned(target, first, found.clone())
            .map_err(|e| Error::io(format!("reading {}", esc(rel)), e))?;
        match expect {
            Some(x) => Ok(Some(x)),
            None => Err(Error::Changed {
                path: rel.to_owned(),
            }),
        }
    }

    /// Checks a change against what is at `path` now: the kind of entry,
    /// whether it can be replaced at all, and staleness.
    fn check_change(
        &self,
        change: &Change,
        checked: &Checked,
        path: &Path,
        rel: &str,
    ) -> Result<(), Error> {
        let replacing_folder = checked.emptied.contains_key(rel);
        if !replacing_folder {
            let replaces_links = matches!(change, Change::Delete { .. } | Change::Restore { .. });
            let restores = matches!(change, Change::Restore { .. });
            self.check_kind(path, rel, (replaces_links, restores))?;
        }
        replaceable::check(&self.root.canonical, path, rel)?;
        // A folder being replaced holds no file yet; a move onto the moved
        // file itself is not a collision.
        if replacing_folder || checked.same_file.contains(rel) {
            return Ok(());
        }
        if change.replaces_entry() {
            let restore = matches!(change, Change::Restore { .. });
            self.check_entry(path, rel, change.base(), restore)
        } else {
            self.check_base(path, rel, change.base())
        }
    }

    /// Staleness of an entry replaced or deleted as itself, byte for byte
    /// (a binary file or a link included). A restore's base is what its
    /// safety checkpoint saw moments ago, so a difference is a change made
    /// while mend was writing; a deleted text file that changed is shown
    /// as [`Workspace::stale`] shows it.
    fn check_entry(&self, path: &Path, rel: &str, base: &Base, restore: bool) -> Result<(), Error> {
        let want = match base {
            Base::Any => return Ok(()),
            Base::Absent => Found::Absent,
            Base::Hash(h) => Found::File { hash: *h },
            Base::Link(h) => Found::Link { hash: *h },
        };
        if found_at(path, rel)? == want {
            return Ok(());
        }
        match self.check_base(path, rel, base) {
            // A deletion through a link to the file it expects.
            Ok(()) if !restore => Ok(()),
            Err(e @ Error::Stale { .. }) if !restore => Err(e),
            _ => Err(Error::Changed {
                path: rel.to_owned(),
            }),
        }
    }

    /// Where a change's new content goes. An edit writes through a symlink
    /// inside the root, to the file it names (checked as `path` was); a
    /// restore replaces the link itself.
    fn write_target(&self, change: &Change, path: PathBuf, rel: &str) -> Result<PathBuf, Error> {
        let through_link = matches!(change, Change::Write { .. } | Change::Bytes { .. })
            && path
                .symlink_metadata()
                .is_ok_and(|m| m.file_type().is_symlink());
        if !through_link {
            return Ok(path);
        }
        let real = path
            .canonicalize()
            .map_err(|e| Error::io(format!("resolving {}", esc(rel)), e))?;
        path::check_real(&self.root.canonical, change.path(), &real)?;
        replaceable::check(&self.root.canonical, &real, rel)?;
        Ok(real)
    }

    /// The journal's `Put` of `content` at `target` through the temporary
    /// file `temp`, and what to stage there: the mode comes from the file
    /// replaced (or the one `mode_from` names); a target with other hard
    /// links is replaced too, never written through.
    fn plan_put(
        &self,
        content: Content<'_>,
        (target, temp): (PathBuf, PathBuf),
        rel: &str,
        checked: &Checked,
        verified: Option<crate::ContentHash>,
    ) -> Result<(txn::Op, Staged), Error> {
        let Content {
            bytes,
            mode_from,
            executable,
            link,
        } = content;
        let meta = fs::symlink_metadata(&target)
            .ok()
            .filter(fs::Metadata::is_file);
        // A file with other hard links gets a new inode like any other:
        // its other names may be under `.git` or outside the root, where
        // nothing may be written, and finding them would take a scan of
        // every filesystem. They keep their bytes, as after git's checkout.
        let in_place = false;
        let is_file = meta.is_some();
        let perms = match mode_from {
            Some(src) => fs::metadata(self.resolve(src)?)
                .ok()
                .map(|m| m.permissions()),
            None => meta.map(|m| m.permissions()),
        };
        // Recovery compares the target with this: a move onto the moved
        // file itself finds it deleted by its own transaction, so it is
        // not recorded.
        let before = match verified {
            _ if checked.same_file.contains(rel) => None,
            Some(hash) if is_file => Some(Found::File { hash }),
            _ => Some(found_at(&target, rel)?),
        };
        let op = txn::Op::Put {
            target: self.relative(&target),
            temp: self.relative(&temp),
            in_place,
            link,
            before,
            after: Some(crate::ContentHash::of(&bytes)),
        };
        let staged = Staged {
            temp,
            target,
            bytes,
            perms: perms.filter(|_| !link),
            executable: executable.filter(|_| !link),
            link,
        };
        Ok((op, staged))
    }

    /// Refuses anything but a regular file (or, for a deletion or a
    /// restore, a link, which is replaced rather than followed; and for a
    /// restore, a FIFO, socket or device, which holds no bytes to lose and
    /// is never opened: the rename replaces it).
    fn check_kind(
        &self,
        path: &Path,
        rel: &str,
        (replaces_links, restores): (bool, bool),
    ) -> Result<(), Error> {
        use std::os::unix::fs::FileTypeExt as _;
        let meta = if replaces_links {
            fs::symlink_metadata(path)
        } else {
            fs::metadata(path)
        };
        let Ok(meta) = meta else { return Ok(()) };
        let t = meta.file_type();
        let special = t.is_fifo() || t.is_socket() || t.is_char_device() || t.is_block_device();
        if (replaces_links && t.is_symlink()) || (restores && special) {
            return Ok(());
        }
        match files::kind(&meta) {
            Some(kind) => Err(Error::NotAFile {
                path: rel.to_owned(),
                kind,
            }),
            None => Ok(()),
        }
    }

    /// Staleness, under the lock.
    fn check_base(&self, path: &Path, rel: &str, base: &Base) -> Result<(), Error> {
        if *base == Base::Any {
            return Ok(());
        }
        match (base, self.read_at(path, rel)?) {
            (Base::Absent, None) | (Base::Any, _) => Ok(()),
            // A link is compared as itself, by `check_entry`.
            (Base::Link(_), _) => Err(Error::Changed {
                path: rel.to_owned(),
            }),
            (Base::Absent, Some(f)) => Err(self.stale(rel, None, Some(""), &f.text)),
            (Base::Hash(h), Some(f)) if *h == f.hash => Ok(()),
            (Base::Hash(h), Some(f)) => Err(self.stale(rel, Some(h), None, &f.text)),
            (Base::Hash(_), None) => Err(Error::Stale {
                path: rel.to_owned(),
                diff: "the file was deleted".into(),
            }),
        }
    }

    pub(crate) fn relative(&self, p: &Path) -> String {
        p.strip_prefix(&self.root.canonical)
            .unwrap_or(p)
            .to_string_lossy()
            .replace('\\', "/")
    }
}

/// A change as the transaction carries it: its journal operation, what
/// to stage, and what its target must still be when it is replaced.
type Planned = (txn::Op, Option<Staged>, Option<Expect>);

/// What stands at a target now, for the journal.
fn found_at(path: &Path, rel: &str) -> Result<Found, Error> {
    Found::at(path).map_err(|e| Error::io(format!("reading {}", esc(rel)), e))
}

/// Where a target's temporary file is staged: its own folder, or the
/// nearest folder above it that exists now. A folder the commit makes
/// (new, or replacing a file) is made only after the commit point, so a
/// rolled-back commit leaves none behind; the rename stays inside one
/// filesystem because the new folder will be made inside this one.
///
/// A folder that is a link does not count: the commit may replace the link
/// with a folder, and a temporary file staged through it would be left in
/// the link's target.
fn staging_dir(root: &Path, target: &Path) -> PathBuf {
    let mut dir = target.parent().unwrap_or(root);
    while dir != root && !fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
        dir = dir.parent().unwrap_or(root);
    }
    dir.to_path_buf()
}

/// Whether a rename from the folder `a` to `b` stays on one filesystem.
fn same_filesystem(a: &PrivateDir, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    match (rustix::fs::fstat(a), fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.st_dev == y.dev(),
        _ => false,
    }
}

/// What a change puts at its path, before it is staged.
struct Content<'c> {
    bytes: Vec<u8>,
    /// The file whose mode the new one takes (a renamed file's source).
    mode_from: Option<&'c str>,
    executable: Option<bool>,
    /// `bytes` is a link's target, to be made a link.
    link: bool,
}

impl<'c> Content<'c> {
    /// The content a change writes; `None` for a deletion.
    fn of(change: &'c Change) -> Option<Self> {
        let (bytes, mode_from, executable, link) = match change {
            Change::Delete { .. } => return None,
            Change::Write {
                text,
                encoding,
                mode_from,
                executable,
                ..
            } => (
                encoding::encode(text, *encoding),
                mode_from.as_deref(),
                *executable,
                false,
            ),
            Change::Bytes {
                bytes, executable, ..
            } => (bytes.clone(), None, *executable, false),
            Change::Restore {
                bytes,
                link,
                executable,
                ..
            } => (bytes.clone(), None, Some(*executable), *link),
        };
        Some(Content {
            bytes,
            mode_from,
            executable,
            link,
        })
    }
}

/// New content waiting to be written beside its target.
struct Staged {
    temp: PathBuf,
    target: PathBuf,
    bytes: Vec<u8>,
    perms: Option<fs::Permissions>,
    executable: Option<bool>,
    /// `bytes` is a link's target, staged as a link.
    link: bool,
}

impl Staged {
    /// Writes and syncs the temporary file, in a folder checked to be
    /// inside the root.
    fn write(self, root: &path::Root) -> Result<(), Error> {
        let dir = self.temp.parent().unwrap_or(&root.canonical);
        let show = || esc(&self.temp.to_string_lossy()).into_owned();
        let raw = self.target.to_string_lossy().into_owned();
        path::check_real(&root.canonical, &raw, dir)?;
        if self.link {
            return make_link(&self.bytes, &self.temp)
                .map_err(|e| Error::io(format!("creating {}", show()), e));
        }
        // Created in the folder held open, reached from the root with no
        // link followed, so a folder swapped for a link since the check
        // cannot put it outside the root.
        let folder = root.open_dir(dir, &raw)?;
        let name = self.temp.file_name().unwrap_or_default();
        let flags = rustix::fs::OFlags::WRONLY
            | rustix::fs::OFlags::CREATE
            | rustix::fs::OFlags::EXCL
            | rustix::fs::OFlags::NOFOLLOW
            | rustix::fs::OFlags::CLOEXEC;
        let f = rustix::fs::openat(&folder, name, flags, rustix::fs::Mode::from_raw_mode(0o666))
            .map(fs::File::from)
            .map_err(|e| Error::io(format!("creating {}", show()), e.into()))?;
        let shown = show();
        self.fill(f, &shown)
    }

    /// Writes the temporary file as `name` in mend's own `tmp` folder,
    /// through its descriptor.
    fn write_private(self, tmp: &PrivateDir, name: &str) -> Result<(), Error> {
        if self.link {
            return tmp.symlink(name, &self.bytes);
        }
        let f = tmp.create_new(name)?;
        self.fill(f, &tmp.shown(name))
    }

    /// The bytes, mode and executable bits into the new file `f`, synced;
    /// all through the open file, so no path is resolved again.
    fn fill(self, mut f: fs::File, show: &str) -> Result<(), Error> {
        let io = |what: &str| {
            let context = format!("{what} {show}");
            move |e| Error::io(context, e)
        };
        f.write_all(&self.bytes).map_err(io("writing"))?;
        if let Some(p) = self.perms {
            f.set_permissions(p).map_err(io("setting the mode of"))?;
        }
        if let Some(x) = self.executable {
            set_executable(&f, x).map_err(io("setting the mode of"))?;
        }
        f.sync_all().map_err(io("syncing"))
    }
}

#[cfg(unix)]
fn make_link(target: &[u8], at: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt as _;
    std::os::unix::fs::symlink(std::ffi::OsStr::from_bytes(target), at)
}

/// Where links cannot be made, a restored link is a file holding its
/// target, as git writes them with `core.symlinks=false`.
#[cfg(not(unix))]
fn make_link(target: &[u8], at: &Path) -> std::io::Result<()> {
    let mut f = files::create_new(at)?;
    f.write_all(target)?;
    f.sync_all()
}

#[cfg(unix)]
pub(crate) fn hard_linked(m: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    m.nlink() > 1
}

#[cfg(not(unix))]
pub(crate) fn hard_linked(_m: &fs::Metadata) -> bool {
    false
}

fn set_executable(f: &fs::File, on: bool) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mut p = f.metadata()?.permissions();
    let mode = p.mode();
    // Executable for whoever may read it, as git does for 100755.
    p.set_mode(if on {
        mode | ((mode & 0o444) >> 2)
    } else {
        mode & !0o111
    });
    f.set_permissions(p)
}
