//! The diff shown for one edit: `render_file` (git's line diff, then the
//! unified text) of a Python-like file of 1k, 10k and 100k lines with one
//! line changed in its middle, as every apply shows it.
//!
//! Run: `cargo bench -p mend-core --bench diff`

use mend_core::diff::render_file;

fn main() {
    divan::main();
}

/// A file of `lines` lines of short functions, and the same file with one
/// line in its middle changed.
fn texts(lines: usize) -> (String, String) {
    let mut old = String::new();
    let mut k = 0;
    while k * 7 < lines {
        old.push_str(&format!(
            "def handler_{k}(request, limit=10):\n    items = fetch(request.path, limit, {k})\n    if not items:\n        return None\n    return len(items)\n\n\n"
        ));
        k += 1;
    }
    let middle = format!("fetch(request.path, limit, {})", k / 2);
    let new = old.replacen(&middle, "fetch(request.path, limit + 1, 0)", 1);
    (old, new)
}

#[divan::bench(args = [1_000, 10_000, 100_000])]
fn one_line_changed(bencher: divan::Bencher<'_, '_>, lines: usize) {
    let (old, new) = texts(lines);
    bencher.bench(|| render_file(("app.py", Some(&old)), ("app.py", Some(&new)), false));
}
