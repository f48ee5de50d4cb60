//! The locator: where in a file does a block of search lines belong?
//!
//! Matching climbs a ladder of passes ([`MatchPass::LADDER`]), strictest
//! first, and stops at the first pass that finds anything:
//!
//! 1. [`MatchPass::Exact`]: line contents equal (line endings never matter).
//! 2. [`MatchPass::TrailingWhitespace`]: trailing spaces and tabs ignored.
//! 3. [`MatchPass::Whitespace`]: leading and trailing whitespace ignored.
//! 4. [`MatchPass::InnerWhitespace`]: runs of spaces and tabs inside lines
//!    count as one space.
//! 5. [`MatchPass::Unicode`]: typographic quotes, dashes, spaces and `…`
//!    folded to ASCII, then NFC.
//! 6. [`MatchPass::LineNumbers`]: `12 | `-style prefixes stripped, when every
//!    search line has one of one style and they count up by one.
//! 7. [`MatchPass::Elision`]: lines like `# ... existing code ...` split the
//!    search into pieces found in order; the elided lines are kept.
//! 8. [`MatchPass::Similarity`]: Levenshtein similarity of line windows,
//!    above a threshold *and* clearly ahead of any other window; a short
//!    search only where it is one window but for a typing slip, and no
//!    other window of the file could be what it was copied from
//!    (`short.rs`).
//!
//! Every pass must find exactly one location. Several candidates are an
//! ambiguity, reported with every line number, unless a start-line hint picks
//! the nearest candidate within [`LocateOptions::hint_window`] lines. Blank
//! lines at the edges of the search follow one rule in every pass
//! (`edges.rs`).

mod edges;
mod elision;
mod fuzzy;
mod lines;
mod numbers;
mod short;

use std::cell::OnceCell;
use std::ops::Range;

use serde::{Deserialize, Serialize};

pub(crate) use edges::drop_surplus;
use lines::Norm;

use crate::normalize::Elision;
use crate::similarity::LineGrams;

/// The matching pass that located an edit, in ladder order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchPass {
    /// Line contents are identical.
    Exact,
    /// Identical once trailing whitespace is removed.
    TrailingWhitespace,
    /// Identical once leading and trailing whitespace is removed.
    Whitespace,
    /// Identical once runs of whitespace inside lines count as one space.
    InnerWhitespace,
    /// Identical once typographic Unicode is folded to ASCII.
    Unicode,
    /// Identical once pasted line-number prefixes are stripped.
    LineNumbers,
    /// Found piece by piece around elision markers.
    Elision,
    /// Found by Levenshtein similarity.
    Similarity,
}

impl MatchPass {
    /// Every pass, strictest first.
    pub const LADDER: [MatchPass; 8] = [
        MatchPass::Exact,
        MatchPass::TrailingWhitespace,
        MatchPass::Whitespace,
        MatchPass::InnerWhitespace,
        MatchPass::Unicode,
        MatchPass::LineNumbers,
        MatchPass::Elision,
        MatchPass::Similarity,
    ];

    /// The pass's name as used in reports.
    pub fn name(self) -> &'static str {
        match self {
            MatchPass::Exact => "exact",
            MatchPass::TrailingWhitespace => "trailing_whitespace",
            MatchPass::Whitespace => "whitespace",
            MatchPass::InnerWhitespace => "inner_whitespace",
            MatchPass::Unicode => "unicode",
            MatchPass::LineNumbers => "line_numbers",
            MatchPass::Elision => "elision",
            MatchPass::Similarity => "similarity",
        }
    }

    /// The difference the pass forgives, for "not found, even ignoring …"
    /// messages; `None` for the exact pass.
    pub fn forgives(self) -> Option<&'static str> {
        match self {
            MatchPass::Exact => None,
            MatchPass::TrailingWhitespace => Some("trailing whitespace"),
            MatchPass::Whitespace => Some("indentation"),
            MatchPass::InnerWhitespace => Some("spacing inside lines"),
            MatchPass::Unicode => Some("typographic quotes and dashes"),
            MatchPass::LineNumbers => Some("line-number prefixes"),
            MatchPass::Elision => Some("the code elided by `...` markers"),
            MatchPass::Similarity => Some("small differences"),
        }
    }

    /// Whether the pass may have matched lines whose indentation differs
    /// from the search, so the replacement must be re-based.
    pub fn tolerates_indentation(self) -> bool {
        self >= MatchPass::Whitespace
    }
}

