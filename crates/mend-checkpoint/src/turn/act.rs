//! `reject` and `accept`: which changes a selection names, and which of a
//! file's hunks, checked against what `diff` showed.

use std::collections::BTreeSet;

use mend_core::report::Status;
use mend_merge::hunks;
use mend_workspace::{Base, Change, Lock};

use super::changes::{Entry, LeftOut};
use super::report::{Acted, TurnAccepted, TurnRejected, blob_id, fingerprints, version};
use super::state::{Held, Kind, Last, State, Swap};
use super::{Now, Turns, state};
use crate::restore::Scope;
use crate::{Checkpoint, CreateOptions, Error, FileChange, Left, git};

/// Which changes `reject` or `accept` act on.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Paths, each with everything under it and a rename's other name
    /// (none: every change).
    pub paths: Vec<String>,
    /// Just these hunks of one file, numbered as `diff` showed them.
    pub hunks: Vec<usize>,
    /// The file's version as `status` or `diff` gave it; without it, the
    /// hunks must be ones the last `diff` of the file numbered, still
    /// unchanged.
    pub seen: Option<String>,
}

/// What a reject did: the files acted on, the changes written, the
/// files left with why, and each path's entry before and after (for
/// `undo`).
type Done = (Vec<Acted>, Vec<FileChange>, Vec<Left>, Vec<Swap>);

fn refuse(message: impl Into<String>) -> Error {
    Error::TurnRefused(message.into())
}

/// A refusal of a version or hunk numbers of `e` that were not shown.
fn unseen(e: &Entry, message: String) -> Error {
    Error::TurnUnseen {
        path: e.path.clone(),
        message,
    }
}

/// A refusal of a hunk number `e`'s diff does not have.
fn no_hunk(e: &Entry, message: String) -> Error {
    Error::TurnNoHunk {
        path: e.path.clone(),
        message,
    }
}

/// A whole-file action given `--seen`: the one file named must still be
/// at that version, or nothing is done.
fn check_seen(chosen: &[&Entry], seen: Option<&str>) -> Result<(), Error> {
    let Some(seen) = seen else {
        return Ok(());
    };
    let [e] = chosen else {
        return Err(refuse(format!(
            "--seen gives the version of one file, and {} files were named; give one path",
            chosen.len()
        )));
    };
    let now = version(e);
    if now == seen {
        return Ok(());
    }
    let path = mend_core::text::escape_controls(&e.path);
    Err(unseen(
        e,
        format!(
            "{path} changed since version {seen} was shown; nothing was written. Run `mend turn status` or `mend turn diff {path}` again (version {now})"
        ),
    ))
}

/// The entries under `paths` (every entry when none is given); a path
/// that names no change is refused.
pub(super) fn chosen<'e>(entries: &'e [Entry], paths: &[String]) -> Result<Vec<&'e Entry>, Error> {
    if paths.is_empty() {
        return Ok(entries.iter().collect());
    }
    let mut out = Vec::new();
    for p in paths {
        let under = |q: &str| {
            q == p
                || q.strip_prefix(p.as_str())
                    .is_some_and(|r| r.starts_with('/'))
        };
        let found: Vec<&Entry> = entries.iter().filter(|e| e.paths().any(under)).collect();
        if found.is_empty() {
            return Err(refuse(format!(
                "{} has no change in this turn; `mend turn status` lists what changed",
                mend_core::text::escape_controls(p)
            )));
        }
        out.extend(found);
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out.dedup_by(|a, b| a.path == b.path);
    Ok(out)
}

