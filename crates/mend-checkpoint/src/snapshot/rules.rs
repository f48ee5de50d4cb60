//! Ignore rules as git applies them while walking: each folder's
//! `.gitignore` (the deepest that matches decides; one that is a symbolic
//! link is not followed, as git does not), then the repository's
//! `info/exclude` (shared by its linked worktrees), then the excludes file
//! `core.excludesFile` names (at any level of git's configuration, else
//! `$XDG_CONFIG_HOME/git/ignore`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ignore::gitignore::{Gitignore, GitignoreBuilder};

struct Node {
    /// Highest priority first.
    matchers: Vec<Gitignore>,
    parent: Option<Arc<Node>>,
}

/// The rules in force in one folder.
#[derive(Clone)]
pub(crate) struct Rules(Arc<Node>);

fn build(root: &Path, file: &Path) -> Option<Gitignore> {
    let mut b = GitignoreBuilder::new(root);
    if b.add(file).is_some() {
        // Unreadable: git skips it too.
        return None;
    }
    b.build().ok().filter(|g| !g.is_empty())
}

/// A worktree's `.gitignore`, unless it is a symbolic link (git reads
/// those without following links, and finds no rules).
fn build_in_tree(root: &Path, file: &Path) -> Option<Gitignore> {
    let meta = std::fs::symlink_metadata(file).ok()?;
    if meta.file_type().is_symlink() {
        return None;
    }
    build(root, file)
}

/// The excludes file git reads for `repo`: `core.excludesFile` from any
/// level of its configuration (the repository's own included), else
/// `$XDG_CONFIG_HOME/git/ignore` (`~/.config/git/ignore`).
pub(crate) fn excludes_file(repo: &git2::Repository) -> Option<PathBuf> {
    let named = (repo.config().ok())
        .and_then(|mut c| c.snapshot().ok())
        .and_then(|c| c.get_path("core.excludesFile").ok());
    named.or_else(|| {
        let config = std::env::var_os("XDG_CONFIG_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::home_dir().map(|h| h.join(".config")))?;
        Some(config.join("git/ignore"))
    })
}

impl Rules {
    /// The rules at the root: its `.gitignore`, `info/exclude` under the
    /// repository's common folder, and the excludes file (see
    /// [`excludes_file`]).
    pub(crate) fn root(root: &Path, repo: &git2::Repository) -> Rules {
        let mut matchers = Vec::new();
        matchers.extend(build_in_tree(root, &root.join(".gitignore")));
        matchers.extend(build(root, &repo.commondir().join("info/exclude")));
        if let Some(global) = excludes_file(repo) {
            matchers.extend(build(root, &global));
        }
        Rules(Arc::new(Node {
            matchers,
            parent: None,
        }))
    }

    /// The rules in `dir`, a folder below, which has a `.gitignore`.
    pub(crate) fn child(&self, dir: &Path) -> Rules {
        match build_in_tree(dir, &dir.join(".gitignore")) {
            Some(g) => Rules(Arc::new(Node {
                matchers: vec![g],
                parent: Some(Arc::clone(&self.0)),
            })),
            None => self.clone(),
        }
    }

    /// Whether no rule applies here at all (no path can be ignored).
    pub(crate) fn is_empty(&self) -> bool {
        let mut node = Some(&*self.0);
        while let Some(n) = node {
            if !n.matchers.is_empty() {
                return false;
            }
            node = n.parent.as_deref();
        }
        true
    }

    /// Whether `path` (absolute, in or below the folder these rules are
    /// for) is ignored.
    pub(crate) fn is_ignored(&self, path: &Path, is_dir: bool) -> bool {
        let mut node = Some(&*self.0);
        while let Some(n) = node {
            for g in &n.matchers {
                let m = g.matched(path, is_dir);
                if m.is_ignore() {
                    return true;
                }
                if m.is_whitelist() {
                    return false;
                }
            }
            node = n.parent.as_deref();
        }
        false
    }
}
