//! Multi-root routing: which project root a path belongs to.

use std::path::Path;

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
