//! The daemon's wire: one JSON object per line each way, versioned,
//! every line bounded (see `docs/daemon.md`).

use std::io::{BufRead, Write};

use mend_checkpoint::turn::Begun;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::call::ScanKind;
use crate::failure::{Failure, Kind};

/// The protocol's version, in every request and answer as `"v"`.
pub const VERSION: u64 = 1;

/// The longest request line the daemon reads; a longer one is answered
/// with `too_large` and skipped to its end, never held in memory.
pub const MAX_REQUEST: usize = 64 * 1024;

/// The longest answer line a client reads.
pub const MAX_ANSWER: usize = 64 << 20;

/// `status`'s answer.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Status {
    /// The daemon's process id.
    pub pid: u32,
    /// The root it serves (canonical).
    pub root: String,
    /// This run of the daemon (tokens of `changes` belong to it).
    pub instance: String,
    /// When it started, in seconds since the Unix epoch.
    pub started: u64,
    /// The watcher's change token, when the root is watched.
    pub token: Option<u64>,
    /// Whether the root is watched (otherwise checkpoints scan in full).
    pub watching: bool,
}

/// `checkpoint`'s parameters.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Create {
    pub(crate) label: Option<String>,
    pub(crate) anchor: Option<String>,
    pub(crate) max_file_bytes: Option<u64>,
    #[serde(default)]
    pub(crate) dry_run: bool,
    /// Send progress lines while working.
    #[serde(default)]
    pub(crate) progress: bool,
    /// How long to wait for the workspace lock (default 30 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) lock_timeout_ms: Option<u64>,
}

/// `turn_begin`'s parameters.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Begin {
    pub(crate) label: Option<String>,
    pub(crate) session: Option<String>,
    pub(crate) agent: Option<String>,
    /// Send progress lines while working.
    #[serde(default)]
    pub(crate) progress: bool,
    /// How long to wait for the workspace lock (default 30 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) lock_timeout_ms: Option<u64>,
}

/// `turn_begin`'s answer.
#[derive(Serialize, Deserialize)]
pub(crate) struct Began {
    pub(crate) begun: Begun,
    pub(crate) scan: Option<ScanKind>,
}

/// A request: `{"v": 1, "id": any, "method": "...", "params": {...}}`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// The protocol version the client speaks.
    pub v: u64,
    /// Echoed in the answer.
    #[serde(default)]
    pub id: Value,
    /// What to do.
    pub method: String,
    /// The method's parameters (an object; absent means none).
    #[serde(default)]
    pub params: Value,
}

/// An answer: `result` or `error`, never both.
#[derive(Debug, Serialize, Deserialize)]
pub struct Answer {
    /// The protocol version the daemon speaks.
    pub v: u64,
    /// The request's id (`null` when the request could not be read).
    #[serde(default)]
    pub id: Value,
    /// What the method returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<WireError>,
    /// Not an answer yet: the daemon is still at work, having examined
    /// this many files (sent to a client that asked for progress).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<u64>,
}

/// A failed request.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct WireError {
    /// `bad_frame`, `too_large`, `version`, `unknown_method`,
    /// `bad_params`, `refused` or `failed`.
    pub code: String,
    /// What went wrong and what to send instead.
    pub message: String,
    /// For `refused`: the kind the CLI's JSON error gives the same
    /// refusal (`error`, or a turn's `no_turn`, `refused`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// For `refused` and `failed`: the failure in the shape every
    /// front-end reports (its `kind` is the one above).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    // Boxed: an error stays small where it is passed by value.
    pub failure: Option<Box<Failure>>,
}

impl WireError {
    /// An error with this code and message.
    pub fn new(code: &str, message: impl Into<String>) -> WireError {
        WireError {
            code: code.to_owned(),
            message: message.into(),
            kind: None,
            failure: None,
        }
    }

    /// The error carrying `failure`, and its kind.
    pub fn failure(mut self, failure: Failure) -> WireError {
        self.kind = Some(failure.kind.name().to_owned());
        self.failure = Some(Box::new(failure));
        self
    }

    /// The failure the daemon reported, or one made of the code and
    /// message (a protocol error, or a daemon that sent none).
    pub fn into_failure(self) -> Failure {
        match self.failure {
            Some(f) => *f,
            None => {
                let kind = match self.code.as_str() {
                    "refused" => self.kind.as_deref().and_then(Kind::named),
                    "failed" => Some(Kind::Error),
                    _ => Some(Kind::Protocol),
                };
                Failure::new(kind.unwrap_or(Kind::Error), self.message)
            }
        }
    }
}

