//! The line-equality passes: a search matches where every line equals the
//! file's line under one normalization.
//!
//! Each normalization of the file is interned once (every distinct
//! normalized line gets a number), and a search is then found with the
//! Knuth–Morris–Pratt automaton over those numbers: time linear in the file
//! plus the search, every occurrence reported, overlapping ones included
//! (two overlapping occurrences are two locations, so an ambiguity).

use std::borrow::Cow;
use std::ops::Range;

use super::edges::Edges;
use super::{
    Haystack, LineQuery, LocateOptions, Match, MatchPass, Selection, Step, ambiguous, select,
};
use crate::normalize::{collapse_spaces, fold_loose};

/// A line normalization.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Norm {
    Exact,
    Trailing,
    Trim,
    Spaces,
    Loose,
}

impl Norm {
    /// Index into the haystack's per-normalization tables.
    pub(crate) const COUNT: usize = 5;

    pub(crate) fn index(self) -> usize {
        self as usize
    }

    /// The normalization a line-equality pass compares under.
    pub(crate) fn of(pass: MatchPass) -> Norm {
        match pass {
            MatchPass::Exact => Norm::Exact,
            MatchPass::TrailingWhitespace => Norm::Trailing,
            MatchPass::Whitespace => Norm::Trim,
            MatchPass::InnerWhitespace => Norm::Spaces,
            _ => Norm::Loose,
        }
    }

    pub(crate) fn apply(self, s: &str) -> Cow<'_, str> {
        match self {
            Norm::Exact => Cow::Borrowed(s),
            Norm::Trailing => Cow::Borrowed(crate::normalize::trim_end(s)),
            Norm::Trim => Cow::Borrowed(crate::normalize::trim(s)),
            Norm::Spaces => collapse_spaces(s),
            Norm::Loose => fold_loose(s),
        }
    }
}

/// A line's hash, for the automaton's cheap comparisons.
pub(crate) fn line_hash(s: &str) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault};
    BuildHasherDefault::<rustc_hash::FxHasher>::default().hash_one(s)
}

/// Every start in `range` where `search` matches under `norm`, in order,
/// overlapping occurrences included.
pub(crate) fn find(
    hay: &Haystack<'_>,
    search: &[String],
    norm: Norm,
    range: Range<usize>,
) -> Vec<usize> {
    let n = hay.lines().len();
    let m = search.len();
    if m == 0 || n < m {
        return Vec::new();
    }
    let lo = range.start.min(n);
    let hi = range.end.saturating_add(m - 1).min(n);
    if hi < lo + m {
        return Vec::new();
    }
    let pat: Vec<Cow<'_, str>> = search.iter().map(|s| norm.apply(s)).collect();
    let pat_hashes: Vec<u64> = pat.iter().map(|p| line_hash(p)).collect();
    let text = hay.hashes(norm);
    let confirmed = |s: &usize| {
        text[*s..*s + m] == pat_hashes[..] && (0..m).all(|k| hay.line_under(norm, s + k) == pat[k])
    };
    // Many searches of one file (a response with thousands of edits) look
    // up the places their first line occurs, when that is cheaper than a
    // scan; otherwise the automaton scans, linear in the file either way.
    if let Some(places) = hay.places(norm, pat_hashes[0]) {
        let from = places.partition_point(|&p| (p as usize) < lo);
        let to = places.partition_point(|&p| (p as usize) + m <= hi);
        if to <= from || (to - from) * m <= hi - lo {
            return places[from..to.max(from)]
                .iter()
                .map(|&p| p as usize)
                .filter(confirmed)
                .collect();
        }
    }
    // Hashes find the candidates; the lines themselves confirm them.
    kmp(&text[lo..hi], &pat_hashes)
        .into_iter()
        .map(|s| s + lo)
        .filter(|s| (0..m).all(|k| hay.line_under(norm, s + k) == pat[k]))
        .collect()
}

