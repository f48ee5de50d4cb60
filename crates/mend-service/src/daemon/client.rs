//! The asking side: a CLI command that finds a daemon serving its root
//! has it do the work; one that finds none, or none that answers in
//! time, does it itself.

use std::io::{BufReader, ErrorKind};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use mend_checkpoint::CreateOptions;
use mend_checkpoint::turn::{BeginOptions, Begun};
use mend_workspace::Workspace;
use serde::Deserialize;
use serde_json::{Value, json};

use super::place::Place;
use super::wire::{self, Answer, Began, Begin, Create, Line, Request, Status, WireError};
use crate::Error;
use crate::call::ScanKind;
use crate::checkpoint::CreateResult;

/// How long a client waits for a daemon to answer `status` before doing
/// the work itself.
pub const CONNECT_WAIT: Duration = Duration::from_millis(100);

/// How long a client waits for a daemon at work to say anything: it
/// sends progress twice a second however long the work takes (a lock
/// wait, a first full scan of a large tree), so silence this long means
/// it hangs, and the command does the work itself.
pub const SILENCE: Duration = Duration::from_secs(5);

/// What a client found at a root.
pub enum Found {
    /// A daemon that answered.
    Serving(Client),
    /// A daemon, but it did not answer in time (too busy, hung, or not
    /// yet serving).
    Silent,
    /// A socket but no daemon: one that was killed left it.
    Stale,
    /// No daemon ever served the root, or its socket is gone.
    Absent,
}

/// Why a daemon that answered `status` did not do the work.
#[derive(Debug)]
pub enum Fallback {
    /// It refused, after waiting for the lock as long as it was told: the
    /// refusal is the command's own, not to be waited for again.
    Refused(WireError),
    /// It sent nothing for [`SILENCE`].
    Hung,
    /// The connection broke (the daemon died at work), or the work failed
    /// there: what happened.
    Lost(String),
}

impl Found {
    /// The client, when a daemon answered.
    pub fn serving(self) -> Option<Client> {
        match self {
            Found::Serving(c) => Some(c),
            _ => None,
        }
    }
}

/// A connection to the daemon serving a root.
pub struct Client {
    stream: BufReader<UnixStream>,
    next: u64,
    status: Status,
}

