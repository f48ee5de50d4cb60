//! Reaching the tree of an edited text from the tree of the text before,
//! so that only what changed is parsed again.
//!
//! tree-sitter reuses every subtree of the old tree that an edit does not
//! touch, once the tree is told where the text changed
//! ([`tree_sitter::Tree::edit`]). The changes are found here from the two
//! texts themselves (the common start and end, then a line diff of what
//! lies between), not taken on trust from the caller: a described change
//! that is not the real one would give a tree of some other text.

use mend_core::diff::{DiffOp, line_ops};
use tree_sitter::{InputEdit, Point};

/// Between the common start and end, changes spanning more lines than this
/// are split by a line diff, so two edits far apart do not make the
/// parser read everything between them again.
const SPLIT_LINES: usize = 8;

/// The edits that turn `old` into `new`, in ascending order, each in the
/// coordinates of the text the edits before it have made (so they are
/// given to [`tree_sitter::Tree::edit`] in this order).
pub(crate) fn input_edits(old: &str, new: &str) -> Vec<InputEdit> {
    let (old, new) = (old.as_bytes(), new.as_bytes());
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let room = old.len().min(new.len()) - prefix;
    let suffix = old
        .iter()
        .rev()
        .zip(new.iter().rev())
        .take(room)
        .take_while(|(a, b)| a == b)
        .count();
    if prefix == old.len() && prefix == new.len() {
        return Vec::new();
    }
    // The changed middle starts at the start of its line, so a line diff
    // of the middles lines up with the texts' lines.
    let start = old[..prefix]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let (old_mid, new_mid) = (
        &old[start..old.len() - suffix],
        &new[start..new.len() - suffix],
    );
    let hunks = if lines(old_mid).len().max(lines(new_mid).len()) > SPLIT_LINES {
        line_hunks(old_mid, new_mid)
    } else {
        whole(old_mid, new_mid)
    };
    let mut out = Vec::with_capacity(hunks.len());
    // The point of `start` in both texts (they agree up to it), then
    // advanced through the new text hunk by hunk.
    let mut at = point_after(Point::new(0, 0), &new[..start]);
    let mut done = 0;
    for (o, n) in hunks {
        at = point_after(at, &new_mid[done..n.start]);
        let start_byte = start + n.start;
        out.push(InputEdit {
            start_byte,
            old_end_byte: start_byte + o.len(),
            new_end_byte: start_byte + n.len(),
            start_position: at,
            old_end_position: point_after(at, &old_mid[o.clone()]),
            new_end_position: point_after(at, &new_mid[n.clone()]),
        });
        at = point_after(at, &new_mid[n.clone()]);
        done = n.end;
    }
    out
}

/// The lines of `text`, each with its newline.
fn lines(text: &[u8]) -> Vec<&[u8]> {
    text.split_inclusive(|&b| b == b'\n').collect()
}

/// The changed byte ranges of `old` and `new` (each a run of whole
/// lines), by a line diff, in order.
fn line_hunks(old: &[u8], new: &[u8]) -> Vec<(std::ops::Range<usize>, std::ops::Range<usize>)> {
    let (a, b) = (lines(old), lines(new));
    let offsets = |ls: &[&[u8]]| {
        let mut v = Vec::with_capacity(ls.len() + 1);
        let mut n = 0;
        v.push(0);
        for l in ls {
            n += l.len();
            v.push(n);
        }
        v
    };
    let (oa, ob) = (offsets(&a), offsets(&b));
    let mut hunks = Vec::new();
    // Where the last operation left each side. A deletion's `new_index`
    // and an insertion's `old_index` are not always where the other side
    // stands, so those come from here.
    let (mut o, mut n) = (0, 0);
    for op in line_ops(&a, &b) {
        let (ol, nl) = match op {
            DiffOp::Equal {
                old_index,
                new_index,
                len,
            } => {
                (o, n) = (old_index + len, new_index + len);
                continue;
            }
            DiffOp::Delete {
                old_index, old_len, ..
            } => {
                o = old_index;
                (old_len, 0)
            }
            DiffOp::Insert {
                new_index, new_len, ..
            } => {
                n = new_index;
                (0, new_len)
            }
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                (o, n) = (old_index, new_index);
                (old_len, new_len)
            }
        };
        let (Some(&o0), Some(&o1), Some(&n0), Some(&n1)) =
            (oa.get(o), oa.get(o + ol), ob.get(n), ob.get(n + nl))
        else {
            return whole(old, new);
        };
        hunks.push((o0..o1, n0..n1));
        (o, n) = (o + ol, n + nl);
    }
    // The hunks are used only if they are exactly the change: in order,
    // and everything between them the same on both sides.
    let (mut po, mut pn) = (0, 0);
    for (ho, hn) in hunks
        .iter()
        .chain([&(old.len()..old.len(), new.len()..new.len())])
    {
        if ho.start < po || hn.start < pn || old[po..ho.start] != new[pn..hn.start] {
            return whole(old, new);
        }
        (po, pn) = (ho.end, hn.end);
    }
    hunks
}