impl Turns {
    /// The hunks `sel` names, as numbered in the file now: checked against
    /// the version given, or against what the last `diff` showed.
    fn hunk_numbers(
        &self,
        st: &State,
        e: &Entry,
        sel: &Selection,
        (old, new): (&str, &str),
    ) -> Result<Vec<usize>, Error> {
        let path = mend_core::text::escape_controls(&e.path);
        let now = fingerprints(old, new);
        let again = format!("Run `mend turn diff {path}` again and pick the hunks it numbers");
        if let Some(seen) = &sel.seen {
            if *seen != version(e) {
                return Err(unseen(
                    e,
                    format!(
                        "{path} changed since version {seen} was shown; nothing was written. {again} (version {})",
                        version(e)
                    ),
                ));
            }
            return match sel.hunks.iter().find(|k| **k == 0 || **k > now.len()) {
                Some(k) => Err(no_hunk(
                    e,
                    format!("{path} has {}; there is no hunk {k}", count(now.len())),
                )),
                None => Ok(sel.hunks.clone()),
            };
        }
        let Some(shown) = st.shown.get(&e.path) else {
            return Err(unseen(
                e,
                format!(
                    "no diff of {path} was shown in this turn, so hunk numbers name nothing yet; run `mend turn diff {path}` first"
                ),
            ));
        };
        let mut out = Vec::new();
        for k in &sel.hunks {
            let Some(fp) = k.checked_sub(1).and_then(|i| shown.get(i)) else {
                return Err(no_hunk(
                    e,
                    format!(
                        "the last diff of {path} showed {}; there is no hunk {k}",
                        count(shown.len())
                    ),
                ));
            };
            match now.iter().position(|n| n == fp) {
                Some(i) => out.push(i + 1),
                None => {
                    return Err(unseen(
                        e,
                        format!(
                            "hunk {k} of {path} changed since `mend turn diff` showed it; nothing was written. {again}"
                        ),
                    ));
                }
            }
        }
        Ok(out)
    }

