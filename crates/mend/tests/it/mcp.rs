//! `mend mcp` driven by the official Python MCP SDK client
//! (`tests/mcp/client.py`). The client runs from `MEND_MCP_PYTHON` when set
//! (`.ci/run` prepares a virtualenv), or from a virtualenv this test makes
//! under the target directory with `pip install mcp`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::mend_bin;

fn python() -> PathBuf {
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

#[test]
fn python_sdk_client_drives_every_tool() {
    let work = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py");
    let out = Command::new(python())
        .arg(&script)
        .arg(mend_bin())
        .arg(work.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains(" passed, 0 failed"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The server's logs went to stderr; stdout of the server carried only
    // protocol messages, or the client could not have parsed them.
    let passed: usize = stdout
        .lines()
        .find_map(|l| l.strip_prefix("mcp: "))
        .and_then(|l| l.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(passed >= 28, "{stdout}");
}
