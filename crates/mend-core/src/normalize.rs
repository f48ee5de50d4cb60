//! Line normalizations used by the tolerant matching passes.
//!
//! Each function here maps a line to the form a pass compares. They are
//! deliberately narrow: every normalization is a kind of drift models really
//! produce (trailing spaces, re-indentation, re-spaced expressions,
//! typographic quotes, pasted line numbers, elided code), and none of them
//! can make two lines equal that differ in an identifier, an operator or a
//! literal digit.

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

/// How the new lines of an edit are written, once its search matched
/// ([`new_typography`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Typography {
    /// The match folded nothing: new lines are written as sent.
    AsSent,
    /// The match had to fold typography (the transport curled the quotes):
    /// new lines lose every typographic character but those the matched
    /// file lines have themselves, which `keep` lists.
    Fold {
        /// Characters the matched lines have as they are.
        keep: Vec<char>,
    },
}

/// Whether the transport changed the typography of an edit, from the
/// pairs of a search line and the file line it matched. A character of
/// the search that stands where the file has another (a curly quote for a
/// straight one) was changed on the way; then the new lines were too, so
/// they do not keep typographic characters (quotes, dashes, `…`, special
/// spaces) that the matched lines do not have ([`fold_except`]).
///
/// Pairs are aligned character by character once folded, whitespace
/// aside; a pair that does not align (a similarity match) says nothing.
/// `Err(c)` when `c` stands both for another character and for itself in
/// the matched lines: a new line's `c` cannot be told.
pub fn new_typography<'a>(
    pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<Typography, char> {
    let mut folded: Vec<char> = Vec::new();
    let mut own: Vec<char> = Vec::new();
    let note = |list: &mut Vec<char>, c: char| {
        if !c.is_ascii() && !list.contains(&c) {
            list.push(c);
        }
    };
    for (search, file) in pairs {
        for c in file.chars() {
            note(&mut own, c);
        }
        if search.is_ascii() {
            continue;
        }
        let (a, b) = (folded_chars(search), folded_chars(file));
        if a.len() != b.len() || a.iter().zip(&b).any(|(x, y)| x.0 != y.0) {
            continue;
        }
        for ((_, s), (_, f)) in a.iter().zip(&b) {
            if s != f {
                note(&mut folded, *s);
            }
        }
        // Spaces drop out of the alignment: a typographic space or a
        // zero-width character the file line lacks was folded.
        for c in search.chars().filter(|c| !file.contains(*c)) {
            let mut f = String::new();
            fold_char(c, &mut f);
            if f.trim().is_empty() {
                note(&mut folded, c);
            }
        }
    }
    if folded.is_empty() {
        return Ok(Typography::AsSent);
    }
    match folded.iter().find(|c| own.contains(c)) {
        Some(&c) => Err(c),
        None => Ok(Typography::Fold { keep: own }),
    }
}

/// A line's folded characters, whitespace left out, each with the
/// character it came from.
fn folded_chars(line: &str) -> Vec<(char, char)> {
    let mut out = Vec::with_capacity(line.len());
    let mut f = String::new();
    for c in line.chars() {
        f.clear();
        fold_char(c, &mut f);
        out.extend(f.chars().filter(|x| !x.is_whitespace()).map(|x| (x, c)));
    }
    out
}

/// `line` with every character [`fold_unicode`] folds folded, but those in
/// `keep`.
pub fn fold_except<'a>(line: &'a str, keep: &[char]) -> Cow<'a, str> {
    if line.is_ascii() {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len());
    for c in line.chars() {
        if keep.contains(&c) {
            out.push(c);
        } else {
            fold_char(c, &mut out);
        }
    }
    if out == line {
        Cow::Borrowed(line)
    } else {
        Cow::Owned(out)
    }
}

/// Trims a line and collapses every run of spaces and tabs inside it to one
/// space: `x  =\tf( a )` and `x = f( a )` compare equal. Whitespace is never
/// removed where there was some, or added where there was none, so tokens
/// cannot merge or split.
pub fn collapse_spaces(s: &str) -> Cow<'_, str> {
    let t = trim(s);
    let bytes = t.as_bytes();
    // A prebuilt SIMD finder: this runs on every line of a file.
    static DOUBLE_SPACE: std::sync::OnceLock<memchr::memmem::Finder<'static>> =
        std::sync::OnceLock::new();
    let double = DOUBLE_SPACE.get_or_init(|| memchr::memmem::Finder::new(b"  "));
    let needs = memchr::memchr(b'\t', bytes).is_some() || double.find(bytes).is_some();
    if !needs {
        return Cow::Borrowed(t);
    }
    let mut out = String::with_capacity(t.len());
    let mut in_space = false;
    for c in t.chars() {
        if c == ' ' || c == '\t' {
            if !in_space {
                out.push(' ');
            }
            in_space = true;
        } else {
            out.push(c);
            in_space = false;
        }
    }
    Cow::Owned(out)
}

