//! The expensive half of a disk change: the merge (or reload) and the line
//! hunks that carry it to the editor. A [`Job`] owns its inputs, so the
//! shell can run it on another thread while the state machine goes on; its
//! [`Computed`] result is taken only if nothing changed meanwhile.

use std::ops::Range;
use std::sync::Arc;

use mend_core::ContentHash;
use mend_merge::{Labels, LineHunk, Options, Resolution, Style};
use serde::Serialize;

/// Shared, immutable bytes: a text held by the machine and by the jobs
/// computing from it, without copies.
pub type Bytes = Arc<[u8]>;

/// Files larger than this are reported, never merged: a buffer that large
/// is rarely code, and the editor would have to take it whole.
pub const MAX_BYTES: usize = 8 << 20;

/// The conflict markers' labels: what each side of a conflict is.
pub(crate) const OURS: &[u8] = b"<<<<<<< buffer";
pub(crate) const THEIRS: &[u8] = b">>>>>>> disk";

/// A new buffer text and how to get there from the old one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    /// The notification's number for this buffer: an editor names the last
    /// one it applied in its reports (`applied`).
    pub seq: u64,
    /// The whole new text.
    #[serde(skip)]
    pub text: Bytes,
    /// The edits that turn the old text into it: buffer lines
    /// `start..end` (of the text before the change) become `text` (whole
    /// lines, with their line endings). Hunks are in order and do not
    /// overlap; an editor applies them from the last to the first so
    /// earlier line numbers stay valid.
    pub hunks: Vec<LineHunk<Vec<u8>>>,
    /// The conflicts git would leave that a resolver settled, each with
    /// its resolver's name and its lines in the new text.
    pub resolved: Vec<Resolution>,
    /// The hash of the file's bytes the new text derives from (bare hex
    /// on the wire): an editor may overwrite the file without asking while
    /// it still holds exactly these bytes.
    #[serde(with = "mend_core::hash::bare")]
    pub disk_sha256: ContentHash,
    /// Those bytes, so an editor can keep what its buffer derives from
    /// (and open it again against them after a restart of the server).
    #[serde(skip)]
    pub disk: Bytes,
}

/// Work to do off the event loop.
#[derive(Debug, Clone)]
pub struct Job {
    /// Which of its buffer's jobs this is; a result for an older one is
    /// dropped.
    pub seq: u64,
    /// What to compute.
    pub kind: JobKind,
    /// How a merge goes beyond git's: the editor sets them from the
    /// buffer's path and its [`mend_merge::Policy`].
    pub options: Options,
}

/// What a [`Job`] computes.
#[derive(Debug, Clone)]
pub enum JobKind {
    /// A clean buffer takes the disk's bytes: only the hunks are needed.
    Reload {
        /// The buffer now.
        text: Bytes,
        /// The file now.
        disk: Bytes,
    },
    /// A dirty buffer: a three-way merge of base → text with base → disk.
    Merge {
        /// The file's bytes the buffer derives from.
        base: Bytes,
        /// The buffer now.
        text: Bytes,
        /// The file now.
        disk: Bytes,
    },
}

/// What a [`Job`] found.
#[derive(Debug, Clone)]
pub struct Computed {
    /// The job's [`Job::seq`].
    pub seq: u64,
    /// The result.
    pub result: Merged,
}

/// The result of a job.
#[derive(Debug, Clone)]
pub enum Merged {
    /// The clean buffer's new text.
    Reload(Change),
    /// Both sides' changes, without conflict.
    Clean(Change),
    /// Overlapping changes: the text has conflict markers.
    Conflict {
        /// The text with markers.
        change: Change,
        /// Lines of the new text from each `<<<<<<<` through its `>>>>>>>`.
        regions: Vec<Range<usize>>,
        /// Marker lines the text would have had without this merge's own
        /// (the file may hold such lines as content), so the machine can
        /// tell when the person has resolved every conflict.
        markers_before: usize,
    },
    /// The merge gives the buffer's own text: it holds the disk's changes
    /// already.
    InBuffer,
}

