//! The locator: where in a file does a block of search lines belong?
//!
//! Matching climbs a ladder of passes, strictest first, and stops at the
//! first pass that finds anything:
//!
//! 1. [`MatchPass::Exact`]: line contents equal (line endings never matter).
//! 2. [`MatchPass::TrailingWhitespace`]: trailing spaces and tabs ignored.
//! 3. [`MatchPass::Whitespace`]: leading and trailing whitespace ignored.
//! 4. [`MatchPass::Unicode`]: typographic quotes, dashes, spaces and `…`
//!    folded to ASCII, then NFC, then trimmed.
//! 5. [`MatchPass::LineNumbers`]: `12 | `-style prefixes stripped, when every
//!    search line has one and they count up by one.
//! 6. [`MatchPass::Elision`]: lines like `# ... existing code ...` split the
//!    search into pieces found in order; the elided lines are kept.
//! 7. [`MatchPass::Similarity`]: Levenshtein similarity of same-sized line
//!    windows, above a threshold *and* clearly ahead of any other window.
//!
//! Every pass must find exactly one location. Several candidates are an
//! ambiguity, reported with every line number, unless a start-line hint picks
//! the nearest candidate within [`LocateOptions::hint_window`] lines. Blank
//! lines at the edges of the search are tolerated: each pass tries the search
//! as sent, then without its blank edge lines.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::ops::Range;

use serde::{Deserialize, Serialize};

use crate::normalize::{fold_trim, is_elision_marker, split_line_number, strip_line_numbers};
use crate::similarity::{
    LineGrams, anchored_windows, best_windows, has_word, meaningful_differences,
};

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
    /// The pass's name as used in reports.
    pub fn name(self) -> &'static str {
        match self {
            MatchPass::Exact => "exact",
            MatchPass::TrailingWhitespace => "trailing_whitespace",
            MatchPass::Whitespace => "whitespace",
            MatchPass::Unicode => "unicode",
            MatchPass::LineNumbers => "line_numbers",
            MatchPass::Elision => "elision",
            MatchPass::Similarity => "similarity",
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
}

impl Default for LocateOptions {
    /// The threshold and margin were measured on drifted edits of real
    /// source files; see ARCHITECTURE.md ("Choosing the similarity threshold").
    fn default() -> Self {
        LocateOptions {
            threshold: 0.85,
            margin: 0.10,
            hint_window: 40,
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
    /// The search lines actually matched (blank edges trimmed, line numbers
    /// stripped).
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
    /// The search cannot be used for matching.
    Unusable(String),
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
    /// Elision-looking lines are literal text: skip the elision pass.
    pub literal: bool,
    /// When several locations match, the one starting in this range (and
    /// only it) is taken: the scope of an apply-patch `@@` context line.
    pub within: Option<Range<usize>>,
    /// Only locations that end at the end of the file (trailing blank lines
    /// aside) count.
    pub at_eof: bool,
}

/// The file side of matching, with lazily built indexes.
#[derive(Debug)]
pub struct Haystack<'a> {
    lines: Vec<&'a str>,
    grams: OnceCell<LineGrams<'a>>,
}

impl<'a> Haystack<'a> {
    /// Wraps file line contents.
    pub fn new(lines: Vec<&'a str>) -> Self {
        Haystack {
            lines,
            grams: OnceCell::new(),
        }
    }

    /// The file's line contents.
    pub fn lines(&self) -> &[&'a str] {
        &self.lines
    }

    fn grams(&self) -> &LineGrams<'a> {
        self.grams
            .get_or_init(|| LineGrams::new(self.lines.iter().map(|l| fold_trim(l)).collect()))
    }
}

type Norm = for<'s> fn(&'s str) -> Cow<'s, str>;

fn norm_exact(s: &str) -> Cow<'_, str> {
    Cow::Borrowed(s)
}
fn norm_trailing(s: &str) -> Cow<'_, str> {
    Cow::Borrowed(s.trim_end())
}
fn norm_trim(s: &str) -> Cow<'_, str> {
    Cow::Borrowed(s.trim())
}

