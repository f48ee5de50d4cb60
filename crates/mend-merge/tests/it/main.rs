//! Integration tests of mend-merge.

// The tests read fixtures and run git as the reference; the library under
// test stays pure (its clippy.toml bans these calls in the library).
#![allow(clippy::disallowed_methods)]

mod fixtures;
mod git;
mod properties;
