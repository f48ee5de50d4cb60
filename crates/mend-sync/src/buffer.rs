//! One buffer's sync state: what the editor and the server agree on, the
//! notification in flight, the file as last read, and the job computing
//! the next change.

use crate::job::{self, Bytes, Computed, Job, JobKind, MAX_BYTES, Merged};
use crate::{Disk, Outcome, Skipped};

/// Something that happened to the buffer or its file.
#[derive(Debug, Clone)]
pub enum Event {
    /// The file as the shell read it, once settled, because the watcher
    /// saw it change.
    Disk(Disk),
    /// The shell's answer to [`Effect::Recheck`] with this id: the file as
    /// read after the request.
    Rechecked(u64, Disk),
    /// The editor's buffer now (`buffer/changed`, `buffer/resync`).
    Report {
        /// The whole buffer.
        text: Bytes,
        /// The editor's own "modified" flag, which undo can clear.
        dirty: bool,
        /// The editor's version of the buffer (grows with every change and
        /// every save).
        version: Option<i64>,
        /// The last notification the editor applied to this buffer (its
        /// [`crate::Change::seq`]), if the editor says.
        applied: Option<u64>,
    },
    /// The editor wrote these bytes to the file.
    Saved {
        /// What it wrote.
        text: Bytes,
        /// The buffer's version.
        version: Option<i64>,
    },
    /// A job this buffer asked for is done.
    Computed(Computed),
}

/// What the shell should do.
#[derive(Debug, Clone)]
pub enum Effect {
    /// Tell the editor.
    Notify(Outcome),
    /// Run this job (off the event loop) and send back its result.
    Compute(Job),
    /// Read the file once it has settled and send back
    /// [`Event::Rechecked`] with this id. Until that answer comes, other
    /// reads are ignored: they may have been made before the editor wrote
    /// the file.
    Recheck(u64),
}

/// The file as last read.
#[derive(Debug, Clone)]
enum Known {
    /// Not read yet, or written by the editor since it was read.
    Unknown,
    Bytes(Bytes),
    Missing,
    Unreadable(Skipped),
}

/// The inputs of a change: a notification computed from them is valid
/// while they are current.
#[derive(Debug, Clone)]
struct Inputs {
    base: Bytes,
    text: Bytes,
    disk: Bytes,
    dirty: bool,
}

impl PartialEq for Inputs {
    fn eq(&self, o: &Self) -> bool {
        self.dirty == o.dirty
            && self.base[..] == o.base[..]
            && self.text[..] == o.text[..]
            && self.disk[..] == o.disk[..]
    }
}

/// A notification the editor has neither acknowledged nor passed over.
#[derive(Debug, Clone)]
struct Sent {
    seq: u64,
    version: Option<i64>,
    /// The text the editor will report once it has applied it.
    text: Bytes,
    /// Conflict mode after it (with the marker lines the text had before).
    conflict: Option<usize>,
    inputs: Inputs,
}

#[derive(Debug, Clone)]
struct Running {
    seq: u64,
    inputs: Inputs,
}

/// One buffer's sync state.
#[derive(Debug, Clone)]
pub struct Buffer {
    /// The file's bytes the editor's text derives from; `None` for a buffer
    /// opened with unsaved changes before the file was read.
    base: Option<Bytes>,
    text: Bytes,
    version: Option<i64>,
    dirty: bool,
    /// In conflict mode: the marker lines the text had before the merge
    /// added its own, so resolution can be told from markers in content.
    conflict: Option<usize>,
    deleted: bool,
    /// Whether the file was ever seen present, so a missing file is news.
    existed: bool,
    disk: Known,
    sent: Option<Sent>,
    running: Option<Running>,
    seq: u64,
    /// The recheck whose answer is awaited.
    awaiting: Option<u64>,
    /// The last skip told, with the content it was about.
    skipped: Option<(Skipped, Option<Bytes>)>,
    /// While a rename is being decided, no change is computed.
    paused: bool,
}