/// `str::trim`, with a fast answer for the common line that starts and
/// ends with a visible ASCII character.
pub fn trim(s: &str) -> &str {
    trim_end(trim_start(s))
}

/// `str::trim_start`, stripping ASCII spaces and tabs byte by byte and
/// leaving other whitespace to the general rule.
fn trim_start(s: &str) -> &str {
    let b = s.as_bytes();
    let n = b.iter().take_while(|&&c| c == b' ' || c == b'\t').count();
    match b.get(n) {
        Some(&c) if c > b' ' && c < 0x80 => &s[n..],
        None => "",
        _ => s.trim_start(),
    }
}

/// `str::trim_end`, with the same fast path.
pub fn trim_end(s: &str) -> &str {
    let b = s.as_bytes();
    let n = b
        .iter()
        .rev()
        .take_while(|&&c| c == b' ' || c == b'\t')
        .count();
    let end = b.len() - n;
    match end.checked_sub(1).map(|i| b[i]) {
        Some(c) if c > b' ' && c < 0x80 => &s[..end],
        None => "",
        _ => s.trim_end(),
    }
}

/// The most tolerant per-line form: Unicode folded, trimmed, and inner
/// whitespace runs collapsed.
pub fn fold_loose(s: &str) -> Cow<'_, str> {
    match fold_unicode(s) {
        Cow::Borrowed(b) => collapse_spaces(b),
        Cow::Owned(o) => Cow::Owned(collapse_spaces(&o).into_owned()),
    }
}

/// How a pasted line number is separated from the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumberStyle {
    /// `12 | code` or `12| code`.
    Bar,
    /// `12│ code` (a box-drawing bar).
    BoxBar,
    /// `12→code`, as file-reading tools print.
    Arrow,
    /// `12\tcode`, as `cat -n` prints.
    Tab,
    /// `12: code`.
    Colon,
    /// A blank line rendered as its number alone (`12` or `12:`); it fits
    /// every style.
    Bare,
}

/// Splits a line-number prefix from a line, returning the number, the rest
/// of the line and the prefix's style. Recognized, after optional leading
/// spaces and a number (zero-padded too): `12 | `, `12| `, `12│ `, `12→`,
/// `12\t`, `12: `, and a bare `12` or `12:` for a blank line.
pub fn split_line_number(line: &str) -> Option<(usize, &str, NumberStyle)> {
    let trimmed = line.trim_start_matches(' ');
    let digits = trimmed.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 7 {
        return None;
    }
    let number: usize = trimmed[..digits].parse().ok()?;
    let after = &trimmed[digits..];
    if after.is_empty() || after == ":" {
        return Some((number, "", NumberStyle::Bare));
    }
    if let Some(r) = after.strip_prefix('\t') {
        return Some((number, r, NumberStyle::Tab));
    }
    if let Some(r) = after.strip_prefix(": ") {
        return Some((number, r, NumberStyle::Colon));
    }
    let spaced = after.trim_start_matches(' ');
    if let Some(r) = spaced.strip_prefix('→') {
        // Tools that print `12→` put the line right after the arrow.
        return Some((number, r, NumberStyle::Arrow));
    }
    for (sep, style) in [('|', NumberStyle::Bar), ('│', NumberStyle::BoxBar)] {
        if let Some(r) = spaced.strip_prefix(sep) {
            // One space after a bar belongs to the prefix (`12 | code`).
            return Some((number, r.strip_prefix(' ').unwrap_or(r), style));
        }
    }
    None
}

/// A search whose every line carried a line-number prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Numbered {
    /// The first line's number.
    pub first: usize,
    /// The prefix style the lines share.
    pub style: NumberStyle,
    /// The lines without their prefixes.
    pub lines: Vec<String>,
}

