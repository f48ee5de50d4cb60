//! Running the real `mend apply` on a case: the release binary users run,
//! one process per call, timed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Instant, SystemTime};

use crate::cases::{Case, read_tree, write_tree};
use crate::outcome::Tree;

/// How mend is told to read the response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Mode {
    /// `--format auto`.
    Auto,
    /// The format the transcript names.
    Named,
}

impl Mode {
    pub(crate) const ALL: [Mode; 2] = [Mode::Auto, Mode::Named];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Mode::Auto => "auto",
            Mode::Named => "named format",
        }
    }

    /// The `--format` value for `case` in this mode; `None` when the
    /// transcript names no format mend reads (then only `auto` runs).
    pub(crate) fn format(self, case: &Case) -> Option<&'static str> {
        match self {
            Mode::Auto => Some("auto"),
            Mode::Named => mend_format(&case.aider_format),
        }
    }
}

/// mend's format for aider's edit format.
pub(crate) fn mend_format(aider: &str) -> Option<&'static str> {
    Some(match aider {
        "diff" | "diff-fenced" | "editor-diff" | "editor-diff-fenced" => "search-replace",
        "whole" | "editor-whole" => "whole-file",
        "udiff" | "udiff-simple" => "unified-diff",
        "patch" => "apply-patch",
        _ => return None,
    })
}

/// What one call did.
pub(crate) struct Call {
    pub(crate) exit_ok: bool,
    /// The process's exit code (`None` when killed by a signal).
    pub(crate) code: Option<i32>,
    pub(crate) millis: f64,
    /// The tree mend left, its `.mend/` left out.
    pub(crate) after: Tree,
    /// The first line of mend's failure, as it reported it.
    pub(crate) failure: String,
    /// The edit path that failure names (to fold it out of the triage).
    pub(crate) failure_path: String,
}

/// The release binary beside this example's own executable
/// (`target/release/examples/` → `target/release/mend`), checked to be
/// built from this checkout's current sources.
pub(crate) fn mend_binary() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this example: {e}"))?;
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .ok_or("this example is not under target/<profile>/examples")?;
    let bin = dir.join("mend");
    let build = "build it first: cargo build --release -p mend";
    let built = std::fs::metadata(&bin)
        .and_then(|m| m.modified())
        .map_err(|_| format!("{} is missing; {build}", bin.display()))?;
    if let Some(why) = stale(&dir.join("mend.d"), built) {
        return Err(format!("{} is out of date ({why}); {build}", bin.display()));
    }
    Ok(bin)
}

/// Why the binary built at `built` is older than its sources, from the
/// dep-info file cargo writes beside it (every source file it was built
/// from, those of the workspace crates it links included).
fn stale(dep_info: &Path, built: SystemTime) -> Option<String> {
    let text = std::fs::read_to_string(dep_info).ok()?;
    let first = text.lines().next()?;
    let deps = first.split_once(": ")?.1.replace("\\ ", "\u{0}");
    let root = crate::cases::workspace_root();
    for dep in deps.split(' ').filter(|d| !d.is_empty()) {
        let dep = PathBuf::from(dep.replace('\u{0}', " "));
        if !dep.starts_with(&root) {
            return Some(format!("built from another checkout: {}", dep.display()));
        }
        match std::fs::metadata(&dep).and_then(|m| m.modified()) {
            Ok(t) if t > built => {
                return Some(format!("{} changed since", dep.display()));
            }
            Ok(_) => {}
            Err(_) => return Some(format!("{} is gone", dep.display())),
        }
    }
    None
}

/// Applies the case's response with `mend apply --format FORMAT --json`
/// to a fresh copy of its `before/` tree, with `state` as mend's per-user
/// state folder.
pub(crate) fn call(mend: &Path, state: &Path, case: &Case, format: &str) -> Result<Call, String> {
    let root = tempfile::tempdir().map_err(|e| format!("temporary folder: {e}"))?;
    write_tree(root.path(), &case.before)?;
    let mut cmd = Command::new(mend);
    cmd.arg("apply")
        .arg("--root")
        .arg(root.path())
        .arg("--format")
        .arg(format)
        .arg("--json")
        .arg(case.response_path())
        .env("MEND_STATE_DIR", state);
    let start = Instant::now();
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {}: {e}", mend.display()))?;
    let millis = start.elapsed().as_secs_f64() * 1000.0;
    let (failure, failure_path) = failure(&out.stdout, &out.stderr);
    Ok(Call {
        exit_ok: out.status.success(),
        code: out.status.code(),
        millis,
        after: read_tree(root.path())?,
        failure,
        failure_path,
    })
}

/// The first line of what mend said went wrong, and the path it names:
/// the response-wide error, else the first edit that did not apply.
fn failure(stdout: &[u8], stderr: &[u8]) -> (String, String) {
    let first = |s: &str| s.lines().next().unwrap_or_default().to_owned();
    let Ok(report) = serde_json::from_slice::<serde_json::Value>(stdout) else {
        return (first(&String::from_utf8_lossy(stderr)), String::new());
    };
    if let Some(e) = report["error"].as_str() {
        return (first(e), String::new());
    }
    let edits = report["edits"].as_array().map_or(&[][..], Vec::as_slice);
    for e in edits {
        if let Some(m) = e["failure"]["message"].as_str() {
            let path = e["path"].as_str().unwrap_or_default().to_owned();
            return (first(m), path);
        }
    }
    (String::new(), String::new())
}

/// What `mend apply` prints for the case in `format`, for `--show`: its
/// text report, run again on a fresh copy.
pub(crate) fn text_report(mend: &Path, state: &Path, case: &Case, format: &str) -> String {
    let Ok(root) = tempfile::tempdir() else {
        return "(no temporary folder)".into();
    };
    if let Err(e) = write_tree(root.path(), &case.before) {
        return e;
    }
    let out = Command::new(mend)
        .arg("apply")
        .arg("--root")
        .arg(root.path())
        .arg("--format")
        .arg(format)
        .arg(case.response_path())
        .env("MEND_STATE_DIR", state)
        .output();
    match out {
        Ok(o) => format!(
            "exit {}\n{}{}",
            o.status
                .code()
                .map_or("by signal".into(), |c| c.to_string()),
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => format!("cannot run {}: {e}", mend.display()),
    }
}
