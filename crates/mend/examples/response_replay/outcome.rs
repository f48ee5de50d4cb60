//! How one run of `mend apply` on a case compares with what aider
//! committed: the outcome classifier.
//!
//! A file is **equal** when its bytes are the committed ones, and
//! **normalised** when it differs from them only in the ways aider
//! rewrites a file that are not the model's edit, and nothing else:
//! - line endings: CRLF in one, LF in the other (aider writes the
//!   platform's endings, whatever the file had);
//! - a final newline aider added to a file that had none;
//! - the whitespace of lines that are whitespace only in both;
//! - one blank line at the end of a SEARCH or REPLACE section, which
//!   aider drops (it rejoins a section's lines without the last empty
//!   one): a blank line the result has and aider's file lacks right after
//!   a REPLACE section that ended with an empty line (and whose SEARCH did
//!   not), or one aider's file has and the result lacks after a REPLACE
//!   whose SEARCH ended with an empty line (and whose REPLACE did not).
//!   The blank line must follow, past blank lines only, the last line with
//!   text of that REPLACE section, and each section explains one line.
//!
//! Everything else is a difference. The rules are deliberately narrow: a
//! line with text that differs, a blank line elsewhere, or a final newline
//! the result has and aider's file lacks are never normalisation.

use std::collections::BTreeMap;

use mend_core::diff::{DiffOp, line_ops};

/// A folder's files: path (with `/`) to bytes.
pub(crate) type Tree = BTreeMap<String, Vec<u8>>;

/// How one file compares with aider's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileMatch {
    Equal,
    Normalised,
    Differs,
}

/// One SEARCH/REPLACE block of a response, its sections' lines (without
/// line endings), as aider's markers delimit them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Block {
    pub(crate) search: Vec<String>,
    pub(crate) replace: Vec<String>,
}

fn marker_run(line: &str, c: char, min: usize, max: usize) -> Option<&str> {
    let n = line.chars().take_while(|&x| x == c).count();
    (min..=max).contains(&n).then(|| &line[n..])
}

fn is_head(line: &str) -> bool {
    let t = line.trim();
    marker_run(t, '<', 5, 9).is_some_and(|rest| {
        let rest = rest.trim_end();
        rest == " SEARCH" || rest == " SEARCH>"
    })
}

fn is_divider(line: &str) -> bool {
    marker_run(line.trim(), '=', 5, 9).is_some_and(str::is_empty)
}

fn is_updated(line: &str) -> bool {
    marker_run(line.trim(), '>', 5, 9).is_some_and(|rest| rest.trim_end() == " REPLACE")
}

/// The SEARCH/REPLACE blocks of `response`, read as aider reads them:
/// `<<<<<<< SEARCH` (5 to 9 `<`), `=======`, and `>>>>>>> REPLACE` or a
/// second divider. Only their sections are needed, not their paths.
pub(crate) fn blocks(response: &str) -> Vec<Block> {
    let lines: Vec<&str> = response
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if !is_head(lines[i]) {
            i += 1;
            continue;
        }
        let mut b = Block::default();
        i += 1;
        while i < lines.len() && !is_divider(lines[i]) {
            b.search.push(lines[i].to_owned());
            i += 1;
        }
        i += 1;
        while i < lines.len() && !is_updated(lines[i]) && !is_divider(lines[i]) {
            b.replace.push(lines[i].to_owned());
            i += 1;
        }
        if i < lines.len() {
            out.push(b);
        }
        i += 1;
    }
    out
}

/// A text's lines with the differences aider's normalisation makes
/// folded away: CRLF read as LF, whitespace-only lines as empty. Returns
/// the lines and whether the text ends with a line break.
fn canonical(bytes: &[u8]) -> (Vec<&[u8]>, bool) {
    // An empty text has no lines, not one empty line.
    let mut lines: Vec<&[u8]> = if bytes.is_empty() {
        Vec::new()
    } else {
        bytes.split(|&b| b == b'\n').collect()
    };
    let final_newline = bytes.ends_with(b"\n");
    if final_newline {
        lines.pop();
    }
    let n = lines.len();
    for (i, line) in lines.iter_mut().enumerate() {
        // Only a CR before a line break is a line ending.
        if (i + 1 < n || final_newline)
            && let Some(l) = line.strip_suffix(b"\r")
        {
            *line = l;
        }
        if line.iter().all(|&b| b == b' ' || b == b'\t') {
            *line = b"";
        }
    }
    (lines, final_newline)
}

/// The last line with text of a section, if any.
fn last_text(section: &[String]) -> Option<&str> {
    section
        .iter()
        .rev()
        .map(|l| l.trim_end_matches([' ', '\t']))
        .find(|l| !l.is_empty())
}

