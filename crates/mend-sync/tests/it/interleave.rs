//! Editor sync under every interleaving: a person typing into one part of a
//! file while an agent rewrites another, with every message between the
//! editor and the server delivered late, jobs finishing in any order, and
//! saves and undos in between.
//!
//! A reference model says what must hold after every step:
//!
//! - the buffer never has conflict markers (the two never touch the same
//!   lines, so any conflict is false);
//! - the person's lines in the buffer are exactly what the person typed
//!   (no notification ever takes a keystroke away);
//! - the agent's lines in the buffer are some version the agent wrote;
//! - every agent line on disk is the latest version the agent wrote (no
//!   save ever writes back an older one);
//!
//! and once everything is delivered, the buffer holds the person's lines
//! and the agent's latest, and the server agrees with it.
//!
//! The simulated editor follows the protocol as the Neovim plugin does: it
//! applies a notification only at the version it was computed against,
//! reports right after applying, answers any other with `buffer/resync`,
//! and lets `:w` write without asking only while the file holds the bytes
//! the buffer derives from.
//!
//! `PROPTEST_CASES` sets the number of interleavings (256 by default).

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;

use mend_sync::{BufferId, Bytes, Disk, Editor, Input, Job, Notice, Outcome, Output};
use proptest::prelude::*;

/// The file: `P` person lines, `G` untouched lines, `A` agent lines. With
/// `shared`, the person may also type into the first agent line, so the
/// two really conflict there.
#[derive(Debug, Clone, Copy)]
struct Shape {
    p: usize,
    g: usize,
    a: usize,
    shared: bool,
}

fn initial(shape: Shape) -> String {
    let mut s = String::new();
    for i in 0..shape.p {
        s += &format!("person line {i} typed 0\n");
    }
    for i in 0..shape.g {
        s += &format!("between {i}\n");
    }
    for i in 0..shape.a {
        s += &format!("agent line {i} version 0\n");
    }
    s
}

fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// A step of the interleaving.
#[derive(Debug, Clone, Copy)]
enum Step {
    Type,
    Undo,
    Save,
    AgentWrite,
    Watch,
    ToServer,
    ToEditor,
    Job,
    Recheck,
    DiskToServer,
    TypeShared,
    Resolve,
}

const STEPS: [Step; 12] = [
    Step::Type,
    Step::Undo,
    Step::Save,
    Step::AgentWrite,
    Step::Watch,
    Step::ToServer,
    Step::ToEditor,
    Step::Job,
    Step::Recheck,
    Step::DiskToServer,
    Step::TypeShared,
    Step::Resolve,
];

struct Ed {
    text: String,
    version: i64,
    saved: String,
    /// The file's bytes the buffer derives from, as far as the editor
    /// knows (what it loaded, saved, or the last notification's base).
    known_disk: String,
    /// The person's edits, for undo: line and the text before.
    undo: Vec<(usize, String)>,
    inbox: VecDeque<Notice>,
    /// The last notification applied.
    applied: Option<u64>,
}

struct World {
    shape: Shape,
    path: PathBuf,
    disk: String,
    /// Every state the file has had.
    history: Vec<String>,
    /// The latest version the agent wrote, per agent line.
    agent_latest: Vec<u32>,
    writes: u32,
    /// What the person typed, per person line.
    person: Vec<String>,
    /// What the person last typed into the shared line.
    person_shared: Option<String>,
    typed: u32,
    ed: Ed,
    to_server: VecDeque<Input>,
    core: Editor,
    jobs: Vec<(BufferId, Job)>,
    /// Rechecks the server asked for, not yet read.
    rechecks: VecDeque<(PathBuf, u64)>,
    /// Reads on their way to the server, in the order they were made (the
    /// shell reads on one thread).
    reads: VecDeque<Input>,
    watch_pending: bool,
    /// Text changes sent since the editor last reported.
    unanswered: u32,
}

fn bytes(s: &str) -> Bytes {
    Arc::from(s.as_bytes())
}

