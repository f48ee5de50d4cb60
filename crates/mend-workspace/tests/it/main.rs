//! Integration tests of mend-workspace.

mod bytes;
mod links;
mod paths;
mod recovery;
mod replace;
mod txn;

use std::path::Path;

use mend_workspace::{Options, Workspace};

/// A workspace in a fresh temporary folder.
pub fn workspace() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::open(dir.path(), Options::default()).unwrap();
    (dir, ws)
}

/// Writes a file (and its folders).
pub fn put(root: &Path, rel: &str, bytes: &[u8]) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, bytes).unwrap();
}
