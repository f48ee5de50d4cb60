//! Both readings of a bare `...` line: Python's Ellipsis and a model's
//! "lines left out". The code reading is tried first; the elision reading
//! applies only where the file has lines between the pieces around the
//! marker; where both fit with different results, the edit is refused.

use mend_core::{Edit, EditStatus, Format, PlanOptions, formats, plan_file};
use proptest::prelude::*;

use crate::support::{edit, lines, plan};

/// A module of functions with distinct names and bodies; `stub` bodies are
/// `...`.
fn module(bodies: &[Vec<String>], stub: &[bool]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, body) in bodies.iter().enumerate() {
        out.push(format!("def handler_{i}(event):"));
        if stub[i] {
            out.push("    ...".to_owned());
        } else {
            out.extend(body.iter().cloned());
        }
        out.push(format!("    return result_{i}"));
        out.push(String::new());
    }
    out
}

fn joined(lines: &[String]) -> String {
    let mut s = lines.join("\n");
    s.push('\n');
    s
}

fn body() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec("[a-z]{3,8}", 2..7).prop_map(|ws| {
        ws.iter()
            .enumerate()
            .map(|(i, w)| format!("    {w}_{i} = compute_{w}(event, {i})"))
            .collect()
    })
}

fn bodies() -> impl Strategy<Value = Vec<Vec<String>>> {
    prop::collection::vec(body(), 2..6)
}

proptest! {
    /// A bare `...` standing for a stretch of a real body, paired in the
    /// search and the replacement: the elided lines are kept, the change
    /// lands, and `...` is never written.
    #[test]
    fn elision_reading_keeps_the_lines(
        bodies in bodies(),
        pick in 0usize..6,
        (cut, len) in (0usize..6, 1usize..6),
    ) {
        let f = pick % bodies.len();
        let b = &bodies[f];
        prop_assume!(b.len() >= 3);
        // Keep at least the first body line before the marker.
        let a = 1 + cut % (b.len() - 1);
        let z = (a + len).min(b.len());
        let stub = vec![false; bodies.len()];
        let file = module(&bodies, &stub);
        let head = format!("def handler_{f}(event):");
        let tail = format!("    return result_{f}");
        let mut search = vec![head.clone()];
        search.extend(b[..a].iter().cloned());
        search.push("    ...".into());
        search.extend(b[z..].iter().cloned());
        search.push(tail.clone());
        let mut replace = search.clone();
        let last = replace.len() - 1;
        replace[last] = format!("    return sorted(result_{f})");
        let (st, content) = plan(&joined(&file), &edit(&search, &replace));
        let mut want = file.clone();
        let at = want.iter().position(|l| *l == tail).expect("tail");
        want[at] = format!("    return sorted(result_{f})");
        prop_assert_eq!(st, EditStatus::Applied);
        let want = joined(&want);
        prop_assert_eq!(content.as_deref(), Some(want.as_str()));
    }

    /// Stubs whose body is `...`: a search that copies one, `...` and all,
    /// is the code reading, applied in place.
    #[test]
    fn code_reading_wins_where_the_file_has_the_line(
        bodies in bodies(),
        pick in 0usize..6,
        stubs in prop::collection::vec(prop::bool::ANY, 6),
    ) {
        let f = pick % bodies.len();
        let mut stub: Vec<bool> = stubs[..bodies.len()].to_vec();
        stub[f] = true;
        let file = module(&bodies, &stub);
        let search = vec![
            format!("def handler_{f}(event):"),
            "    ...".to_owned(),
            format!("    return result_{f}"),
        ];
        let replace = vec![
            format!("def handler_{f}(event, context):"),
            "    ...".to_owned(),
            format!("    return result_{f}"),
        ];
        let (st, content) = plan(&joined(&file), &edit(&search, &replace));
        let mut want = file.clone();
        let at = want.iter().position(|l| *l == search[0]).expect("head");
        want[at] = replace[0].clone();
        prop_assert_eq!(st, EditStatus::Applied);
        let want = joined(&want);
        prop_assert_eq!(content.as_deref(), Some(want.as_str()));
    }

    /// The same header and return line around a stub's `...` and around a
    /// real body elsewhere: both readings fit with different results, so
    /// the edit is never applied.
    #[test]
    fn both_readings_fitting_differently_are_refused(
        bodies in bodies(),
        (s, r) in (0usize..6, 0usize..6),
    ) {
        let (s, r) = (s % bodies.len(), r % bodies.len());
        prop_assume!(s != r);
        let mut stub = vec![false; bodies.len()];
        stub[s] = true;
        let mut file = module(&bodies, &stub);
        // The real body's function gets the stub's header and return line.
        let (hs, ts) = (format!("def handler_{s}(event):"), format!("    return result_{s}"));
        for l in file.iter_mut() {
            if *l == format!("def handler_{r}(event):") {
                *l = hs.clone();
            } else if *l == format!("    return result_{r}") {
                *l = ts.clone();
            }
        }
        let search = vec![hs.clone(), "    ...".to_owned(), ts.clone()];
        let replace = vec![hs.clone(), "    ...".to_owned(), "    return None".to_owned()];
        let (st, content) = plan(&joined(&file), &edit(&search, &replace));
        prop_assert_eq!(st, EditStatus::Failed, "{:?}", content);
    }
}

