//! `mend mcp` driven by the official Python MCP SDK client
//! (`tests/mcp/client.py`). The client runs from `MEND_MCP_PYTHON` when set
//! (`.ci/run` prepares a virtualenv), or from a virtualenv this test makes
//! under the target directory with `pip install mcp`.

use std::path::Path;
use std::process::Command;

use crate::{mend_bin, python};

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
