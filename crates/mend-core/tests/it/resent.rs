//! An edit sent again, to the file its first sending produced: it never
//! changes the file a second time. A re-sent insertion finds its search
//! again inside its own result; it is refused as applied already, not
//! inserted twice.

use mend_core::{
    Edit, EditOp, EditStatus, FailureKind, Hints, PlanOptions, Replace, Target, plan_file,
};
use proptest::prelude::*;

fn edit(search: &[String], replace: &[String], as_text: bool) -> Edit {
    let target = if as_text {
        Target::Text {
            old: search.join("\n"),
            new: replace.join("\n"),
        }
    } else {
        Target::Lines {
            search: search.to_vec(),
            replace: replace.to_vec(),
        }
    };
    Edit {
        path: "f.rs".into(),
        op: EditOp::Replace(Replace {
            target,
            replace_all: false,
            hints: Hints::default(),
        }),
        origin: None,
    }
}

fn plan(text: &str, e: &Edit) -> (EditStatus, Option<FailureKind>, Option<String>) {
    let p = plan_file("f.rs", Some(text), &[(0, e)], &PlanOptions::default());
    let r = &p.reports[0];
    (r.status, r.failure.as_ref().map(|f| f.kind), p.content)
}

/// Small functions with similar bodies, the shape where a re-sent
/// insertion's search is found again.
fn file() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(("[a-z]{3,6}", 0u8..3), 3..10).prop_map(|fns| {
        let mut out = Vec::new();
        for (i, (name, body)) in fns.into_iter().enumerate() {
            out.push(format!("pub fn {name}_{i}(a: u32) -> u32 {{"));
            out.push(format!("    a + {body}"));
            out.push("}".to_owned());
            out.push(String::new());
        }
        out.pop();
        out
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// A new function inserted after (or before) a function, its search
    /// the neighbouring lines: sent twice, the second is refused (as
    /// applied already when its search is found again), never applied.
    #[test]
    fn a_resent_insertion_is_never_applied_twice(
        lines in file(),
        at in any::<prop::sample::Index>(),
        (ctx_before, ctx_after) in (1usize..4, 0usize..3),
        body in 0u8..3,
        as_text in any::<bool>(),
    ) {
        // Insert after a function's closing `}` line.
        let ends: Vec<usize> = (0..lines.len()).filter(|&i| lines[i] == "}").collect();
        let end = ends[at.index(ends.len())];
        let from = (end + 1).saturating_sub(ctx_before);
        let to = (end + 1 + ctx_after).min(lines.len());
        let search = lines[from..to].to_vec();
        let mut replace = lines[from..=end].to_vec();
        replace.extend([
            String::new(),
            "pub fn inserted(a: u32) -> u32 {".to_owned(),
            format!("    a + {body}"),
            "}".to_owned(),
        ]);
        replace.extend(lines[end + 1..to].iter().cloned());
        let text = lines.join("\n") + "\n";
        let e = edit(&search, &replace, as_text);
        let (status, _, once) = plan(&text, &e);
        prop_assume!(status == EditStatus::Applied);
        let once = once.unwrap();
        let (again, kind, twice) = plan(&once, &e);
        if again == EditStatus::Applied {
            prop_assert_eq!(twice.as_deref(), Some(once.as_str()), "applied twice");
        } else {
            prop_assert_eq!(again, EditStatus::Failed);
        }
        // Found again inside its own result: told so.
        let found_again = once.matches(&search.join("\n")).count() == 1;
        if found_again {
            prop_assert_eq!(kind, Some(FailureKind::AlreadyApplied));
        }
    }
}