impl std::fmt::Display for MatchPass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Tunables of the ladder.
#[derive(Debug, Clone, Copy)]
pub struct LocateOptions {
    /// Minimum similarity for the similarity pass.
    pub threshold: f64,
    /// How far the best window must lead every non-overlapping rival.
    pub margin: f64,
    /// A start-line hint picks among candidates at most this many lines away.
    pub hint_window: usize,
    /// Accept the best window despite rivals within the margin when it is
    /// the search with a slip or two in one line and no rival is (see
    /// [`crate::similarity::slips`]).
    pub slips: bool,
    /// Work the similarity pass may spend on one search, in characters
    /// compared (see [`crate::similarity::Budget`]); a failure report's
    /// closest-region search gets a quarter of it.
    pub fuzzy_budget: u64,
}

impl Default for LocateOptions {
    /// The threshold and margin were measured on drifted edits of real
    /// source files; see docs/decisions.md ("Choosing the similarity threshold").
    fn default() -> Self {
        LocateOptions {
            threshold: 0.85,
            margin: 0.10,
            hint_window: 40,
            slips: true,
            // About a fifth of a second on this project's benchmark machine:
            // a 4,000-character search against thousands of windows, or one
            // of 100,000 characters against a few.
            fuzzy_budget: 15_000_000_000,
        }
    }
}

/// A located search block.
#[derive(Debug, Clone, PartialEq)]
pub struct Match {
    /// The pass that found it.
    pub pass: MatchPass,
    /// First file line (0-based).
    pub start: usize,
    /// One past the last file line.
    pub end: usize,
    /// Similarity of the located lines to the search (1.0 unless the
    /// similarity pass matched).
    pub similarity: f64,
    /// The search lines actually matched (surplus blank edges dropped, line
    /// numbers stripped).
    pub search: Vec<String>,
    /// The replacement lines that go with `search`.
    pub replace: Vec<String>,
    /// For each line of `search`, the file lines it stands for: one line,
    /// for an elision marker the elided range (possibly empty), and an empty
    /// range for a search line the file does not have (similarity only).
    pub map: Vec<Range<usize>>,
    /// File lines in the region that no search line stands for (similarity
    /// only), with the search line they follow (`None`: before the first).
    pub extra: Vec<(Option<usize>, usize)>,
    /// Which `search` lines are elision markers under the query's rule.
    pub markers: Vec<bool>,
    /// Which `replace` lines are elision markers under the query's rule.
    pub replace_markers: Vec<bool>,
    /// Whether marker lines stand for file lines (the elision pass, or an
    /// anchored region whose content elides its interior); otherwise they
    /// matched file text literally.
    pub elided: bool,
}

impl Match {
    /// A match the planner placed itself (a substring found after a line's
    /// indentation), line for line, with markers flagged under `elision`.
    pub(crate) fn placed(
        pass: MatchPass,
        start: usize,
        search: Vec<String>,
        replace: Vec<String>,
        elision: Elision,
    ) -> Match {
        let (markers, replace_markers) = elision.flags(&search, &replace);
        Match {
            markers,
            replace_markers,
            ..Match::one_to_one(pass, start, search, replace)
        }
    }

