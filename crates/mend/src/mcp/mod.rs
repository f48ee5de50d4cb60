//! `mend mcp`: mend's edit engine as MCP tools over stdio (rmcp).
//!
//! Standard output carries protocol messages only; logs go to stderr. Every
//! path is confined to the given roots: relative paths resolve against the
//! first, absolute ones against the root they are under, and one call edits
//! one root. Every write goes through the same pipeline as `mend apply`:
//! parse, plan against the file as it is, and commit one transaction under
//! the workspace lock, so concurrent calls on one file run one after the
//! other and none loses an update. File work runs on the blocking pool.
//! Arguments are strict (see `strict`) and every writing tool takes
//! `dry_run`.

mod stdio;
mod strict;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use mend_core::formats::schema::{self, StrReplaceChange};
use mend_core::formats::{self, Entry, Format, Parsed};
use mend_core::{Edit, EditOp, Origin};
use mend_service::apply::{Applier, ApplyRequest, Destination};
use mend_service::checkpoint::{CreateResult, ListResult};
use mend_service::files::{ReadResult, Window};
use mend_service::outcome::EditResult;
use mend_service::stream::Streamed;
use mend_service::{Failure, Kind, Registry, Roots, Watched};
use mend_workspace::{Options, Workspace};
use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router};
use serde::Deserialize;
use strict::{Strict, saturating};

use mend_core::report::syntax::SyntaxPolicy;

/// What the server tells a client about when to use which tool.
const INSTRUCTIONS: &str = "mend edits this project's files and reviews what changed. Use its tools instead of shell edits (sed, heredocs) and built-in file writes: a match must be unique or the edit is refused, never guessed, every call writes all its edits or none, and line endings, BOMs and encodings are kept.