impl World {
    fn new(shape: Shape) -> World {
        let text = initial(shape);
        let person = lines(&text)[..shape.p]
            .iter()
            .map(ToString::to_string)
            .collect();
        let mut w = World {
            shape,
            path: PathBuf::from("src/lib.rs"),
            disk: text.clone(),
            history: vec![text.clone()],
            agent_latest: vec![0; shape.a],
            writes: 0,
            person,
            person_shared: None,
            typed: 0,
            ed: Ed {
                text: text.clone(),
                version: 1,
                saved: text.clone(),
                known_disk: text.clone(),
                undo: Vec::new(),
                inbox: VecDeque::new(),
                applied: None,
            },
            to_server: VecDeque::new(),
            // The safe resolvers, which editor sync runs when asked: the
            // interleavings hold neighbouring edits that they settle.
            core: safe_editor(),
            jobs: Vec::new(),
            rechecks: VecDeque::new(),
            reads: VecDeque::new(),
            watch_pending: false,
            unanswered: 0,
        };
        w.to_server.push_back(Input::Open {
            path: w.path.clone(),
            text: bytes(&text),
            dirty: false,
            version: Some(1),
            base: None,
        });
        w
    }

    fn report(&mut self) {
        self.to_server.push_back(Input::Report {
            path: self.path.clone(),
            text: bytes(&self.ed.text),
            dirty: self.ed.text != self.ed.saved,
            version: Some(self.ed.version),
            applied: self.ed.applied,
        });
    }

    fn set_line(text: &str, i: usize, line: &str) -> String {
        let mut ls: Vec<String> = lines(text).iter().map(ToString::to_string).collect();
        ls[i] = line.to_string();
        ls.concat()
    }

    fn step(&mut self, step: Step, pick: u16) {
        trace(|| format!("-- {step:?}"));
        match step {
            Step::Type => {
                // Lines move while markers stand; the model types again
                // once they are resolved.
                if markers(&self.ed.text) {
                    return;
                }
                let i = pick as usize % self.shape.p;
                self.typed += 1;
                let line = format!("person line {i} typed {}\n", self.typed);
                self.person[i] = line.clone();
                self.type_line(i, &line);
            }
            Step::TypeShared => {
                if self.shape.shared && !markers(&self.ed.text) {
                    self.typed += 1;
                    let line = format!("shared line typed by the person {}\n", self.typed);
                    self.person_shared = Some(line.clone());
                    self.type_line(self.shape.p + self.shape.g, &line);
                }
            }
            Step::Undo => {
                if markers(&self.ed.text) {
                    return;
                }
                if let Some((i, before)) = self.ed.undo.pop() {
                    if i < self.shape.p {
                        self.person[i] = before.clone();
                    } else {
                        self.person_shared = Some(before.clone());
                    }
                    self.ed.text = World::set_line(&self.ed.text, i, &before);
                    self.ed.version += 1;
                    self.report();
                }
            }
            Step::Resolve => self.resolve(),
            Step::Save => self.save(),
            Step::AgentWrite => {
                let i = pick as usize % self.shape.a;
                self.writes += 1;
                self.agent_latest[i] = self.writes;
                let at = self.shape.p + self.shape.g + i;
                let line = format!("agent line {i} version {}\n", self.writes);
                self.disk = World::set_line(&self.disk, at, &line);
                self.history.push(self.disk.clone());
                self.watch_pending = true;
            }
            Step::Watch => {
                if std::mem::take(&mut self.watch_pending) {
                    self.reads.push_back(Input::Disk {
                        path: self.path.clone(),
                        disk: Disk::Bytes(bytes(&self.disk)),
                        recheck: None,
                    });
                }
            }
            Step::ToServer => {
                if let Some(input) = self.to_server.pop_front() {
                    self.server(input);
                }
            }
            Step::ToEditor => {
                if let Some(n) = self.ed.inbox.pop_front() {
                    self.editor(&n);
                }
            }
            Step::Job => {
                if !self.jobs.is_empty() {
                    let (buffer, job) = self.jobs.remove(pick as usize % self.jobs.len());
                    let computed = job.run();
                    self.server(Input::Computed { buffer, computed });
                }
            }
            Step::Recheck => {
                if let Some((path, id)) = self.rechecks.pop_front() {
                    let disk = Disk::Bytes(bytes(&self.disk));
                    self.reads.push_back(Input::Disk {
                        path,
                        disk,
                        recheck: Some(id),
                    });
                }
            }
            Step::DiskToServer => {
                if let Some(read) = self.reads.pop_front() {
                    self.server(read);
                }
            }
        }
    }

