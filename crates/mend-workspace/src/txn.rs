//! Crash-safe commits across files.
//!
//! A commit runs, under the workspace lock:
//!
//! 1. write the journal `.mend/journal.json` in state `pending`, listing
//!    every operation and the temporary file each write will use;
//! 2. stage every new content in its temporary file, in the target's own
//!    folder (so the final rename never crosses a filesystem), and fsync it;
//! 3. switch the journal to `committed` (written aside, fsynced, renamed
//!    over: an atomic step) — from here on the transaction will complete;
//! 4. delete what is deleted, remove the folders that emptied (a folder
//!    becoming a file), then rename each temporary file over its target
//!    (making a folder that replaces a file), or, for a file with several
//!    hard links, copy the bytes into it so every link sees them; fsync
//!    the folders;
//! 5. remove the journal.
//!
//! (A commit of one new content, with no deletion, skips all this: a
//! rename is atomic on its own; see `commit.rs`.)
//!
//! [`recover`] finishes whatever a killed process left: a `pending` journal
//! is rolled back (its temporary files removed; no target was touched), a
//! `committed` one rolled forward (each remaining temporary file moved into
//! place). Both are idempotent, so a crash during recovery is recovered by
//! the next run.
//!
//! Rolling forward never overwrites work done after the crash. The journal
//! records, per target, what stood there when the transaction was planned
//! and the hash of what it writes (see `found`); a target that is neither
//! (edited, deleted, or replaced by a folder since) is kept as it is, the
//! transaction's content for it is set aside in
//! `.mend/aside/interrupted-<id>/`, and [`Recovery::RolledForward`] lists it.
//! A file the transaction deletes that changed since is kept too. So is a
//! target that now leads outside the root or into `.git` or `.mend` (a
//! link swapped in after the crash): every path is checked again, one by
//! one, right before it is touched, and one that fails is never written
//! or read through.
//!
//! A staged content is installed only when it still hashes to what the
//! journal recorded; one changed or missing after the crash is not, and
//! [`Recovery::RolledForward`] lists its target as [`Lost`].
//!
//! The journal is sealed with this workspace's key. Recovery acts only on a
//! journal whose seal verifies and whose paths are spelled as mend writes
//! them (relative, plain, outside `.git` and `.mend`, each temporary file
//! one of mend's beside its target); anything else is moved aside, never
//! executed, because a repository can ship any `.mend/journal.json`.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::beneath::PrivateDir;
use crate::carry;
use crate::cas::Expect;
use crate::error::Error;
use crate::files;
use crate::found::{self, Found};
pub(crate) use crate::op::Op;
use crate::op::{delete, install, is_staged, remove_dir};
use crate::path::{self, Root};
use crate::trust::Key;

pub(crate) const JOURNAL: &str = "journal.json";
/// Where the next journal state is written before it replaces the last.
const ASIDE: &str = "journal.json.new";
const HEADER: &str = "mend journal v2\n";
const PURPOSE: &str = "journal";
/// Far above any real journal; a bound on what recovery reads.
const MAX_JOURNAL_BYTES: u64 = 256 * 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum State {
    Pending,
    Committed,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Journal {
    version: u32,
    id: String,
    state: State,
    ops: Vec<Op>,
}

/// What recovery did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Recovery {
    /// A transaction that had not committed was undone.
    RolledBack,
    /// A committed transaction was completed, except where a target had
    /// changed after the crash: those are kept as they are.
    RolledForward {
        /// The targets left as they were found, in the journal's order.
        kept: Vec<Kept>,
        /// The targets left as they were because the staged content was
        /// missing or changed, in the journal's order.
        lost: Vec<Lost>,
    },
    /// A journal that is not provably this workspace's own, or that names
    /// a path mend never writes, was moved aside untouched.
    Ignored {
        /// Where it was moved.
        kept_at: PathBuf,
        /// Why it was not acted on.
        reason: String,
    },
}

/// A target an interrupted transaction did not complete, because it had
/// changed after the crash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    /// The target, relative to the root.
    pub path: String,
    /// What it had become.
    pub now: Became,
    /// Where the transaction's content for it was set aside (relative to
    /// the root); `None` when the transaction deleted it.
    pub aside: Option<String>,
}

