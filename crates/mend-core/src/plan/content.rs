//! Elision markers in an anchored change's `content`.
//!
//! `content` is what the region becomes, so a marker line in it (`...`,
//! `// ... existing code ...`) can only mean "the region's own lines stay
//! here". Which lines is decided by the content's copies of region lines:
//! the nearest copied lines before and after the marker bound the lines it
//! stands for, and each must be a line the region has once between its own
//! copied neighbours. Where the marker sits next to a new line, that line
//! may replace region lines next to the marker or be inserted beside them
//! (a changed signature above `# ... existing code ...` may also replace a
//! docstring), so the change is refused rather than guessed. So is a
//! marker whose copied neighbours border region lines the change drops
//! when one of those (or another neighbour) is the near neighbour's twin,
//! or the neighbours repeat
//! the lines they would sit beside (a `}` before a `}`): the copies may
//! as well be new lines, with the marker standing for more.
//!
//! A marker that stands for no region line has only its code reading: a
//! bare `...` is written (Python's Ellipsis, where it means something as
//! code: see below), and a marker whose words say code is left out is
//! refused.
//!
//! A marker has two readings, as in the other formats (`readings.rs`): the
//! code reading and the elision reading, and where both fit and give
//! different files the change is refused. The code reading of a marker the
//! region has as a line (the diff pairs it with one) is that line kept;
//! its elision reading is the marker standing for the region lines between
//! its copied neighbours, which may be more (`@overload`, `def f(x: int)`,
//! `...`, `def f(x)` over two overloads: the second one kept, or dropped).
//! The code reading of a new bare `...` in Python is Python's Ellipsis,
//! where it means something as code: a block's only statement (a stub: the
//! line before it opens a block, ending with `:`, and it and the line after
//! it, if any, are shallower). A `...` among the statements of a block,
//! or among the items of a bracket (parameters, arguments: Ellipsis there
//! is rare, and models elide items so), is only a marker.

use std::ops::Range;

use crate::diff::{DiffOp, line_ops};
use crate::indent::columns;
use crate::normalize::{MarkerKind, fold_loose, indent_of, marker_kind, says_elided};

/// The region's file lines (content readings are in indexes into them),
/// and the model's indentation frame: a line is a copy only at the
/// indentation the anchors' shift gives it, so a line moved out of a
/// removed block is new, not kept where it was.
pub(crate) struct Frame<'r> {
    pub(crate) lines: &'r [&'r str],
    /// File indentation minus the model's, in columns.
    pub(crate) delta: isize,
    pub(crate) tab_width: usize,
    /// Whether a line `...` is code in the file's language (Python).
    pub(crate) ellipsis_code: bool,
}

impl Frame<'_> {
    /// A line's comparison key: its indentation in the file's columns
    /// (`shift` added) and its text with whitespace and typography folded.
    fn key(&self, line: &str, shift: isize) -> String {
        let text = fold_loose(line.trim());
        if text.is_empty() {
            return String::new();
        }
        let cols = columns(indent_of(line), self.tab_width) as isize + shift;
        format!("{cols}\u{0}{text}")
    }

    /// Whether a content line is the region line as the file has it, in
    /// the anchors' frame (trailing whitespace aside).
    fn same(&self, region: &str, line: &str) -> bool {
        let width = |l: &str| columns(indent_of(l), self.tab_width) as isize;
        region.trim() == line.trim() && width(region) == width(line) + self.delta
    }
}

/// How each content marker reads.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Reading {
    /// A line of content, written as sent.
    Code,
    /// The region's lines in this range stay here (possibly with blank
    /// content lines beside the marker mapped onto the range's blank edges).
    Elided(Range<usize>),
}

/// Why the markers cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unreadable {
    /// The marker sits between new lines and region lines it may replace.
    Undetermined { marker: usize },
    /// The marker says code is left out, but stands for no region line.
    StandsForNothing { marker: usize },
    /// The marker's code reading (the region line it copies, if any, or
    /// Python's Ellipsis) and its elision reading (region lines `elided`)
    /// give different files.
    TwoReadings {
        marker: usize,
        copy: Option<usize>,
        elided: Range<usize>,
    },
}

