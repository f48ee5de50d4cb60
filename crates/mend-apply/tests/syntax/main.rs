//! Syntax-check fixtures: `tests/syntax/<case>/` holds `input/` (a tree),
//! `edit.txt` (the model's response) and `expected` (the findings of a dry
//! run, rendered as `mend apply` prints them, or `clean`), the workspace's
//! fixture convention (`mend_test_support::fixtures`: compared byte for
//! byte, `MEND_BLESS=1` rewrites `expected`). A case named
//! `<language>_broken_…` must have a finding, and one named
//! `<language>_clean_…` or `<language>_preexisting_…` none.
//!
//! Each folder is its own test.

use std::path::Path;

use mend_apply::{ApplyOptions, plan};
use mend_core::formats::{Format, parse};
use mend_test_support::copy_tree;
use mend_test_support::fixtures::{self, Outputs};
use mend_workspace::{Options, Workspace};

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
    let mut out = mend_core::report::syntax::render_findings(&planned.syntax, "WARNING");
    for u in &planned.syntax_unchecked {
        out.push_str(&format!("not checked: {}: {}\n", u.path, u.reason));
    }
    if out.is_empty() {
        out.push_str("clean\n");
    }
    out
}

fn check(case: &Path) -> Result<Outputs, String> {
    let got = render(case);
    // The case's name says what it must show, so blessing cannot accept a
    // wrong result: `broken_` cases a finding, `clean_` and `preexisting_`
    // cases none.
    let name = case.file_name().unwrap().to_string_lossy();
    if name.contains("_broken_") && !got.starts_with("WARNING ") {
        return Err(format!("a broken edit gave no finding:\n{got}"));
    }
    if (name.contains("_clean_") || name.contains("_preexisting_")) && got != "clean\n" {
        return Err(format!("a finding where there should be none:\n{got}"));
    }
    Ok(vec![("expected".into(), got.into_bytes())])
}

fn main() {
    fixtures::run(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/syntax"),
        check,
    )
}
