//! mend's apply pipeline, shared by the CLI, the MCP server and pending
//! changes: group a parsed response's edits by file, read each file once,
//! plan its edits, turn the plans into one change set, check it as a whole,
//! and commit all or nothing (or, with `partial`, what succeeded) through a
//! `mend-workspace` transaction.
//!
//! [`plan`] stops before writing and returns everything a caller needs to
//! store the results elsewhere (pending changes) or show them (dry runs);
//! [`run_parsed`] plans and commits. [`StreamPlanner`] checks each block
//! as a response streams in, so a client sees failures early and the final
//! run reuses the plans.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use mend_core::formats::{Entry, Parsed};
use mend_core::report::syntax::{SyntaxFinding, SyntaxPolicy, SyntaxUnchecked};
use mend_core::report::{Collector, FileSummary};
use mend_core::{
    ApplyReport, Edit, EditOp, EditReport, Failure, FilePlan, FilePlanner, PlanOptions, diff,
    plan_file,
};
use mend_workspace::{Base, Change, ContentHash, Lock, Snapshot, Workspace};

mod incremental;
mod outlines;
mod trees;
pub use incremental::run_text;
pub use trees::keep_syntax_trees;

/// A step run under the apply's lock right before it writes (a
/// checkpoint); an error stops the apply before anything is written.
pub type BeforeWrite<'a> = Box<dyn Fn(&Lock) -> Result<(), String> + 'a>;

/// Options of one apply run.
#[derive(Default)]
pub struct ApplyOptions<'a> {
    /// Plan only.
    pub dry_run: bool,
    /// Write the edits that succeed, skipping a file's edits after its first
    /// failure.
    pub partial: bool,
    /// What the edits were based on, by normalized path.
    pub expect: HashMap<String, Expected>,
    /// Runs right before files are written (a checkpoint), under the
    /// workspace lock the apply holds.
    pub before_write: Option<BeforeWrite<'a>>,
    /// Plans made while the response streamed in, by normalized path; used
    /// when the file still has the content they were made against.
    pub preplanned: HashMap<String, Preplanned>,
    /// A pause between commit steps, so crash tests can kill mend
    /// mid-commit.
    pub commit_delay: Option<Duration>,
    /// Whether to check that changed files still parse, and what a
    /// syntax error the edits introduce does to the run.
    pub syntax: SyntaxPolicy,
}

/// What a file held when the edits were made, as their author says
/// (`--expect`, `expected_version`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expected {
    /// No file (`absent`).
    Absent,
    /// A file whose bytes hash to this.
    Hash(ContentHash),
    /// A version mend never gives out: it matches no file, so the edits
    /// are refused as stale, and the model is told to read the file again
    /// rather than why its string failed to parse.
    Unknown,
}

impl Expected {
    /// Reads a version as a model or a user spells it: `absent`, or a
    /// hash as `mend hash` and `read_file` print it (`sha256:<hex>`).
    pub fn parse(version: &str) -> Expected {
        match version {
            "absent" => Expected::Absent,
            v => v.parse().map_or(Expected::Unknown, Expected::Hash),
        }
    }

    /// Whether a file whose hash is `now` (`None`: absent) is the one
    /// expected.
    pub fn matches(&self, now: Option<&ContentHash>) -> bool {
        match self {
            Expected::Absent => now.is_none(),
            Expected::Hash(h) => now == Some(h),
            Expected::Unknown => false,
        }
    }
}

/// A file's plan made before the lock was taken.
pub struct Preplanned {
    /// The hash of the content it was made against (`None`: absent).
    pub hash: Option<ContentHash>,
    /// The plan.
    pub plan: FilePlan,
}

/// Why an apply run could not produce a report.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApplyError {
    /// The input could not be parsed into edits (a model error).
    #[error(transparent)]
    Parse(mend_core::Error),
    /// The change set or the commit failed (a file changed under the lock,
    /// a collision, I/O).
    #[error(transparent)]
    Commit(mend_workspace::Error),
    /// The step before writing (a checkpoint) failed; nothing was written.
    #[error("the checkpoint before writing failed, so nothing was written: {0}")]
    BeforeWrite(String),
}

