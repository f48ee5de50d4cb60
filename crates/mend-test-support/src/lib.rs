//! Helpers shared by the workspace's integration tests, and only by them:
//! every crate takes this one as a dev-dependency, and it is never
//! published.
//!
//! - [`fixtures`]: the one fixture convention (a folder per case, expected
//!   outputs as files) and its runner, with `MEND_BLESS=1` to rewrite the
//!   expected files.
//! - [`files`]: trees of files written, read back and copied whole.
//! - [`mod@git`]: git with a throwaway identity.
//! - [`bin`]: the built `mend` binary and a Python for the MCP clients.
//! - [`edits`]: model responses the tests send.
//! - [`serve`]: `mend mcp` spoken to line by line, `mend daemon` run.

pub mod bin;
pub mod edits;
pub mod files;
pub mod fixtures;
pub mod git;
pub mod scale;
pub mod serve;

pub use bin::{mend_bin, python, run_mend};
pub use edits::search_replace;
pub use files::{copy_tree, put, read_tree, read_tree_without, tree};
pub use git::{git, git_with, repo};
pub use scale::{committed_files, number_arg, rewrite_scale_file, scale_file};
