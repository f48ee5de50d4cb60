//! The sandbox every attack runs in, and the checks made after each one.
//!
//! A sandbox is a temporary folder holding the project `root/`, a folder
//! `outside/` that mend must never touch, and `state/`, mend's per-user
//! state for this case (`MEND_STATE_DIR`). After setting up, a case calls
//! [`Sandbox::baseline`]; after its attack, the harness checks that
//! nothing outside the root changed, that no `.git` folder changed, that
//! no file a `.mend` held before changed (a journal may only be moved aside
//! whole), and that the CLI and an MCP session under the official Python
//! client still answer.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use mend_test_support::python;

/// The binary under attack: `MEND_BIN` when set (to run the suite against
/// another build, such as an older release), else this build's.
pub fn mend_bin() -> PathBuf {
    std::env::var_os("MEND_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(mend_test_support::mend_bin)
}

/// What a command did; `code` is `None` when it was killed at the timeout.
#[derive(Debug)]
pub struct Out {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Out {
    pub fn ok(&self) -> bool {
        self.code == Some(0)
    }
    pub fn all(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }
}

/// The probe file every case leaves in place, read back at the end.
pub const PROBE: &str = "probe.txt";
pub const PROBE_TEXT: &str = "probe\n";

pub struct Sandbox {
    _tmp: tempfile::TempDir,
    pub base: PathBuf,
    pub root: PathBuf,
    pub outside: PathBuf,
    state: PathBuf,
    before: RefCell<Option<State>>,
    /// The entries outside given an old access time at the baseline.
    aged: RefCell<Vec<PathBuf>>,
}

type Tree = BTreeMap<String, Entry>;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Entry {
    File(Vec<u8>),
    Link(PathBuf),
    /// A folder, with its modification time where that is compared
    /// (outside the root).
    Dir(Option<SystemTime>),
    Other,
}

/// The access time every entry outside is given at the baseline.
const AGED: Duration = Duration::from_secs(1_000_000);

#[derive(Debug)]
struct State {
    outside: Tree,
    gits: Tree,
    mends: Tree,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let root = base.join("root");
        let outside = base.join("outside");
        let state = base.join("state");
        for d in [&root, &outside, &state] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(root.join(PROBE), PROBE_TEXT).unwrap();
        std::fs::write(outside.join("secret.txt"), "outside\n").unwrap();
        Sandbox {
            _tmp: tmp,
            base,
            root,
            outside,
            state,
            before: RefCell::new(None),
            aged: RefCell::new(Vec::new()),
        }
    }

    /// Writes a file under the root (folders made as needed).
    pub fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) {
        let p = self.root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }

    pub fn read(&self, rel: &str) -> Option<Vec<u8>> {
        std::fs::read(self.root.join(rel)).ok()
    }

    pub fn exists(&self, rel: &str) -> bool {
        self.root.join(rel).symlink_metadata().is_ok()
    }

    pub fn symlink(&self, target: impl AsRef<Path>, rel: &str) {
        let p = self.root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(target, p).unwrap();
    }

    pub fn mkfifo(&self, rel: &str) {
        let p = self.root.join(rel);
        let ok = Command::new("mkfifo").arg(&p).status().unwrap();
        assert!(ok.success(), "mkfifo failed");
    }

    /// Records what must not change. Call after setting up.
    pub fn baseline(&self) {
        *self.before.borrow_mut() = Some(self.state());
        self.age_outside();
    }

    /// Every file and folder outside (the folder itself included) gets an
    /// access time far in the past.
    fn age_outside(&self) {
        let times = std::fs::FileTimes::new().set_accessed(UNIX_EPOCH + AGED);
        let all = entries(&self.outside);
        for p in &all {
            if let Ok(f) = std::fs::File::open(p) {
                f.set_times(times).unwrap();
            }
        }
        *self.aged.borrow_mut() = all;
    }

    /// The entries outside whose access time moved since the baseline,
    /// when this filesystem records reads at all. (What is new outside is
    /// reported by the comparison of trees.)
    fn read_outside(&self) -> Result<Vec<String>, String> {
        let probe = self.base.join("atime-probe");
        std::fs::write(&probe, "probe\n").unwrap();
        let f = std::fs::File::open(&probe).unwrap();
        f.set_times(std::fs::FileTimes::new().set_accessed(UNIX_EPOCH + AGED))
            .unwrap();
        std::fs::read(&probe).unwrap();
        if accessed(&probe) == Some(UNIX_EPOCH + AGED) {
            let _ = writeln!(
                std::io::stderr(),
                "note: this filesystem does not record reads; reads outside are not checked"
            );
            return Ok(Vec::new());
        }
        let mut read = Vec::new();
        access_times(&self.outside, &mut read);
        let aged = self.aged.borrow();
        Ok(read
            .into_iter()
            .filter(|(p, _)| aged.contains(p))
            .filter(|(_, t)| t.is_some_and(|t| t != UNIX_EPOCH + AGED))
            .map(|(p, _)| p.display().to_string())
            .collect())
    }

    fn state(&self) -> State {
        let mut outside = Tree::new();
        walk(&self.outside, &self.outside, &mut outside, &|_| true);
        // Made, renamed or removed in a folder outside: its time moved.
        for (rel, entry) in outside.iter_mut() {
            if let Entry::Dir(t) = entry {
                *t = std::fs::symlink_metadata(self.outside.join(rel))
                    .and_then(|m| m.modified())
                    .ok();
            }
        }
        let top = std::fs::metadata(&self.outside).and_then(|m| m.modified());
        outside.insert(String::new(), Entry::Dir(top.ok()));
        let mut all = Tree::new();
        walk(&self.root, &self.root, &mut all, &|_| true);
        // Every spelling a filesystem could take for the folder.
        let within = |name: &str, path: &str| {
            path.split('/').any(|c| {
                c.split(':')
                    .next()
                    .unwrap_or(c)
                    .trim_end_matches(['.', ' '])
                    .eq_ignore_ascii_case(name)
            })
        };
        let gits = all
            .iter()
            .filter(|(p, _)| within(".git", p) && !checkpoint_store(p))
            .map(|(p, e)| (p.clone(), e.clone()))
            .collect();
        let mends = all
            .iter()
            .filter(|(p, _)| within(".mend", p))
            .map(|(p, e)| (p.clone(), e.clone()))
            .collect();
        State {
            outside,
            gits,
            mends,
        }
    }

    /// The checks every case ends with.
    pub fn verify(&self) -> Result<(), String> {
        let before = self
            .before
            .borrow_mut()
            .take()
            .ok_or("the case never called baseline()")?;
        // Before the walk below, which reads everything.
        let read = self.read_outside()?;
        if !read.is_empty() {
            return Err(format!(
                "something outside the root was read:\n  {}",
                read.join("\n  ")
            ));
        }
        let after = self.state();
        if before.outside != after.outside {
            return Err(format!(
                "something outside the root changed:\n{}",
                changes(&before.outside, &after.outside)
            ));
        }
        if before.gits != after.gits {
            return Err(format!(
                "a .git folder changed:\n{}",
                changes(&before.gits, &after.gits)
            ));
        }
        for (path, entry) in &before.mends {
            // A lock file's bytes name its last holder, so they change.
            let kept = after.mends.get(path) == Some(entry)
                || (path.ends_with("/lock") && after.mends.contains_key(path))
                || (path.ends_with("journal.json")
                    && after
                        .mends
                        .iter()
                        .any(|(p, e)| p.contains("journal.unverified.") && e == entry));
            if !kept {
                return Err(format!("{path} in .mend changed or went"));
            }
        }
        self.cli_answers()?;
        self.mcp_answers()
    }

    fn cli_answers(&self) -> Result<(), String> {
        let out = self.mend(&["hash", "--root", &self.root_str(), PROBE], None);
        if !out.ok() || !out.stdout.starts_with("sha256:") || !out.stdout.contains(PROBE) {
            return Err(format!("the CLI no longer answers `hash`: {out:?}"));
        }
        Ok(())
    }

    fn mcp_answers(&self) -> Result<(), String> {
        let r = self.mcp(
            &[&self.root_str()],
            &serde_json::json!([[{"tool": "read_file", "args": {"path": PROBE}}]]),
        )?;
        let res = &r[0][0];
        if res["error"] != false || !res["text"].as_str().unwrap_or("").contains("probe\\n") {
            return Err(format!("an MCP session no longer answers read_file: {res}"));
        }
        Ok(())
    }

    pub fn root_str(&self) -> String {
        self.root.to_string_lossy().into_owned()
    }

    /// Runs mend with a 20-second limit.
    pub fn mend(&self, args: &[&str], stdin: Option<&[u8]>) -> Out {
        let mut cmd = Command::new(mend_bin());
        cmd.args(args).current_dir(&self.base);
        self.run(cmd, stdin, Duration::from_secs(20))
    }

    /// [`Sandbox::mend`] with extra environment variables.
    pub fn mend_env(&self, args: &[&str], env: &[(&str, &str)], stdin: Option<&[u8]>) -> Out {
        let mut cmd = Command::new(mend_bin());
        cmd.args(args).current_dir(&self.base);
        for (k, v) in env {
            cmd.env(k, v);
        }
        self.run(cmd, stdin, Duration::from_secs(20))
    }

    /// Starts mend with its standard input left open, for a case that acts
    /// while mend waits for it; [`Sandbox::finish`] feeds and closes it.
    pub fn start(&self, args: &[&str]) -> Child {
        let mut cmd = Command::new(mend_bin());
        cmd.args(args).current_dir(&self.base);
        self.spawn(cmd)
    }

    /// Writes `input` to a started mend, closes its standard input and
    /// waits for it (killed after 20 s).
    pub fn finish(&self, child: Child, input: &[u8]) -> Out {
        feed(child, input, Duration::from_secs(20))
    }

    /// `mend apply --root ROOT` with `edit` on standard input.
    pub fn apply(&self, extra: &[&str], edit: &str) -> Out {
        let root = self.root_str();
        let mut args = vec!["apply", "--root", root.as_str()];
        args.extend_from_slice(extra);
        self.mend(&args, Some(edit.as_bytes()))
    }

    fn run(&self, cmd: Command, stdin: Option<&[u8]>, limit: Duration) -> Out {
        feed(self.spawn(cmd), stdin.unwrap_or_default(), limit)
    }

    /// Starts `cmd` with this case's state folder, piped standard streams,
    /// and in its own process group, so a timeout kills what it started
    /// too (a server blocked on a FIFO would otherwise hold the pipes
    /// open).
    fn spawn(&self, mut cmd: Command) -> Child {
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        cmd.env("MEND_STATE_DIR", &self.state)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd.spawn().expect("spawn")
    }

    /// Runs MCP steps (see `tests/mcp/call.py`) against `mend mcp` serving
    /// `roots`; returns each step's results.
    pub fn mcp(&self, roots: &[&str], steps: &Value) -> Result<Vec<Vec<Value>>, String> {
        self.mcp_with(roots, &[], steps)
    }

    /// [`Sandbox::mcp`] with extra server arguments.
    pub fn mcp_with(
        &self,
        roots: &[&str],
        extra: &[&str],
        steps: &Value,
    ) -> Result<Vec<Vec<Value>>, String> {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/call.py");
        let mut cmd = Command::new(python());
        cmd.arg(script).arg(mend_bin()).arg(steps.to_string());
        for r in roots {
            cmd.args(["--root", r]);
        }
        cmd.args(extra).current_dir(&self.base);
        let out = self.run(cmd, None, Duration::from_secs(60));
        if !out.ok() {
            return Err(format!("the MCP session failed: {out:?}"));
        }
        let v: Value = serde_json::from_str(out.stdout.trim())
            .map_err(|e| format!("unreadable MCP output ({e}): {out:?}"))?;
        Ok(v["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_array().unwrap().clone())
            .collect())
    }

    /// One MCP call; its result.
    pub fn mcp_call(&self, tool: &str, args: &Value) -> Result<Value, String> {
        let steps = serde_json::json!([[{"tool": tool, "args": args}]]);
        Ok(self.mcp(&[&self.root_str()], &steps)?[0][0].clone())
    }

    /// Raw lines to `mend mcp`; standard input then closes. Returns the
    /// reply lines and whether the server exited within the limit.
    pub fn mcp_raw(&self, lines: &[&str]) -> (Vec<Value>, bool) {
        let mut cmd = Command::new(mend_bin());
        cmd.args(["mcp", "--root", &self.root_str()]);
        let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let out = self.run(cmd, Some(input.as_bytes()), Duration::from_secs(20));
        let replies = out
            .stdout
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        (replies, out.code.is_some())
    }

    pub fn git(&self, dir: &Path, args: &[&str]) {
        mend_test_support::git(dir, args);
    }
}

/// Writes `input` to `child`'s standard input and closes it, and waits for
/// the child, killing its process group past `limit`.
fn feed(mut child: Child, input: &[u8], limit: Duration) -> Out {
    let mut sin = child.stdin.take().unwrap();
    let data = input.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = sin.write_all(&data);
    });
    let o = drain(child.stdout.take().unwrap());
    let e = drain(child.stderr.take().unwrap());
    let start = Instant::now();
    let code = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s.code();
        }
        if start.elapsed() > limit {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .status();
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    drop(feeder);
    // A grandchild in another session (the MCP client starts its server
    // so) may outlive a kill and hold the pipes; what it wrote so far is
    // enough.
    let collect = |rx: std::sync::mpsc::Receiver<Vec<u8>>| {
        let bytes = rx.recv_timeout(Duration::from_secs(5)).unwrap_or_default();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    Out {
        code,
        stdout: collect(o),
        stderr: collect(e),
    }
}

/// Reads a pipe to its end on a thread; the bytes arrive on the channel.
fn drain(mut pipe: impl std::io::Read + Send + 'static) -> std::sync::mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = pipe.read_to_end(&mut b);
        let _ = tx.send(b);
    });
    rx
}

