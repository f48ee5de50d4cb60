//! The workspace root: resolving model-supplied paths inside it, reading
//! files as text, and writing planned results.
//!
//! Writes are staged as temporary files next to their targets, then renamed
//! into place once every file is staged, so a failure while staging leaves
//! the tree untouched. (A crash-safe journal across files is a later step.)

use std::fs;
use std::io::Write as _;
use std::path::{Component, Path, PathBuf};

use mend_core::FailureKind;

/// Files larger than this are refused.
pub const DEFAULT_MAX_BYTES: u64 = 20 * 1024 * 1024;

/// A workspace rooted at a canonical directory.
#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
    max_bytes: u64,
}

/// Why a path or file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The report category.
    pub kind: FailureKind,
    /// What is wrong.
    pub message: String,
    /// What to do instead.
    pub fix: String,
}

impl Refusal {
    fn path(message: String) -> Self {
        Refusal {
            kind: FailureKind::PathRefused,
            message,
            fix: "Use a path relative to the project root, inside it, without `..`.".into(),
        }
    }
}

/// A file's state as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileState {
    /// No such file.
    Missing,
    /// UTF-8 text.
    Text(String),
}

impl Workspace {
    /// Opens the workspace at `root`, which must be an existing directory.
    pub fn open(root: &Path) -> std::io::Result<Self> {
        let root = root.canonicalize()?;
        if !root.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotADirectory,
                format!("{} is not a directory", root.display()),
            ));
        }
        Ok(Workspace {
            root,
            max_bytes: DEFAULT_MAX_BYTES,
        })
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves a model-supplied relative path to an absolute path inside
    /// the root, refusing escapes.
    pub fn resolve(&self, raw: &str) -> Result<PathBuf, Refusal> {
        if raw.is_empty() {
            return Err(Refusal::path("the path is empty".into()));
        }
        if raw.contains('\0') {
            return Err(Refusal::path(format!(
                "the path {raw:?} contains a NUL byte"
            )));
        }
        let bytes = raw.as_bytes();
        if raw.starts_with("\\\\")
            || (bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':')
        {
            return Err(Refusal::path(format!(
                "{raw} is a Windows drive or network path; paths must be relative to the project root"
            )));
        }
        let rel = Path::new(raw);
        if rel.is_absolute() {
            // An absolute path that points inside the root is fine.
            let inside = rel
                .strip_prefix(&self.root)
                .map_err(|_| Refusal::path(format!("{raw} is outside the project root")))?;
            return self.resolve(&inside.to_string_lossy());
        }
        let mut parts: Vec<&std::ffi::OsStr> = Vec::new();
        for c in rel.components() {
            match c {
                Component::CurDir => {}
                Component::Normal(p) => parts.push(p),
                Component::ParentDir => {
                    if parts.pop().is_none() {
                        return Err(Refusal::path(format!(
                            "{raw} leads outside the project root"
                        )));
                    }
                }
                Component::RootDir | Component::Prefix(_) => {
                    return Err(Refusal::path(format!("{raw} is not a relative path")));
                }
            }
        }
        if parts.is_empty() {
            return Err(Refusal::path(format!(
                "{raw} names the project root, not a file"
            )));
        }
        if parts[0] == ".git" {
            return Err(Refusal::path(format!(
                "{raw} is inside .git, which mend never edits"
            )));
        }
        let mut path = self.root.clone();
        for p in &parts {
            path.push(p);
        }
        // Symlinks: the deepest existing ancestor (or the file itself) must
        // resolve inside the root.
        let mut probe = path.clone();
        loop {
            if probe.symlink_metadata().is_ok() {
                let real = probe.canonicalize().map_err(|e| {
                    Refusal::path(format!("{raw}: cannot resolve {}: {e}", probe.display()))
                })?;
                if !real.starts_with(&self.root) {
                    return Err(Refusal::path(format!(
                        "{raw} goes through a symbolic link that points outside the project root"
                    )));
                }
                if real.starts_with(self.root.join(".git")) {
                    return Err(Refusal::path(format!("{raw} resolves into .git")));
                }
                break;
            }
            if !probe.pop() {
                break;
            }
        }
        Ok(path)
    }

    /// Reads a file as UTF-8 text.
    pub fn read(&self, path: &Path, display: &str) -> Result<FileState, Refusal> {
        let meta = match fs::metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(FileState::Missing),
            Err(e) => {
                return Err(Refusal {
                    kind: FailureKind::Io,
                    message: format!("cannot read {display}: {e}"),
                    fix: "Check the file's permissions.".into(),
                });
            }
        };
        if meta.is_dir() {
            return Err(Refusal {
                kind: FailureKind::PathRefused,
                message: format!("{display} is a directory, not a file"),
                fix: "Name a file.".into(),
            });
        }
        if meta.len() > self.max_bytes {
            return Err(Refusal {
                kind: FailureKind::TooLarge,
                message: format!(
                    "{display} is {} bytes, over the {} byte limit",
                    meta.len(),
                    self.max_bytes
                ),
                fix: "Edit a smaller file, or raise the limit.".into(),
            });
        }
        let bytes = fs::read(path).map_err(|e| Refusal {
            kind: FailureKind::Io,
            message: format!("cannot read {display}: {e}"),
            fix: "Check the file's permissions.".into(),
        })?;
        if bytes.iter().take(8192).any(|&b| b == 0) {
            return Err(Refusal {
                kind: FailureKind::Binary,
                message: format!("Cannot edit binary file {display}"),
                fix: "Binary files cannot be edited as text; use a shell command instead.".into(),
            });
        }
        match String::from_utf8(bytes) {
            Ok(s) => Ok(FileState::Text(s)),
            Err(e) => Err(Refusal {
                kind: FailureKind::NotText,
                message: format!(
                    "{display} is not valid UTF-8 (invalid byte at offset {}); mend does not guess encodings",
                    e.utf8_error().valid_up_to()
                ),
                fix: "Convert the file to UTF-8 first, or edit it another way.".into(),
            }),
        }
    }
}

