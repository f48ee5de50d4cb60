//! The similarity pass: Levenshtein similarity of line windows.
//!
//! A window is `m` consecutive file lines, where `m` is the number of search
//! lines. Both sides are compared in their most tolerant form (each line
//! Unicode-folded and trimmed, lines joined by `\n`), and the score is
//! `1 - distance / max(len)` in characters.
//!
//! Candidates for a match are **anchored** windows ([`anchored_windows`]):
//! windows where at least one distinctive search line appears verbatim (after
//! normalization) within two lines of its position. A drifted copy of a
//! region shares most of its lines with it; a twin that differs on every line,
//! or some other region standing in for one that was deleted, shares none and
//! is not a candidate. The anchors come from one hash join of the search
//! lines against the file, so a 100,000-line file costs one pass plus a few
//! exact scores. The exact distance uses `rapidfuzz`'s bit-parallel
//! Levenshtein with a cutoff.
//!
//! Failure reports use [`best_windows`], which looks at every window: windows
//! are ranked by a cheap upper bound on their score (the length difference
//! and the q-gram lemma: an edit destroys at most `q` of the search's
//! q-grams) and scored best-bound-first within a budget.

use rapidfuzz::distance::levenshtein::{Args, BatchComparator};

const Q: usize = 3;

/// Windows whose bound is below this are not worth showing as a candidate.
pub const REPORT_FLOOR: f64 = 0.5;

/// Work spent comparing texts, in characters compared (the product of
/// the two texts' lengths for each edit distance): what bounds the
/// similarity pass, however large the search or the file.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    left: u64,
}

impl Budget {
    /// A budget of `chars` characters compared.
    pub fn new(chars: u64) -> Budget {
        Budget { left: chars }
    }

    /// Spends the cost of comparing texts of `a` and `b` characters, or
    /// says there is not enough left.
    fn spend(&mut self, a: usize, b: usize) -> bool {
        let cost = (a as u64).saturating_mul(b as u64);
        if cost > self.left {
            return false;
        }
        self.left -= cost;
        true
    }

    /// Whether one comparison of texts of `a` and `b` characters fits.
    pub fn affords(&self, a: usize, b: usize) -> bool {
        (a as u64).saturating_mul(b as u64) <= self.left
    }
}

/// A search line occurring more often than this in the file is boilerplate
/// (`}`, `return None`), not an anchor.
const MAX_ANCHOR_HITS: usize = 32;

/// How far (in lines) an anchor may sit from its position in the search, so
/// a dropped or invented line does not lose the anchors after it.
const ANCHOR_SLACK: usize = 2;

/// A scored window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scored {
    /// Index of the window's first line.
    pub start: usize,
    /// Number of lines in the window (the search's, or one more or fewer
    /// for anchored windows, to absorb a dropped or invented line).
    pub len: usize,
    /// Similarity in `0.0..=1.0`.
    pub score: f64,
}

impl Scored {
    fn overlaps(&self, other: &Scored) -> bool {
        self.start < other.start + other.len && other.start < self.start + self.len
    }
}

/// The outcome of a best-window search.
#[derive(Debug, Clone, Default)]
pub struct WindowSearch {
    /// The best window, if any window scored at least [`REPORT_FLOOR`].
    pub best: Option<Scored>,
    /// Windows that do not overlap `best` and score within `margin` of it,
    /// best first.
    pub rivals: Vec<Scored>,
    /// True when the evaluation budget ran out before the bound proved that
    /// no unevaluated window could be a rival.
    pub exhausted: bool,
}

/// Precomputed per-line data of the file side, reusable across searches.
#[derive(Debug, Clone)]
pub struct LineGrams<'a> {
    /// Normalized line text (borrowed for the ASCII lines that need no folding).
    norm: Vec<std::borrow::Cow<'a, str>>,
    /// Character count of each normalized line.
    chars: Vec<usize>,
    /// Flattened q-gram buckets of every line and the offset of each line's
    /// slice, built on first use: only failure reports need them.
    grams: std::cell::OnceCell<(Vec<u16>, Vec<usize>)>,
}

fn bucket(gram: impl Iterator<Item = u32>) -> u16 {
    let mut h: u32 = 0x811C_9DC5;
    for c in gram {
        h = (h ^ c).wrapping_mul(0x0100_0193);
    }
    h ^= h >> 15;
    h = h.wrapping_mul(0x2C1B_3C6D);
    (h >> 16) as u16
}

fn push_grams(line: &str, out: &mut Vec<u16>) {
    if line.is_ascii() {
        for w in line.as_bytes().windows(Q) {
            out.push(bucket(w.iter().map(|&b| u32::from(b))));
        }
    } else {
        let cs: Vec<u32> = line.chars().map(u32::from).collect();
        for w in cs.windows(Q) {
            out.push(bucket(w.iter().copied()));
        }
    }
}

impl<'a> LineGrams<'a> {
    /// Builds the index from already-normalized lines.
    pub fn new(norm: Vec<std::borrow::Cow<'a, str>>) -> Self {
        let chars = norm
            .iter()
            .map(|line| {
                if line.is_ascii() {
                    line.len()
                } else {
                    line.chars().count()
                }
            })
            .collect();
        LineGrams {
            norm,
            chars,
            grams: std::cell::OnceCell::new(),
        }
    }

