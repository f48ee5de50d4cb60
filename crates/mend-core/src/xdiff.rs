//! git's line diff, step for step, so that a merge pairs repeated lines
//! exactly as `git merge-file` does.
//!
//! When a line repeats, several minimal diffs exist, and which one a diff
//! picks decides where a merge draws its conflicts. A generic Myers
//! implementation breaks those ties its own way; this one follows xdiff's
//! algorithm as git runs it for `merge-file` (Myers, no indent heuristic):
//!
//! 1. **prepare**: lines become class ids; the common head and tail are
//!    trimmed; a line that occurs nowhere in the other file is changed
//!    outright, and a line that occurs there at least √n times (a blank
//!    line, a brace) is set aside too when it sits in a run dominated by
//!    unmatched lines;
//! 2. **compare**: divide and conquer on the remaining lines with Myers'
//!    middle snake, forward and backward, ties resolved as xdiff resolves
//!    them, and xdiff's cut-offs (a good snake past cost 256, the furthest
//!    reaching path past √(n+m)) for expensive inputs;
//! 3. **compact**: each group of changed lines slides as far up as it can,
//!    then down, merging with neighbours, and settles where it lines up
//!    with a change in the other file if it can.
//!
//! The facts are git's (xdiff/xprepare.c, xdiffi.c); the code is written
//! here, in the crate's terms.
//!
//! `mend-merge` merges by it, and every diff mend shows a person is cut
//! from it ([`crate::diff::render_file`]), so a hunk is the same hunk in a
//! dry run, a pending session, a turn and `git diff`.

use rustc_hash::FxHashMap;

/// One change of a side against the base: base lines `b..b + blen`
/// became side lines `s..s + slen`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Change {
    /// First base line changed.
    pub b: usize,
    /// How many base lines.
    pub blen: usize,
    /// First side line replacing them.
    pub s: usize,
    /// How many side lines.
    pub slen: usize,
}

/// Lines occurring at least this often in the other file (or √n, if
/// smaller) may be set aside as too common to anchor the diff.
const MAX_EQLIMIT: usize = 1024;
/// How far a run of unmatched and common lines is scanned each way.
const SIMSCAN_WINDOW: usize = 100;
/// A common line is set aside when unmatched lines outnumber common ones
/// this many times over (counting the line itself twice, as git does).
const KPDIS_RUN: usize = 4;
/// The cost below which the search is never cut short.
const MAX_COST_MIN: usize = 256;
/// The cost past which a long enough snake ends the search.
const HEUR_MIN_COST: usize = 256;
/// How long a snake must be to count as good.
const SNAKE_CNT: usize = 20;
/// How much better than the cost a snake's reach must be.
const K_HEUR: isize = 4;

/// git's integer square-root approximation (a power of two).
fn bogosqrt(mut n: usize) -> usize {
    let mut i = 1;
    while n > 0 {
        i <<= 1;
        n >>= 2;
    }
    i
}

/// The changes that turn `before` into `after`, as git's diff finds them.
pub fn diff(before: &[&[u8]], after: &[&[u8]]) -> Vec<Change> {
    settled_by_ends(before, after).unwrap_or_else(|| full(before, after))
}

/// How many line pairs [`settled_by_ends`] compares at most before it
/// leaves a change to the whole algorithm.
const MAX_PAIRS: usize = 4096;

/// The diff without its algorithm, where the common head and tail settle
/// it: when the lines between them share no line (one side empty, or
/// every line replaced, as most edits are), git's diff is that one change,
/// where the trimming left it. Nothing in between can match, so every
/// line there is changed; a group that slides while compacting comes back
/// to line up with the other side's, and an insertion or deletion (which
/// has nothing to line up with) rests as low as it can slide, which is
/// where it is, the head being as long as it can be. `None` when lines
/// in between match: the full algorithm decides where.
///
/// Skipping the line classes matters for large files: one edit of a
/// 1,000-line file is diffed for every apply's report.
fn settled_by_ends(before: &[&[u8]], after: &[&[u8]]) -> Option<Vec<Change>> {
    let (start, end1, end2) = trim_ends(before, after);
    let one = &before[start..end1];
    let two = &after[start..end2];
    if one.is_empty() && two.is_empty() {
        return Some(Vec::new());
    }
    if one.len().saturating_mul(two.len()) > MAX_PAIRS || one.iter().any(|l| two.contains(l)) {
        return None;
    }
    Some(vec![Change {
        b: start,
        blen: one.len(),
        s: start,
        slen: two.len(),
    }])
}

