//! The drift kinds: what models do to the lines they copy.

use crate::hunks::{Hunk, Tag};

/// A kind of drift.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The edit as the file has it.
    Exact,
    /// Trailing spaces on copied lines.
    TrailingSpace,
    /// The block's frame shifted: base indentation lost or added, or tabs
    /// expanded to four spaces.
    Indentation,
    /// A doubled space inside copied lines.
    InnerSpace,
    /// Typographic quotes and dashes in copied lines.
    Unicode,
    /// `12 | ` (or `12→`) prefixes on copied lines.
    LineNumbers,
    /// An extra blank line at each edge of the search.
    BlankEdges,
    /// A one- or two-character slip in a context line.
    TypoContext,
    /// A slip in a removed line.
    TypoRemoved,
    /// A run of context lines replaced by `... existing code ...`.
    Elision,
    /// Python: two or more context lines before the change replaced by a
    /// bare `...` line, in search and replacement alike.
    BareElisionBefore,
    /// Python: the same after the change.
    BareElisionAfter,
    /// The edit as the file has it, in hunks with `...` as code (a stub
    /// body, `x[...]`, a spread): the code reading must win.
    DotsCode,
    /// Anchored only: `content` elides a run of unchanged lines between
    /// the anchors with `# ... existing code ...` (`//` outside Python).
    AnchoredElision,
    /// Anchored only, Python: the same with a bare `...`.
    AnchoredBareElision,
    /// A refusal kind: a search copied from one of two near-identical
    /// windows of the file with their differing token slipped to a
    /// spelling as many character edits from both (see `twins.rs`).
    Twins,
    /// One or two slips (neighbours swapped, a letter dropped or doubled,
    /// a neighbouring key struck) in any word of 3+ letters of one copied
    /// line, in a search of 4+ lines.
    TypoAnyLine,
    /// The same slips in a short search: the hunk's changed lines with one
    /// line of context (1–3 lines, still unique in the file).
    TypoShort,
    /// Anchored only: a blank line after the end anchor (the start anchor,
    /// without one) and after `content`, where the file has none.
    AnchoredEndBlank,
    /// Anchored only: an end anchor of the blank lines the region ends with
    /// alone (the hunk's trailing context, when blank).
    AnchoredBlankEnd,
    /// Anchored only, Python: a block body of the new side (the lines after
    /// a line ending in `:`, deeper than it) turned into a `...` stub.
    AnchoredStub,
}

impl Kind {
    pub const ALL: [Kind; 21] = [
        Kind::Exact,
        Kind::TrailingSpace,
        Kind::Indentation,
        Kind::InnerSpace,
        Kind::Unicode,
        Kind::LineNumbers,
        Kind::BlankEdges,
        Kind::TypoContext,
        Kind::TypoRemoved,
        Kind::Elision,
        Kind::BareElisionBefore,
        Kind::BareElisionAfter,
        Kind::DotsCode,
        Kind::AnchoredElision,
        Kind::AnchoredBareElision,
        Kind::Twins,
        Kind::TypoAnyLine,
        Kind::TypoShort,
        Kind::AnchoredEndBlank,
        Kind::AnchoredBlankEnd,
        Kind::AnchoredStub,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Exact => "exact",
            Kind::TrailingSpace => "trailing ws",
            Kind::Indentation => "indentation",
            Kind::InnerSpace => "inner ws",
            Kind::Unicode => "unicode",
            Kind::LineNumbers => "line numbers",
            Kind::BlankEdges => "blank edges",
            Kind::TypoContext => "typo context",
            Kind::TypoRemoved => "typo removed",
            Kind::Elision => "elision",
            Kind::BareElisionBefore => "bare ... before",
            Kind::BareElisionAfter => "bare ... after",
            Kind::DotsCode => "... as code",
            Kind::AnchoredElision => "anchored elision",
            Kind::AnchoredBareElision => "anchored bare ...",
            Kind::Twins => "twins",
            Kind::TypoAnyLine => "typo any line",
            Kind::TypoShort => "typo short search",
            Kind::AnchoredEndBlank => "anchored end blank",
            Kind::AnchoredBlankEnd => "anchored blank-only end",
            Kind::AnchoredStub => "anchored ... stub",
        }
    }
}