/// What a target had become after the crash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Became {
    /// Other content.
    Changed,
    /// Nothing: it was deleted.
    Deleted,
    /// A folder, or something else that is not a file, stands there or in
    /// the way of its folder.
    Replaced,
    /// It, or a folder on its way, is now a link that leads outside the
    /// root or into `.git` or `.mend`: it is never written through.
    LeadsOut,
}

/// A target an interrupted transaction did not complete because what it
/// staged for it is gone: the target is left as it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lost {
    /// The target, relative to the root.
    pub path: String,
    /// The temporary file the content was staged in, relative to the root.
    pub staged: String,
    /// What became of it.
    pub why: Why,
}

/// What became of a staged content after the crash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Why {
    /// It is missing (or is no longer a file, or is out of reach).
    Missing,
    /// Its bytes are not the ones the transaction staged; it was removed.
    Altered,
}

/// How many kept targets a message names before it counts the rest.
const NAMED: usize = 10;

impl std::fmt::Display for Kept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = mend_core::text::escape_controls(&self.path);
        if self.now == Became::LeadsOut {
            write!(
                f,
                "{path} now leads outside the project root (or into .git or .mend) through a symbolic link; kept as it is, never written through"
            )?;
            return match &self.aside {
                Some(aside) => write!(
                    f,
                    ", the interrupted write's version is in {}",
                    mend_core::text::escape_controls(aside)
                ),
                None => Ok(()),
            };
        }
        let Some(aside) = &self.aside else {
            return write!(
                f,
                "{path} changed after the interrupted transaction, which deletes it; kept as it is"
            );
        };
        let (became, kept) = match self.now {
            Became::Changed => ("changed", "kept as it is"),
            Became::Deleted => ("was deleted", "left deleted"),
            Became::Replaced | Became::LeadsOut => ("was replaced", "kept as it is"),
        };
        write!(
            f,
            "{path} {became} after the interrupted write; {kept}, the interrupted write's version is in {}",
            mend_core::text::escape_controls(aside)
        )
    }
}

impl std::fmt::Display for Lost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = mend_core::text::escape_controls(&self.path);
        let staged = mend_core::text::escape_controls(&self.staged);
        let what = match self.why {
            Why::Missing => format!("its staged copy {staged} is missing"),
            Why::Altered => format!(
                "its staged copy {staged} was changed after the crash, so it was removed, not installed"
            ),
        };
        write!(
            f,
            "{path} was not completed: {what}; {path} is left as it was and the interrupted write's version is lost (if it came from `mend pending accept`, `mend pending` still holds it)"
        )
    }
}

impl std::fmt::Display for Recovery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Recovery::RolledBack => f.write_str("rolled back an interrupted transaction"),
            Recovery::RolledForward { kept, lost } => {
                if lost.is_empty() {
                    f.write_str("completed an interrupted transaction")?;
                } else {
                    write!(
                        f,
                        "finished an interrupted transaction except for {} file{} it could not complete",
                        lost.len(),
                        if lost.len() == 1 { "" } else { "s" }
                    )?;
                }
                for l in lost.iter().take(NAMED) {
                    write!(f, "; {l}")?;
                }
                if lost.len() > NAMED {
                    write!(
                        f,
                        "; and {} more files not completed, left as they were (their staged copies were missing or changed)",
                        lost.len() - NAMED
                    )?;
                }
                for k in kept.iter().take(NAMED) {
                    write!(f, "; {k}")?;
                }
                if kept.len() > NAMED {
                    write!(
                        f,
                        "; and {} more files changed after it, kept as they are (what it would have written is under .mend/aside/)",
                        kept.len() - NAMED
                    )?;
                }
                Ok(())
            }
            Recovery::Ignored { kept_at, reason } => write!(
                f,
                "ignored a transaction journal that mend did not write ({reason}); nothing was changed, and it was kept at {}",
                mend_core::text::escape_controls(&kept_at.to_string_lossy())
            ),
        }
    }
}

/// A pause between commit steps, for crash-injection tests only.
pub(crate) type StepHook<'a> = &'a dyn Fn(&str);

fn io(context: String) -> impl FnOnce(std::io::Error) -> Error {
    move |e| Error::io(context, e)
}

