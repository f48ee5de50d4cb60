//! Blank lines at the edges of a search: one rule for every format.
//!
//! Models pad a search with blank lines the file does not have there, or
//! with more of them than it has. Where a search's leading or trailing
//! blank lines outnumber the file's at the located spot:
//!
//! - the match takes as many of them as the file has there;
//! - the same surplus is dropped from the same edge of the replacement,
//!   when the replacement has blank lines there.
//!
//! So a search ending in three blank lines, where the file has two, keeps
//! the file's two, and a replacement that repeats the three does not grow
//! the file by one.

use super::{Haystack, Match, is_blank};

/// The blank lines at a search's edges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Edges {
    lead: usize,
    trail: usize,
    /// Sides that must not widen into the file (an elision marker at that
    /// edge of the core stands between the blank lines and the file).
    sealed: (bool, bool),
}

impl Edges {
    /// The edges of `search` (which must have a non-blank line).
    pub(crate) fn of(search: &[String]) -> Edges {
        let lead = search.iter().take_while(|l| is_blank(l)).count();
        if lead == search.len() {
            return Edges {
                lead: 0,
                trail: 0,
                sealed: (false, false),
            };
        }
        let trail = search.iter().rev().take_while(|l| is_blank(l)).count();
        Edges {
            lead,
            trail,
            sealed: (false, false),
        }
    }

    /// Blank lines at the search's start and end.
    pub(crate) fn counts(&self) -> (usize, usize) {
        (self.lead, self.trail)
    }

    /// The same edges, not widening on the sealed sides.
    pub(crate) fn sealed(self, lead: bool, trail: bool) -> Edges {
        Edges {
            sealed: (lead, trail),
            ..self
        }
    }

    pub(crate) fn has_blank_edges(&self) -> bool {
        self.lead + self.trail > 0
    }

    /// The search without its blank edge lines.
    pub(crate) fn core<'s>(&self, search: &'s [String]) -> &'s [String] {
        &search[self.lead..search.len() - self.trail]
    }

    /// Widens a match of the core into the file's blank lines on each side,
    /// as far as the search has blank lines there, and drops the surplus
    /// from the replacement's edges. `m.search` and `m.map` describe the
    /// core; the result describes the widened region.
    pub(crate) fn widen(
        &self,
        hay: &Haystack<'_>,
        from: usize,
        mut m: Match,
        search: &[String],
        replace: &[String],
    ) -> Match {
        let lines = hay.lines();
        let before = if self.sealed.0 {
            0
        } else {
            (from..m.start)
                .rev()
                .take_while(|&i| is_blank(lines[i]))
                .count()
        };
        let after = if self.sealed.1 {
            0
        } else {
            (m.end..lines.len())
                .take_while(|&i| is_blank(lines[i]))
                .count()
        };
        let k_lead = self.lead.min(before);
        let k_trail = self.trail.min(after);
        let n = search.len();
        m.search = search[self.lead - k_lead..n - self.trail + k_trail].to_vec();
        let mut map: Vec<std::ops::Range<usize>> =
            (m.start - k_lead..m.start).map(|i| i..i + 1).collect();
        map.append(&mut m.map);
        map.extend((m.end..m.end + k_trail).map(|i| i..i + 1));
        m.map = map;
        // Extra file lines follow search lines by index: the blank lines
        // put back in front shift those indices, and an extra that came
        // before the first core line now follows the last of them.
        for (after, _) in &mut m.extra {
            *after = match *after {
                Some(j) => Some(j + k_lead),
                None => k_lead.checked_sub(1),
            };
        }
        m.start -= k_lead;
        m.end += k_trail;
        m.replace = drop_surplus(replace, self.lead - k_lead, self.trail - k_trail);
        m
    }
}

/// The replacement without `lead` blank lines at its start and `trail` at
/// its end, or as many as it has there.
pub(crate) fn drop_surplus(replace: &[String], lead: usize, trail: usize) -> Vec<String> {
    let a = replace.iter().take_while(|l| is_blank(l)).count().min(lead);
    let rest = &replace[a..];
    let b = rest
        .iter()
        .rev()
        .take_while(|l| is_blank(l))
        .count()
        .min(trail);
    rest[..rest.len() - b].to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| (*x).to_owned()).collect()
    }

    #[test]
    fn surplus_blank_lines_are_dropped_once() {
        let hay = Haystack::new(vec!["a = 1", "", "", "b = 2"]);
        let search = v(&["a = 1", "", "", ""]);
        let replace = v(&["a = 2", "", "", ""]);
        let e = Edges::of(&search);
        let core = Match::one_to_one(super::super::MatchPass::Exact, 0, v(&["a = 1"]), vec![]);
        let m = e.widen(&hay, 0, core, &search, &replace);
        assert_eq!((m.start, m.end), (0, 3));
        assert_eq!(m.search, v(&["a = 1", "", ""]));
        assert_eq!(m.replace, v(&["a = 2", "", ""]));
        assert_eq!(m.map, vec![0..1, 1..2, 2..3]);
    }

    #[test]
    fn replacement_without_blank_edges_is_kept() {
        assert_eq!(drop_surplus(&v(&["x", "y"]), 1, 1), v(&["x", "y"]));
        assert_eq!(drop_surplus(&v(&["", "x", ""]), 2, 0), v(&["x", ""]));
    }
}
