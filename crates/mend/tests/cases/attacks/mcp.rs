//! The MCP surface as a careless or hostile client uses it: `dry_run`
//! that must write nothing, misspelt and unknown fields, malformed JSON,
//! the `--tools` allow-list, saturating counts, and calls across two
//! roots.

use super::*;

/// This threat's cases, by name.
pub(super) const ALL: &[(&str, Case)] = &[
    (
        "mcp_write_file_dry_run_writes_nothing",
        mcp_write_file_dry_run_writes_nothing,
    ),
    (
        "mcp_apply_edits_dry_run_writes_nothing",
        mcp_apply_edits_dry_run_writes_nothing,
    ),
    (
        "mcp_apply_patch_dry_run_writes_nothing",
        mcp_apply_patch_dry_run_writes_nothing,
    ),
    (
        "mcp_modify_file_dry_run_writes_nothing",
        mcp_modify_file_dry_run_writes_nothing,
    ),
    (
        "mcp_checkpoint_create_dry_run_creates_nothing",
        mcp_checkpoint_create_dry_run_creates_nothing,
    ),
    (
        "mcp_restore_with_camel_case_dry_run_is_refused",
        mcp_restore_with_camel_case_dry_run_is_refused,
    ),
    (
        "mcp_edit_with_camel_case_expected_version_is_refused",
        mcp_edit_with_camel_case_expected_version_is_refused,
    ),
    (
        "mcp_edit_with_a_malformed_expected_version_is_refused_as_stale",
        mcp_edit_with_a_malformed_expected_version_is_refused_as_stale,
    ),
    (
        "mcp_unknown_field_in_a_nested_edit_is_refused",
        mcp_unknown_field_in_a_nested_edit_is_refused,
    ),
    (
        "mcp_schemas_forbid_unknown_fields",
        mcp_schemas_forbid_unknown_fields,
    ),
    (
        "mcp_tools_flag_serves_only_the_named_tools",
        mcp_tools_flag_serves_only_the_named_tools,
    ),
    (
        "mcp_malformed_json_gets_a_parse_error",
        mcp_malformed_json_gets_a_parse_error,
    ),
    (
        "mcp_non_message_json_gets_invalid_request",
        mcp_non_message_json_gets_invalid_request,
    ),
    (
        "mcp_read_file_counts_saturate",
        mcp_read_file_counts_saturate,
    ),
    (
        "mcp_apply_patch_reaches_the_second_root",
        mcp_apply_patch_reaches_the_second_root,
    ),
    (
        "mcp_apply_edits_reaches_the_second_root",
        mcp_apply_edits_reaches_the_second_root,
    ),
    (
        "mcp_checkpoint_list_reaches_the_second_root",
        mcp_checkpoint_list_reaches_the_second_root,
    ),
    (
        "mcp_one_call_across_two_roots_is_refused",
        mcp_one_call_across_two_roots_is_refused,
    ),
];

fn mcp_write_file_dry_run_writes_nothing(s: &Sandbox) -> R {
    s.write("a.txt", "alpha\n");
    s.baseline();
    let res = s.mcp_call(
        "write_file",
        &json!({"path": "a.txt", "content": "beta\n", "dry_run": true}),
    )?;
    let v = tool_ok(&res)?;
    ensure!(v["diff"].as_str().unwrap_or("").contains("+beta"), "{v}");
    unchanged(s, "a.txt", b"alpha\n")
}

fn mcp_apply_edits_dry_run_writes_nothing(s: &Sandbox) -> R {
    s.write("a.txt", "alpha\n");
    s.baseline();
    let res = s.mcp_call(
        "apply_edits",
        &json!({"text": search_replace("a.txt", "alpha", "beta"), "dry_run": true}),
    )?;
    tool_ok(&res)?;
    unchanged(s, "a.txt", b"alpha\n")
}

fn mcp_apply_patch_dry_run_writes_nothing(s: &Sandbox) -> R {
    s.baseline();
    let res = s.mcp_call(
        "apply_patch",
        &json!({"patch": patch_add("new.txt", "x"), "dry_run": true}),
    )?;
    tool_ok(&res)?;
    ensure!(!s.exists("new.txt"), "the file was made");
    Ok(())
}

fn mcp_modify_file_dry_run_writes_nothing(s: &Sandbox) -> R {
    s.write("a.txt", "alpha\n");
    s.baseline();
    let res = s.mcp_call("modify_file", &json!({"path": "a.txt", "changes": [{"start": ["alpha"], "content": ["beta"]}], "dry_run": true}),
    )?;
    tool_ok(&res)?;
    unchanged(s, "a.txt", b"alpha\n")
}

