//! Integration tests of mend-core's public API.

mod anchored;
mod artifacts;
mod placeholders;
mod properties;
mod readings;
mod resent;
mod responses;
mod sequence;
mod short_slips;
mod slips;
mod streaming;
mod support;
mod ties;
mod whole_file;
