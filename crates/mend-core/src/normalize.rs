//! Line normalizations used by the tolerant matching passes.
//!
//! Each function here maps a line to the form a pass compares. They are
//! deliberately narrow: every normalization is a kind of drift models really
//! produce (trailing spaces, re-indentation, typographic quotes, pasted line
//! numbers, elided code), and none of them can make two lines equal that
//! differ in an identifier, an operator or a literal digit.

use std::borrow::Cow;

use unicode_normalization::{UnicodeNormalization, is_nfc_quick};

/// Maps typographic characters to their ASCII counterparts and applies NFC.
///
/// Folded: single quotes and primes (`‘ ’ ‚ ‛ ′ ‵`) to `'`; double quotes
/// (`“ ” „ ‟ ″ ‶`) to `"`; hyphens, en/em dashes and the minus sign to `-`;
/// the ellipsis `…` to `...`; NBSP and the other Unicode spaces to a space;
/// zero-width characters and stray BOMs are removed.
pub fn fold_unicode(s: &str) -> Cow<'_, str> {
    if s.is_ascii() {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        fold_char(c, &mut out);
    }
    if is_nfc_quick(out.chars()) == unicode_normalization::IsNormalized::Yes {
        Cow::Owned(out)
    } else {
        Cow::Owned(out.nfc().collect())
    }
}

/// Appends the folded form of one character.
fn fold_char(c: char, out: &mut String) {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' | '\u{2035}' => {
            out.push('\'');
        }
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' | '\u{2036}' => {
            out.push('"');
        }
        '\u{2010}'..='\u{2015}' | '\u{2212}' => out.push('-'),
        '\u{2026}' => out.push_str("..."),
        '\u{00A0}'
        | '\u{1680}'
        | '\u{2000}'..='\u{200A}'
        | '\u{202F}'
        | '\u{205F}'
        | '\u{3000}' => out.push(' '),
        '\u{200B}' | '\u{200C}' | '\u{200D}' | '\u{2060}' | '\u{FEFF}' => {}
        c => out.push(c),
    }
}

/// Folds `s` character by character (no NFC, so offsets stay meaningful)
/// and returns, for every byte of the result, the byte offset in `s` of the
/// character it came from, plus one final entry for `s.len()`.
pub fn fold_with_offsets(s: &str) -> (String, Vec<usize>) {
    let mut out = String::with_capacity(s.len());
    let mut map = Vec::with_capacity(s.len() + 1);
    for (i, c) in s.char_indices() {
        let before = out.len();
        fold_char(c, &mut out);
        map.extend(std::iter::repeat_n(i, out.len() - before));
    }
    map.push(s.len());
    (out, map)
}

/// The most tolerant per-line form: Unicode folded, then trimmed.
pub fn fold_trim(s: &str) -> Cow<'_, str> {
    match fold_unicode(s) {
        Cow::Borrowed(b) => Cow::Borrowed(b.trim()),
        Cow::Owned(o) => {
            let t = o.trim();
            if t.len() == o.len() {
                Cow::Owned(o)
            } else {
                Cow::Owned(t.to_owned())
            }
        }
    }
}

/// Splits a line-number prefix from a line, returning the number and the
/// rest of the line. Recognized, after optional leading spaces and a number
/// (zero-padded too): `12 | `, `12| `, `12│ ` (box-drawing bar), `12→`
/// (the arrow file-reading tools print), `12\t` (`cat -n`), `12: `, and a
/// bare `12` or `12:` for a blank line.
pub fn split_line_number(line: &str) -> Option<(usize, &str)> {
    let trimmed = line.trim_start_matches(' ');
    let digits = trimmed.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 7 {
        return None;
    }
    let number: usize = trimmed[..digits].parse().ok()?;
    let after = &trimmed[digits..];
    if after.is_empty() || after == ":" {
        // A blank line rendered as just its number.
        return Some((number, ""));
    }
    if let Some(r) = after.strip_prefix('\t') {
        return Some((number, r));
    }
    if let Some(r) = after.strip_prefix(": ") {
        return Some((number, r));
    }
    let spaced = after.trim_start_matches(' ');
    if let Some(r) = spaced.strip_prefix('→') {
        // Tools that print `12→` put the line right after the arrow.
        return Some((number, r));
    }
    for sep in ['|', '│'] {
        if let Some(r) = spaced.strip_prefix(sep) {
            // One space after a bar belongs to the prefix (`12 | code`).
            return Some((number, r.strip_prefix(' ').unwrap_or(r)));
        }
    }
    None
}

