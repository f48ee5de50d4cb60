//! Ties are refused: a search or an anchor whose slip is as close to one
//! of two twin regions as to the other names neither, whatever similarity
//! ratio favours the longer word.

use mend_core::{Edit, EditOp, EditStatus, Hints, PlanOptions, Replace, Target, plan_file};

use crate::support::{edit, lines, plan};
use proptest::prelude::*;

fn status(text: &str, search: &[String], replace: &[String]) -> (EditStatus, Option<String>) {
    plan(text, &edit(search, replace))
}

/// Two methods whose docstrings differ in `top` and `bottom`; the search
/// says `botop`, two character edits from each.
#[test]
fn a_token_two_edits_from_both_twins_is_refused() {
    let file = "class Panel:\n    def raise_(self):\n        \"\"\"Move the panel to the top of the stack.\n\n        Other panels keep their order.\n        \"\"\"\n        self.stack.move(self, 0)\n\n    def lower(self):\n        \"\"\"Move the panel to the bottom of the stack.\n\n        Other panels keep their order.\n        \"\"\"\n        self.stack.move(self, 0)\n";
    let search = lines(
        "        \"\"\"Move the panel to the botop of the stack.\n\n        Other panels keep their order.\n        \"\"\"\n        self.stack.move(self, 0)",
    );
    let mut replace = search.clone();
    replace[4] = "        self.stack.move(self, -1)".into();
    let (st, content) = status(file, &search, &replace);
    assert_eq!(st, EditStatus::Failed, "{content:?}");
}

/// A slip closer to one twin than to the other still applies there.
#[test]
fn a_token_nearer_one_twin_applies_to_it() {
    let file = "def first():\n    \"\"\"Return the smallest value of the table.\"\"\"\n    return table.pick(values)\n\ndef last():\n    \"\"\"Return the greatest value of the table.\"\"\"\n    return table.pick(values)\n";
    let search = lines(
        "    \"\"\"Return the greatestt value of the table.\"\"\"\n    return table.pick(values)",
    );
    let replace = lines(
        "    \"\"\"Return the greatest value of the table.\"\"\"\n    return table.pick(reversed(values))",
    );
    let (st, content) = status(file, &search, &replace);
    assert_eq!(st, EditStatus::Applied);
    assert!(
        content
            .unwrap()
            .ends_with("    return table.pick(reversed(values))\n")
    );
}

/// One character edit of `word`: a substitution, an insertion or a
/// deletion at `at`.
fn one_edit(word: &str, kind: u8, at: usize, c: char) -> String {
    let mut cs: Vec<char> = word.chars().collect();
    let at = at % (cs.len() + 1);
    match kind % 3 {
        0 if at < cs.len() => cs[at] = c,
        1 => cs.insert(at, c),
        _ if at < cs.len() => {
            cs.remove(at);
        }
        _ => cs.insert(at, c),
    }
    cs.into_iter().collect()
}

fn word() -> impl Strategy<Value = String> {
    "[a-z]{5,9}"
}

fn filler() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec("[a-z]{3,8}", 2..6).prop_map(|ws| {
        ws.iter()
            .enumerate()
            .map(|(i, w)| format!("    step_{i}_{w}(state)"))
            .collect()
    })
}

/// `word` with `n` characters removed from `at` (a shorter twin) or `cs`
/// inserted there (a longer one).
fn shorter(word: &str, at: usize, n: usize) -> String {
    let cs: Vec<char> = word.chars().collect();
    let at = at % (cs.len() - n);
    cs[..at].iter().chain(&cs[at + n..]).collect()
}

fn longer(word: &str, at: usize, add: &str) -> String {
    let cs: Vec<char> = word.chars().collect();
    let at = at % (cs.len() + 1);
    cs[..at]
        .iter()
        .copied()
        .chain(add.chars())
        .chain(cs[at..].iter().copied())
        .collect()
}

fn distance(a: &str, b: &str) -> usize {
    rapidfuzz::distance::levenshtein::distance(a.chars(), b.chars())
}

proptest! {
    /// Twins differing in one token, a search token as many character
    /// edits from each (one twin's word shorter, the other's longer, so a
    /// length-normalized ratio prefers the longer): never applied to
    /// either.
    #[test]
    fn equidistant_twins_are_never_chosen(
        s in word(),
        (one, pa, pb, add) in (prop::bool::ANY, 0usize..10, 0usize..10, "[a-z]{2}"),
        same_kind in prop::bool::ANY,
        (ka, ca) in (0u8..3, prop::char::range('a', 'z')),
        body in filler(),
        row in 0usize..3,
    ) {
        let n = if one { 1 } else { 2 };
        let a = shorter(&s, pa, n);
        let b = if same_kind { one_edit(&s, ka, pb, ca) } else { longer(&s, pb, &add[..n]) };
        prop_assume!(a != b && a != s && b != s && a.len() >= 3);
        prop_assume!(distance(&s, &a) == distance(&s, &b));
        let block = |w: &str| -> Vec<String> {
            let mut out = body.clone();
            let row = row.min(out.len() - 1);
            out[row] = format!("    note = \"the {w} side of the frame\"");
            out
        };
        let mut file = vec!["def first(state):".to_owned()];
        file.extend(block(&a));
        file.push(String::new());
        file.push("def second(state):".to_owned());
        file.extend(block(&b));
        let text = file.join("\n") + "\n";
        let search = block(&s);
        let mut replace = search.clone();
        replace.push("    return state".to_owned());
        let (st, content) = status(&text, &search, &replace);
        prop_assert_ne!(st, EditStatus::Applied, "{:?}", content);
        // The same line as an anchor: matched nowhere exactly, as close to
        // both twins' lines, so it names neither.
        let line = search[row.min(search.len() - 1)].clone();
        let anchored = Edit {
            op: EditOp::Replace(Replace {
                target: Target::Region {
                    start: vec![line.clone()],
                    end: Vec::new(),
                    content: vec![line, "    return state".to_owned()],
                },
                replace_all: false,
                hints: Hints::default(),
            }),
            ..edit(&search, &replace)
        };
        let p = plan_file("f.py", Some(&text), &[(0, &anchored)], &PlanOptions::default());
        prop_assert_ne!(p.reports[0].status, EditStatus::Applied, "{:?}", p.content);
    }
}