    /// Number of lines.
    pub fn len(&self) -> usize {
        self.norm.len()
    }

    /// Whether there are no lines.
    pub fn is_empty(&self) -> bool {
        self.norm.is_empty()
    }

    /// Normalized text of line `i`.
    pub fn line(&self, i: usize) -> &str {
        self.norm[i].as_ref()
    }

    fn line_grams(&self, i: usize) -> &[u16] {
        let (grams, offsets) = self.grams.get_or_init(|| {
            let mut grams = Vec::with_capacity(self.norm.iter().map(|l| l.len()).sum());
            let mut offsets = Vec::with_capacity(self.norm.len() + 1);
            offsets.push(0);
            for line in &self.norm {
                push_grams(line, &mut grams);
                offsets.push(grams.len());
            }
            (grams, offsets)
        });
        &grams[offsets[i]..offsets[i + 1]]
    }

    fn window_text(&self, start: usize, m: usize) -> String {
        let mut out = String::with_capacity(self.chars[start..start + m].iter().sum::<usize>() + m);
        for (i, l) in self.norm[start..start + m].iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(l);
        }
        out
    }
}

/// Similarity of two normalized texts, `1 - distance / max(len)`.
pub fn similarity(a: &str, b: &str) -> f64 {
    let la = a.chars().count();
    let lb = b.chars().count();
    let max = la.max(lb);
    if max == 0 {
        return 1.0;
    }
    let d = rapidfuzz::distance::levenshtein::distance(a.chars(), b.chars());
    1.0 - d as f64 / max as f64
}

/// The valid starts of `m`-line windows in `n` lines, limited to `range`.
fn window_starts(
    n: usize,
    m: usize,
    range: std::ops::Range<usize>,
) -> Option<std::ops::Range<usize>> {
    if m == 0 || n < m {
        return None;
    }
    let first = range.start.min(n - m + 1);
    let last = range.end.min(n - m + 1);
    (first < last).then_some(first..last)
}

/// Windows scored against one search, and what the scoring has found so
/// far: the state [`best_windows`] and [`anchored_windows`] share, whatever
/// order they try windows in.
struct Ranking<'h, 'a> {
    hay: &'h LineGrams<'a>,
    scorer: BatchComparator<char>,
    /// The search's length in characters, lines joined by `\n`.
    chars: usize,
    margin: f64,
    budget: Budget,
    best: Option<Scored>,
    scored: Vec<Scored>,
    /// Whether a window was passed over for want of budget.
    exhausted: bool,
}

impl<'h, 'a> Ranking<'h, 'a> {
    fn new(hay: &'h LineGrams<'a>, search: &[String], margin: f64, budget: Budget) -> Self {
        let search_text = search.join("\n");
        Ranking {
            hay,
            scorer: BatchComparator::new(search_text.chars()),
            chars: search_text.chars().count(),
            margin,
            budget,
            best: None,
            scored: Vec::new(),
            exhausted: false,
        }
    }

    /// The least score still worth finding: within `margin` of the best so
    /// far, and never below [`REPORT_FLOOR`].
    fn floor(&self) -> f64 {
        match self.best {
            Some(b) => (b.score - self.margin).max(REPORT_FLOOR),
            None => REPORT_FLOOR,
        }
    }

    /// Scores the `len`-line window at `k` unless its length alone puts it
    /// below the floor, and keeps it if it reaches the floor. Without the
    /// budget for it, the window is passed over and the search marked
    /// exhausted.
    fn try_window(&mut self, k: usize, len: usize) {
        let floor = self.floor();
        let a = self.chars;
        let w = self.hay.chars[k..k + len].iter().sum::<usize>() + len - 1;
        let max = a.max(w).max(1);
        if 1.0 - (a.abs_diff(w) as f64) / (max as f64) < floor {
            return;
        }
        if !self.budget.spend(a, w) {
            self.exhausted = true;
            return;
        }
        let cutoff = ((1.0 - floor) * max as f64).floor() as usize;
        let text = self.hay.window_text(k, len);
        let Some(d) = self
            .scorer
            .distance_with_args(text.chars(), &Args::default().score_cutoff(cutoff))
        else {
            return;
        };
        let s = Scored {
            start: k,
            len,
            score: 1.0 - d as f64 / max as f64,
        };
        if self.best.is_none_or(|b| s.score > b.score) {
            self.best = Some(s);
        }
        self.scored.push(s);
    }

    /// The best window and its rivals: the windows that do not overlap it
    /// and score within `margin` of it, one per region, best first.
    fn finish(self) -> WindowSearch {
        let Some(best) = self.best else {
            return WindowSearch {
                best: None,
                rivals: Vec::new(),
                exhausted: self.exhausted,
            };
        };
        let mut rivals: Vec<Scored> = self
            .scored
            .into_iter()
            .filter(|s| !s.overlaps(&best) && s.score >= best.score - self.margin)
            .collect();
        rivals.sort_by(|x, y| y.score.total_cmp(&x.score).then(x.start.cmp(&y.start)));
        // Rivals that overlap each other stand for one region: keep the best of each.
        let mut kept: Vec<Scored> = Vec::new();
        for r in rivals {
            if kept.iter().all(|k| !k.overlaps(&r)) {
                kept.push(r);
            }
        }
        WindowSearch {
            best: Some(best),
            rivals: kept,
            exhausted: self.exhausted,
        }
    }
}