/// A small deterministic generator, so every run drifts the same way.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Line-number prefix style.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Numbers {
    Bar,
    Arrow,
}

fn copied(t: Tag) -> bool {
    t != Tag::Add
}

fn indent(l: &str) -> &str {
    &l[..l.len() - l.trim_start_matches([' ', '\t']).len()]
}

/// Applies `kind` to a hunk's lines, or `None` when the hunk has nothing
/// the drift could act on.
pub fn apply(kind: Kind, h: &Hunk, numbers: Numbers, rng: &mut Rng) -> Option<Vec<(Tag, String)>> {
    let mut lines = h.lines.clone();
    let on_copied = |lines: &mut Vec<(Tag, String)>, f: &dyn Fn(&str) -> String| -> bool {
        let mut changed = false;
        for (t, l) in lines.iter_mut() {
            if copied(*t) && !l.trim().is_empty() {
                let n = f(l);
                changed |= n != *l;
                *l = n;
            }
        }
        changed
    };
    let ok = match kind {
        Kind::Exact => true,
        Kind::TrailingSpace => on_copied(&mut lines, &|l| format!("{l}  ")),
        Kind::InnerSpace => on_copied(&mut lines, &|l| {
            let ind = indent(l);
            let body = &l[ind.len()..];
            match body.find(' ') {
                Some(i) => format!("{ind}{} {}", &body[..i], &body[i..]),
                None => l.to_owned(),
            }
        }),
        Kind::Unicode => on_copied(&mut lines, &|l| {
            let mut open = true;
            l.chars()
                .map(|c| match c {
                    '"' => {
                        open = !open;
                        if open { '\u{201D}' } else { '\u{201C}' }
                    }
                    '\'' => '\u{2019}',
                    c => c,
                })
                .collect()
        }),
        Kind::Indentation => reindent(&mut lines),
        Kind::LineNumbers => {
            let mut n = h.old_start;
            for (t, l) in lines.iter_mut() {
                if copied(*t) {
                    n += 1;
                    *l = match numbers {
                        Numbers::Bar => format!("{n} | {l}"),
                        Numbers::Arrow => format!("{n:>6}\u{2192}{l}"),
                    };
                }
            }
            true
        }
        Kind::BlankEdges => {
            lines.insert(0, (Tag::Ctx, String::new()));
            lines.push((Tag::Ctx, String::new()));
            true
        }
        Kind::TypoContext => typo(&mut lines, Tag::Ctx, rng),
        Kind::TypoRemoved => typo(&mut lines, Tag::Del, rng),
        Kind::Elision => elide(&mut lines, &h.path),
        Kind::TypoAnyLine => typo_any_line(&mut lines, 4, rng),
        Kind::TypoShort => typo_any_line(&mut lines, 1, rng),
        // The render makes the anchors (it knows the file).
        Kind::AnchoredEndBlank | Kind::AnchoredBlankEnd | Kind::AnchoredStub => true,
        _ => dots_kinds(kind, &mut lines, &h.path),
    };
    // A drift that makes the edit a no-op (a slip that restores the new
    // text) is not an edit any more.
    let unchanged = crate::hunks::side(&lines, Tag::Add) == crate::hunks::side(&lines, Tag::Del);
    (ok && !unchanged).then_some(lines)
}

/// The model's frame: base indentation lost, or tabs expanded to four
/// spaces, or (for a block at the left margin) four spaces added.
fn reindent(lines: &mut [(Tag, String)]) -> bool {
    let non_blank = || lines.iter().filter(|(_, l)| !l.trim().is_empty());
    if non_blank().any(|(_, l)| indent(l).contains('\t')) {
        for (_, l) in lines.iter_mut() {
            let ind = indent(l).replace('\t', "    ");
            *l = format!("{ind}{}", l.trim_start_matches([' ', '\t']));
        }
        return true;
    }
    let base = non_blank().map(|(_, l)| indent(l).len()).min().unwrap_or(0);
    for (_, l) in lines.iter_mut() {
        if l.trim().is_empty() {
            continue;
        }
        *l = if base > 0 {
            l[base..].to_owned()
        } else {
            format!("    {l}")
        };
    }
    true
}

