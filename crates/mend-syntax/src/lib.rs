//! The syntax check after planning: does the planned text still parse?
//!
//! For a file in a known language (chosen by its name), the text before the
//! edits and the planned text are parsed with tree-sitter. Every error or
//! missing node of the planned text is a finding, unless the text before
//! had the same error at the place the edits moved it to: a file that was
//! already broken is reported only for what the edits broke. Each finding
//! names the edit whose replacement contains or precedes it.
//!
//! A long-running caller keeps the parse a check returns ([`Base`]) and
//! hands it to the check of the next edit of that text ([`check_from`]):
//! tree-sitter then reparses only what the edit changed.
//!
//! Pure, like mend-core: texts in, findings out (its `clippy.toml` bans
//! filesystem, process, clock and network calls). The grammars are behind
//! the default `grammars` feature; without it no file is checked.

mod languages;
mod outline;
mod reparse;
mod sites;

use mend_core::diff::{DiffOp, line_ops};
use mend_core::report::LineSpan;
use mend_core::report::syntax::{SyntaxFinding, excerpt};

pub use languages::{Language, language_for};
pub use outline::Outline;
use sites::Site;
/// The tree-sitter types a [`Parsed`] tree is read with.
pub use tree_sitter::{Node, Tree};

/// Files larger than this are not parsed: a check must stay a fraction of
/// an apply's cost, and such files are rarely hand-written code.
pub const MAX_BYTES: usize = 8 * 1024 * 1024;

/// Findings past this many in one file are not listed: the first ones are
/// what a model needs to fix the edit.
pub const MAX_FINDINGS: usize = 3;

/// Where one edit landed: its index among the response's edits and its
/// region in the text before (as its report gives it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EditSpan {
    /// The edit's index, 0-based.
    pub index: usize,
    /// Its region in the text before, when it had one (a whole-file write
    /// or a creation has none).
    pub lines: Option<LineSpan>,
}

/// The outcome of checking one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Check {
    /// It parses, or every error it has was there before.
    Clean {
        /// The grammar used.
        language: &'static str,
    },
    /// The edits introduced errors.
    Findings(Vec<SyntaxFinding>),
    /// Not checked, and why.
    Unchecked(String),
}

/// A whole text's syntax tree, for callers that follow its items (the
/// structured merge).
#[derive(Debug, Clone)]
pub struct Parsed {
    /// The tree.
    pub tree: Tree,
    /// Whether it has no error: no ERROR or MISSING node, and none of the
    /// errors [`check`] adds for its language (Python's indentation, CSS's
    /// unterminated strings).
    pub clean: bool,
}

/// Parses `text` as `lang`; `None` without grammars, for text larger than
/// [`MAX_BYTES`] or that the grammar must not be given, or when the parser
/// gave no tree.
pub fn parse(lang: Language, text: &str) -> Option<Parsed> {
    if text.len() > MAX_BYTES || languages::unreadable(lang, text).is_some() {
        return None;
    }
    let tree = sites::parse(lang, text)?;
    let clean = sites::errors_of(lang, &tree, text).is_empty();
    Some(Parsed { tree, clean })
}

/// [`parse`] of `new`, reached from `from`, the parse of `old`, by
/// incremental reparse: only what differs between the texts is parsed
/// again. A reparse with any error is done again from scratch, so `clean`
/// and every tree it reports clean are the from-scratch parse's (as in
/// [`check_from`]).
pub fn parse_from(lang: Language, old: &str, from: &Parsed, new: &str) -> Option<Parsed> {
    if new.len() > MAX_BYTES || languages::unreadable(lang, new).is_some() {
        return None;
    }
    let mut tree = from.tree.clone();
    for e in reparse::input_edits(old, new) {
        tree.edit(&e);
    }
    if let Some(t) = sites::reparse(lang, new, &tree)
        && sites::errors_of(lang, &t, new).is_empty()
    {
        return Some(Parsed {
            tree: t,
            clean: true,
        });
    }
    parse(lang, new)
}

/// Checks the planned text `new` of `path` against `old`, the text before
/// the edits (`None` for a file the edits create).
pub fn check(path: &str, old: Option<&str>, new: &str, edits: &[EditSpan]) -> Check {
    check_from(path, old, None, new, edits).0
}

