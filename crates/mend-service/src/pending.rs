//! The pending actions: what `mend pending`, the editor's `pending/*`
//! methods and MCP's `pending_status` do to a session, with one outcome
//! type each.

use std::collections::BTreeMap;

use mend_pending::{Accepted, Against, HunkGuard, Session};
use mend_workspace::{Lock, Recovery, Workspace};
use serde::Serialize;

use crate::Error;
use crate::apply::pending_lock;
use crate::review::{FileDiff, ReviewFile, Selection};

/// Who acts on which session.
#[derive(Debug, Clone)]
pub struct Actor<'a> {
    /// The session.
    pub session: &'a str,
    /// What names the front-end in the session's lock (`mend editor`,
    /// `mend pending`); the action's name is added.
    pub holder: &'a str,
    /// How a file changed since the model saw it is merged with its
    /// output (accept, sync); `None`: the session's default.
    pub merge: Option<mend_merge::Policy>,
}

/// How an action on hunks knows their numbers: from the `seen` version
/// when the selection names one, else from the last recorded diff.
fn guard(sel: &Selection) -> HunkGuard<'_> {
    sel.seen
        .as_deref()
        .map_or(HunkGuard::LastDiff, HunkGuard::Version)
}

/// A pending action.
#[derive(Debug, Clone)]
pub enum Action {
    /// Snapshot files as the context the model sees.
    Add(Vec<String>),
    /// The files and their letters.
    Status,
    /// Write outputs (all when no path is given), or hunks of one file.
    Accept {
        /// Files (none: all with an output), or hunks of one.
        selection: Selection,
        /// Write conflict markers instead of refusing.
        markers: bool,
    },
    /// Drop outputs (all when no path is given), or hunks of one file.
    Reject(Selection),
    /// Make the files as they are the context, carrying outputs over.
    Sync(Vec<String>),
    /// A unified diff of the outputs, hunks numbered; recorded as shown.
    Diff {
        /// Files (none: all with an output).
        paths: Vec<String>,
        /// From what the model saw, or from the file now.
        against: Against,
    },
    /// One file's output (its context when it has none).
    Output(String),
    /// The sessions of the root.
    List,
    /// Delete a session.
    Drop(String),
    /// The retry context of the last failed proposal.
    RetryContext,
}

impl Action {
    /// The action's name, as `mend pending` spells it.
    pub fn name(&self) -> &'static str {
        match self {
            Action::Add(_) => "add",
            Action::Status => "status",
            Action::Accept { .. } => "accept",
            Action::Reject(_) => "reject",
            Action::Sync(_) => "sync",
            Action::Diff { .. } => "diff",
            Action::Output(_) => "output",
            Action::List => "list",
            Action::Drop(_) => "drop",
            Action::RetryContext => "retry-context",
        }
    }
}

/// What an action did; each serialises as that action's one JSON shape.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Outcome {
    /// `add`: the files added.
    Added(Vec<String>),
    /// `status`.
    Status(Status),
    /// `accept`: `{"accepted": [{"path", "how"}]}`.
    Accepted {
        /// What was done to each file.
        accepted: Vec<Accepted>,
    },
    /// `reject`: `{"rejected": [path]}`.
    Rejected {
        /// The files whose outputs (or hunks) were dropped.
        rejected: Vec<String>,
    },
    /// `sync`: `{"synced": [path], "skipped": [{"path", "why"}]}`.
    Synced {
        /// The files synced.
        synced: Vec<String>,
        /// Files a sync of every file passed over.
        skipped: Vec<Skipped>,
    },
    /// `diff`.
    Diff(Diff),
    /// `output`: `{"path", "text"}`, `text` null when the output deletes
    /// or renames the file.
    Output {
        /// The file.
        path: String,
        /// Its proposed text.
        text: Option<String>,
    },
    /// `list`: `{"sessions": [name]}`.
    Sessions {
        /// The sessions of the root.
        sessions: Vec<String>,
    },
    /// `drop`: the session dropped.
    Dropped(Vec<String>),
    /// `retry-context`: `{"session", "retry_context"}`, null when the last
    /// proposal did not fail.
    RetryContext {
        /// The session.
        session: String,
        /// The context to send back to the model.
        retry_context: Option<String>,
    },
}

/// A file a sync passed over, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Skipped {
    /// The file.
    pub path: String,
    /// Why it was not synced.
    pub why: String,
}

