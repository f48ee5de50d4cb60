//! Line-level three-way merge with structured regions and git-compatible
//! conflict markers.
//!
//! [`merge`] compares `base` with two descendants, `ours` and `theirs`, and
//! returns a [`Merge`]: a list of [`Region`]s covering all three inputs, each
//! unchanged, changed on one side, changed identically on both, or in
//! conflict, with its line range in every input. [`Merge::render`] writes the
//! result with git's conflict markers in the `merge`, `diff3` or `zdiff3`
//! style.
//!
//! The default output equals `git merge-file`'s byte for byte (see
//! `tests/it/git.rs` for the differential test).
//! To get there the merge follows git's rules, re-expressed here:
//!
//! - each side is diffed against the base with git's own Myers diff: its
//!   preparation, tie-breaking, cut-offs and slider compaction (`xdiff`),
//!   so repeated lines pair as git pairs them;
//! - changes from the two sides that overlap **or touch** form a conflict
//!   (touching is [`Adjacent::Conflict`]; [`Adjacent::Merge`] lets touching,
//!   non-overlapping changes through);
//! - identical changes on both sides are not a conflict;
//! - in the `merge` style, a conflict is refined: ours and theirs are
//!   diffed against each other and only the lines that differ stay in
//!   conflict; conflicts then separated by at most three lines, or by lines
//!   without a letter or digit, are joined again;
//! - in the `zdiff3` style, lines common to the start and end of both sides
//!   are moved out of the conflict; `diff3` keeps conflicts whole;
//! - markers end with `\r\n` when the surrounding lines do, and a conflict
//!   side whose last line has no newline gets one.
//!
//! Inputs are bytes: git merges any text, and so does this crate. The crate
//! is pure: no filesystem, processes or clock.

pub mod hunks;
mod render;
mod resolve;
mod walk;

use std::ops::Range;

use serde::Serialize;

pub use mend_core::diff::LineHunk;
pub use mend_syntax::{Language, language_for};
pub use render::{Labels, Marked, Resolution, Style};
pub use resolve::{
    AdjacentResolver, Conflict, ContainedResolver, Inputs, Resolver, SideChange, StructuredResolver,
};

/// What to do with git's conflicts between changes that touch but do not
/// overlap (one side changes line N, the other line N+1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Adjacent {
    /// Leave them in conflict, as git does.
    #[default]
    Conflict,
    /// Offer git's conflicts to the line resolvers: [`AdjacentResolver`]
    /// (touching changes, placed by the base's order; not in prose) and
    /// [`ContainedResolver`] (one side already holds the other's change).
    Merge,
}

/// Merge settings.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Conflict style; it also decides how conflicts are refined.
    pub style: Style,
    /// Policy for git's conflicts between touching changes.
    pub adjacent: Adjacent,
    /// The language whose syntax items the structured resolver follows
    /// (see [`language_for`]); `None` turns it off.
    pub structured: Option<Language>,
    /// Whether the text is prose (see [`is_prose`]). Prose is written a
    /// paragraph at a time: lines that touch are in one paragraph, often
    /// reflowed as a whole, so touching changes there stay in conflict
    /// even with [`Adjacent::Merge`].
    pub prose: bool,
}

/// Whether the file at `path` is prose by its name: Markdown,
/// reStructuredText, AsciiDoc, Org, and the extensionless README,
/// CHANGELOG and the like. `.txt` is not: it is as often a list
/// (`requirements.txt`) or code (`CMakeLists.txt`) as prose.
pub fn is_prose(path: &str) -> bool {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    match name.rsplit_once('.') {
        Some((_, ext)) => matches!(
            ext.to_ascii_lowercase().as_str(),
            "md" | "markdown" | "mdx" | "rst" | "adoc" | "asciidoc" | "org" | "rdoc"
        ),
        None => matches!(
            name.to_ascii_uppercase().as_str(),
            "README"
                | "CHANGELOG"
                | "CHANGES"
                | "NEWS"
                | "HISTORY"
                | "AUTHORS"
                | "CONTRIBUTING"
                | "LICENSE"
                | "COPYING"
                | "NOTICE"
        ),
    }
}