impl ApplyError {
    /// Whether the response, not mend, is at fault: it holds no edits or
    /// cannot be parsed, or its change set was refused (see
    /// [`mend_workspace::Error::is_refusal`]). Nothing was written; a
    /// front-end answers it as a failed apply (exit 1).
    pub fn is_refusal(&self) -> bool {
        match self {
            ApplyError::Parse(_) => true,
            ApplyError::Commit(e) => e.is_refusal(),
            ApplyError::BeforeWrite(_) => false,
        }
    }
}

/// A response planned against the files, nothing written yet.
#[derive(Debug)]
pub struct Planned {
    /// One report per entry of the response, in order.
    pub reports: Vec<EditReport>,
    /// What changes, file by file, with its diff.
    pub files: Vec<FileSummary>,
    /// The change set that writes it, checked as a whole when it will be
    /// written (or when `dry_run` asks what would be).
    pub changes: Vec<Change>,
    /// The files as read and their plans.
    pub plans: Vec<(Snapshot, FilePlan)>,
    /// Whether every edit succeeded.
    pub ok: bool,
    /// Syntax errors the plans introduce.
    pub syntax: Vec<SyntaxFinding>,
    /// Changed files the syntax check did not look at.
    pub syntax_unchecked: Vec<SyntaxUnchecked>,
    /// The findings fail the response (`SyntaxPolicy::Refuse`): `ok` is
    /// false, and nothing may be written or held.
    pub syntax_refused: bool,
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
    let draft = draft(ws, parsed, opts, &|rel: &str| ws.read(rel))?;
    let (outcome, write) = settle(ws, lock, &draft.plans, &draft.spans, draft.ok, opts)?;
    let mut collected = Collector::default();
    for r in draft.reports {
        collected.push(r);
    }
    Ok(outcome.report(collected, parsed, opts.dry_run, write))
}

/// Concludes the plans and writes their change set when the run may, as
/// [`conclude`] then [`write_if`] would. When the check cannot stop the
/// write (it only warns, or is off, and this is no dry run), the diffs and
/// the syntax check are made while the write runs: the write's wait for
/// the disk is then most of what the call costs.
fn settle(
    ws: &Workspace,
    lock: &Lock,
    plans: &[(Snapshot, FilePlan)],
    spans: &[Vec<mend_syntax::EditSpan>],
    ok: bool,
    opts: &ApplyOptions<'_>,
) -> Result<(Outcome, bool), ApplyError> {
    let changes = changes_for(ws, plans);
    let unstoppable = opts.syntax != SyntaxPolicy::Refuse
        && !opts.dry_run
        && (ok || opts.partial)
        && !changes.is_empty();
    if !unstoppable {
        let (mut outcome, changes) = conclude(ws, plans, spans, ok, opts)?;
        let refused = outcome.syntax_refused;
        outcome.ok &= !refused;
        let write = write_if(ws, lock, outcome.ok, refused, &changes, opts)?;
        return Ok((outcome, write));
    }
    let syntax = opts.syntax;
    let (reviewed, write) = std::thread::scope(|s| {
        let reviewing = s.spawn(move || review(ws, plans, spans, syntax));
        let write = write_if(ws, lock, ok, false, &changes, opts);
        (reviewing.join(), write)
    });
    let (files, syntax, syntax_unchecked) =
        reviewed.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
    let outcome = Outcome {
        files,
        syntax,
        syntax_unchecked,
        syntax_refused: false,
        ok,
    };
    Ok((outcome, write?))
}

impl Planned {
    /// The report of this plan: `dry_run` and `written` as the run went.
    pub fn into_report(self, parsed: &Parsed, dry_run: bool, written: bool) -> ApplyReport {
        let mut collected = Collector::default();
        for r in self.reports {
            collected.push(r);
        }
        let Planned {
            files,
            syntax,
            syntax_unchecked,
            syntax_refused,
            ok,
            ..
        } = self;
        Outcome {
            files,
            syntax,
            syntax_unchecked,
            syntax_refused,
            ok,
        }
        .report(collected, parsed, dry_run, written)
    }
}

/// What a plan gives the report besides its edits' reports.
struct Outcome {
    files: Vec<FileSummary>,
    syntax: Vec<SyntaxFinding>,
    syntax_unchecked: Vec<SyntaxUnchecked>,
    syntax_refused: bool,
    ok: bool,
}

