//! Compare-and-swap at the rename: a target is replaced only while it is
//! still what the commit planned against.
//!
//! The staleness check reads every target under the lock, but a commit
//! then stages and syncs its new contents, which takes milliseconds; a
//! person's save (an append, or an editor's rename) landing in between
//! would be overwritten. So each target's stat is taken when it is
//! planned (device, inode, size, mtime and ctime in nanoseconds, as git's
//! index and helix's save compare them) and compared again just before it
//! is replaced, after the fsyncs.
//!
//! On Linux the replacement itself is `renameat2(RENAME_EXCHANGE)`: the
//! new content and the target swap names in one step, so what was
//! displaced is held at the staged name rather than unlinked. It is then
//! compared with the plan (its ctime moved with the rename, so without
//! it; its bytes hashed when its timestamps are too recent to tell, as
//! git treats a "racy" entry), and one that changed is swapped back: a
//! save that lands in the window is never lost, it stays at its path and
//! the transaction is refused with [`Error::Changed`]. A new file goes in
//! with `RENAME_NOREPLACE`, so a file created meanwhile is never replaced.
//!
//! What no rename can make conditional: a writer that opened the old file
//! before the swap and writes through its descriptor after the check
//! writes into the displaced file, which the commit then removes. That
//! window is the time between the swap and the check (one `statx`, plus a
//! hash of the displaced file when it is racy).
//!
//! Where the filesystem has no such flags (`EINVAL`), the check runs just
//! before a plain rename, leaving the time of one `rename` open.

use std::fs;
use std::os::fd::BorrowedFd;
use std::path::Path;
use std::time::{Duration, SystemTime};

use rustix::fs::{AtFlags, CWD, RenameFlags};
use rustix::io::Errno;

use crate::found::Found;

/// Timestamps this close to the moment of the stat cannot tell a later
/// write apart: a filesystem stamps from a coarse clock (a jiffy on Linux,
/// seconds on some), so the bytes are hashed too.
const RACY: Duration = Duration::from_secs(2);

/// An entry's identity and version, as `lstat` tells them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    dev: u64,
    ino: u64,
    mode: u32,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    fn of(st: &rustix::fs::Stat) -> Stamp {
        Stamp {
            dev: st.st_dev,
            ino: st.st_ino,
            mode: st.st_mode,
            size: st.st_size as u64,
            mtime: (st.st_mtime, st.st_mtime_nsec as i64),
            ctime: (st.st_ctime, st.st_ctime_nsec as i64),
        }
    }

    /// The entry `name` in `dir` (a link not followed); `None` when
    /// nothing is there.
    pub(crate) fn in_dir(dir: BorrowedFd<'_>, name: &Path) -> std::io::Result<Option<Stamp>> {
        match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some(Stamp::of(&st))),
            Err(Errno::NOENT | Errno::NOTDIR) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The entry a change's check is about to read at `path`: the entry
    /// itself for a change that replaces it (`entry`), else the file a
    /// link there leads to.
    pub(crate) fn before_read(path: &Path, entry: bool) -> std::io::Result<Option<Stamp>> {
        if entry {
            return Stamp::at(path);
        }
        match rustix::fs::statat(CWD, path, AtFlags::empty()) {
            Ok(st) => Ok(Some(Stamp::of(&st))),
            Err(Errno::NOENT | Errno::NOTDIR | Errno::LOOP) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The entry at `path`, not followed.
    pub(crate) fn at(path: &Path) -> std::io::Result<Option<Stamp>> {
        Stamp::in_dir(CWD, path)
    }

    /// The same entry, unwritten since: everything but the ctime, which a
    /// rename of the entry moves.
    fn same_but_ctime(&self, other: &Stamp) -> bool {
        (self.dev, self.ino, self.mode, self.size, self.mtime)
            == (other.dev, other.ino, other.mode, other.size, other.mtime)
    }

    /// Whether a write just after this stat could leave it unchanged.
    fn racy(&self, taken: SystemTime) -> bool {
        let near = |(s, ns): (i64, i64)| {
            let Ok(s) = u64::try_from(s) else { return true };
            let at = SystemTime::UNIX_EPOCH + Duration::new(s, ns.clamp(0, 999_999_999) as u32);
            at + RACY > taken
        };
        near(self.mtime) || near(self.ctime)
    }
}

/// What a target must still be when it is replaced or deleted.
#[derive(Debug, Clone)]
pub(crate) struct Expect {
    /// Its stat when planned; `None`: nothing may be there.
    stamp: Option<Stamp>,
    /// What it held then (the journal's `before`).
    found: Found,
    /// Its timestamps were too recent for the stat to tell alone.
    racy: bool,
}

impl Expect {
    /// What `path` is now, given what it holds (read after `first`, the
    /// stat taken before the read): refused when the two stats differ,
    /// since then the bytes read may not be the ones stamped.
    pub(crate) fn planned(
        path: &Path,
        first: Option<Stamp>,
        found: Found,
    ) -> std::io::Result<Option<Expect>> {
        let taken = SystemTime::now();
        let stamp = Stamp::at(path)?;
        if stamp != first {
            return Ok(None);
        }
        let racy = stamp.is_some_and(|s| s.racy(taken));
        Ok(Some(Expect { stamp, found, racy }))
    }

    /// Whether nothing may be at the target.
    pub(crate) fn absent(&self) -> bool {
        self.stamp.is_none()
    }

    /// Whether the entry at `path` is still the one planned against, its
    /// bytes hashed again when the stat cannot tell.
    pub(crate) fn holds(&self, path: &Path) -> std::io::Result<bool> {
        self.holds_at(Source::path(path))
    }

    /// [`Expect::holds`] of an entry named in a folder held open.
    fn holds_at(&self, at: Source<'_>) -> std::io::Result<bool> {
        if Stamp::in_dir(at.dir, at.name)? != self.stamp {
            return Ok(false);
        }
        Ok(!self.racy || crate::found::in_dir(at.dir, at.name)? == self.found)
    }

    /// Whether `name` in `dir`, an entry just displaced from the target
    /// by a swap (or moved aside by a deletion), is the one planned
    /// against.
    fn displaced(&self, dir: BorrowedFd<'_>, name: &Path) -> std::io::Result<bool> {
        let (Some(now), Some(then)) = (Stamp::in_dir(dir, name)?, self.stamp) else {
            return Ok(false);
        };
        if !now.same_but_ctime(&then) {
            return Ok(false);
        }
        Ok(!self.racy || crate::found::in_dir(dir, name)? == self.found)
    }
}

/// A staged entry: `name` relative to `dir` (the current directory for an
/// absolute path beside the target, or mend's own `tmp` folder).
#[derive(Clone, Copy)]
pub(crate) struct Source<'a> {
    pub(crate) dir: BorrowedFd<'a>,
    pub(crate) name: &'a Path,
}