/// [`diff`] by git's whole algorithm.
fn full(before: &[&[u8]], after: &[&[u8]]) -> Vec<Change> {
    let mut classes = Classes::default();
    let mut one = Side::new(classes.add(before, 0));
    let mut two = Side::new(classes.add(after, 1));
    let (start, end1, end2) = trim_ends(&one.ids, &two.ids);
    one.reduce(start, end1, &classes.counts, 1);
    two.reduce(start, end2, &classes.counts, 0);
    let (mut changed1, mut changed2) = (
        std::mem::take(&mut one.changed),
        std::mem::take(&mut two.changed),
    );
    Compare::new(&one, &two).run(&mut changed1, &mut changed2);
    compact(&one.ids, &mut changed1, &mut changed2);
    compact(&two.ids, &mut changed2, &mut changed1);
    script(&changed1, &changed2)
}

/// Equal lines share a class id; each class counts its lines per file.
#[derive(Default)]
struct Classes<'a> {
    ids: FxHashMap<&'a [u8], usize>,
    counts: Vec<[usize; 2]>,
}

impl<'a> Classes<'a> {
    fn add(&mut self, lines: &[&'a [u8]], side: usize) -> Vec<usize> {
        lines
            .iter()
            .map(|&l| {
                let next = self.counts.len();
                let id = *self.ids.entry(l).or_insert(next);
                if id == next {
                    self.counts.push([0, 0]);
                }
                self.counts[id][side] += 1;
                id
            })
            .collect()
    }
}

/// One file: its lines' class ids, which are changed (with a sentinel
/// `false` before the first and after the last), and the lines left for
/// Myers after preparation.
struct Side {
    ids: Vec<usize>,
    changed: Vec<bool>,
    /// Class ids of the lines the comparison sees.
    kept: Vec<usize>,
    /// Their line numbers.
    index: Vec<usize>,
}

impl Side {
    fn new(ids: Vec<usize>) -> Side {
        let n = ids.len();
        Side {
            ids,
            changed: vec![false; n + 2],
            kept: Vec::new(),
            index: Vec::new(),
        }
    }

    fn mark(&mut self, line: usize) {
        self.changed[line + 1] = true;
    }

    /// Keeps the lines of `start..end` worth comparing; a line with no
    /// match in the other file is changed, and so is a very common one in
    /// a run of unmatched lines.
    fn reduce(&mut self, start: usize, end: usize, counts: &[[usize; 2]], other: usize) {
        let limit = bogosqrt(self.ids.len()).min(MAX_EQLIMIT);
        // 0: no match, 1: some, 2: very common.
        let kind: Vec<u8> = (start..end)
            .map(|i| match counts[self.ids[i]][other] {
                0 => 0,
                m if m >= limit => 2,
                _ => 1,
            })
            .collect();
        for (k, i) in (start..end).enumerate() {
            let keep = kind[k] == 1 || (kind[k] == 2 && !set_aside(&kind, k));
            if keep {
                self.kept.push(self.ids[i]);
                self.index.push(i);
            } else {
                self.mark(i);
            }
        }
    }
}

/// The common head's length and each file's end before the common tail.
fn trim_ends<T: PartialEq>(a: &[T], b: &[T]) -> (usize, usize, usize) {
    let lim = a.len().min(b.len());
    let start = (0..lim).find(|&i| a[i] != b[i]).unwrap_or(lim);
    let rest = lim - start;
    let tail = (0..rest)
        .find(|&i| a[a.len() - 1 - i] != b[b.len() - 1 - i])
        .unwrap_or(rest);
    (start, a.len() - tail, b.len() - tail)
}

/// Whether a very common line at `i` sits in a run that unmatched lines
/// dominate on both sides (git's `xdl_clean_mmatch`).
fn set_aside(kind: &[u8], i: usize) -> bool {
    let s = i.saturating_sub(SIMSCAN_WINDOW);
    let e = (i + SIMSCAN_WINDOW).min(kind.len() - 1);
    let (unmatched_before, common_before) = run_of(kind[s..i].iter().rev());
    if unmatched_before == 0 {
        return false;
    }
    let (unmatched_after, common_after) = run_of(kind[i + 1..=e].iter());
    if unmatched_after == 0 {
        return false;
    }
    // git counts the line itself on both sides.
    let common = common_before + common_after + 2;
    common * KPDIS_RUN < common + unmatched_before + unmatched_after
}

/// The unmatched and the very common lines of a run, up to the first line
/// with a few matches.
fn run_of<'k>(kinds: impl Iterator<Item = &'k u8>) -> (usize, usize) {
    let (mut unmatched, mut common) = (0, 0);
    for &k in kinds {
        match k {
            0 => unmatched += 1,
            2 => common += 1,
            _ => break,
        }
    }
    (unmatched, common)
}

