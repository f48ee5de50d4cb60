//! Integration tests of mend-core's public API.

mod artifacts;
mod properties;
mod readings;
mod resent;
mod slips;
mod streaming;
mod support;
mod ties;
