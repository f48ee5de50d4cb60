//! The reader thread: reads tracked files that are due, once they have
//! settled, outside the watcher's lock, and reports what changed. It also
//! checks that the root folder is still at its path, and when one is
//! there again after it was lost, opens and watches it afresh.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant, SystemTime};

use crossbeam_channel::{Receiver, RecvTimeoutError};
use notify::RecommendedWatcher;

use crate::barrier::Barrier;
use crate::read::{Identity, Read, Root, Stamp};
use crate::{EMPTY_SETTLE, Kind, OPEN_LIMIT, ROOT_POLL, SETTLE, Seen, Shared, hash, lock};

/// What the reader needs to watch the root again when it comes back.
pub(crate) struct Rewatch {
    /// The watcher's `notify` handle; gone once the watcher is dropped.
    pub(crate) inner: Weak<Mutex<RecommendedWatcher>>,
    /// Whether the whole tree is watched.
    pub(crate) recursive: bool,
}

/// The root folder the reader reads beneath, and when it was last
/// checked to be still at its path.
struct Held {
    root: Root,
    /// The folder opened, to tell another at its path.
    identity: Option<Identity>,
    checked: Instant,
    rewatch: Rewatch,
}

/// A file still changing is read again this often.
const RETRY: Duration = Duration::from_millis(25);

/// After this many reads that each found the file changing, the last one
/// stands: a file rewritten without pause is reported as it was.
const TRIES: u32 = 40;

/// How long a read waits for the event handler to catch up with it.
const FENCE: Duration = Duration::from_secs(1);

pub(crate) fn spawn(
    shared: Arc<Mutex<Shared>>,
    root: Root,
    rewatch: Rewatch,
    max: u64,
    woken: Receiver<()>,
    fence: Option<Barrier>,
) {
    let mut held = Held {
        identity: root.identity(),
        root,
        checked: Instant::now(),
        rewatch,
    };
    let spawned = std::thread::Builder::new()
        .name("mend-watch-reader".into())
        .spawn(move || run(&shared, &mut held, max, &woken, fence.as_ref()));
    // Without a thread nothing is read: changes are then never reported,
    // which the caller sees as silence rather than a crash.
    drop(spawned);
}

fn run(
    shared: &Mutex<Shared>,
    held: &mut Held,
    max: u64,
    woken: &Receiver<()>,
    fence: Option<&Barrier>,
) {
    let mut tries: std::collections::HashMap<PathBuf, u32> = Default::default();
    loop {
        check_root(shared, held);
        let (ready, wait) = due(shared);
        if ready.is_empty() {
            let timeout = wait.unwrap_or(ROOT_POLL).min(ROOT_POLL);
            match woken.recv_timeout(timeout) {
                Ok(()) | Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return,
            }
            // Drain the other wake-ups: one pass reads everything due.
            while woken.try_recv().is_ok() {}
            continue;
        }
        for (path, generation) in ready {
            let read = held.root.read(&path, max);
            // Every event queued before the read is handled before the
            // read is judged (a writer's truncation among them).
            let fenced = fence.is_none_or(|b| b.pass(FENCE));
            let count = tries.entry(path.clone()).or_default();
            *count += 1;
            let settled = *count >= TRIES || (fenced && settled(&read));
            if finish(shared, &path, generation, read, settled) {
                tries.remove(&path);
            }
        }
    }
}

/// Checks, every [`ROOT_POLL`] or at once after an event named it, that
/// the folder read from is still at the root's path. Gone, it is reported
/// lost; a folder there again (recreated, or moved back) is opened and
/// watched afresh, and reported restored.
fn check_root(shared: &Mutex<Shared>, held: &mut Held) {
    let (path, lost) = {
        let mut s = lock(shared);
        if !std::mem::take(&mut s.root_event) && held.checked.elapsed() < ROOT_POLL {
            return;
        }
        (s.root.clone(), s.root_lost)
    };
    held.checked = Instant::now();
    let here = Identity::of_folder(&path);
    if !lost {
        if here.is_some() && here == held.identity {
            return;
        }
        lock(shared).root_gone();
        if here.is_none() {
            return;
        }
    } else if here.is_none() {
        return;
    }
    // A folder is there: the one read from from now on.
    let Ok(root) = Root::open(&path) else {
        return;
    };
    held.identity = root.identity();
    held.root = root;
    if let Some(inner) = held.rewatch.inner.upgrade() {
        crate::watch_again(&inner, shared, held.rewatch.recursive);
    }
    lock(shared).root_back();
}

