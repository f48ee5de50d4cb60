//! Every editor error carries the failure in the shape every front-end
//! reports, as `error.data`: `{"kind", "message", …}`, its kind as
//! `docs/exit-codes.md` tables it.

use serde_json::{Value, json};

use super::client::{Client, PATIENCE};
use super::workspace;

/// Each kind the editor protocol reports, met for real: the error's
/// `data` is the failure, its kind the row's and its message the error's.
#[test]
fn editor_errors_carry_their_kind_as_data() {
    let dir = workspace(&[("f.txt", "one\n")]);
    let mut c = Client::start(dir.path());
    let rows: [(&str, Value, i64, &str); 7] = [
        ("no/such/method", json!({}), -32601, "protocol"),
        ("initialize", json!({}), -32600, "protocol"),
        ("buffer/open", json!({"path": 3}), -32602, "usage"),
        (
            "pending/accept",
            json!({"session": "nope"}),
            -32001,
            "no_session",
        ),
        (
            "pending/status",
            json!({"session": ".x"}),
            -32001,
            "bad_session",
        ),
        ("turn/status", json!({}), -32001, "no_turn"),
        (
            "turn/reject",
            json!({"paths": ["f.txt"]}),
            -32001,
            "no_turn",
        ),
    ];
    for (method, params, code, kind) in rows {
        reply_is(&mut c, method, params, code, kind);
    }
    c.request("turn/begin", json!({})).expect("a turn begins");
    reply_is(
        &mut c,
        "turn/reject",
        json!({"paths": ["f.txt"]}),
        -32001,
        "refused",
    );
    assert_eq!(std::fs::read(dir.path().join("f.txt")).unwrap(), b"one\n");
}

/// Sends `method` and checks its error: `code`, and `data` the failure
/// of `kind` with the error's message.
fn reply_is(c: &mut Client, method: &str, params: Value, code: i64, kind: &str) {
    let id = c.send_request(method, params);
    let reply = c.reply_within(id, PATIENCE).expect("an answer");
    let e = &reply["error"];
    assert_eq!(
        (&e["code"], &e["data"]["kind"]),
        (&json!(code), &json!(kind)),
        "{method}: {reply}"
    );
    assert_eq!(e["data"]["message"], e["message"], "{method}: {reply}");
}
