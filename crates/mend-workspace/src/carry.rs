//! Carrying out a committed transaction, each target checked at the
//! moment it is replaced (see `cas`), and undone as a whole when one
//! changed.
//!
//! Until the transaction is done, every entry it replaced or deleted is
//! kept: a replaced one at the staged name it was swapped with, a deleted
//! one at a temporary name beside it. So when a target turns out to have
//! changed, the operations already carried out are undone in reverse
//! (each only while what it put there is still there), the changed target
//! is left as it is, and nothing of the transaction remains.
//!
//! A process killed during an undo leaves a committed journal, which
//! recovery completes as it completes any: a target that changed is kept
//! and the transaction's content for it set aside.

use std::fs;
use std::path::{Path, PathBuf};

use crate::cas::{self, Expect, Refused, Source, Swapped};
use crate::error::Error;
use crate::op::{self, Op};

/// One operation carried out, and what undoing it needs.
pub(crate) enum Done {
    /// A staged entry put in place; an exchanged one left the entry it
    /// displaced at `temp`.
    Put {
        target: PathBuf,
        temp: PathBuf,
        how: Swapped,
    },
    /// A deletion whose entry waits at `hold`.
    Held { target: PathBuf, hold: PathBuf },
    /// Done with nothing kept to undo it (no expectation was given: a
    /// folder the set emptied, a move onto the moved file itself).
    Final,
}

/// Why an operation was not carried out.
pub(crate) enum Failed {
    /// Its target (relative to the root) changed since it was planned.
    Changed(String),
    /// The filesystem failed.
    Io(Error),
}

impl From<Error> for Failed {
    fn from(e: Error) -> Self {
        Failed::Io(e)
    }
}

fn io(context: String) -> impl FnOnce(std::io::Error) -> Error {
    move |e| Error::io(context, e)
}

/// Carries out one operation of a committed transaction, checking its
/// target against `expect` first.
pub(crate) fn carry_out(
    held: &crate::path::Root,
    op: &Op,
    expect: Option<&Expect>,
) -> Result<Done, Failed> {
    let root = held.canonical.as_path();
    let Some(expect) = expect else {
        match op {
            Op::Put { .. } => op::put(root, op)?,
            Op::Delete { target, .. } => op::delete(root, target)?,
            Op::RemoveDir { target } => op::remove_dir(root, target, false)?,
        }
        return Ok(Done::Final);
    };
    match op {
        // Every put replaces its target, a hard-linked file too: its
        // other names may be under `.git` or outside the root. (A journal
        // of an older mend that wrote in place is finished by recovery.)
        Op::Put { target, temp, .. } => put(held, (target, temp), expect),
        Op::Delete {
            target,
            hold: Some(hold),
            ..
        } => {
            let (t, h) = (root.join(target), root.join(hold));
            match cas::hold(&t, &h, expect) {
                Ok(()) => Ok(Done::Held { target: t, hold: h }),
                Err(Refused::Changed) => Err(Failed::Changed(target.clone())),
                Err(Refused::Io(e)) => Err(Failed::Io(Error::io(
                    format!("deleting {}", t.display()),
                    e,
                ))),
            }
        }
        Op::Delete { target, .. } => {
            if !expect.holds(&root.join(target)).unwrap_or(false) {
                return Err(Failed::Changed(target.clone()));
            }
            op::delete(root, target)?;
            Ok(Done::Final)
        }
        Op::RemoveDir { target } => {
            op::remove_dir(root, target, false)?;
            Ok(Done::Final)
        }
    }
}

/// Puts one staged content in place while its target is unchanged.
fn put(
    held: &crate::path::Root,
    (rel, temp_rel): (&str, &str),
    expect: &Expect,
) -> Result<Done, Failed> {
    let root = held.canonical.as_path();
    let (target, temp) = (root.join(rel), root.join(temp_rel));
    // Both folders held open, reached from the root with no link
    // followed, so a folder swapped for a link since the checks leads the
    // rename nowhere. A folder the commit makes (one replacing a file, or
    // a new one) is made now, after the deletions.
    // A folder that is no longer what was checked fails the transaction
    // as a change would: what was done is undone.
    let entry = |p: &Path| -> Result<(rustix::fd::OwnedFd, PathBuf), Failed> {
        let dir = p.parent().unwrap_or(root);
        let name = PathBuf::from(p.file_name().unwrap_or_default());
        match held.open_dir(dir, rel) {
            Ok(fd) => Ok((fd, name)),
            Err(Error::PathRefused { .. }) => Err(Failed::Changed(rel.to_owned())),
            Err(e) => Err(Failed::Io(e)),
        }
    };
    let (to_dir, to_name) = entry(&target)?;
    let (from_dir, from_name) = entry(&temp)?;
    let src = Source {
        dir: std::os::fd::AsFd::as_fd(&from_dir),
        name: &from_name,
    };
    let dst = Source {
        dir: std::os::fd::AsFd::as_fd(&to_dir),
        name: &to_name,
    };
    match cas::swap_in_or_drop_at(src, dst, expect) {
        Ok(how) => Ok(Done::Put { target, temp, how }),
        Err(Refused::Changed) => Err(Failed::Changed(rel.to_owned())),
        Err(Refused::Io(e)) => Err(Failed::Io(Error::io(
            format!("moving {} into place", target.display()),
            e,
        ))),
    }
}

/// Undoes what was carried out, newest first, and removes what later
/// operations staged: the transaction leaves nothing behind.
pub(crate) fn undo(root: &Path, done: &[Done], later: &[Op]) -> Result<(), Error> {
    for d in done.iter().rev() {
        match d {
            Done::Put { target, temp, how } => {
                let show = || format!("putting {} back", target.display());
                match *how {
                    Swapped::Exchanged { ours } => {
                        cas::swap_back(Source::path(temp), target, ours).map_err(io(show()))?;
                    }
                    Swapped::Created { ours } => cas::uncreate(target, ours).map_err(io(show()))?,
                    // Renamed over without a swap: what it replaced is gone.
                    Swapped::Renamed => {}
                }
            }
            Done::Held { target, hold } => cas::unhold(target, hold)
                .map_err(io(format!("putting {} back", target.display())))?,
            Done::Final => {}
        }
    }
    for op in later {
        if let Op::Put { temp, link, .. } = op {
            let p = root.join(temp);
            if op::is_staged(&p, *link) {
                fs::remove_file(&p).map_err(io(format!("removing {}", p.display())))?;
            }
        }
    }
    Ok(())
}

/// Removes what the transaction kept to undo itself: the entries it
/// replaced and deleted, each the one planned against.
pub(crate) fn release(done: &[Done]) -> Result<(), Error> {
    for d in done {
        let kept = match d {
            Done::Put {
                temp,
                how: Swapped::Exchanged { .. },
                ..
            } => temp,
            Done::Held { hold, .. } => hold,
            _ => continue,
        };
        match fs::remove_file(kept) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(format!("removing {}", kept.display()), e)),
        }
    }
    Ok(())
}
