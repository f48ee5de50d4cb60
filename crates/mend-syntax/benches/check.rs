//! What the syntax check adds to an apply: one edit in files of 1,000,
//! 10,000 and 50,000 lines, in Python, TypeScript and Rust.
//!
//! - `clean`: the edit leaves the file parseable (one parse, the common
//!   case);
//! - `broken`: the edit drops a closing bracket (two parses, the text
//!   before included, and the findings mapped through a line diff);
//! - `broken_everywhere`: a file with an error on every line, edited;
//! - `*_from_outline`: the next edit of a text whose base a check kept
//!   (a server, or `.mend/outlines`): the clean edit parses only the
//!   function it touched.
//!
//! Run: `cargo bench -p mend-syntax --bench check`

use mend_syntax::{EditSpan, check};

const SIZES: &[usize] = &[1_000, 10_000, 50_000];

fn main() {
    divan::main();
}

/// A file of about `lines` lines of ordinary code, and the line of a call
/// whose closing bracket the broken edit drops.
fn source(lang: &str, lines: usize) -> (String, String, usize) {
    let mut s = String::new();
    let (mut i, mut n) = (0, 0);
    while n < lines {
        let block = match lang {
            "py" => format!(
                "def handler_{i}(request, limit=10):\n    items = fetch(request.path, limit)\n    if not items:\n        return None\n    total = sum(x.size for x in items)\n    return {{\"count\": len(items), \"total\": total}}\n\n\n"
            ),
            "ts" => format!(
                "export function handler{i}(request: Request, limit = 10): Summary | null {{\n  const items = fetch(request.path, limit);\n  if (items.length === 0) {{\n    return null;\n  }}\n  const total = items.reduce((a, x) => a + x.size, 0);\n  return {{ count: items.length, total }};\n}}\n\n"
            ),
            _ => format!(
                "pub fn handler_{i}(request: &Request, limit: usize) -> Option<Summary> {{\n    let items = fetch(&request.path, limit);\n    if items.is_empty() {{\n        return None;\n    }}\n    let total: u64 = items.iter().map(|x| x.size).sum();\n    Some(Summary {{ count: items.len(), total }})\n}}\n\n"
            ),
        };
        n += block.matches('\n').count();
        s.push_str(&block);
        i += 1;
    }
    let path = format!("src/app.{lang}");
    // The edit: the call on the second line of the middle block.
    let target = s.lines().count() / 2;
    let line = (target..)
        .find(|&l| s.lines().nth(l).is_some_and(|t| t.contains("fetch(")))
        .unwrap();
    (path, s, line)
}

fn edited(text: &str, line: usize, broken: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i == line {
            let changed = l.replace("limit", "limit + 1");
            out.push_str(&if broken {
                // The call's closing bracket dropped.
                changed.replacen(")", "", 1)
            } else {
                changed
            });
        } else {
            out.push_str(l);
        }
    }
    out
}

fn run(bencher: divan::Bencher<'_, '_>, lang: &str, lines: usize, broken: bool) {
    let (path, old, line) = source(lang, lines);
    let new = edited(&old, line, broken);
    let span = [EditSpan {
        index: 0,
        lines: Some(mend_core::report::LineSpan {
            start: line + 1,
            end: line + 1,
        }),
    }];
    bencher.bench(|| check(&path, Some(&old), &new, &span));
}

#[divan::bench(args = SIZES, sample_count = 10)]
fn clean_python(bencher: divan::Bencher<'_, '_>, lines: usize) {
    run(bencher, "py", lines, false);
}

#[divan::bench(args = SIZES, sample_count = 10)]
fn broken_python(bencher: divan::Bencher<'_, '_>, lines: usize) {
    run(bencher, "py", lines, true);
}

#[divan::bench(args = SIZES, sample_count = 10)]
fn clean_typescript(bencher: divan::Bencher<'_, '_>, lines: usize) {
    run(bencher, "ts", lines, false);
}

#[divan::bench(args = SIZES, sample_count = 10)]
fn broken_typescript(bencher: divan::Bencher<'_, '_>, lines: usize) {
    run(bencher, "ts", lines, true);
}

#[divan::bench(args = SIZES, sample_count = 10)]
fn clean_rust(bencher: divan::Bencher<'_, '_>, lines: usize) {
    run(bencher, "rs", lines, false);
}

#[divan::bench(args = SIZES, sample_count = 10)]
fn broken_rust(bencher: divan::Bencher<'_, '_>, lines: usize) {
    run(bencher, "rs", lines, true);
}

/// A file already broken on every line, edited once more: old errors are
/// matched through a set, so thousands of them cost no more than a parse.
#[divan::bench(args = SIZES, sample_count = 5)]
fn broken_everywhere_javascript(bencher: divan::Bencher<'_, '_>, lines: usize) {
    let old: String = (0..lines).map(|i| format!("let x{i} = (;\n")).collect();
    let new = format!("{old}let y = (;\n");
    bencher.bench(|| check("src/app.js", Some(&old), &new, &[]));
}

/// The check of a kept text's next edit, from its kept base: its outline
/// (the edited function parsed alone), and, for the broken edit, the whole
/// parse it falls back to.
fn run_from(bencher: divan::Bencher<'_, '_>, lang: &str, lines: usize, broken: bool) {
    let (path, old, line) = source(lang, lines);
    let new = edited(&old, line, broken);
    let base = mend_syntax::base_of(&path, &old).unwrap();
    bencher.bench(|| mend_syntax::check_from(&path, Some(&old), Some(&base), &new, &[]));
}

#[divan::bench(args = SIZES, sample_count = 10)]
fn clean_python_from_outline(bencher: divan::Bencher<'_, '_>, lines: usize) {
    run_from(bencher, "py", lines, false);
}

#[divan::bench(args = SIZES, sample_count = 10)]
fn broken_python_from_outline(bencher: divan::Bencher<'_, '_>, lines: usize) {
    run_from(bencher, "py", lines, true);
}
