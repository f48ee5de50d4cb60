//! Drift in every format, on random files: a random file and a random
//! change to it give diff hunks; each hunk is rendered in every format
//! after every kind of drift (whitespace, indentation, Unicode, line
//! numbers, blank edges, typos, elision) and planned. The result is the
//! expected text or a refusal, never a third text.

use mend_core::Format;
use proptest::prelude::*;

use crate::drift::{Kind, Numbers, Rng, apply, reshape};
use crate::hunks::hunks;
use crate::judge::{Outcome, applies, plan};
use crate::render::{FORMATS, render};

/// A code-like line from a small vocabulary, so duplicates (and with them
/// ambiguity and near-twin regions) are common.
fn line() -> impl Strategy<Value = String> {
    (
        0usize..4,
        prop::sample::select(vec![
            "total", "count", "items", "value", "result", "handler",
        ]),
        prop::sample::select(vec!["compute", "parse", "render", "update"]),
        0u8..3,
        0u8..12,
    )
        .prop_map(|(indent, var, f, n, shape)| {
            let pad = "    ".repeat(indent);
            match shape {
                0 => String::new(),
                1 => format!("{pad}}}"),
                2 => format!("{pad}if {var}_{n} > 0 {{"),
                3 => format!("{pad}// {f} the {var}"),
                4 => format!("{pad}return {var}_{n};"),
                5 => format!("{pad}{var}_{n} = {f}(\"{var}\", '{n}');"),
                _ => format!("{pad}let {var}_{n} = {f}({var}, {n});"),
            }
        })
}

#[derive(Debug, Clone)]
enum Change {
    Rewrite(usize, String),
    Insert(usize, String),
    Delete(usize),
}

fn case() -> impl Strategy<Value = (Vec<String>, Vec<Change>, u64)> {
    prop::collection::vec(line(), 12..60).prop_flat_map(|lines| {
        let n = lines.len();
        let change = prop_oneof![
            (0..n, line()).prop_map(|(i, l)| Change::Rewrite(i, l)),
            (0..n, line()).prop_map(|(i, l)| Change::Insert(i, l)),
            (0..n).prop_map(Change::Delete),
        ];
        (
            Just(lines),
            prop::collection::vec(change, 1..4),
            any::<u64>(),
        )
    })
}

fn changed(lines: &[String], changes: &[Change]) -> Vec<String> {
    let mut out = lines.to_vec();
    for c in changes {
        match c {
            Change::Rewrite(i, l) if *i < out.len() => out[*i] = l.clone(),
            Change::Insert(i, l) => out.insert((*i).min(out.len()), l.clone()),
            Change::Delete(i) if *i < out.len() => {
                out.remove(*i);
            }
            _ => {}
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn drift_in_any_format_gives_the_edit_or_a_refusal((lines, changes, seed) in case()) {
        let old = lines.join("\n") + "\n";
        let new = changed(&lines, &changes).join("\n") + "\n";
        let mut rng = Rng(seed | 1);
        for h in hunks("src/lib.rs", &old, &new) {
            for format in FORMATS {
                for kind in Kind::ALL {
                    if !applies(format, kind) || !kind.fits(format) {
                        continue;
                    }
                    let numbers = if format == Format::StrReplace { Numbers::Arrow } else { Numbers::Bar };
                    let Some(h) = reshape(kind, &h, &old) else { continue };
                    let Some(drifted) = apply(kind, &h, numbers, &mut rng) else { continue };
                    let Some(text) = render(format, &h, &drifted, kind, &old) else { continue };
                    if let Outcome::Wrong(diff) = plan(format, &text, &old, &h) {
                        prop_assert!(false, "{} / {}: wrong result\n{text}\n{diff}\nfile: {old:?}\nnew: {new:?}", format.name(), kind.name());
                    }
                }
            }
        }
    }
}