impl Outcome {
    /// The report, its edits listed up to the cap and the rest counted.
    /// `parsed` gives the formats and shell suggestions; its entries are
    /// counted by the collector.
    fn report(
        self,
        collected: Collector,
        parsed: &Parsed,
        dry_run: bool,
        written: bool,
    ) -> ApplyReport {
        let mut retry_context = collected.retry_context_after(written);
        if self.syntax_refused {
            let section = mend_core::report::syntax::render_refusal(&self.syntax);
            retry_context = Some(match retry_context {
                Some(ctx) => format!("{ctx}\n{section}"),
                None => section,
            });
        }
        let (applied, requested) = (collected.applied(), collected.total());
        let (edits, omitted) = collected.into_listed();
        ApplyReport {
            ok: self.ok,
            written,
            dry_run,
            format: parsed.format_name(),
            applied,
            requested,
            files: self.files,
            retry_context,
            edits,
            shell_suggestions: parsed.shell.clone(),
            omitted,
            syntax: self.syntax,
            syntax_unchecked: self.syntax_unchecked,
            syntax_refused: self.syntax_refused,
        }
    }
}

/// Plans a parsed response against the files (reading each once) and
/// builds its change set, writing nothing. When the set would be written
/// (every edit succeeded, or `partial`) and `dry_run` is set, it is checked
/// as a whole, so a dry run refuses what the real run would.
pub fn plan(
    ws: &Workspace,
    parsed: &Parsed,
    opts: &ApplyOptions<'_>,
) -> Result<Planned, ApplyError> {
    plan_from(ws, parsed, opts, &|rel: &str| ws.read(rel))
}

/// Where [`plan_from`] reads each file's current text: the workspace, or
/// a view over it (pending changes plan against a proposal's output).
pub type Source<'s> = dyn Fn(&str) -> Result<Snapshot, mend_workspace::Error> + 's;

/// [`plan`] against texts from `source` instead of the files on disk;
/// paths are still normalized and confined by `ws`.
pub fn plan_from(
    ws: &Workspace,
    parsed: &Parsed,
    opts: &ApplyOptions<'_>,
    source: &Source<'_>,
) -> Result<Planned, ApplyError> {
    let Draft {
        reports,
        plans,
        spans,
        ok,
    } = draft(ws, parsed, opts, source)?;
    let (outcome, changes) = conclude(ws, &plans, &spans, ok, opts)?;
    Ok(Planned {
        reports,
        files: outcome.files,
        changes,
        plans,
        ok: outcome.ok,
        syntax: outcome.syntax,
        syntax_unchecked: outcome.syntax_unchecked,
        syntax_refused: outcome.syntax_refused,
    })
}

/// Every file's plan, before the diffs and the syntax check.
struct Draft {
    /// One report per entry of the response, in order.
    reports: Vec<EditReport>,
    /// The files as read and their plans.
    plans: Vec<(Snapshot, FilePlan)>,
    /// Where each file's edits landed, for the syntax check to name them.
    spans: Vec<Vec<mend_syntax::EditSpan>>,
    /// Whether every edit succeeded.
    ok: bool,
}

/// Groups the response's edits by file, reads each file once from
/// `source` and plans its edits.
fn draft(
    ws: &Workspace,
    parsed: &Parsed,
    opts: &ApplyOptions<'_>,
    source: &Source<'_>,
) -> Result<Draft, ApplyError> {
    let (groups, order, mut reports) = group(ws, parsed);
    let plan_opts = PlanOptions {
        skip_after_failure: opts.partial,
        ..PlanOptions::default()
    };
    let mut plans: Vec<(Snapshot, FilePlan)> = Vec::new();
    let mut spans: Vec<Vec<mend_syntax::EditSpan>> = Vec::new();
    for key in &order {
        let edits = &groups[key];
        match plan_one(ws, source, key, edits, opts, &plan_opts) {
            Ok((snap, mut plan)) => {
                spans.push(
                    plan.reports
                        .iter()
                        .filter(|r| r.is_ok())
                        .map(|r| mend_syntax::EditSpan {
                            index: r.index,
                            lines: r.lines,
                        })
                        .collect(),
                );
                reports.append(&mut plan.reports);
                plans.push((snap, plan));
            }
            Err(f) => refuse_all(&mut reports, edits, &f),
        }
    }
    reports.sort_by_key(|r| r.index);
    let ok = reports.iter().all(EditReport::is_ok) && !mend_core::report::only_snippets(&reports);
    Ok(Draft {
        reports,
        plans,
        spans,
        ok,
    })
}

