//! A whole response applied in bounded memory: parsed a chunk at a time
//! under the lock, each edit planned as soon as it is parsed and then
//! dropped, its report collected by [`Collector`] (what the caps show is
//! kept, the rest counted). Memory follows the files and what the report
//! shows, not the number of edits: a million failing edits hold neither a
//! million `Edit`s nor a million reports.
//!
//! Two rare cases need every edit of a file before it can be planned, and
//! are planned as [`super::run_parsed`] plans them: a file whose path is a
//! folder (a creation there is allowed only if every edit of it creates;
//! its edits are kept until the end), and a response that renames a file
//! (a refused new path fails every edit of the file, so the whole response
//! is parsed again and planned whole).

use mend_core::formats::{Entry, Event, Format, Parsed, StreamParser};
use mend_core::report::Collector;
use mend_core::{ApplyReport, Edit, EditOp, EditReport, Failure, FilePlanner, PlanOptions};
use mend_workspace::{Lock, Snapshot, Workspace};

use super::{ApplyError, ApplyOptions, plan_one, run_parsed, settle, unexpected};

/// How much of the response is parsed at a time.
const CHUNK: usize = 64 * 1024;

/// Plans and (unless a dry run, or an edit failed) commits the response
/// `text`, as [`super::run_parsed`] does with its parse, in memory bounded
/// by the files and the report's caps (see the module doc).
pub fn run_text(
    ws: &Workspace,
    lock: &Lock,
    text: &str,
    format: Format,
    opts: &ApplyOptions<'_>,
) -> Result<ApplyReport, ApplyError> {
    // A response that renames a file: parsed whole and planned by
    // `run_parsed`.
    let whole = || {
        let parsed = mend_core::formats::parse(text, format).map_err(ApplyError::Parse)?;
        run_parsed(ws, lock, &parsed, opts)
    };
    let mut run = Run::new(ws, opts);
    let mut parser = StreamParser::new(format);
    let mut at = 0;
    while at < text.len() {
        let mut end = (at + CHUNK).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        if !run.take(parser.push(&text[at..end])) {
            return whole();
        }
        at = end;
    }
    let tail = parser.finish().map_err(ApplyError::Parse)?;
    if !run.take(tail) {
        return whole();
    }
    if run.count == 0 {
        return Err(ApplyError::Parse(mend_core::Error::NoEdits));
    }
    run.finish(lock)
}

/// One file of the response.
enum File {
    /// Planned as its edits come.
    Planning {
        snap: Box<Snapshot>,
        planner: Box<FilePlanner>,
        spans: Vec<mend_syntax::EditSpan>,
    },
    /// It cannot be planned (unreadable, refused, stale): each edit fails
    /// with this.
    Refused(mend_workspace::Error),
    /// A folder stands at its path: its edits, planned at the end.
    Folder(Vec<(usize, Edit)>),
}

/// A run in progress.
struct Run<'a, 'o> {
    ws: &'a Workspace,
    opts: &'a ApplyOptions<'o>,
    plan_opts: PlanOptions,
    /// The files by normalized path, in first-seen order.
    files: Vec<(String, File)>,
    index: std::collections::HashMap<String, usize>,
    collected: Collector,
    /// The formats and shell suggestions (no entries: they are counted).
    parsed: Parsed,
    count: usize,
}

impl<'a, 'o> Run<'a, 'o> {
    fn new(ws: &'a Workspace, opts: &'a ApplyOptions<'o>) -> Self {
        Run {
            ws,
            opts,
            plan_opts: PlanOptions {
                skip_after_failure: opts.partial,
                ..PlanOptions::default()
            },
            files: Vec::new(),
            index: std::collections::HashMap::new(),
            collected: Collector::default(),
            parsed: Parsed {
                formats: Vec::new(),
                entries: Vec::new(),
                shell: Vec::new(),
            },
            count: 0,
        }
    }

    /// Plans each entry of `events`; `false` when the response renames a
    /// file and must be planned whole.
    fn take(&mut self, events: Vec<Event>) -> bool {
        for ev in events {
            let entry = match ev {
                Event::Shell(s) => {
                    self.parsed.shell.push(s);
                    continue;
                }
                Event::Entry(entry) => entry,
            };
            self.parsed.note_format(&entry);
            let i = self.count;
            self.count += 1;
            match entry {
                Entry::Malformed(m) => self.collected.push(EditReport::malformed(i, &m)),
                Entry::Edit(e) if matches!(e.op, EditOp::Rename { .. }) => return false,
                Entry::Edit(e) => self.edit(i, e),
            }
        }
        true
    }