/// How many blank lines a block leaves in the result beyond aider's file
/// (1: its REPLACE ended with an empty line, its SEARCH not; -1: the
/// reverse; 0: neither or both), with the line they follow.
fn blank_shift(b: &Block) -> Option<(i8, &str)> {
    let ends_empty = |s: &[String]| s.last().is_some_and(String::is_empty);
    let shift = i8::from(ends_empty(&b.replace)) - i8::from(ends_empty(&b.search));
    (shift != 0).then_some(())?;
    Some((shift, last_text(&b.replace)?))
}

/// The first line with text at or before `at` in `lines`, going back
/// past empty lines.
fn text_before(lines: &[&[u8]], at: usize) -> Option<Vec<u8>> {
    lines[..at]
        .iter()
        .rev()
        .find(|l| !l.is_empty())
        .map(|l| l.to_vec())
}

/// Whether the line differences between `result` and `expected` are each
/// one blank line a distinct block explains (see the module doc).
fn blank_lines_explained(result: &[&[u8]], expected: &[&[u8]], blocks: &[Block]) -> bool {
    let mut unused: Vec<(i8, &str)> = blocks.iter().filter_map(blank_shift).collect();
    for op in line_ops(result, expected) {
        let (shift, before) = match op {
            DiffOp::Equal { .. } => continue,
            // A line of the result aider's file lacks.
            DiffOp::Delete {
                old_index, old_len, ..
            } if old_len == 1 && result[old_index].is_empty() => {
                (1, text_before(result, old_index))
            }
            // A line of aider's file the result lacks.
            DiffOp::Insert {
                new_index, new_len, ..
            } if new_len == 1 && expected[new_index].is_empty() => {
                (-1, text_before(expected, new_index))
            }
            _ => return false,
        };
        let Some(before) = before else { return false };
        let Some(k) = unused.iter().position(|&(s, last)| {
            s == shift && last.as_bytes() == before.as_slice().trim_ascii_end()
        }) else {
            return false;
        };
        unused.swap_remove(k);
    }
    true
}

/// Compares a file mend left with the one aider committed; `blocks` are
/// the response's SEARCH/REPLACE blocks.
pub(crate) fn compare(result: &[u8], expected: &[u8], blocks: &[Block]) -> FileMatch {
    if result == expected {
        return FileMatch::Equal;
    }
    let (r, r_final) = canonical(result);
    let (e, e_final) = canonical(expected);
    // aider adds a final newline; it never takes one away.
    if r_final && !e_final {
        return FileMatch::Differs;
    }
    if r == e || blank_lines_explained(&r, &e, blocks) {
        FileMatch::Normalised
    } else {
        FileMatch::Differs
    }
}

/// What a case is: aider applied it (`expected` is what it committed), or
/// refused it (`expected` is from a later response, not ground truth).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Kind {
    Ok,
    RefuseOrUnknown,
}

/// The raw outcome of one run, before the reviewed list is consulted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Raw {
    Equal,
    Normalised,
    /// Exit 0 and a file mend wrote differs from aider's, or is one aider
    /// did not write.
    Wrong {
        path: String,
    },
    /// Exit 0, but a file aider changed is left as it was.
    Broken {
        path: String,
    },
    /// Nonzero exit, nothing written.
    Refused,
    /// Nonzero exit, and files changed anyway.
    RefusedButWrote {
        path: String,
    },
    /// A case aider refused, and mend exited 0: a person must read it.
    Wrote,
}

/// The files whose bytes differ between two trees, either side missing.
fn changed(before: &Tree, after: &Tree) -> Vec<String> {
    let mut paths: Vec<&String> = before.keys().chain(after.keys()).collect();
    paths.sort();
    paths.dedup();
    paths
        .into_iter()
        .filter(|p| before.get(*p) != after.get(*p))
        .cloned()
        .collect()
}