/// Which resolvers a front-end runs after git's merge.
///
/// The default is `Git`: a resolver is on by default only when, on merge
/// histories it was not tuned on, at least 95% of the conflicts it settles
/// (those the inputs determine) match what the person committed, with no
/// regression against git. The `merge_replay` benchmark measures that on
/// its held-out projects; the resolvers do not meet it yet, so `Safe` is
/// asked for explicitly (`--merge safe`, `initialize {"merge": "safe"}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Policy {
    /// git's merge and nothing more.
    #[default]
    Git,
    /// git's merge, then the resolvers whose results the inputs determine:
    /// the adjacent one (not in prose), the contained one, and the
    /// structured one (for a file in a language with a grammar).
    Safe,
}

impl std::str::FromStr for Policy {
    type Err = String;

    fn from_str(s: &str) -> Result<Policy, String> {
        match s {
            "git" => Ok(Policy::Git),
            "safe" => Ok(Policy::Safe),
            _ => Err(format!("unknown merge policy `{s}`: use `safe` or `git`")),
        }
    }
}

impl Options {
    /// The options `policy` gives the file at `path` (its name decides
    /// prose and the language), in the `merge` style.
    pub fn for_path(path: &str, policy: Policy) -> Options {
        match policy {
            Policy::Git => Options::default(),
            Policy::Safe => Options {
                style: Style::Merge,
                adjacent: Adjacent::Merge,
                structured: language_for(path),
                prose: is_prose(path),
            },
        }
    }

    /// The resolvers these options turn on, in the order they run.
    fn resolvers(&self) -> Vec<Box<dyn Resolver>> {
        let mut out: Vec<Box<dyn Resolver>> = Vec::new();
        if self.adjacent == Adjacent::Merge {
            if !self.prose {
                out.push(Box::new(AdjacentResolver));
            }
            out.push(Box::new(ContainedResolver));
        }
        if let Some(language) = self.structured {
            out.push(Box::new(StructuredResolver { language }));
        }
        out
    }
}

/// How a region was resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RegionKind {
    /// No side changed these lines.
    Unchanged,
    /// Only ours changed them; ours is taken.
    Ours,
    /// Only theirs changed them; theirs is taken.
    Theirs,
    /// Both changed them the same way.
    BothSame,
    /// Both changed them differently.
    Conflict,
    /// git left them in conflict and a resolver settled them; the region
    /// names it.
    Resolved,
}

/// A region of the merge, with its half-open line ranges (0-based) in each
/// input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Region {
    /// How it was resolved.
    pub kind: RegionKind,
    /// Lines of the base.
    pub base: Range<usize>,
    /// Lines of ours.
    pub ours: Range<usize>,
    /// Lines of theirs.
    pub theirs: Range<usize>,
    /// For a resolved region, the resolver that settled it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolver: Option<&'static str>,
}

/// The lines of an input, each with its terminator.
pub(crate) fn split_lines(text: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, &b) in text.iter().enumerate() {
        if b == b'\n' {
            out.push(&text[start..=i]);
            start = i + 1;
        }
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

pub(crate) use mend_core::xdiff::Change;

/// The two-way line diff the merge uses (Myers with git's slider
/// compaction): lines of `before` and the lines of `after` that replace
/// them. Pending changes count their hunks by it, editors get their
/// buffers' changes from it, and tests compare it with `git diff`.
pub fn line_hunks(before: &[u8], after: &[u8]) -> Vec<LineHunk> {
    mend_core::diff::git_line_changes(&split_lines(before), &split_lines(after))
}

/// git's Myers diff with its slider compaction, as a list of changes.
pub(crate) fn diff_lines(before: &[&[u8]], after: &[&[u8]]) -> Vec<Change> {
    mend_core::xdiff::diff(before, after)
}

/// How a merge step was resolved, before regions are laid out. Mirrors the
/// modes of git's merge: conflict, ours, theirs, and identical.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Conflict,
    Ours,
    Theirs,
    Same,
    /// A git conflict a resolver settled: its bytes are
    /// `Merge::resolved[k]`.
    Resolved(usize),
}

