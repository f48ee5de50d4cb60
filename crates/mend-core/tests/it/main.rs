//! Integration tests of mend-core's public API.

mod anchored;
mod properties;
mod readings;
mod slips;
mod streaming;
mod support;
mod ties;
