//! The pure edit engine behind mend.
//!
//! mend-core turns a model's proposed edits into a plan: the new text of each
//! file and a report of what happened to every edit. It never touches the
//! filesystem, processes, the environment or a clock (a `clippy.toml`
//! enforces it): `&str` in, data out. The `mend` binary and later I/O crates
//! read files, call [`plan_file`], and write the results.
//!
//! The pipeline is **parse → locate → plan**:
//!
//! - [`formats`] parses model output into [`Edit`]s;
//! - [`locate`] finds each edit's region with a ladder of matching passes,
//!   strict first, tolerant only when the match is unique;
//! - [`plan_file`] splices the replacements into the original bytes and
//!   reports each edit's status, pass, lines and similarity.
//!
//! ```
//! use mend_core::{formats, plan_file, PlanOptions, EditStatus, MatchPass};
//!
//! let file = "def add(a, b):\n\treturn a + b\n";
//! let response = "math.py\n<<<<<<< SEARCH\n    return a + b\n=======\n    return a + b + 0\n>>>>>>> REPLACE\n";
//! let parsed = formats::parse(response, formats::Format::Auto).unwrap();
//! let edits: Vec<_> = parsed.edits().enumerate().collect();
//! let plan = plan_file("math.py", Some(file), &edits, &PlanOptions::default());
//! assert_eq!(plan.content.as_deref(), Some("def add(a, b):\n\treturn a + b + 0\n"));
//! assert_eq!(plan.reports[0].status, EditStatus::Applied);
//! assert_eq!(plan.reports[0].pass, Some(MatchPass::Whitespace));
//! ```

pub mod diff;
pub mod edit;
pub mod error;
pub mod formats;
pub mod hash;
pub mod indent;
pub mod locate;
pub mod normalize;
pub mod plan;
pub mod report;
pub mod similarity;
pub mod text;
pub mod xdiff;

pub use edit::{Edit, EditOp, Hints, Origin, Replace, Target};
pub use error::Error;
pub use formats::{Entry, Format, Malformed, Parsed, ShellSuggestion, StreamParser};
pub use hash::ContentHash;
pub use locate::{LocateOptions, MatchPass};
pub use plan::{FilePlan, FilePlanner, PlanOptions, plan_file};
pub use report::{
    ApplyReport, EditReport, EditStatus, Failure, FailureKind, FileSummary, LineSpan, Status,
    render_retry_context,
};
