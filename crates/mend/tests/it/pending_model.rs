//! Pending sessions under concurrency, against a reference model.
//!
//! Three actors share one small workspace and one session: two run CLI
//! processes (`mend apply --pending`, streamed or not, and `mend pending
//! accept|reject|sync|status`) and make local edits as a person would; the
//! third drives a `mend mcp --pending` server (`edit_file`, `read_file`).
//! Each operation's start, end and outcome are recorded. The history must
//! be linearizable against a reference model of the session: some order of
//! the operations, consistent with real time, in which every outcome is
//! the model's. A streamed proposal is two steps of that order: it reads
//! the session's view while it streams and is held at its end, merged three
//! ways onto what changed in between. The history ends with a status and
//! an accept of everything (`--markers`), whose results the model predicts
//! too, so no acknowledged proposal and no decision can be lost unseen.
//!
//! Every change replaces a whole line at an even line number, so changes
//! to different lines never touch (git's merge would call touching changes
//! a conflict) and the model's merges are the implementation's.
//!
//! `MEND_PENDING_MODEL_RUNS` (default 2) and `MEND_PENDING_MODEL_OPS`
//! (operations per actor and run, default 25) set the size;
//! `MEND_PENDING_MODEL_SEED` replays a seed (the test prints its seed).

// The figures it prints are the run's report.
#![allow(clippy::print_stdout)]

use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, BufReader, Write as _};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::run_mend;

const FILES: [&str; 3] = ["a.txt", "b.txt", "c.txt"];
const LINES: usize = 9;
const SLOTS: [usize; 5] = [0, 2, 4, 6, 8];

pub(crate) fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A small xorshift generator: spread, not quality.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

/// A line no other line resembles, so no tolerant pass can match it.
fn line(tag: &str) -> String {
    let h = mend_workspace::ContentHash::of(tag.as_bytes()).hex();
    format!("{tag} {}", &h[..16])
}

fn original(f: usize, slot: usize) -> String {
    line(&format!("{}-{slot}", FILES[f]))
}

fn original_text(f: usize) -> String {
    (0..LINES).map(|j| original(f, j) + "\n").collect()
}

/// `text` with line `slot` replaced by `with`.
fn replaced(text: &str, slot: usize, with: &str) -> String {
    text.split_inclusive('\n')
        .enumerate()
        .map(|(i, l)| {
            if i == slot {
                format!("{with}\n")
            } else {
                l.to_owned()
            }
        })
        .collect()
}

/// The session's part for one file: its context and output.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
struct Entry {
    context: String,
    output: Option<String>,
}

/// The reference model: each file on disk and in the session, and what
/// each actor's streaming proposal read.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
struct Model {
    disk: Vec<String>,
    entries: Vec<Entry>,
    streamed: Vec<Option<String>>,
}

#[derive(Clone, Debug)]
enum Op {
    Propose {
        f: usize,
        slot: usize,
        token: String,
    },
    StreamRead {
        f: usize,
    },
    StreamHold {
        f: usize,
        slot: usize,
        token: String,
    },
    Accept {
        f: usize,
    },
    Reject {
        f: usize,
    },
    Sync {
        f: usize,
    },
    Local {
        f: usize,
        slot: usize,
        token: String,
    },
    Read {
        f: usize,
    },
    /// An accept, reject or sync refused because another actor's proposal
    /// was coming in: it changes nothing, and must have overlapped one
    /// ([`refusals_overlap_a_proposal`]).
    Busy(Box<Op>),
    Status,
    Final,
}

/// One operation as it ran: when, and what it answered.
#[derive(Clone, Debug)]
struct Event {
    op: Op,
    start: Duration,
    end: Duration,
    outcome: String,
}

/// Merged three ways as the session merges (labels and style included).
fn merge3(base: &str, ours: &str, theirs: &str) -> (String, usize) {
    let m = mend_merge::merge(
        base.as_bytes(),
        ours.as_bytes(),
        theirs.as_bytes(),
        &mend_merge::Options::default(),
    );
    let labels = mend_merge::Labels {
        ours: Some("local".into()),
        base: Some("context".into()),
        theirs: Some("proposal".into()),
    };
    let text = String::from_utf8(m.render(&labels, mend_merge::Style::Merge, 7)).unwrap();
    (text, m.conflicts())
}

