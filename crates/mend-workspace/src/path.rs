//! Confinement: every model-supplied path resolves inside the root, to what
//! it *is* rather than how it is spelled.
//!
//! A path is refused when any component is `.git` or `.mend` in any
//! spelling a filesystem could treat as the same folder (case, trailing dots
//! and spaces, 8.3 short names, characters HFS+ ignores), when its real
//! location (symlinks resolved) falls outside the root or under such a
//! folder, or when it carries control characters. A component that matches
//! an existing name only after Unicode normalization resolves to that name.

use std::path::{Component, Path, PathBuf};

use mend_core::text::{escape_controls as escape, is_control};
use unicode_normalization::UnicodeNormalization as _;

use crate::error::{Error, PathRule};

fn refuse(raw: &str, rule: PathRule, reason: impl Into<String>) -> Error {
    Error::PathRefused {
        path: raw.to_owned(),
        reason: reason.into(),
        rule,
    }
}

/// The root in the forms a caller may spell it.
#[derive(Debug, Clone)]
pub(crate) struct Root {
    /// Symlinks resolved: where every check is made.
    pub(crate) canonical: PathBuf,
    /// Absolute, as given (when it differs from `canonical`), so a root given
    /// through a symlink accepts absolute paths spelled through it too.
    pub(crate) given: Option<PathBuf>,
    /// The folder's device and inode when it was opened: a write goes into
    /// this folder or nowhere (see [`Root::open_dir`]).
    id: (u64, u64),
}

impl Root {
    pub(crate) fn open(raw: &Path) -> std::io::Result<Root> {
        let canonical = raw.canonicalize()?;
        let absolute = if raw.is_absolute() {
            raw.to_path_buf()
        } else {
            std::env::current_dir()?.join(raw)
        };
        // `..` after a symlink means something else to the kernel than to a
        // lexical clean-up, so only a plain spelling is kept.
        let plain = !absolute
            .components()
            .any(|c| matches!(c, Component::ParentDir));
        let given: PathBuf = absolute
            .components()
            .filter(|c| !matches!(c, Component::CurDir))
            .collect();
        let given = (plain && given != canonical).then_some(given);
        let meta = std::fs::metadata(&canonical)?;
        let id = (
            std::os::unix::fs::MetadataExt::dev(&meta),
            std::os::unix::fs::MetadataExt::ino(&meta),
        );
        Ok(Root {
            canonical,
            given,
            id,
        })
    }

    /// The folder `dir` (a path under the root, checked by [`check_real`])
    /// held open for a write into it: reached from the root's folder one
    /// name at a time, no link followed, each missing folder made on the
    /// way. The paths a commit checked are only names; a folder swapped for
    /// a link after the check (even one leading out of the root) cannot
    /// lead the write elsewhere: it is refused (`raw` names the path).
    pub(crate) fn open_dir(&self, dir: &Path, raw: &str) -> Result<rustix::fd::OwnedFd, Error> {
        use rustix::fs::{Mode, OFlags};
        let moved = |why: &str| refuse(raw, PathRule::Link, why.to_owned());
        let real = real_dir(self, dir);
        let Ok(rel) = real.strip_prefix(&self.canonical) else {
            return Err(moved(
                "goes through a symbolic link that points outside the project root",
            ));
        };
        if rel
            .components()
            .any(|c| !matches!(c, Component::Normal(n) if reserved(&n.to_string_lossy()).is_none()))
        {
            return Err(moved("resolves into .git or .mend through a symbolic link"));
        }
        let flags = OFlags::DIRECTORY | OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let io = |e: rustix::io::Errno| {
            Error::io(format!("opening the folder of {}", escape(raw)), e.into())
        };
        let mut at = rustix::fs::open(&self.canonical, flags, Mode::empty()).map_err(io)?;
        let st = rustix::fs::fstat(&at).map_err(io)?;
        if (st.st_dev, st.st_ino) != self.id {
            return Err(moved(
                "the project root is no longer the folder mend opened (a folder above it was moved or swapped); nothing was written",
            ));
        }
        for name in rel.components() {
            let name = name.as_os_str();
            let mut opened = rustix::fs::openat(&at, name, flags, Mode::empty());
            if matches!(opened, Err(rustix::io::Errno::NOENT)) {
                match rustix::fs::mkdirat(&at, name, Mode::from_raw_mode(0o777)) {
                    Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                    Err(e) => return Err(io(e)),
                }
                opened = rustix::fs::openat(&at, name, flags, Mode::empty());
            }
            at = match opened {
                Ok(fd) => fd,
                Err(rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR) => {
                    return Err(moved(
                        "a folder on its way was replaced by a link or a file while mend was writing; nothing was written",
                    ));
                }
                Err(e) => return Err(io(e)),
            };
        }
        Ok(at)
    }

