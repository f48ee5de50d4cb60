//! Proposals: a response planned against the session's view of each file
//! and held as outputs, all or nothing, under the session's lock.
//!
//! A proposal that streams in is planned while it arrives, against the
//! view as it was then (a [`Recorder`] keeps what it read). It is held at
//! its end against the index as it is then: where a file's view changed
//! meanwhile (another proposal coming in beside it; an accept, a reject or
//! a sync only when the proposer holds no [`crate::Request`], as `mend
//! apply --pending` always does), its output is merged three ways (base: the view it was planned against, ours: the
//! view now, theirs: its output), or the proposal is refused.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use mend_apply::{ApplyOptions, Planned, Preplanned};
use mend_core::formats::{Entry as ParsedEntry, Parsed};
use mend_core::{ApplyReport, Edit, EditReport, Failure, FailureKind, FilePlan, PlanOptions};
use mend_workspace::Snapshot;

use crate::act::{Merged3, conflict_lines, merge3};
use crate::error::Error;
use crate::store::{self, Entry, Index, Output};
use crate::{Session, StatusReport, as_workspace, encoding_of, hunks};

/// How to make a proposal.
#[derive(Default)]
pub struct Propose {
    /// Hashes the edits were based on, by normalized path: a file whose
    /// text as the model sees it no longer hashes to its hash is refused.
    pub expect: HashMap<String, mend_apply::Expected>,
    /// Plan and report only; nothing is held, not even a retry context.
    pub dry_run: bool,
    /// What a streaming proposal read and planned while it arrived.
    pub streamed: Option<Streamed>,
}

/// What a proposal did.
#[derive(Debug)]
pub struct Proposal {
    /// The report, as `mend apply` makes it; nothing is ever written.
    pub report: ApplyReport,
    /// The files it holds outputs for, with their letters; `None` when it
    /// failed or was a dry run.
    pub held: Option<StatusReport>,
}

/// What a proposal that streamed in read of each file, and the plans made
/// against it.
#[derive(Default)]
pub struct Streamed {
    seen: HashMap<String, Snapshot>,
    plans: HashMap<String, Preplanned>,
}

/// Reads files for a streaming proposal as [`Session::seen`] does,
/// without the session's lock, remembering what each file read as, so the
/// proposal can be held later against what it was planned on.
pub struct Recorder<'a, 'w> {
    session: &'a Session<'w>,
    seen: RefCell<HashMap<String, Snapshot>>,
}

impl<'a, 'w> Recorder<'a, 'w> {
    /// A file as the model sees it now; the first read of each is kept.
    pub fn read(&self, raw: &str) -> Result<Snapshot, mend_workspace::Error> {
        let snap = self.session.seen(raw)?;
        self.seen
            .borrow_mut()
            .entry(snap.rel.clone())
            .or_insert_with(|| snap.clone());
        Ok(snap)
    }

    /// What was read, with the plans made against it (by normalized path,
    /// from `mend_apply::StreamPlanner::finish`).
    pub fn finish(self, plans: HashMap<String, Preplanned>) -> Streamed {
        Streamed {
            seen: self.seen.into_inner(),
            plans,
        }
    }
}

/// A planned file checked against the index as it is now, ready to hold.
struct Ready {
    /// Its view now.
    now: Snapshot,
    /// Its plan, carried over to `now` when the view changed.
    plan: FilePlan,
}

impl<'w> Session<'w> {
    /// Plans `parsed` as `mend apply` would, against each file's output,
    /// else its context, else the file as it is now (which becomes its
    /// context), and stores the new outputs, all or nothing. A failed
    /// proposal stores nothing but its retry context.
    pub fn propose(&mut self, parsed: &Parsed) -> Result<ApplyReport, Error> {
        Ok(self.propose_with(parsed, Propose::default())?.report)
    }

    /// A reader for a proposal that will stream in (see [`Recorder`]).
    pub fn recorder(&self) -> Recorder<'_, 'w> {
        Recorder {
            session: self,
            seen: RefCell::new(HashMap::new()),
        }
    }