    fn type_line(&mut self, i: usize, line: &str) {
        trace(|| format!("   editor v{} types {line:?}", self.ed.version + 1));
        let before = lines(&self.ed.text)[i].to_string();
        self.ed.undo.push((i, before));
        self.ed.text = World::set_line(&self.ed.text, i, line);
        self.ed.version += 1;
        self.report();
    }

    /// The person resolves every conflict line by line: their own lines
    /// and the shared line as the buffer has them, the agent's other lines
    /// as the disk has them. (Lines only move one for one here, so the two
    /// sides of a conflict pair up.)
    fn resolve(&mut self) {
        if !markers(&self.ed.text) {
            return;
        }
        let mut out = String::new();
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        let mut side = None;
        for l in lines(&self.ed.text) {
            match (l, side) {
                ("<<<<<<< buffer\n", None) => side = Some(true),
                ("=======\n", Some(true)) => side = Some(false),
                (">>>>>>> disk\n", Some(false)) => {
                    side = None;
                    assert_eq!(ours.len(), theirs.len(), "{}", self.ed.text);
                    for (o, t) in ours.drain(..).zip(theirs.drain(..)) {
                        let agents = |l: &str| {
                            l.starts_with("agent line") && !l.starts_with("agent line 0 ")
                        };
                        out += if agents(o) && agents(t) { t } else { o };
                    }
                }
                (_, None) => out += l,
                (_, Some(true)) => ours.push(l),
                (_, Some(false)) => theirs.push(l),
            }
        }
        self.ed.text = out;
        self.ed.undo.clear();
        self.ed.version += 1;
        self.report();
    }

    /// `:w`, through the plugin's guard: written without asking only while
    /// the file holds the bytes the buffer derives from; otherwise the
    /// person is asked and, in this model, declines.
    fn save(&mut self) {
        if self.disk != self.ed.known_disk || markers(&self.ed.text) {
            return;
        }
        self.disk = self.ed.text.clone();
        self.history.push(self.disk.clone());
        // A save starts a new version, so a notification computed before
        // it is refused.
        self.ed.version += 1;
        self.ed.saved = self.ed.text.clone();
        self.ed.known_disk = self.ed.text.clone();
        self.watch_pending = true;
        self.to_server.push_back(Input::Saved {
            path: self.path.clone(),
            text: bytes(&self.ed.text),
            version: Some(self.ed.version),
        });
    }

    fn server(&mut self, input: Input) {
        trace(|| format!("   server <- {}", show_input(&input)));
        if matches!(input, Input::Report { .. } | Input::Saved { .. }) {
            self.unanswered = 0;
        }
        let outputs = self.core.on(input).expect("the buffer is open");
        for o in outputs {
            trace(|| format!("   server -> {}", show_output(&o)));
            match o {
                Output::Notice(n) => {
                    if matches!(
                        n.outcome,
                        Outcome::Reload(_) | Outcome::Merged(_) | Outcome::Conflict { .. }
                    ) {
                        // One change in flight: no second one before the
                        // editor has said anything, so refusals cannot
                        // snowball.
                        self.unanswered += 1;
                        assert_eq!(self.unanswered, 1, "a second change before an answer");
                    }
                    self.ed.inbox.push_back(n);
                }
                Output::Compute { buffer, job } => self.jobs.push((buffer, job)),
                Output::Recheck { path, id } => self.rechecks.push_back((path, id)),
                Output::Timer { .. } => panic!("no rename happens here"),
            }
        }
    }

    /// The plugin receiving a notification.
    fn editor(&mut self, n: &Notice) {
        if n.version != Some(self.ed.version) {
            // Its buffer moved on: refuse, and say what it holds.
            self.report();
            return;
        }
        let (change, reload) = match &n.outcome {
            Outcome::Reload(c) => (c, true),
            Outcome::Merged(c) => (c, false),
            Outcome::Conflict { change, .. } if self.shape.shared => (change, false),
            Outcome::Conflict { .. } => panic!("a false conflict: {n:?}"),
            // Announced writes during conflict mode change nothing yet.
            Outcome::Skipped(mend_sync::Skipped::Conflict) => return,
            other => panic!("unexpected notice {other:?}"),
        };
        let text = String::from_utf8(change.text.to_vec()).unwrap();
        self.ed.known_disk = self
            .history
            .iter()
            .rev()
            .find(|h| mend_core::ContentHash::of(h.as_bytes()) == change.disk_sha256)
            .expect("the notice derives from a file state that existed")
            .clone();
        self.ed.text = text;
        self.ed.version += 1;
        self.ed.applied = Some(change.seq);
        if reload {
            self.ed.saved = self.ed.text.clone();
        }
        self.report();
    }