/// The parse of one text as a check left it: its tree and its errors, or,
/// for a text without errors, its [`Outline`]. Kept by a caller, it lets
/// the check of the next edit to that text parse only what the edit
/// changed (see [`check_from`]).
#[derive(Debug, Clone)]
pub struct Base {
    lang: Language,
    /// The length of the text it is the parse of, a guard against a base
    /// handed in for another text.
    len: usize,
    /// The whole tree, when the text was parsed whole.
    tree: Option<Tree>,
    errors: Vec<Site>,
    /// Where a text without errors may be cut (see [`Outline`]).
    outline: Option<Outline>,
}

impl Base {
    /// The base of a text without errors known only by its outline (one
    /// kept between processes).
    pub fn from_outline(outline: Outline) -> Base {
        Base {
            lang: outline.language(),
            len: outline.text_len(),
            tree: None,
            errors: Vec::new(),
            outline: Some(outline),
        }
    }

    /// The grammar it was parsed with.
    pub fn language(&self) -> Language {
        self.lang
    }

    /// The length in bytes of the text it is the parse of (a tree takes
    /// memory in proportion).
    pub fn text_len(&self) -> usize {
        self.len
    }

    /// Its outline, when the text has no error and its language has one.
    pub fn outline(&self) -> Option<&Outline> {
        self.outline.as_ref()
    }

    /// Whether it holds the whole text's tree: false when the check parsed
    /// only the statements an edit touched (or the base came from an
    /// outline alone).
    pub fn is_whole_parse(&self) -> bool {
        self.tree.is_some()
    }
}

/// The base of `text`, parsed whole: what a caller that keeps outlines
/// between processes reads a text it has none for with, so that the check
/// of the edit parses only the edited statements of the new text. `None`
/// when `path` is not checked or the text cannot be parsed.
pub fn base_of(path: &str, text: &str) -> Option<Base> {
    let lang = checkable(path, None, text).ok()?;
    let tree = sites::parse(lang, text)?;
    Some(based(lang, tree, text))
}

/// The base of `text` from its whole parse `tree`.
fn based(lang: Language, tree: Tree, text: &str) -> Base {
    let errors = sites::errors_of(lang, &tree, text);
    let outline = if errors.is_empty() {
        outline::of(lang, &tree, text)
    } else {
        None
    };
    Base {
        lang,
        len: text.len(),
        tree: Some(tree),
        errors,
        outline,
    }
}

/// [`check`], reaching the tree of `new` from `base`, the parse of `old` a
/// previous check returned, so that only what the edits changed is parsed
/// again. Without a base (or with one of another language or length) `new`
/// is parsed from scratch.
///
/// - A base with an [`Outline`] (a text without errors, in a language that
///   has one): the statements of `new` the edits touched are parsed alone;
///   when they have no error, `new` has none (see [`Outline`]).
/// - A base with a tree: tree-sitter's incremental reparse, trusted only
///   when it gives a tree without any error.
///
/// Whenever those do not show `new` clean, `new` is parsed again from
/// scratch, so every finding (and what the file's old errors excuse) comes
/// from the same parse as [`check`]'s. The caller must give the base of
/// exactly `old`, found by the text's content hash.
///
/// Returns the check and the base of the check of the next edit to `new`
/// (`None` when `new` was not parsed).
pub fn check_from(
    path: &str,
    old: Option<&str>,
    base: Option<&Base>,
    new: &str,
    edits: &[EditSpan],
) -> (Check, Option<Base>) {
    let lang = match checkable(path, old, new) {
        Ok(lang) => lang,
        Err(why) => return (Check::Unchecked(why), None),
    };
    let base = base.filter(|b| b.lang == lang && old.is_some_and(|o| o.len() == b.len));
    let clean = || Check::Clean {
        language: lang.name(),
    };
    if let (Some(b), Some(o)) = (base, old)
        && let Some(outline) = &b.outline
        && let Some(next) = outline::by_pieces(lang, o, outline, new)
    {
        return (clean(), Some(Base::from_outline(next)));
    }
    let no_tree = || Check::Unchecked(format!("the {} parser gave no tree", lang.name()));
    let Some(after) = parse_new(lang, old, base, new) else {
        return (no_tree(), None);
    };
    let check = if after.errors.is_empty() {
        clean()
    } else {
        let before = match (base, old) {
            (Some(b), _) => Some(b.errors.clone()),
            (None, Some(o)) => sites::errors(lang, o),
            (None, None) => Some(Vec::new()),
        };
        match before {
            Some(before) => compare(path, lang, old, new, &before, &after.errors, edits),
            None => no_tree(),
        }
    };
    (check, Some(after))
}

