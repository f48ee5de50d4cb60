//! LSP framing (`Content-Length` headers, then a JSON body) on standard
//! input and output, written to survive any input.
//!
//! A malformed frame is answered with a JSON-RPC error and the stream goes
//! on: invalid JSON or UTF-8 gets −32700, a batch or something that is not
//! a message gets −32600, a body over the size limit is answered at once,
//! before a byte of it is read, and a header block without a usable
//! `Content-Length` is answered too. After any bad bytes (those, a body
//! that is not JSON, stray bytes before a header) the reader
//! resynchronises: it passes over everything up to the next
//! `Content-Length:` header, wherever on its line that header starts, so
//! bytes without a line end before a header never swallow the frame that
//! follows. Only the end of input ends the connection.
//!
//! A request's id is kept as the JSON text it came as and echoed as that
//! text, so an integer too large for 64 bits comes back the same integer,
//! not a float.

use std::collections::VecDeque;
use std::io::{BufRead, Read, Write};

use crossbeam_channel::{Receiver, Sender};
use mend_service::{Failure, Kind};
use serde_json::{Value, json};

/// JSON-RPC: the body is not JSON (or not UTF-8).
pub(super) const PARSE_ERROR: i32 = -32700;
/// JSON-RPC: the JSON is not a valid request.
pub(super) const INVALID_REQUEST: i32 = -32600;

/// The longest header line kept; of a longer one only its end is kept,
/// where a `Content-Length` after stray bytes would be.
const MAX_HEADER_LINE: usize = 8 << 10;

/// The header that starts every frame, as compared (ASCII case ignored).
const LENGTH_HEADER: &str = "content-length:";

/// A request's id: the JSON text it was sent as (a number, a string or
/// `null`), echoed as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Id(String);

impl Id {
    /// The id of an answer to a frame whose id could not be read.
    pub(crate) fn null() -> Id {
        Id("null".into())
    }
}

impl std::fmt::Display for Id {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A request from the editor.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    /// Its id, echoed in the response.
    pub id: Id,
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
        id: Id,
        /// The JSON-RPC error code.
        code: i32,
        /// What was wrong and what to send instead.
        message: String,
    },
}

/// Reads frames from `input` on a thread until it ends; each becomes one
/// [`Incoming`], sent as soon as it is read. The channel closes at the end
/// of input.
pub(super) fn reader(input: impl Read + Send + 'static, limit: usize) -> Receiver<Incoming> {
    let (tx, rx) = crossbeam_channel::bounded(64);
    let _ = std::thread::Builder::new()
        .name("mend-editor-in".into())
        .spawn(move || {
            let mut frames = Frames::new(std::io::BufReader::new(input), limit);
            while let Some(m) = frames.next() {
                if tx.send(m).is_err() {
                    return;
                }
            }
        });
    rx
}

/// Writes each message body, framed, to `output` on a thread; the thread
/// ends when every sender is dropped or the output fails.
pub(super) fn writer(
    output: impl Write + Send + 'static,
) -> (Sender<String>, std::thread::JoinHandle<()>) {
    let (tx, rx) = crossbeam_channel::unbounded::<String>();
    let handle = std::thread::spawn(move || {
        let mut out = std::io::BufWriter::new(output);
        for body in rx {
            let framed = write!(out, "Content-Length: {}\r\n\r\n{body}", body.len());
            if framed.and_then(|()| out.flush()).is_err() {
                return;
            }
        }
    });
    (tx, handle)
}

/// A header block as read.
struct Head {
    /// The body's length, or why there is none to use.
    length: Result<u64, String>,
    /// Bytes before the header that were not a frame (none while
    /// resynchronising, whose bytes were answered already).
    stray: Option<u64>,
}

/// The frames of one input.
struct Frames<R> {
    r: R,
    limit: usize,
    /// Set after bad bytes: lines are passed over up to the next
    /// `Content-Length` header.
    resync: bool,
    /// Messages read but not handed out yet.
    queued: VecDeque<Incoming>,
}

impl<R: BufRead> Frames<R> {
    fn new(r: R, limit: usize) -> Frames<R> {
        Frames {
            r,
            limit,
            resync: false,
            queued: VecDeque::new(),
        }
    }

