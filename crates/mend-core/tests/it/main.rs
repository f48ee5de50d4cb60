//! Integration tests of mend-core's public API.

mod properties;
mod readings;
mod responses;
mod slips;
mod streaming;
mod support;
mod ties;
mod whole_file;