/// The files' summaries, change set and syntax check of the plans; `ok`
/// says whether every edit succeeded. A dry run that would write checks
/// the change set as the commit would.
fn conclude(
    ws: &Workspace,
    plans: &[(Snapshot, FilePlan)],
    spans: &[Vec<mend_syntax::EditSpan>],
    mut ok: bool,
    opts: &ApplyOptions<'_>,
) -> Result<(Outcome, Vec<Change>), ApplyError> {
    let changes = changes_for(ws, plans);
    let (files, syntax, syntax_unchecked) = review(ws, plans, spans, opts.syntax);
    let syntax_refused = opts.syntax == SyntaxPolicy::Refuse && !syntax.is_empty();
    ok &= !syntax_refused;
    // A commit checks its change set first; a dry run checks it the same
    // way, so it refuses what the real run would.
    if opts.dry_run && (ok || opts.partial) && !changes.is_empty() {
        ws.check_changes(&changes).map_err(ApplyError::Commit)?;
    }
    let outcome = Outcome {
        files,
        syntax,
        syntax_unchecked,
        syntax_refused,
        ok,
    };
    Ok((outcome, changes))
}

/// The change set of the plans that change their file.
fn changes_for(ws: &Workspace, plans: &[(Snapshot, FilePlan)]) -> Vec<Change> {
    plans
        .iter()
        .filter(|(snap, plan)| plan.status(snap.text().map(|f| f.text.as_str())).is_some())
        .flat_map(|(snap, plan)| changes_of(ws, snap, plan))
        .collect()
}

/// What the plans show a reader: each changed file's summary with its
/// diff, and the syntax check's findings and the files it did not check.
fn review(
    ws: &Workspace,
    plans: &[(Snapshot, FilePlan)],
    spans: &[Vec<mend_syntax::EditSpan>],
    policy: SyntaxPolicy,
) -> (Vec<FileSummary>, Vec<SyntaxFinding>, Vec<SyntaxUnchecked>) {
    let files = plans
        .iter()
        .filter_map(|(snap, plan)| summarize(snap, plan))
        .collect();
    let (syntax, syntax_unchecked) = match policy {
        SyntaxPolicy::Off => Default::default(),
        _ => check_syntax(ws, plans, spans),
    };
    (files, syntax, syntax_unchecked)
}

/// Writes the change set when the run may (every edit succeeded, or
/// `partial`; not refused by the syntax check; not a dry run), running the
/// step before writing first. Whether it wrote.
fn write_if(
    ws: &Workspace,
    lock: &Lock,
    ok: bool,
    refused: bool,
    changes: &[Change],
    opts: &ApplyOptions<'_>,
) -> Result<bool, ApplyError> {
    let write = (ok || opts.partial) && !refused && !opts.dry_run && !changes.is_empty();
    if write {
        if let Some(hook) = &opts.before_write {
            hook(lock).map_err(ApplyError::BeforeWrite)?;
        }
        commit(ws, lock, changes, opts.commit_delay).map_err(ApplyError::Commit)?;
    }
    Ok(write)
}

/// The syntax check of every file whose content the plans change.
fn check_syntax(
    ws: &Workspace,
    plans: &[(Snapshot, FilePlan)],
    spans: &[Vec<mend_syntax::EditSpan>],
) -> (Vec<SyntaxFinding>, Vec<SyntaxUnchecked>) {
    let mut findings = Vec::new();
    let mut unchecked = Vec::new();
    let mut disk = outlines_for(ws, plans);
    for ((snap, plan), edits) in plans.iter().zip(spans) {
        let old = snap.text().map(|f| f.text.as_str());
        let Some(new) = plan.content.as_deref().filter(|n| Some(*n) != old) else {
            continue;
        };
        // A renamed file is checked as what it becomes.
        let path = plan.new_path.as_deref().unwrap_or(&snap.rel);
        match check_kept(path, snap, new, edits, disk.as_mut()) {
            mend_syntax::Check::Clean { .. } => {}
            mend_syntax::Check::Findings(f) => findings.extend(f),
            mend_syntax::Check::Unchecked(reason) => unchecked.push(SyntaxUnchecked {
                path: path.to_owned(),
                reason,
            }),
        }
    }
    if let Some(d) = disk {
        d.save();
    }
    (findings, unchecked)
}

