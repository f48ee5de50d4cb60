//! What the turn's operations return, and how a changed file is
//! described: its letter, sizes, whether it is text, its hunks.

use git2::Oid;
use mend_core::report::Status;
use mend_merge::hunks;
use serde::Serialize;

use super::Turns;
use super::changes::{Entry, Side};
use crate::{Checkpoint, Error, FileChange, git};

/// A turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct TurnInfo {
    /// The turn's id (its start checkpoint's).
    pub id: String,
    /// The label given at `begin`.
    pub label: Option<String>,
    /// The start checkpoint: `mend checkpoint restore` with it rewinds the
    /// whole turn.
    pub start: String,
    /// HEAD when the turn began.
    pub head: Option<String>,
    /// The agent's session, when a hook began it.
    pub session: Option<String>,
    /// The agent whose hook began it.
    pub agent: Option<String>,
    /// When it began, in seconds since the Unix epoch.
    pub time: i64,
}

/// `begin`'s outcome.
#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Begun {
    /// The turn begun.
    pub turn: TurnInfo,
    /// The turn that was open and was ended first.
    pub ended: Option<TurnInfo>,
    /// Why an unreadable state file was replaced (its start checkpoint, if
    /// any, is still listed by `mend checkpoint list`).
    pub replaced: Option<String>,
}

/// `end`'s outcome.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Ended {
    /// The turn ended (`None` when its state file was unreadable and was
    /// removed).
    pub turn: Option<TurnInfo>,
}

/// HEAD moved during the turn: a commit, a checkout, a stash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct HeadMoved {
    /// HEAD when the turn began.
    pub from: Option<String>,
    /// HEAD now.
    pub to: Option<String>,
}

/// One changed path of a turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct TurnFile {
    /// The path (for a deletion, the path that was).
    pub path: String,
    /// `M`, `A`, `D`, `R` (renamed, found by content) or `T` (type or
    /// mode changed).
    pub status: Status,
    /// For a rename, the path it had.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// For `T`, what it was and is: `file → link`, `file → folder`,
    /// `file → executable file`, …; for a repository of its own that
    /// appeared or went, `repository, not snapshotted`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change: Option<String>,
    /// Bytes now (for a deletion, at the start).
    pub size: Option<u64>,
    /// Bytes at the start, when it existed and its size changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size_before: Option<u64>,
    /// Not text (a NUL byte, or not UTF-8): listed without a diff.
    pub binary: bool,
    /// Over the diff limit, or too large to snapshot (then or now):
    /// listed without a diff (one too large to snapshot cannot be
    /// rejected).
    pub large: bool,
    /// How many hunks its diff has (0 without a text diff).
    pub hunks: usize,
    /// The version of its change: `reject`/`accept --seen` take it back.
    pub version: String,
}

/// An ignored file modified since the turn began (`status --ignored`):
/// no checkpoint holds it, so it has no diff and no reject.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct IgnoredFile {
    /// The path.
    pub path: String,
    /// Its size in bytes.
    pub size: u64,
}

/// `status`'s outcome.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TurnStatus {
    /// The open turn.
    pub turn: TurnInfo,
    /// Set when HEAD moved during the turn; the changes are still those
    /// since the turn's start.
    pub head_moved: Option<HeadMoved>,
    /// What changed since the start (less what was accepted), by path.
    pub files: Vec<TurnFile>,
    /// With `--ignored`: ignored files modified since the turn began.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ignored: Option<Vec<IgnoredFile>>,
}

/// `summary`'s outcome: counts only, for an agent's hook.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TurnSummary {
    /// The open turn.
    pub turn: TurnInfo,
    /// Set when HEAD moved during the turn.
    pub head_moved: Option<HeadMoved>,
    /// How many files changed since the start (less what was accepted).
    pub files: usize,
    /// How many of them have each letter, in the letters' order.
    pub letters: Vec<(Status, usize)>,
}

/// One changed file's diff.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ChangeDiff {
    /// The file, as `status` lists it.
    #[serde(flatten)]
    pub file: TurnFile,
    /// Its unified diff, hunks numbered (`hunk k`) as `--hunk` takes them;
    /// for a file without a text diff, a line saying why.
    pub diff: String,
    /// Its hunks as data, numbered as `diff` shows them (none without a
    /// text diff).
    #[serde(skip)]
    pub shown: Vec<mend_core::diff::DiffHunk>,
}

/// `diff`'s outcome.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TurnDiff {
    /// The open turn.
    pub turn: TurnInfo,
    /// Set when HEAD moved during the turn.
    pub head_moved: Option<HeadMoved>,
    /// The files' diffs.
    pub files: Vec<ChangeDiff>,
}

/// What `reject` or `accept` did to one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Acted {
    /// The file.
    pub path: String,
    /// Its letter before.
    pub status: Status,
    /// The hunks acted on, as the diff numbered them (empty: the whole
    /// file).
    pub hunks: Vec<usize>,
}

