//! The state's files, read in place: the state file's bytes are kept as
//! read and indexed by path, so loading a state of N files costs one read,
//! one seal check and N hashes into a table of N×1.5 words, not N key
//! allocations into a map of N×112 bytes (whose fresh pages a process
//! otherwise faults in before its first `lstat`). A lookup hashes the
//! path, finds its slot among a few neighbours, and reads the record where
//! the file holds it: a cache miss or two rather than three.
//!
//! What a snapshot changes is laid over the indexed records (`over`), so
//! the bytes read are never written; a whole state written again is
//! indexed in its place (see [`Files::whole`]).

use std::hash::BuildHasher as _;

use git2::Oid;
use rustc_hash::{FxBuildHasher, FxHashMap};

/// What a file looked like when its object id was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stat {
    pub mode: u32,
    pub size: u64,
    pub mtime: (i64, i64),
    pub ctime: (i64, i64),
    pub ino: u64,
    pub dev: u64,
}

impl Stat {
    /// From `statat`.
    pub(crate) fn from_raw(s: &rustix::fs::Stat) -> Stat {
        Stat {
            mode: s.st_mode,
            size: s.st_size.max(0) as u64,
            mtime: (s.st_mtime, s.st_mtime_nsec as i64),
            ctime: (s.st_ctime, s.st_ctime_nsec as i64),
            ino: s.st_ino,
            dev: s.st_dev,
        }
    }

    #[cfg(unix)]
    pub(crate) fn of(m: &std::fs::Metadata) -> Stat {
        use std::os::unix::fs::MetadataExt as _;
        Stat {
            mode: m.mode(),
            size: m.size(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
            ino: m.ino(),
            dev: m.dev(),
        }
    }
}

/// One file of the state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Record {
    pub stat: Stat,
    pub oid: Oid,
    /// Modified so close to when it was examined that a later change in
    /// the same clock tick would keep its stat data: hash it again.
    pub racy: bool,
    /// It had more than one name when examined: a write through another
    /// name (perhaps outside the worktree) reaches no watched folder, so a
    /// narrowed snapshot examines it again.
    pub linked: bool,
}

/// A stored record's bytes after its path: mode, size, the two times
/// (four numbers), inode and device (8 bytes each), the id and the flags.
pub(super) const FIXED: usize = 8 * 8 + 20 + 1;

/// The state's files by path (boxed: a state travels in results).
#[derive(Default)]
pub(crate) struct Files(Box<Inner>);

#[derive(Default)]
struct Inner {
    /// The state file's bytes as read (or as last written whole).
    bytes: Vec<u8>,
    /// Where the indexed records are in `bytes`: the first one's offset
    /// and how many there are, in the order they are stored.
    records: (usize, usize),
    /// Open addressing with linear probing, a power of two long: 0 is an
    /// empty slot, else the path's hash's high 32 bits over the record's
    /// offset in `bytes` plus one.
    slots: Vec<u64>,
    /// Entries laid over the indexed ones: a record, or `None` for one
    /// removed (held only for an indexed path).
    over: FxHashMap<Vec<u8>, Option<Record>>,
    len: usize,
}