    /// The part of an absolute path under the root, in either form.
    pub(crate) fn strip<'p>(&self, p: &'p Path) -> Option<&'p Path> {
        p.strip_prefix(&self.canonical)
            .ok()
            .or_else(|| self.given.as_ref().and_then(|g| p.strip_prefix(g).ok()))
    }
}

/// Which of mend's protected folders (`.git`, `.mend`) a name reaches
/// under any spelling a filesystem may fold to it, if any.
pub fn reserved(name: &str) -> Option<&'static str> {
    // Windows drops trailing dots and spaces and reads `name:stream` as the
    // file `name`; HFS+ ignores some zero-width characters; NTFS may answer
    // to an 8.3 short name.
    let base = name.split(':').next().unwrap_or(name);
    let base = base.trim_end_matches(['.', ' ']);
    let folded: String = base
        .chars()
        .filter(|c| !hfs_ignorable(*c))
        .flat_map(char::to_lowercase)
        .collect();
    match folded.as_str() {
        ".git" | "git~1" => Some(".git"),
        ".mend" | "mend~1" => Some(".mend"),
        _ => None,
    }
}

/// Code points HFS+ leaves out when it compares names.
fn hfs_ignorable(c: char) -> bool {
    matches!(c,
        '\u{200c}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{206a}'..='\u{206f}' | '\u{feff}')
}

fn protected(raw: &str, folder: &str) -> Error {
    let reason = if folder == ".git" {
        "is inside .git, a repository's own folder, which mend never edits".to_owned()
    } else {
        "is inside .mend, mend's own bookkeeping".to_owned()
    };
    refuse(raw, PathRule::Reserved, reason)
}

/// Refuses the spellings of a path that cannot be a file under the root
/// whatever the root holds: control characters, Windows drives and
/// network paths, the home folder, backslashes.
fn refuse_form(raw: &str) -> Result<(), Error> {
    if let Some(c) = raw.chars().find(|&c| is_control(c)) {
        let reason = if c == '\0' {
            "the path contains a NUL byte".to_owned()
        } else {
            format!(
                "the path contains the control character U+{:04X}; file names with control characters are refused",
                c as u32
            )
        };
        return Err(refuse(raw, PathRule::Control, reason));
    }
    let b = raw.as_bytes();
    if raw.starts_with("\\\\")
        || raw.starts_with("//")
        || (b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':')
    {
        return Err(refuse(
            raw,
            PathRule::Outside,
            "a Windows drive or network path; paths must be relative to the project root",
        ));
    }
    // `~` is a shell's home folder; written literally it would make a
    // folder named `~` in the project, one `rm -rf ~` away from a disaster.
    if raw == "~" || raw.starts_with("~/") {
        return Err(refuse(
            raw,
            PathRule::Outside,
            "`~` means the home folder, outside the project; paths must be relative to the project root",
        ));
    }
    if raw.contains('\\') {
        return Err(refuse(
            raw,
            PathRule::Backslash,
            "backslashes are not path separators here; use `/`",
        ));
    }
    Ok(())
}