    /// The one file `--hunk` acts on, as text on both sides.
    fn hunk_file<'e>(&self, chosen: &[&'e Entry]) -> Result<(&'e Entry, String, String), Error> {
        let [e] = chosen else {
            return Err(refuse(format!(
                "--hunk picks hunks of one file, and {} files were named; give one path",
                chosen.len()
            )));
        };
        let path = mend_core::text::escape_controls(&e.path);
        match (e.old, e.new, self.texts(e)?) {
            // An added or deleted text file is one hunk: the whole file.
            (o, n, Some((old, new))) if o.is_some() || n.is_some() => Ok((e, old, new)),
            _ => Err(refuse(format!(
                "{path} ({}) has no hunks to pick: it is binary, large or of another type; act on the whole file (without --hunk)",
                e.status
            ))),
        }
    }

    /// Puts back the review base's content of the selected files or hunks,
    /// after a safety checkpoint (restoring it undoes the reject exactly),
    /// in one transaction. Refused, with nothing written, when a hunk
    /// changed since it was shown.
    pub fn reject(&self, sel: &Selection) -> Result<TurnRejected, Error> {
        let lock = self.cps.lock()?;
        let dir = self.private()?;
        let mut st = self.open_turn()?;
        let paths = self.normalized(&sel.paths)?;
        let safety = self.cps.create_safety(
            &lock,
            &CreateOptions {
                label: Some(format!("before a reject in turn {}", st.turn.id)),
                ..CreateOptions::default()
            },
        )?;
        let (rejected, changes, left, swaps) =
            match self.reject_from(&lock, &st, &safety, &paths, sel) {
                Ok(done) => done,
                Err(e) => {
                    // Nothing was written: the safety checkpoint undoes nothing.
                    let _ = self.cps.drop_ref(&safety.id);
                    return Err(e);
                }
            };
        for a in &rejected {
            st.shown.remove(&a.path);
        }
        st.last = Some(Last {
            kind: Kind::Reject,
            safety: Some(safety.id.clone()),
            paths: swaps,
        });
        state::save(&dir, &st)?;
        Ok(TurnRejected {
            safety,
            rejected,
            changes,
            left,
        })
    }

    fn reject_from(
        &self,
        lock: &Lock,
        st: &State,
        safety: &Checkpoint,
        paths: &[String],
        sel: &Selection,
    ) -> Result<Done, Error> {
        let now = Now {
            tree: self.cps.tree_of(safety)?,
            skipped: safety.skipped.clone(),
        };
        let entries = self.entries(st, &now)?;
        let chosen = chosen(&entries, paths)?;
        if chosen.is_empty() {
            return Err(refuse(
                "nothing changed in this turn; there is nothing to reject",
            ));
        }
        if sel.hunks.is_empty() {
            check_seen(&chosen, sel.seen.as_deref())?;
        } else {
            let (e, old, new) = self.hunk_file(&chosen)?;
            if e.old.is_some() && e.new.is_some() {
                let (acted, report, swap) = self.reject_hunks(lock, st, &chosen, sel)?;
                return Ok((acted, report, Vec::new(), vec![swap]));
            }
            // An added or deleted file's one hunk is the whole file.
            self.hunk_numbers(st, e, sel, (&old, &new))?;
        }
        let (mut plan, changes) = self.whole_plan(st, &now, &chosen)?;
        let acted: Vec<&&Entry> = chosen
            .iter()
            .filter(|e| !e.paths().any(|p| plan.left.contains_key(p)))
            .collect();
        if acted.is_empty() {
            let why: Vec<String> = plan
                .left()
                .iter()
                .map(|l| {
                    format!(
                        "{}: {}",
                        mend_core::text::escape_controls(&l.path),
                        l.reason
                    )
                })
                .collect();
            return Err(refuse(format!("nothing was written: {}", why.join("; "))));
        }
        self.cps.ws.check_changes(&changes)?;
        let mut report = plan.report(self.cps.root());
        self.cps.ws.commit(lock, &changes).map_err(stale)?;
        // Paths no workspace change can name go after it, one by one.
        self.cps.apply_beside(&mut plan)?;
        report.retain(|c| !plan.left.contains_key(&c.path));
        // What undo puts back: only what was written (a path left above is
        // out of the plan by now).
        let swaps = swaps(&now.tree, &plan, &chosen);
        let acted = acted
            .iter()
            .filter(|e| !e.paths().any(|p| plan.left.contains_key(p)))
            .map(|e| whole(e))
            .collect();
        Ok((acted, report, plan.left(), swaps))
    }

    /// The plan that puts the chosen files' review base back: every
    /// chosen path whose sides the snapshots both hold, and the others
    /// left with why.
    fn whole_plan(
        &self,
        st: &State,
        now: &Now<'_>,
        chosen: &[&Entry],
    ) -> Result<(crate::restore::Plan, Vec<Change>), Error> {
        let only: BTreeSet<String> = chosen
            .iter()
            .filter(|e| !e.left_out.any())
            .flat_map(|e| e.paths().map(str::to_owned))
            .collect();
        let (base, start) = self.review_base(st)?;
        let scope = Scope {
            tree: &base,
            skipped: &start.skipped,
            only: Some(&only),
            then: st.began.map(|began| crate::restore::Then {
                excludes: &st.excludes,
                began,
            }),
        };
        let (mut plan, changes, _) = self
            .cps
            .prepare_scoped(&scope, (&now.tree, &now.skipped), false)
            .map_err(unheld)?;
        for e in chosen.iter().filter(|e| e.left_out.any()) {
            plan.left
                .insert(e.path.clone(), cannot_put_back(e.left_out, e.status));
        }
        Ok((plan, changes))
    }

    fn reject_hunks(
        &self,
        lock: &Lock,
        st: &State,
        chosen: &[&Entry],
        sel: &Selection,
    ) -> Result<(Vec<Acted>, Vec<FileChange>, Swap), Error> {
        let (e, old, new) = self.hunk_file(chosen)?;
        let numbers = self.hunk_numbers(st, e, sel, (&old, &new))?;
        let out = hunks::with_hunks(&old, &new, &|k| !numbers.contains(&k));
        let held = |oid: git2::Oid, mode: i32| Held {
            blob: blob_id(oid),
            mode,
        };
        let written = git2::Oid::hash_object(git2::ObjectType::Blob, out.as_bytes())
            .map_err(git("hashing what the reject writes"))?;
        let swap = Swap {
            path: e.path.clone(),
            before: e.new.map(|(oid, mode)| held(oid, mode)),
            after: e.new.map(|(_, mode)| held(written, mode)),
            listed: false,
            special: None,
        };
        let change = Change::Bytes {
            path: e.path.clone(),
            bytes: out.into_bytes(),
            base: Base::Hash(mend_workspace::ContentHash::of(new.as_bytes())),
            executable: None,
        };
        self.cps.ws.check_changes(std::slice::from_ref(&change))?;
        self.cps.ws.commit(lock, &[change]).map_err(stale)?;
        Ok((
            vec![Acted {
                path: e.path.clone(),
                status: e.status,
                hunks: picked(sel),
            }],
            vec![FileChange {
                path: e.path.clone(),
                status: Status::Modified,
            }],
            swap,
        ))
    }

    /// Marks the selected files or hunks reviewed: the review base takes
    /// them, so they leave `status` and `diff`. Nothing is written to the
    /// worktree.
    pub fn accept(&self, sel: &Selection) -> Result<TurnAccepted, Error> {
        let lock = self.cps.lock()?;
        let dir = self.private()?;
        let mut st = self.open_turn()?;
        let paths = self.normalized(&sel.paths)?;
        let now = self.snapshot(&lock)?;
        let entries = self.entries(&st, &now)?;
        let chosen = chosen(&entries, &paths)?;
        if chosen.is_empty() {
            return Err(refuse(
                "nothing changed in this turn; there is nothing to accept",
            ));
        }
        let mut accepted = Vec::new();
        let mut swaps = Vec::new();
        let mut lay = |st: &mut State, path: &String, to: Option<Held>| {
            let was = st.accepted.insert(path.clone(), to.clone());
            swaps.push(Swap {
                path: path.clone(),
                listed: was.is_some(),
                before: was.flatten(),
                after: to,
                special: None,
            });
        };
        if sel.hunks.is_empty() {
            check_seen(&chosen, sel.seen.as_deref())?;
            for e in &chosen {
                lay(&mut st, &e.path, held(e.new));
                if let Some(from) = &e.from {
                    lay(&mut st, from, None);
                }
                accepted.push(whole(e));
            }
        } else {
            let (e, old, new) = self.hunk_file(&chosen)?;
            let numbers = self.hunk_numbers(&st, e, sel, (&old, &new))?;
            let taken = if e.old.is_none() || e.new.is_none() {
                // An added or deleted file's one hunk is the whole file.
                e.new
            } else {
                let partial = hunks::with_hunks(&old, &new, &|k| numbers.contains(&k));
                let oid = self
                    .cps
                    .repo
                    .blob(partial.as_bytes())
                    .map_err(git("storing what was accepted"))?;
                // Hunks carry lines, not modes: the mode stays the base's.
                Some((oid, e.old.map_or(0o100644, |o| o.1)))
            };
            lay(&mut st, &e.path, held(taken));
            // Accepting hunks of a renamed file accepts the rename.
            if let Some(from) = &e.from {
                lay(&mut st, from, None);
            }
            accepted.push(Acted {
                path: e.path.clone(),
                status: e.status,
                hunks: picked(sel),
            });
        }
        for a in &accepted {
            st.shown.remove(&a.path);
        }
        st.last = Some(Last {
            kind: Kind::Accept,
            safety: None,
            paths: swaps,
        });
        // Held before it is saved: a state naming blobs no ref holds
        // could lose them to git's gc.
        self.hold(&st)?;
        state::save(&dir, &st)?;
        Ok(TurnAccepted { accepted })
    }
}