fn hash(path: &[u8]) -> u64 {
    FxBuildHasher.hash_one(path)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut w = [0; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

/// The path of the record at `at` and the offset after the record, if
/// the whole record lies in `b`.
fn record_at(b: &[u8], at: usize) -> Option<(&[u8], usize)> {
    let start = at.checked_add(8)?;
    let len = usize::try_from(u64_at(b.get(at..start)?, 0)).ok()?;
    let end = start.checked_add(len)?;
    let next = end.checked_add(FIXED)?;
    (next <= b.len()).then(|| (&b[start..end], next))
}

/// The path of the record at `at`, which [`record_at`] has found whole.
fn path_at(b: &[u8], at: usize) -> &[u8] {
    &b[at + 8..at + 8 + u64_at(b, at) as usize]
}

/// The record at `at`, which [`record_at`] has found whole.
fn decode(b: &[u8], at: usize) -> (&[u8], Record) {
    let len = u64_at(b, at) as usize;
    let path = &b[at + 8..at + 8 + len];
    let f = at + 8 + len;
    let n = |i: usize| u64_at(b, f + 8 * i);
    let stat = Stat {
        mode: n(0) as u32,
        size: n(1),
        mtime: (n(2) as i64, n(3) as i64),
        ctime: (n(4) as i64, n(5) as i64),
        ino: n(6),
        dev: n(7),
    };
    let oid = Oid::from_bytes(&b[f + 64..f + 84]).unwrap_or_else(|_| Oid::zero());
    let flags = b[f + 84];
    let rec = Record {
        stat,
        oid,
        racy: flags & 1 != 0,
        linked: flags & 2 != 0,
    };
    (path, rec)
}

impl Files {
    /// The `n` records stored from offset `at` of `bytes`, which must end
    /// by `end`, indexed; and the offset after them. `None` when they do
    /// not read, or a path repeats (mend never writes one twice).
    pub(super) fn whole(bytes: Vec<u8>, at: usize, n: usize, end: usize) -> Option<(Files, usize)> {
        let b = bytes.get(..end)?;
        // Never trust a count for an allocation beyond what is left (more
        // records than fit fail to read below).
        let fit = n.min(b.len().saturating_sub(at) / (8 + FIXED));
        let cap = (fit + fit / 2 + 8).next_power_of_two();
        let mut slots = vec![0u64; cap];
        let mut next = at;
        for _ in 0..n {
            let (path, after) = record_at(b, next)?;
            let h = hash(path);
            let loc = u64::from(u32::try_from(next + 1).ok()?);
            let mut i = h as usize & (cap - 1);
            loop {
                let s = slots[i];
                if s == 0 {
                    slots[i] = (h & !0xffff_ffff) | loc;
                    break;
                }
                if s >> 32 == h >> 32 && record_at(b, (s as u32 - 1) as usize)?.0 == path {
                    return None;
                }
                i = (i + 1) & (cap - 1);
            }
            next = after;
        }
        let files = Files(Box::new(Inner {
            bytes,
            records: (at, n),
            slots,
            over: FxHashMap::default(),
            len: n,
        }));
        Some((files, next))
    }

    /// The bytes the indexed records are in (later blocks are read from
    /// here too).
    pub(super) fn bytes(&self) -> &[u8] {
        &self.0.bytes
    }

    /// The offset of the indexed record of `path`.
    fn find(&self, path: &[u8]) -> Option<usize> {
        if self.0.slots.is_empty() {
            return None;
        }
        let h = hash(path);
        let mask = self.0.slots.len() - 1;
        let mut i = h as usize & mask;
        loop {
            let s = self.0.slots[i];
            if s == 0 {
                return None;
            }
            if s >> 32 == h >> 32 {
                let at = (s as u32 - 1) as usize;
                if path_at(&self.0.bytes, at) == path {
                    return Some(at);
                }
            }
            i = (i + 1) & mask;
        }
    }

    /// The record of `path` and the state's own spelling of the path (to
    /// borrow instead of copying).
    pub(crate) fn get_key_value(&self, path: &[u8]) -> Option<(&[u8], Record)> {
        if !self.0.over.is_empty()
            && let Some((k, v)) = self.0.over.get_key_value(path)
        {
            return v.map(|r| (&k[..], r));
        }
        self.find(path).map(|at| decode(&self.0.bytes, at))
    }

    /// The record of `path`.
    pub(crate) fn get(&self, path: &[u8]) -> Option<Record> {
        self.get_key_value(path).map(|(_, r)| r)
    }

    pub(crate) fn contains_key(&self, path: &[u8]) -> bool {
        self.get_key_value(path).is_some()
    }

    /// Sets the record of `path`.
    pub(crate) fn insert(&mut self, path: Vec<u8>, rec: Record) {
        if !self.contains_key(&path) {
            self.0.len += 1;
        }
        self.0.over.insert(path, Some(rec));
    }

    /// Forgets `path`.
    pub(crate) fn remove(&mut self, path: &[u8]) {
        if !self.contains_key(path) {
            return;
        }
        self.0.len -= 1;
        if self.find(path).is_some() {
            self.0.over.insert(path.to_vec(), None);
        } else {
            self.0.over.remove(path);
        }
    }

    /// Makes room for `n` more entries laid over the indexed ones.
    pub(crate) fn reserve(&mut self, n: usize) {
        self.0.over.reserve(n);
    }

    pub(crate) fn len(&self) -> usize {
        self.0.len
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.len == 0
    }

    /// Every file and its record, in no particular order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&[u8], Record)> + '_ {
        let (mut at, n) = self.0.records;
        let indexed = (0..n).map(move |_| {
            let (path, rec) = decode(&self.0.bytes, at);
            at += 8 + path.len() + FIXED;
            (path, rec)
        });
        let over = &self.0.over;
        let indexed = indexed.filter(move |(p, _)| over.is_empty() || !over.contains_key(*p));
        indexed.chain(over.iter().filter_map(|(p, r)| r.map(|r| (&p[..], r))))
    }

    pub(crate) fn keys(&self) -> impl Iterator<Item = &[u8]> + '_ {
        self.iter().map(|(p, _)| p)
    }

    pub(crate) fn values(&self) -> impl Iterator<Item = Record> + '_ {
        self.iter().map(|(_, r)| r)
    }
}

impl PartialEq for Files {
    fn eq(&self, other: &Files) -> bool {
        self.0.len == other.0.len && self.iter().all(|(p, r)| other.get(p) == Some(r))
    }
}

impl Eq for Files {}