/// A split point of a box, and whether each half must be solved minimally.
struct Split {
    i1: isize,
    i2: isize,
    min_lo: bool,
    min_hi: bool,
}

impl Split {
    /// Where the two searches met: both halves are solved minimally.
    fn minimal(i1: isize, i2: isize) -> Split {
        Split {
            i1,
            i2,
            min_lo: true,
            min_hi: true,
        }
    }
}

/// Myers' comparison of the kept lines, by divide and conquer.
struct Compare<'s> {
    a: &'s [usize],
    b: &'s [usize],
    index_a: &'s [usize],
    index_b: &'s [usize],
    /// Furthest reach on each diagonal, forward and backward; diagonal `d`
    /// is at `d + offset`.
    forward: Vec<isize>,
    backward: Vec<isize>,
    offset: isize,
    max_cost: usize,
}

impl<'s> Compare<'s> {
    fn new(one: &'s Side, two: &'s Side) -> Compare<'s> {
        let diagonals = one.kept.len() + two.kept.len() + 3;
        Compare {
            a: &one.kept,
            b: &two.kept,
            index_a: &one.index,
            index_b: &two.index,
            forward: vec![0; diagonals],
            backward: vec![0; diagonals],
            offset: two.kept.len() as isize + 1,
            max_cost: bogosqrt(diagonals).max(MAX_COST_MIN),
        }
    }

    /// Marks the changed lines of both files. Boxes are kept on a stack
    /// rather than recursed into, so a long diff cannot exhaust the stack.
    fn run(&mut self, changed_a: &mut [bool], changed_b: &mut [bool]) {
        let mut boxes = vec![(0, self.a.len() as isize, 0, self.b.len() as isize, false)];
        while let Some((mut off1, mut lim1, mut off2, mut lim2, need_min)) = boxes.pop() {
            let (a, b) = (self.a, self.b);
            while off1 < lim1 && off2 < lim2 && a[off1 as usize] == b[off2 as usize] {
                off1 += 1;
                off2 += 1;
            }
            while off1 < lim1 && off2 < lim2 && a[lim1 as usize - 1] == b[lim2 as usize - 1] {
                lim1 -= 1;
                lim2 -= 1;
            }
            if off1 == lim1 {
                for k in off2..lim2 {
                    changed_b[self.index_b[k as usize] + 1] = true;
                }
            } else if off2 == lim2 {
                for k in off1..lim1 {
                    changed_a[self.index_a[k as usize] + 1] = true;
                }
            } else {
                let area = Area {
                    off1,
                    lim1,
                    off2,
                    lim2,
                };
                let s = self.split(area, need_min);
                // The upper half is solved second, as git recurses.
                boxes.push((s.i1, lim1, s.i2, lim2, s.min_hi));
                boxes.push((off1, s.i1, off2, s.i2, s.min_lo));
            }
        }
    }

    fn f(&self, d: isize) -> isize {
        self.forward[(d + self.offset) as usize]
    }

    fn set_f(&mut self, d: isize, v: isize) {
        self.forward[(d + self.offset) as usize] = v;
    }

    fn bk(&self, d: isize) -> isize {
        self.backward[(d + self.offset) as usize]
    }

    fn set_bk(&mut self, d: isize, v: isize) {
        self.backward[(d + self.offset) as usize] = v;
    }

    fn eq(&self, i1: isize, i2: isize) -> bool {
        self.a[i1 as usize] == self.b[i2 as usize]
    }

    /// The middle snake of `area`, or a good enough point when the search
    /// gets expensive (git's `xdl_split`).
    fn split(&mut self, area: Area, need_min: bool) -> Split {
        let (dmin, dmax) = (area.off1 - area.lim2, area.lim1 - area.off2);
        let mut fwd = Reach::at(area.off1 - area.off2);
        let mut bwd = Reach::at(area.lim1 - area.lim2);
        let odd = (fwd.mid - bwd.mid) & 1 != 0;
        self.set_f(fwd.mid, area.off1);
        self.set_bk(bwd.mid, area.lim1);
        for cost in 1usize.. {
            // The diagonals just outside read as "not reached".
            for d in fwd.widen(dmin, dmax).into_iter().flatten() {
                self.set_f(d, -1);
            }
            let (met, snake_fwd) = self.forward(area, fwd, bwd, odd);
            if let Some(s) = met {
                return s;
            }
            for d in bwd.widen(dmin, dmax).into_iter().flatten() {
                self.set_bk(d, isize::MAX);
            }
            let (met, snake_bwd) = self.backward(area, fwd, bwd, odd);
            if let Some(s) = met {
                return s;
            }
            if need_min {
                continue;
            }
            if (snake_fwd || snake_bwd)
                && cost > HEUR_MIN_COST
                && let Some(s) = self.good_snake(area, fwd, bwd, cost)
            {
                return s;
            }
            if cost >= self.max_cost {
                return self.furthest(area, fwd, bwd);
            }
        }
        unreachable!("the cost grows until the search ends")
    }

    /// One forward step on every reached diagonal: the split where it meets
    /// the backward search (on an odd difference), and whether a long
    /// snake was followed.
    fn forward(&mut self, area: Area, fwd: Reach, bwd: Reach, odd: bool) -> (Option<Split>, bool) {
        let mut got_snake = false;
        for d in fwd.diagonals() {
            let mut i1 = if self.f(d - 1) >= self.f(d + 1) {
                self.f(d - 1) + 1
            } else {
                self.f(d + 1)
            };
            let prev = i1;
            let mut i2 = i1 - d;
            while i1 < area.lim1 && i2 < area.lim2 && self.eq(i1, i2) {
                i1 += 1;
                i2 += 1;
            }
            got_snake |= (i1 - prev) as usize > SNAKE_CNT;
            self.set_f(d, i1);
            if odd && bwd.holds(d) && self.bk(d) <= i1 {
                return (Some(Split::minimal(i1, i2)), got_snake);
            }
        }
        (None, got_snake)
    }

    /// [`Compare::forward`], from the box's end backwards (meeting on an
    /// even difference).
    fn backward(&mut self, area: Area, fwd: Reach, bwd: Reach, odd: bool) -> (Option<Split>, bool) {
        let mut got_snake = false;
        for d in bwd.diagonals() {
            let mut i1 = if self.bk(d - 1) < self.bk(d + 1) {
                self.bk(d - 1)
            } else {
                self.bk(d + 1) - 1
            };
            let prev = i1;
            let mut i2 = i1 - d;
            while i1 > area.off1 && i2 > area.off2 && self.eq(i1 - 1, i2 - 1) {
                i1 -= 1;
                i2 -= 1;
            }
            got_snake |= (prev - i1) as usize > SNAKE_CNT;
            self.set_bk(d, i1);
            if !odd && fwd.holds(d) && i1 <= self.f(d) {
                return (Some(Split::minimal(i1, i2)), got_snake);
            }
        }
        (None, got_snake)
    }

    /// Past the heuristic cost, a diagonal that reached far along a snake
    /// of at least `SNAKE_CNT` matching lines is taken as the split.
    fn good_snake(&self, a: Area, fwd: Reach, bwd: Reach, cost: usize) -> Option<Split> {
        let snake = SNAKE_CNT as isize;
        let enough = K_HEUR * cost as isize;
        let mut best = 0;
        let mut found = None;
        for d in fwd.diagonals() {
            let i1 = self.f(d);
            let i2 = i1 - d;
            let v = (i1 - a.off1) + (i2 - a.off2) - (d - fwd.mid).abs();
            if v > enough
                && v > best
                && a.off1 + snake <= i1
                && i1 < a.lim1
                && a.off2 + snake <= i2
                && i2 < a.lim2
                && (1..=snake).all(|k| self.eq(i1 - k, i2 - k))
            {
                best = v;
                found = Some((i1, i2));
            }
        }
        if let Some((i1, i2)) = found {
            return Some(Split {
                i1,
                i2,
                min_lo: true,
                min_hi: false,
            });
        }
        for d in bwd.diagonals() {
            let i1 = self.bk(d);
            let i2 = i1 - d;
            let v = (a.lim1 - i1) + (a.lim2 - i2) - (d - bwd.mid).abs();
            if v > enough
                && v > best
                && a.off1 < i1
                && i1 <= a.lim1 - snake
                && a.off2 < i2
                && i2 <= a.lim2 - snake
                && (0..snake).all(|k| self.eq(i1 + k, i2 + k))
            {
                best = v;
                found = Some((i1, i2));
            }
        }
        found.map(|(i1, i2)| Split {
            i1,
            i2,
            min_lo: false,
            min_hi: true,
        })
    }

    /// Past the maximum cost, the furthest-reaching point forward or
    /// backward is the split.
    fn furthest(&self, a: Area, fwd: Reach, bwd: Reach) -> Split {
        let (mut fbest, mut fbest1) = (-1, -1);
        for d in fwd.diagonals() {
            let mut i1 = self.f(d).min(a.lim1);
            let mut i2 = i1 - d;
            if a.lim2 < i2 {
                i1 = a.lim2 + d;
                i2 = a.lim2;
            }
            if fbest < i1 + i2 {
                fbest = i1 + i2;
                fbest1 = i1;
            }
        }
        let (mut bbest, mut bbest1) = (isize::MAX, isize::MAX);
        for d in bwd.diagonals() {
            let mut i1 = a.off1.max(self.bk(d));
            let mut i2 = i1 - d;
            if i2 < a.off2 {
                i1 = a.off2 + d;
                i2 = a.off2;
            }
            if i1 + i2 < bbest {
                bbest = i1 + i2;
                bbest1 = i1;
            }
        }
        if (a.lim1 + a.lim2) - bbest < fbest - (a.off1 + a.off2) {
            Split {
                i1: fbest1,
                i2: fbest - fbest1,
                min_lo: true,
                min_hi: false,
            }
        } else {
            Split {
                i1: bbest1,
                i2: bbest - bbest1,
                min_lo: false,
                min_hi: true,
            }
        }
    }
}

