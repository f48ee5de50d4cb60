//! The similarity pass, the only pass that guesses, and the closest-region
//! search behind "not found" reports.
//!
//! The pass scores anchored windows ([`crate::similarity`]), takes the best
//! only when it clears the threshold, leads every non-overlapping rival by
//! the margin, names nothing the file has elsewhere and changes no operator
//! ([`meaningful_differences`]), and is not the edit already applied. The
//! search lines are then mapped onto the window by a line alignment.

use std::ops::Range;

use super::edges::Edges;
use super::lines::{Norm, find};
use super::{
    Candidate, Haystack, LineQuery, LocateOptions, Match, MatchPass, Miss, Step, is_blank,
};
use crate::normalize::fold_loose;
use crate::similarity::{
    WindowSearch, anchored_windows, best_windows, has_word, meaningful_differences,
};

/// Fuzzy matching needs enough text to be meaningful: at least two
/// non-blank lines and 20 characters. A one-line search that is merely
/// similar to a line is as likely a different statement as a drifted one.
pub(crate) fn eligible(search: &[String]) -> bool {
    let non_blank = search.iter().filter(|l| !is_blank(l)).count();
    let chars: usize = search.iter().map(|l| l.trim().len()).sum();
    non_blank >= 2 && chars >= 20
}

pub(crate) fn run(
    hay: &Haystack<'_>,
    q: &LineQuery<'_>,
    edges: &Edges,
    opts: &LocateOptions,
) -> Step {
    let core = edges.core(q.search);
    if q.replace_all || q.at_eof || !eligible(core) {
        return Step::Skip;
    }
    let norm: Vec<String> = core.iter().map(|l| fold_loose(l).into_owned()).collect();
    let found = anchored_windows(hay.grams(), &norm, opts.margin, q.from..usize::MAX);
    let Some(best) = found.best.filter(|b| b.score >= opts.threshold) else {
        return Step::Next;
    };
    let Some(start) = accepted_start(&found, q, opts) else {
        return Step::Done(Err(rivals(&found, core.len(), q.hint)));
    };
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
    let core_replace = super::edges::drop_surplus(q.replace, usize::MAX, usize::MAX);
    if let Some(at) = already_applied(hay, &core_replace, start, len) {
        return Step::Done(Err(Miss::not_found(Some(candidate), Vec::new(), Some(at))));
    }
    let window: Vec<&str> = (start..start + len).map(|i| hay.grams().line(i)).collect();
    // Every line outside the window counts as "elsewhere": a search name
    // found even right next to the window means the window is not what
    // the search describes.
    let n = hay.lines().len();
    let differs = meaningful_differences(&norm, &window, |t| {
        has_word(
            (0..start)
                .chain(start + len..n)
                .map(|i| hay.grams().line(i)),
            t,
        )
    });
    if !differs.is_empty() {
        let differs = differs.into_iter().map(str::to_owned).collect();
        return Step::Done(Err(Miss::not_found(Some(candidate), differs, None)));
    }
    // Map by alignment, as the guard above judged the window: a window of
    // the search's size can still be shifted.
    let (map, extra) = align(&norm, &window, start);
    let m = Match {
        pass: MatchPass::Similarity,
        start,
        end: start + len,
        similarity: chosen.score,
        search: core.to_vec(),
        replace: Vec::new(),
        map,
        extra,
        markers: Vec::new(),
        replace_markers: Vec::new(),
        elided: false,
    };
    Step::Done(Ok(vec![edges.widen(hay, q.from, m, q.search, q.replace)]))
}

/// The window to take: the best when it has no rival; otherwise the one a
/// start-line hint picks among those that clear the threshold.
fn accepted_start(found: &WindowSearch, q: &LineQuery<'_>, opts: &LocateOptions) -> Option<usize> {
    let best = found.best?;
    if found.exhausted {
        return None;
    }
    if found.rivals.is_empty() {
        return Some(best.start);
    }
    let mut all: Vec<usize> = vec![best.start];
    all.extend(
        found
            .rivals
            .iter()
            .filter(|r| r.score >= opts.threshold)
            .map(|r| r.start),
    );
    q.hint
        .and_then(|h| super::nearest(&all, h, opts.hint_window))
}

fn rivals(found: &WindowSearch, m: usize, hint: Option<usize>) -> Miss {
    let best = found.best.expect("a best window");
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
    Miss::Ambiguous {
        pass: MatchPass::Similarity,
        candidates,
        hint,
    }
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

/// The "not found" miss: the closest window anywhere (markers left out),
/// and where the replacement already stands, if it does.
pub(crate) fn not_found(
    hay: &Haystack<'_>,
    q: &LineQuery<'_>,
    edges: &Edges,
    opts: &LocateOptions,
    ignored: Vec<MatchPass>,
) -> Miss {
    let core = edges.core(q.search);
    let (markers, _) = q.elision.flags(core, q.replace);
    let pieces: Vec<String> = core
        .iter()
        .zip(&markers)
        .filter(|(_, m)| !**m)
        .map(|(l, _)| fold_loose(l).into_owned())
        .collect();
    let found = best_windows(hay.grams(), &pieces, opts.margin, q.from..usize::MAX);
    let replace = super::edges::drop_surplus(q.replace, usize::MAX, usize::MAX);
    let mut miss = Miss::not_found(
        found.best.map(|b| Candidate {
            start: b.start,
            len: pieces.len(),
            similarity: b.score,
        }),
        Vec::new(),
        already_applied(hay, &replace, 0, hay.lines().len()),
    );
    if let Miss::NotFound { ignored: i, .. } = &mut miss {
        *i = ignored;
    }
    miss
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
    if replace.is_empty() {
        return None;
    }
    let lo = start.saturating_sub(replace.len());
    let hi = start + m + replace.len();
    find(hay, replace, Norm::Loose, lo..hi).first().copied()
}
