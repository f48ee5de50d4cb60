//! Integration tests of mend-sync's public API: the model tests of typing
//! against agent writes (`interleave`), of renames (`rename_model`,
//! `renames`), and properties of single merges (`props`). The lifecycle
//! table is its own binary (`tests/lifecycle.rs`, a libtest-mimic table).

mod interleave;
mod props;
mod rename_model;
mod renames;