impl Numbered {
    /// Strips the same kind of prefix from the replacement lines that carry
    /// one; lines without one are kept as they are, since models number the
    /// lines they copy and not the lines they write.
    ///
    /// A line that is only a number in the search's range is a blank line
    /// when the search had a blank line with that number; otherwise mend
    /// cannot tell a line number from content, and says so.
    pub fn strip_replacement(&self, replace: &[String]) -> Result<Vec<String>, String> {
        let last = self.first + self.lines.len().saturating_sub(1);
        let blank_at = |n: usize| {
            n >= self.first
                && self
                    .lines
                    .get(n - self.first)
                    .is_some_and(|l| l.trim().is_empty())
        };
        replace
            .iter()
            .map(|l| match split_line_number(l) {
                Some((_, rest, style)) if style == self.style && style != NumberStyle::Bare => {
                    Ok(rest.to_owned())
                }
                Some((n, _, NumberStyle::Bare)) if blank_at(n) => Ok(String::new()),
                Some((n, _, NumberStyle::Bare)) if (self.first..=last + 1).contains(&n) => {
                    Err(format!(
                        "the replacement line `{}` may be line {n}'s number or content",
                        l.trim()
                    ))
                }
                _ => Ok(l.clone()),
            })
            .collect()
    }

    /// Whether `line` carries a prefix of this style (so a file with such
    /// lines makes numbered replacement lines ambiguous).
    pub fn styled(&self, line: &str) -> bool {
        matches!(split_line_number(line), Some((_, _, s)) if s == self.style)
    }
}

/// If every line carries a line-number prefix of one style and the numbers
/// count up by one, returns the numbering and the stripped lines. A single
/// line is not enough evidence unless its prefix uses a bar, an arrow or a
/// tab, which code rarely has after a leading number.
pub fn strip_line_numbers(lines: &[String]) -> Option<Numbered> {
    let mut out = Vec::with_capacity(lines.len());
    let mut first = None;
    let mut prev = None;
    let mut style = None;
    for line in lines {
        let (n, rest, s) = split_line_number(line)?;
        if let Some(p) = prev
            && n != p + 1
        {
            return None;
        }
        if s != NumberStyle::Bare && *style.get_or_insert(s) != s {
            return None;
        }
        first.get_or_insert(n);
        prev = Some(n);
        out.push(rest.to_owned());
    }
    let style = style.unwrap_or(NumberStyle::Bare);
    if lines.len() == 1 && matches!(style, NumberStyle::Colon | NumberStyle::Bare) {
        return None;
    }
    Some(Numbered {
        first: first?,
        style,
        lines: out,
    })
}

/// What a replacement's line-number prefixes are, once its region is
/// located ([`new_side_numbers`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NewNumbers {
    /// No prefix to remove: the lines are the file's new text as written.
    Keep,
    /// The prefixes are line numbers: the lines without them.
    Strip(Vec<String>),
    /// They may be line numbers or content, and the files differ.
    Unsure(Unsure),
}

/// Why a replacement's number prefixes cannot be told from content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unsure {
    /// The prefixes follow the region's numbering, but line `line`
    /// (0-based) of the file begins like a numbered line of the same kind.
    FileHasThem {
        /// The file line, 0-based.
        line: usize,
    },
    /// Every new line begins with a number, but the numbers neither count
    /// up by one nor follow the region's lines.
    Inconsistent,
    /// One line begins with `12: `, its own number in the new file: a
    /// line number, or a key or label that happens to be one.
    LoneColon,
    /// A line that is only a number (`12`) stands where the numbering
    /// puts no blank line.
    BareNumber(String),
}

/// The numbering evidence of a replacement: per line, its prefix.
struct Prefixed<'a> {
    /// Per line: the number and rest of a prefix of the shared style, a
    /// bare number (`Some((n, ""))` with `bare`), or nothing.
    lines: Vec<Option<(usize, &'a str, bool)>>,
    style: NumberStyle,
}