/// A slip inside an identifier of one line tagged `tag`: two letters
/// swapped, one dropped, or one doubled.
fn typo(lines: &mut [(Tag, String)], tag: Tag, rng: &mut Rng) -> bool {
    let candidates: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, (t, l))| *t == tag && word_at(l).is_some())
        .map(|(i, _)| i)
        .collect();
    if candidates.is_empty() {
        return false;
    }
    let i = candidates[rng.below(candidates.len())];
    let l = &lines[i].1;
    let (a, b) = word_at(l).expect("a word");
    let w: Vec<char> = l[a..b].chars().collect();
    let k = 1 + rng.below(w.len() - 2);
    let mut n = w.clone();
    match rng.below(3) {
        0 => n.swap(k, k + 1),
        1 => {
            n.remove(k);
        }
        _ => n.insert(k, w[k]),
    }
    if n == w {
        n.remove(k);
    }
    let slipped: String = n.into_iter().collect();
    lines[i].1 = format!("{}{slipped}{}", &l[..a], &l[b..]);
    true
}

/// The longest identifier of five or more ASCII letters in a line.
fn word_at(l: &str) -> Option<(usize, usize)> {
    letter_words(l)
        .into_iter()
        .filter(|(a, b)| b - a >= 5)
        .fold(None, |best, (a, b)| {
            if best.is_none_or(|(x, y)| b - a > y - x) {
                Some((a, b))
            } else {
                best
            }
        })
}

/// The words of 3+ ASCII letters in a line, as byte ranges: names, words
/// in strings and comments, keywords.
fn letter_words(l: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in l.char_indices().chain(std::iter::once((l.len(), ' '))) {
        if c.is_ascii_alphabetic() {
            start.get_or_insert(i);
        } else if let Some(s) = start.take()
            && i - s >= 3
        {
            out.push((s, i));
        }
    }
    out
}

/// The keys beside each letter on a QWERTY keyboard, in its rows.
fn neighbour_key(c: char, rng: &mut Rng) -> char {
    const ROWS: [&str; 3] = ["qwertyuiop", "asdfghjkl", "zxcvbnm"];
    let lower = c.to_ascii_lowercase();
    let Some(row) = ROWS.iter().find(|r| r.contains(lower)) else {
        return c;
    };
    let row: Vec<char> = row.chars().collect();
    let at = row.iter().position(|&k| k == lower).unwrap_or(0);
    let beside: Vec<char> = [at.checked_sub(1), Some(at + 1)]
        .into_iter()
        .flatten()
        .filter_map(|i| row.get(i).copied())
        .collect();
    let k = beside[rng.below(beside.len())];
    if c.is_ascii_uppercase() {
        k.to_ascii_uppercase()
    } else {
        k
    }
}

/// One slip in a word: neighbours swapped, a letter dropped, a letter
/// doubled, or a neighbouring key struck instead.
fn slip(w: &mut Vec<char>, rng: &mut Rng) {
    let k = rng.below(w.len());
    match rng.below(4) {
        0 if k + 1 < w.len() && w[k] != w[k + 1] => w.swap(k, k + 1),
        1 if w.len() > 2 => {
            w.remove(k);
        }
        2 => w.insert(k, w[k]),
        _ => w[k] = neighbour_key(w[k], rng),
    }
}

/// The "typo any line" drift: one or two slips in one copied line of a
/// search of `min` or more lines, in one word or one in each of two words.
fn typo_any_line(lines: &mut [(Tag, String)], min: usize, rng: &mut Rng) -> bool {
    if lines.iter().filter(|(t, _)| copied(*t)).count() < min {
        return false;
    }
    let candidates: Vec<usize> = (0..lines.len())
        .filter(|&i| copied(lines[i].0) && !letter_words(&lines[i].1).is_empty())
        .collect();
    if candidates.is_empty() {
        return false;
    }
    let i = candidates[rng.below(candidates.len())];
    let words = letter_words(&lines[i].1);
    let first = rng.below(words.len());
    // (word, slips in it)
    let plan: Vec<(usize, usize)> = match rng.below(3) {
        0 => vec![(first, 1)],
        1 => vec![(first, 2)],
        _ if words.len() > 1 => {
            let second = (first + 1 + rng.below(words.len() - 1)) % words.len();
            vec![(first.min(second), 1), (first.max(second), 1)]
        }
        _ => vec![(first, 2)],
    };
    let l = lines[i].1.clone();
    let mut out = String::new();
    let mut at = 0;
    for (wi, n) in plan {
        let (a, b) = words[wi];
        let mut w: Vec<char> = l[a..b].chars().collect();
        for _ in 0..n {
            slip(&mut w, rng);
        }
        out.push_str(&l[at..a]);
        out.extend(w);
        at = b;
    }
    out.push_str(&l[at..]);
    let changed = out != l;
    lines[i].1 = out;
    changed
}

