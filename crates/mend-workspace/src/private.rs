//! `.mend/` is mend's own, or it is not used.
//!
//! A repository can ship a `.mend` folder, a `.mend` symbolic link pointing
//! anywhere, or a `.mend` that git tracks; an agent can make one in a
//! folder without git. mend keeps its lock, journal, state and shadow
//! repository in `.mend` only when it is a real folder carrying mend's
//! owner mark, signed with a key only this user's mend derives (see
//! `trust`). A folder without a valid mark is never taken over, git
//! repository or not: it could hold planted checkpoints or review state.
//!
//! The mark (`owner`) names the store id that keys the folder's sealed
//! state files and the root it was made for, and is signed with that
//! root's key:
//!
//! ```text
//! mend owner v2
//! store <64 hex digits>
//! root <the root's bytes in hex>
//! <HMAC-SHA256 of the three lines above, in hex>
//! ```
//!
//! - Made for this root: the folder is mend's.
//! - Made by this user's mend for another root: the project was moved or
//!   copied with its `.mend`; it is taken over (marked for this root, same
//!   store id, so its sealed state still verifies) unless git tracks it
//!   or it holds links or special files.
//! - The mark of earlier versions (a bare tag, which only this user's mend
//!   for this root can make): the folder is provably mend's and is marked
//!   again; the state files in it are unsealed, and each is refused or
//!   rebuilt as its reader decides (see `docs/decisions.md`).
//! - No valid mark: refused, naming how to move the folder away.
//!
//! The store id is derived from the root's key, so two processes making or
//! upgrading a mark at once write the same bytes. A folder made a moment
//! ago by another mend may not carry its mark yet: one without a mark is
//! waited for while it is younger than [`YOUNG`].
//!
//! mend's own folder is then held open by descriptor (see `beneath`):
//! nothing in it is reached through a path resolved again later, or
//! through a link.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::beneath::{EntryKind, PrivateDir};
use crate::error::Error;
use crate::trust::{Key, Seal, hex, unhex};

const OWNER: &str = "owner";
const OWNER_PURPOSE: &str = "owner";
const MARK_PURPOSE: &str = "owner v2";
const MARK_HEADER: &str = "mend owner v2";

/// How long a `.mend` without a mark may be another mend's, still writing
/// it.
const YOUNG: Duration = Duration::from_secs(2);

fn untrusted(what: impl Into<String>, fix: impl Into<String>) -> Error {
    Error::Untrusted {
        what: what.into(),
        fix: fix.into(),
    }
}

/// The verified `.mend` of `root`, or `None` when there is none and
/// `create` is false. It carries the seal of its state files.
pub(crate) fn open(root: &Path, key: &Key, create: bool) -> Result<Option<PrivateDir>, Error> {
    let top = PrivateDir::open_path(root, "")?;
    match top.kind(".mend")? {
        None if !create => Ok(None),
        None => match make(root, &top, key)? {
            Some(dir) => Ok(Some(dir)),
            // Another process made it first: checked as any folder.
            None => existing(root, &top, key).map(Some),
        },
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
        Some(EntryKind::Dir) => existing(root, &top, key).map(Some),
    }
}