pub(crate) fn sync_dir(dir: &Path) -> Result<(), Error> {
    // Directories cannot be opened for syncing on every platform; where they
    // can, this makes renames and removals durable.
    #[cfg(unix)]
    {
        let d = fs::File::open(dir).map_err(io(format!("opening {}", dir.display())))?;
        d.sync_all()
            .map_err(io(format!("syncing {}", dir.display())))?;
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// Writes the journal aside, syncs it, renames it over the last one, and
/// syncs `.mend`: each state is durable before the step it allows.
fn write_journal(mend: &PrivateDir, key: &Key, j: &Journal) -> Result<(), Error> {
    let body = serde_json::to_vec_pretty(j).expect("journal serializes");
    let mut bytes = HEADER.as_bytes().to_vec();
    bytes.extend_from_slice(key.sign(PURPOSE, &body).as_bytes());
    bytes.push(b'\n');
    bytes.extend_from_slice(&body);
    mend.remove_file(ASIDE)?;
    let mut f = mend.create_new(ASIDE)?;
    f.write_all(&bytes)
        .and_then(|()| f.sync_all())
        .map_err(io(format!("writing {}", mend.shown(ASIDE))))?;
    mend.rename(ASIDE, JOURNAL)?;
    mend.sync()
}

/// A transaction to run: its operations, in order, and what each target
/// must still be when it is replaced (see `cas`).
pub(crate) struct Txn<'a> {
    pub(crate) id: &'a str,
    pub(crate) ops: Vec<Op>,
    pub(crate) expects: Vec<Option<Expect>>,
}

/// Runs the operations as one transaction. `stage` writes each `Put`'s
/// temporary file (called after the pending journal is durable).
pub(crate) fn run(
    root: &Root,
    mend: &PrivateDir,
    key: &Key,
    txn: Txn<'_>,
    stage: &mut dyn FnMut(&Op) -> Result<(), Error>,
    hook: StepHook<'_>,
) -> Result<(), Error> {
    let mut journal = Journal {
        version: 2,
        id: txn.id.to_owned(),
        state: State::Pending,
        ops: txn.ops,
    };
    let held_root = root;
    let root = root.canonical.as_path();
    write_journal(mend, key, &journal)?;
    hook("journal-pending");
    for op in &journal.ops {
        if let Err(e) = stage(op) {
            roll_back(root, mend, &journal.ops)?;
            return Err(e);
        }
        hook("staged");
    }
    journal.state = State::Committed;
    write_journal(mend, key, &journal)?;
    hook("journal-committed");
    let mut done = Vec::with_capacity(journal.ops.len());
    for (i, op) in journal.ops.iter().enumerate() {
        match carry::carry_out(held_root, op, txn.expects.get(i).and_then(Option::as_ref)) {
            Ok(d) => done.push(d),
            Err(carry::Failed::Changed(path)) => {
                carry::undo(root, &done, &journal.ops[i + 1..])?;
                remove_journal(mend)?;
                return Err(Error::Changed { path });
            }
            Err(carry::Failed::Io(e)) => return Err(e),
        }
        hook("applied");
    }
    sync_dirs(root, &journal.ops)?;
    carry::release(&done)?;
    remove_journal(mend)
}

/// Syncs the folder of every target, so renames and removals are durable.
fn sync_dirs(root: &Path, ops: &[Op]) -> Result<(), Error> {
    let mut dirs: Vec<PathBuf> = ops
        .iter()
        .filter_map(|op| {
            let (Op::Put { target, .. } | Op::Delete { target, .. } | Op::RemoveDir { target }) =
                op;
            root.join(target).parent().map(Path::to_path_buf)
        })
        .collect();
    dirs.sort();
    dirs.dedup();
    for d in dirs {
        if d.exists() {
            sync_dir(&d)?;
        }
    }
    Ok(())
}

fn roll_back(root: &Path, mend: &PrivateDir, ops: &[Op]) -> Result<(), Error> {
    for op in ops {
        if let Op::Put { temp, link, .. } = op {
            // A folder swapped for a link out after the crash is not ours.
            if !reachable(root, temp) {
                continue;
            }
            let p = root.join(temp);
            // A temporary entry is ours only while it is what was staged.
            if fs::symlink_metadata(&p).is_ok() && !is_staged(&p, *link) {
                continue;
            }
            match fs::remove_file(&p) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io(format!("removing {}", p.display()), e)),
            }
        }
    }
    remove_journal(mend)
}

/// Whether `rel` still resolves inside the root and outside `.git` and
/// `.mend`. Recovery asks right before it touches a path: a link may have
/// been swapped in anywhere on its way after the crash.
fn reachable(root: &Path, rel: &str) -> bool {
    path::check_real(root, rel, &root.join(rel)).is_ok()
}