/// A box of the comparison: kept lines `off1..lim1` of the first file
/// against `off2..lim2` of the second.
#[derive(Clone, Copy)]
struct Area {
    off1: isize,
    lim1: isize,
    off2: isize,
    lim2: isize,
}

/// The diagonals one direction of the search has reached: every other one
/// from `min` to `max`, and the one it started on.
#[derive(Clone, Copy)]
struct Reach {
    min: isize,
    max: isize,
    mid: isize,
}

impl Reach {
    fn at(mid: isize) -> Reach {
        Reach {
            min: mid,
            max: mid,
            mid,
        }
    }

    /// One cost further: a diagonal more on each side, or one less where
    /// the box ends (keeping every other diagonal). Returns the diagonals
    /// just outside the new range, which must read as not reached.
    fn widen(&mut self, dmin: isize, dmax: isize) -> [Option<isize>; 2] {
        let mut outside = [None, None];
        if self.min > dmin {
            self.min -= 1;
            outside[0] = Some(self.min - 1);
        } else {
            self.min += 1;
        }
        if self.max < dmax {
            self.max += 1;
            outside[1] = Some(self.max + 1);
        } else {
            self.max -= 1;
        }
        outside
    }

    /// The reached diagonals, from `max` down, as xdiff visits them.
    fn diagonals(self) -> impl Iterator<Item = isize> {
        (self.min..=self.max).rev().step_by(2)
    }

