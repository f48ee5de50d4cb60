//! Property tests: random files, random single-region edits taken from the
//! file itself.
//!
//! - The exact edit gives the expected text when its region is unique, and
//!   is refused as ambiguous when it is not.
//! - After whitespace or Unicode drift of the search (applied the same way to
//!   the context lines the model copies into its replacement), the result is
//!   the exact edit's text or a refusal: never a different text.
//! - Bytes outside the edited region are untouched, whatever the line endings.

use mend_core::{
    Edit, EditOp, EditStatus, FailureKind, Hints, PlanOptions, Replace, Target, plan_file,
};
use proptest::prelude::*;

fn edit(search: Vec<String>, replace: Vec<String>) -> Edit {
    Edit {
        path: "f.txt".into(),
        op: EditOp::Replace(Replace {
            target: Target::Lines { search, replace },
            replace_all: false,
            hints: Hints::default(),
        }),
        origin: None,
    }
}

fn plan(text: &str, e: &Edit) -> (Option<String>, EditStatus, Option<FailureKind>) {
    let p = plan_file("f.txt", Some(text), &[(0, e)], &PlanOptions::default());
    let r = &p.reports[0];
    (p.content, r.status, r.failure.as_ref().map(|f| f.kind))
}

/// A code-like line: indentation, identifiers, quotes and a minus sign, so
/// every drift kind has something to act on. A small vocabulary makes
/// duplicate lines (and so ambiguity) common.
fn line() -> impl Strategy<Value = String> {
    (
        0usize..4,
        prop::sample::select(vec!["total", "count", "name", "items", "value"]),
        0u8..4,
        prop::sample::select(vec!["call", "parse", "emit"]),
        prop::bool::weighted(0.1),
    )
        .prop_map(|(indent, var, n, f, blank)| {
            if blank {
                String::new()
            } else {
                format!(
                    "{}{var}_{n} = {f}(\"{var}\", 'x') - {n}",
                    "    ".repeat(indent)
                )
            }
        })
}

#[derive(Debug, Clone)]
enum Change {
    /// Replace the region's line `k` with a new line.
    Rewrite(usize),
    /// Insert a new line after the region's line `k`.
    Insert(usize),
    /// Delete the region's line `k`.
    Delete(usize),
}

#[derive(Debug, Clone, Copy)]
enum Drift {
    TrailingSpace,
    Indent(usize),
    Dedent,
    Unicode,
}

fn case() -> impl Strategy<Value = (Vec<String>, usize, usize, Change, Drift)> {
    prop::collection::vec(line(), 3..40).prop_flat_map(|lines| {
        let n = lines.len();
        (Just(lines), 0..n, 1usize..6).prop_flat_map(move |(lines, start, len)| {
            let len = len.min(n - start);
            let change = prop_oneof![
                (0..len).prop_map(Change::Rewrite),
                (0..len).prop_map(Change::Insert),
                (0..len).prop_map(Change::Delete),
            ];
            let drift = prop_oneof![
                Just(Drift::TrailingSpace),
                (1usize..3).prop_map(|k| Drift::Indent(k * 2)),
                Just(Drift::Dedent),
                Just(Drift::Unicode),
            ];
            (Just(lines), Just(start), Just(len), change, drift)
        })
    })
}

fn apply_change(region: &[String], change: &Change) -> (Vec<String>, Vec<bool>) {
    // Returns the replacement and, per replacement line, whether it is a
    // context line copied from the search.
    let mut out = Vec::new();
    let mut copied = Vec::new();
    for (i, l) in region.iter().enumerate() {
        match change {
            Change::Rewrite(k) if *k == i => {
                let indent = &l[..l.len() - l.trim_start().len()];
                out.push(format!("{indent}rewritten_{i} = 1"));
                copied.push(false);
            }
            Change::Delete(k) if *k == i => {}
            Change::Insert(k) if *k == i => {
                out.push(l.clone());
                copied.push(true);
                let indent = &l[..l.len() - l.trim_start().len()];
                out.push(format!("{indent}inserted_{i} = 2"));
                copied.push(false);
            }
            _ => {
                out.push(l.clone());
                copied.push(true);
            }
        }
    }
    (out, copied)
}

