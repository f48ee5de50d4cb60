//! A model-based test of renames over open buffers: random sequences of
//! renames, swaps through a temporary name, backup-style saves (the file
//! renamed to `x~`, a new one written, the backup removed or kept), atomic
//! saves (a temporary file renamed over the file), deletes and writes, in
//! windows of quick succession, each window followed by quiet. After each
//! window every buffer whose file exists must be attached to the path its
//! file went to (or stay on its path through a save), hold what that file
//! holds, and take a write to it; a buffer whose file is gone (deleted, or
//! overwritten by a rename) must be replaced, or be told of the deletion on
//! a path its file had that holds nothing, never sit on another file.
//!
//! Sequences whose events are equally another story are not generated: a
//! file no buffer has renamed (or written) where an open buffer's file
//! left in the same window, which is what a save through a backup looks
//! like; a rename onto a save within the moment before its write is read;
//! deleting a file saved with its backup kept. See [`World::apply`].
//!
//! The watcher is modelled as it behaves: a rename is reported at once; a
//! file is read once settled when it is first tracked, then when an event
//! named it while it was tracked, and for a recheck; a read is reported
//! only when it differs from the last report for the path, or a rename
//! named the path since; tracking follows `Editor::paths`. The editor
//! applies every notice at once and reports as the protocol asks.
//!
//! `PROPTEST_CASES` sets the number of sequences (256 by default; storms a
//! quarter of that).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mend_sync::{BufferId, Disk, Editor, Input, Outcome, Output};
use proptest::prelude::*;

const NAMES: &[&str] = &["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"];
/// How many of them the mixed sequences use (more collide more often).
const MIXED: usize = 6;
const TEMP: &str = "swap.tmp";

#[derive(Debug, Clone)]
enum Op {
    Rename(usize, usize),
    Swap(usize, usize),
    Backup { file: usize, keep: bool },
    Atomic(usize),
    Delete(usize),
    Write(usize),
    Create(usize),
}

/// An operation, and whether the watcher's reads settle after it (time
/// passes) before the next one.
#[derive(Debug, Clone)]
struct Step {
    op: Op,
    settle: bool,
}

fn op() -> impl Strategy<Value = Op> {
    let n = 0..MIXED;
    prop_oneof![
        4 => (n.clone(), n.clone()).prop_map(|(a, b)| Op::Rename(a, b)),
        1 => (n.clone(), n.clone()).prop_map(|(a, b)| Op::Swap(a, b)),
        1 => (n.clone(), any::<bool>()).prop_map(|(file, keep)| Op::Backup { file, keep }),
        1 => n.clone().prop_map(Op::Atomic),
        1 => n.clone().prop_map(Op::Delete),
        1 => n.clone().prop_map(Op::Write),
        1 => n.prop_map(Op::Create),
    ]
}

fn plan() -> impl Strategy<Value = (Vec<bool>, Vec<Vec<Step>>)> {
    let step = (op(), any::<bool>()).prop_map(|(op, settle)| Step { op, settle });
    (
        prop::collection::vec(any::<bool>(), MIXED),
        prop::collection::vec(prop::collection::vec(step, 1..10), 1..5),
    )
}

/// The model editor's view of one buffer.
#[derive(Debug)]
struct Ed {
    path: PathBuf,
    text: String,
    version: i64,
    applied: Option<u64>,
    deleted: bool,
}

/// The watcher's view of one tracked path.
#[derive(Debug, Default)]
struct Track {
    /// What was last reported; `None` before the first report.
    reported: Option<Option<String>>,
    /// An event named it since its last read.
    marked: bool,
    rechecks: Vec<u64>,
}

#[derive(Default)]
struct World {
    core: Editor,
    files: BTreeMap<PathBuf, String>,
    written: u64,
    tracked: BTreeMap<PathBuf, Track>,
    timer: Option<u64>,
    eds: BTreeMap<BufferId, Ed>,
    /// Where each buffer should be.
    intent: BTreeMap<BufferId, Intent>,
    /// The paths each buffer's file had in this window: a file moved and
    /// then deleted may leave its buffer, told of the deletion, at any.
    history: BTreeMap<BufferId, BTreeSet<PathBuf>>,
    /// Paths a rename took a file from in this window.
    vacated: BTreeSet<PathBuf>,
    /// Paths saved through a backup kept beside them in this window.
    kept: BTreeSet<PathBuf>,
    errors: Vec<String>,
    log: Vec<String>,
}