impl Client {
    /// The daemon serving `root`, if one answers `status` within `wait`.
    /// Nothing is made in the root.
    pub fn connect(root: &Path, wait: Duration) -> Result<Found, Error> {
        let ws = Workspace::open(root, mend_workspace::Options::default())?;
        let Some(place) = Place::existing(&ws)? else {
            return Ok(Found::Absent);
        };
        if !place.has_socket() {
            return Ok(Found::Absent);
        }
        let stream = match UnixStream::connect(place.socket()?) {
            Ok(stream) => stream,
            // Nobody listens: a killed daemon's socket, unless a daemon
            // holds the lock (one starting, or one whose socket was
            // replaced).
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                return Ok(if place.is_held() {
                    Found::Silent
                } else {
                    Found::Stale
                });
            }
            Err(_) => return Ok(Found::Silent),
        };
        // A socket served by another user (planted through a group-writable
        // `.mend`) could answer anything: the command scans itself.
        if !wire::same_user(&stream) {
            return Ok(Found::Silent);
        }
        let mut client = Client {
            stream: BufReader::new(stream),
            next: 0,
            status: Status {
                pid: 0,
                root: String::new(),
                instance: String::new(),
                started: 0,
                token: None,
                watching: false,
            },
        };
        let status = client.call("status", Value::Null, wait);
        let Some(status) = status.ok().and_then(Result::ok) else {
            return Ok(Found::Silent);
        };
        match serde_json::from_value(status) {
            Ok(status) => client.status = status,
            Err(_) => return Ok(Found::Silent),
        }
        Ok(Found::Serving(client))
    }

    /// The daemon's `status`, as it answered on connecting.
    pub fn status(&self) -> &Status {
        &self.status
    }

    /// Sends one request and reads its answer, waiting at most `wait`.
    /// The outer error is the connection's; the inner, the daemon's.
    pub fn call(
        &mut self,
        method: &str,
        params: Value,
        wait: Duration,
    ) -> std::io::Result<Result<Value, WireError>> {
        self.call_working(method, params, wait, &mut |_| {})
    }

    /// [`Client::call`] for work that sends progress lines: each is
    /// handed to `progress`, and `wait` bounds the silence between lines.
    fn call_working(
        &mut self,
        method: &str,
        params: Value,
        wait: Duration,
        progress: &mut dyn FnMut(usize),
    ) -> std::io::Result<Result<Value, WireError>> {
        self.next += 1;
        let req = Request {
            v: wire::VERSION,
            id: json!(self.next),
            method: method.to_owned(),
            params,
        };
        let stream = self.stream.get_ref();
        stream.set_write_timeout(Some(wait))?;
        stream.set_read_timeout(Some(wait))?;
        let mut out = stream;
        wire::write_line(&mut out, &req)?;
        loop {
            let line = match wire::read_line(&mut self.stream, wire::MAX_ANSWER)? {
                Line::Text(t) => t,
                Line::TooLong | Line::End => {
                    return Err(std::io::Error::other("the daemon gave no answer"));
                }
            };
            let answer: Answer = serde_json::from_slice(&line).map_err(std::io::Error::other)?;
            return Ok(match (answer.result, answer.error, answer.progress) {
                (_, Some(e), _) => Err(e),
                (Some(v), None, _) => Ok(v),
                (None, None, Some(n)) => {
                    progress(usize::try_from(n).unwrap_or(usize::MAX));
                    continue;
                }
                (None, None, None) => Ok(Value::Null),
            });
        }
    }

    /// Has the daemon do work that reports progress, waiting at most
    /// `lock_timeout` for the workspace lock there.
    fn work<T: for<'de> Deserialize<'de>>(
        &mut self,
        method: &str,
        params: Value,
        progress: &mut dyn FnMut(usize),
    ) -> Result<T, Fallback> {
        let answer = self.call_working(method, params, SILENCE, progress);
        let v = match answer {
            Ok(Ok(v)) => v,
            Ok(Err(e)) if e.code == "refused" => return Err(Fallback::Refused(e)),
            Ok(Err(e)) => return Err(Fallback::Lost(format!("it failed: {}", e.message))),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return Err(Fallback::Hung);
            }
            Err(e) => return Err(Fallback::Lost(format!("it stopped answering ({e})"))),
        };
        serde_json::from_value(v)
            .map_err(|e| Fallback::Lost(format!("its answer was not understood ({e})")))
    }

    /// Has the daemon create a checkpoint, waiting at most `lock_timeout`
    /// for the lock. `Err` says why it did not: the caller then creates it
    /// itself (unless it refused).
    pub fn checkpoint(
        &mut self,
        opts: &CreateOptions,
        dry_run: bool,
        lock_timeout: Duration,
        progress: &mut dyn FnMut(usize),
    ) -> Result<CreateResult, Fallback> {
        let params = Create {
            label: opts.label.clone(),
            anchor: opts.anchor.clone(),
            max_file_bytes: Some(opts.max_file_bytes),
            dry_run,
            progress: true,
            lock_timeout_ms: Some(millis(lock_timeout)),
        };
        let v = serde_json::to_value(params).map_err(|e| Fallback::Lost(e.to_string()))?;
        self.work("checkpoint", v, progress)
    }

    /// Has the daemon begin a turn; as [`Client::checkpoint`].
    pub fn turn_begin(
        &mut self,
        opts: &BeginOptions,
        lock_timeout: Duration,
        progress: &mut dyn FnMut(usize),
    ) -> Result<(Begun, Option<ScanKind>), Fallback> {
        let params = Begin {
            label: opts.label.clone(),
            session: opts.session.clone(),
            agent: opts.agent.clone(),
            progress: true,
            lock_timeout_ms: Some(millis(lock_timeout)),
        };
        let v = serde_json::to_value(params).map_err(|e| Fallback::Lost(e.to_string()))?;
        let began: Began = self.work("turn_begin", v, progress)?;
        Ok((began.begun, began.scan))
    }

    /// Asks the daemon to stop; it stops once this answer is sent.
    pub fn stop(&mut self) -> Result<(), Error> {
        match self.call("stop", Value::Null, CONNECT_WAIT * 20) {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(Error::Daemon(e.message)),
            Err(source) => Err(Error::Io {
                what: "asking the daemon to stop".into(),
                source,
            }),
        }
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Whether a daemon holds `root`'s daemon lock now, and the process the
/// lock names: the daemon's own or a killed one's. Nothing is made.
pub fn lock_holder(root: &Path) -> Result<(bool, Option<u32>), Error> {
    let ws = Workspace::open(root, mend_workspace::Options::default())?;
    Ok(match Place::existing(&ws)? {
        Some(place) => (place.is_held(), place.holder()),
        None => (false, None),
    })
}
