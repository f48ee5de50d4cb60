//! Properties of the check over arbitrary code-like text in every
//! language: it never panics, an edit that changes nothing never has a
//! finding, an edit far from a file's old errors is not blamed for
//! them, and a check reached by incremental reparse gives exactly the
//! from-scratch check's result.

use mend_syntax::{Base, Check, EditSpan, check, check_from};
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

/// Lines of mostly valid code in three languages, so that most edits leave
/// a clean file and the incremental reparse is what decides.
fn statements(ext: &str) -> Vec<&'static str> {
    match ext {
        "py" => vec![
            "def f(x):\n",
            "    return x\n",
            "    if x:\n",
            "        pass\n",
            "x = [1, 2]\n",
            "class A:\n",
            "    y = 1\n",
            "    else:\n",
            "print(\"a\")\n",
            "\n",
            "# note\n",
            "    for i in x:\n",
            "try:\n",
            "except E:\n",
            "  z = (\n",
            ")\n",
        ],
        "js" => vec![
            "function f(x) {\n",
            "  return x;\n",
            "}\n",
            "if (x) {\n",
            "} else {\n",
            "const a = [1, 2];\n",
            "let s = \"s\";\n",
            "\n",
            "// note\n",
            "f(a, (b) => b);\n",
        ],
        _ => vec![
            "fn f(x: u8) -> u8 {\n",
            "    x\n",
            "}\n",
            "    if x > 1 {\n",
            "    }\n",
            "struct A { b: u8 }\n",
            "let s = \"s\";\n",
            "\n",
            "// note\n",
            "impl A {\n",
        ],
    }
}

/// One edit of a text of pool lines: a line replaced, inserted or removed.
#[derive(Debug, Clone)]
struct LineEdit {
    at: usize,
    remove: bool,
    insert: Option<usize>,
}

fn edit_lines(lines: &mut Vec<&'static str>, pool: &[&'static str], e: &LineEdit) {
    let at = e.at % (lines.len() + 1);
    if e.remove && at < lines.len() {
        lines.remove(at);
    }
    if let Some(i) = e.insert {
        lines.insert(at.min(lines.len()), pool[i % pool.len()]);
    }
}

fn line_edit() -> impl Strategy<Value = LineEdit> {
    (0..200usize, any::<bool>(), prop::option::of(0..100usize))
        .prop_map(|(at, remove, insert)| LineEdit { at, remove, insert })
}

/// Checks `new` against `old` both ways: reached from `base` and from
/// scratch; they must agree. Returns the base of `new`.
fn both_ways(
    path: &str,
    old: &str,
    base: Option<&Base>,
    new: &str,
) -> Result<Option<Base>, TestCaseError> {
    let span = [EditSpan {
        index: 0,
        lines: None,
    }];
    let (incremental, next) = check_from(path, Some(old), base, new, &span);
    let scratch = check(path, Some(old), new, &span);
    prop_assert_eq!(
        &incremental,
        &scratch,
        "{}\n--- old:\n{}\n--- new:\n{}",
        path,
        old,
        new
    );
    Ok(next)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// A run of line edits, each checked from the last one's tree.
    #[test]
    fn incremental_checks_match_the_from_scratch_check(
        ext in prop::sample::select(vec!["py", "js", "rs"]),
        start in prop::collection::vec(0..100usize, 0..40),
        edits in prop::collection::vec(line_edit(), 1..6),
    ) {
        let pool = statements(ext);
        let path = format!("a.{ext}");
        let mut lines: Vec<&'static str> = start.iter().map(|&i| pool[i % pool.len()]).collect();
        let mut text = lines.concat();
        let mut base = check_from(&path, None, None, &text, &[]).1;
        for e in &edits {
            edit_lines(&mut lines, &pool, e);
            let new = lines.concat();
            base = both_ways(&path, &text, base.as_ref(), &new)?;
            text = new;
        }
    }

    /// The same over arbitrary code-like text in every language, edited at
    /// any byte range.
    #[test]
    fn incremental_checks_match_on_any_text(
        path in prop::sample::select(PATHS),
        text in code(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0..20usize, code()), 1..4),
    ) {
        let mut text = text;
        let mut base = check_from(path, None, None, &text, &[]).1;
        for (at, len, with) in edits {
            let start = at.index(text.len() + 1);
            let start = (0..=start).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
            let end = (start + len).min(text.len());
            let end = (end..=text.len()).find(|&i| text.is_char_boundary(i)).unwrap_or(text.len());
            let new = format!("{}{}{}", &text[..start], &with[..with.len().min(40)], &text[end..]);
            base = both_ways(path, &text, base.as_ref(), &new)?;
            text = new;
        }
    }
}

/// Whole Python statements that parse alone, some with lines at column 0
/// that are not statements (inside a string, after a backslash), so that a
/// text built of them has cuts only where statements start.
const PY_BLOCKS: &[&str] = &[
    "def f():\n    return 1\n",
    "@dec\ndef g():\n    pass\n",
    "class A:\n    x = 1\n",
    "if x:\n    pass\nelse:\n    pass\n",
    "try:\n    a()\nexcept E:\n    pass\nfinally:\n    b()\n",
    "s = \"\"\"\ntext\ndef h():\n\"\"\"\n",
    "x = 1 + \\\n2\n",
    "y = (\n1,\n)\n",
    "# comment\n",
    "\n",
    "a = 1; b = 2\n",
    "for i in x:\n    # c\n    pass\n# after\n",
    "match x:\n    case 1:\n        pass\n",
    "z = 1\r\n",
    "while y:\n    break\nelse:\n    pass\n",
];

