//! The snapshot state file: what the last snapshot saw of each file (stat
//! data and object id) and each folder (its tree), so the next snapshot
//! hashes only files whose stat data changed and writes only the trees
//! along changed paths.
//!
//! It is a cache. A missing, stale-format or damaged file means an empty
//! state, and the next snapshot hashes every file again. It names the
//! checkpoint commit it was saved with; once that checkpoint's ref is gone
//! the state is not used, since git may then prune the objects it names.
//!
//! The file is a list of blocks, each with its length and seal: a whole
//! state, then the changes of each later snapshot appended to it, so a
//! repeat snapshot writes a few hundred bytes rather than the whole state.
//! A torn block at the end (a crash while appending) ends the list: the
//! blocks before it are an older state, whose stat data simply matches
//! fewer files.
//!
//! **Sealed.** Trusting a state mend did not write could hide a change: a
//! record pairing a file's current stat data with the id of its old
//! content makes the snapshot keep the old content, and the turn's review
//! never shows the change. So each block carries an HMAC (the `.mend`'s
//! seal, see `mend_workspace::Seal`) over the block and the tag of the
//! block before it: a block that does not verify ends the list as a torn
//! one does, and a file without a valid first block (one an earlier
//! version wrote, or a planted one) is an empty state. Being a cache, it
//! is rebuilt, never refused. When the appended blocks outgrow half the first, the whole
//! state is written again, to a temporary file renamed into place.

use rustc_hash::FxHashMap as HashMap;
use std::io::Write as _;

use git2::Oid;
use mend_workspace::{PrivateDir, Seal};

pub(crate) use super::files::{Files, Record, Stat};

/// Where the state file is: its folder, held open (see
/// `mend_workspace::PrivateDir`), and its name there. No link is followed
/// to read, append to or replace it.
pub(crate) struct StateFile {
    dir: PrivateDir,
    name: &'static str,
}

impl StateFile {
    pub(crate) fn new(dir: PrivateDir, name: &'static str) -> StateFile {
        StateFile { dir, name }
    }

    /// The saved state, as far as its seal verifies; anything unreadable
    /// is an empty state.
    pub(crate) fn load(&self, seal: &Seal) -> State {
        self.dir
            .read(self.name, u64::MAX)
            .ok()
            .flatten()
            .and_then(|b| State::parse(b, &self.sealing(seal)))
            .unwrap_or_default()
    }

    /// Saves `state`, which `changes` turned the loaded one into, as saved
    /// with checkpoint `commit` (see [`State::save`]).
    pub(crate) fn save(
        &self,
        seal: &Seal,
        state: &mut State,
        changes: &Changes,
        commit: Oid,
    ) -> Result<(), mend_workspace::Error> {
        state.save(self, &self.sealing(seal), changes, commit)
    }

    fn sealing<'s>(&self, seal: &'s Seal) -> Sealing<'s> {
        Sealing {
            seal,
            purpose: self.name,
        }
    }

    /// What tells this file apart from itself after any other write: its
    /// stat data (every save appends or renames a new file in place).
    /// `None` when it is missing.
    pub(crate) fn identity(&self) -> Option<Stat> {
        rustix::fs::statat(&self.dir, self.name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
            .ok()
            .map(|s| Stat::from_raw(&s))
    }

    /// Removes the state file, so the next snapshot hashes every file.
    pub(crate) fn remove(&self) -> Result<bool, mend_workspace::Error> {
        self.dir.remove_file(self.name)
    }

    /// Appends `block` when the file is `len` bytes long, as it was read;
    /// `false` when it is not (changed, or gone).
    fn append(&self, len: u64, block: &[u8]) -> Result<bool, mend_workspace::Error> {
        let Ok(mut f) = self.dir.open_write(self.name, false, true) else {
            return Ok(false);
        };
        if f.metadata().map(|m| m.len()).ok() != Some(len) {
            return Ok(false);
        }
        f.write_all(block).map_err(|e| mend_workspace::Error::Io {
            context: format!("appending to {}", self.dir.shown(self.name)),
            cause: e,
        })?;
        Ok(true)
    }

    /// Replaces the file with `bytes`: a temporary file renamed over it.
    /// Not synced: the state is a cache, and a torn one reads as older.
    fn replace(&self, bytes: &[u8]) -> Result<(), mend_workspace::Error> {
        let tmp = format!("{}.tmp", self.name);
        self.dir.remove_file(&tmp)?;
        let mut f = self.dir.create_new(&tmp)?;
        f.write_all(bytes).map_err(|e| mend_workspace::Error::Io {
            context: format!("writing {}", self.dir.shown(&tmp)),
            cause: e,
        })?;
        self.dir.rename(&tmp, self.name)
    }
}

