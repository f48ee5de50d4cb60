//! Crash soak: SIGKILLs `mend` at random moments of a 50-file apply, a
//! single-file apply and a checkpoint restore, then runs `mend recover`
//! and checks that every file is all-old or all-new, nothing is left in
//! the worktree, and the root still works.
//!
//! Each scenario runs 25 kills in every test run (a few seconds). The full
//! soak (about ten minutes in a release build) sets the kills per scenario
//! with `MEND_SOAK_KILLS`:
//!
//! ```sh
//! MEND_SOAK_KILLS=1000 cargo test --release -p mend --test it soak:: -- --nocapture --test-threads 1
//! ```

// The figures it prints are the soak's report.
#![allow(clippy::print_stdout)]

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::rng::Rng;
use crate::{git, mend_bin};

fn kills() -> usize {
    std::env::var("MEND_SOAK_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(25)
}

fn mend(root: &Path, state: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(mend_bin());
    c.args(args)
        .arg("--root")
        .arg(root)
        .env("MEND_STATE_DIR", state)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    c
}

/// Runs `mend recover` and returns what it did.
fn finish(root: &Path, state: &Path, tally: &mut Tally) {
    let out = mend(root, state, &["recover"])
        .stdout(Stdio::piped())
        .output()
        .unwrap();
    assert!(out.status.success(), "mend recover failed after a kill");
    let said = String::from_utf8_lossy(&out.stdout);
    if said.contains("rolled back") {
        tally.rolled_back += 1;
    } else if said.contains("completed") {
        tally.completed += 1;
    }
}

/// How a run ended, as seen from the files.
#[derive(Debug, Default)]
struct Tally {
    kills: usize,
    old: usize,
    new: usize,
    /// Kills that left a journal: recovery rolled it back or forward.
    rolled_back: usize,
    completed: usize,
}

impl Tally {
    fn print(&self, name: &str) {
        println!(
            "{name}: {} kills, {} left all-old, {} all-new, 0 torn; recovery rolled back {} and completed {}",
            self.kills, self.old, self.new, self.rolled_back, self.completed
        );
    }
}

/// Kills `child` after `delay`, or lets it finish first.
fn kill_after(mut child: Child, delay: Duration) {
    std::thread::sleep(delay);
    let _ = child.kill();
    let _ = child.wait();
}

/// The median time of a run that is not killed.
fn baseline(run: &dyn Fn() -> Child, reset: &dyn Fn()) -> Duration {
    let mut times: Vec<Duration> = (0..5)
        .map(|_| {
            reset();
            let start = Instant::now();
            assert!(run().wait().unwrap().success());
            start.elapsed()
        })
        .collect();
    times.sort();
    times[2]
}

/// Files `f0..n` all holding `old`'s or all `new`'s content; panics on a
/// mix (a torn state) and returns whether they are new.
fn all_one_way(
    root: &Path,
    n: usize,
    old: &dyn Fn(usize) -> String,
    new: &dyn Fn(usize) -> String,
) -> bool {
    let now: Vec<String> = (0..n)
        .map(|i| std::fs::read_to_string(root.join(format!("f{i}.txt"))).unwrap_or_default())
        .collect();
    let is_old = now.iter().enumerate().all(|(i, c)| *c == old(i));
    let is_new = now.iter().enumerate().all(|(i, c)| *c == new(i));
    assert!(is_old || is_new, "torn state: {now:?}");
    is_new
}

/// No temporary file or journal is left where a user would see it.
fn nothing_left(root: &Path) {
    for e in std::fs::read_dir(root).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        assert!(!name.starts_with(".mend-"), "stray temporary file {name}");
    }
    assert!(
        !root.join(".mend/journal.json").exists(),
        "journal left behind"
    );
}

/// One scenario: the root, how to put the files back before a run, the
/// run, and the contents before and after it.
struct Scenario<'a> {
    name: &'a str,
    root: &'a Path,
    state: &'a Path,
    files: usize,
    reset: &'a dyn Fn(),
    run: &'a dyn Fn() -> Child,
    before: &'a dyn Fn(usize) -> String,
    after: &'a dyn Fn(usize) -> String,
}