/// Replaces the longest run (two or more) of context lines with an
/// elision comment, as models write it.
fn elide(lines: &mut Vec<(Tag, String)>, path: &str) -> bool {
    let mut best: Option<(usize, usize)> = None;
    let mut i = 0;
    while i < lines.len() {
        if lines[i].0 != Tag::Ctx {
            i += 1;
            continue;
        }
        let s = i;
        while i < lines.len() && lines[i].0 == Tag::Ctx {
            i += 1;
        }
        if i - s >= 2 && best.is_none_or(|(a, b)| i - s > b - a) {
            best = Some((s, i));
        }
    }
    let Some((a, b)) = best else { return false };
    // The search must keep real lines besides the marker.
    if lines.iter().filter(|(t, _)| *t != Tag::Add).count() <= b - a {
        return false;
    }
    let comment = if path.ends_with(".py") { "#" } else { "//" };
    let ind = lines[a..b]
        .iter()
        .find(|(_, l)| !l.trim().is_empty())
        .map_or("", |(_, l)| indent(l))
        .to_owned();
    lines.splice(
        a..b,
        [(Tag::Ctx, format!("{ind}{comment} ... existing code ..."))],
    );
    true
}

/// What the `--check` gate expects of a kind, and which floor it meets.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Should apply; counted in its format's total.
    Apply,
    /// Should apply; a slip, with its own floor outside anchored.
    Typo,
    /// Should apply; elided context, with its own floor outside anchored.
    Elided,
    /// Must be refused: success is a refusal, any applied text is wrong.
    Refuse,
    /// Applied as the hunk says or refused, as the rules say, never another
    /// text: anchors of blank lines alone are read only in the other
    /// anchor's block, and a `...` stub where an elision fits too has two
    /// readings. Success is counted, not gated, and not in the totals.
    Either,
}

impl Kind {
    /// The gate's class of this kind.
    pub fn class(self) -> Class {
        match self {
            Kind::TypoContext | Kind::TypoRemoved | Kind::TypoShort => Class::Typo,
            Kind::Elision
            | Kind::BareElisionBefore
            | Kind::BareElisionAfter
            | Kind::AnchoredElision
            | Kind::AnchoredBareElision => Class::Elided,
            Kind::Twins => Class::Refuse,
            Kind::AnchoredBlankEnd | Kind::AnchoredStub => Class::Either,
            _ => Class::Apply,
        }
    }

    /// Kinds that only some hunks have (Python, `...`, a context run
    /// long enough to elide between anchors): tried on every
    /// hunk of a package, not only the even sample, so they get numbers.
    pub fn rare(self) -> bool {
        matches!(
            self,
            Kind::BareElisionBefore
                | Kind::BareElisionAfter
                | Kind::DotsCode
                | Kind::AnchoredElision
                | Kind::AnchoredBareElision
                | Kind::AnchoredBlankEnd
                | Kind::AnchoredStub
        )
    }

    /// Whether this kind is rendered in `format` at all: anchored elision
    /// is the anchored column's own kind, and a bare `...` around the
    /// change is the other formats'.
    pub fn fits(self, format: mend_core::formats::Format) -> bool {
        let anchored = format == mend_core::formats::Format::Anchored;
        match self {
            Kind::AnchoredElision
            | Kind::AnchoredBareElision
            | Kind::AnchoredEndBlank
            | Kind::AnchoredBlankEnd
            | Kind::AnchoredStub => anchored,
            Kind::BareElisionBefore | Kind::BareElisionAfter => !anchored,
            _ => true,
        }
    }
}