impl Job {
    /// Runs the job. Pure, and near-linear in the texts (git's diff with
    /// its cut-offs), so a 40,000-line merge takes tens of milliseconds.
    pub fn run(&self) -> Computed {
        let result = match &self.kind {
            JobKind::Reload { text, disk } => {
                Merged::Reload(change(self.seq, text, disk.clone(), disk, Vec::new()))
            }
            JobKind::Merge { base, text, disk } => {
                merge(self.seq, (base, text, disk), &self.options)
            }
        };
        Computed {
            seq: self.seq,
            result,
        }
    }
}

/// The UTF-8 byte order mark.
const BOM: &[u8] = "\u{feff}".as_bytes();

/// Whether `t` starts with a byte order mark, and `t` without it.
fn split_bom(t: &[u8]) -> (bool, &[u8]) {
    match t.strip_prefix(BOM) {
        Some(rest) => (true, rest),
        None => (false, t),
    }
}

fn merge(seq: u64, (base, text, disk): (&[u8], &Bytes, &Bytes), opts: &Options) -> Merged {
    let opts = Options {
        style: Style::Merge,
        ..opts.clone()
    };
    // The byte order mark is not part of the first line: merged as one, a
    // conflict on that line would carry it into the middle of the file.
    // It is kept as the buffer has it unless only the file changed it.
    let ((base_bom, base), (ours_bom, ours), (disk_bom, theirs)) =
        (split_bom(base), split_bom(text), split_bom(disk));
    let bom = if ours_bom == base_bom {
        disk_bom
    } else {
        ours_bom
    };
    let merged = mend_merge::merge(base, ours, theirs, &opts);
    let labels = Labels {
        ours: Some("buffer".into()),
        base: Some("base".into()),
        theirs: Some("disk".into()),
    };
    let marked = merged.render_marked(&labels, Style::Merge, 7);
    let (body, regions, resolved) = (marked.text, marked.conflicts, marked.resolved);
    let out = if bom { [BOM, &body].concat() } else { body };
    if regions.is_empty() {
        if out[..] == text[..] {
            return Merged::InBuffer;
        }
        return Merged::Clean(change(seq, text, out.into(), disk, resolved));
    }
    let markers_before = markers(&out).saturating_sub(2 * regions.len());
    Merged::Conflict {
        change: change(seq, text, out.into(), disk, resolved),
        regions,
        markers_before,
    }
}

fn change(seq: u64, old: &[u8], new: Bytes, disk: &[u8], resolved: Vec<Resolution>) -> Change {
    Change {
        seq,
        hunks: hunks(old, &new),
        text: new,
        disk_sha256: ContentHash::of(disk),
        disk: Bytes::from(disk),
        resolved,
    }
}

/// How many lines are this machine's conflict markers (`<<<<<<< buffer`,
/// `>>>>>>> disk`), whatever their line ending.
pub(crate) fn markers(text: &[u8]) -> usize {
    text.split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(|l| *l == OURS || *l == THEIRS)
        .count()
}

/// The line hunks that turn `old` into `new`.
pub fn hunks(old: &[u8], new: &[u8]) -> Vec<LineHunk<Vec<u8>>> {
    let new_lines = line_starts(new);
    mend_merge::line_hunks(old, new)
        .into_iter()
        .map(|h| LineHunk {
            start: h.start,
            end: h.end,
            text: new[new_lines[h.text.start]..new_lines[h.text.end]].to_vec(),
        })
        .collect()
}

/// The byte offset where each line starts, and the text's length last.
fn line_starts(text: &[u8]) -> Vec<usize> {
    let mut starts = vec![0];
    starts.extend(
        text.iter()
            .enumerate()
            .filter(|&(i, &b)| b == b'\n' && i + 1 < text.len())
            .map(|(i, _)| i + 1),
    );
    if text.is_empty() {
        return starts;
    }
    starts.push(text.len());
    starts
}
