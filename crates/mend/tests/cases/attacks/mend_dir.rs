//! `.mend` itself as the attack: a link out of the root, a file in its
//! place, and aliases (links) that reach `.mend` or `.git` under another
//! name.

use super::*;

/// This threat's cases, by name.
pub(super) const ALL: &[(&str, Case)] = &[
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
];

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