/// A session's files as the review model has them: what `mend pending
/// status --json`, MCP's `pending_status` and the editor's
/// `pending/status` answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Status {
    /// The session.
    pub session: String,
    /// Its files, in path order, each with its hunk count and the version
    /// an action on its hunks takes as `seen`.
    pub files: Vec<ReviewFile>,
    /// The requests coming into the session now, each as its command and
    /// process id: while there is one, accept, reject, sync, add and drop
    /// are refused. Left out when there is none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub streaming: Vec<String>,
}

impl From<mend_pending::StatusReport> for Status {
    fn from(r: mend_pending::StatusReport) -> Status {
        Status {
            session: r.session,
            files: r.files.into_iter().map(ReviewFile::from).collect(),
            streaming: r.streaming,
        }
    }
}

/// A diff of the outputs: each numbered file after a `# PATH: version ID`
/// line, the versions by path (what `--seen` takes), and the files with
/// their hunks as data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Diff {
    /// The diff text.
    pub diff: String,
    /// Each numbered file's version.
    pub versions: BTreeMap<String, String>,
    /// Each file's diff, in path order.
    pub files: Vec<FileDiff>,
}

/// Runs `action` on the actor's session.
pub fn act(ws: &Workspace, who: &Actor<'_>, action: Action) -> Result<Outcome, Error> {
    let holder = format!("{} {}", who.holder, action.name());
    match action {
        Action::Add(paths) => {
            let mut s = Session::open(ws, who.session)?;
            s.set_holder(&holder);
            Ok(Outcome::Added(s.add(&paths)?))
        }
        Action::List => Ok(Outcome::Sessions {
            sessions: Session::list(ws)?,
        }),
        Action::Drop(name) => {
            Session::drop_session(ws, &name)?;
            Ok(Outcome::Dropped(vec![name]))
        }
        action => run(ws, &mut existing(ws, who, &holder)?, None, action),
    }
}

/// What [`act_unless_changed`] did.
#[derive(Debug)]
pub enum Checked {
    /// Taking the lock finished an interrupted transaction: what was shown
    /// may be out of date, so nothing else was done.
    Recovered(Recovery),
    /// The check found the session changed since it was shown; why.
    Changed(String),
    /// The action ran.
    Done(Outcome),
}