/// A change of the merge, positions in base (0), ours (1) and theirs (2).
/// Positions are signed: the position a one-sided change maps to on the
/// other side can be transiently negative while steps are joined, and only
/// ever takes part in comparisons then (as in git).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Step {
    pub mode: Mode,
    pub i0: isize,
    pub c0: isize,
    pub i1: isize,
    pub c1: isize,
    pub i2: isize,
    pub c2: isize,
    /// The ours changes (indices into base→ours) and theirs changes (into
    /// base→theirs) the step holds, half-open.
    pub oh: (usize, usize),
    pub th: (usize, usize),
}

impl Step {
    pub(crate) fn base(&self) -> Range<usize> {
        span(self.i0, self.c0)
    }
    pub(crate) fn ours(&self) -> Range<usize> {
        span(self.i1, self.c1)
    }
    pub(crate) fn theirs(&self) -> Range<usize> {
        span(self.i2, self.c2)
    }
}

fn span(i: isize, c: isize) -> Range<usize> {
    let a = i.max(0) as usize;
    a..(i + c).max(i.max(0)) as usize
}

/// The result of a merge.
#[derive(Debug, Clone)]
pub struct Merge<'a> {
    pub(crate) base: Vec<&'a [u8]>,
    pub(crate) ours: Vec<&'a [u8]>,
    pub(crate) theirs: Vec<&'a [u8]>,
    pub(crate) steps: Vec<Step>,
    /// Set when one side did not change anything: the result is the other
    /// side's bytes as they are (git copies them whole).
    pub(crate) whole: Option<&'a [u8]>,
    /// What resolvers wrote for the conflicts they settled, with their
    /// names.
    pub(crate) resolved: Vec<(&'static str, Vec<u8>)>,
    regions: Vec<Region>,
}

impl Merge<'_> {
    /// The regions, in order, covering every line of the three inputs.
    pub fn regions(&self) -> &[Region] {
        &self.regions
    }

    /// The number of conflicts.
    pub fn conflicts(&self) -> usize {
        self.regions
            .iter()
            .filter(|r| r.kind == RegionKind::Conflict)
            .count()
    }

    /// The number of git conflicts a resolver settled.
    pub fn resolved(&self) -> usize {
        self.resolved.len()
    }

    /// Whether the merge is clean.
    pub fn is_clean(&self) -> bool {
        self.conflicts() == 0
    }
}

fn contains_alnum(lines: &[&[u8]]) -> bool {
    lines.iter().any(|l| resolve::has_alnum(l))
}

/// Merges `ours` and `theirs`, two descendants of `base`.
///
/// git's merge first, exactly; then the conflicts it leaves are offered to
/// the resolvers `opts` turns on.
pub fn merge<'a>(base: &'a [u8], ours: &'a [u8], theirs: &'a [u8], opts: &Options) -> Merge<'a> {
    let boxed = opts.resolvers();
    let resolvers: Vec<&dyn Resolver> = boxed.iter().map(AsRef::as_ref).collect();
    merge_with(base, ours, theirs, opts.style, &resolvers)
}

/// Merges as [`merge`] does in `style`, offering git's conflicts to exactly
/// `resolvers`, in order: a benchmark judges each resolver on its own this
/// way, where [`Options`] turns them on only in the sets front-ends use.
pub fn merge_with<'a>(
    base: &'a [u8],
    ours: &'a [u8],
    theirs: &'a [u8],
    style: Style,
    resolvers: &[&dyn Resolver],
) -> Merge<'a> {
    let b = split_lines(base);
    let o = split_lines(ours);
    let t = split_lines(theirs);
    let d1 = diff_lines(&b, &o);
    let d2 = diff_lines(&b, &t);
    let mut m = Merge {
        base: b,
        ours: o,
        theirs: t,
        steps: Vec::new(),
        whole: None,
        resolved: Vec::new(),
        regions: Vec::new(),
    };
    if d1.is_empty() {
        m.whole = Some(theirs);
    } else if d2.is_empty() {
        m.whole = Some(ours);
    }
    let inputs = Inputs {
        base: &m.base,
        ours: &m.ours,
        theirs: &m.theirs,
    };
    let mut walk = walk::walk(inputs, &d1, &d2);
    if !resolvers.is_empty() {
        resolve::run(
            inputs,
            (&d1, &d2),
            &mut walk,
            style,
            resolvers,
            &mut m.resolved,
        );
    }
    let mut steps = walk.steps;
    match style {
        Style::Merge => {
            steps = refine(&m.ours, &m.theirs, steps);
            simplify(&m.ours, &mut steps);
        }
        Style::Zdiff3 => trim_common(&m.ours, &m.theirs, &mut steps),
        Style::Diff3 => {}
    }
    // Identical changes take part in the layout but never join others.
    steps.extend(walk.same);
    steps.sort_by_key(|s| (s.i1, s.i1 + s.c1));
    m.steps = steps;
    m.regions = layout(&m);
    m
}

