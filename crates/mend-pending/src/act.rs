//! Deciding on outputs: accepting and rejecting them, whole or hunk by
//! hunk, and syncing the context to the files as they are now. Each
//! action reads the index under the session's lock and saves it before
//! releasing it.

use mend_merge::{Labels, Options, Style, merge};
use mend_workspace::{Base, Change, Lock, Snapshot, TextFile, Workspace};
use serde::Serialize;

use crate::error::Error;
use crate::store::{Entry, Index, Output, Text};
use crate::{HunkGuard, Session, encoding_of, hunks, select, unreadable, version};

/// What accepting did to one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Accepted {
    /// The file.
    pub path: String,
    /// `written`, `hunks`, `merged`, `merged with conflict markers`,
    /// `deleted`, `already deleted`, `renamed to PATH`, or `nothing to
    /// write` (the file already holds what the output makes it).
    pub how: String,
    /// The regions git's merge would have left in conflict that a resolver
    /// settled (`--merge safe` on a file changed since its context), each
    /// with its resolver and its lines in the file as written. Left out
    /// when there is none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub settled: Vec<Settled>,
}

/// One region a merge resolver settled where git's merge conflicts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Settled {
    /// The resolver (`adjacent`, `contained`, `structured`).
    pub resolver: &'static str,
    /// Its first line in the file as written, from 1.
    pub start: usize,
    /// Its last line, inclusive; `start - 1` when the settled region left
    /// no line (both sides removed it).
    pub end: usize,
}

impl Settled {
    fn from_resolution(r: &mend_merge::Resolution) -> Self {
        Settled {
            resolver: r.resolver,
            start: r.lines.start + 1,
            end: r.lines.end,
        }
    }

    /// `lines 4-5 (adjacent)`, `line 9 (structured)`, `at line 3 (…)`.
    fn describe(&self) -> String {
        let at = match self.end.cmp(&self.start) {
            std::cmp::Ordering::Less => format!("at line {}, removed", self.start),
            std::cmp::Ordering::Equal => format!("line {}", self.start),
            std::cmp::Ordering::Greater => format!("lines {}-{}", self.start, self.end),
        };
        format!("{at} ({})", self.resolver)
    }
}

/// What a sync did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Synced {
    /// The files synced.
    pub synced: Vec<String>,
    /// Files a sync of every file passed over, with why: a file that
    /// cannot be read now (`?`) cannot become the context.
    pub skipped: Vec<(String, String)>,
}

/// How the index changes once the commit has landed.
enum Update {
    Set(String, Entry),
    Remove(String),
}

/// One file's part of an accept.
struct Plan {
    changes: Vec<Change>,
    updates: Vec<Update>,
    how: String,
    settled: Vec<Settled>,
}

/// What syncing does to one file.
enum Carried {
    Keep(Entry),
    Remove,
    Refused(String),
}