/// Where a buffer should be.
#[derive(Debug, Clone, PartialEq)]
enum Intent {
    /// With its file, at this path.
    At(PathBuf),
    /// Its file was overwritten by a rename onto its path: replaced if
    /// another buffer's file ends on that path, else still on it (taking
    /// the file there, or told it is deleted).
    Lost(PathBuf),
    /// Replaced.
    Gone,
}

fn p(s: &str) -> PathBuf {
    PathBuf::from(s)
}

impl World {
    fn fresh(&mut self) -> String {
        self.written += 1;
        format!("content {}\n", self.written)
    }

    fn feed(&mut self, input: Input) {
        let mut queue = VecDeque::from([input]);
        while let Some(i) = queue.pop_front() {
            let outputs = match self.core.on(i) {
                Ok(o) => o,
                Err(e) => {
                    self.errors.push(format!("refused: {e}"));
                    continue;
                }
            };
            self.sync_tracking();
            for o in outputs {
                match o {
                    Output::Notice(n) => {
                        if let Some(r) = self.notice(n) {
                            queue.push_back(r);
                        }
                    }
                    Output::Compute { buffer, job } => queue.push_back(Input::Computed {
                        buffer,
                        computed: job.run(),
                    }),
                    Output::Recheck { path, id } => {
                        self.tracked.entry(path).or_default().rechecks.push(id);
                    }
                    Output::Timer { id, .. } => self.timer = Some(id),
                }
            }
        }
    }

    /// The shell tracks exactly the paths the core asks for; a path
    /// tracked anew is read once settled (an event that named it before
    /// it was tracked is lost), and after that when an event names it.
    fn sync_tracking(&mut self) {
        let want = self.core.paths();
        self.tracked.retain(|k, _| want.contains(k));
        for w in want {
            self.tracked.entry(w).or_insert_with(|| Track {
                marked: true,
                ..Track::default()
            });
        }
    }

    /// The editor applies a notice; returns its report, if any.
    fn notice(&mut self, n: mend_sync::Notice) -> Option<Input> {
        self.log
            .push(format!("{} {:?}", n.path.display(), short(&n.outcome)));
        let id = n.buffer;
        let Some(ed) = self.eds.get_mut(&id) else {
            self.errors.push(format!(
                "notice for a buffer the editor does not hold: {n:?}"
            ));
            return None;
        };
        match n.outcome {
            Outcome::Reload(c) => {
                if n.version != Some(ed.version) {
                    return Some(report(ed));
                }
                ed.text = String::from_utf8_lossy(&c.text).into_owned();
                ed.version += 1;
                ed.applied = Some(c.seq);
                ed.deleted = false;
                Some(report(ed))
            }
            Outcome::Renamed { to } => {
                ed.path = to;
                None
            }
            Outcome::Replaced { .. } => {
                self.eds.remove(&id);
                None
            }
            Outcome::Deleted => {
                ed.deleted = true;
                None
            }
            other => {
                self.errors
                    .push(format!("{}: unexpected {other:?}", n.path.display()));
                None
            }
        }
    }

    /// An event named `path`: read it once settled, if tracked now.
    fn event(&mut self, path: &str) {
        if let Some(t) = self.tracked.get_mut(&p(path)) {
            t.marked = true;
        }
    }

    fn rename(&mut self, from: &str, to: &str) {
        let content = self.files.remove(&p(from)).expect("renamed file exists");
        self.files.insert(p(to), content);
        self.event(from);
        self.event(to);
        // The next read of a renamed path is reported whatever it finds.
        for path in [from, to] {
            if let Some(t) = self.tracked.get_mut(&p(path)) {
                t.reported = None;
            }
        }
        self.feed(Input::Renamed {
            from: p(from),
            to: p(to),
        });
    }

    fn write(&mut self, path: &str) {
        let c = self.fresh();
        self.files.insert(p(path), c);
        self.event(path);
    }

    fn remove(&mut self, path: &str) {
        self.files.remove(&p(path));
        self.event(path);
    }

