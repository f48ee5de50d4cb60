//! Turns as every front-end offers them (`mend turn`, and the agents'
//! hooks in [`hook`]): one action type, one outcome type whose JSON is
//! each action's one shape, and the text a person reads.

pub mod hook;

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use mend_checkpoint::turn::{
    BeginOptions, Begun, Ended, HeadMoved, IgnoredFile, Selection, TurnAccepted, TurnInfo,
    TurnRejected, TurnSummary, TurnUndone, Turns,
};
use mend_core::report::Status;
use mend_core::text::escape_controls as esc;
use serde::Serialize;

use crate::Error;
use crate::review::{FileDiff, ReviewFile};

/// A turn action.
#[derive(Debug, Clone)]
pub enum Action {
    /// Checkpoint the worktree as a new turn's start.
    Begin(BeginOptions),
    /// What changed since the start; with `ignored`, ignored files
    /// modified since too.
    Status {
        /// List ignored files modified during the turn.
        ignored: bool,
    },
    /// How many files changed, by letter, reading no file's content (an
    /// agent's hook after each reply).
    Summary,
    /// The diffs of files under these paths (all when none), hunks
    /// numbered.
    Diff(Vec<String>),
    /// Put back the start's content of files or hunks.
    Reject(Selection),
    /// Mark files or hunks reviewed.
    Accept(Selection),
    /// Undo the last reject or accept, path by path.
    Undo,
    /// Close the turn.
    End,
}

impl Action {
    /// The action's name, as `mend turn` spells it.
    pub fn name(&self) -> &'static str {
        match self {
            Action::Begin(_) => "begin",
            Action::Status { .. } => "status",
            Action::Summary => "summary",
            Action::Diff(_) => "diff",
            Action::Reject(_) => "reject",
            Action::Accept(_) => "accept",
            Action::Undo => "undo",
            Action::End => "end",
        }
    }
}

/// What an action did; each serialises as that action's one JSON shape.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum Outcome {
    /// `begin`.
    Begun(Begun),
    /// `status`.
    Status(TurnStatus),
    /// `summary` (the hook's counts).
    Summary(TurnSummary),
    /// `diff`.
    Diff(TurnDiff),
    /// `reject`.
    Rejected(TurnRejected),
    /// `accept`.
    Accepted(TurnAccepted),
    /// `undo`.
    Undone(TurnUndone),
    /// `end`.
    Ended(Ended),
}

/// `status`'s outcome: the turn's files as the review model has them.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TurnStatus {
    /// The open turn.
    pub turn: TurnInfo,
    /// Set when HEAD moved during the turn; the changes are still those
    /// since the turn's start.
    pub head_moved: Option<HeadMoved>,
    /// What changed since the start (less what was accepted), by path.
    pub files: Vec<ReviewFile>,
    /// With `--ignored`: ignored files modified since the turn began.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ignored: Option<Vec<IgnoredFile>>,
}

/// `diff`'s outcome: each file with its numbered hunks.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TurnDiff {
    /// The open turn.
    pub turn: TurnInfo,
    /// Set when HEAD moved during the turn.
    pub head_moved: Option<HeadMoved>,
    /// The files' diffs.
    pub files: Vec<FileDiff>,
}

/// The root of a turn command run in `dir` without `--root`: the one
/// root rule's (see [`crate::roots::worktree_of`]).
pub fn default_root(dir: &Path) -> std::path::PathBuf {
    crate::roots::worktree_of(dir)
}

/// The open turn's state file of `root`, which every turn action that
/// changes the turn replaces: what a screen watches (see
/// [`crate::review::stamp`]).
pub fn state_path(root: &Path) -> std::path::PathBuf {
    mend_checkpoint::turn::state_path(root)
}

/// Runs `action` on the turn of `root`, waiting at most `lock_timeout`
/// for another mend writing there; `progress` is told how many files a
/// `begin`'s snapshot has examined.
pub fn act(
    root: &Path,
    action: &Action,
    lock_timeout: Duration,
    progress: &mut dyn FnMut(usize),
) -> Result<Outcome, Error> {
    // Only a begin makes a first checkpoint, so only it may be forced.
    let force = matches!(action, Action::Begin(opts) if opts.force);
    run(
        &Turns::open_forced(root, lock_timeout, force)?,
        action,
        progress,
    )
}