/// What rolling forward after a crash keeps: where a target's content is
/// set aside, and the targets left as they were found.
pub(crate) struct Recovering<'a> {
    mend: &'a PrivateDir,
    /// The folder below `.mend/aside/` for this transaction.
    under: String,
    kept: Vec<Kept>,
    lost: Vec<Lost>,
}

/// Whether a staged write may still go in after a crash.
enum Decision {
    /// The target is as the transaction found it: put the content in place.
    Go,
    /// The target changed after the crash: keep it, set the content aside.
    Keep(Became),
}

/// What a `Put`'s temporary entry holds after a crash.
#[derive(PartialEq, Eq)]
enum Staged {
    /// What the transaction staged (or, in a journal without its hash,
    /// the entry it staged).
    Intact,
    /// Something else: another content, or another kind of entry.
    Altered,
    /// Nothing, or a path that no longer resolves inside the root.
    Gone,
}

fn roll_forward(
    root: &Path,
    mend: &PrivateDir,
    ops: &[Op],
    recovering: &mut Recovering<'_>,
) -> Result<(), Error> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for op in ops {
        let (Op::Put { target, .. } | Op::Delete { target, .. } | Op::RemoveDir { target }) = op;
        if recovering.finish(root, op)?
            && let Some(d) = root.join(target).parent()
        {
            dirs.push(d.to_path_buf());
        }
    }
    dirs.sort();
    dirs.dedup();
    for d in dirs {
        if d.exists() {
            sync_dir(&d)?;
        }
    }
    remove_journal(mend)
}

/// Whether a staged write may still go in: its target is what the
/// transaction found, or (written in place) holds the start of it, which
/// only an interrupted copy leaves.
fn decide(
    root: &Path,
    target: &Path,
    temp: &Path,
    now: &Found,
    before: &Found,
    in_place: bool,
) -> Result<Decision, Error> {
    let go = match (now, before) {
        // A folder the transaction replaced is gone once its deletions ran.
        (Found::Absent, Found::Absent | Found::Folder) => found::way_is_clear(root, target),
        (Found::File { .. } | Found::Link { .. }, _) if now == before => true,
        (Found::File { .. }, _) if in_place => starts(target, temp)?,
        _ => false,
    };
    if go {
        return Ok(Decision::Go);
    }
    Ok(Decision::Keep(match now {
        Found::Absent if matches!(before, Found::Absent | Found::Folder) => Became::Replaced,
        Found::Absent => Became::Deleted,
        Found::File { .. } | Found::Link { .. } => Became::Changed,
        Found::Folder | Found::Other => Became::Replaced,
    }))
}

/// Whether `target`'s bytes are the start of `temp`'s: a copy into the
/// file cut short.
fn starts(target: &Path, temp: &Path) -> Result<bool, Error> {
    let read = |p: &Path| {
        files::read_regular(p, u64::MAX, true)
            .map_err(|e| Error::io(format!("reading {}", p.display()), e.into_io()))
    };
    Ok(read(temp)?.starts_with(&read(target)?))
}