    /// The next message, or `None` at the end of input.
    fn next(&mut self) -> Option<Incoming> {
        if let Some(m) = self.queued.pop_front() {
            return Some(m);
        }
        let head = self.headers()?;
        let Some(n) = head.stray else {
            return self.frame(head.length);
        };
        // The stray bytes are answered first, then the frame they preceded.
        let stray = invalid(
            PARSE_ERROR,
            format!(
                "{n} bytes before a Content-Length header were not a frame and were passed over; \
                 each message is `Content-Length: N`, a blank line, then N bytes of JSON"
            ),
        );
        if let Some(m) = self.frame(head.length) {
            self.queued.push_back(m);
        }
        Some(stray)
    }

    /// The body after a header block: a message, or the error that answers
    /// it. An oversized body is answered before any of it is read, and is
    /// then passed over as bad bytes.
    fn frame(&mut self, length: Result<u64, String>) -> Option<Incoming> {
        let length = match length {
            Ok(n) => n,
            Err(message) => {
                self.resync = true;
                return Some(invalid(PARSE_ERROR, message));
            }
        };
        if length > self.limit as u64 {
            self.resync = true;
            return Some(invalid(
                INVALID_REQUEST,
                format!(
                    "a message of {length} bytes is over the limit of {}; send less (its bytes \
                     are passed over up to the next Content-Length header)",
                    self.limit
                ),
            ));
        }
        let mut body = vec![0; usize::try_from(length).ok()?];
        self.r.read_exact(&mut body).ok()?;
        let m = parse(&body);
        // A body that is not JSON may have had the wrong length: what
        // follows it is looked through for the next header.
        if matches!(
            m,
            Incoming::Invalid {
                code: PARSE_ERROR,
                ..
            }
        ) {
            self.resync = true;
        }
        Some(m)
    }

    /// Reads a header block; `None` at the end of input. A line holding
    /// `Content-Length:` after other bytes starts a new block there: what
    /// came before is stray.
    fn headers(&mut self) -> Option<Head> {
        let mut length: Option<Result<u64, String>> = None;
        let mut seen = false;
        let mut stray = None;
        loop {
            let (mut line, cut) = line(&mut self.r)?;
            match header_at(&line) {
                Some(at) if at > 0 || cut > 0 || self.resync => {
                    if !self.resync {
                        stray = Some(cut + at as u64);
                    }
                    line.drain(..at);
                    length = None;
                    seen = false;
                }
                // While resynchronising, anything but a header is passed over.
                None if self.resync => continue,
                _ => {}
            }
            let text = String::from_utf8_lossy(&line);
            let text = text.trim_end_matches(['\r', '\n']);
            self.resync = false;
            if text.is_empty() {
                if !seen {
                    // Blank lines between frames are tolerated.
                    continue;
                }
                let length = length.unwrap_or_else(|| {
                    Err(
                        "a frame without a Content-Length header; each message needs \
                         `Content-Length: N` and a blank line before its JSON"
                            .into(),
                    )
                });
                return Some(Head { length, stray });
            }
            seen = true;
            if text
                .get(..LENGTH_HEADER.len())
                .is_some_and(|h| h.eq_ignore_ascii_case(LENGTH_HEADER))
            {
                let value = text[LENGTH_HEADER.len()..].trim();
                length = Some(value.parse::<u64>().map_err(|_| {
                    format!(
                        "`Content-Length: {value}` is not a byte count; send the body's length in bytes"
                    )
                }));
            } else if !text.contains(':') {
                let length = Err(format!(
                    "`{}` is not a header; a frame is `Content-Length: N`, a blank line, then N bytes of JSON",
                    text.chars().take(80).collect::<String>()
                ));
                return Some(Head { length, stray });
            }
        }
    }
}

/// Where the last `Content-Length:` of a line starts.
fn header_at(line: &[u8]) -> Option<usize> {
    line.windows(LENGTH_HEADER.len())
        .rposition(|w| w.eq_ignore_ascii_case(LENGTH_HEADER.as_bytes()))
}

