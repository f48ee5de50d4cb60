//! The ignore rules a checkpoint was taken under: its own `.gitignore`
//! files, read from its tree, and for a turn the repository's excludes as
//! they were when it began (`info/exclude`, `core.excludesFile`, which no
//! tree holds). A file absent from a checkpoint may have been absent only
//! because it was ignored then; such a file is never deleted.

use std::path::Path;

use git2::{ObjectType, Repository, Tree, TreeWalkMode, TreeWalkResult};
use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// Matchers by folder depth, outermost first.
pub(crate) struct Rules {
    root: std::path::PathBuf,
    matchers: Vec<(usize, Gitignore)>,
}

impl Rules {
    /// The rules of `tree`'s `.gitignore` files over `excludes`, the
    /// contents of excludes files, lowest priority first (git: the
    /// excludes file, then `info/exclude`, then each `.gitignore`, the
    /// deepest last).
    pub(crate) fn from_tree(
        repo: &Repository,
        tree: &Tree<'_>,
        root: &Path,
        excludes: &[String],
    ) -> Rules {
        let mut files: Vec<(String, Vec<u8>)> = excludes
            .iter()
            .map(|e| (String::new(), e.as_bytes().to_vec()))
            .collect();
        let _ = tree.walk(TreeWalkMode::PreOrder, |dir, entry| {
            // A linked `.gitignore` holds no rules: git does not follow it.
            if entry.name() == Some(".gitignore")
                && entry.kind() == Some(ObjectType::Blob)
                && entry.filemode() != 0o120000
                && let Ok(blob) = repo.find_blob(entry.id())
            {
                files.push((dir.to_owned(), blob.content().to_vec()));
            }
            TreeWalkResult::Ok
        });
        let mut matchers = Vec::new();
        for (dir, content) in files {
            let mut b = GitignoreBuilder::new(root.join(&dir));
            for line in String::from_utf8_lossy(&content).lines() {
                let _ = b.add_line(None, line);
            }
            if let Ok(g) = b.build() {
                matchers.push((dir.matches('/').count(), g));
            }
        }
        // Stable: the excludes stay below the root's `.gitignore`.
        matchers.sort_by_key(|(d, _)| *d);
        Rules {
            root: root.to_path_buf(),
            matchers,
        }
    }

    /// Whether `rel` (a file path relative to the root) was ignored.
    pub(crate) fn is_ignored(&self, rel: &str) -> bool {
        let full = self.root.join(rel);
        let mut ignored = false;
        for (_, g) in &self.matchers {
            // A .gitignore only speaks for paths under its own folder.
            if !full.starts_with(g.path()) {
                continue;
            }
            let m = g.matched_path_or_any_parents(&full, false);
            if m.is_ignore() {
                ignored = true;
            } else if m.is_whitelist() {
                ignored = false;
            }
        }
        ignored
    }
}
