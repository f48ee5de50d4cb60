//! Integration tests of mend-merge.

// The tests run git as the reference; the library under
// test stays pure (its clippy.toml bans these calls in the library).
#![allow(clippy::disallowed_methods)]

mod git;
mod properties;
