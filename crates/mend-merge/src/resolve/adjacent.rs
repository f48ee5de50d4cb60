//! The adjacent resolver: changes that touch without overlapping.

use std::ops::Range;

use super::{
    Conflict, Files, Inputs, Resolver, SideChange, balanced, collide, coupled, has_alnum, is_blank,
};

/// Settles a conflict whose two sides change disjoint, non-empty sets of
/// base lines, where no insertion from either side lands where the other
/// side's change starts or ends.
///
/// git conflicts when one side changes line N and the other line N+1,
/// though neither touched the other's line. Then the base fixes the order:
/// every change keeps its place among the base lines, so the result is the
/// base with both sides' changes spliced in, and there is nothing to
/// choose. What stays a conflict is what would need a choice or a guess:
/// - two insertions at one point, or an insertion at the edge of the other
///   side's change (which goes first is a choice);
/// - changes to a common base line (a replacement of the same span);
/// - a side that only inserts: it changed no base line, so nothing marks
///   which side of its neighbour it belongs on;
/// - both sides writing a common line (one with a letter or digit) that
///   the base region lacks: the sign that both made the same change in
///   different places, which splicing both would duplicate;
/// - one side rewriting a line into another shape (`x: x,` into `x,`)
///   while the other writes a new line of the old shape: the rewrite is a
///   rule (a style, a rename) the person merging applies to the new line
///   too, which splicing cannot know;
/// - a change whose last line has no newline (it ends its side's file)
///   with anything after it;
/// - a change that writes or removes a blank line: where a separator goes
///   between two sides' changes, and whether it is kept once or twice, is
///   a choice people make either way;
/// - coupled neighbours, which git conflicts on for a reason: a word one
///   change takes out (a flag, a name, a condition) that the other
///   change's lines still hold; a change whose lines leave a bracket open
///   (a block header, part of a call); two changes that meet where the
///   lines differ in indentation (a block and its body), where a line
///   runs on into the next (a trailing operator, a leading `.`), or where
///   a line is a comment or a sentence (two rewrites of one sentence).
#[derive(Debug, Clone, Copy, Default)]
pub struct AdjacentResolver;

impl Resolver for AdjacentResolver {
    fn name(&self) -> &'static str {
        "adjacent"
    }

    fn resolve(&self, inputs: Inputs<'_>, conflicts: &[Conflict]) -> Vec<Option<Vec<u8>>> {
        let files = super::files(&inputs);
        conflicts
            .iter()
            .map(|c| resolve_one(&inputs, &files, c))
            .collect()
    }
}

fn resolve_one(inputs: &Inputs<'_>, files: &Files<'_>, c: &Conflict) -> Option<Vec<u8>> {
    let changes_lines = |cs: &[SideChange]| cs.iter().any(|x| !x.base.is_empty());
    if !changes_lines(&c.ours_changes) || !changes_lines(&c.theirs_changes) {
        return None;
    }
    for x in &c.ours_changes {
        if c.theirs_changes.iter().any(|y| collide(&x.base, &y.base)) {
            return None;
        }
    }
    if separators(inputs, c)
        || tied(inputs, files, c)
        || echoes(inputs, c)
        || reshapes(
            (inputs.ours, &c.ours_changes),
            (inputs.theirs, &c.theirs_changes),
            inputs.base,
        )
        || reshapes(
            (inputs.theirs, &c.theirs_changes),
            (inputs.ours, &c.ours_changes),
            inputs.base,
        )
    {
        return None;
    }
    let mut all: Vec<(&SideChange, bool)> = c
        .ours_changes
        .iter()
        .map(|x| (x, false))
        .chain(c.theirs_changes.iter().map(|y| (y, true)))
        .collect();
    all.sort_by_key(|(x, _)| (x.base.start, x.base.end));
    // Only the last change may end without a newline, and only at the end
    // of the region: anything spliced after it would be glued onto it.
    for (k, (x, theirs)) in all.iter().enumerate() {
        let side = if *theirs { inputs.theirs } else { inputs.ours };
        let open = x.side.end > x.side.start && !side[x.side.end - 1].ends_with(b"\n");
        if open && (k + 1 < all.len() || x.base.end < c.base.end) {
            return None;
        }
    }
    Some(splice(inputs, c.base.clone(), &all))
}

