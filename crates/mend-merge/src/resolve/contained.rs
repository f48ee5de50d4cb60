//! The contained resolver: one side already holds the other's change.

use std::collections::HashSet;

use super::{Conflict, Inputs, Resolver, SideChange, has_alnum as alnum, is_blank};

/// Settles a conflict where one side already holds every change the other
/// side made there, line for line, and changes more besides: a fix made on
/// both branches and extended on one, a change cherry-picked and then
/// built on. The fuller side's lines are the result; nothing is chosen,
/// since both sides' changes are in them.
///
/// "Holds" is read off the diff from the smaller side's lines to the
/// fuller side's, and every doubt refuses:
/// - the smaller side must replace or delete base lines (an insertion
///   alone marks no place), and write or delete a line with a letter or
///   digit in it, so blank lines and braces never count as a shared
///   change;
/// - the diff may change only lines the smaller side kept from the base,
///   never one it wrote;
/// - it may only insert lines, none of them blank: a line the smaller
///   side kept from the base and the fuller side rewrote is a competing
///   rewrite (a version pin, a sentence) or a revert of what the smaller
///   side kept, where the person merging chose either way, and a blank
///   line added beside the shared change is a separator whose place is a
///   choice;
/// - neither side may delete lines there (replace base lines by fewer):
///   a side that deleted lines the other changed loses that change;
/// - it may add nothing where the smaller side deleted lines;
/// - no base line the smaller side removed may come back anywhere in the
///   fuller side's lines there.
#[derive(Debug, Clone, Copy, Default)]
pub struct ContainedResolver;

impl Resolver for ContainedResolver {
    fn name(&self) -> &'static str {
        "contained"
    }

    fn resolve(&self, inputs: Inputs<'_>, conflicts: &[Conflict]) -> Vec<Option<Vec<u8>>> {
        conflicts
            .iter()
            .map(|c| {
                let shrinks = |x: &SideChange| x.side.len() < x.base.len();
                if c.ours_changes.iter().chain(&c.theirs_changes).any(shrinks) {
                    return None;
                }
                let ours = Side {
                    lines: inputs.ours,
                    region: c.ours.clone(),
                    changes: &c.ours_changes,
                };
                let theirs = Side {
                    lines: inputs.theirs,
                    region: c.theirs.clone(),
                    changes: &c.theirs_changes,
                };
                if holds(inputs.base, &ours, &theirs) {
                    Some(theirs.bytes())
                } else if holds(inputs.base, &theirs, &ours) {
                    Some(ours.bytes())
                } else {
                    None
                }
            })
            .collect()
    }
}

/// One side of a conflict: its lines, the conflict's range in them, and
/// its changes against the base there.
struct Side<'a> {
    lines: &'a [&'a [u8]],
    region: std::ops::Range<usize>,
    changes: &'a [SideChange],
}

impl Side<'_> {
    fn region_lines(&self) -> &[&[u8]] {
        &self.lines[self.region.clone()]
    }

    fn bytes(&self) -> Vec<u8> {
        self.region_lines().concat()
    }
}

/// Whether `fuller` holds every change of `smaller`.
fn holds(base: &[&[u8]], smaller: &Side<'_>, fuller: &Side<'_>) -> bool {
    let cs = smaller.changes;
    let wrote = |c: &SideChange| smaller.lines[c.side.clone()].iter().any(|l| alnum(l));
    let deleted = |c: &SideChange| base[c.base.clone()].iter().any(|l| alnum(l));
    if cs.iter().any(|c| c.base.is_empty()) || !cs.iter().any(|c| wrote(c) || deleted(c)) {
        return false;
    }
    // The smaller side's own ranges, relative to its region.
    let own: Vec<std::ops::Range<usize>> = cs
        .iter()
        .map(|c| c.side.start - smaller.region.start..c.side.end - smaller.region.start)
        .collect();
    let kept: HashSet<&[u8]> = smaller
        .region_lines()
        .iter()
        .map(|l| l.trim_ascii())
        .collect();
    let removed: HashSet<&[u8]> = cs
        .iter()
        .flat_map(|c| base[c.base.clone()].iter())
        .map(|l| l.trim_ascii())
        .filter(|l| alnum(l) && !kept.contains(l))
        .collect();
    let (small, full) = (smaller.region_lines(), fuller.region_lines());
    crate::diff_lines(small, full).iter().all(|d| {
        let inserted = &full[d.s..d.s + d.slen];
        if d.blen > 0 || inserted.iter().any(|l| is_blank(l)) {
            return false;
        }
        let (b, e) = (d.b, d.b + d.blen);
        let untouched = own.iter().all(|w| {
            if w.is_empty() {
                // Nothing is added or changed where lines were deleted.
                !(b <= w.start && w.start <= e)
            } else {
                e <= w.start || w.end <= b
            }
        });
        let back = inserted.iter().any(|l| removed.contains(l.trim_ascii()));
        untouched && !back
    })
}