fn mcp_checkpoint_create_dry_run_creates_nothing(s: &Sandbox) -> R {
    s.write("a.txt", "alpha\n");
    s.baseline();
    let res = s.mcp_call("checkpoint_create", &json!({"label": "x", "dry_run": true}))?;
    let v = tool_ok(&res)?;
    ensure!(v["would_hold"]["files"] == 2, "{v}");
    let list = tool_ok(&s.mcp_call("checkpoint_list", &json!({}))?)?;
    ensure!(
        list == json!({"checkpoints": []}),
        "a checkpoint was created: {list}"
    );
    Ok(())
}

fn mcp_restore_with_camel_case_dry_run_is_refused(s: &Sandbox) -> R {
    s.write("a.txt", "alpha\n");
    let cp = s.mend(
        &["checkpoint", "--root", &s.root_str(), "--json", "create"],
        None,
    );
    ensure!(cp.ok(), "{cp:?}");
    let id = serde_json::from_str::<Value>(&cp.stdout).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    s.write("a.txt", "work in progress\n");
    s.baseline();
    let res = s.mcp_call("checkpoint_restore", &json!({"id": id, "dryRun": true}))?;
    tool_refused(&res, "did you mean `dry_run`?")?;
    unchanged(s, "a.txt", b"work in progress\n")
}

fn mcp_edit_with_camel_case_expected_version_is_refused(s: &Sandbox) -> R {
    s.write("a.txt", "alpha\nshared\n");
    let stale = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
    s.baseline();
    let res = s.mcp_call(
        "edit_file",
        &json!({"path": "a.txt", "expectedVersion": stale,
               "edits": [{"old_string": "shared", "new_string": "mine"}]}),
    )?;
    tool_refused(&res, "did you mean `expected_version`?")?;
    unchanged(s, "a.txt", b"alpha\nshared\n")
}

fn mcp_edit_with_a_malformed_expected_version_is_refused_as_stale(s: &Sandbox) -> R {
    s.write("a.txt", "alpha\nshared\n");
    s.baseline();
    for version in ["v1", "sha256:not-hex", "0123abcd"] {
        let res = s.mcp_call(
            "edit_file",
            &json!({"path": "a.txt", "expected_version": version,
                   "edits": [{"old_string": "shared", "new_string": "mine"}]}),
        )?;
        tool_refused(&res, "a.txt: file changed since you read it")?;
    }
    unchanged(s, "a.txt", b"alpha\nshared\n")
}

fn mcp_unknown_field_in_a_nested_edit_is_refused(s: &Sandbox) -> R {
    s.write("a.txt", "a a\n");
    s.baseline();
    let res = s.mcp_call("edit_file", &json!({"path": "a.txt", "edits": [{"old_string": "a", "new_string": "b", "replaceAll": true}]}),
    )?;
    tool_refused(&res, "did you mean `replace_all`?")?;
    unchanged(s, "a.txt", b"a a\n")
}

fn mcp_schemas_forbid_unknown_fields(s: &Sandbox) -> R {
    s.baseline();
    let r = s.mcp(&[&s.root_str()], &json!(["list"]))?;
    let schemas = &r[0][0]["schemas"];
    for (name, schema) in schemas.as_object().unwrap() {
        ensure!(
            schema["additionalProperties"] == false,
            "{name}'s schema allows unknown fields: {schema}"
        );
    }
    for tool in [
        "write_file",
        "apply_edits",
        "apply_patch",
        "modify_file",
        "edit_file",
        "checkpoint_create",
        "checkpoint_restore",
    ] {
        ensure!(
            schemas[tool]["properties"]["dry_run"].is_object(),
            "{tool} has no dry_run"
        );
    }
    Ok(())
}

fn mcp_tools_flag_serves_only_the_named_tools(s: &Sandbox) -> R {
    s.write("a.txt", "alpha\n");
    s.baseline();
    let steps = json!(["list", [{"tool": "edit_file", "args": {"path": "a.txt",
        "edits": [{"old_string": "alpha", "new_string": "beta"}]}}]]);
    let r = s.mcp_with(
        &[&s.root_str()],
        &["--tools", "write_file,read_file"],
        &steps,
    )?;
    let mut tools: Vec<String> = serde_json::from_value(r[0][0]["tools"].clone()).unwrap();
    tools.sort();
    ensure!(tools == ["read_file", "write_file"], "{tools:?}");
    ensure!(r[1][0]["error"] == true, "a hidden tool ran: {}", r[1][0]);
    unchanged(s, "a.txt", b"alpha\n")?;
    let bad = s.mend(&["mcp", "--tools", "rm_rf"], None);
    refused(&bad, "no tool named `rm_rf`")
}

fn mcp_malformed_json_gets_a_parse_error(s: &Sandbox) -> R {
    s.baseline();
    let (replies, exited) = s.mcp_raw(&["{\"jsonrpc\": \"2.0\", \"id\": 1,", &initialize()]);
    ensure!(exited, "the server did not exit");
    ensure!(
        replies
            .iter()
            .any(|r| r["error"]["code"] == -32700 && r["id"].is_null()),
        "no parse error: {replies:?}"
    );
    ensure!(
        replies
            .iter()
            .any(|r| r["id"] == 0 && r["result"].is_object()),
        "the next message was not answered: {replies:?}"
    );
    Ok(())
}

