//! Long-running `mend` processes driven from a test or a benchmark: `mend
//! mcp` spoken to line by line (JSON-RPC, without the Python SDK, so a
//! test can change files between calls and time a round trip), and `mend
//! daemon` started and stopped.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

use crate::bin::{mend_bin, run_mend};

/// A `mend mcp` server on a root, initialized.
pub struct Mcp {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    next: u64,
}

impl Mcp {
    /// Starts `mend mcp --root ROOT EXTRA…` and initializes the session.
    pub fn start(root: &Path, extra: &[&str]) -> Mcp {
        let mut child = Command::new(mend_bin())
            .arg("mcp")
            .arg("--root")
            .arg(root)
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn mend mcp");
        let input = child.stdin.take().expect("stdin");
        let output = BufReader::new(child.stdout.take().expect("stdout"));
        let mut mcp = Mcp {
            child,
            input,
            output,
            next: 0,
        };
        mcp.request(
            "initialize",
            &json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "mend-test", "version": "1"}}),
        );
        mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        mcp
    }

    fn send(&mut self, msg: &Value) {
        writeln!(self.input, "{msg}").expect("write to mend mcp");
        self.input.flush().expect("flush to mend mcp");
    }

    /// Sends a request and returns its answer's `result`.
    pub fn request(&mut self, method: &str, params: &Value) -> Value {
        self.next += 1;
        let id = self.next;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            let n = self.output.read_line(&mut line).expect("read mend mcp");
            assert!(n > 0, "mend mcp closed its output");
            let v: Value = serde_json::from_str(&line).expect("a JSON-RPC message");
            if v["id"] == json!(id) {
                assert!(v.get("error").is_none(), "{method}: {v}");
                return v["result"].clone();
            }
        }
    }

    /// Calls a tool; returns its structured content, failing the test if
    /// the call failed.
    pub fn call(&mut self, tool: &str, args: &Value) -> Value {
        let r = self.request("tools/call", &json!({"name": tool, "arguments": args}));
        assert_eq!(r["isError"], json!(false), "{tool}: {r}");
        r["structuredContent"].clone()
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        // Closing its input ends the server.
        let _ = self.input.flush();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A `mend daemon` serving a root; killed when dropped if still running.
pub struct Daemon {
    child: Child,
}

impl Daemon {
    /// Starts `mend daemon --root ROOT` and waits until it answers.
    pub fn start(root: &Path) -> Daemon {
        let child = Command::new(mend_bin())
            .args(["daemon", "--root"])
            .arg(root)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn mend daemon");
        let mut daemon = Daemon { child };
        for _ in 0..1000 {
            if run_mend(root, &["daemon", "status"], None).status.success() {
                return daemon;
            }
            if let Ok(Some(status)) = daemon.child.try_wait() {
                panic!("mend daemon exited at start: {status}");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        panic!("mend daemon did not answer within 20 s");
    }

    /// The daemon's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Kills it (SIGKILL), leaving its socket behind, as a crash would.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Its exit status if it has ended, without waiting.
    pub fn ended(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().expect("poll mend daemon")
    }

    /// Waits for it to end (after `mend daemon stop`); its exit status.
    pub fn wait(&mut self) -> std::process::ExitStatus {
        self.child.wait().expect("wait for mend daemon")
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.kill();
    }
}
