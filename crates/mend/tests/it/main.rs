//! Integration tests for the `mend` binary (one test binary, several modules).

mod aliases;
mod checkpoint;
mod cli;
mod formats;
mod interrupted;
mod mcp;
mod merge;
mod pending;
mod pending_fixes;
mod pending_model;
mod tidy;
mod transactions;

#[path = "../support/mod.rs"]
mod support;
pub use support::*;

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