/// `reject`'s outcome.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TurnRejected {
    /// The checkpoint of the worktree just before: restoring it undoes
    /// the reject exactly.
    pub safety: Checkpoint,
    /// What was rejected.
    pub rejected: Vec<Acted>,
    /// The files written, created or deleted.
    pub changes: Vec<FileChange>,
    /// Files of the selection left as they are, each with why (a name
    /// mend's paths cannot carry).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub left: Vec<crate::Left>,
}

/// `undo`'s outcome: the last reject or accept, undone path by path.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TurnUndone {
    /// What was undone: `reject` or `accept`.
    pub undone: String,
    /// For a reject's undo, the checkpoint of the worktree just before
    /// it (restoring it undoes the undo).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub safety: Option<Checkpoint>,
    /// The files written, created or deleted (a reject's undo).
    pub changes: Vec<FileChange>,
    /// The paths whose review was reopened (an accept's undo).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reopened: Vec<String>,
    /// Paths left as they are, each with why (changed since the action).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub left: Vec<crate::Left>,
}

/// `accept`'s outcome.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TurnAccepted {
    /// What was marked reviewed (nothing was written).
    pub accepted: Vec<Acted>,
}

/// What an entry's side is, in words.
fn kind(side: Option<Side>) -> &'static str {
    match side.map(|s| s.1) {
        None => "folder",
        Some(0o120000) => "link",
        Some(0o100755) => "executable file",
        Some(0o160000) => "submodule",
        Some(_) => "file",
    }
}

/// One side of an entry, read once: `status` and `diff` ask for its size,
/// its text and whether it is binary, and each reading of a loose object
/// costs an open and an inflate.
#[derive(Default)]
pub(super) struct Loaded {
    /// The blob's size (none: no side).
    size: Option<u64>,
    /// Its text, when it is a regular file within the diff limit, with no
    /// NUL byte and in UTF-8.
    text: Option<String>,
    /// A regular file within the diff limit that is not text.
    binary: bool,
}

impl Turns {
    /// A side's size (from its header) and, for a regular file within the
    /// diff limit, its bytes, read once.
    pub(super) fn load(&self, side: Option<Side>) -> Result<Loaded, Error> {
        let Some((oid, mode)) = side else {
            return Ok(Loaded::default());
        };
        let odb = self
            .cps
            .repo
            .odb()
            .map_err(git("opening the object store"))?;
        let (size, _) = odb.read_header(oid).map_err(git("reading a file's size"))?;
        let size = size as u64;
        if mode == 0o120000 || size > super::DIFF_LIMIT {
            return Ok(Loaded {
                size: Some(size),
                ..Loaded::default()
            });
        }
        let bytes = self.blob(oid)?;
        let text = if bytes[..bytes.len().min(8000)].contains(&0) {
            None
        } else {
            String::from_utf8(bytes).ok()
        };
        let file = mode == 0o100644 || mode == 0o100755;
        Ok(Loaded {
            size: Some(size),
            binary: file && text.is_none(),
            text,
        })
    }

    /// Both sides of an entry, each read once.
    pub(super) fn sides(&self, e: &Entry) -> Result<(Loaded, Loaded), Error> {
        Ok((self.load(e.old)?, self.load(e.new)?))
    }

    /// Both sides as text, for an entry that has a line diff: the missing
    /// side of an addition or deletion is empty; `None` when a side that
    /// exists is not text, or the entry is too large.
    pub(super) fn texts(&self, e: &Entry) -> Result<Option<(String, String)>, Error> {
        let (old, new) = self.sides(e)?;
        Ok(texts(e, &old, &new))
    }

    /// An entry as `status` lists it.
    pub(super) fn file(&self, e: &Entry) -> Result<TurnFile, Error> {
        let (old, new) = self.sides(e)?;
        Ok(file(e, &old, &new))
    }

