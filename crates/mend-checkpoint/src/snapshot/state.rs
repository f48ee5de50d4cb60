//! The snapshot state file: what the last snapshot saw of each file (stat
//! data and object id) and which trees it wrote, so the next snapshot
//! hashes only files whose stat data changed.
//!
//! It is a cache: a missing, stale-format or damaged file means an empty
//! state, and the next snapshot hashes every file again. Written to a
//! temporary file and renamed into place.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::path::Path;

use git2::Oid;

const MAGIC: &[u8; 8] = b"MENDSNP1";

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
    pub fn from_raw(s: &rustix::fs::Stat) -> Stat {
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
    pub fn of(m: &std::fs::Metadata) -> Stat {
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
}

/// The state of the last snapshot.
#[derive(Debug, Default)]
pub(crate) struct State {
    pub files: HashMap<Vec<u8>, Record>,
    /// Trees known to be in the object store.
    pub trees: HashSet<Oid>,
}

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
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
}

impl State {
    /// Reads the state; anything unreadable is an empty state.
    pub fn load(path: &Path) -> State {
        std::fs::read(path)
            .ok()
            .and_then(|b| State::parse(&b))
            .unwrap_or_default()
    }

    fn parse(bytes: &[u8]) -> Option<State> {
        let mut r = Reader(bytes);
        if r.take(8)? != MAGIC {
            return None;
        }
        let n = r.u64()? as usize;
        let mut files = HashMap::with_capacity_and_hasher(n.min(1 << 24), Default::default());
        for _ in 0..n {
            let len = r.u64()? as usize;
            let path = r.take(len)?.to_vec();
            let stat = Stat {
                mode: r.u64()? as u32,
                size: r.u64()?,
                mtime: (r.i64()?, r.i64()?),
                ctime: (r.i64()?, r.i64()?),
                ino: r.u64()?,
                dev: r.u64()?,
            };
            let oid = r.oid()?;
            let racy = r.take(1)?[0] != 0;
            files.insert(path, Record { stat, oid, racy });
        }
        let t = r.u64()? as usize;
        let mut trees = HashSet::with_capacity_and_hasher(t.min(1 << 24), Default::default());
        for _ in 0..t {
            trees.insert(r.oid()?);
        }
        r.0.is_empty().then_some(State { files, trees })
    }

    /// Writes the state (to a temporary file renamed over the old one).
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        let mut out = Vec::with_capacity(self.files.len() * 120 + self.trees.len() * 20 + 32);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(self.files.len() as u64).to_le_bytes());
        for (p, rec) in &self.files {
            let s = &rec.stat;
            out.extend_from_slice(&(p.len() as u64).to_le_bytes());
            out.extend_from_slice(p);
            for v in [u64::from(s.mode), s.size] {
                out.extend_from_slice(&v.to_le_bytes());
            }
            for v in [s.mtime.0, s.mtime.1, s.ctime.0, s.ctime.1] {
                out.extend_from_slice(&v.to_le_bytes());
            }
            for v in [s.ino, s.dev] {
                out.extend_from_slice(&v.to_le_bytes());
            }
            out.extend_from_slice(rec.oid.as_bytes());
            out.push(u8::from(rec.racy));
        }
        out.extend_from_slice(&(self.trees.len() as u64).to_le_bytes());
        for t in &self.trees {
            out.extend_from_slice(t.as_bytes());
        }
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, &out)?;
        std::fs::rename(&tmp, path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_damage() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state");
        let mut s = State::default();
        let stat = Stat {
            mode: 0o100644,
            size: 3,
            mtime: (1, 2),
            ctime: (3, 4),
            ino: 5,
            dev: 6,
        };
        let oid = Oid::hash_object(git2::ObjectType::Blob, b"abc").unwrap();
        s.files.insert(
            b"a/b".to_vec(),
            Record {
                stat,
                oid,
                racy: true,
            },
        );
        s.trees.insert(oid);
        s.save(&path).unwrap();
        let back = State::load(&path);
        assert_eq!(back.files, s.files);
        assert_eq!(back.trees, s.trees);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.truncate(bytes.len() - 3);
        std::fs::write(&path, bytes).unwrap();
        assert!(State::load(&path).files.is_empty());
    }
}
