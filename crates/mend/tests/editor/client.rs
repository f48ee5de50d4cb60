//! A test client for `mend editor`: real LSP framing over the child's
//! stdio, with notifications queued as they arrive.

use std::io::BufReader;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use lsp_server::{Message, Notification, Request, RequestId};
use serde_json::Value;

/// Long enough for a loaded CI machine; answers normally take milliseconds.
pub const PATIENCE: Duration = Duration::from_secs(15);

pub struct Client {
    child: Child,
    stdin: ChildStdin,
    incoming: Receiver<Message>,
    next_id: i32,
    /// Notifications received while waiting for a response.
    pub queued: Vec<Notification>,
}

impl Client {
    /// Starts `mend editor` in `root` and initializes it.
    pub fn start(root: &Path) -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mend"))
            .arg("editor")
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("mend editor starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, incoming) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            while let Ok(Some(m)) = Message::read(&mut r) {
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
        };
        c.request("initialize", serde_json::json!({}))
            .expect("initialize");
        c
    }

    /// Sends a request and waits for its response: the result, or the
    /// error's code and message.
    pub fn request(&mut self, method: &str, params: Value) -> Result<Value, (i32, String)> {
        self.next_id += 1;
        let id = RequestId::from(self.next_id);
        Message::Request(Request::new(id.clone(), method.into(), params))
            .write(&mut self.stdin)
            .expect("write request");
        let deadline = Instant::now() + PATIENCE;
        loop {
            match self.recv(deadline) {
                Some(Message::Response(r)) if r.id == id => {
                    return r.response_result.map_err(|e| (e.code, e.message));
                }
                Some(Message::Notification(n)) => self.queued.push(n),
                Some(_) => {}
                None => panic!("no response to {method}"),
            }
        }
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
            match self.recv(deadline)? {
                Message::Notification(n) => return Some(n),
                _ => continue,
            }
        }
    }

    fn recv(&mut self, deadline: Instant) -> Option<Message> {
        let left = deadline.saturating_duration_since(Instant::now());
        self.incoming.recv_timeout(left).ok()
    }

    /// `shutdown`, `exit`, and the exit status.
    pub fn finish(mut self) -> std::process::ExitStatus {
        let _ = self.request("shutdown", Value::Null);
        Message::Notification(Notification::new("exit".into(), Value::Null))
            .write(&mut self.stdin)
            .unwrap();
        self.child.wait().unwrap()
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