    /// The reads the watcher makes once files settle, until none is due.
    fn settle(&mut self) {
        for _ in 0..100 {
            let due: Vec<PathBuf> = self
                .tracked
                .iter()
                .filter(|(_, t)| t.marked || !t.rechecks.is_empty())
                .map(|(k, _)| k.clone())
                .collect();
            if due.is_empty() {
                return;
            }
            for path in due {
                let now = self.files.get(&path).cloned();
                let Some(t) = self.tracked.get_mut(&path) else {
                    continue;
                };
                let recheck = t.rechecks.drain(..).max();
                t.marked = false;
                let news = t.reported.as_ref() != Some(&now);
                t.reported = Some(now.clone());
                if recheck.is_none() && !news {
                    continue;
                }
                let disk = now.map_or(Disk::Missing, |c| Disk::Bytes(Arc::from(c.as_bytes())));
                self.feed(Input::Disk {
                    path,
                    disk,
                    recheck,
                });
            }
        }
        self.errors.push("reads never settled".into());
    }

    /// Quiet after a window: reads settle, the grace timer fires.
    fn quiet(&mut self) {
        self.settle();
        for _ in 0..10 {
            let Some(id) = self.timer.take() else {
                return;
            };
            self.feed(Input::Timer(id));
            self.settle();
        }
        self.errors.push("timers never stopped".into());
    }

    /// The buffer whose file is at `path`.
    fn owner(&self, path: &Path) -> Option<BufferId> {
        self.intent
            .iter()
            .find(|(_, at)| matches!(at, Intent::At(p) if p == path))
            .map(|(id, _)| *id)
    }

    /// A file moves (in the model's intent): its buffer follows, and a
    /// buffer whose path it lands on is replaced if the file is another
    /// buffer's, or stays (and takes the new file) if it is not.
    fn intend_rename(&mut self, from: &str, to: &str) {
        let mover = self.owner(&p(from));
        if let Some(m) = mover {
            if let Some(victim) = self.owner(&p(to)) {
                self.intent.insert(victim, Intent::Lost(p(to)));
            }
            self.intent.insert(m, Intent::At(p(to)));
            self.history.entry(m).or_default().insert(p(to));
        }
        self.vacated.insert(p(from));
    }

    /// Carries out one operation, or passes over one that cannot happen,
    /// or whose events would equally be another story (a foreign file put
    /// where a file left in this window looks like a backup-style save).
    fn apply(&mut self, op: &Op) {
        let name = |i: usize| NAMES[i];
        let exists = |w: &World, i: usize| w.files.contains_key(&p(NAMES[i]));
        match *op {
            Op::Rename(a, b) if a != b && exists(self, a) => {
                let foreign = self.owner(&p(name(a))).is_none();
                if foreign && self.vacated.contains(&p(name(b))) {
                    return;
                }
                self.log.push(format!("mv {} {}", name(a), name(b)));
                self.intend_rename(name(a), name(b));
                self.rename(name(a), name(b));
            }
            // A swap with a file no buffer has puts that file where an open
            // one left, as a save through a backup does (`mv f f~`, a new
            // file renamed to `f`): the same events, another story.
            Op::Swap(a, b)
                if a != b
                    && exists(self, a)
                    && exists(self, b)
                    && self.owner(&p(name(a))).is_some()
                    && self.owner(&p(name(b))).is_some() =>
            {
                self.log.push(format!("swap {} {}", name(a), name(b)));
                self.intend_rename(name(a), TEMP);
                self.rename(name(a), TEMP);
                self.intend_rename(name(b), name(a));
                self.rename(name(b), name(a));
                self.intend_rename(TEMP, name(b));
                self.rename(TEMP, name(b));
            }
            Op::Backup { file, keep } if exists(self, file) => {
                let (f, backup) = (name(file), format!("{}~", name(file)));
                self.log.push(format!("backup save {f} (keep {keep})"));
                self.vacated.insert(p(f));
                if keep {
                    self.kept.insert(p(f));
                }
                self.rename(f, &backup);
                self.write(f);
                if !keep {
                    self.remove(&backup);
                }
            }
            Op::Atomic(i) if exists(self, i) => {
                let temp = format!("{}.new", name(i));
                self.log.push(format!("atomic save {}", name(i)));
                self.write(&temp);
                self.rename(&temp, name(i));
            }
            // Deleting a file saved with its backup kept leaves only the
            // backup, as renaming it to the backup's name would.
            Op::Delete(i) if exists(self, i) && !self.kept.contains(&p(name(i))) => {
                self.log.push(format!("rm {}", name(i)));
                self.remove(name(i));
            }
            Op::Write(i) if exists(self, i) => {
                self.log.push(format!("write {}", name(i)));
                self.write(name(i));
            }
            Op::Create(i) if !exists(self, i) && !self.vacated.contains(&p(name(i))) => {
                self.log.push(format!("create {}", name(i)));
                self.write(name(i));
            }
            _ => {}
        }
    }