/// The drift of the kinds about `...` (a bare marker, `...` as code) and
/// elided anchored content.
fn dots_kinds(kind: Kind, lines: &mut Vec<(Tag, String)>, path: &str) -> bool {
    match kind {
        Kind::BareElisionBefore => bare_elide(lines, path, true),
        Kind::BareElisionAfter => bare_elide(lines, path, false),
        Kind::DotsCode => lines.iter().any(|(_, l)| dots_as_code(path, l)),
        // The render elides (it knows the anchors); here the hunk only
        // needs a run to elide, and no `...` as code beside a bare marker.
        Kind::AnchoredElision => ctx_run(lines),
        Kind::AnchoredBareElision => {
            python(path) && ctx_run(lines) && !lines.iter().any(|(_, l)| dots_as_code(path, l))
        }
        // Twins are built from whole files, not hunks (`twins.rs`).
        _ => false,
    }
}

fn python(path: &str) -> bool {
    path.ends_with(".py") || path.ends_with(".pyi")
}

/// The elision marker a model writes at indentation `ind`: a bare `...`,
/// or the language's `... existing code ...` comment.
pub fn elision_marker(path: &str, bare: bool, ind: &str) -> String {
    if bare {
        format!("{ind}...")
    } else if python(path) {
        format!("{ind}# ... existing code ...")
    } else {
        format!("{ind}// ... existing code ...")
    }
}

/// The indentation of the first non-blank line of `run`.
pub fn run_indent(run: &[(Tag, String)]) -> String {
    run.iter()
        .find(|(_, l)| !l.trim().is_empty())
        .map_or("", |(_, l)| indent(l))
        .to_owned()
}

/// Whether the hunk has a run of two or more context lines, one of them
/// not blank.
fn ctx_run(lines: &[(Tag, String)]) -> bool {
    lines
        .chunk_by(|a, b| a.0 == b.0)
        .any(|c| c[0].0 == Tag::Ctx && c.len() >= 2 && c.iter().any(|(_, l)| !l.trim().is_empty()))
}

/// Whether `line` (of the file at `path`) holds `...` outside a trailing
/// comment: a stub body, an `Ellipsis` in a slice or a type, a spread,
/// a doctest prompt, or text in a string.
pub fn dots_as_code(path: &str, line: &str) -> bool {
    let comment = if python(path) { "#" } else { "//" };
    let code = line.split(comment).next().unwrap_or("");
    code.contains("...")
}

/// Python: the context run before the change (keeping its first line) or
/// after it (keeping its last) replaced by a bare `...` at the run's
/// indentation, as a model elides what it does not touch.
fn bare_elide(lines: &mut Vec<(Tag, String)>, path: &str, before: bool) -> bool {
    // Where the hunk has `...` as code, a bare marker has both readings:
    // that is the "... as code" kind's subject, not this one's.
    if !python(path) || lines.iter().any(|(_, l)| dots_as_code(path, l)) {
        return false;
    }
    let Some(first) = lines.iter().position(|(t, _)| *t != Tag::Ctx) else {
        return false;
    };
    let last = lines
        .iter()
        .rposition(|(t, _)| *t != Tag::Ctx)
        .unwrap_or(first);
    let (a, b) = if before {
        (1, first)
    } else {
        (last + 1, lines.len().saturating_sub(1))
    };
    if b < a + 2 || lines[a..b].iter().all(|(_, l)| l.trim().is_empty()) {
        return false;
    }
    // The elision reading needs old lines on both sides of the marker; one
    // at the search's edge stands for an unknown stretch beyond it.
    let old_line = |r: &[(Tag, String)]| {
        r.iter()
            .any(|(t, l)| *t != Tag::Add && !l.trim().is_empty())
    };
    if !old_line(&lines[..a]) || !old_line(&lines[b..]) {
        return false;
    }
    let marker = elision_marker(path, true, &run_indent(&lines[a..b]));
    lines.splice(a..b, [(Tag::Ctx, marker)]);
    true
}

/// The hunk a kind works on: for most kinds the hunk itself; for
/// [`Kind::TypoShort`] its changed lines with one line of context, when
/// that search is one to three lines and still unique in the file; for
/// [`Kind::AnchoredStub`] the hunk with a block body of its new side
/// turned into `...`. `None` when the hunk has no such shape.
pub fn reshape(kind: Kind, h: &Hunk, file: &str) -> Option<Hunk> {
    match kind {
        Kind::TypoShort => short(h, file),
        Kind::AnchoredStub if python(&h.path) => stubbed(h, file),
        Kind::AnchoredStub => None,
        _ => Some(h.clone()),
    }
}

