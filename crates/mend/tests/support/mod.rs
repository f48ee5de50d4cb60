//! Helpers shared by the integration test binaries: running the built
//! binary, git with a throwaway identity, and whole trees as bytes.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Path of the built `mend` binary.
pub fn mend_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_mend"))
}

/// A temporary tree holding `files` (path, content), folders made as
/// needed.
pub fn tree<C: AsRef<[u8]>>(files: &[(&str, C)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (p, c) in files {
        let path = dir.path().join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, c).unwrap();
    }
    dir
}

/// Runs `mend` with `args` in `cwd`, feeding `stdin`.
pub fn run_mend(cwd: &Path, args: &[&str], stdin: Option<&[u8]>) -> Output {
    use std::io::Write;
    let mut cmd = Command::new(mend_bin());
    cmd.args(args).current_dir(cwd);
    cmd.stdin(std::process::Stdio::piped());
    cmd.stdout(std::process::Stdio::piped());
    cmd.stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().expect("spawn mend");
    {
        let mut sin = child.stdin.take().expect("stdin");
        if let Some(data) = stdin {
            // mend may exit (usage error) before reading its input.
            let _ = sin.write_all(data);
        }
    }
    child.wait_with_output().expect("wait for mend")
}

/// Runs git in `dir` with a throwaway identity; panics on failure and
/// returns its standard output.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Every file under `root` (relative path → bytes), sorted; mend's own
/// `.mend/` bookkeeping is left out.
pub fn read_tree(root: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n == ".mend") {
                    continue;
                }
                walk(base, &p, out);
            } else {
                let rel = p
                    .strip_prefix(base)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out.sort();
    out
}

/// Copies a directory tree.
pub fn copy_tree(from: &Path, to: &Path) {
    for (rel, bytes) in read_tree(from) {
        let dest = to.join(&rel);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::write(dest, bytes).unwrap();
    }
}

/// A Python with the official MCP SDK: `MEND_MCP_PYTHON` when set (`.ci/run`
/// prepares a virtualenv), or a virtualenv made once under the target
/// directory with `pip install mcp`.
pub fn python() -> PathBuf {
    static READY: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    READY.get_or_init(make_python).clone()
}

fn make_python() -> PathBuf {
    if let Ok(p) = std::env::var("MEND_MCP_PYTHON") {
        return PathBuf::from(p);
    }
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mcp-venv");
    let py = venv.join("bin/python");
    let ready = Command::new(&py)
        .args(["-c", "import mcp"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ready {
        let made = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status();
        assert!(
            made.is_ok_and(|s| s.success()),
            "python3 -m venv failed: the MCP tests need Python 3"
        );
        let installed = Command::new(&py)
            .args(["-m", "pip", "install", "--quiet", "mcp"])
            .status();
        assert!(
            installed.is_ok_and(|s| s.success()),
            "pip install mcp failed"
        );
    }
    py
}