impl Model {
    fn new() -> Model {
        let disk: Vec<String> = (0..FILES.len()).map(original_text).collect();
        let entries = disk
            .iter()
            .map(|d| Entry {
                context: d.clone(),
                output: None,
            })
            .collect();
        Model {
            disk,
            entries,
            streamed: vec![None; 3],
        }
    }

    fn view(&self, f: usize) -> &str {
        let e = &self.entries[f];
        e.output.as_deref().unwrap_or(&e.context)
    }

    fn letters(&self) -> String {
        let mut out = Vec::new();
        for (f, e) in self.entries.iter().enumerate() {
            let local = self.disk[f] != e.context;
            let letter = match (&e.output, local) {
                (None, false) => " ",
                (None, true) => "~",
                (Some(_), false) => "M",
                (Some(_), true) => "~M",
            };
            out.push(format!("{}:{letter}", FILES[f]));
        }
        out.join(",")
    }

    /// The next state and the outcome the model predicts for `op` by
    /// `actor`.
    fn step(&self, actor: usize, op: &Op) -> (Model, String) {
        let mut m = self.clone();
        let outcome = match op {
            Op::Propose { f, slot, token } => {
                let view = self.view(*f).to_owned();
                m.hold(*f, &view, *slot, token)
            }
            Op::StreamRead { f } => {
                m.streamed[actor] = Some(self.view(*f).to_owned());
                String::new()
            }
            Op::StreamHold { f, slot, token } => match m.streamed[actor].take() {
                Some(read) => m.hold(*f, &read, *slot, token),
                None => "unread".into(),
            },
            Op::Accept { f } => m.accept(*f, false),
            Op::Reject { f } => match m.entries[*f].output.take() {
                Some(_) => "rejected".into(),
                None => "refused:nothing".into(),
            },
            Op::Sync { f } => m.sync(*f),
            Op::Local { f, slot, token } => {
                m.disk[*f] = replaced(&self.disk[*f], *slot, token);
                "edited".into()
            }
            Op::Read { f } => match &self.entries[*f].output {
                Some(o) => format!("content:{o}"),
                None => {
                    m.entries[*f].context = self.disk[*f].clone();
                    format!("content:{}", self.disk[*f])
                }
            },
            Op::Busy(_) => "refused:busy".into(),
            Op::Status => self.letters(),
            Op::Final => {
                let letters = self.letters();
                for f in 0..FILES.len() {
                    m.accept(f, true);
                }
                format!("{letters}|{}", m.disk.concat())
            }
        };
        (m, outcome)
    }

    /// Holds a proposal planned against `read` (the view it read): the
    /// search must be in it, and where the view changed since, the output
    /// is merged onto the view as it is now.
    fn hold(&mut self, f: usize, read: &str, slot: usize, token: &str) -> String {
        if !read.contains(&format!("{}\n", original(f, slot))) {
            return "failed".into();
        }
        let planned = replaced(read, slot, token);
        let now = self.view(f).to_owned();
        let output = if now == read {
            planned
        } else {
            match merge3(read, &now, &planned) {
                (merged, 0) => merged,
                _ => return "failed".into(),
            }
        };
        self.entries[f].output = Some(output);
        "held".into()
    }

    fn accept(&mut self, f: usize, markers: bool) -> String {
        let e = self.entries[f].clone();
        let Some(output) = e.output else {
            return "refused:nothing".into();
        };
        let (text, how) = if self.disk[f] == e.context {
            (output, "written")
        } else {
            match merge3(&e.context, &self.disk[f], &output) {
                (merged, 0) => (merged, "merged"),
                (merged, _) if markers => (merged, "merged with conflict markers"),
                _ => return "refused:conflict".into(),
            }
        };
        self.disk[f] = text.clone();
        self.entries[f] = Entry {
            context: text,
            output: None,
        };
        format!("accepted {how}")
    }

