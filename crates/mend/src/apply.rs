//! `mend apply`: parse a response, plan every file, commit all or nothing
//! (or, with `--partial`, what succeeded) through one workspace transaction.

use std::collections::{BTreeMap, HashMap};
use std::io::Write as _;

use mend_core::formats::{Entry, Parsed};
use mend_core::report::FileSummary;
use mend_core::{
    ApplyReport, Edit, EditOp, EditReport, Failure, FilePlan, PlanOptions, diff, plan_file,
    render_retry_context,
};
use mend_workspace::{Base, Change, Lock, Snapshot, Workspace};

/// A step run under the apply's lock right before it writes (a
/// checkpoint); returns an id for the log line.
pub type BeforeWrite<'a> = Box<dyn Fn(&Lock) -> Result<String, String> + 'a>;

/// Options of one apply run.
#[derive(Default)]
pub struct ApplyOptions<'a> {
    /// Plan only.
    pub dry_run: bool,
    /// Write the edits that succeed, skipping a file's edits after its first
    /// failure.
    pub partial: bool,
    /// Hashes the edits were based on, by normalized path.
    pub expect: HashMap<String, String>,
    /// Runs right before files are written (a checkpoint); its id goes in
    /// the report's log line.
    /// It runs under the workspace lock the apply holds.
    pub before_write: Option<BeforeWrite<'a>>,
    /// Plans made while the response streamed in, by normalized path; used
    /// when the file still has the content they were made against.
    pub preplanned: HashMap<String, Preplanned>,
}

/// A file's plan made before the lock was taken.
pub struct Preplanned {
    /// The hash of the content it was made against (`None`: absent).
    pub hash: Option<String>,
    /// The plan.
    pub plan: FilePlan,
}

/// Why an apply run could not produce a report.
#[derive(Debug)]
pub enum ApplyError {
    /// The input could not be parsed into edits (a model error: exit 1).
    Parse(mend_core::Error),
    /// The commit failed (a file changed under the lock, or I/O).
    Commit(mend_workspace::Error),
}

fn refuse_all(reports: &mut Vec<EditReport>, edits: &[(usize, &Edit)], f: &mend_workspace::Error) {
    for &(i, e) in edits {
        reports.push(EditReport::failed(
            i,
            e,
            Failure::new(f.kind(), f.to_string(), f.fix()),
        ));
    }
}