impl Buffer {
    /// A buffer the editor opened: a clean one was loaded from the file, so
    /// its text is its base. A dirty one derives from `base`: the text the
    /// editor last loaded from the file, when it says, else the file as the
    /// shell read it before answering the open. Taken any later, a write
    /// made meanwhile would become the base, and the buffer would revert it
    /// unseen. Without either (the file could not be read), the file as
    /// first read becomes its base. The shell should answer the
    /// [`Effect::Recheck`] this returns: a write since `base` is merged.
    pub fn open(
        text: Bytes,
        dirty: bool,
        version: Option<i64>,
        base: Option<Bytes>,
    ) -> (Buffer, Vec<Effect>) {
        // A clean buffer with text was read from its file; an empty one may
        // be a new file that never existed (so may an empty base: the shell
        // gives one for a file that is missing).
        let existed = if dirty {
            base.as_ref().is_some_and(|b| !b.is_empty())
        } else {
            !text.is_empty()
        };
        let base = if dirty { base } else { Some(text.clone()) };
        let buffer = Buffer {
            base,
            text,
            version,
            dirty,
            conflict: None,
            deleted: false,
            existed,
            disk: Known::Unknown,
            sent: None,
            running: None,
            seq: 1,
            awaiting: Some(1),
            skipped: None,
            paused: false,
        };
        (buffer, vec![Effect::Recheck(1)])
    }

    /// The bytes the buffer derives from, once known.
    pub fn base(&self) -> Option<&[u8]> {
        self.base.as_deref()
    }

    /// The buffer's text as last reported.
    pub fn text(&self) -> &[u8] {
        &self.text
    }

    /// The editor's version of the text.
    pub fn version(&self) -> Option<i64> {
        self.version
    }

    /// Whether the editor holds unsaved changes.
    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    /// Whether the buffer is in conflict mode.
    pub fn in_conflict(&self) -> bool {
        self.conflict.is_some()
    }

    /// Whether the file is gone (deleted, not yet recreated or saved).
    pub fn is_deleted(&self) -> bool {
        self.deleted
    }

    /// Whether a notification is waiting for the editor's answer.
    pub fn is_waiting(&self) -> bool {
        self.sent.is_some()
    }

    /// Whether changes wait for a rename to be decided.
    pub fn is_paused(&self) -> bool {
        self.paused
    }

    /// Whether the last read found something at the path.
    pub fn file_present(&self) -> bool {
        matches!(self.disk, Known::Bytes(_) | Known::Unreadable(_))
    }

    /// Applies `event` and says what the shell should do.
    pub fn on(&mut self, event: Event) -> Vec<Effect> {
        match event {
            Event::Disk(d) if self.awaiting.is_none() => self.disk(d),
            Event::Disk(_) => Vec::new(),
            Event::Rechecked(id, d) if self.awaiting == Some(id) => {
                self.awaiting = None;
                self.disk(d)
            }
            Event::Rechecked(..) => Vec::new(),
            Event::Report {
                text,
                dirty,
                version,
                applied,
            } => self.report(text, dirty, version, applied),
            Event::Saved { text, version } => self.saved(text, version),
            Event::Computed(c) => self.computed(c),
        }
    }

    /// Whether the file was found missing and that is not told yet.
    pub fn is_vanishing(&self) -> bool {
        matches!(self.disk, Known::Missing) && self.existed && !self.deleted
    }

    /// The file is still missing a while after it was found so: tell the
    /// editor it was deleted.
    pub fn confirm_missing(&mut self) -> Vec<Effect> {
        if !self.is_vanishing() || self.paused {
            return Vec::new();
        }
        self.deleted = true;
        vec![Effect::Notify(Outcome::Deleted)]
    }