impl<'a> Prefixed<'a> {
    /// The prefixes of `replace`, when some line has one of a style other
    /// than a bare number and no two styles are mixed.
    fn of(replace: &'a [String]) -> Option<Prefixed<'a>> {
        let mut style = None;
        let mut lines = Vec::with_capacity(replace.len());
        for l in replace {
            match split_line_number(l) {
                Some((n, rest, NumberStyle::Bare)) => lines.push(Some((n, rest, true))),
                // `grep -n` writes `12: ` at the start of the line; an
                // indented `12: ` is a key (YAML, a dict literal). `cat -n`
                // pads its numbers before the tab; `12\tx` unpadded is a
                // row of tab-separated data.
                Some((_, _, NumberStyle::Colon)) if l.starts_with(' ') => lines.push(None),
                Some((_, _, NumberStyle::Tab)) if !l.starts_with(' ') => lines.push(None),
                Some((n, rest, s)) => {
                    if *style.get_or_insert(s) != s {
                        return None;
                    }
                    lines.push(Some((n, rest, false)));
                }
                None => lines.push(None),
            }
        }
        Some(Prefixed {
            lines,
            style: style?,
        })
    }

    /// Lines with a prefix of the style (bare numbers aside).
    fn styled(&self) -> usize {
        self.lines
            .iter()
            .filter(|l| matches!(l, Some((_, _, false))))
            .count()
    }

    /// Whether every line has a number or is blank.
    fn all(&self, replace: &[String]) -> bool {
        self.lines
            .iter()
            .zip(replace)
            .all(|(p, l)| p.is_some() || l.trim().is_empty())
    }

    /// The number line `k` would have in a run whose line 0 is `n0`, for
    /// every numbered line; unnumbered lines must be blank.
    fn run_from(&self, replace: &[String], n0: usize) -> bool {
        self.all(replace)
            && self
                .lines
                .iter()
                .enumerate()
                .all(|(k, p)| p.is_none_or(|(n, _, _)| n == n0 + k))
    }

    /// Whether every numbered line `k` has number `first + k`, and every
    /// other line is blank or copies a region line: the new lines carry
    /// their numbers in the new file, and the copied context may carry
    /// none (a diff whose `+` lines alone are numbered).
    fn follows(&self, replace: &[String], first: usize, region: &[&str]) -> bool {
        let context = |l: &String| {
            let l = fold_loose(l);
            l.is_empty() || region.iter().any(|r| fold_loose(r) == l)
        };
        self.lines
            .iter()
            .zip(replace)
            .enumerate()
            .all(|(k, (p, l))| p.map_or_else(|| context(l), |(n, _, _)| n == first + k))
    }

    /// The first number minus its line's place: where a run would start.
    fn run_start(&self) -> Option<usize> {
        let (k, (n, _, _)) = self
            .lines
            .iter()
            .enumerate()
            .find_map(|(k, p)| p.map(|p| (k, p)))?;
        n.checked_sub(k)
    }

    /// Whether numbered lines that copy a region line sit at that line's
    /// number, at least one does, and the numbers count up: the model kept
    /// the numbers of the lines it copied.
    fn copies(&self, first: usize, region: &[&str]) -> bool {
        let at = |n: usize| n.checked_sub(first).and_then(|i| region.get(i));
        let mut last = 0;
        let mut copied = 0;
        for (n, rest, bare) in self.lines.iter().flatten() {
            if *n <= last && last > 0 {
                return false;
            }
            last = *n;
            if *bare {
                continue;
            }
            let rest = fold_loose(rest);
            if at(*n).is_some_and(|l| fold_loose(l) == rest) {
                copied += 1;
            } else if region.iter().any(|l| fold_loose(l) == rest) {
                // A copied line under another line's number.
                return false;
            }
        }
        copied > 0
    }
}

/// Decides what the line-number prefixes on a replacement are, once its
/// region is located: `first` is the 1-based number of the region's first
/// line, `region` its lines and `file` every line of the file.
///
/// Prefixes of one style (`12 | `, `12│ `, `12→`, `12\t`, `12: `) are line
/// numbers, and are stripped, when:
/// - each numbered line carries its number in the new file (counting from
///   the region's first line), and every other line is blank or a copy of
///   a region line (a diff's context, numbered or not); or
/// - every line carries a bar, arrow or tab prefix and the numbers count
///   up by one from anywhere (a colon is too common in content, such as
///   YAML keys, for a run alone to say so); or
/// - the lines that copy a region line carry that line's number, and the
///   numbers count up (the model numbered the lines it copied).
///
/// They are content, kept, when the region's own lines begin that way (the
/// file's kind of text), or when they give no such evidence and not every
/// line has one (`0 | FLAG` in a C expression beside an unnumbered line).
/// Otherwise mend cannot tell, and says so: a numbering whose file has
/// such lines elsewhere, or a replacement whose every line is numbered
/// without that evidence (one line alone included).
pub fn new_side_numbers(
    replace: &[String],
    first: usize,
    region: &[&str],
    file: &[&str],
) -> NewNumbers {
    let Some(p) = Prefixed::of(replace) else {
        return NewNumbers::Keep;
    };
    let styled = |l: &&str| matches!(split_line_number(l), Some((_, _, s)) if s == p.style);
    if region.iter().any(styled) {
        return NewNumbers::Keep;
    }
    let strong = p.style != NumberStyle::Colon;
    let many = p.styled() > 1;
    let fits = p.follows(replace, first, region);
    let follows = fits && (strong || many);
    let run = strong
        && many
        && p.run_start()
            .is_some_and(|n0| n0 > 0 && p.run_from(replace, n0));
    if !(follows || run || p.copies(first, region)) {
        return if fits {
            NewNumbers::Unsure(Unsure::LoneColon)
        } else if p.all(replace) {
            NewNumbers::Unsure(Unsure::Inconsistent)
        } else {
            NewNumbers::Keep
        };
    }
    if let Some(line) = file.iter().position(styled) {
        return NewNumbers::Unsure(Unsure::FileHasThem { line });
    }
    let blank_at = |n: usize| {
        n.checked_sub(first)
            .and_then(|i| region.get(i))
            .is_some_and(|l| l.trim().is_empty())
    };
    let mut out = Vec::with_capacity(replace.len());
    for (line, prefix) in replace.iter().zip(&p.lines) {
        out.push(match prefix {
            Some((_, rest, false)) => (*rest).to_owned(),
            Some((n, _, true)) if follows || run || blank_at(*n) => String::new(),
            Some((_, _, true)) => {
                return NewNumbers::Unsure(Unsure::BareNumber(line.trim().to_owned()));
            }
            None => line.clone(),
        });
    }
    NewNumbers::Strip(out)
}

/// Whether any of `lines` begins like a numbered line (`12 | `, `12→`, …),
/// a bare number aside: the cheap test before [`new_side_numbers`].
pub fn has_numbered_line<'l>(mut lines: impl Iterator<Item = &'l str>) -> bool {
    lines.any(|l| {
        l.trim_start_matches(' ')
            .starts_with(|c: char| c.is_ascii_digit())
            && matches!(split_line_number(l), Some((_, _, s)) if s != NumberStyle::Bare)
    })
}

