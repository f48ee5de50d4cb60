//! `mend turn` fixtures: each folder under `tests/turn/` is one turn made
//! of shell commands, in the workspace's fixture convention.
//!
//! Inputs: `repo/` (committed as the repository's first commit),
//! optionally `before.sh` (run before the turn begins), `during.sh` (run
//! during the turn, in the repository, with `sh -e`), and `status.args`
//! (extra `mend turn status` flags, one per line).
//!
//! Expected outputs, compared whole (`MEND_BLESS=1` rewrites them):
//! `expected.status`, `mend turn status` after the commands;
//! `expected.reject`, `mend turn reject` of everything; and
//! `expected.after`, the status after that reject, which must list no
//! change (the worktree is the turn's start again, links, modes and
//! folders included). Then `mend turn undo` undoes the reject, and the
//! status must be `expected.status` again: the undo gives back exactly
//! what the reject took. The turn's and the safety checkpoint's ids are
//! written `TURN` and `SAFETY`; git runs with fixed dates, so commit ids
//! are the same on every run.

use std::path::Path;
use std::process::Command;

use libtest_mimic::Trial;
use mend_test_support::fixtures::{self, Outputs};
use mend_test_support::{copy_tree, run_mend};

/// One test per case folder, named `turn::NAME`.
pub fn trials() -> Vec<Trial> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/turn");
    fixtures::trials("turn::", &dir, check)
}

/// The environment every git and shell command of a case runs with.
const ENV: [(&str, &str); 6] = [
    ("GIT_AUTHOR_NAME", "t"),
    ("GIT_AUTHOR_EMAIL", "t@t"),
    ("GIT_COMMITTER_NAME", "t"),
    ("GIT_COMMITTER_EMAIL", "t@t"),
    ("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z"),
    ("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z"),
];

fn sh(root: &Path, script: &str) -> Result<(), String> {
    let out = Command::new("sh")
        .args(["-e", "-c", script])
        .current_dir(root)
        .envs(ENV)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{script}: {}",
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

fn mend(root: &Path, args: &[&str]) -> Result<String, String> {
    let out = run_mend(root, args, None);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    match out.status.code() {
        Some(0) => Ok(text),
        code => Err(format!(
            "mend {args:?} exited {code:?}: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        )),
    }
}

/// Runs the case's turn and returns its outputs.
fn check(case: &Path) -> Result<Outputs, String> {
    let work = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = work.path().join("root");
    copy_tree(&case.join("repo"), &root);
    sh(
        &root,
        "git init -q -b main . && git add -A && git commit -q -m start",
    )?;
    let read = |name: &str| std::fs::read_to_string(case.join(name)).unwrap_or_default();
    sh(&root, &read("before.sh"))?;
    let id = mend(&root, &["turn", "begin"])?.trim().to_owned();
    sh(&root, &read("during.sh"))?;
    let extra = read("status.args");
    let mut args = vec!["turn", "status"];
    args.extend(extra.lines().filter(|l| !l.is_empty()));
    let turn = |text: String| text.replace(&id, "TURN");
    let status = turn(mend(&root, &args)?);
    let reject = turn(mend(&root, &["turn", "reject"])?);
    let safety = reject
        .lines()
        .find_map(|l| l.strip_prefix("safety checkpoint "))
        .and_then(|l| l.split([' ', ';']).next())
        .ok_or("the reject names no safety checkpoint")?
        .to_owned();
    let reject = reject.replace(&safety, "SAFETY");
    let after = turn(mend(&root, &["turn", "status"])?);
    mend(&root, &["turn", "undo"])?;
    let undone = turn(mend(&root, &args)?);
    if undone != status {
        return Err(format!(
            "after `mend turn undo` the status is not the turn's again:\n{undone}\nwhere it was:\n{status}"
        ));
    }
    Ok(vec![
        ("expected.status".into(), status.into_bytes()),
        ("expected.reject".into(), reject.into_bytes()),
        ("expected.after".into(), after.into_bytes()),
    ])
}