Reading and editing: read_file returns a file and its `version`. edit_file replaces exact text (pass the read's version as `expected_version` to be refused if the file changed since); modify_file replaces regions between anchor lines; write_file writes a new file or a whole rewrite; apply_patch takes a `*** Begin Patch` envelope; apply_edits takes edits in any format mend reads (SEARCH/REPLACE blocks, unified diffs, whole files in fences, edit JSON), even mixed. Every writing tool takes `dry_run` to see the diff first.

Undoing: checkpoint_create snapshots the project before risky work; checkpoint_list shows the ids; checkpoint_restore goes back to one (the state before is checkpointed first). turn_begin at the start of a task; turn_status and turn_diff then show every change made since, by any tool or command; turn_reject puts back files or numbered hunks; turn_undo undoes the last reject.

Review mode (`mend mcp --pending`): writing tools hold their changes for a person instead of writing; pending_status lists them.

A failed call is an error result whose text says what to send or do instead, and whose structured content is {kind, message, path?, session?, holder?}: `edit_failed` (fix the edits as the text says), `changed` (read the file again), `busy` (try again shortly), `no_turn`, `no_checkpoint`, `usage` and others (see docs/exit-codes.md).";

/// What names this server in a session's lock in review mode.
const HOLDER: &str = "mend mcp --pending";

/// The MCP server state: one workspace per root.
#[derive(Clone)]
pub(crate) struct MendServer {
    roots: Arc<Roots>,
    tool_router: ToolRouter<Self>,
    /// Review mode: the pending session writing tools fill instead of
    /// writing.
    pending: Option<Arc<str>>,
    /// The syntax check of calls that do not choose one.
    syntax: SyntaxPolicy,
    /// Each root's checkpoints and the watcher that narrows their
    /// snapshots (unless `--no-watch`), made at the first turn or
    /// checkpoint call there; a daemon serving the root is asked first.
    watched: Arc<Registry>,
}

/// A writing call's options.
#[derive(Debug, Clone, Copy)]
struct Call {
    dry_run: bool,
    syntax: Option<SyntaxPolicy>,
}

impl Call {
    fn new(dry_run: Option<bool>, syntax: Option<SyntaxPolicy>) -> Call {
        Call {
            dry_run: dry_run.unwrap_or(false),
            syntax,
        }
    }
}

/// A response that could not be read as edits, as the service's error
/// (kind `no_edits` or `parse`).
fn parse_failed(e: mend_core::Error) -> mend_service::Error {
    mend_apply::ApplyError::Parse(e).into()
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReadFileArgs {
    /// File path, relative to the project root.
    path: String,
    /// First line to return, 1-based (default 1).
    #[serde(default, deserialize_with = "saturating")]
    #[schemars(with = "Option<u64>")]
    offset: Option<usize>,
    /// Number of lines to return (default: all).
    #[serde(default, deserialize_with = "saturating")]
    #[schemars(with = "Option<u64>")]
    limit: Option<usize>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct EditFileArgs {
    /// File path, relative to the project root.
    path: String,
    /// The replacements, located against the file as it is now; they must
    /// not overlap. An empty `old_string` creates the file.
    edits: Vec<StrReplaceChange>,
    /// The `version` from an earlier read_file: the edit is refused if the
    /// file changed since, with a diff of what changed.
    expected_version: Option<String>,
    /// Show the diff without writing.
    dry_run: Option<bool>,
    /// Syntax check of the changed files: `warn` (write and report
    /// errors the edits introduce), `refuse` (write nothing if there are
    /// any) or `off`. Default: the server's `--syntax`.
    syntax: Option<SyntaxPolicy>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct ModifyFileArgs {
    /// File path, relative to the project root.
    path: String,
    /// Regions to replace; they must not overlap.
    changes: Vec<schema::AnchoredChange>,
    /// Show the diff without writing.
    dry_run: Option<bool>,
    /// Syntax check of the changed files: `warn` (write and report
    /// errors the edits introduce), `refuse` (write nothing if there are
    /// any) or `off`. Default: the server's `--syntax`.
    syntax: Option<SyntaxPolicy>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct WriteFileArgs {
    /// File path, relative to the project root.
    path: String,
    /// The entire new content of the file.
    content: String,
    /// Show the diff without writing.
    dry_run: Option<bool>,
    /// Syntax check of the changed files: `warn` (write and report
    /// errors the edits introduce), `refuse` (write nothing if there are
    /// any) or `off`. Default: the server's `--syntax`.
    syntax: Option<SyntaxPolicy>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct ApplyPatchArgs {
    /// A `*** Begin Patch` … `*** End Patch` envelope.
    patch: String,
    /// Show the diff without writing.
    dry_run: Option<bool>,
    /// Syntax check of the changed files: `warn` (write and report
    /// errors the edits introduce), `refuse` (write nothing if there are
    /// any) or `off`. Default: the server's `--syntax`.
    syntax: Option<SyntaxPolicy>,
}

/// The schema of `apply_edits`'s `format`: every format mend reads, by
/// name, from [`Format::ALL`], so the list a model sees cannot fall behind.
fn format_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let mut names: Vec<serde_json::Value> = std::iter::once(Format::Auto)
        .chain(Format::ALL)
        .map(|f| f.name().into())
        .collect();
    names.push(serde_json::Value::Null);
    schemars::json_schema!({
        "type": ["string", "null"],
        "enum": names,
        "description": format!("Force one format: {}. Default: auto (decided per block).", Format::names()),
    })
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct ApplyEditsArgs {
    /// Edits in any supported format (SEARCH/REPLACE blocks, edit blocks,
    /// patches, unified diffs, whole files, JSON), possibly mixed.
    text: String,
    // Its schema lists every format by name (`format_schema`).
    #[schemars(schema_with = "format_schema")]
    format: Option<String>,
    /// Show the diff without writing.
    dry_run: Option<bool>,
    /// Syntax check of the changed files: `warn` (write and report
    /// errors the edits introduce), `refuse` (write nothing if there are
    /// any) or `off`. Default: the server's `--syntax`.
    syntax: Option<SyntaxPolicy>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct CheckpointCreateArgs {
    /// A label for humans.
    label: Option<String>,
    /// An anchor, such as the chat message this checkpoint precedes.
    anchor: Option<String>,
    /// Report what the checkpoint would hold without creating it.
    dry_run: Option<bool>,
    /// Which project root (default: the first).
    root: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct CheckpointRestoreArgs {
    /// The checkpoint id (from checkpoint_list).
    id: String,
    /// List the changes without making them.
    dry_run: Option<bool>,
    /// Drop the checkpoints newer than this one.
    prune_later: Option<bool>,
    /// Copy files whose current content is in no checkpoint (ignored, or
    /// too large to snapshot) into .mend/aside/ first, instead of refusing.
    force: Option<bool>,
    /// Which project root (default: the first).
    root: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct TurnBeginArgs {
    /// A label for humans.
    label: Option<String>,
    /// The agent's session id, recorded with the turn.
    session: Option<String>,
    /// Which project root (default: the first).
    root: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct TurnStatusArgs {
    /// Also list ignored files modified during the turn.
    ignored: Option<bool>,
    /// Which project root (default: the first).
    root: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct TurnDiffArgs {
    /// Files or folders, relative to the root (default: every change).
    paths: Option<Vec<String>>,
    /// Which project root (default: the first).
    root: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct TurnUndoArgs {
    /// Which project root (default: the first).
    root: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct TurnRejectArgs {
    /// Files or folders, relative to the root (default: every change).
    paths: Option<Vec<String>>,
    /// Just these hunks of one file, numbered as turn_diff numbered them.
    hunks: Option<Vec<usize>>,
    /// The file's `version` from turn_status or turn_diff: the reject is
    /// refused if the file changed since. Without it, the hunks must be
    /// ones the last turn_diff of the file showed, still unchanged.
    seen: Option<String>,
    /// Which project root (default: the first).
    root: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct PendingStatusArgs {
    /// Which project root (default: the first).
    root: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct CheckpointListArgs {
    /// Which project root (default: the first).
    root: Option<String>,
}

/// A failed call: `isError`, the failure as structured content (its
/// `kind` for a client to act on), and its message as the text a model
/// reads.
fn failed(failure: &Failure) -> CallToolResult {
    let text = failure.message.clone();
    let mut r = match serde_json::to_value(failure) {
        Ok(v) => CallToolResult::structured_error(v),
        Err(_) => CallToolResult::error(Vec::new()),
    };
    r.content = vec![ContentBlock::text(text)];
    r
}

/// A failed result without a failure (the router's own, for arguments
/// that do not deserialize) as one of kind `usage`, keeping its text.
fn with_failure_shape(r: CallToolResult) -> CallToolResult {
    if r.is_error != Some(true) || r.structured_content.is_some() {
        return r;
    }
    let text: Vec<String> = r
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect();
    let message = format!(
        "{}; see the tool's input schema (tools/list) for its arguments",
        text.join("\n")
    );
    failed(&Failure::new(Kind::Usage, message))
}

/// A call refused for `kind`, with `message`.
fn refused(kind: Kind, message: impl Into<String>) -> CallToolResult {
    failed(&Failure::new(kind, message))
}

/// A service error as a failed call, its message naming MCP tools where
/// it names the CLI commands they stand for.
fn service_failed(e: &mend_service::Error) -> CallToolResult {
    let mut failure = e.failure();
    failure.message = naming_tools(&failure.message);
    failed(&failure)
}

/// The CLI commands an MCP tool does the work of, as a model calls it.
const TOOLS_FOR_COMMANDS: [(&str, &str); 9] = [
    ("mend checkpoint list", "checkpoint_list"),
    ("mend checkpoint create", "checkpoint_create"),
    ("mend checkpoint restore", "checkpoint_restore"),
    ("mend turn begin", "turn_begin"),
    ("mend turn status", "turn_status"),
    ("mend turn diff", "turn_diff"),
    ("mend turn reject", "turn_reject"),
    ("mend turn undo", "turn_undo"),
    ("mend pending status", "pending_status"),
];

/// `message` with each quoted CLI command an MCP tool does the work of
/// (`` `mend checkpoint list` ``, with any arguments) named as that tool
/// (`` `checkpoint_list` ``): a model over MCP calls tools, and may have
/// no shell. Commands with no tool (a person's `mend pending accept`)
/// are kept.
fn naming_tools(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(open) = rest.find('`') {
        let Some(len) = rest[open + 1..].find('`') else {
            break;
        };
        let quoted = &rest[open + 1..open + 1 + len];
        let tool = TOOLS_FOR_COMMANDS.iter().find(|(command, _)| {
            quoted
                .strip_prefix(command)
                .is_some_and(|args| args.is_empty() || args.starts_with(' '))
        });
        out.push_str(&rest[..open + 1]);
        out.push_str(tool.map_or(quoted, |(_, t)| t));
        out.push('`');
        rest = &rest[open + len + 2..];
    }
    out.push_str(rest);
    out
}

/// A successful result carrying `outcome` as structured content, and as
/// its JSON text beside it for clients that read text only.
/// A tool's output schema, the serialized form of `T` (as rmcp's own
/// `schema_for_output` gives it) with every subschema written in place:
/// an optional object is `"type": ["object", "null"]` with its properties,
/// not `anyOf` a `$ref` and `null`. Clients check each result against it
/// (the Python SDK does, in Python), and resolving references there made
/// the check of one `edit_file` result cost more than the edit.
fn output_schema<T: schemars::JsonSchema>() -> Arc<rmcp::model::JsonObject> {
    let settings = schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .with(|s| s.inline_subschemas = true);
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let serde_json::Value::Object(mut object) = serde_json::Value::from(schema) else {
        unreachable!("a root schema is an object");
    };
    // The wrapper type's name and doc are noise to a model.
    object.remove("title");
    object.remove("description");
    Arc::new(object)
}

fn structured<T: serde::Serialize>(outcome: &T) -> CallToolResult {
    let (value, text) = match (
        mend_service::to_value(outcome),
        mend_service::to_json(outcome),
    ) {
        (Ok(v), Ok(t)) => (v, t),
        (Err(e), _) | (_, Err(e)) => return service_failed(&e),
    };
    let mut r = CallToolResult::structured(value);
    r.content = vec![ContentBlock::text(text)];
    r
}

/// A blocking task that did not finish (it panicked, or the runtime is
/// shutting down).
fn internal(e: &tokio::task::JoinError) -> CallToolResult {
    refused(Kind::Error, format!("internal error: {e}"))
}

/// The answer of blocking work: its outcome, or its error as a failed
/// call.
async fn answer<T: serde::Serialize>(
    work: tokio::task::JoinHandle<Result<T, mend_service::Error>>,
) -> CallToolResult {
    match work.await {
        Ok(Ok(v)) => structured(&v),
        Ok(Err(e)) => service_failed(&e),
        Err(e) => internal(&e),
    }
}

impl MendServer {
    /// A server for these roots, serving only `tools` when given.
    pub(crate) fn new(
        roots: &[PathBuf],
        tools: Option<&[String]>,
        pending: Option<&str>,
        syntax: SyntaxPolicy,
        watch: bool,
    ) -> anyhow::Result<Self> {
        let roots = if roots.is_empty() {
            // The one root rule: the worktree holding the current folder.
            vec![mend_service::root(None)]
        } else {
            roots.to_vec()
        };
        let mut ws = roots
            .iter()
            .map(|r| mend_service::roots::open(r, Options::default()).map(crate::prepared))
            .collect::<Result<Vec<_>, _>>()?;
        let first = ws.remove(0);
        let mut tool_router = Self::tool_router() + Self::turn_router();
        if let Some(keep) = tools {
            let all: Vec<String> = tool_router
                .list_all()
                .into_iter()
                .map(|t| t.name.into_owned())
                .collect();
            if let Some(bad) = keep.iter().find(|k| !all.contains(k)) {
                anyhow::bail!(
                    "--tools: no tool named `{bad}`; the tools are {}",
                    all.join(", ")
                );
            }
            for name in all.iter().filter(|n| !keep.contains(n)) {
                tool_router.remove_route(name);
            }
        }
        if let Some(name) = pending {
            // A bad name fails at start, not on the first call.
            mend_service::apply::open_session(&first, name)?;
        }
        Ok(MendServer {
            roots: Arc::new(Roots::new(first, ws)),
            tool_router,
            pending: pending.map(Arc::from),
            syntax,
            watched: Arc::new(Registry::new(watch)),
        })
    }

    /// Runs edits through the service's apply: into the files, or in
    /// review mode into the pending session. It runs on this worker thread
    /// (its other tasks move to another), not on the blocking pool: an
    /// edit is the call agents make most, and the hand-over to the pool
    /// and back cost a tenth of a warm edit.
    async fn apply(
        &self,
        root: Workspace,
        parsed: Parsed,
        expect: HashMap<String, mend_service::apply::Expected>,
        call: Call,
    ) -> CallToolResult {
        let pending = self.pending.clone();
        let syntax = call.syntax.unwrap_or(self.syntax);
        let run = move || {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
                let req = ApplyRequest {
                    expect,
                    dry_run: call.dry_run,
                    syntax,
                    versions: true,
                    ..ApplyRequest::default()
                };
                let dest = match pending.as_deref() {
                    Some(session) => Destination::Pending {
                        session,
                        holder: HOLDER,
                    },
                    None => Destination::Files,
                };
                let applier = Applier::new(&root, dest, req)?;
                applier.finish(Streamed::parsed(Ok(parsed)))
            }))
        };
        let work = match tokio::runtime::Handle::current().runtime_flavor() {
            tokio::runtime::RuntimeFlavor::MultiThread => tokio::task::block_in_place(run),
            // Only a multi-threaded runtime can hand a worker's tasks on.
            _ => run(),
        };
        match work {
            Ok(Ok(applied)) => match EditResult::of(applied) {
                Ok(result) => structured(&result),
                Err(why) => refused(Kind::EditFailed, why),
            },
            Ok(Err(e)) => service_failed(&e),
            // As the blocking pool reports a panic: the call fails, the
            // server stays.
            Err(_) => refused(Kind::Error, "internal error: the edit panicked".to_owned()),
        }
    }

    fn edit(path: &str, op: EditOp, format: Format) -> Edit {
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
        description = "Read a text file. Returns its content (or the lines from `offset`, 1-based, for `limit` lines) and its `version`, a content hash: pass it as `expected_version` to edit_file so an edit is refused if the file changed since you read it.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = output_schema::<ReadResult>()
    )]
    async fn read_file(
        &self,
        Parameters(Strict(a)): Parameters<Strict<ReadFileArgs>>,
    ) -> CallToolResult {
        let (ws, rel) = match self.roots.locate(&a.path) {
            Ok((ws, rel)) => (ws.clone(), rel),
            Err(e) => return service_failed(&e),
        };
        let pending = self.pending.clone();
        let window = Window {
            offset: a.offset,
            limit: a.limit,
        };
        answer(tokio::task::spawn_blocking(move || {
            let from = match pending.as_deref() {
                Some(session) => Destination::Pending {
                    session,
                    holder: HOLDER,
                },
                None => Destination::Files,
            };
            mend_service::files::read(&ws, &rel, window, from)
        }))
        .await
    }

    #[tool(
        description = "Replace exact text in a file. Each `old_string` must be copied exactly from the file and occur once (or set replace_all); whitespace, quote and indentation drift is tolerated only when the match stays unique. All edits apply or none. Returns the diff and the new version; on failure, the closest match and what to send instead.",
        annotations(read_only_hint = false, idempotent_hint = false, open_world_hint = false),
        output_schema = output_schema::<EditResult>()
    )]
    async fn edit_file(
        &self,
        Parameters(Strict(a)): Parameters<Strict<EditFileArgs>>,
    ) -> CallToolResult {
        let (ws, rel) = match self.roots.locate(&a.path) {
            Ok((ws, rel)) => (ws.clone(), rel),
            Err(e) => return service_failed(&e),
        };
        if let Err(e) = schema::non_empty("edits", a.edits.len()) {
            return refused(Kind::Usage, e);
        }
        let edits = a
            .edits
            .into_iter()
            .map(|e| Self::edit(&rel, e.into_op(), Format::StrReplace))
            .collect();
        let mut expect = HashMap::new();
        if let Some(v) = a.expected_version {
            let key = ws.normalize(&rel).unwrap_or(rel.clone());
            expect.insert(key, mend_service::apply::Expected::parse(&v));
        }
        let call = Call::new(a.dry_run, a.syntax);
        self.apply(ws, Self::parsed(edits), expect, call).await
    }

    #[tool(
        description = "Replace regions of a file located by anchors: each change's `start` (1-4 lines copied from the file) through its optional `end`, replaced by `content` exactly (repeat an anchor in `content` to keep it). Anchors must match once. All changes apply or none.",
        annotations(read_only_hint = false, idempotent_hint = false, open_world_hint = false),
        output_schema = output_schema::<EditResult>()
    )]
    async fn modify_file(
        &self,
        Parameters(Strict(a)): Parameters<Strict<ModifyFileArgs>>,
    ) -> CallToolResult {
        if let Err(e) = schema::non_empty("changes", a.changes.len()) {
            return refused(Kind::Usage, e);
        }
        let mut edits = Vec::with_capacity(a.changes.len());
        for (i, c) in a.changes.into_iter().enumerate() {
            match c.into_op() {
                Ok(op) => edits.push(Self::edit(&a.path, op, Format::Anchored)),
                Err(e) => return refused(Kind::Usage, format!("changes[{i}].{e}")),
            }
        }
        self.apply_routed(Ok(Self::parsed(edits)), Call::new(a.dry_run, a.syntax))
            .await
    }

    #[tool(
        description = "Write the entire content of a file (a new file, or a full rewrite). The existing file's line endings and BOM are kept.",
        annotations(read_only_hint = false, idempotent_hint = true, open_world_hint = false),
        output_schema = output_schema::<EditResult>()
    )]
    async fn write_file(
        &self,
        Parameters(Strict(a)): Parameters<Strict<WriteFileArgs>>,
    ) -> CallToolResult {
        let op = EditOp::WriteFile {
            content: a.content,
            inferred: false,
        };
        let edit = Self::edit(&a.path, op, Format::Anchored);
        self.apply_routed(Ok(Self::parsed(vec![edit])), Call::new(a.dry_run, a.syntax))
            .await
    }

    #[tool(
        description = "Apply a Codex-style patch: `*** Begin Patch`, then `*** Add File: p` (+ lines), `*** Delete File: p`, or `*** Update File: p` (optional `*** Move to: q`) with chunks of ` `, `-`, `+` lines after `@@ <context line>`; `*** End Patch`. Ambiguous chunks are refused.",
        annotations(read_only_hint = false, idempotent_hint = false, open_world_hint = false),
        output_schema = output_schema::<EditResult>()
    )]
    async fn apply_patch(
        &self,
        Parameters(Strict(a)): Parameters<Strict<ApplyPatchArgs>>,
    ) -> CallToolResult {
        let parsed = formats::parse(&a.patch, Format::ApplyPatch).map_err(parse_failed);
        self.apply_routed(parsed, Call::new(a.dry_run, a.syntax))
            .await
    }

    #[tool(
        description = "Apply edits written in any format mend reads (SEARCH/REPLACE blocks, ««« EDIT blocks, patches, unified diffs, whole files in fences, or edit JSON), even mixed in one text; prose around them is ignored. All edits apply or none.",
        annotations(read_only_hint = false, idempotent_hint = false, open_world_hint = false),
        output_schema = output_schema::<EditResult>()
    )]
    async fn apply_edits(
        &self,
        Parameters(Strict(a)): Parameters<Strict<ApplyEditsArgs>>,
    ) -> CallToolResult {
        let format = match a.format.as_deref().map(str::parse::<Format>) {
            None => Format::Auto,
            Some(Ok(f)) => f,
            Some(Err(e)) => return refused(Kind::Usage, e.to_string()),
        };
        let parsed = formats::parse(&a.text, format).map_err(parse_failed);
        self.apply_routed(parsed, Call::new(a.dry_run, a.syntax))
            .await
    }

    #[tool(
        description = "Snapshot the project (tracked and untracked, not ignored files) into a private checkpoint, without touching git's HEAD, branches, index or stash. Returns its id. With dry_run, reports what it would hold instead.",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false),
        output_schema = output_schema::<CreateResult>()
    )]
    async fn checkpoint_create(
        &self,
        Parameters(Strict(a)): Parameters<Strict<CheckpointCreateArgs>>,
    ) -> CallToolResult {
        let root = a.root.clone();
        self.through_watched(root.as_deref(), move |w| {
            let opts = mend_checkpoint::CreateOptions {
                label: a.label,
                anchor: a.anchor,
                ..Default::default()
            };
            let dry_run = a.dry_run.unwrap_or(false);
            w.create(
                &mut mend_service::Call::new(None, None),
                &opts,
                &Default::default(),
                dry_run,
            )
        })
        .await
    }

    #[tool(
        description = "List the pending changes of the review session: one entry per file with its status letter (M modified, A added, !A added over a file that now exists, D deleted, R renamed, ~ changed locally, ~M changed locally with a proposal, ? cannot be read as text now, with a `reason`; blank unchanged). A person accepts or rejects them with `mend pending`.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = output_schema::<mend_service::pending::Status>()
    )]
    async fn pending_status(
        &self,
        Parameters(Strict(a)): Parameters<Strict<PendingStatusArgs>>,
    ) -> CallToolResult {
        let ws = match self.roots.pick(a.root.as_deref()) {
            Ok(ws) => ws.clone(),
            Err(e) => return service_failed(&e),
        };
        let session = self
            .pending
            .as_deref()
            .unwrap_or(mend_pending::DEFAULT_SESSION)
            .to_owned();
        answer(tokio::task::spawn_blocking(move || {
            mend_service::pending::status_or_empty(&ws, &session)
        }))
        .await
    }

    #[tool(description = "List checkpoints, newest first, with their ids, labels and anchors.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = output_schema::<ListResult>()
    )]
    async fn checkpoint_list(
        &self,
        Parameters(Strict(a)): Parameters<Strict<CheckpointListArgs>>,
    ) -> CallToolResult {
        self.through_watched(a.root.as_deref(), |w| {
            w.checkpoints(
                &mend_service::Call::new(None, None),
                mend_service::checkpoint::list,
            )
        })
        .await
    }

    #[tool(
        description = "Restore the project to a checkpoint. The current state is checkpointed first (its id is returned, so the restore can be undone); ignored files are never deleted, and a file whose current content is in no checkpoint is never overwritten or deleted: the restore is refused, or with force it is copied into .mend/aside/ first. With prune_later, newer checkpoints are dropped and listed with their anchors. With dry_run, lists the changes without making them. In review mode (`mend mcp --pending`) a restore is refused, since it would write the worktree directly; a dry run still works.",
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = false, open_world_hint = false),
        output_schema = output_schema::<mend_checkpoint::Restored>()
    )]
    async fn checkpoint_restore(
        &self,
        Parameters(Strict(a)): Parameters<Strict<CheckpointRestoreArgs>>,
    ) -> CallToolResult {
        let review = self.pending.is_some();
        let root = a.root.clone();
        self.through_watched(root.as_deref(), move |w| {
            let opts = mend_checkpoint::RestoreOptions {
                dry_run: a.dry_run.unwrap_or(false),
                prune_later: a.prune_later.unwrap_or(false),
                force: a.force.unwrap_or(false),
            };
            w.restore(&mend_service::Call::new(None, None), &a.id, &opts, review)
        })
        .await
    }
}