    /// Stops or resumes computing changes (while the shell decides whether
    /// the file was renamed or only saved through a backup).
    pub fn pause(&mut self, paused: bool) -> Vec<Effect> {
        self.paused = paused;
        if paused {
            self.running = None;
            return Vec::new();
        }
        self.reconcile()
    }

    /// The file moved to a path whose content is not known yet: the shell
    /// should read it.
    pub(crate) fn moved(&mut self) -> Effect {
        self.disk = Known::Unknown;
        self.deleted = false;
        self.running = None;
        self.recheck()
    }

    fn recheck(&mut self) -> Effect {
        self.seq += 1;
        self.awaiting = Some(self.seq);
        Effect::Recheck(self.seq)
    }

    fn disk(&mut self, disk: Disk) -> Vec<Effect> {
        match disk {
            Disk::Missing => {
                // Not news yet: the file may be in the middle of a rename
                // or of a delete-and-write save. The shell calls
                // [`Buffer::confirm_missing`] once that had time to show.
                // A buffer opened with unsaved text for a file that does not
                // exist derives from nothing: a file created later is merged
                // against an empty base, not taken as the base.
                if self.base.is_none() {
                    self.base = Some(Bytes::from(&b""[..]));
                }
                self.disk = Known::Missing;
                self.running = None;
                Vec::new()
            }
            Disk::Bytes(b) => {
                (self.deleted, self.existed) = (false, true);
                self.disk = Known::Bytes(b);
                self.reconcile()
            }
            Disk::Unreadable(why) => {
                (self.deleted, self.existed) = (false, true);
                self.disk = Known::Unreadable(why);
                self.reconcile()
            }
        }
    }

    fn report(
        &mut self,
        text: Bytes,
        dirty: bool,
        version: Option<i64>,
        applied: Option<u64>,
    ) -> Vec<Effect> {
        let mut acked = false;
        if let Some(s) = self.sent.take() {
            if applied == Some(s.seq) || text[..] == s.text[..] {
                acked = true;
                // Acknowledged: the editor's text now derives from the file
                // the notification was merged from. (An editor that could
                // not hold the text exactly says so by `applied`; what it
                // holds then counts as its own change.)
                self.base = Some(s.inputs.disk);
                self.conflict = s.conflict;
            } else if version.is_some() && version == s.version {
                // The editor's text at the version the notification was
                // computed against (a resync of an older one): still valid.
                self.sent = Some(s);
            }
            // Otherwise the editor moved on without it; it cannot apply it
            // now, and the change is computed again.
        }
        self.text = text;
        self.dirty = dirty;
        self.version = version;
        if !dirty && !acked {
            // Nothing unsaved: the buffer is what the editor last loaded or
            // saved, and derives from itself (an undo back to clean). Not so
            // for the answer to a reload: an editor that could not hold the
            // text exactly holds what it could, derived from the file, and
            // taking that as its base would reload it again and again.
            self.base = Some(self.text.clone());
            self.conflict = None;
        }
        if self
            .conflict
            .is_some_and(|before| job::markers(&self.text) <= before)
        {
            self.conflict = None;
        }
        self.reconcile()
    }

    fn saved(&mut self, text: Bytes, version: Option<i64>) -> Vec<Effect> {
        // A save starts a new version: a notification still in flight was
        // computed before it, and the editor refuses it.
        self.sent = None;
        self.base = Some(text.clone());
        self.text = text;
        self.dirty = false;
        self.conflict = None;
        self.deleted = false;
        self.version = version;
        // Someone may have written the file between the save and now, and
        // reads already on their way may predate the save.
        self.disk = Known::Unknown;
        self.running = None;
        vec![self.recheck()]
    }

