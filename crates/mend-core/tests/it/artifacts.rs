//! Artifacts on the new side never reach the file: line numbers pasted on
//! a replacement, elision markers standing for code, and the typography a
//! transport gave an edit. Random files, random single-region edits taken
//! from the file, then the artifact: the result is the clean edit's text,
//! or a refusal, never anything else; where the artifact is unmistakable,
//! the clean text.

use mend_core::{Edit, EditOp, EditStatus, Hints, PlanOptions, Replace, Target, plan_file};
use proptest::prelude::*;

const PATH: &str = "f.py";

fn plan(text: &str, e: &Edit) -> (EditStatus, Option<String>) {
    let p = plan_file(PATH, Some(text), &[(0, e)], &PlanOptions::default());
    (p.reports[0].status, p.content)
}

fn edit(target: Target) -> Edit {
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

fn lines_edit(search: &[String], replace: &[String]) -> Edit {
    edit(Target::Lines {
        search: search.to_vec(),
        replace: replace.to_vec(),
    })
}

fn text_edit(search: &[String], replace: &[String]) -> Edit {
    edit(Target::Text {
        old: search.join("\n"),
        new: replace.join("\n"),
    })
}

fn joined(lines: &[String]) -> String {
    let mut s = lines.join("\n");
    s.push('\n');
    s
}

/// Distinct code-like lines with quotes and a minus sign, none beginning
/// with a digit, so the region is unique and no line looks numbered.
fn file() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(("[a-z]{3,8}", 0u32..1000, 0usize..3, any::<bool>()), 6..30).prop_map(
        |v| {
            v.into_iter()
                .enumerate()
                .map(|(i, (w, n, indent, blank))| {
                    if blank && i % 5 == 3 {
                        String::new()
                    } else {
                        format!(
                            "{}{w}_{i} = compute({n}, \"{w}\", 'k') - {i}",
                            "    ".repeat(indent)
                        )
                    }
                })
                .collect()
        },
    )
}

/// A region of the file (not all blank) and its replacement: a line
/// rewritten, one inserted, one deleted. Returns (start, region,
/// replacement, per replacement line whether it is copied).
fn change(
    lines: &[String],
    start: prop::sample::Index,
    len: usize,
    k: prop::sample::Index,
    how: u8,
) -> (usize, Vec<String>, Vec<String>, Vec<bool>) {
    let n = lines.len();
    let len = len.min(n);
    let start = start.index(n - len + 1);
    let region = lines[start..start + len].to_vec();
    let k = k.index(len);
    let indent = |l: &str| l[..l.len() - l.trim_start().len()].to_owned();
    let (mut out, mut copied) = (Vec::new(), Vec::new());
    for (i, l) in region.iter().enumerate() {
        let new = format!("{}changed_{i} = emit(\"new\", 'v') - 1", indent(l));
        match how % 3 {
            0 if i == k => {
                out.push(new);
                copied.push(false);
            }
            1 if i == k => {
                out.extend([l.clone(), new]);
                copied.extend([true, false]);
            }
            2 if i == k => {}
            _ => {
                out.push(l.clone());
                copied.push(true);
            }
        }
    }
    (start, region, out, copied)
}

/// The file with `region` at `start` replaced by `replacement`.
fn expected(lines: &[String], start: usize, len: usize, replacement: &[String]) -> String {
    let mut out = lines[..start].to_vec();
    out.extend(replacement.iter().cloned());
    out.extend(lines[start + len..].iter().cloned());
    if out.is_empty() {
        String::new()
    } else {
        joined(&out)
    }
}

#[derive(Debug, Clone, Copy)]
enum Numbering {
    /// Every line numbered from the region's first line.
    Region,
    /// Every line numbered, counting up from elsewhere.
    Run(usize),
    /// Only the new lines numbered, at their place in the new file (a
    /// diff's `+` lines).
    NewOnly,
}

/// `12 | `, `12│ `, `  12→`, `    12\t`, `12: `.
fn numbered(n: usize, line: &str, style: u8) -> String {
    match style % 5 {
        0 => format!("{n} | {line}"),
        1 => format!("{n}│ {line}"),
        2 => format!("{n:>4}→{line}"),
        3 => format!("{n:>6}\t{line}"),
        _ => format!("{n}: {line}"),
    }
}

fn number(
    replacement: &[String],
    copied: &[bool],
    first: usize,
    scheme: Numbering,
    style: u8,
) -> Vec<String> {
    replacement
        .iter()
        .enumerate()
        .map(|(k, l)| match scheme {
            Numbering::Region => numbered(first + k, l, style),
            Numbering::Run(n0) => numbered(n0 + k, l, style),
            Numbering::NewOnly if !copied[k] => numbered(first + k, l, style),
            Numbering::NewOnly => l.clone(),
        })
        .collect()
}