impl std::fmt::Debug for Files {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(self.iter().map(|(p, r)| (String::from_utf8_lossy(p), r)))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(n: u8) -> Record {
        Record {
            stat: Stat {
                mode: 0o100644,
                size: u64::from(n),
                mtime: (-1, i64::from(n)),
                ctime: (3, 4),
                ino: u64::MAX - u64::from(n),
                dev: 6,
            },
            oid: Oid::hash_object(git2::ObjectType::Blob, &[n]).unwrap(),
            racy: n.is_multiple_of(2),
            linked: n.is_multiple_of(3),
        }
    }

    /// Records as the state file stores them, after `lead` bytes of
    /// something else, and the offset after them.
    fn stored(lead: usize, entries: &[(&[u8], Record)]) -> (Vec<u8>, usize) {
        let mut b = vec![7; lead];
        for (p, r) in entries {
            b.extend_from_slice(&(p.len() as u64).to_le_bytes());
            b.extend_from_slice(p);
            let s = &r.stat;
            for v in [u64::from(s.mode), s.size] {
                b.extend_from_slice(&v.to_le_bytes());
            }
            for v in [s.mtime.0, s.mtime.1, s.ctime.0, s.ctime.1] {
                b.extend_from_slice(&v.to_le_bytes());
            }
            for v in [s.ino, s.dev] {
                b.extend_from_slice(&v.to_le_bytes());
            }
            b.extend_from_slice(r.oid.as_bytes());
            b.push(u8::from(r.racy) | (u8::from(r.linked) << 1));
        }
        let end = b.len();
        b.extend_from_slice(b"tail");
        (b, end)
    }

    #[test]
    fn indexed_records_read_back_with_their_keys() {
        let names: Vec<Vec<u8>> = (0..200u8)
            .map(|i| format!("d{}/f{i}", i % 7).into())
            .collect();
        let entries: Vec<(&[u8], Record)> = names
            .iter()
            .map(|n| (&n[..], rec(n[n.len() - 1])))
            .collect();
        let (bytes, end) = stored(5, &entries);
        let (files, after) = Files::whole(bytes, 5, entries.len(), end).unwrap();
        assert_eq!(after, end);
        assert_eq!(files.len(), 200);
        for (p, r) in &entries {
            assert_eq!(files.get_key_value(p), Some((*p, *r)));
        }
        assert_eq!(files.get(b"d0/f"), None);
        assert_eq!(files.get(b""), None);
        let mut seen: Vec<&[u8]> = files.keys().collect();
        seen.sort();
        let mut want: Vec<&[u8]> = entries.iter().map(|(p, _)| *p).collect();
        want.sort();
        assert_eq!(seen, want);
    }

    /// A record cut short by the block's end, or a path stored twice, is
    /// no state (a sealed file mend wrote has neither).
    #[test]
    fn a_short_record_or_a_repeated_path_does_not_index() {
        let (bytes, end) = stored(0, &[(b"a", rec(1)), (b"b", rec(2))]);
        assert!(Files::whole(bytes.clone(), 0, 2, end - 1).is_none());
        assert!(Files::whole(bytes, 0, 3, end).is_none());
        let (bytes, end) = stored(0, &[(b"a", rec(1)), (b"a", rec(2))]);
        assert!(Files::whole(bytes, 0, 2, end).is_none());
        // A path length past the end never panics.
        let mut bytes = vec![0xff; 8];
        bytes.extend_from_slice(&[0; FIXED]);
        assert!(Files::whole(bytes, 0, 1, 8 + FIXED).is_none());
    }

    #[test]
    fn changes_lay_over_the_indexed_records() {
        let (bytes, end) = stored(0, &[(b"a", rec(1)), (b"b", rec(2)), (b"c", rec(3))]);
        let (mut files, _) = Files::whole(bytes, 0, 3, end).unwrap();
        files.insert(b"b".to_vec(), rec(20));
        files.insert(b"new".to_vec(), rec(4));
        files.remove(b"a");
        files.remove(b"missing");
        files.insert(b"gone".to_vec(), rec(5));
        files.remove(b"gone");
        assert_eq!(files.len(), 3);
        assert_eq!(files.get(b"a"), None);
        assert_eq!(files.get(b"b"), Some(rec(20)));
        assert_eq!(files.get(b"c"), Some(rec(3)));
        assert_eq!(files.get(b"new"), Some(rec(4)));
        assert_eq!(files.get(b"gone"), None);
        let mut all: Vec<(Vec<u8>, Record)> = files.iter().map(|(p, r)| (p.to_vec(), r)).collect();
        all.sort_by(|x, y| x.0.cmp(&y.0));
        let want = vec![
            (b"b".to_vec(), rec(20)),
            (b"c".to_vec(), rec(3)),
            (b"new".to_vec(), rec(4)),
        ];
        assert_eq!(all, want);
        // Put back after removal: counted once.
        files.insert(b"a".to_vec(), rec(9));
        assert_eq!(files.len(), 4);
        assert_eq!(files.get(b"a"), Some(rec(9)));
        let mut other = Files::default();
        for (p, r) in files.iter() {
            other.insert(p.to_vec(), r);
        }
        assert_eq!(files, other);
    }
}
