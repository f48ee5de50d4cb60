//! `mend apply`: parse a response, plan every file, write all or nothing.

use std::collections::BTreeMap;
use std::path::PathBuf;

use mend_core::formats::{self, Format};
use mend_core::report::FileSummary;
use mend_core::{
    ApplyReport, Edit, EditReport, Failure, FilePlan, PlanOptions, diff, plan_file,
    render_retry_context,
};

use crate::workspace::{FileState, FileWrite, Workspace, commit};

/// Options of one apply run.
#[derive(Debug, Clone)]
pub struct ApplyOptions {
    /// Input format.
    pub format: Format,
    /// Plan only.
    pub dry_run: bool,
}

/// What an apply run produced.
#[derive(Debug)]
pub struct Outcome {
    /// The report.
    pub report: ApplyReport,
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
pub fn run(ws: &Workspace, input: &str, opts: &ApplyOptions) -> Result<Outcome, ApplyError> {
    let parsed = formats::parse(input, opts.format).map_err(ApplyError::Parse)?;
    let format_name = parsed.format.name().to_owned();

    // Group edits by path, keeping input order within each path.
    let mut groups: BTreeMap<String, Vec<(usize, &Edit)>> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for (i, e) in parsed.edits.iter().enumerate() {
        let key = normalize_key(&e.path);
        if !groups.contains_key(&key) {
            order.push(key.clone());
        }
        groups.entry(key).or_default().push((i, e));
    }

    let plan_opts = PlanOptions::default();
    let mut reports: Vec<EditReport> = Vec::new();
    let mut planned: Vec<(PathBuf, String, Option<String>, FilePlan)> = Vec::new();
    for key in &order {
        let edits = &groups[key];
        let display = &edits[0].1.path;
        let refuse = |reports: &mut Vec<EditReport>, f: &crate::workspace::Refusal| {
            for &(i, e) in edits {
                reports.push(EditReport::failed(
                    i,
                    e,
                    Failure::new(f.kind, f.message.clone(), f.fix.clone()),
                ));
            }
        };
        let path = match ws.resolve(display) {
            Ok(p) => p,
            Err(f) => {
                refuse(&mut reports, &f);
                continue;
            }
        };
        let original = match ws.read(&path, display) {
            Ok(FileState::Missing) => None,
            Ok(FileState::Text(t)) => Some(t),
            Err(f) => {
                refuse(&mut reports, &f);
                continue;
            }
        };
        let plan = plan_file(display, original.as_deref(), edits, &plan_opts);
        // A rename target must be confined too.
        if let Some(to) = &plan.new_path
            && let Err(f) = ws.resolve(to)
        {
            refuse(&mut reports, &f);
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
        let diff_text = diff::unified(
            original.as_ref().map(|_| display.as_str()),
            plan.content
                .as_ref()
                .map(|_| plan.new_path.as_deref().unwrap_or(display)),
            old,
            new,
        );
        files.push(FileSummary {
            path: display.clone(),
            status,
            renamed_to: plan.new_path.clone(),
            diff: diff_text,
        });
        match (&plan.content, &plan.new_path) {
            (None, _) => writes.push(FileWrite::Remove { path: path.clone() }),
            (Some(c), Some(to)) => {
                let dest = ws.resolve(to).expect("checked above");
                writes.push(FileWrite::Put {
                    path: dest,
                    content: c.as_bytes().to_vec(),
                    mode_from: Some(path.clone()),
                });
                writes.push(FileWrite::Remove { path: path.clone() });
            }
            (Some(c), None) => writes.push(FileWrite::Put {
                path: path.clone(),
                content: c.as_bytes().to_vec(),
                mode_from: None,
            }),
        }
    }

    let written = ok && !opts.dry_run && !writes.is_empty();
    if written {
        commit(ws.root(), writes).map_err(ApplyError::Write)?;
    }
    let applied = reports.iter().filter(|r| r.is_ok()).count();
    let report = ApplyReport {
        ok,
        written,
        dry_run: opts.dry_run,
        format: format_name,
        applied,
        requested: parsed.edits.len(),
        files,
        retry_context: render_retry_context(&reports),
        edits: reports,
    };
    Ok(Outcome { report })
}

/// Paths that name the same file group together: `./a.py` and `a.py`.
fn normalize_key(p: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            s => parts.push(s),
        }
    }
    if parts.is_empty() {
        p.to_owned()
    } else {
        parts.join("/")
    }
}
