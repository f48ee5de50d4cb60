//! The stdio transport, with what rmcp's own leaves out: a line that is not
//! JSON gets JSON-RPC's parse error (-32700), and one that is JSON but not
//! a JSON-RPC message gets "invalid request" (-32600), instead of silence.
//!
//! Standard input is read here; messages go on to rmcp through an in-memory
//! pipe. rmcp's replies come back through a second pipe and are written to
//! standard output by one writer, together with the errors made here, so
//! lines never interleave. When standard input closes, rmcp's input closes,
//! and the server stops once the calls in flight are done.

use mend_service::{Failure, Kind};
use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, DuplexStream};
use tokio::sync::mpsc;

/// Messages larger than this are answered with an error naming the limit,
/// without being kept or parsed. A file mend would write (up to the
/// workspace's size limit) fits in one, escaped as JSON.
const MAX_LINE: usize = 64 * 1024 * 1024;

const _: () = assert!(MAX_LINE as u64 >= 2 * mend_workspace::DEFAULT_MAX_BYTES);

/// The pipe ends rmcp serves on, and the writer task, which finishes once
/// rmcp's last reply is on standard output.
pub(super) struct Transport {
    /// What rmcp reads.
    pub input: DuplexStream,
    /// What rmcp writes.
    pub output: DuplexStream,
    /// Await after the service ends, so no reply is lost at exit.
    pub writer: tokio::task::JoinHandle<()>,
}

/// Starts the filter and writer tasks.
pub(super) fn transport() -> Transport {
    let (to_server, input) = tokio::io::duplex(1 << 16);
    let (output, from_server) = tokio::io::duplex(1 << 16);
    let (errors, error_rx) = mpsc::unbounded_channel::<String>();
    tokio::spawn(filter_input(to_server, errors));
    let writer = tokio::spawn(write_output(from_server, error_rx));
    Transport {
        input,
        output,
        writer,
    }
}

/// What to answer for one input line instead of passing it on, if anything.
pub(super) fn reject(line: &str) -> Option<Value> {
    let error = |id: Value, code: i64, message: String| json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    if line.len() > MAX_LINE {
        let mut id = IdScan::default();
        id.feed(line.as_bytes());
        return Some(too_long(line.len(), &id.found.unwrap_or(Value::Null)));
    }
    let value: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => return Some(error(Value::Null, -32700, format!("Parse error: {e}"))),
    };
    let Some(obj) = value.as_object() else {
        return Some(error(
            Value::Null,
            -32600,
            "Invalid Request: a JSON-RPC message is a JSON object".into(),
        ));
    };
    let id = obj
        .get("id")
        .filter(|v| v.is_string() || v.is_number())
        .cloned()
        .unwrap_or(Value::Null);
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Some(error(
            id,
            -32600,
            "Invalid Request: `jsonrpc` must be \"2.0\"".into(),
        ));
    }
    let is_message = obj.get("method").is_some_and(Value::is_string)
        || obj.contains_key("result")
        || obj.contains_key("error");
    if !is_message {
        return Some(error(
            id,
            -32600,
            "Invalid Request: a message needs a `method` (or is a response)".into(),
        ));
    }
    None
}

/// One line of input: its text, or why it has none. A line longer than
/// [`MAX_LINE`] is read to its end without being kept, so a huge line costs
/// no more memory than the limit.
enum Line {
    Text(String),
    /// Its length, and its JSON-RPC `id` when it has one.
    TooLong(usize, Value),
    NotUtf8,
}

/// The next line of `r` (its ending removed), or `None` at the end.
async fn next_line<R: AsyncBufRead + Unpin>(r: &mut R) -> std::io::Result<Option<Line>> {
    let mut kept: Vec<u8> = Vec::new();
    let mut total = 0usize;
    let mut id = IdScan::default();
    loop {
        let chunk = r.fill_buf().await?;
        if chunk.is_empty() {
            if total == 0 {
                return Ok(None);
            }
            break;
        }
        let (take, ends) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        total += take;
        if total <= MAX_LINE + 2 {
            kept.extend_from_slice(&chunk[..take]);
        } else {
            if kept.capacity() > 0 {
                // Over the limit: what was kept is refused anyway, once
                // its id is found.
                id.feed(&kept);
                kept = Vec::new();
            }
            id.feed(&chunk[..take]);
        }
        r.consume(take);
        if ends {
            break;
        }
    }
    for end in [b'\n', b'\r'] {
        if kept.last() == Some(&end) {
            kept.pop();
        }
    }
    if total > MAX_LINE + 2 {
        return Ok(Some(Line::TooLong(total, id.found.unwrap_or(Value::Null))));
    }
    Ok(Some(match String::from_utf8(kept) {
        Ok(text) => Line::Text(text),
        Err(_) => Line::NotUtf8,
    }))
}

