//! Checkpoints as the front-ends offer them, and `--stage`: the written
//! files added to git's index.

use std::path::Path;

use mend_checkpoint::{
    Checkpoint, Checkpoints, CreateOptions, FileChange, Preview, RestoreOptions, Restored,
};
use mend_core::ApplyReport;
use serde::Serialize;

use crate::Error;

/// `checkpoint_create`'s result: the checkpoint made (its fields), or
/// with `dry_run` what it would hold.
#[derive(Debug, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct CreateResult {
    /// The checkpoint made.
    #[serde(flatten)]
    pub checkpoint: Option<Checkpoint>,
    /// Set for a dry run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
    /// For a dry run: the files it would hold and those it would skip.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub would_hold: Option<Preview>,
    /// Where the checkpoints are kept, when the root is no git repository
    /// (its shadow repository, `.mend/shadow.git`): said, never silent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub store: Option<String>,
    /// How the snapshot looked at the worktree, when a watcher (of `mend
    /// mcp`, `mend editor` or `mend daemon`) could narrow it: `narrowed`
    /// (only the paths it saw change) or `full`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scan: Option<crate::ScanKind>,
}

/// `checkpoint_list`'s result. MCP's structured content must be an
/// object, so the list is named; `mend checkpoint list --json` prints the
/// list itself.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ListResult {
    /// The checkpoints, newest first.
    pub checkpoints: Vec<Checkpoint>,
}

/// Creates a checkpoint, or with `dry_run` says what it would hold;
/// `progress` is told how many files the snapshot has examined.
pub fn create(
    cps: &Checkpoints,
    opts: &CreateOptions,
    dry_run: bool,
    progress: &mut dyn FnMut(usize),
) -> Result<CreateResult, Error> {
    let store = cps.is_shadow().then(|| {
        cps.store()
            .to_string_lossy()
            .trim_end_matches('/')
            .to_owned()
    });
    Ok(if dry_run {
        CreateResult {
            checkpoint: None,
            dry_run: Some(true),
            would_hold: Some(cps.preview(opts)?),
            store,
            scan: None,
        }
    } else {
        CreateResult {
            checkpoint: Some(cps.create(opts, progress)?),
            dry_run: None,
            would_hold: None,
            store,
            scan: None,
        }
    })
}

/// The checkpoints, newest first.
pub fn list(cps: &Checkpoints) -> Result<ListResult, Error> {
    Ok(ListResult {
        checkpoints: cps.list()?,
    })
}

/// The files checkpoint `id` (or a unique prefix) changed compared with
/// the one before it.
pub fn show(cps: &Checkpoints, id: &str) -> Result<Vec<FileChange>, Error> {
    Ok(cps.show(id)?)
}

/// A unified diff from checkpoint `id` to the worktree now.
pub fn diff(cps: &Checkpoints, id: &str) -> Result<DiffResult, Error> {
    Ok(DiffResult {
        diff: cps.diff(id)?,
    })
}

/// Deletes checkpoint `id`; returns it.
pub fn drop(cps: &Checkpoints, id: &str) -> Result<Checkpoint, Error> {
    Ok(cps.drop(id)?)
}

/// Why a restore is refused in review mode.
pub const NO_RESTORE_IN_REVIEW: &str = "checkpoint_restore is refused in review mode (`mend mcp --pending`): a restore writes the worktree directly, and in review mode writing tools only propose. A dry run still lists what it would change; ask the person to run `mend checkpoint restore ID` if it is needed.";

/// Restores a checkpoint. In review mode (`review`), only a dry run is
/// allowed: a restore would write the worktree directly.
pub fn restore(
    cps: &Checkpoints,
    id: &str,
    opts: &RestoreOptions,
    review: bool,
) -> Result<Restored, Error> {
    if review && !opts.dry_run {
        return Err(Error::Usage(NO_RESTORE_IN_REVIEW.into()));
    }
    Ok(cps.restore_with(id, opts)?)
}

/// Deletes old checkpoints: beyond the newest `keep`, or older than
/// `older_than`; one of them is needed.
pub fn gc(
    cps: &Checkpoints,
    keep: Option<usize>,
    older_than: Option<std::time::Duration>,
) -> Result<Vec<Checkpoint>, Error> {
    if keep.is_none() && older_than.is_none() {
        return Err(Error::Usage(
            "gc needs --keep N or --older-than DURATION".into(),
        ));
    }
    Ok(cps.gc(keep, older_than)?)
}

/// The paths a written report changed, as git's index takes them: added
/// or modified, and deleted (a rename deletes its old name).
pub fn stage_list(report: &ApplyReport) -> (Vec<String>, Vec<String>) {
    let (mut changed, mut deleted) = (Vec::new(), Vec::new());
    for f in &report.files {
        match f.status {
            mend_core::Status::Deleted => deleted.push(f.path.clone()),
            mend_core::Status::Renamed => {
                deleted.push(f.path.clone());
                changed.extend(f.renamed_to.clone());
            }
            _ => changed.push(f.path.clone()),
        }
    }
    (changed, deleted)
}

/// Adds paths to the user's git index (`mend apply --stage`).
pub fn stage(root: &Path, added_or_modified: &[String], deleted: &[String]) -> Result<(), Error> {
    let git = |what| move |source| Error::Stage { what, source };
    let repo = git2::Repository::open(root)
        .map_err(git("--stage needs the root to be a git repository"))?;
    let mut index = repo.index().map_err(git("cannot read git's index"))?;
    for p in added_or_modified {
        index
            .add_path(Path::new(p))
            .map_err(git("cannot add a written file to git's index"))?;
    }
    for p in deleted {
        index
            .remove_path(Path::new(p))
            .map_err(git("cannot remove a deleted file from git's index"))?;
    }
    index.write().map_err(git("cannot write git's index"))
}

/// `mend checkpoint diff --json`: a unified diff from a checkpoint to the
/// worktree now.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct DiffResult {
    /// The diff.
    pub diff: String,
}