/// The existing folder `.mend`, once its mark says it is mend's.
fn existing(root: &Path, top: &PrivateDir, key: &Key) -> Result<PrivateDir, Error> {
    // Opened without following a link, so what was checked is what is
    // used even if `.mend` is swapped afterwards.
    let dir = top.dir(".mend")?.ok_or_else(vanished)?;
    let waited = std::time::Instant::now();
    let id = loop {
        match read_mark(root, &dir, key) {
            Mark::Here(id) => break id,
            Mark::Moved(id, from) => {
                take_over(root, &dir, &from)?;
                write_mark(&dir, root, key, &id)?;
                break id;
            }
            Mark::Old => {
                let id = store_id(key);
                write_mark(&dir, root, key, &id)?;
                break id;
            }
            Mark::None if young(&dir) && waited.elapsed() < YOUNG => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Mark::None => return Err(unmarked(root)),
        }
    };
    Ok(dir.sealed_with(Seal::new(Key::for_store(&id)?)))
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

/// The refusal of a folder without a valid mark: git's own words when it
/// came with the repository.
fn unmarked(root: &Path) -> Error {
    if let Some(n) = tracked_entries(root) {
        return untrusted(
            format!("is tracked by git ({n} files), so it came with the repository"),
            "Stop tracking it and delete it: `git rm -r --cached .mend && rm -rf .mend`, then commit. mend then makes its own, ignored folder.",
        );
    }
    untrusted(
        "carries no owner mark of mend's for this user, so mend did not make it (or another user's mend did)",
        "mend never takes over a folder it did not make: it could hold planted checkpoints or review state. Look at what it holds, then move it away (`mv .mend .mend.unknown`) or delete it (`rm -rf .mend`); mend then makes its own folder.",
    )
}

/// What the owner mark says.
enum Mark {
    /// Made for this root: the store id.
    Here(Vec<u8>),
    /// Made by this user's mend for another root.
    Moved(Vec<u8>, PathBuf),
    /// The bare tag of earlier versions, for this root.
    Old,
    /// None, or none that verifies.
    None,
}

fn read_mark(root: &Path, dir: &PrivateDir, key: &Key) -> Mark {
    let Some(text) = dir
        .read(OWNER, 1024)
        .ok()
        .flatten()
        .and_then(|b| String::from_utf8(b).ok())
    else {
        return Mark::None;
    };
    let Some(signed) = text.strip_prefix(MARK_HEADER) else {
        return if key.verify(OWNER_PURPOSE, b"", &text) {
            Mark::Old
        } else {
            Mark::None
        };
    };
    let lines: Vec<&str> = signed.lines().collect();
    let (Some(id), Some(made), Some(tag)) = (
        lines.get(1).and_then(|l| l.strip_prefix("store ")),
        lines.get(2).and_then(|l| l.strip_prefix("root ")),
        lines.get(3),
    ) else {
        return Mark::None;
    };
    let (Some(id), Some(made)) = (unhex(id), unhex(made)) else {
        return Mark::None;
    };
    let made =
        PathBuf::from(<std::ffi::OsString as std::os::unix::ffi::OsStringExt>::from_vec(made));
    let body = mark_body(&id, &made);
    if made == root {
        return if key.verify(MARK_PURPOSE, body.as_bytes(), tag) {
            Mark::Here(id)
        } else {
            Mark::None
        };
    }
    match Key::for_root(&made) {
        Ok(k) if k.verify(MARK_PURPOSE, body.as_bytes(), tag) => Mark::Moved(id, made),
        _ => Mark::None,
    }
}

fn mark_body(id: &[u8], root: &Path) -> String {
    format!(
        "{MARK_HEADER}\nstore {}\nroot {}\n",
        hex(id),
        hex(root.as_os_str().as_encoded_bytes())
    )
}

/// The store id of a folder made (or first marked) at the root of `key`.
fn store_id(key: &Key) -> Vec<u8> {
    unhex(&key.sign("store id", b"")).expect("a tag is hex")
}

/// Whether the folder changed so recently that another mend may still be
/// writing its mark.
fn young(dir: &PrivateDir) -> bool {
    let Ok(st) = rustix::fs::fstat(dir) else {
        return false;
    };
    let changed =
        SystemTime::UNIX_EPOCH + Duration::new(st.st_ctime.max(0) as u64, st.st_ctime_nsec as u32);
    SystemTime::now()
        .duration_since(changed)
        .is_ok_and(|age| age < YOUNG)
}

/// Makes `.mend` with its mark; `None` when another process made it
/// first.
fn make(root: &Path, top: &PrivateDir, key: &Key) -> Result<Option<PrivateDir>, Error> {
    let Some(dir) = top.make_dir(".mend").map_err(|e| match e {
        Error::Tampered { .. } => untrusted(
            "appeared as something other than a folder while mend was creating it",
            "Remove it and try again.",
        ),
        e => e,
    })?
    else {
        return Ok(None);
    };
    let id = store_id(key);
    dir.write(".gitignore", b"*\n")?;
    write_mark(&dir, root, key, &id)?;
    Ok(Some(dir.sealed_with(Seal::new(Key::for_store(&id)?))))
}

/// Writes the owner mark for `root`.
fn write_mark(dir: &PrivateDir, root: &Path, key: &Key, id: &[u8]) -> Result<(), Error> {
    let body = mark_body(id, root);
    let tag = key.sign(MARK_PURPOSE, body.as_bytes());
    dir.write(OWNER, format!("{body}{tag}\n").as_bytes())
}

/// The folder under `.mend` where `mend daemon` binds its socket.
pub const DAEMON_DIR: &str = "daemon";
/// The daemon's socket, in [`DAEMON_DIR`].
pub const DAEMON_SOCKET: &str = "sock";

/// Takes over a `.mend` this user's mend made for another root (the
/// project was moved or copied), unless git tracks it (then it came with
/// the repository) or it holds links or special files.
fn take_over(root: &Path, dir: &PrivateDir, from: &Path) -> Result<(), Error> {
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
        let from = mend_core::text::escape_controls(&from.to_string_lossy()).into_owned();
        return Err(untrusted(
            format!("was made for {from} and holds {shown}, {kind}, which mend never makes"),
            fix,
        ));
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The bare tag earlier versions wrote is this user's mend's for this
    /// root, so the folder is marked again with the mark of today, and
    /// what it holds is kept.
    #[test]
    fn an_earlier_versions_mark_is_upgraded() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let key = Key::for_root(&root).unwrap();
        std::fs::create_dir(root.join(".mend")).unwrap();
        std::fs::write(root.join(".mend/owner"), key.sign(OWNER_PURPOSE, b"")).unwrap();
        std::fs::write(root.join(".mend/keep"), b"kept").unwrap();
        let opened = open(&root, &key, false).unwrap().unwrap();
        assert!(opened.seal().is_some());
        let mark = std::fs::read_to_string(root.join(".mend/owner")).unwrap();
        assert!(mark.starts_with(MARK_HEADER), "{mark}");
        assert_eq!(std::fs::read(root.join(".mend/keep")).unwrap(), b"kept");
        // Marked with the id a fresh folder at this root gets, so two
        // processes upgrading at once agree.
        assert!(matches!(read_mark(&root, &opened, &key), Mark::Here(id) if id == store_id(&key)));
    }
}