const MAGIC: &[u8; 8] = b"MENDSNP3";

/// A block's seal: its tag covers the tag before it (none for the first).
#[derive(Clone, Copy)]
struct Sealing<'s> {
    seal: &'s Seal,
    purpose: &'static str,
}

type Tag = [u8; 32];

impl Sealing<'_> {
    fn tag(&self, prev: Option<&Tag>, payload: &[u8]) -> Tag {
        self.seal
            .tag(self.purpose, &[prev.map_or(&[][..], |t| &t[..]), payload])
    }

    fn check(&self, prev: Option<&Tag>, payload: &[u8], tag: &[u8]) -> bool {
        self.seal.check(
            self.purpose,
            &[prev.map_or(&[][..], |t| &t[..]), payload],
            tag,
        )
    }
}
const WHOLE: u8 = 0;
const CHANGES: u8 = 1;

/// A folder's tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DirRecord {
    pub oid: Oid,
    /// Entries in the tree, to tell a folder whose files are all unchanged
    /// but fewer from one that is the same.
    pub entries: u32,
}

/// The state of the last snapshot.
#[derive(Debug, Default)]
pub(crate) struct State {
    /// Files by path, read in place (see [`Files`]).
    pub files: Files,
    /// Folders by path (the root is the empty path). Their trees are the
    /// trees known to be stored.
    pub dirs: HashMap<Vec<u8>, DirRecord>,
    /// The checkpoint commit saved with this state.
    pub commit: Option<Oid>,
    /// Where the file stood when read: its whole length and the length of
    /// its first block, so changes can be appended.
    disk: Option<Disk>,
}

#[derive(Debug, Clone)]
struct Disk {
    len: u64,
    whole: u64,
    /// The last block's tag, which an appended block's covers (boxed: a
    /// state travels in results).
    tag: Box<Tag>,
}

/// State entries by path.
pub(crate) type Entries<T> = Vec<(Vec<u8>, T)>;

