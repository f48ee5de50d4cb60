//! A first snapshot's new objects written as one pack, not one loose file
//! each.
//!
//! Workers compress in parallel and append under a lock; the pack's
//! header (whose object count is known only at the end) is written last,
//! then the whole file is read once for its SHA-1 trailer, and the index
//! (version 2: fan-out, sorted ids, CRC-32s, offsets) is written beside
//! it. Both are installed by rename under `objects/pack/`, the pack before
//! its index, so a reader never finds an index without its pack. A pack
//! that is never finished (the snapshot failed or was refused) is removed
//! when dropped: nothing of it stays in the store.
//!
//! Format: git's `Documentation/gitformat-pack.txt`. Objects are stored
//! whole (no deltas) at zlib level 1, as git's loose objects are.

use std::fs::File;
use std::io::{BufWriter, Read as _, Seek as _, SeekFrom, Write as _};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use flate2::Compression;
use flate2::write::ZlibEncoder;
use git2::{ObjectType, Oid};
use mend_workspace::PrivateDir;
use rustc_hash::FxHashSet;
use rustix::fs::{Mode, OFlags, openat};
use sha1::{Digest as _, Sha1};

/// Where each object went.
struct Entry {
    oid: Oid,
    crc: u32,
    offset: u64,
}

struct Open {
    file: BufWriter<File>,
    offset: u64,
    entries: Vec<Entry>,
    seen: FxHashSet<Oid>,
}

/// A pack being written into `objects/pack/`.
pub(crate) struct Pack {
    dir: PrivateDir,
    tmp: String,
    open: Mutex<Option<Open>>,
}

/// Tells temporary file names of one process apart.
static COUNTER: AtomicU64 = AtomicU64::new(0);

fn io(e: mend_workspace::Error) -> std::io::Error {
    match e {
        mend_workspace::Error::Io { cause, .. } => cause,
        e => std::io::Error::other(e.to_string()),
    }
}

fn closed() -> std::io::Error {
    std::io::Error::other("the pack was already finished")
}

/// An entry's header: type and size, 7 bits a byte after the first 4.
fn entry_header(kind: u8, mut size: u64, out: &mut Vec<u8>) {
    let mut byte = (kind << 4) | (size & 0x0f) as u8;
    size >>= 4;
    while size > 0 {
        out.push(byte | 0x80);
        byte = (size & 0x7f) as u8;
        size >>= 7;
    }
    out.push(byte);
}

fn kind_code(kind: ObjectType) -> u8 {
    match kind {
        ObjectType::Commit => 1,
        ObjectType::Tree => 2,
        ObjectType::Tag => 4,
        _ => 3,
    }
}

impl Pack {
    /// Starts a pack in the object folder `objects`.
    pub(crate) fn new(objects: &PrivateDir) -> std::io::Result<Pack> {
        let dir = objects.create_dir("pack").map_err(io)?;
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = format!("tmp_mend_pack_{}_{n}", std::process::id());
        let mut file = BufWriter::with_capacity(1 << 20, dir.create_new(&tmp).map_err(io)?);
        // The header's place; written once the count is known.
        file.write_all(&[0; 12])?;
        Ok(Pack {
            dir,
            tmp,
            open: Mutex::new(Some(Open {
                file,
                offset: 12,
                entries: Vec::new(),
                seen: FxHashSet::default(),
            })),
        })
    }