    /// [`Session::propose`] with options: expected versions, a dry run, or
    /// the plans a streaming proposal made while it arrived.
    pub fn propose_with(&mut self, parsed: &Parsed, opts: Propose) -> Result<Proposal, Error> {
        let _held = self.lock()?;
        let mut index = self.load()?;
        let Streamed { seen, plans } = opts.streamed.unwrap_or_default();
        // Not a dry run for `plan_from`: its check of the change set is
        // against the disk, and a proposal's is against the session's view
        // (`collisions`).
        let apply = ApplyOptions {
            dry_run: false,
            expect: opts.expect,
            syntax: self.syntax,
            preplanned: plans,
            ..ApplyOptions::default()
        };
        // Files whose text the session holds but cannot read back, with why.
        let damaged = RefCell::new(BTreeMap::new());
        let source = |raw: &str| {
            let rel = self.ws.normalize(raw)?;
            match seen.get(&rel) {
                Some(snap) => Ok(snap.clone()),
                None => self.view_in(&index, &rel).map_err(|e| {
                    if matches!(e, Error::Damaged { .. }) {
                        damaged.borrow_mut().insert(rel.clone(), e.to_string());
                    }
                    as_workspace(&rel, e)
                }),
            }
        };
        let mut planned = mend_apply::plan_from(self.ws, parsed, &apply, &source)?;
        if planned.ok {
            self.collisions(&index, &planned.plans)?;
        }
        if !planned.ok {
            self.explain_stale(parsed, &mut planned);
            self.explain_damaged(parsed, &mut planned, &damaged.into_inner());
        }
        let mut held = None;
        if planned.ok && !opts.dry_run {
            let ready = self.ready_all(&index, parsed, &mut planned);
            if planned.ok {
                let mut keys = BTreeSet::new();
                for r in &ready {
                    keys.extend(self.hold(&mut index, r)?);
                }
                self.show_held(&index, &ready, &mut planned);
                held = Some(keys);
            }
        }
        let report = planned.into_report(parsed, opts.dry_run, false);
        if opts.dry_run {
            return Ok(Proposal { report, held: None });
        }
        index.retry = report.retry_context.clone();
        self.store.save(&index)?;
        let held = held.map(|keys| StatusReport {
            session: self.name.clone(),
            files: keys
                .iter()
                .filter_map(|k| index.files.get(k).map(|e| self.status_of(&index, k, e)))
                .collect(),
            // What this proposal held, not who else is proposing.
            streaming: Vec::new(),
        });
        Ok(Proposal { report, held })
    }

    /// Checks every planned file against the index as it is now; a file
    /// that cannot be held fails its edits (and so the proposal).
    fn ready_all(&self, index: &Index, parsed: &Parsed, planned: &mut Planned) -> Vec<Ready> {
        let mut ready = Vec::new();
        let mut refused = Vec::new();
        for (snap, plan) in &planned.plans {
            match self.ready(index, snap, plan) {
                Ok(r) => ready.push(r),
                Err(why) => refused.push((snap.rel.clone(), why)),
            }
        }
        for (rel, why) in refused {
            let failure = Failure::new(
                FailureKind::Stale,
                why,
                "Read the file again (read_file, or `mend pending diff`) and send the edits against the session's text as it is now.",
            );
            self.fail_file(parsed, planned, &rel, &failure);
        }
        ready
    }

    /// What a held proposal shows of each file: the diff from the view it
    /// was held against to its new text, by the diff `--hunk` counts
    /// hunks by, numbered where those are the numbers `--hunk` takes (the
    /// view is the context and the output a plain write).
    fn show_held(&self, index: &Index, ready: &[Ready], planned: &mut Planned) {
        for r in ready {
            let rel = &r.now.rel;
            let Some(summary) = planned.files.iter_mut().find(|f| &f.path == rel) else {
                continue;
            };
            let old = r.now.text().map(|f| f.text.as_str());
            let to = r.plan.new_path.as_deref().unwrap_or(rel);
            let context = index
                .files
                .get(rel)
                .map(|e| e.context.as_ref().map(|c| &c.hash));
            let numbered = self.moved_to(rel, &r.plan).is_none()
                && store::rename_source(index, rel).is_none()
                && r.plan.content.is_some()
                && context == Some(r.now.text().map(|f| &f.hash));
            summary.diff =
                hunks::render_file((rel, old), (to, r.plan.content.as_deref()), numbered);
        }
    }

