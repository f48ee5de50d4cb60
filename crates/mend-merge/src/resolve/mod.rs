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
