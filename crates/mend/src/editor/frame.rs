//! LSP framing (`Content-Length` headers, then a JSON body) on standard
//! input and output, written to survive any input.
//!
//! A malformed frame is answered with a JSON-RPC error and the stream goes
//! on: invalid JSON or UTF-8 gets −32700, a batch or something that is not
//! a message gets −32600, a body over the size limit is skipped without
//! being allocated, and a header block without a usable `Content-Length`
//! is answered and passed over up to the next `Content-Length` line. Only
//! the end of input ends the connection.

use std::io::{BufRead, Read, Write};

use crossbeam_channel::{Receiver, Sender};
use serde_json::{Value, json};

/// JSON-RPC: the body is not JSON (or not UTF-8).
pub(super) const PARSE_ERROR: i32 = -32700;
/// JSON-RPC: the JSON is not a valid request.
pub(super) const INVALID_REQUEST: i32 = -32600;

/// The longest header line read; longer ones are cut (and are not valid).
const MAX_HEADER_LINE: usize = 8 << 10;

/// A request from the editor.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    /// Its id, echoed in the response.
    pub id: Value,
    /// The method.
    pub method: String,
    /// The params (`null` when absent).
    pub params: Value,
}

/// What the reader got.
#[derive(Debug)]
pub(super) enum Incoming {
    /// A request: answer it.
    Request(Request),
    /// A notification (no answer).
    Notification {
        /// The method.
        method: String,
        /// The params (`null` when absent).
        params: Value,
    },
    /// A response to something the server never sends: ignored.
    Response,
    /// A frame that is not a valid message: answer with this error.
    Invalid {
        /// The request's id if it could be read, else `null`.
        id: Value,
        /// The JSON-RPC error code.
        code: i32,
        /// What was wrong and what to send instead.
        message: String,
    },
}

/// Reads frames from `input` on a thread until it ends; each becomes one
/// [`Incoming`]. The channel closes at the end of input.
pub(super) fn reader(input: impl Read + Send + 'static, limit: usize) -> Receiver<Incoming> {
    let (tx, rx) = crossbeam_channel::bounded(64);
    let _ = std::thread::Builder::new()
        .name("mend-editor-in".into())
        .spawn(move || {
            let mut r = std::io::BufReader::new(input);
            let mut resync = false;
            while let Some(m) = next(&mut r, limit, &mut resync) {
                if tx.send(m).is_err() {
                    return;
                }
            }
        });
    rx
}

/// Writes each message, framed, to `output` on a thread; the thread ends
/// when every sender is dropped or the output fails.
pub(super) fn writer(
    output: impl Write + Send + 'static,
) -> (Sender<Value>, std::thread::JoinHandle<()>) {
    let (tx, rx) = crossbeam_channel::unbounded::<Value>();
    let handle = std::thread::spawn(move || {
        let mut out = std::io::BufWriter::new(output);
        for msg in rx {
            let body = msg.to_string();
            let framed = write!(out, "Content-Length: {}\r\n\r\n{body}", body.len());
            if framed.and_then(|()| out.flush()).is_err() {
                return;
            }
        }
    });
    (tx, handle)
}

/// The next message, or `None` at the end of input. `resync` is set after
/// a header block that could not be read, until the next one starts.
fn next(r: &mut impl BufRead, limit: usize, resync: &mut bool) -> Option<Incoming> {
    let length = match headers(r, resync)? {
        Ok(n) => n,
        Err(message) => {
            *resync = true;
            return Some(invalid(PARSE_ERROR, message));
        }
    };
    if length > limit as u64 {
        skip(r, length)?;
        return Some(invalid(
            INVALID_REQUEST,
            format!("a message of {length} bytes is over the limit of {limit}; send less"),
        ));
    }
    let mut body = vec![0; usize::try_from(length).ok()?];
    r.read_exact(&mut body).ok()?;
    Some(parse(&body))
}