async fn filter_input(mut to_server: DuplexStream, errors: mpsc::UnboundedSender<String>) {
    let mut input = BufReader::new(tokio::io::stdin());
    loop {
        // End of input (or unreadable input) closes rmcp's side.
        let Ok(Some(line)) = next_line(&mut input).await else {
            break;
        };
        let refused = match &line {
            Line::Text(text) if text.trim().is_empty() => continue,
            Line::Text(text) => reject(text),
            Line::TooLong(n, id) => Some(too_long(*n, id)),
            Line::NotUtf8 => Some(
                json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error: the line is not UTF-8"}}),
            ),
        };
        if let Some(reply) = refused {
            tracing::warn!("refused an input line: {}", reply["error"]["message"]);
            let _ = errors.send(reply.to_string());
            continue;
        }
        let Line::Text(text) = line else { continue };
        let mut framed = text.into_bytes();
        framed.push(b'\n');
        if to_server.write_all(&framed).await.is_err() {
            break;
        }
    }
    let _ = to_server.shutdown().await;
}

/// The refusal of a message of `len` bytes, over [`MAX_LINE`], answering
/// request `id`.
fn too_long(len: usize, id: &Value) -> Value {
    let message = format!(
        "the message is {len} bytes, over mend mcp's limit of {MAX_LINE} bytes a message; nothing was done. Send the change in smaller calls (edit_file with only the changed lines, not a whole file)"
    );
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32600, "message": message,
        "data": Failure::new(Kind::Protocol, message.clone())}})
}

/// Finds a message's top-level `id` as its bytes go by, keeping none of
/// the rest: how a message too long to keep is still answered to the
/// request that sent it, wherever its `id` is (clients put it first or
/// last).
#[derive(Default)]
struct IdScan {
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// At depth 1, a key may begin (after `{` or `,`).
    key_next: bool,
    /// Reading a key at depth 1: its first bytes (three at most: enough to
    /// tell `id` from longer keys).
    key: Option<Vec<u8>>,
    /// The key just read was `id`: its value comes after the `:`.
    id_key: bool,
    /// The `id`'s value as it is read.
    value: Option<Vec<u8>>,
    /// The `id`, once read (a string or a number).
    found: Option<Value>,
    /// Stop looking: found, or the `id` was not one to answer.
    done: bool,
}

impl IdScan {
    fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.done {
                return;
            }
            if self.value.is_some() {
                self.value_byte(b);
            } else if self.in_string {
                self.string_byte(b);
            } else {
                self.structure_byte(b);
            }
        }
    }

    fn string_byte(&mut self, b: u8) {
        if self.escaped {
            self.escaped = false;
        } else if b == b'\\' {
            self.escaped = true;
        } else if b == b'"' {
            self.in_string = false;
            if let Some(key) = self.key.take() {
                self.id_key = key == b"id";
            }
            return;
        }
        if let Some(key) = self.key.as_mut().filter(|k| k.len() < 3) {
            key.push(b);
        }
    }

    fn structure_byte(&mut self, b: u8) {
        match b {
            b'"' => {
                self.in_string = true;
                if self.depth == 1 && self.key_next {
                    self.key = Some(Vec::new());
                    self.key_next = false;
                }
            }
            b'{' | b'[' => {
                self.depth += 1;
                self.key_next = self.depth == 1 && b == b'{';
            }
            b'}' | b']' => self.depth = self.depth.saturating_sub(1),
            b',' if self.depth == 1 => self.key_next = true,
            b':' if self.depth == 1 && self.id_key => {
                self.id_key = false;
                self.value = Some(Vec::new());
            }
            b':' if self.depth == 1 => self.id_key = false,
            _ => {}
        }
    }

    /// A byte of the `id`'s value: a string (to its closing quote) or a
    /// number (to the `,`, `}` or space after it).
    fn value_byte(&mut self, b: u8) {
        let Some(v) = self.value.as_mut() else { return };
        let end = match v.first() {
            None if b.is_ascii_whitespace() => return,
            Some(b'"') => {
                v.push(b);
                let closed = b == b'"' && !self.escaped && v.len() > 1;
                self.escaped = !self.escaped && b == b'\\';
                closed
            }
            _ if matches!(b, b',' | b'}') || b.is_ascii_whitespace() => true,
            _ => {
                v.push(b);
                false
            }
        };
        if v.len() > 256 {
            self.done = true;
        } else if end {
            self.found = serde_json::from_slice::<Value>(v)
                .ok()
                .filter(|id| id.is_string() || id.is_number());
            self.done = true;
        }
    }
}