    fn check(&self) {
        let shape = self.shape;
        let at = shape.p + shape.g;
        let disk = lines(&self.disk);
        for (i, v) in self.agent_latest.iter().enumerate() {
            let want = format!("agent line {i} version {v}\n");
            if !(shape.shared && i == 0) {
                assert_eq!(disk[at + i], want, "an agent write was lost on disk");
            }
        }
        if markers(&self.ed.text) {
            assert!(shape.shared, "markers: {}", self.ed.text);
            return;
        }
        let ed = lines(&self.ed.text);
        assert_eq!(ed.len(), shape.p + shape.g + shape.a, "{}", self.ed.text);
        assert_eq!(ed[..shape.p], self.person[..], "the person's lines changed");
        for (i, line) in ed[at..].iter().enumerate() {
            let written = self.history.iter().any(|h| lines(h)[at + i] == *line);
            let typed = shape.shared && i == 0 && self.person_shared.as_deref() == Some(line);
            assert!(written || typed, "a line nobody wrote: {line:?}");
        }
        if !shape.shared {
            let agent = &ed[at..];
            assert!(
                self.history.iter().any(|h| lines(h)[at..] == *agent),
                "agent lines the agent never wrote together: {agent:?}"
            );
        }
    }

    /// Delivers everything until nothing moves.
    fn quiesce(&mut self) {
        for _ in 0..10_000 {
            let busy = self.watch_pending
                || !self.to_server.is_empty()
                || !self.ed.inbox.is_empty()
                || !self.jobs.is_empty()
                || !self.rechecks.is_empty()
                || !self.reads.is_empty();
            if !busy {
                if !markers(&self.ed.text) {
                    return;
                }
                self.resolve();
            }
            for s in [
                Step::Watch,
                Step::ToServer,
                Step::Recheck,
                Step::DiskToServer,
                Step::Job,
                Step::ToEditor,
            ] {
                self.step(s, 0);
                self.check();
            }
        }
        panic!("never settled");
    }

    fn check_settled(&self) {
        let shape = self.shape;
        let at = shape.p + shape.g;
        let ed = lines(&self.ed.text);
        let disk = lines(&self.disk);
        let from = if shape.shared { at + 1 } else { at };
        assert_eq!(
            ed[from..],
            disk[from..],
            "the buffer lacks the agent's latest write"
        );
        if shape.shared {
            let typed = self.person_shared.as_deref() == Some(ed[at]);
            assert!(
                typed || ed[at] == disk[at],
                "the shared line is {:?}",
                ed[at]
            );
        }
        let b = self.core.buffer(&self.path).expect("open");
        assert_eq!(
            b.text(),
            self.ed.text.as_bytes(),
            "the server's text differs"
        );
        assert_eq!(
            b.base(),
            Some(self.disk.as_bytes()),
            "the server's base is not the file"
        );
        assert!(!b.is_waiting() && !b.in_conflict());
    }
}

fn markers(text: &str) -> bool {
    text.contains("<<<<<<< buffer\n")
}

/// Set to see every step of a failing interleaving.
const TRACE: bool = false;

#[allow(clippy::print_stderr)]
fn trace(line: impl FnOnce() -> String) {
    if TRACE {
        eprintln!("{}", line());
    }
}

fn show(b: &[u8]) -> String {
    String::from_utf8_lossy(b).replace('\n', "|")
}

fn show_input(i: &Input) -> String {
    match i {
        Input::Report {
            text,
            dirty,
            version,
            applied,
            ..
        } => format!(
            "report v{version:?} a{applied:?} dirty={dirty} {}",
            show(text)
        ),
        Input::Saved { text, version, .. } => format!("saved v{version:?} {}", show(text)),
        Input::Disk {
            disk: Disk::Bytes(b),
            recheck,
            ..
        } => format!("disk r{recheck:?} {}", show(b)),
        Input::Computed { computed, .. } => format!("computed {}", computed.seq),
        other => format!("{other:?}"),
    }
}