/// Words that only an elision uses ("... existing code ..."): a line with
/// one says code is left out, wherever it stands.
const ELISION_WORDS: &[&str] = &[
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
    "keep",
    "kept",
];

/// Words an elision comment may use that prose uses too (`etc...`, `and
/// more...`, `...other methods...`): they make a marker only beside a marker
/// of the other side.
const PROSE_WORDS: &[&str] = &["other", "more", "etc"];

/// What kind of elision marker a line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkerKind {
    /// A comment (or a prose line) saying code is elided: `// ...`,
    /// `# ... existing code ...`, `/* ...other methods... */`,
    /// `... rest of the file ...`.
    Comment,
    /// A line of ellipsis alone: `...`, `…`, `[...]`. Python makes it code.
    Bare,
}

/// Comment openers and closers, longest first.
const OPENERS: &[&str] = &["<!--", "{/*", "/*", "//", "--", "#", ";", "%", "*"];
const CLOSERS: &[&str] = &["-->", "*/}", "*/"];

/// Whether a line stands for elided code, and how.
///
/// A marker is a whole line: a line of ellipsis alone, a comment that holds
/// an ellipsis and says code is elided (or holds nothing else), or a prose
/// line that starts with a detached ellipsis and says so. An ellipsis inside
/// code is never a marker: spread and rest syntax (`{ a, ...rest }`,
/// `...args`), variadics (`args ...int`), ranges (`0..10`) and `x = ...`.
pub fn marker_kind(line: &str) -> Option<MarkerKind> {
    let t = line.trim();
    if t.is_empty() {
        return None;
    }
    let bare = t.trim_start_matches('[').trim_end_matches(']');
    if !bare.is_empty() && is_ellipsis_run(bare) {
        return Some(MarkerKind::Bare);
    }
    let opener = OPENERS.iter().find(|o| t.starts_with(**o));
    let body = match opener {
        Some(o) => {
            let r = t[o.len()..].trim();
            CLOSERS
                .iter()
                .find_map(|c| r.strip_suffix(c))
                .unwrap_or(r)
                .trim()
        }
        None => t,
    };
    let body = body.trim_start_matches('[').trim_end_matches(']').trim();
    if !(body.contains("...") || body.contains('…')) {
        return None;
    }
    let words: Vec<String> = body
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    if opener.is_some() && words.is_empty() {
        return Some(MarkerKind::Comment);
    }
    let says_elided = words.len() <= 8
        && words
            .iter()
            .any(|w| ELISION_WORDS.contains(&w.as_str()) || PROSE_WORDS.contains(&w.as_str()));
    if !says_elided {
        return None;
    }
    if opener.is_some() {
        return Some(MarkerKind::Comment);
    }
    // Prose without a comment opener: it must read as a note, not as code.
    let detached = body.starts_with("...") && body[3..].starts_with(char::is_whitespace)
        || body.starts_with('…') && body['…'.len_utf8()..].starts_with(char::is_whitespace);
    let code_punct = body.contains(['(', ')', '{', '}', ';', '=', ',']);
    (detached && !code_punct).then_some(MarkerKind::Comment)
}