/// Lexically normalizes a path (`a/./b/../c` → `a/c`), refusing every form
/// that could leave the root or reach `.git` or `.mend`.
pub(crate) fn normalize(root: &Root, raw: &str) -> Result<Vec<String>, Error> {
    if raw.is_empty() {
        return Err(refuse(raw, PathRule::NoFile, "the path is empty"));
    }
    refuse_form(raw)?;
    let rel = Path::new(raw);
    let rel: &Path = if rel.is_absolute() {
        root.strip(rel).ok_or_else(|| {
            refuse(
                raw,
                PathRule::Outside,
                "an absolute path outside the project root",
            )
        })?
    } else {
        rel
    };
    let mut parts: Vec<String> = Vec::new();
    for c in rel.components() {
        match c {
            Component::CurDir => {}
            Component::Normal(p) => {
                let p = p.to_string_lossy();
                if let Some(folder) = reserved(&p) {
                    return Err(protected(raw, folder));
                }
                parts.push(p.into_owned());
            }
            Component::ParentDir => {
                if parts.pop().is_none() {
                    return Err(refuse(
                        raw,
                        PathRule::Outside,
                        "leads outside the project root",
                    ));
                }
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(refuse(raw, PathRule::Outside, "is not a relative path"));
            }
        }
    }
    if parts.is_empty() {
        return Err(refuse(
            raw,
            PathRule::NoFile,
            "names the project root, not a file",
        ));
    }
    Ok(parts)
}

/// Resolves `raw` under the root: the path relative to the root as it is
/// spelled on disk, and the absolute path. Symlinks are followed only while
/// they stay inside the root and outside `.git` and `.mend`.
pub(crate) fn resolve(root: &Root, raw: &str) -> Result<(String, PathBuf), Error> {
    let (spelled, path) = spell(root, raw)?;
    check_real(&root.canonical, raw, &path)?;
    Ok((spelled.join("/"), path))
}

/// [`resolve`] for a change that may not follow a link: with `entry`, the
/// change replaces or removes the entry at `raw` itself (a deletion, a
/// restore), so a link there is never followed; a link at a folder on its
/// way that the same change set removes (`unlinked` holds those) is not
/// followed either, since the change lands in the folder made in its
/// place. Where such a link points does not matter; every folder above it
/// must still resolve inside the root.
pub(crate) fn resolve_entry(
    root: &Root,
    raw: &str,
    entry: bool,
    unlinked: &std::collections::BTreeSet<String>,
) -> Result<(String, PathBuf), Error> {
    let (spelled, path) = spell(root, raw)?;
    let mut probe = root.canonical.clone();
    for (i, name) in spelled.iter().enumerate() {
        probe.push(name);
        let link = probe
            .symlink_metadata()
            .is_ok_and(|m| m.file_type().is_symlink());
        let last = i + 1 == spelled.len();
        if link && ((entry && last) || (!last && unlinked.contains(&spelled[..=i].join("/")))) {
            probe.pop();
            check_real(&root.canonical, raw, &probe)?;
            return Ok((spelled.join("/"), path));
        }
    }
    check_real(&root.canonical, raw, &path)?;
    Ok((spelled.join("/"), path))
}

/// The names of `raw` as spelled on disk, and its path under the root,
/// no link followed.
fn spell(root: &Root, raw: &str) -> Result<(Vec<String>, PathBuf), Error> {
    let parts = normalize(root, raw)?;
    let mut path = root.canonical.clone();
    let mut spelled: Vec<String> = Vec::with_capacity(parts.len());
    let mut on_disk = true;
    for part in parts {
        let name = if on_disk {
            match path.join(&part).symlink_metadata() {
                Ok(_) => part,
                Err(_) => match normalized_twin(raw, &path, &part)? {
                    Some(twin) => twin,
                    None => {
                        on_disk = false;
                        part
                    }
                },
            }
        } else {
            part
        };
        path.push(&name);
        spelled.push(name);
    }
    Ok((spelled, path))
}