/// The search's q-grams counted in buckets: what the q-gram lemma's bound
/// on a window's score is computed from.
struct GramProfile {
    /// How many of the search's grams fall in each bucket.
    want: Vec<u32>,
    /// How far a gram's 16-bit bucket is shifted down to index `want`.
    shift: u32,
    /// The search's number of grams.
    total: usize,
}

impl GramProfile {
    fn new(search: &[String]) -> Self {
        let mut grams = Vec::new();
        for line in search {
            push_grams(line, &mut grams);
        }
        // As many buckets as the search needs: merged buckets only loosen the
        // bound, and a short search then costs little to set up.
        let bits = (usize::BITS - (4 * grams.len()).max(1).leading_zeros()).clamp(8, 16);
        let shift = 16 - bits;
        let mut want = vec![0u32; 1 << bits];
        for &g in &grams {
            want[(g >> shift) as usize] += 1;
        }
        GramProfile {
            want,
            shift,
            total: grams.len(),
        }
    }
}

/// A window sliding over the file, keeping its count of grams shared with
/// the search and its length in characters current.
struct Sliding<'p> {
    profile: &'p GramProfile,
    have: Vec<u32>,
    shared: usize,
    chars: usize,
}

impl Sliding<'_> {
    fn add(&mut self, hay: &LineGrams<'_>, i: usize) {
        for &g in hay.line_grams(i) {
            let g = (g >> self.profile.shift) as usize;
            if self.have[g] < self.profile.want[g] {
                self.shared += 1;
            }
            self.have[g] += 1;
        }
        self.chars += hay.chars[i];
    }

    fn remove(&mut self, hay: &LineGrams<'_>, i: usize) {
        for &g in hay.line_grams(i) {
            let g = (g >> self.profile.shift) as usize;
            self.have[g] -= 1;
            if self.have[g] < self.profile.want[g] {
                self.shared -= 1;
            }
        }
        self.chars -= hay.chars[i];
    }
}

/// The windows of `hay` starting in `starts` whose bound on their score
/// against `search` (the length difference and the q-gram lemma: an edit
/// destroys at most `Q` of the search's grams) reaches [`REPORT_FLOOR`],
/// as `(bound, start)`, highest bound first.
fn bounded_starts(
    hay: &LineGrams<'_>,
    search: &[String],
    starts: std::ops::Range<usize>,
) -> Vec<(f64, usize)> {
    let m = search.len();
    let a: usize = search.iter().map(|l| l.chars().count()).sum::<usize>() + m - 1;
    let profile = GramProfile::new(search);
    let mut window = Sliding {
        profile: &profile,
        have: vec![0u32; profile.want.len()],
        shared: 0,
        chars: 0,
    };
    for i in starts.start..starts.start + m {
        window.add(hay, i);
    }
    let mut bounds: Vec<(f64, usize)> = Vec::new();
    for k in starts.clone() {
        if k > starts.start {
            window.remove(hay, k - 1);
            window.add(hay, k + m - 1);
        }
        let w = window.chars + m - 1;
        let max = a.max(w).max(1);
        let by_grams = profile.total.saturating_sub(window.shared).div_ceil(Q);
        let by_len = a.abs_diff(w);
        let upper = 1.0 - by_grams.max(by_len) as f64 / max as f64;
        if upper >= REPORT_FLOOR {
            bounds.push((upper, k));
        }
    }
    bounds.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)));
    bounds
}

/// Finds the windows of `hay` most similar to `search` (normalized lines),
/// and every non-overlapping rival within `margin` of the best.
///
/// `range` limits window starts (for searches after an anchor).
pub fn best_windows(
    hay: &LineGrams<'_>,
    search: &[String],
    margin: f64,
    range: std::ops::Range<usize>,
    budget: Budget,
) -> WindowSearch {
    let m = search.len();
    let Some(starts) = window_starts(hay.len(), m, range) else {
        return WindowSearch::default();
    };
    let mut ranking = Ranking::new(hay, search, margin, budget);
    // Best bound first: once a bound is below the floor, so are the rest.
    for (upper, k) in bounded_starts(hay, search, starts) {
        if upper < ranking.floor() {
            break;
        }
        ranking.try_window(k, m);
        if ranking.exhausted {
            break;
        }
    }
    ranking.finish()
}

/// Whether a line is distinctive enough to anchor a window: it holds at
/// least three letters or digits.
fn distinctive(line: &str) -> bool {
    line.chars().filter(|c| c.is_alphanumeric()).count() >= 3
}

/// The distinctive search lines and where each occurs in the file: one
/// hash join of the search against the file.
struct Anchors<'s> {
    /// Each distinctive search line, with its positions in the search.
    wanted: rustc_hash::FxHashMap<&'s str, Vec<usize>>,
    /// Each of those lines found in the file, with its positions there.
    hits: rustc_hash::FxHashMap<&'s str, Vec<usize>>,
}