/// Reads a header block: `Ok(length)`, or `Err(why)` when it has no usable
/// `Content-Length`; `None` at the end of input. While resynchronizing,
/// lines are passed over until one starts a header block.
fn headers(r: &mut impl BufRead, resync: &mut bool) -> Option<Result<u64, String>> {
    let mut length: Option<Result<u64, String>> = None;
    let mut seen = false;
    loop {
        let line = line(r)?;
        let text = String::from_utf8_lossy(&line);
        let mut text = text.trim_end_matches(['\r', '\n']);
        if *resync {
            // Garbage without a line ending runs into the next header:
            // start from the `Content-Length` wherever it is.
            match text.to_ascii_lowercase().find("content-length:") {
                Some(at) => text = &text[at..],
                None => continue,
            }
        }
        let is_length = text
            .get(..15)
            .is_some_and(|h| h.eq_ignore_ascii_case("content-length:"));
        *resync = false;
        if text.is_empty() {
            if !seen {
                // Blank lines between frames are tolerated.
                continue;
            }
            return Some(length.unwrap_or_else(|| {
                Err(
                    "a frame without a Content-Length header; each message needs \
                     `Content-Length: N` and a blank line before its JSON"
                        .into(),
                )
            }));
        }
        seen = true;
        if is_length {
            let value = text[15..].trim();
            length = Some(value.parse::<u64>().map_err(|_| {
                format!(
                    "`Content-Length: {value}` is not a byte count; send the body's length in bytes"
                )
            }));
        } else if !text.contains(':') {
            return Some(Err(format!(
                "`{}` is not a header; a frame is `Content-Length: N`, a blank line, then N bytes of JSON",
                text.chars().take(80).collect::<String>()
            )));
        }
    }
}

/// One line, at most [`MAX_HEADER_LINE`] bytes kept; `None` at the end.
fn line(r: &mut impl BufRead) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let buf = r.fill_buf().ok()?;
        if buf.is_empty() {
            return (!out.is_empty()).then_some(out);
        }
        let (take, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        let room = MAX_HEADER_LINE.saturating_sub(out.len());
        out.extend_from_slice(&buf[..take.min(room)]);
        r.consume(take);
        if done {
            return Some(out);
        }
    }
}

/// Passes over `n` bytes without keeping them.
fn skip(r: &mut impl BufRead, mut n: u64) -> Option<()> {
    while n > 0 {
        let buf = r.fill_buf().ok()?;
        if buf.is_empty() {
            return None;
        }
        let k = buf.len().min(usize::try_from(n).unwrap_or(usize::MAX));
        r.consume(k);
        n -= k as u64;
    }
    Some(())
}

fn invalid(code: i32, message: impl Into<String>) -> Incoming {
    Incoming::Invalid {
        id: Value::Null,
        code,
        message: message.into(),
    }
}

/// A body as a message.
fn parse(body: &[u8]) -> Incoming {
    let v: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => {
            let why = if std::str::from_utf8(body).is_err() {
                "the body is not UTF-8".to_owned()
            } else {
                format!("the body is not JSON: {e}")
            };
            return invalid(PARSE_ERROR, why);
        }
    };
    let Value::Object(mut m) = v else {
        let what = if v.is_array() {
            "batches are not supported; send one message per frame"
        } else {
            "a message must be a JSON object"
        };
        return invalid(INVALID_REQUEST, what);
    };
    let id = m.remove("id");
    if id
        .as_ref()
        .is_some_and(|i| !(i.is_string() || i.is_number() || i.is_null()))
    {
        return invalid(INVALID_REQUEST, "an id must be a number or a string");
    }
    let params = m.remove("params").unwrap_or(Value::Null);
    match (m.remove("method"), id) {
        (Some(Value::String(method)), Some(id)) => {
            Incoming::Request(Request { id, method, params })
        }
        (Some(Value::String(method)), None) => Incoming::Notification { method, params },
        (Some(_), id) => Incoming::Invalid {
            id: id.unwrap_or(Value::Null),
            code: INVALID_REQUEST,
            message: "method must be a string".into(),
        },
        (None, Some(_)) if m.contains_key("result") || m.contains_key("error") => {
            Incoming::Response
        }
        (None, id) => Incoming::Invalid {
            id: id.unwrap_or(Value::Null),
            code: INVALID_REQUEST,
            message: "a message needs a method (or, for a response, a result or an error)".into(),
        },
    }
}