/// One change to make on disk.
#[derive(Debug)]
pub enum FileWrite {
    /// Write `content` at `path` (creating parents), keeping the mode of
    /// `mode_from` when given.
    Put {
        /// Target.
        path: PathBuf,
        /// New bytes.
        content: Vec<u8>,
        /// Copy permissions from this file.
        mode_from: Option<PathBuf>,
        /// Set (`true`) or clear (`false`) the executable bits.
        executable: Option<bool>,
    },
    /// Remove `path`.
    Remove {
        /// Target.
        path: PathBuf,
    },
}

/// Stages every `Put` as a synced temporary file beside its target, then
/// renames them into place and performs the removals. If staging fails,
/// nothing in the tree has changed.
pub fn commit(root: &Path, writes: Vec<FileWrite>) -> std::io::Result<()> {
    let mut staged: Vec<(tempfile::NamedTempFile, PathBuf)> = Vec::new();
    let mut removals = Vec::new();
    for w in writes {
        match w {
            FileWrite::Put {
                path,
                content,
                mode_from,
                executable,
            } => {
                let dir = path.parent().unwrap_or(root).to_path_buf();
                create_dirs_inside(root, &dir)?;
                let mut tmp = tempfile::Builder::new()
                    .prefix(".mend-")
                    .suffix(".tmp")
                    .tempfile_in(&dir)?;
                tmp.write_all(&content)?;
                let perms = match mode_from.as_deref().map(fs::metadata) {
                    Some(Ok(m)) => Some(m.permissions()),
                    _ => fs::metadata(&path).ok().map(|m| m.permissions()),
                };
                if let Some(p) = perms {
                    fs::set_permissions(tmp.path(), p)?;
                }
                if let Some(x) = executable {
                    set_executable(tmp.path(), x)?;
                }
                tmp.as_file().sync_all()?;
                staged.push((tmp, path));
            }
            FileWrite::Remove { path } => removals.push(path),
        }
    }
    for (tmp, path) in staged {
        // Write through a symlink inside the root to its target.
        let target = match fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() => path.canonicalize()?,
            _ => path,
        };
        tmp.persist(&target).map_err(|e| e.error)?;
    }
    for path in removals {
        match fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(unix)]
fn set_executable(path: &Path, on: bool) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mut p = fs::metadata(path)?.permissions();
    let mode = p.mode();
    // Executable for whoever may read it, as git does for 100755.
    let mode = if on {
        mode | ((mode & 0o444) >> 2)
    } else {
        mode & !0o111
    };
    p.set_mode(mode);
    fs::set_permissions(path, p)
}

#[cfg(not(unix))]
fn set_executable(_path: &Path, _on: bool) -> std::io::Result<()> {
    Ok(())
}

fn create_dirs_inside(root: &Path, dir: &Path) -> std::io::Result<()> {
    if !dir.starts_with(root) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!("refusing to create {} outside the root", dir.display()),
        ));
    }
    fs::create_dir_all(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_escapes() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        for bad in [
            "../x",
            "a/../../x",
            "/etc/passwd",
            ".git/config",
            "./.git/hooks/pre-commit",
            "C:\\x",
            "\\\\server\\share",
            "a\0b",
            "",
            ".",
        ] {
            assert!(ws.resolve(bad).is_err(), "{bad:?} should be refused");
        }
        assert!(ws.resolve("a/./b/../c.txt").unwrap().ends_with("a/c.txt"));
    }

    #[cfg(unix)]
    #[test]
    fn refuses_symlink_out() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        assert!(ws.resolve("link/file.txt").is_err());
    }
}
