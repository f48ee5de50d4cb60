//! The workspace's one fixture convention, and its runner.
//!
//! A suite is a folder holding one folder per case. A case folder holds
//! the case's inputs, named as its suite documents, and its expected
//! outputs: every entry whose name begins with `expected` (a file
//! `expected`, files such as `expected.stdout`, a folder `expected/`).
//! The suite's check turns a case folder into the outputs it produced,
//! each a path relative to the case folder and its bytes; the runner
//! compares them with the expected entries byte for byte (the same
//! paths, the same bytes) and shows a line diff of each difference.
//!
//! **Bless:** with `MEND_BLESS=1` in the environment, the runner replaces
//! each case's expected entries with what the case produced instead of
//! comparing, so a deliberate change of output is one command:
//!
//! ```sh
//! MEND_BLESS=1 cargo test -p mend --test cases fixtures::
//! git diff   # review every rewritten expectation before committing
//! ```
//!
//! What a check asserts of its own (a substring a case must print, a
//! finding a case's name promises) still fails under bless: those are the
//! case's inputs, never rewritten.
//!
//! Each case is its own test ([`libtest_mimic`]), named by its folder, so
//! `cargo test … NAME` runs one case and a failure names its folder.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use libtest_mimic::{Arguments, Failed, Trial};

use crate::files::read_tree_without;

/// What a case produced: (path relative to the case folder, bytes). Every
/// path begins with `expected`.
pub type Outputs = Vec<(String, Vec<u8>)>;

/// The environment variable that turns comparing into rewriting.
pub const BLESS: &str = "MEND_BLESS";

/// Whether this run rewrites expected files ([`BLESS`] set, and not to
/// `0` or nothing).
pub fn blessing() -> bool {
    std::env::var_os(BLESS).is_some_and(|v| !v.is_empty() && v != "0")
}

/// The case folders of the suite at `dir`, sorted; panics when there are
/// none, so a suite that lost its folder cannot pass by running nothing.
pub fn cases(dir: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert!(!dirs.is_empty(), "{}: no cases", dir.display());
    dirs
}

/// One test per case folder under `dir`, named `prefix` followed by the
/// folder's name, each running `check` on its folder and comparing (or
/// blessing) the outputs.
pub fn trials<F>(prefix: &str, dir: &Path, check: F) -> Vec<Trial>
where
    F: Fn(&Path) -> Result<Outputs, String> + Send + Sync + 'static,
{
    let check = Arc::new(check);
    cases(dir)
        .into_iter()
        .map(|case| {
            let name = case.file_name().unwrap_or_default().to_string_lossy();
            let name = format!("{prefix}{name}");
            let check = Arc::clone(&check);
            Trial::test(name, move || {
                let produced = check(&case)?;
                settle(&case, produced).map_err(Failed::from)
            })
        })
        .collect()
}

/// The whole `main` of a test binary that runs one suite.
pub fn run<F>(dir: &Path, check: F) -> !
where
    F: Fn(&Path) -> Result<Outputs, String> + Send + Sync + 'static,
{
    let args = Arguments::from_args();
    libtest_mimic::run(&args, trials("", dir, check)).exit()
}

/// Compares `produced` with the case's expected entries, or, when
/// blessing, makes the expected entries what was produced.
pub fn settle(case: &Path, produced: Outputs) -> Result<(), String> {
    if let Some((bad, _)) = produced.iter().find(|(p, _)| !p.starts_with("expected")) {
        return Err(format!(
            "output {bad:?}: an output's name begins with `expected`"
        ));
    }
    if blessing() {
        bless(case, &produced);
        return Ok(());
    }
    let want = expected(case);
    let got: BTreeMap<String, Vec<u8>> = produced.into_iter().collect();
    let mut report = String::new();
    for path in want
        .keys()
        .chain(got.keys().filter(|p| !want.contains_key(*p)))
    {
        match (want.get(path), got.get(path)) {
            (Some(w), Some(g)) if w == g => {}
            (Some(_), None) => report.push_str(&format!("{path}: expected, not produced\n")),
            (None, Some(g)) => {
                report.push_str(&format!("{path}: produced, not expected:\n"));
                report.push_str(&String::from_utf8_lossy(g));
            }
            (Some(w), Some(g)) => report.push_str(&diff(path, w, g)),
            (None, None) => {}
        }
    }
    if report.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{report}\n(if the change is meant, {BLESS}=1 rewrites the expected files)"
        ))
    }
}

/// The case's expected entries: files directly, folders file by file.
fn expected(case: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for (name, path) in expected_entries(case) {
        if path.is_dir() {
            for (rel, bytes) in read_tree_without(&path, &[]) {
                out.insert(format!("{name}/{rel}"), bytes);
            }
        } else {
            out.insert(name, std::fs::read(&path).unwrap());
        }
    }
    out
}

fn expected_entries(case: &Path) -> Vec<(String, PathBuf)> {
    std::fs::read_dir(case)
        .unwrap()
        .flatten()
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .filter(|(name, _)| name.starts_with("expected"))
        .collect()
}

/// Removes the case's expected entries and writes `produced` in their
/// place.
fn bless(case: &Path, produced: &Outputs) {
    for (_, path) in expected_entries(case) {
        if path.is_dir() {
            std::fs::remove_dir_all(&path).unwrap();
        } else {
            std::fs::remove_file(&path).unwrap();
        }
    }
    for (rel, bytes) in produced {
        crate::files::put(case, rel, bytes);
    }
}

/// A line diff of one file, from what was expected to what was produced.
fn diff(path: &str, want: &[u8], got: &[u8]) -> String {
    match (std::str::from_utf8(want), std::str::from_utf8(got)) {
        (Ok(w), Ok(g)) => similar::TextDiff::from_lines(w, g)
            .unified_diff()
            .header(&format!("{path} (expected)"), &format!("{path} (produced)"))
            .to_string(),
        _ => format!(
            "{path}: the bytes differ ({} expected, {} produced)\n",
            want.len(),
            got.len()
        ),
    }
}