    /// Adds an object whose id is `oid`, unless the pack has it already.
    pub(crate) fn write(&self, oid: Oid, kind: ObjectType, data: &[u8]) -> std::io::Result<()> {
        let lock = || {
            self.open
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        if lock().as_ref().ok_or_else(closed)?.seen.contains(&oid) {
            return Ok(());
        }
        // Compressed outside the lock, so workers do it in parallel.
        let mut bytes = Vec::with_capacity(data.len() / 2 + 32);
        entry_header(kind_code(kind), data.len() as u64, &mut bytes);
        let mut z = ZlibEncoder::new(bytes, Compression::fast());
        z.write_all(data)?;
        let bytes = z.finish()?;
        let crc = crc32fast::hash(&bytes);
        let mut guard = lock();
        let open = guard.as_mut().ok_or_else(closed)?;
        if !open.seen.insert(oid) {
            return Ok(());
        }
        open.file.write_all(&bytes)?;
        open.entries.push(Entry {
            oid,
            crc,
            offset: open.offset,
        });
        open.offset += bytes.len() as u64;
        Ok(())
    }

    /// Whether the pack holds `oid`.
    pub(crate) fn has(&self, oid: Oid) -> bool {
        let guard = self
            .open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        guard.as_ref().is_some_and(|o| o.seen.contains(&oid))
    }

    /// Writes the header, trailer and index and installs both files,
    /// giving their name without the extension; an empty pack is just
    /// removed.
    pub(crate) fn finish(&self) -> std::io::Result<Option<String>> {
        let open = self
            .open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
            .ok_or_else(closed)?;
        let Open {
            file, mut entries, ..
        } = open;
        let mut file = file
            .into_inner()
            .map_err(std::io::IntoInnerError::into_error)?;
        if entries.is_empty() {
            drop(file);
            self.dir.remove_file(&self.tmp).map_err(io)?;
            return Ok(None);
        }
        let count = u32::try_from(entries.len()).map_err(std::io::Error::other)?;
        let mut header = Vec::with_capacity(12);
        header.extend_from_slice(b"PACK");
        header.extend_from_slice(&2u32.to_be_bytes());
        header.extend_from_slice(&count.to_be_bytes());
        file.seek(SeekFrom::Start(0))?;
        file.write_all(&header)?;
        // Read back through a descriptor of its own (the writer's is
        // write-only), beneath the pack folder's.
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let mut reader = File::from(openat(&self.dir, self.tmp.as_str(), flags, Mode::empty())?);
        let checksum = sha1_of(&mut reader)?;
        file.seek(SeekFrom::End(0))?;
        file.write_all(&checksum)?;
        drop(file);
        entries.sort_unstable_by_key(|e| e.oid);
        let index = index_bytes(&entries, &checksum);
        let name = format!("pack-{}", hex(&checksum));
        let idx_tmp = format!("{}.idx", self.tmp);
        let installed = self
            .dir
            .write(&idx_tmp, &index)
            .and_then(|()| self.dir.rename(&self.tmp, &format!("{name}.pack")))
            .and_then(|()| self.dir.rename(&idx_tmp, &format!("{name}.idx")));
        installed.map_err(|e| {
            let _ = self.dir.remove_file(&idx_tmp);
            io(e)
        })?;
        Ok(Some(name))
    }
}

impl Drop for Pack {
    fn drop(&mut self) {
        let open = self
            .open
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if open.take().is_some() {
            let _ = self.dir.remove_file(&self.tmp);
        }
    }
}

fn sha1_of(file: &mut File) -> std::io::Result<[u8; 20]> {
    let mut sha = Sha1::new();
    let mut buf = vec![0; 1 << 20];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        sha.update(&buf[..n]);
    }
    Ok(sha.finalize().into())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The version 2 index of `entries` (sorted by id).
fn index_bytes(entries: &[Entry], pack_checksum: &[u8; 20]) -> Vec<u8> {
    let mut out = Vec::with_capacity(1072 + entries.len() * 28);
    out.extend_from_slice(b"\xfftOc");
    out.extend_from_slice(&2u32.to_be_bytes());
    let mut fanout = [0u32; 256];
    for e in entries {
        fanout[usize::from(e.oid.as_bytes()[0])] += 1;
    }
    let mut total = 0u32;
    for n in fanout {
        total += n;
        out.extend_from_slice(&total.to_be_bytes());
    }
    for e in entries {
        out.extend_from_slice(e.oid.as_bytes());
    }
    for e in entries {
        out.extend_from_slice(&e.crc.to_be_bytes());
    }
    // Offsets past 2^31 go in a table of their own, flagged by the top bit.
    let mut large = Vec::new();
    for e in entries {
        let small = match u32::try_from(e.offset) {
            Ok(o) if o < 0x8000_0000 => o,
            _ => {
                let at = u32::try_from(large.len()).unwrap_or(u32::MAX);
                large.push(e.offset);
                0x8000_0000 | at
            }
        };
        out.extend_from_slice(&small.to_be_bytes());
    }
    for o in large {
        out.extend_from_slice(&o.to_be_bytes());
    }
    out.extend_from_slice(pack_checksum);
    let own: [u8; 20] = Sha1::digest(&out).into();
    out.extend_from_slice(&own);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_headers_carry_type_and_size_seven_bits_at_a_time() {
        let mut v = Vec::new();
        entry_header(3, 10, &mut v);
        assert_eq!(v, [0x3a]);
        v.clear();
        // 300 = 0b1_0010_1100: low 4 bits 1100, then 10010.
        entry_header(3, 300, &mut v);
        assert_eq!(v, [0x80 | 0x30 | 0x0c, 0x12]);
    }
}
