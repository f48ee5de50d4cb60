//! Checking an edit of a clean text by parsing only the statements it
//! touched.
//!
//! A Python module is a run of statements, and a statement that starts at
//! column 0 of its line starts where the parser is in the state it begins a
//! file in: no open bracket or string, no indented block, nothing the
//! previous statement could still take (a following line at column 0 ends
//! every statement, and only `else`, `elif`, `except` and `finally` can
//! continue one, none of which can begin a module). So for a text that
//! parsed without any error, the starts of its column-0 statements (its
//! *cuts*) split it into pieces that parse the same alone as in place.
//!
//! An edit between two cuts replaces one piece. When the new piece parses
//! without error alone, with every statement at column 0, ending with a
//! newline that no backslash continues, the whole new text parses without
//! error: the same pieces in the same states, one replaced by another that
//! is whole. Anything else (the piece has an error, starts indented, or
//! the cuts do not fit the text) decides nothing, and the caller parses the
//! whole text as before: the findings are always the whole parse's.
//!
//! Python only: in JavaScript a statement without a semicolon can be
//! continued by the next line, and Rust's attributes belong to the item
//! after them, so a clean piece does not prove a clean whole there.

use tree_sitter::Tree;

use crate::{Language, reparse, sites};

/// Pieces parsed alone at most, as a share of the new text: past it the
/// edit changed most of the file, and one whole parse is cheaper than the
/// pieces and then, if they decide nothing, the whole.
const MAX_SHARE: usize = 2;

impl Language {
    /// Whether a text of this language has an [`Outline`] when it parses
    /// without error.
    pub fn has_outlines(self) -> bool {
        self == Language::Python
    }
}

/// The cuts of a text that parsed without error: where each statement at
/// column 0 starts. Kept by a caller between checks (in memory, or on disk
/// with [`Outline::to_bytes`]), keyed by the text's content hash, it lets
/// the check of the next edit parse only the statements the edit touched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outline {
    lang: Language,
    /// The length of the text it is the outline of.
    len: usize,
    /// Byte offsets, ascending, each the start of a line and of a
    /// statement at column 0; never 0 (the text's start is always a cut).
    cuts: Vec<usize>,
}

impl Outline {
    /// The grammar of the text it outlines.
    pub fn language(&self) -> Language {
        self.lang
    }

    /// The length in bytes of the text it outlines.
    pub fn text_len(&self) -> usize {
        self.len
    }

    /// The outline as bytes, for a caller that keeps it between processes:
    /// `python <len> <cut>,<cut>,...`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let cuts: Vec<String> = self.cuts.iter().map(usize::to_string).collect();
        format!("{} {} {}", self.lang.name(), self.len, cuts.join(",")).into_bytes()
    }

    /// An outline [`Outline::to_bytes`] wrote; `None` for anything else.
    /// Whether it fits a text is checked when it is used.
    pub fn from_bytes(bytes: &[u8]) -> Option<Outline> {
        let s = std::str::from_utf8(bytes).ok()?;
        let mut parts = s.split(' ');
        let lang = match parts.next()? {
            "python" => Language::Python,
            _ => return None,
        };
        let len = parts.next()?.parse().ok()?;
        let cuts = match parts.next()? {
            "" => Vec::new(),
            list => list
                .split(',')
                .map(|c| c.parse().ok())
                .collect::<Option<Vec<usize>>>()?,
        };
        if parts.next().is_some() || !cuts.windows(2).all(|w| w[0] < w[1]) {
            return None;
        }
        Some(Outline { lang, len, cuts })
    }

    /// Whether these cuts can be cuts of `text`: its length, each at the
    /// start of a line that starts with neither a blank nor a comment. (An
    /// outline is found by the text's hash; this guards against one handed
    /// in for another text all the same.)
    fn fits(&self, text: &str) -> bool {
        let b = text.as_bytes();
        self.len == b.len()
            && self.cuts.iter().all(|&c| {
                c > 0
                    && c < b.len()
                    && b[c - 1] == b'\n'
                    && !matches!(b[c], b' ' | b'\t' | b'\r' | b'\n' | b'\x0c' | b'#')
            })
    }
}

/// The outline of `text`, whose parse `tree` has no error; `None` for a
/// language without one or a module whose first statement is indented.
pub(crate) fn of(lang: Language, tree: &Tree, text: &str) -> Option<Outline> {
    if !lang.has_outlines() {
        return None;
    }
    let cuts = statement_starts(tree)?;
    Some(Outline {
        lang,
        len: text.len(),
        cuts: cuts.into_iter().filter(|&c| c > 0).collect(),
    })
}

