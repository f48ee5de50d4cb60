//! Which store a root's checkpoints go to, told cheaply: a process that
//! holds a [`Checkpoints`] over time (`mend daemon`, `mend mcp`, `mend
//! editor`) compares the store it holds with the one [`Checkpoints::open`]
//! would resolve now, so that it never makes a checkpoint in a store a
//! command run now would not look in (a `git init` under a daemon that
//! opened the shadow repository, a `.git` removed, a `.mend` replaced).

use std::io::Read as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::Path;

use crate::Checkpoints;

/// Where checkpoints' refs live, in the store: one per checkpoint, named
/// by its short id.
pub(crate) const REF_PREFIX: &str = "refs/mend/checkpoints/";

/// Where an open turn's hold ref lives (see `Turns::hold`), beside the
/// checkpoints' refs and never listed among them.
pub(crate) const HOLD_PREFIX: &str = "refs/mend/turns/";

/// The most of a `.git` file (a worktree's `gitdir: …` link) compared.
const GIT_FILE_BYTES: u64 = 4096;

/// What decides a root's store: its `.git` (a folder, a file naming the
/// repository, followed as `open` follows it), or, without one, the
/// shadow repository's folder in `.mend`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StoreKey {
    /// `.git` exists: its device, inode and, for a file, its first bytes.
    Git { dev: u64, ino: u64, link: Vec<u8> },
    /// No `.git`: the shadow repository's folder, if there is one.
    Shadow(Option<(u64, u64)>),
}

impl StoreKey {
    /// The key of `root/.git` as it is now, `None` without one.
    pub(crate) fn git(root: &Path) -> Option<StoreKey> {
        let path = root.join(".git");
        let meta = std::fs::metadata(&path).ok()?;
        let mut link = Vec::new();
        if meta.is_file() {
            // Unreadable: compared by inode alone.
            let _ = std::fs::File::open(&path)
                .and_then(|f| f.take(GIT_FILE_BYTES).read_to_end(&mut link));
        }
        Some(StoreKey::Git {
            dev: meta.dev(),
            ino: meta.ino(),
            link,
        })
    }

    /// The key of the store `open` would resolve for `root` now.
    pub(crate) fn now(root: &Path) -> StoreKey {
        StoreKey::git(root).unwrap_or_else(|| {
            let shadow = root.join(".mend/shadow.git").symlink_metadata().ok();
            StoreKey::Shadow(
                shadow
                    .filter(std::fs::Metadata::is_dir)
                    .map(|m| (m.dev(), m.ino())),
            )
        })
    }

    /// The key of the store opened: the shadow repository held open as
    /// `shadow`, else the repository whose `.git` had key `git`.
    pub(crate) fn held(
        git: Option<StoreKey>,
        shadow: Option<&mend_workspace::PrivateDir>,
    ) -> StoreKey {
        match shadow {
            Some(dir) => {
                StoreKey::Shadow(rustix::fs::fstat(dir).ok().map(|s| (s.st_dev, s.st_ino)))
            }
            None => git.unwrap_or(StoreKey::Shadow(None)),
        }
    }
}

impl Checkpoints {
    /// Whether the store [`Checkpoints::open`] would resolve for the root
    /// now differs from the one these checkpoints hold: a repository made,
    /// removed or replaced, or the shadow repository's `.mend` replaced
    /// since they were opened. One `stat` (and a `.git` file's read).
    /// A holder that keeps checkpoints over time opens them again then.
    pub fn store_changed(&self) -> bool {
        StoreKey::now(self.root()) != self.key
    }
}