/// The language of `path`, if its texts can be checked; else why not.
fn checkable(path: &str, old: Option<&str>, new: &str) -> Result<Language, String> {
    let Some(lang) = language_for(path) else {
        return Err(languages::no_grammar_reason(path));
    };
    if new.len() > MAX_BYTES || old.is_some_and(|o| o.len() > MAX_BYTES) {
        return Err(format!("larger than {} MiB", MAX_BYTES >> 20));
    }
    if let Some(why) = [Some(new), old]
        .into_iter()
        .flatten()
        .find_map(|t| languages::unreadable(lang, t))
    {
        return Err(why);
    }
    Ok(lang)
}

/// The parse of `new`: reached from `base` (the parse of `old`) when it
/// has a tree and the reparse gives no error, else from scratch.
fn parse_new(lang: Language, old: Option<&str>, base: Option<&Base>, new: &str) -> Option<Base> {
    if let (Some(tree), Some(o)) = (base.and_then(|b| b.tree.as_ref()), old) {
        let mut tree = tree.clone();
        for e in reparse::input_edits(o, new) {
            tree.edit(&e);
        }
        if let Some(reparsed) = sites::reparse(lang, new, &tree).map(|t| based(lang, t, new))
            && reparsed.errors.is_empty()
        {
            return Some(reparsed);
        }
    }
    sites::parse(lang, new).map(|t| based(lang, t, new))
}

/// The findings: the errors of the new text (`after`) that the text before
/// (whose errors are `before`) did not have where the edits moved them.
fn compare(
    path: &str,
    lang: Language,
    old: Option<&str>,
    new: &str,
    before: &[Site],
    after: &[Site],
    edits: &[EditSpan],
) -> Check {
    let map = LineMap::new(old.unwrap_or(""), new);
    // In a file that was already broken, the parser's recovery from the
    // old error can move when anything changes: there only errors on or
    // next to a changed line are the edits'.
    let was_clean = before.is_empty();
    // A set, not a scan: a broken file can have thousands of errors.
    let old_sites: std::collections::HashSet<(usize, usize)> =
        before.iter().map(|b| (b.line, b.column)).collect();
    let introduced: Vec<&Site> = after
        .iter()
        .filter(|s| {
            !map.old_of(s.line)
                .is_some_and(|l| old_sites.contains(&(l, s.column)))
        })
        .filter(|s| was_clean || map.near_change(s.line))
        .collect();
    if introduced.is_empty() {
        return Check::Clean {
            language: lang.name(),
        };
    }
    let findings = introduced
        .into_iter()
        .take(MAX_FINDINGS)
        .map(|s| {
            let s = map.focus(s, new);
            let edit = map.edit_at(s.line, edits);
            SyntaxFinding {
                path: path.to_owned(),
                language: lang.name().to_owned(),
                line: s.line + 1,
                column: s.column + 1,
                problem: s.problem.clone(),
                edit,
                edit_number: edit.map(|i| i + 1),
                excerpt: excerpt(new, s.line + 1),
                new_file: old.is_none(),
                had_errors: !was_clean,
            }
        })
        .collect();
    Check::Findings(findings)
}

/// Lines of the text before and after, matched by a line diff.
struct LineMap {
    ops: Vec<DiffOp>,
    /// The unchanged runs as (new start, old start, length), in order.
    equal: Vec<(usize, usize, usize)>,
    /// Lines of the new text.
    new_len: usize,
}

impl LineMap {
    fn new(old: &str, new: &str) -> LineMap {
        let a: Vec<&str> = old.split_inclusive('\n').collect();
        let b: Vec<&str> = new.split_inclusive('\n').collect();
        let ops = line_ops(&a, &b);
        let equal = ops
            .iter()
            .filter_map(|op| match *op {
                DiffOp::Equal {
                    old_index,
                    new_index,
                    len,
                } => Some((new_index, old_index, len)),
                _ => None,
            })
            .collect();
        LineMap {
            ops,
            equal,
            new_len: b.len(),
        }
    }

    /// The line before the edits that unchanged line `new` (0-based) was,
    /// if it is unchanged.
    ///
    /// An error of the new text is the old text's error moved by the
    /// edits when it is at the same column of the line this gives. (The
    /// problem's text is not compared: an error node's extent, and so its
    /// text, changes with what follows it.)
    fn old_of(&self, new: usize) -> Option<usize> {
        let i = self.equal.partition_point(|&(n, _, _)| n <= new);
        let &(n, o, len) = self.equal.get(i.checked_sub(1)?)?;
        (new < n + len).then(|| o + new - n)
    }