    /// One planned file against the index as it is now: as planned when
    /// its view is unchanged, else carried over by a three-way merge;
    /// otherwise why it cannot be held.
    fn ready(&self, index: &Index, snap: &Snapshot, plan: &FilePlan) -> Result<Ready, String> {
        let rel = &snap.rel;
        let now = self.view(index, rel).map_err(|e| e.to_string())?;
        let changes = plan.status(now.text().map(|f| f.text.as_str())).is_some();
        if let Some(Output::Rename { to, .. }) =
            index.files.get(rel).and_then(|e| e.output.as_ref())
            && changes
        {
            return Err(format!(
                "{rel} has a pending rename to {to}; a new {rel} can be proposed once that rename is accepted or rejected"
            ));
        }
        let moved_back = |to: &str| store::rename_source(index, rel).is_some_and(|(f, _)| f == to);
        if let Some(to) = self.moved_to(rel, plan)
            && !moved_back(&to)
            && (store::rename_source(index, &to).is_some()
                || index.files.get(&to).is_some_and(|e| e.output.is_some()))
        {
            return Err(format!(
                "the session already holds a proposal for {to}; a file can be moved there once that is accepted or rejected"
            ));
        }
        let hash = |s: &Snapshot| s.text().map(|f| f.hash);
        if hash(&now) == hash(snap) {
            return Ok(Ready {
                now,
                plan: plan.clone(),
            });
        }
        let changed = "the session's text of this file changed while the proposal streamed in (another proposal came in beside it)";
        let Some(theirs) = plan.content.as_deref() else {
            return Err(format!(
                "{changed}, and the proposal deletes it; nothing was held"
            ));
        };
        let ours = match (now.text(), snap.text()) {
            (Some(f), _) => f.text.as_str(),
            (None, None) => "",
            (None, Some(_)) => {
                return Err(format!("{changed}: it no longer exists; nothing was held"));
            }
        };
        let base = snap.text().map_or("", |f| f.text.as_str());
        let Merged3 {
            text: merged,
            conflicts,
            ..
        } = merge3(base, ours, theirs, (rel, self.merge));
        if conflicts > 0 {
            return Err(format!(
                "{changed}, and that change overlaps this one ({conflicts} conflict(s), starting at line(s) {} of the merge); nothing was held",
                conflict_lines(&merged)
            ));
        }
        let mut plan = plan.clone();
        plan.content = Some(merged);
        Ok(Ready { now, plan })
    }

    /// Refuses a response that moves a file onto one the session's view
    /// has (unless the response deletes it), or ends two files at one
    /// path. The rest of the change set is checked when it is accepted.
    fn collisions(&self, index: &Index, plans: &[(Snapshot, FilePlan)]) -> Result<(), Error> {
        let deleted: BTreeSet<&str> = plans
            .iter()
            .filter(|(_, p)| p.content.is_none())
            .map(|(s, _)| s.rel.as_str())
            .collect();
        let mut ends: HashMap<String, &str> = HashMap::new();
        for (snap, plan) in plans.iter().filter(|(_, p)| p.content.is_some()) {
            let rel = snap.rel.as_str();
            let moved = self.moved_to(rel, plan);
            let end = moved.clone().unwrap_or_else(|| rel.to_owned());
            if let Some(other) = ends.insert(end.clone(), rel) {
                return Err(Error::Collision {
                    path: end,
                    detail: format!("the response changes both {other} and {rel} into it"),
                });
            }
            let Some(to) = moved else { continue };
            let taken = self.view(index, &to).map_or(true, |v| v.text().is_some());
            if taken && !deleted.contains(to.as_str()) {
                return Err(Error::Collision {
                    detail: format!("it already exists, so moving {rel} there would overwrite it"),
                    path: to,
                });
            }
        }
        Ok(())
    }

    /// Where a plan moves its file, when elsewhere.
    fn moved_to(&self, rel: &str, plan: &FilePlan) -> Option<String> {
        let to = plan.new_path.as_ref()?;
        let to = self.ws.normalize(to).unwrap_or_else(|_| to.clone());
        (to != rel).then_some(to)
    }

    /// Holds one file's output in `index`; returns the entry it changed.
    /// The target of a pending rename is held in the rename's entry.
    fn hold(&self, index: &mut Index, r: &Ready) -> Result<Option<String>, Error> {
        let rel = &r.now.rel;
        let original = r.now.text();
        let renamed_from = store::rename_source(index, rel).map(|(from, _)| from.clone());
        if r.plan.status(original.map(|f| f.text.as_str())).is_none() {
            // Nothing changes; the model has seen the file, though.
            if renamed_from.is_none() && !index.files.contains_key(rel) && original.is_some() {
                let context = self.store_text(original)?;
                index.files.insert(
                    rel.clone(),
                    Entry {
                        context,
                        output: None,
                    },
                );
            }
            return Ok(None);
        }
        let encoding = encoding_of(original);
        let output = match (&r.plan.content, self.moved_to(rel, &r.plan)) {
            (None, _) => Output::Delete,
            (Some(c), Some(to)) => Output::Rename {
                to,
                text: self.store.put(c, encoding)?,
            },
            (Some(c), None) => Output::Write {
                text: self.store.put(c, encoding)?,
            },
        };
        let Some(from) = renamed_from else {
            match index.files.get_mut(rel) {
                Some(e) => e.output = Some(output),
                None => {
                    let context = self.store_text(original)?;
                    let output = Some(output);
                    index.files.insert(rel.clone(), Entry { context, output });
                }
            }
            return Ok(Some(rel.clone()));
        };
        // The rename carries the new text, moves on, or becomes a
        // deletion; moved back, it is a plain write.
        let output = match output {
            Output::Write { text } => Output::Rename {
                to: rel.clone(),
                text,
            },
            Output::Rename { to, text } if to == from => Output::Write { text },
            other => other,
        };
        if let Some(e) = index.files.get_mut(&from) {
            e.output = Some(output);
        }
        Ok(Some(from))
    }