/// What one snapshot changed in the state: what is appended to the file.
#[derive(Debug, Default)]
pub(crate) struct Changes {
    pub files: Entries<Record>,
    pub gone_files: Vec<Vec<u8>>,
    pub dirs: Entries<DirRecord>,
    pub gone_dirs: Vec<Vec<u8>>,
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn i64(&mut self) -> Option<i64> {
        Some(i64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn oid(&mut self) -> Option<Oid> {
        Oid::from_bytes(self.take(20)?).ok()
    }
    fn path(&mut self) -> Option<Vec<u8>> {
        let len = self.u64()? as usize;
        Some(self.take(len)?.to_vec())
    }
    fn count(&mut self) -> Option<usize> {
        // Never trust a count for an allocation beyond what is left.
        Some((self.u64()? as usize).min(self.0.len()))
    }
}

/// The writer's side of [`Reader`].
#[derive(Default)]
struct Block(Vec<u8>);

impl Block {
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn path(&mut self, p: &[u8]) {
        self.u64(p.len() as u64);
        self.0.extend_from_slice(p);
    }
    fn record(&mut self, p: &[u8], rec: &Record) {
        let s = &rec.stat;
        self.path(p);
        self.u64(u64::from(s.mode));
        self.u64(s.size);
        for v in [s.mtime.0, s.mtime.1, s.ctime.0, s.ctime.1] {
            self.0.extend_from_slice(&v.to_le_bytes());
        }
        self.u64(s.ino);
        self.u64(s.dev);
        self.0.extend_from_slice(rec.oid.as_bytes());
        self.0
            .push(u8::from(rec.racy) | (u8::from(rec.linked) << 1));
    }
    fn dir(&mut self, p: &[u8], d: &DirRecord) {
        self.path(p);
        self.0.extend_from_slice(d.oid.as_bytes());
        self.0.extend_from_slice(&d.entries.to_le_bytes());
    }
    fn paths<'a>(&mut self, ps: impl ExactSizeIterator<Item = &'a Vec<u8>>) {
        self.u64(ps.len() as u64);
        for p in ps {
            self.path(p);
        }
    }
    /// The block as stored: its length and tag (following `prev`), then
    /// the bytes; and the tag.
    fn framed(self, sealing: &Sealing<'_>, prev: Option<&Tag>) -> (Vec<u8>, Tag) {
        let tag = sealing.tag(prev, &self.0);
        let mut out = Vec::with_capacity(self.0.len() + 40);
        out.extend_from_slice(&(self.0.len() as u64).to_le_bytes());
        out.extend_from_slice(&tag);
        out.extend_from_slice(&self.0);
        (out, tag)
    }
}

fn read_record(r: &mut Reader<'_>) -> Option<(Vec<u8>, Record)> {
    let path = r.path()?;
    let stat = Stat {
        mode: r.u64()? as u32,
        size: r.u64()?,
        mtime: (r.i64()?, r.i64()?),
        ctime: (r.i64()?, r.i64()?),
        ino: r.u64()?,
        dev: r.u64()?,
    };
    let oid = r.oid()?;
    let flags = r.take(1)?[0];
    let (racy, linked) = (flags & 1 != 0, flags & 2 != 0);
    Some((
        path,
        Record {
            stat,
            oid,
            racy,
            linked,
        },
    ))
}

impl State {
    /// The state `bytes` hold: the first block's files indexed where
    /// they are (see [`Files`]), the rest read as today.
    fn parse(bytes: Vec<u8>, sealing: &Sealing<'_>) -> Option<State> {
        let mut r = Reader(&bytes);
        if r.take(8)? != MAGIC {
            return None;
        }
        let mut blocks = Vec::new();
        let mut good = 8;
        let mut tag = None;
        // A block that fails its seal is torn (or not mend's): it and what
        // follows are dropped. One that passes but does not read is
        // another format.
        while let Some((block, t)) = next_block(&mut r, sealing, tag.as_ref()) {
            tag = Some(t);
            if (block[0] == WHOLE) != blocks.is_empty() {
                return None;
            }
            let end = bytes.len() - r.0.len();
            blocks.push((end - block.len(), end));
            good = end;
        }
        let (whole_at, whole_end) = *blocks.first()?;
        let mut first = Reader(&bytes[whole_at + 1..whole_end]);
        let commit = first.oid()?;
        let n = first.count()?;
        let at = whole_end - first.0.len();
        let len = bytes.len();
        let (files, after) = Files::whole(bytes, at, n, whole_end)?;
        let mut state = State {
            files,
            commit: (!commit.is_zero()).then_some(commit),
            ..State::default()
        };
        let rest = state.files.bytes()[after..whole_end].to_vec();
        state.apply_rest(&mut Reader(&rest))?;
        for &(from, to) in &blocks[1..] {
            let block = state.files.bytes()[from + 1..to].to_vec();
            state.apply(&block)?;
        }
        state.disk = Some(Disk {
            // Whatever follows the last good block is garbage to write
            // over, not to append after: the length then differs.
            len: if good == len { good as u64 } else { u64::MAX },
            whole: whole_end as u64,
            tag: Box::new(tag?),
        });
        Some(state)
    }

    /// Applies what a snapshot changed (its changes hold no path both as
    /// changed and as gone).
    pub(crate) fn apply_changes(&mut self, c: &Changes) {
        for (p, r) in &c.files {
            self.files.insert(p.clone(), *r);
        }
        for p in &c.gone_files {
            self.files.remove(p);
        }
        for (p, d) in &c.dirs {
            self.dirs.insert(p.clone(), *d);
        }
        for p in &c.gone_dirs {
            self.dirs.remove(p);
        }
    }