/// Plans and (unless a dry run, or an edit failed) commits a parsed response.
pub fn run_parsed(
    ws: &Workspace,
    lock: &Lock,
    parsed: &Parsed,
    opts: &ApplyOptions<'_>,
) -> Result<ApplyReport, ApplyError> {
    // Group edits by normalized path, keeping input order within each path;
    // malformed blocks are failures of their own.
    let mut groups: BTreeMap<String, Vec<(usize, &Edit)>> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    let mut reports: Vec<EditReport> = Vec::new();
    for (i, entry) in parsed.entries.iter().enumerate() {
        match entry {
            Entry::Edit(e) => {
                let key = ws.normalize(&e.path).unwrap_or_else(|_| e.path.clone());
                if !groups.contains_key(&key) {
                    order.push(key.clone());
                }
                groups.entry(key).or_default().push((i, e));
            }
            Entry::Malformed(m) => reports.push(EditReport::malformed(i, m)),
        }
    }

    let plan_opts = PlanOptions {
        skip_after_failure: opts.partial,
        ..PlanOptions::default()
    };
    let mut planned: Vec<(Snapshot, FilePlan)> = Vec::new();
    for key in &order {
        let edits = &groups[key];
        let snap = match ws.read(&edits[0].1.path) {
            Ok(s) => s,
            // A file created where a folder is: the change-set check lets
            // it through only if the same response empties the folder.
            Err(mend_workspace::Error::NotAFile {
                path,
                kind: "a directory",
            }) if edits
                .iter()
                .all(|(_, e)| matches!(e.op, EditOp::Create { .. } | EditOp::WriteFile { .. })) =>
            {
                Snapshot {
                    path: ws.resolve(&path).unwrap_or_default(),
                    rel: path,
                    file: None,
                }
            }
            Err(f) => {
                refuse_all(&mut reports, edits, &f);
                continue;
            }
        };
        if let Some(expected) = opts.expect.get(&snap.rel) {
            let current = snap.text().map(|f| f.hash.as_str()).unwrap_or("absent");
            if current != expected {
                let now = snap.text().map_or("", |f| f.text.as_str());
                refuse_all(
                    &mut reports,
                    edits,
                    &ws.stale(&snap.rel, expected, None, now),
                );
                continue;
            }
        }
        let original = snap.text().map(|f| f.text.as_str());
        let now = snap.text().map(|f| f.hash.clone());
        let plan = match opts.preplanned.get(key) {
            Some(p) if p.hash == now => p.plan.clone(),
            _ => plan_file(&snap.rel, original, edits, &plan_opts),
        };
        if let Some(to) = &plan.new_path
            && let Err(f) = ws.resolve(to)
        {
            refuse_all(&mut reports, edits, &f);
            continue;
        }
        let mut plan = plan;
        reports.append(&mut plan.reports);
        planned.push((snap, plan));
    }
    reports.sort_by_key(|r| r.index);

    let ok = reports.iter().all(EditReport::is_ok);
    let mut files = Vec::new();
    let mut changes = Vec::new();
    for (snap, plan) in &planned {
        // In partial mode, a file is written with the edits that succeeded.
        let original = snap.text().map(|f| f.text.as_str());
        let Some(status) = plan.status(original) else {
            continue;
        };
        let display = &snap.rel;
        let base = snap
            .text()
            .map_or(Base::Absent, |f| Base::Hash(f.hash.clone()));
        let encoding = snap
            .text()
            .map_or(mend_workspace::Encoding::Utf8, |f| f.encoding);
        files.push(FileSummary {
            path: display.clone(),
            status,
            renamed_to: plan.new_path.clone(),
            diff: diff::unified(
                original.map(|_| display.as_str()),
                plan.content
                    .as_ref()
                    .map(|_| plan.new_path.as_deref().unwrap_or(display)),
                original.unwrap_or(""),
                plan.content.as_deref().unwrap_or(""),
            ),
        });
        // A move onto the file's own path is a plain write.
        let new_path = plan
            .new_path
            .as_ref()
            .filter(|to| ws.normalize(to).ok().as_deref() != Some(display.as_str()));
        match (&plan.content, new_path) {
            (None, _) => changes.push(Change::Delete {
                path: display.clone(),
                base,
            }),
            (Some(c), Some(to)) => {
                changes.push(Change::Write {
                    path: to.clone(),
                    text: c.clone(),
                    encoding,
                    base: Base::Absent,
                    mode_from: Some(display.clone()),
                    executable: plan.executable,
                });
                changes.push(Change::Delete {
                    path: display.clone(),
                    base,
                });
            }
            (Some(c), None) => changes.push(Change::Write {
                path: display.clone(),
                text: c.clone(),
                encoding,
                base,
                mode_from: None,
                executable: plan.executable,
            }),
        }
    }

    // A commit checks its change set first; a dry run checks it the same
    // way, so it refuses what the real run would.
    if opts.dry_run && (ok || opts.partial) && !changes.is_empty() {
        ws.check_changes(&changes).map_err(ApplyError::Commit)?;
    }
    let write = (ok || opts.partial) && !opts.dry_run && !changes.is_empty();
    if write {
        if let Some(hook) = &opts.before_write {
            let id = hook(lock).map_err(|e| {
                ApplyError::Commit(mend_workspace::Error::PathRefused {
                    path: ".".into(),
                    reason: format!("the checkpoint before writing failed: {e}"),
                })
            })?;
            let _ = writeln!(
                std::io::stderr(),
                "mend: checkpoint {id} (restore it to undo this apply)"
            );
        }
        commit(ws, lock, &changes).map_err(ApplyError::Commit)?;
    }
    let applied = reports.iter().filter(|r| r.is_ok()).count();
    Ok(ApplyReport {
        ok,
        written: write,
        dry_run: opts.dry_run,
        format: parsed.format_name(),
        applied,
        requested: parsed.entries.len(),
        files,
        retry_context: render_retry_context(&reports),
        edits: reports,
        shell_suggestions: parsed.shell.clone(),
        omitted: None,
    })
}

/// Commits, pausing between steps when `MEND_TEST_COMMIT_DELAY_MS` is set:
/// a hook for the crash-injection tests, which kill mend mid-commit.
fn commit(ws: &Workspace, lock: &Lock, changes: &[Change]) -> Result<usize, mend_workspace::Error> {
    let delay = std::env::var("MEND_TEST_COMMIT_DELAY_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok());
    match delay {
        Some(ms) => ws.commit_with_hook(lock, changes, &|_| {
            std::thread::sleep(std::time::Duration::from_millis(ms));
        }),
        None => ws.commit(lock, changes),
    }
}
