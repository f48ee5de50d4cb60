//! Shipped journals: a repository that commits, or an archive that unpacks,
//! a `.mend/journal.json` written to make recovery install a hook, write
//! through a link or delete outside the root. Recovery must set it aside,
//! never execute it.

use super::*;

/// This threat's cases, by name.
pub(super) const ALL: &[(&str, Case)] = &[
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
        "journal_in_a_mend_mend_did_not_make_is_refused",
        journal_in_a_mend_mend_did_not_make_is_refused,
    ),
];

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

/// Has mend make its own `.mend` in the root (marked as its own), as an
/// agent would find it after any earlier command: a journal planted in it
/// afterwards is the agent's, not mend's.
fn own_mend(s: &Sandbox) {
    let out = s.mend(&["recover", "--root", &s.root_str()], None);
    assert!(out.ok(), "{out:?}");
    assert!(s.exists(".mend/owner"), "mend made its folder");
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
    std::fs::write(up.join(PROBE), harness::PROBE_TEXT).unwrap();
    std::fs::write(up.join("a.txt"), "alpha\n").unwrap();
    plant_journal_files(&up, &hostile_journal("committed"));
    s.git(&up, &["add", "-A", "-f"]);
    s.git(&up, &["commit", "-q", "-m", "init"]);
    std::fs::remove_dir_all(&s.root).unwrap();
    s.git(&s.base, &["clone", "-q", "upstream", "root"]);
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
    own_mend(s);
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
    own_mend(s);
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
    own_mend(s);
    plant_journal_files(&s.root, &journal.to_string());
    s.baseline();
    let out = s.apply(&[], &search_replace("a.txt", "alpha", "beta"));
    ensure!(out.ok(), "{out:?}");
    Ok(())
}

fn journal_set_aside_is_reported_over_mcp(s: &Sandbox) -> R {
    s.write("a.txt", "alpha\n");
    // The MCP client starts the server with an environment of its own
    // (no MEND_STATE_DIR), so its mend, not the CLI's, makes `.mend`.
    let made = s.mcp_call("write_file", &json!({"path": "b.txt", "content": "b\n"}))?;
    tool_ok(&made)?;
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

/// An archive unpacks a `.mend` of its own (no git here to track it),
/// journal and all: the folder carries no mark of mend's, so it is never
/// taken over, and nothing in it is read, let alone run.
fn journal_in_a_mend_mend_did_not_make_is_refused(s: &Sandbox) -> R {
    s.write("a.txt", "alpha\n");
    plant_journal_files(&s.root, &hostile_journal("committed"));
    s.baseline();
    let out = s.apply(&[], &search_replace("a.txt", "alpha", "beta"));
    refused(&out, "no owner mark")?;
    refused(&out, "mv .mend .mend.unknown")?;
    unchanged(s, "a.txt", b"alpha\n")?;
    ensure!(s.exists(".mend/journal.json"), "the journal was moved");
    no_hook(s)
}
