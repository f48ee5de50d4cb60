//! Syntax-check fixtures: `tests/syntax/<case>/` holds `input/` (a tree),
//! `edit.txt` (the model's response) and `expected` (the findings of a dry
//! run, rendered as `mend apply` prints them, or `clean`). Compared byte
//! for byte; `MEND_BLESS=1` writes `expected` from the output instead.
//! A case named `<language>_broken_…` must have a finding, and one named
//! `<language>_clean_…` or `<language>_preexisting_…` none.
//!
//! Each folder is its own test.

use std::path::Path;

use libtest_mimic::{Arguments, Failed, Trial};
use mend_apply::{ApplyOptions, plan};
use mend_core::formats::{Format, parse};
use mend_workspace::{Options, Workspace};

fn copy_tree(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// The findings of planning `case`'s edit against its tree.
fn render(case: &Path) -> String {
    let work = tempfile::tempdir().unwrap();
    copy_tree(&case.join("input"), work.path());
    let ws = Workspace::open(work.path(), Options::default()).unwrap();
    let edit = std::fs::read_to_string(case.join("edit.txt")).unwrap();
    let parsed = parse(&edit, Format::Auto).unwrap();
    let planned = plan(
        &ws,
        &parsed,
        &ApplyOptions {
            dry_run: true,
            ..ApplyOptions::default()
        },
    )
    .unwrap();
    assert!(planned.ok, "every edit of a syntax fixture applies");
    let mut out = mend_core::syntax::render_findings(&planned.syntax, "WARNING");
    for u in &planned.syntax_unchecked {
        out.push_str(&format!("not checked: {}: {}\n", u.path, u.reason));
    }
    if out.is_empty() {
        out.push_str("clean\n");
    }
    out
}

fn check(case: &Path) -> Result<(), Failed> {
    let got = render(case);
    // The case's name says what it must show, so blessing cannot accept a
    // wrong result: `broken_` cases a finding, `clean_` and `preexisting_`
    // cases none.
    let name = case.file_name().unwrap().to_string_lossy();
    if name.contains("_broken_") && !got.starts_with("WARNING ") {
        return Err(format!("a broken edit gave no finding:\n{got}").into());
    }
    if (name.contains("_clean_") || name.contains("_preexisting_")) && got != "clean\n" {
        return Err(format!("a finding where there should be none:\n{got}").into());
    }
    let expected = case.join("expected");
    if std::env::var_os("MEND_BLESS").is_some() {
        std::fs::write(&expected, &got).unwrap();
        return Ok(());
    }
    let want = std::fs::read_to_string(&expected).unwrap_or_default();
    if got == want {
        Ok(())
    } else {
        Err(format!("--- got\n{got}--- want\n{want}").into())
    }
}

fn main() {
    let args = Arguments::from_args();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/syntax");
    let mut cases: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    let trials = cases
        .into_iter()
        .map(|case| {
            let name = case.file_name().unwrap().to_string_lossy().into_owned();
            Trial::test(name, move || check(&case))
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
