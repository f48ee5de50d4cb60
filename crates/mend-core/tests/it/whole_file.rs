//! A fence under a file's name is a whole-file write only when it is
//! evidently the whole file: properties over random files.
//!
//! - An unchanged excerpt of the file, short of its lines with text, under
//!   its name never changes the file: a snippet when short (at most 8
//!   lines with text, or half of the file's), refused when longer (it may
//!   be the whole file with lines deleted).
//! - A copy of the file cut short (its head or its tail dropped) with a
//!   line of text changed is never written: writing it would delete the
//!   lines it left out.
//! - The whole file with lines changed in place is written as sent.

use mend_core::formats::{Format, parse};
use mend_core::{EditStatus, PlanOptions, plan_file};
use proptest::prelude::*;

const PATH: &str = "src/a.py";

/// Lines of a file: distinctive ones and lines every file repeats.
fn file_line() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => (0u32..60).prop_map(|k| format!("    value_{k} = compute({k})")),
        1 => prop::sample::select(vec!["}", "", "    return None", "end", "# ---"])
            .prop_map(str::to_owned),
    ]
}

fn file() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(file_line(), 2..40).prop_filter("some text", |ls| {
        ls.iter().filter(|l| !l.trim().is_empty()).count() >= 2
    })
}

fn text(lines: &[String]) -> String {
    let mut t = lines.join("\n");
    t.push('\n');
    t
}

/// Plans a response that shows `fence` under the file's name, with prose
/// around it, against `file`: the edit's status and the file's content.
fn plan_fence(file: &str, fence: &[String]) -> (EditStatus, Option<String>) {
    let response = format!(
        "Here is how the values are computed:\n\n{PATH}\n```python\n{}```\n\nThat is all.\n",
        text(fence)
    );
    let parsed = parse(&response, Format::Auto).expect("one fence");
    let edits: Vec<_> = parsed.edits().enumerate().collect();
    assert_eq!(edits.len(), 1, "{response}");
    let p = plan_file(PATH, Some(file), &edits, &PlanOptions::default());
    (p.reports[0].status, p.content)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn an_excerpt_is_a_snippet(lines in file(), a in any::<prop::sample::Index>(), b in any::<prop::sample::Index>()) {
        let (mut lo, mut hi) = (a.index(lines.len()), b.index(lines.len()) + 1);
        if lo >= hi {
            std::mem::swap(&mut lo, &mut hi);
            hi += 1;
        }
        let hi = hi.min(lines.len());
        let excerpt = &lines[lo..hi];
        prop_assume!(excerpt.iter().any(|l| !l.trim().is_empty()));
        let file = text(&lines);
        let (status, content) = plan_fence(&file, excerpt);
        // An excerpt holding every line with text is the whole file (its
        // blank edge lines aside), written as sent.
        let texts: Vec<usize> = (0..lines.len()).filter(|&i| !lines[i].trim().is_empty()).collect();
        if lo <= texts[0] && hi > texts[texts.len() - 1] {
            prop_assert_eq!(status, EditStatus::Applied);
            prop_assert_eq!(content, Some(text(excerpt)));
        } else {
            let shown = excerpt.iter().filter(|l| !l.trim().is_empty()).count();
            let short = shown <= 8 || 2 * shown <= texts.len();
            let expected = if short { EditStatus::Snippet } else { EditStatus::Failed };
            prop_assert_eq!(status, expected);
            prop_assert_eq!(content.as_deref(), Some(file.as_str()));
        }
    }

    #[test]
    fn a_copy_cut_short_with_a_changed_line_is_never_written(
        lines in file(),
        keep in any::<prop::sample::Index>(),
        at in any::<prop::sample::Index>(),
        from_top in any::<bool>(),
    ) {
        let n = lines.len();
        let k = 1 + keep.index(n - 1); // 1..n lines kept, never all
        let mut fence: Vec<String> = if from_top {
            lines[..k].to_vec()
        } else {
            lines[n - k..].to_vec()
        };
        // A line with text changed: a blank line changed at the cut would
        // hold the place of the line dropped there, as a rewrite of it.
        let texts: Vec<usize> = (0..fence.len()).filter(|&i| !fence[i].trim().is_empty()).collect();
        prop_assume!(!texts.is_empty());
        let j = texts[at.index(texts.len())];
        fence[j] = "    changed = True".to_owned();
        let dropped = if from_top { &lines[k..] } else { &lines[..n - k] };
        prop_assume!(dropped.iter().any(|l| !l.trim().is_empty()));
        let file = text(&lines);
        let (status, content) = plan_fence(&file, &fence);
        prop_assert_eq!(content.as_deref(), Some(file.as_str()), "{:?}", status);
    }

    #[test]
    fn the_whole_file_changed_in_place_is_written(lines in file(), at in any::<prop::sample::Index>()) {
        // A unique line at the top and the bottom, as real files have
        // (imports, a last call), so the ends are known.
        let mut lines = lines;
        lines.insert(0, "import os".to_owned());
        lines.push("main()".to_owned());
        let j = 1 + at.index(lines.len() - 2);
        let mut fence = lines.clone();
        fence[j] = "    changed = True".to_owned();
        let file = text(&lines);
        let (status, content) = plan_fence(&file, &fence);
        prop_assert_eq!(status, EditStatus::Applied);
        prop_assert_eq!(content, Some(text(&fence)));
    }
}

#[test]
fn an_explicit_whole_file_is_written_whatever_it_holds() {
    let file = "import os\nvalue = 1\nmain()\n";
    let response = format!("{PATH}\n```python\nvalue = 2\n```\n");
    let parsed = parse(&response, Format::WholeFile).unwrap();
    let edits: Vec<_> = parsed.edits().enumerate().collect();
    let p = plan_file(PATH, Some(file), &edits, &PlanOptions::default());
    assert_eq!(p.reports[0].status, EditStatus::Applied);
    assert_eq!(p.content.as_deref(), Some("value = 2\n"));
}

#[test]
fn a_snippet_of_what_an_earlier_edit_wrote_is_a_snippet() {
    let file = "import os\nvalue = 1\nmain()\n";
    let response = format!(
        "{PATH}\n<<<<<<< SEARCH\nvalue = 1\n=======\nvalue = 2\ntotal = 3\n>>>>>>> REPLACE\n\nNow it reads:\n\n{PATH}\n```python\nvalue = 2\ntotal = 3\n```\n"
    );
    let parsed = parse(&response, Format::Auto).unwrap();
    let edits: Vec<_> = parsed.edits().enumerate().collect();
    assert_eq!(edits.len(), 2);
    let p = plan_file(PATH, Some(file), &edits, &PlanOptions::default());
    assert_eq!(p.reports[0].status, EditStatus::Applied);
    assert_eq!(p.reports[1].status, EditStatus::Snippet);
    assert_eq!(p.reports[1].lines.map(|l| (l.start, l.end)), Some((2, 3)));
    assert_eq!(
        p.content.as_deref(),
        Some("import os\nvalue = 2\ntotal = 3\nmain()\n")
    );
}