    fn sync(&mut self, f: usize) -> String {
        let e = self.entries[f].clone();
        if self.disk[f] == e.context {
            return "synced".into();
        }
        let output = match &e.output {
            None => None,
            Some(o) => match merge3(&e.context, &self.disk[f], o) {
                (merged, 0) => Some(merged),
                _ => return "refused:unsyncable".into(),
            },
        };
        self.entries[f] = Entry {
            context: self.disk[f].clone(),
            output,
        };
        "synced".into()
    }
}

/// Searches for an order of the events, consistent with real time, in
/// which every outcome is the model's. Returns how far the deepest attempt
/// got (events placed) when there is none.
struct Checker<'h> {
    history: &'h [Vec<Event>],
    seen: HashSet<(Vec<usize>, Model)>,
    /// The most events any order placed, where it stopped, and the model
    /// there.
    deepest: (usize, Vec<usize>, Option<Model>),
}

impl Checker<'_> {
    fn linearize(&mut self, pos: &mut Vec<usize>, model: &Model) -> bool {
        let placed: usize = pos.iter().sum();
        if placed > self.deepest.0 {
            self.deepest = (placed, pos.clone(), Some(model.clone()));
        }
        let actors = 0..self.history.len();
        if actors.clone().all(|a| pos[a] == self.history[a].len()) {
            return true;
        }
        if !self.seen.insert((pos.clone(), model.clone())) {
            return false;
        }
        let history = self.history;
        let next: Vec<(usize, &Event)> = actors
            .filter_map(|a| history[a].get(pos[a]).map(|e| (a, e)))
            .collect();
        let first_end = next.iter().map(|(_, e)| e.end).min();
        for (a, e) in next {
            // An operation that ended before this one started comes first.
            if first_end.is_some_and(|end| end < e.start) {
                continue;
            }
            let (after, outcome) = model.step(a, &e.op);
            if outcome != e.outcome {
                continue;
            }
            pos[a] += 1;
            if self.linearize(pos, &after) {
                return true;
            }
            pos[a] -= 1;
        }
        false
    }
}

/// A `mend mcp --pending` server driven over stdio.
struct Mcp {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    id: u64,
}