impl<'s> Anchors<'s> {
    fn find(hay: &LineGrams<'_>, search: &'s [String]) -> Self {
        let mut wanted: rustc_hash::FxHashMap<&str, Vec<usize>> = Default::default();
        for (j, l) in search.iter().enumerate() {
            if distinctive(l) {
                wanted.entry(l.as_str()).or_default().push(j);
            }
        }
        let mut hits: rustc_hash::FxHashMap<&str, Vec<usize>> = Default::default();
        for p in 0..hay.len() {
            if let Some((k, _)) = wanted.get_key_value(hay.line(p)) {
                hits.entry(k).or_default().push(p);
            }
        }
        Anchors { wanted, hits }
    }

    /// Window starts in `within` that put an anchor within `slack` lines
    /// of its place in the search, best supported first (an anchor exactly
    /// in place counts double), so a spent budget leaves out the least
    /// likely.
    fn starts(&self, slack: isize, within: &std::ops::Range<usize>) -> Vec<usize> {
        let mut support: rustc_hash::FxHashMap<usize, u32> = Default::default();
        for (line, ps) in &self.hits {
            if ps.len() > MAX_ANCHOR_HITS {
                continue;
            }
            for &j in &self.wanted[line] {
                for &p in ps {
                    let base = p as isize - j as isize;
                    for d in -slack..=slack {
                        let k = base + d;
                        if k >= within.start as isize && k < within.end as isize {
                            *support.entry(k as usize).or_default() += if d == 0 { 2 } else { 1 };
                        }
                    }
                }
            }
        }
        let mut v: Vec<(usize, u32)> = support.into_iter().collect();
        v.sort_unstable_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
        v.into_iter().map(|(k, _)| k).collect()
    }
}

/// Scores every anchored window (see the module doc) of `hay` against
/// `search` and returns the best with its non-overlapping rivals within
/// `margin`. `range` limits window starts.
pub fn anchored_windows(
    hay: &LineGrams<'_>,
    search: &[String],
    margin: f64,
    range: std::ops::Range<usize>,
    budget: Budget,
) -> WindowSearch {
    let m = search.len();
    let n = hay.len();
    let Some(within) = window_starts(n, m, range) else {
        return WindowSearch::default();
    };
    let anchors = Anchors::find(hay, search);
    let mut ranking = Ranking::new(hay, search, margin, budget);
    for k in anchors.starts(ANCHOR_SLACK as isize, &within) {
        ranking.try_window(k, m);
    }
    // A model that dropped or invented a line: every anchored region is
    // also tried one line longer and shorter, so rivals of any size count.
    // Those windows absorb one line of shift themselves, so they are tried
    // within one line of each anchor.
    for k in anchors.starts(1, &within) {
        for len in [m + 1, m.wrapping_sub(1)] {
            if len < 2 || len > m + 1 || k + len > n || (len < m && m < 3) {
                continue;
            }
            ranking.try_window(k, len);
        }
    }
    ranking.finish()
}

/// Tokens of a line that carry meaning: runs of letters, digits and `_`
/// (names, numbers, words in literals), and runs of operator characters
/// (`+`, `<=`, `->`, `!=`). Brackets, quotes, commas, semicolons and spaces
/// are left out: models drift in those without meaning anything.
fn words(line: &str) -> Vec<&str> {
    const OPS: &str = "+-*/%<>=!&|^~";
    let class = |c: char| {
        if c.is_alphanumeric() || c == '_' {
            1
        } else if OPS.contains(c) {
            2
        } else {
            0
        }
    };
    let mut out = Vec::new();
    let mut start: Option<(usize, u8)> = None;
    for (i, c) in line.char_indices() {
        let k = class(c);
        match start {
            Some((s, sk)) if sk == k => {
                let _ = s;
            }
            Some((s, _)) => {
                out.push(&line[s..i]);
                start = (k != 0).then_some((i, k));
            }
            None if k != 0 => start = Some((i, k)),
            None => {}
        }
    }
    if let Some((s, _)) = start {
        out.push(&line[s..]);
    }
    out
}

/// Whether a (trimmed) line starts like a comment in a common language.
pub(crate) fn is_comment(line: &str) -> bool {
    ["//", "#", "/*", "*", "--", ";", "<!--", "%"]
        .iter()
        .any(|p| line.starts_with(p))
}

