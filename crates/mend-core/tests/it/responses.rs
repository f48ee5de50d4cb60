//! Whole responses (issue 39): random files, a few disjoint SEARCH/REPLACE
//! blocks taken from the file, and prose around fenced snippets of the same
//! file shown "for reference": unchanged excerpts of the file (or, after
//! the blocks, of the text they left), under a line naming the file or
//! not, in every fence style models use.
//!
//! Property: the response is either refused (a malformed block, a failed
//! edit) or gives exactly the file with the blocks' changes. A snippet never
//! changes a byte, and never becomes a write of its own.

use mend_core::formats::{Entry, Format, parse};
use mend_core::{Edit, PlanOptions, plan_file};
use proptest::prelude::*;

/// The one file of every response.
const PATH: &str = "f.py";

/// Distinct code-like lines with a blank line now and then (at most one in
/// four, so an excerpt of a third of the file never covers it), so each
/// block's region is unique and only the snippets can go wrong.
fn file() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(("[a-z]{3,8}", 0u32..1000, 0usize..3, 0u8..8), 18..60).prop_map(|v| {
        v.into_iter()
            .enumerate()
            .map(|(i, (w, n, indent, blank))| {
                if blank == 0 && i % 4 == 3 {
                    String::new()
                } else {
                    format!("{}{w}_{i} = compute({n}, \"{w}\")", "    ".repeat(indent))
                }
            })
            .collect()
    })
}

/// What a block does to its region.
#[derive(Debug, Clone, Copy)]
enum Change {
    /// Replace the region's line `k` (modulo its length).
    Rewrite(usize),
    /// Insert a line after the region's line `k`.
    Insert(usize),
    /// Delete the region's line `k`.
    Delete(usize),
}

/// How a snippet is fenced.
#[derive(Debug, Clone, Copy)]
enum Fence {
    Python,
    Bare,
    Tilde,
    FourBackticks,
    Source,
    /// ```` ```python:f.py ````: the info string names the file.
    InfoPath,
}

/// The line above a snippet.
#[derive(Debug, Clone, Copy)]
enum Head {
    PathLine,
    Backticked,
    Bold,
    Colon,
    Heading,
    /// Prose that names the file inside a sentence.
    Sentence,
    Nothing,
}

/// A snippet: an excerpt of `len` lines from `start`, of the original file
/// or (`after` true: shown after every block) of the text the blocks left.
#[derive(Debug, Clone)]
struct Snippet {
    start: prop::sample::Index,
    len: usize,
    fence: Fence,
    head: Head,
    after: bool,
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        (0usize..4).prop_map(Change::Rewrite),
        (0usize..4).prop_map(Change::Insert),
        (0usize..4).prop_map(Change::Delete),
    ]
}

fn snippet() -> impl Strategy<Value = Snippet> {
    let fence = prop_oneof![
        Just(Fence::Python),
        Just(Fence::Bare),
        Just(Fence::Tilde),
        Just(Fence::FourBackticks),
        Just(Fence::Source),
        Just(Fence::InfoPath),
    ];
    let head = prop_oneof![
        Just(Head::PathLine),
        Just(Head::Backticked),
        Just(Head::Bold),
        Just(Head::Colon),
        Just(Head::Heading),
        Just(Head::Sentence),
        Just(Head::Nothing),
    ];
    (
        any::<prop::sample::Index>(),
        1usize..6,
        fence,
        head,
        any::<bool>(),
    )
        .prop_map(|(start, len, fence, head, after)| Snippet {
            start,
            len,
            fence,
            head,
            after,
        })
}

/// The blocks' regions: `k` disjoint runs, one per equal slice of the file,
/// each holding a non-blank line and leaving the slice's last line alone.
fn regions(lines: &[String], picks: &[(prop::sample::Index, usize)]) -> Vec<(usize, usize)> {
    let slice = lines.len() / picks.len();
    let mut out = Vec::new();
    for (j, (at, len)) in picks.iter().enumerate() {
        let room = slice - 1;
        let start = j * slice + at.index(room);
        let len = (*len).min(j * slice + room - start).max(1);
        if lines[start..start + len].iter().any(|l| !l.is_empty()) {
            out.push((start, len));
        }
    }
    out
}

/// The region's replacement after `change`.
fn replaced(region: &[String], change: Change, tag: usize) -> Vec<String> {
    let mut out = region.to_vec();
    let indent = |l: &str| l[..l.len() - l.trim_start().len()].to_owned();
    match change {
        Change::Rewrite(k) => {
            let k = k % out.len();
            out[k] = format!("{}rewritten_{tag} = 1", indent(&out[k]));
        }
        Change::Insert(k) => {
            let k = k % out.len();
            let line = format!("{}inserted_{tag} = 2", indent(&out[k]));
            out.insert(k + 1, line);
        }
        Change::Delete(k) => {
            let k = k % out.len();
            out.remove(k);
        }
    }
    out
}