/// The base lines of a conflict with its side's changes spliced in, in
/// base order: the text a resolver writes once it knows the changes are
/// independent. `changes` must be sorted, non-overlapping, and within
/// `base`.
fn splice(inputs: &Inputs<'_>, base: Range<usize>, changes: &[(&SideChange, bool)]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut at = base.start;
    for (c, theirs) in changes {
        for l in &inputs.base[at..c.base.start] {
            out.extend_from_slice(l);
        }
        let side = if *theirs { inputs.theirs } else { inputs.ours };
        for l in &side[c.side.clone()] {
            out.extend_from_slice(l);
        }
        at = c.base.end;
    }
    for l in &inputs.base[at..base.end] {
        out.extend_from_slice(l);
    }
    out
}

/// Whether both sides' new lines share a line with a letter or digit in it
/// (indentation and line ending aside) that the base region does not have.
pub(super) fn echoes(inputs: &Inputs<'_>, c: &Conflict) -> bool {
    use std::collections::HashSet;
    let key = |l: &&[u8]| -> Option<Vec<u8>> {
        let t = l.trim_ascii();
        has_alnum(t).then(|| t.to_vec())
    };
    let new = |side: &[&[u8]], cs: &[SideChange]| -> HashSet<Vec<u8>> {
        cs.iter()
            .flat_map(|x| side[x.side.clone()].iter())
            .filter_map(key)
            .collect()
    };
    let old: HashSet<Vec<u8>> = inputs.base[c.base.clone()].iter().filter_map(key).collect();
    let ours = new(inputs.ours, &c.ours_changes);
    let theirs = new(inputs.theirs, &c.theirs_changes);
    ours.intersection(&theirs).any(|l| !old.contains(l))
}

/// A line's shape: each word (letters, digits, `_`) becomes `w`, spaces
/// go, punctuation stays; `None` for a line without both a word and
/// punctuation (a line of words alone is prose, whose shape says nothing
/// about a rule).
fn shape(l: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut in_word = false;
    for &b in l {
        let word = b.is_ascii_alphanumeric() || b == b'_';
        if word && !in_word {
            out.push(b'w');
        } else if !word && !b.is_ascii_whitespace() {
            out.push(b);
        }
        in_word = word;
    }
    let punctuated = out.iter().any(|&b| b != b'w');
    (out.contains(&b'w') && punctuated).then_some(out)
}

/// Whether `side` rewrote a base line into lines none of which has its
/// shape, while `other` wrote a new line of that old shape.
fn reshapes(
    side: (&[&[u8]], &[SideChange]),
    other: (&[&[u8]], &[SideChange]),
    base: &[&[u8]],
) -> bool {
    let new_shapes = |(lines, cs): (&[&[u8]], &[SideChange])| -> Vec<Vec<u8>> {
        cs.iter()
            .flat_map(|c| lines[c.side.clone()].iter().filter_map(|l| shape(l)))
            .collect()
    };
    let rewritten: Vec<&SideChange> = side
        .1
        .iter()
        .filter(|c| !c.base.is_empty() && !c.side.is_empty())
        .collect();
    let old: Vec<Vec<u8>> = rewritten
        .iter()
        .flat_map(|c| base[c.base.clone()].iter().filter_map(|l| shape(l)))
        .collect();
    let (new, others) = (new_shapes(side), new_shapes(other));
    old.iter().any(|o| !new.contains(o) && others.contains(o))
}