impl Answer {
    /// The answer to request `id`.
    pub fn to(id: Value, result: Result<Value, WireError>) -> Answer {
        let (result, error) = match result {
            Ok(v) => (Some(v), None),
            Err(e) => (None, Some(e)),
        };
        Answer {
            v: VERSION,
            id,
            result,
            error,
            progress: None,
        }
    }

    /// A progress line for request `id`: `examined` files so far.
    pub fn progress(id: Value, examined: u64) -> Answer {
        Answer {
            v: VERSION,
            id,
            result: None,
            error: None,
            progress: Some(examined),
        }
    }
}

/// One line read with a bound.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A line, without its newline.
    Text(Vec<u8>),
    /// A line longer than the bound, read to its end and dropped.
    TooLong,
    /// The end of the stream (a last line without a newline is `Text`).
    End,
}

/// Reads one line of at most `limit` bytes; a longer line is consumed
/// without being kept.
pub fn read_line(r: &mut impl BufRead, limit: usize) -> std::io::Result<Line> {
    let mut line = Vec::new();
    let mut over = false;
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Ok(match (over, line.is_empty()) {
                (true, _) => Line::TooLong,
                (false, true) => Line::End,
                (false, false) => Line::Text(line),
            });
        }
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        if !over && line.len() + chunk.len() <= limit {
            line.extend_from_slice(chunk);
        } else {
            over = true;
            line = Vec::new();
        }
        let used = done.unwrap_or(buf.len());
        r.consume(used);
        if done.is_some() {
            return Ok(if over {
                Line::TooLong
            } else {
                Line::Text(line)
            });
        }
    }
}

/// Writes `value` as one line.
pub fn write_line(w: &mut impl Write, value: &impl Serialize) -> std::io::Result<()> {
    let mut text = serde_json::to_vec(value).map_err(std::io::Error::other)?;
    text.push(b'\n');
    w.write_all(&text)?;
    w.flush()
}

/// Whether the peer runs as this process's user: the daemon serves its
/// own user only, and a client trusts no other user's daemon.
pub(crate) fn same_user(stream: &std::os::unix::net::UnixStream) -> bool {
    rustix::net::sockopt::socket_peercred(stream)
        .is_ok_and(|cred| cred.uid == rustix::process::getuid())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], limit: usize) -> Vec<Line> {
        let mut r = std::io::BufReader::with_capacity(4, input);
        let mut out = Vec::new();
        loop {
            match read_line(&mut r, limit).expect("a slice reads") {
                Line::End => return out,
                l => out.push(l),
            }
        }
    }

    /// A refusal carries the failure whole; an answer from a daemon that
    /// sent none, or a kind this mend does not know, still reads as one.
    #[test]
    fn an_error_carries_its_failure_across_the_wire() {
        let failure = Failure::new(Kind::NoTurn, "no turn is open");
        let sent = WireError::new("refused", "no turn is open").failure(failure.clone());
        let text = serde_json::to_string(&Answer::to(Value::Null, Err(sent))).unwrap();
        let got: Answer = serde_json::from_str(&text).unwrap();
        let error = got.error.unwrap();
        assert_eq!(error.kind.as_deref(), Some("no_turn"));
        assert_eq!(error.into_failure(), failure);
        let old = r#"{"code":"refused","message":"m","kind":"corrupt"}"#;
        let old: WireError = serde_json::from_str(old).unwrap();
        assert_eq!(old.into_failure(), Failure::new(Kind::Corrupt, "m"));
        let newer = r#"{"code":"refused","message":"m","failure":{"kind":"from_the_future","message":"m"}}"#;
        let newer: WireError = serde_json::from_str(newer).unwrap();
        assert_eq!(newer.into_failure().kind, Kind::Error);
        let bad = WireError::new("bad_params", "x").into_failure();
        assert_eq!(bad.kind, Kind::Protocol);
    }

    #[test]
    fn lines_are_bounded_and_a_long_one_is_skipped_to_its_end() {
        let got = lines(b"abc\n0123456789\nxy\n\nlast", 5);
        assert_eq!(
            got,
            vec![
                Line::Text(b"abc".to_vec()),
                Line::TooLong,
                Line::Text(b"xy".to_vec()),
                Line::Text(Vec::new()),
                Line::Text(b"last".to_vec()),
            ]
        );
        assert_eq!(lines(b"0123456789", 5), vec![Line::TooLong]);
        assert_eq!(lines(b"01234\n", 5), vec![Line::Text(b"01234".to_vec())]);
    }
}