/// Classifies one run: `before` the tree mend was given, `after` the tree
/// it left (its own `.mend/` left out), `exit_ok` whether it exited 0.
pub(crate) fn classify(
    kind: Kind,
    (before, expected, after): (&Tree, &Tree, &Tree),
    exit_ok: bool,
    blocks: &[Block],
) -> Raw {
    let written = changed(before, after);
    if !exit_ok {
        return match written.into_iter().next() {
            Some(path) => Raw::RefusedButWrote { path },
            None => Raw::Refused,
        };
    }
    if kind == Kind::RefuseOrUnknown {
        return Raw::Wrote;
    }
    let mut normalised = false;
    let mut broken = None;
    for path in changed(&Tree::new(), expected).iter().chain(&written) {
        let mend_wrote = written.contains(path);
        let Some(want) = expected.get(path) else {
            return Raw::Wrong { path: path.clone() };
        };
        let got = after.get(path).map_or(&[][..], Vec::as_slice);
        let m = if after.contains_key(path) {
            compare(got, want, blocks)
        } else {
            FileMatch::Differs
        };
        match (m, mend_wrote) {
            (FileMatch::Equal, _) => {}
            (FileMatch::Normalised, _) => normalised = true,
            (FileMatch::Differs, true) => return Raw::Wrong { path: path.clone() },
            (FileMatch::Differs, false) => broken = broken.or(Some(path.clone())),
        }
    }
    match broken {
        Some(path) => Raw::Broken { path },
        None if normalised => Raw::Normalised,
        None => Raw::Equal,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> Tree {
        files
            .iter()
            .map(|(p, t)| ((*p).to_owned(), t.as_bytes().to_vec()))
            .collect()
    }

    fn block(search: &[&str], replace: &[&str]) -> Block {
        Block {
            search: search.iter().map(|s| (*s).to_owned()).collect(),
            replace: replace.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    fn cmp(result: &str, expected: &str) -> FileMatch {
        compare(result.as_bytes(), expected.as_bytes(), &[])
    }

    #[test]
    fn equal_bytes_are_equal() {
        assert_eq!(cmp("a\nb\n", "a\nb\n"), FileMatch::Equal);
        assert_eq!(cmp("", ""), FileMatch::Equal);
    }

    #[test]
    fn line_endings_are_normalisation_either_way() {
        assert_eq!(cmp("a\r\nb\r\n", "a\nb\n"), FileMatch::Normalised);
        assert_eq!(cmp("a\nb\n", "a\r\nb\r\n"), FileMatch::Normalised);
    }

    #[test]
    fn a_lone_carriage_return_is_content() {
        assert_eq!(cmp("a\rb\n", "ab\n"), FileMatch::Differs);
        assert_eq!(cmp("a\nb\r", "a\nb"), FileMatch::Differs);
    }

    #[test]
    fn only_aider_adds_a_final_newline() {
        assert_eq!(cmp("a\nb", "a\nb\n"), FileMatch::Normalised);
        assert_eq!(cmp("a\nb\n", "a\nb"), FileMatch::Differs);
        assert_eq!(cmp("", "\n"), FileMatch::Differs);
    }

    #[test]
    fn whitespace_on_whitespace_only_lines_is_normalisation() {
        assert_eq!(cmp("a\n    \nb\n", "a\n\nb\n"), FileMatch::Normalised);
        assert_eq!(cmp("a\n\t\nb\n", "a\n  \nb\n"), FileMatch::Normalised);
    }

    #[test]
    fn whitespace_on_lines_with_text_is_a_difference() {
        assert_eq!(cmp("a \nb\n", "a\nb\n"), FileMatch::Differs);
        assert_eq!(cmp("  a\nb\n", "a\nb\n"), FileMatch::Differs);
        assert_eq!(cmp("a\nb\n", "a\n b\n"), FileMatch::Differs);
    }

    #[test]
    fn content_differences_are_never_normalisation() {
        assert_eq!(cmp("a\nb\n", "a\nc\n"), FileMatch::Differs);
        assert_eq!(cmp("a\r\nb\r\n", "a\nc\n"), FileMatch::Differs);
        assert_eq!(cmp("a\nb", "a\nc\n"), FileMatch::Differs);
        // A line dropped or added is a difference, blank or not, without a
        // block that explains it.
        assert_eq!(cmp("a\n\nb\n", "a\nb\n"), FileMatch::Differs);
        assert_eq!(cmp("a\nb\n", "a\nb\nc\n"), FileMatch::Differs);
        assert_eq!(cmp("a\nb\n", "b\na\n"), FileMatch::Differs);
    }

    #[test]
    fn a_replace_ending_in_a_blank_line_explains_one_extra_blank_line() {
        let blocks = [block(&["old()"], &["new()", ""])];
        let (r, e) = ("x\nnew()\n\ny\n", "x\nnew()\ny\n");
        assert_eq!(
            compare(r.as_bytes(), e.as_bytes(), &blocks),
            FileMatch::Normalised
        );
        // Not a second one.
        let r2 = "x\nnew()\n\n\ny\n";
        assert_eq!(
            compare(r2.as_bytes(), e.as_bytes(), &blocks),
            FileMatch::Differs
        );
        // Nor the reverse direction: that needs a SEARCH ending blank.
        assert_eq!(
            compare(e.as_bytes(), r.as_bytes(), &blocks),
            FileMatch::Differs
        );
    }

    #[test]
    fn a_search_ending_in_a_blank_line_explains_one_blank_line_aider_kept() {
        let blocks = [block(&["old()", ""], &["new()"])];
        let (r, e) = ("x\nnew()\ny\n", "x\nnew()\n\ny\n");
        assert_eq!(
            compare(r.as_bytes(), e.as_bytes(), &blocks),
            FileMatch::Normalised
        );
    }

    #[test]
    fn an_explained_blank_line_must_follow_its_replacement() {
        let blocks = [block(&["old()"], &["new()", ""])];
        // The extra blank line is elsewhere in the file.
        let (r, e) = ("x\n\nnew()\ny\n", "x\nnew()\ny\n");
        assert_eq!(
            compare(r.as_bytes(), e.as_bytes(), &blocks),
            FileMatch::Differs
        );
        // Blank at both ends of the sections: aider drops both, no shift.
        let both = [block(&["old()", ""], &["new()", ""])];
        let (r, e) = ("x\nnew()\n\ny\n", "x\nnew()\ny\n");
        assert_eq!(
            compare(r.as_bytes(), e.as_bytes(), &both),
            FileMatch::Differs
        );
    }

    #[test]
    fn a_blank_line_rule_does_not_excuse_a_text_change() {
        let blocks = [block(&["old()"], &["new()", ""])];
        let (r, e) = ("x\nnew()\n\ny\n", "x\nnew()\nz\n");
        assert_eq!(
            compare(r.as_bytes(), e.as_bytes(), &blocks),
            FileMatch::Differs
        );
    }

    #[test]
    fn blocks_are_read_as_aider_delimits_them() {
        let response = "x.py\n```\n<<<<<<< SEARCH\na\n\n=======\nb\n>>>>>>> REPLACE\n```\n\
                        <<<<<<<< SEARCH\r\nc\r\n========\r\n\r\n=======\r\n";
        assert_eq!(
            blocks(response),
            [block(&["a", ""], &["b"]), block(&["c"], &[""])]
        );
        assert_eq!(blocks("<<<<<<< SEARCH\na\n=======\nb\n"), []);
        assert_eq!(blocks("<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n"), []);
    }

    fn run(kind: Kind, before: &Tree, expected: &Tree, after: &Tree, ok: bool) -> Raw {
        classify(kind, (before, expected, after), ok, &[])
    }

    #[test]
    fn a_run_is_equal_normalised_wrong_or_broken() {
        let before = tree(&[("a.py", "1\n"), ("b.py", "2\n")]);
        let expected = tree(&[("a.py", "one\n"), ("b.py", "two\n")]);
        let ok = Kind::Ok;
        assert_eq!(run(ok, &before, &expected, &expected, true), Raw::Equal);
        let crlf = tree(&[("a.py", "one\r\n"), ("b.py", "two\n")]);
        assert_eq!(run(ok, &before, &expected, &crlf, true), Raw::Normalised);
        let wrong = tree(&[("a.py", "one\n"), ("b.py", "three\n")]);
        assert_eq!(
            run(ok, &before, &expected, &wrong, true),
            Raw::Wrong {
                path: "b.py".into()
            }
        );
        let half = tree(&[("a.py", "one\n"), ("b.py", "2\n")]);
        assert_eq!(
            run(ok, &before, &expected, &half, true),
            Raw::Broken {
                path: "b.py".into()
            }
        );
        // Applied, and nothing changed at all.
        assert_eq!(
            run(ok, &before, &expected, &before, true),
            Raw::Broken {
                path: "a.py".into()
            }
        );
    }

    #[test]
    fn a_file_aider_did_not_write_is_wrong_and_a_creation_missing_is_broken() {
        let before = tree(&[("a.py", "1\n")]);
        let expected = tree(&[("a.py", "one\n"), ("new.py", "n\n")]);
        let extra = tree(&[("a.py", "one\n"), ("new.py", "n\n"), ("c.py", "")]);
        assert_eq!(
            run(Kind::Ok, &before, &expected, &extra, true),
            Raw::Wrong {
                path: "c.py".into()
            }
        );
        let no_new = tree(&[("a.py", "one\n")]);
        assert_eq!(
            run(Kind::Ok, &before, &expected, &no_new, true),
            Raw::Broken {
                path: "new.py".into()
            }
        );
    }

    #[test]
    fn a_refusal_must_leave_the_tree_unchanged() {
        let before = tree(&[("a.py", "1\n")]);
        let expected = tree(&[("a.py", "one\n")]);
        for kind in [Kind::Ok, Kind::RefuseOrUnknown] {
            assert_eq!(run(kind, &before, &expected, &before, false), Raw::Refused);
            assert_eq!(
                run(kind, &before, &expected, &expected, false),
                Raw::RefusedButWrote {
                    path: "a.py".into()
                }
            );
        }
        assert_eq!(
            run(Kind::RefuseOrUnknown, &before, &expected, &expected, true),
            Raw::Wrote
        );
    }
}
