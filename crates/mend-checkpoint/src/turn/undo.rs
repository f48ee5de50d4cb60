//! `undo`: the last reject or accept of the open turn, undone path by
//! path, and nothing else.
//!
//! The turn's state records, for the last action, each path's entry just
//! before and just after it. An undo puts a path's `before` back only
//! where the path still holds the `after` (compare and swap): a path
//! written since (the person kept typing, the agent went on) is left as
//! it is and named, and every other path of the worktree, with all the
//! work done after the action, is untouched. Restoring a checkpoint, by
//! contrast, rewinds the whole worktree.
//!
//! A reject's undo writes the worktree, so it takes a safety checkpoint
//! first and writes in one transaction under the workspace lock, each
//! file checked against the hash it must still have. An accept's undo
//! moves the review base back; nothing is written.

use git2::{Oid, Tree};
use mend_core::report::Status;
use mend_workspace::{Base, Change, ContentHash};

use super::state::{self, Held, Kind, Last, State, Swap};
use super::{TurnUndone, Turns};
use crate::beside::Op;
use crate::{CreateOptions, Error, FileChange, Left};

/// The mode of a symbolic link, in git's terms.
const LINK: i32 = 0o120000;

fn refuse(message: impl Into<String>) -> Error {
    Error::TurnRefused(message.into())
}

fn shown(path: &str) -> String {
    mend_core::text::escape_controls(path).into_owned()
}

/// A path's entry in `tree`, as the state spells it (a folder is none).
fn entry(tree: &Tree<'_>, path: &str) -> Option<Held> {
    tree.get_path(&super::bytes_of(path))
        .ok()
        .filter(|e| e.kind() != Some(git2::ObjectType::Tree))
        .map(|e| Held {
            blob: e.id().to_string(),
            mode: e.filemode(),
        })
}

impl Turns {
    /// Undoes the open turn's last reject or accept, path by path: a path
    /// that changed since is left and named, and no other path is
    /// touched. Refused when there is nothing to undo, or when every path
    /// changed since.
    pub fn undo(&self) -> Result<TurnUndone, Error> {
        let lock = self.cps.lock()?;
        let dir = self.private()?;
        let mut st = self.open_turn()?;
        let Some(last) = st.last.take() else {
            return Err(refuse(
                "there is nothing to undo: no reject or accept since the turn began, or the last one was undone already",
            ));
        };
        let undone = match last.kind {
            Kind::Accept => self.undo_accept(&mut st, &last)?,
            Kind::Reject => self.undo_reject(&lock, &mut st, &last)?,
        };
        self.hold(&st)?;
        state::save(&dir, &st)?;
        Ok(undone)
    }

    /// Lays the overlay entries an accept replaced back over the review
    /// base, where the accept's entry is still there.
    fn undo_accept(&self, st: &mut State, last: &Last) -> Result<TurnUndone, Error> {
        let mut reopened = Vec::new();
        let mut left = Vec::new();
        for s in &last.paths {
            if st.accepted.get(&s.path) != Some(&s.after) {
                left.push(Left {
                    path: s.path.clone(),
                    reason: "its review changed since the accept; left as it is".into(),
                });
                continue;
            }
            if s.listed {
                st.accepted.insert(s.path.clone(), s.before.clone());
            } else {
                st.accepted.remove(&s.path);
            }
            st.shown.remove(&s.path);
            reopened.push(s.path.clone());
        }
        reopened.dedup();
        if reopened.is_empty() {
            return Err(refuse(format!("nothing was undone: {}", reasons(&left))));
        }
        Ok(TurnUndone {
            undone: "accept".into(),
            safety: None,
            changes: Vec::new(),
            reopened,
            left,
        })
    }

