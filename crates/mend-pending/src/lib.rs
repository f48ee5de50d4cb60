//! Pending changes: a model's proposals held beside the files as the model
//! saw them, for a person to accept or reject file by file or hunk by hunk.
//!
//! A session (`.mend/pending/<name>/`) holds, per file, its **context**
//! (the text the model saw) and its **output** (the proposed content, a
//! deletion or a rename). [`Session::propose`] plans a response exactly as
//! `mend apply` does (same formats, ladder and reports, all or nothing)
//! against each file's output if it has one, else its context, else the
//! file as it is now, and stores the results instead of writing them.
//!
//! Each file has a status letter ([`Status`]), comparing context, output
//! and the file on disk byte for byte (line endings count). Accepting
//! writes through one `mend-workspace` transaction; when the file changed
//! locally since the model saw it (`~M`), it is merged three ways (base:
//! context, ours: local, theirs: output) and written only if the merge is
//! clean, or with conflict markers when asked. A hunk is a run of changed
//! lines between context and output, numbered from 1 as
//! [`Session::diff`] shows them; hunks are recomputed for every action.
//!
//! While a proposal streams into a session it holds the session's request
//! lock (an OS file lock); actions that change the session fail until it
//! is released, while status and diff still work.

mod act;
mod error;
mod hunks;
mod store;

use std::fs;
use std::path::PathBuf;

use mend_core::ApplyReport;
use mend_core::formats::{Entry as ParsedEntry, Parsed};
use mend_workspace::{Encoding, Snapshot, TextFile, Workspace};
use serde::Serialize;

pub use act::Accepted;
pub use error::Error;
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
    /// The output deletes the file (`D`).
    Deleted,
    /// The output renames the file (`R`).
    Renamed,
    /// The file changed locally since the context, no output (`~`).
    LocalChange,
    /// The file changed locally and there is an output: a conflict (`~M`).
    Conflict,
}

impl Status {
    /// The letter: `" "`, `M`, `A`, `!A`, `D`, `R`, `~` or `~M`.
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
        }
    }
}

/// One line of `status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileStatus {
    /// The path, relative to the root.
    pub path: String,
    /// Its letter.
    pub status: &'static str,
    /// Where a rename goes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
}

/// Which text a diff starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Against {
    /// The context: what the model saw (hunks are numbered this way).
    #[default]
    Context,
    /// The file as it is now.
    Local,
}

/// An open session.
pub struct Session<'w> {
    ws: &'w Workspace,
    name: String,
    store: Store,
    index: Index,
    syntax: mend_core::syntax::SyntaxPolicy,
}

/// Held while a proposal streams into a session; released when dropped.
#[derive(Debug)]
#[must_use = "the request lock is released when dropped"]
pub struct RequestLock {
    _file: fs::File,
}

