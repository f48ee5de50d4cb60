//! Integration tests of mend-workspace.

mod bytes;
mod cas;
mod links;
mod paths;
mod recovery;
mod replace;
mod trust;
mod txn;

pub use mend_test_support::put;
use mend_workspace::{Options, Workspace};

/// A workspace in a fresh temporary folder.
pub fn workspace() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::open(dir.path(), Options::default()).unwrap();
    (dir, ws)
}