    /// Applies one block's changes. A block is applied whole or not at
    /// all, as its seal was checked.
    fn apply(&mut self, payload: &[u8]) -> Option<()> {
        let mut r = Reader(payload);
        let commit = r.oid()?;
        self.commit = (!commit.is_zero()).then_some(commit);
        let n = r.count()?;
        self.files.reserve(n);
        for _ in 0..n {
            let (p, rec) = read_record(&mut r)?;
            self.files.insert(p, rec);
        }
        self.apply_rest(&mut r)
    }

    /// What a block holds after its files: files gone, folders, folders
    /// gone; and nothing more.
    fn apply_rest(&mut self, r: &mut Reader<'_>) -> Option<()> {
        for _ in 0..r.count()? {
            self.files.remove(&r.path()?);
        }
        for _ in 0..r.count()? {
            let p = r.path()?;
            let oid = r.oid()?;
            let entries = r.u32()?;
            self.dirs.insert(p, DirRecord { oid, entries });
        }
        for _ in 0..r.count()? {
            self.dirs.remove(&r.path()?);
        }
        r.0.is_empty().then_some(())
    }

    /// Saves the state, which `changes` turned the loaded one into, as
    /// saved with checkpoint `commit`: by appending the changes when the
    /// file is as it was read, else by writing the whole state.
    fn save(
        &mut self,
        file: &StateFile,
        sealing: &Sealing<'_>,
        changes: &Changes,
        commit: Oid,
    ) -> Result<(), mend_workspace::Error> {
        self.commit = Some(commit);
        if let Some(disk) = self.disk.take() {
            let (block, tag) = self
                .block(CHANGES, changes)
                .framed(sealing, Some(&disk.tag));
            let appended = disk.len.saturating_sub(disk.whole) + block.len() as u64;
            if appended <= disk.whole / 2 && file.append(disk.len, &block)? {
                self.disk = Some(Disk {
                    len: disk.len + block.len() as u64,
                    whole: disk.whole,
                    tag: Box::new(tag),
                });
                return Ok(());
            }
        }
        let mut out = MAGIC.to_vec();
        let (block, tag) = self.block(WHOLE, &Changes::default()).framed(sealing, None);
        out.extend(block);
        file.replace(&out)?;
        let len = out.len();
        self.disk = Some(Disk {
            len: len as u64,
            whole: len as u64,
            tag: Box::new(tag),
        });
        // The files as just written, indexed in place: what a long-lived
        // process laid over the bytes it read goes.
        let at = MAGIC.len() + 8 + 32 + 1 + 20 + 8;
        if let Some((files, _)) = Files::whole(out, at, self.files.len(), len) {
            self.files = files;
        }
        Ok(())
    }