/// Whether `scheme` in `style` is evidence enough that mend must strip it
/// (and not refuse): see `mend_core::normalize::new_side_numbers`.
fn unmistakable(scheme: Numbering, style: u8, replacement: &[String], copied: &[bool]) -> bool {
    let colon = style % 5 == 4;
    let numbered = match scheme {
        Numbering::NewOnly => copied.iter().filter(|c| !**c).count(),
        _ => replacement.len(),
    };
    match scheme {
        Numbering::Region | Numbering::NewOnly => !colon || numbered > 1,
        Numbering::Run(_) => !colon && numbered > 1,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    /// Line numbers on the replacement alone, in any common style and
    /// numbering, as a SEARCH block's replacement or an `old_string`'s
    /// `new_string`: the file gets the clean edit, or a refusal; when the
    /// numbering is unmistakable, the clean edit.
    #[test]
    fn new_side_line_numbers_are_never_written(
        lines in file(),
        (start, len, k, how) in (any::<prop::sample::Index>(), 1usize..6, any::<prop::sample::Index>(), 0u8..3),
        (scheme, style, as_text) in (0u8..3, 0u8..5, any::<bool>()),
        run_from in 100usize..200,
    ) {
        let (start, region, replacement, copied) = change(&lines, start, len, k, how);
        prop_assume!(region.iter().any(|l| !l.trim().is_empty()));
        prop_assume!(!replacement.is_empty());
        let text = joined(&lines);
        let clean = expected(&lines, start, region.len(), &replacement);
        let scheme = match scheme {
            0 => Numbering::Region,
            1 => Numbering::Run(run_from),
            _ => Numbering::NewOnly,
        };
        prop_assume!(!matches!(scheme, Numbering::NewOnly) || copied.contains(&false));
        let sent = number(&replacement, &copied, start + 1, scheme, style);
        let e = if as_text { text_edit(&region, &sent) } else { lines_edit(&region, &sent) };
        let (status, content) = plan(&text, &e);
        if status == EditStatus::Applied {
            prop_assert_eq!(content.as_deref(), Some(clean.as_str()));
        } else {
            prop_assert_eq!(status, EditStatus::Failed);
            prop_assert!(
                !unmistakable(scheme, style, &replacement, &copied),
                "refused an unmistakable numbering: {:?}", sent
            );
        }
    }

    /// The same numbers on both sides (the search numbered as the file
    /// shows it): the clean edit.
    #[test]
    fn line_numbers_on_both_sides_are_never_written(
        lines in file(),
        (start, len, k, how) in (any::<prop::sample::Index>(), 2usize..6, any::<prop::sample::Index>(), 0u8..3),
        style in 0u8..4,
    ) {
        let (start, region, replacement, copied) = change(&lines, start, len, k, how);
        prop_assume!(region.iter().all(|l| !l.trim().is_empty()));
        prop_assume!(!replacement.is_empty());
        let text = joined(&lines);
        let clean = expected(&lines, start, region.len(), &replacement);
        let search = number(&region, &vec![true; region.len()], start + 1, Numbering::Region, style);
        let sent = number(&replacement, &copied, start + 1, Numbering::Region, style);
        let (status, content) = plan(&text, &lines_edit(&search, &sent));
        prop_assert_eq!(status, EditStatus::Applied);
        prop_assert_eq!(content.as_deref(), Some(clean.as_str()));
    }

    /// A replacement that stands for two or more of the region's lines with
    /// a marker (a lazy edit): never applied with the marker written or
    /// the lines it stands for deleted, as a SEARCH block or a
    /// `new_string`.
    #[test]
    fn a_marker_standing_for_code_is_never_written(
        lines in file(),
        (start, len) in (any::<prop::sample::Index>(), 3usize..8),
        (from, span) in (any::<prop::sample::Index>(), 2usize..5),
        (marker, as_text) in (0u8..3, any::<bool>()),
    ) {
        let n = lines.len();
        let len = len.min(n);
        let start = start.index(n - len + 1);
        let region = lines[start..start + len].to_vec();
        prop_assume!(len >= 3);
        let span = span.min(len - 1);
        let from = from.index(len - span + 1).min(len - span);
        let elided: Vec<String> = region[from..from + span].to_vec();
        prop_assume!(elided.iter().filter(|l| !l.trim().is_empty()).count() >= 2);
        let marker = ["    # ... existing code ...", "# ... rest of the function ...", "    // ... unchanged ..."][marker as usize].to_owned();
        let mut sent = region[..from].to_vec();
        sent.push(marker.clone());
        sent.extend(region[from + span..].iter().cloned());
        // The one change the edit makes, after the marker.
        sent.push("changed_last = emit(\"new\", 'v') - 1".to_owned());
        let e = if as_text { text_edit(&region, &sent) } else { lines_edit(&region, &sent) };
        let (status, content) = plan(&joined(&lines), &e);
        if status == EditStatus::Applied {
            let content = content.unwrap_or_default();
            prop_assert!(!content.lines().any(|l| l == marker), "marker written:\n{content}");
            for l in &elided {
                prop_assert!(content.lines().any(|c| c == l), "`{l}` deleted:\n{content}");
            }
        }
    }

    /// The transport curled every quote and dash of the edit, the new
    /// lines' too: the clean edit, never a curly quote the file did not
    /// have.
    #[test]
    fn transport_typography_is_never_written(
        lines in file(),
        (start, len, k, how) in (any::<prop::sample::Index>(), 1usize..6, any::<prop::sample::Index>(), 0u8..3),
        as_text in any::<bool>(),
    ) {
        let (start, region, replacement, _) = change(&lines, start, len, k, how);
        prop_assume!(region.iter().any(|l| !l.trim().is_empty()));
        // An empty `new_string` empties the line and keeps its break.
        prop_assume!(!(as_text && replacement.is_empty()));
        let text = joined(&lines);
        let clean = expected(&lines, start, region.len(), &replacement);
        let curl = |l: &String| {
            l.replace('"', "\u{201C}")
                .replace('\'', "\u{2019}")
                .replace(" - ", " \u{2013} ")
        };
        let search: Vec<String> = region.iter().map(curl).collect();
        let sent: Vec<String> = replacement.iter().map(curl).collect();
        let e = if as_text { text_edit(&search, &sent) } else { lines_edit(&search, &sent) };
        let (status, content) = plan(&text, &e);
        prop_assert_eq!(status, EditStatus::Applied);
        prop_assert_eq!(content.as_deref(), Some(clean.as_str()));
    }
}
