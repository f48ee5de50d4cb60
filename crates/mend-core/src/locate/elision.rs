//! The elision pass: a search that says `# ... existing code ...` instead
//! of copying lines.
//!
//! Marker lines split the search into pieces, found in order with the most
//! tolerant line comparison. Each piece after the first must be unique
//! between the previous piece and the next occurrence of the first piece,
//! so a chain is never completed across a twin region. The elided lines are
//! mapped to the marker that stands for them, so the planner keeps them.

use std::ops::Range;

use super::edges::Edges;
use super::lines::{Norm, find};
use super::{
    Haystack, LineQuery, LocateOptions, Match, MatchPass, Miss, Step, ambiguous, is_blank, nearest,
};
use crate::normalize::{MarkerKind, marker_kind};

pub(crate) fn run(
    hay: &Haystack<'_>,
    q: &LineQuery<'_>,
    edges: &Edges,
    opts: &LocateOptions,
) -> Step {
    let (markers, _) = q.elision.flags(q.search, q.replace);
    if !markers.iter().any(|&m| m) {
        return Step::Skip;
    }
    let core = edges.core(q.search);
    let (flags, _) = q.elision.flags(core, q.replace);
    // Blank lines beyond a marker at the search's edge stand somewhere past
    // an unknown stretch: harmless when the replacement keeps them alike,
    // unplaceable when it changes them.
    let (lead, trail) = edges.counts();
    let lead_marker = flags.first() == Some(&true);
    let trail_marker = flags.last() == Some(&true);
    let r_lead = q.replace.iter().take_while(|l| is_blank(l)).count();
    let r_trail = q.replace.iter().rev().take_while(|l| is_blank(l)).count();
    if lead_marker && lead > 0 && r_lead != lead || trail_marker && trail > 0 && r_trail != trail {
        return Step::Done(Err(Miss::Unusable {
            message: "it has blank lines beyond the elision marker at its edge, which the replacement changes, and that marker stands for an unknown stretch of the file".into(),
            fix: "End the search and the replacement with real lines of the file next to the change, not with a marker.".into(),
        }));
    }
    let edges = edges.sealed(lead_marker, trail_marker);
    match locate_elided(hay, (core, lead), &flags, q, opts) {
        Ok(Some(found)) => Step::Done(Ok(vec![elided_match(hay, q, &edges, core, found)])),
        // A search with elision markers is not a literal window: the
        // similarity pass would compare the markers as code.
        Ok(None) => Step::Stop,
        Err(miss) => Step::Done(Err(miss)),
    }
}

/// A chain's span and map as a match, widened to the search's blank edges.
fn elided_match(
    hay: &Haystack<'_>,
    q: &LineQuery<'_>,
    edges: &Edges,
    core: &[String],
    Chain { start, end, map }: Chain,
) -> Match {
    let m = Match {
        pass: MatchPass::Elision,
        start,
        end,
        similarity: 1.0,
        search: core.to_vec(),
        replace: Vec::new(),
        map,
        extra: Vec::new(),
        markers: Vec::new(),
        replace_markers: Vec::new(),
        elided: true,
    };
    edges.widen(hay, q.from, m, q.search, q.replace)
}

/// At most this many ways to complete an ambiguous chain are weighed, and
/// at most this many piece searches spent looking for them (a search whose
/// pieces each occur many times, and the last nowhere, would otherwise
/// cost every combination).
const ALTERNATIVES: usize = 64;
const PIECE_SEARCHES: usize = 1_000;

/// Every way the search's pieces can be found in order (up to
/// [`ALTERNATIVES`]), each as a match: when the elision reading is
/// ambiguous, the planner applies it only if every way gives the same file
/// (a generic line after a marker that stands for unchanged lines, found
/// at several places, moves where the region ends but not what the file
/// becomes). `None` when there are more ways or none.
pub(crate) fn alternatives(
    hay: &Haystack<'_>,
    q: &LineQuery<'_>,
    edges: &Edges,
) -> Option<Vec<Match>> {
    let core = edges.core(q.search);
    let (flags, _) = q.elision.flags(core, q.replace);
    if !flags.contains(&true) {
        return None;
    }
    let pieces = pieces(core, &flags);
    if pieces.is_empty() {
        return None;
    }
    let edges = edges.sealed(flags.first() == Some(&true), flags.last() == Some(&true));
    for norm in [Norm::Exact, Norm::Trim, Norm::Loose] {
        let mut out = Vec::new();
        let mut budget = PIECE_SEARCHES;
        for head in find(hay, &core[pieces[0].clone()], norm, q.from..usize::MAX) {
            let start = (vec![head], head + pieces[0].len());
            if !every_chain(hay, (core, &pieces), norm, start, (&mut out, &mut budget)) {
                return None;
            }
        }
        if out.is_empty() {
            continue;
        }
        let ms: Option<Vec<Match>> = out
            .into_iter()
            .map(|c| {
                map_chain(hay, core, &flags, &pieces, &c, q.from)
                    .map(|found| elided_match(hay, q, &edges, core, found))
            })
            .collect();
        return ms;
    }
    None
}