/// Each path a reject's plan writes or deletes, with its entry in the
/// worktree before (`now`, the safety checkpoint's tree, looked up by the
/// path's bytes, not its spelling) and after, and the FIFO, socket or
/// device it replaced, if any.
fn swaps(now: &git2::Tree<'_>, plan: &crate::restore::Plan, chosen: &[&Entry]) -> Vec<Swap> {
    let held = |oid: git2::Oid, mode: i32| Held {
        blob: blob_id(oid),
        mode,
    };
    let special = |path: &str| {
        (chosen.iter())
            .find(|e| e.path == path)
            .and_then(|e| e.left_out.special)
            .map(str::to_owned)
    };
    let before = |path: &str| {
        now.get_path(&super::bytes_of(path))
            .ok()
            .filter(|e| e.kind() != Some(git2::ObjectType::Tree))
            .map(|e| held(e.id(), e.filemode()))
    };
    let writes = plan.writes.iter().map(|(path, oid, mode)| Swap {
        path: path.clone(),
        before: before(path),
        after: Some(held(*oid, *mode)),
        listed: false,
        special: special(path),
    });
    let deletes = plan.deletes.iter().map(|path| Swap {
        path: path.clone(),
        before: before(path),
        after: None,
        listed: false,
        special: None,
    });
    writes.chain(deletes).collect()
}