/// Runs `action` if the session still shows what the person saw: the
/// workspace lock is taken before `changed` looks, so no other accept
/// lands between the check and the action. Nothing is done when a lock is
/// busy, so the action can be tried again.
pub fn act_unless_changed(
    ws: &Workspace,
    who: &Actor<'_>,
    action: Action,
    changed: &dyn Fn(&Session<'_>) -> Result<Option<String>, mend_pending::Error>,
) -> Result<Checked, Error> {
    let (lock, recovered) = crate::lock_recovered(ws).map_err(pending_lock)?;
    if let Some(r) = recovered {
        return Ok(Checked::Recovered(r));
    }
    let mut s = existing(ws, who, &format!("{} {}", who.holder, action.name()))?;
    if let Some(why) = changed(&s)? {
        return Ok(Checked::Changed(why));
    }
    Ok(Checked::Done(run(ws, &mut s, Some(&lock), action)?))
}

/// Runs an action on an existing session; `held` is the workspace lock
/// when the caller holds it (accept takes it otherwise).
fn run(
    ws: &Workspace,
    s: &mut Session<'_>,
    held: Option<&Lock>,
    action: Action,
) -> Result<Outcome, Error> {
    Ok(match action {
        Action::Status => Outcome::Status(s.report()?.into()),
        Action::Accept { selection, markers } => {
            let taken;
            let lock = match held {
                Some(lock) => lock,
                None => {
                    taken = crate::lock_recovered(ws).map_err(pending_lock)?.0;
                    &taken
                }
            };
            let sel = &selection;
            let accepted = s.accept_with(lock, &sel.paths, &sel.hunks, markers, guard(sel))?;
            Outcome::Accepted { accepted }
        }
        Action::Reject(sel) => Outcome::Rejected {
            rejected: s.reject_with(&sel.paths, &sel.hunks, guard(&sel))?,
        },
        Action::Sync(paths) => {
            let done = s.sync(&paths)?;
            let skipped = done.skipped.into_iter();
            Outcome::Synced {
                synced: done.synced,
                skipped: skipped.map(|(path, why)| Skipped { path, why }).collect(),
            }
        }
        Action::Diff { paths, against } => Outcome::Diff(diff(s, &paths, against)?),
        Action::Output(path) => {
            let snap = s.seen(&path)?;
            Outcome::Output {
                path: snap.rel,
                text: snap.file.map(|f| f.text),
            }
        }
        Action::RetryContext => Outcome::RetryContext {
            retry_context: s.retry_context()?,
            session: s.name().to_owned(),
        },
        Action::Add(_) | Action::List | Action::Drop(_) => {
            return Err(Error::Usage(format!(
                "`{}` does not act on one session",
                action.name()
            )));
        }
    })
}

/// The actor's session, which must exist, naming `holder` in its lock.
fn existing<'w>(ws: &'w Workspace, who: &Actor<'_>, holder: &str) -> Result<Session<'w>, Error> {
    let mut s = Session::existing(ws, who.session)?;
    s.set_holder(holder);
    if let Some(policy) = who.merge {
        s.set_merge_policy(policy);
    }
    Ok(s)
}

/// The diff, recorded as what was shown: hunks are then picked by these
/// numbers.
fn diff(s: &Session<'_>, paths: &[String], against: Against) -> Result<Diff, Error> {
    let mut text = String::new();
    let mut versions = BTreeMap::new();
    let mut files = Vec::new();
    let status = s.status()?;
    for f in s.diff_files(paths, against, true)? {
        if let Some(v) = &f.version {
            let path = mend_core::text::escape_controls(&f.path);
            text.push_str(&format!("# {path}: version {v}\n"));
            versions.insert(f.path.clone(), v.clone());
        }
        text.push_str(&f.text);
        if let Some(line) = status.iter().find(|l| l.path == f.path) {
            let mut file = ReviewFile::from(line.clone());
            // Against the file now, the hunks are numbered only while it
            // is as the model saw it; the count is the diff's.
            file.hunks = if f.version.is_some() {
                f.hunks.len()
            } else {
                0
            };
            files.push(FileDiff::pending(file, f));
        }
    }
    Ok(Diff {
        diff: text,
        versions,
        files,
    })
}

/// The session's files and letters, an empty list when there is no such
/// session yet (MCP's `pending_status`: a model is not refused for asking
/// before proposing).
pub fn status_or_empty(ws: &Workspace, session: &str) -> Result<Status, Error> {
    match Session::existing(ws, session) {
        Ok(s) => Ok(s.report()?.into()),
        Err(mend_pending::Error::NoSession(_)) => Ok(Status {
            session: session.to_owned(),
            files: Vec::new(),
            streaming: Vec::new(),
        }),
        Err(e) => Err(e.into()),
    }
}

/// One file as a review screen shows it: its diff from the context
/// (`None` when it has no output) and, when accepting it would merge with
/// local changes, the merge's text and its conflict count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    /// The file and its hunks.
    pub diff: Option<FileDiff>,
    /// The three-way merge an accept would write.
    pub merge: Option<(String, usize)>,
}

/// How `path` of the session shows now (nothing is recorded as shown).
pub fn shown(s: &Session<'_>, path: &str) -> Result<Shown, mend_pending::Error> {
    let status = s.status()?;
    let diff = s
        .diff_files(&[path.to_owned()], Against::Context, false)?
        .into_iter()
        .next()
        .and_then(|d| {
            let line = status.iter().find(|l| l.path == d.path)?;
            Some(FileDiff::pending(ReviewFile::from(line.clone()), d))
        });
    Ok(Shown {
        diff,
        merge: s.merge_preview(path)?,
    })
}

/// [`shown`] of `path` in the named session.
pub fn show(ws: &Workspace, session: &str, path: &str) -> Result<Shown, Error> {
    Ok(shown(&Session::existing(ws, session)?, path)?)
}

/// The session's index file, which every change to the session replaces:
/// what a screen watches (see [`crate::review::stamp`]).
pub fn index_path(ws: &Workspace, session: &str) -> Result<std::path::PathBuf, Error> {
    Ok(Session::existing(ws, session)?.index_path())
}

/// The requests coming into the session now (see [`Status::streaming`]).
pub fn streaming(ws: &Workspace, session: &str) -> Result<Vec<String>, Error> {
    Ok(Session::existing(ws, session)?.streaming()?)
}
