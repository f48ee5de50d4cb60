//! Accepting and rejecting outputs, whole or hunk by hunk.

use mend_merge::{Labels, Options, Style, merge};
use mend_workspace::{Base, Change, Lock, Snapshot};
use serde::Serialize;

use crate::Session;
use crate::error::Error;
use crate::hunks;
use crate::store::{Entry, Output};

/// What accepting did to one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Accepted {
    /// The file.
    pub path: String,
    /// `written`, `hunks`, `merged`, `merged with conflict markers`,
    /// `deleted` or `renamed to PATH`.
    pub how: String,
}

/// How the index changes once the commit has landed.
enum Update {
    Set(String, Entry),
    Remove(String),
}

/// One file's part of an accept.
struct Plan {
    changes: Vec<Change>,
    updates: Vec<Update>,
    how: String,
}

impl Session<'_> {
    /// Writes the outputs of `paths` (every file with one when empty), or
    /// with `hunks` just those hunks of one file, through one workspace
    /// transaction. A file changed locally since its context is merged
    /// three ways; a conflicted merge is refused unless `markers`.
    pub fn accept(
        &mut self,
        lock: &Lock,
        paths: &[String],
        hunks: &[usize],
        markers: bool,
    ) -> Result<Vec<Accepted>, Error> {
        let _guard = self.not_streaming()?;
        let targets = self.with_output(paths)?;
        if !hunks.is_empty() && targets.len() != 1 {
            return Err(Error::Nothing {
                path: paths.join(", "),
                why: "--hunk needs exactly one file with an output".into(),
            });
        }
        let mut plans = Vec::new();
        for rel in &targets {
            plans.push(self.accept_one(rel, hunks, markers)?);
        }
        let changes: Vec<Change> = plans.iter().flat_map(|p| p.changes.clone()).collect();
        self.ws.commit(lock, &changes)?;
        let mut done = Vec::new();
        for (rel, plan) in targets.into_iter().zip(plans) {
            for u in plan.updates {
                match u {
                    Update::Set(path, entry) => {
                        self.index.files.insert(path, entry);
                    }
                    Update::Remove(path) => {
                        self.index.files.remove(&path);
                    }
                }
            }
            done.push(Accepted {
                path: rel,
                how: plan.how,
            });
        }
        self.store.save(&self.index)?;
        Ok(done)
    }

    fn accept_one(&self, rel: &str, picked: &[usize], markers: bool) -> Result<Plan, Error> {
        let entry = &self.index.files[rel];
        let local = self.ws.read(rel)?;
        let local_hash = local.text().map(|f| f.hash.clone());
        let unchanged = local_hash.as_deref() == entry.context.as_ref().map(|c| c.hash.as_str());
        let base = local_hash.map_or(Base::Absent, Base::Hash);
        let diverged = |why: &str| Error::Diverged {
            path: rel.to_owned(),
            why: why.to_owned(),
        };
        match entry.output.as_ref().expect("selected for an output") {
            Output::Write { text } => {
                let output = self.store.get(text)?;
                let encoding = local.text().map_or(text.encoding, |f| f.encoding);
                let (new, how) = if !picked.is_empty() {
                    if !unchanged {
                        return Err(diverged(
                            "the file changed since the model saw it; accept the whole file (a three-way merge), or sync first",
                        ));
                    }
                    (
                        self.picked(rel, entry, &output, picked)?,
                        "hunks".to_owned(),
                    )
                } else if unchanged {
                    (output.clone(), "written".to_owned())
                } else {
                    let (text, conflicts) = self.merged(rel, entry, &local, &output)?;
                    match (conflicts, markers) {
                        (0, _) => (text, "merged".to_owned()),
                        (_, true) => (text, "merged with conflict markers".to_owned()),
                        (n, false) => return Err(conflict(rel, &text, n)),
                    }
                };
                let context = self.store.put(&new, encoding)?;
                // Hunks left out of a partial accept stay proposed.
                let keep = (!picked.is_empty() && new != output)
                    .then(|| entry.output.clone())
                    .flatten();
                Ok(Plan {
                    changes: vec![Change::Write {
                        path: rel.to_owned(),
                        text: new,
                        encoding,
                        base,
                        mode_from: None,
                        executable: None,
                    }],
                    updates: vec![Update::Set(
                        rel.to_owned(),
                        Entry {
                            context: Some(context),
                            output: keep,
                        },
                    )],
                    how,
                })
            }
            Output::Delete | Output::Rename { .. } if !picked.is_empty() => Err(diverged(
                "a deletion or a rename has no hunks; accept or reject the whole file",
            )),
            _ if !unchanged => Err(diverged(
                "the file changed since the model saw it; sync and propose again, or reject the output",
            )),
            Output::Delete => Ok(Plan {
                changes: vec![Change::Delete {
                    path: rel.to_owned(),
                    base,
                }],
                updates: vec![Update::Remove(rel.to_owned())],
                how: "deleted".into(),
            }),
            Output::Rename { to, text } => Ok(Plan {
                changes: vec![
                    Change::Write {
                        path: to.clone(),
                        text: self.store.get(text)?,
                        encoding: text.encoding,
                        base: Base::Absent,
                        mode_from: Some(rel.to_owned()),
                        executable: None,
                    },
                    Change::Delete {
                        path: rel.to_owned(),
                        base,
                    },
                ],
                updates: vec![
                    Update::Remove(rel.to_owned()),
                    Update::Set(
                        to.clone(),
                        Entry {
                            context: Some(text.clone()),
                            output: None,
                        },
                    ),
                ],
                how: format!("renamed to {to}"),
            }),
        }
    }

    /// The context with the picked hunks of the output folded in.
    fn picked(
        &self,
        rel: &str,
        entry: &Entry,
        output: &str,
        picked: &[usize],
    ) -> Result<String, Error> {
        let context = self.text_of(entry.context.as_ref())?.unwrap_or_default();
        check_hunks(rel, &context, output, picked)?;
        Ok(hunks::with_hunks(&context, output, &|k| {
            picked.contains(&k)
        }))
    }

    /// Local and proposed changes merged three ways (base: context), with
    /// conflict markers where they overlap, and how many conflicts.
    fn merged(
        &self,
        rel: &str,
        entry: &Entry,
        local: &Snapshot,
        output: &str,
    ) -> Result<(String, usize), Error> {
        let Some(local) = local.text() else {
            return Err(Error::Diverged {
                path: rel.to_owned(),
                why: "the file was deleted since the model saw it; reject the output, or sync and propose again".into(),
            });
        };
        let context = self.text_of(entry.context.as_ref())?.unwrap_or_default();
        let m = merge(
            context.as_bytes(),
            local.text.as_bytes(),
            output.as_bytes(),
            &Options::default(),
        );
        let labels = Labels {
            ours: Some("local".into()),
            base: Some("context".into()),
            theirs: Some("proposal".into()),
        };
        let text = String::from_utf8(m.render(&labels, Style::Merge, 7))
            .expect("a merge of UTF-8 texts is UTF-8");
        Ok((text, m.conflicts()))
    }

    /// What accepting a file changed locally since its context would write
    /// (the three-way merge, with markers where it conflicts) and how many
    /// conflicts it has; `None` when the file is unchanged or has no
    /// written output.
    pub fn merge_preview(&self, raw: &str) -> Result<Option<(String, usize)>, Error> {
        let rel = self.ws.normalize(raw)?;
        let Some(entry) = self.index.files.get(&rel) else {
            return Ok(None);
        };
        let Some(Output::Write { text }) = &entry.output else {
            return Ok(None);
        };
        let local = self.ws.read(&rel)?;
        let unchanged = local.text().map(|f| f.hash.as_str())
            == entry.context.as_ref().map(|c| c.hash.as_str());
        if unchanged {
            return Ok(None);
        }
        let output = self.store.get(text)?;
        self.merged(&rel, entry, &local, &output).map(Some)
    }

    /// Drops the outputs of `paths` (every file with one when empty), or
    /// with `hunks` just those hunks of one file's output.
    pub fn reject(&mut self, paths: &[String], hunks: &[usize]) -> Result<Vec<String>, Error> {
        let _guard = self.not_streaming()?;
        let targets = self.with_output(paths)?;
        for rel in &targets {
            let entry = self.index.files[rel].clone();
            let kept = match (&entry.output, hunks.is_empty()) {
                (_, true) => None,
                (Some(Output::Write { text }), false) => {
                    let context = self.text_of(entry.context.as_ref())?.unwrap_or_default();
                    let output = self.store.get(text)?;
                    check_hunks(rel, &context, &output, hunks)?;
                    let rest = hunks::with_hunks(&context, &output, &|k| !hunks.contains(&k));
                    let encoding = text.encoding;
                    (rest != context)
                        .then(|| self.store.put(&rest, encoding))
                        .transpose()?
                        .map(|text| Output::Write { text })
                }
                (_, false) => {
                    return Err(Error::Diverged {
                        path: rel.clone(),
                        why: "a deletion or a rename has no hunks; reject the whole file".into(),
                    });
                }
            };
            match (kept, entry.context) {
                (None, None) => {
                    self.index.files.remove(rel);
                }
                (output, context) => {
                    self.index
                        .files
                        .insert(rel.clone(), Entry { context, output });
                }
            }
        }
        self.store.save(&self.index)?;
        Ok(targets)
    }

    /// The named files (all when empty) that have an output.
    fn with_output(&self, paths: &[String]) -> Result<Vec<String>, Error> {
        let named = !paths.is_empty();
        let mut out = Vec::new();
        for rel in self.select(paths)? {
            if self.index.files[&rel].output.is_some() {
                out.push(rel);
            } else if named {
                return Err(Error::Nothing {
                    path: rel,
                    why: "has no output in this session".into(),
                });
            }
        }
        Ok(out)
    }
}

fn check_hunks(rel: &str, context: &str, output: &str, picked: &[usize]) -> Result<(), Error> {
    let count = hunks::hunks(context, output).len();
    match picked.iter().find(|&&h| h == 0 || h > count) {
        Some(&hunk) => Err(Error::NoHunk {
            path: rel.to_owned(),
            hunk,
            count,
        }),
        None => Ok(()),
    }
}

/// The refusal of a conflicted merge, with where its conflicts start.
fn conflict(rel: &str, merged: &str, conflicts: usize) -> Error {
    let lines: Vec<String> = merged
        .lines()
        .enumerate()
        .filter(|(_, l)| l.starts_with("<<<<<<< "))
        .map(|(n, _)| (n + 1).to_string())
        .collect();
    Error::Conflict {
        path: rel.to_owned(),
        conflicts,
        lines: lines.join(", "),
    }
}
