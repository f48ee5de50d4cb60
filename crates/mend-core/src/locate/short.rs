//! Short searches with a typing slip.
//!
//! A search of one to three lines, or under 20 characters, is too short
//! for the similarity pass to score: a merely similar short window is as
//! likely a different statement. One looser reading is allowed, the one
//! anchored edits allow their anchors (`plan/region.rs`): a window that is
//! the search but for a slip or two in one line. It is taken only when
//! nothing else in the file could be what the search was copied from:
//!
//! - the slip is clean ([`clean_slip`]): one line differs, in one or two
//!   words, by two typing slips at most (no operator, number or other
//!   token changed, the text between the words the window's own), and
//!   that line has two words or an evident name, so a blank line, `}`,
//!   `end` or `retrun;` never places a search;
//! - the slipped words name nothing in the file: a slip into a name the
//!   file uses is another line;
//! - no other window of the whole file is a rival: one as few character
//!   edits away (the same line elsewhere, or `botop` between `top` and
//!   `bottom`), one the search is a slip of too, or a twin that differs
//!   only where the slip is and is at most one edit further (`dtaa`
//!   between `data` and `date`). A rival refuses, naming both places; no
//!   start-line hint or `@@` scope breaks the tie, since the slip already
//!   spends the search's certainty. (A search long enough for the
//!   similarity pass is then scored by it, under its own guards.)
//!
//! The window then goes through the similarity pass's settling (the edit
//! already applied, names the file has elsewhere, edge lines), and lines of
//! the replacement that repeat the slipped line pair with the file's, so
//! the slip is never written where the line is kept.

use super::{Candidate, Haystack, LineQuery, LocateOptions, Miss};
use crate::similarity::{
    Scored, Slip, clean_slip, differs_only_at, has_word, similarity, slips, window_edits,
};

/// Searches of this many lines or fewer are short: [`find`] is tried
/// before the similarity pass scores them (and alone for a search too
/// short to score).
pub(super) const SHORT: usize = 3;

/// A window of the file whose lines pair with the search's word for word.
struct Near<'h> {
    start: usize,
    window: Vec<&'h str>,
    /// Character edits from the search ([`window_edits`]).
    edits: usize,
}

/// The one window a short search was copied from with a slip, or `None`
/// when no window is a clean slip of it; a rival refuses.
pub(super) fn find(
    hay: &Haystack<'_>,
    q: &LineQuery<'_>,
    norm: &[String],
    opts: &LocateOptions,
) -> Result<Option<Scored>, Miss> {
    let (n, len) = (hay.lines().len(), norm.len());
    if !opts.slips || len == 0 || n < len || norm.iter().all(String::is_empty) {
        return Ok(None);
    }
    let line = |i: usize| hay.grams().line(i);
    let near = near_windows(hay, norm);
    let names = |slip: &Slip<'_>| slip.words.iter().any(|t| has_word((0..n).map(line), t));
    let Some((chosen, slip)) = near
        .iter()
        .filter(|h| h.start >= q.from)
        .filter_map(|h| Some((h, clean_slip(norm, &h.window)?)))
        .find(|(_, slip)| !names(slip))
    else {
        return Ok(None);
    };
    let score = |h: &Near<'_>| similarity(&norm.join("\n"), &h.window.join("\n"));
    let mut candidates: Vec<Candidate> = near
        .iter()
        .filter(|h| h.start != chosen.start && rival(norm, chosen, &slip, h))
        .map(|h| Candidate {
            start: h.start,
            len,
            similarity: score(h),
        })
        .collect();
    let score = score(chosen);
    if !candidates.is_empty() {
        candidates.push(Candidate {
            start: chosen.start,
            len,
            similarity: score,
        });
        candidates.sort_by_key(|c| c.start);
        return Err(Miss::Slipped { candidates });
    }
    Ok(Some(Scored {
        start: chosen.start,
        len,
        score,
    }))
}

/// Whether `other` could as well be what the search was copied from: as
/// few character edits away, a window the search is a slip of too, or a
/// twin of the chosen one that differs only where the slip is and is at
/// most one edit further.
fn rival(norm: &[String], chosen: &Near<'_>, slip: &Slip<'_>, other: &Near<'_>) -> bool {
    other.edits <= chosen.edits
        || slips(norm, &other.window).is_some()
        || (other.edits <= chosen.edits + 1 && differs_only_at(norm, &other.window, slip))
}

/// Every window of the whole file, of the search's size, whose lines pair
/// with the search's word for word (the same words in another spacing or
/// other brackets are as near as can be).
fn near_windows<'h>(hay: &'h Haystack<'_>, norm: &[String]) -> Vec<Near<'h>> {
    let grams = hay.grams();
    let (n, len) = (grams.len(), norm.len());
    // Words that pair one for one differ by a few characters (of up to
    // four bytes each) at most: a cheap test before the token one.
    let close = |j: usize, l: &str| norm[j] == l || norm[j].len().abs_diff(l.len()) <= 24;
    (0..=n - len)
        .filter(|&at| (0..len).all(|j| close(j, grams.line(at + j))))
        .filter_map(|start| {
            let window: Vec<&str> = (start..start + len).map(|i| grams.line(i)).collect();
            let edits = window_edits(norm, &window)?;
            Some(Near {
                start,
                window,
                edits,
            })
        })
        .collect()
}
