//! The built `mend` binary, and a Python with the MCP SDK for the tests
//! that drive `mend mcp` with the official client.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The folder cargo builds this profile into (`target/debug`): the test
/// binary runs from its `deps/` folder.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.parent()
        .and_then(Path::parent)
        .expect("a test binary under target/<profile>/deps")
        .to_path_buf()
}

/// Path of the built `mend` binary: `CARGO_BIN_EXE_mend` where cargo sets
/// it while running the test, else the binary beside the test's profile
/// folder (cargo builds it before any of mend's integration tests).
pub fn mend_bin() -> PathBuf {
    std::env::var_os("CARGO_BIN_EXE_mend").map_or_else(
        || profile_dir().join(format!("mend{}", std::env::consts::EXE_SUFFIX)),
        PathBuf::from,
    )
}

/// Runs `mend` with `args` in `cwd`, feeding `stdin`.
pub fn run_mend(cwd: &Path, args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(mend_bin())
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mend");
    {
        let mut sin = child.stdin.take().expect("stdin");
        if let Some(data) = stdin {
            // mend may exit (usage error) before reading its input.
            let _ = sin.write_all(data);
        }
    }
    child.wait_with_output().expect("wait for mend")
}

/// A Python with the official MCP SDK: `MEND_MCP_PYTHON` when set (`.ci/run`
/// prepares a virtualenv), or a virtualenv made once under `target/tmp`
/// with `pip install mcp`.
pub fn python() -> PathBuf {
    static READY: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    READY.get_or_init(make_python).clone()
}

fn make_python() -> PathBuf {
    if let Ok(p) = std::env::var("MEND_MCP_PYTHON") {
        return PathBuf::from(p);
    }
    let target = profile_dir().parent().map(Path::to_path_buf);
    let venv = target
        .unwrap_or_else(std::env::temp_dir)
        .join("tmp/mcp-venv");
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