    /// Plans one edit against its file (read on its first edit).
    fn edit(&mut self, i: usize, e: Edit) {
        let ws = self.ws;
        let key = ws.normalize(&e.path).unwrap_or_else(|_| e.path.clone());
        let at = match self.index.get(&key) {
            Some(&at) => at,
            None => {
                let file = self.open(&e);
                self.files.push((key.clone(), file));
                self.index.insert(key, self.files.len() - 1);
                self.files.len() - 1
            }
        };
        match &mut self.files[at].1 {
            File::Planning { planner, spans, .. } => {
                planner.push(i, &e);
                for r in planner.take_done() {
                    keep(&mut self.collected, spans, r);
                }
            }
            File::Refused(f) => {
                let failure = Failure::new(f.kind(), f.to_string(), f.fix());
                self.collected.push(EditReport::failed(i, &e, failure));
            }
            File::Folder(edits) => edits.push((i, e)),
        }
    }

    /// Reads the file `e` names and checks its expectation.
    fn open(&self, e: &Edit) -> File {
        let ws = self.ws;
        let snap = match ws.read(&e.path) {
            Ok(snap) => snap,
            Err(mend_workspace::Error::NotAFile {
                kind: "a directory",
                ..
            }) => return File::Folder(Vec::new()),
            Err(err) => return File::Refused(err),
        };
        if let Some(stale) = unexpected(ws, &snap, self.opts) {
            return File::Refused(stale);
        }
        let original = snap.text().map(|f| f.text.as_str());
        let planner = FilePlanner::new(&snap.rel, original, &self.plan_opts);
        File::Planning {
            snap: Box::new(snap),
            planner: Box::new(planner),
            spans: Vec::new(),
        }
    }

    /// Plans the edits of a path where a folder stands, as
    /// [`super::plan_from`] does: a creation if every edit creates.
    fn folder(
        &mut self,
        key: &str,
        edits: &[(usize, Edit)],
    ) -> Option<(Snapshot, mend_core::FilePlan, Vec<mend_syntax::EditSpan>)> {
        let ws = self.ws;
        let refs: Vec<(usize, &Edit)> = edits.iter().map(|(i, e)| (*i, e)).collect();
        let source = |rel: &str| ws.read(rel);
        match plan_one(ws, &source, key, &refs, self.opts, &self.plan_opts) {
            Ok((snap, mut plan)) => {
                let mut spans = Vec::new();
                for r in std::mem::take(&mut plan.reports) {
                    keep(&mut self.collected, &mut spans, r);
                }
                Some((snap, plan, spans))
            }
            Err(f) => {
                for (i, e) in refs {
                    let failure = Failure::new(f.kind(), f.to_string(), f.fix());
                    self.collected.push(EditReport::failed(i, e, failure));
                }
                None
            }
        }
    }

    /// Finishes every file's plan, then checks, writes and reports as
    /// [`run_parsed`] does.
    fn finish(mut self, lock: &Lock) -> Result<ApplyReport, ApplyError> {
        let (ws, opts) = (self.ws, self.opts);
        let mut plans = Vec::new();
        let mut all_spans = Vec::new();
        for (key, file) in std::mem::take(&mut self.files) {
            match file {
                File::Planning {
                    snap,
                    planner,
                    mut spans,
                } => {
                    let mut plan = planner.finish();
                    for r in std::mem::take(&mut plan.reports) {
                        keep(&mut self.collected, &mut spans, r);
                    }
                    spans.sort_by_key(|s| s.index);
                    plans.push((*snap, plan));
                    all_spans.push(spans);
                }
                File::Refused(_) => {}
                File::Folder(edits) => {
                    if let Some((snap, plan, spans)) = self.folder(&key, &edits) {
                        plans.push((snap, plan));
                        all_spans.push(spans);
                    }
                }
            }
        }
        let ok = self.collected.all_ok();
        let (outcome, write) = settle(ws, lock, &plans, &all_spans, ok, opts)?;
        Ok(outcome.report(self.collected, &self.parsed, opts.dry_run, write))
    }
}

/// Collects a final report, noting where an applied edit landed for the
/// syntax check.
fn keep(collected: &mut Collector, spans: &mut Vec<mend_syntax::EditSpan>, r: EditReport) {
    if r.is_ok() {
        spans.push(mend_syntax::EditSpan {
            index: r.index,
            lines: r.lines,
        });
    }
    collected.push(r);
}
