//! Blocks in sequence (issue 39): a response whose SEARCH/REPLACE blocks
//! are written one after another, each against the text the blocks before
//! it left, as aider applies them and Claude's MultiEdit does.
//!
//! The reference model is that simple reading: each block's search must
//! occur exactly once in the text as the earlier blocks left it, and is
//! replaced there. Property: when every search is unique that way, mend
//! gives the reference file or refuses (when reading the blocks against the
//! file as it was gives another file); when some search is not unique in
//! its turn, mend refuses. mend never writes any other file.

use mend_core::formats::{Format, parse};
use mend_core::{PlanOptions, plan_file};
use proptest::prelude::*;

const PATH: &str = "f.py";

/// Lines from a small vocabulary, so regions repeat and blocks can copy
/// text that the file has elsewhere.
fn line() -> impl Strategy<Value = String> {
    (0usize..3, 0u8..6, 0u8..4).prop_map(|(indent, name, arg)| {
        let name = ["total", "count", "items", "name", "value", "size"][name as usize];
        format!("{}{name} = fetch({arg})", "    ".repeat(indent))
    })
}

/// One block: a region of the text as it stands (start, 1–3 lines) and
/// its new lines, some copied from the region and some new.
#[derive(Debug, Clone)]
struct Step {
    start: prop::sample::Index,
    len: usize,
    new: Vec<String>,
    keep_first: bool,
}

fn step() -> impl Strategy<Value = Step> {
    (
        any::<prop::sample::Index>(),
        1usize..4,
        prop::collection::vec(line(), 0..3),
        any::<bool>(),
    )
        .prop_map(|(start, len, new, keep_first)| Step {
            start,
            len,
            new,
            keep_first,
        })
}

fn text(lines: &[String]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

fn occurrences(lines: &[String], run: &[String]) -> usize {
    lines.windows(run.len()).filter(|w| *w == run).count()
}

/// The response, and the reference result (`None` when a search is not
/// unique in its turn).
fn build(file: &[String], steps: &[Step]) -> (String, Option<String>) {
    let mut now = file.to_vec();
    let mut response = String::from("Here are the changes.\n\n");
    let mut unique = true;
    for s in steps {
        if now.is_empty() {
            break;
        }
        let start = s.start.index(now.len());
        let end = (start + s.len).min(now.len());
        let search = now[start..end].to_vec();
        let mut replace = Vec::new();
        if s.keep_first {
            replace.push(search[0].clone());
        }
        replace.extend(s.new.iter().cloned());
        // A block that changes nothing is a no-op wherever it is.
        unique &= replace == search || occurrences(&now, &search) == 1;
        response.push_str(&format!(
            "{PATH}\n```python\n<<<<<<< SEARCH\n{}=======\n{}>>>>>>> REPLACE\n```\n\n",
            text(&search),
            text(&replace)
        ));
        now.splice(start..end, replace);
    }
    (response, unique.then(|| text(&now)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn blocks_in_sequence_give_the_reference_or_a_refusal(
        file in prop::collection::vec(line(), 4..30),
        steps in prop::collection::vec(step(), 2..5),
    ) {
        let original = text(&file);
        let (response, reference) = build(&file, &steps);
        let parsed = parse(&response, Format::Auto).expect("blocks");
        let edits: Vec<_> = parsed.edits().enumerate().collect();
        let plan = plan_file(PATH, Some(&original), &edits, &PlanOptions::default());
        if plan.is_ok() {
            let got = plan.content.expect("the file stays");
            prop_assert_eq!(
                Some(&got), reference.as_ref(),
                "applied, but not as the blocks in sequence say:\n{}", response
            );
        }
    }
}