/// Whether a change of either side writes or removes a blank line.
fn separators(inputs: &Inputs<'_>, c: &Conflict) -> bool {
    let blank = |side: &[&[u8]], cs: &[SideChange]| {
        cs.iter().any(|x| {
            inputs.base[x.base.clone()]
                .iter()
                .chain(&side[x.side.clone()])
                .any(|l| is_blank(l))
        })
    };
    blank(inputs.ours, &c.ours_changes) || blank(inputs.theirs, &c.theirs_changes)
}

/// Whether the two sides' changes are coupled (see [`AdjacentResolver`]).
fn tied(inputs: &Inputs<'_>, files: &Files<'_>, c: &Conflict) -> bool {
    let b = inputs.base;
    let open = |side: &[&[u8]], cs: &[SideChange]| {
        cs.iter()
            .any(|x| !balanced(&b[x.base.clone()]) || !balanced(&side[x.side.clone()]))
    };
    if open(inputs.ours, &c.ours_changes) || open(inputs.theirs, &c.theirs_changes) {
        return true;
    }
    for x in &c.ours_changes {
        for y in &c.theirs_changes {
            let xs = (&b[x.base.clone()], &inputs.ours[x.side.clone()]);
            let ys = (&b[y.base.clone()], &inputs.theirs[y.side.clone()]);
            if coupled((xs.0, xs.1, &files[0]), (ys.0, ys.1, &files[1])) {
                return true;
            }
            let (first, second) = if x.base.end <= y.base.start {
                (xs, ys)
            } else {
                (ys, xs)
            };
            if meet(first, second) {
                return true;
            }
        }
    }
    false
}

/// Whether two changes, `first` before `second` (each its old and new
/// lines), meet where the lines around them are one construct: the last
/// line of `first` and the first of `second`, old or new, differ in
/// indentation, run on one into the other, or are text.
fn meet(first: (&[&[u8]], &[&[u8]]), second: (&[&[u8]], &[&[u8]])) -> bool {
    let ends = [first.0.last(), first.1.last()];
    let starts = [second.0.first(), second.1.first()];
    ends.iter().flatten().any(|a| {
        starts
            .iter()
            .flatten()
            .any(|b| indent(a) != indent(b) || runs_on(a, b) || is_text(a) || is_text(b))
    })
}

/// A line's leading whitespace.
fn indent(l: &[u8]) -> &[u8] {
    let n = l.iter().take_while(|b| **b == b' ' || **b == b'\t').count();
    &l[..n]
}

/// Whether line `a` runs on into the next line `b`: `a` ends with an
/// operator or an opening bracket, or `b` starts with one that continues
/// an expression.
fn runs_on(a: &[u8], b: &[u8]) -> bool {
    const ENDS: &[&[u8]] = &[
        b"\\", b"=", b"&&", b"||", b"+", b"-", b"*", b"/", b"|", b"&", b".", b"(", b"[", b"{",
    ];
    const STARTS: &[&[u8]] = &[
        b".", b"?", b"&&", b"||", b"+", b"|", b"&", b")", b"]", b"}", b":",
    ];
    let (a, b) = (a.trim_ascii(), b.trim_ascii());
    ENDS.iter().any(|e| a.ends_with(e)) || STARTS.iter().any(|s| b.starts_with(s))
}

/// Whether a line is a comment or a sentence: text a person writes a
/// paragraph at a time, like prose.
fn is_text(l: &[u8]) -> bool {
    const COMMENTS: &[&[u8]] = &[
        b"//", b"#", b"/*", b"*", b"--", b";", b"<!--", b"\"\"\"", b"'''",
    ];
    let t = l.trim_ascii();
    if COMMENTS.iter().any(|c| t.starts_with(c)) {
        return true;
    }
    let wordy = t
        .iter()
        .all(|b| b.is_ascii_alphanumeric() || b" _.,;:!?'\"`()-".contains(b));
    wordy && super::words(t).count() >= 4
}