    /// Every buffer whose file exists is on its path, holds what it holds,
    /// and the server agrees; a buffer whose file is gone (deleted, or
    /// overwritten by a rename) is replaced, or told its file is deleted
    /// on a path its file had and that holds nothing now. Settles the
    /// intent for the next window.
    fn check(&mut self) {
        for (id, intent) in self.intent.clone() {
            let path = match &intent {
                Intent::At(p) => Some(p.clone()),
                Intent::Lost(p) if self.owner(p).is_none() => Some(p.clone()),
                _ => None,
            };
            match path {
                Some(p) if self.files.contains_key(&p) => self.check_at(id, &p),
                _ => self.check_gone(id),
            }
        }
    }

    fn check_at(&mut self, id: BufferId, at: &PathBuf) {
        self.intent.insert(id, Intent::At(at.clone()));
        let Some(ed) = self.eds.get(&id) else {
            self.errors.push(format!(
                "buffer {} was lost; its file is at {}",
                id.get(),
                at.display()
            ));
            return;
        };
        if ed.path != *at {
            self.errors.push(format!(
                "buffer {} is at {}; its file is at {}",
                id.get(),
                ed.path.display(),
                at.display()
            ));
        } else if self.core.id(at) != Some(id) {
            self.errors
                .push(format!("the server has another buffer at {}", at.display()));
        } else if self.files[at] != ed.text {
            self.errors.push(format!(
                "buffer {} at {} holds {:?}; the file holds {:?}",
                id.get(),
                at.display(),
                ed.text,
                self.files[at]
            ));
        }
    }

    fn check_gone(&mut self, id: BufferId) {
        let Some(ed) = self.eds.get(&id) else {
            // Replaced: the editor keeps the text under another name.
            self.intent.insert(id, Intent::Gone);
            return;
        };
        let had = self.history.get(&id).is_some_and(|h| h.contains(&ed.path));
        if !had || self.files.contains_key(&ed.path) || !ed.deleted {
            self.errors.push(format!(
                "buffer {}, whose file is gone, is at {} (deleted: {}, a path its file had: {had})",
                id.get(),
                ed.path.display(),
                ed.deleted
            ));
        } else if self.core.id(&ed.path) != Some(id) {
            self.errors.push(format!(
                "the server has another buffer at {}",
                ed.path.display()
            ));
        }
        self.intent.insert(id, Intent::At(ed.path.clone()));
    }
}

fn report(ed: &Ed) -> Input {
    Input::Report {
        path: ed.path.clone(),
        text: Arc::from(ed.text.as_bytes()),
        dirty: false,
        version: Some(ed.version),
        applied: ed.applied,
    }
}

fn short(o: &Outcome) -> String {
    match o {
        Outcome::Reload(c) => format!("reload {}", String::from_utf8_lossy(&c.text).trim()),
        Outcome::Renamed { to } => format!("renamed to {}", to.display()),
        Outcome::Replaced { by } => format!("replaced by {}", by.display()),
        other => format!("{other:?}"),
    }
}

