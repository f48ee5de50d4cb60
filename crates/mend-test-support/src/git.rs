//! git, as the tests run it: a throwaway identity, no signing, and a
//! failure that stops the test with git's own message.

use std::path::Path;
use std::process::Command;

/// Runs git in `dir` with a throwaway identity; panics on failure and
/// returns its standard output.
pub fn git(dir: &Path, args: &[&str]) -> String {
    git_with(dir, &[], args)
}

/// [`git`] with extra environment variables.
pub fn git_with(dir: &Path, env: &[(&str, &Path)], args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .envs(env.iter().copied())
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(["-c", "commit.gpgsign=false"])
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A temporary git repository on branch `main` whose one commit holds
/// `files` (path, content).
pub fn repo<C: AsRef<[u8]>>(files: &[(&str, C)]) -> tempfile::TempDir {
    let dir = crate::files::tree(files);
    git(dir.path(), &["init", "-q", "-b", "main", "."]);
    git(dir.path(), &["add", "."]);
    git(dir.path(), &["commit", "-q", "-m", "init"]);
    dir
}
