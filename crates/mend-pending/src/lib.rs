//! Pending changes: a model's proposals held beside the files as the model
//! saw them, for a person to accept or reject file by file or hunk by hunk.
//!
//! A session (`.mend/pending/<name>/`) holds, per file, its **context**
//! (the text the model saw) and its **output** (the proposed content, a
//! deletion or a rename). [`Session::propose`] plans a response exactly as
//! `mend apply` does (same formats, ladder and reports, all or nothing)
//! against each file's output if it has one, else its context, else the
//! file as it is now, and stores the results instead of writing them. A
//! pending rename's target reads as the renamed text, and later proposals
//! edit it there.
//!
//! Each file has a status letter ([`Status`]), comparing context, output
//! and the file on disk byte for byte (line endings count); a file that
//! cannot be read as text gets `?` and a reason, and the rest of the
//! session works. Accepting writes through one `mend-workspace`
//! transaction; when the file changed locally since the model saw it
//! (`~M`), it is merged three ways (base: context, ours: local, theirs:
//! output) and written only if the merge is clean, or with conflict
//! markers when asked. [`Session::sync`] makes the file as it is now the
//! context and carries each output over to it by the same merge, refusing
//! when it conflicts. A hunk is a run of changed lines between context and
//! output, numbered from 1 as [`Session::diff`] shows them; hunks are
//! recomputed for every action.
//!
//! **Concurrency.** The session holds no state in memory: every action
//! reads the index when it runs, and every action that changes it takes
//! the session's lock (an OS file lock, waiting up to the workspace's lock
//! timeout) before that read and keeps it through the save, so no decision
//! is lost to another process saving an older index. Status, diff and the
//! merge preview take it too, so they never see an accept half done (its
//! file written, its index not yet). A proposal that
//! streams in reads through a [`Recorder`] without the lock and is held at
//! its end, under the lock, against the index as it is then: a file whose
//! session text changed meanwhile is merged three ways or the proposal is
//! refused, never overwritten. When both locks are needed, the workspace
//! lock is taken first.
//!
//! **Requests.** While a proposal comes in ([`Session::request`]: `mend
//! apply --pending`, streamed or not, an MCP proposal), accept, reject,
//! sync, add and drop are refused (kind `busy`), naming the proposing
//! command and its process id; status and diff are not. The lock dies with
//! the process that holds it (`request.rs`).

mod act;
mod error;
mod propose;
mod request;
mod store;

use std::path::PathBuf;

use mend_core::text::escape_controls as esc;
use mend_merge::hunks;
use mend_workspace::{Encoding, Snapshot, TextFile, Workspace};
use serde::Serialize;

pub use act::{Accepted, Settled, Synced};
pub use error::Error;
pub use propose::{Proposal, Propose, Recorder, Streamed};
pub use request::Request;
use store::{Entry, Index, Output, Store, Text};

/// The session used when none is named.
pub const DEFAULT_SESSION: &str = "default";

/// A file's state in a session, as a status letter.
pub use mend_core::report::Status;

/// One line of `status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct FileStatus {
    /// The path, relative to the root.
    pub path: String,
    /// Its letter: ` `, `M`, `A`, `!A`, `D`, `R`, `!R`, `~`, `~M` or `?`.
    pub status: Status,
    /// Where a rename goes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// Why a `?` file cannot be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// How many numbered hunks its diff from the context has (0 for a
    /// deletion, a rename or no output: those are taken whole).
    pub hunks: usize,
    /// The version of its proposal, which hunk actions take back as
    /// `seen` ([`HunkGuard::Version`]); `None` without a numbered diff.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// A session's files and their letters: what `mend pending status --json`,
/// MCP's `pending_status` and the editor's `pending/status` answer, and
/// what a proposal held.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct StatusReport {
    /// The session.
    pub session: String,
    /// Its files, in path order.
    pub files: Vec<FileStatus>,
    /// The requests coming into the session now (see
    /// [`Session::request`]), each as its command and process id: while
    /// there is one, accept, reject, sync, add and drop are refused.
    /// Left out when there is none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub streaming: Vec<String>,
}

/// Which text a diff starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Against {
    /// The context: what the model saw (hunks are numbered this way).
    #[default]
    Context,
    /// The file as it is now (hunks are numbered only while the file is
    /// unchanged, since `--hunk` counts them from the context).
    Local,
}

