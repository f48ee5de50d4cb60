//! Integration tests for the `mend` binary (one test binary, several modules).

mod checkpoint;
mod cli;
mod formats;
mod mcp;
mod merge;
mod transactions;

#[path = "../support/mod.rs"]
mod support;
pub use support::*;
