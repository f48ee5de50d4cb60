//! Resolvers: named steps that may settle some of git's conflicts.
//!
//! The merge first does exactly what git does. Only the regions git leaves
//! in conflict are offered to the resolvers, one resolver after another;
//! each settles a region only when the inputs alone determine the result,
//! and leaves it in conflict otherwise. So wherever git merges cleanly,
//! every mode gives git's bytes, and a resolved region names the resolver
//! that settled it.

mod adjacent;
mod contained;
mod structured;

use std::collections::HashSet;
use std::ops::Range;

pub use adjacent::AdjacentResolver;
pub use contained::ContainedResolver;
pub use structured::StructuredResolver;

/// One side's change against the base: base lines `base` became the side's
/// lines `side` (0-based, end-exclusive, in whole-file coordinates).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SideChange {
    /// The base lines it replaces (empty for an insertion before
    /// `base.start`).
    pub base: Range<usize>,
    /// The side's lines that replace them (empty for a deletion).
    pub side: Range<usize>,
}

/// The three inputs of a merge, split into lines (each with its ending).
#[derive(Debug, Clone, Copy)]
pub struct Inputs<'a> {
    /// The common ancestor.
    pub base: &'a [&'a [u8]],
    /// Our version.
    pub ours: &'a [&'a [u8]],
    /// Their version.
    pub theirs: &'a [&'a [u8]],
}

/// A region git leaves in conflict: its lines in each input and the
/// changes of each side inside it, as git's walk joined them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// Its base lines.
    pub base: Range<usize>,
    /// Its lines in ours.
    pub ours: Range<usize>,
    /// Its lines in theirs.
    pub theirs: Range<usize>,
    /// Ours' changes against the base inside it, in order.
    pub ours_changes: Vec<SideChange>,
    /// Theirs' changes against the base inside it, in order.
    pub theirs_changes: Vec<SideChange>,
}

/// A step that may settle conflicts.
///
/// Implementations say in their docs what they resolve and why the result
/// is determined by the inputs. A resolver that is not sure returns `None`
/// for that region: a conflict is a correct answer, a wrong merge never is.
pub trait Resolver: std::fmt::Debug + Send + Sync {
    /// The name reports give a region this resolver settled.
    fn name(&self) -> &'static str;

    /// For each of `conflicts` (in file order), the bytes that replace it
    /// in the merged text, or `None` to leave it in conflict.
    fn resolve(&self, inputs: Inputs<'_>, conflicts: &[Conflict]) -> Vec<Option<Vec<u8>>>;
}

/// Whether two changes from different sides, as base line ranges, cannot
/// both be placed by the base's order: they share a base line, or one is an
/// insertion (an empty range) at the other's start or end, or at the same
/// point as the other insertion.
pub(crate) fn collide(x: &Range<usize>, y: &Range<usize>) -> bool {
    if x.is_empty() {
        return y.start <= x.start && x.start <= y.end;
    }
    if y.is_empty() {
        return x.start <= y.start && y.start <= x.end;
    }
    x.start < y.end && y.start < x.end
}

/// Whether a line has a letter or digit in it: blank lines and lone
/// punctuation are never evidence of a shared change.
pub(crate) fn has_alnum(line: &[u8]) -> bool {
    line.iter().any(u8::is_ascii_alphanumeric)
}

/// Whether a line holds nothing but whitespace: a separator.
pub(crate) fn is_blank(line: &[u8]) -> bool {
    line.trim_ascii().is_empty()
}

/// The words of a text: runs of letters, digits and `_` that hold a
/// letter.
pub(crate) fn words(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    text.split(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
        .filter(|w| w.iter().any(u8::is_ascii_alphabetic))
}

/// Every word of a version of the file.
pub(crate) fn vocabulary<'a>(lines: &[&'a [u8]]) -> HashSet<&'a [u8]> {
    lines.iter().flat_map(|l| words(l)).collect()
}

/// The words of ours' file and of theirs'.
pub(crate) type Files<'a> = [HashSet<&'a [u8]>; 2];

/// Both sides' [`vocabulary`].
pub(crate) fn files<'a>(inputs: &Inputs<'a>) -> Files<'a> {
    [vocabulary(inputs.ours), vocabulary(inputs.theirs)]
}

/// One side's change, for [`coupled`]: the base lines it replaces, the
/// lines it writes, and the words of that side's whole file.
pub(crate) type Changed<'c, 'a> = (&'c [&'a [u8]], &'c [&'a [u8]], &'c HashSet<&'a [u8]>);

