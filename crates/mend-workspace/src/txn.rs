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
//! 4. rename each temporary file over its target (or, for a file with
//!    several hard links, copy the bytes into it so every link sees them),
//!    delete what is deleted, and fsync the folders;
//! 5. remove the journal.
//!
//! [`recover`] finishes whatever a killed process left: a `pending` journal
//! is rolled back (its temporary files removed), a `committed` one rolled
//! forward (each remaining temporary file moved into place). Both are
//! idempotent, so a crash during recovery is recovered by the next run.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::Error;

const JOURNAL: &str = "journal.json";

/// One filesystem operation of a transaction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub(crate) enum Op {
    /// Move `temp` over `target` (paths relative to the root).
    Put {
        target: String,
        temp: String,
        /// Copy into the existing file instead of renaming, to keep its
        /// hard links.
        in_place: bool,
    },
    /// Remove `target`.
    Delete { target: String },
}

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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recovery {
    /// A transaction that had not committed was undone.
    RolledBack,
    /// A committed transaction was completed.
    RolledForward,
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

fn write_journal(mend: &Path, j: &Journal) -> Result<(), Error> {
    let path = mend.join(JOURNAL);
    let aside = mend.join("journal.json.new");
    let bytes = serde_json::to_vec_pretty(j).expect("journal serializes");
    let mut f = fs::File::create(&aside).map_err(io(format!("writing {}", aside.display())))?;
    f.write_all(&bytes)
        .and_then(|()| f.sync_all())
        .map_err(io(format!("writing {}", aside.display())))?;
    fs::rename(&aside, &path).map_err(io(format!("writing {}", path.display())))?;
    sync_dir(mend)
}

/// Runs the operations as one transaction. `stage` writes each `Put`'s
/// temporary file (called after the pending journal is durable).
pub(crate) fn run(
    root: &Path,
    mend: &Path,
    id: &str,
    ops: Vec<Op>,
    stage: &mut dyn FnMut(&Op) -> Result<(), Error>,
    hook: StepHook<'_>,
) -> Result<(), Error> {
    let mut journal = Journal {
        version: 1,
        id: id.to_owned(),
        state: State::Pending,
        ops,
    };
    write_journal(mend, &journal)?;
    hook("journal-pending");
    for op in &journal.ops {
        if let Err(e) = stage(op) {
            roll_back(root, mend, &journal.ops)?;
            return Err(e);
        }
        hook("staged");
    }
    journal.state = State::Committed;
    write_journal(mend, &journal)?;
    hook("journal-committed");
    roll_forward(root, mend, &journal.ops, hook)
}

fn roll_back(root: &Path, mend: &Path, ops: &[Op]) -> Result<(), Error> {
    for op in ops {
        if let Op::Put { temp, .. } = op {
            let p = root.join(temp);
            match fs::remove_file(&p) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io(format!("removing {}", p.display()), e)),
            }
        }
    }
    remove_journal(mend)
}

fn roll_forward(root: &Path, mend: &Path, ops: &[Op], hook: StepHook<'_>) -> Result<(), Error> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for op in ops {
        match op {
            Op::Put {
                target,
                temp,
                in_place,
            } => {
                let target = root.join(target);
                let temp = root.join(temp);
                if temp.exists() {
                    if *in_place && target.exists() {
                        copy_into(&temp, &target)?;
                        fs::remove_file(&temp)
                            .map_err(io(format!("removing {}", temp.display())))?;
                    } else {
                        fs::rename(&temp, &target)
                            .map_err(io(format!("moving {} into place", target.display())))?;
                    }
                }
                if let Some(d) = target.parent() {
                    dirs.push(d.to_path_buf());
                }
            }
            Op::Delete { target } => {
                let target = root.join(target);
                match fs::remove_file(&target) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => {
                        return Err(Error::io(format!("deleting {}", target.display()), e));
                    }
                }
                if let Some(d) = target.parent() {
                    dirs.push(d.to_path_buf());
                }
            }
        }
        hook("applied");
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

/// Overwrites `target`'s bytes in place (keeping its inode, so hard links
/// see the change) from `temp`.
fn copy_into(temp: &Path, target: &Path) -> Result<(), Error> {
    let bytes = fs::read(temp).map_err(io(format!("reading {}", temp.display())))?;
    let mut f = fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(target)
        .map_err(io(format!("opening {}", target.display())))?;
    f.write_all(&bytes)
        .and_then(|()| f.sync_all())
        .map_err(io(format!("writing {}", target.display())))
}

fn remove_journal(mend: &Path) -> Result<(), Error> {
    let p = mend.join(JOURNAL);
    match fs::remove_file(&p) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io(format!("removing {}", p.display()), e)),
    }
    sync_dir(mend)
}

/// Finishes an interrupted transaction, if there is one.
pub(crate) fn recover(root: &Path, mend: &Path) -> Result<Option<Recovery>, Error> {
    // A journal being written aside when the process died never took effect.
    let aside = mend.join("journal.json.new");
    if aside.exists() && !mend.join(JOURNAL).exists() {
        let _ = fs::remove_file(&aside);
    }
    let path = mend.join(JOURNAL);
    let bytes = match fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(format!("reading {}", path.display()), e)),
    };
    let journal: Journal = serde_json::from_slice(&bytes).map_err(|e| Error::Journal {
        path: path.clone(),
        detail: e.to_string(),
    })?;
    for op in &journal.ops {
        let rel = match op {
            Op::Put { target, temp, .. } => [target.as_str(), temp.as_str()],
            Op::Delete { target } => [target.as_str(), target.as_str()],
        };
        for r in rel {
            if Path::new(r).is_absolute() || r.split('/').any(|s| s == "..") {
                return Err(Error::Journal {
                    path,
                    detail: format!("it names a path outside the root: {r}"),
                });
            }
        }
    }
    match journal.state {
        State::Pending => {
            roll_back(root, mend, &journal.ops)?;
            Ok(Some(Recovery::RolledBack))
        }
        State::Committed => {
            roll_forward(root, mend, &journal.ops, &|_| {})?;
            Ok(Some(Recovery::RolledForward))
        }
    }
}
