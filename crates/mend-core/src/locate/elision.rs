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
    match locate_elided(hay, core, &flags, q, opts) {
        Ok(Some((start, end, map))) => {
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
            Step::Done(Ok(vec![edges.widen(hay, q.from, m, q.search, q.replace)]))
        }
        // A search with elision markers is not a literal window: the
        // similarity pass would compare the markers as code.
        Ok(None) => Step::Stop,
        Err(miss) => Step::Done(Err(miss)),
    }
}

/// Pieces between markers, each found in order.
///
/// Returns the span and the per-search-line map, `Ok(None)` when some piece
/// is missing, or an ambiguity when the chain can be completed in more than
/// one way.
#[allow(clippy::type_complexity)]
fn locate_elided(
    hay: &Haystack<'_>,
    search: &[String],
    markers: &[bool],
    q: &LineQuery<'_>,
    opts: &LocateOptions,
) -> Result<Option<(usize, usize, Vec<Range<usize>>)>, Miss> {
    let pieces = pieces(search, markers);
    if pieces.is_empty() {
        return Err(Miss::Unusable {
            message: "the search holds only elision markers (like `...`)".into(),
            fix: "Include real lines of the file around the elided part.".into(),
        });
    }
    let n = hay.lines().len();
    let first = &search[pieces[0].clone()];
    let heads = find(hay, first, Norm::Loose, q.from..usize::MAX);
    let mut chains: Vec<Vec<usize>> = Vec::new();
    let mut torn: Vec<usize> = Vec::new();
    for (h, &head) in heads.iter().enumerate() {
        let limit = heads.get(h + 1).copied().unwrap_or(n);
        if let Some(chain) = chain_from(hay, search, &pieces, head, limit, &mut torn) {
            chains.push(chain);
        }
    }
    let chosen = match chains.len() {
        0 if torn.is_empty() => return Ok(None),
        0 => return Err(ambiguous(MatchPass::Elision, torn, 1, q.hint)),
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
    Ok(map_chain(hay, search, markers, &pieces, &chosen))
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
    torn: &mut Vec<usize>,
) -> Option<Vec<usize>> {
    let mut chain = vec![head];
    let mut pos = head + pieces[0].len();
    for piece in &pieces[1..] {
        let hits = find(hay, &search[piece.clone()], Norm::Loose, pos..limit);
        match hits.as_slice() {
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

/// Maps every search line: piece lines one to one, the rest (markers and
/// blank lines around them) onto the gaps between pieces. Within one gap
/// the first marker owns the elided lines; blank lines and further markers
/// own nothing, so the lines are kept exactly once.
fn map_chain(
    hay: &Haystack<'_>,
    search: &[String],
    markers: &[bool],
    pieces: &[Range<usize>],
    chosen: &[usize],
) -> Option<(usize, usize, Vec<Range<usize>>)> {
    let start = chosen[0];
    let last = pieces.len() - 1;
    let end = chosen[last] + pieces[last].len();
    let mut map: Vec<Range<usize>> = vec![0..0; search.len()];
    for (k, piece) in pieces.iter().enumerate() {
        for (o, j) in piece.clone().enumerate() {
            map[j] = chosen[k] + o..chosen[k] + o + 1;
        }
    }
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
    let mut owned: Vec<Range<usize>> = Vec::new();
    for j in 0..search.len() {
        if pieces.iter().any(|p| p.contains(&j)) {
            continue;
        }
        let gap = gap_of(j);
        if markers[j] && !owned.contains(&gap) {
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
            return None;
        }
    }
    Some((start, end, map))
}
