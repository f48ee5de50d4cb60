//! Integration tests of mend-core's public API.

mod properties;
mod streaming;
mod ties;
