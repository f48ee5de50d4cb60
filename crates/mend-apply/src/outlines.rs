//! The outlines of checked texts, kept in `.mend/` between processes.
//!
//! A one-shot `mend apply` parses the file it checks once, whole. Kept
//! here, keyed by the text's content hash, the outline of the text it
//! checked (see [`mend_syntax::Outline`]) lets the next process that edits
//! the same text parse only the statements its edit touched. A cache: it
//! is sealed like mend's state (an outline written by anyone else is never
//! read), but written without syncing, and anything missing, torn or
//! unsealed reads as empty. It decides no finding on its own: an outline
//! only lets a clean edit be shown clean by parsing less.

use mend_syntax::{Base, Outline};
use mend_workspace::{ContentHash, PrivateDir};

/// The file in `.mend/`.
const FILE: &str = "outlines";
/// What its seal is for.
const PURPOSE: &str = "syntax outlines";
/// Outlines kept at most; the least recently used go first.
const MAX_ENTRIES: usize = 32;
/// Bytes of outlines kept at most (a 50,000-line file's is about 30 KB).
const MAX_BYTES: usize = 512 << 10;

/// The outlines of one `.mend/`, read once, written back when changed.
pub(crate) struct Outlines {
    dir: PrivateDir,
    /// Most recently used last.
    entries: Vec<(ContentHash, Outline)>,
    changed: bool,
}

impl Outlines {
    /// The outlines kept in `dir`; none when there are none, or the file
    /// is not readable as one (a cache reads as empty, never as an error).
    pub(crate) fn open(dir: PrivateDir) -> Outlines {
        let body = dir
            .read_sealed(FILE, PURPOSE, (MAX_BYTES * 2) as u64)
            .ok()
            .flatten()
            .unwrap_or_default();
        let entries = body
            .split(|&b| b == b'\n')
            .filter_map(|line| {
                let (hash, outline) = std::str::from_utf8(line).ok()?.split_once(' ')?;
                Some((
                    ContentHash::from_hex(hash).ok()?,
                    Outline::from_bytes(outline.as_bytes())?,
                ))
            })
            .collect();
        Outlines {
            dir,
            entries,
            changed: false,
        }
    }

    /// The base of the text hashing to `hash`, known by its outline.
    pub(crate) fn get(&mut self, hash: &ContentHash) -> Option<Base> {
        let i = self.entries.iter().rposition(|(h, _)| h == hash)?;
        let entry = self.entries.remove(i);
        let base = Base::from_outline(entry.1.clone());
        // Used: it goes last, and the file is written again only if
        // something else changed too.
        self.entries.push(entry);
        Some(base)
    }

    /// Keeps the outline of the text hashing to `hash`.
    pub(crate) fn put(&mut self, hash: ContentHash, outline: &Outline) {
        if self
            .entries
            .last()
            .is_some_and(|(h, o)| *h == hash && o == outline)
        {
            return;
        }
        self.entries.retain(|(h, _)| *h != hash);
        self.entries.push((hash, outline.clone()));
        self.changed = true;
    }

    /// Writes the outlines back when any was added, the most recently used
    /// within the bounds. A failure to write loses only the cache.
    pub(crate) fn save(self) {
        if !self.changed {
            return;
        }
        let mut lines: Vec<Vec<u8>> = Vec::new();
        let mut bytes = 0;
        for (hash, outline) in self.entries.iter().rev().take(MAX_ENTRIES) {
            let mut line = format!("{} ", hash.hex()).into_bytes();
            line.extend(outline.to_bytes());
            line.push(b'\n');
            bytes += line.len();
            if bytes > MAX_BYTES {
                break;
            }
            lines.push(line);
        }
        let body: Vec<u8> = lines.into_iter().rev().flatten().collect();
        let _ = self.dir.write_sealed_cache(FILE, PURPOSE, &body);
    }
}