impl Recovering<'_> {
    /// Finishes one operation after a crash, never through a path that now
    /// leads out; whether its folder was touched (and so is synced).
    fn finish(&mut self, root: &Path, op: &Op) -> Result<bool, Error> {
        match op {
            Op::Put { target, .. } if reachable(root, target) => self.put(root, op)?,
            Op::Put { .. } => self.put_out_of_reach(root, op)?,
            Op::Delete {
                target,
                before,
                hold,
            } if reachable(root, target) => {
                if let Some(h) = hold.as_deref().filter(|h| reachable(root, h)) {
                    self.unhold(root, target, h, before.as_ref())?;
                }
                self.delete(root, target, before.as_ref())?;
            }
            Op::Delete { target, .. } => self.kept.push(Kept {
                path: target.clone(),
                now: Became::LeadsOut,
                aside: None,
            }),
            // The write meant to replace it is judged on its own.
            Op::RemoveDir { target } if !reachable(root, target) => return Ok(false),
            Op::RemoveDir { target } => remove_dir(root, target, true)?,
        }
        Ok(true)
    }

    /// What `op`'s temporary entry holds now: only an intact one is
    /// installed or set aside.
    fn staged(root: &Path, op: &Op) -> Result<Staged, Error> {
        let Op::Put {
            temp, link, after, ..
        } = op
        else {
            return Ok(Staged::Gone);
        };
        if !reachable(root, temp) {
            return Ok(Staged::Gone);
        }
        let p = root.join(temp);
        let found = Found::at(&p).map_err(io(format!("reading {}", p.display())))?;
        Ok(match (found, after) {
            (Found::Absent, _) => Staged::Gone,
            (found, Some(h)) if found.holds(h, *link) => Staged::Intact,
            (_, None) if is_staged(&p, *link) => Staged::Intact,
            _ => Staged::Altered,
        })
    }

    /// Finishes one staged write, unless its target changed since the
    /// transaction was planned, or what was staged for it did.
    fn put(&mut self, root: &Path, op: &Op) -> Result<(), Error> {
        let Op::Put {
            target: rel,
            temp: temp_rel,
            in_place,
            link,
            before,
            after,
        } = op
        else {
            return Ok(());
        };
        let (target, temp) = (root.join(rel), root.join(temp_rel));
        let now = Found::at(&target).map_err(io(format!("reading {}", target.display())))?;
        let staged = Self::staged(root, op)?;
        if after.as_ref().is_some_and(|h| now.holds(h, *link)) {
            // Done already: an intact temporary file is left to remove, or
            // the entry the write displaced (see `cas`), which is removed
            // only when it is what the transaction planned against.
            return match staged {
                Staged::Intact => {
                    fs::remove_file(&temp).map_err(io(format!("removing {}", temp.display())))
                }
                Staged::Gone => Ok(()),
                Staged::Altered => self.displaced(rel, &temp, before.as_ref()),
            };
        }
        match staged {
            Staged::Intact => {}
            Staged::Altered => return self.drop_altered(root, op),
            // Gone while the target is still what the transaction found:
            // the write never happened. Otherwise it did, and was changed
            // after the crash, or it did not and was: either way that stays.
            Staged::Gone => {
                let untouched = before
                    .as_ref()
                    .is_some_and(|b| now == *b || (now == Found::Absent && *b == Found::Folder));
                if untouched && after.is_some() {
                    self.lose(op, Why::Missing);
                }
                return Ok(());
            }
        }
        if let Some(before) = before
            && let Decision::Keep(became) = decide(root, &target, &temp, &now, before, *in_place)?
        {
            return self.set_aside(rel, &temp, *link, became);
        }
        install(&target, &temp, *in_place)
    }

    /// A write whose target now leads out: never written through; what was
    /// staged for it is set aside when it is intact and within reach.
    fn put_out_of_reach(&mut self, root: &Path, op: &Op) -> Result<(), Error> {
        let Op::Put {
            target, temp, link, ..
        } = op
        else {
            return Ok(());
        };
        match Self::staged(root, op)? {
            Staged::Intact => self.set_aside(target, &root.join(temp), *link, Became::LeadsOut),
            Staged::Altered => self.drop_altered(root, op),
            Staged::Gone => {
                self.kept.push(Kept {
                    path: target.clone(),
                    now: Became::LeadsOut,
                    aside: None,
                });
                Ok(())
            }
        }
    }

    /// Removes a staged content that is not what the transaction staged
    /// (an entry of another kind stays: it is not mend's), and reports its
    /// target as not completed.
    fn drop_altered(&mut self, root: &Path, op: &Op) -> Result<(), Error> {
        let Op::Put { temp, .. } = op else {
            return Ok(());
        };
        // `staged` found it within reach.
        let p = root.join(temp);
        if fs::symlink_metadata(&p).is_ok_and(|m| m.is_file() || m.file_type().is_symlink()) {
            fs::remove_file(&p).map_err(io(format!("removing {}", p.display())))?;
        }
        self.lose(op, Why::Altered);
        Ok(())
    }

    fn lose(&mut self, op: &Op, why: Why) {
        if let Op::Put { target, temp, .. } = op {
            self.lost.push(Lost {
                path: target.clone(),
                staged: temp.clone(),
                why,
            });
        }
    }

    /// What a write swapped out of its target, left at its temporary
    /// name by a crash: removed when it is what was planned against, else
    /// (a change that landed as it was swapped) set aside and reported.
    fn displaced(&mut self, rel: &str, temp: &Path, before: Option<&Found>) -> Result<(), Error> {
        let found = Found::at(temp).map_err(io(format!("reading {}", temp.display())))?;
        if before == Some(&found) {
            return fs::remove_file(temp).map_err(io(format!("removing {}", temp.display())));
        }
        let link = matches!(found, Found::Link { .. });
        self.set_aside(rel, temp, link, Became::Changed)
    }

    /// A deletion's entry, held beside it by a crash: removed when it is
    /// what was planned against; else put back at its name when that is
    /// free, or set aside.
    fn unhold(
        &mut self,
        root: &Path,
        rel: &str,
        hold: &str,
        before: Option<&Found>,
    ) -> Result<(), Error> {
        let (target, held) = (root.join(rel), root.join(hold));
        let found = Found::at(&held).map_err(io(format!("reading {}", held.display())))?;
        if found == Found::Absent {
            return Ok(());
        }
        if before == Some(&found) {
            return fs::remove_file(&held).map_err(io(format!("removing {}", held.display())));
        }
        if Found::at(&target).map_err(io(format!("reading {}", target.display())))? == Found::Absent
        {
            return fs::rename(&held, &target)
                .map_err(io(format!("putting {} back", target.display())));
        }
        let link = matches!(found, Found::Link { .. });
        self.set_aside(rel, &held, link, Became::Changed)
    }

    /// Deletes one target, unless it changed since.
    fn delete(&mut self, root: &Path, rel: &str, before: Option<&Found>) -> Result<(), Error> {
        let target = root.join(rel);
        if let Some(before) = before {
            let now = Found::at(&target).map_err(io(format!("reading {}", target.display())))?;
            if now == Found::Absent {
                return Ok(());
            }
            if now != *before {
                self.kept.push(Kept {
                    path: rel.to_owned(),
                    now: Became::Changed,
                    aside: None,
                });
                return Ok(());
            }
        }
        delete(root, rel)
    }

    /// Copies a staged content into `.mend/aside/<under>/<rel>` and removes
    /// it from the worktree; `rel` is kept as it is.
    fn set_aside(&mut self, rel: &str, temp: &Path, link: bool, now: Became) -> Result<(), Error> {
        let (folder, name) = match rel.rsplit_once('/') {
            Some((dir, name)) => (format!("aside/{}/{dir}", self.under), name),
            None => (format!("aside/{}", self.under), rel),
        };
        let folder = self.mend.create_dir(&folder)?;
        if link {
            use std::os::unix::ffi::OsStrExt as _;
            let to = fs::read_link(temp).map_err(io(format!("reading {}", temp.display())))?;
            // Set aside again by a recovery that was itself interrupted.
            folder.remove_file(name)?;
            folder.symlink(name, to.as_os_str().as_bytes())?;
        } else {
            let bytes = files::read_regular(temp, u64::MAX, true)
                .map_err(|e| Error::io(format!("reading {}", temp.display()), e.into_io()))?;
            folder.write(name, &bytes)?;
        }
        fs::remove_file(temp).map_err(io(format!("removing {}", temp.display())))?;
        self.kept.push(Kept {
            path: rel.to_owned(),
            now,
            aside: Some(folder.shown(name)),
        });
        Ok(())
    }
}