fn show_output(o: &Output) -> String {
    match o {
        Output::Notice(n) => match &n.outcome {
            Outcome::Reload(c) => format!("reload v{:?} {}", n.version, show(&c.text)),
            Outcome::Merged(c) => format!("merged v{:?} {}", n.version, show(&c.text)),
            Outcome::Conflict { change, .. } => {
                format!("CONFLICT v{:?} {}", n.version, show(&change.text))
            }
            other => format!("{other:?}"),
        },
        Output::Compute { job, .. } => format!(
            "compute {} {:?}",
            job.seq,
            match &job.kind {
                mend_sync::JobKind::Reload { .. } => "reload".to_string(),
                mend_sync::JobKind::Merge { base, text, disk } => format!(
                    "merge base={} text={} disk={}",
                    show(base),
                    show(text),
                    show(disk)
                ),
            }
        ),
        other => format!("{other:?}"),
    }
}

fn run(shape: Shape, steps: &[(usize, u16)]) {
    let mut w = World::new(shape);
    w.quiesce();
    for &(k, pick) in steps {
        w.step(STEPS[k % STEPS.len()], pick);
        w.check();
    }
    w.quiesce();
    w.check_settled();
}

fn shape(shared: bool) -> impl Strategy<Value = Shape> {
    (
        1usize..6,
        prop::sample::select(vec![0usize, 1, 3]),
        1usize..6,
    )
        .prop_map(move |(p, g, a)| Shape { p, g, a, shared })
}

proptest! {
    #[test]
    fn person_and_agent_never_lose_work(
        shape in shape(false),
        steps in prop::collection::vec((0usize..STEPS.len(), any::<u16>()), 1..120),
    ) {
        run(shape, &steps);
    }

    /// The two also type into one shared line: real conflicts, writes made
    /// while the buffer has markers, and the person resolving them.
    #[test]
    fn conflicts_keep_both_sides_and_later_writes(
        shape in shape(true),
        steps in prop::collection::vec((0usize..STEPS.len(), any::<u16>()), 1..120),
    ) {
        run(shape, &steps);
    }
}

/// A small file: one line each for the person and the agent.
const SMALL: Shape = Shape {
    p: 1,
    g: 0,
    a: 1,
    shared: false,
};

fn case(shape: Shape, steps: &[Step]) {
    let steps: Vec<(usize, u16)> = steps.iter().map(|&s| (s as usize, 0)).collect();
    run(shape, &steps);
}

/// The deterministic case from the issue: the person types while two agent
/// writes of the same line cross the editor's report. Before the fix, the
/// second merge paired the first notification's base with a buffer that
/// lacked it, and markers appeared on a line the person never touched.
#[test]
fn agent_writes_one_line_twice_while_the_person_types() {
    use Step::*;
    let shape = Shape {
        p: 3,
        g: 1,
        a: 3,
        shared: false,
    };
    let write = [AgentWrite, Watch, DiskToServer, Job];
    let mut steps = vec![Type, ToServer];
    steps.extend(write);
    // The merge is on its way; the person types before it lands.
    steps.extend([Type, ToServer]);
    steps.extend(write);
    steps.extend([ToEditor, ToEditor]);
    case(shape, &steps);
}

/// Reads made before a save reach the server after it: the server waits for
/// the read it asked for after the save, and takes no older one.
#[test]
fn reads_made_before_a_save_are_not_taken_after_it() {
    use Step::*;
    case(SMALL, &[Type, Save, Watch, Type, Save]);
}

/// A notification computed before a save reaches the editor after it: the
/// save started a new version, so it is refused rather than taken as the
/// person's own change of the agent's line.
#[test]
fn a_save_refuses_notifications_computed_before_it() {
    use Step::*;
    let steps = [
        Type, Type, Type, Save, ToServer, Watch, AgentWrite, Watch, AgentWrite,
    ];
    case(SMALL, &steps);
}

/// The person types past a merge and undoes back to the text it was
/// computed against: the merge is computed again, not skipped.
#[test]
fn an_undo_back_to_a_passed_over_text_still_merges() {
    use Step::*;
    let steps = [
        AgentWrite,
        Type,
        ToServer,
        Watch,
        DiskToServer,
        Type,
        ToServer,
        Job,
        Type,
        Undo,
    ];
    case(SMALL, &steps);
}

/// An editor core with the safe resolvers on (the default is git's merge
/// only).
fn safe_editor() -> Editor {
    let mut e = Editor::new();
    e.set_policy(mend_merge::Policy::Safe);
    e
}