    /// An entry's diff, and the fingerprints of its hunks (`None` when it
    /// has no text diff).
    pub(super) fn file_diff(&self, e: &Entry) -> Result<(ChangeDiff, Option<Vec<String>>), Error> {
        let (old, new) = self.sides(e)?;
        let file = file(e, &old, &new);
        let Some((old, new)) = texts(e, &old, &new) else {
            let why = if file.large {
                "large file"
            } else if file.binary {
                "binary file"
            } else {
                "no line diff"
            };
            let sizes = match (file.size_before, file.size) {
                (Some(b), Some(n)) => format!("{b} → {n} bytes"),
                (None, Some(n)) => format!("{n} bytes"),
                _ => String::new(),
            };
            let mut diff = format!("{} {}: {why}", file.status, e.path);
            if let Some(c) = &file.change {
                diff.push_str(&format!(", {c}"));
            }
            for (when, side) in [("was", e.old), ("is", e.new)] {
                if let Some((oid, 0o120000)) = side {
                    let to = String::from_utf8_lossy(&self.blob(oid)?).into_owned();
                    diff.push_str(&format!("; {when} a link to {to}"));
                }
            }
            if !sizes.is_empty() {
                diff.push_str(&format!(" ({sizes})"));
            }
            diff.push('\n');
            return Ok((
                ChangeDiff {
                    file,
                    diff,
                    shown: Vec::new(),
                },
                None,
            ));
        };
        let from = e.from.as_deref().unwrap_or(&e.path);
        let mut diff = String::new();
        if let (Some(o), Some(n)) = (e.old, e.new)
            && o.1 != n.1
        {
            diff.push_str(&format!(
                "diff --git a/{from} b/{}\nold mode {:o}\nnew mode {:o}\n",
                e.path, o.1, n.1
            ));
        }
        let shown = mend_core::diff::render_file(
            (from, e.old.map(|_| old.as_str())),
            (&e.path, e.new.map(|_| new.as_str())),
            true,
        );
        diff.push_str(&shown.text());
        let shown = shown.hunks;
        Ok((
            ChangeDiff { file, diff, shown },
            Some(fingerprints(&old, &new)),
        ))
    }
}

/// Both sides as text (see [`Turns::texts`]).
fn texts(e: &Entry, old: &Loaded, new: &Loaded) -> Option<(String, String)> {
    text_of(e, old, new).map(|(a, b)| (a.to_owned(), b.to_owned()))
}

fn text_of<'l>(e: &Entry, old: &'l Loaded, new: &'l Loaded) -> Option<(&'l str, &'l str)> {
    if e.left_out.any() || (e.old.is_none() && e.new.is_none()) {
        return None;
    }
    let text = |present: bool, l: &'l Loaded| match present {
        false => Some(""),
        true => l.text.as_deref(),
    };
    text(e.old.is_some(), old).zip(text(e.new.is_some(), new))
}

/// An entry as `status` lists it, from its sides.
fn file(e: &Entry, old: &Loaded, new: &Loaded) -> TurnFile {
    let hunks = text_of(e, old, new).map_or(0, |(a, b)| hunks::count(a, b));
    let before = e.left_out.then.or(old.size);
    let now = e.left_out.now.or(e.left_out.ignored).or(new.size);
    let large = e.left_out.then.is_some()
        || e.left_out.now.is_some()
        || now.or(before).is_some_and(|s| s > super::DIFF_LIMIT);
    let binary = !large && (old.binary || new.binary);
    TurnFile {
        path: e.path.clone(),
        status: e.status,
        from: e.from.clone(),
        change: if e.left_out.repository {
            Some("repository, not snapshotted".to_owned())
        } else if e.left_out.ignored.is_some() {
            Some("ignored now, so its content now is not snapshotted".to_owned())
        } else if let Some(special) = e.left_out.special {
            Some(format!("{} → {special}", kind(e.old)))
        } else {
            (e.status == Status::TypeChanged).then(|| format!("{} → {}", kind(e.old), kind(e.new)))
        },
        size: now.or(before),
        size_before: before.filter(|b| now.is_some_and(|n| n != *b)),
        binary,
        large,
        hunks,
        version: version(e),
    }
}

/// An entry's version: what its two sides are.
pub(super) fn version(e: &Entry) -> String {
    let side = |s: Option<Side>| s.map_or("-".to_owned(), |(o, m)| format!("{o}:{m:o}"));
    let mut text = format!(
        "{}>{}>{}>{}",
        e.from.as_deref().unwrap_or(""),
        side(e.old),
        e.path,
        side(e.new)
    );
    // No tree holds a side left out: its sizes stand for it.
    if e.left_out.any() {
        text.push_str(&format!(">{:?}", e.left_out));
    }
    mend_workspace::ContentHash::of(text.as_bytes()).short(12)
}

/// Each hunk's fingerprint, in order: the lines it replaces and the lines
/// replacing them, and how many identical hunks come before it. A hunk
/// keeps its fingerprint while its region is untouched, whatever changes
/// elsewhere in the file.
pub(super) fn fingerprints(old: &str, new: &str) -> Vec<String> {
    let (a, b) = (mend_core::diff::lines(old), mend_core::diff::lines(new));
    let mut seen: Vec<String> = Vec::new();
    hunks::regions(old, new)
        .into_iter()
        .map(|(o, n)| {
            let (o, n) = (a[o].concat(), b[n].concat());
            let body = format!("{}:{o}{}:{n}", o.len(), n.len());
            let same = seen.iter().filter(|s| **s == body).count();
            seen.push(body.clone());
            mend_workspace::ContentHash::of(format!("{same}:{body}").as_bytes()).short(16)
        })
        .collect()
}

/// The id of a blob written for the review base.
pub(super) fn blob_id(oid: Oid) -> String {
    oid.to_string()
}
