//! The serving side: the socket, one thread per connection, the methods.

use std::fs::File;
use std::io::BufReader;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use mend_checkpoint::CreateOptions;
use mend_checkpoint::turn::BeginOptions;
use mend_workspace::Workspace;
use serde::Deserialize;
use serde_json::{Value, json};

use super::place::Place;
use super::wire::{
    self, Answer, Began, Begin, Create, Line, Request, Status, WireError, same_user,
};
use crate::Error;
use crate::call::Call;
use crate::watched::{Registry, Watched};

/// Connections served at once; more are answered `busy` and closed.
const MAX_CONNECTIONS: usize = 32;

/// How long `changes` waits for the watcher to settle.
const SETTLE: Duration = Duration::from_secs(2);

/// How long a connection may stay silent before it is closed.
const IDLE: Duration = Duration::from_secs(60);

/// How often a daemon at work says so to a client that asked for
/// progress (`"progress": true`).
const BEAT: Duration = Duration::from_millis(500);

/// How often the daemon checks that its folder, lock and socket are still
/// where clients look for them.
const CHECK: Duration = Duration::from_secs(1);

/// A daemon ready to serve one root: its lock held, its socket bound.
pub struct Daemon {
    ws: Workspace,
    place: Place,
    /// Held locked for as long as the daemon runs.
    lock: File,
    listener: UnixListener,
    socket: PathBuf,
    /// The socket's device and inode, as bound.
    bound: (u64, u64),
    state: Arc<Shared>,
}

/// What every connection's thread shares.
struct Shared {
    watched: Arc<Watched>,
    /// This run of the daemon: tokens of another run mean nothing here.
    instance: String,
    started: u64,
    stop: AtomicBool,
    connections: AtomicUsize,
}

impl Daemon {
    /// Opens `root`'s checkpoints (a root no checkpoint may cover is
    /// refused before anything is made), takes its daemon lock (refused
    /// when another daemon holds it), replaces a stale socket, starts
    /// watching and binds the socket.
    pub fn start(root: &Path) -> Result<Daemon, Error> {
        let ws = Workspace::open(root, mend_workspace::Options::default())?;
        let watched = Registry::daemon().get(ws.root());
        watched.with_waiting(None, None, |_| Ok(()))?;
        let place = Place::create(&ws)?;
        let lock = place.lock()?;
        // Under the lock, whatever is at the socket's name was left by a
        // daemon that was killed.
        place.remove_socket()?;
        let socket = place.socket()?;
        let listener = UnixListener::bind(&socket).map_err(|source| Error::Io {
            what: "binding .mend/daemon/sock".into(),
            source,
        })?;
        let bound = place
            .identity(mend_workspace::DAEMON_SOCKET)
            .ok_or_else(|| {
                Error::Daemon("the socket vanished as it was bound; start the daemon again".into())
            })?;
        let started = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let state = Arc::new(Shared {
            watched,
            instance: format!("{}-{started}", std::process::id()),
            started,
            stop: AtomicBool::new(false),
            connections: AtomicUsize::new(0),
        });
        Ok(Daemon {
            ws,
            place,
            lock,
            listener,
            socket,
            bound,
            state,
        })
    }

    /// The root served (canonical).
    pub fn root(&self) -> &Path {
        self.state.watched.root()
    }

    /// Whether the root is watched (otherwise every checkpoint scans in
    /// full).
    pub fn watching(&self) -> bool {
        self.state.watched.watcher().is_some()
    }

    /// Serves until a `stop` request, removing the socket on the way out.
    /// Ends with an error once its `.mend/daemon`, lock or socket is gone
    /// or replaced (a `.mend` deleted or made again): no client reaches
    /// it any more, and another daemon may serve the root.
    pub fn serve(self) -> Result<(), Error> {
        use rustix::event::{PollFd, PollFlags, Timespec};
        let every = Timespec {
            tv_sec: CHECK.as_secs().try_into().unwrap_or(1),
            tv_nsec: 0,
        };
        let mut checked = Instant::now();
        loop {
            let mut fds = [PollFd::new(&self.listener, PollFlags::IN)];
            let ready = rustix::event::poll(&mut fds, Some(&every)).unwrap_or(0);
            if self.state.stop.load(Ordering::SeqCst) {
                break;
            }
            if checked.elapsed() >= CHECK {
                checked = Instant::now();
                // Its socket is left alone: the name may be another
                // daemon's by now.
                if !self.place.still_ours(&self.ws, &self.lock, self.bound) {
                    return Err(Error::Daemon(
                        ".mend/daemon was removed or replaced, so no client reaches this daemon any more; it stopped (start it again to serve the root)".into(),
                    ));
                }
            }
            if ready == 0 {
                continue;
            }
            let Ok((stream, _)) = self.listener.accept() else {
                continue;
            };
            let state = Arc::clone(&self.state);
            let socket = self.socket.clone();
            let _ = std::thread::Builder::new()
                .name("mend-daemon-conn".into())
                .spawn(move || connection(&state, &stream, &socket));
        }
        self.place.remove_socket()
    }
}