/// Why a turn undo is refused in review mode.
const NO_TURN_UNDO_IN_REVIEW: &str = "turn_undo is refused in review mode (`mend mcp --pending`): undoing a reject writes the worktree directly, and in review mode writing tools only propose. Ask the person to run `mend turn undo` if it is needed.";

/// Why a turn reject is refused in review mode.
const NO_TURN_REJECT_IN_REVIEW: &str = "turn_reject is refused in review mode (`mend mcp --pending`): a reject writes the worktree directly, and in review mode writing tools only propose. Ask the person to run `mend turn reject` if it is needed.";

#[tool_router(router = turn_router, vis = "pub(crate)")]
impl MendServer {
    #[tool(
        description = "Begin a turn: checkpoint the whole project as the turn's start and return the turn's id. Every change made after it, by any tool or shell command (sed, formatters, generators, git checkout, rm, mv), is then listed by turn_status and can be rejected hunk by hunk. A turn already open is ended first (its start stays a checkpoint).",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false),
        output_schema = output_schema::<mend_checkpoint::turn::Begun>()
    )]
    async fn turn_begin(
        &self,
        Parameters(Strict(a)): Parameters<Strict<TurnBeginArgs>>,
    ) -> CallToolResult {
        let action = mend_service::turn::Action::Begin(mend_checkpoint::turn::BeginOptions {
            label: a.label,
            session: a.session,
            agent: Some("mcp".into()),
            force: false,
        });
        self.turn(a.root.as_deref(), action).await
    }

    #[tool(
        description = "List what changed since the turn began, whoever changed it: one entry per file with its letter (M modified, A added, D deleted, R renamed, found by content, with `from`; T type or mode changed, with `change`), its size, whether it is binary or large (no diff), its number of hunks and its `version`. Says when HEAD moved during the turn.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = output_schema::<mend_service::turn::TurnStatus>()
    )]
    async fn turn_status(
        &self,
        Parameters(Strict(a)): Parameters<Strict<TurnStatusArgs>>,
    ) -> CallToolResult {
        let action = mend_service::turn::Action::Status {
            ignored: a.ignored.unwrap_or(false),
        };
        self.turn(a.root.as_deref(), action).await
    }

    #[tool(
        description = "The unified diff of each file changed since the turn began, its hunks numbered (`@@ … @@ hunk 2`) as turn_reject's `hunks` takes them; binary and large files get one line instead.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = output_schema::<mend_service::turn::TurnDiff>()
    )]
    async fn turn_diff(
        &self,
        Parameters(Strict(a)): Parameters<Strict<TurnDiffArgs>>,
    ) -> CallToolResult {
        let action = mend_service::turn::Action::Diff(a.paths.unwrap_or_default());
        self.turn(a.root.as_deref(), action).await
    }

    #[tool(
        description = "Put back the turn-start content of files (an added file is removed, a deleted one recreated, a renamed one renamed back), or of some hunks of one file, touching no other byte. A safety checkpoint is made first: its id is returned; turn_undo undoes the reject, keeping every change made after it. Refused, with nothing written, when a hunk changed since turn_diff showed it. Refused in review mode.",
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = false, open_world_hint = false),
        output_schema = output_schema::<mend_checkpoint::turn::TurnRejected>()
    )]
    async fn turn_reject(
        &self,
        Parameters(Strict(a)): Parameters<Strict<TurnRejectArgs>>,
    ) -> CallToolResult {
        if self.pending.is_some() {
            return refused(Kind::Refused, NO_TURN_REJECT_IN_REVIEW);
        }
        let action = mend_service::turn::Action::Reject(mend_checkpoint::turn::Selection {
            paths: a.paths.unwrap_or_default(),
            hunks: a.hunks.unwrap_or_default(),
            seen: a.seen,
        });
        self.turn(a.root.as_deref(), action).await
    }

    #[tool(
        description = "Undo the turn's last reject (turn_reject) or accept (`mend turn accept`, the editor) exactly, path by path: each path still as the reject left it gets back what it held before; a path changed since is left as it is and listed with why, and every other change made after the reject is kept (where checkpoint_restore would rewind the whole project). A reject's undo checkpoints first. Refused in review mode.",
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = false, open_world_hint = false),
        output_schema = output_schema::<mend_checkpoint::turn::TurnUndone>()
    )]
    async fn turn_undo(
        &self,
        Parameters(Strict(a)): Parameters<Strict<TurnUndoArgs>>,
    ) -> CallToolResult {
        if self.pending.is_some() {
            return refused(Kind::Refused, NO_TURN_UNDO_IN_REVIEW);
        }
        let action = mend_service::turn::Action::Undo;
        self.turn(a.root.as_deref(), action).await
    }
}

