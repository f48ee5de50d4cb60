//! The planner on arbitrary file text and arbitrary edits: it never panics,
//! it is deterministic, a plan whose edits all failed changes nothing, and
//! planning never invents text from nowhere when nothing applied.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mend_core::formats::{self, Format};
use mend_core::{EditStatus, PlanOptions, plan_file};

fuzz_target!(|data: &[u8]| {
    // `file` 0xFF `response`: 0xFF never occurs in UTF-8, so it is a free
    // separator.
    let mut parts = data.splitn(2, |&b| b == 0xFF);
    let file = String::from_utf8_lossy(parts.next().unwrap_or_default());
    let response = String::from_utf8_lossy(parts.next().unwrap_or_default());
    let Ok(parsed) = formats::parse(&response, Format::Auto) else {
        return;
    };
    let edits: Vec<_> = parsed.edits().enumerate().collect();
    for original in [Some(file.as_ref()), None] {
        for skip_after_failure in [false, true] {
            let opts = PlanOptions {
                skip_after_failure,
                ..PlanOptions::default()
            };
            let plan = plan_file("f.txt", original, &edits, &opts);
            assert_eq!(plan.reports.len(), edits.len(), "one report per edit");
            let again = plan_file("f.txt", original, &edits, &opts);
            assert_eq!(plan, again, "planning is deterministic");
            let applied = plan.reports.iter().any(|r| r.status == EditStatus::Applied);
            if !applied && plan.new_path.is_none() && plan.executable.is_none() {
                match (original, plan.content.as_deref()) {
                    (Some(o), Some(c)) => assert_eq!(o, c, "nothing applied, yet the text changed"),
                    (None, c) => assert!(c.is_none(), "nothing applied, yet a file was made"),
                    (Some(_), None) => panic!("nothing applied, yet the file is deleted"),
                }
            }
        }
    }
});
