//! The adjacent resolver: changes that touch without overlapping.

use std::ops::Range;

use super::{Conflict, Inputs, Resolver, SideChange, collide, has_alnum};

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
///   with anything after it.
#[derive(Debug, Clone, Copy, Default)]
pub struct AdjacentResolver;

impl Resolver for AdjacentResolver {
    fn name(&self) -> &'static str {
        "adjacent"
    }

    fn resolve(&self, inputs: Inputs<'_>, conflicts: &[Conflict]) -> Vec<Option<Vec<u8>>> {
        conflicts.iter().map(|c| resolve_one(&inputs, c)).collect()
    }
}

fn resolve_one(inputs: &Inputs<'_>, c: &Conflict) -> Option<Vec<u8>> {
    let changes_lines = |cs: &[SideChange]| cs.iter().any(|x| !x.base.is_empty());
    if !changes_lines(&c.ours_changes) || !changes_lines(&c.theirs_changes) {
        return None;
    }
    for x in &c.ours_changes {
        if c.theirs_changes.iter().any(|y| collide(&x.base, &y.base)) {
            return None;
        }
    }
    if echoes(inputs, c)
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