    /// Fails every edit of one file with `failure`.
    fn fail_file(&self, parsed: &Parsed, planned: &mut Planned, rel: &str, failure: &Failure) {
        for r in planned.reports.iter_mut() {
            let Some(ParsedEntry::Edit(edit)) = parsed.entries.get(r.index) else {
                continue;
            };
            if self.key(edit) == rel {
                *r = EditReport::failed(r.index, edit, failure.clone());
            }
        }
        planned.ok = false;
    }

    fn key(&self, edit: &Edit) -> String {
        self.ws
            .normalize(&edit.path)
            .unwrap_or_else(|_| edit.path.clone())
    }

    /// An edit to a file whose session text is damaged failed for that
    /// reason alone: say so, and what the person can do, instead of the
    /// read error's advice.
    fn explain_damaged(
        &self,
        parsed: &Parsed,
        planned: &mut Planned,
        damaged: &BTreeMap<String, String>,
    ) {
        for r in planned.reports.iter_mut() {
            let Some(ParsedEntry::Edit(edit)) = parsed.entries.get(r.index) else {
                continue;
            };
            let rel = self.key(edit);
            let (Some(why), Some(f)) = (damaged.get(&rel), r.failure.as_mut()) else {
                continue;
            };
            f.message = why.clone();
            f.fix = format!(
                "This is not a fault of the edit: the session's stored text of {rel} is damaged. Ask the person to run `mend pending reject {rel}` (it removes that file's damaged entry; the rest of the session is intact), then read the file again and send the edit."
            );
        }
    }

    /// A search not found in the session's text of a file that changed on
    /// disk since the model saw it, but found in the file on disk, says so:
    /// re-reading the session's text would not help.
    fn explain_stale(&self, parsed: &Parsed, planned: &mut Planned) {
        let not_found: BTreeSet<usize> = planned
            .reports
            .iter()
            .filter(|r| {
                r.failure
                    .as_ref()
                    .is_some_and(|f| f.kind == FailureKind::NotFound)
            })
            .map(|r| r.index)
            .collect();
        for (snap, _) in &planned.plans {
            let rel = &snap.rel;
            let Ok(disk) = self.ws.read(rel) else {
                continue;
            };
            let (Some(on_disk), Some(_)) = (disk.text(), snap.text()) else {
                continue;
            };
            if Some(&on_disk.hash) == snap.text().map(|f| &f.hash) {
                continue;
            }
            let edits: Vec<(usize, &Edit)> = parsed
                .entries
                .iter()
                .enumerate()
                .filter_map(|(i, e)| match e {
                    ParsedEntry::Edit(e) if &self.key(e) == rel => Some((i, e)),
                    _ => None,
                })
                .collect();
            if !edits.iter().any(|(i, _)| not_found.contains(i)) {
                continue;
            }
            let against_disk =
                mend_core::plan_file(rel, Some(&on_disk.text), &edits, &PlanOptions::default());
            let found: BTreeSet<usize> = against_disk
                .reports
                .iter()
                .filter(|r| r.is_ok())
                .map(|r| r.index)
                .collect();
            for r in planned.reports.iter_mut() {
                if !found.contains(&r.index) {
                    continue;
                }
                if let Some(f) = r
                    .failure
                    .as_mut()
                    .filter(|f| f.kind == FailureKind::NotFound)
                {
                    f.kind = FailureKind::Stale;
                    let stop = if f.message.trim_end().ends_with('.') {
                        ""
                    } else {
                        "."
                    };
                    f.message = format!(
                        "{}{stop} The session holds an older text of {rel}: the file changed on disk after the model saw it, and this text is in the file as it is now, not in the session's text.",
                        f.message.trim_end()
                    );
                    f.fix = format!(
                        "Ask the person to run `mend pending sync {rel}`, which takes the file as it is now into the session and carries any pending proposal over to it; then send this edit again. Until then, quote the text as read_file shows it."
                    );
                }
            }
        }
    }
}