/// Extends `chain` with every placement of the remaining pieces; `false`
/// once more than [`ALTERNATIVES`] chains are found or the budget of piece
/// searches is spent.
fn every_chain(
    hay: &Haystack<'_>,
    (search, pieces): (&[String], &[Range<usize>]),
    norm: Norm,
    (chain, pos): (Vec<usize>, usize),
    (out, budget): (&mut Vec<Vec<usize>>, &mut usize),
) -> bool {
    let k = chain.len();
    if k == pieces.len() {
        out.push(chain);
        return out.len() <= ALTERNATIVES;
    }
    if *budget == 0 {
        return false;
    }
    *budget -= 1;
    for hit in find(hay, &search[pieces[k].clone()], norm, pos..usize::MAX) {
        let mut next = chain.clone();
        next.push(hit);
        let at = (next, hit + pieces[k].len());
        if !every_chain(hay, (search, pieces), norm, at, (&mut *out, &mut *budget)) {
            return false;
        }
    }
    true
}

/// Pieces between markers, each found in order.
///
/// Returns the span and the per-search-line map, `Ok(None)` when some piece
/// is missing, or an ambiguity when the chain can be completed in more than
/// one way. `search` is the core, `lead` the blank lines the whole search
/// begins with before it (a start-line hint counts them).
fn locate_elided(
    hay: &Haystack<'_>,
    (search, lead): (&[String], usize),
    markers: &[bool],
    q: &LineQuery<'_>,
    opts: &LocateOptions,
) -> Result<Option<Chain>, Miss> {
    let pieces = pieces(search, markers);
    if pieces.is_empty() {
        return Err(Miss::Unusable {
            message: "the search holds only elision markers (like `...`)".into(),
            fix: "Include real lines of the file around the elided part.".into(),
        });
    }
    // A closing brace around a marker says nothing about where it is.
    if !pieces
        .iter()
        .any(|p| search[p.clone()].iter().any(|l| distinctive(l)))
    {
        return Err(Miss::Unusable {
            message: "the lines around its elision markers are too generic to locate (like `}` alone)".into(),
            fix: "Include a distinctive line of the file next to the marker, such as the function's signature.".into(),
        });
    }
    // Pieces climb their own ladder: a chain of pieces as sent beats one
    // found only with whitespace or typography forgiven.
    let mut found = (Vec::new(), Vec::new());
    for norm in [Norm::Exact, Norm::Trim, Norm::Loose] {
        found = chains(hay, search, &pieces, norm, q.from);
        if !found.0.is_empty() || !found.1.is_empty() {
            break;
        }
    }
    let (mut chains, torn) = found;
    let chosen = match chains.len() {
        0 if torn.is_empty() => return Ok(None),
        0 => return Err(ambiguous(MatchPass::Elision, torn, 1, q.hint)),
        1 => chains.remove(0),
        _ => {
            let starts: Vec<usize> = chains.iter().map(|c| c[0]).collect();
            // A start-line hint names the search's first line; when that is
            // a marker, it names an unknown stretch and chooses nothing.
            // The hint names the search's first line, before the blank
            // lines set aside from the pieces' core.
            let hint = q
                .hint
                .filter(|_| !markers.first().copied().unwrap_or(false))
                .map(|h| h + lead);
            match hint.and_then(|h| nearest(&starts, h, opts.hint_window)) {
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
    Ok(map_chain(hay, search, markers, &pieces, &chosen, q.from))
}

/// Every complete chain of pieces under `norm`, one per occurrence of the
/// first piece, and the places where a later piece was ambiguous.
fn chains(
    hay: &Haystack<'_>,
    search: &[String],
    pieces: &[Range<usize>],
    norm: Norm,
    from: usize,
) -> (Vec<Vec<usize>>, Vec<usize>) {
    let n = hay.lines().len();
    let heads = find(hay, &search[pieces[0].clone()], norm, from..usize::MAX);
    // A chain is first looked for before the next occurrence of its first
    // piece; one that completes only past it still competes, since the
    // search does not say which copy it meant (a header repeated in two
    // classes is told apart by including the class line).
    let mut chains = Vec::new();
    let mut torn = Vec::new();
    for (h, &head) in heads.iter().enumerate() {
        let limit = heads.get(h + 1).copied().unwrap_or(n);
        if let Some(chain) = chain_from(hay, search, pieces, head, limit, norm, &mut torn) {
            chains.push(chain);
        } else if limit < n
            && let Some(chain) = chain_from(hay, search, pieces, head, n, norm, &mut torn)
        {
            chains.push(chain);
        }
    }
    // A head whose later piece occurs at several places past it has
    // several readings, and the others' chains do not rule them out: a
    // `"""` that closes one docstring, `...`, and lines that follow two
    // docstrings could add to either. The edit is then ambiguous.
    if !torn.is_empty() {
        chains.clear();
    }
    torn.sort_unstable();
    torn.dedup();
    // Chains from farther heads hold the nearer ones' gaps and more. The
    // marker's indentation does not choose among them: a model writes it at
    // its first elided line's depth as often as at the block's, so a
    // farther chain may be the one meant. They compete, and apply only
    // when every chain gives the same file.
    (chains, torn)
}

/// Whether a line can tell places apart: three or more letters or digits.
fn distinctive(line: &str) -> bool {
    line.chars().filter(|c| c.is_alphanumeric()).count() >= 3
}

/// Maximal runs of non-marker lines, without the blank lines next to a
/// marker (those belong to the elided region).
fn pieces(search: &[String], markers: &[bool]) -> Vec<Range<usize>> {
    let mut pieces = Vec::new();
    let mut i = 0;
    while i < search.len() {
        if markers[i] {
            i += 1;
            continue;
        }
        let start = i;
        while i < search.len() && !markers[i] {
            i += 1;
        }
        let (mut a, mut b) = (start, i);
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
    pieces
}

/// Completes the chain of pieces from a head, each piece unique before
/// `limit`; records ambiguous piece positions in `torn`.
fn chain_from(
    hay: &Haystack<'_>,
    search: &[String],
    pieces: &[Range<usize>],
    head: usize,
    limit: usize,
    norm: Norm,
    torn: &mut Vec<usize>,
) -> Option<Vec<usize>> {
    let mut chain = vec![head];
    let mut pos = head + pieces[0].len();
    for piece in &pieces[1..] {
        match find(hay, &search[piece.clone()], norm, pos..limit).as_slice() {
            [one] => {
                chain.push(*one);
                pos = one + piece.len();
            }
            [] => return None,
            many => {
                torn.extend_from_slice(many);
                return None;
            }
        }
    }
    Some(chain)
}

/// Maps every search line: piece lines one to one; in each gap between
/// pieces, the blank lines next to a piece onto the file's blank lines
/// there (as many as both have, as the blank-edge rule does), and the rest
/// of the gap to the gap's first marker, so the elided lines are kept
/// exactly once and a blank line stays on its side of inserted code.
fn map_chain(
    hay: &Haystack<'_>,
    search: &[String],
    markers: &[bool],
    pieces: &[Range<usize>],
    chosen: &[usize],
    from: usize,
) -> Option<Chain> {
    let lines = hay.lines();
    let last = pieces.len() - 1;
    let mut map: Vec<Range<usize>> = vec![0..0; search.len()];
    for (k, piece) in pieces.iter().enumerate() {
        for (o, j) in piece.clone().enumerate() {
            map[j] = chosen[k] + o..chosen[k] + o + 1;
        }
    }
    let gaps = Gaps {
        lines,
        search,
        markers,
    };
    // Lead gap: trailing blank lines before the first piece may take the
    // file's blank lines just above it.
    let s_lead = 0..pieces[0].start;
    let t = gap_tail_blanks(search, markers, s_lead.clone());
    let tt = t
        .len()
        .min(gaps.blank_run(from.min(chosen[0])..chosen[0], true));
    let start = chosen[0] - tt;
    map_run(&mut map, &t[t.len() - tt..], start);
    own_rest(&mut map, markers, s_lead, start..start);
    // Tail gap: leading blank lines after the last piece.
    let end0 = chosen[last] + pieces[last].len();
    let s_tail = pieces[last].end..search.len();
    let l = gap_head_blanks(search, markers, s_tail.clone());
    let tl = l.len().min(gaps.blank_run(end0..lines.len(), false));
    map_run(&mut map, &l[..tl], end0);
    let end = end0 + tl;
    own_rest(&mut map, markers, s_tail, end..end);
    for k in 0..last {
        let f = chosen[k] + pieces[k].len()..chosen[k + 1];
        let s = pieces[k].end..pieces[k + 1].start;
        gaps.map_inner(&mut map, s, f)?;
    }
    Some(Chain { start, end, map })
}

/// A chain of pieces mapped onto the file: the region it covers and the
/// file lines each search line stands for.
struct Chain {
    start: usize,
    end: usize,
    map: Vec<Range<usize>>,
}

/// What mapping the gaps between a chain's pieces reads.
struct Gaps<'a> {
    lines: &'a [&'a str],
    search: &'a [String],
    markers: &'a [bool],
}

impl Gaps<'_> {
    /// How many blank file lines `range` starts with (ends with, `rev`).
    fn blank_run(&self, range: Range<usize>, rev: bool) -> usize {
        let blank = |i: &usize| is_blank(self.lines[*i]);
        if rev {
            range.rev().take_while(blank).count()
        } else {
            range.take_while(blank).count()
        }
    }

    /// Maps the search lines `s` between two pieces onto the file lines
    /// `f` between them; `None` when the file's gap cannot be what the
    /// search's describes.
    fn map_inner(&self, map: &mut [Range<usize>], s: Range<usize>, f: Range<usize>) -> Option<()> {
        let (search, markers) = (self.search, self.markers);
        if !(s.clone()).any(|j| markers[j]) {
            // Only blank lines between two pieces: the file must have only
            // blank lines there too; map them, the last taking any surplus.
            if !self.lines[f.clone()].iter().all(|l| is_blank(l)) {
                return None;
            }
            let js: Vec<usize> = s.collect();
            for (o, &j) in js.iter().enumerate() {
                let a = (f.start + o).min(f.end);
                let b = if o + 1 == js.len() {
                    f.end
                } else {
                    (a + 1).min(f.end)
                };
                map[j] = a..b.max(a);
            }
            return Some(());
        }
        let l = gap_head_blanks(search, markers, s.clone());
        let t = gap_tail_blanks(search, markers, s.clone());
        let tl = l.len().min(self.blank_run(f.clone(), false));
        let tt = t.len().min(self.blank_run(f.start + tl..f.end, true));
        let owned = f.start + tl..f.end - tt;
        // A bare `...` between two pieces reads as elision only where the
        // file has lines for it to stand for; with none it is code.
        if owned.is_empty() && only_bare(search, markers, s.clone()) {
            return None;
        }
        map_run(map, &l[..tl], f.start);
        map_run(map, &t[t.len() - tt..], f.end - tt);
        own_rest(map, markers, s, owned);
        Some(())
    }
}

/// Whether every marker in a gap is a bare ellipsis.
fn only_bare(search: &[String], markers: &[bool], gap: Range<usize>) -> bool {
    gap.filter(|&j| markers[j])
        .all(|j| marker_kind(&search[j]) == Some(MarkerKind::Bare))
}

/// The blank search lines at the start of a gap, before its first marker.
fn gap_head_blanks(search: &[String], markers: &[bool], gap: Range<usize>) -> Vec<usize> {
    gap.take_while(|&j| !markers[j] && is_blank(&search[j]))
        .collect()
}

/// The blank search lines at the end of a gap, after its last marker.
fn gap_tail_blanks(search: &[String], markers: &[bool], gap: Range<usize>) -> Vec<usize> {
    let mut v: Vec<usize> = gap
        .rev()
        .take_while(|&j| !markers[j] && is_blank(&search[j]))
        .collect();
    v.reverse();
    v
}

/// Maps search lines `js` one to one onto file lines from `at`.
fn map_run(map: &mut [Range<usize>], js: &[usize], at: usize) {
    for (o, &j) in js.iter().enumerate() {
        map[j] = at + o..at + o + 1;
    }
}

/// The gap's first marker owns `owned`; its other unmapped lines own
/// nothing.
fn own_rest(map: &mut [Range<usize>], markers: &[bool], gap: Range<usize>, owned: Range<usize>) {
    let mut first = true;
    for j in gap {
        if !map[j].is_empty() {
            continue;
        }
        if markers[j] && first {
            map[j] = owned.clone();
            first = false;
        } else {
            map[j] = owned.start..owned.start;
        }
    }
}