impl Session<'_> {
    /// Writes the outputs of `paths` (every file with one when empty), or
    /// with `hunks` just those hunks of one file, through one workspace
    /// transaction. A file changed locally since its context is merged
    /// three ways; a conflicted merge is refused unless `markers`. The
    /// caller holds the workspace lock; the session's is taken here.
    pub fn accept(
        &mut self,
        lock: &Lock,
        paths: &[String],
        hunks: &[usize],
        markers: bool,
    ) -> Result<Vec<Accepted>, Error> {
        self.accept_with(lock, paths, hunks, markers, HunkGuard::LastDiff)
    }

    /// [`Session::accept`], with `guard` saying which numbering of the
    /// file's hunks `hunks` counts in: refused when the proposal is no
    /// longer the one shown.
    pub fn accept_with(
        &mut self,
        lock: &Lock,
        paths: &[String],
        hunks: &[usize],
        markers: bool,
        guard: HunkGuard<'_>,
    ) -> Result<Vec<Accepted>, Error> {
        let _held = self.lock_acting()?;
        let mut index = self.load()?;
        let targets = with_output(&index, &self.name, self.ws, paths)?;
        one_file_for_hunks(hunks, &targets)?;
        self.check_seen(&index, hunks, &targets, guard)?;
        let vacated: Vec<&str> = targets
            .iter()
            .filter(|t| {
                matches!(
                    index.files[t.as_str()].output,
                    Some(Output::Delete | Output::Rename { .. })
                )
            })
            .map(String::as_str)
            .collect();
        let mut plans = Vec::new();
        for rel in &targets {
            plans.push(self.accept_one(&index, rel, hunks, markers, &vacated)?);
        }
        let changes: Vec<Change> = plans.iter().flat_map(|p| p.changes.clone()).collect();
        if !changes.is_empty() {
            self.ws.commit(lock, &changes)?;
        }
        let mut done = Vec::new();
        for (rel, plan) in targets.into_iter().zip(plans) {
            for u in plan.updates {
                match u {
                    Update::Set(path, entry) => {
                        index.files.insert(path, entry);
                    }
                    Update::Remove(path) => {
                        index.files.remove(&path);
                    }
                }
            }
            done.push(Accepted {
                path: rel,
                how: plan.how,
                settled: plan.settled,
            });
        }
        self.store.save(&index)?;
        Ok(done)
    }

    /// Refuses hunk numbers counted in a version of the file's proposal
    /// other than the one it has now.
    fn check_seen(
        &self,
        index: &Index,
        hunks: &[usize],
        targets: &[String],
        guard: HunkGuard<'_>,
    ) -> Result<(), Error> {
        let [rel] = targets else { return Ok(()) };
        if hunks.is_empty() {
            return Ok(());
        }
        let now = version(&index.files[rel]);
        let why = match guard {
            HunkGuard::Version(v) if v == now => return Ok(()),
            HunkGuard::Version(v) => format!(
                "its proposal changed since version {} was shown (a new proposal, an accept, a reject or a sync changed its hunks); nothing was done. Run `mend pending diff {rel}` again and pick the hunks it numbers (version {now})",
                mend_core::text::escape_controls(v)
            ),
            HunkGuard::LastDiff => match self.store.shown().get(rel) {
                Some(seen) if *seen != now => format!(
                    "changed since `mend pending diff` showed it: a new proposal, an accept, a reject or a sync changed its hunks, so hunk numbers may name hunks you have not seen; nothing was done. Run `mend pending diff {rel}` again and pick the hunks it numbers"
                ),
                _ => return Ok(()),
            },
        };
        Err(Error::Unseen {
            path: rel.clone(),
            why,
        })
    }

    fn accept_one(
        &self,
        index: &Index,
        rel: &str,
        picked: &[usize],
        markers: bool,
        vacated: &[&str],
    ) -> Result<Plan, Error> {
        let entry = &index.files[rel];
        let local = self.local(rel)?;
        let Some(output) = entry.output.as_ref() else {
            return Err(Error::Nothing {
                path: rel.to_owned(),
                why: "has no output in this session".into(),
            });
        };
        match output {
            Output::Write { .. } => self.accept_write(rel, entry, &local, picked, markers),
            Output::Delete | Output::Rename { .. } if !picked.is_empty() => Err(diverged(
                rel,
                "a deletion or a rename has no hunks; accept or reject the whole file".into(),
            )),
            Output::Delete => accept_delete(rel, entry, &local),
            Output::Rename { to, text } => {
                self.accept_rename(rel, entry, &local, (to, text), vacated)
            }
        }
    }

    /// Accepting a rename to `to` of the text `text`. Something else at
    /// `to` refuses it, unless this accept deletes or renames it away
    /// (`vacated`).
    fn accept_rename(
        &self,
        rel: &str,
        entry: &Entry,
        local: &Snapshot,
        (to, text): (&String, &Text),
        vacated: &[&str],
    ) -> Result<Plan, Error> {
        if local.text().is_none() {
            return Err(diverged(
                rel,
                "the proposal renames the file, and it was deleted since the model saw it; nothing was written. Restore it to accept the rename, or reject the rename if you do not want it".into(),
            ));
        }
        if self.taken(to) && !vacated.contains(&to.as_str()) {
            return Err(Error::RenameOnto {
                path: to.clone(),
                from: rel.to_owned(),
            });
        }
        let Some(base) = base_if_unchanged(entry, local) else {
            return Err(diverged(
                rel,
                format!(
                    "the proposal renames the file, and it changed since the model saw it; nothing was written. Run `mend pending sync {rel}` (it carries your changes over to the renamed text), then accept again"
                ),
            ));
        };
        Ok(Plan {
            changes: vec![
                Change::Write {
                    path: to.clone(),
                    text: self.blob(rel, text)?,
                    encoding: text.encoding,
                    base: Base::Absent,
                    mode_from: Some(rel.to_owned()),
                    executable: None,
                },
                Change::Delete {
                    path: rel.to_owned(),
                    base,
                },
            ],
            updates: vec![
                Update::Remove(rel.to_owned()),
                Update::Set(
                    to.clone(),
                    Entry {
                        context: Some(text.clone()),
                        output: None,
                    },
                ),
            ],
            how: format!("renamed to {to}"),
            settled: Vec::new(),
        })
    }

    /// Accepting a written output: whole, merged, or some of its hunks.
    fn accept_write(
        &self,
        rel: &str,
        entry: &Entry,
        local: &Snapshot,
        picked: &[usize],
        markers: bool,
    ) -> Result<Plan, Error> {
        let Some(Output::Write { text }) = &entry.output else {
            unreachable!("called for written outputs")
        };
        let output = self.blob(rel, text)?;
        let local_hash = local.text().map(|f| f.hash);
        let unchanged = local_hash == entry.context.as_ref().map(|c| c.hash);
        let encoding = local.text().map_or(text.encoding, |f| f.encoding);
        let mut settled = Vec::new();
        let (new, how) = if !picked.is_empty() {
            if !unchanged {
                return Err(Error::Diverged {
                    path: rel.to_owned(),
                    why: format!(
                        "the file changed since the model saw it, and hunks are numbered against what the model saw; nothing was written. Run `mend pending sync {rel}` first (it carries the proposal over to the file as it is now, keeping your changes, and numbers its hunks again), or accept the whole file (a three-way merge)"
                    ),
                });
            }
            (
                self.picked(rel, entry, &output, picked)?,
                "hunks".to_owned(),
            )
        } else if unchanged {
            (output.clone(), "written".to_owned())
        } else {
            let m = self.merged(rel, entry, local, &output)?;
            let how = match (m.conflicts, markers) {
                (0, _) => "merged".to_owned(),
                (_, true) => "merged with conflict markers".to_owned(),
                (n, false) => return Err(conflict(rel, &m.text, n)),
            };
            settled = m.resolved.iter().map(Settled::from_resolution).collect();
            (m.text, how + &resolved_note(&settled))
        };
        let context = self.store.put(&new, encoding)?;
        // Hunks left out of a partial accept stay proposed.
        let keep = (!picked.is_empty() && new != output)
            .then(|| entry.output.clone())
            .flatten();
        if local.text().is_some_and(|f| f.text == new) {
            return Ok(Plan {
                changes: Vec::new(),
                updates: vec![Update::Set(
                    rel.to_owned(),
                    Entry {
                        context: Some(context),
                        output: keep,
                    },
                )],
                how: "nothing to write".into(),
                settled,
            });
        }
        Ok(Plan {
            changes: vec![Change::Write {
                path: rel.to_owned(),
                text: new,
                encoding,
                base: local_hash.map_or(Base::Absent, Base::Hash),
                mode_from: None,
                executable: None,
            }],
            updates: vec![Update::Set(
                rel.to_owned(),
                Entry {
                    context: Some(context),
                    output: keep,
                },
            )],
            how,
            settled,
        })
    }

    /// Whether something is at `to` on disk: a file, or anything that
    /// cannot be read as one.
    fn taken(&self, to: &str) -> bool {
        self.ws.read(to).map_or(true, |s| s.text().is_some())
    }

    /// The file on disk; one that cannot be read as text is a refusal
    /// naming it.
    fn local(&self, rel: &str) -> Result<Snapshot, Error> {
        self.ws.read(rel).map_err(|e| Error::Unreadable {
            path: rel.to_owned(),
            reason: unreadable(&e),
        })
    }

    /// The context with the picked hunks of the output folded in.
    fn picked(
        &self,
        rel: &str,
        entry: &Entry,
        output: &str,
        picked: &[usize],
    ) -> Result<String, Error> {
        let context = self
            .text_of(rel, entry.context.as_ref())?
            .unwrap_or_default();
        check_hunks(rel, &context, output, picked)?;
        Ok(hunks::with_hunks(&context, output, &|k| {
            picked.contains(&k)
        }))
    }

    /// Local and proposed changes merged three ways (base: context), with
    /// conflict markers where they overlap, and how many conflicts.
    fn merged(
        &self,
        rel: &str,
        entry: &Entry,
        local: &Snapshot,
        output: &str,
    ) -> Result<Merged3, Error> {
        let Some(local) = local.text() else {
            return Err(Error::Diverged {
                path: rel.to_owned(),
                why: "the file was deleted since the model saw it, and the proposal changes it; nothing was written. Restore the file to accept the proposal, or reject it if you do not want it".into(),
            });
        };
        let context = self
            .text_of(rel, entry.context.as_ref())?
            .unwrap_or_default();
        Ok(merge3(&context, &local.text, output, (rel, self.merge)))
    }

    /// What accepting a file changed locally since its context would write
    /// (the three-way merge, with markers where it conflicts) and how many
    /// conflicts it has; `None` when the file is unchanged, has no written
    /// output, or cannot be read (its `?` status says why, and its diff
    /// from the context can still be shown).
    pub fn merge_preview(&self, raw: &str) -> Result<Option<(String, usize)>, Error> {
        let rel = self.ws.normalize(raw)?;
        let (_held, index) = self.locked()?;
        let Some(entry) = index.files.get(&rel) else {
            return Ok(None);
        };
        let Some(Output::Write { text }) = &entry.output else {
            return Ok(None);
        };
        let Ok(local) = self.ws.read(&rel) else {
            return Ok(None);
        };
        let unchanged = local.text().map(|f| f.hash) == entry.context.as_ref().map(|c| c.hash);
        if unchanged {
            return Ok(None);
        }
        let output = self.blob(&rel, text)?;
        let m = self.merged(&rel, entry, &local, &output)?;
        Ok(Some((m.text, m.conflicts)))
    }

    /// Drops the outputs of `paths` (every file with one when empty), or
    /// with `hunks` just those hunks of one file's output. Rejecting an
    /// output never reads the file on disk, so a file that cannot be read
    /// now (`?`) is rejected like any other. A named file with no output
    /// that is stuck (unreadable now, or its stored context damaged) is
    /// forgotten: its entry is removed, so the next proposal reads it
    /// from disk; one that is fine is refused, having nothing to reject.
    pub fn reject(&mut self, paths: &[String], hunks: &[usize]) -> Result<Vec<String>, Error> {
        self.reject_with(paths, hunks, HunkGuard::LastDiff)
    }

    /// [`Session::reject`], with `guard` as for [`Session::accept_with`].
    pub fn reject_with(
        &mut self,
        paths: &[String],
        hunks: &[usize],
        guard: HunkGuard<'_>,
    ) -> Result<Vec<String>, Error> {
        self.update(|index| {
            let targets = if paths.is_empty() || !hunks.is_empty() {
                with_output(index, &self.name, self.ws, paths)?
            } else {
                let named = select(index, &self.name, self.ws, paths)?;
                if let Some(rel) = named
                    .iter()
                    .find(|r| self.forgettable(r, &index.files[*r]) == Some(false))
                {
                    return Err(Error::Nothing {
                        path: rel.clone(),
                        why: "has no output in this session".into(),
                    });
                }
                named
            };
            one_file_for_hunks(hunks, &targets)?;
            self.check_seen(index, hunks, &targets, guard)?;
            for rel in &targets {
                let entry = index.files[rel].clone();
                let kept = if hunks.is_empty() {
                    None
                } else {
                    self.rejected_hunks(rel, &entry, hunks)?
                };
                let context = entry
                    .context
                    .filter(|c| kept.is_some() || self.store.get(c).is_ok());
                match (kept, context) {
                    (None, None) => {
                        index.files.remove(rel);
                    }
                    (None, Some(_)) if entry.output.is_none() => {
                        index.files.remove(rel);
                    }
                    (output, context) => {
                        index.files.insert(rel.clone(), Entry { context, output });
                    }
                }
            }
            Ok(targets)
        })
    }

    /// For an entry without output, whether rejecting it by name forgets
    /// it: only when it is stuck, its file unreadable now (`?`) or its
    /// stored context damaged; one that is fine has nothing to reject.
    /// `None` for an entry with an output.
    fn forgettable(&self, rel: &str, entry: &Entry) -> Option<bool> {
        if entry.output.is_some() {
            return None;
        }
        let damaged = entry
            .context
            .as_ref()
            .is_some_and(|c| self.store.get(c).is_err());
        let readable = self.ws.read(rel).is_ok_and(|s| s.text().is_some());
        Some(damaged || !readable)
    }

    /// A file's output without the hunks `hunks`; `None` when nothing is
    /// left of it.
    fn rejected_hunks(
        &self,
        rel: &str,
        entry: &Entry,
        hunks: &[usize],
    ) -> Result<Option<Output>, Error> {
        let Some(Output::Write { text }) = &entry.output else {
            return Err(Error::Diverged {
                path: rel.to_owned(),
                why: "a deletion or a rename has no hunks; reject the whole file".into(),
            });
        };
        let context = self
            .text_of(rel, entry.context.as_ref())?
            .unwrap_or_default();
        let output = self.blob(rel, text)?;
        check_hunks(rel, &context, &output, hunks)?;
        let rest = hunks::with_hunks(&context, &output, &|k| !hunks.contains(&k));
        Ok((rest != context)
            .then(|| self.store.put(&rest, text.encoding))
            .transpose()?
            .map(|text| Output::Write { text }))
    }

    /// Makes each file as it is now its context (all files when `paths` is
    /// empty), carrying each output over to it: the output is merged three
    /// ways (base: the old context, ours: the file now, theirs: the output),
    /// so accepting it later keeps the local changes. If any file's merge
    /// conflicts, or a deletion would take local changes with it, nothing
    /// is synced and every such file is listed. A file that cannot be read
    /// now (`?`) is refused when named, and passed over (listed in
    /// `skipped`) when every file is synced.
    pub fn sync(&mut self, paths: &[String]) -> Result<Synced, Error> {
        self.update(|index| {
            let targets = select(index, &self.name, self.ws, paths)?;
            let mut refused = Vec::new();
            let mut carried = Vec::new();
            let mut done = Synced::default();
            for rel in &targets {
                let local = match self.local(rel) {
                    Ok(local) => local,
                    Err(Error::Unreadable { reason, .. }) if paths.is_empty() => {
                        done.skipped.push((rel.clone(), format!("{reason}; `mend pending reject {rel}` drops its output, or forgets it when it has none")));
                        continue;
                    }
                    Err(e) => return Err(e),
                };
                match self.synced(rel, &index.files[rel], local.text())? {
                    Carried::Refused(why) => refused.push((rel.clone(), why)),
                    other => carried.push((rel.clone(), other)),
                }
            }
            if !refused.is_empty() {
                return Err(Error::Unsyncable { files: refused });
            }
            for (rel, s) in carried {
                match s {
                    Carried::Keep(entry) => {
                        index.files.insert(rel.clone(), entry);
                    }
                    Carried::Remove | Carried::Refused(_) => {
                        index.files.remove(&rel);
                    }
                }
                done.synced.push(rel);
            }
            Ok(done)
        })
    }

    /// One file's entry after a sync to `local`.
    fn synced(&self, rel: &str, entry: &Entry, local: Option<&TextFile>) -> Result<Carried, Error> {
        let unchanged = local.map(|f| &f.hash) == entry.context.as_ref().map(|c| &c.hash);
        if unchanged {
            return Ok(Carried::Keep(entry.clone()));
        }
        let old = self
            .text_of(rel, entry.context.as_ref())?
            .unwrap_or_default();
        let carry = |text: &crate::store::Text| -> Result<Result<_, String>, Error> {
            let Some(local) = local else {
                return Ok(Err(format!(
                    "it was deleted since the model saw it, and the proposal still changes it; restore the file to sync it, or reject the output (`mend pending reject {rel}`)"
                )));
            };
            let Merged3 {
                text: merged,
                conflicts,
                ..
            } = merge3(&old, &local.text, &self.blob(rel, text)?, (rel, self.merge));
            if conflicts > 0 {
                return Ok(Err(format!(
                    "your changes and the proposal overlap ({conflicts} conflict(s), starting at line(s) {} of the merge); accept it with --markers to resolve the overlap by hand, or reject it if you do not want it",
                    conflict_lines(&merged)
                )));
            }
            Ok(Ok(self.store.put(&merged, encoding_of(Some(local)))?))
        };
        let output = match &entry.output {
            None => None,
            Some(Output::Delete) if local.is_none() => return Ok(Carried::Remove),
            Some(Output::Delete) => {
                return Ok(Carried::Refused(format!(
                    "the proposal deletes it, and it changed since the model saw it, so the deletion would take your changes with it; reject the deletion to keep the file (`mend pending reject {rel}`), or delete the file yourself and accept (`mend pending accept {rel}` then clears it)"
                )));
            }
            Some(Output::Write { text }) => match carry(text)? {
                Ok(text) => Some(Output::Write { text }),
                Err(why) => return Ok(Carried::Refused(why)),
            },
            Some(Output::Rename { to, text }) => match carry(text)? {
                Ok(text) => Some(Output::Rename {
                    to: to.clone(),
                    text,
                }),
                Err(why) => return Ok(Carried::Refused(why)),
            },
        };
        let context = self.store_text(local)?;
        if context.is_none() && output.is_none() {
            return Ok(Carried::Remove);
        }
        Ok(Carried::Keep(Entry { context, output }))
    }
}