    /// An error as shown: one that starts on an unchanged line but spans a
    /// changed one (a parser that gave up at the top of a file whose
    /// bracket an edit left open) is shown at that changed line, where the
    /// fix is.
    fn focus(&self, s: &Site, new: &str) -> Site {
        let changed = |l: usize| l < self.new_len && self.old_of(l).is_none();
        if s.end_line <= s.line || changed(s.line) {
            return s.clone();
        }
        let Some(line) = (s.line + 1..=s.end_line).find(|&l| changed(l)) else {
            return s.clone();
        };
        let text = new.lines().nth(line).unwrap_or("");
        Site {
            line,
            column: text.chars().take_while(|c| c.is_whitespace()).count(),
            end_line: s.end_line,
            problem: format!("syntax error (the parser gave up from line {})", s.line + 1),
        }
    }

    /// Whether new line `new` (0-based) was changed by the edits, or is
    /// next to a line that was.
    fn near_change(&self, new: usize) -> bool {
        let changed = |l: usize| l < self.new_len && self.old_of(l).is_none();
        changed(new) || (new > 0 && changed(new - 1)) || changed(new + 1)
    }

    /// The line before the edits that new line `new` corresponds to: itself
    /// on an unchanged line, else the start of the change it is in.
    fn old_position(&self, new: usize) -> usize {
        let mut last_end = 0;
        for op in &self.ops {
            let (o, n, new_len, old_len) = match *op {
                DiffOp::Equal {
                    old_index,
                    new_index,
                    len,
                } => (old_index, new_index, len, len),
                DiffOp::Delete {
                    old_index,
                    old_len,
                    new_index,
                } => (old_index, new_index, 0, old_len),
                DiffOp::Insert {
                    old_index,
                    new_index,
                    new_len,
                } => (old_index, new_index, new_len, 0),
                DiffOp::Replace {
                    old_index,
                    old_len,
                    new_index,
                    new_len,
                } => (old_index, new_index, new_len, old_len),
            };
            if new < n + new_len {
                return if matches!(op, DiffOp::Equal { .. }) {
                    o + (new - n)
                } else {
                    o
                };
            }
            last_end = o + old_len;
        }
        last_end
    }

    /// The edit to blame for an error on new line `new` (0-based): the one
    /// whose region contains the line's position before the edits, else
    /// the nearest one before it, else the first.
    fn edit_at(&self, new: usize, edits: &[EditSpan]) -> Option<usize> {
        let spanned: Vec<(usize, LineSpan)> = edits
            .iter()
            .filter_map(|e| e.lines.map(|l| (e.index, l)))
            .collect();
        if spanned.is_empty() {
            // A whole-file write or a creation: the last such edit wrote it.
            return edits.last().map(|e| e.index);
        }
        // Report spans are 1-based and inclusive.
        let at = self.old_position(new) + 1;
        if let Some((i, _)) = spanned.iter().find(|(_, l)| l.start <= at && at <= l.end) {
            return Some(*i);
        }
        spanned
            .iter()
            .filter(|(_, l)| l.start <= at)
            .max_by_key(|(_, l)| l.start)
            .or_else(|| spanned.iter().min_by_key(|(_, l)| l.start))
            .map(|(i, _)| *i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_map_through_the_edits() {
        let m = LineMap::new("a\nb\nc\nd\n", "a\nx\ny\nc\nd\n");
        assert_eq!(m.old_of(0), Some(0));
        assert_eq!(m.old_of(1), None);
        assert_eq!(m.old_of(3), Some(2));
        assert_eq!(m.old_position(2), 1);
        assert_eq!(m.old_position(4), 3);
    }

    #[test]
    fn the_blamed_edit_contains_or_precedes_the_line() {
        let m = LineMap::new("1\n2\n3\n4\n5\n6\n", "1\n2x\n3\n4\n5x\n6\n");
        let edits = [
            EditSpan {
                index: 0,
                lines: Some(LineSpan { start: 2, end: 2 }),
            },
            EditSpan {
                index: 1,
                lines: Some(LineSpan { start: 5, end: 5 }),
            },
        ];
        assert_eq!(m.edit_at(1, &edits), Some(0));
        assert_eq!(m.edit_at(3, &edits), Some(0));
        assert_eq!(m.edit_at(4, &edits), Some(1));
        assert_eq!(m.edit_at(5, &edits), Some(1));
        assert_eq!(m.edit_at(0, &edits), Some(0));
    }
}