    fn holds(self, d: isize) -> bool {
        self.min <= d && d <= self.max
    }
}

/// A group of changed lines `start..end` (possibly empty) of one file.
#[derive(Clone, Copy)]
struct Group {
    start: usize,
    end: usize,
}

/// The groups of one file's changed lines; `changed[i + 1]` is line `i`,
/// with a `false` sentinel at each end.
struct Groups<'c> {
    ids: &'c [usize],
    changed: &'c mut [bool],
}

impl Groups<'_> {
    fn n(&self) -> usize {
        self.changed.len() - 2
    }

    fn is(&self, line: isize) -> bool {
        self.changed[(line + 1) as usize]
    }

    fn first(&self) -> Group {
        let mut end = 0;
        while self.is(end as isize) {
            end += 1;
        }
        Group { start: 0, end }
    }

    /// The next group, unless `g` ends the file.
    fn next(&self, g: &mut Group) -> bool {
        if g.end == self.n() {
            return false;
        }
        g.start = g.end + 1;
        g.end = g.start;
        while self.is(g.end as isize) {
            g.end += 1;
        }
        true
    }

    /// The previous group, unless `g` starts the file.
    fn previous(&self, g: &mut Group) -> bool {
        if g.start == 0 {
            return false;
        }
        g.end = g.start - 1;
        g.start = g.end;
        while self.is(g.start as isize - 1) {
            g.start -= 1;
        }
        true
    }

    /// Slides `g` one line down when the line after it equals its first,
    /// absorbing a group it then touches.
    fn slide_down(&mut self, g: &mut Group) -> bool {
        if g.end < self.n() && self.ids[g.start] == self.ids[g.end] {
            self.changed[g.start + 1] = false;
            self.changed[g.end + 1] = true;
            g.start += 1;
            g.end += 1;
            while self.is(g.end as isize) {
                g.end += 1;
            }
            true
        } else {
            false
        }
    }

    /// Slides `g` one line up when the line before it equals its last,
    /// absorbing a group it then touches.
    fn slide_up(&mut self, g: &mut Group) -> bool {
        if g.start > 0 && self.ids[g.start - 1] == self.ids[g.end - 1] {
            g.start -= 1;
            g.end -= 1;
            self.changed[g.start + 1] = true;
            self.changed[g.end + 1] = false;
            while self.is(g.start as isize - 1) {
                g.start -= 1;
            }
            true
        } else {
            false
        }
    }
}