    /// A match of `search` at `start`, line for line.
    pub(crate) fn one_to_one(
        pass: MatchPass,
        start: usize,
        search: Vec<String>,
        replace: Vec<String>,
    ) -> Match {
        let n = search.len();
        Match {
            pass,
            start,
            end: start + n,
            similarity: 1.0,
            search,
            replace,
            map: (start..start + n).map(|i| i..i + 1).collect(),
            extra: Vec::new(),
            markers: Vec::new(),
            replace_markers: Vec::new(),
            elided: false,
        }
    }
}

/// A candidate location shown when matching fails.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Candidate {
    /// First file line (0-based).
    pub start: usize,
    /// Number of lines.
    pub len: usize,
    /// Similarity to the search.
    pub similarity: f64,
}

/// Why a search block could not be located.
#[derive(Debug, Clone, PartialEq)]
pub enum Miss {
    /// No pass found it.
    NotFound {
        /// The most similar window, if any was at least 50% similar.
        best: Option<Candidate>,
        /// Tokens of the search that `best` lacks but the file has elsewhere:
        /// why a similar-enough window was still refused.
        differs: Vec<String>,
        /// Where the replacement already stands in the file, if it does.
        already: Option<usize>,
        /// The tolerant passes that were tried, whose differences were
        /// ignored in vain.
        ignored: Vec<MatchPass>,
    },
    /// A pass found several equally good locations.
    Ambiguous {
        /// The pass that found them.
        pass: MatchPass,
        /// Every location (0-based first lines) with its similarity.
        candidates: Vec<Candidate>,
        /// What a hint did, if one was given.
        hint: Option<usize>,
    },
    /// A short search is, but for a typing slip, a copy of more than one
    /// place (`short.rs`): the same line twice, or another spelling as
    /// near.
    Slipped {
        /// Every place, with its similarity to the search.
        candidates: Vec<Candidate>,
    },
    /// The search is not found by the exact passes, and too large to
    /// compare for small differences within the work budget.
    TooLarge {
        /// Lines of the search.
        lines: usize,
        /// Its characters.
        chars: usize,
        /// How many places of the search's size the budget can compare (0
        /// when not even one).
        affordable: usize,
    },
    /// Only the similarity pass came near, and the window it found does
    /// not hold one of the search's edge lines where the rest of the search
    /// is (the file changed there since the search was copied): writing
    /// there would overwrite lines the search does not describe.
    Adrift {
        /// The window the similarity pass found.
        best: Candidate,
        /// The edge line (as sent) that the window lacks or changes.
        edge: String,
        /// Whether it is the search's first line (else its last).
        first: bool,
    },
    /// The search cannot be used for matching.
    Unusable {
        /// What is wrong with it.
        message: String,
        /// What to send instead.
        fix: String,
    },
}

impl Miss {
    pub(crate) fn not_found(
        best: Option<Candidate>,
        differs: Vec<String>,
        already: Option<usize>,
    ) -> Miss {
        Miss::NotFound {
            best,
            differs,
            already,
            ignored: Vec::new(),
        }
    }
}

/// What to locate.
#[derive(Debug, Clone)]
pub struct LineQuery<'q> {
    /// Search lines.
    pub search: &'q [String],
    /// Replacement lines; trimmed and stripped alongside the search.
    pub replace: &'q [String],
    /// 1-based start-line hint.
    pub hint: Option<usize>,
    /// Return every occurrence instead of requiring one.
    pub replace_all: bool,
    /// Stop climbing after this pass.
    pub max_pass: MatchPass,
    /// Only consider locations starting at or after this line (0-based).
    pub from: usize,
    /// Which lines may stand for elided code.
    pub elision: Elision,
    /// When several locations match, the one starting in this range (and
    /// only it) is taken: the scope of an apply-patch `@@` context line.
    pub within: Option<Range<usize>>,
    /// Only locations that end at the end of the file (trailing blank lines
    /// aside) count.
    pub at_eof: bool,
}