/// One line, of which at most [`MAX_HEADER_LINE`] bytes are kept (its
/// end), with how many bytes were cut from its start; `None` at the end.
fn line(r: &mut impl BufRead) -> Option<(Vec<u8>, u64)> {
    let mut out = Vec::new();
    let mut cut = 0u64;
    loop {
        let buf = r.fill_buf().ok()?;
        if buf.is_empty() {
            return (!out.is_empty()).then_some((out, cut));
        }
        let (take, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        out.extend_from_slice(&buf[..take]);
        r.consume(take);
        if out.len() > MAX_HEADER_LINE {
            let over = out.len() - MAX_HEADER_LINE;
            out.drain(..over);
            cut += over as u64;
        }
        if done {
            return Some((out, cut));
        }
    }
}

fn invalid(code: i32, message: impl Into<String>) -> Incoming {
    Incoming::Invalid {
        id: Id::null(),
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
    // The id as sent: a number keeps its digits (a float would round an
    // integer past 2^53), a string its spelling.
    let id = id.map(|v| {
        let raw = std::str::from_utf8(body)
            .ok()
            .and_then(|text| raw_member(text, "id"));
        Id(raw.map_or_else(|| v.to_string(), str::to_owned))
    });
    let params = m.remove("params").unwrap_or(Value::Null);
    match (m.remove("method"), id) {
        (Some(Value::String(method)), Some(id)) => {
            Incoming::Request(Request { id, method, params })
        }
        (Some(Value::String(method)), None) => Incoming::Notification { method, params },
        (Some(_), id) => Incoming::Invalid {
            id: id.unwrap_or_else(Id::null),
            code: INVALID_REQUEST,
            message: "method must be a string".into(),
        },
        (None, Some(_)) if m.contains_key("result") || m.contains_key("error") => {
            Incoming::Response
        }
        (None, id) => Incoming::Invalid {
            id: id.unwrap_or_else(Id::null),
            code: INVALID_REQUEST,
            message: "a message needs a method (or, for a response, a result or an error)".into(),
        },
    }
}

/// The JSON text of member `key` of the object `text` (valid JSON, as
/// parsed already): the last one, as the parsed object keeps the last.
fn raw_member<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let b = text.as_bytes();
    let mut i = skip_space(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    let mut found = None;
    loop {
        i = skip_space(b, i);
        match b.get(i)? {
            b'}' => return found,
            b',' => {
                i += 1;
                continue;
            }
            b'"' => {}
            _ => return None,
        }
        let end = skip_string(b, i)?;
        let name: String = serde_json::from_str(&text[i..end]).ok()?;
        i = skip_space(b, end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = skip_space(b, i + 1);
        let end = skip_value(b, i)?;
        if name == key {
            found = Some(&text[i..end]);
        }
        i = end;
    }
}

fn skip_space(b: &[u8], mut i: usize) -> usize {
    while b
        .get(i)
        .is_some_and(|c| matches!(c, b' ' | b'\t' | b'\r' | b'\n'))
    {
        i += 1;
    }
    i
}

/// The end of the string starting at `i` (its opening quote).
fn skip_string(b: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    loop {
        match b.get(i)? {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
}

/// The end of the JSON value starting at `i`.
fn skip_value(b: &[u8], mut i: usize) -> Option<usize> {
    match b.get(i)? {
        b'"' => skip_string(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            loop {
                match b.get(i)? {
                    b'"' => {
                        i = skip_string(b, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        _ => {
            while b
                .get(i)
                .is_some_and(|c| !matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n'))
            {
                i += 1;
            }
            Some(i)
        }
    }
}

/// A JSON-RPC error object. Its `data` is the failure in the shape every
/// front-end reports (`{"kind", "message", …}`): the one given, or one
/// whose kind the code implies.
pub(super) fn error(code: i32, message: &str, data: Option<Value>) -> Value {
    let data = data.unwrap_or_else(|| {
        let kind = match code {
            super::INVALID_PARAMS => Kind::Usage,
            super::REFUSED => Kind::Refused,
            _ => Kind::Protocol,
        };
        json!(Failure::new(kind, message))
    });
    json!({"code": code, "message": message, "data": data})
}

/// A response's JSON text, echoing `id` as it was sent.
pub(super) fn response(id: &Id, result: Result<Value, Value>) -> String {
    let (key, value) = match result {
        Ok(v) => ("result", v),
        Err(e) => ("error", e),
    };
    format!(r#"{{"jsonrpc":"2.0","id":{id},"{key}":{value}}}"#)
}

/// A notification's JSON text.
pub(super) fn notification(method: &str, params: Value) -> String {
    let mut msg = json!({"jsonrpc": "2.0", "method": method});
    msg["params"] = params;
    msg.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(input: &[u8]) -> Vec<String> {
        let mut frames = Frames::new(std::io::BufReader::new(input), 1000);
        let mut out = Vec::new();
        while let Some(m) = frames.next() {
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
    fn a_huge_length_is_answered_before_its_bytes() {
        // Answered at once, though the input ends inside the body.
        let input = b"Content-Length: 1000000000000\r\n\r\n{}";
        assert_eq!(all(input), ["invalid -32600"]);
        let mut input = b"Content-Length: 1500\r\n\r\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', 1500));
        input.extend_from_slice(frame(r#"{"id":2,"method":"b"}"#).as_bytes());
        assert_eq!(all(&input), ["invalid -32600", "request 2 b"]);
        // Nothing of the body is read before the answer: the reader asks
        // for more input only after handing it out.
        struct Header(Option<&'static [u8]>);
        impl Read for Header {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let Some(bytes) = self.0.take() else {
                    panic!("read past the header before answering");
                };
                buf[..bytes.len()].copy_from_slice(bytes);
                Ok(bytes.len())
            }
        }
        let input = Header(Some(b"Content-Length: 1000000000000\r\n\r\n"));
        let mut frames = Frames::new(std::io::BufReader::new(input), 1000);
        assert!(matches!(
            frames.next(),
            Some(Incoming::Invalid {
                code: INVALID_REQUEST,
                ..
            })
        ));
    }

    /// Bytes before a header, with or without a line end, are answered
    /// and passed over; the frame after them is read. A long run of them
    /// is kept only by its end.
    #[test]
    fn stray_bytes_never_swallow_the_next_frame() {
        let ok = frame(r#"{"jsonrpc":"2.0","id":1,"method":"a"}"#);
        let long = "x".repeat(3 * MAX_HEADER_LINE);
        for stray in [
            "abc",
            "abc\r\n",
            "}\n\n{",
            "Content-Type: a\r\nzz",
            long.as_str(),
        ] {
            let input = format!("{stray}{ok}{ok}");
            assert_eq!(
                all(input.as_bytes()),
                ["invalid -32700", "request 1 a", "request 1 a"],
                "{:?}",
                &stray[..stray.len().min(40)]
            );
        }
        // A body shorter than its length: what follows is looked through
        // for the next header.
        let input = format!("Content-Length: 50\r\n\r\n{{}}{ok}{ok}");
        assert_eq!(all(input.as_bytes()), ["invalid -32700", "request 1 a"]);
    }

    /// An id comes back as the text it was sent as: an integer past 64
    /// bits stays that integer, a float and a string keep their spelling.
    #[test]
    fn ids_are_echoed_exactly() {
        for id in [
            "18446744073709551617",
            "-9223372036854775809",
            "1e3",
            "1.50",
            r#""a\u0062""#,
            "7",
            "null",
        ] {
            let body =
                format!(r#"{{"jsonrpc":"2.0","id": {id} ,"method":"a","params":{{"id":1}}}}"#);
            let Incoming::Request(q) = parse(body.as_bytes()) else {
                panic!("{body}");
            };
            assert_eq!(q.id.to_string(), id);
            let reply = response(&q.id, Ok(Value::Null));
            assert_eq!(
                reply,
                format!(r#"{{"jsonrpc":"2.0","id":{id},"result":null}}"#)
            );
        }
    }

    proptest::proptest! {
        /// Whatever bytes come between frames (any that do not themselves
        /// hold a `Content-Length:` header), every frame is read, once and
        /// in order: the bad bytes only add errors.
        #[test]
        fn bad_bytes_between_frames_lose_no_frame(
            junk in proptest::collection::vec(
                proptest::collection::vec(
                    proptest::prop_oneof![
                        proptest::sample::select(b"\r\n:{}\" \x00\xffCcl-".to_vec()),
                        proptest::num::u8::ANY,
                    ],
                    0..40,
                ),
                1..6,
            ),
        ) {
            let mut input = Vec::new();
            let mut want = Vec::new();
            for (n, bad) in junk.iter().enumerate() {
                proptest::prop_assume!(header_at(bad).is_none());
                input.extend_from_slice(bad);
                let body = format!(r#"{{"jsonrpc":"2.0","id":{n},"method":"m"}}"#);
                input.extend_from_slice(frame(&body).as_bytes());
                want.push(format!("request {n} m"));
            }
            let got: Vec<String> = all(&input)
                .into_iter()
                .filter(|m| !m.starts_with("invalid "))
                .collect();
            proptest::prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn notifications_and_responses() {
        let input = frame(r#"{"jsonrpc":"2.0","method":"exit"}"#)
            + &frame(r#"{"jsonrpc":"2.0","id":3,"result":null}"#);
        assert_eq!(all(input.as_bytes()), ["notification exit", "response"]);
    }
}