/// The named files (all when empty) that have an output.
fn with_output(
    index: &Index,
    name: &str,
    ws: &Workspace,
    paths: &[String],
) -> Result<Vec<String>, Error> {
    let named = !paths.is_empty();
    let mut out = Vec::new();
    for rel in select(index, name, ws, paths)? {
        if index.files[&rel].output.is_some() {
            out.push(rel);
        } else if named {
            return Err(Error::Nothing {
                path: rel,
                why: "has no output in this session".into(),
            });
        }
    }
    Ok(out)
}

/// `--hunk` numbers the hunks of one file.
fn one_file_for_hunks(hunks: &[usize], targets: &[String]) -> Result<(), Error> {
    if !hunks.is_empty() && targets.len() != 1 {
        return Err(Error::HunksOfOneFile {
            files: targets.len(),
        });
    }
    Ok(())
}

fn check_hunks(rel: &str, context: &str, output: &str, picked: &[usize]) -> Result<(), Error> {
    let count = hunks::count(context, output);
    match picked.iter().find(|&&h| h == 0 || h > count) {
        Some(&hunk) => Err(Error::NoHunk {
            path: rel.to_owned(),
            hunk,
            count,
        }),
        None => Ok(()),
    }
}

/// A three-way merge of texts.
pub(crate) struct Merged3 {
    /// The result, with markers where it conflicts.
    pub text: String,
    /// How many conflicts it has.
    pub conflicts: usize,
    /// Each conflict git would have left and a resolver settled, with
    /// its lines in `text`.
    pub resolved: Vec<mend_merge::Resolution>,
}

