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
//! state files, the root it was made for and the folder itself (its
//! device and inode), and is signed with that root's key:
//!
//! ```text
//! mend owner v3
//! store <64 hex digits>
//! root <the root's bytes in hex>
//! folder <device> <inode>
//! <HMAC-SHA256 of the four lines above, in hex>
//! ```
//!
//! - Made for this root: the folder is mend's. A mark of v2 (no `folder`
//!   line), or one naming another inode (the folder was restored from a
//!   backup in place), is written again for the folder as it is.
//! - Made by this user's mend for another root: taken over (marked for
//!   this root, same store id, so its sealed state still verifies) only
//!   when it is a move: the same folder (device and inode: `mv` on one
//!   filesystem keeps them, a copy never does), the root it was made for
//!   holds no `.mend` of the same store any more, git does not track it,
//!   and it holds no links or special files. A copy would hand the
//!   original's checkpoints and review state to another folder.
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
const MARK_HEADER: &str = "mend owner v3";
/// The mark of v2, which named no folder: read, then written again as v3.
const MARK_HEADER_V2: &str = "mend owner v2";

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
            Mark::Here(id, at) => {
                if at != Some(folder_id(&dir)?) {
                    write_mark(&dir, root, key, &id)?;
                }
                break id;
            }
            Mark::Moved(id, from, at) => {
                take_over(root, &dir, &Made { from, id: &id, at })?;
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
    /// Made for this root: the store id and the folder it was made for
    /// (none in a v2 mark).
    Here(Vec<u8>, Option<FolderId>),
    /// Made by this user's mend for another root: the store id, that
    /// root, and the folder it was made for.
    Moved(Vec<u8>, PathBuf, Option<FolderId>),
    /// The bare tag of earlier versions, for this root.
    Old,
    /// None, or none that verifies.
    None,
}

/// A `.mend` folder's device and inode.
type FolderId = (u64, u64);

/// The device and inode of the folder `dir`.
fn folder_id(dir: &PrivateDir) -> Result<FolderId, Error> {
    let st = rustix::fs::fstat(dir).map_err(|e| Error::io("reading .mend's inode", e.into()))?;
    Ok((st.st_dev as u64, st.st_ino as u64))
}

/// A mark's lines, before its tag is checked.
struct Parsed {
    id: Vec<u8>,
    made: PathBuf,
    at: Option<FolderId>,
    body: String,
    tag: String,
}

impl Parsed {
    /// Whether the key of the root it names signed it.
    fn verifies(&self) -> bool {
        Key::for_root(&self.made)
            .is_ok_and(|k| k.verify(MARK_PURPOSE, self.body.as_bytes(), &self.tag))
    }
}

/// The lines of a v2 or v3 mark; `None` for anything else.
fn parse_mark(text: &str) -> Option<Parsed> {
    let (v3, signed) = match text.strip_prefix(MARK_HEADER) {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix(MARK_HEADER_V2)?),
    };
    let mut lines = signed.lines().skip(1);
    let id = unhex(lines.next()?.strip_prefix("store ")?)?;
    let made = unhex(lines.next()?.strip_prefix("root ")?)?;
    let made =
        PathBuf::from(<std::ffi::OsString as std::os::unix::ffi::OsStringExt>::from_vec(made));
    let at = match v3 {
        true => {
            let (dev, ino) = lines.next()?.strip_prefix("folder ")?.split_once(' ')?;
            Some((dev.parse().ok()?, ino.parse().ok()?))
        }
        false => None,
    };
    let tag = lines.next()?.to_owned();
    let body = match at {
        Some(at) => mark_body(&id, &made, at),
        None => format!(
            "{MARK_HEADER_V2}\nstore {}\nroot {}\n",
            hex(&id),
            hex(made.as_os_str().as_encoded_bytes())
        ),
    };
    Some(Parsed {
        id,
        made,
        at,
        body,
        tag,
    })
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
    if !text.starts_with(MARK_HEADER) && !text.starts_with(MARK_HEADER_V2) {
        return if key.verify(OWNER_PURPOSE, b"", &text) {
            Mark::Old
        } else {
            Mark::None
        };
    }
    let Some(p) = parse_mark(&text) else {
        return Mark::None;
    };
    if p.made == root {
        return match key.verify(MARK_PURPOSE, p.body.as_bytes(), &p.tag) {
            true => Mark::Here(p.id, p.at),
            false => Mark::None,
        };
    }
    match p.verifies() {
        true => Mark::Moved(p.id, p.made, p.at),
        false => Mark::None,
    }
}

