//! Properties of the check over arbitrary code-like text in every
//! language: it never panics, an edit that changes nothing never has a
//! finding, and an edit far from a file's old errors is not blamed for
//! them.

use mend_syntax::{Check, EditSpan, check};
use proptest::prelude::*;

const PATHS: &[&str] = &[
    "a.py", "a.js", "a.ts", "a.tsx", "a.rs", "a.go", "a.java", "a.c", "a.cpp", "a.cs", "a.rb",
    "a.php", "a.sh", "a.json", "a.toml", "a.yaml", "a.html", "a.css", "a.lua",
];

/// Lines of code-like tokens: brackets, quotes, keywords, indentation.
fn code() -> impl Strategy<Value = String> {
    let token = prop::sample::select(vec![
        "(", ")", "{", "}", "[", "]", "\"", "'", "x", "f(x)", "if", "else", "end", ":", ";", "=",
        "<a>", "</a>", "# c", "// c", "  ", "\t", "fn", "def", "return", "1", "\"s\"",
    ]);
    prop::collection::vec(prop::collection::vec(token, 0..8), 0..30).prop_map(|lines| {
        lines
            .into_iter()
            .map(|l| l.concat() + "\n")
            .collect::<String>()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn an_unchanged_file_has_no_finding(path in prop::sample::select(PATHS), text in code()) {
        let r = check(path, Some(&text), &text, &[]);
        prop_assert!(!matches!(r, Check::Findings(_)), "{path}: {r:?}\n{text}");
    }

    /// Appending a clean block after a file's errors does not report the
    /// errors it already had (only what is on or next to the new lines).
    #[test]
    fn old_errors_far_from_an_edit_are_not_reported(
        path in prop::sample::select(PATHS),
        text in code(),
    ) {
        let new = format!("{text}\n\n\n\n");
        let span = EditSpan { index: 0, lines: None };
        if let Check::Findings(f) = check(path, Some(&text), &new, &[span]) {
            let last = text.lines().count();
            for finding in &f {
                prop_assert!(finding.line + 1 >= last, "{path}: {finding:?}\n{text}");
            }
        }
    }

    #[test]
    fn any_bytes_never_panic(path in prop::sample::select(PATHS), old in ".{0,200}", new in ".{0,200}") {
        let _ = check(path, Some(&old), &new, &[]);
        let _ = check(path, None, &new, &[]);
    }
}

/// The Bash grammar's scanner reads outside a table (and crashed mend)
/// on a `{` before a character beyond Latin-1; such text is not parsed.
#[test]
fn bash_text_that_crashed_the_grammar_is_not_parsed() {
    for text in ["{\u{68a45}", "echo {1..\u{10ffff}\n"] {
        let r = check("run.sh", None, text, &[]);
        assert!(matches!(r, Check::Unchecked(_)), "{r:?}");
        let r = check("run.sh", Some("echo\n"), text, &[]);
        assert!(matches!(r, Check::Unchecked(_)), "{r:?}");
    }
}
