//! The similarity pass, the only pass that guesses, and the closest-region
//! search behind "not found" reports.
//!
//! The pass scores anchored windows ([`crate::similarity`]), takes the best
//! only when it clears the threshold, leads every non-overlapping rival by
//! the margin (or is the search but for a slip or two in one line, and no
//! rival is: [`slips`]), is nearer the search in character edits than any
//! other window, names nothing the file has elsewhere and changes no
//! operator ([`meaningful_differences`]), and is not the edit already
//! applied. The search lines are then mapped onto the window by a line
//! alignment. A search of up to three lines is first read as a clean slip
//! of one window ([`short`]); one too short to score is taken only so.

use std::ops::Range;

use super::edges::Edges;
use super::lines::{Norm, find};
use super::short;
use super::{
    Candidate, Haystack, LineQuery, LocateOptions, Match, MatchPass, Miss, Step, is_blank,
};
use crate::normalize::fold_loose;
use crate::similarity::{
    Budget, Scored, WindowSearch, anchored_windows, best_windows, has_word, meaningful_differences,
    slips, window_edits,
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
    if q.replace_all || q.at_eof {
        return Step::Skip;
    }
    let norm: Vec<String> = core.iter().map(|l| fold_loose(l).into_owned()).collect();
    // A short search is first read as a clean slip of one window: that
    // window is nearer the search than any other, which a ratio over a
    // few lines does not see.
    let short = core.len() <= short::SHORT || !eligible(core);
    let slip = if short {
        short::find(hay, q, &norm, opts)
    } else {
        Ok(None)
    };
    let tie = match slip {
        Ok(Some(chosen)) => return settle(hay, q, edges, &norm, chosen.start, chosen),
        Ok(None) => None,
        Err(miss) => Some(miss),
    };
    // A slip tied between windows refuses, unless the similarity pass,
    // where it may score the search, singles out one.
    let or_tie = |step: Step| tie.clone().map_or(step, |m| Step::Done(Err(m)));
    if !eligible(core) {
        return or_tie(Step::Skip);
    }
    match choose(hay, q, core.len(), &norm, opts) {
        Ok((start, chosen)) => settle(hay, q, edges, &norm, start, chosen),
        Err(Step::Next) => or_tie(Step::Next),
        Err(step) => step,
    }
}

/// The window the search most likely drifted from, and where it starts;
/// or the step to take when there is none, or no single one.
fn choose(
    hay: &Haystack<'_>,
    q: &LineQuery<'_>,
    lines: usize,
    norm: &[String],
    opts: &LocateOptions,
) -> Result<(usize, Scored), Step> {
    let budget = Budget::new(opts.fuzzy_budget);
    let chars = norm.iter().map(|l| l.chars().count() + 1).sum::<usize>();
    let too_large = || {
        let one = (chars as u64).saturating_mul(chars as u64).max(1);
        Step::Done(Err(Miss::TooLarge {
            lines,
            chars,
            affordable: (opts.fuzzy_budget / one) as usize,
        }))
    };
    if !budget.affords(chars, chars) {
        return Err(too_large());
    }
    let found = anchored_windows(hay.grams(), norm, opts.margin, q.from..usize::MAX, budget);
    if found.exhausted {
        return Err(too_large());
    }
    let Some(best) = found.best.filter(|b| b.score >= opts.threshold) else {
        return Err(Step::Next);
    };
    let slipped = || slip_start(hay, norm, &found).filter(|_| opts.slips);
    let Some(start) = accepted_start(&found, q, opts).or_else(slipped) else {
        return Err(Step::Done(Err(rivals(&found, lines, q.hint))));
    };
    let chosen = std::iter::once(best)
        .chain(found.rivals.iter().copied())
        .find(|w| w.start == start)
        .unwrap_or(best);
    let len = chosen.len;
    let twins = equidistant_twins(hay, norm, start, len);
    if !twins.is_empty() {
        let mut starts = vec![start];
        starts.extend(twins);
        match q
            .hint
            .and_then(|h| super::nearest(&starts, h, opts.hint_window))
        {
            Some(s) if s == start => {}
            _ => return Err(Step::Done(Err(tied(starts, len, chosen.score, q.hint)))),
        }
    }
    Ok((start, chosen))
}