/// The outlines kept in `.mend/`, for a process that keeps no parses of
/// its own (a server keeps them in memory) and checks an edit of a file in
/// a language that has them; `None` otherwise, or without a `.mend/`.
fn outlines_for(ws: &Workspace, plans: &[(Snapshot, FilePlan)]) -> Option<outlines::Outlines> {
    let outlined = |p: &(Snapshot, FilePlan)| {
        let path = p.1.new_path.as_deref().unwrap_or(&p.0.rel);
        p.0.text().is_some()
            && mend_syntax::language_for(path).is_some_and(mend_syntax::Language::has_outlines)
    };
    if trees::kept().is_some() || !plans.iter().any(outlined) {
        return None;
    }
    let dir = ws.existing_private_dir().ok().flatten()?;
    Some(outlines::Outlines::open(dir))
}

/// Parses are kept by the hash of their text; a UTF-8 file's hash is that
/// of its text already (its BOM stays in the text).
fn text_hash(f: &mend_workspace::TextFile) -> ContentHash {
    match f.encoding {
        mend_workspace::Encoding::Utf8 => f.hash,
        _ => ContentHash::of(f.text.as_bytes()),
    }
}

/// The syntax check of `new`, planned from `snap`, from the best base of
/// the text before there is: the parse a server kept (see
/// [`keep_syntax_trees`]), or the outline a process before kept in
/// `.mend/` (`disk`); the parse or outline of `new` is kept the same way
/// for the next edit.
fn check_kept(
    path: &str,
    snap: &Snapshot,
    new: &str,
    edits: &[mend_syntax::EditSpan],
    disk: Option<&mut outlines::Outlines>,
) -> mend_syntax::Check {
    let old = snap.text();
    let lang = mend_syntax::language_for(path);
    if let Some((kept, lang)) = trees::kept().zip(lang) {
        return check_in_memory(kept, lang, path, old, new, edits);
    }
    let (Some(disk), Some(f), Some(lang)) = (disk, old, lang) else {
        return mend_syntax::check(path, old.map(|f| f.text.as_str()), new, edits);
    };
    if !lang.has_outlines() {
        return mend_syntax::check(path, Some(&f.text), new, edits);
    }
    let hash = text_hash(f);
    // Without an outline of the text before, it is parsed whole (as the
    // text after would be), so the edit itself parses only its statements
    // and the next process finds the outline.
    let base = disk.get(&hash).or_else(|| {
        let b = mend_syntax::base_of(path, &f.text)?;
        if let Some(o) = b.outline() {
            disk.put(hash, o);
        }
        Some(b)
    });
    let (check, parsed) = mend_syntax::check_from(path, Some(&f.text), base.as_ref(), new, edits);
    if let Some(o) = parsed.as_ref().and_then(mend_syntax::Base::outline) {
        disk.put(ContentHash::of(new.as_bytes()), o);
    }
    check
}

/// [`check_kept`] from the parses this process keeps.
fn check_in_memory(
    kept: &'static std::sync::Mutex<trees::Trees>,
    lang: mend_syntax::Language,
    path: &str,
    old: Option<&mend_workspace::TextFile>,
    new: &str,
    edits: &[mend_syntax::EditSpan],
) -> mend_syntax::Check {
    // A panic elsewhere while it was held leaves only a cache behind.
    let lock = || {
        kept.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    };
    let base = old.and_then(|f| lock().get(&text_hash(f), lang));
    let old = old.map(|f| f.text.as_str());
    let (check, parsed) = mend_syntax::check_from(path, old, base.as_ref(), new, edits);
    if let Some(p) = parsed {
        lock().put(ContentHash::of(new.as_bytes()), p);
    }
    check
}

/// Edits grouped by normalized path (input order kept within a path), the
/// paths in first-seen order, and the malformed blocks' reports.
type Groups<'p> = (
    BTreeMap<String, Vec<(usize, &'p Edit)>>,
    Vec<String>,
    Vec<EditReport>,
);

