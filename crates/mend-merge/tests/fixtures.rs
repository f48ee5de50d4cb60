//! Merge fixtures, in the workspace's fixture convention
//! (`mend_test_support::fixtures`): `tests/fixtures/<case>/` holds `base`,
//! `ours`, `theirs`, `args` (style, labels, and optionally
//! `adjacent=merge`, the file's `path=`, and `structured=EXT`, the
//! structured resolver with the language of files named `*.EXT`), and the
//! expected outputs: `expected`, the merged file, which `git merge-file`
//! produced (for the `adjacent=merge` and `structured` cases, which git
//! has no policy for, mend did, and the case says why), and
//! `expected.counts`, the conflict count and the number of regions
//! resolvers settle. `MEND_BLESS=1` rewrites both from mend's output:
//! check a blessed `expected` against `git merge-file` before keeping it.
//!
//! Cases cover CRLF, missing final newlines, the three styles, labels, a
//! delete against a modify, identical changes, and real histories of this
//! project's own files.

// The test reads fixtures; the library under test stays pure (its
// clippy.toml bans these calls in the library).
#![allow(clippy::disallowed_methods)]

use std::path::Path;

use mend_merge::{Adjacent, Labels, Options, Style, is_prose, language_for, merge};
use mend_test_support::fixtures::{self, Outputs};

fn check(d: &Path) -> Result<Outputs, String> {
    let read = |f: &str| std::fs::read(d.join(f)).map_err(|e| format!("{f}: {e}"));
    let args = String::from_utf8(read("args")?).map_err(|e| format!("args: {e}"))?;
    let find = |k: &str| {
        args.lines()
            .find_map(|l| l.strip_prefix(&format!("{k}=")))
            .map(str::to_owned)
    };
    let adjacent = match find("adjacent").as_deref() {
        Some("merge") => Adjacent::Merge,
        _ => Adjacent::Conflict,
    };
    let structured = match find("structured") {
        Some(ext) => Some(
            language_for(&format!("case.{ext}")).ok_or_else(|| format!("no grammar for .{ext}"))?,
        ),
        None => None,
    };
    let style = match find("style").ok_or("args: no style=")?.as_str() {
        "diff3" => Style::Diff3,
        "zdiff3" => Style::Zdiff3,
        _ => Style::Merge,
    };
    // Without -L, git labels with the file names, which are these.
    let labels = Labels {
        ours: Some("ours".into()),
        base: Some("base".into()),
        theirs: Some("theirs".into()),
    };
    let (base, ours, theirs) = (read("base")?, read("ours")?, read("theirs")?);
    let m = merge(
        &base,
        &ours,
        &theirs,
        &Options {
            style,
            adjacent,
            prose: find("path").is_some_and(|p| is_prose(&p)),
            structured,
        },
    );
    let counts = format!("conflicts={}\nresolved={}\n", m.conflicts(), m.resolved());
    Ok(vec![
        ("expected".into(), m.render(&labels, style, 7)),
        ("expected.counts".into(), counts.into_bytes()),
    ])
}

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    assert!(fixtures::cases(&dir).len() >= 16);
    fixtures::run(&dir, check)
}