impl<'q> LineQuery<'q> {
    /// A query for `search`, to be replaced by `replace`: one location,
    /// anywhere, every pass, elision paired.
    pub fn new(search: &'q [String], replace: &'q [String]) -> Self {
        LineQuery {
            search,
            replace,
            hint: None,
            replace_all: false,
            max_pass: MatchPass::Similarity,
            from: 0,
            elision: Elision::Paired,
            within: None,
            at_eof: false,
        }
    }

    /// A query for a short anchor: literal lines, no similarity.
    pub fn anchor(lines: &'q [String], max_pass: MatchPass) -> Self {
        LineQuery::new(lines, &[])
            .max_pass(max_pass)
            .elision(Elision::Off)
    }

    /// Sets the 1-based start-line hint.
    pub fn hint(mut self, hint: Option<usize>) -> Self {
        self.hint = hint;
        self
    }

    /// Returns every occurrence instead of requiring one.
    pub fn replace_all(mut self, all: bool) -> Self {
        self.replace_all = all;
        self
    }

    /// Stops climbing after `pass`.
    pub fn max_pass(mut self, pass: MatchPass) -> Self {
        self.max_pass = pass;
        self
    }

    /// Considers only locations starting at or after line `from`.
    pub fn from(mut self, from: usize) -> Self {
        self.from = from;
        self
    }

    /// Sets which lines may stand for elided code.
    pub fn elision(mut self, elision: Elision) -> Self {
        self.elision = elision;
        self
    }

    /// Prefers the single location starting in `within`.
    pub fn within(mut self, within: Option<Range<usize>>) -> Self {
        self.within = within;
        self
    }

    /// Requires the location to end at the end of the file.
    pub fn at_eof(mut self, at_eof: bool) -> Self {
        self.at_eof = at_eof;
        self
    }
}

/// The file side of matching, with lazily built indexes.
#[derive(Debug)]
pub struct Haystack<'a> {
    lines: Vec<&'a str>,
    /// The lines under the normalizations that allocate (inner spacing,
    /// Unicode), computed once.
    normalized: [OnceCell<Vec<std::borrow::Cow<'a, str>>>; Norm::COUNT],
    /// Each line's hash under each normalization, computed once.
    hashes: [OnceCell<Vec<u64>>; Norm::COUNT],
    /// Where each line hash occurs, per normalization: built once a
    /// normalization has been searched a few times.
    places: [OnceCell<rustc_hash::FxHashMap<u64, Vec<u32>>>; Norm::COUNT],
    searches: [std::cell::Cell<u32>; Norm::COUNT],
    grams: OnceCell<LineGrams<'a>>,
}

impl<'a> Haystack<'a> {
    /// Wraps file line contents.
    pub fn new(lines: Vec<&'a str>) -> Self {
        Haystack {
            lines,
            normalized: Default::default(),
            hashes: Default::default(),
            places: Default::default(),
            searches: Default::default(),
            grams: OnceCell::new(),
        }
    }

    /// The file's line contents.
    pub fn lines(&self) -> &[&'a str] {
        &self.lines
    }

    /// The file's lines under an allocating normalization, computed once.
    fn normalized(&self, norm: Norm) -> &[std::borrow::Cow<'a, str>] {
        self.normalized[norm.index()]
            .get_or_init(|| self.lines.iter().map(|l| norm.apply(l)).collect())
    }

    /// Line `i` under `norm`; the cheap normalizations are slices.
    fn line_under(&self, norm: Norm, i: usize) -> &str {
        let l = self.lines[i];
        match norm {
            Norm::Exact => l,
            Norm::Trailing => crate::normalize::trim_end(l),
            Norm::Trim => crate::normalize::trim(l),
            Norm::Spaces | Norm::Loose => &self.normalized(norm)[i],
        }
    }