/// Writes one framed line to standard output and flushes it, on this
/// worker thread: tokio's own stdout hands every write to the blocking
/// pool and waits for it, a thread hop on every reply.
fn put_line(line: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    let write = || {
        let mut out = std::io::stdout().lock();
        out.write_all(line)?;
        out.flush()
    };
    match tokio::runtime::Handle::current().runtime_flavor() {
        tokio::runtime::RuntimeFlavor::MultiThread => tokio::task::block_in_place(write),
        _ => write(),
    }
}

async fn write_output(from_server: DuplexStream, mut errors: mpsc::UnboundedReceiver<String>) {
    let mut replies = BufReader::new(from_server).lines();
    let mut errors_open = true;
    loop {
        let line = tokio::select! {
            l = replies.next_line() => match l {
                Ok(Some(l)) => l,
                Ok(None) | Err(_) => {
                    // rmcp is done; errors for lines it never saw were
                    // queued before its input closed.
                    while let Ok(e) = errors.try_recv() {
                        let _ = put_line(format!("{e}\n").as_bytes());
                    }
                    break;
                }
            },
            e = errors.recv(), if errors_open => match e {
                Some(e) => e,
                None => {
                    errors_open = false;
                    continue;
                }
            },
        };
        let mut framed = line.into_bytes();
        framed.push(b'\n');
        if put_line(&framed).is_err() {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_messages_get_json_rpc_errors() {
        assert_eq!(reject("{not json").unwrap()["error"]["code"], -32700);
        assert_eq!(reject("[1, 2]").unwrap()["error"]["code"], -32600);
        let r = reject(r#"{"id": 7, "method": "x"}"#).unwrap();
        assert_eq!(
            (r["id"].clone(), r["error"]["code"].clone()),
            (json!(7), json!(-32600))
        );
        assert!(reject(r#"{"jsonrpc": "2.0", "id": 1, "method": "ping"}"#).is_none());
        assert!(reject(r#"{"jsonrpc": "2.0", "id": 1, "result": {}}"#).is_none());
    }

    fn id_of(line: &str) -> Option<Value> {
        let mut scan = IdScan::default();
        // Fed in pieces, as lines arrive.
        for piece in line.as_bytes().chunks(3) {
            scan.feed(piece);
        }
        scan.found
    }

    #[test]
    fn a_message_s_id_is_found_wherever_it_is() {
        let big = "x".repeat(1000);
        for (line, want) in [
            (
                format!(r#"{{"jsonrpc":"2.0","id":7,"method":"m","params":{{"t":"{big}"}}}}"#),
                json!(7),
            ),
            (
                format!(
                    r#"{{"method":"m","params":{{"id":1,"t":"{big}"}},"jsonrpc":"2.0","id":"a\"b"}}"#
                ),
                json!("a\"b"),
            ),
            (
                format!(r#"{{ "params" : {{"t":"\"id\": 5 {big}"}}, "id" : 12 }}"#),
                json!(12),
            ),
            (
                r#"{"idx":3,"params":["id",{"id":4}],"id":-2}"#.to_owned(),
                json!(-2),
            ),
        ] {
            assert_eq!(id_of(&line), Some(want), "{line}");
        }
        for line in [
            r#"{"method":"m","params":{"id":1}}"#,
            r#"{"id":null}"#,
            r#"{"id":{"a":1}}"#,
            "xxxx",
        ] {
            assert_eq!(id_of(line), None, "{line}");
        }
    }
}