fn norm_for(pass: MatchPass) -> Norm {
    match pass {
        MatchPass::Exact => norm_exact,
        MatchPass::TrailingWhitespace => norm_trailing,
        MatchPass::Whitespace => norm_trim,
        _ => fold_trim,
    }
}

/// All window starts in `range` where every search line equals the file line
/// under `norm`.
fn find(hay: &Haystack<'_>, search: &[String], norm: Norm, range: Range<usize>) -> Vec<usize> {
    let lines = hay.lines();
    let m = search.len();
    if m == 0 || lines.len() < m {
        return Vec::new();
    }
    let want: Vec<Cow<'_, str>> = search.iter().map(|s| norm(s)).collect();
    let last = (lines.len() - m + 1).min(range.end);
    let mut out = Vec::new();
    for i in range.start..last {
        if (0..m).all(|j| norm(lines[i + j]) == want[j]) {
            out.push(i);
        }
    }
    out
}

fn is_blank(s: &str) -> bool {
    s.trim().is_empty()
}

/// The search as sent, and without blank edge lines (trimming as many blank
/// edge lines of the replacement, when it has them).
fn edge_variants(search: &[String], replace: &[String]) -> Vec<(Vec<String>, Vec<String>)> {
    let lead = search.iter().take_while(|l| is_blank(l)).count();
    if lead == search.len() {
        return vec![(search.to_vec(), replace.to_vec())];
    }
    let trail = search.iter().rev().take_while(|l| is_blank(l)).count();
    let mut out = vec![(search.to_vec(), replace.to_vec())];
    if lead + trail > 0 {
        let s = search[lead..search.len() - trail].to_vec();
        let r_lead = replace.iter().take_while(|l| is_blank(l)).count().min(lead);
        let r_rest = &replace[r_lead..];
        let r_trail = r_rest
            .iter()
            .rev()
            .take_while(|l| is_blank(l))
            .count()
            .min(trail);
        let r = r_rest[..r_rest.len() - r_trail].to_vec();
        out.push((s, r));
    }
    out
}

enum Selection {
    Found(Vec<usize>),
    Empty,
    Ambiguous(Vec<usize>),
}