fn text(lines: &[String]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// A SEARCH/REPLACE block for [`PATH`], as aider writes it.
fn block(search: &[String], replace: &[String]) -> String {
    format!(
        "{PATH}\n```python\n<<<<<<< SEARCH\n{}=======\n{}>>>>>>> REPLACE\n```\n",
        text(search),
        text(replace)
    )
}

/// A snippet of `excerpt`, with its head line and fence.
fn fenced(excerpt: &[String], head: Head, fence: Fence) -> String {
    let head = match head {
        Head::PathLine => format!("{PATH}\n"),
        Head::Backticked => format!("`{PATH}`\n"),
        Head::Bold => format!("**{PATH}**\n"),
        Head::Colon => format!("{PATH}:\n"),
        Head::Heading => format!("### {PATH}\n\n"),
        Head::Sentence => format!("This is the part of `{PATH}` that matters here:\n\n"),
        Head::Nothing => "For reference:\n\n".to_owned(),
    };
    let (open, close) = match fence {
        Fence::Python => ("```python".to_owned(), "```"),
        Fence::Bare => ("```".to_owned(), "```"),
        Fence::Tilde => ("~~~py".to_owned(), "~~~"),
        Fence::FourBackticks => ("````python".to_owned(), "````"),
        Fence::Source => ("<source>".to_owned(), "</source>"),
        Fence::InfoPath => (format!("```python:{PATH}"), "```"),
    };
    format!("{head}{open}\n{}{close}\n", text(excerpt))
}

/// A run of `from` for `s`: shorter than a third of the file, so it never
/// covers the file (and so is never the whole file).
fn excerpt<'a>(from: &'a [String], s: &Snippet, file_len: usize) -> &'a [String] {
    let len = s.len.min(file_len / 3).min(from.len()).max(1);
    let start = s.start.index(from.len() - len + 1);
    &from[start..start + len]
}

/// The response: prose, the blocks and the snippets of the original in
/// `order`, then the snippets of the text the blocks left.
fn response(
    original: &[String],
    after: &[String],
    blocks: &[String],
    snippets: &[Snippet],
    order: &[usize],
) -> String {
    let mut parts = vec!["Here is what I found, and the changes.\n".to_owned()];
    let before: Vec<&Snippet> = snippets.iter().filter(|s| !s.after).collect();
    for &i in order {
        if let Some(b) = blocks.get(i) {
            parts.push("Change it like this:\n".to_owned());
            parts.push(b.clone());
        } else if let Some(s) = before.get(i - blocks.len()) {
            parts.push(fenced(
                excerpt(original, s, original.len()),
                s.head,
                s.fence,
            ));
        }
    }
    for s in snippets.iter().filter(|s| s.after) {
        parts.push("After the change it reads:\n".to_owned());
        parts.push(fenced(excerpt(after, s, original.len()), s.head, s.fence));
    }
    parts.push("That should be all.\n".to_owned());
    parts.join("\n")
}

/// `Err` when the response is applied but differs from `expected`; `Ok`
/// for a refusal or the expected text.
fn check(original: &str, response: &str, expected: &str) -> Result<(), TestCaseError> {
    let Ok(parsed) = parse(response, Format::Auto) else {
        return Ok(());
    };
    if parsed
        .entries
        .iter()
        .any(|e| matches!(e, Entry::Malformed(_)))
    {
        return Ok(());
    }
    let edits: Vec<&Edit> = parsed.edits().collect();
    let elsewhere: Vec<&str> = edits
        .iter()
        .map(|e| e.path.as_str())
        .filter(|p| *p != PATH)
        .collect();
    prop_assert!(elsewhere.is_empty(), "edits to {elsewhere:?}");
    let pairs: Vec<(usize, &Edit)> = edits.into_iter().enumerate().collect();
    let plan = plan_file(PATH, Some(original), &pairs, &PlanOptions::default());
    if !plan.is_ok() {
        return Ok(());
    }
    prop_assert_eq!(plan.content.as_deref(), Some(expected));
    Ok(())
}

/// One generated response: the file, where its blocks go and what they do,
/// the snippets, and the keys that interleave blocks and snippets.
#[derive(Debug, Clone)]
struct Case {
    lines: Vec<String>,
    picks: Vec<(prop::sample::Index, usize)>,
    changes: Vec<Change>,
    snippets: Vec<Snippet>,
    keys: Vec<u32>,
}

fn case() -> impl Strategy<Value = Case> {
    (
        file(),
        prop::collection::vec((any::<prop::sample::Index>(), 1usize..5), 1..4),
        prop::collection::vec(change(), 3),
        prop::collection::vec(snippet(), 1..5),
        prop::collection::vec(any::<u32>(), 8),
    )
        .prop_map(|(lines, picks, changes, snippets, keys)| Case {
            lines,
            picks,
            changes,
            snippets,
            keys,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn snippets_beside_blocks_never_change_a_byte(
        case in case(),
    ) {
        let Case { lines, picks, changes, snippets, keys } = case;
        let spans = regions(&lines, &picks);
        prop_assume!(!spans.is_empty());
        let mut after = lines.clone();
        let mut blocks = Vec::new();
        for (tag, &(start, len)) in spans.iter().enumerate().rev() {
            let region = &lines[start..start + len];
            let new = replaced(region, changes[tag], tag);
            after.splice(start..start + len, new.iter().cloned());
            blocks.push(block(region, &new));
        }
        let before = snippets.iter().filter(|s| !s.after).count();
        // Blocks and snippets interleaved in the order the keys give.
        let mut order: Vec<usize> = (0..blocks.len() + before).collect();
        order.sort_by_key(|&i| (keys[i % keys.len()], i));
        let original = text(&lines);
        let expected = text(&after);
        let response = response(&lines, &after, &blocks, &snippets, &order);
        check(&original, &response, &expected)?;
    }
}