/// An anchored change whose `content` elides the region's middle with a
/// bare `...` between copied lines keeps those lines and never writes the
/// marker: the edits a model sends for Python that were once written over.
#[test]
fn anchored_bare_ellipsis_between_copies_keeps_the_region() {
    let file = "def run(job):\n    prepare(job)\n    step_one(job)\n    step_two(job)\n    finish(job)\n    return job\n";
    let call = r#"{"path": "f.py", "changes": [{"start": ["def run(job):"], "end": ["    return job"],
        "content": ["def run(job, log):", "    prepare(job)", "    ...", "    finish(job)", "    log.done(job)", "    return job"]}]}"#;
    let parsed = formats::parse(call, Format::Anchored).expect("anchored");
    let edits: Vec<(usize, &Edit)> = parsed.edits().enumerate().collect();
    let p = plan_file("f.py", Some(file), &edits, &PlanOptions::default());
    assert_eq!(
        p.content.as_deref(),
        Some(
            "def run(job, log):\n    prepare(job)\n    step_one(job)\n    step_two(job)\n    finish(job)\n    log.done(job)\n    return job\n"
        )
    );
}

/// The same content with the marker right after a changed line: the new
/// line may replace `step_one` or come before it, so mend refuses.
#[test]
fn anchored_marker_beside_a_new_line_is_refused() {
    let file =
        "def run(job):\n    prepare(job)\n    step_one(job)\n    step_two(job)\n    return job\n";
    let call = r#"{"path": "f.py", "changes": [{"start": ["def run(job):"], "end": ["    return job"],
        "content": ["def run(job):", "    prepare(job, fast=True)", "    ...", "    return job"]}]}"#;
    let parsed = formats::parse(call, Format::Anchored).expect("anchored");
    let edits: Vec<(usize, &Edit)> = parsed.edits().enumerate().collect();
    let p = plan_file("f.py", Some(file), &edits, &PlanOptions::default());
    assert_eq!(p.reports[0].status, EditStatus::Failed);
    assert!(!p.is_ok());
}

/// Pieces that each occur hundreds of times, the last only before them:
/// weighing the ways to complete the chain stops at its budget instead of
/// trying every combination, and the edit is refused.
#[test]
fn many_ways_to_a_missing_piece_are_not_all_tried() {
    let body: String = (0..3000).map(|i| format!("x = {}\n", i % 2)).collect();
    let file = format!("y = 2\n{body}");
    let mut search = Vec::new();
    for _ in 0..6 {
        search.push("x = 0".to_owned());
        search.push("...".to_owned());
    }
    search.push("y = 2".to_owned());
    let mut replace = search.clone();
    replace[12] = "y = 3".to_owned();
    let (st, _) = plan(&file, &edit(&search, &replace));
    assert_eq!(st, EditStatus::Failed);
}

/// A search with two markers on a file of ten thousand lines that repeat
/// every ten: where each marker's block ends is found once per piece, not
/// once per place the next piece occurs (which took over a minute).
#[test]
fn repeated_pieces_on_a_long_file_are_weighed_in_linear_passes() {
    let body: String = (0..10_000)
        .map(|i| format!("    v{} = 0\n", i % 10))
        .collect();
    let file = format!("def g():\n{body}");
    let search = lines(
        "    v1 = 0\n    # ... existing code ...\n    v2 = 0\n    # ... existing code ...\n    v3 = 0",
    );
    let mut replace = search.clone();
    replace[4] = "    v3 = 1".to_owned();
    let (st, _) = plan(&file, &edit(&search, &replace));
    assert_eq!(st, EditStatus::Failed);
}
