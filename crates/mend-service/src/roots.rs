//! The one root rule, and multi-root routing: which project root a
//! path belongs to.

use std::path::{Path, PathBuf};

use mend_core::EditOp;
use mend_core::formats::{Entry, Parsed};
use mend_core::text::escape_controls;
use mend_workspace::Workspace;

use crate::Error;

/// The project roots a server may touch, the first the default: a
/// relative path belongs to the first, an absolute one to the root it is
/// under (as given or canonical).
#[derive(Clone)]
pub struct Roots {
    roots: Vec<Workspace>,
}

impl Roots {
    /// The roots, in order; at least one.
    pub fn new(first: Workspace, rest: Vec<Workspace>) -> Roots {
        let mut roots = vec![first];
        roots.extend(rest);
        Roots { roots }
    }

    /// The first root.
    pub fn first(&self) -> &Workspace {
        &self.roots[0]
    }

    /// The root a path belongs to, and the path relative to it.
    pub fn locate(&self, path: &str) -> Result<(&Workspace, String), Error> {
        let p = Path::new(path);
        if !p.is_absolute() {
            return Ok((self.first(), path.to_owned()));
        }
        self.roots
            .iter()
            .find_map(|ws| ws.relative_to_root(p).map(|rel| (ws, rel)))
            .ok_or_else(|| {
                Error::Roots(format!(
                    "{} is outside the project root{}; use a path relative to it",
                    escape_controls(path),
                    if self.roots.len() > 1 { "s" } else { "" }
                ))
            })
    }

    /// The root every edit of `parsed` belongs to, with each path made
    /// relative to it. One call edits one root, so its transaction and its
    /// lock stay one.
    pub fn route(&self, mut parsed: Parsed) -> Result<(Workspace, Parsed), Error> {
        let mut chosen: Option<&Workspace> = None;
        let mut pick = |path: &mut String| -> Result<(), Error> {
            let (ws, rel) = self.locate(path)?;
            if chosen.is_some_and(|c| c.root() != ws.root()) {
                return Err(Error::Roots(
                    "these edits span more than one project root; send one call per root".into(),
                ));
            }
            chosen = Some(ws);
            *path = rel;
            Ok(())
        };
        for entry in &mut parsed.entries {
            if let Entry::Edit(e) = entry {
                pick(&mut e.path)?;
                if let EditOp::Rename { to } = &mut e.op {
                    pick(to)?;
                }
            }
        }
        Ok((chosen.unwrap_or(self.first()).clone(), parsed))
    }

    /// The root named by any spelling of its path, or the first.
    pub fn pick(&self, named: Option<&str>) -> Result<&Workspace, Error> {
        let Some(name) = named else {
            return Ok(self.first());
        };
        let want = Path::new(name).canonicalize().ok();
        self.roots
            .iter()
            .find(|ws| want.as_deref() == Some(ws.root()))
            .ok_or_else(|| {
                Error::Roots(format!(
                    "{} is not one of the project roots ({})",
                    escape_controls(name),
                    self.roots
                        .iter()
                        .map(|w| w.root().display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })
    }
}

/// The root a command run in `dir` acts on when no `--root` names one:
/// the git worktree holding `dir`, so one worktree has one root (one
/// `.mend`, one turn) wherever in it a command runs, as agents' hooks
/// find it; `dir` itself outside git.
pub fn worktree_of(dir: &Path) -> PathBuf {
    git2::Repository::discover(dir)
        .ok()
        .and_then(|r| r.workdir().map(Path::to_path_buf))
        .unwrap_or_else(|| dir.to_path_buf())
}

/// The root every command and the editor act on: `given` (`--root`, an
/// editor's `initialize`), else the worktree holding the current folder
/// (see [`worktree_of`]). A current folder that is gone is `.`, which
/// opening the root then refuses.
pub fn root(given: Option<&Path>) -> PathBuf {
    if let Some(r) = given {
        return r.to_path_buf();
    }
    std::env::current_dir().map_or_else(|_| PathBuf::from("."), |cwd| worktree_of(&cwd))
}

/// The workspace of `root`, opened with `opts`: the one way a front-end
/// reaches a root's files, pending sessions and `.mend`.
pub fn open(root: &Path, opts: mend_workspace::Options) -> Result<Workspace, Error> {
    Ok(Workspace::open(root, opts)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_of_a_folder_is_its_worktree_or_itself_outside_git() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        let sub = repo.join("a/b");
        std::fs::create_dir_all(&sub).unwrap();
        let plain = dir.path().join("plain");
        std::fs::create_dir_all(plain.join("c")).unwrap();
        git2::Repository::init(&repo).unwrap();
        let same = |a: &Path, b: &Path| a.canonicalize().unwrap() == b.canonicalize().unwrap();
        assert!(same(&worktree_of(&sub), &repo));
        assert!(same(&worktree_of(&repo), &repo));
        assert_eq!(worktree_of(&plain.join("c")), plain.join("c"));
        assert_eq!(root(Some(&sub)), sub, "--root overrides");
    }
}