/// git's `xdl_change_compact` without the indent heuristic: every group of
/// changed lines in `changed` slides up as far as it can, then down,
/// merging with groups it meets, and comes to rest lined up with the last
/// change of the other file it could align with.
fn compact(ids: &[usize], changed: &mut [bool], other: &mut [bool]) {
    let mut this = Groups { ids, changed };
    let that = Groups {
        ids: &[],
        changed: other,
    };
    let mut g = this.first();
    let mut go = that.first();
    loop {
        if g.end != g.start {
            let mut earliest_end;
            let mut end_matching_other;
            loop {
                let size = g.end - g.start;
                end_matching_other = None;
                while this.slide_up(&mut g) {
                    assert!(that.previous(&mut go), "group sync broken sliding up");
                }
                earliest_end = g.end;
                if go.end > go.start {
                    end_matching_other = Some(g.end);
                }
                while this.slide_down(&mut g) {
                    assert!(that.next(&mut go), "group sync broken sliding down");
                    if go.end > go.start {
                        end_matching_other = Some(g.end);
                    }
                }
                if size == g.end - g.start {
                    break;
                }
            }
            if g.end != earliest_end && end_matching_other.is_some() {
                while go.end == go.start {
                    assert!(this.slide_up(&mut g), "match disappeared");
                    assert!(that.previous(&mut go), "group sync broken sliding to match");
                }
            }
        }
        if !this.next(&mut g) {
            break;
        }
        assert!(that.next(&mut go), "group sync broken moving to next group");
    }
}