/// Meaningful differences between a search and a similar window: search
/// tokens (identifiers, numbers, words in string literals) that the window
/// lacks at that position but that exist elsewhere in the file, and any
/// operator that differs.
///
/// Model drift misspells (`compute_totals`, which names nothing) or
/// reformats; a near-identical *other* region differs in names and values
/// the file really has (`ImplGenerics` vs `TypeGenerics`, `[T; 9]` vs
/// `[T; 21]`, `"true"` and `"false"` swapped). Both look alike to an edit
/// distance, so the similarity pass refuses a window with any such token.
/// Lines that are comments on both sides are exempt: reworded comments are
/// common, harmless drift.
///
/// `file_has(token)` tells whether the token occurs in the file outside the
/// window's immediate surroundings.
pub fn meaningful_differences<'s>(
    search: &'s [String],
    window: &[&'s str],
    file_has: impl Fn(&str) -> bool,
) -> Vec<&'s str> {
    use crate::diff::{DiffOp, line_ops};
    let s: Vec<&str> = search.iter().map(String::as_str).collect();
    let line_ops = line_ops(&s, window);
    // Reworded comments are forgiven only in a block anchored by at least
    // one identical code line; a block of comments alone has no anchor.
    let anchored = line_ops.iter().any(|op| match *op {
        DiffOp::Equal { old_index, len, .. } => search[old_index..old_index + len]
            .iter()
            .any(|l| !l.trim().is_empty() && !is_comment(l)),
        _ => false,
    });
    let mut found = Differences {
        file_has,
        forgive_comments: anchored,
        tokens: Vec::new(),
    };
    for op in line_ops {
        match op {
            DiffOp::Equal { .. } | DiffOp::Insert { .. } => {}
            DiffOp::Delete {
                old_index, old_len, ..
            } => {
                for sl in &search[old_index..old_index + old_len] {
                    found.compare_lines(sl, "");
                }
            }
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                // Paired line by line; a side that runs out pairs with
                // nothing.
                for k in 0..old_len.max(new_len) {
                    let sl = if k < old_len {
                        search[old_index + k].as_str()
                    } else {
                        ""
                    };
                    let wl = if k < new_len {
                        window[new_index + k]
                    } else {
                        ""
                    };
                    found.compare_lines(sl, wl);
                }
            }
        }
    }
    found.tokens
}

/// The meaningful tokens found so far as [`meaningful_differences`]
/// compares a search with a window line by line.
struct Differences<'s, F> {
    /// Whether the file has a token outside the window's surroundings.
    file_has: F,
    /// Whether lines that are comments on both sides are passed over.
    forgive_comments: bool,
    /// The tokens found, each once, in the order found.
    tokens: Vec<&'s str>,
}

impl<'s, F: Fn(&str) -> bool> Differences<'s, F> {
    fn flag(&mut self, t: &'s str) {
        if !self.tokens.contains(&t) {
            self.tokens.push(t);
        }
    }

    /// Compares a search line with the window line in its place (`""`
    /// where either side has none).
    fn compare_lines(&mut self, sl: &'s str, wl: &'s str) {
        if self.forgive_comments && is_comment(sl) && is_comment(wl) {
            return;
        }
        let ts = words(sl);
        let tw = words(wl);
        if let Some(pairs) = slipped_pairs(&ts, &tw) {
            for (t, _) in pairs {
                if (self.file_has)(t) {
                    self.flag(t);
                }
            }
            return;
        }
        self.compare_tokens(&ts, &tw);
    }

    /// Compares the tokens of two lines that are no typing slip of each
    /// other.
    fn compare_tokens(&mut self, ts: &[&'s str], tw: &[&'s str]) {
        use crate::diff::DiffOp;
        for op in crate::diff::line_ops(ts, tw) {
            match op {
                DiffOp::Equal { .. } => {}
                // The window has a token where the search has none: the
                // search does not describe this line.
                DiffOp::Insert {
                    new_index, new_len, ..
                } => {
                    for &t in &tw[new_index..new_index + new_len] {
                        self.flag(t);
                    }
                }
                DiffOp::Delete {
                    old_index, old_len, ..
                }
                | DiffOp::Replace {
                    old_index, old_len, ..
                } => {
                    for &t in &ts[old_index..old_index + old_len] {
                        // A misspelt name names nothing in the file; a
                        // different operator is never a typo.
                        if !is_word(t) || (self.file_has)(t) {
                            self.flag(t);
                        }
                    }
                }
            }
        }
    }
}

/// Whether a token is a word (a name, a number, a word in a literal)
/// rather than an operator.
fn is_word(t: &str) -> bool {
    t.starts_with(|c: char| c.is_alphanumeric() || c == '_')
}

/// Whether two letters are neighbouring keys on a QWERTY keyboard (side
/// by side in a row, or touching in the rows above and below).
fn neighbour_keys(a: char, b: char) -> bool {
    const ROWS: [&str; 3] = ["qwertyuiop", "asdfghjkl", "zxcvbnm"];
    let at = |c: char| {
        let c = c.to_ascii_lowercase();
        ROWS.iter()
            .enumerate()
            .find_map(|(r, row)| row.find(c).map(|i| (r, i)))
    };
    let (Some((ra, ia)), Some((rb, ib))) = (at(a), at(b)) else {
        return false;
    };
    // Each row sits half a key to the right of the one above it: key `i`
    // of a row touches keys `i` and `i + 1` of the row above.
    match (ra as isize - rb as isize, ia as isize - ib as isize) {
        (0, d) => d.abs() == 1,
        (1, d) => d == 0 || d == -1,
        (-1, d) => d == 0 || d == 1,
        _ => false,
    }
}