fn group<'p>(ws: &Workspace, parsed: &'p Parsed) -> Groups<'p> {
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
    (groups, order, reports)
}

/// Reads one file and plans its edits (or reuses the plan streaming made
/// against the same content).
fn plan_one(
    ws: &Workspace,
    source: &Source<'_>,
    key: &str,
    edits: &[(usize, &Edit)],
    opts: &ApplyOptions<'_>,
    plan_opts: &PlanOptions,
) -> Result<(Snapshot, FilePlan), mend_workspace::Error> {
    let snap = read_for(ws, source, edits)?;
    if let Some(stale) = unexpected(ws, &snap, opts) {
        return Err(stale);
    }
    let original = snap.text().map(|f| f.text.as_str());
    let now = snap.text().map(|f| f.hash);
    let plan = match opts.preplanned.get(key) {
        Some(p) if p.hash == now => p.plan.clone(),
        _ => plan_file(&snap.rel, original, edits, plan_opts),
    };
    if let Some(to) = &plan.new_path {
        ws.resolve(to)?;
    }
    Ok((snap, plan))
}

/// The refusal of a file whose content is not the one its expectation
/// (`--expect`) names.
fn unexpected(
    ws: &Workspace,
    snap: &Snapshot,
    opts: &ApplyOptions<'_>,
) -> Option<mend_workspace::Error> {
    let expected = opts.expect.get(&snap.rel)?;
    if expected.matches(snap.text().map(|f| &f.hash)) {
        return None;
    }
    let hash = match expected {
        Expected::Hash(h) => Some(h),
        _ => None,
    };
    let now = snap.text().map_or("", |f| f.text.as_str());
    Some(ws.stale(&snap.rel, hash, None, now))
}

/// Reads the file the edits name. A file created where a folder is plans
/// as a creation: the change-set check lets it through only if the same
/// response empties the folder.
fn read_for(
    ws: &Workspace,
    source: &Source<'_>,
    edits: &[(usize, &Edit)],
) -> Result<Snapshot, mend_workspace::Error> {
    match source(&edits[0].1.path) {
        Err(mend_workspace::Error::NotAFile {
            path,
            kind: "a directory",
        }) if edits
            .iter()
            .all(|(_, e)| matches!(e.op, EditOp::Create { .. } | EditOp::WriteFile { .. })) =>
        {
            Ok(Snapshot {
                path: ws.resolve(&path).unwrap_or_default(),
                rel: path,
                file: None,
            })
        }
        other => other,
    }
}

/// What a plan changes in one file, with its diff; `None` when nothing.
/// In partial mode, a file is written with the edits that succeeded.
fn summarize(snap: &Snapshot, plan: &FilePlan) -> Option<FileSummary> {
    let original = snap.text().map(|f| f.text.as_str());
    let status = plan.status(original)?;
    let display = &snap.rel;
    Some(FileSummary {
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
    })
}

/// The workspace changes that carry out one file's plan: a write, a
/// deletion, or a rename as a write plus a deletion.
fn changes_of(ws: &Workspace, snap: &Snapshot, plan: &FilePlan) -> Vec<Change> {
    let display = &snap.rel;
    let base = snap.text().map_or(Base::Absent, |f| Base::Hash(f.hash));
    let encoding = snap
        .text()
        .map_or(mend_workspace::Encoding::Utf8, |f| f.encoding);
    // A move onto the file's own path is a plain write.
    let new_path = plan
        .new_path
        .as_ref()
        .filter(|to| ws.normalize(to).ok().as_deref() != Some(display.as_str()));
    match (&plan.content, new_path) {
        (None, _) => vec![Change::Delete {
            path: display.clone(),
            base,
        }],
        (Some(c), Some(to)) => vec![
            Change::Write {
                path: to.clone(),
                text: c.clone(),
                encoding,
                base: Base::Absent,
                mode_from: Some(display.clone()),
                executable: plan.executable,
            },
            Change::Delete {
                path: display.clone(),
                base,
            },
        ],
        (Some(c), None) => vec![Change::Write {
            path: display.clone(),
            text: c.clone(),
            encoding,
            base,
            mode_from: None,
            executable: plan.executable,
        }],
    }
}