    /// The sorted places where lines hashing to `hash` occur under `norm`,
    /// once the index pays: after a few searches of this file.
    fn places(&self, norm: Norm, hash: u64) -> Option<&[u32]> {
        const INDEX_AFTER: u32 = 4;
        let i = norm.index();
        if self.places[i].get().is_none() {
            let n = self.searches[i].get() + 1;
            self.searches[i].set(n);
            if n < INDEX_AFTER {
                return None;
            }
        }
        let index = self.places[i].get_or_init(|| {
            let mut map: rustc_hash::FxHashMap<u64, Vec<u32>> = Default::default();
            for (p, &h) in self.hashes(norm).iter().enumerate() {
                map.entry(h).or_default().push(p as u32);
            }
            map
        });
        Some(index.get(&hash).map_or(&[][..], Vec::as_slice))
    }

    /// Every line's hash under `norm`, computed once. A line that a
    /// normalization leaves as the previous one did reuses its hash, so the
    /// ladder costs about two hashes per line, not five.
    fn hashes(&self, norm: Norm) -> &[u64] {
        if let Some(h) = self.hashes[norm.index()].get() {
            return h;
        }
        let prev = match norm {
            Norm::Exact => None,
            Norm::Trailing => Some(Norm::Exact),
            Norm::Trim => Some(Norm::Trailing),
            Norm::Spaces => Some(Norm::Trim),
            Norm::Loose => Some(Norm::Spaces),
        };
        let computed = match prev {
            None => self.lines.iter().map(|l| lines::line_hash(l)).collect(),
            Some(p) => {
                let before = self.hashes(p);
                (0..self.lines.len())
                    .map(|i| {
                        let (a, b) = (self.line_under(p, i), self.line_under(norm, i));
                        if a.len() == b.len() && a.as_ptr() == b.as_ptr() {
                            before[i]
                        } else {
                            lines::line_hash(b)
                        }
                    })
                    .collect()
            }
        };
        self.hashes[norm.index()].get_or_init(|| computed)
    }

    pub(crate) fn grams(&self) -> &LineGrams<'a> {
        self.grams
            .get_or_init(|| LineGrams::new(self.normalized(Norm::Loose).to_vec()))
    }

    /// The end of the file for `at_eof`, ignoring trailing blank lines.
    fn eof(&self) -> usize {
        self.lines.len() - self.lines.iter().rev().take_while(|l| is_blank(l)).count()
    }
}

pub(crate) fn is_blank(s: &str) -> bool {
    s.trim().is_empty()
}

/// What one pass concluded.
pub(crate) enum Step {
    /// The pass does not apply to this search.
    Skip,
    /// The pass found nothing; climb on.
    Next,
    /// The pass found nothing, and no later pass may guess.
    Stop,
    /// The pass decided.
    Done(Result<Vec<Match>, Miss>),
}

pub(crate) enum Selection {
    Found(Vec<usize>),
    Empty,
    Ambiguous(Vec<usize>),
}

/// Chooses among the starts a pass found: the one in an `@@` scope, every
/// non-overlapping one for `replace_all`, or the one a hint picks.
fn select(
    mut starts: Vec<usize>,
    m: usize,
    q: &LineQuery<'_>,
    hint: Option<usize>,
    eof: usize,
    window: usize,
) -> Selection {
    if q.at_eof {
        starts.retain(|&s| s + m >= eof);
    }
    if starts.len() > 1
        && !q.replace_all
        && let Some(w) = &q.within
    {
        let inside: Vec<usize> = starts.iter().copied().filter(|s| w.contains(s)).collect();
        if inside.len() == 1 {
            return Selection::Found(inside);
        }
    }
    match starts.len() {
        0 => Selection::Empty,
        1 => Selection::Found(starts),
        _ if q.replace_all => {
            // Non-overlapping occurrences, top to bottom.
            let mut out: Vec<usize> = Vec::new();
            for s in starts {
                if out.last().is_none_or(|&p| s >= p + m) {
                    out.push(s);
                }
            }
            Selection::Found(out)
        }
        _ => match hint.and_then(|h| nearest(&starts, h, window)) {
            Some(s) => Selection::Found(vec![s]),
            None => Selection::Ambiguous(starts),
        },
    }
}