fn drift_line(l: &str, d: Drift) -> String {
    match d {
        Drift::TrailingSpace => format!("{l}  \t"),
        Drift::Indent(k) if !l.is_empty() => format!("{}{l}", " ".repeat(k)),
        Drift::Indent(_) => l.to_owned(),
        Drift::Dedent => l.strip_prefix("    ").unwrap_or(l).to_owned(),
        Drift::Unicode => l
            .replace('"', "\u{201C}")
            .replace('\'', "\u{2019}")
            .replace(" - ", " \u{2013} "),
    }
}

/// Indentation drift shifts the model's whole frame: new lines too.
fn shifts_frame(d: Drift) -> bool {
    matches!(d, Drift::Indent(_) | Drift::Dedent)
}

fn occurrences(lines: &[String], region: &[String]) -> usize {
    if region.is_empty() || lines.len() < region.len() {
        return 0;
    }
    (0..=lines.len() - region.len())
        .filter(|&i| lines[i..i + region.len()] == *region)
        .count()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn exact_edit_gives_expected_text_and_drift_never_changes_it(
        (lines, start, len, change, drift) in case()
    ) {
        let region: Vec<String> = lines[start..start + len].to_vec();
        prop_assume!(region.iter().any(|l| !l.trim().is_empty()));
        let text = lines.join("\n") + "\n";
        let (replacement, copied) = apply_change(&region, &change);

        // Exact.
        let (content, status, kind) = plan(&text, &edit(region.clone(), replacement.clone()));
        let unique = occurrences(&lines, &region) == 1;
        let mut expected_lines = lines[..start].to_vec();
        expected_lines.extend(replacement.iter().cloned());
        expected_lines.extend(lines[start + len..].iter().cloned());
        let expected = if expected_lines.is_empty() {
            String::new()
        } else {
            expected_lines.join("\n") + "\n"
        };
        let exact_result = if unique || replacement == region {
            prop_assert!(matches!(status, EditStatus::Applied | EditStatus::Noop), "{status:?} {kind:?}");
            prop_assert_eq!(content.as_deref(), Some(expected.as_str()));
            expected
        } else {
            // A region with an exact twin elsewhere: only a refusal is right
            // (the blank-edge retry may still find it unique).
            if status == EditStatus::Applied {
                content.clone().unwrap()
            } else {
                prop_assert_eq!(kind, Some(FailureKind::Ambiguous));
                return Ok(());
            }
        };

        // Drifted: the search, and the context lines copied from it.
        let d_search: Vec<String> = region.iter().map(|l| drift_line(l, drift)).collect();
        let d_replace: Vec<String> = replacement
            .iter()
            .zip(&copied)
            .map(|(l, &c)| if c || shifts_frame(drift) { drift_line(l, drift) } else { l.clone() })
            .collect();
        prop_assume!(d_search != region);
        // A drifted search that exists verbatim elsewhere is no longer drift:
        // it is a valid search for that other place.
        prop_assume!(occurrences(&lines, &d_search) == 0);
        let core: Vec<String> = {
            let a = d_search.iter().take_while(|l| l.trim().is_empty()).count();
            let b = d_search.iter().rev().take_while(|l| l.trim().is_empty()).count();
            d_search[a..d_search.len().saturating_sub(b).max(a)].to_vec()
        };
        prop_assume!(occurrences(&lines, &core) == 0);
        // A dedent is a frame shift only when every line can be shifted.
        if matches!(drift, Drift::Dedent) {
            prop_assume!(region
                .iter()
                .chain(&replacement)
                .all(|l| l.trim().is_empty() || l.starts_with("    ")));
        }
        let (content, status, _) = plan(&text, &edit(d_search, d_replace));
        if status == EditStatus::Applied {
            prop_assert_eq!(content.as_deref(), Some(exact_result.as_str()));
        } else {
            prop_assert!(matches!(status, EditStatus::Failed | EditStatus::Noop));
        }
    }

    #[test]
    fn bytes_outside_the_region_are_untouched(
        lines in prop::collection::vec("[a-z]{1,6}", 2..20),
        endings in prop::collection::vec(prop::bool::ANY, 20),
        final_newline in prop::bool::ANY,
        bom in prop::bool::ANY,
        pick in any::<prop::sample::Index>(),
    ) {
        // Unique lines so the edit is unambiguous.
        let lines: Vec<String> = lines.iter().enumerate().map(|(i, l)| format!("{l}{i}")).collect();
        let mut text = String::new();
        if bom {
            text.push('\u{feff}');
        }
        let mut offsets = Vec::new();
        for (i, l) in lines.iter().enumerate() {
            offsets.push(text.len());
            text.push_str(l);
            if i + 1 < lines.len() || final_newline {
                text.push_str(if endings[i] { "\r\n" } else { "\n" });
            }
        }
        let k = pick.index(lines.len());
        let e = edit(vec![lines[k].clone()], vec!["CHANGED".into()]);
        let (content, status, _) = plan(&text, &e);
        prop_assert_eq!(status, EditStatus::Applied);
        let content = content.unwrap();
        let before = &text[..offsets[k]];
        let line_end = offsets[k] + lines[k].len();
        let after = &text[line_end..];
        prop_assert!(content.starts_with(before));
        prop_assert!(content.ends_with(after));
        prop_assert_eq!(content.len(), before.len() + "CHANGED".len() + after.len());
    }
}