impl Source<'_> {
    /// A staged entry named by its path.
    pub(crate) fn path(path: &Path) -> Source<'_> {
        Source {
            dir: CWD,
            name: path,
        }
    }
}

/// How a staged entry went in, and so how it is undone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Swapped {
    /// It took the target's name; the entry it displaced is held at the
    /// staged name until the transaction is done. `ours` is the new
    /// entry's inode.
    Exchanged { ours: u64 },
    /// It took a free name.
    Created { ours: u64 },
    /// It was renamed over the target after a check (no swap on this
    /// filesystem): what it replaced is gone.
    Renamed,
}

/// Why a swap did not happen.
#[derive(Debug)]
pub(crate) enum Refused {
    /// The target is not what was planned against; it is as it was found.
    Changed,
    /// The filesystem failed.
    Io(std::io::Error),
}

impl From<std::io::Error> for Refused {
    fn from(e: std::io::Error) -> Self {
        Refused::Io(e)
    }
}

/// Whether a failed rename asked for flags this filesystem lacks.
fn unsupported(e: Errno) -> bool {
    matches!(e, Errno::INVAL | Errno::NOSYS | Errno::OPNOTSUPP)
}

/// Puts the staged `src` at `target` only while `target` is still what
/// `expect` planned against (see the module docs).
#[cfg(test)]
pub(crate) fn swap_in(src: Source<'_>, target: &Path, expect: &Expect) -> Result<Swapped, Refused> {
    swap_in_at(src, Source::path(target), expect)
}

/// [`swap_in`] of a target named in a folder held open (`target.dir`), so
/// no link swapped into its path meanwhile can lead the rename elsewhere.
pub(crate) fn swap_in_at(
    src: Source<'_>,
    target: Source<'_>,
    expect: &Expect,
) -> Result<Swapped, Refused> {
    let ours = Stamp::in_dir(src.dir, src.name)?
        .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))?
        .ino;
    let rename =
        |flags| rustix::fs::renameat_with(src.dir, src.name, target.dir, target.name, flags);
    if expect.absent() {
        return match rename(RenameFlags::NOREPLACE) {
            Ok(()) => Ok(Swapped::Created { ours }),
            Err(Errno::EXIST) => Err(Refused::Changed),
            Err(e) if unsupported(e) => plain(src, target, expect),
            Err(e) => Err(Refused::Io(e.into())),
        };
    }
    // Cheap first: a target that visibly changed is not swapped at all.
    if Stamp::in_dir(target.dir, target.name)? != expect.stamp {
        return Err(Refused::Changed);
    }
    match rename(RenameFlags::EXCHANGE) {
        Ok(()) => {}
        Err(e) if unsupported(e) => return plain(src, target, expect),
        Err(e) => return Err(Refused::Io(e.into())),
    }
    if expect.displaced(src.dir, src.name)? {
        return Ok(Swapped::Exchanged { ours });
    }
    swap_back_at(src, target, ours)?;
    Err(Refused::Changed)
}

