//! `tests/fixtures/<case>/` holds `base`, `ours`, `theirs`, `args` (style,
//! labels, conflict count, and optionally `adjacent=merge`, the file's
//! `path=`, the number of regions resolvers settle, `resolved=`, and
//! `structured=EXT`, the structured resolver with the language of files
//! named `*.EXT`) and `expected`, which `git merge-file` produced (for the
//! `adjacent=merge` and `structured` cases, which git has no policy for,
//! mend did, and the case says why).
//! Cases cover CRLF, missing final newlines, the three styles, labels, a
//! delete against a modify, identical changes, and real histories of this
//! project's own files.

use std::path::Path;

use mend_merge::{Adjacent, Labels, Options, Style, is_prose, language_for, merge};

#[test]
fn fixtures_match_git_output() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 16);
    let mut failures = Vec::new();
    for d in dirs {
        let read = |f: &str| std::fs::read(d.join(f)).unwrap();
        let args = String::from_utf8(read("args")).unwrap();
        let find = |k: &str| {
            args.lines()
                .find_map(|l| l.strip_prefix(&format!("{k}=")))
                .map(str::to_owned)
        };
        let get = |k: &str| find(k).unwrap();
        let adjacent = match find("adjacent").as_deref() {
            Some("merge") => Adjacent::Merge,
            _ => Adjacent::Conflict,
        };
        let structured = find("structured").map(|ext| {
            language_for(&format!("case.{ext}")).unwrap_or_else(|| panic!("no grammar for .{ext}"))
        });
        let style = match get("style").as_str() {
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
        let (b, o, t) = (read("base"), read("ours"), read("theirs"));
        let m = merge(
            &b,
            &o,
            &t,
            &Options {
                style,
                adjacent,
                prose: find("path").is_some_and(|p| is_prose(&p)),
                structured,
            },
        );
        let got = m.render(&labels, style, 7);
        let conflicts: usize = get("conflicts").parse().unwrap();
        let resolved = find("resolved").map_or(Ok(0), |n| n.parse::<usize>());
        if got != read("expected") || m.conflicts() != conflicts || resolved != Ok(m.resolved()) {
            failures.push(format!(
                "{}: {} conflicts (want {conflicts}), {} resolved (want {resolved:?})\n{}",
                d.display(),
                m.conflicts(),
                m.resolved(),
                String::from_utf8_lossy(&got)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