/// Commits, pausing between steps when asked (for crash tests).
fn commit(
    ws: &Workspace,
    lock: &Lock,
    changes: &[Change],
    delay: Option<Duration>,
) -> Result<usize, mend_workspace::Error> {
    match delay {
        Some(d) => ws.commit_with_hook(lock, changes, &|_| std::thread::sleep(d)),
        None => ws.commit(lock, changes),
    }
}

/// One file being planned while a response streams in.
struct Streaming {
    /// The content's hash as read (`None`: absent), or why it could not be
    /// read.
    read: Result<Option<ContentHash>, mend_workspace::Error>,
    planner: Option<FilePlanner>,
}

/// Checks each block of a streaming response against its file as soon as
/// the block is complete (each block planned once, after the file's earlier
/// blocks), and hands the plans to the final run through
/// [`ApplyOptions::preplanned`], which reuses a plan only while the file
/// still has the content it was made against.
pub struct StreamPlanner<'w> {
    ws: &'w Workspace,
    source: Option<&'w Source<'w>>,
    opts: PlanOptions,
    files: HashMap<String, Streaming>,
}

impl<'w> StreamPlanner<'w> {
    /// A planner for `ws`; `partial` skips a file's edits after its first
    /// failure, as `ApplyOptions::partial` does.
    pub fn new(ws: &'w Workspace, partial: bool) -> StreamPlanner<'w> {
        StreamPlanner {
            ws,
            source: None,
            opts: PlanOptions {
                skip_after_failure: partial,
                ..PlanOptions::default()
            },
            files: HashMap::new(),
        }
    }

    /// Checks blocks against texts from `source` (a pending session's
    /// view) instead of the files on disk, as [`plan_from`] plans.
    pub fn with_source(mut self, source: &'w Source<'w>) -> StreamPlanner<'w> {
        self.source = Some(source);
        self
    }

    /// Plans the newest edit of a file after those before it, and reports
    /// on it.
    pub fn check(&mut self, index: usize, e: &Edit) -> EditReport {
        let (ws, source, opts) = (self.ws, self.source, &self.opts);
        let key = ws.normalize(&e.path).unwrap_or_else(|_| e.path.clone());
        let read = |raw: &str| match source {
            Some(s) => s(raw),
            None => ws.read(raw),
        };
        let f = self
            .files
            .entry(key)
            .or_insert_with(|| match read(&e.path) {
                Ok(snap) => {
                    let text = snap.text().map(|t| t.text.as_str());
                    Streaming {
                        read: Ok(snap.text().map(|t| t.hash)),
                        planner: Some(FilePlanner::new(&snap.rel, text, opts)),
                    }
                }
                Err(err) => Streaming {
                    read: Err(err),
                    planner: None,
                },
            });
        match (&f.read, &mut f.planner) {
            (Ok(_), Some(p)) => p.push(index, e).clone(),
            (Err(err), _) => EditReport::failed(
                index,
                e,
                Failure::new(err.kind(), err.to_string(), err.fix()),
            ),
            (Ok(_), None) => unreachable!("a read file has a planner"),
        }
    }

    /// The plans, by normalized path, for [`ApplyOptions::preplanned`].
    pub fn finish(self) -> HashMap<String, Preplanned> {
        self.files
            .into_iter()
            .filter_map(|(key, f)| {
                let hash = f.read.ok()?;
                Some((
                    key,
                    Preplanned {
                        hash,
                        plan: f.planner?.finish(),
                    },
                ))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_mend_never_gave_out_matches_no_file() {
        let h = ContentHash::of(b"one\n");
        assert_eq!(Expected::parse("absent"), Expected::Absent);
        assert_eq!(Expected::parse(&h.to_string()), Expected::Hash(h));
        for garbage in ["", "v1", "sha256:", "Absent", &h.hex()] {
            let e = Expected::parse(garbage);
            assert_eq!(e, Expected::Unknown, "{garbage}");
            assert!(!e.matches(None) && !e.matches(Some(&h)), "{garbage}");
        }
        assert!(Expected::Absent.matches(None) && !Expected::Absent.matches(Some(&h)));
        assert!(Expected::Hash(h).matches(Some(&h)) && !Expected::Hash(h).matches(None));
    }
}