/// The markers of a content, read against its region.
pub(crate) struct Read {
    /// For each content line, the region line it copies (the copies whose text is the file's but for the indentation frame:
    /// the file's line is kept for them, while a copy found only loosely,
    /// though it bounds a marker, is the content's own text: `content` is
    /// what the file gets, so a whitespace-only change of a line is kept).
    pub(crate) kept: Vec<Option<usize>>,
    /// Each marker-like content line and how it reads.
    pub(crate) markers: Vec<(usize, Reading)>,
}

/// Reads every marker-like content line against the region: `None` when
/// content has none.
pub(crate) fn read(frame: &Frame<'_>, content: &[String]) -> Option<Result<Read, Unreadable>> {
    let markers: Vec<usize> = (0..content.len())
        .filter(|&k| marker_kind(&content[k]).is_some())
        .collect();
    if markers.is_empty() {
        return None;
    }
    Some(read_aligned(
        frame,
        content,
        &markers,
        &align(frame, content),
    ))
}

/// The markers read with one pairing of content lines to region lines.
fn read_aligned(
    frame: &Frame<'_>,
    content: &[String],
    markers: &[usize],
    aligned: &[Option<usize>],
) -> Result<Read, Unreadable> {
    let mut out = Vec::new();
    for &k in markers {
        // A marker the region has as a line, in the same place, is a copy,
        // unless as a marker it would stand for more lines than itself.
        // Beside a new line its elision reading has no one extent; when
        // the copy stands where the region has it (a copied neighbour is
        // the region line beside it, or the region's edge is content's),
        // and the new line is no region line's twin, code it is.
        if let Some(r) = aligned[k] {
            let mut unpaired = aligned.to_vec();
            unpaired[k] = None;
            match elision_reading(frame, content, &unpaired, k) {
                Ok(Some(g)) if g != (r..r + 1) => {
                    return Err(Unreadable::TwoReadings {
                        marker: k,
                        copy: Some(r),
                        elided: g,
                    });
                }
                Err(Undecided::Twin) => {
                    return Err(Unreadable::Undetermined { marker: k });
                }
                Err(Undecided::New)
                    if !in_place(frame, aligned, k, r)
                        || new_twin_beside(frame, content, &unpaired, k) =>
                {
                    return Err(Unreadable::Undetermined { marker: k });
                }
                _ => out.push((k, Reading::Code)),
            }
            continue;
        }
        match read_one(frame, content, aligned, k) {
            // Two markers between the same copied lines would both keep
            // the lines between them.
            Ok(Reading::Elided(g)) if out.iter().any(|(_, r)| overlaps(r, &g)) => {
                return Err(Unreadable::Undetermined { marker: k });
            }
            Ok(Reading::Elided(g))
                if frame.ellipsis_code && ellipsis_means_code(frame, content, k) =>
            {
                return Err(Unreadable::TwoReadings {
                    marker: k,
                    copy: None,
                    elided: g,
                });
            }
            Ok(r) => out.push((k, r)),
            Err(e) => return Err(e),
        }
    }
    let kept = (0..content.len())
        .map(|k| aligned[k].filter(|&r| frame.same(frame.lines[r], &content[k])))
        .collect();
    Ok(Read { kept, markers: out })
}

/// Whether content line `k`, paired with region line `r`, has a neighbour
/// that pairs with the region line beside `r` on the same side, or sits at
/// content's edge where `r` is at the region's.
fn in_place(frame: &Frame<'_>, aligned: &[Option<usize>], k: usize, r: usize) -> bool {
    let before = match k.checked_sub(1) {
        None => r == 0,
        Some(j) => r > 0 && aligned[j] == Some(r - 1),
    };
    let after = match aligned.get(k + 1) {
        None => r + 1 == frame.lines.len(),
        Some(a) => *a == Some(r + 1),
    };
    before || after
}

fn overlaps(r: &Reading, g: &Range<usize>) -> bool {
    matches!(r, Reading::Elided(h) if h.start < g.end && g.start < h.end || h == g)
}

/// For each content line, the region line it copies (by the diff of the
/// loosely compared lines; marker lines compare as themselves).
fn align(frame: &Frame<'_>, content: &[String]) -> Vec<Option<usize>> {
    let rk: Vec<String> = frame.lines.iter().map(|l| frame.key(l, 0)).collect();
    let ck: Vec<String> = content.iter().map(|l| frame.key(l, frame.delta)).collect();
    let mut out = vec![None; content.len()];
    for op in line_ops(&rk, &ck) {
        if let DiffOp::Equal {
            old_index,
            new_index,
            len,
        } = op
        {
            for o in 0..len {
                out[new_index + o] = Some(old_index + o);
            }
        }
    }
    out
}