/// The fewest typing slips that turn `file` into `search`: a character
/// dropped, a character doubled or a neighbouring key struck beside it, a
/// neighbouring key struck instead, or two neighbours swapped (a case
/// change counts as a key struck instead). A character inserted far from
/// the keys beside it, or struck for a key far from it (`min` for `max`,
/// `get` for `set`), is no slip: `None`.
fn slip_distance(search: &str, file: &str) -> Option<usize> {
    let s: Vec<char> = search.chars().collect();
    let f: Vec<char> = file.chars().collect();
    const FAR: usize = usize::MAX / 4;
    // d[i][j]: slips turning f[..i] into s[..j].
    let mut d = vec![vec![FAR; s.len() + 1]; f.len() + 1];
    d[0][0] = 0;
    for i in 0..=f.len() {
        for j in 0..=s.len() {
            let mut best = d[i][j];
            if i > 0 {
                best = best.min(d[i - 1][j] + 1);
            }
            if j > 0 {
                let beside = |c: Option<&char>| {
                    c.is_some_and(|&c| c == s[j - 1] || neighbour_keys(c, s[j - 1]))
                };
                if beside(j.checked_sub(2).and_then(|k| s.get(k))) || beside(s.get(j)) {
                    best = best.min(d[i][j - 1] + 1);
                }
            }
            if i > 0 && j > 0 {
                let (a, b) = (f[i - 1], s[j - 1]);
                let cost = if a == b {
                    0
                } else if a.eq_ignore_ascii_case(&b) || neighbour_keys(a, b) {
                    1
                } else {
                    FAR
                };
                best = best.min(d[i - 1][j - 1] + cost);
            }
            if i > 1 && j > 1 && f[i - 1] == s[j - 2] && f[i - 2] == s[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    let n = d[f.len()][s.len()];
    (n < FAR).then_some(n)
}

/// How many slips turn the file's token `file` into the search's `search`,
/// if that is what happened: both are words without digits (`u16` and
/// `i16` are two types, and a number that differs is another number), the
/// file's of three or more characters, and they are at most two slips apart
/// ([`slip_distance`]). A name of four or more letters may also be two
/// character edits of any kind apart (`compute_totals`): a short word
/// struck for a far key is more often another word (`min`, `max`).
fn slip_pair(search: &str, file: &str) -> Option<usize> {
    let digits = |t: &str| t.chars().any(|c| c.is_ascii_digit());
    if search == file
        || !is_word(search)
        || !is_word(file)
        || file.chars().count() < 3
        || digits(search)
        || digits(file)
    {
        return None;
    }
    let name = |t: &str| t.chars().count() >= 4 && t.chars().all(|c| c.is_alphabetic() || c == '_');
    let d = slip_distance(search, file)
        .filter(|&d| d <= 2)
        .or_else(|| {
            (name(search) && name(file))
                .then(|| rapidfuzz::distance::levenshtein::distance(search.chars(), file.chars()))
        })?;
    (d <= 2).then_some(d)
}

/// The slips a model's copy of a window makes, if that is all it makes:
/// the search and the window have the same lines except one, and there
/// they have the same tokens except one or two words, two slips at most in
/// all (`slip_pair`). Returns the search's spellings of those words. An
/// operator, a number or a third difference is never a slip.
pub fn slips<'s>(search: &'s [String], window: &[&str]) -> Option<Vec<&'s str>> {
    if search.len() != window.len() {
        return None;
    }
    let mut differing = search.iter().zip(window).filter(|(s, w)| s.as_str() != **w);
    let (s, w) = differing.next()?;
    if differing.next().is_some() {
        return None;
    }
    let (ts, tw) = (words(s), words(w));
    if ts.len() != tw.len() {
        return None;
    }
    let mut total = 0;
    let mut out = Vec::new();
    for (a, b) in ts.iter().zip(&tw).filter(|(a, b)| a != b) {
        total += slip_pair(a, b)?;
        out.push(*a);
    }
    (!out.is_empty() && out.len() <= 2 && total <= 2).then_some(out)
}

/// A slip a short search makes ([`clean_slip`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slip<'s> {
    /// The line of the search (and of the window) the slip is in.
    pub line: usize,
    /// The search's spellings of the slipped words.
    pub words: Vec<&'s str>,
    /// Where the slipped words stand among the line's tokens.
    pub at: Vec<usize>,
}

/// The slips of [`slips`], judged as strictly as a short search needs,
/// where one line is most of what places it: besides the slipped words
/// the line is the window's character for character (the same brackets,
/// quotes and spacing between its words); it has two words, or one that
/// is evidently a name (a line of one keyword, `end`, `else:` or
/// `return;`, says too little to be placed by). `None` otherwise.
pub fn clean_slip<'s>(search: &'s [String], window: &[&str]) -> Option<Slip<'s>> {
    let slipped = slips(search, window)?;
    let line = (0..search.len()).find(|&j| search[j] != window[j])?;
    let (s, w) = (search[line].as_str(), window[line]);
    let (ts, tw) = (words(s), words(w));
    let names: Vec<&str> = tw.iter().copied().filter(|t| is_word(t)).collect();
    let placed = names.len() >= 2 || names.iter().any(|t| evident_name(t));
    let at = (0..ts.len()).filter(|&k| ts[k] != tw[k]).collect();
    (placed && gaps(s, &ts) == gaps(w, &tw)).then_some(Slip {
        line,
        words: slipped,
        at,
    })
}