/// Distinct code-like lines, so the only ambiguity is the one under test.
fn distinct_file() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(("[a-z]{3,8}", 0u32..1000, 0usize..3), 8..40).prop_map(|v| {
        v.into_iter()
            .enumerate()
            .map(|(i, (w, n, indent))| {
                format!("{}{w}_{i} = compute({n}, \"{w}\")", "    ".repeat(indent))
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    /// The model's view lacks one line of the region (dropped from its
    /// search and its replacement) or has one the file lacks: the result is
    /// the exact edit's text, or a refusal. Never anything else.
    #[test]
    fn a_dropped_or_invented_line_never_changes_the_result(
        lines in distinct_file(),
        start in any::<prop::sample::Index>(),
        len in 4usize..9,
        rewrite in any::<prop::sample::Index>(),
        other in any::<prop::sample::Index>(),
        invent in any::<bool>(),
    ) {
        let n = lines.len();
        let len = len.min(n);
        let start = start.index(n - len + 1);
        let region: Vec<String> = lines[start..start + len].to_vec();
        let k = rewrite.index(len);
        let mut replacement = region.clone();
        replacement[k] = format!("{}rewritten = 1", &region[k][..region[k].len() - region[k].trim_start().len()]);
        let text = lines.join("\n") + "\n";
        let (exact, status, _) = plan(&text, &edit(region.clone(), replacement.clone()));
        prop_assert_eq!(status, EditStatus::Applied);
        let exact = exact.unwrap();

        let (mut s, mut r) = (region.clone(), replacement.clone());
        if invent {
            // A line the file does not have, kept by the edit.
            let at = other.index(len - 1) + 1;
            s.insert(at, "    hallucinated_line()".to_owned());
            r.insert(at, "    hallucinated_line()".to_owned());
        } else {
            let d = other.index(len);
            prop_assume!(d != k);
            s.remove(d);
            r.remove(d);
        }
        let (content, status, _) = plan(&text, &edit(s, r));
        if status == EditStatus::Applied {
            prop_assert_eq!(content.unwrap(), exact);
        } else {
            prop_assert_eq!(status, EditStatus::Failed);
        }
    }
}
