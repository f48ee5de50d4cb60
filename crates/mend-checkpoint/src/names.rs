//! How a turn and a restore spell a path whose bytes are not plain text.
//!
//! git keeps names as bytes, and a worktree may hold any: bytes that are
//! not UTF-8, control characters, backslashes. Printed as they are (or with
//! U+FFFD for bytes that are not UTF-8) two names could look the same, a
//! name could forge lines of a report, and a name shown could not be typed
//! back. So every such path is **spelled**: a backslash is doubled, a byte
//! that is not UTF-8 is `\xNN`, and a control character or bidirectional
//! override is escaped as [`mend_core::text::escape_controls`] escapes it
//! (`\n`, `\r`, `\t`, `\u{1b}`). Every other character stands for itself.
//!
//! The spelling is text, with no control character in it, and [`unspell`]
//! gives the bytes back exactly: two names never share a spelling, and the
//! spelling `mend turn status` prints (in text and in JSON) is what a path
//! argument takes back. A plain name (UTF-8, none of those characters) is
//! spelled as itself.

use std::borrow::Cow;

/// The spelling of a name's (or a path's) bytes; see the module.
pub fn spell(bytes: &[u8]) -> Cow<'_, str> {
    if let Ok(s) = std::str::from_utf8(bytes)
        && !s.contains('\\')
        && matches!(mend_core::text::escape_controls(s), Cow::Borrowed(_))
    {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(bytes.len() + 8);
    for chunk in bytes.utf8_chunks() {
        let text = chunk.valid().replace('\\', "\\\\");
        out.push_str(&mend_core::text::escape_controls(&text));
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    Cow::Owned(out)
}

/// The bytes a spelling stands for; why not, for a backslash that starts
/// no escape the spelling uses.
pub fn unspell(s: &str) -> Result<Cow<'_, [u8]>, String> {
    if !s.contains('\\') {
        return Ok(Cow::Borrowed(s.as_bytes()));
    }
    let mut out = Vec::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('\\') {
        out.extend_from_slice(&rest.as_bytes()[..at]);
        let after = &rest[at + 1..];
        let (bytes, used) = escape(after).ok_or_else(|| {
            format!(
                "`{}` has a backslash that starts no escape; a backslash in a name is written `\\\\`, a byte that is not UTF-8 `\\xNN`, a control character `\\n`, `\\t`, `\\r` or `\\u{{hex}}`, as `mend turn status` prints them",
                mend_core::text::escape_controls(s)
            )
        })?;
        out.extend_from_slice(&bytes);
        rest = &after[used..];
    }
    out.extend_from_slice(rest.as_bytes());
    Ok(Cow::Owned(out))
}

/// One escape, after its backslash: its bytes and how much of `s` it took.
fn escape(s: &str) -> Option<(Vec<u8>, usize)> {
    let simple = |b: u8| Some((vec![b], 1));
    match s.as_bytes().first()? {
        b'\\' => simple(b'\\'),
        b'n' => simple(b'\n'),
        b'r' => simple(b'\r'),
        b't' => simple(b'\t'),
        b'x' => {
            let hex = s.get(1..3)?;
            let b = u8::from_str_radix(hex, 16).ok()?;
            hex.bytes()
                .all(|c| c.is_ascii_hexdigit())
                .then(|| (vec![b], 3))
        }
        b'u' => {
            let body = s.strip_prefix("u{")?;
            let end = body.find('}')?;
            let hex = &body[..end];
            if hex.is_empty() || !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
                return None;
            }
            let c = char::from_u32(u32::from_str_radix(hex, 16).ok()?)?;
            Some((c.to_string().into_bytes(), 2 + end + 1))
        }
        _ => None,
    }
}

/// Whether a spelled path is plain text a workspace change can name as it
/// is (no escape in it).
pub fn is_plain(spelled: &str) -> bool {
    !spelled.contains('\\')
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::{spell, unspell};

    #[test]
    fn odd_names_are_spelled_and_read_back() {
        let cases: &[(&[u8], &str)] = &[
            (b"plain/name.rs", "plain/name.rs"),
            (b"caf\xe9", "caf\\xe9"),
            ("caf\u{fffd}".as_bytes(), "caf\u{fffd}"),
            (b"caf\\xe9", "caf\\\\xe9"),
            (b"nl\nname", "nl\\nname"),
            (b"back\\slash", "back\\\\slash"),
            ("esc\u{1b}".as_bytes(), "esc\\u{1b}"),
            ("bidi\u{202e}".as_bytes(), "bidi\\u{202e}"),
        ];
        for (bytes, spelled) in cases {
            assert_eq!(spell(bytes), *spelled);
            assert_eq!(unspell(spelled).unwrap().as_ref(), *bytes);
        }
        for bad in ["a\\b", "a\\x4", "a\\xzz", "a\\u{}", "a\\u{110000}", "a\\"] {
            assert!(unspell(bad).is_err(), "{bad}");
        }
    }

    proptest! {
        /// Any bytes come back from their spelling, which is text without
        /// a control character: two names never share one.
        #[test]
        fn a_spelling_gives_back_its_bytes(
            bytes in proptest::collection::vec(
                prop_oneof![Just(b'\\'), Just(b'\n'), Just(0xe9u8), Just(0x1b), Just(b'x'), any::<u8>()],
                0..24,
            )
        ) {
            let s = spell(&bytes);
            prop_assert!(!s.chars().any(mend_core::text::is_control));
            let back = unspell(&s).unwrap().into_owned();
            prop_assert_eq!(back, bytes);
        }
    }
}