    /// Writes back each path's entry from before the reject where the
    /// worktree still holds what the reject wrote, after a safety
    /// checkpoint, in one transaction.
    fn undo_reject(
        &self,
        lock: &mend_workspace::Lock,
        st: &mut State,
        last: &Last,
    ) -> Result<TurnUndone, Error> {
        let safety = self.cps.create_safety(
            lock,
            &CreateOptions {
                label: Some(format!("before undoing a reject in turn {}", st.turn.id)),
                ..CreateOptions::default()
            },
        )?;
        let done = self
            .cps
            .tree_of(&safety)
            .and_then(|now| self.undo_writes(lock, &now, last));
        let (changes, left) = match done {
            Ok(done) => done,
            Err(e) => {
                // Nothing was written: the safety checkpoint undoes nothing.
                let _ = self.cps.drop_ref(&safety.id);
                return Err(e);
            }
        };
        for c in &changes {
            st.shown.remove(&c.path);
        }
        Ok(TurnUndone {
            undone: "reject".into(),
            safety: Some(safety),
            changes,
            reopened: Vec::new(),
            left,
        })
    }

    /// The undo's writes: the paths still as the reject left them (in
    /// `now`, the worktree's tree, and on disk), each put back, in one
    /// transaction; then the paths a workspace change cannot name (odd or
    /// long ones), beside it, each compared with what the reject left.
    fn undo_writes(
        &self,
        lock: &mend_workspace::Lock,
        now: &Tree<'_>,
        last: &Last,
    ) -> Result<(Vec<FileChange>, Vec<Left>), Error> {
        let Undo {
            changes,
            beside,
            mut report,
            mut left,
        } = self.undo_plan(now, last)?;
        if changes.is_empty() && beside.is_empty() {
            return Err(refuse(format!(
                "nothing was undone: {}",
                if left.is_empty() {
                    "every path of the last reject already holds what it held before it".to_owned()
                } else {
                    reasons(&left)
                }
            )));
        }
        if !changes.is_empty() {
            self.cps.ws.check_changes(&changes)?;
            self.cps.ws.commit(lock, &changes).map_err(|e| match e {
                mend_workspace::Error::Stale { path, .. } => refuse(format!(
                    "{} changed while the undo was being made; nothing was written. Run `mend turn undo` again",
                    shown(&path)
                )),
                other => other.into(),
            })?;
        }
        for (path, op) in beside {
            if let Err(why) = crate::beside::apply(self.cps.root(), &op) {
                report.retain(|c| c.path != path);
                left.push(Left { path, reason: why });
            }
        }
        if report.is_empty() {
            // Nothing was written: the caller drops the safety checkpoint.
            return Err(refuse(format!("nothing was undone: {}", reasons(&left))));
        }
        for s in last.paths.iter().filter(|s| s.before.is_none()) {
            if let Some(kind) = &s.special
                && report.iter().any(|c| c.path == s.path)
            {
                left.push(Left {
                    path: s.path.clone(),
                    reason: format!(
                        "a {kind} stood here before the reject; the file the reject put back over it was removed, and the {kind} was not made again (mend never makes one; a FIFO or socket holds no data)"
                    ),
                });
            }
        }
        report.sort_by(|a, b| a.path.cmp(&b.path));
        left.sort_by(|a, b| a.path.cmp(&b.path));
        Ok((report, left))
    }

    /// What the undo does, path by path: a path changed since the reject
    /// is left, with why; a path a workspace change cannot name goes
    /// beside the transaction.
    fn undo_plan(&self, now: &Tree<'_>, last: &Last) -> Result<Undo, Error> {
        let mut undo = Undo::default();
        for s in &last.paths {
            let here = entry(now, &s.path);
            if here == s.before {
                // Already as it was before the reject: nothing to do.
                continue;
            }
            if here != s.after || (s.after.is_none() && self.occupied(&s.path)) {
                undo.left.push(Left {
                    path: s.path.clone(),
                    reason: "it changed since the reject, so putting back what the reject replaced would overwrite that; left as it is (`mend turn diff` shows it)".into(),
                });
                continue;
            }
            if crate::restore::goes_beside(self.cps.root(), &s.path) {
                undo.beside.push((s.path.clone(), self.beside_op(s)?));
            } else {
                undo.changes.push(self.put_back(s)?);
            }
            undo.report.push(FileChange {
                path: s.path.clone(),
                status: match (&s.before, &s.after) {
                    (None, _) => Status::Deleted,
                    (Some(_), None) => Status::Added,
                    _ => Status::Modified,
                },
            });
        }
        Ok(undo)
    }

