//! The syntax trees a long-running process keeps between applies.
//!
//! `mend mcp` (and the other servers) apply edit after edit to the same
//! files. Each syntax check leaves the parse of the text it checked; kept
//! here, keyed by that text's content hash, it is the base the check of
//! the next edit of the file reparses from (see [`mend_syntax::check_from`]),
//! so only what the edit changed is parsed again. A one-shot process never
//! turns this on: it would only pay for hashing what it planned.
//!
//! Bounded in entries and in the bytes of the texts the trees are of; the
//! least recently used parse goes first.

use std::sync::{Mutex, OnceLock};

use mend_syntax::{Base, Language};
use mend_workspace::ContentHash;

/// Parses kept at most.
const MAX_ENTRIES: usize = 64;
/// Text bytes the kept parses are of, at most (a tree takes several times
/// its text).
const MAX_TEXT_BYTES: usize = 16 << 20;

/// The kept parses, most recently used last.
#[derive(Default)]
pub(crate) struct Trees {
    entries: Vec<(ContentHash, Language, Base)>,
    /// How many checks found the parse of their text before here.
    hits: usize,
}

static KEPT: OnceLock<Mutex<Trees>> = OnceLock::new();

/// Keeps the parse of each text the syntax check reads from now on, for
/// the rest of the process, so that the next check of an edit to it
/// reparses only what changed. For a server that applies many edits; the
/// findings are the same either way.
pub fn keep_syntax_trees() {
    KEPT.get_or_init(Mutex::default);
}

/// The kept parses, when the process keeps them.
pub(crate) fn kept() -> Option<&'static Mutex<Trees>> {
    KEPT.get()
}

impl Trees {
    /// The parse of the text hashing to `hash`, as `lang`, if kept.
    pub(crate) fn get(&mut self, hash: &ContentHash, lang: Language) -> Option<Base> {
        let i = self
            .entries
            .iter()
            .rposition(|(h, l, _)| h == hash && *l == lang)?;
        let entry = self.entries.remove(i);
        self.hits += 1;
        let base = entry.2.clone();
        self.entries.push(entry);
        Some(base)
    }

    /// Keeps `base`, the parse of the text hashing to `hash`, evicting the
    /// least recently used parses past the bounds.
    pub(crate) fn put(&mut self, hash: ContentHash, base: Base) {
        let lang = base.language();
        self.entries.retain(|(h, l, _)| !(*h == hash && *l == lang));
        if base.text_len() > MAX_TEXT_BYTES {
            return;
        }
        self.entries.push((hash, lang, base));
        let mut bytes: usize = self.entries.iter().map(|(_, _, b)| b.text_len()).sum();
        while self.entries.len() > MAX_ENTRIES || bytes > MAX_TEXT_BYTES {
            let (_, _, gone) = self.entries.remove(0);
            bytes -= gone.text_len();
        }
    }
}

#[cfg(all(test, feature = "grammars"))]
mod tests {
    use super::*;

    fn parse_of(text: &str) -> Base {
        mend_syntax::check_from("a.py", None, None, text, &[])
            .1
            .expect("python parses")
    }

    #[test]
    fn the_least_recently_used_parse_goes_first() {
        let mut t = Trees::default();
        let texts: Vec<String> = (0..=MAX_ENTRIES).map(|i| format!("x = {i}\n")).collect();
        for s in &texts {
            t.put(ContentHash::of(s.as_bytes()), parse_of(s));
        }
        assert_eq!(t.entries.len(), MAX_ENTRIES);
        let first = ContentHash::of(texts[0].as_bytes());
        assert!(t.get(&first, Language::Python).is_none());
        let second = ContentHash::of(texts[1].as_bytes());
        assert!(t.get(&second, Language::Python).is_some());
        assert!(t.get(&second, Language::Ruby).is_none());
        // Used just now, so it outlives the next eviction.
        t.put(ContentHash::of(b"y = 1\n"), parse_of("y = 1\n"));
        assert!(t.get(&second, Language::Python).is_some());
        assert!(
            t.get(&ContentHash::of(texts[2].as_bytes()), Language::Python)
                .is_none()
        );
    }

    /// Plans `edit` (a dry run) in `ws`; the findings as rendered.
    fn findings(ws: &mend_workspace::Workspace, edit: &str) -> String {
        let parsed = mend_core::formats::parse(edit, mend_core::formats::Format::Auto).unwrap();
        let opts = crate::ApplyOptions {
            dry_run: true,
            ..crate::ApplyOptions::default()
        };
        let planned = crate::plan(ws, &parsed, &opts).unwrap();
        assert!(planned.ok);
        mend_core::report::syntax::render_findings(&planned.syntax, "WARNING")
    }

    /// Edits in turn, each file written as the last plan left it: every
    /// check after the first reparses from the kept parse, and finds what
    /// the check from scratch finds.
    #[test]
    fn kept_parses_are_the_base_of_the_next_edit() {
        keep_syntax_trees();
        let dir = tempfile::tempdir().unwrap();
        let ws = mend_workspace::Workspace::open(dir.path(), Default::default()).unwrap();
        let mut text: String = (0..300)
            .map(|i| format!("def f{i}(x):\n    return g(x, {i})\n\n"))
            .collect();
        std::fs::write(dir.path().join("app.py"), &text).unwrap();
        let steps = [
            ("return g(x, 7)", "return g(x, 70)", false),
            ("return g(x, 9)", "return g(x, 9", true),
            ("return g(x, 9)", "return g(x, [9])", false),
            ("def f100(x):", "def f100(x)", true),
            ("def f200(x):", "def f200(x, y):", false),
        ];
        let hits = || kept().unwrap().lock().unwrap().hits;
        for (i, (from, to, broken)) in steps.into_iter().enumerate() {
            let before = hits();
            let edit = format!("app.py\n<<<<<<< SEARCH\n{from}\n=======\n{to}\n>>>>>>> REPLACE\n");
            let got = findings(&ws, &edit);
            let new = text.replacen(from, to, 1);
            let spans = [mend_syntax::EditSpan {
                index: 0,
                lines: None,
            }];
            let scratch = match mend_syntax::check("app.py", Some(&text), &new, &spans) {
                mend_syntax::Check::Findings(f) => {
                    mend_core::report::syntax::render_findings(&f, "WARNING")
                }
                _ => String::new(),
            };
            // The spans differ (the plan names its edit's lines), so
            // compare where and what, not which edit is blamed.
            let lines = |s: &str| {
                s.lines()
                    .filter(|l| l.starts_with("WARNING"))
                    .map(|l| l.split(" (edit").next().unwrap_or(l).to_owned())
                    .collect::<Vec<_>>()
            };
            assert_eq!(lines(&got), lines(&scratch), "step {i}");
            assert_eq!(got.is_empty(), !broken, "step {i}: {got}");
            if i > 0 {
                assert!(hits() > before, "step {i} reparsed from the kept parse");
            }
            // The next edit is made to the text this one planned; a broken
            // one is not kept.
            if got.is_empty() {
                std::fs::write(dir.path().join("app.py"), &new).unwrap();
                text = new;
            }
        }
    }
}