fn blank(l: &str) -> bool {
    l.trim().is_empty()
}

/// Why a marker's elision reading has no one extent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Undecided {
    /// A neighbour is a new line: it may replace region lines beside the
    /// marker or be inserted beside them.
    New,
    /// A neighbour copies a line the region has more than once near it, or
    /// could as well be a new copy of one (the marker standing for more).
    Twin,
}

/// One side of a marker: where the lines it stands for begin (`before`) or
/// end, from the nearest content line that is not a marker (or is one the
/// region has there); undecided when that line is new, or a copy of a line
/// the region repeats between the copies around it (a blank line, a `}`),
/// or, for a blank line, when the copy with text that bounds it on its
/// side is such a line itself.
fn boundary(
    frame: &Frame<'_>,
    content: &[String],
    aligned: &[Option<usize>],
    k: usize,
    before: bool,
) -> Result<usize, Undecided> {
    let n = frame.lines.len();
    // A marker-like line the diff pairs with a region line is a copy.
    let plain = |j: &usize| aligned[*j].is_some() || marker_kind(&content[*j]).is_none();
    let near = if before {
        (0..k).rev().find(plain)
    } else {
        (k + 1..content.len()).find(plain)
    };
    let Some(near) = near else {
        return Ok(if before { 0 } else { n });
    };
    let r = aligned[near].ok_or(Undecided::New)?;
    // A blank near line is unique only between the copies with text around
    // it: the nearest of those on its side must be unique too.
    let bound = || {
        let side: Box<dyn Iterator<Item = usize>> = if before {
            Box::new((0..near).rev())
        } else {
            Box::new(near + 1..content.len())
        };
        side.into_iter()
            .find_map(|j| aligned[j].filter(|_| !blank(&content[j])).map(|r| (j, r)))
    };
    let bound_unique = !blank(&content[near])
        || bound().is_none_or(|(j, rj)| unique_copy(frame, content, aligned, j, rj));
    let determined = bound_unique
        && unique_copy(frame, content, aligned, near, r)
        && !twin_dropped(frame, content, aligned, (near, r), before);
    if determined {
        Ok(if before { r + 1 } else { r })
    } else {
        Err(Undecided::Twin)
    }
}

/// The run of content lines copied from consecutive region lines that
/// starts at the marker's near line and walks away from the marker: its
/// far end, and the region lines dropped between the run and the next copy
/// beyond it. `None` when a marker comes first (the lines between are that
/// marker's, not dropped).
fn copied_run(
    frame: &Frame<'_>,
    content: &[String],
    aligned: &[Option<usize>],
    near: usize,
    before: bool,
) -> Option<(usize, Range<usize>)> {
    // Walk away from the marker along lines copied from consecutive
    // region lines; `far` ends the run.
    let away = |i: usize| {
        if before {
            i.checked_sub(1)
        } else {
            Some(i + 1).filter(|&j| j < content.len())
        }
    };
    let toward = |r: usize, s: usize| if before { s + 1 == r } else { r + 1 == s };
    let mut far = near;
    while let Some(j) = away(far) {
        match (aligned[far], aligned[j]) {
            (Some(r), Some(s)) if toward(r, s) => far = j,
            _ => break,
        }
    }
    let edge = aligned[far]?;
    // The next copy beyond the run; a marker first means the lines
    // between are that marker's, not dropped.
    let mut beyond = None;
    let mut j = far;
    while let Some(i) = away(j) {
        if marker_kind(&content[i]).is_some() && aligned[i].is_none() {
            return None;
        }
        if let Some(r) = aligned[i] {
            beyond = Some(r);
            break;
        }
        j = i;
    }
    let dropped = if before {
        beyond.map_or(0, |p| p + 1)..edge
    } else {
        edge + 1..beyond.unwrap_or(frame.lines.len())
    };
    Some((far, dropped))
}

