//! Concurrent-writer soak: a person's writes landing while mend writes
//! are never lost (issue 40).
//!
//! Each of `apply`, `pending accept`, `turn reject --hunk`, a whole-file
//! `turn reject` and `checkpoint restore` runs many times; each run races
//! two writers landing 0–12 ms after it starts, one after the other: an
//! `O_APPEND` append and a save by rename (the file read, a line added,
//! written aside and renamed over it, as editors save). Every line they
//! wrote must end in the file, or, for the commands that put back a whole
//! file, in the safety checkpoint the command names. A refusal must exit
//! 1 and an error never happens.
//!
//! Each scenario runs 8 times in every test run. The full soak sets the
//! runs per scenario with `MEND_RACES`, and runs the release build (or
//! any other, to measure one without the fix) with `MEND_RACES_BIN`:
//!
//! ```sh
//! cargo build --release -p mend
//! MEND_RACES=300 MEND_RACES_BIN=$PWD/target/release/mend \
//!   cargo test -p mend --test it races:: -- --nocapture --test-threads 1
//! ```

// The figures it prints are the soak's report.
#![allow(clippy::print_stdout)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::rng::Rng;
use crate::{git, mend_bin};

fn runs() -> usize {
    std::env::var("MEND_RACES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8)
}

fn bin() -> PathBuf {
    std::env::var_os("MEND_RACES_BIN").map_or_else(mend_bin, PathBuf::from)
}

/// A repository with `f.txt` (forty lines, so the agent's change at the
/// top and the person's lines at the bottom are separate hunks) and a
/// state folder for mend's per-user secret.
struct Root {
    dir: tempfile::TempDir,
    state: tempfile::TempDir,
}

const LINES: usize = 40;

fn start_text() -> String {
    (0..LINES).map(|i| format!("line {i}\n")).collect()
}

impl Root {
    fn new() -> Root {
        let dir = crate::support::repo(&[("f.txt", start_text())]);
        Root {
            dir,
            state: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn file(&self) -> PathBuf {
        self.path().join("f.txt")
    }

    fn read(&self) -> String {
        std::fs::read_to_string(self.file()).unwrap()
    }

    /// The agent's change: the first line rewritten (not raced).
    fn agent_edit(&self, k: usize) {
        let text = self.read();
        let rest = text.split_once('\n').map_or("", |(_, r)| r);
        std::fs::write(self.file(), format!("agent {k}\n{rest}")).unwrap();
    }

    fn mend(&self, args: &[&str]) -> Command {
        let mut c = Command::new(bin());
        c.args(args)
            .arg("--root")
            .arg(self.path())
            .env("MEND_STATE_DIR", self.state.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    }

    /// Runs a preparing command, which must succeed.
    fn must(&self, args: &[&str]) -> String {
        let out = self.mend(args).output().unwrap();
        assert!(
            out.status.success(),
            "mend {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

/// The person: an append at `append` and a save by rename at `save`
/// after `t0`, in that order or the other, each adding one line.
fn person(file: &Path, t0: Instant, k: usize, (append, save): (u64, u64)) {
    let mut steps = [(append, true), (save, false)];
    steps.sort();
    for (at, is_append) in steps {
        let due = t0 + Duration::from_millis(at);
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        if is_append {
            let mut f = std::fs::OpenOptions::new().append(true).open(file).unwrap();
            f.write_all(format!("appended {k}\n").as_bytes()).unwrap();
        } else {
            let mut text = std::fs::read(file).unwrap();
            text.extend_from_slice(format!("saved {k}\n").as_bytes());
            let aside = file.with_extension("txt~");
            std::fs::write(&aside, &text).unwrap();
            std::fs::rename(&aside, file).unwrap();
        }
    }
}

/// One timed command raced by the person.
fn race(root: &Root, args: &[&str], k: usize, rng: &mut Rng) -> Output {
    let when = (rng.below(13), rng.below(13));
    let file = root.file();
    let t0 = Instant::now();
    let child = root.mend(args).spawn().unwrap();
    let writer = std::thread::spawn(move || person(&file, t0, k, when));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

/// What a scenario's runs came to.
#[derive(Debug, Default)]
struct Tally {
    runs: usize,
    done: usize,
    refused: usize,
    changed: usize,
    held: usize,
    lost: Vec<String>,
}

impl Tally {
    /// Checks one run: its exit code, and where each of the person's lines
    /// is (the file, or with `safety`, the checkpoint the run names).
    fn count(&mut self, root: &Root, out: &Output, k: usize, safety: bool) {
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        match out.status.code() {
            Some(0) => self.done += 1,
            Some(1) => {
                self.refused += 1;
                let err = String::from_utf8_lossy(&out.stderr);
                let changed = [said.as_str(), &err].iter().any(|s| {
                    s.contains("changed while mend was writing") || s.contains("\"changed\"")
                });
                self.changed += usize::from(changed);
            }
            _ => panic!(
                "run {k} was neither done nor refused: {said}{}",
                String::from_utf8_lossy(&out.stderr)
            ),
        }
        self.runs += 1;
        let now = root.read();
        let held = (safety && out.status.success()).then(|| {
            let said: serde_json::Value = serde_json::from_str(&said).unwrap();
            let commit = said["safety"]["commit"].as_str().unwrap();
            git(root.path(), &["show", &format!("{commit}:f.txt")])
        });
        for line in [format!("appended {k}\n"), format!("saved {k}\n")] {
            if now.contains(&line) {
                continue;
            }
            match &held {
                Some(h) if h.contains(&line) => self.held += 1,
                _ => self
                    .lost
                    .push(format!("run {k}: {line:?} lost; mend said {said}")),
            }
        }
    }

    fn check(&self, name: &str) {
        println!(
            "{name}: {} runs, {} done, {} refused ({} as changed), {} of the person's lines held in a safety checkpoint, {} lost",
            self.runs,
            self.done,
            self.refused,
            self.changed,
            self.held,
            self.lost.len()
        );
        assert!(self.lost.is_empty(), "{name}: {:#?}", self.lost);
    }
}

fn response(from: &str, to: &str) -> String {
    crate::search_replace("f.txt", from, to)
}

#[test]
fn apply_keeps_every_write_that_lands_while_it_writes() {
    let root = Root::new();
    let (mut rng, mut tally) = (Rng::from_env("MEND_RACES_SEED", "apply"), Tally::default());
    let input = root.state.path().join("response.md");
    for k in 0..runs() {
        let first = root.read().lines().next().unwrap_or_default().to_owned();
        std::fs::write(&input, response(&first, &format!("agent {k}"))).unwrap();
        let out = race(
            &root,
            &["apply", "--json", input.to_str().unwrap()],
            k,
            &mut rng,
        );
        tally.count(&root, &out, k, false);
    }
    tally.check("apply");
}

#[test]
fn pending_accept_keeps_every_write_that_lands_while_it_writes() {
    let root = Root::new();
    let (mut rng, mut tally) = (
        Rng::from_env("MEND_RACES_SEED", "pending accept"),
        Tally::default(),
    );
    let input = root.state.path().join("response.md");
    for k in 0..runs() {
        let first = root.read().lines().next().unwrap_or_default().to_owned();
        std::fs::write(&input, response(&first, &format!("agent {k}"))).unwrap();
        // A session each, so a refused accept's proposal stays behind.
        let session = format!("s{k}");
        let input = input.to_str().unwrap();
        root.must(&["apply", "--pending", "--session", &session, input]);
        let args = ["pending", "--session", &session, "accept", "--json"];
        let out = race(&root, &args, k, &mut rng);
        tally.count(&root, &out, k, false);
    }
    tally.check("pending accept");
}

#[test]
fn turn_reject_of_a_hunk_keeps_every_write_that_lands_while_it_writes() {
    let root = Root::new();
    let (mut rng, mut tally) = (
        Rng::from_env("MEND_RACES_SEED", "turn reject --hunk"),
        Tally::default(),
    );
    for k in 0..runs() {
        root.must(&["turn", "begin"]);
        root.agent_edit(k);
        root.must(&["turn", "diff"]);
        let args = ["turn", "reject", "--json", "f.txt", "--hunk", "1"];
        let out = race(&root, &args, k, &mut rng);
        tally.count(&root, &out, k, false);
    }
    tally.check("turn reject --hunk");
}

#[test]
fn turn_reject_of_a_file_keeps_or_holds_every_write_that_lands_while_it_writes() {
    let root = Root::new();
    let (mut rng, mut tally) = (
        Rng::from_env("MEND_RACES_SEED", "turn reject"),
        Tally::default(),
    );
    for k in 0..runs() {
        root.must(&["turn", "begin"]);
        root.agent_edit(k);
        let out = race(&root, &["turn", "reject", "--json", "f.txt"], k, &mut rng);
        tally.count(&root, &out, k, true);
    }
    tally.check("turn reject");
}

#[test]
fn checkpoint_restore_keeps_or_holds_every_write_that_lands_while_it_writes() {
    let root = Root::new();
    let (mut rng, mut tally) = (
        Rng::from_env("MEND_RACES_SEED", "checkpoint restore"),
        Tally::default(),
    );
    let made = root.must(&["checkpoint", "create", "--json"]);
    let made: serde_json::Value = serde_json::from_str(&made).unwrap();
    let id = made["id"].as_str().unwrap().to_owned();
    for k in 0..runs() {
        root.agent_edit(k);
        let out = race(
            &root,
            &["checkpoint", "restore", "--json", &id],
            k,
            &mut rng,
        );
        tally.count(&root, &out, k, true);
    }
    tally.check("checkpoint restore");
}

/// The checkpoint refs in `d`'s repository, loose or packed.
fn checkpoint_refs(d: &Path) -> usize {
    let loose = std::fs::read_dir(d.join(".git/refs/mend/checkpoints")).map_or(0, Iterator::count);
    let packed = std::fs::read_to_string(d.join(".git/packed-refs")).unwrap_or_default();
    loose + packed.matches("refs/mend/checkpoints/").count()
}

/// Runs `args` and appends a line to `f.txt` the moment its safety
/// checkpoint exists: a write after the checkpoint, before the restore
/// writes. It must be in the file afterwards, the command refused.
fn raced_after_the_safety_checkpoint(root: &Root, args: &[&str]) -> (Output, String) {
    let before = checkpoint_refs(root.path());
    let child = root.mend(args).spawn().unwrap();
    let start = Instant::now();
    while checkpoint_refs(root.path()) == before {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no safety checkpoint"
        );
        std::hint::spin_loop();
    }
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(root.file())
        .unwrap();
    f.write_all(b"typed after the safety checkpoint\n").unwrap();
    let out = child.wait_with_output().unwrap();
    (out, root.read())
}

/// A restore that a write lands in after its safety checkpoint keeps the
/// write: refused when it lands before the restore writes, kept on top of
/// the restored file when after. Before issue 40 the restore had no
/// expectation and overwrote it, and the write was in no checkpoint.
#[test]
fn a_write_after_the_safety_checkpoint_is_never_lost() {
    for whole_reject in [true, false] {
        let root = Root::new();
        let made = root.must(&["checkpoint", "create", "--json"]);
        let id = serde_json::from_str::<serde_json::Value>(&made).unwrap()["id"]
            .as_str()
            .unwrap()
            .to_owned();
        for k in 0..3 {
            let args: Vec<&str> = if whole_reject {
                root.must(&["turn", "begin"]);
                root.agent_edit(k);
                vec!["turn", "reject", "--json", "f.txt"]
            } else {
                root.agent_edit(k);
                vec!["checkpoint", "restore", "--json", &id]
            };
            let (out, now) = raced_after_the_safety_checkpoint(&root, &args);
            assert!(matches!(out.status.code(), Some(0 | 1)), "{out:?}");
            if out.status.code() == Some(1) {
                let said: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
                assert_eq!(said["error"]["kind"], "changed", "{said}");
                assert_eq!(said["error"]["path"], "f.txt", "{said}");
            }
            assert!(
                now.contains("typed after the safety checkpoint\n"),
                "{args:?} lost a write: {now:?}; {out:?}"
            );
        }
    }
}