    /// A block: the whole state for [`WHOLE`], else `changes`.
    fn block(&self, kind: u8, changes: &Changes) -> Block {
        let mut b = Block(vec![kind]);
        b.0.extend_from_slice(self.commit.unwrap_or_else(Oid::zero).as_bytes());
        if kind == WHOLE {
            b.u64(self.files.len() as u64);
            // In path order: a folder's files lie together, so a walk that
            // looks them up a folder at a time reads these bytes nearly in
            // order, not a cache miss per file.
            let mut files: Vec<(&[u8], Record)> = self.files.iter().collect();
            files.sort_unstable_by(|a, b| a.0.cmp(b.0));
            files.iter().for_each(|(p, r)| b.record(p, r));
            b.u64(0);
            b.u64(self.dirs.len() as u64);
            self.dirs.iter().for_each(|(p, d)| b.dir(p, d));
            b.u64(0);
        } else {
            b.u64(changes.files.len() as u64);
            changes.files.iter().for_each(|(p, r)| b.record(p, r));
            b.paths(changes.gone_files.iter());
            b.u64(changes.dirs.len() as u64);
            changes.dirs.iter().for_each(|(p, d)| b.dir(p, d));
            b.paths(changes.gone_dirs.iter());
        }
        b
    }
}

/// The next block's payload and tag, if it is whole and its seal
/// verifies after `prev`.
fn next_block<'a>(
    r: &mut Reader<'a>,
    sealing: &Sealing<'_>,
    prev: Option<&Tag>,
) -> Option<(&'a [u8], Tag)> {
    let len = r.u64()? as usize;
    let tag: Tag = r.take(32)?.try_into().ok()?;
    let payload = r.take(len)?;
    (!payload.is_empty() && sealing.check(prev, payload, &tag)).then_some((payload, tag))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// A state file named `state` in a fresh folder, with the seal of
    /// that folder's `.mend`, and its path.
    fn place(dir: &tempfile::TempDir) -> (Sealed, PathBuf) {
        let held = PrivateDir::open_path(dir.path(), "tmp").unwrap();
        let seal = mend_workspace::Workspace::open(dir.path(), Default::default())
            .unwrap()
            .seal()
            .unwrap();
        let file = Sealed(StateFile::new(held, "state"), seal);
        (file, dir.path().join("state"))
    }

    /// A state file and its seal, loaded and saved as `Checkpoints` does.
    struct Sealed(StateFile, Seal);

    impl Sealed {
        fn load(&self) -> State {
            self.0.load(&self.1)
        }
        fn save(
            &self,
            s: &mut State,
            c: &Changes,
            commit: Oid,
        ) -> Result<(), mend_workspace::Error> {
            self.0.save(&self.1, s, c, commit)
        }
    }

    fn rec(n: u8) -> Record {
        Record {
            stat: Stat {
                mode: 0o100644,
                size: u64::from(n),
                mtime: (1, 2),
                ctime: (3, 4),
                ino: 5,
                dev: 6,
            },
            oid: Oid::hash_object(git2::ObjectType::Blob, &[n]).unwrap(),
            racy: n.is_multiple_of(2),
            linked: n.is_multiple_of(3),
        }
    }

    fn tree(n: u8) -> DirRecord {
        DirRecord {
            oid: Oid::hash_object(git2::ObjectType::Tree, &[n]).unwrap(),
            entries: u32::from(n),
        }
    }

    fn commit(n: u8) -> Oid {
        Oid::hash_object(git2::ObjectType::Commit, &[n]).unwrap()
    }

    /// A state of `n` files, saved whole.
    fn saved(file: &Sealed, n: u8) -> State {
        let mut s = State::default();
        for i in 0..n {
            s.files.insert(vec![b'f', i], rec(i));
        }
        s.dirs.insert(Vec::new(), tree(1));
        file.save(&mut s, &Changes::default(), commit(1)).unwrap();
        s
    }

    fn assert_same(a: &State, b: &State) {
        assert_eq!(a.files, b.files);
        assert_eq!(a.dirs, b.dirs);
        assert_eq!(a.commit, b.commit);
    }

    #[test]
    fn a_whole_state_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let (file, _) = place(&dir);
        let s = saved(&file, 10);
        assert_same(&file.load(), &s);
    }

    /// A whole state stores its files in path order (so a walk's lookups
    /// read it nearly in order); one read back lists them as stored.
    #[test]
    fn a_whole_state_is_stored_in_path_order() {
        let dir = tempfile::tempdir().unwrap();
        let (file, _) = place(&dir);
        let mut s = State::default();
        for i in (0..200u8).rev() {
            s.files
                .insert(format!("d{}/f{i}", i % 7).into_bytes(), rec(i));
        }
        file.save(&mut s, &Changes::default(), commit(1)).unwrap();
        let back = file.load();
        let stored: Vec<&[u8]> = back.files.keys().collect();
        let mut sorted = stored.clone();
        sorted.sort();
        assert_eq!(stored.len(), 200);
        assert_eq!(stored, sorted);
        assert_same(&back, &s);
    }

    /// Applies `changes` to `s` as a snapshot does, and saves.
    fn change(s: &mut State, file: &Sealed, changes: &Changes, c: u8) {
        s.apply_changes(changes);
        file.save(s, changes, commit(c)).unwrap();
    }

    #[test]
    fn changes_are_appended_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let (file, path) = place(&dir);
        let mut s = saved(&file, 100);
        let whole = std::fs::metadata(&path).unwrap().len();
        let changes = Changes {
            files: vec![(b"f1".to_vec(), rec(200)), (b"new".to_vec(), rec(3))],
            gone_files: vec![vec![b'f', 2]],
            dirs: vec![(b"d".to_vec(), tree(2))],
            gone_dirs: vec![Vec::new()],
        };
        change(&mut s, &file, &changes, 2);
        let len = std::fs::metadata(&path).unwrap().len();
        assert!(len > whole && len - whole < 400, "appended, not rewritten");
        let back = file.load();
        assert_same(&back, &s);
        assert_eq!(back.commit, Some(commit(2)));
    }

    #[test]
    fn a_torn_append_leaves_the_state_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let (file, path) = place(&dir);
        let mut s = saved(&file, 100);
        let before = file.load();
        let changes = Changes {
            files: vec![(b"f1".to_vec(), rec(200))],
            ..Changes::default()
        };
        change(&mut s, &file, &changes, 2);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.truncate(bytes.len() - 3);
        std::fs::write(&path, &bytes).unwrap();
        let mut back = file.load();
        assert_same(&back, &before);
        // The next save writes over the torn block, never after it.
        let changes = Changes {
            files: vec![(b"f3".to_vec(), rec(201))],
            ..Changes::default()
        };
        change(&mut back, &file, &changes, 3);
        assert_same(&file.load(), &back);
    }

    #[test]
    fn appends_past_half_the_whole_state_rewrite_it() {
        let dir = tempfile::tempdir().unwrap();
        let (file, path) = place(&dir);
        let mut s = saved(&file, 20);
        for round in 0..40u8 {
            let changes = Changes {
                files: vec![(vec![b'f', round % 20], rec(round))],
                ..Changes::default()
            };
            change(&mut s, &file, &changes, round);
        }
        let len = std::fs::metadata(&path).unwrap().len();
        let whole_len = file.load().disk.unwrap().whole;
        assert!(len - whole_len <= whole_len / 2, "{len} {whole_len}");
        assert_same(&file.load(), &s);
    }

    /// A block appended by something other than mend (one that would pair
    /// a file's stat data with another content's id) ends the state as a
    /// torn block does; a whole state another key sealed, or an earlier
    /// version wrote, is an empty state.
    #[test]
    fn a_planted_block_or_state_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let (file, path) = place(&dir);
        let mut s = saved(&file, 10);
        let before = file.load();
        let planted = Changes {
            files: vec![(vec![b'f', 1], rec(99))],
            ..Changes::default()
        };
        s.apply_changes(&planted);
        let mut block = s.block(CHANGES, &planted).0;
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.extend_from_slice(&(block.len() as u64).to_le_bytes());
        bytes.extend_from_slice(&[7; 32]);
        bytes.append(&mut block);
        std::fs::write(&path, &bytes).unwrap();
        let back = file.load();
        assert_same(&back, &before);
        assert_eq!(back.files.get(&[b'f', 1]), Some(rec(1)));
        // Another root's seal.
        let other = tempfile::tempdir().unwrap();
        let (theirs, their_path) = place(&other);
        saved(&theirs, 10);
        std::fs::copy(&their_path, &path).unwrap();
        let back = file.load();
        assert!(back.files.is_empty() && back.commit.is_none());
        // The format earlier versions wrote.
        let mut old = b"MENDSNP2".to_vec();
        old.extend_from_slice(&bytes[8..]);
        std::fs::write(&path, old).unwrap();
        assert!(file.load().files.is_empty());
    }

    #[test]
    fn a_damaged_whole_state_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let (file, path) = place(&dir);
        saved(&file, 10);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[40] ^= 1;
        std::fs::write(&path, bytes).unwrap();
        let back = file.load();
        assert!(back.files.is_empty() && back.commit.is_none());
    }
}