/// Whether the content lines copied beside a marker (its near line `near`,
/// copying region line `r`, and the run of copies behind it) could as well
/// be read another way, the marker standing for more: the near line has a
/// twin right beside it or among the region lines up to the next copy, or
/// the run repeats the region lines beside the lines the change would
/// drop. `return x;`, `}`, blank, marker over a region `return x;`, blank,
/// `}`, blank reads as "drop the first blank" and as "insert a `}`", two
/// different files.
fn twin_dropped(
    frame: &Frame<'_>,
    content: &[String],
    aligned: &[Option<usize>],
    (near, r): (usize, usize),
    before: bool,
) -> bool {
    let Some((far, dropped)) = copied_run(frame, content, aligned, near, before) else {
        return false;
    };
    let key = frame.key(&content[near], frame.delta);
    let twin = |i: usize| frame.key(frame.lines[i], 0) == key;
    // The near line's twin right beside it, away from the marker: the
    // near line may be a new copy of it, the marker standing for one line
    // more (`}`, `}` after a marker over `}`, `}`).
    let beside = if before {
        r.checked_sub(1)
    } else {
        Some(r + 1)
    };
    if beside.is_some_and(|b| b < frame.lines.len() && twin(b)) {
        return true;
    }
    if dropped.is_empty() {
        return false;
    }
    // The run may also be new lines, the marker standing for the dropped
    // lines too, when the run repeats the region lines it would then sit
    // beside (a `}` inserted before a `}`): nothing ties it to where it
    // copies.
    let run: Vec<String> = (near.min(far)..=near.max(far))
        .map(|k| frame.key(&content[k], frame.delta))
        .collect();
    // Where the run would go: after the copy beyond the gap (before side),
    // or right before it (after side).
    let at = if before { dropped.start } else { dropped.end };
    let repeats = |from: usize| {
        from + run.len() <= frame.lines.len()
            && (0..run.len()).all(|o| frame.key(frame.lines[from + o], 0) == run[o])
    };
    if repeats(at) || at >= run.len() && repeats(at - run.len()) {
        return true;
    }
    // Or the near line may copy another of the lines between it and the
    // copy beyond the gap, the marker standing for those before it: a
    // twin in the gap, or in the run (`}`, `}` over `}`, `}`, dropped).
    let twins = if before {
        dropped.start..r
    } else {
        r + 1..dropped.end
    };
    twins.into_iter().any(twin)
}

/// Whether content line `j`, copied from region line `r`, could not have
/// been copied from another region line between its copied neighbours: a
/// repeated line (a `}`, a `return x`) bounds nothing.
fn unique_copy(
    frame: &Frame<'_>,
    content: &[String],
    aligned: &[Option<usize>],
    j: usize,
    r: usize,
) -> bool {
    let prev = (0..j)
        .rev()
        .find_map(|i| aligned[i].filter(|_| !blank(&content[i])))
        .map_or(0, |p| p + 1);
    let next = (j + 1..content.len())
        .find_map(|i| aligned[i].filter(|_| !blank(&content[i])))
        .unwrap_or(frame.lines.len());
    let k = frame.key(&content[j], frame.delta);
    (prev..next)
        .filter(|&i| i != r && frame.key(frame.lines[i], 0) == k)
        .count()
        == 0
}

fn read_one(
    frame: &Frame<'_>,
    content: &[String],
    aligned: &[Option<usize>],
    k: usize,
) -> Result<Reading, Unreadable> {
    match elision_reading(frame, content, aligned, k) {
        Ok(None) => code_reading(frame, content, k),
        Ok(Some(g)) => Ok(Reading::Elided(g)),
        Err(_) => Err(Unreadable::Undetermined { marker: k }),
    }
}