fn run(open: &[bool], windows: &[Vec<Step>]) -> Result<(), String> {
    let mut w = World::default();
    for name in NAMES {
        let c = w.fresh();
        w.files.insert(p(name), c);
    }
    for (i, name) in NAMES.iter().enumerate() {
        if !open.get(i).copied().unwrap_or(false) {
            continue;
        }
        let text = w.files[&p(name)].clone();
        w.feed(Input::Open {
            path: p(name),
            text: Arc::from(text.as_bytes()),
            dirty: false,
            version: Some(1),
            base: None,
        });
        let id = w.core.id(&p(name)).ok_or("not opened")?;
        w.eds.insert(
            id,
            Ed {
                path: p(name),
                text,
                version: 1,
                applied: None,
                deleted: false,
            },
        );
        w.intent.insert(id, Intent::At(p(name)));
    }
    w.quiet();
    for (k, steps) in windows.iter().enumerate() {
        w.vacated.clear();
        w.kept.clear();
        w.history = w
            .intent
            .iter()
            .filter_map(|(id, i)| match i {
                Intent::At(at) => Some((*id, BTreeSet::from([at.clone()]))),
                _ => None,
            })
            .collect();
        w.log.push(format!("-- window {k}"));
        for s in steps {
            w.apply(&s.op);
            // A save's write is read (50 ms after it) before anyone renames
            // the saved file: within that, a rename onto it cannot be told
            // from a rename onto the empty path the save left.
            let save = matches!(s.op, Op::Backup { .. } | Op::Atomic(_));
            if s.settle || save {
                w.settle();
            }
        }
        w.quiet();
        w.check();
        if !w.errors.is_empty() {
            return Err(format!("{:#?}\nlog:\n{}", w.errors, w.log.join("\n")));
        }
    }
    // A write to each buffer's file reaches it, and only it.
    let live: Vec<PathBuf> = w.eds.values().map(|e| e.path.clone()).collect();
    for path in live {
        w.write(&path.to_string_lossy());
    }
    w.quiet();
    w.check();
    if w.errors.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "after the last writes: {:#?}\nlog:\n{}",
            w.errors,
            w.log.join("\n")
        ))
    }
}

proptest! {

    /// Every buffer ends attached to the file that holds its content, and
    /// a write to that file reaches it.
    #[test]
    fn buffers_follow_their_files((open, windows) in plan()) {
        if let Err(e) = run(&open, &windows) {
            prop_assert!(false, "{}", e);
        }
    }
}

/// A storm: 60 renames and swaps among 10 open files in one window.
fn storm() -> impl Strategy<Value = Vec<Step>> {
    let n = 0..NAMES.len();
    let op = prop_oneof![
        4 => (n.clone(), n.clone()).prop_map(|(a, b)| Op::Rename(a, b)),
        1 => (n.clone(), n).prop_map(|(a, b)| Op::Swap(a, b)),
    ];
    prop::collection::vec(
        (op, prop::bool::weighted(0.1)).prop_map(|(op, settle)| Step { op, settle }),
        1..=60,
    )
}

proptest! {
    // A storm is ten times a mixed sequence's work: a quarter as many.
    #![proptest_config(ProptestConfig::with_cases(ProptestConfig::default().cases / 4))]

    /// After a storm of renames over ten open files, each buffer is on
    /// its file's path or, its file overwritten, replaced or told.
    #[test]
    fn storms_of_renames_leave_no_buffer_on_a_wrong_path(steps in storm()) {
        if let Err(e) = run(&[true; 10], &[steps]) {
            prop_assert!(false, "{}", e);
        }
    }
}

/// `mv f g; mv g h` with f and g open: f's buffer goes to h, and g's
/// buffer (whose file the first rename overwrote) is replaced, not moved.
#[test]
fn a_chain_of_renames_moves_the_first_file_and_replaces_the_overwritten() {
    let open = [true, true, false, false, false, false];
    let steps = vec![
        Step {
            op: Op::Rename(0, 1),
            settle: false,
        },
        Step {
            op: Op::Rename(1, 2),
            settle: false,
        },
    ];
    run(&open, &[steps]).unwrap();
}

/// `mv f g`, then a backup-style save of g: the buffer ends on g.
#[test]
fn a_rename_then_a_backup_save_keeps_the_buffer_on_the_saved_file() {
    let open = [true, false, false, false, false, false];
    for keep in [false, true] {
        let steps = vec![
            Step {
                op: Op::Rename(0, 1),
                settle: false,
            },
            Step {
                op: Op::Backup { file: 1, keep },
                settle: false,
            },
        ];
        run(&open, &[steps]).unwrap();
    }
}