impl MendServer {
    /// Runs a turn action for the named root (default the first) on the
    /// blocking pool, through the root's holder; its outcome becomes the
    /// result.
    async fn turn(&self, root: Option<&str>, action: mend_service::turn::Action) -> CallToolResult {
        self.through_watched(root, move |w| {
            Ok(w.turn(&mut mend_service::Call::new(None, None), &action)?.0)
        })
        .await
    }

    /// Routes parsed edits to their root, then applies them.
    async fn apply_routed(
        &self,
        parsed: Result<Parsed, mend_service::Error>,
        call: Call,
    ) -> CallToolResult {
        match parsed.and_then(|p| self.roots.route(p)) {
            Ok((ws, p)) => self.apply(ws, p, HashMap::new(), call).await,
            Err(e) => service_failed(&e),
        }
    }
}

impl MendServer {
    /// Runs turn or checkpoint work on the blocking pool, through the
    /// named root's holder (made, and its watcher started, on first use).
    async fn through_watched<T: serde::Serialize + Send + 'static>(
        &self,
        root: Option<&str>,
        work: impl FnOnce(&Watched) -> Result<T, mend_service::Error> + Send + 'static,
    ) -> CallToolResult {
        let root = match self.roots.pick(root) {
            Ok(ws) => ws.root().to_path_buf(),
            Err(e) => return service_failed(&e),
        };
        let held = Arc::clone(&self.watched);
        answer(tokio::task::spawn_blocking(move || work(&held.get(&root)))).await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for MendServer {
    /// A call through the tool router; a failure the router made itself
    /// (arguments that do not fit the tool's schema) gets the failure
    /// shape every other failure has, kind `usage`.
    async fn call_tool(
        &self,
        request: rmcp::model::CallToolRequestParams,
        context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, rmcp::ErrorData> {
        let tcc = rmcp::handler::server::tool::ToolCallContext::new(self, request, context);
        let answer = self.tool_router.call(tcc).await?;
        Ok(match answer {
            rmcp::model::CallToolResponse::Complete(r) => with_failure_shape(r).into(),
            other => other,
        })
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("mend", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }
}

/// The most detailed log level on stderr: warnings by default (a client
/// shows a server's stderr to its user, and a notice on each start is
/// noise), or what `MEND_LOG` names (`error`, `warn`, `info`, `debug`,
/// `trace`).
fn log_level(asked: Option<&str>) -> tracing::Level {
    asked
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or(tracing::Level::WARN)
}

/// Runs the server on stdio until standard input closes; calls in flight
/// finish (a commit completes or rolls back) before the process exits.
pub(crate) fn run(
    roots: &[PathBuf],
    tools: Option<&[String]>,
    pending: Option<&str>,
    syntax: SyntaxPolicy,
    watch: bool,
) -> anyhow::Result<u8> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_max_level(log_level(std::env::var("MEND_LOG").ok().as_deref()))
        .init();
    let server = MendServer::new(roots, tools, pending, syntax, watch)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        tracing::info!(roots = ?roots, "mend mcp serving on stdio");
        let io = stdio::transport();
        // The filter bounds lines at its own limit and answers a longer
        // one; rmcp's own (smaller) bound would drop it unanswered.
        let transport = rmcp::transport::async_rw::AsyncRwTransport::new(io.input, io.output)
            .with_max_line_length(usize::MAX);
        let served = async {
            server.serve(transport).await?.waiting().await?;
            anyhow::Ok(())
        }
        .await;
        // Even when the client left before initializing, the errors owed
        // for its lines are written.
        let _ = io.writer.await;
        served
    })?;
    // Dropping the runtime waits for blocking work still running, so a
    // commit whose caller went away still finishes.
    drop(rt);
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::naming_tools;

    #[test]
    fn quoted_commands_a_tool_does_are_named_as_the_tool() {
        assert_eq!(
            naming_tools("no checkpoint `x`; `mend checkpoint list` shows the ids"),
            "no checkpoint `x`; `checkpoint_list` shows the ids"
        );
        assert_eq!(
            naming_tools("(`mend turn diff src/a.rs` numbers them), or `mend turn end`"),
            "(`turn_diff` numbers them), or `mend turn end`"
        );
        // A person's command, a longer command's prefix and an unclosed
        // quote are kept.
        for kept in [
            "`mend pending accept` it",
            "`mend turn diffs`",
            "a `mend turn begin",
        ] {
            assert_eq!(naming_tools(kept), kept);
        }
    }
}