impl Mcp {
    fn start(root: &Path) -> Mcp {
        let (mut child, input) = crate::pending::spawn(root, &["mcp", "--pending", "--root", "."]);
        let output = BufReader::new(child.stdout.take().unwrap());
        let mut mcp = Mcp {
            child,
            input,
            output,
            id: 0,
        };
        mcp.request(
            "initialize",
            &json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "pending-model", "version": "0"}}),
        );
        mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        mcp
    }

    fn send(&mut self, v: &Value) {
        writeln!(self.input, "{v}").unwrap();
        self.input.flush().unwrap();
    }

    fn request(&mut self, method: &str, params: &Value) -> Value {
        self.id += 1;
        let id = self.id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut l = String::new();
            assert!(
                self.output.read_line(&mut l).unwrap() > 0,
                "the server left"
            );
            let v: Value = serde_json::from_str(&l).unwrap();
            if v["id"] == id {
                return v["result"].clone();
            }
        }
    }

    fn call(&mut self, tool: &str, args: &Value) -> Value {
        self.request("tools/call", &json!({"name": tool, "arguments": args}))
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An actor's view of the run: the root, the clock, its events.
struct Actor {
    root: Arc<Path>,
    clock: Instant,
    events: Vec<Event>,
}

impl Actor {
    fn record(&mut self, op: Op, start: Duration, outcome: String) {
        let end = self.clock.elapsed();
        self.events.push(Event {
            op,
            start,
            end,
            outcome,
        });
    }

    fn sr(f: usize, slot: usize, token: &str) -> String {
        format!(
            "{}\n<<<<<<< SEARCH\n{}\n=======\n{token}\n>>>>>>> REPLACE\n",
            FILES[f],
            original(f, slot)
        )
    }

    /// `mend pending VERB FILE`, its outcome as the model names it.
    fn pending(&mut self, verb: &str, f: usize) -> String {
        let out = run_mend(&self.root, &["pending", verb, FILES[f]], None);
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        let how = said
            .split_once(" (")
            .map_or("?", |(_, h)| h.trim_end().trim_end_matches(')'));
        match (out.status.code(), verb) {
            (Some(0), "accept") => format!("accepted {how}"),
            (Some(0), "reject") => "rejected".into(),
            (Some(0), _) => "synced".into(),
            (Some(1), _) if said.contains("has no output") => "refused:nothing".into(),
            (Some(1), _) if said.contains("a request is streaming in") => "refused:busy".into(),
            (Some(1), "accept") if said.contains("overlap") => "refused:conflict".into(),
            (Some(1), "sync") if said.contains("nothing was synced") => "refused:unsyncable".into(),
            (code, _) => format!("{code:?}: {said}{}", String::from_utf8_lossy(&out.stderr)),
        }
    }

    fn propose(&mut self, f: usize, slot: usize, token: String) {
        let start = self.clock.elapsed();
        let input = Actor::sr(f, slot, &token);
        let out = run_mend(&self.root, &["apply", "--pending"], Some(input.as_bytes()));
        let outcome = proposal_outcome(out.status.code());
        self.record(Op::Propose { f, slot, token }, start, outcome);
    }

    /// A streamed proposal: its block, a pause while others act, the end
    /// of its input.
    fn stream(&mut self, f: usize, slot: usize, token: String, pause: u64) {
        let start = self.clock.elapsed();
        let (child, mut input) =
            crate::pending::spawn(&self.root, &["apply", "--pending", "--stream"]);
        // A mend that refuses at once reads none of it.
        let _ = input
            .write_all(Actor::sr(f, slot, &token).as_bytes())
            .and_then(|()| input.flush());
        std::thread::sleep(Duration::from_millis(pause));
        drop(input);
        let out = child.wait_with_output().unwrap();
        let outcome = proposal_outcome(out.status.code());
        // It read the session's view at some moment of its run, and held
        // the proposal at a later one.
        self.record(Op::StreamRead { f }, start, String::new());
        self.record(Op::StreamHold { f, slot, token }, start, outcome);
    }

    /// A person's edit: one line replaced, the file replaced whole (a
    /// temporary file renamed over it), under the workspace lock so it is
    /// one step against mend's writes.
    fn local(&mut self, f: usize, slot: usize, token: String) {
        let start = self.clock.elapsed();
        let ws = mend_workspace::Workspace::open(&self.root, Default::default()).unwrap();
        let lock = ws.lock().unwrap();
        let path = self.root.join(FILES[f]);
        let text = std::fs::read_to_string(&path).unwrap();
        let tmp = self.root.join(format!(".{}.tmp", FILES[f]));
        std::fs::write(&tmp, replaced(&text, slot, &token)).unwrap();
        std::fs::rename(&tmp, &path).unwrap();
        drop(lock);
        self.record(Op::Local { f, slot, token }, start, "edited".into());
    }

    fn status(&mut self) {
        let start = self.clock.elapsed();
        let out = run_mend(&self.root, &["pending", "status", "--json"], None);
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        self.record(Op::Status, start, letters_of(&v));
    }
}

/// `op`, or [`Op::Busy`] when it was refused for a proposal coming in.
fn busy_or(op: Op, outcome: &str) -> Op {
    if outcome == "refused:busy" {
        Op::Busy(Box::new(op))
    } else {
        op
    }
}

/// Every action refused as busy ran while another actor's proposal (CLI,
/// streamed or not, or MCP) was running: the request lock refuses nothing
/// else.
fn refusals_overlap_a_proposal(history: &[Vec<Event>]) -> usize {
    let mut refused = 0;
    for (a, events) in history.iter().enumerate() {
        for e in events {
            let Op::Busy(op) = &e.op else { continue };
            assert!(
                matches!(
                    **op,
                    Op::Accept { .. } | Op::Reject { .. } | Op::Sync { .. }
                ),
                "only actions are refused as busy: {e:?}"
            );
            refused += 1;
            let overlaps = history.iter().enumerate().any(|(b, others)| {
                b != a
                    && others.iter().any(|o| {
                        matches!(o.op, Op::Propose { .. } | Op::StreamHold { .. })
                            && o.start <= e.end
                            && e.start <= o.end
                    })
            });
            assert!(overlaps, "refused as busy with no proposal running: {e:?}");
        }
    }
    refused
}

fn proposal_outcome(code: Option<i32>) -> String {
    match code {
        Some(0) => "held".into(),
        Some(1) => "failed".into(),
        other => format!("error {other:?}"),
    }
}

fn letters_of(status: &Value) -> String {
    let files = status["files"].as_array().cloned().unwrap_or_default();
    let letters: Vec<String> = files
        .iter()
        .map(|f| {
            format!(
                "{}:{}",
                f["path"].as_str().unwrap_or("?"),
                f["status"].as_str().unwrap_or("?")
            )
        })
        .collect();
    letters.join(",")
}

/// A CLI actor: proposals (half of them streamed), accepts, rejects,
/// syncs, statuses and local edits, at random.
fn cli_actor(mut a: Actor, mut rng: Rng, ops: usize, tag: usize) -> Vec<Event> {
    for n in 0..ops {
        let (f, slot) = (rng.below(FILES.len()), SLOTS[rng.below(SLOTS.len())]);
        let token = line(&format!("T{tag}-{n}"));
        match rng.below(12) {
            0..=1 => a.propose(f, slot, token),
            2..=3 => {
                let pause = rng.below(40) as u64;
                a.stream(f, slot, token, pause);
            }
            4..=5 => {
                let start = a.clock.elapsed();
                let outcome = a.pending("accept", f);
                a.record(busy_or(Op::Accept { f }, &outcome), start, outcome);
            }
            6 => {
                let start = a.clock.elapsed();
                let outcome = a.pending("reject", f);
                a.record(busy_or(Op::Reject { f }, &outcome), start, outcome);
            }
            7..=8 => {
                let start = a.clock.elapsed();
                let outcome = a.pending("sync", f);
                a.record(busy_or(Op::Sync { f }, &outcome), start, outcome);
            }
            9..=10 => a.local(f, slot, token),
            _ => a.status(),
        }
        std::thread::sleep(Duration::from_millis(rng.below(8) as u64));
    }
    a.events
}

/// The MCP actor: `edit_file` proposals and `read_file` reads (which make
/// the file on disk the context of a file without an output).
fn mcp_actor(mut a: Actor, mut rng: Rng, ops: usize) -> Vec<Event> {
    let mut mcp = Mcp::start(&a.root);
    for n in 0..ops {
        let (f, slot) = (rng.below(FILES.len()), SLOTS[rng.below(SLOTS.len())]);
        let start = a.clock.elapsed();
        if rng.below(3) < 2 {
            let token = line(&format!("M-{n}"));
            let r = mcp.call(
                "edit_file",
                &json!({"path": FILES[f], "edits": [{"old_string": original(f, slot), "new_string": token}]}),
            );
            let outcome = if r["isError"] == true {
                "failed"
            } else {
                "held"
            };
            a.record(Op::Propose { f, slot, token }, start, outcome.into());
        } else {
            let r = mcp.call("read_file", &json!({"path": FILES[f]}));
            let outcome = match r["structuredContent"]["content"].as_str() {
                Some(c) => format!("content:{c}"),
                None => format!("error: {r}"),
            };
            a.record(Op::Read { f }, start, outcome);
        }
        std::thread::sleep(Duration::from_millis(rng.below(8) as u64));
    }
    a.events
}

/// One run: the three actors at once, then the final status and accept,
/// then the search for a linearization.
fn run(seed: u64, ops: usize) -> (usize, usize, usize) {
    let dir = tempfile::tempdir().unwrap();
    let root: Arc<Path> = Arc::from(dir.path());
    for (f, name) in FILES.iter().enumerate() {
        std::fs::write(root.join(name), original_text(f)).unwrap();
    }
    let mut add = vec!["pending", "add"];
    add.extend(FILES);
    assert!(run_mend(&root, &add, None).status.success());
    let clock = Instant::now();
    let actor = || Actor {
        root: root.clone(),
        clock,
        events: Vec::new(),
    };
    let rng = |k: u64| Rng((seed ^ (k + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)) | 1);
    let (a0, a1, a2) = (actor(), actor(), actor());
    let (r0, r1, r2) = (rng(0), rng(1), rng(2));
    let t0 = std::thread::spawn(move || cli_actor(a0, r0, ops, 0));
    let t1 = std::thread::spawn(move || cli_actor(a1, r1, ops, 1));
    let t2 = std::thread::spawn(move || mcp_actor(a2, r2, ops));
    let mut history = vec![t0.join().unwrap(), t1.join().unwrap(), t2.join().unwrap()];
    // The end: what the session holds and what accepting all of it
    // writes, observed with no one else acting.
    let start = clock.elapsed();
    let status = run_mend(&root, &["pending", "status", "--json"], None);
    let letters = letters_of(&serde_json::from_slice(&status.stdout).unwrap_or(Value::Null));
    let accept = run_mend(&root, &["pending", "accept", "--markers"], None);
    assert!(accept.status.success(), "{accept:?}");
    let disk: String = FILES
        .iter()
        .map(|f| std::fs::read_to_string(root.join(f)).unwrap())
        .collect();
    history[0].push(Event {
        op: Op::Final,
        start,
        end: clock.elapsed(),
        outcome: format!("{letters}|{disk}"),
    });
    let events: usize = history.iter().map(Vec::len).sum();
    let refused = refusals_overlap_a_proposal(&history);
    let mut checker = Checker {
        history: &history,
        seen: HashSet::new(),
        deepest: (0, vec![0; 3], None),
    };
    let found = checker.linearize(&mut vec![0; 3], &Model::new());
    assert!(
        found,
        "seed {seed}: no order of these {events} events gives the model's outcomes; {}\nthe events:\n{}",
        stuck(&history, &checker.deepest),
        describe(&history)
    );
    (events, checker.seen.len(), refused)
}

/// Where the deepest order stopped: the model there, and each actor's
/// next event with the outcome the model expected of it.
fn stuck(history: &[Vec<Event>], deepest: &(usize, Vec<usize>, Option<Model>)) -> String {
    let (placed, pos, model) = deepest;
    let Some(model) = model else {
        return String::new();
    };
    let mut out = format!("the deepest order placed {placed}, then:\n{model:#?}\n");
    for (a, es) in history.iter().enumerate() {
        if let Some(e) = es.get(pos[a]) {
            let (_, expected) = model.step(a, &e.op);
            out.push_str(&format!(
                "actor {a} next: {:?} [{:.1}..{:.1} ms] answered {:?}, the model expects {expected:?}\n",
                e.op,
                e.start.as_secs_f64() * 1e3,
                e.end.as_secs_f64() * 1e3,
                e.outcome
            ));
        }
    }
    out
}

fn describe(history: &[Vec<Event>]) -> String {
    let mut all: Vec<(usize, &Event)> = history
        .iter()
        .enumerate()
        .flat_map(|(a, es)| es.iter().map(move |e| (a, e)))
        .collect();
    all.sort_by_key(|(_, e)| e.start);
    let mut by_op: BTreeMap<(Duration, usize), String> = BTreeMap::new();
    for (n, (a, e)) in all.into_iter().enumerate() {
        let outcome: String = e.outcome.chars().take(120).collect();
        by_op.insert(
            (e.start, n),
            format!(
                "[{:>6.1}..{:>6.1} ms] actor {a}: {:?} -> {outcome:?}",
                e.start.as_secs_f64() * 1e3,
                e.end.as_secs_f64() * 1e3,
                e.op
            ),
        );
    }
    by_op.into_values().collect::<Vec<_>>().join("\n")
}

#[test]
fn three_actors_lose_no_decision_and_no_proposal() {
    let runs = env("MEND_PENDING_MODEL_RUNS", 2);
    let ops = env("MEND_PENDING_MODEL_OPS", 25) as usize;
    let seed = env(
        "MEND_PENDING_MODEL_SEED",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64),
    );
    println!("seed {seed} (MEND_PENDING_MODEL_SEED replays it)");
    let (mut events, mut states, mut refused) = (0, 0, 0);
    for r in 0..runs {
        let (e, s, b) = run(seed.wrapping_add(r), ops);
        events += e;
        states += s;
        refused += b;
    }
    println!(
        "{runs} run(s), {events} events ({refused} refused while a proposal came in), {states} model states searched"
    );
}