/// The existing entry of `dir` whose name equals `part` after Unicode
/// normalization (`café` stored decomposed, asked for composed), so an edit
/// finds it and a create never makes a look-alike second file.
fn normalized_twin(raw: &str, dir: &Path, part: &str) -> Result<Option<String>, Error> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(None);
    };
    let want: String = part.nfc().collect();
    let mut found: Vec<String> = entries
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.nfc().eq(want.chars()))
        .collect();
    match found.len() {
        0 => Ok(None),
        1 => Ok(found.pop()),
        _ => Err(refuse(
            raw,
            PathRule::LookAlike,
            format!(
                "matches {} names that differ only in Unicode normalization ({}); rename one of them",
                found.len(),
                found
                    .iter()
                    .map(|n| escape(n))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

/// The deepest existing ancestor of `path` (or `path` itself) must resolve
/// inside the root and outside every `.git` and `.mend`, so no symlink at
/// any component leads out or into one. Called again at commit time, so a
/// symlink swapped in after planning is caught.
///
/// A dangling link is judged by the folder it is in: nothing can be made
/// through it (the kernel refuses to make a folder through it, and a
/// commit replaces a final link rather than following it), so only a
/// transaction that deletes it first can write there.
pub(crate) fn check_real(root: &Path, raw: &str, path: &Path) -> Result<(), Error> {
    let mut probe = path.to_path_buf();
    loop {
        if let Ok(meta) = probe.symlink_metadata() {
            let real = match real_path(root, &probe, &meta) {
                Ok(real) => real,
                Err(e)
                    if meta.file_type().is_symlink()
                        && e.kind() == std::io::ErrorKind::NotFound =>
                {
                    if !probe.pop() {
                        return Ok(());
                    }
                    continue;
                }
                Err(e) => {
                    return Err(refuse(
                        raw,
                        PathRule::Link,
                        format!("cannot resolve {}: {e}", probe.display()),
                    ));
                }
            };
            let Ok(inside) = real.strip_prefix(root) else {
                return Err(refuse(
                    raw,
                    PathRule::Link,
                    "goes through a symbolic link that points outside the project root",
                ));
            };
            for c in inside.components() {
                if let Some(folder) = reserved(&c.as_os_str().to_string_lossy()) {
                    return Err(refuse(
                        raw,
                        PathRule::Link,
                        format!("resolves into {folder} through a symbolic link"),
                    ));
                }
            }
            return Ok(());
        }
        if !probe.pop() {
            return Ok(());
        }
    }
}

/// [`Path::canonicalize`] of `probe`, a path under `root`, by
/// [`real_path`].
pub(crate) fn canonical(root: &Path, probe: &Path) -> std::io::Result<PathBuf> {
    real_path(root, probe, &probe.symlink_metadata()?)
}

/// A folder under `root` with every link resolved; for one that does not
/// exist yet, its nearest existing ancestor's, with the rest as given.
pub(crate) fn real_dir(root: &Root, dir: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut d = dir;
    loop {
        if let Ok(real) = canonical(&root.canonical, d) {
            return rest.iter().rev().fold(real, |p: PathBuf, c| p.join(c));
        }
        match (d.parent(), d.file_name()) {
            (Some(up), Some(name)) => {
                rest.push(name.to_owned());
                d = up;
            }
            _ => return dir.to_path_buf(),
        }
    }
}

/// `probe` with every link resolved, as [`Path::canonicalize`] gives it,
/// cheaply where nothing on its way under `root` is a link: then it is
/// itself, as long as `root` is still the folder it was when it was last
/// found to resolve to itself (its device and inode, kept per process),
/// so no link swapped in above it leads elsewhere. That costs a `stat` of
/// the root and of each folder on the way (the entry's own, `meta`, is
/// already taken) instead of a `readlink` of every component from `/`.
fn real_path(root: &Path, probe: &Path, meta: &std::fs::Metadata) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::MetadataExt as _;
    static ROOTS: std::sync::Mutex<Vec<(PathBuf, (u64, u64))>> = std::sync::Mutex::new(Vec::new());
    let plain = |p: &Path| p.components().all(|c| matches!(c, Component::Normal(_)));
    let Ok(rel) = probe.strip_prefix(root) else {
        return probe.canonicalize();
    };
    let mut on_way = root.to_path_buf();
    let mut names = rel.components().peekable();
    let mut clean = !meta.file_type().is_symlink() && plain(rel);
    while clean && let Some(name) = names.next() {
        on_way.push(name);
        if names.peek().is_some() {
            clean = on_way.symlink_metadata().is_ok_and(|m| m.is_dir());
        }
    }
    let now = std::fs::metadata(root).map(|m| (m.dev(), m.ino()));
    let mut roots = ROOTS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let known = roots
        .iter()
        .any(|(r, id)| r == root && now.as_ref().ok() == Some(id));
    if clean && known {
        return Ok(probe.to_path_buf());
    }
    if let Ok(id) = now
        && root.canonicalize().is_ok_and(|r| r == root)
    {
        roots.retain(|(r, _)| r != root);
        // A few roots per process at most (one per MCP root).
        if roots.len() >= 64 {
            roots.clear();
        }
        roots.push((root.to_path_buf(), id));
    }
    drop(roots);
    probe.canonicalize()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A link acted on as an entry is not followed, wherever it points; a
    /// folder on the way that is a link out still refuses the path unless
    /// the same change set removes that link.
    #[cfg(unix)]
    #[test]
    fn an_entry_is_judged_by_its_folders() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = Root::open(dir.path()).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
        std::os::unix::fs::symlink("loop", dir.path().join("loop")).unwrap();
        let none = std::collections::BTreeSet::new();
        let out: std::collections::BTreeSet<String> = ["out".to_owned()].into();
        for raw in ["out", "loop"] {
            assert!(resolve(&root, raw).is_err(), "{raw}");
            assert!(resolve_entry(&root, raw, true, &none).is_ok(), "{raw}");
            assert!(resolve_entry(&root, raw, false, &none).is_err(), "{raw}");
        }
        for entry in [true, false] {
            assert!(resolve_entry(&root, "out/f", entry, &none).is_err());
            assert!(resolve_entry(&root, "out/f", entry, &out).is_ok());
        }
    }

    #[test]
    fn home_shorthand_is_outside() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::open(dir.path()).unwrap();
        for raw in ["~", "~/notes.txt", "~/.bashrc"] {
            let err = normalize(&root, raw).unwrap_err().to_string();
            assert!(err.contains("home folder"), "{raw}: {err}");
        }
        // A `~` inside a name is an ordinary character.
        assert!(normalize(&root, "docs/~draft.md").is_ok());
        assert!(normalize(&root, "a~/b.txt").is_ok());
    }

    #[test]
    fn reserved_spellings() {
        for name in [
            ".git",
            ".GIT",
            ".Git",
            ".git.",
            ".git ",
            ".git. .",
            "GIT~1",
            ".g\u{200c}it",
            ".git::$INDEX_ALLOCATION",
            ".mend",
            ".MEND",
            ".mend.",
        ] {
            assert!(reserved(name).is_some(), "{name:?}");
        }
        for name in [".github", ".gitignore", "git", ".mendrc", "...", "mend"] {
            assert!(reserved(name).is_none(), "{name:?}");
        }
    }

    /// The cheap resolution gives what `canonicalize` gives: through a
    /// link inside the root, and after a folder above the root is swapped
    /// for a link to another copy of it, where the path is refused as
    /// `canonicalize` would have it.
    #[cfg(unix)]
    #[test]
    fn resolving_cheaply_sees_links_and_a_root_moved_under_it() {
        let base = tempfile::tempdir().unwrap();
        let base = base.path().canonicalize().unwrap();
        let make = |top: &str| {
            let root = base.join(top).join("ws");
            std::fs::create_dir_all(root.join("sub")).unwrap();
            std::fs::write(root.join("sub/f.txt"), "x\n").unwrap();
            root
        };
        let root = make("a");
        std::os::unix::fs::symlink("sub", root.join("via")).unwrap();
        for rel in ["sub/f.txt", "via/f.txt", "sub", "via"] {
            let probe = root.join(rel);
            // Twice: the first call records the root, the second uses it.
            for _ in 0..2 {
                assert_eq!(
                    canonical(&root, &probe).unwrap(),
                    probe.canonicalize().unwrap(),
                    "{rel}"
                );
            }
        }
        assert!(check_real(&root, "sub/f.txt", &root.join("sub/f.txt")).is_ok());
        // `a` becomes a link to `b`, a copy: the same spelling now leads
        // outside the root it was.
        make("b");
        std::fs::rename(base.join("a"), base.join("a-old")).unwrap();
        std::os::unix::fs::symlink(base.join("b"), base.join("a")).unwrap();
        let probe = root.join("sub/f.txt");
        assert_eq!(
            canonical(&root, &probe).unwrap(),
            base.join("b").join("ws").join("sub").join("f.txt")
        );
        assert!(check_real(&root, "sub/f.txt", &probe).is_err());
    }
}
