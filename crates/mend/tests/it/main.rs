//! Integration tests for the `mend` binary (one test binary, several
//! modules; `cargo test -p mend --test it MODULE::` runs one). The
//! data-driven suites, each case its own test, are the other binary,
//! `cases`.
#![expect(
    unreachable_pub,
    reason = "helpers shared by this target's modules are `pub`; the test layout settles them"
)]

mod aliases;
mod checkpoint;
mod cli;
mod daemon;
mod editor;
mod exit_codes;
mod formats;
mod hostile;
mod interrupted;
mod mcp;
mod merge;
mod pending;
mod pending_fixes;
mod pending_model;
mod pending_request;
mod races;
mod rng;
mod soak;
mod tidy;
mod transactions;
mod turn_cli;
mod turn_hooks;
mod turn_review;

use mend_test_support as support;
pub use mend_test_support::{git, mend_bin, python, run_mend, search_replace, tree};

// The drift benchmark's pure generators, shared with the property tests
// (which leave some of what the benchmark reports unread).
#[allow(dead_code)]
#[path = "../../examples/drift/drift.rs"]
mod drift;
mod drift_props;
#[path = "../../examples/drift/hunks.rs"]
mod hunks;
#[allow(dead_code)]
#[path = "../../examples/drift/judge.rs"]
mod judge;
#[path = "../../examples/drift/render.rs"]
mod render;
