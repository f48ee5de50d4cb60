//! `mend mcp`: mend's edit engine as MCP tools over stdio (rmcp).
//!
//! Standard output carries protocol messages only; logs go to stderr. Every
//! path is confined to the given roots (relative paths resolve against the
//! first). Every write goes through the same pipeline as `mend apply`:
//! parse, plan against the file as it is, and commit one transaction under
//! the workspace lock, so concurrent calls on one file run one after the
//! other and none loses an update.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mend_core::formats::{self, Entry, Format, Parsed};
use mend_core::{Edit, EditOp, Hints, Origin, Replace, Target};
use mend_workspace::{Options, Workspace};
use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::model::{CallToolResult, ContentBlock, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router};
use serde::Deserialize;

use crate::apply::{ApplyOptions, run_parsed};

/// The MCP server state: one workspace per root.
#[derive(Clone)]
pub struct MendServer {
    roots: Arc<Vec<Workspace>>,
    tool_router: ToolRouter<Self>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct ReadFileArgs {
    /// File path, relative to the project root.
    path: String,
    /// First line to return, 1-based (default 1).
    offset: Option<usize>,
    /// Number of lines to return (default: all).
    limit: Option<usize>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct StrEdit {
    /// Text copied exactly from the file, with enough context to occur once.
    old_string: String,
    /// The replacement text.
    new_string: String,
    /// Replace every occurrence instead of requiring exactly one.
    replace_all: Option<bool>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct EditFileArgs {
    /// File path, relative to the project root.
    path: String,
    /// The replacements, located against the file as it is now; they must
    /// not overlap.
    edits: Vec<StrEdit>,
    /// The `version` from an earlier read_file: the edit is refused if the
    /// file changed since, with a diff of what changed.
    expected_version: Option<String>,
    /// Show the diff without writing.
    dry_run: Option<bool>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct AnchoredChange {
    /// 1-4 lines copied from the file that begin the region.
    start: Vec<String>,
    /// 1-4 lines that end the region; omit to replace just `start`.
    end: Option<Vec<String>>,
    /// The region's new lines; repeat an anchor to keep it.
    content: Vec<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct ModifyFileArgs {
    /// File path, relative to the project root.
    path: String,
    /// Regions to replace; they must not overlap.
    changes: Vec<AnchoredChange>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct WriteFileArgs {
    /// File path, relative to the project root.
    path: String,
    /// The entire new content of the file.
    content: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct ApplyPatchArgs {
    /// A `*** Begin Patch` … `*** End Patch` envelope.
    patch: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct ApplyEditsArgs {
    /// Edits in any supported format (SEARCH/REPLACE blocks, edit blocks,
    /// patches, unified diffs, whole files, JSON), possibly mixed.
    text: String,
    /// Force one format (`search-replace`, `edit-block`, `apply-patch`,
    /// `unified-diff`, `whole-file`, `str-replace`, `anchored`); default auto.
    format: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct CheckpointCreateArgs {
    /// A label for humans.
    label: Option<String>,
    /// An anchor, such as the chat message this checkpoint precedes.
    anchor: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct CheckpointRestoreArgs {
    /// The checkpoint id (from checkpoint_list).
    id: String,
    /// List the changes without making them.
    dry_run: Option<bool>,
    /// Drop the checkpoints newer than this one.
    prune_later: Option<bool>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct NoArgs {}

fn text(s: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(s.into())])
}

fn failure(s: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(s.into())])
}

fn json(v: &serde_json::Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

impl MendServer {
    /// A server for these roots.
    pub fn new(roots: &[PathBuf]) -> anyhow::Result<Self> {
        let roots = if roots.is_empty() {
            vec![PathBuf::from(".")]
        } else {
            roots.to_vec()
        };
        let ws = roots
            .iter()
            .map(|r| Workspace::open(r, Options::default()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(MendServer {
            roots: Arc::new(ws),
            tool_router: Self::tool_router(),
        })
    }

    /// The workspace for a path, and the path relative to it.
    fn locate(&self, path: &str) -> Result<(Workspace, String), String> {
        let p = Path::new(path);
        if p.is_absolute() {
            for ws in self.roots.iter() {
                if let Ok(rel) = p.strip_prefix(ws.root()) {
                    return Ok((ws.clone(), rel.to_string_lossy().into_owned()));
                }
            }
            return Err(format!(
                "{path} is outside the project root{}; use a path relative to it",
                if self.roots.len() > 1 { "s" } else { "" }
            ));
        }
        Ok((self.roots[0].clone(), path.to_owned()))
    }

    /// Runs edits through the apply pipeline on the blocking pool.
    async fn apply(
        &self,
        root: Workspace,
        parsed: Parsed,
        expect: HashMap<String, String>,
        dry_run: bool,
    ) -> CallToolResult {
        let work = tokio::task::spawn_blocking(move || -> Result<CallToolResult, String> {
            let lock = root.lock().map_err(|e| e.to_string())?;
            let _ = root.recover(&lock);
            let opts = ApplyOptions {
                dry_run,
                expect,
                ..ApplyOptions::default()
            };
            let report = match run_parsed(&root, &lock, &parsed, &opts) {
                Ok(r) => r,
                Err(crate::apply::ApplyError::Parse(e)) => return Ok(failure(e.to_string())),
                Err(crate::apply::ApplyError::Commit(e)) => return Ok(failure(e.to_string())),
            };
            if !report.ok {
                return Ok(failure(
                    report
                        .retry_context
                        .clone()
                        .unwrap_or_else(|| "the edits failed".into()),
                ));
            }
            let mut versions = serde_json::Map::new();
            for f in &report.files {
                let p = f.renamed_to.as_deref().unwrap_or(&f.path);
                if let Ok(snap) = root.read(p)
                    && let Some(t) = snap.text()
                {
                    let _ = root.remember(t);
                    versions.insert(snap.rel.clone(), t.hash.clone().into());
                }
            }
            let caps = mend_core::report::CAPS;
            let edits: Vec<serde_json::Value> = report
                .edits
                .iter()
                .take(caps.listed_edits)
                .map(|e| {
                    serde_json::json!({
                        "path": e.path,
                        "status": e.status,
                        "pass": e.pass,
                        "lines": e.lines,
                        "similarity": e.similarity,
                    })
                })
                .collect();
            let diff: String = report.files.iter().map(|f| f.diff.as_str()).collect();
            let omitted = (report.edits.len() > caps.listed_edits)
                .then(|| mend_core::report::Omitted::of(&report.edits[caps.listed_edits..]));
            Ok(text(json(&serde_json::json!({
                "written": report.written,
                "diff": mend_core::report::cap_text(&diff, caps.diff),
                "edits": edits,
                "omitted": omitted,
                "versions": versions,
            }))))
        });
        match work.await {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => failure(e),
            Err(e) => failure(format!("internal error: {e}")),
        }
    }

    fn edit(path: &str, op: EditOp, format: &'static str) -> Edit {
        Edit {
            path: path.to_owned(),
            op,
            origin: Some(Origin {
                format: format.into(),
                line: 0,
                text: "".into(),
            }),
        }
    }

    fn parsed(edits: Vec<Edit>) -> Parsed {
        Parsed::from_events(
            edits
                .into_iter()
                .map(|e| formats::Event::Entry(Entry::Edit(e)))
                .collect(),
        )
    }
}

#[tool_router]
impl MendServer {
    #[tool(
        description = "Read a text file. Returns its content (or the lines from `offset`, 1-based, for `limit` lines) and its `version`, a content hash: pass it as `expected_version` to edit_file so an edit is refused if the file changed since you read it."
    )]
    async fn read_file(&self, Parameters(a): Parameters<ReadFileArgs>) -> CallToolResult {
        let (ws, rel) = match self.locate(&a.path) {
            Ok(x) => x,
            Err(e) => return failure(e),
        };
        let snap = match ws.read(&rel) {
            Ok(s) => s,
            Err(e) => return failure(e.to_string()),
        };
        let Some(file) = snap.text() else {
            return failure(format!("File not found: {}", a.path));
        };
        let _ = ws.remember(file);
        // Lines as mend sees them (CR-only files included).
        let doc = mend_core::text::Document::new(&file.text);
        let n = doc.len();
        let start = (a.offset.unwrap_or(1).max(1) - 1).min(n);
        let end = a.limit.map_or(n, |l| start.saturating_add(l).min(n));
        let content = if start >= n {
            ""
        } else {
            &file.text[doc.byte_range(start..end)]
        };
        text(json(&serde_json::json!({
            "path": snap.rel,
            "version": file.hash,
            "total_lines": n,
            "offset": start + 1,
            "content": content,
        })))
    }

    #[tool(
        description = "Replace exact text in a file. Each `old_string` must be copied exactly from the file and occur once (or set replace_all); whitespace, quote and indentation drift is tolerated only when the match stays unique. All edits apply or none. Returns the diff and the new version; on failure, the closest match and what to send instead."
    )]
    async fn edit_file(&self, Parameters(a): Parameters<EditFileArgs>) -> CallToolResult {
        let (ws, rel) = match self.locate(&a.path) {
            Ok(x) => x,
            Err(e) => return failure(e),
        };
        let edits = a
            .edits
            .into_iter()
            .map(|e| {
                let op = if e.old_string.is_empty() {
                    EditOp::Create {
                        content: e.new_string,
                    }
                } else {
                    EditOp::Replace(Replace {
                        target: Target::Text {
                            old: e.old_string,
                            new: e.new_string,
                        },
                        replace_all: e.replace_all.unwrap_or(false),
                        hints: Hints::default(),
                    })
                };
                Self::edit(&rel, op, "str-replace")
            })
            .collect();
        let mut expect = HashMap::new();
        if let Some(v) = a.expected_version {
            let key = ws.normalize(&rel).unwrap_or(rel.clone());
            expect.insert(key, v);
        }
        self.apply(ws, Self::parsed(edits), expect, a.dry_run.unwrap_or(false))
            .await
    }

    #[tool(
        description = "Replace regions of a file located by anchors: each change's `start` (1-4 lines copied from the file) through its optional `end`, replaced by `content` exactly (repeat an anchor in `content` to keep it). Anchors must match once. All changes apply or none."
    )]
    async fn modify_file(&self, Parameters(a): Parameters<ModifyFileArgs>) -> CallToolResult {
        let (ws, rel) = match self.locate(&a.path) {
            Ok(x) => x,
            Err(e) => return failure(e),
        };
        let edits = a
            .changes
            .into_iter()
            .map(|c| {
                Self::edit(
                    &rel,
                    EditOp::Replace(Replace {
                        target: Target::Region {
                            start: c.start,
                            end: c.end.unwrap_or_default(),
                            content: c.content,
                        },
                        replace_all: false,
                        hints: Hints::default(),
                    }),
                    "anchored",
                )
            })
            .collect();
        self.apply(ws, Self::parsed(edits), HashMap::new(), false)
            .await
    }

    #[tool(
        description = "Write the entire content of a file (a new file, or a full rewrite). The existing file's line endings and BOM are kept."
    )]
    async fn write_file(&self, Parameters(a): Parameters<WriteFileArgs>) -> CallToolResult {
        let (ws, rel) = match self.locate(&a.path) {
            Ok(x) => x,
            Err(e) => return failure(e),
        };
        let edit = Self::edit(&rel, EditOp::WriteFile { content: a.content }, "anchored");
        self.apply(ws, Self::parsed(vec![edit]), HashMap::new(), false)
            .await
    }

    #[tool(
        description = "Apply a Codex-style patch: `*** Begin Patch`, then `*** Add File: p` (+ lines), `*** Delete File: p`, or `*** Update File: p` (optional `*** Move to: q`) with chunks of ` `, `-`, `+` lines after `@@ <context line>`; `*** End Patch`. Ambiguous chunks are refused."
    )]
    async fn apply_patch(&self, Parameters(a): Parameters<ApplyPatchArgs>) -> CallToolResult {
        match formats::parse(&a.patch, Format::ApplyPatch) {
            Ok(p) => {
                self.apply(self.roots[0].clone(), p, HashMap::new(), false)
                    .await
            }
            Err(e) => failure(e.to_string()),
        }
    }