/// The one hunk that replaces all of `old` with all of `new`.
fn whole(old: &[u8], new: &[u8]) -> Vec<(std::ops::Range<usize>, std::ops::Range<usize>)> {
    vec![(0..old.len(), 0..new.len())]
}

/// The point after `text`, read from `at`: rows are lines, columns bytes,
/// as tree-sitter counts them.
fn point_after(at: Point, text: &[u8]) -> Point {
    match text.iter().rposition(|&b| b == b'\n') {
        Some(last) => Point::new(
            at.row + text.iter().filter(|&&b| b == b'\n').count(),
            text.len() - last - 1,
        ),
        None => Point::new(at.row, at.column + text.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Applies `edits` to `old` as tree-sitter reads them.
    fn replay(old: &str, new: &str, edits: &[InputEdit]) -> String {
        let mut text = old.as_bytes().to_vec();
        for e in edits {
            let inserted = &new.as_bytes()[e.start_byte..e.new_end_byte];
            text.splice(e.start_byte..e.old_end_byte, inserted.iter().copied());
            let before = std::str::from_utf8(&text[..e.start_byte]).unwrap_or("");
            assert_eq!(
                point_after(Point::new(0, 0), before.as_bytes()),
                e.start_position
            );
        }
        String::from_utf8(text).unwrap()
    }

    #[test]
    fn one_change_is_one_edit() {
        let (old, new) = ("a = 1\nb = 2\nc = 3\n", "a = 1\nb = 22\nc = 3\n");
        let e = input_edits(old, new);
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].start_position, Point::new(1, 0));
        assert_eq!(e[0].old_end_position, Point::new(1, 5));
        assert_eq!(e[0].new_end_position, Point::new(1, 6));
        assert_eq!(replay(old, new, &e), new);
        assert!(input_edits(old, old).is_empty());
    }

    #[test]
    fn changes_far_apart_are_separate_edits() {
        let old: String = (0..40).map(|i| format!("x{i} = {i}\n")).collect();
        let new = old
            .replace("x3 = 3\n", "x3 = 30\n")
            .replace("x35 = 35\n", "")
            .replace("x20 = 20\n", "x20 = 20\ny = 1\n");
        let e = input_edits(&old, &new);
        assert_eq!(e.len(), 3);
        assert_eq!(replay(&old, &new, &e), new);
    }

    /// A deletion next to an insertion, which the line diff reports with a
    /// deletion's `new_index` past where the new side stands (seen on two
    /// releases of one JavaScript file).
    #[test]
    fn a_deletion_beside_an_insertion() {
        let old: String = (0..30).map(|i| format!("line {i}\n")).collect();
        let mut new = old.replace("line 12\nline 13\n", "");
        new = new.replace(
            "line 14\n",
            &(0..10).map(|i| format!("added {i}\n")).collect::<String>(),
        );
        new = new.replace("line 2\n", "line two\n");
        for (a, b) in [(&old, &new), (&new, &old)] {
            let e = input_edits(a, b);
            assert_eq!(replay(a, b, &e), *b);
        }
    }

    #[test]
    fn text_added_or_removed_at_either_end() {
        for (old, new) in [
            ("", "a\n"),
            ("a\n", ""),
            ("a\nb", "a\nb\nc"),
            ("b\n", "a\nb\n"),
        ] {
            assert_eq!(replay(old, new, &input_edits(old, new)), new);
        }
    }

    proptest::proptest! {
        /// Whatever the two texts, the edits turn one into the other.
        #[test]
        fn the_edits_turn_old_into_new(
            old in proptest::collection::vec(0..6u8, 0..60),
            new in proptest::collection::vec(0..6u8, 0..60),
        ) {
            let text = |v: &[u8]| v.iter().map(|&i| ["a\n", "b\n", "cc\n", "\n", "d", "é\n"][usize::from(i)]).collect::<String>();
            let (old, new) = (text(&old), text(&new));
            proptest::prop_assert_eq!(replay(&old, &new, &input_edits(&old, &new)), new);
        }
    }
}