/// A reject that would overwrite or delete bytes no checkpoint holds,
/// worded for `turn reject`, which has no `--force`.
fn unheld(e: Error) -> Error {
    match e {
        Error::Unheld { paths } => refuse(format!(
            "rejecting would overwrite or delete a file whose content now is in no checkpoint (ignored, or too large to snapshot): {}; nothing was written. Move it aside yourself, or leave it out of the reject",
            paths
                .iter()
                .map(|p| mend_core::text::escape_controls(p).into_owned())
                .collect::<Vec<_>>()
                .join(", ")
        )),
        other => other,
    }
}

/// Why a file the snapshots left out cannot be rejected.
fn cannot_put_back(l: LeftOut, status: Status) -> String {
    if l.ignored.is_some() {
        return "it became ignored during the turn, so no checkpoint holds its content now for the undo; stop ignoring it, or move it aside yourself, then reject it".to_owned();
    }
    match (l.repository, l.then, l.now) {
        (false, None, Some(n)) if status == Status::Added => format!(
            "it is {n} bytes, over the snapshot limit, so no checkpoint can save it for the undo; delete or move it yourself"
        ),
        (true, ..) => "it is a repository of its own, which checkpoints leave out, so a reject neither removes nor restores it".to_owned(),
        (false, Some(n), _) => format!(
            "at the turn's start it was {n} bytes, over the snapshot limit, so no checkpoint holds that content to put back"
        ),
        (false, None, n) => format!(
            "it is {} bytes now, over the snapshot limit, so no checkpoint can save its current content for the undo; move it aside yourself, then reject it to put back its start",
            n.unwrap_or_default()
        ),
    }
}

/// An entry's side as the turn's state holds it.
fn held(side: Option<(git2::Oid, i32)>) -> Option<Held> {
    side.map(|(oid, mode)| Held {
        blob: blob_id(oid),
        mode,
    })
}

/// The hunks a selection names, each once, in order.
fn picked(sel: &Selection) -> Vec<usize> {
    let mut out = sel.hunks.clone();
    out.sort_unstable();
    out.dedup();
    out
}

/// `1 hunk`, `2 hunks`.
fn count(n: usize) -> String {
    format!("{n} hunk{}", if n == 1 { "" } else { "s" })
}

fn whole(e: &Entry) -> Acted {
    Acted {
        path: e.path.clone(),
        status: e.status,
        hunks: Vec::new(),
    }
}

/// A file changed between the safety checkpoint and the write (a person
/// saving it meanwhile): refused, nothing written.
fn stale(e: mend_workspace::Error) -> Error {
    match e {
        mend_workspace::Error::Stale { path, .. } => refuse(format!(
            "{} changed while the reject was being made; nothing was written. Run `mend turn diff` again",
            mend_core::text::escape_controls(&path)
        )),
        other => other.into(),
    }
}