/// Serves one connection until it closes, goes idle, or asks to stop.
fn connection(state: &Shared, stream: &UnixStream, socket: &Path) {
    let busy = state.connections.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS;
    let mut out = stream;
    if busy || !same_user(stream) {
        let why = if busy {
            WireError::new("busy", "too many connections; try again")
        } else {
            WireError::new("refused", "the daemon serves its own user only")
        };
        let _ = wire::write_line(&mut out, &Answer::to(Value::Null, Err(why)));
    } else {
        let _ = stream.set_read_timeout(Some(IDLE));
        let mut input = BufReader::new(stream);
        loop {
            let answer = match wire::read_line(&mut input, wire::MAX_REQUEST) {
                Ok(Line::End) | Err(_) => break,
                Ok(Line::TooLong) => Answer::to(
                    Value::Null,
                    Err(WireError::new(
                        "too_large",
                        format!("a request is at most {} bytes", wire::MAX_REQUEST),
                    )),
                ),
                Ok(Line::Text(text)) => request(state, &text, stream),
            };
            if wire::write_line(&mut out, &answer).is_err() {
                break;
            }
            if state.stop.load(Ordering::SeqCst) {
                // Wakes the accepting loop, which then ends.
                let _ = UnixStream::connect(socket);
                break;
            }
        }
    }
    state.connections.fetch_sub(1, Ordering::SeqCst);
}

/// One request line's answer; `out` carries progress while it works.
fn request(state: &Shared, text: &[u8], out: &UnixStream) -> Answer {
    let req: Request = match serde_json::from_slice(text) {
        Ok(r) => r,
        Err(e) => {
            return Answer::to(
                Value::Null,
                Err(WireError::new(
                    "bad_frame",
                    format!(
                        "not a request ({e}); send {{\"v\": {}, \"id\": 1, \"method\": \"status\"}}",
                        wire::VERSION
                    ),
                )),
            );
        }
    };
    if req.v != wire::VERSION {
        let why = format!(
            "protocol version {} is not spoken here; this daemon speaks {}",
            req.v,
            wire::VERSION
        );
        return Answer::to(req.id, Err(WireError::new("version", why)));
    }
    let result = method(state, &req.method, req.params, &|work| {
        beating(out, &req.id, work)
    });
    Answer::to(req.id, result)
}

fn params<P: for<'de> Deserialize<'de> + Default>(method: &str, v: Value) -> Result<P, WireError> {
    if v.is_null() {
        return Ok(P::default());
    }
    serde_json::from_value(v)
        .map_err(|e| WireError::new("bad_params", format!("{method}: {e}; see docs/daemon.md")))
}

/// A failed request's error, carrying the failure as the CLI's JSON
/// gives it.
fn failed(e: &Error) -> WireError {
    let code = if e.is_refusal() { "refused" } else { "failed" };
    WireError::new(code, crate::chain(e)).failure(e.failure())
}

fn value(v: &impl serde::Serialize) -> Result<Value, WireError> {
    crate::to_value(v).map_err(|e| failed(&e))
}

/// Work that reports progress: given the count of files examined so far,
/// it returns its answer.
type Work<'a> = &'a mut (dyn FnMut(&dyn Fn(usize)) -> Result<Value, WireError> + Send);

/// Runs `work`, writing `{"v", "id", "progress": N}` to `out` every
/// [`BEAT`] until it is done: the client then tells a daemon at work (a
/// long lock wait, a first full scan) from one that hangs.
fn beating(out: &UnixStream, id: &Value, work: Work<'_>) -> Result<Value, WireError> {
    let examined = AtomicUsize::new(0);
    let (done, wait) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|s| {
        // Dropped as the work ends, or unwinds: the beats stop either way.
        let done = done;
        let examined = &examined;
        s.spawn(move || {
            while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = wait.recv_timeout(BEAT) {
                let n = examined.load(Ordering::Relaxed) as u64;
                if wire::write_line(&mut { out }, &Answer::progress(id.clone(), n)).is_err() {
                    return;
                }
            }
        });
        let result = work(&|n| examined.store(n, Ordering::Relaxed));
        drop(done);
        result
    })
}

