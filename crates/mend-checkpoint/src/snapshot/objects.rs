//! Loose objects written straight into the object store, in parallel.
//!
//! libgit2's object database handle cannot be shared between threads, and
//! a first snapshot of a folder without git history writes an object per
//! file: each worker compresses and writes its own, as git does (zlib level
//! 1, `core.looseCompression`'s default; a temporary file renamed into
//! `objects/xx/`; not fsynced, as git's default).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use flate2::Compression;
use flate2::write::ZlibEncoder;
use git2::Oid;

/// A repository's object folder.
pub(crate) struct Loose {
    dir: PathBuf,
    counter: AtomicU64,
}

impl Loose {
    pub fn new(objects: &Path) -> Loose {
        Loose {
            dir: objects.to_path_buf(),
            counter: AtomicU64::new(0),
        }
    }

    /// Writes a blob whose id is `oid`, unless it is there already.
    pub fn write_blob(&self, oid: Oid, data: &[u8]) -> std::io::Result<()> {
        let hex = oid.to_string();
        let dir = self.dir.join(&hex[..2]);
        let path = dir.join(&hex[2..]);
        if path.exists() {
            return Ok(());
        }
        std::fs::create_dir_all(&dir)?;
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!("tmp_mend_{}_{n}", std::process::id()));
        let mut z = ZlibEncoder::new(Vec::with_capacity(data.len() / 2 + 64), Compression::fast());
        z.write_all(format!("blob {}\0", data.len()).as_bytes())?;
        z.write_all(data)?;
        let bytes = z.finish()?;
        std::fs::write(&tmp, bytes)?;
        std::fs::rename(&tmp, &path).inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
    }
}
