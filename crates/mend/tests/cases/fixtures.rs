//! CLI fixtures, in the workspace's fixture convention
//! (`mend_test_support::fixtures`): each folder under `tests/fixtures/` is
//! one `mend apply` run.
//!
//! Inputs: `input/` (the tree), `edit.txt` or `edit.json` (the model's
//! response), and optionally `args` (extra flags, one per line) and
//! `stdout.lacks` (lines the output must not hold). `stdout.has` is for
//! cases whose output is not compared whole (the response cases); here it
//! is refused as redundant.
//!
//! Expected outputs, compared byte for byte (`MEND_BLESS=1` rewrites
//! them): `expected.exit` (the exit code), `expected.stdout` and
//! `expected.stderr` (whole; absent when empty), and `expected/` (the tree
//! after the run; absent when the tree must be unchanged). The run's work
//! folder is written `$WORK` in the outputs, so they do not depend on
//! where the test ran.
//!
//! Each folder is its own test, so `cargo test -p mend --test cases
//! fixtures::NAME` runs one case and a failure names its folder.

use std::path::Path;

use libtest_mimic::Trial;
use mend_test_support::fixtures::{self, Outputs};
use mend_test_support::{copy_tree, read_tree, run_mend};

/// One test per case folder, named `fixtures::NAME`.
pub fn trials() -> Vec<Trial> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    fixtures::trials("fixtures::", &dir, check)
}

/// Runs the case's `mend apply` and returns its outputs, after the
/// case's own substring checks.
fn check(case: &Path) -> Result<Outputs, String> {
    let edit = ["edit.txt", "edit.json"]
        .iter()
        .map(|f| case.join(f))
        .find(|p| p.exists())
        .ok_or("no edit.txt or edit.json")?;
    apply_case(case, &edit, Streams::Compared)
}

/// Whether a case's standard output and error are outputs compared whole.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Streams {
    /// `expected.stdout` and `expected.stderr` are outputs.
    Compared,
    /// Only `stdout.has` and `stdout.lacks` are checked.
    Checked,
}

/// Runs `mend apply` on a copy of the case's `input/` with `response` and
/// the case's `args`, checks `stdout.has` and `stdout.lacks`, and returns
/// the outputs: the exit code, the streams when `streams` says so, and
/// the tree when the run changed it.
pub fn apply_case(case: &Path, response: &Path, streams: Streams) -> Result<Outputs, String> {
    let work = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = work.path().join("root");
    copy_tree(&case.join("input"), &root);
    std::fs::create_dir_all(&root).map_err(|e| e.to_string())?;
    let before = read_tree(&root);
    let mut args: Vec<String> = vec!["apply".into(), "--root".into(), path(&root)];
    if let Ok(extra) = std::fs::read_to_string(case.join("args")) {
        args.extend(extra.lines().filter(|l| !l.is_empty()).map(str::to_owned));
    }
    args.push(path(response));
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run_mend(work.path(), &argv, None);
    let work_path = path(work.path());
    let stdout = placeholder(&out.stdout, &work_path);
    let stderr = placeholder(&out.stderr, &work_path);
    if streams == Streams::Compared && case.join("stdout.has").exists() {
        return Err(
            "stdout.has is redundant: expected.stdout compares the whole output; remove it".into(),
        );
    }
    lines_in(case, "stdout.has", &stdout, true)?;
    lines_in(case, "stdout.lacks", &stdout, false)?;
    let code = out.status.code().map_or("killed".into(), |c| c.to_string());
    let mut outputs: Outputs = vec![("expected.exit".into(), format!("{code}\n").into_bytes())];
    if streams == Streams::Compared {
        for (name, bytes) in [("expected.stdout", stdout), ("expected.stderr", stderr)] {
            if !bytes.is_empty() {
                outputs.push((name.into(), bytes));
            }
        }
    }
    let after = read_tree(&root);
    if after != before {
        if after.is_empty() {
            return Err(
                "the run left no file: keep one in input/ so `expected/` can say so".into(),
            );
        }
        outputs.extend(
            after
                .into_iter()
                .map(|(rel, b)| (format!("expected/{rel}"), b)),
        );
    }
    Ok(outputs)
}

fn path(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// `bytes` with every occurrence of `work` written `$WORK`.
fn placeholder(bytes: &[u8], work: &str) -> Vec<u8> {
    let work = work.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut rest = bytes;
    while !rest.is_empty() {
        if rest.starts_with(work) {
            out.extend_from_slice(b"$WORK");
            rest = &rest[work.len()..];
        } else {
            out.push(rest[0]);
            rest = &rest[1..];
        }
    }
    out
}

/// Checks that each line of the case's `file` appears in `output` (or,
/// when `present` is false, that none does).
fn lines_in(case: &Path, file: &str, output: &[u8], present: bool) -> Result<(), String> {
    let Ok(lines) = std::fs::read_to_string(case.join(file)) else {
        return Ok(());
    };
    let output = String::from_utf8_lossy(output);
    for line in lines.lines().filter(|l| !l.is_empty()) {
        if output.contains(line) != present {
            let says = if present { "lacks" } else { "has" };
            return Err(format!("stdout {says} {line:?} ({file}):\n{output}"));
        }
    }
    Ok(())
}