/// `ours` and `theirs` merged three ways from `base` (git's merge, then
/// what `policy` adds for the file at `rel`; labels `local`, `context`,
/// `proposal`).
pub(crate) fn merge3(
    base: &str,
    ours: &str,
    theirs: &str,
    (rel, policy): (&str, mend_merge::Policy),
) -> Merged3 {
    let m = merge(
        base.as_bytes(),
        ours.as_bytes(),
        theirs.as_bytes(),
        &Options::for_path(rel, policy),
    );
    let labels = Labels {
        ours: Some("local".into()),
        base: Some("context".into()),
        theirs: Some("proposal".into()),
    };
    let marked = m.render_marked(&labels, Style::Merge, 7);
    let text =
        String::from_utf8(marked.text).expect("a merge of UTF-8 texts split at newlines is UTF-8");
    Merged3 {
        text,
        conflicts: m.conflicts(),
        resolved: marked.resolved,
    }
}

/// How an accept report names the regions resolvers settled where git's
/// merge conflicts: `; settled where git conflicts: lines 4-5 (adjacent)`,
/// or nothing.
pub(crate) fn resolved_note(settled: &[Settled]) -> String {
    if settled.is_empty() {
        return String::new();
    }
    let each: Vec<String> = settled.iter().map(Settled::describe).collect();
    format!("; settled where git conflicts: {}", each.join(", "))
}

