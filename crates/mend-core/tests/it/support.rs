//! What the integration tests share: a SEARCH/REPLACE-like edit of one
//! file, planned alone.

use mend_core::{Edit, EditOp, EditStatus, Hints, PlanOptions, Replace, Target, plan_file};

/// The path every helper edit names (a Python file, where `...` is code).
pub(crate) const PATH: &str = "f.py";

/// An edit replacing `search` lines with `replace` lines in [`PATH`].
pub(crate) fn edit(search: &[String], replace: &[String]) -> Edit {
    Edit {
        path: PATH.into(),
        op: EditOp::Replace(Replace {
            target: Target::Lines {
                search: search.to_vec(),
                replace: replace.to_vec(),
            },
            replace_all: false,
            hints: Hints::default(),
        }),
        origin: None,
    }
}

/// Plans `e` alone against `text`: its status and the file's new content.
pub(crate) fn plan(text: &str, e: &Edit) -> (EditStatus, Option<String>) {
    let p = plan_file(PATH, Some(text), &[(0, e)], &PlanOptions::default());
    (p.reports[0].status, p.content)
}

/// The lines of `s`, without their endings.
pub(crate) fn lines(s: &str) -> Vec<String> {
    s.lines().map(str::to_owned).collect()
}