/// The region lines marker `k` stands for as an elision, `None` when it
/// can stand for none.
fn elision_reading(
    frame: &Frame<'_>,
    content: &[String],
    aligned: &[Option<usize>],
    k: usize,
) -> Result<Option<Range<usize>>, Undecided> {
    // Between the nearest copied lines that are not blank (blank lines
    // align anywhere), every region line copied: the marker can stand for
    // nothing.
    let solid = |j: &usize| aligned[*j].filter(|_| !blank(&content[*j]));
    let prev = (0..k).rev().find_map(|j| solid(&j)).map_or(0, |r| r + 1);
    let next = (k + 1..content.len())
        .find_map(|j| solid(&j))
        .unwrap_or(frame.lines.len());
    let mut copied = vec![false; frame.lines.len()];
    for r in aligned.iter().flatten() {
        copied[*r] = true;
    }
    if copied[prev.min(next)..next].iter().all(|&c| c) {
        // Unless the copies bounding it could be others' (a line the
        // region repeats), or a new line beside it repeats a region line:
        // paired so, they would leave the marker lines to stand for.
        let bound = |j: Option<usize>| {
            j.is_none_or(|j| aligned[j].is_some_and(|r| unique_copy(frame, content, aligned, j, r)))
        };
        let prev_copy = (0..k).rev().find(|&j| solid(&j).is_some());
        let next_copy = (k + 1..content.len()).find(|&j| solid(&j).is_some());
        let firm = bound(prev_copy) && bound(next_copy);
        return if !firm || new_twin_beside(frame, content, aligned, k) {
            Err(Undecided::Twin)
        } else {
            Ok(None)
        };
    }
    let start = boundary(frame, content, aligned, k, true)?;
    let end = boundary(frame, content, aligned, k, false)?;
    if start < end {
        return Ok(Some(start..end));
    }
    // Region lines between the solid neighbours are not copied, but the
    // blank copies beside the marker leave it none: it may stand for them
    // (a blank line new), or be a line itself with them dropped.
    Err(Undecided::Twin)
}

/// Whether the nearest content line on one side of marker `k` that is no
/// marker is new but has the text of a region line between the copies
/// with text around the marker, while the other side is a copy or
/// content's edge:
/// paired with that line, the marker would have copies on both sides and
/// lines to stand for.
fn new_twin_beside(
    frame: &Frame<'_>,
    content: &[String],
    aligned: &[Option<usize>],
    k: usize,
) -> bool {
    let plain = |j: &usize| aligned[*j].is_some() || marker_kind(&content[*j]).is_none();
    let near = [(0..k).rev().find(plain), (k + 1..content.len()).find(plain)];
    // Only a region line between the copies with text around the marker
    // could pair (a blank copy may pair elsewhere too).
    let solid = |j: usize| aligned[j].filter(|_| !blank(&content[j]));
    let from = (0..k).rev().find_map(solid).map_or(0, |r| r + 1);
    let to = (k + 1..content.len())
        .find_map(solid)
        .unwrap_or(frame.lines.len());
    let twin = |j: usize| {
        let key = frame.key(&content[j], frame.delta);
        aligned[j].is_none() && (from..to.max(from)).any(|r| frame.key(frame.lines[r], 0) == key)
    };
    let copy_or_edge = |n: Option<usize>| n.is_none_or(|j| aligned[j].is_some());
    (near[0].is_some_and(twin) && copy_or_edge(near[1]))
        || (near[1].is_some_and(twin) && copy_or_edge(near[0]))
}

/// Whether a new bare `...` at content line `k` would be Python code that
/// means something: a block's only statement (the line before it opens a
/// block, ending with `:`, and it and the line after it, if any, are
/// shallower).
fn ellipsis_means_code(frame: &Frame<'_>, content: &[String], k: usize) -> bool {
    if marker_kind(&content[k]) != Some(MarkerKind::Bare) {
        return false;
    }
    let width = |l: &str| columns(indent_of(l), frame.tab_width);
    let solid = |j: &usize| !blank(&content[*j]);
    let Some(prev) = (0..k).rev().find(solid) else {
        return false;
    };
    let before = content[prev].trim_end();
    let next = (k + 1..content.len()).find(solid);
    before.ends_with(':')
        && width(before) < width(&content[k])
        && next.is_none_or(|j| width(&content[j]) < width(&content[k]))
}

/// A marker that stands for no region line: a line of content, unless its
/// words say code is left out. In Python a bare `...` is code only where it
/// means something as code ([`ellipsis_means_code`]); among a block's
/// statements it is a marker.
fn code_reading(frame: &Frame<'_>, content: &[String], k: usize) -> Result<Reading, Unreadable> {
    let code = match marker_kind(&content[k]) {
        Some(MarkerKind::Bare) => !frame.ellipsis_code || ellipsis_means_code(frame, content, k),
        _ => !says_elided(&content[k]),
    };
    if code {
        Ok(Reading::Code)
    } else {
        Err(Unreadable::StandsForNothing { marker: k })
    }
}