/// Where the conflicts of a merged text start, as line numbers.
pub(crate) fn conflict_lines(merged: &str) -> String {
    let lines: Vec<String> = merged
        .lines()
        .enumerate()
        .filter(|(_, l)| l.starts_with("<<<<<<< "))
        .map(|(n, _)| (n + 1).to_string())
        .collect();
    lines.join(", ")
}

/// The refusal of a conflicted merge, with where its conflicts start.
fn conflict(rel: &str, merged: &str, conflicts: usize) -> Error {
    Error::Conflict {
        path: rel.to_owned(),
        conflicts,
        lines: conflict_lines(merged),
    }
}

/// Accepting a deletion: done already if the file is gone, refused if it
/// changed since the model saw it (that would delete the user's changes).
fn accept_delete(rel: &str, entry: &Entry, local: &Snapshot) -> Result<Plan, Error> {
    if local.text().is_none() {
        return Ok(Plan {
            changes: Vec::new(),
            updates: vec![Update::Remove(rel.to_owned())],
            how: "already deleted".into(),
            settled: Vec::new(),
        });
    }
    let Some(base) = base_if_unchanged(entry, local) else {
        return Err(diverged(
            rel,
            "the proposal deletes the file, and it changed since the model saw it, so accepting would delete your changes; nothing was written. Delete it yourself if you mean to, or reject the deletion".into(),
        ));
    };
    Ok(Plan {
        changes: vec![Change::Delete {
            path: rel.to_owned(),
            base,
        }],
        updates: vec![Update::Remove(rel.to_owned())],
        how: "deleted".into(),
        settled: Vec::new(),
    })
}

/// The base a change to `rel` is made against, if the file on disk is
/// still the context the model saw (absent on both sides counts).
fn base_if_unchanged(entry: &Entry, local: &Snapshot) -> Option<Base> {
    let local_hash = local.text().map(|f| f.hash);
    let unchanged = local_hash == entry.context.as_ref().map(|c| c.hash);
    unchanged.then(|| local_hash.map_or(Base::Absent, Base::Hash))
}

/// The refusal of an accept whose proposal no longer fits the file.
fn diverged(rel: &str, why: String) -> Error {
    Error::Diverged {
        path: rel.to_owned(),
        why,
    }
}