impl Scenario<'_> {
    /// Kills the run at a random moment `kills()` times; after each kill,
    /// recovers and checks that the files are all-before or all-after,
    /// nothing is left in the worktree, and (every 100 kills and at the end) that the
    /// root still takes a checkpoint. The kill window is re-measured every
    /// 100 kills, as a restore slows while safety checkpoints pile up.
    fn soak(&self) {
        let mut rng = Rng::from_env("MEND_SOAK_SEED", "soak");
        let mut tally = Tally::default();
        let mut window = 0;
        for k in 0..kills() {
            if k % 100 == 0 {
                let typical = baseline(self.run, self.reset);
                window = typical.as_micros() as u64 * 13 / 10;
                if k == 0 {
                    println!("{}: an unkilled run takes {typical:?}", self.name);
                }
            }
            (self.reset)();
            kill_after((self.run)(), Duration::from_micros(rng.below(window)));
            finish(self.root, self.state, &mut tally);
            tally.kills += 1;
            if all_one_way(self.root, self.files, self.before, self.after) {
                tally.new += 1;
            } else {
                tally.old += 1;
            }
            nothing_left(self.root);
            if k % 100 == 99 || k + 1 == kills() {
                let ok = mend(self.root, self.state, &["checkpoint", "create"])
                    .status()
                    .unwrap();
                assert!(ok.success(), "checkpoint create failed after {k} kills");
            }
        }
        tally.print(self.name);
    }
}

fn folders() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let (root, state) = (dir.path().join("root"), dir.path().join("state"));
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&state).unwrap();
    (dir, root, state)
}

fn soak_apply(name: &str, files: usize) {
    let (dir, root, state) = folders();
    let old = |i: usize| format!("def f{i}():\n    return {i}\n");
    let new = |i: usize| format!("def f{i}():\n    return {i} + 1\n");
    let edit: String = (0..files)
        .map(|i| {
            format!(
                "f{i}.txt\n<<<<<<< SEARCH\n    return {i}\n=======\n    return {i} + 1\n>>>>>>> REPLACE\n\n"
            )
        })
        .collect();
    let edit_path = dir.path().join("edit.txt");
    std::fs::write(&edit_path, edit).unwrap();
    let reset = || {
        for i in 0..files {
            std::fs::write(root.join(format!("f{i}.txt")), old(i)).unwrap();
        }
    };
    let run = || {
        mend(&root, &state, &["apply", edit_path.to_str().unwrap()])
            .spawn()
            .unwrap()
    };
    Scenario {
        name,
        root: &root,
        state: &state,
        files,
        reset: &reset,
        run: &run,
        before: &old,
        after: &new,
    }
    .soak();
}

#[test]
fn soak_50_file_apply() {
    soak_apply("50-file apply", 50);
}

#[test]
fn soak_single_file_apply() {
    soak_apply("single-file apply", 1);
}

#[test]
fn soak_checkpoint_restore() {
    let files = 50;
    let checkpointed = |i: usize| format!("checkpointed {i}\n");
    let changed = |i: usize| format!("changed since {i}\n");
    let (_dir, root, state) = folders();
    git(&root, &["init", "-q", "."]);
    for i in 0..files {
        std::fs::write(root.join(format!("f{i}.txt")), checkpointed(i)).unwrap();
    }
    let out = mend(&root, &state, &["checkpoint", "create", "--json"])
        .stdout(Stdio::piped())
        .output()
        .unwrap();
    let cp: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = cp["id"].as_str().unwrap().to_owned();
    let reset = || {
        for i in 0..files {
            std::fs::write(root.join(format!("f{i}.txt")), changed(i)).unwrap();
        }
    };
    let run = || {
        mend(&root, &state, &["checkpoint", "restore", &id])
            .spawn()
            .unwrap()
    };
    Scenario {
        name: "checkpoint restore",
        root: &root,
        state: &state,
        files,
        reset: &reset,
        run: &run,
        before: &changed,
        after: &checkpointed,
    }
    .soak();
}