/// The tracked paths ready to be read, with the generation of their due
/// state, and how long until the next one may be. Nothing is read while
/// the root is lost.
fn due(shared: &Mutex<Shared>) -> (Vec<(PathBuf, u64)>, Option<Duration>) {
    let s = lock(shared);
    if s.root_lost {
        return (Vec::new(), Some(ROOT_POLL));
    }
    let now = Instant::now();
    let mut ready = Vec::new();
    let mut wait: Option<Duration> = None;
    for (p, t) in &s.tracked {
        let Some(d) = &t.due else { continue };
        let at = d.since + if d.writing { OPEN_LIMIT } else { s.quiet };
        if at <= now {
            ready.push((p.clone(), d.generation));
        } else {
            let left = at - now;
            wait = Some(wait.map_or(left, |w| w.min(left)));
        }
    }
    (ready, wait.map(|w| w.max(Duration::from_millis(1))))
}

/// Whether a read found the file at rest: not modified within [`SETTLE`],
/// or within [`EMPTY_SETTLE`] for an empty file.
///
/// An empty file is most often a writer between its truncation and its
/// first write; and a writer preempted inside the truncating `open`, after
/// the file was emptied but before the kernel queued its event, leaves no
/// event to wait for at all (seen under load). Only time tells it from a
/// file really emptied.
fn settled(read: &Read) -> bool {
    let Read::Bytes(bytes, Stamp { modified, .. }) = read else {
        return true;
    };
    let Some(modified) = modified else {
        return true;
    };
    let rest = if bytes.is_empty() {
        EMPTY_SETTLE
    } else {
        SETTLE
    };
    // A time in the future (a clock stepped back) is not at rest yet.
    SystemTime::now()
        .duration_since(*modified)
        .is_ok_and(|age| age >= rest)
}

/// Records a read and reports it if it is news. Returns whether the path's
/// due state was settled by it (otherwise it is read again).
fn finish(
    shared: &Mutex<Shared>,
    path: &PathBuf,
    generation: u64,
    read: Read,
    settled: bool,
) -> bool {
    let mut s = lock(shared);
    let Some(t) = s.tracked.get_mut(path) else {
        return true;
    };
    let Some(due) = &mut t.due else {
        return true;
    };
    if due.generation != generation || !settled {
        // An event came while it was read, or the file is still moving:
        // read again soon, from now.
        if settled {
            return false;
        }
        due.since = Instant::now() + RETRY;
        return false;
    }
    let rechecks = std::mem::take(&mut due.rechecks);
    t.due = None;
    let (seen, kind) = match read {
        Read::Bytes(bytes, _) => (Seen::Content(hash(&bytes)), Kind::Content(bytes)),
        Read::Missing | Read::Failed => (Seen::Other(Kind::Removed), Kind::Removed),
        Read::NotAFile(k) => (Seen::Other(Kind::NotAFile(k)), Kind::NotAFile(k)),
        Read::Outside => (Seen::Other(Kind::Outside), Kind::Outside),
        Read::Denied => (Seen::Other(Kind::Denied), Kind::Denied),
        Read::TooLarge(n) => (Seen::Other(Kind::TooLarge(n)), Kind::TooLarge(n)),
    };
    let news = t.seen != seen;
    t.seen = seen.clone();
    let recheck = rechecks.into_iter().max();
    if recheck.is_none() && (!news || s.self_write(path, &seen)) {
        return true;
    }
    s.send(path.clone(), kind, recheck);
    true
}

impl Shared {
    /// Whether `seen` is content this process said it would write there
    /// (and forgets the expectation).
    fn self_write(&mut self, path: &PathBuf, seen: &Seen) -> bool {
        let Seen::Content(h) = seen else {
            return false;
        };
        let Some(hashes) = self.expected.get_mut(path) else {
            return false;
        };
        let Some(i) = hashes.iter().position(|x| x == h) else {
            return false;
        };
        hashes.drain(..=i);
        true
    }
}
