//! The reviewed list (`reviewed.txt` beside this file): results a person
//! read and judged, each pinned to the exact result by a hash, so a
//! different result later is counted afresh.
//!
//! One entry a line: `ID MODE HASH VERDICT REASON...`, where `MODE` is
//! `auto`, a format name (`search-replace`...) or `*`, `HASH` is
//! [`result_hash`] (16 hex digits), and `VERDICT` is one of
//! - `aider-wrong`: aider's committed result is itself wrong (a duplicated
//!   block, a syntax error), so mend refusing or differing is right;
//! - `right`: a result mend writes where aider refused, read and right;
//! - `wrong`: such a result, read and wrong.
//!
//! `#` starts a comment line.

use mend_core::ContentHash;

use crate::outcome::Tree;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    AiderWrong,
    Right,
    Wrong,
}

impl Verdict {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Verdict::AiderWrong => "aider-wrong",
            Verdict::Right => "right",
            Verdict::Wrong => "wrong",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) id: String,
    pub(crate) mode: String,
    pub(crate) hash: String,
    pub(crate) verdict: Verdict,
    pub(crate) reason: String,
}

/// The committed list.
pub(crate) const LIST: &str = include_str!("reviewed.txt");

/// Parses a list; an unreadable line is an error naming it.
pub(crate) fn parse(text: &str) -> Result<Vec<Entry>, String> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |why: &str| format!("reviewed.txt line {}: {why}: {line}", n + 1);
        let mut parts = line.splitn(5, char::is_whitespace);
        let mut next = || parts.next().map(str::trim).filter(|s| !s.is_empty());
        let (Some(id), Some(mode), Some(hash), Some(verdict)) = (next(), next(), next(), next())
        else {
            return Err(bad("expected ID MODE HASH VERDICT REASON"));
        };
        let reason = next().unwrap_or_default();
        if reason.is_empty() {
            return Err(bad("every entry says why"));
        }
        if hash.len() != 16 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad("the hash is 16 hex digits"));
        }
        let verdict = match verdict {
            "aider-wrong" => Verdict::AiderWrong,
            "right" => Verdict::Right,
            "wrong" => Verdict::Wrong,
            _ => return Err(bad("the verdict is aider-wrong, right or wrong")),
        };
        out.push(Entry {
            id: id.to_owned(),
            mode: mode.to_owned(),
            hash: hash.to_ascii_lowercase(),
            verdict,
            reason: reason.to_owned(),
        });
    }
    Ok(out)
}

/// The hash of one result: whether mend exited 0, and every file of the
/// tree it left, by path.
pub(crate) fn result_hash(exit_ok: bool, after: &Tree) -> String {
    let mut bytes = Vec::new();
    bytes.extend_from_slice(if exit_ok { b"applied\0" } else { b"refused\0" });
    for (path, content) in after {
        bytes.extend_from_slice(path.as_bytes());
        bytes.push(0);
        bytes.extend_from_slice(&(content.len() as u64).to_le_bytes());
        bytes.extend_from_slice(content);
    }
    ContentHash::of(&bytes).short(16)
}

/// The entry for this result, if a person reviewed it.
pub(crate) fn find<'a>(list: &'a [Entry], id: &str, format: &str, hash: &str) -> Option<&'a Entry> {
    list.iter()
        .find(|e| e.id == id && e.hash == hash && (e.mode == format || e.mode == "*"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_list_parses() {
        parse(LIST).unwrap();
    }

    #[test]
    fn entries_need_a_hash_a_verdict_and_a_reason() {
        let ok = parse("# note\n\na.b.c auto 0123456789abcdef right it adds the import\n").unwrap();
        assert_eq!(ok.len(), 1);
        assert_eq!(ok[0].reason, "it adds the import");
        assert!(parse("a.b.c auto 0123456789abcdef right\n").is_err());
        assert!(parse("a.b.c auto 0123 right why\n").is_err());
        assert!(parse("a.b.c auto 0123456789abcdef fine why\n").is_err());
    }

    #[test]
    fn the_hash_pins_the_result() {
        let tree: Tree = [("a.py".to_owned(), b"x\n".to_vec())].into();
        let other: Tree = [("a.py".to_owned(), b"y\n".to_vec())].into();
        assert_ne!(result_hash(true, &tree), result_hash(true, &other));
        assert_ne!(result_hash(true, &tree), result_hash(false, &tree));
        assert_eq!(result_hash(true, &tree), result_hash(true, &tree.clone()));
    }
}