fn mcp_non_message_json_gets_invalid_request(s: &Sandbox) -> R {
    s.baseline();
    let (replies, _) = s.mcp_raw(&["[1, 2, 3]", "{\"id\": 5, \"method\": \"ping\"}"]);
    let codes: Vec<&Value> = replies.iter().map(|r| &r["error"]["code"]).collect();
    ensure!(
        codes.iter().filter(|c| **c == -32600).count() == 2,
        "{replies:?}"
    );
    ensure!(
        replies.iter().any(|r| r["id"] == 5),
        "the id was not kept: {replies:?}"
    );
    Ok(())
}

fn mcp_read_file_counts_saturate(s: &Sandbox) -> R {
    s.write("a.txt", "1\n2\n3\n");
    s.baseline();
    let read = |args: Value| json!({"tool": "read_file", "args": args});
    let steps = json!([[
        read(json!({"path": "a.txt", "offset": 2, "limit": u64::MAX})),
        read(json!({"path": "a.txt", "offset": 2, "limit": 1e20})),
        read(json!({"path": "a.txt", "offset": 18446744073709551616.0_f64})),
    ]]);
    let r = s.mcp(&[&s.root_str()], &steps)?;
    for (i, want) in ["2\n3\n", "2\n3\n", ""].iter().enumerate() {
        let v = tool_ok(&r[0][i])?;
        ensure!(v["content"] == *want, "call {i}: {v}");
    }
    Ok(())
}

fn second_root(s: &Sandbox) -> (String, String) {
    let second = s.base.join("second");
    std::fs::create_dir_all(&second).unwrap();
    std::fs::write(second.join("b.txt"), "bravo\n").unwrap();
    (
        second.to_string_lossy().into_owned(),
        second.join("b.txt").to_string_lossy().into_owned(),
    )
}

/// One call with an absolute path into the second of two roots.
fn edit_in_second_root(s: &Sandbox, tool: &str, args: impl Fn(&str) -> Value, want: &str) -> R {
    let (second, b) = second_root(s);
    s.baseline();
    let steps = json!([[{"tool": tool, "args": args(&b)}]]);
    let r = s.mcp(&[&s.root_str(), &second], &steps)?;
    tool_ok(&r[0][0])?;
    let now = std::fs::read_to_string(&b).unwrap();
    ensure!(now == want, "not applied: {now:?}");
    Ok(())
}

fn mcp_apply_patch_reaches_the_second_root(s: &Sandbox) -> R {
    let patch = |b: &str| {
        let p =
            format!("*** Begin Patch\n*** Update File: {b}\n@@\n-bravo\n+charlie\n*** End Patch\n");
        json!({ "patch": p })
    };
    edit_in_second_root(s, "apply_patch", patch, "charlie\n")
}

fn mcp_apply_edits_reaches_the_second_root(s: &Sandbox) -> R {
    let text = |b: &str| json!({ "text": search_replace(b, "bravo", "delta") });
    edit_in_second_root(s, "apply_edits", text, "delta\n")
}

fn mcp_checkpoint_list_reaches_the_second_root(s: &Sandbox) -> R {
    let (second, _) = second_root(s);
    s.baseline();
    let steps = json!([
        [{"tool": "checkpoint_create", "args": {"label": "second", "root": second}}],
        [{"tool": "checkpoint_list", "args": {"root": second}}],
        [{"tool": "checkpoint_list", "args": {}}],
    ]);
    let r = s.mcp(&[&s.root_str(), &second], &steps)?;
    tool_ok(&r[0][0])?;
    let in_second = tool_ok(&r[1][0])?;
    let in_first = tool_ok(&r[2][0])?;
    ensure!(
        in_second["checkpoints"][0]["label"] == "second",
        "{in_second}"
    );
    ensure!(in_first == json!({"checkpoints": []}), "{in_first}");
    Ok(())
}

fn mcp_one_call_across_two_roots_is_refused(s: &Sandbox) -> R {
    let (second, b) = second_root(s);
    s.write("a.txt", "alpha\n");
    s.baseline();
    let text = format!(
        "{}\n{}",
        search_replace("a.txt", "alpha", "beta"),
        search_replace(&b, "bravo", "delta")
    );
    let steps = json!([[{"tool": "apply_edits", "args": {"text": text}}]]);
    let r = s.mcp(&[&s.root_str(), &second], &steps)?;
    tool_refused(&r[0][0], "more than one project root")?;
    unchanged(s, "a.txt", b"alpha\n")?;
    ensure!(std::fs::read_to_string(&b).unwrap() == "bravo\n", "changed");
    Ok(())
}