/// One output's diff, as [`Session::diff_files`] makes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputDiff {
    /// The file.
    pub path: String,
    /// The version of the file's proposal whose hunks are numbered here
    /// (`--seen` takes it); `None` when the hunks are not numbered.
    pub version: Option<String>,
    /// Its unified diff, or a `# PATH: reason` line when the file cannot
    /// be read.
    pub text: String,
    /// Its hunks as data, numbered as `text` shows them.
    pub hunks: Vec<mend_core::diff::DiffHunk>,
}

/// How an action on hunks knows their numbers are the ones the person saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HunkGuard<'a> {
    /// As the last recorded diff numbered them (`mend pending diff`, the
    /// editor's `pending/diff`): refused when the file's proposal changed
    /// since; allowed when no diff of it was recorded.
    #[default]
    LastDiff,
    /// As they were in this version of the file's proposal (a diff's
    /// `version`); refused when the proposal is another now.
    Version(&'a str),
}

/// An open session. It caches nothing: each action reads the session as
/// it is when the action runs.
pub struct Session<'w> {
    ws: &'w Workspace,
    name: String,
    store: Store,
    syntax: mend_core::report::syntax::SyntaxPolicy,
    merge: mend_merge::Policy,
    holder: String,
}

impl<'w> Session<'w> {
    /// Opens (creating if needed) session `name` of `ws`.
    pub fn open(ws: &'w Workspace, name: &str) -> Result<Session<'w>, Error> {
        let store = Store::create(ws, checked(name)?)?;
        Ok(Session::with_store(ws, name, store))
    }

    fn with_store(ws: &'w Workspace, name: &str, store: Store) -> Session<'w> {
        Session {
            ws,
            name: name.to_owned(),
            store,
            syntax: Default::default(),
            merge: Default::default(),
            holder: "mend".to_owned(),
        }
    }

    /// Opens session `name` only if it exists. A damaged session opens
    /// too, so it can be dropped.
    pub fn existing(ws: &'w Workspace, name: &str) -> Result<Session<'w>, Error> {
        match Store::existing(ws, checked(name)?)? {
            Some(store) => Ok(Session::with_store(ws, name, store)),
            None => Err(Error::NoSession(name.to_owned())),
        }
    }

    /// The session names of `ws`.
    pub fn list(ws: &Workspace) -> Result<Vec<String>, Error> {
        let mut names = Store::names(ws)?;
        names.sort();
        Ok(names)
    }

    /// Deletes session `name` and everything it holds, once no action
    /// holds it. Its index is not read, so a damaged session can be
    /// dropped.
    pub fn drop_session(ws: &Workspace, name: &str) -> Result<(), Error> {
        let mut session = Session::existing(ws, name)?;
        session.set_holder("mend pending drop");
        let (held, _quiet) = session.lock_acting()?;
        session.store.remove(ws, held)
    }

    /// The session's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The session's index file. Every change to the session replaces it
    /// (a new file renamed into place), so a watcher can compare its
    /// metadata to see that the session changed, without reading it.
    pub fn index_path(&self) -> PathBuf {
        self.store.index_path()
    }

    /// Names this process in the session's lock while it holds it (such
    /// as `mend pending accept`), so an action that waits can say what it
    /// waits for.
    pub fn set_holder(&mut self, holder: &str) {
        self.holder = holder.to_owned();
    }

    /// Takes the session's lock, waiting up to the workspace's lock
    /// timeout. A transaction journal means a killed process left a write
    /// half done (an accept, an apply): it is finished first, under the
    /// workspace lock (taken before the session's), so no action reads or
    /// decides on a half-done state. Taking the workspace lock does that,
    /// and whoever holds it has, so a caller holding it never waits here.
    fn lock(&self) -> Result<store::Held, Error> {
        let held = self.lock_session()?;
        if !self.ws.journal_present()? {
            return Ok(held);
        }
        drop(held);
        let _finished = self.ws.lock()?;
        self.lock_session()
    }

    fn lock_session(&self) -> Result<store::Held, Error> {
        match self
            .store
            .lock(self.ws, self.ws.options().lock_timeout, &self.holder)?
        {
            store::Wait::Held(held) => Ok(held),
            store::Wait::Busy { holder, waited_ms } => Err(Error::Busy {
                session: self.name.clone(),
                holder,
                waited_ms,
            }),
        }
    }

    /// The index as it is now.
    fn load(&self) -> Result<Index, Error> {
        let mut index = self.store.load()?;
        self.settle(&mut index);
        Ok(index)
    }

    /// Reads the index under the session's lock, lets `change` change it,
    /// and saves it when `change` succeeds; refused while a request comes
    /// in (see [`Session::request`]).
    fn update<T>(&self, change: impl FnOnce(&mut Index) -> Result<T, Error>) -> Result<T, Error> {
        let _held = self.lock_acting()?;
        let mut index = self.load()?;
        let out = change(&mut index)?;
        self.store.save(&index)?;
        Ok(out)
    }

    /// The retry context of the last failed proposal, if any.
    pub fn retry_context(&self) -> Result<Option<String>, Error> {
        Ok(self.locked()?.1.retry)
    }

    /// Snapshots files as their context (what the model is shown). A file
    /// with an output keeps its context: `sync` replaces it on purpose.
    /// Every file must exist; otherwise nothing is added.
    pub fn add(&mut self, paths: &[String]) -> Result<Vec<String>, Error> {
        let mut snaps: Vec<Snapshot> = Vec::new();
        for p in paths {
            let snap = self.ws.read(p)?;
            if snaps.iter().any(|s| s.rel == snap.rel) {
                continue;
            }
            if snap.text().is_none() {
                return Err(Error::Nothing {
                    path: snap.rel,
                    why: "does not exist, so it cannot be added; nothing was added".into(),
                });
            }
            snaps.push(snap);
        }
        self.update(|index| {
            let mut added = Vec::new();
            for snap in snaps {
                let has_output = index
                    .files
                    .get(&snap.rel)
                    .is_some_and(|e| e.output.is_some());
                if !has_output {
                    let context = self.store_text(snap.text())?;
                    index.files.entry(snap.rel.clone()).or_default().context = context;
                    added.push(snap.rel);
                }
            }
            Ok(added)
        })
    }

    /// The index, read under the session's lock and with the lock still
    /// held, for reads that compare it with the files: an accept writes a
    /// file before it saves the index, and a read between the two would
    /// see a decision half made.
    fn locked(&self) -> Result<(store::Held, Index), Error> {
        let held = self.lock()?;
        Ok((held, self.load()?))
    }

    /// Settles as accepted what an accept wrote but did not record (one
    /// killed after its commit point, finished by recovery): an output
    /// that the file on disk holds byte for byte becomes its context, as
    /// the accept would have saved it, and a rename whose source is gone
    /// and whose target holds its text moves to the target. Kept in memory;
    /// the next action that saves the index keeps it.
    fn settle(&self, index: &mut Index) {
        let on_disk = |rel: &str| self.ws.read(rel).ok().map(|s| s.file.map(|f| f.hash));
        let written: Vec<String> = index
            .files
            .iter()
            .filter(|(rel, entry)| match &entry.output {
                Some(Output::Write { text }) => on_disk(rel) == Some(Some(text.hash)),
                Some(Output::Rename { to, text }) => {
                    on_disk(rel) == Some(None) && on_disk(to) == Some(Some(text.hash))
                }
                Some(Output::Delete) | None => false,
            })
            .map(|(rel, _)| rel.clone())
            .collect();
        for rel in written {
            let Some(Entry {
                output: Some(Output::Write { text } | Output::Rename { text, .. }),
                ..
            }) = index.files.get(&rel).cloned()
            else {
                continue;
            };
            let to = match index.files.remove(&rel).and_then(|e| e.output) {
                Some(Output::Rename { to, .. }) => to,
                _ => rel,
            };
            let settled = Entry {
                context: Some(text),
                output: None,
            };
            index.files.insert(to, settled);
        }
    }

    /// One status line per file, in path order. A file that cannot be
    /// read gets `?` and the reason; the others are unaffected.
    pub fn status(&self) -> Result<Vec<FileStatus>, Error> {
        let (_held, index) = self.locked()?;
        Ok(index
            .files
            .iter()
            .map(|(path, entry)| self.status_of(&index, path, entry))
            .collect())
    }

    /// The session's name, [`Session::status`] and the requests coming in.
    pub fn report(&self) -> Result<StatusReport, Error> {
        Ok(StatusReport {
            session: self.name.clone(),
            files: self.status()?,
            streaming: self.streaming()?,
        })
    }

    /// Whether `to` is taken on disk (a file, or anything that is not one)
    /// and no output in the session moves or deletes what is there.
    fn occupied(&self, index: &Index, to: &str) -> bool {
        let vacated = index
            .files
            .get(to)
            .is_some_and(|e| matches!(e.output, Some(Output::Delete | Output::Rename { .. })));
        let taken = self.ws.read(to).map_or(true, |s| s.text().is_some());
        taken && !vacated
    }

    fn status_of(&self, index: &Index, path: &str, entry: &Entry) -> FileStatus {
        let to = match &entry.output {
            Some(Output::Rename { to, .. }) => Some(to.clone()),
            _ => None,
        };
        let line = |status: Status, reason: Option<String>| FileStatus {
            path: path.to_owned(),
            status,
            to: to.clone(),
            reason,
            hunks: 0,
            version: None,
        };
        let local = match self.ws.read(path) {
            Ok(local) => local,
            Err(e) => return line(Status::Unreadable, Some(unreadable(&e))),
        };
        let local_hash = local.text().map(|f| f.hash);
        let context_hash = entry.context.as_ref().map(|c| c.hash);
        let changed_locally = local_hash != context_hash;
        let status = match (&entry.output, changed_locally) {
            (None, false) => Status::Clean,
            (None, true) => Status::LocalChange,
            (Some(Output::Write { .. }), _) if entry.context.is_none() => {
                if local_hash.is_some() {
                    Status::AddedOverLocal
                } else {
                    Status::Added
                }
            }
            // Deleted here too: accepting only clears the entry.
            (Some(Output::Delete), _) if local_hash.is_none() => Status::Deleted,
            (Some(Output::Rename { to, .. }), _) if self.occupied(index, to) => {
                Status::RenamedOverLocal
            }
            (Some(_), true) => Status::Conflict,
            (Some(Output::Write { text }), false) if Some(text.hash) == context_hash => {
                Status::Clean
            }
            (Some(Output::Write { .. }), false) => Status::Modified,
            (Some(Output::Delete), false) => Status::Deleted,
            (Some(Output::Rename { .. }), false) => Status::Renamed,
        };
        let mut line = line(status, None);
        if let Some(Output::Write { text }) = &entry.output {
            // Counted as `diff` numbers them: from the context to the
            // output. A text that cannot be read leaves the count at 0;
            // `diff` then says why.
            let context = self.text_of(path, entry.context.as_ref());
            if let (Ok(context), Ok(output)) = (context, self.blob(path, text)) {
                line.hunks = hunks::count(context.as_deref().unwrap_or(""), &output);
                line.version = (line.hunks > 0).then(|| version(entry));
            }
        }
        line
    }

    /// A unified diff of each output (all files when `paths` is empty),
    /// from the context or from the file as it is now. Hunks are numbered
    /// as `--hunk` counts them; a deletion, a rename, and a diff against a
    /// file changed locally are not numbered, since `--hunk` cannot act on
    /// those. A file that cannot be read is named in a `#` line instead.
    pub fn diff(&self, paths: &[String], against: Against) -> Result<String, Error> {
        let files = self.diff_files(paths, against, false)?;
        Ok(files.into_iter().map(|f| f.text).collect())
    }

    /// [`Session::diff`] file by file, each numbered one with the version
    /// of its proposal. With `record`, the session keeps those versions as
    /// what a person was shown last (`mend pending diff`), and an action
    /// on hunks of a file whose proposal changed since is refused
    /// ([`HunkGuard::LastDiff`]).
    pub fn diff_files(
        &self,
        paths: &[String],
        against: Against,
        record: bool,
    ) -> Result<Vec<OutputDiff>, Error> {
        let (_held, index) = self.locked()?;
        let mut out = Vec::new();
        for rel in select(&index, &self.name, self.ws, paths)? {
            if let Some(d) = self.diff_one(&index, &rel, against)? {
                out.push(d);
            }
        }
        if record {
            let mut shown = self.store.shown();
            let before = shown.clone();
            shown.retain(|path, _| index.files.contains_key(path));
            for f in &out {
                if let Some(v) = &f.version {
                    shown.insert(f.path.clone(), v.clone());
                }
            }
            if shown != before {
                self.store.save_shown(&shown)?;
            }
        }
        Ok(out)
    }

    /// One file's part of a diff; `None` when it has no output.
    fn diff_one(
        &self,
        index: &Index,
        rel: &str,
        against: Against,
    ) -> Result<Option<OutputDiff>, Error> {
        let entry = &index.files[rel];
        let Some(output) = &entry.output else {
            return Ok(None);
        };
        let context = self.text_of(rel, entry.context.as_ref())?;
        let (from, numbered) = match against {
            Against::Context => (context, true),
            Against::Local => match self.ws.read(rel) {
                Ok(local) => {
                    let same =
                        local.text().map(|f| &f.hash) == entry.context.as_ref().map(|c| &c.hash);
                    (local.file.map(|f| f.text), same)
                }
                Err(e) => {
                    return Ok(Some(OutputDiff {
                        path: rel.to_owned(),
                        version: None,
                        text: format!("# {}: {}\n", esc(rel), unreadable(&e)),
                        hunks: Vec::new(),
                    }));
                }
            },
        };
        let (to_path, to_text, numbered) = match output {
            Output::Write { text } => (rel.to_owned(), Some(self.blob(rel, text)?), numbered),
            Output::Rename { to, text } => (to.clone(), Some(self.blob(rel, text)?), false),
            Output::Delete => (rel.to_owned(), None, false),
        };
        let shown = mend_core::diff::render_file(
            (rel, from.as_deref()),
            (&to_path, to_text.as_deref()),
            numbered,
        );
        let text = shown.text();
        let version = (numbered && !text.is_empty()).then(|| version(entry));
        Ok(Some(OutputDiff {
            path: rel.to_owned(),
            version,
            text,
            hunks: shown.hunks,
        }))
    }

    /// The syntax check of later proposals (`Warn` unless set): with
    /// `Refuse`, a proposal whose outputs would not parse is held back like
    /// a failed one.
    pub fn set_syntax(&mut self, policy: mend_core::report::syntax::SyntaxPolicy) {
        self.syntax = policy;
    }

    /// How a file changed since the model saw it is merged with the
    /// proposal (accept, sync, preview, a proposal streamed over a local
    /// change): git's merge only, the default, or then the safe resolvers
    /// when set to [`mend_merge::Policy::Safe`].
    pub fn set_merge_policy(&mut self, policy: mend_merge::Policy) {
        self.merge = policy;
    }

    /// A file as a model reading it should see it: its pending text when
    /// it has one (its output, or the text a pending rename moves to it);
    /// otherwise the file on disk, which becomes its context (the model
    /// has now seen it).
    pub fn read(&mut self, raw: &str) -> Result<Snapshot, Error> {
        let rel = self.ws.normalize(raw)?;
        let _held = self.lock()?;
        let mut index = self.load()?;
        let pending = store::rename_source(&index, &rel).is_some()
            || index.files.get(&rel).is_some_and(|e| e.output.is_some());
        if pending {
            return Ok(self.view(&index, &rel)?);
        }
        let snap = self.ws.read(&rel)?;
        if snap.text().is_some() || index.files.contains_key(&rel) {
            let context = self.store_text(snap.text())?;
            index.files.entry(rel).or_default().context = context;
            self.store.save(&index)?;
        }
        Ok(snap)
    }

    /// What the model sees of a file, and what [`Session::propose`] plans
    /// against: its output (or the text a pending rename moves to it), else
    /// its context, else the file on disk. Read under the session's lock,
    /// released before it returns.
    pub fn seen(&self, raw: &str) -> Result<Snapshot, mend_workspace::Error> {
        let rel = self.ws.normalize(raw)?;
        let (_held, index) = self.locked().map_err(|e| mend_workspace::Error::Io {
            context: format!("reading pending session `{}`", esc(&self.name)),
            cause: std::io::Error::other(e.to_string()),
        })?;
        self.view(&index, &rel)
    }

    /// [`Session::seen`] against a loaded index.
    fn view(&self, index: &Index, rel: &str) -> Result<Snapshot, mend_workspace::Error> {
        self.view_in(index, rel).map_err(|e| as_workspace(rel, e))
    }

    /// [`Session::view`], telling a damaged session text apart.
    fn view_in(&self, index: &Index, rel: &str) -> Result<Snapshot, Error> {
        let text = match store::rename_source(index, rel) {
            Some((_, text)) => Some(text),
            None => {
                let Some(entry) = index.files.get(rel) else {
                    return Ok(self.ws.read(rel)?);
                };
                match &entry.output {
                    Some(Output::Write { text }) => Some(text),
                    Some(Output::Delete | Output::Rename { .. }) => None,
                    None => entry.context.as_ref(),
                }
            }
        };
        let file = match text {
            Some(t) => Some(TextFile {
                text: self.blob(rel, t)?,
                encoding: t.encoding,
                hash: t.hash,
            }),
            None => None,
        };
        Ok(Snapshot {
            path: self.ws.resolve(rel)?,
            rel: rel.to_owned(),
            file,
        })
    }

    /// A stored text of file `rel`; a damaged one names the file.
    fn blob(&self, rel: &str, text: &Text) -> Result<String, Error> {
        self.store.get(text).map_err(|e| match e {
            Error::Corrupt { session, what } => Error::Damaged {
                session,
                path: rel.to_owned(),
                what,
            },
            other => other,
        })
    }

    fn store_text(&self, file: Option<&TextFile>) -> Result<Option<Text>, Error> {
        file.map(|f| self.store.put(&f.text, f.encoding))
            .transpose()
    }

    fn text_of(&self, rel: &str, text: Option<&Text>) -> Result<Option<String>, Error> {
        text.map(|t| self.blob(rel, t)).transpose()
    }
}

/// The session's paths named by `paths` (all when empty), normalized,
/// each once. A path the session holds is taken as it is spelled there,
/// whatever it has become on disk (a link out of the project, a folder),
/// since naming it reads nothing; the target of a pending rename names the
/// renamed file.
fn select(
    index: &Index,
    name: &str,
    ws: &Workspace,
    paths: &[String],
) -> Result<Vec<String>, Error> {
    if paths.is_empty() {
        return Ok(index.files.keys().cloned().collect());
    }
    let mut out: Vec<String> = Vec::new();
    for p in paths {
        let rel = match lexical(p).filter(|l| index.files.contains_key(l)) {
            Some(rel) => rel,
            None => ws.normalize(p)?,
        };
        let rel = match store::rename_source(index, &rel) {
            Some((from, _)) if !index.files.contains_key(&rel) => from.clone(),
            _ => rel,
        };
        if !index.files.contains_key(&rel) {
            return Err(Error::Nothing {
                path: rel,
                why: format!("not in session `{}`", esc(name)),
            });
        }
        if !out.contains(&rel) {
            out.push(rel);
        }
    }
    Ok(out)
}

/// `raw` as the index spells paths, by its text alone: `./` and empty
/// components dropped; `None` for anything that needs the filesystem
/// (`..`, an absolute path).
fn lexical(raw: &str) -> Option<String> {
    if raw.starts_with('/') {
        return None;
    }
    let parts: Vec<&str> = raw
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    (!parts.is_empty() && !parts.contains(&"..")).then(|| parts.join("/"))
}

/// The version of a file's entry: what its context and output are now,
/// as a short id a diff shows and `--seen` takes back.
fn version(entry: &Entry) -> String {
    let bytes = serde_json::to_vec(entry).expect("an entry serializes");
    mend_workspace::ContentHash::of(&bytes).short(12)
}

/// A session error met while reading a file's text for a plan, as the
/// planner takes read errors.
fn as_workspace(rel: &str, e: Error) -> mend_workspace::Error {
    match e {
        Error::Workspace(w) => w,
        other => mend_workspace::Error::Io {
            context: format!("reading the pending text of {}", esc(rel)),
            cause: std::io::Error::other(other.to_string()),
        },
    }
}

/// Why a file cannot be read as text, in a few words.
fn unreadable(e: &mend_workspace::Error) -> String {
    use mend_workspace::Error as W;
    match e {
        W::NotAFile { kind, .. } => format!("it is {kind}, not a regular file"),
        W::Binary { .. } => "it is a binary file".into(),
        W::NotText { detail, .. } => format!("it is not UTF-8 or UTF-16 text ({detail})"),
        W::TooLarge { size, limit, .. } => {
            format!("it is {size} bytes, over the {limit}-byte limit")
        }
        // The path is said before the reason; saying it again is noise.
        W::PathRefused { reason, .. } => reason.clone(),
        W::Io { cause, .. } => format!("it cannot be read ({cause})"),
        other => other.to_string(),
    }
}

/// The encoding a text keeps: the file's, else UTF-8.
fn encoding_of(file: Option<&TextFile>) -> Encoding {
    file.map_or(Encoding::Utf8, |f| f.encoding)
}

fn checked(name: &str) -> Result<&str, Error> {
    if store::valid_name(name) {
        Ok(name)
    } else {
        Err(Error::BadSession(name.to_owned()))
    }
}
