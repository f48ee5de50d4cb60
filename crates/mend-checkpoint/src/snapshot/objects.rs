//! Loose objects written straight into the object store, in parallel.
//!
//! libgit2's object database handle cannot be shared between threads, and
//! a first snapshot of a folder without git history writes an object per
//! file: each worker compresses and writes its own, as git does (zlib level
//! 1, `core.looseCompression`'s default; a temporary file renamed into
//! `objects/xx/`; not fsynced, as git's default). The object folder is held
//! open by descriptor (see `mend_workspace::PrivateDir`) and each fan-out
//! folder opened beneath it for the write: a link among them is refused,
//! never written through. (Fan-out folders are not kept open: 256
//! descriptors would be a quarter of a common limit, and all of macOS's.)
//!
//! A first snapshot of a shadow repository writes a [`Pack`] instead: the
//! store is one or the other ([`Store`]).

use std::io::Write as _;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use flate2::Compression;
use flate2::write::ZlibEncoder;
use git2::{ObjectType, Oid};
use mend_workspace::{EntryKind, PrivateDir};

use super::pack::Pack;

/// Where a snapshot's new objects go.
pub(crate) enum Store {
    /// One loose object each.
    Loose(Loose),
    /// One pack for them all.
    Pack(Pack),
}

impl Store {
    /// Stores an object whose id is `oid`, unless it is there already.
    pub(crate) fn write(&self, oid: Oid, kind: ObjectType, data: &[u8]) -> std::io::Result<()> {
        match self {
            Store::Loose(l) => l.write(oid, kind, data),
            Store::Pack(p) => p.write(oid, kind, data),
        }
    }

    /// Makes what was written readable (a pack is installed).
    pub(crate) fn finish(&self) -> std::io::Result<()> {
        match self {
            Store::Loose(_) => Ok(()),
            Store::Pack(p) => p.finish().map(drop),
        }
    }

    /// Removes every object this store created: a snapshot that failed
    /// leaves nothing behind (a pack removes itself when dropped).
    pub(crate) fn discard(&self) {
        if let Store::Loose(l) = self {
            l.discard();
        }
    }
}

/// A repository's object folder.
pub(crate) struct Loose {
    objects: Result<PrivateDir, String>,
    counter: AtomicU64,
    /// The objects this writer created, for [`Loose::discard`].
    created: Mutex<Vec<Oid>>,
}

fn io(e: mend_workspace::Error) -> std::io::Error {
    match e {
        mend_workspace::Error::Io { cause, .. } => cause,
        e => std::io::Error::other(e.to_string()),
    }
}

impl Loose {
    pub(crate) fn new(objects: &Path) -> Loose {
        Loose {
            objects: PrivateDir::open_path(objects, &objects.to_string_lossy())
                .map_err(|e| e.to_string()),
            counter: AtomicU64::new(0),
            created: Mutex::new(Vec::new()),
        }
    }

    /// Removes the objects this writer created.
    fn discard(&self) {
        let created = std::mem::take(
            &mut *self
                .created
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        for oid in created {
            let hex = oid.to_string();
            if let Ok(dir) = self.fanout(&hex) {
                let _ = dir.remove_file(&hex[2..]);
            }
        }
    }

    /// The fan-out folder of `hex`, made when missing.
    fn fanout(&self, hex: &str) -> std::io::Result<PrivateDir> {
        let objects = self
            .objects
            .as_ref()
            .map_err(|e| std::io::Error::other(e.clone()))?;
        objects.create_dir(&hex[..2]).map_err(io)
    }

    /// Writes an object whose id is `oid`, unless it is there already.
    fn write(&self, oid: Oid, kind: ObjectType, data: &[u8]) -> std::io::Result<()> {
        let hex = oid.to_string();
        let dir = self.fanout(&hex)?;
        let name = &hex[2..];
        if dir
            .kind(name)
            .map_err(io)?
            .is_some_and(|k| k == EntryKind::File)
        {
            return Ok(());
        }
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let tmp = format!("tmp_mend_{}_{n}", std::process::id());
        let mut z = ZlibEncoder::new(Vec::with_capacity(data.len() / 2 + 64), Compression::fast());
        z.write_all(format!("{} {}\0", kind.str(), data.len()).as_bytes())?;
        z.write_all(data)?;
        let bytes = z.finish()?;
        let written = dir
            .create_new(&tmp)
            .map_err(io)
            .and_then(|mut f| f.write_all(&bytes))
            .and_then(|()| dir.rename(&tmp, name).map_err(io));
        match written {
            Ok(()) => {
                self.created
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push(oid);
                Ok(())
            }
            Err(e) => {
                let _ = dir.remove_file(&tmp);
                Err(e)
            }
        }
    }
}