fn remove_journal(mend: &PrivateDir) -> Result<(), Error> {
    mend.remove_file(JOURNAL)?;
    mend.sync()
}

/// Finishes an interrupted transaction, if there is one.
pub(crate) fn recover(
    root: &Root,
    mend: &PrivateDir,
    key: &Key,
) -> Result<Option<Recovery>, Error> {
    // A journal being written aside when the process died never took effect.
    if mend.kind(JOURNAL)?.is_none() {
        mend.remove_file(ASIDE)?;
    }
    let bytes = match mend.read(JOURNAL, MAX_JOURNAL_BYTES) {
        Ok(Some(b)) => b,
        Ok(None) => return Ok(None),
        Err(Error::NotAFile { kind, .. }) => {
            return quarantine(mend, format!("the journal is {kind}"));
        }
        Err(Error::TooLarge { size, .. }) => {
            return quarantine(mend, format!("the journal is {size} bytes"));
        }
        Err(e) => return Err(e),
    };
    let journal = match unseal(&bytes, key) {
        Ok(j) => j,
        Err(reason) => return quarantine(mend, reason),
    };
    if let Err(reason) = confine(root, &journal.ops) {
        return quarantine(mend, reason);
    }
    let root = root.canonical.as_path();
    let done = match journal.state {
        State::Pending => roll_back(root, mend, &journal.ops).map(|()| Recovery::RolledBack),
        State::Committed => {
            let mut recovering = Recovering {
                mend,
                under: aside_name(&journal.id),
                kept: Vec::new(),
                lost: Vec::new(),
            };
            roll_forward(root, mend, &journal.ops, &mut recovering).map(|()| {
                Recovery::RolledForward {
                    kept: recovering.kept,
                    lost: recovering.lost,
                }
            })
        }
    };
    match done {
        Ok(recovery) => Ok(Some(recovery)),
        // The journal stays, so the next command tries again; until one
        // succeeds, nothing else is written over the unfinished commit.
        Err(Error::Io { context, cause }) => Err(Error::RecoveryBlocked {
            finishing: journal.state == State::Committed,
            context,
            cause,
        }),
        Err(e) => Err(e),
    }
}

