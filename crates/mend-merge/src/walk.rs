//! git's walk over the two sides' changes: each change is one side's,
//! identical on both sides, or part of a conflict with the other side's.
//! This is git's rule and nothing else; what may be done with its
//! conflicts is the resolvers' business (`resolve`).

use crate::{Change, Inputs, Mode, Step};

/// The steps of the walk, in order, and the identical changes apart (they
/// take part in the layout but never join other steps).
pub(crate) struct Walk {
    pub steps: Vec<Step>,
    pub same: Vec<Step>,
}

/// The union of two index ranges, an empty one counting as nothing.
fn union(a: (usize, usize), b: (usize, usize)) -> (usize, usize) {
    match (a.0 == a.1, b.0 == b.1) {
        (true, _) => b,
        (_, true) => a,
        _ => (a.0.min(b.0), a.1.max(b.1)),
    }
}

/// Adds a step, joining it to the previous one when the two overlap or
/// touch in ours or in theirs, as git does.
fn append(steps: &mut Vec<Step>, s: Step) {
    if let Some(m) = steps.last_mut()
        && (s.i1 <= m.i1 + m.c1 || s.i2 <= m.i2 + m.c2)
    {
        if s.mode != m.mode {
            m.mode = Mode::Conflict;
        }
        m.c0 = s.i0 + s.c0 - m.i0;
        m.c1 = s.i1 + s.c1 - m.i1;
        m.c2 = s.i2 + s.c2 - m.i2;
        m.oh = union(m.oh, s.oh);
        m.th = union(m.th, s.th);
        return;
    }
    steps.push(s);
}

fn z(v: usize) -> isize {
    v as isize
}

/// Ours' change `x` (number `a`), with where it maps to in theirs, whose
/// next change is `y` (or the end, `theirs_offset` lines longer than base).
fn ours_step(x: &Change, a: usize, shift: isize, c: usize) -> Step {
    Step {
        mode: Mode::Ours,
        i0: z(x.b),
        c0: z(x.blen),
        i1: z(x.s),
        c1: z(x.slen),
        i2: shift + z(x.b),
        c2: z(x.blen),
        oh: (a, a + 1),
        th: (c, c),
    }
}

fn theirs_step(y: &Change, c: usize, shift: isize, a: usize) -> Step {
    Step {
        mode: Mode::Theirs,
        i0: z(y.b),
        c0: z(y.blen),
        i1: shift + z(y.b),
        c1: z(y.blen),
        i2: z(y.s),
        c2: z(y.slen),
        oh: (a, a),
        th: (c, c + 1),
    }
}

/// The union of two overlapping changes, in all three inputs.
fn conflict_step(x: &Change, y: &Change, a: usize, c: usize) -> Step {
    let off = z(x.b) - z(y.b);
    let ffo = off + z(x.blen) - z(y.blen);
    let (mut i0, mut i1, mut i2) = (z(x.b), z(x.s), z(y.s));
    if off > 0 {
        i0 -= off;
        i1 -= off;
    } else {
        i2 += off;
    }
    let mut c0 = z(x.b + x.blen) - i0;
    let mut c1 = z(x.s + x.slen) - i1;
    let mut c2 = z(y.s + y.slen) - i2;
    if ffo < 0 {
        c0 -= ffo;
        c1 -= ffo;
    } else {
        c2 += ffo;
    }
    Step {
        mode: Mode::Conflict,
        i0,
        c0,
        i1,
        c1,
        i2,
        c2,
        oh: (a, a + 1),
        th: (c, c + 1),
    }
}

/// Walks `d1` (base to ours) and `d2` (base to theirs) together, as git's
/// merge does: a change entirely before the other side's next one (not
/// touching it) is taken alone, identical changes are set apart, and the
/// rest conflict, joined with every step they overlap or touch.
pub(crate) fn walk(lines: Inputs<'_>, d1: &[Change], d2: &[Change]) -> Walk {
    let Inputs { base, ours, theirs } = lines;
    let mut steps: Vec<Step> = Vec::new();
    let mut same: Vec<Step> = Vec::new();
    let (mut a, mut c) = (0, 0);
    while a < d1.len() && c < d2.len() {
        let (x, y) = (d1[a], d2[c]);
        if x.b + x.blen < y.b {
            append(&mut steps, ours_step(&x, a, z(y.s) - z(y.b), c));
            a += 1;
            continue;
        }
        if y.b + y.blen < x.b {
            append(&mut steps, theirs_step(&y, c, z(x.s) - z(x.b), a));
            c += 1;
            continue;
        }
        let identical =
            x.b == y.b && x.blen == y.blen && ours[x.s..x.s + x.slen] == theirs[y.s..y.s + y.slen];
        if identical {
            let mut s = conflict_step(&x, &y, a, c);
            s.mode = Mode::Same;
            same.push(s);
        } else {
            append(&mut steps, conflict_step(&x, &y, a, c));
        }
        let (e1, e2) = (x.b + x.blen, y.b + y.blen);
        if e1 >= e2 {
            c += 1;
        }
        if e2 >= e1 {
            a += 1;
        }
    }
    let theirs_offset = z(theirs.len()) - z(base.len());
    let ours_offset = z(ours.len()) - z(base.len());
    for (k, x) in d1.iter().enumerate().skip(a) {
        append(&mut steps, ours_step(x, k, theirs_offset, d2.len()));
    }
    for (k, y) in d2.iter().enumerate().skip(c) {
        append(&mut steps, theirs_step(y, k, ours_offset, d1.len()));
    }
    Walk { steps, same }
}