fn mark_body(id: &[u8], root: &Path, at: FolderId) -> String {
    format!(
        "{MARK_HEADER}\nstore {}\nroot {}\nfolder {} {}\n",
        hex(id),
        hex(root.as_os_str().as_encoded_bytes()),
        at.0,
        at.1
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
    let body = mark_body(id, root, folder_id(dir)?);
    let tag = key.sign(MARK_PURPOSE, body.as_bytes());
    dir.write(OWNER, format!("{body}{tag}\n").as_bytes())
}

/// The folder under `.mend` where `mend daemon` binds its socket.
pub const DAEMON_DIR: &str = "daemon";
/// The daemon's socket, in [`DAEMON_DIR`].
pub const DAEMON_SOCKET: &str = "sock";

/// What a mark made for another root says about where it was made.
struct Made<'a> {
    /// The root it was made for.
    from: PathBuf,
    /// Its store id.
    id: &'a [u8],
    /// The folder it was made for (none in a v2 mark).
    at: Option<FolderId>,
}

/// Takes over a `.mend` this user's mend made for another root when the
/// project was moved with it: not when it was copied (the original is
/// still there, or this is not the folder the mark was made for), git
/// tracks it (then it came with the repository) or it holds links or
/// special files.
fn take_over(root: &Path, dir: &PrivateDir, made: &Made<'_>) -> Result<(), Error> {
    if let Some(n) = tracked_entries(root) {
        return Err(untrusted(
            format!("is tracked by git ({n} files), so it came with the repository"),
            "Stop tracking it and delete it: `git rm -r --cached .mend && rm -rf .mend`, then commit. mend then makes its own, ignored folder.",
        ));
    }
    let from = mend_core::text::escape_controls(&made.from.to_string_lossy()).into_owned();
    if original_still_there(made) {
        return Err(untrusted(
            format!("is a copy of the one mend made for {from}, which is still there"),
            format!(
                "mend never takes over a copy: its checkpoints and review state are {from}'s. Move it away (`mv .mend .mend.unknown`) or delete it (`rm -rf .mend`); mend then makes a fresh folder here. To move a project, move its folder whole (`mv`), .mend included."
            ),
        ));
    }
    if made.at != Some(folder_id(dir)?) {
        return Err(untrusted(
            format!(
                "was made for {from}, but is not the folder mend made there: a copy, or a move to another filesystem (which copies)"
            ),
            "mend takes over a .mend only when it was moved with its project on one filesystem, since a copy would carry another folder's checkpoints and review state. Move it away (`mv .mend .mend.unknown`, keeping what it holds to look at) or delete it (`rm -rf .mend`); mend then makes a fresh folder here.",
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
            format!("was made for {from} and holds {shown}, {kind}, which mend never makes"),
            fix,
        ));
    }
    Ok(())
}

/// Whether the root a mark was made for still holds a `.mend` marked for
/// the same store: then this one is a copy of it (or the same folder
/// mounted twice), never a move.
fn original_still_there(made: &Made<'_>) -> bool {
    use std::io::Read as _;
    let Ok(file) = std::fs::File::open(made.from.join(".mend").join(OWNER)) else {
        return false;
    };
    let mut text = String::new();
    if file.take(1024).read_to_string(&mut text).is_err() {
        return false;
    }
    parse_mark(&text).is_some_and(|p| p.id == made.id && p.made == made.from && p.verifies())
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
        assert!(
            matches!(read_mark(&root, &opened, &key), Mark::Here(id, Some(_)) if id == store_id(&key))
        );
    }
}