/// The folder below `.mend/aside/` for what recovering transaction `id`
/// sets aside (a sealed id is mend's own, hex digits, but is still kept
/// to one plain name).
fn aside_name(id: &str) -> String {
    let id: String = id
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(64)
        .collect();
    format!("interrupted-{id}")
}

/// The journal, when its seal is this workspace's.
fn unseal(bytes: &[u8], key: &Key) -> Result<Journal, String> {
    let rest = bytes
        .strip_prefix(HEADER.as_bytes())
        .ok_or("it has no seal")?;
    let nl = rest
        .iter()
        .position(|&b| b == b'\n')
        .ok_or("it has no seal")?;
    let tag = std::str::from_utf8(&rest[..nl]).map_err(|_| "its seal is unreadable")?;
    let body = &rest[nl + 1..];
    if !key.verify(PURPOSE, body, tag) {
        return Err("its seal is not this workspace's".into());
    }
    serde_json::from_slice(body).map_err(|e| format!("it is unreadable: {e}"))
}

/// Every path of a journal must be spelled as mend writes paths (relative,
/// plain, outside `.git` and `.mend`), and every temporary file must be one
/// of mend's, beside its target. Where a path leads on disk is checked per
/// path as recovery reaches it (see [`reachable`]): a link swapped in after
/// the crash keeps that target as it is, it does not void the journal.
fn confine(root: &Root, ops: &[Op]) -> Result<(), String> {
    let check = |rel: &str| -> Result<(), String> {
        let parts = path::normalize(root, rel).map_err(|e| e.to_string())?;
        if parts.join("/") != rel {
            return Err(format!("{rel} is not spelled as mend writes paths"));
        }
        Ok(())
    };
    for op in ops {
        match op {
            Op::Put { target, temp, .. } => {
                check(target)?;
                check(temp)?;
                if !beside(target, temp) {
                    return Err(format!("{temp} is not a temporary file of mend's"));
                }
            }
            Op::Delete {
                target,
                hold: Some(hold),
                ..
            } => {
                check(target)?;
                check(hold)?;
                if !beside(target, hold) {
                    return Err(format!("{hold} is not a temporary file of mend's"));
                }
            }
            Op::Delete { target, .. } | Op::RemoveDir { target } => check(target)?,
        }
    }
    Ok(())
}

/// Whether `temp` is named as mend names its temporary files, in
/// `target`'s folder or one above it.
fn beside(target: &str, temp: &str) -> bool {
    let (dir, name) = temp.rsplit_once('/').unwrap_or(("", temp));
    let target_dir = Path::new(target).parent().unwrap_or(Path::new(""));
    target_dir.starts_with(dir) && name.starts_with(".mend-") && name.ends_with(".tmp")
}

/// Moves a journal aside, untouched, so it is kept for inspection but never
/// acted on, and the workspace stays usable.
fn quarantine(mend: &PrivateDir, reason: impl Into<String>) -> Result<Option<Recovery>, Error> {
    let mut n = 0u32;
    let to = loop {
        let to = format!("journal.unverified.{n}.json");
        if mend.kind(&to)?.is_none() {
            break to;
        }
        n += 1;
    };
    mend.rename(JOURNAL, &to)?;
    mend.sync()?;
    Ok(Some(Recovery::Ignored {
        kept_at: mend.path().join(to),
        reason: reason.into(),
    }))
}
