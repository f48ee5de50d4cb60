//! Whole model responses (issue 39), in the workspace's fixture convention
//! (`mend_test_support::fixtures`): each folder under `tests/responses/`
//! is one `mend apply` run of a response as a model writes it, with prose,
//! snippets shown for reference, several blocks, nested fences and
//! artifacts. `tests/responses/README.md` lists the shapes.
//!
//! Inputs: `input/` (the tree before, bytes kept exactly: CRLF files
//! included), `response.md` (the whole response, verbatim; JSON when it
//! starts with `{` or `[`), and optionally `args` (extra `mend apply`
//! flags, one per line), `stdout.has` (lines the output must contain) and
//! `stdout.lacks` (lines it must not).
//!
//! Expected outputs, compared byte for byte: `expected.exit` and
//! `expected/`, the whole tree after the run (absent when the tree must be
//! unchanged). The output text is not compared whole: messages keep
//! improving, and a case is about what was written. `MEND_BLESS=1`
//! rewrites the outputs; a tree is blessed only after reading every byte.
//!
//! `cargo test -p mend --test cases responses::NAME` runs one case.

use std::path::Path;

use libtest_mimic::Trial;
use mend_test_support::fixtures::{self, Outputs};

use crate::fixtures::{Streams, apply_case};

/// One test per case folder, named `responses::NAME`.
pub fn trials() -> Vec<Trial> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/responses");
    fixtures::trials("responses::", &dir, check)
}

/// Applies the case's `response.md` and returns the exit code and tree.
fn check(case: &Path) -> Result<Outputs, String> {
    let response = case.join("response.md");
    if !response.is_file() {
        return Err("no response.md".into());
    }
    apply_case(case, &response, Streams::Checked)
}