/// The candidate nearest to a 1-based hint, if it is within `window` lines
/// and strictly nearer than every other (a middle-out search that stops at
/// the first hit, refusing ties).
pub(crate) fn nearest(starts: &[usize], hint: usize, window: usize) -> Option<usize> {
    let dist = |s: usize| (s + 1).abs_diff(hint);
    let best = *starts.iter().min_by_key(|&&s| dist(s))?;
    let tied = starts.iter().filter(|&&s| dist(s) == dist(best)).count();
    (dist(best) <= window && tied == 1).then_some(best)
}

fn ambiguous(pass: MatchPass, starts: Vec<usize>, len: usize, hint: Option<usize>) -> Miss {
    Miss::Ambiguous {
        pass,
        candidates: starts
            .into_iter()
            .map(|start| Candidate {
                start,
                len,
                similarity: 1.0,
            })
            .collect(),
        hint,
    }
}

/// Locates `q` in `hay`, climbing the ladder.
///
/// Returns one match, or with `replace_all` every non-overlapping match of
/// the first pass that finds any (passes up to [`MatchPass::Unicode`];
/// later passes single out one location).
pub fn locate(
    hay: &Haystack<'_>,
    q: &LineQuery<'_>,
    opts: &LocateOptions,
) -> Result<Vec<Match>, Miss> {
    if q.search.iter().all(|l| is_blank(l)) {
        return Err(Miss::Unusable {
            message: "the search is empty or only blank lines, so it matches everywhere".into(),
            fix: "Put the exact lines to replace in the search.".into(),
        });
    }
    let edges = edges::Edges::of(q.search);
    let mut ignored = Vec::new();
    for pass in MatchPass::LADDER {
        if pass > q.max_pass {
            break;
        }
        let q_pass;
        let q = if q.replace_all && pass > MatchPass::Unicode {
            q_pass = q.clone().replace_all(false);
            &q_pass
        } else {
            q
        };
        let step = match pass {
            MatchPass::LineNumbers => numbers::run(hay, q, opts),
            MatchPass::Elision => elision::run(hay, q, &edges, opts),
            MatchPass::Similarity => fuzzy::run(hay, q, &edges, opts),
            _ => lines::run(hay, q, pass, &edges, opts),
        };
        match step {
            Step::Skip => {}
            Step::Next => ignored.push(pass),
            Step::Stop => {
                ignored.push(pass);
                break;
            }
            Step::Done(result) => {
                return result.map(|ms| ms.into_iter().map(|m| flag_markers(m, q)).collect());
            }
        }
    }
    Err(fuzzy::not_found(hay, q, &edges, opts, ignored))
}

/// The elision reading of `q` alone: its marker lines stand for elided
/// code, whatever literal match the ladder found. `None` when the search
/// has no marker under the query's rule or the reading finds nothing.
///
/// A marker is also a line of code (`...` is Python's Ellipsis, and a file
/// may hold a `// ...` comment); the planner compares both readings.
pub fn locate_elided(
    hay: &Haystack<'_>,
    q: &LineQuery<'_>,
    opts: &LocateOptions,
) -> Option<Result<Vec<Match>, Miss>> {
    let edges = edges::Edges::of(q.search);
    match elision::run(hay, q, &edges, opts) {
        Step::Done(result) => {
            Some(result.map(|ms| ms.into_iter().map(|m| flag_markers(m, q)).collect()))
        }
        Step::Skip | Step::Next | Step::Stop => None,
    }
}

/// Every way the elision reading of `q` can be completed (at most 64), for
/// a planner that applies an ambiguous elided search only when every way
/// gives the same file. `None` when there are more, or none.
pub fn elided_alternatives(hay: &Haystack<'_>, q: &LineQuery<'_>) -> Option<Vec<Match>> {
    let edges = edges::Edges::of(q.search);
    elision::alternatives(hay, q, &edges)
        .map(|ms| ms.into_iter().map(|m| flag_markers(m, q)).collect())
}

