//! The requests that take a lock another process may hold: `pending/*`
//! (a pending session's lock), `turn/*` and `checkpoint/create` (the
//! workspace lock). They run here, on a thread of their own, one at a
//! time in the order they came, so the server's loop never waits for a
//! lock: buffers keep syncing while one of these waits. Each waits for a
//! lock at most its own `wait_ms` (default [`DEFAULT_WAIT`]); a lock held
//! longer is answered at once as `busy`, naming its holder.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crossbeam_channel::Sender;
use mend_service::Watched;
use mend_watch::Watcher;
use mend_workspace::Workspace;
use serde_json::Value;

use super::{Answer, Failure, INVALID_PARAMS, Request, frame, pending, reply, turn};

/// JSON-RPC: the server failed.
const INTERNAL_ERROR: i32 = -32603;

/// How long a request waits for a lock when it names no `wait_ms`: long
/// enough for another command's quick hold to end, short enough that a
/// person never takes the answer for a hang.
const DEFAULT_WAIT: Duration = Duration::from_millis(500);

/// The longest `wait_ms` taken: the commands' own lock timeout.
const MAX_WAIT: Duration = Duration::from_secs(mend_workspace::DEFAULT_LOCK_TIMEOUT_SECS);

/// Whether `method` is served here rather than on the loop.
pub(super) fn serves(method: &str) -> bool {
    method.starts_with("pending/") || method.starts_with("turn/") || method == "checkpoint/create"
}

/// What the worker thread owns: the root's workspace, pending session and
/// checkpoints, and the buffers' watcher that narrows the snapshots.
pub(super) struct Context {
    pub ws: Workspace,
    /// The pending session named at `initialize`.
    pub pending: String,
    pub watched: Arc<Watched>,
    pub watcher: Arc<Watcher>,
}

/// The worker: requests go in, their answers go straight to the output.
pub(super) struct Worker {
    jobs: Sender<Request>,
    /// Set when the server ends: requests still queued are not started.
    ended: Arc<AtomicBool>,
}

impl Worker {
    /// Starts the thread. It ends once the worker is dropped, after the
    /// request it is running, if any.
    pub(super) fn start(ctx: Context, out: Sender<String>) -> std::io::Result<Worker> {
        let (jobs, queue) = crossbeam_channel::unbounded::<Request>();
        let ended = Arc::new(AtomicBool::new(false));
        let end = Arc::clone(&ended);
        std::thread::Builder::new()
            .name("mend-editor-worker".into())
            .spawn(move || {
                for req in queue {
                    if end.load(Ordering::Relaxed) {
                        return;
                    }
                    // A panic answers its request and spares the thread,
                    // so later requests are still answered.
                    let answer = std::panic::catch_unwind(AssertUnwindSafe(|| ctx.answer(&req)))
                        .unwrap_or_else(|_| {
                            Err(Failure::new(
                                INTERNAL_ERROR,
                                format!(
                                    "{} failed inside mend (see its standard error)",
                                    req.method
                                ),
                            ))
                        });
                    if out.send(frame::response(&req.id, reply(answer))).is_err() {
                        return;
                    }
                }
            })?;
        Ok(Worker { jobs, ended })
    }

    /// Queues `req`; its answer is sent when it is done.
    pub(super) fn submit(&self, req: Request) {
        // The thread lives as long as the worker; a send fails only if it
        // panicked, and then the request stays unanswered as it would.
        let _ = self.jobs.send(req);
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.ended.store(true, Ordering::Relaxed);
    }
}

impl Context {
    fn answer(&self, req: &Request) -> Answer {
        let (wait, req) = waiting(req)?;
        if req.method.starts_with("pending/") {
            let mut opts = self.ws.options().clone();
            opts.lock_timeout = wait;
            let ws = crate::prepared(mend_service::roots::open(self.ws.root(), opts)?);
            pending::dispatch(&ws, &self.pending, &req)
        } else if req.method == "checkpoint/create" {
            turn::checkpoint(&self.watched, &self.watcher, wait, &req)
        } else {
            turn::dispatch(&self.watched, &self.watcher, wait, &req)
        }
    }
}

/// The request's `wait_ms` (taken out of its params) as a duration.
fn waiting(req: &Request) -> Result<(Duration, Request), Failure> {
    let mut req = req.clone();
    let given = req.params.as_object_mut().and_then(|p| p.remove("wait_ms"));
    let wait = match given {
        None | Some(Value::Null) => DEFAULT_WAIT,
        Some(v) => match v.as_u64() {
            Some(ms) => Duration::from_millis(ms).min(MAX_WAIT),
            None => {
                return Err(Failure::new(
                    INVALID_PARAMS,
                    format!(
                        "{}: wait_ms must be a whole number of milliseconds, not {v}",
                        req.method
                    ),
                ));
            }
        },
    };
    Ok((wait, req))
}
