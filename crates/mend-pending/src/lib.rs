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

mod act;
mod error;
mod hunks;
mod propose;
mod store;

use std::path::PathBuf;

use mend_core::text::escape_controls as esc;
use mend_workspace::{Encoding, Snapshot, TextFile, Workspace};
use serde::Serialize;

pub use act::Accepted;
pub use error::{Error, ErrorReport};
pub use propose::{Proposal, Propose, Recorder, Streamed};
use store::{Entry, Index, Output, Store, Text};

/// The session used when none is named.
pub const DEFAULT_SESSION: &str = "default";

/// A file's state in a session, as a status letter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Status {
    /// In context, no output, unchanged locally (shown as a blank).
    Clean,
    /// The output differs from the context (`M`).
    Modified,
    /// The output creates a file that did not exist (`A`).
    Added,
    /// The output creates a file that now exists locally (`!A`).
    AddedOverLocal,
    /// The output deletes the file (`D`); also when the file is already
    /// gone, where accepting only clears the entry.
    Deleted,
    /// The output renames the file (`R`).
    Renamed,
    /// The file changed locally since the context, no output (`~`).
    LocalChange,
    /// The file changed locally and there is an output: a conflict (`~M`).
    Conflict,
    /// The file cannot be read as text now (binary, a folder, too large):
    /// `?`, with the reason.
    Unreadable,
}

impl Status {
    /// The letter: `" "`, `M`, `A`, `!A`, `D`, `R`, `~`, `~M` or `?`.
    pub fn letter(self) -> &'static str {
        match self {
            Status::Clean => " ",
            Status::Modified => "M",
            Status::Added => "A",
            Status::AddedOverLocal => "!A",
            Status::Deleted => "D",
            Status::Renamed => "R",
            Status::LocalChange => "~",
            Status::Conflict => "~M",
            Status::Unreadable => "?",
        }
    }
}

/// One line of `status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct FileStatus {
    /// The path, relative to the root.
    pub path: String,
    /// Its letter: ` `, `M`, `A`, `!A`, `D`, `R`, `~`, `~M` or `?`.
    pub status: &'static str,
    /// Where a rename goes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// Why a `?` file cannot be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
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