/// The `merge` style's refinement: diff ours against theirs inside each
/// conflict and keep only the differing lines in conflict.
fn refine(ours: &[&[u8]], theirs: &[&[u8]], steps: Vec<Step>) -> Vec<Step> {
    let mut out = Vec::with_capacity(steps.len());
    for s in steps {
        if s.mode != Mode::Conflict || s.c1 == 0 || s.c2 == 0 {
            out.push(s);
            continue;
        }
        let o = &ours[s.ours()];
        let t = &theirs[s.theirs()];
        let parts = diff_lines(o, t);
        if parts.is_empty() {
            out.push(Step {
                mode: Mode::Same,
                ..s
            });
            continue;
        }
        // The base lines are attributed to the first part.
        for (k, p) in parts.iter().enumerate() {
            let (i0, c0) = if k == 0 {
                (s.i0, s.c0)
            } else {
                (s.i0 + s.c0, 0)
            };
            out.push(Step {
                mode: Mode::Conflict,
                i0,
                c0,
                i1: s.i1 + p.b as isize,
                c1: p.blen as isize,
                i2: s.i2 + p.s as isize,
                c2: p.slen as isize,
                ..s
            });
        }
    }
    out
}

/// Joins conflicts separated by at most three lines, or by lines without a
/// letter or digit. One pass that builds the list anew: removing joined
/// steps in place would be quadratic when thousands of conflicts join.
fn simplify(ours: &[&[u8]], steps: &mut Vec<Step>) {
    let mut out: Vec<Step> = Vec::with_capacity(steps.len());
    for n in steps.drain(..) {
        let Some(m) = out.last_mut() else {
            out.push(n);
            continue;
        };
        let begin = m.i1 + m.c1;
        let end = n.i1;
        let keep_apart = m.mode != Mode::Conflict
            || n.mode != Mode::Conflict
            || (end - begin > 3 && contains_alnum(&ours[span(begin, end - begin)]));
        if keep_apart {
            out.push(n);
            continue;
        }
        *m = Step {
            mode: Mode::Conflict,
            i0: m.i0,
            c0: (n.i0 + n.c0).max(m.i0 + m.c0) - m.i0,
            i1: m.i1,
            c1: n.i1 + n.c1 - m.i1,
            i2: m.i2,
            c2: n.i2 + n.c2 - m.i2,
            ..*m
        };
    }
    *steps = out;
}

/// The `zdiff3` style: lines common to the start or end of both sides move
/// out of the conflict.
fn trim_common(ours: &[&[u8]], theirs: &[&[u8]], steps: &mut [Step]) {
    for s in steps.iter_mut().filter(|s| s.mode == Mode::Conflict) {
        while s.c1 > 0 && s.c2 > 0 && ours[s.i1 as usize] == theirs[s.i2 as usize] {
            s.i1 += 1;
            s.i2 += 1;
            s.c1 -= 1;
            s.c2 -= 1;
        }
        while s.c1 > 0
            && s.c2 > 0
            && ours[(s.i1 + s.c1 - 1) as usize] == theirs[(s.i2 + s.c2 - 1) as usize]
        {
            s.c1 -= 1;
            s.c2 -= 1;
        }
    }
}

