//! A comment that takes the place of code it reads as leaving out (`#
//! ... validation`, `# existing code`, `# unchanged`, `# rest of the
//! code`) is never written over that code, in any format; a comment that
//! replaces no code, replaces a comment, or says nothing of code left out
//! is written as sent. And a whole file sent with a line number on every
//! line is written without them. Random files, random regions.

use mend_core::formats::{Format, parse};
use mend_core::{Edit, EditOp, EditStatus, Hints, PlanOptions, Replace, Target, plan_file};
use proptest::prelude::*;

const PATH: &str = "src/stock.py";

/// Comments that read as lines left out, none of them a marker the
/// elision machinery pairs.
const PLACEHOLDERS: &[&str] = &[
    "# ... validation",
    "# ...compute()",
    "# ... (totals)",
    "# totals ...",
    "# existing code",
    "# Existing code here",
    "# unchanged",
    "# (unchanged)",
    "# [unchanged]",
    "# totals unchanged",
    "# rest of the code",
    "# same as before",
    "# keep existing values",
    "# <existing totals>",
    "# snip",
];

/// Distinct lines of code (no two alike, none alike in the edit's new
/// text), with comments and blank lines among them.
fn file() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(("[a-z]{3,8}", 0u32..1000, 0u8..8), 8..30)
        .prop_map(|v| {
            v.into_iter()
                .enumerate()
                .map(|(i, (w, n, kind))| match kind {
                    0 => String::new(),
                    1 => format!("    # note {i}: {w} is counted once"),
                    _ => format!("    {w}_{i} = compute({n}, \"{w}\", 'k') - {i}"),
                })
                .collect()
        })
        .prop_filter("some code", |ls: &Vec<String>| {
            ls.iter().filter(|l| is_code(l)).count() >= 4
        })
}

fn joined(lines: &[String]) -> String {
    let mut s = lines.join("\n");
    s.push('\n');
    s
}

fn replace_edit(target: Target) -> Edit {
    Edit {
        path: PATH.into(),
        op: EditOp::Replace(Replace {
            target,
            replace_all: false,
            hints: Hints::default(),
        }),
        origin: None,
    }
}

/// The change sent four ways: a SEARCH block (region → `sent`), an
/// `old_string`/`new_string`, an explicit whole-file write and a fence
/// under the file's name, each with the file's new text.
fn edit(way: u8, region: &[String], sent: &[String], new_file: &str) -> Edit {
    match way % 4 {
        0 => replace_edit(Target::Lines {
            search: region.to_vec(),
            replace: sent.to_vec(),
        }),
        1 => replace_edit(Target::Text {
            old: region.join("\n"),
            new: sent.join("\n"),
        }),
        w => Edit {
            path: PATH.into(),
            op: EditOp::WriteFile {
                content: new_file.to_owned(),
                inferred: w == 3,
            },
            origin: None,
        },
    }
}

fn plan(text: &str, e: &Edit) -> (EditStatus, Option<String>) {
    let p = plan_file(PATH, Some(text), &[(0, e)], &PlanOptions::default());
    (p.reports[0].status, p.content)
}

/// The region `start..start + len` of `lines`, clamped to hold at least
/// three lines, and the index of its first line.
fn region(lines: &[String], start: prop::sample::Index, len: usize) -> (usize, Vec<String>) {
    let len = len.clamp(3, lines.len());
    let start = start.index(lines.len() - len + 1);
    (start, lines[start..start + len].to_vec())
}

/// `lines` with `at..at + drop` replaced by `with`.
fn spliced(lines: &[String], at: usize, drop: usize, with: &[String]) -> Vec<String> {
    let mut out = lines[..at].to_vec();
    out.extend(with.iter().cloned());
    out.extend(lines[at + drop..].iter().cloned());
    out
}

