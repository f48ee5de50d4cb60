//! `mend editor`: the editor protocol, JSON-RPC 2.0 over stdio with LSP
//! framing (`Content-Length` headers), so an editor's LSP client code can
//! carry it (Neovim's `vim.lsp.rpc.start` is the plugin's whole client).
//!
//! The editor reports its buffers; `mend-watch` reports their files; what
//! the buffers must do comes back as notifications. The `pending/*`
//! methods serve a pending-changes session for a review panel.
//! `docs/editor-protocol.md` documents every method.
//!
//! One loop owns every buffer's state: requests, file changes and finished
//! merges are taken one at a time, and each does only quick work (merges
//! of large files run on their own threads), so no request waits behind a
//! slow buffer. Requests that take a lock another process may hold run on
//! a worker thread (see `worker.rs`), so a held lock never stops buffer
//! sync.

mod frame;
mod pending;
mod protocol;
mod turn;
mod worker;

use std::path::{Path, PathBuf};

use crossbeam_channel::{Receiver, Sender, select};
use mend_watch::{Buffers, Options};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

pub(crate) use frame::Request;

/// JSON-RPC: the params do not fit the method.
const INVALID_PARAMS: i32 = -32602;
/// JSON-RPC: no such method.
const METHOD_NOT_FOUND: i32 = -32601;
/// LSP: a request before `initialize`.
const NOT_INITIALIZED: i32 = -32002;
/// mend refused the request; the message says how to fix it.
const REFUSED: i32 = -32001;

/// Frames larger than this are refused unread: a buffer is at most 8 MiB,
/// and its JSON a few times that at worst.
const FRAME_LIMIT: usize = 64 << 20;

/// A request's failure: a JSON-RPC error code, a message for the user,
/// and what a program may read from it (`error.data`).
struct Failure {
    code: i32,
    message: String,
    data: Option<Value>,
}

impl Failure {
    fn new(code: i32, message: impl Into<String>) -> Failure {
        Failure {
            code,
            message: message.into(),
            data: None,
        }
    }
}

impl<E: std::fmt::Display> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure::new(REFUSED, e.to_string())
    }
}

/// A service error as the editor answers it: refused, with its failure
/// as `data` (`{"kind", "message", "session"?, "path"?, "holder"?}`); a
/// lock held past the wait is kind `busy`, whichever lock it was.
fn refused(e: &mend_service::Error) -> Failure {
    let failure = e.failure();
    let data = serde_json::to_value(&failure).unwrap_or_else(|_| json!({"kind": "error"}));
    Failure {
        code: REFUSED,
        message: failure.message,
        data: Some(data),
    }
}

type Answer = Result<Value, Failure>;

/// An answer as a response's `result` or `error`.
fn reply(answer: Answer) -> Result<Value, Value> {
    answer.map_err(|f| frame::error(f.code, &f.message, f.data))
}

/// The state after `initialize`.
struct Session {
    buffers: Buffers,
    /// Runs the requests that take locks (pending, turn, checkpoint).
    worker: worker::Worker,
}

struct Server {
    out: Sender<String>,
    default_root: PathBuf,
    /// The merge policy when `initialize` names none.
    policy: mend_merge::Policy,
    session: Option<Session>,
    shutdown: bool,
}

/// Runs the server until the editor sends `exit` or closes stdin.
pub(crate) fn run(root: Option<&Path>, policy: mend_merge::Policy) -> anyhow::Result<u8> {
    // The one root rule: `--root`, else the worktree holding the current
    // folder; `initialize` may name another.
    let default_root = mend_service::root(root);
    let incoming = frame::reader(std::io::stdin(), FRAME_LIMIT);
    let (out, writer) = frame::writer(std::io::stdout());
    let mut server = Server {
        out,
        default_root,
        policy,
        session: None,
        shutdown: false,
    };
    server.serve(&incoming);
    // Everything sent is written before the process ends.
    drop(server);
    let _ = writer.join();
    Ok(crate::EXIT_OK)
}