/// Regions covering all inputs, from the steps. Ours drives the walk, as
/// in git's output. Lines between steps are unchanged when all three inputs
/// supply them one for one; lines that a refined conflict shares between
/// ours and theirs (its base lines belong to the conflict) are both-same.
fn layout(m: &Merge<'_>) -> Vec<Region> {
    fn push(
        out: &mut Vec<Region>,
        kind: RegionKind,
        base: Range<usize>,
        ours: Range<usize>,
        theirs: Range<usize>,
    ) {
        if !(base.is_empty() && ours.is_empty() && theirs.is_empty()) {
            out.push(Region {
                kind,
                base,
                ours,
                theirs,
                resolver: None,
            });
        }
    }
    let mut out = Vec::new();
    let mut at = (0usize, 0usize, 0usize);
    let ends = m
        .steps
        .iter()
        .map(|s| (Some(s), s.base().start, s.ours().start, s.theirs().start))
        .chain(std::iter::once((
            None,
            m.base.len(),
            m.ours.len(),
            m.theirs.len(),
        )));
    for (step, nb, no, nt) in ends {
        // The lines before the step (or the end).
        let (b, o, t) = at;
        let (nb, no, nt) = (nb.max(b), no.max(o), nt.max(t));
        let kind = if nb - b == no - o && no - o == nt - t {
            RegionKind::Unchanged
        } else {
            RegionKind::BothSame
        };
        push(&mut out, kind, b..nb, o..no, t..nt);
        at = (nb, no, nt);
        let Some(s) = step else { break };
        let (b, o, t) = at;
        let (eb, eo, et) = (
            s.base().end.max(b),
            s.ours().end.max(o),
            s.theirs().end.max(t),
        );
        let kind = match s.mode {
            Mode::Conflict => RegionKind::Conflict,
            Mode::Ours => RegionKind::Ours,
            Mode::Theirs => RegionKind::Theirs,
            Mode::Same => RegionKind::BothSame,
            Mode::Resolved(_) => RegionKind::Resolved,
        };
        push(&mut out, kind, b..eb, o..eo, t..et);
        if let (Mode::Resolved(k), Some(last)) = (s.mode, out.last_mut()) {
            last.resolver = Some(m.resolved[k].0);
        }
        at = (eb, eo, et);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(base: &str, ours: &str, theirs: &str, style: Style) -> (String, usize) {
        let m = merge(
            base.as_bytes(),
            ours.as_bytes(),
            theirs.as_bytes(),
            &Options {
                style,
                ..Options::default()
            },
        );
        let labels = Labels::default();
        (
            String::from_utf8(m.render(&labels, style, 7)).unwrap(),
            m.conflicts(),
        )
    }

    #[test]
    fn clean_and_conflict() {
        let (out, n) = render("a\nb\nc\n", "A\nb\nc\n", "a\nb\nC\n", Style::Merge);
        assert_eq!((out.as_str(), n), ("A\nb\nC\n", 0));
        let (out, n) = render("a\nb\nc\n", "a\nX\nc\n", "a\nY\nc\n", Style::Merge);
        assert_eq!(n, 1);
        assert_eq!(out, "a\n<<<<<<<\nX\n=======\nY\n>>>>>>>\nc\n");
    }

    #[test]
    fn adjacent_policy() {
        let base = "1\n2\n3\n4\n";
        let ours = "1\nTWO\n3\n4\n";
        let theirs = "1\n2\nTHREE\n4\n";
        let git = merge(
            base.as_bytes(),
            ours.as_bytes(),
            theirs.as_bytes(),
            &Options::default(),
        );
        assert_eq!(git.conflicts(), 1);
        let relaxed = merge(
            base.as_bytes(),
            ours.as_bytes(),
            theirs.as_bytes(),
            &Options {
                adjacent: Adjacent::Merge,
                ..Options::default()
            },
        );
        assert!(relaxed.is_clean());
        assert_eq!(
            relaxed.render(&Labels::default(), Style::Merge, 7),
            b"1\nTWO\nTHREE\n4\n"
        );
    }

    #[test]
    fn regions_cover_every_line() {
        let base = "a\nb\nc\nd\ne\n";
        let ours = "a\nB\nc\nd\nE\n";
        let theirs = "a\nb\nc\nD\nE\n";
        let m = merge(
            base.as_bytes(),
            ours.as_bytes(),
            theirs.as_bytes(),
            &Options::default(),
        );
        let r = m.regions();
        assert_eq!(r.last().unwrap().base.end, 5);
        for w in r.windows(2) {
            assert_eq!(w[0].base.end, w[1].base.start);
            assert_eq!(w[0].ours.end, w[1].ours.start);
            assert_eq!(w[0].theirs.end, w[1].theirs.start);
        }
    }
}
