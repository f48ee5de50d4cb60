//! A test client for `mend editor`: LSP framing over the child's stdio,
//! read into plain JSON so that any reply, an error with a `null` id
//! included, can be checked, with notifications queued as they arrive.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Long enough for a loaded CI machine; answers normally take milliseconds.
pub const PATIENCE: Duration = Duration::from_secs(15);

/// A notification from the server.
#[derive(Debug, Clone)]
pub struct Notification {
    pub method: String,
    pub params: Value,
}

pub struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    incoming: Receiver<Value>,
    next_id: i64,
    /// Notifications received while waiting for a response.
    pub queued: Vec<Notification>,
    /// Error replies to frames that were not requests (`null` id).
    unanswered: Vec<(i64, String)>,
    /// Replies to requests sent with [`Client::send_request`], by id,
    /// received while waiting for another.
    replies: std::collections::HashMap<i64, Value>,
}

/// One frame's JSON, or `None` at the end of the output.
fn read_frame(r: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length: ") {
            length = v.parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    r.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

impl Client {
    /// Starts `mend editor` in `root` and initializes it. `MEND_BIN` runs
    /// another build (an older one, to see a test fail before its fix).
    pub fn start(root: &Path) -> Client {
        Client::start_with(root, json!({}))
    }

    /// Starts a server in `root` and initializes it with `init`.
    pub fn start_with(root: &Path, init: Value) -> Client {
        let bin = std::env::var_os("MEND_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_mend").into());
        let mut child = Command::new(bin)
            .arg("editor")
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("mend editor starts");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (tx, incoming) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            while let Some(m) = read_frame(&mut r) {
                if tx.send(m).is_err() {
                    break;
                }
            }
        });
        let mut c = Client {
            child,
            stdin,
            incoming,
            next_id: 0,
            queued: Vec::new(),
            unanswered: Vec::new(),
            replies: Default::default(),
        };
        c.request("initialize", init).expect("initialize");
        c
    }

    fn input(&mut self) -> &mut ChildStdin {
        self.stdin.as_mut().expect("the input is open")
    }

    fn send(&mut self, msg: &Value) {
        let body = msg.to_string();
        let framed = format!("Content-Length: {}\r\n\r\n{body}", body.len());
        self.send_raw(framed.as_bytes());
    }

    /// Sends a JSON-RPC notification: no id, so no response comes.
    pub fn notify(&mut self, method: &str, params: &Value) {
        self.send(&serde_json::json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Writes bytes to the server as they are, framing or not.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.input().write_all(bytes).expect("write");
        self.input().flush().expect("flush");
    }

    /// Sends a request and waits for its response: the result, or the
    /// error's code and message.
    pub fn request(&mut self, method: &str, params: Value) -> Result<Value, (i32, String)> {
        let id = self.send_request(method, params);
        let m = self
            .reply_within(id, PATIENCE)
            .unwrap_or_else(|| panic!("no response to {method}"));
        match m.get("error") {
            Some(e) => Err((
                e["code"].as_i64().unwrap_or(0) as i32,
                e["message"].as_str().unwrap_or_default().to_owned(),
            )),
            None => Ok(m["result"].clone()),
        }
    }

    /// Sends a request without waiting for its response; returns its id.
    pub fn send_request(&mut self, method: &str, params: Value) -> i64 {
        self.next_id += 1;
        let id = self.next_id;
        let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
        msg["params"] = params;
        self.send(&msg);
        id
    }

    /// The whole response to request `id`, waiting up to `wait`;
    /// notifications that come meanwhile are queued.
    pub fn reply_within(&mut self, id: i64, wait: Duration) -> Option<Value> {
        if let Some(m) = self.replies.remove(&id) {
            return Some(m);
        }
        let deadline = Instant::now() + wait;
        loop {
            let m = self.recv(deadline)?;
            if let Some(method) = m["method"].as_str() {
                self.queued.push(Notification {
                    method: method.to_owned(),
                    params: m["params"].clone(),
                });
            } else if m["id"] == json!(id) {
                return Some(m);
            } else if let Some(other) = m["id"].as_i64() {
                self.replies.insert(other, m);
            } else if let Some(e) = m.get("error") {
                let code = e["code"].as_i64().unwrap_or(0);
                let msg = e["message"].as_str().unwrap_or_default().to_owned();
                self.unanswered.push((code, msg));
            }
        }
    }

    /// The error replies to frames that were not requests, since the last
    /// call.
    pub fn errors(&mut self) -> Vec<(i64, String)> {
        std::mem::take(&mut self.unanswered)
    }

    /// The next notification, waiting up to [`PATIENCE`].
    pub fn notification(&mut self) -> Option<Notification> {
        self.notification_within(PATIENCE)
    }

    /// The next notification, waiting up to `wait`.
    pub fn notification_within(&mut self, wait: Duration) -> Option<Notification> {
        if !self.queued.is_empty() {
            return Some(self.queued.remove(0));
        }
        let deadline = Instant::now() + wait;
        loop {
            let m = self.recv(deadline)?;
            if let Some(method) = m["method"].as_str() {
                return Some(Notification {
                    method: method.to_owned(),
                    params: m["params"].clone(),
                });
            }
            if let Some(id) = m["id"].as_i64() {
                self.replies.insert(id, m);
            }
        }
    }

    fn recv(&mut self, deadline: Instant) -> Option<Value> {
        let left = deadline.saturating_duration_since(Instant::now());
        self.incoming.recv_timeout(left).ok()
    }

    /// Closes the server's input and waits up to `wait` for it to exit.
    pub fn close_input(mut self, wait: Duration) -> Option<std::process::ExitStatus> {
        drop(self.stdin.take());
        let deadline = Instant::now() + wait;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    /// `shutdown`, `exit`, and the exit status.
    pub fn finish(mut self) -> std::process::ExitStatus {
        let _ = self.request("shutdown", Value::Null);
        self.send(&json!({"jsonrpc": "2.0", "method": "exit"}));
        self.child.wait().unwrap()
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