/// If every line carries a line-number prefix and the numbers count up by
/// one, returns the first number and the stripped lines. A single line is not
/// enough evidence unless its prefix uses `|` or a tab, which code rarely has
/// after a leading number.
pub fn strip_line_numbers(lines: &[String]) -> Option<(usize, Vec<String>)> {
    if lines.is_empty() {
        return None;
    }
    let mut out = Vec::with_capacity(lines.len());
    let mut first = None;
    let mut prev = None;
    for line in lines {
        let (n, rest) = split_line_number(line)?;
        if let Some(p) = prev
            && n != p + 1
        {
            return None;
        }
        first.get_or_insert(n);
        prev = Some(n);
        out.push(rest.to_owned());
    }
    if lines.len() == 1 {
        let l = lines[0].trim_start_matches(' ');
        let after = l
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .trim_start_matches(' ');
        if !(after.starts_with(['|', '│', '→', '\t'])) {
            return None;
        }
    }
    Some((first?, out))
}

/// Words that only appear in elision comments ("... existing code ...").
const ELISION_SIGNALS: &[&str] = &[
    "existing",
    "rest",
    "unchanged",
    "remaining",
    "remains",
    "omitted",
    "omit",
    "same",
    "previous",
    "unmodified",
    "untouched",
    "elided",
    "snip",
    "snipped",
    "skipped",
    "truncated",
    "other",
    "more",
    "etc",
    "keep",
    "kept",
];

/// Whether a line stands for elided code rather than being code.
///
/// Recognized: a bare `...` or `…` (optionally inside a comment such as
/// `// ...`, `# ...`, `/* ... */`, `<!-- ... -->`), and short comments that
/// contain an ellipsis and an elision word: `# ... existing code ...`,
/// `// ... rest unchanged ...`, `/* ...other methods... */`.
pub fn is_elision_marker(line: &str) -> bool {
    let mut t = line.trim();
    for open in ["<!--", "{/*", "/*", "//", "--", "#", ";", "%", "*"] {
        if let Some(r) = t.strip_prefix(open) {
            t = r.trim_start();
            break;
        }
    }
    for close in ["-->", "*/}", "*/"] {
        if let Some(r) = t.strip_suffix(close) {
            t = r.trim_end();
            break;
        }
    }
    let t = t.trim_start_matches('[').trim_end_matches(']').trim();
    if !(t.contains("...") || t.contains('…')) {
        return false;
    }
    let words: Vec<String> = t
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    if words.is_empty() {
        return true;
    }
    words.len() <= 8 && words.iter().any(|w| ELISION_SIGNALS.contains(&w.as_str()))
}

/// The leading spaces and tabs of a line.
pub fn indent_of(line: &str) -> &str {
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_typography() {
        assert_eq!(
            fold_unicode("print(\u{201C}hi\u{201D}) \u{2014} it\u{2019}s\u{2026}"),
            "print(\"hi\") - it's..."
        );
        assert_eq!(fold_unicode("a\u{00A0}b"), "a b");
        assert_eq!(fold_unicode("e\u{0301}"), "\u{00E9}");
    }

    #[test]
    fn line_numbers() {
        assert_eq!(split_line_number("12 | foo"), Some((12, "foo")));
        assert_eq!(split_line_number("  7\t    x"), Some((7, "    x")));
        assert_eq!(split_line_number("3: y"), Some((3, "y")));
        assert_eq!(
            split_line_number("    12→    let x = 1;"),
            Some((12, "    let x = 1;"))
        );
        assert_eq!(split_line_number("00012| fn f()"), Some((12, "fn f()")));
        assert_eq!(split_line_number("  9│ }"), Some((9, "}")));
        assert_eq!(split_line_number("12 x"), None);
        assert_eq!(split_line_number("x = 1"), None);
        let lines: Vec<String> = ["10 | a", "11 |", "12 |   b"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        assert_eq!(
            strip_line_numbers(&lines),
            Some((10, vec!["a".into(), "".into(), "  b".into()]))
        );
        let not_consecutive: Vec<String> = vec!["1: a".into(), "3: b".into()];
        assert_eq!(strip_line_numbers(&not_consecutive), None);
        assert_eq!(strip_line_numbers(&["200: ok".to_owned()]), None);
    }

    #[test]
    fn elision_markers() {
        for yes in [
            "...",
            "    # ... existing code ...",
            "// ... rest unchanged ...",
            "/* ... */",
            "<!-- ... -->",
            "  // …",
            "# ...rest of the function...",
        ] {
            assert!(is_elision_marker(yes), "{yes}");
        }
        for no in [
            "x = ...",
            "# then we compute the total ...",
            "print('...')",
            "return",
            "",
        ] {
            assert!(!is_elision_marker(no), "{no}");
        }
    }
}
