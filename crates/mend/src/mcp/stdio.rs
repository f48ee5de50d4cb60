//! The stdio transport, with what rmcp's own leaves out: a line that is not
//! JSON gets JSON-RPC's parse error (-32700), and one that is JSON but not
//! a JSON-RPC message gets "invalid request" (-32600), instead of silence.
//!
//! Standard input is read here; messages go on to rmcp through an in-memory
//! pipe. rmcp's replies come back through a second pipe and are written to
//! standard output by one writer, together with the errors made here, so
//! lines never interleave. When standard input closes, rmcp's input closes,
//! and the server stops once the calls in flight are done.

use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, DuplexStream};
use tokio::sync::mpsc;

/// Frames larger than this are refused without being parsed.
const MAX_LINE: usize = 64 * 1024 * 1024;

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
        return Some(too_long(line.len()));
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
    TooLong(usize),
    NotUtf8,
}

/// The next line of `r` (its ending removed), or `None` at the end.
async fn next_line<R: AsyncBufRead + Unpin>(r: &mut R) -> std::io::Result<Option<Line>> {
    let mut kept: Vec<u8> = Vec::new();
    let mut total = 0usize;
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
        } else if kept.capacity() > 0 {
            // Over the limit: what was kept is refused anyway.
            kept = Vec::new();
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
        return Ok(Some(Line::TooLong(total)));
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
            Line::TooLong(n) => Some(too_long(*n)),
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

/// The refusal of a line of `len` bytes, over [`MAX_LINE`].
fn too_long(len: usize) -> Value {
    json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": format!("message of {len} bytes, over the {MAX_LINE}-byte limit")}})
}

async fn write_output(from_server: DuplexStream, mut errors: mpsc::UnboundedReceiver<String>) {
    let mut replies = BufReader::new(from_server).lines();
    let mut stdout = tokio::io::stdout();
    let mut errors_open = true;
    loop {
        let line = tokio::select! {
            l = replies.next_line() => match l {
                Ok(Some(l)) => l,
                Ok(None) | Err(_) => {
                    // rmcp is done; errors for lines it never saw were
                    // queued before its input closed.
                    while let Ok(e) = errors.try_recv() {
                        let _ = stdout.write_all(format!("{e}\n").as_bytes()).await;
                    }
                    let _ = stdout.flush().await;
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
        if stdout.write_all(&framed).await.is_err() || stdout.flush().await.is_err() {
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
}
