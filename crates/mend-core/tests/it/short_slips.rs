//! Short searches with a slip: a search of one to three lines copied from
//! a file with one or two typing slips in one line applies where it was
//! copied from, or refuses; it never changes another place. The files
//! are built from a small vocabulary of near-twin names (`item` and
//! `items`, `data` and `date`), blank lines, braces and keyword lines,
//! so the same line elsewhere, a twin one edit away and a slip into a
//! name the file uses all come up.

use mend_core::{Edit, EditOp, EditStatus, Hints, PlanOptions, Replace, Target, plan_file};
use proptest::prelude::*;

use crate::support::{PATH, edit, lines, plan};

/// Names in near-twin pairs, a slip or an edit apart.
const NAMES: [&str; 12] = [
    "item", "items", "data", "date", "count", "counts", "total", "totals", "parse", "parser",
    "load", "lead",
];

/// A line of code from [`NAMES`]: an assignment, a call, a field, a
/// condition, an import, a string, or a blank, brace or keyword line.
fn line() -> impl Strategy<Value = String> {
    (0usize..3, 0usize..NAMES.len(), 0usize..NAMES.len(), 0u8..11).prop_map(
        |(indent, a, b, shape)| {
            let pad = "    ".repeat(indent);
            let (a, b) = (NAMES[a], NAMES[b]);
            match shape {
                0 => String::new(),
                1 => format!("{pad}}}"),
                2 => format!("{pad}end"),
                3 => format!("{pad}return {a};"),
                4 => format!("{pad}{a}: {b},"),
                5 => format!("{pad}if {a} > {b} {{"),
                6 => format!("{pad}import {a}"),
                7 => format!("{pad}msg = \"{a} {b}\""),
                8 => format!("{pad}self.{a} = {b}"),
                _ => format!("{pad}let {a} = {b}({a});"),
            }
        },
    )
}

/// The keys beside a letter on a QWERTY keyboard, in its row.
fn beside(c: char) -> Vec<char> {
    const ROWS: [&str; 3] = ["qwertyuiop", "asdfghjkl", "zxcvbnm"];
    let Some(row) = ROWS.iter().find(|r| r.contains(c)) else {
        return vec![c];
    };
    let row: Vec<char> = row.chars().collect();
    let at = row.iter().position(|&k| k == c).unwrap_or(0);
    [at.checked_sub(1), Some(at + 1)]
        .into_iter()
        .flatten()
        .filter_map(|i| row.get(i).copied())
        .collect()
}

/// One typing slip in `word` at `at`: neighbours swapped, a letter
/// dropped or doubled, or a neighbouring key struck instead.
fn slip(word: &str, kind: u8, at: usize) -> String {
    let mut cs: Vec<char> = word.chars().collect();
    let k = at % cs.len();
    match kind % 4 {
        0 if k + 1 < cs.len() => cs.swap(k, k + 1),
        1 if cs.len() > 2 => {
            cs.remove(k);
        }
        2 => cs.insert(k, cs[k]),
        _ => {
            let keys = beside(cs[k]);
            cs[k] = keys[at % keys.len()];
        }
    }
    cs.into_iter().collect()
}

/// The byte ranges of the words of three or more letters in a line.
fn words(l: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in l.char_indices().chain(std::iter::once((l.len(), ' '))) {
        if c.is_ascii_alphabetic() {
            start.get_or_insert(i);
        } else if let Some(s) = start.take()
            && i - s >= 3
        {
            out.push((s, i));
        }
    }
    out
}

/// `l` with one or two slips (`slips` of `(kind, at)`) in one word, or
/// one in each of two words.
fn slipped_line(l: &str, slips: &[(u8, usize)], two_words: bool, pick: usize) -> Option<String> {
    let ws = words(l);
    if ws.is_empty() {
        return None;
    }
    let first = pick % ws.len();
    let plan: Vec<(usize, &[(u8, usize)])> = if two_words && ws.len() > 1 && slips.len() > 1 {
        let second = (first + 1) % ws.len();
        let (a, b) = (first.min(second), first.max(second));
        vec![(a, &slips[..1]), (b, &slips[1..2])]
    } else {
        vec![(first, slips)]
    };
    let mut out = String::new();
    let mut at = 0;
    for (wi, ss) in plan {
        let (a, b) = ws[wi];
        let mut w = l[a..b].to_owned();
        for &(kind, k) in ss {
            w = slip(&w, kind, k);
        }
        out.push_str(&l[at..a]);
        out.push_str(&w);
        at = b;
    }
    out.push_str(&l[at..]);
    (out != l).then_some(out)
}