    /// Whether something is at `path` on disk that the snapshot left out
    /// (ignored now, too large, not a file): an undo never creates over it.
    /// Looked up by its bytes and by descriptor, so an odd or long name too.
    fn occupied(&self, path: &str) -> bool {
        crate::restore::on_disk(self.cps.root(), path).is_some()
    }

    /// The bytes of `h`, an entry of `s` (a link's target for a link).
    fn bytes(&self, s: &Swap, h: &Held) -> Result<Vec<u8>, Error> {
        let blob = self.cps.repo.find_blob(oid(s, h)?).map_err(|_| {
            refuse(format!(
                "the bytes {} held before the reject are gone (its safety checkpoint was dropped); restore what you need from `mend checkpoint list`",
                shown(&s.path)
            ))
        })?;
        Ok(blob.content().to_vec())
    }

    /// The write beside the transaction that puts `s.before` back where
    /// `s.after` still is, for a path no workspace change can name.
    fn beside_op(&self, s: &Swap) -> Result<Op, Error> {
        let path = crate::names::unspell(&s.path).map_err(refuse)?.into_owned();
        Ok(match (&s.before, &s.after) {
            (Some(h), after) => Op::Put {
                path,
                bytes: self.bytes(s, h)?,
                link: h.mode == LINK,
                executable: h.mode == 0o100755,
                expect: after.as_ref().map(|a| oid(s, a)).transpose()?,
            },
            (None, Some(a)) => Op::Delete {
                path,
                expect: oid(s, a)?,
            },
            (None, None) => {
                return Err(Error::TurnCorrupt {
                    what: format!(
                        "the turn state names {} as absent both before and after the reject",
                        shown(&s.path)
                    ),
                });
            }
        })
    }

    /// The change that puts `s.before` back where `s.after` is, checked
    /// at the rename against the hash of the bytes the reject left (a
    /// link's by its target).
    fn put_back(&self, s: &Swap) -> Result<Change, Error> {
        let file = |h: &Option<Held>| h.as_ref().is_some_and(|h| h.mode != LINK);
        let base = match &s.after {
            None => Base::Absent,
            Some(h) if h.mode != LINK => Base::Hash(ContentHash::of(&self.bytes(s, h)?)),
            // A link is compared by its target's bytes, as a restore does.
            Some(h) => Base::Link(ContentHash::of(&self.bytes(s, h)?)),
        };
        Ok(match &s.before {
            None => Change::Delete {
                path: s.path.clone(),
                base,
            },
            Some(h) if file(&s.before) && (s.after.is_none() || file(&s.after)) => Change::Bytes {
                path: s.path.clone(),
                bytes: self.bytes(s, h)?,
                base,
                executable: Some(h.mode == 0o100755),
            },
            Some(h) => Change::Restore {
                path: s.path.clone(),
                bytes: self.bytes(s, h)?,
                link: h.mode == LINK,
                executable: h.mode == 0o100755,
                base,
            },
        })
    }
}

/// An undo's plan: the workspace changes, the writes beside them (by
/// spelled path), what it reports, and the paths it leaves.
#[derive(Default)]
struct Undo {
    changes: Vec<Change>,
    beside: Vec<(String, Op)>,
    report: Vec<FileChange>,
    left: Vec<Left>,
}

/// The blob id of `h`, an entry of `s`.
fn oid(s: &Swap, h: &Held) -> Result<Oid, Error> {
    Oid::from_str(&h.blob).map_err(|_| Error::TurnCorrupt {
        what: format!(
            "the turn state names a file {} with a bad id {}",
            s.path, h.blob
        ),
    })
}

/// Why each left path was left, on one line.
fn reasons(left: &[Left]) -> String {
    left.iter()
        .map(|l| format!("{}: {}", shown(&l.path), l.reason))
        .collect::<Vec<_>>()
        .join("; ")
}