    #[tool(
        description = "Apply edits written in any format mend reads (SEARCH/REPLACE blocks, ««« EDIT blocks, patches, unified diffs, whole files in fences, or edit JSON), even mixed in one text; prose around them is ignored. All edits apply or none."
    )]
    async fn apply_edits(&self, Parameters(a): Parameters<ApplyEditsArgs>) -> CallToolResult {
        let format = match a.format.as_deref().map(str::parse::<Format>) {
            None => Format::Auto,
            Some(Ok(f)) => f,
            Some(Err(e)) => return failure(e.to_string()),
        };
        match formats::parse(&a.text, format) {
            Ok(p) => {
                self.apply(self.roots[0].clone(), p, HashMap::new(), false)
                    .await
            }
            Err(e) => failure(e.to_string()),
        }
    }

    #[tool(
        description = "Snapshot the project (tracked and untracked, not ignored files) into a private checkpoint, without touching git's HEAD, branches, index or stash. Returns its id."
    )]
    async fn checkpoint_create(
        &self,
        Parameters(a): Parameters<CheckpointCreateArgs>,
    ) -> CallToolResult {
        let root = self.roots[0].root().to_path_buf();
        let r = tokio::task::spawn_blocking(move || {
            let cps = mend_checkpoint::Checkpoints::open(&root)?;
            cps.create(
                &mend_checkpoint::CreateOptions {
                    label: a.label,
                    anchor: a.anchor,
                    ..Default::default()
                },
                &mut |_| {},
            )
        })
        .await;
        match r {
            Ok(Ok(cp)) => text(json(&serde_json::to_value(cp).unwrap_or_default())),
            Ok(Err(e)) => failure(e.to_string()),
            Err(e) => failure(e.to_string()),
        }
    }

    #[tool(description = "List checkpoints, newest first, with their ids, labels and anchors.")]
    async fn checkpoint_list(&self, Parameters(_a): Parameters<NoArgs>) -> CallToolResult {
        let root = self.roots[0].root().to_path_buf();
        let r =
            tokio::task::spawn_blocking(move || mend_checkpoint::Checkpoints::open(&root)?.list())
                .await;
        match r {
            Ok(Ok(list)) => text(json(&serde_json::to_value(list).unwrap_or_default())),
            Ok(Err(e)) => failure(e.to_string()),
            Err(e) => failure(e.to_string()),
        }
    }

    #[tool(
        description = "Restore the project to a checkpoint. The current state is checkpointed first (its id is returned, so the restore can be undone); ignored files are never deleted. With prune_later, newer checkpoints are dropped and listed with their anchors."
    )]
    async fn checkpoint_restore(
        &self,
        Parameters(a): Parameters<CheckpointRestoreArgs>,
    ) -> CallToolResult {
        let root = self.roots[0].root().to_path_buf();
        let r = tokio::task::spawn_blocking(move || {
            mend_checkpoint::Checkpoints::open(&root)?.restore(
                &a.id,
                a.dry_run.unwrap_or(false),
                a.prune_later.unwrap_or(false),
            )
        })
        .await;
        match r {
            Ok(Ok(done)) => text(json(&serde_json::to_value(done).unwrap_or_default())),
            Ok(Err(e)) => failure(e.to_string()),
            Err(e) => failure(e.to_string()),
        }
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for MendServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

/// Runs the server on stdio until the client disconnects.
pub fn run(roots: &[PathBuf]) -> anyhow::Result<u8> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
    let server = MendServer::new(roots)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        tracing::info!(roots = ?roots, "mend mcp serving on stdio");
        let service = server.serve(rmcp::transport::stdio()).await?;
        service.waiting().await?;
        anyhow::Ok(())
    })?;
    Ok(0)
}