/// A line as the loosest pass compares it: trimmed, inner spaces as one.
fn loose(l: &str) -> String {
    l.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether `search` is found, as it is, somewhere in `file`: then it is
/// no slip but another place's text.
fn found_as_is(file: &[String], search: &[String]) -> bool {
    let s: Vec<String> = search.iter().map(|l| loose(l)).collect();
    file.windows(search.len())
        .any(|w| w.iter().map(|l| loose(l)).eq(s.iter().cloned()))
}

/// A case: the file, where the search was copied from and how long it
/// is, the slipped line and its slips, the line the edit changes, and
/// whether it is sent as an `old_string`.
type Case = (
    Vec<String>,
    usize,
    usize,
    usize,
    Vec<(u8, usize)>,
    bool,
    usize,
    bool,
);

fn case() -> impl Strategy<Value = Case> {
    prop::collection::vec(line(), 6..40).prop_flat_map(|file| {
        let n = file.len();
        (
            Just(file),
            0..n,
            1usize..4,
            0usize..3,
            prop::collection::vec((0u8..4, 0usize..9), 1..3),
            any::<bool>(),
            0usize..3,
            any::<bool>(),
        )
    })
}

/// Plans a replacement of `search` by `replace` in `file`, as lines or as
/// an `old_string`.
fn plan_case(
    file: &str,
    search: &[String],
    replace: &[String],
    text: bool,
) -> (EditStatus, Option<String>) {
    if !text {
        return plan(file, &edit(search, replace));
    }
    let e = Edit {
        path: PATH.into(),
        op: EditOp::Replace(Replace {
            target: Target::Text {
                old: search.join("\n"),
                new: replace.join("\n"),
            },
            replace_all: false,
            hints: Hints::default(),
        }),
        origin: None,
    };
    let p = plan_file(PATH, Some(file), &[(0, &e)], &PlanOptions::default());
    (p.reports[0].status, p.content)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// A short search with a slip in one line, among near-twin lines,
    /// gives the file the edit meant or a refusal, never another file;
    /// the slip is never written where the line is kept.
    #[test]
    fn a_slipped_short_search_gives_the_edit_or_a_refusal(
        (file, start, len, which, slips, two_words, changed, text) in case()
    ) {
        let len = len.min(file.len() - start);
        let copied = &file[start..start + len];
        let j = which % len;
        let Some(slipped) = slipped_line(&copied[j], &slips, two_words, start) else {
            return Ok(());
        };
        let mut search = copied.to_vec();
        search[j] = slipped;
        prop_assume!(!found_as_is(&file, &search));
        // An old_string found inside a line is replaced there, as sent.
        prop_assume!(!text || !file.join("\n").contains(&search.join("\n")));
        prop_assume!(search.iter().any(|l| !l.trim().is_empty()));
        // The edit rewrites one line of the search; the others are kept.
        let c = changed % len;
        let indent: String = copied[c].chars().take_while(|ch| *ch == ' ').collect();
        let new_line = format!("{indent}changed();");
        let mut replace = search.clone();
        replace[c] = new_line.clone();
        let mut want = file.clone();
        want[start + c] = new_line;
        let text_of = |ls: &[String]| ls.join("\n") + "\n";
        let (st, out) = plan_case(&text_of(&file), &search, &replace, text);
        if st == EditStatus::Applied {
            let want = text_of(&want);
            prop_assert_eq!(
                out.as_deref(),
                Some(want.as_str()),
                "search {:?} copied from line {}", search, start + 1
            );
        }
    }
}

/// Plans `search` → `replace` (joined lines) against `file` as SEARCH
/// lines.
fn run(file: &str, search: &str, replace: &str) -> (EditStatus, Option<String>) {
    plan(file, &edit(&lines(search), &lines(replace)))
}

const LOADER: &str = "import json\n\ndef load(path):\n    with open(path) as f:\n        data = json.load(f)\n    return data\n";

#[test]
fn a_one_line_search_with_a_slip_applies_where_it_was_copied_from() {
    let (st, out) = run(LOADER, "    retrun data", "    return data or {}");
    assert_eq!(st, EditStatus::Applied);
    assert_eq!(
        out.as_deref(),
        Some(
            LOADER
                .replace("    return data\n", "    return data or {}\n")
                .as_str()
        )
    );
}

/// Context lines that repeat the slipped line keep the file's spelling.
#[test]
fn the_slip_is_never_written_where_its_line_is_kept() {
    let (st, out) = run(
        LOADER,
        "        data = json.laod(f)",
        "        data = json.laod(f)\n    data.pop(\"meta\", None)",
    );
    assert_eq!(st, EditStatus::Applied);
    assert_eq!(
        out.as_deref(),
        Some(
            LOADER
                .replace(
                    "        data = json.load(f)\n",
                    "        data = json.load(f)\n    data.pop(\"meta\", None)\n"
                )
                .as_str()
        )
    );
}

#[test]
fn the_same_line_elsewhere_refuses() {
    let file = format!("{LOADER}\ndef again(path):\n    data = {{}}\n    return data\n");
    assert_eq!(
        run(&file, "    retrun data", "    return None").0,
        EditStatus::Failed
    );
}

/// `dtaa` is a slip of `data`, and the same line with `date`, one edit
/// from `data`, is a twin that close: refused.
#[test]
fn a_twin_one_edit_away_refuses() {
    let file = "def stamp(row):\n    key = row.data\n    if fresh:\n        key = row.date\n    return key\n";
    assert_eq!(
        run(file, "    key = row.dtaa", "    key = row.data.strip()").0,
        EditStatus::Failed
    );
}

/// `itme` is a slip of `item` and of `items` (`itmes` less one letter):
/// the search could be either line.
#[test]
fn a_search_that_slips_two_ways_refuses() {
    let file = "for x in xs:\n    total += x.item\n    total += x.items\n";
    assert_eq!(
        run(file, "    total += x.itme", "    total -= x.item").0,
        EditStatus::Failed
    );
}

/// `lead` names a function the file has: the search is another line.
#[test]
fn a_slip_into_a_name_the_file_uses_refuses() {
    let file = "def lead():\n    pass\n\nvalue = load(path)\n";
    assert_eq!(
        run(
            file,
            "value = lead(path)",
            "value = load(path, strict=True)"
        )
        .0,
        EditStatus::Failed
    );
}

/// A line of one keyword, or a brace, cannot place a search: `ned` is a
/// slip of `end`, unique in the file, and still refused.
#[test]
fn a_keyword_or_punctuation_line_places_nothing() {
    let file = "def f\n  x = 1\nend\n";
    assert_eq!(run(file, "ned", "end # f").0, EditStatus::Failed);
    let file = "if x:\n    a()\nelse:\n    b()\n";
    assert_eq!(
        run(file, "eles:", "else:  # fallback").0,
        EditStatus::Failed
    );
}

/// A number, an operator, or the text between words (brackets, quotes)
/// that differs is no slip.
#[test]
fn numbers_operators_and_punctuation_are_never_slips() {
    let file = "limit = compute(base, 10)\nready = count >= limit\nname = label(\"x\")\n";
    for (search, replace) in [
        ("limit = compute(base, 11)", "limit = compute(base, 12)"),
        ("ready = coutn > limit", "ready = False"),
        ("name = lable('x')", "name = None"),
    ] {
        assert_eq!(run(file, search, replace).0, EditStatus::Failed, "{search}");
    }
}

/// A deletion whose kept lines already stand where the search is could be
/// the edit applied before (the deleted line gone, a line one slip from it
/// next): refused, not guessed.
#[test]
fn a_slipped_deletion_whose_result_stands_refuses() {
    let file = "call(\n    block=block,\n    strict=True,\n)\n";
    assert_eq!(
        run(
            file,
            "    block=block,\n    srtict=True,",
            "    block=block,"
        )
        .0,
        EditStatus::Failed
    );
}

/// The search's first line, `edn`, pairs with no line of the window the
/// similarity pass finds, and the blank line before it, which the edit
/// turns into code, cannot be placed: refused. It was once written after
/// `end`, with the blank line left.
#[test]
fn a_blank_edge_beyond_an_unpaired_line_refuses() {
    let file = "\n    end\nmsg = \"parser item\"\nlet count = data(count);\n    end\n";
    assert_eq!(
        run(
            file,
            "\n    edn\nmsg = \"parser item\"",
            "changed();\n    edn\nmsg = \"parser item\""
        )
        .0,
        EditStatus::Failed
    );
}
