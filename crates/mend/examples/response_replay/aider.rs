//! aider's own applier, for the responses aider refused: a virtualenv
//! under `target/response-replay/` (made once, reused) with `aider-chat`
//! from PyPI, and `aider_apply.py`, which hands each response to an aider
//! coder of the transcript's format as if the model had just sent it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::cases::{Case, read_tree, workspace_root, write_tree};
use crate::outcome::Tree;

/// The aider release the driver is written against: the newest that
/// installs on Python 3.10 to 3.12.
const AIDER: &str = "aider-chat==0.86.2";

const DRIVER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/examples/response_replay/aider_apply.py"
);

/// Long enough for a few hundred responses; a hung driver is stopped.
const TIMEOUT: Duration = Duration::from_secs(600);

/// What aider did with one response.
pub(crate) struct Applied {
    /// `applied`, `refused` or `error` (the driver could not run it).
    pub(crate) status: String,
    pub(crate) message: String,
    /// The tree aider left.
    pub(crate) after: Tree,
}

fn dir() -> PathBuf {
    workspace_root().join("target/response-replay")
}

fn run_quiet(cmd: &mut Command) -> Result<(), String> {
    let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let tail: Vec<&str> = err.lines().rev().take(5).collect();
    Err(format!(
        "{cmd:?} failed: {}",
        tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
    ))
}

/// A Python that aider supports (3.10 to 3.12).
fn python() -> Result<String, String> {
    let fits = "import sys; sys.exit(0 if (3, 10) <= sys.version_info[:2] < (3, 13) else 1)";
    ["python3.11", "python3.12", "python3.10", "python3"]
        .into_iter()
        .find(|p| {
            Command::new(p)
                .args(["-c", fits])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
        .map(str::to_owned)
        .ok_or("no Python 3.10 to 3.12 on PATH (aider supports no other)".into())
}

/// The virtualenv's Python with aider installed, making it on first use.
pub(crate) fn ensure() -> Result<PathBuf, String> {
    let venv = dir().join("aider-venv");
    let py = venv.join("bin/python");
    let has_aider = |py: &Path| {
        Command::new(py)
            .args(["-c", "import aider.coders"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if py.is_file() && has_aider(&py) {
        return Ok(py);
    }
    if !py.is_file() {
        let base = python()?;
        println!("aider: making a virtualenv at {} ...", venv.display());
        run_quiet(Command::new(&base).arg("-m").arg("venv").arg(&venv))?;
    }
    println!("aider: pip install {AIDER} (once; a few minutes) ...");
    run_quiet(
        Command::new(&py)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .arg(AIDER),
    )?;
    if !has_aider(&py) {
        return Err(format!(
            "{AIDER} installed, but `import aider.coders` fails"
        ));
    }
    Ok(py)
}

/// Applies each case's response with aider's applier for its format, in
/// one driver process; the cases' results by id.
pub(crate) fn apply(py: &Path, cases: &[&Case]) -> Result<BTreeMap<String, Applied>, String> {
    let work = tempfile::tempdir().map_err(|e| format!("temporary folder: {e}"))?;
    let mut jobs = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let root = work.path().join(format!("root{i}"));
        std::fs::create_dir_all(&root).map_err(|e| format!("{}: {e}", root.display()))?;
        write_tree(&root, &case.before)?;
        jobs.push(serde_json::json!({
            "id": case.id,
            "format": case.aider_format,
            "response": case.response_path(),
            "root": root,
            "files": case.paths,
        }));
    }
    let jobs_file = work.path().join("jobs.json");
    let out_file = work.path().join("out.jsonl");
    std::fs::write(&jobs_file, serde_json::Value::from(jobs).to_string())
        .map_err(|e| format!("{}: {e}", jobs_file.display()))?;
    let home = dir().join("aider-home");
    std::fs::create_dir_all(&home).map_err(|e| format!("{}: {e}", home.display()))?;
    let err_file = work.path().join("stderr.txt");
    let err =
        std::fs::File::create(&err_file).map_err(|e| format!("{}: {e}", err_file.display()))?;
    let mut child = Command::new(py)
        .arg(DRIVER)
        .arg(&jobs_file)
        .arg(&out_file)
        // aider keeps caches and analytics settings in the home folder.
        .env("HOME", &home)
        .stdout(Stdio::null())
        .stderr(err)
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", py.display()))?;
    wait(&mut child, &err_file)?;
    let text =
        std::fs::read_to_string(&out_file).map_err(|e| format!("{}: {e}", out_file.display()))?;
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let v: serde_json::Value =
            serde_json::from_str(line).map_err(|e| format!("aider driver said {line}: {e}"))?;
        let id = v["id"].as_str().unwrap_or_default().to_owned();
        let Some(i) = cases.iter().position(|c| c.id == id) else {
            continue;
        };
        let after = read_tree(&work.path().join(format!("root{i}")))?
            .into_iter()
            .filter(|(p, _)| !p.starts_with(".aider"))
            .collect();
        let field = |k: &str| v[k].as_str().unwrap_or_default().to_owned();
        let applied = Applied {
            status: field("status"),
            message: field("message"),
            after,
        };
        out.insert(id, applied);
    }
    Ok(out)
}

fn wait(child: &mut std::process::Child, err_file: &Path) -> Result<(), String> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            if status.success() {
                return Ok(());
            }
            let err = std::fs::read_to_string(err_file).unwrap_or_default();
            let tail: Vec<&str> = err.lines().rev().take(5).collect();
            return Err(format!(
                "the aider driver failed ({status}): {}",
                tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
            ));
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "the aider driver ran over {TIMEOUT:?} and was stopped"
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