/// The start bytes of the root's statements that start their line, each
/// at column 0; `None` when one is not at column 0 (the grammar lets a
/// module be indented as a whole, and a piece of it would not start where
/// a file does). A statement after another on its line (`a = 1; b = 2`)
/// is no cut.
fn statement_starts(tree: &Tree) -> Option<Vec<usize>> {
    let root = tree.root_node();
    let mut cursor = root.walk();
    let mut out = Vec::new();
    let mut last_row = None;
    for n in root.named_children(&mut cursor) {
        if n.is_extra() || n.kind() == "comment" {
            continue;
        }
        let (start, end) = (n.start_position(), n.end_position());
        if last_row.is_none_or(|r| start.row > r) {
            if start.column != 0 {
                return None;
            }
            out.push(n.start_byte());
        }
        last_row = Some(end.row);
    }
    Some(out)
}

/// The outline of `new` when the pieces of it that differ from `old`
/// (outlined by `outline`) parse without error alone, proving `new` parses
/// without error; `None` when that is not shown.
pub(crate) fn by_pieces(
    lang: Language,
    old: &str,
    outline: &Outline,
    new: &str,
) -> Option<Outline> {
    if outline.lang != lang || !outline.fits(old) {
        return None;
    }
    let pieces = pieces(old, &outline.cuts, new);
    let parsed: usize = pieces.iter().map(|p| p.new.len()).sum();
    if parsed * MAX_SHARE > new.len().max(1) {
        return None;
    }
    let mut cuts = Vec::new();
    let mut kept = outline.cuts.iter().copied().peekable();
    let mut delta: isize = 0;
    for p in &pieces {
        while let Some(c) = kept.next_if(|&c| c < p.old.start) {
            cuts.push(c.checked_add_signed(delta)?);
        }
        for c in piece_cuts(lang, new, p.new.clone())? {
            cuts.push(c);
        }
        while kept.next_if(|&c| c < p.old.end).is_some() {}
        delta += p.new.len() as isize - p.old.len() as isize;
    }
    for c in kept {
        cuts.push(c.checked_add_signed(delta)?);
    }
    cuts.retain(|&c| c > 0);
    Some(Outline {
        lang,
        len: new.len(),
        cuts,
    })
}

/// One changed piece: its range in the old text and in the new, each from
/// a cut (or the start) to a cut (or the end).
struct Piece {
    old: std::ops::Range<usize>,
    new: std::ops::Range<usize>,
}

/// The pieces between cuts that hold the changes from `old` to `new`,
/// merged where they overlap.
fn pieces(old: &str, cuts: &[usize], new: &str) -> Vec<Piece> {
    let mut out: Vec<Piece> = Vec::new();
    // The new text's length less the old's, over the edits so far.
    let mut delta: isize = 0;
    for e in reparse::input_edits(old, new) {
        // Each edit is in the coordinates the edits before it made; what
        // lies between two edits is unchanged.
        let start = e.start_byte.wrapping_add_signed(-delta);
        let old_end = e.old_end_byte.wrapping_add_signed(-delta);
        let before = delta;
        delta += e.new_end_byte as isize - e.old_end_byte as isize;
        let from = cuts[..cuts.partition_point(|&c| c <= start)]
            .last()
            .copied()
            .unwrap_or(0);
        let to = cuts[cuts.partition_point(|&c| c < old_end)..]
            .first()
            .copied()
            .unwrap_or(old.len());
        match out.last_mut() {
            Some(last) if from < last.old.end => {
                last.old.end = last.old.end.max(to);
                last.new.end = last.old.end.wrapping_add_signed(delta);
            }
            _ => out.push(Piece {
                old: from..to,
                new: from.wrapping_add_signed(before)..to.wrapping_add_signed(delta),
            }),
        }
    }
    out
}

/// The cuts of `new` inside `range`, a piece, when the piece parses
/// without error alone and fits between its neighbours; `None` otherwise.
fn piece_cuts(lang: Language, new: &str, range: std::ops::Range<usize>) -> Option<Vec<usize>> {
    let b = new.as_bytes();
    // Both ends at the start of a line, the line before each end not
    // continued by a backslash.
    for at in [range.start, range.end] {
        if at > 0 && at < b.len() && (b[at - 1] != b'\n' || continued(&b[..at - 1])) {
            return None;
        }
    }
    let piece = new.get(range.clone())?;
    if piece.trim().is_empty() {
        return Some(Vec::new());
    }
    let tree = sites::parse(lang, piece)?;
    if !sites::errors_of(lang, &tree, piece).is_empty() {
        return None;
    }
    let starts = statement_starts(&tree)?;
    Some(starts.into_iter().map(|s| s + range.start).collect())
}

/// Whether the line ending at the end of `before` ends with a backslash
/// (a carriage return before the newline too).
fn continued(before: &[u8]) -> bool {
    let line = before.strip_suffix(b"\r").unwrap_or(before);
    line.ends_with(b"\\")
}