impl<'w> Session<'w> {
    /// Opens (creating if needed) session `name` of `ws`.
    pub fn open(ws: &'w Workspace, name: &str) -> Result<Session<'w>, Error> {
        let store = Store::create(ws, checked(name)?)?;
        Session::with_store(ws, name, store)
    }

    fn with_store(ws: &'w Workspace, name: &str, store: Store) -> Result<Session<'w>, Error> {
        let index = store.load()?;
        Ok(Session {
            ws,
            name: name.to_owned(),
            store,
            index,
            syntax: Default::default(),
        })
    }

    /// Opens session `name` only if it exists.
    pub fn existing(ws: &'w Workspace, name: &str) -> Result<Session<'w>, Error> {
        match Store::existing(ws, checked(name)?)? {
            Some(store) => Session::with_store(ws, name, store),
            None => Err(Error::NoSession(name.to_owned())),
        }
    }

    /// The session names of `ws`.
    pub fn list(ws: &Workspace) -> Result<Vec<String>, Error> {
        let mut names = Store::names(ws)?;
        names.sort();
        Ok(names)
    }

    /// Deletes session `name` and everything it holds.
    pub fn drop_session(ws: &Workspace, name: &str) -> Result<(), Error> {
        let session = Session::existing(ws, name)?;
        let _guard = session.not_streaming()?;
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

    /// Takes the request lock for a streaming proposal; fails when another
    /// holds it.
    pub fn request_lock(&self) -> Result<RequestLock, Error> {
        let file = self.store.lock_file("request.lock")?;
        match file.try_lock() {
            Ok(()) => Ok(RequestLock { _file: file }),
            Err(fs::TryLockError::WouldBlock) => Err(Error::Streaming(self.name.clone())),
            Err(fs::TryLockError::Error(cause)) => Err(Error::Io {
                context: format!("locking {}", self.store.dir.shown("request.lock")),
                cause,
            }),
        }
    }

    /// Fails while a proposal streams in; otherwise holds the request lock
    /// for the action, so none starts meanwhile.
    fn not_streaming(&self) -> Result<RequestLock, Error> {
        self.request_lock()
    }

    /// The retry context of the last failed proposal, if any.
    pub fn retry_context(&self) -> Option<&str> {
        self.index.retry.as_deref()
    }

    /// Snapshots files as their context (what the model is shown). A file
    /// with an output keeps its context: `sync` replaces it on purpose.
    pub fn add(&mut self, paths: &[String]) -> Result<Vec<String>, Error> {
        let _guard = self.not_streaming()?;
        let mut added = Vec::new();
        for p in paths {
            let snap = self.ws.read(p)?;
            let has_output = self
                .index
                .files
                .get(&snap.rel)
                .is_some_and(|e| e.output.is_some());
            if !has_output {
                let context = self.store_text(snap.text())?;
                self.index
                    .files
                    .entry(snap.rel.clone())
                    .or_default()
                    .context = context;
                added.push(snap.rel);
            }
        }
        self.store.save(&self.index)?;
        Ok(added)
    }

    /// Sets each file's context to the file as it is now (all files when
    /// `paths` is empty), keeping outputs.
    pub fn sync(&mut self, paths: &[String]) -> Result<Vec<String>, Error> {
        let _guard = self.not_streaming()?;
        let mut synced = Vec::new();
        for rel in self.select(paths)? {
            let snap = self.ws.read(&rel)?;
            let context = self.store_text(snap.text())?;
            if let Some(e) = self.index.files.get_mut(&rel) {
                e.context = context;
            }
            synced.push(rel);
        }
        self.store.save(&self.index)?;
        Ok(synced)
    }

    /// One status line per file, in path order.
    pub fn status(&self) -> Result<Vec<FileStatus>, Error> {
        let mut out = Vec::new();
        for (path, entry) in &self.index.files {
            let local = self.ws.read(path)?;
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
                (Some(_), true) => Status::Conflict,
                (Some(Output::Write { text }), false)
                    if Some(text.hash.as_str()) == context_hash =>
                {
                    Status::Clean
                }
                (Some(Output::Write { .. }), false) => Status::Modified,
                (Some(Output::Delete), false) => Status::Deleted,
                (Some(Output::Rename { .. }), false) => Status::Renamed,
            };
            let to = match &entry.output {
                Some(Output::Rename { to, .. }) => Some(to.clone()),
                _ => None,
            };
            out.push(FileStatus {
                path: path.clone(),
                status: status.letter(),
                to,
            });
        }
        Ok(out)
    }

    /// A unified diff of each output (all files when `paths` is empty),
    /// from the context or from the file as it is now; its hunks are
    /// numbered as `--hunk` counts them.
    pub fn diff(&self, paths: &[String], against: Against) -> Result<String, Error> {
        let mut out = String::new();
        for rel in self.select(paths)? {
            let entry = &self.index.files[&rel];
            let Some(output) = &entry.output else {
                continue;
            };
            let from = match against {
                Against::Context => self.text_of(entry.context.as_ref())?,
                Against::Local => self.ws.read(&rel)?.text().map(|f| f.text.clone()),
            };
            let (to_path, to_text) = match output {
                Output::Write { text } => (rel.clone(), Some(self.store.get(text)?)),
                Output::Rename { to, text } => (to.clone(), Some(self.store.get(text)?)),
                Output::Delete => (rel.clone(), None),
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

    /// Plans `parsed` as `mend apply` would, against each file's output,
    /// else its context, else the file as it is now (which becomes its
    /// context), and stores the new outputs, all or nothing. A failed
    /// proposal stores nothing but its retry context.
    pub fn propose(&mut self, parsed: &Parsed) -> Result<ApplyReport, Error> {
        self.propose_expecting(parsed, std::collections::HashMap::new())
    }

    /// [`Session::propose`], refusing a file whose text as the model sees
    /// it (see [`Session::read`]) no longer hashes to the expected version.
    pub fn propose_expecting(
        &mut self,
        parsed: &Parsed,
        expect: std::collections::HashMap<String, String>,
    ) -> Result<ApplyReport, Error> {
        // Files the model names without a context get the file as it is.
        for entry in &parsed.entries {
            if let ParsedEntry::Edit(e) = entry
                && let Ok(rel) = self.ws.normalize(&e.path)
                && !self.index.files.contains_key(&rel)
            {
                let snap = self.ws.read(&rel)?;
                let context = self.store_text(snap.text())?;
                self.index.files.insert(
                    rel,
                    Entry {
                        context,
                        output: None,
                    },
                );
            }
        }
        let opts = mend_apply::ApplyOptions {
            dry_run: true,
            expect,
            syntax: self.syntax,
            ..mend_apply::ApplyOptions::default()
        };
        let view = |raw: &str| self.seen(raw);
        let planned = mend_apply::plan_from(self.ws, parsed, &opts, &view)?;
        if planned.ok {
            for (snap, plan) in &planned.plans {
                self.store_output(snap, plan)?;
            }
        }
        let report = planned.into_report(parsed, true, false);
        self.index.retry = report.retry_context.clone();
        self.store.save(&self.index)?;
        Ok(report)
    }

    /// A file as a model reading it should see it: its pending output when
    /// it has one; otherwise the file on disk, which becomes its context
    /// (the model has now seen it).
    pub fn read(&mut self, raw: &str) -> Result<Snapshot, Error> {
        let rel = self.ws.normalize(raw)?;
        if self
            .index
            .files
            .get(&rel)
            .is_some_and(|e| e.output.is_some())
        {
            return Ok(self.seen(&rel)?);
        }
        let snap = self.ws.read(&rel)?;
        if snap.text().is_some() || self.index.files.contains_key(&rel) {
            let context = self.store_text(snap.text())?;
            self.index.files.entry(rel).or_default().context = context;
            self.store.save(&self.index)?;
        }
        Ok(snap)
    }

    /// What the model sees of a file, and what [`Session::propose`] plans
    /// against: its output, else its context, else the file on disk.
    pub fn seen(&self, raw: &str) -> Result<Snapshot, mend_workspace::Error> {
        let rel = self.ws.normalize(raw)?;
        let Some(entry) = self.index.files.get(&rel) else {
            return self.ws.read(raw);
        };
        let text = match &entry.output {
            Some(Output::Write { text }) => Some(text),
            Some(Output::Delete) => None,
            Some(Output::Rename { .. }) => None,
            None => entry.context.as_ref(),
        };
        let file = match text {
            Some(t) => Some(TextFile {
                text: self.store.get(t).map_err(|e| mend_workspace::Error::Io {
                    context: format!("reading the pending text of {rel}"),
                    cause: std::io::Error::other(e.to_string()),
                })?,
                encoding: t.encoding,
                hash: t.hash.clone(),
            }),
            None => None,
        };
        Ok(Snapshot {
            path: self.ws.resolve(&rel)?,
            rel,
            file,
        })
    }

    fn store_output(&mut self, snap: &Snapshot, plan: &mend_core::FilePlan) -> Result<(), Error> {
        let encoding = snap.text().map_or(Encoding::Utf8, |f| f.encoding);
        let output = match (&plan.content, &plan.new_path) {
            (None, _) => Output::Delete,
            (Some(c), Some(to)) => Output::Rename {
                to: self.ws.normalize(to)?,
                text: self.store.put(c, encoding)?,
            },
            (Some(c), None) => Output::Write {
                text: self.store.put(c, encoding)?,
            },
        };
        let entry = self.index.files.entry(snap.rel.clone()).or_default();
        entry.output = Some(output);
        Ok(())
    }

    fn store_text(&self, file: Option<&TextFile>) -> Result<Option<Text>, Error> {
        file.map(|f| self.store.put(&f.text, f.encoding))
            .transpose()
    }

    fn text_of(&self, text: Option<&Text>) -> Result<Option<String>, Error> {
        text.map(|t| self.store.get(t)).transpose()
    }

    /// The session's paths named by `paths` (all when empty), normalized.
    fn select(&self, paths: &[String]) -> Result<Vec<String>, Error> {
        if paths.is_empty() {
            return Ok(self.index.files.keys().cloned().collect());
        }
        paths
            .iter()
            .map(|p| {
                let rel = self.ws.normalize(p)?;
                if self.index.files.contains_key(&rel) {
                    Ok(rel)
                } else {
                    Err(Error::Nothing {
                        path: rel,
                        why: format!("not in session `{}`", self.name),
                    })
                }
            })
            .collect()
    }
}

fn checked(name: &str) -> Result<&str, Error> {
    if store::valid_name(name) {
        Ok(name)
    } else {
        Err(Error::BadSession(name.to_owned()))
    }
}