fn select(
    mut starts: Vec<usize>,
    m: usize,
    q: &LineQuery<'_>,
    all: bool,
    window: usize,
    eof: usize,
) -> Selection {
    if q.at_eof {
        starts.retain(|&s| s + m >= eof);
    }
    if starts.len() > 1
        && let Some(w) = &q.within
    {
        let inside: Vec<usize> = starts.iter().copied().filter(|s| w.contains(s)).collect();
        if inside.len() == 1 && !q.replace_all {
            return Selection::Found(inside);
        }
    }
    match starts.len() {
        0 => Selection::Empty,
        1 => Selection::Found(starts),
        _ if all && q.replace_all => {
            // Non-overlapping occurrences, top to bottom.
            let mut out: Vec<usize> = Vec::new();
            for s in starts {
                if out.last().is_none_or(|&p| s >= p + m) {
                    out.push(s);
                }
            }
            Selection::Found(out)
        }
        _ => match q.hint.and_then(|h| nearest(&starts, h, window)) {
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

fn one_to_one(start: usize, m: usize) -> Vec<Range<usize>> {
    (start..start + m).map(|i| i..i + 1).collect()
}

/// Locates `q` in `hay`, climbing the ladder.
///
/// Returns one match, or with `replace_all` every non-overlapping match of
/// the first pass that finds any (only passes up to [`MatchPass::Unicode`]
/// may replace several occurrences).
pub fn locate(
    hay: &Haystack<'_>,
    q: &LineQuery<'_>,
    opts: &LocateOptions,
) -> Result<Vec<Match>, Miss> {
    if q.search.iter().all(|l| is_blank(l)) {
        return Err(Miss::Unusable(
            "the search is empty or only blank lines, so it matches everywhere".into(),
        ));
    }
    let variants = edge_variants(q.search, q.replace);
    let full_range = q.from..usize::MAX;
    // End of the file for `at_eof`, ignoring trailing blank lines.
    let eof = hay.lines().len() - hay.lines().iter().rev().take_while(|l| is_blank(l)).count();

    for pass in [
        MatchPass::Exact,
        MatchPass::TrailingWhitespace,
        MatchPass::Whitespace,
        MatchPass::Unicode,
    ] {
        if pass > q.max_pass {
            return Err(not_found(hay, &variants, q, opts));
        }
        for (s, r) in &variants {
            let starts = find(hay, s, norm_for(pass), full_range.clone());
            match select(starts, s.len(), q, true, opts.hint_window, eof) {
                Selection::Empty => continue,
                Selection::Found(v) => {
                    return Ok(v
                        .into_iter()
                        .map(|start| Match {
                            pass,
                            start,
                            end: start + s.len(),
                            similarity: 1.0,
                            search: s.clone(),
                            replace: r.clone(),
                            map: one_to_one(start, s.len()),
                            extra: Vec::new(),
                        })
                        .collect());
                }
                Selection::Ambiguous(v) => return Err(ambiguous(pass, v, s.len(), q.hint)),
            }
        }
    }

    if q.max_pass >= MatchPass::LineNumbers
        && let Some((first, stripped)) = strip_line_numbers(q.search)
    {
        let replace: Vec<String> = if q.replace.iter().all(|l| split_line_number(l).is_some()) {
            q.replace
                .iter()
                .map(|l| split_line_number(l).map_or(l.clone(), |(_, r)| r.to_owned()))
                .collect()
        } else {
            q.replace.to_vec()
        };
        let hinted = LineQuery {
            hint: q.hint.or(Some(first)),
            ..q.clone()
        };
        for (s, r) in edge_variants(&stripped, &replace) {
            if s.iter().all(|l| is_blank(l)) {
                continue;
            }
            let starts = find(hay, &s, fold_trim, full_range.clone());
            match select(starts, s.len(), &hinted, false, opts.hint_window, eof) {
                Selection::Empty => continue,
                Selection::Found(v) => {
                    let start = v[0];
                    return Ok(vec![Match {
                        pass: MatchPass::LineNumbers,
                        start,
                        end: start + s.len(),
                        similarity: 1.0,
                        map: one_to_one(start, s.len()),
                        extra: Vec::new(),
                        search: s,
                        replace: r,
                    }]);
                }
                Selection::Ambiguous(v) => {
                    return Err(ambiguous(MatchPass::LineNumbers, v, s.len(), hinted.hint));
                }
            }
        }
    }

    let trimmed = variants.last().expect("at least one variant");
    if q.max_pass >= MatchPass::Elision
        && !q.literal
        && trimmed.0.iter().any(|l| is_elision_marker(l))
    {
        match locate_elided(hay, &trimmed.0, q, opts) {
            Ok(Some((start, end, map))) => {
                return Ok(vec![Match {
                    pass: MatchPass::Elision,
                    start,
                    end,
                    similarity: 1.0,
                    search: trimmed.0.clone(),
                    replace: trimmed.1.clone(),
                    map,
                    extra: Vec::new(),
                }]);
            }
            Ok(None) => {}
            Err(miss) => return Err(miss),
        }
        // A search with elision markers is not a literal window: the
        // similarity pass would compare the markers as code.
        return Err(not_found(hay, &variants, q, opts));
    }

    if q.max_pass >= MatchPass::Similarity
        && !q.replace_all
        && !q.at_eof
        && similarity_eligible(&trimmed.0)
    {
        let (s, r) = (&trimmed.0, trimmed.1.as_slice());
        let norm: Vec<String> = s.iter().map(|l| fold_trim(l).into_owned()).collect();
        let found = anchored_windows(hay.grams(), &norm, opts.margin, q.from..usize::MAX);
        if let Some(best) = found.best
            && best.score >= opts.threshold
        {
            let m = s.len();
            let accept = if found.exhausted {
                None
            } else if found.rivals.is_empty() {
                Some(best.start)
            } else {
                // A hint may choose among near-equal windows, but only one
                // that itself clears the threshold.
                let mut all: Vec<usize> = vec![best.start];
                all.extend(
                    found
                        .rivals
                        .iter()
                        .filter(|r| r.score >= opts.threshold)
                        .map(|r| r.start),
                );
                q.hint.and_then(|h| nearest(&all, h, opts.hint_window))
            };
            if let Some(start) = accept {
                let chosen = std::iter::once(best)
                    .chain(found.rivals.iter().copied())
                    .find(|w| w.start == start)
                    .unwrap_or(best);
                let len = chosen.len;
                let candidate = Candidate {
                    start,
                    len,
                    similarity: chosen.score,
                };
                if let Some(at) = already_applied(hay, r, start, len) {
                    return Err(Miss::NotFound {
                        best: Some(candidate),
                        differs: Vec::new(),
                        already: Some(at),
                    });
                }
                let window: Vec<&str> = (start..start + len).map(|i| hay.grams().line(i)).collect();
                // Every line outside the window counts as "elsewhere": a
                // search name found even right next to the window means the
                // window is not what the search describes.
                let (lo, hi) = (start, start + len);
                let n = hay.lines().len();
                let differs = meaningful_differences(&norm, &window, |t| {
                    has_word((0..lo).chain(hi..n).map(|i| hay.grams().line(i)), t)
                });
                if !differs.is_empty() {
                    return Err(Miss::NotFound {
                        best: Some(candidate),
                        differs: differs.into_iter().map(str::to_owned).collect(),
                        already: None,
                    });
                }
                // Map by alignment, as the guard above judged the window:
                // a window of the search's size can still be shifted.
                let (map, extra) = align(&norm, &window, start);
                return Ok(vec![Match {
                    pass: MatchPass::Similarity,
                    start,
                    end: start + len,
                    similarity: chosen.score,
                    search: s.clone(),
                    replace: r.to_vec(),
                    map,
                    extra,
                }]);
            }
            let mut candidates = vec![Candidate {
                start: best.start,
                len: m,
                similarity: best.score,
            }];
            candidates.extend(found.rivals.iter().map(|r| Candidate {
                start: r.start,
                len: m,
                similarity: r.score,
            }));
            return Err(Miss::Ambiguous {
                pass: MatchPass::Similarity,
                candidates,
                hint: q.hint,
            });
        }
    }
    Err(not_found(hay, &variants, q, opts))
}

/// Maps search lines onto a window of another size by a line diff of their
/// normalized forms: paired lines map one to one, a search line the window
/// lacks maps to an empty range, and a window line no search line pairs with
/// is returned as extra, after the search line it follows.
#[allow(clippy::type_complexity)]
fn align(
    search: &[String],
    window: &[&str],
    start: usize,
) -> (Vec<Range<usize>>, Vec<(Option<usize>, usize)>) {
    use similar::{Algorithm, DiffOp, capture_diff_slices};
    let s: Vec<&str> = search.iter().map(String::as_str).collect();
    let mut map = vec![0..0; search.len()];
    let mut extra = Vec::new();
    let mut last: Option<usize> = None;
    let pair = |j: usize, w: usize, map: &mut Vec<Range<usize>>, last: &mut Option<usize>| {
        map[j] = start + w..start + w + 1;
        *last = Some(j);
    };
    for op in capture_diff_slices(Algorithm::Myers, &s, window) {
        match op {
            DiffOp::Equal {
                old_index,
                new_index,
                len,
            } => {
                for k in 0..len {
                    pair(old_index + k, new_index + k, &mut map, &mut last);
                }
            }
            DiffOp::Delete {
                old_index,
                old_len,
                new_index,
            } => {
                map[old_index..old_index + old_len].fill(start + new_index..start + new_index);
                last = Some(old_index + old_len - 1);
            }
            DiffOp::Insert {
                new_index, new_len, ..
            } => {
                for w in new_index..new_index + new_len {
                    extra.push((last, start + w));
                }
            }
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                for k in 0..old_len.max(new_len) {
                    match (k < old_len, k < new_len) {
                        (true, true) => pair(old_index + k, new_index + k, &mut map, &mut last),
                        (true, false) => {
                            let at = start + new_index + new_len;
                            map[old_index + k] = at..at;
                            last = Some(old_index + k);
                        }
                        (false, true) => extra.push((last, start + new_index + k)),
                        (false, false) => {}
                    }
                }
            }
        }
    }
    (map, extra)
}

/// Fuzzy matching needs enough text to be meaningful: at least two
/// non-blank lines and 20 characters. A one-line search that is merely
/// similar to a line is as likely a different statement as a drifted one.
fn similarity_eligible(search: &[String]) -> bool {
    let non_blank = search.iter().filter(|l| !is_blank(l)).count();
    let chars: usize = search.iter().map(|l| l.trim().len()).sum();
    non_blank >= 2 && chars >= 20
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

fn not_found(
    hay: &Haystack<'_>,
    variants: &[(Vec<String>, Vec<String>)],
    q: &LineQuery<'_>,
    opts: &LocateOptions,
) -> Miss {
    let s = &variants.last().expect("a variant").0;
    let pieces: Vec<String> = s
        .iter()
        .filter(|l| !is_elision_marker(l))
        .map(|l| fold_trim(l).into_owned())
        .collect();
    let found = best_windows(hay.grams(), &pieces, opts.margin, q.from..usize::MAX);
    let r = &variants.last().expect("a variant").1;
    Miss::NotFound {
        best: found.best.map(|b| Candidate {
            start: b.start,
            len: pieces.len(),
            similarity: b.score,
        }),
        differs: Vec::new(),
        already: already_applied(hay, r, 0, hay.lines().len()),
    }
}

/// Where the replacement already stands in the file, near `start..start+m`
/// (or anywhere when the range is the whole file): a search that is gone
/// because the same edit was applied before must not be applied again.
fn already_applied(
    hay: &Haystack<'_>,
    replace: &[String],
    start: usize,
    m: usize,
) -> Option<usize> {
    let core: Vec<String> = replace
        .iter()
        .skip_while(|l| is_blank(l))
        .cloned()
        .collect();
    let core: Vec<String> = {
        let mut c = core;
        while c.last().is_some_and(|l| is_blank(l)) {
            c.pop();
        }
        c
    };
    if core.is_empty() {
        return None;
    }
    let lo = start.saturating_sub(core.len());
    let hi = start + m + core.len();
    find(hay, &core, fold_trim, lo..hi).first().copied()
}

/// Elided search: pieces between markers, each found in order.
///
/// Returns the span and the per-search-line map, `Ok(None)` when some piece
/// is missing, or an ambiguity when the chain can be completed in more than
/// one way.
#[allow(clippy::type_complexity)]
fn locate_elided(
    hay: &Haystack<'_>,
    search: &[String],
    q: &LineQuery<'_>,
    opts: &LocateOptions,
) -> Result<Option<(usize, usize, Vec<Range<usize>>)>, Miss> {
    // Pieces: maximal runs of non-marker lines, with their search indices.
    let mut pieces: Vec<Range<usize>> = Vec::new();
    let mut i = 0;
    while i < search.len() {
        if is_elision_marker(&search[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < search.len() && !is_elision_marker(&search[i]) {
            i += 1;
        }
        // Blank lines next to a marker are part of the elided region.
        let mut a = start;
        let mut b = i;
        while a < b && is_blank(&search[a]) {
            a += 1;
        }
        while b > a && is_blank(&search[b - 1]) {
            b -= 1;
        }
        if a < b {
            pieces.push(a..b);
        }
    }
    if pieces.is_empty() {
        return Err(Miss::Unusable(
            "the search holds only elision markers (like `...`); include real lines of the file"
                .into(),
        ));
    }
    let n = hay.lines().len();
    let first = &search[pieces[0].clone()];
    let heads = find(hay, first, fold_trim, q.from..usize::MAX);
    let mut chains: Vec<Vec<usize>> = Vec::new();
    let mut torn: Vec<usize> = Vec::new();
    for (h, &head) in heads.iter().enumerate() {
        let limit = heads.get(h + 1).copied().unwrap_or(n);
        let mut chain = vec![head];
        let mut pos = head + pieces[0].len();
        let mut complete = true;
        for piece in &pieces[1..] {
            let hits = find(hay, &search[piece.clone()], fold_trim, pos..usize::MAX);
            let within: Vec<usize> = hits.iter().copied().filter(|&x| x < limit).collect();
            let hit = match within.len() {
                1 => within[0],
                0 => {
                    complete = false;
                    break;
                }
                _ => {
                    torn.extend(within);
                    complete = false;
                    break;
                }
            };
            chain.push(hit);
            pos = hit + piece.len();
        }
        if complete {
            chains.push(chain);
        }
    }
    let chosen = match chains.len() {
        0 if torn.is_empty() => return Ok(None),
        0 => {
            return Err(ambiguous(MatchPass::Elision, torn, 1, q.hint));
        }
        1 => chains.remove(0),
        _ => {
            let starts: Vec<usize> = chains.iter().map(|c| c[0]).collect();
            match q.hint.and_then(|h| nearest(&starts, h, opts.hint_window)) {
                Some(s) => chains
                    .into_iter()
                    .find(|c| c[0] == s)
                    .expect("chosen chain"),
                None => {
                    return Err(ambiguous(
                        MatchPass::Elision,
                        starts,
                        pieces[0].len(),
                        q.hint,
                    ));
                }
            }
        }
    };
    // Map every search line: piece lines one-to-one, the rest (markers and
    // blank lines around them) onto the gaps between pieces.
    let start = chosen[0];
    let last = pieces.len() - 1;
    let end = chosen[last] + pieces[last].len();
    let mut map: Vec<Range<usize>> = vec![0..0; search.len()];
    for (k, piece) in pieces.iter().enumerate() {
        for (o, j) in piece.clone().enumerate() {
            map[j] = chosen[k] + o..chosen[k] + o + 1;
        }
    }
    // Gaps: before the first piece (empty at `start`), between pieces, after
    // the last piece (empty at `end`).
    let gap_of = |j: usize| -> Range<usize> {
        if j < pieces[0].start {
            return start..start;
        }
        if j >= pieces[last].end {
            return end..end;
        }
        let k = pieces
            .iter()
            .rposition(|p| p.end <= j)
            .expect("a piece before");
        chosen[k] + pieces[k].len()..chosen[k + 1]
    };
    // Within one gap, the first marker owns the elided lines; blank lines
    // and further markers own nothing, so the lines are kept exactly once.
    let mut owned: Vec<Range<usize>> = Vec::new();
    for j in 0..search.len() {
        if pieces.iter().any(|p| p.contains(&j)) {
            continue;
        }
        let gap = gap_of(j);
        if is_elision_marker(&search[j]) && !owned.contains(&gap) {
            owned.push(gap.clone());
            map[j] = gap;
        } else {
            map[j] = gap.start..gap.start;
        }
    }
    // A gap with no marker (only blank lines between two pieces) must itself
    // be blank in the file, or the pieces were not adjacent.
    for k in 0..last {
        let gap = chosen[k] + pieces[k].len()..chosen[k + 1];
        if !owned.contains(&gap) && !hay.lines()[gap.clone()].iter().all(|l| is_blank(l)) {
            return Ok(None);
        }
    }
    Ok(Some((start, end, map)))
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
        let q = LineQuery {
            search: &s,
            replace: &s,
            hint: None,
            replace_all: false,
            max_pass: MatchPass::Similarity,
            from: 0,
            literal: false,
            within: None,
            at_eof: false,
        };
        locate(&hay, &q, &LocateOptions::default())
    }

    #[test]
    fn ladder_order() {
        let file = "def f():\n    x = 1  \n    return \u{2018}a\u{2019}\n";
        assert_eq!(run(file, "def f():").unwrap()[0].pass, MatchPass::Exact);
        assert_eq!(
            run(file, "    x = 1").unwrap()[0].pass,
            MatchPass::TrailingWhitespace
        );
        assert_eq!(run(file, "x = 1").unwrap()[0].pass, MatchPass::Whitespace);
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
    fn elision_maps_gap() {
        let file = "fn a() {\n  one();\n  two();\n  three();\n}\n";
        let m = run(file, "fn a() {\n  // ... existing code ...\n}").unwrap();
        assert_eq!(m[0].pass, MatchPass::Elision);
        assert_eq!((m[0].start, m[0].end), (0, 5));
        assert_eq!(m[0].map[1], 1..4);
    }
}