fn is_ellipsis_run(s: &str) -> bool {
    let folded = s.replace('…', "...");
    folded.len() >= 3 && folded.chars().all(|c| c == '.')
}

/// Whether a line is an elision marker of either kind. The planner decides
/// per edit whether a bare ellipsis is one ([`Elision::flags`]).
pub fn is_elision_marker(line: &str) -> bool {
    marker_kind(line).is_some()
}

/// Whether a marker line says in words that code is left out (`existing
/// code`, `rest of the file`, `unchanged`): such a line is never content,
/// while a bare `...` or a `// ...` may be (a doctest prompt, an example).
pub fn says_elided(line: &str) -> bool {
    marker_kind(line) == Some(MarkerKind::Comment)
        && line
            .split(|c: char| !c.is_alphanumeric())
            .any(|w| ELISION_WORDS.contains(&w.to_lowercase().as_str()))
}

/// Whether a line `...` is code in the file's language (Python's
/// Ellipsis), by its extension.
pub fn ellipsis_is_code(path: &str) -> bool {
    let ext = path.rsplit_once('.').map_or("", |(_, e)| e);
    matches!(ext, "py" | "pyi" | "pyx" | "ipynb")
}

/// Which lines of an edit may stand for elided code.
///
/// Every marker also has a code reading: a line `...` is Python's Ellipsis,
/// and a file may hold a comment `// ...`. The locator tries the code
/// reading first and refuses when both fit with different results; the
/// flags say only which lines *may* be markers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Elision {
    /// Comment markers always; a bare ellipsis only when the other side of
    /// the edit (search or replacement) has a bare ellipsis to pair it with.
    #[default]
    Paired,
    /// Nothing is elided: marker-like lines are literal text (anchors).
    Off,
}

impl Elision {
    /// The rule for a file. The same in every language: where a bare `...`
    /// is code (Python), the code reading is tried first.
    pub fn for_path(_path: &str) -> Elision {
        Elision::Paired
    }

    /// Per-line marker flags for an edit's search and replacement.
    pub fn flags(self, search: &[String], replace: &[String]) -> (Vec<bool>, Vec<bool>) {
        let kinds = |ls: &[String]| -> Vec<Option<MarkerKind>> {
            ls.iter().map(|l| marker_kind(l)).collect()
        };
        let (ks, kr) = (kinds(search), kinds(replace));
        let bare = |k: &[Option<MarkerKind>]| k.contains(&Some(MarkerKind::Bare));
        let decide = |k: &[Option<MarkerKind>], other_has: bool| -> Vec<bool> {
            k.iter()
                .map(|m| match (self, m) {
                    (Elision::Off, _) | (_, None) => false,
                    (_, Some(MarkerKind::Comment)) => true,
                    (Elision::Paired, Some(MarkerKind::Bare)) => other_has,
                })
                .collect()
        };
        // A bare `...` pairs only with a bare `...`: beside a comment marker
        // it is code, such as an overload's body.
        let (has_s, has_r) = (bare(&ks), bare(&kr));
        (decide(&ks, has_r), decide(&kr, has_s))
    }
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
    fn fast_trims_agree_with_std() {
        for s in [
            "",
            " ",
            "\t x \t",
            "x",
            " \u{a0}x\u{a0} ",
            "\u{3000}y",
            "a\r",
            "  é  ",
        ] {
            assert_eq!(trim(s), s.trim(), "{s:?}");
            assert_eq!(trim_end(s), s.trim_end(), "{s:?}");
        }
    }

    #[test]
    fn collapses_inner_whitespace() {
        assert_eq!(collapse_spaces("  x  =\tf( a )  "), "x = f( a )");
        assert_eq!(collapse_spaces("x = 1"), "x = 1");
        assert_eq!(fold_loose("\tx\u{00A0} =  1"), "x = 1");
    }