/// Runs `action` on `turns` (a long-running process's, whose snapshots
/// a watcher narrows; see [`crate::Watched::turn`]).
pub fn run(
    turns: &Turns,
    action: &Action,
    progress: &mut dyn FnMut(usize),
) -> Result<Outcome, Error> {
    Ok(match action {
        Action::Begin(opts) => Outcome::Begun(turns.begin(opts, progress)?),
        Action::Status { ignored } => {
            let s = turns.status(*ignored)?;
            Outcome::Status(TurnStatus {
                files: s.files.iter().map(ReviewFile::from).collect(),
                turn: s.turn,
                head_moved: s.head_moved,
                ignored: s.ignored,
            })
        }
        Action::Summary => Outcome::Summary(turns.summary()?),
        Action::Diff(paths) => {
            let d = turns.diff(paths)?;
            Outcome::Diff(TurnDiff {
                turn: d.turn,
                head_moved: d.head_moved,
                files: d.files.into_iter().map(FileDiff::from).collect(),
            })
        }
        Action::Reject(sel) => Outcome::Rejected(turns.reject(sel)?),
        Action::Accept(sel) => Outcome::Accepted(turns.accept(sel)?),
        Action::Undo => Outcome::Undone(turns.undo()?),
        Action::End => Outcome::Ended(turns.end()?),
    })
}

impl Outcome {
    /// The outcome for a person.
    pub fn text(&self) -> String {
        match self {
            Outcome::Begun(b) => begun(b),
            Outcome::Status(s) => status(s),
            Outcome::Summary(s) => format!("{}\n", summary_line(s)),
            Outcome::Diff(d) => d.files.iter().map(|f| f.diff.as_str()).collect(),
            Outcome::Rejected(r) => rejected(r),
            Outcome::Accepted(a) => a
                .accepted
                .iter()
                .map(|a| format!("accepted {}\n", acted(a)))
                .collect(),
            Outcome::Undone(u) => undone(u),
            Outcome::Ended(e) => ended(e),
        }
    }
}

fn begun(b: &Begun) -> String {
    let mut out = String::new();
    if let Some(why) = &b.replaced {
        let _ = writeln!(out, "replaced an unreadable turn state: {why}");
    }
    if let Some(prev) = &b.ended {
        let _ = writeln!(
            out,
            "ended the open turn {} first; its start stays checkpoint {}",
            prev.id, prev.start
        );
    }
    let _ = writeln!(out, "{}", b.turn.id);
    out
}

fn ended(e: &Ended) -> String {
    match &e.turn {
        Some(t) => format!(
            "ended turn {}; its start stays checkpoint {} (`mend checkpoint restore {}` rewinds the whole turn, undoably)\n",
            t.id, t.start, t.start
        ),
        None => "removed an unreadable turn state; `mend checkpoint list` still shows the turn's start (labelled `turn start`)\n".to_owned(),
    }
}

/// One line per changed file: its letter, path and what else to know.
pub fn file_line(f: &ReviewFile) -> String {
    let mut line = format!("{} {}", f.status, esc(&f.path));
    if let Some(from) = &f.from {
        let _ = write!(line, " (from {})", esc(from));
    }
    let mut notes = Vec::new();
    let content = f.content.as_ref();
    if let Some(c) = content.and_then(|c| c.change.as_ref()) {
        notes.push(c.clone());
    }
    if let Some(c) = content.filter(|c| c.binary || c.large) {
        let what = if c.large { "large" } else { "binary" };
        notes.push(match (c.size_before, c.size) {
            (Some(b), Some(n)) => format!("{what}, {b} → {n} bytes"),
            (_, Some(n)) => format!("{what}, {n} bytes"),
            _ => what.to_owned(),
        });
    } else if f.hunks > 0 {
        notes.push(format!(
            "{} hunk{}",
            f.hunks,
            if f.hunks == 1 { "" } else { "s" }
        ));
    }
    if !notes.is_empty() {
        let _ = write!(line, "  [{}]", notes.join(", "));
    }
    line
}

