//! The attack suite: untrusted repositories, hostile paths, special files
//! and a careless or hostile MCP client, each run against the built `mend`
//! in its own sandbox (see `harness`). Every case ends with the same
//! checks: nothing outside the root changed, no `.git` changed, nothing
//! `.mend` held changed, and the CLI and an MCP session still answer.
//!
//! One module per threat. Each case sets up its sandbox, calls
//! `baseline()`, attacks, and checks what the attack itself must show; the
//! harness then checks what every case must leave intact.
//!
//! One test per case, named `attacks::THREAT::NAME`: `cargo test -p mend
//! --test cases attacks::special_files::` runs one threat, and a case's
//! name runs that case.

use libtest_mimic::{Failed, Trial};
use mend_test_support::search_replace;
use serde_json::{Value, json};

use harness::{Out, PROBE, Sandbox};

/// What a case returns: `Err` says what the attack achieved.
type R = Result<(), String>;

/// One attack: set up, baseline, attack, check.
type Case = fn(&Sandbox) -> R;

macro_rules! ensure {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err(format!($($fmt)+));
        }
    };
}

mod encodings;
mod git_dirs;
mod harness;
mod journals;
mod mcp;
mod mend_dir;
mod names;
mod planted;
mod private;
mod special_files;

/// Every threat's cases, by threat.
const THREATS: &[(&str, &[(&str, Case)])] = &[
    ("journals", journals::ALL),
    ("mend_dir", mend_dir::ALL),
    ("private", private::ALL),
    ("planted", planted::ALL),
    ("git_dirs", git_dirs::ALL),
    ("special_files", special_files::ALL),
    ("names", names::ALL),
    ("mcp", mcp::ALL),
    ("encodings", encodings::ALL),
];

/// One test per case, named `attacks::THREAT::NAME`: the case, then the
/// checks every case must pass.
pub fn trials() -> Vec<Trial> {
    THREATS
        .iter()
        .flat_map(|&(threat, cases)| cases.iter().map(move |&(name, case)| (threat, name, case)))
        .map(|(threat, name, case)| {
            Trial::test(format!("attacks::{threat}::{name}"), move || {
                let s = Sandbox::new();
                case(&s).map_err(|e| Failed::from(format!("attack: {e}")))?;
                s.verify()
                    .map_err(|e| Failed::from(format!("afterwards: {e}")))
            })
        })
        .collect()
}

/// An apply-patch response adding `path` with one line.
fn patch_add(path: &str, line: &str) -> String {
    format!("*** Begin Patch\n*** Add File: {path}\n+{line}\n*** End Patch\n")
}

/// A str_replace JSON response with one edit.
fn str_replace_json(path: &str, old: &str, new: &str) -> String {
    json!([{"path": path, "old_string": old, "new_string": new}]).to_string()
}

/// mend finished, refused, and said `needle`.
fn refused(out: &Out, needle: &str) -> R {
    ensure!(out.code.is_some(), "mend did not finish: {out:?}");
    ensure!(!out.ok(), "mend did not refuse: {out:?}");
    ensure!(
        out.all().contains(needle),
        "the refusal does not say `{needle}`: {out:?}"
    );
    Ok(())
}

/// An MCP tool result that refuses and says `needle`.
fn tool_refused(res: &Value, needle: &str) -> R {
    ensure!(res["error"] == true, "the tool did not refuse: {res}");
    let text = res["text"].as_str().unwrap_or("");
    ensure!(
        text.contains(needle),
        "the refusal does not say `{needle}`: {res}"
    );
    Ok(())
}

/// An MCP tool result that succeeded, its JSON text parsed.
fn tool_ok(res: &Value) -> Result<Value, String> {
    ensure!(res["error"] == false, "the tool failed: {res}");
    serde_json::from_str(res["text"].as_str().unwrap_or("")).map_err(|e| format!("{e}: {res}"))
}

/// `rel` under the root still holds `want`.
fn unchanged(s: &Sandbox, rel: &str, want: &[u8]) -> R {
    let now = s.read(rel);
    ensure!(
        now.as_deref() == Some(want),
        "{rel} changed: {:?}",
        now.map(|b| String::from_utf8_lossy(&b).into_owned())
    );
    Ok(())
}

/// No git hook was installed in the root's repository.
fn no_hook(s: &Sandbox) -> R {
    ensure!(!s.exists(".git/hooks/pre-commit"), "a hook was installed");
    Ok(())
}

/// The raw MCP `initialize` request, for cases that speak JSON-RPC
/// lines to `mend mcp` themselves.
fn initialize() -> String {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "attacks", "version": "0"}}})
    .to_string()
}

/// The raw `notifications/initialized` notification.
fn initialized() -> String {
    json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string()
}

/// A raw `tools/call` request.
fn tools_call(id: u64, tool: &str, args: &Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": tool, "arguments": args}})
    .to_string()
}