/// Whether a word one change takes out of its side's file (one in the
/// lines it replaces and nowhere in its side's version: a flag it removed,
/// a name it renamed, a condition it dropped) is in the other change's
/// lines, old or new (either way round). The other change still uses
/// what this one removed: the two are coupled, and splicing both keeps
/// the use without what it used.
pub(crate) fn coupled(a: Changed<'_, '_>, b: Changed<'_, '_>) -> bool {
    let uses = |(old, _, file): Changed<'_, '_>, (o, n, _): Changed<'_, '_>| {
        let gone: HashSet<&[u8]> = old
            .iter()
            .flat_map(|l| words(l))
            .filter(|w| !file.contains(w))
            .collect();
        !gone.is_empty()
            && o.iter()
                .chain(n)
                .flat_map(|l| words(l))
                .any(|w| gone.contains(w))
    };
    uses(a, b) || uses(b, a)
}

/// Whether the brackets of `lines`, taken together, close in order and
/// leave none open: a change whose lines do not is part of a larger
/// construct (a call, a block, a list) that its neighbour is part of too.
pub(crate) fn balanced(lines: &[&[u8]]) -> bool {
    let mut open = Vec::new();
    for &b in lines.iter().flat_map(|l| l.iter()) {
        match b {
            b'(' | b'[' | b'{' => open.push(b),
            b')' | b']' | b'}' => {
                let want = match b {
                    b')' => b'(',
                    b']' => b'[',
                    _ => b'{',
                };
                if open.pop() != Some(want) {
                    return false;
                }
            }
            _ => {}
        }
    }
    open.is_empty()
}

/// Offers git's conflicts among `steps` to `resolvers`, in order, and turns
/// each one a resolver settles into a resolved step whose bytes are kept
/// in `resolved`. A step is offered only when git's own output leaves it in
/// conflict in `style`, and not when an identical change of both sides
/// lies inside it (its lines would then be written twice).
pub(crate) fn run(
    inputs: Inputs<'_>,
    changes: (&[crate::Change], &[crate::Change]),
    walk: &mut crate::walk::Walk,
    style: crate::Style,
    resolvers: &[&dyn Resolver],
    resolved: &mut Vec<(&'static str, Vec<u8>)>,
) {
    let open: Vec<usize> = (0..walk.steps.len())
        .filter(|&k| git_conflict(&inputs, &walk.steps[k], &walk.same, style))
        .collect();
    let mut open: Vec<(usize, Conflict)> = open
        .into_iter()
        .map(|k| (k, conflict_of(&walk.steps[k], changes)))
        .collect();
    for r in resolvers {
        if open.is_empty() {
            break;
        }
        let conflicts: Vec<Conflict> = open.iter().map(|(_, c)| c.clone()).collect();
        let answers = r.resolve(inputs, &conflicts);
        let mut still = Vec::new();
        for ((k, c), answer) in open
            .into_iter()
            .zip(answers.into_iter().chain(std::iter::repeat(None)))
        {
            match answer {
                Some(bytes) => {
                    walk.steps[k].mode = crate::Mode::Resolved(resolved.len());
                    resolved.push((r.name(), bytes));
                }
                None => still.push((k, c)),
            }
        }
        open = still;
    }
}

/// Whether git's output leaves `step` in conflict in `style`.
fn git_conflict(
    inputs: &Inputs<'_>,
    step: &crate::Step,
    same: &[crate::Step],
    style: crate::Style,
) -> bool {
    if step.mode != crate::Mode::Conflict {
        return false;
    }
    let o = step.ours();
    if same.iter().any(|s| {
        let r = s.ours();
        r.start < o.end && o.start < r.end || (r.is_empty() && o.contains(&r.start))
    }) {
        return false;
    }
    match style {
        crate::Style::Merge => crate::refine(inputs.ours, inputs.theirs, vec![*step])
            .iter()
            .any(|s| s.mode == crate::Mode::Conflict),
        crate::Style::Diff3 | crate::Style::Zdiff3 => true,
    }
}

fn conflict_of(step: &crate::Step, changes: (&[crate::Change], &[crate::Change])) -> Conflict {
    let side = |cs: &[crate::Change], (a, b): (usize, usize)| -> Vec<SideChange> {
        cs[a..b]
            .iter()
            .map(|c| SideChange {
                base: c.b..c.b + c.blen,
                side: c.s..c.s + c.slen,
            })
            .collect()
    };
    Conflict {
        base: step.base(),
        ours: step.ours(),
        theirs: step.theirs(),
        ours_changes: side(changes.0, step.oh),
        theirs_changes: side(changes.1, step.th),
    }
}