fn status(s: &TurnStatus) -> String {
    let mut out = String::new();
    let n = s.files.len();
    let _ = writeln!(
        out,
        "turn {}: {n} change{} since it began{}",
        s.turn.id,
        if n == 1 { "" } else { "s" },
        s.turn
            .label
            .as_ref()
            .map_or(String::new(), |l| format!(" ({})", esc(l)))
    );
    for f in &s.files {
        let _ = writeln!(out, "{}", file_line(f));
    }
    for f in s.ignored.iter().flatten() {
        let _ = writeln!(
            out,
            "! {}  [ignored, {} bytes; no diff]",
            esc(&f.path),
            f.size
        );
    }
    if let Some(m) = &s.head_moved {
        let short = |h: &Option<String>| {
            h.as_deref()
                .map_or("none".to_owned(), |h| h[..h.len().min(12)].to_owned())
        };
        let _ = writeln!(
            out,
            "HEAD moved during the turn ({} → {}: a commit, checkout or stash); the changes are still those since the turn's start",
            short(&m.from),
            short(&m.to)
        );
    }
    if n > 0 {
        out.push_str(
            "Every change since the turn began is listed, whoever made it: your own edits too.\n",
        );
    }
    out
}

fn acted(a: &mend_checkpoint::turn::Acted) -> String {
    let mut s = format!("{} {}", a.status, esc(&a.path));
    if !a.hunks.is_empty() {
        let list: Vec<String> = a.hunks.iter().map(usize::to_string).collect();
        let _ = write!(
            s,
            " (hunk{} {})",
            if a.hunks.len() == 1 { "" } else { "s" },
            list.join(",")
        );
    }
    s
}

fn rejected(r: &TurnRejected) -> String {
    let mut out = String::new();
    for a in &r.rejected {
        let _ = writeln!(out, "rejected {}", acted(a));
    }
    for c in &r.changes {
        let _ = writeln!(out, "  {} {}", c.status, esc(&c.path));
    }
    for l in &r.left {
        let _ = writeln!(out, "not rejected {}: {}", esc(&l.path), l.reason);
    }
    let _ = writeln!(
        out,
        "safety checkpoint {}; `mend turn undo` undoes this reject, keeping every change made after it",
        r.safety.id
    );
    out
}

fn undone(u: &TurnUndone) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "undid the last {}", u.undone);
    for c in &u.changes {
        let _ = writeln!(out, "  {} {}", c.status, esc(&c.path));
    }
    for p in &u.reopened {
        let _ = writeln!(out, "  back in review: {}", esc(p));
    }
    for l in &u.left {
        let _ = writeln!(out, "not undone {}: {}", esc(&l.path), l.reason);
    }
    if let Some(s) = &u.safety {
        let _ = writeln!(
            out,
            "safety checkpoint {} (`mend checkpoint restore {}` undoes this undo)",
            s.id, s.id
        );
    }
    out
}

/// A one-line summary of a status, for an agent's hook to show the
/// person: how many files changed, by letter.
pub fn summary(s: &TurnStatus) -> String {
    let mut letters: Vec<(Status, usize)> = Vec::new();
    for f in &s.files {
        match letters.iter_mut().find(|(l, _)| *l == f.status) {
            Some((_, n)) => *n += 1,
            None => letters.push((f.status, 1)),
        }
    }
    letters.sort();
    summary_line(&TurnSummary {
        turn: s.turn.clone(),
        head_moved: s.head_moved.clone(),
        files: s.files.len(),
        letters,
    })
}

/// [`summary`]'s line from the counts alone (`mend_checkpoint`'s
/// `Turns::summary`, which reads no file's content).
pub fn summary_line(s: &TurnSummary) -> String {
    if s.files == 0 {
        return format!("mend: turn {}: no changes", s.turn.id);
    }
    let by: Vec<String> = s.letters.iter().map(|(l, n)| format!("{n} {l}")).collect();
    let mut line = format!(
        "mend: turn {}: {} file{} changed ({}); review with `mend turn diff`, undo with `mend turn reject`",
        s.turn.id,
        s.files,
        if s.files == 1 { "" } else { "s" },
        by.join(", ")
    );
    if s.head_moved.is_some() {
        line.push_str("; HEAD moved during the turn");
    }
    line
}