/// A response's JSON.
pub(super) fn response(id: Value, result: Result<Value, (i32, String)>) -> Value {
    let mut msg = json!({"jsonrpc": "2.0"});
    msg["id"] = id;
    match result {
        Ok(v) => msg["result"] = v,
        Err((code, message)) => msg["error"] = json!({"code": code, "message": message}),
    }
    msg
}

/// A notification's JSON.
pub(super) fn notification(method: &str, params: Value) -> Value {
    let mut msg = json!({"jsonrpc": "2.0", "method": method});
    msg["params"] = params;
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(input: &[u8]) -> Vec<String> {
        let mut r = std::io::BufReader::new(input);
        let mut out = Vec::new();
        let mut resync = false;
        while let Some(m) = next(&mut r, 1000, &mut resync) {
            out.push(match m {
                Incoming::Request(q) => format!("request {} {}", q.id, q.method),
                Incoming::Notification { method, .. } => format!("notification {method}"),
                Incoming::Response => "response".into(),
                Incoming::Invalid { code, .. } => format!("invalid {code}"),
            });
        }
        out
    }

    fn frame(body: &str) -> String {
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    }

    #[test]
    fn each_bad_frame_is_answered_and_the_stream_goes_on() {
        let ok = frame(r#"{"jsonrpc":"2.0","id":1,"method":"a"}"#);
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (frame("{nope").into_bytes(), "invalid -32700"),
            (frame("[1,2]").into_bytes(), "invalid -32600"),
            (frame("42").into_bytes(), "invalid -32600"),
            (frame(r#"{"id":1}"#).into_bytes(), "invalid -32600"),
            (
                frame(r#"{"id":{},"method":"a"}"#).into_bytes(),
                "invalid -32600",
            ),
            (
                [b"Content-Length: 3\r\n\r\n".as_slice(), b"\"\xff\""].concat(),
                "invalid -32700",
            ),
            (b"Content-Length: x\r\n\r\n{}".to_vec(), "invalid -32700"),
            (b"Content-Type: a\r\n\r\n{}\n".to_vec(), "invalid -32700"),
            (b"Content-Length: 2000\r\n\r\n".to_vec(), "invalid -32600"),
        ];
        for (bad, want) in cases {
            let mut input = bad.clone();
            // An oversized body is skipped without being held.
            if want == "invalid -32600" && bad.starts_with(b"Content-Length: 2000") {
                input.extend(std::iter::repeat_n(b' ', 2000));
            }
            input.extend_from_slice(ok.as_bytes());
            let got = all(&input);
            assert_eq!(
                got,
                [want, "request 1 a"],
                "{}",
                String::from_utf8_lossy(&bad)
            );
        }
    }

    #[test]
    fn a_huge_length_is_not_allocated() {
        // Passed over as it streams in; the input ends inside the body.
        let input = b"Content-Length: 1000000000000\r\n\r\n{}";
        assert!(all(input).is_empty());
        let mut input = b"Content-Length: 1500\r\n\r\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', 1500));
        input.extend_from_slice(frame(r#"{"id":2,"method":"b"}"#).as_bytes());
        assert_eq!(all(&input), ["invalid -32600", "request 2 b"]);
    }

    #[test]
    fn notifications_and_responses() {
        let input = frame(r#"{"jsonrpc":"2.0","method":"exit"}"#)
            + &frame(r#"{"jsonrpc":"2.0","id":3,"result":null}"#);
        assert_eq!(all(input.as_bytes()), ["notification exit", "response"]);
    }
}