fn is_code(l: &str) -> bool {
    !l.trim().is_empty() && !l.trim_start().starts_with('#')
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    /// A placeholder comment in place of lines of code (one or more, with
    /// comments or blank lines among them) is refused, whatever the format.
    #[test]
    fn a_placeholder_over_code_is_never_written(
        lines in file(),
        (start, len) in (any::<prop::sample::Index>(), 3usize..9),
        (from, span) in (any::<prop::sample::Index>(), 1usize..4),
        (which, way) in (any::<prop::sample::Index>(), 0u8..4),
    ) {
        let (start, region) = region(&lines, start, len);
        let span = span.min(region.len());
        let from = from.index(region.len() - span + 1);
        prop_assume!(region[from..from + span].iter().any(|l| is_code(l)));
        let placeholder = format!("    {}", which.get(PLACEHOLDERS));
        let sent = spliced(&region, from, span, std::slice::from_ref(&placeholder));
        let new_file = joined(&spliced(&lines, start + from, span, &[placeholder]));
        let (status, content) = plan(&joined(&lines), &edit(way, &region, &sent, &new_file));
        prop_assert_eq!(status, EditStatus::Failed, "written:\n{}", content.unwrap_or_default());
    }

    /// The same comments added where no code is removed, or in place of a
    /// comment, and a comment that says nothing of code left out in place
    /// of code: each is written as sent.
    #[test]
    fn other_comments_are_written(
        lines in file(),
        (start, len) in (any::<prop::sample::Index>(), 3usize..9),
        at in any::<prop::sample::Index>(),
        (which, way, how) in (any::<prop::sample::Index>(), 0u8..4, 0u8..3),
    ) {
        let (start, region) = region(&lines, start, len);
        // A search of blank lines only is an empty search.
        prop_assume!(region.iter().any(|l| !l.trim().is_empty()));
        let placeholder = format!("    {}", which.get(PLACEHOLDERS));
        // Where the comment goes: anywhere, over a comment, over code.
        let places: Vec<usize> = (0..region.len())
            .filter(|&i| match how {
                0 => true,
                1 => region[i].trim_start().starts_with('#'),
                _ => is_code(&region[i]),
            })
            .collect();
        prop_assume!(!places.is_empty());
        let at = *at.get(&places);
        let (drop, comment) = match how {
            // Inserted, nothing removed.
            0 => (0, placeholder),
            // In place of a comment.
            1 => (1, placeholder),
            // A descriptive comment in place of a line of code.
            _ => (1, "    # Validate the totals before they are counted".to_owned()),
        };
        let sent = spliced(&region, at, drop, std::slice::from_ref(&comment));
        let want = joined(&spliced(&lines, start + at, drop, &[comment]));
        let (status, content) = plan(&joined(&lines), &edit(way, &region, &sent, &want));
        prop_assert_eq!(status, EditStatus::Applied);
        prop_assert_eq!(content.as_deref(), Some(want.as_str()));
    }

    /// A whole file with a line number on every line, counting from 1 in
    /// any common style, is written without them: a creation under a path
    /// line, in `<write_to_file>` or `*** Add File:`, or a rewrite of the
    /// file under its name.
    #[test]
    fn a_numbered_whole_file_is_written_without_numbers(
        lines in file(),
        changed in any::<prop::sample::Index>(),
        (style, way) in (0u8..5, 0u8..5),
    ) {
        // A file starts at column 0: a new "file" whose every line is
        // indented is a body shown from another file, refused (whole.rs).
        let mut lines = lines;
        lines.insert(0, "import os".to_owned());
        let clean = joined(&lines);
        let numbered: Vec<String> = lines
            .iter()
            .enumerate()
            .map(|(i, l)| numbered(i + 1, l, style))
            .collect();
        let body = joined(&numbered);
        let response = match way {
            0 | 3 => format!("Here it is:\n\n{PATH}\n```python\n{body}```\n"),
            1 | 4 => format!("<write_to_file>\n<path>{PATH}</path>\n<content>\n{body}</content>\n</write_to_file>\n"),
            _ => {
                let added: String = numbered.iter().map(|l| format!("+{l}\n")).collect();
                format!("*** Begin Patch\n*** Add File: {PATH}\n{added}*** End Patch\n")
            }
        };
        // A rewrite changes one line of code of the file it replaces.
        let old = (way >= 3).then(|| {
            let code: Vec<usize> = (0..lines.len()).filter(|&i| is_code(&lines[i])).collect();
            let k = *changed.get(&code);
            let mut before = lines.clone();
            before[k] = format!("    before_{k} = 0");
            joined(&before)
        });
        let parsed = parse(&response, Format::Auto).expect("one edit");
        let edits: Vec<_> = parsed.edits().enumerate().collect();
        prop_assert_eq!(edits.len(), 1);
        let p = plan_file(PATH, old.as_deref(), &edits, &PlanOptions::default());
        prop_assert_eq!(p.reports[0].status, EditStatus::Applied, "{:?}", p.reports[0]);
        prop_assert_eq!(p.content.as_deref(), Some(clean.as_str()));
    }
}

/// `  12 | `, `12│ `, `  12→`, `    12\t`, `12: `.
fn numbered(n: usize, line: &str, style: u8) -> String {
    match style % 5 {
        0 => format!("{n:>3} | {line}"),
        1 => format!("{n}│ {line}"),
        2 => format!("{n:>4}→{line}"),
        3 => format!("{n:>6}\t{line}"),
        _ => format!("{n}: {line}"),
    }
}