/// Checkpoints of a git root live in its object store and private refs;
/// everything else in `.git` must stay as it was.
fn checkpoint_store(p: &str) -> bool {
    ["/objects/", "/mend/", "/refs/mend-checkpoints/", "/logs/"]
        .iter()
        .any(|s| format!("/{p}").contains(s))
}

fn walk(base: &Path, dir: &Path, out: &mut Tree, keep: &dyn Fn(&str) -> bool) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        let rel = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
        if !keep(&rel) {
            continue;
        }
        let Ok(m) = p.symlink_metadata() else {
            continue;
        };
        let t = m.file_type();
        let entry = if t.is_symlink() {
            Entry::Link(std::fs::read_link(&p).unwrap_or_default())
        } else if t.is_dir() {
            walk(base, &p, out, keep);
            Entry::Dir(None)
        } else if t.is_file() {
            Entry::File(std::fs::read(&p).unwrap_or_default())
        } else {
            Entry::Other
        };
        out.insert(rel, entry);
    }
}

/// `dir` and every file and folder under it, links not followed.
fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        match e.file_type() {
            Ok(t) if t.is_dir() => out.extend(entries(&e.path())),
            Ok(t) if t.is_file() => out.push(e.path()),
            _ => {}
        }
    }
    out
}

/// The access time of `dir` and of everything under it, each folder's
/// taken before it is listed (listing moves it).
fn access_times(dir: &Path, out: &mut Vec<(PathBuf, Option<SystemTime>)>) {
    out.push((dir.to_path_buf(), accessed(dir)));
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        match e.file_type() {
            Ok(t) if t.is_dir() => access_times(&e.path(), out),
            Ok(t) if t.is_file() => out.push((e.path(), accessed(&e.path()))),
            _ => {}
        }
    }
}

fn accessed(p: &Path) -> Option<SystemTime> {
    std::fs::symlink_metadata(p).and_then(|m| m.accessed()).ok()
}

fn changes(a: &Tree, b: &Tree) -> String {
    let mut s = String::new();
    for (k, v) in a {
        match b.get(k) {
            None => s.push_str(&format!("  gone: {k}\n")),
            Some(w) if w != v => s.push_str(&format!("  changed: {k}\n")),
            _ => {}
        }
    }
    for k in b.keys().filter(|k| !a.contains_key(*k)) {
        s.push_str(&format!("  new: {k}\n"));
    }
    s
}
