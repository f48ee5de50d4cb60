//! Streaming and robustness properties of the parsers.
//!
//! - Feeding a response in chunks, split anywhere, yields exactly the events
//!   of a whole-text parse.
//! - Arbitrary input, split arbitrarily, never panics any parser or the
//!   planner.

use mend_core::formats::{Format, StreamParser, parse};
use mend_core::{PlanOptions, plan_file};
use proptest::prelude::*;

/// Lines that exercise every format's markers, mixed with prose and code.
fn response_line() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "src/app.py",
        "a.txt",
        "```python",
        "```bash",
        "```json",
        "```",
        "<<<<<<< SEARCH",
        ":start_line:3",
        "-------",
        "=======",
        ">>>>>>> REPLACE",
        "------- SEARCH",
        "+++++++ REPLACE",
        "««« EDIT",
        "═══════ REPL",
        "»»» EDIT END",
        "*** Begin Patch",
        "*** Add File: n.txt",
        "*** Update File: a.txt",
        "*** Delete File: d.txt",
        "*** Move to: m.txt",
        "*** End of File",
        "*** End Patch",
        "@@ def f():",
        "@@",
        "diff --git a/a.txt b/a.txt",
        "--- a/a.txt",
        "+++ b/a.txt",
        "--- /dev/null",
        "@@ -1,2 +1,2 @@",
        "\\ No newline at end of file",
        " context line",
        "-removed line",
        "+added line",
        "def f():",
        "    return 1",
        "",
        "Some prose about the change.",
        "$ git status",
        "{\"path\": \"a.txt\", \"old_string\": \"x\", \"new_string\": \"y\"}",
        "````markdown",
        "````",
        "~~~",
        "   ```",
        "```python:src/app.py",
        "```12:15:a.txt",
        "<source>",
        "</source>",
        "src\\app.py",
        "docs/my notes.md",
        "Update `a.txt` like this:",
        "<apply_diff>",
        "<replace_in_file>",
        "<path>a.txt</path>",
        "<diff>",
        "</diff>",
        "</apply_diff>",
        "<write_to_file>",
        "<content>",
        "</content>",
        "<line_count>2</line_count>",
        "</write_to_file>",
    ])
    .prop_map(str::to_owned)
}

fn response() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(response_line(), 0..60),
        prop::bool::ANY,
    )
        .prop_map(|(lines, crlf)| lines.join(if crlf { "\r\n" } else { "\n" }))
}

fn mode() -> impl Strategy<Value = Format> {
    prop::sample::select(vec![
        Format::Auto,
        Format::SearchReplace,
        Format::EditBlock,
        Format::ApplyPatch,
        Format::UnifiedDiff,
        Format::WholeFile,
    ])
}

/// Splits `text` at the given fractions (on char boundaries).
fn split(text: &str, cuts: &[f64]) -> Vec<String> {
    let bounds: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
    let mut at: Vec<usize> = cuts
        .iter()
        .map(|f| {
            bounds
                .get((f * bounds.len() as f64) as usize)
                .copied()
                .unwrap_or(text.len())
        })
        .collect();
    at.push(0);
    at.push(text.len());
    at.sort_unstable();
    at.dedup();
    at.windows(2).map(|w| text[w[0]..w[1]].to_owned()).collect()
}

fn whole(text: &str, mode: Format) -> Result<Vec<mend_core::formats::Event>, String> {
    let mut p = StreamParser::new(mode);
    let mut ev = p.push(text);
    ev.extend(p.finish().map_err(|e| e.to_string())?);
    Ok(ev)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    #[test]
    fn any_split_yields_the_whole_text_events(
        text in response(),
        mode in mode(),
        cuts in prop::collection::vec(0.0f64..1.0, 0..12),
    ) {
        let expected = whole(&text, mode);
        let mut p = StreamParser::new(mode);
        let mut got = Vec::new();
        for chunk in split(&text, &cuts) {
            got.extend(p.push(&chunk));
            let _ = p.partial();
        }
        let got = p.finish().map(|tail| {
            got.extend(tail);
            got
        }).map_err(|e| e.to_string());
        prop_assert_eq!(got, expected);
    }

    #[test]
    fn arbitrary_input_never_panics(
        bytes in prop::collection::vec(any::<u8>(), 0..400),
        mode in prop::sample::select(vec![
            Format::Auto, Format::SearchReplace, Format::StrReplace, Format::Anchored,
            Format::EditBlock, Format::ApplyPatch, Format::UnifiedDiff, Format::WholeFile,
        ]),
        cuts in prop::collection::vec(0.0f64..1.0, 0..8),
        file in "[a-z \\t\\n{}();=+-]{0,200}",
    ) {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let mut p = StreamParser::new(mode);
        for chunk in split(&text, &cuts) {
            let _ = p.push(&chunk);
        }
        let _ = p.finish();
        // Whatever parses must also plan without panicking.
        if let Ok(parsed) = parse(&text, mode) {
            let edits: Vec<_> = parsed.edits().enumerate().collect();
            let _ = plan_file("f", Some(&file), &edits, &PlanOptions::default());
        }
    }

    #[test]
    fn structured_input_never_panics_the_planner(
        text in response(),
        mode in mode(),
        file in prop::collection::vec(response_line(), 0..30),
    ) {
        let file = file.join("\n");
        if let Ok(parsed) = parse(&text, mode) {
            let edits: Vec<_> = parsed.edits().enumerate().collect();
            let _ = plan_file("a.txt", Some(&file), &edits, &PlanOptions::default());
            let _ = plan_file("a.txt", None, &edits, &PlanOptions::default());
        }
    }
}