/// Pairs the two files' groups of changed lines into changes.
fn script(one: &[bool], two: &[bool]) -> Vec<Change> {
    let (n1, n2) = (one.len() - 2, two.len() - 2);
    let (mut i1, mut i2) = (0, 0);
    let mut out = Vec::new();
    while i1 < n1 || i2 < n2 {
        if one[i1 + 1] || two[i2 + 1] {
            let (s1, s2) = (i1, i2);
            while one[i1 + 1] {
                i1 += 1;
            }
            while two[i2 + 1] {
                i2 += 1;
            }
            out.push(Change {
                b: s1,
                blen: i1 - s1,
                s: s2,
                slen: i2 - s2,
            });
        } else {
            i1 += 1;
            i2 += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    /// Texts of a few repeated lines, so groups slide and lines in
    /// between often match.
    fn texts() -> impl Strategy<Value = (Vec<Vec<u8>>, Vec<Vec<u8>>)> {
        let line = prop_oneof![
            Just(b"a\n".to_vec()),
            Just(b"b\n".to_vec()),
            Just(b"\n".to_vec()),
            Just(b"}\n".to_vec()),
            Just(b"a".to_vec()),
            "[c-f]{1,2}\n".prop_map(String::into_bytes),
        ];
        let lines = prop::collection::vec(line, 0..30);
        (
            lines.clone(),
            lines,
            any::<prop::sample::Index>(),
            0usize..4,
        )
            .prop_map(|(base, put, at, gone)| {
                // The second text: the first with a run replaced, so the
                // two share a head and a tail, as an edit's texts do.
                let from = at.index(base.len() + 1);
                let to = (from + gone).min(base.len());
                let mut new = base[..from].to_vec();
                new.extend(put);
                new.extend_from_slice(&base[to..]);
                (base, new)
            })
    }

    /// The cases the ends settle include those where a group slides:
    /// a line replaced beside its own copy, and lines inserted after
    /// copies of themselves.
    #[test]
    fn ends_settle_sliding_groups_where_git_leaves_them() {
        let cut = |t: &'static str| -> Vec<&'static [u8]> {
            t.split_inclusive('\n').map(str::as_bytes).collect()
        };
        for (old, new) in [
            ("x\nx\ny\n", "x\nz\ny\n"),
            ("a\nb\n", "a\nb\na\nb\n"),
            ("a\n\n\nb\n", "a\n\nb\n"),
            ("}\n}\n", "}\n}\n}\n"),
        ] {
            let (old, new) = (cut(old), cut(new));
            let settled = super::settled_by_ends(&old, &new);
            assert!(settled.is_some(), "{old:?} {new:?}");
            assert_eq!(settled.unwrap(), super::full(&old, &new));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        /// Where the ends settle a diff, it is the one the whole
        /// algorithm finds.
        #[test]
        fn ends_settle_a_diff_as_the_whole_algorithm_does((old, new) in texts()) {
            let old: Vec<&[u8]> = old.iter().map(Vec::as_slice).collect();
            let new: Vec<&[u8]> = new.iter().map(Vec::as_slice).collect();
            if let Some(settled) = super::settled_by_ends(&old, &new) {
                prop_assert_eq!(settled, super::full(&old, &new));
            }
        }
    }
}
