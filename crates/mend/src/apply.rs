//! `mend apply`: parse a response, plan every file, write all or nothing.

use std::collections::BTreeMap;
use std::path::PathBuf;

use mend_core::formats::{self, Entry, Format, Parsed};
use mend_core::report::FileSummary;
use mend_core::{
    ApplyReport, Edit, EditReport, Failure, FilePlan, PlanOptions, diff, plan_file,
    render_retry_context,
};

use crate::workspace::{FileState, FileWrite, Refusal, Workspace, commit};

/// Options of one apply run.
#[derive(Debug, Clone)]
pub struct ApplyOptions {
    /// Input format.
    pub format: Format,
    /// Plan only.
    pub dry_run: bool,
}

/// Why an apply run could not produce a report.
#[derive(Debug)]
pub enum ApplyError {
    /// The input could not be parsed into edits (a model error: exit 1).
    Parse(mend_core::Error),
    /// Writing failed after planning succeeded.
    Write(std::io::Error),
}

/// Parses `input` and applies it to `ws`.
pub fn run(ws: &Workspace, input: &str, opts: &ApplyOptions) -> Result<ApplyReport, ApplyError> {
    let parsed = formats::parse(input, opts.format).map_err(ApplyError::Parse)?;
    run_parsed(ws, &parsed, opts)
}

/// Paths that name the same file group together: `./a.py` and `a.py`.
pub fn normalize_key(p: &str) -> String {
    let parts: Vec<&str> = p
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect();
    if parts.is_empty() {
        p.to_owned()
    } else {
        parts.join("/")
    }
}

/// Reads a file for planning, as the plan sees it.
pub fn read_original(ws: &Workspace, display: &str) -> Result<(PathBuf, Option<String>), Refusal> {
    let path = ws.resolve(display)?;
    match ws.read(&path, display)? {
        FileState::Missing => Ok((path, None)),
        FileState::Text(t) => Ok((path, Some(t))),
    }
}

fn refuse_all(reports: &mut Vec<EditReport>, edits: &[(usize, &Edit)], f: &Refusal) {
    for &(i, e) in edits {
        reports.push(EditReport::failed(
            i,
            e,
            Failure::new(f.kind, f.message.clone(), f.fix.clone()),
        ));
    }
}

/// Plans and (unless a dry run, or an edit failed) writes a parsed response.
pub fn run_parsed(
    ws: &Workspace,
    parsed: &Parsed,
    opts: &ApplyOptions,
) -> Result<ApplyReport, ApplyError> {
    // Group edits by path, keeping input order within each path; malformed
    // blocks are failures of their own.
    let mut groups: BTreeMap<String, Vec<(usize, &Edit)>> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    let mut reports: Vec<EditReport> = Vec::new();
    for (i, entry) in parsed.entries.iter().enumerate() {
        match entry {
            Entry::Edit(e) => {
                let key = normalize_key(&e.path);
                if !groups.contains_key(&key) {
                    order.push(key.clone());
                }
                groups.entry(key).or_default().push((i, e));
            }
            Entry::Malformed(m) => reports.push(EditReport::malformed(i, m)),
        }
    }

    let plan_opts = PlanOptions::default();
    let mut planned: Vec<(PathBuf, String, Option<String>, FilePlan)> = Vec::new();
    for key in &order {
        let edits = &groups[key];
        let display = &edits[0].1.path;
        let (path, original) = match read_original(ws, display) {
            Ok(x) => x,
            Err(f) => {
                refuse_all(&mut reports, edits, &f);
                continue;
            }
        };
        let plan = plan_file(display, original.as_deref(), edits, &plan_opts);
        if let Some(to) = &plan.new_path
            && let Err(f) = ws.resolve(to)
        {
            refuse_all(&mut reports, edits, &f);
            continue;
        }
        reports.extend(plan.reports.iter().cloned());
        planned.push((path, display.clone(), original, plan));
    }
    reports.sort_by_key(|r| r.index);

    let ok = reports.iter().all(EditReport::is_ok);
    let mut files = Vec::new();
    let mut writes = Vec::new();
    for (path, display, original, plan) in &planned {
        let Some(status) = plan.status(original.as_deref()) else {
            continue;
        };
        let old = original.as_deref().unwrap_or("");
        let new = plan.content.as_deref().unwrap_or("");
        files.push(FileSummary {
            path: display.clone(),
            status,
            renamed_to: plan.new_path.clone(),
            diff: diff::unified(
                original.as_ref().map(|_| display.as_str()),
                plan.content
                    .as_ref()
                    .map(|_| plan.new_path.as_deref().unwrap_or(display)),
                old,
                new,
            ),
        });
        match (&plan.content, &plan.new_path) {
            (None, _) => writes.push(FileWrite::Remove { path: path.clone() }),
            (Some(c), Some(to)) => {
                let dest = ws
                    .resolve(to)
                    .map_err(|r| ApplyError::Write(std::io::Error::other(r.message)))?;
                writes.push(FileWrite::Put {
                    path: dest,
                    content: c.as_bytes().to_vec(),
                    mode_from: Some(path.clone()),
                    executable: plan.executable,
                });
                writes.push(FileWrite::Remove { path: path.clone() });
            }
            (Some(c), None) => writes.push(FileWrite::Put {
                path: path.clone(),
                content: c.as_bytes().to_vec(),
                mode_from: None,
                executable: plan.executable,
            }),
        }
    }

    let written = ok && !opts.dry_run && !writes.is_empty();
    if written {
        commit(ws.root(), writes).map_err(ApplyError::Write)?;
    }
    let applied = reports.iter().filter(|r| r.is_ok()).count();
    Ok(ApplyReport {
        ok,
        written,
        dry_run: opts.dry_run,
        format: parsed.format_name(),
        applied,
        requested: parsed.entries.len(),
        files,
        retry_context: render_retry_context(&reports),
        edits: reports,
        shell_suggestions: parsed.shell.clone(),
    })
}