impl Server {
    fn serve(&mut self, incoming: &Receiver<frame::Incoming>) {
        let never = crossbeam_channel::never();
        loop {
            let events = self
                .session
                .as_ref()
                .map_or_else(|| never.clone(), |s| s.buffers.events().clone());
            select! {
                recv(incoming) -> msg => match msg {
                    Ok(frame::Incoming::Request(req)) => self.request(req),
                    Ok(frame::Incoming::Notification { method, .. }) if method == "exit" => return,
                    Ok(frame::Incoming::Notification { method, params }) if method.starts_with("buffer/") => {
                        self.notified(&Request { id: frame::Id::null(), method, params });
                    }
                    Ok(frame::Incoming::Invalid { id, code, message }) => {
                        self.send(frame::response(&id, Err(frame::error(code, &message, None))));
                    }
                    // Responses (the server sends no requests) and
                    // notifications that report no buffer need no answer.
                    Ok(_) => {}
                    Err(_) => return,
                },
                recv(events) -> event => if let (Ok(e), Some(s)) = (event, self.session.as_mut()) {
                    if let mend_watch::Event::Root { lost } = e {
                        self.root(lost);
                        continue;
                    }
                    let notices = s.buffers.handle(e);
                    self.notify(&notices);
                },
            }
        }
    }

    fn request(&mut self, req: Request) {
        // The worker answers these itself, when their locks allow.
        if let Some(s) = self.session.as_ref().filter(|_| !self.shutdown)
            && worker::serves(&req.method)
        {
            s.worker.submit(req);
            return;
        }
        let (answer, notices) = self.dispatch(&req);
        self.send(frame::response(&req.id, reply(answer)));
        self.notify(&notices);
    }

    /// A buffer request sent without an id: carried out all the same, since
    /// dropping the editor's report of its buffer would leave the server
    /// waiting for an answer that already came, for good. JSON-RPC allows
    /// no answer to a notification, so a failure goes to standard error.
    fn notified(&mut self, req: &Request) {
        let (answer, notices) = self.dispatch(req);
        if let Err(Failure { message: msg, .. }) = answer {
            use std::io::Write as _;
            let _ = writeln!(
                std::io::stderr(),
                "mend editor: {} (sent without an id, so unanswered): {msg}",
                req.method
            );
        }
        self.notify(&notices);
    }

    fn dispatch(&mut self, req: &Request) -> (Answer, Vec<mend_sync::Notice>) {
        let method = req.method.as_str();
        if self.shutdown && method != "shutdown" {
            return (
                Err(Failure::new(
                    frame::INVALID_REQUEST,
                    "the server is shutting down",
                )),
                vec![],
            );
        }
        match method {
            "initialize" => (self.initialize(req), vec![]),
            "shutdown" => {
                self.shutdown = true;
                (Ok(Value::Null), vec![])
            }
            _ => match self.session.as_mut() {
                None => (
                    Err(Failure::new(NOT_INITIALIZED, "send initialize first")),
                    vec![],
                ),
                Some(s) => s.dispatch(req),
            },
        }
    }

    fn initialize(&mut self, req: &Request) -> Answer {
        if let Some(s) = &self.session {
            // Starting over would drop every buffer's base.
            return Err(Failure::new(
                frame::INVALID_REQUEST,
                format!(
                    "already initialized for {}; start another `mend editor` for another root",
                    s.buffers.root().display()
                ),
            ));
        }
        let p: protocol::Initialize = params(req)?;
        let root = p
            .root
            .map_or_else(|| self.default_root.clone(), PathBuf::from);
        let ws = crate::prepared(mend_service::roots::open(
            &root,
            mend_workspace::Options::default(),
        )?);
        let mut buffers = Buffers::start(ws.root(), Options::default())?;
        buffers.set_policy(p.merge.unwrap_or(self.policy));
        let root = buffers.root().to_path_buf();
        let ctx = worker::Context {
            ws,
            pending: p
                .session
                .unwrap_or_else(|| mend_pending::DEFAULT_SESSION.into()),
            // The buffers' watcher is lent at each call.
            watched: mend_service::Registry::new(false).get(&root),
            watcher: buffers.shared_watcher(),
        };
        let worker = worker::Worker::start(ctx, self.out.clone())?;
        self.session = Some(Session { buffers, worker });
        Ok(json!({
            "serverInfo": {"name": "mend", "version": env!("CARGO_PKG_VERSION")},
            "root": root.to_string_lossy(),
        }))
    }

    fn notify(&self, notices: &[mend_sync::Notice]) {
        // After `shutdown` the editor can no longer answer a notification.
        let Some(s) = self.session.as_ref().filter(|_| !self.shutdown) else {
            return;
        };
        for n in notices {
            let (method, params) = protocol::notification(s.buffers.root(), n);
            self.send(frame::notification(method, params));
        }
    }