/// [`swap_in_at`], leaving no staged entry behind when it is refused: the
/// new content is removed, and only an entry displaced and not put back
/// (its target was replaced again meanwhile) stays at the staged name.
pub(crate) fn swap_in_or_drop_at(
    src: Source<'_>,
    target: Source<'_>,
    expect: &Expect,
) -> Result<Swapped, Refused> {
    let ours = Stamp::in_dir(src.dir, src.name)?.map(|s| s.ino);
    let done = swap_in_at(src, target, expect);
    if done.is_err() && ours.is_some() && Stamp::in_dir(src.dir, src.name)?.map(|s| s.ino) == ours {
        rustix::fs::unlinkat(src.dir, src.name, AtFlags::empty()).map_err(std::io::Error::from)?;
    }
    done
}

/// Where no swap is possible: the check, then a plain rename.
fn plain(src: Source<'_>, target: Source<'_>, expect: &Expect) -> Result<Swapped, Refused> {
    if !expect.holds_at(target)? {
        return Err(Refused::Changed);
    }
    rustix::fs::renameat(src.dir, src.name, target.dir, target.name)
        .map_err(std::io::Error::from)?;
    Ok(Swapped::Renamed)
}

/// Undoes an exchange: the displaced entry goes back to the target's name
/// while the new one (`ours`) is still there, and the new one is removed.
/// When someone replaced the new one since, theirs stays and the
/// displaced entry is left at the staged name.
pub(crate) fn swap_back(src: Source<'_>, target: &Path, ours: u64) -> std::io::Result<()> {
    swap_back_at(src, Source::path(target), ours)
}