/// An open session. It caches nothing: each action reads the session as
/// it is when the action runs.
pub struct Session<'w> {
    ws: &'w Workspace,
    name: String,
    store: Store,
    syntax: mend_core::syntax::SyntaxPolicy,
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
        let session = Session::existing(ws, name)?;
        let _held = session.lock()?;
        Store::remove(ws, &session.name)?;
        Ok(())
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
            .lock(self.ws.options().lock_timeout, &self.holder)?
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
    /// and saves it when `change` succeeds.
    fn update<T>(&self, change: impl FnOnce(&mut Index) -> Result<T, Error>) -> Result<T, Error> {
        let _held = self.lock()?;
        let mut index = self.load()?;
        let out = change(&mut index)?;
        self.store.save(&index)?;
        Ok(out)
    }

    /// The retry context of the last failed proposal, if any.
    pub fn retry_context(&self) -> Result<Option<String>, Error> {
        Ok(self.load()?.retry)
    }

    /// Snapshots files as their context (what the model is shown). A file
    /// with an output keeps its context: `sync` replaces it on purpose.
    /// Every file must exist; otherwise nothing is added.
    pub fn add(&mut self, paths: &[String]) -> Result<Vec<String>, Error> {
        let mut snaps = Vec::new();
        for p in paths {
            let snap = self.ws.read(p)?;
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
                Some(Output::Write { text }) => on_disk(rel) == Some(Some(text.hash.clone())),
                Some(Output::Rename { to, text }) => {
                    on_disk(rel) == Some(None) && on_disk(to) == Some(Some(text.hash.clone()))
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
            .map(|(path, entry)| self.status_of(path, entry))
            .collect())
    }

    /// The session's name and [`Session::status`].
    pub fn report(&self) -> Result<StatusReport, Error> {
        Ok(StatusReport {
            session: self.name.clone(),
            files: self.status()?,
        })
    }

    fn status_of(&self, path: &str, entry: &Entry) -> FileStatus {
        let to = match &entry.output {
            Some(Output::Rename { to, .. }) => Some(to.clone()),
            _ => None,
        };
        let line = |status: Status, reason: Option<String>| FileStatus {
            path: path.to_owned(),
            status: status.letter(),
            to: to.clone(),
            reason,
        };
        let local = match self.ws.read(path) {
            Ok(local) => local,
            Err(e) => return line(Status::Unreadable, Some(unreadable(&e))),
        };
        let local_hash = local.text().map(|f| f.hash.as_str());
        let context_hash = entry.context.as_ref().map(|c| c.hash.as_str());
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
            (Some(_), true) => Status::Conflict,
            (Some(Output::Write { text }), false) if Some(text.hash.as_str()) == context_hash => {
                Status::Clean
            }
            (Some(Output::Write { .. }), false) => Status::Modified,
            (Some(Output::Delete), false) => Status::Deleted,
            (Some(Output::Rename { .. }), false) => Status::Renamed,
        };
        line(status, None)
    }

    /// A unified diff of each output (all files when `paths` is empty),
    /// from the context or from the file as it is now. Hunks are numbered
    /// as `--hunk` counts them; a deletion, a rename, and a diff against a
    /// file changed locally are not numbered, since `--hunk` cannot act on
    /// those. A file that cannot be read is named in a `#` line instead.
    pub fn diff(&self, paths: &[String], against: Against) -> Result<String, Error> {
        let (_held, index) = self.locked()?;
        let mut out = String::new();
        for rel in select(&index, &self.name, self.ws, paths)? {
            let entry = &index.files[&rel];
            let Some(output) = &entry.output else {
                continue;
            };
            let context = self.text_of(entry.context.as_ref())?;
            let (from, numbered) = match against {
                Against::Context => (context, true),
                Against::Local => match self.ws.read(&rel) {
                    Ok(local) => {
                        let same = local.text().map(|f| &f.hash)
                            == entry.context.as_ref().map(|c| &c.hash);
                        (local.file.map(|f| f.text), same)
                    }
                    Err(e) => {
                        out.push_str(&format!("# {}: {}\n", esc(&rel), unreadable(&e)));
                        continue;
                    }
                },
            };
            let (to_path, to_text, numbered) = match output {
                Output::Write { text } => (rel.clone(), Some(self.store.get(text)?), numbered),
                Output::Rename { to, text } => (to.clone(), Some(self.store.get(text)?), false),
                Output::Delete => (rel.clone(), None, false),
            };
            let old = from
                .as_ref()
                .map_or("/dev/null".to_owned(), |_| format!("a/{rel}"));
            let new = to_text
                .as_ref()
                .map_or("/dev/null".to_owned(), |_| format!("b/{to_path}"));
            out.push_str(&hunks::render(
                &old,
                &new,
                from.as_deref().unwrap_or(""),
                to_text.as_deref().unwrap_or(""),
                numbered,
            ));
        }
        Ok(out)
    }

    /// The syntax check of later proposals (`Warn` unless set): with
    /// `Refuse`, a proposal whose outputs would not parse is held back like
    /// a failed one.
    pub fn set_syntax(&mut self, policy: mend_core::syntax::SyntaxPolicy) {
        self.syntax = policy;
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
    /// its context, else the file on disk.
    pub fn seen(&self, raw: &str) -> Result<Snapshot, mend_workspace::Error> {
        let rel = self.ws.normalize(raw)?;
        let index = self.load().map_err(|e| mend_workspace::Error::Io {
            context: format!("reading pending session `{}`", self.name),
            cause: std::io::Error::other(e.to_string()),
        })?;
        self.view(&index, &rel)
    }

    /// [`Session::seen`] against a loaded index.
    fn view(&self, index: &Index, rel: &str) -> Result<Snapshot, mend_workspace::Error> {
        let text = match store::rename_source(index, rel) {
            Some((_, text)) => Some(text),
            None => {
                let Some(entry) = index.files.get(rel) else {
                    return self.ws.read(rel);
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
                text: self.store.get(t).map_err(|e| mend_workspace::Error::Io {
                    context: format!("reading the pending text of {}", esc(rel)),
                    cause: std::io::Error::other(e.to_string()),
                })?,
                encoding: t.encoding,
                hash: t.hash.clone(),
            }),
            None => None,
        };
        Ok(Snapshot {
            path: self.ws.resolve(rel)?,
            rel: rel.to_owned(),
            file,
        })
    }

    fn store_text(&self, file: Option<&TextFile>) -> Result<Option<Text>, Error> {
        file.map(|f| self.store.put(&f.text, f.encoding))
            .transpose()
    }

    fn text_of(&self, text: Option<&Text>) -> Result<Option<String>, Error> {
        text.map(|t| self.store.get(t)).transpose()
    }
}

/// The session's paths named by `paths` (all when empty), normalized.
fn select(
    index: &Index,
    name: &str,
    ws: &Workspace,
    paths: &[String],
) -> Result<Vec<String>, Error> {
    if paths.is_empty() {
        return Ok(index.files.keys().cloned().collect());
    }
    paths
        .iter()
        .map(|p| {
            let rel = ws.normalize(p)?;
            if index.files.contains_key(&rel) {
                Ok(rel)
            } else {
                Err(Error::Nothing {
                    path: rel,
                    why: format!("not in session `{name}`"),
                })
            }
        })
        .collect()
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
