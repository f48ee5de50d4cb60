//! `.mend/` is mend's own, or it is not used.
//!
//! A repository can ship a `.mend` folder, a `.mend` symbolic link pointing
//! anywhere, or a `.mend` that git tracks. mend keeps its lock, journal,
//! snapshots and shadow repository in `.mend` only when it is a real folder
//! carrying mend's owner mark, a tag signed with this workspace's key (see
//! `trust`). A real, untracked folder without the mark (one made by an
//! earlier mend, say) is adopted when nothing in it is a link or a special
//! file; a journal in it still has to verify on its own before it is acted
//! on.
//!
//! mend's own folder is then held open by descriptor (see `beneath`):
//! nothing in it is reached through a path resolved again later, or
//! through a link.

use std::path::Path;

use crate::beneath::{EntryKind, PrivateDir};
use crate::error::Error;
use crate::trust::Key;

const OWNER: &str = "owner";
const OWNER_PURPOSE: &str = "owner";

fn untrusted(what: impl Into<String>, fix: impl Into<String>) -> Error {
    Error::Untrusted {
        what: what.into(),
        fix: fix.into(),
    }
}

/// The verified `.mend` of `root`, or `None` when there is none and
/// `create` is false.
pub(crate) fn open(root: &Path, key: &Key, create: bool) -> Result<Option<PrivateDir>, Error> {
    let top = PrivateDir::open_path(root, "")?;
    match top.kind(".mend")? {
        None if !create => Ok(None),
        None => make(&top, key).map(Some),
        Some(EntryKind::Link) => {
            let to = std::fs::read_link(root.join(".mend"))
                .map(|t| mend_core::text::escape_controls(&t.to_string_lossy()).into_owned())
                .unwrap_or_else(|_| "somewhere".into());
            Err(untrusted(
                format!("is a symbolic link (to {to}), not a folder mend made"),
                "Remove the link (`rm .mend`, which leaves its target alone); mend then makes its own folder.",
            ))
        }
        Some(EntryKind::File) => Err(not_a_folder("a file")),
        Some(EntryKind::Other) => Err(not_a_folder("a special file")),
        Some(EntryKind::Dir) => {
            // Opened without following a link, so what was checked is what
            // is used even if `.mend` is swapped afterwards.
            let dir = top.dir(".mend")?.ok_or_else(vanished)?;
            if !owned(&dir, key) {
                adopt(root, &dir, key)?;
            }
            Ok(Some(dir))
        }
    }
}

fn not_a_folder(kind: &str) -> Error {
    untrusted(
        format!("is {kind}, not a folder mend made"),
        "Move it away or delete it (`rm .mend`); mend then makes its own folder.",
    )
}

fn vanished() -> Error {
    untrusted(
        "went away while mend was opening it",
        "Try again; if it keeps happening, something else is replacing .mend.",
    )
}

fn owned(dir: &PrivateDir, key: &Key) -> bool {
    dir.read(OWNER, 256)
        .ok()
        .flatten()
        .and_then(|b| String::from_utf8(b).ok())
        .is_some_and(|tag| key.verify(OWNER_PURPOSE, b"", &tag))
}

fn make(top: &PrivateDir, key: &Key) -> Result<PrivateDir, Error> {
    // Made only where nothing is; another process making it first is
    // fine, and it is then checked as any existing folder.
    let dir = top.create_dir(".mend").map_err(|e| match e {
        Error::Tampered { .. } => untrusted(
            "appeared as something other than a folder while mend was creating it",
            "Remove it and try again.",
        ),
        e => e,
    })?;
    if !owned(&dir, key) {
        mark(&dir, key)?;
    }
    Ok(dir)
}

/// Writes `.gitignore` (so the folder stays out of version control) and the
/// owner mark.
fn mark(dir: &PrivateDir, key: &Key) -> Result<(), Error> {
    dir.write(".gitignore", b"*\n")?;
    dir.write(OWNER, key.sign(OWNER_PURPOSE, b"").as_bytes())
}

/// The folder under `.mend` where `mend daemon` binds its socket.
pub const DAEMON_DIR: &str = "daemon";
/// The daemon's socket, in [`DAEMON_DIR`].
pub const DAEMON_SOCKET: &str = "sock";

/// Takes over a real `.mend` that lacks a valid mark, unless git tracks it
/// (then it came with the repository) or it holds links or special files.
fn adopt(root: &Path, dir: &PrivateDir, key: &Key) -> Result<(), Error> {
    if let Some(n) = tracked_entries(root) {
        return Err(untrusted(
            format!("is tracked by git ({n} files), so it came with the repository"),
            "Stop tracking it and delete it: `git rm -r --cached .mend && rm -rf .mend`, then commit. mend then makes its own, ignored folder.",
        ));
    }
    // A worktree moved or copied with `mend daemon` running carries the
    // daemon's socket, which answers for the old place: drop it, so the
    // folder is taken over and the next daemon binds a fresh one.
    dir.remove_socket(&format!("{DAEMON_DIR}/{DAEMON_SOCKET}"));
    if let Some((path, kind)) = dir.first_unsafe_entry() {
        let shown = mend_core::text::escape_controls(&path);
        // Only the entry goes: the folder holds pending sessions and
        // checkpoint state that deleting it would lose.
        let fix = if kind.starts_with("a folder") {
            format!(
                "Make it readable (`chmod u+rwx {shown}`) or remove just that folder; keep the rest of .mend, which holds pending sessions and checkpoint state. mend then takes the folder over."
            )
        } else {
            let link = if kind.starts_with("a symbolic link") {
                "; this leaves what the link points to alone"
            } else {
                ""
            };
            format!(
                "Remove just that entry (`rm {shown}`{link}); keep the rest of .mend, which holds pending sessions and checkpoint state. mend then takes the folder over."
            )
        };
        return Err(untrusted(
            format!("holds {shown}, {kind}, which mend never makes"),
            fix,
        ));
    }
    mark(dir, key)
}

/// How many files under `.mend/` git's index holds for the repository
/// containing `root`, when any.
fn tracked_entries(root: &Path) -> Option<usize> {
    let repo = git2::Repository::discover(root).ok()?;
    let workdir = repo.workdir()?.canonicalize().ok()?;
    let below = root.strip_prefix(&workdir).ok()?;
    let mut prefix = below.to_string_lossy().replace('\\', "/");
    if !prefix.is_empty() {
        prefix.push('/');
    }
    prefix.push_str(".mend/");
    let index = repo.index().ok()?;
    let n = index
        .iter()
        .filter(|e| e.path.starts_with(prefix.as_bytes()))
        .count();
    (n > 0).then_some(n)
}