/// [`swap_back`] of a target named in a folder held open.
fn swap_back_at(src: Source<'_>, target: Source<'_>, ours: u64) -> std::io::Result<()> {
    if Stamp::in_dir(target.dir, target.name)?.is_none_or(|s| s.ino != ours) {
        return Ok(());
    }
    rustix::fs::renameat_with(
        src.dir,
        src.name,
        target.dir,
        target.name,
        RenameFlags::EXCHANGE,
    )?;
    match rustix::fs::unlinkat(src.dir, src.name, AtFlags::empty()) {
        Ok(()) | Err(Errno::NOENT) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Undoes a creation: the new entry is removed while it is still ours.
pub(crate) fn uncreate(target: &Path, ours: u64) -> std::io::Result<()> {
    if Stamp::at(target)?.is_some_and(|s| s.ino == ours) {
        fs::remove_file(target)?;
    }
    Ok(())
}

/// Moves the entry at `target` to `hold` (a free name beside it) only
/// while it is what `expect` planned against: a deletion that can be
/// undone until the transaction is done. One that changed is moved back.
pub(crate) fn hold(target: &Path, hold: &Path, expect: &Expect) -> Result<(), Refused> {
    if Stamp::at(target)? != expect.stamp {
        return Err(Refused::Changed);
    }
    match rustix::fs::renameat_with(CWD, target, CWD, hold, RenameFlags::NOREPLACE) {
        Ok(()) => {}
        Err(Errno::NOENT) => return Err(Refused::Changed),
        Err(e) if unsupported(e) => {
            if !expect.holds(target)? {
                return Err(Refused::Changed);
            }
            fs::rename(target, hold)?;
        }
        Err(e) => return Err(Refused::Io(e.into())),
    }
    if expect.displaced(CWD, hold)? {
        return Ok(());
    }
    unhold(target, hold)?;
    Err(Refused::Changed)
}

/// Puts a held entry back at `target`, unless something was made there
/// since (then it stays at `hold`).
pub(crate) fn unhold(target: &Path, hold: &Path) -> std::io::Result<()> {
    match rustix::fs::renameat_with(CWD, hold, CWD, target, RenameFlags::NOREPLACE) {
        Ok(()) | Err(Errno::EXIST | Errno::NOENT) => Ok(()),
        Err(e) if unsupported(e) => match Stamp::at(target)? {
            None => fs::rename(hold, target),
            Some(_) => Ok(()),
        },
        Err(e) => Err(e.into()),
    }
}

/// The hash of what `name` in `dir` holds, for tests of the displaced
/// entry.
#[cfg(test)]
pub(crate) fn hash_in(dir: BorrowedFd<'_>, name: &Path) -> Option<crate::ContentHash> {
    match crate::found::in_dir(dir, name).ok()? {
        Found::File { hash } => Some(hash),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn planned(path: &Path) -> Expect {
        let first = Stamp::at(path).unwrap();
        let found = Found::at(path).unwrap();
        Expect::planned(path, first, found).unwrap().unwrap()
    }

    #[test]
    fn an_unchanged_target_is_swapped_and_the_old_entry_held() {
        let dir = tempfile::tempdir().unwrap();
        let (t, s) = (dir.path().join("f"), dir.path().join("s"));
        fs::write(&t, "old\n").unwrap();
        let expect = planned(&t);
        fs::write(&s, "new\n").unwrap();
        let done = swap_in(Source::path(&s), &t, &expect).unwrap();
        assert!(matches!(done, Swapped::Exchanged { .. }));
        assert_eq!(fs::read(&t).unwrap(), b"new\n");
        assert_eq!(fs::read(&s).unwrap(), b"old\n");
        assert_eq!(hash_in(CWD, &s), Some(crate::ContentHash::of(b"old\n")));
    }

    #[test]
    fn an_append_after_the_plan_is_kept_and_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (t, s) = (dir.path().join("f"), dir.path().join("s"));
        fs::write(&t, "old\n").unwrap();
        let expect = planned(&t);
        fs::OpenOptions::new()
            .append(true)
            .open(&t)
            .and_then(|mut f| std::io::Write::write_all(&mut f, b"person\n"))
            .unwrap();
        fs::write(&s, "new\n").unwrap();
        assert!(matches!(
            swap_in(Source::path(&s), &t, &expect),
            Err(Refused::Changed)
        ));
        assert_eq!(fs::read(&t).unwrap(), b"old\nperson\n");
    }

    #[test]
    fn a_save_by_rename_after_the_plan_is_kept_and_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (t, s, e) = (
            dir.path().join("f"),
            dir.path().join("s"),
            dir.path().join("e"),
        );
        fs::write(&t, "old\n").unwrap();
        let expect = planned(&t);
        // Same size, so only the inode tells.
        fs::write(&e, "OLD\n").unwrap();
        fs::rename(&e, &t).unwrap();
        fs::write(&s, "new\n").unwrap();
        assert!(matches!(
            swap_in(Source::path(&s), &t, &expect),
            Err(Refused::Changed)
        ));
        assert_eq!(fs::read(&t).unwrap(), b"OLD\n");
    }

    #[test]
    fn a_same_size_rewrite_in_the_same_tick_is_caught_by_the_hash() {
        let dir = tempfile::tempdir().unwrap();
        let (t, s) = (dir.path().join("f"), dir.path().join("s"));
        fs::write(&t, "old\n").unwrap();
        let expect = planned(&t);
        assert!(expect.racy, "a file written just now is racy");
        let times = fs::metadata(&t).unwrap();
        fs::OpenOptions::new()
            .write(true)
            .open(&t)
            .and_then(|mut f| std::io::Write::write_all(&mut f, b"OLD\n"))
            .unwrap();
        // Put the mtime back, as a coarse clock would have left it.
        let f = fs::File::options().write(true).open(&t).unwrap();
        f.set_modified(times.modified().unwrap()).unwrap();
        drop(f);
        fs::write(&s, "new\n").unwrap();
        assert!(matches!(
            swap_in(Source::path(&s), &t, &expect),
            Err(Refused::Changed)
        ));
        assert_eq!(fs::read(&t).unwrap(), b"OLD\n");
    }

    #[test]
    fn a_creation_never_replaces_a_file_made_meanwhile() {
        let dir = tempfile::tempdir().unwrap();
        let (t, s) = (dir.path().join("f"), dir.path().join("s"));
        let expect = planned(&t);
        assert!(expect.absent());
        fs::write(&t, "theirs\n").unwrap();
        fs::write(&s, "new\n").unwrap();
        assert!(matches!(
            swap_in(Source::path(&s), &t, &expect),
            Err(Refused::Changed)
        ));
        assert_eq!(fs::read(&t).unwrap(), b"theirs\n");
    }

    #[test]
    fn a_held_deletion_of_a_changed_file_is_put_back() {
        let dir = tempfile::tempdir().unwrap();
        let (t, h) = (dir.path().join("f"), dir.path().join("h"));
        fs::write(&t, "old\n").unwrap();
        let expect = planned(&t);
        hold(&t, &h, &expect).unwrap();
        assert!(!t.exists());
        unhold(&t, &h).unwrap();
        assert_eq!(fs::read(&t).unwrap(), b"old\n");
        fs::write(&t, "changed\n").unwrap();
        assert!(matches!(hold(&t, &h, &expect), Err(Refused::Changed)));
        assert_eq!(fs::read(&t).unwrap(), b"changed\n");
        assert!(!h.exists());
    }
}