/// The hunk's changed lines with the line of context before them (after
/// them, at the file's start), as a model sends a short search.
fn short(h: &Hunk, file: &str) -> Option<Hunk> {
    let first = h.lines.iter().position(|(t, _)| *t != Tag::Ctx)?;
    let last = h.lines.iter().rposition(|(t, _)| *t != Tag::Ctx)?;
    let (from, to) = if first > 0 {
        (first - 1, last + 1)
    } else {
        (first, (last + 2).min(h.lines.len()))
    };
    let lines = h.lines[from..to].to_vec();
    let search = crate::hunks::side(&lines, Tag::Add);
    if !(1..=3).contains(&search.len()) || search.iter().all(|l| l.trim().is_empty()) {
        return None;
    }
    let file_lines: Vec<&str> = file.lines().collect();
    let places = (0..=file_lines.len().saturating_sub(search.len()))
        .filter(|&i| {
            file_lines[i..i + search.len()]
                .iter()
                .zip(&search)
                .all(|(a, b)| a == b)
        })
        .count();
    let dropped = h.lines[..from]
        .iter()
        .filter(|(t, _)| *t != Tag::Add)
        .count();
    (places == 1).then(|| Hunk {
        path: h.path.clone(),
        lines,
        old_start: h.old_start + dropped,
        expected: h.expected.clone(),
    })
}

fn width(l: &str) -> usize {
    indent(l).len()
}

/// The hunk with the body of the first block its new side opens (a line
/// ending in `:` followed by deeper lines, then a line no deeper, all in
/// the hunk) turned into `...` at the body's depth: context lines of the
/// body become removed ones, added ones go.
fn stubbed(h: &Hunk, file: &str) -> Option<Hunk> {
    let new: Vec<usize> = (0..h.lines.len())
        .filter(|&i| h.lines[i].0 != Tag::Del)
        .collect();
    let (o, body, after) = (0..new.len()).find_map(|k| {
        let opener = &h.lines[new[k]].1;
        if !opener.trim_end().ends_with(':') || opener.trim_start().starts_with('#') {
            return None;
        }
        let deeper = |i: usize| {
            let l = &h.lines[new[i]].1;
            l.trim().is_empty() || width(l) > width(opener)
        };
        let end = (k + 1..new.len()).find(|&i| !deeper(i))?;
        let body: Vec<usize> = (k + 1..end).collect();
        let real = body.iter().any(|&i| !h.lines[new[i]].1.trim().is_empty());
        let stub_already = body.iter().any(|&i| h.lines[new[i]].1.trim() == "...");
        (real && !stub_already).then(|| {
            (
                new[k],
                body.iter().map(|&i| new[i]).collect::<Vec<_>>(),
                new[end],
            )
        })
    })?;
    let first = body
        .iter()
        .map(|&i| &h.lines[i].1)
        .find(|l| !l.trim().is_empty())?;
    let stub = format!("{}...", indent(first));
    let mut lines = Vec::new();
    for (i, (t, l)) in h.lines.iter().enumerate() {
        let in_body = i > o && i < after && (body.contains(&i) || *t == Tag::Del);
        match (in_body, t) {
            (true, Tag::Ctx) => lines.push((Tag::Del, l.clone())),
            (true, Tag::Add) => {}
            _ => lines.push((*t, l.clone())),
        }
        if i == o {
            lines.push((Tag::Add, stub.clone()));
        }
    }
    let old: Vec<&str> = file.split_inclusive('\n').collect();
    let old_len = lines.iter().filter(|(t, _)| *t != Tag::Add).count();
    let mut expected: String = old[..h.old_start].concat();
    for (t, l) in &lines {
        if *t != Tag::Del {
            expected.push_str(l);
            expected.push('\n');
        }
    }
    expected.push_str(&old[h.old_start + old_len..].concat());
    Some(Hunk {
        path: h.path.clone(),
        lines,
        old_start: h.old_start,
        expected,
    })
}
