//! Paths as models write them. A leaf of the formats graph.
//!
//! Windows sessions write `src\app.py`; [`model_path`] reads it as
//! `src/app.py` wherever a path is read from a response, in every format.
//! Only a path that is evidently separated by backslashes is rewritten: at
//! least one backslash is followed by a letter, a digit or a dot (`\_` alone
//! may be Markdown's escaped underscore, `my\_file.py`). A path that starts
//! with a backslash (`\\server\share`, `\etc`) or a drive (`C:\`) is left as
//! written, so the workspace refuses it as outside the project.

use std::borrow::Cow;

/// `raw` with backslash separators written `/` (see the module doc).
pub fn model_path(raw: &str) -> Cow<'_, str> {
    if !raw.contains('\\') || raw.starts_with('\\') {
        return Cow::Borrowed(raw);
    }
    let b = raw.as_bytes();
    if b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':' {
        return Cow::Borrowed(raw);
    }
    let mut evident = false;
    let mut chars = raw.chars().peekable();
    let mut prev = None;
    while let Some(c) = chars.next() {
        if c != '\\' {
            prev = Some(c);
            continue;
        }
        while chars.peek() == Some(&'\\') {
            chars.next();
        }
        let next = chars.peek().copied();
        match next {
            // A separator needs a name on both sides.
            None | Some('/') => return Cow::Borrowed(raw),
            _ if prev == Some('/') => return Cow::Borrowed(raw),
            Some(n) if n.is_alphanumeric() || n == '.' => evident = true,
            Some(_) => {}
        }
    }
    if !evident {
        return Cow::Borrowed(raw);
    }
    let mut out = String::with_capacity(raw.len());
    let mut last_sep = false;
    for c in raw.chars() {
        if c == '\\' {
            if !last_sep {
                out.push('/');
            }
            last_sep = true;
        } else {
            out.push(c);
            last_sep = false;
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backslash_separators() {
        let cases = [
            ("src\\app.py", "src/app.py"),
            (
                "Assets\\Scripts\\Core\\Ship.cs",
                "Assets/Scripts/Core/Ship.cs",
            ),
            ("src\\pkg\\__init__.py", "src/pkg/__init__.py"),
            ("src\\\\app.py", "src/app.py"),
            ("src/components\\App.tsx", "src/components/App.tsx"),
            (".github\\workflows\\ci.yml", ".github/workflows/ci.yml"),
            ("src\\.env", "src/.env"),
            // Left as written: the workspace refuses them.
            ("\\\\server\\share\\a.py", "\\\\server\\share\\a.py"),
            ("\\etc\\passwd", "\\etc\\passwd"),
            ("C:\\src\\a.py", "C:\\src\\a.py"),
            ("src\\", "src\\"),
            ("src/\\a.py", "src/\\a.py"),
            // `\_` alone may be an escaped underscore.
            ("my\\_file.py", "my\\_file.py"),
            ("pkg\\__init__.py", "pkg\\__init__.py"),
            ("src/app.py", "src/app.py"),
        ];
        for (raw, want) in cases {
            assert_eq!(model_path(raw), want, "{raw}");
        }
    }

    #[test]
    fn escapes_stay_refusable() {
        // `..\..\x` becomes `../../x`, which the workspace refuses as
        // leaving the root; no rewrite makes a path reach further.
        assert_eq!(model_path("..\\..\\etc\\passwd"), "../../etc/passwd");
    }
}