/// Lines an edit brings in: continuations of the statement before, lines
/// that open what the next line closes, stray indentation.
const PY_LINES: &[&str] = &[
    "def f():\n",
    "    return 1\n",
    "@dec\n",
    "class A:\n",
    "    pass\n",
    "else:\n",
    "elif x:\n",
    "except E:\n",
    "finally:\n",
    "if x:\n",
    "try:\n",
    "x = 1 \\\n",
    "    + 2\n",
    "s = \"\"\"\n",
    "\"\"\"\n",
    "y = (\n",
    ")\n",
    "# c\n",
    "    # c\n",
    "\n",
    "a = 1; b = 2\n",
    "x = 1\r\n",
    "print('a')\n",
    "match x:\n",
    "    case 1:\n",
    "        pass\n",
    "\\\n",
    "for i in x:\n",
    "\tpass\n",
    "   \n",
    "z = 2 \\\r\n",
    "t = '''\n",
    "'''\n",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// A text of whole statements, edited line by line again and again:
    /// the check that parses only the edited statements (the base's
    /// outline) gives exactly the from-scratch check's result.
    #[test]
    fn checks_of_edited_statements_match_the_from_scratch_check(
        blocks in prop::collection::vec(0..PY_BLOCKS.len(), 20..80),
        edits in prop::collection::vec(
            (
                any::<prop::sample::Index>(),
                0..3usize,
                prop::collection::vec(0..PY_LINES.len() + PY_BLOCKS.len(), 0..3),
            ),
            1..6,
        ),
    ) {
        let mut text: String = blocks.iter().map(|&b| PY_BLOCKS[b]).collect();
        let mut base = check_from("a.py", None, None, &text, &[]).1;
        for (at, remove, insert) in edits {
            let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
            let at = at.index(lines.len() + 1);
            let end = (at + remove).min(lines.len());
            // Lines that may break the text, or whole statements that may
            // land inside another.
            let added: Vec<&str> = insert
                .iter()
                .map(|&i| PY_LINES.get(i).copied().unwrap_or_else(|| PY_BLOCKS[i - PY_LINES.len()]))
                .collect();
            lines.splice(at..end, added);
            let new = lines.concat();
            base = both_ways("a.py", &text, base.as_ref(), &new)?;
            text = new;
        }
    }
}

/// An outline survives the bytes it is kept as, and bytes that are not one
/// are refused.
#[test]
fn outlines_round_trip_through_bytes() {
    let text = "import os\n\n\ndef f():\n    return 1\n\n\nx = f()\n";
    let base = mend_syntax::base_of("a.py", text).unwrap();
    let outline = base.outline().unwrap();
    let bytes = outline.to_bytes();
    assert_eq!(String::from_utf8_lossy(&bytes), "python 44 12,36");
    assert_eq!(
        mend_syntax::Outline::from_bytes(&bytes).as_ref(),
        Some(outline)
    );
    for bad in [
        "",
        "rust 47 12",
        "python 47 39,12",
        "python x 1",
        "python 47 1 2",
    ] {
        assert_eq!(
            mend_syntax::Outline::from_bytes(bad.as_bytes()),
            None,
            "{bad}"
        );
    }
    // A text with an error has no outline, nor does a language without one.
    assert!(
        mend_syntax::base_of("a.py", "def f(:\n")
            .unwrap()
            .outline()
            .is_none()
    );
    assert!(
        mend_syntax::base_of("a.js", "f();\n")
            .unwrap()
            .outline()
            .is_none()
    );
}

/// An edit inside one function of a clean file is decided by parsing that
/// function alone; one that breaks it, or one whose piece is most of the
/// file, by the whole parse, with the whole parse's findings.
#[test]
fn an_edit_of_one_function_parses_that_function_alone() {
    let text: String = (0..50)
        .map(|i| format!("def f{i}(x):\n    return g(x, {i})\n\n\n"))
        .collect();
    let span = [EditSpan {
        index: 0,
        lines: None,
    }];
    let base = mend_syntax::base_of("a.py", &text).unwrap();
    let new = text.replace("g(x, 7)", "g(x + 1, 7)");
    let (check, next) = check_from("a.py", Some(&text), Some(&base), &new, &span);
    assert_eq!(check, Check::Clean { language: "python" });
    let next = next.unwrap();
    assert!(
        !next.is_whole_parse(),
        "the edited function alone was parsed"
    );
    assert_eq!(
        next.outline(),
        mend_syntax::base_of("a.py", &new).unwrap().outline()
    );
    // Broken: the whole parse says where.
    let broken = new.replace("g(x + 1, 7)", "g(x + 1, 7");
    let (check, next) = check_from("a.py", Some(&new), Some(&next), &broken, &span);
    assert_eq!(
        check,
        mend_syntax::check("a.py", Some(&new), &broken, &span)
    );
    assert!(matches!(check, Check::Findings(_)));
    assert!(next.unwrap().is_whole_parse());
    // A rewrite of most of the file: one whole parse.
    let rewritten = text.replace("return g(", "return h(");
    let (_, next) = check_from("a.py", Some(&text), Some(&base), &rewritten, &span);
    assert!(next.unwrap().is_whole_parse());
}
