//! Ignore rules as git applies them while walking: each folder's
//! `.gitignore` (the deepest that matches decides), then the repository's
//! `info/exclude`, then the user's global excludes file.

use std::path::Path;
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

impl Rules {
    /// The rules at the root: its `.gitignore`, `info/exclude` under the
    /// git folder, and the global excludes file.
    pub(crate) fn root(root: &Path, gitdir: &Path) -> Rules {
        let mut matchers = Vec::new();
        matchers.extend(build(root, &root.join(".gitignore")));
        matchers.extend(build(root, &gitdir.join("info/exclude")));
        if let Some(global) = ignore::gitignore::gitconfig_excludes_path() {
            matchers.extend(build(root, &global));
        }
        Rules(Arc::new(Node {
            matchers,
            parent: None,
        }))
    }

    /// The rules in `dir`, a folder below, which has a `.gitignore`.
    pub(crate) fn child(&self, dir: &Path) -> Rules {
        match build(dir, &dir.join(".gitignore")) {
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