/// All (overlapping) occurrences of `pat` in `text`: the Knuth–Morris–Pratt
/// automaton, so each text line is compared a bounded number of times.
fn kmp<T: PartialEq>(text: &[T], pat: &[T]) -> Vec<usize> {
    let m = pat.len();
    let mut fail = vec![0usize; m];
    let mut k = 0;
    for i in 1..m {
        while k > 0 && pat[i] != pat[k] {
            k = fail[k - 1];
        }
        if pat[i] == pat[k] {
            k += 1;
        }
        fail[i] = k;
    }
    let mut out = Vec::new();
    let mut k = 0;
    for (i, c) in text.iter().enumerate() {
        while k > 0 && *c != pat[k] {
            k = fail[k - 1];
        }
        if *c == pat[k] {
            k += 1;
        }
        if k == m {
            out.push(i + 1 - m);
            k = fail[k - 1];
        }
    }
    out
}

/// Runs one line-equality pass: the search as sent, then its core (blank
/// edge lines the file may not have), widened into the file's blank lines.
pub(crate) fn run(
    hay: &Haystack<'_>,
    q: &LineQuery<'_>,
    pass: MatchPass,
    edges: &Edges,
    opts: &LocateOptions,
) -> Step {
    let search = Search {
        lines: q.search,
        replace: q.replace,
        edges,
        hint: q.hint,
    };
    run_with(hay, q, pass, Norm::of(pass), &search, opts)
}

/// A search as a line-equality pass sees it (possibly transformed, as with
/// line numbers stripped).
pub(crate) struct Search<'s> {
    pub(crate) lines: &'s [String],
    pub(crate) replace: &'s [String],
    pub(crate) edges: &'s Edges,
    pub(crate) hint: Option<usize>,
}

/// [`run`] for an already transformed search (line numbers stripped).
pub(crate) fn run_with(
    hay: &Haystack<'_>,
    q: &LineQuery<'_>,
    pass: MatchPass,
    norm: Norm,
    s: &Search<'_>,
    opts: &LocateOptions,
) -> Step {
    let (search, replace, edges, hint) = (s.lines, s.replace, s.edges, s.hint);
    let window = opts.hint_window;
    let range = q.from..usize::MAX;
    let full = find(hay, search, norm, range.clone());
    match select(full, search.len(), q, hint, hay.eof(), window) {
        Selection::Found(starts) => {
            let matches = starts
                .into_iter()
                .map(|start| Match::one_to_one(pass, start, search.to_vec(), replace.to_vec()))
                .collect();
            return Step::Done(Ok(matches));
        }
        Selection::Ambiguous(starts) => {
            return Step::Done(Err(ambiguous(pass, starts, search.len(), hint)));
        }
        Selection::Empty => {}
    }
    if !edges.has_blank_edges() {
        return Step::Next;
    }
    let core = edges.core(search);
    let starts = find(hay, core, norm, range.clone());
    match select(starts, core.len(), q, hint, hay.eof(), window) {
        Selection::Found(starts) if !q.replace_all => {
            // The blank lines are evidence too: the whole search, with its
            // blank edges, found elsewhere by a looser comparison makes the
            // core's place one of two.
            let lead = edges.counts().0;
            let elsewhere: Vec<usize> = find(hay, search, Norm::Loose, range)
                .into_iter()
                .filter(|&s| s + lead != starts[0])
                .collect();
            if let Some(&other) = elsewhere.first() {
                let mut places = vec![starts[0], other + lead];
                places.sort_unstable();
                return Step::Done(Err(ambiguous(pass, places, core.len(), hint)));
            }
            let m = Match::one_to_one(pass, starts[0], core.to_vec(), Vec::new());
            Step::Done(Ok(vec![edges.widen(hay, q.from, m, search, replace)]))
        }
        Selection::Found(starts) => {
            let matches = starts
                .into_iter()
                .map(|start| {
                    let m = Match::one_to_one(pass, start, core.to_vec(), Vec::new());
                    edges.widen(hay, q.from, m, search, replace)
                })
                .collect();
            Step::Done(Ok(matches))
        }
        Selection::Ambiguous(starts) => Step::Done(Err(ambiguous(pass, starts, core.len(), hint))),
        Selection::Empty => Step::Next,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kmp_finds_overlapping_occurrences() {
        assert_eq!(kmp(&["a", "a", "a"], &["a", "a"]), vec![0, 1]);
        assert_eq!(
            kmp(&["a", "b", "a", "b", "a"], &["a", "b", "a"]),
            vec![0, 2]
        );
        assert!(kmp(&["a", "b"], &["c"]).is_empty());
    }
}