/// Whether `other`, a window of the search's size, differs from the
/// search only where `slip` does: in the slipped line, at the slipped
/// words. Such a window is a twin of the slipped one, another spelling
/// the same slip could have been made from.
pub fn differs_only_at(search: &[String], other: &[&str], slip: &Slip<'_>) -> bool {
    if search.len() != other.len() {
        return false;
    }
    let lines_agree = (0..search.len()).all(|k| k == slip.line || search[k] == other[k]);
    let (ts, to) = (words(&search[slip.line]), words(other[slip.line]));
    lines_agree
        && ts.len() == to.len()
        && (0..ts.len()).all(|k| slip.at.contains(&k) || ts[k] == to[k])
}

/// Whether a word is evidently a name, not a keyword: it has an `_`, a
/// digit, or a capital after its first letter (`pre_init`, `isPlainObject`),
/// as no keyword of a common language does.
fn evident_name(t: &str) -> bool {
    t.contains('_')
        || t.chars().any(|c| c.is_ascii_digit())
        || t.chars().skip(1).any(char::is_uppercase)
}

/// The text of `line` around its tokens: before the first, between each
/// two, and after the last.
fn gaps<'a>(line: &'a str, tokens: &[&'a str]) -> Vec<&'a str> {
    let mut out = Vec::with_capacity(tokens.len() + 1);
    let mut at = 0;
    for t in tokens {
        let start = t.as_ptr() as usize - line.as_ptr() as usize;
        out.push(&line[at..start]);
        at = start + t.len();
    }
    out.push(&line[at..]);
    out
}

/// The token pairs of two lines that differ, paired by position, when the
/// lines have as many tokens and every difference could be a slip
/// (`slip_pair`): a slipped word then stands against the word it
/// misspells, not against whatever a token diff lines it up with
/// (`Nnoe, None` against `None, None` is one slip, not a missing `None`).
fn slipped_pairs<'a, 'b>(ts: &[&'a str], tw: &[&'b str]) -> Option<Vec<(&'a str, &'b str)>> {
    if ts.len() != tw.len() {
        return None;
    }
    let pairs: Vec<(&str, &str)> = ts
        .iter()
        .zip(tw)
        .filter(|(a, b)| a != b)
        .map(|(a, b)| (*a, *b))
        .collect();
    pairs
        .iter()
        .all(|(a, b)| slip_pair(a, b).is_some())
        .then_some(pairs)
}

/// How far a window line is from a search line, counted in character
/// edits on the tokens where they differ: `None` when their tokens do not
/// pair one for one (they differ in more than spelling).
pub fn token_edits(search: &str, line: &str) -> Option<usize> {
    if search == line {
        return Some(0);
    }
    let (ts, tl) = (words(search), words(line));
    if ts.len() != tl.len() {
        return None;
    }
    Some(
        ts.iter()
            .zip(&tl)
            .filter(|(a, b)| a != b)
            .map(|(a, b)| rapidfuzz::distance::levenshtein::distance(a.chars(), b.chars()))
            .sum(),
    )
}

/// The total [`token_edits`] from the search to a window, or `None` when a
/// line does not pair.
pub fn window_edits(search: &[String], window: &[&str]) -> Option<usize> {
    if search.len() != window.len() {
        return None;
    }
    search
        .iter()
        .zip(window)
        .map(|(s, w)| token_edits(s, w))
        .sum()
}

/// Whether `token` occurs as a whole token in any of `lines`.
pub fn has_word<'a>(mut lines: impl Iterator<Item = &'a str>, token: &str) -> bool {
    lines.any(|l| l.contains(token) && words(l).contains(&token))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(s: &str) -> Vec<String> {
        s.lines().map(str::to_owned).collect()
    }

    #[test]
    fn meaningful_differences_spot_twins_not_typos() {
        let file = [
            "struct ImplGenerics;",
            "struct TypeGenerics;",
            "let t = compute_total(x);",
        ];
        let has = |t: &str| file.iter().any(|l| words(l).contains(&t));
        let twin = vec!["struct ImplGenerics;".to_owned()];
        assert_eq!(
            meaningful_differences(&twin, &["struct TypeGenerics;"], has),
            vec!["ImplGenerics"]
        );
        let typo = vec!["let t = compute_totals(x);".to_owned()];
        assert!(meaningful_differences(&typo, &["let t = compute_total(x);"], has).is_empty());
        let anchored = vec![
            "// compute the struct".to_owned(),
            "let t = compute_total(x);".to_owned(),
        ];
        assert!(
            meaningful_differences(
                &anchored,
                &["// struct compute", "let t = compute_total(x);"],
                has
            )
            .is_empty()
        );
        let lone_comment = vec!["// compute the struct".to_owned()];
        assert!(!meaningful_differences(&lone_comment, &["// struct compute"], has).is_empty());
    }

    #[test]
    fn slips_in_one_line() {
        let s = lines("let total = compute_totl(items);\nreturn total;");
        let w = ["let total = compute_total(items);", "return total;"];
        assert_eq!(slips(&s, &w), Some(vec!["compute_totl"]));
        let s = lines("let total = computte(items);\nreturn total;");
        let w = ["let total = compute(items);", "return total;"];
        assert_eq!(slips(&s, &w), Some(vec!["computte"]));
        let digit = lines("let total = item1;\nreturn total;");
        assert_eq!(
            slips(&digit, &["let total = item2;", "return total;"]),
            None
        );
        // One slip in each of two words, short words included; a swap of
        // neighbours is one slip.
        let two = lines("let totl = cmopute(items);\nreturn total;");
        assert_eq!(slips(&two, &w), Some(vec!["totl", "cmopute"]));
        let short = lines("# teh end of teh list\nreturn total;");
        assert_eq!(
            slips(&short, &["# the end of the list", "return total;"]),
            Some(vec!["teh", "teh"])
        );
        // Three slips, an operator, or a second line: not slips.
        let three = lines("let totl = cmoptue(items);\nreturn total;");
        assert_eq!(slips(&three, &w), None);
        let op = lines("let total = compute(items) - 1;\nreturn total;");
        assert_eq!(
            slips(&op, &["let total = compute(items) + 1;", "return total;"]),
            None
        );
        let lines2 = lines("let totl = compute(items);\nreturn totl;");
        assert_eq!(slips(&lines2, &w), None);
    }

    #[test]
    fn slips_are_typing_slips() {
        assert_eq!(slip_distance("teh", "the"), Some(1));
        assert_eq!(slip_distance("thhe", "the"), Some(1));
        assert_eq!(slip_distance("th", "the"), Some(1));
        assert_eq!(slip_distance("thw", "the"), Some(1));
        assert_eq!(slip_distance("defl", "self"), Some(2));
        assert_eq!(slip_distance("max", "min"), None);
        assert_eq!(slip_distance("get", "set"), None);
        assert_eq!(slip_distance("thew", "the"), Some(1));
        assert_eq!(slip_distance("thex", "the"), None);
        assert_eq!(slip_pair("max", "min"), None);
        assert_eq!(slip_pair("u16", "i16"), None);
        assert_eq!(slip_pair("compute_totals", "compute_total"), Some(1));
    }

    #[test]
    fn a_slip_pairs_with_the_word_it_misspells() {
        let file = ["username, password = None, None", "x = None"];
        let has = |t: &str| file.iter().any(|l| words(l).contains(&t));
        let search = vec!["username, password = Nnoe, None".to_owned()];
        assert!(
            meaningful_differences(&search, &["username, password = None, None"], has).is_empty()
        );
        // A different number is still a difference, whatever its position.
        let search = vec!["let t = [T; 9]".to_owned()];
        assert_eq!(
            meaningful_differences(&search, &["let t = [T; 21]"], |_| true),
            vec!["9"]
        );
    }

    #[test]
    fn operators_are_meaningful() {
        assert_eq!(
            words("if a<=b { x += 1; }"),
            vec!["if", "a", "<=", "b", "x", "+=", "1"]
        );
        let search = vec!["return a - b".to_owned()];
        assert_eq!(
            meaningful_differences(&search, &["return a + b"], |_| true),
            vec!["-"]
        );
    }

    #[test]
    fn scores_match_direct_levenshtein() {
        assert!((similarity("abcd", "abce") - 0.75).abs() < 1e-9);
        assert_eq!(similarity("", ""), 1.0);
    }

    #[test]
    fn finds_drifted_window_and_rival() {
        let hay_lines = lines(
            "fn a() {\nlet x = compute_total(items);\nreturn x;\n}\nfn b() {\nlet y = 2;\n}\nfn c() {\nlet x = compute_total(items);\nreturn x;\n}",
        );
        let hay = LineGrams::new(hay_lines.into_iter().map(Into::into).collect());
        let search = lines("let x = compute_totals(items);\nreturn x;");
        let found = best_windows(&hay, &search, 0.05, 0..usize::MAX, Budget::new(u64::MAX));
        let best = found.best.unwrap();
        assert!(best.score > 0.9);
        assert_eq!(found.rivals.len(), 1);
        let starts = [best.start, found.rivals[0].start];
        assert!(starts.contains(&1) && starts.contains(&8));
    }

    #[test]
    fn bound_never_prunes_the_true_best() {
        // Exhaustive comparison on a small input.
        let hay_lines: Vec<String> = (0..60)
            .map(|i| format!("value_{} = compute({}, {})", i % 7, i, i * 3 % 11))
            .collect();
        let hay = LineGrams::new(hay_lines.iter().map(|l| l.as_str().into()).collect());
        let search: Vec<String> = hay_lines[20..24]
            .iter()
            .map(|l| l.replace("compute", "computer"))
            .collect();
        let found = best_windows(&hay, &search, 0.0, 0..usize::MAX, Budget::new(u64::MAX));
        let exhaustive = (0..=hay_lines.len() - 4)
            .map(|k| similarity(&hay_lines[k..k + 4].join("\n"), &search.join("\n")))
            .fold(0.0f64, f64::max);
        assert!((found.best.unwrap().score - exhaustive).abs() < 1e-9);
    }
}
