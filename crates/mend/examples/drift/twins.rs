//! Twins: the refusal kind. Real files hold near-duplicate windows (two
//! similar functions, two docstrings) that differ in one token. A search
//! copied from one of them, with that token slipped to a spelling as many
//! character edits from both versions, names neither: the right outcome is
//! a refusal, and applying it anywhere is wrong.

use std::collections::BTreeMap;

use crate::hunks::{Hunk, Tag};

/// Lines in a window: a search of four lines is one the slip rule reads.
const WINDOW: usize = 4;

/// A token's place: its line, and its byte range in that line.
type Place = (usize, (usize, usize));

/// One twin case: the window as the file has it (`hunk`, whose lines are
/// the edit: one line removed) and the same lines with the token slipped.
pub struct Case {
    pub hunk: Hunk,
    pub lines: Vec<(Tag, String)>,
}

/// Identifiers of three or more characters in `l`, as byte ranges.
fn tokens(l: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in l.char_indices().chain(std::iter::once((l.len(), ' '))) {
        let word = c.is_ascii_alphanumeric() || c == '_';
        match start {
            None if word && !c.is_ascii_digit() => start = Some(i),
            Some(s) if !word => {
                if i - s >= 3 {
                    out.push((s, i));
                }
                start = None;
            }
            _ => {}
        }
    }
    out
}

/// Up to `cap` twin cases from the file at `path`, one per pair of
/// differing tokens, in file order.
pub fn cases(path: &str, file: &str, cap: usize) -> Vec<Case> {
    let lines: Vec<&str> = file.lines().collect();
    // A line with one token masked, keyed to where that token sits.
    let mut masked: BTreeMap<String, Vec<Place>> = BTreeMap::new();
    for (i, l) in lines.iter().enumerate() {
        if l.len() > 200 {
            continue;
        }
        for (a, b) in tokens(l) {
            let key = format!("{}\u{0}{}", &l[..a], &l[b..]);
            masked.entry(key).or_default().push((i, (a, b)));
        }
    }
    let mut out = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for group in masked.values().filter(|g| (2..=8).contains(&g.len())) {
        for (x, &(i, (a, b))) in group.iter().enumerate() {
            for &(j, (c, d)) in &group[x + 1..] {
                let (ta, tb) = (&lines[i][a..b], &lines[j][c..d]);
                if out.len() >= cap || ta == tb || !seen.insert((ta, tb)) {
                    continue;
                }
                if let Some(case) = twin(path, file, &lines, (i, (a, b)), (j, tb)) {
                    out.push(case);
                }
            }
        }
    }
    out
}

/// The case for lines `i` and `j` (token `a..b` of line `i`, `other` at
/// line `j`) when they sit at the same place of two windows that are
/// otherwise identical, no third window is alike, and an equidistant
/// spelling exists.
fn twin(
    path: &str,
    file: &str,
    lines: &[&str],
    (i, (a, b)): Place,
    (j, other): (usize, &str),
) -> Option<Case> {
    let token = &lines[i][a..b];
    let k = (0..WINDOW).find(|&k| {
        i >= k
            && j >= k
            && j - i >= WINDOW
            && j - k + WINDOW <= lines.len()
            && (0..WINDOW).all(|o| o == k || lines[i - k + o] == lines[j - k + o])
            && (0..WINDOW)
                .filter(|&o| o != k && !lines[i - k + o].trim().is_empty())
                .count()
                >= 2
    })?;
    let start = i - k;
    let (pre, suf) = (&lines[i][..a], &lines[i][b..]);
    let alike = (0..=lines.len() - WINDOW)
        .filter(|&p| {
            let l = lines[p + k];
            (0..WINDOW).all(|o| o == k || lines[p + o] == lines[start + o])
                && l.len() > pre.len() + suf.len()
                && l.starts_with(pre)
                && l.ends_with(suf)
        })
        .count();
    if alike != 2 {
        return None;
    }
    let slip = equidistant(token, other, file)?;
    // The edit removes the window's first other non-blank line.
    let del = (0..WINDOW).find(|&o| o != k && !lines[start + o].trim().is_empty())?;
    let clean: Vec<(Tag, String)> = (0..WINDOW)
        .map(|o| {
            let tag = if o == del { Tag::Del } else { Tag::Ctx };
            (tag, lines[start + o].to_owned())
        })
        .collect();
    let mut slipped = clean.clone();
    slipped[k].1 = format!("{}{slip}{}", &lines[i][..a], &lines[i][b..]);
    let mut expected = String::with_capacity(file.len());
    for (n, l) in lines.iter().enumerate() {
        if n != start + del {
            expected.push_str(l);
            expected.push('\n');
        }
    }
    Some(Case {
        hunk: Hunk {
            path: path.to_owned(),
            lines: clean,
            old_start: start,
            expected,
        },
        lines: slipped,
    })
}

/// One character edit of `w`, with letters from `alphabet`.
fn neighbours(w: &str, alphabet: &[char]) -> Vec<String> {
    let cs: Vec<char> = w.chars().collect();
    let mut out = Vec::new();
    for p in 0..=cs.len() {
        for &c in alphabet {
            let mut n = cs.clone();
            n.insert(p, c);
            out.push(n.into_iter().collect());
            if p < cs.len() && cs[p] != c {
                let mut n = cs.clone();
                n[p] = c;
                out.push(n.into_iter().collect());
            }
        }
        if p < cs.len() {
            let mut n = cs.clone();
            n.remove(p);
            out.push(n.into_iter().collect());
        }
    }
    out
}

/// A spelling one or two character edits from `a` and exactly as many
/// from `b`, three or more characters long, found nowhere in `file`.
pub fn equidistant(a: &str, b: &str, file: &str) -> Option<String> {
    if strsim::levenshtein(a, b) > 4 {
        return None;
    }
    let mut alphabet: Vec<char> = a.chars().chain(b.chars()).collect();
    alphabet.sort_unstable();
    alphabet.dedup();
    let fits = |c: &String| {
        let d = strsim::levenshtein(c, a);
        (1..=2).contains(&d)
            && d == strsim::levenshtein(c, b)
            && c.len() >= 3
            && !c.starts_with(|ch: char| ch.is_ascii_digit())
            && !file.contains(c.as_str())
    };
    let one = neighbours(a, &alphabet);
    if let Some(c) = one.iter().find(|c| fits(c)) {
        return Some(c.clone());
    }
    one.iter()
        .flat_map(|w| neighbours(w, &alphabet))
        .find(|c| fits(c))
}