/// The heartbeat wrapper of one request: runs its work with or without
/// progress lines, as the client asked.
type Beats<'a> = &'a dyn Fn(Work<'_>) -> Result<Value, WireError>;

fn method(state: &Shared, name: &str, p: Value, beats: Beats<'_>) -> Result<Value, WireError> {
    let watched = &state.watched;
    let during = |progress: bool, work: Work<'_>| {
        if progress { beats(work) } else { work(&|_| {}) }
    };
    match name {
        "status" => value(&status(state)),
        "changes" => changes(state, &params(name, p)?),
        "checkpoint" => {
            let p: Create = params(name, p)?;
            let opts = CreateOptions {
                label: p.label,
                anchor: p.anchor,
                max_file_bytes: p
                    .max_file_bytes
                    .unwrap_or(mend_checkpoint::DEFAULT_MAX_FILE_BYTES),
            };
            let wait = p.lock_timeout_ms.map(Duration::from_millis);
            during(p.progress, &mut |tick| {
                let mut call = Call::new(None, wait).progress(tick);
                let made = watched.create(&mut call, &opts, &Default::default(), p.dry_run);
                value(&made.map_err(|e| failed(&e))?)
            })
        }
        "turn_begin" => {
            let p: Begin = params(name, p)?;
            let opts = BeginOptions {
                label: p.label,
                session: p.session,
                agent: p.agent,
                // The daemon's checkpoints were opened unforced.
                force: false,
            };
            let wait = p.lock_timeout_ms.map(Duration::from_millis);
            during(p.progress, &mut |tick| {
                let mut call = Call::new(None, wait).progress(tick);
                let action = crate::turn::Action::Begin(opts.clone());
                let (outcome, scan) = watched.turn(&mut call, &action).map_err(|e| failed(&e))?;
                let crate::turn::Outcome::Begun(begun) = outcome else {
                    return Err(WireError::new("failed", "a begin did not begin a turn"));
                };
                value(&Began { begun, scan })
            })
        }
        "stop" => {
            state.stop.store(true, Ordering::SeqCst);
            Ok(json!({"stopping": true, "pid": std::process::id()}))
        }
        other => Err(WireError::new(
            "unknown_method",
            format!(
                "no method `{}`; the methods are status, changes, checkpoint, turn_begin, stop",
                mend_core::text::escape_controls(other)
            ),
        )),
    }
}

fn status(state: &Shared) -> Status {
    let w = state.watched.watcher();
    Status {
        pid: std::process::id(),
        root: state.watched.root().to_string_lossy().into_owned(),
        instance: state.instance.clone(),
        started: state.started,
        token: w.map(mend_watch::Watcher::token),
        watching: w.is_some(),
    }
}

/// `changes`' parameters.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Since {
    /// A token from an earlier answer.
    since: Option<u64>,
    /// The daemon run that token came from.
    instance: Option<String>,
}

/// The paths changed since a token, or a doubt that says to scan in full.
fn changes(state: &Shared, p: &Since) -> Result<Value, WireError> {
    let instance = &state.instance;
    let Some(w) = state.watched.watcher() else {
        return Ok(json!({"instance": instance, "doubt": "the root is not watched"}));
    };
    if let Some(why) = w.unreliable() {
        return Ok(json!({"instance": instance, "doubt": why}));
    }
    let Some(token) = w.sync(SETTLE) else {
        return Ok(json!({"instance": instance, "doubt": "the watcher did not settle in time"}));
    };
    let doubt = |why: &str| Ok(json!({"token": token, "instance": instance, "doubt": why}));
    let Some(since) = p.since else {
        return doubt("no token given: scan in full, then ask with this token");
    };
    if p.instance.as_deref() != Some(instance) || since > token {
        return doubt("the token is from another run of the daemon");
    }
    let Some(paths) = w.changes_since(since) else {
        return doubt("the watcher may have missed events since that token");
    };
    let paths: Vec<String> = paths
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    Ok(json!({"token": token, "instance": instance, "paths": paths}))
}