    #[test]
    fn line_numbers() {
        assert_eq!(
            split_line_number("12 | foo"),
            Some((12, "foo", NumberStyle::Bar))
        );
        assert_eq!(
            split_line_number("  7\t    x"),
            Some((7, "    x", NumberStyle::Tab))
        );
        assert_eq!(
            split_line_number("3: y"),
            Some((3, "y", NumberStyle::Colon))
        );
        assert_eq!(
            split_line_number("    12→    let x = 1;"),
            Some((12, "    let x = 1;", NumberStyle::Arrow))
        );
        assert_eq!(
            split_line_number("00012| fn f()"),
            Some((12, "fn f()", NumberStyle::Bar))
        );
        assert_eq!(
            split_line_number("  9│ }"),
            Some((9, "}", NumberStyle::BoxBar))
        );
        assert_eq!(split_line_number("12 x"), None);
        assert_eq!(split_line_number("x = 1"), None);
        let lines: Vec<String> = ["10 | a", "11 |", "12 |   b"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        let n = strip_line_numbers(&lines).unwrap();
        assert_eq!((n.first, n.style), (10, NumberStyle::Bar));
        assert_eq!(n.lines, vec!["a", "", "  b"]);
        let not_consecutive: Vec<String> = vec!["1: a".into(), "3: b".into()];
        assert_eq!(strip_line_numbers(&not_consecutive), None);
        assert_eq!(strip_line_numbers(&["200: ok".to_owned()]), None);
        let mixed: Vec<String> = vec!["1 | a".into(), "2: b".into()];
        assert_eq!(strip_line_numbers(&mixed), None);
    }

    #[test]
    fn numbered_replacement_lines() {
        let search: Vec<String> = ["1 | function test() {", "2 |     return true;", "3 | }"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        let n = strip_line_numbers(&search).unwrap();
        let replace: Vec<String> = ["1 | function test() {", "    return false;", "3 | }"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        assert_eq!(
            n.strip_replacement(&replace).unwrap(),
            vec!["function test() {", "    return false;", "}"]
        );
        let lone: Vec<String> = vec!["2".into()];
        assert!(n.strip_replacement(&lone).is_err());
    }

    fn owned(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn new_side_numbers_that_follow_the_region_or_count_up_are_stripped() {
        let file = ["a = 1", "b = 2", "", "c = 3"];
        let region = &file[1..4];
        let strip = |r: &[&str], first: usize| new_side_numbers(&owned(r), first, region, &file);
        // Following the region (line 2 on), a blank line numbered or not.
        let want = owned(&["b = 2", "b2 = 5", "", "c = 3"]);
        assert_eq!(
            strip(&["2 | b = 2", "3 | b2 = 5", "4 |", "5 | c = 3"], 2),
            NewNumbers::Strip(want.clone())
        );
        assert_eq!(
            strip(&["2→b = 2", "3→b2 = 5", "", "5→c = 3"], 2),
            NewNumbers::Strip(want.clone())
        );
        // A run from elsewhere, in a tab style.
        assert_eq!(
            strip(&["  40\tb = 2", "  41\tb2 = 5", "  42", "  43\tc = 3"], 2),
            NewNumbers::Strip(want)
        );
        // Only the added line numbered, at its place in the new file.
        assert_eq!(
            strip(&["b = 2", "3 | b2 = 5", "", "c = 3"], 2),
            NewNumbers::Strip(owned(&["b = 2", "b2 = 5", "", "c = 3"]))
        );
        // Copied lines keep their numbers, a line deleted between them.
        assert_eq!(
            strip(&["2: b = 2", "4: c = 3"], 2),
            NewNumbers::Strip(owned(&["b = 2", "c = 3"]))
        );
    }

    #[test]
    fn new_side_numbers_that_may_be_content_are_kept_or_refused() {
        let file = ["x = (", "    A", ")"];
        let region = &file[1..2];
        let decide = |r: &[&str], first: usize| new_side_numbers(&owned(r), first, region, &file);
        // A C-like expression beside a line without a number: content.
        assert_eq!(decide(&["    A |", "    0 | FLAG"], 2), NewNumbers::Keep);
        // Alone, it may as well be a line numbered from elsewhere.
        assert_eq!(
            decide(&["    0 | FLAG"], 2),
            NewNumbers::Unsure(Unsure::Inconsistent)
        );
        // YAML keys: indented, or counting up without following the region.
        assert_eq!(decide(&["  1: one", "  2: two"], 2), NewNumbers::Keep);
        assert_eq!(
            decide(&["7: one", "8: two"], 2),
            NewNumbers::Unsure(Unsure::Inconsistent)
        );
        // Every line numbered, not counting up.
        assert_eq!(
            decide(&["5 | a", "9 | b"], 2),
            NewNumbers::Unsure(Unsure::Inconsistent)
        );
        // Numbers that fit, in a file that has such lines elsewhere.
        let listing = ["x", "1 | y", "z"];
        assert_eq!(
            new_side_numbers(&owned(&["1 | q", "2 | r"]), 1, &listing[..1], &listing),
            NewNumbers::Unsure(Unsure::FileHasThem { line: 1 })
        );
        // The region's own lines begin that way: content.
        assert_eq!(
            new_side_numbers(&owned(&["2 | q", "3 | r"]), 2, &listing[1..2], &listing),
            NewNumbers::Keep
        );
        // Bare numbers alone are content, and so are tab-separated rows.
        assert_eq!(decide(&["1", "2", "3"], 2), NewNumbers::Keep);
        assert_eq!(decide(&["2\tann", "3\tbob"], 2), NewNumbers::Keep);
    }

    #[test]
    fn new_lines_lose_typography_the_matched_lines_lack() {
        let pairs = [(
            "say(\u{201C}hi\u{201D}, \u{2018}x\u{2019})",
            "say(\u{201C}hi\u{201D}, 'x')",
        )];
        let keep = match new_typography(pairs) {
            Ok(Typography::Fold { keep }) => keep,
            other => panic!("{other:?}"),
        };
        assert_eq!(keep, vec!['\u{201C}', '\u{201D}']);
        assert_eq!(
            fold_except(
                "n = \u{2018}y\u{2019} + \u{201C}z\u{201D} \u{2014} w",
                &keep
            ),
            "n = 'y' + \u{201C}z\u{201D} - w"
        );
        // Nothing folded: as sent.
        assert_eq!(
            new_typography([("a = \u{2018}b\u{2019}", "a = \u{2018}b\u{2019}")]),
            Ok(Typography::AsSent)
        );
        // The same character folded in one place and kept in another.
        let both = [("it\u{2019}s \u{2019}a\u{2019}", "it\u{2019}s 'a'")];
        assert_eq!(new_typography(both), Err('\u{2019}'));
        // A pair that matched only by similarity says nothing.
        assert_eq!(
            new_typography([("f(\u{2018}a\u{2019})", "g('b')")]),
            Ok(Typography::AsSent)
        );
        // A no-break space the file line lacks.
        assert_eq!(
            new_typography([("a\u{a0}= 1", "a = 1")]),
            Ok(Typography::Fold { keep: Vec::new() })
        );
    }

    #[test]
    fn elision_markers() {
        for (yes, kind) in [
            ("...", MarkerKind::Bare),
            ("  …", MarkerKind::Bare),
            ("[...]", MarkerKind::Bare),
            ("    # ... existing code ...", MarkerKind::Comment),
            ("// ... rest unchanged ...", MarkerKind::Comment),
            ("/* ... */", MarkerKind::Comment),
            ("<!-- ... -->", MarkerKind::Comment),
            ("  // …", MarkerKind::Comment),
            ("# ...rest of the function...", MarkerKind::Comment),
            ("{/* ... */}", MarkerKind::Comment),
            ("... existing code ...", MarkerKind::Comment),
        ] {
            assert_eq!(marker_kind(yes), Some(kind), "{yes}");
        }
        for no in [
            "x = ...",
            "# then we compute the total ...",
            "print('...')",
            "return",
            "",
            "const { a, ...rest } = obj;",
            "  ...rest",
            "  ...args,",
            "func f(args ...int) {",
            "for i in 0..10 {",
            "let r = a..=b;",
            "f(...more, other)",
            "#define LOG(...) log(__VA_ARGS__)",
        ] {
            assert_eq!(marker_kind(no), None, "{no}");
        }
    }

    #[test]
    fn bare_ellipsis_pairs_or_is_code() {
        let s: Vec<String> = vec!["a".into(), "...".into(), "b".into()];
        let r_with: Vec<String> = vec!["a".into(), "...".into(), "c".into()];
        let r_without: Vec<String> = vec!["a".into(), "c".into()];
        assert_eq!(
            Elision::Paired.flags(&s, &r_with).0,
            vec![false, true, false]
        );
        assert_eq!(Elision::Paired.flags(&s, &r_without).0, vec![false; 3]);
        assert_eq!(Elision::Off.flags(&s, &r_with).0, vec![false; 3]);
        assert_eq!(Elision::for_path("src/a.py"), Elision::Paired);
    }

    #[test]
    fn only_elision_words_say_elided() {
        for yes in [
            "# ... existing code ...",
            "// ... rest unchanged",
            "/* ... */ // keep",
        ] {
            assert!(says_elided(yes), "{yes}");
        }
        for no in ["...", "// ...", "/// one, two, etc...", "x = rest(...)"] {
            assert!(!says_elided(no), "{no}");
        }
    }
}