    fn computed(&mut self, c: Computed) -> Vec<Effect> {
        // Every event that changes the inputs replaces or drops `running`,
        // so a result for the running job was computed from current inputs.
        let Some(r) = self.running.take_if(|r| r.seq == c.seq) else {
            return Vec::new();
        };
        let (outcome, conflict) = match c.result {
            Merged::InBuffer => {
                self.base = Some(r.inputs.disk);
                return Vec::new();
            }
            Merged::Reload(ch) => (Outcome::Reload(ch), None),
            Merged::Clean(ch) => (Outcome::Merged(ch), None),
            Merged::Conflict {
                change,
                regions,
                markers_before,
            } => (Outcome::Conflict { change, regions }, Some(markers_before)),
        };
        let (Outcome::Reload(ch) | Outcome::Merged(ch) | Outcome::Conflict { change: ch, .. }) =
            &outcome
        else {
            return Vec::new();
        };
        self.sent = Some(Sent {
            seq: ch.seq,
            version: self.version,
            text: ch.text.clone(),
            conflict,
            inputs: r.inputs,
        });
        vec![Effect::Notify(outcome)]
    }

    /// Starts the job that brings the file's current bytes into the buffer,
    /// when there is anything to bring and nothing stands in the way.
    fn reconcile(&mut self) -> Vec<Effect> {
        let disk = match &self.disk {
            _ if self.paused => None,
            Known::Bytes(d) => Some(d.clone()),
            Known::Unreadable(why) => {
                self.running = None;
                return self.skip(why.clone(), None);
            }
            Known::Unknown | Known::Missing => None,
        };
        let Some(disk) = disk else {
            self.running = None;
            return Vec::new();
        };
        if let Some(why) = unusable(&disk) {
            self.running = None;
            return self.skip(why, Some(disk));
        }
        let Some(base) = self.base.clone() else {
            self.base = Some(disk);
            return Vec::new();
        };
        if self.conflict.is_some() && disk[..] != base[..] {
            self.running = None;
            return self.skip(Skipped::Conflict, Some(disk));
        }
        self.skipped = None;
        if self.conflict.is_some() || self.sent.is_some() || disk[..] == base[..] {
            self.running = None;
            return Vec::new();
        }
        if disk[..] == self.text[..] {
            self.base = Some(disk);
            self.running = None;
            return Vec::new();
        }
        self.start(Inputs {
            base,
            text: self.text.clone(),
            disk,
            dirty: self.dirty,
        })
    }

    fn start(&mut self, inputs: Inputs) -> Vec<Effect> {
        if self.running.as_ref().is_some_and(|r| r.inputs == inputs) {
            return Vec::new();
        }
        self.seq += 1;
        let kind = if inputs.dirty {
            JobKind::Merge {
                base: inputs.base.clone(),
                text: inputs.text.clone(),
                disk: inputs.disk.clone(),
            }
        } else {
            JobKind::Reload {
                text: inputs.text.clone(),
                disk: inputs.disk.clone(),
            }
        };
        self.running = Some(Running {
            seq: self.seq,
            inputs,
        });
        vec![Effect::Compute(Job {
            seq: self.seq,
            kind,
            options: mend_merge::Options::default(),
        })]
    }

    /// Tells the editor once per reason and content.
    fn skip(&mut self, why: Skipped, content: Option<Bytes>) -> Vec<Effect> {
        let same = self.skipped.as_ref().is_some_and(|(w, c)| {
            *w == why
                && match (c, &content) {
                    (Some(a), Some(b)) => a[..] == b[..],
                    (None, None) => true,
                    _ => false,
                }
        });
        if same {
            return Vec::new();
        }
        self.skipped = Some((why.clone(), content));
        vec![Effect::Notify(Outcome::Skipped(why))]
    }
}

/// Why these bytes cannot go into a text buffer, if they cannot.
fn unusable(bytes: &[u8]) -> Option<Skipped> {
    if bytes.len() > MAX_BYTES {
        return Some(Skipped::TooLarge);
    }
    if bytes.contains(&0) || std::str::from_utf8(bytes).is_err() {
        return Some(Skipped::Binary);
    }
    None
}
