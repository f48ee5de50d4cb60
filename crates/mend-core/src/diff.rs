//! Unified diffs of planned changes, for dry runs and reports.

use similar::TextDiff;

/// A unified diff from `old` to `new` with git-style `a/` and `b/` headers;
/// `None` for a missing side renders as `/dev/null`. Empty when equal.
pub fn unified(old_path: Option<&str>, new_path: Option<&str>, old: &str, new: &str) -> String {
    if old == new && old_path == new_path {
        return String::new();
    }
    let a = old_path.map_or("/dev/null".to_owned(), |p| format!("a/{p}"));
    let b = new_path.map_or("/dev/null".to_owned(), |p| format!("b/{p}"));
    let diff = TextDiff::from_lines(old, new);
    let mut out = diff
        .unified_diff()
        .context_radius(3)
        .header(&a, &b)
        .to_string();
    if out.is_empty() {
        // A rename without content change.
        out = format!("--- {a}\n+++ {b}\n");
    }
    out
}