/// The chosen window as a match, unless it is the edit already applied or
/// differs from the search in what it names; the search lines are mapped
/// onto it by alignment.
fn settle(
    hay: &Haystack<'_>,
    q: &LineQuery<'_>,
    edges: &Edges,
    norm: &[String],
    start: usize,
    chosen: Scored,
) -> Step {
    let core = edges.core(q.search);
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
    let (start, len) = reach_edges(hay, core, norm, (start, len), q.from);
    let window: Vec<&str> = (start..start + len).map(|i| hay.grams().line(i)).collect();
    // Every line outside the window counts as "elsewhere": a search name
    // found even right next to the window means the window is not what
    // the search describes.
    let n = hay.lines().len();
    let differs = meaningful_differences(norm, &window, |t| {
        has_word(
            (0..start)
                .chain(start + len..n)
                .map(|i| hay.grams().line(i)),
            t,
        )
    });
    if !differs.is_empty() {
        let differs = differs.into_iter().map(str::to_owned).collect();
        // The search may be gone because the edit stands elsewhere already.
        let at = already_applied(hay, &core_replace, 0, n);
        return Step::Done(Err(Miss::not_found(Some(candidate), differs, at)));
    }
    // Map by alignment, as the guard above judged the window: a window of
    // the search's size can still be shifted.
    let Alignment { map, mut extra } = align(hay, core, norm, &window, start);
    if let Some((j, first)) = adrift_edge(hay, core, norm, &map, edges.counts()) {
        return Step::Done(Err(Miss::Adrift {
            best: candidate,
            edge: core[j].clone(),
            first,
        }));
    }
    let (start, end) = tighten(start, start + len, &map, &mut extra);
    let m = Match {
        pass: MatchPass::Similarity,
        start,
        end,
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

/// The best window despite rivals within the margin, when it is the
/// search with a slip or two in one line ([`slips`]: misspelt words that
/// name nothing in the file) and no rival is: a typo in a long block,
/// beside a near-twin region.
fn slip_start(hay: &Haystack<'_>, norm: &[String], found: &WindowSearch) -> Option<usize> {
    let best = found.best?;
    if found.exhausted {
        return None;
    }
    let window = |w: &crate::similarity::Scored| -> Vec<&str> {
        (w.start..w.start + w.len)
            .map(|i| hay.grams().line(i))
            .collect()
    };
    let slipped = slips(norm, &window(&best))?;
    let n = hay.lines().len();
    if slipped
        .iter()
        .any(|t| has_word((0..n).map(|i| hay.grams().line(i)), t))
    {
        return None;
    }
    found
        .rivals
        .iter()
        .all(|r| slips(norm, &window(r)).is_none())
        .then_some(best.start)
}

/// Other windows of the file as close to the search as the chosen one,
/// counted in character edits on the tokens where they differ: a search
/// that says `botop` where the file has `top` in one docstring and
/// `bottom` in its twin is two edits from each, and a similarity ratio
/// that favours the longer word is no reason to pick it.
///
/// Twins are looked for where the chosen window agrees with the search
/// (an anchor line), so a file is scanned once, not window by window.
fn equidistant_twins(hay: &Haystack<'_>, norm: &[String], start: usize, len: usize) -> Vec<usize> {
    let line = |i: usize| hay.grams().line(i);
    let window: Vec<&str> = (start..start + len).map(line).collect();
    let Some(own) = window_edits(norm, &window) else {
        return Vec::new();
    };
    if own == 0 {
        return Vec::new();
    }
    let n = hay.lines().len();
    let anchor = (0..len).find(|&j| norm[j] == window[j]);
    let starts: Vec<usize> = match anchor {
        Some(j) => (0..n)
            .filter(|&k| k >= j && line(k) == norm[j])
            .map(|k| k - j)
            .collect(),
        None => (0..n).collect(),
    };
    starts
        .into_iter()
        .filter(|&r| r != start && r + len <= n)
        .filter(|&r| {
            let other: Vec<&str> = (r..r + len).map(line).collect();
            window_edits(norm, &other).is_some_and(|e| e <= own)
        })
        .collect()
}

fn tied(starts: Vec<usize>, len: usize, similarity: f64, hint: Option<usize>) -> Miss {
    Miss::Ambiguous {
        pass: MatchPass::Similarity,
        candidates: starts
            .into_iter()
            .map(|start| Candidate {
                start,
                len,
                similarity,
            })
            .collect(),
        hint,
    }
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

/// Maps search lines onto a window by the alignment that maximizes the
/// total similarity of paired lines (dynamic programming in a band around
/// the diagonal, since a window differs from the search by a line or two):
/// only lines with half or more of their characters in common pair, and a
/// pair that is equal as sent outweighs one equal only once normalized, so
/// a search's `}` pairs with the file's `}` and not with a `    }` beside
/// it. Unpaired search lines map to an empty range; unpaired window lines
/// are returned as extra, after the search line they follow.
fn align(
    hay: &Haystack<'_>,
    search_raw: &[String],
    search: &[String],
    window: &[&str],
    start: usize,
) -> Alignment {
    let pair_score = |j: usize, w: usize| -> Option<f64> {
        if !resembles(&search[j], window[w]) {
            return None;
        }
        let sim = if search[j] == window[w] {
            1.0
        } else {
            crate::similarity::similarity(&search[j], window[w])
        };
        let exact = search_raw[j].trim_end() == hay.lines()[start + w].trim_end();
        Some(sim + if exact { 0.01 } else { 0.0 })
    };
    let (m, n) = (search.len(), window.len());
    let best = best_scores(m, n, &pair_score);
    let pairs = trace_pairs(&best, &pair_score);
    Alignment::from_pairs(&pairs, m, n, start)
}

/// Search lines mapped onto a window's lines.
struct Alignment {
    /// Per search line, the file line it pairs with, or an empty range
    /// where the next paired line is.
    map: Vec<Range<usize>>,
    /// Unpaired window lines, each after the search line it follows.
    extra: Vec<(Option<usize>, usize)>,
}

/// `best[j][w]`: the best score aligning search lines `..j` with window
/// lines `..w`, in a band around the diagonal.
fn best_scores(
    m: usize,
    n: usize,
    pair_score: &dyn Fn(usize, usize) -> Option<f64>,
) -> Vec<Vec<f64>> {
    let band = m.abs_diff(n) + 4;
    let inside = |j: usize, w: usize| j.abs_diff(w) <= band;
    let neg = f64::NEG_INFINITY;
    let mut best = vec![vec![neg; n + 1]; m + 1];
    best[0][0] = 0.0;
    for j in 0..=m {
        for w in 0..=n {
            let here = best[j][w];
            if here == neg || !inside(j, w) {
                continue;
            }
            if j < m && best[j + 1][w] < here {
                best[j + 1][w] = here;
            }
            if w < n && best[j][w + 1] < here {
                best[j][w + 1] = here;
            }
            if j < m
                && w < n
                && let Some(sc) = pair_score(j, w)
                && best[j + 1][w + 1] < here + sc
            {
                best[j + 1][w + 1] = here + sc;
            }
        }
    }
    best
}

/// The paired (search, window) lines, in order: walked back from the end,
/// preferring pairs, then unpaired window lines (so they trail the search
/// line they follow).
fn trace_pairs(
    best: &[Vec<f64>],
    pair_score: &dyn Fn(usize, usize) -> Option<f64>,
) -> Vec<(usize, usize)> {
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    let (mut j, mut w) = (best.len() - 1, best[0].len() - 1);
    while j > 0 || w > 0 {
        let here = best[j][w];
        if j > 0
            && w > 0
            && let Some(sc) = pair_score(j - 1, w - 1)
            && (best[j - 1][w - 1] + sc - here).abs() < 1e-9
        {
            pairs.push((j - 1, w - 1));
            j -= 1;
            w -= 1;
        } else if w > 0 && (best[j][w - 1] - here).abs() < 1e-9 {
            w -= 1;
        } else {
            j -= 1;
        }
    }
    pairs.reverse();
    pairs
}

impl Alignment {
    /// The alignment of `m` search lines with the `n` window lines from
    /// `start` that `pairs` pairs.
    fn from_pairs(pairs: &[(usize, usize)], m: usize, n: usize, start: usize) -> Alignment {
        let mut map = vec![0..0; m];
        let mut paired_window = vec![None; n];
        for &(j, w) in pairs {
            map[j] = start + w..start + w + 1;
            paired_window[w] = Some(j);
        }
        // Unpaired search lines sit where the next paired line is.
        let mut next_at = start + n;
        for j in (0..m).rev() {
            if map[j].is_empty() {
                map[j] = next_at..next_at;
            } else {
                next_at = map[j].start;
            }
        }
        let mut extra = Vec::new();
        let mut last: Option<usize> = None;
        let mut pj = 0;
        for (w, paired) in paired_window.iter().enumerate() {
            match *paired {
                Some(j) => {
                    last = Some(j);
                    pj = j + 1;
                }
                None => {
                    // Follows the last search line before it, paired or not.
                    let before = (pj..m)
                        .take_while(|&k| map[k].is_empty() && map[k].start <= start + w)
                        .last();
                    extra.push((before.or(last), start + w));
                }
            }
        }
        Alignment { map, extra }
    }
}

/// The edge line of the search (its index, and whether it is the first)
/// that pairs with no line of the window, if one does.
///
/// A search's first and last lines fix where its region begins and ends.
/// When one of them pairs with no line of the window, the file changed
/// there since the search was copied (a stale search: a key added after
/// the last one it lists), or the model invented it; either way where the
/// region ends is a guess, and new lines placed against it could land
/// among lines the search does not describe. Lines of the window the
/// search lacks are checked when the edit is spliced (kept, or refused
/// next to a change).
///
/// Blank lines the search has beyond an edge (`blanks`, leading and
/// trailing) are placed against that edge's line: where it pairs with
/// nothing, they cannot be placed, and a replacement that turns one of
/// them into code would land beside whatever line the window starts at.
fn adrift_edge(
    hay: &Haystack<'_>,
    core: &[String],
    norm: &[String],
    map: &[Range<usize>],
    blanks: (usize, usize),
) -> Option<(usize, bool)> {
    let first = norm.iter().position(|l| !l.is_empty())?;
    let last = norm.iter().rposition(|l| !l.is_empty())?;
    // A line the file has nowhere (a stray fence line, a line the model
    // made up) moves no edge: only one the file has elsewhere says the
    // region's true edge lies elsewhere too.
    let elsewhere = |j: usize| {
        !find(
            hay,
            std::slice::from_ref(&core[j]),
            Norm::Loose,
            0..usize::MAX,
        )
        .is_empty()
    };
    [(first, true, blanks.0), (last, false, blanks.1)]
        .into_iter()
        .find(|&(j, _, beyond)| map[j].is_empty() && (beyond > 0 || elsewhere(j)))
        .map(|(j, first, _)| (j, first))
}

/// The window, one line longer at an edge whose search line pairs with
/// nothing inside it but with the file line just outside: a search that
/// lacks a line spans one more file line than it has lines, and the
/// window of its own size stops one short.
fn reach_edges(
    hay: &Haystack<'_>,
    core: &[String],
    norm: &[String],
    (mut start, mut len): (usize, usize),
    from: usize,
) -> (usize, usize) {
    let line = |i: usize| hay.grams().line(i);
    let window: Vec<&str> = (start..start + len).map(line).collect();
    let Alignment { map, .. } = align(hay, core, norm, &window, start);
    let first = norm.iter().position(|l| !l.is_empty());
    let last = norm.iter().rposition(|l| !l.is_empty());
    if let Some(j) = last
        && map[j].is_empty()
        && start + len < hay.lines().len()
        && resembles(&norm[j], line(start + len))
    {
        len += 1;
    }
    if let Some(j) = first
        && map[j].is_empty()
        && start > from
        && resembles(&norm[j], line(start - 1))
    {
        start -= 1;
        len += 1;
    }
    (start, len)
}

/// Unpaired file lines at the window's edges are left out of the region,
/// untouched: the search does not describe them.
fn tighten(
    mut start: usize,
    mut end: usize,
    map: &[Range<usize>],
    extra: &mut Vec<(Option<usize>, usize)>,
) -> (usize, usize) {
    extra.sort_by_key(|&(_, e)| e);
    let first = map.iter().position(|r| !r.is_empty());
    while let Some(pos) = extra
        .iter()
        .position(|&(a, e)| e == start && a.is_none_or(|a| first.is_none_or(|f| a < f)))
    {
        extra.remove(pos);
        start += 1;
    }
    let last = map.iter().rposition(|r| !r.is_empty());
    while let Some(pos) = extra
        .iter()
        .position(|&(a, e)| e + 1 == end && last.is_some() && a >= last)
    {
        extra.remove(pos);
        end -= 1;
    }
    (start, end.max(start))
}

/// Whether two normalized lines are versions of one line: half or more of
/// their characters in common.
fn resembles(a: &str, b: &str) -> bool {
    if a.is_empty() || b.is_empty() {
        return a.is_empty() && b.is_empty();
    }
    crate::similarity::similarity(a, b) >= 0.5
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
    let budget = Budget::new(opts.fuzzy_budget / 4);
    let found = best_windows(
        hay.grams(),
        &pieces,
        opts.margin,
        q.from..usize::MAX,
        budget,
    );
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
