//! Large committed trees for the process-level benchmarks: `n` small Rust
//! files, 50 to a folder and 20 folders to a package, as a real project
//! spreads them.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::git;

/// The path of file `i` of a tree [`committed_files`] made under `d`.
pub fn scale_file(d: &Path, i: usize) -> PathBuf {
    let f = i / 50;
    d.join(format!("pkg{}/mod{}/file{i}.rs", f / 20, f % 20))
}

/// Rewrites file `i` with a body naming `round`.
pub fn rewrite_scale_file(d: &Path, i: usize, round: usize) {
    std::fs::write(
        scale_file(d, i),
        format!("pub fn f{i}() -> u32 {{ {round} }}\n"),
    )
    .expect("write");
}

/// A git repository of `n` files, committed, with git's index fresh and
/// the new files written back to disk (their write-back would otherwise
/// slow the first rounds).
pub fn committed_files(n: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let d = dir.path();
    for i in 0..n {
        let p = scale_file(d, i);
        std::fs::create_dir_all(p.parent().expect("a folder")).expect("mkdir");
        std::fs::write(p, format!("pub fn f{i}() -> u32 {{ {i} }}\n")).expect("write");
    }
    git(d, &["init", "-q", "."]);
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "init"]);
    git(d, &["status", "--porcelain"]);
    let _ = Command::new("sync").status();
    dir
}

/// The number after `name` in a benchmark's arguments (`--files 20000`),
/// or `default` when it is missing or not a number.
pub fn number_arg(args: &[String], name: &str, default: usize) -> usize {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