    /// `root/lost` or `root/restored`: the root folder went from its path,
    /// or is back and watched again.
    fn root(&self, lost: bool) {
        let Some(s) = self.session.as_ref().filter(|_| !self.shutdown) else {
            return;
        };
        let method = if lost { "root/lost" } else { "root/restored" };
        let root = s.buffers.root().to_string_lossy();
        self.send(frame::notification(method, json!({ "root": root })));
    }

    fn send(&self, msg: String) {
        // A closed output means the editor is gone; the end of its input
        // follows and ends the loop.
        let _ = self.out.send(msg);
    }
}

fn params<P: DeserializeOwned>(req: &Request) -> Result<P, Failure> {
    let v = if req.params.is_null() {
        json!({})
    } else {
        req.params.clone()
    };
    serde_json::from_value(v).map_err(|e| {
        Failure::new(
            INVALID_PARAMS,
            format!("{}: {e}; see docs/editor-protocol.md", req.method),
        )
    })
}

impl Session {
    fn dispatch(&mut self, req: &Request) -> (Answer, Vec<mend_sync::Notice>) {
        let b = &mut self.buffers;
        let notices = match req.method.as_str() {
            "buffer/open" => {
                let opened = params(req).and_then(|p: protocol::Report| {
                    let disk = p.disk.as_ref().map(String::as_bytes);
                    Ok(b.open(&p.path, p.text.as_bytes(), p.dirty, p.version, disk)?)
                });
                return match opened {
                    Ok((o, notices)) => (
                        Ok(json!({"buffer": o.id, "path": o.path.to_string_lossy()})),
                        notices,
                    ),
                    Err(f) => (Err(f), vec![]),
                };
            }
            "buffer/changed" => self.changed(req),
            "buffer/saved" => params(req).and_then(|p: protocol::Saved| {
                Ok(b.saved(&p.path, p.text.as_bytes(), p.version)?)
            }),
            "buffer/resync" => params(req).and_then(|p: protocol::Report| {
                Ok(b.report(&p.path, p.text.as_bytes(), p.dirty, p.version, p.applied)?)
            }),
            "buffer/close" => params(req).and_then(|p: protocol::Close| {
                b.close(&p.path)?;
                Ok(vec![])
            }),
            _ => return (self.query(req), vec![]),
        };
        match notices {
            Ok(n) => (Ok(json!({})), n),
            Err(f) => (Err(f), vec![]),
        }
    }

    fn changed(&mut self, req: &Request) -> Result<Vec<mend_sync::Notice>, Failure> {
        let p: protocol::Changed = params(req)?;
        let text = match (p.text, &p.edits) {
            (Some(t), _) => t,
            (None, Some(edits)) => {
                let rel = self.buffers.relative(&p.path)?;
                let now = self.buffers.text(&rel).ok_or_else(|| {
                    Failure::new(
                        REFUSED,
                        format!("{} is not open; send buffer/open first", p.path),
                    )
                })?;
                protocol::apply_edits(&String::from_utf8_lossy(now), edits)
                    .map_err(|e| Failure::new(INVALID_PARAMS, e))?
            }
            (None, None) => {
                return Err(Failure::new(
                    INVALID_PARAMS,
                    "buffer/changed needs text or edits",
                ));
            }
        };
        Ok(self
            .buffers
            .report(&p.path, text.as_bytes(), p.dirty, p.version, p.applied)?)
    }

    /// Requests that answer with data and change no buffer.
    fn query(&mut self, req: &Request) -> Answer {
        match req.method.as_str() {
            "editor/status" => Ok(json!({
                "root": self.buffers.root().to_string_lossy(),
                "root_lost": self.buffers.watcher().root_lost(),
                "token": self.buffers.watcher().token(),
                "buffers": self.buffers.status(),
            })),
            "changes/since" => {
                let p: protocol::Since = params(req)?;
                let w = self.buffers.watcher();
                let paths: Vec<String> = w
                    .changed_since(p.token)
                    .iter()
                    .map(|p| p.to_string_lossy().into_owned())
                    .collect();
                Ok(json!({"token": w.token(), "paths": paths}))
            }
            m => Err(Failure::new(
                METHOD_NOT_FOUND,
                format!("unknown method {m}; see docs/editor-protocol.md"),
            )),
        }
    }
}