/// Every place `lines` occur at or after `from` under the loosest line
/// comparison (Unicode folded, whitespace ignored), overlapping places
/// included, each with the strictest pass that matches there. Anchored
/// regions use it to weigh every candidate, not only the first pass's.
pub(crate) fn occurrences(
    hay: &Haystack<'_>,
    lines: &[String],
    from: usize,
) -> Vec<(usize, MatchPass)> {
    const PASSES: [MatchPass; 5] = [
        MatchPass::Exact,
        MatchPass::TrailingWhitespace,
        MatchPass::Whitespace,
        MatchPass::InnerWhitespace,
        MatchPass::Unicode,
    ];
    lines::find(hay, lines, Norm::Loose, from..usize::MAX)
        .into_iter()
        .map(|at| {
            let pass = PASSES
                .into_iter()
                .find(|&p| {
                    let norm = Norm::of(p);
                    lines
                        .iter()
                        .zip(&hay.lines()[at..])
                        .all(|(a, b)| norm.apply(a) == norm.apply(b))
                })
                .unwrap_or(MatchPass::Unicode);
            (at, pass)
        })
        .collect()
}

/// Where `lines` occur with a start in `starts`, under the loosest line
/// comparison (Unicode folded, whitespace ignored).
pub(crate) fn find_loose(hay: &Haystack<'_>, lines: &[String], starts: Range<usize>) -> Vec<usize> {
    lines::find(hay, lines, Norm::Loose, starts)
}

fn flag_markers(mut m: Match, q: &LineQuery<'_>) -> Match {
    let (a, b) = q.elision.flags(&m.search, &m.replace);
    m.markers = a;
    m.replace_markers = b;
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Vec<String> {
        s.split('\n').map(str::to_owned).collect()
    }

    fn run(file: &str, search: &str) -> Result<Vec<Match>, Miss> {
        let hay = Haystack::new(file.split('\n').collect());
        let s = v(search);
        locate(&hay, &LineQuery::new(&s, &s), &LocateOptions::default())
    }

    #[test]
    fn ladder_order() {
        let file = "def f():\n    x = 1  \n    return \u{2018}a\u{2019}\n    y  =  2\n";
        assert_eq!(run(file, "def f():").unwrap()[0].pass, MatchPass::Exact);
        assert_eq!(
            run(file, "    x = 1").unwrap()[0].pass,
            MatchPass::TrailingWhitespace
        );
        assert_eq!(run(file, "x = 1").unwrap()[0].pass, MatchPass::Whitespace);
        assert_eq!(
            run(file, "    y = 2").unwrap()[0].pass,
            MatchPass::InnerWhitespace
        );
        assert_eq!(
            run(file, "    return 'a'").unwrap()[0].pass,
            MatchPass::Unicode
        );
        assert_eq!(
            run(file, "1 | def f():\n2 |     x = 1").unwrap()[0].pass,
            MatchPass::LineNumbers
        );
    }

    #[test]
    fn ambiguity_lists_every_line() {
        let err = run("a\nb\na\nb\n", "a\nb").unwrap_err();
        match err {
            Miss::Ambiguous { candidates, .. } => {
                let starts: Vec<usize> = candidates.iter().map(|c| c.start).collect();
                assert_eq!(starts, vec![0, 2]);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn overlapping_occurrences_are_ambiguous() {
        let err = run("end\nend\nend\n", "end\nend").unwrap_err();
        assert!(matches!(err, Miss::Ambiguous { ref candidates, .. } if candidates.len() == 2));
    }

    #[test]
    fn elision_maps_gap() {
        let file = "fn a() {\n  one();\n  two();\n  three();\n}\n";
        let m = run(file, "fn a() {\n  // ... existing code ...\n}").unwrap();
        assert_eq!(m[0].pass, MatchPass::Elision);
        assert_eq!((m[0].start, m[0].end), (0, 5));
        assert_eq!(m[0].map[1], 1..4);
    }
}
