//! The `mend` command line.
//!
//! This binary is the only place that knows about argument parsing,
//! terminals and exit codes; the engine lives in `mend-core`.

mod checkpoint;
mod daemon;
mod editor;
mod failure;
mod mcp;
mod merge;
mod pending;
mod progress;
mod review;
mod turn;

use std::collections::HashMap;
use std::io::{IsTerminal, Read, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use mend_core::ApplyReport;
use mend_core::formats::{self, Format};
use mend_core::report::syntax::SyntaxPolicy;
use mend_service::apply::{Applier, ApplyRequest, CheckpointFirst, Destination};
use mend_service::choice::parser;
use mend_service::outcome::{ApplyJson, ApplyRefused};
use mend_service::stream::Streamed;
use mend_workspace::{Options, Workspace};

/// Exit code: every edit applied.
const EXIT_OK: u8 = 0;
/// Exit code: an edit failed (or the input held no usable edit); nothing was written.
const EXIT_FAILED: u8 = 1;
/// Exit code: usage error or unreadable input.
const EXIT_USAGE: u8 = 2;

#[derive(Parser, Debug)]
#[command(
    name = "mend",
    version,
    about = "Apply AI-proposed edits to files: strict matching first, tolerant only when unique, all or nothing.",
    long_about = None
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Apply the edits in a model's response to files under a root.
    ///
    /// Exit status: 0 when every edit applied, 1 when any edit failed or the
    /// response held no edits (then nothing is written), 2 for a usage error
    /// or unreadable input.
    Apply(ApplyArgs),
    /// Print the edits a response holds, as JSON, without touching files.
    ///
    /// Exit status: 0 when every block was read, 1 when a block is malformed
    /// or there are no edits, 2 for a usage error or unreadable input.
    Parse(ParseArgs),
    /// Print instructions that teach a model an edit format.
    Prompt {
        /// The format to teach.
        #[arg(value_parser = parser::<Format>())]
        format: Format,
    },
    /// Finish a transaction that a killed mend left unfinished (every
    /// command that writes does this first).
    Recover {
        /// Workspace root [default: the git worktree holding the current
        /// folder, else the current folder].
        #[arg(long)]
        root: Option<PathBuf>,
    },
    /// Print the content hash of files, to pass back later as
    /// `apply --expect PATH=HASH`; mend remembers the content so a stale
    /// edit can be shown what changed.
    Hash {
        /// Workspace root [default: the git worktree holding the current
        /// folder, else the current folder].
        #[arg(long)]
        root: Option<PathBuf>,
        /// Files, relative to the root.
        #[arg(required = true)]
        paths: Vec<String>,
    },
    /// Merge three versions of a file, as `git merge-file`.
    ///
    /// Writes the result into CURRENT unless -p. Exit status: the number of
    /// conflicts (at most 127); 255 on an error (unreadable or binary input).
    Merge(merge::MergeArgs),
    /// Print a unified diff from OLD to NEW that `git apply` accepts.
    ///
    /// Exit status: 0 when the files are equal, 1 when they differ, 2 on an
    /// error.
    Diff(merge::DiffArgs),
    /// Snapshot and restore the worktree (private git refs; HEAD, branches,
    /// the index and the stash are never touched).
    Checkpoint(checkpoint::CheckpointArgs),
    /// Review changes `mend apply --pending` held back: status letters,
    /// accept or reject by file or hunk, sync, diff.
    ///
    /// Exit status: 0 done, 1 refused (a conflict, a file changed locally,
    /// a session busy past --lock-timeout, no such hunk or session), 2 for
    /// an error. With --json, every outcome is one JSON document.
    Pending(pending::PendingArgs),
    /// Review every change of an agent's turn, however it was made (its
    /// own tools, sed, formatters, git checkout, rm, mv): begin, status
    /// with letters, diff with numbered hunks, reject or accept by file or
    /// hunk, end; `hook AGENT` runs as an agent's prompt and stop hooks.
    ///
    /// Exit status: 0 done, 1 refused (no open turn, a path with no change,
    /// a hunk changed since it was shown), 2 for an error; `hook` always
    /// exits 0. With --json, every outcome is one JSON document.
    Turn(turn::TurnArgs),
    /// Review a pending session in the terminal: a file list with letters
    /// and the selected file's hunks; accept or reject hunk by hunk, or a
    /// changed file with conflict markers after asking. The screen follows
    /// changes other commands make to the session (`?` lists the keys;
    /// q, Esc or Ctrl-C quits).
    ///
    /// It never freezes on a lock another mend holds: the screen says who
    /// holds it at once, refreshes when it is free, and a key that writes
    /// waits at most --lock-timeout. With --turn, the open turn's changes
    /// instead: `r` reverts a hunk and `x` a file to the turn's start. Exit
    /// status: 0, or 1 when there is no such session (or no open turn).
    Review(review::ReviewArgs),
    /// Serve the editor protocol on stdio: JSON-RPC 2.0 with LSP framing.
    ///
    /// The editor reports its open buffers; when another program writes
    /// one of their files, mend sends the buffer what to do: reload a clean
    /// buffer, merge the change into one with unsaved edits, or write
    /// conflict markers. See docs/editor-protocol.md.
    Editor {
        /// Workspace root when `initialize` names none (default: the git
        /// worktree holding the current folder, else the current folder).
        #[arg(long)]
        root: Option<PathBuf>,
        /// How dirty buffers are merged with the file: `git` (git's merge
        /// only, the default) or `safe` (git's merge, then the resolvers
        /// whose result the inputs determine). `initialize` may say
        /// otherwise.
        #[arg(long, default_value = "git", value_name = "git|safe")]
        merge: mend_merge::Policy,
    },
    /// Serve mend's tools to an agent over the Model Context Protocol
    /// (stdio).
    Mcp {
        /// Project roots the tools may touch (default: the git worktree
        /// holding the current folder, else the current folder); relative
        /// paths resolve against the first.
        #[arg(long)]
        root: Vec<PathBuf>,
        /// Serve only these tools (comma-separated), hiding the rest from
        /// the model: `--tools write_file` leaves whole-file writes only.
        #[arg(long, value_delimiter = ',')]
        tools: Option<Vec<String>>,
        /// Review mode: writing tools hold their results as pending changes
        /// in SESSION (default `default`) instead of writing, and
        /// read_file shows a file's pending output.
        #[arg(long, value_name = "SESSION", num_args = 0..=1, default_missing_value = mend_pending::DEFAULT_SESSION)]
        pending: Option<String>,
        /// The syntax check of writing tools whose call does not choose one
        /// (`warn`, `refuse` or `off`; see `mend apply --syntax`).
        #[arg(long, value_parser = parser::<SyntaxPolicy>(), default_value = "warn")]
        syntax: SyntaxPolicy,
        /// Do not watch the roots: every checkpoint then scans every file.
        /// By default a root is watched from its first checkpoint on, and
        /// later checkpoints examine only what changed.
        #[arg(long)]
        no_watch: bool,
    },
    /// Keep a root watched, so checkpoints examine only what changed.
    ///
    /// `mend daemon` runs in the foreground until `mend daemon stop` (put
    /// it in the background with `mend daemon &`, or run it as a systemd
    /// user service; see docs/daemon.md). While it runs, `mend checkpoint
    /// create` and `mend turn begin` in that root have it take the
    /// snapshot, examining only the paths its watcher saw change; without
    /// it they scan every file, as before. One daemon serves a root; it
    /// answers its own user only, on .mend/daemon/sock. `status` exits 0
    /// when a daemon answers and 1 when none does; `stop` exits 1 when
    /// none runs.
    Daemon(daemon::DaemonArgs),
    /// Print the JSON Schemas of the JSON edit formats.
    Schema {
        /// Only this format's schema (`str-replace` or `anchored`).
        #[arg(value_parser = parser::<Format>())]
        format: Option<Format>,
    },
}

#[derive(clap::Args, Debug)]
struct ApplyArgs {
    /// Workspace root; every path in the edits is relative to it
    /// [default: the git worktree holding the current folder, else the
    /// current folder].
    #[arg(long)]
    root: Option<PathBuf>,
    /// Edit format of the input; `auto` decides per block.
    #[arg(long, value_parser = parser::<Format>(), default_value = "auto")]
    format: Format,
    /// Print the unified diff that would be written, and write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Print the report as JSON (schema: mend_core::report).
    #[arg(long)]
    json: bool,
    /// Read standard input as it arrives, checking each block against the
    /// files as soon as it is complete; still writes all or nothing at the end.
    #[arg(long)]
    stream: bool,
    /// Write the edits that succeed even if others fail; after an edit to a
    /// file fails, that file's later edits are skipped. Exit status is still
    /// 1 when any edit failed.
    #[arg(long)]
    partial: bool,
    /// Refuse to edit PATH unless its content still hashes to HASH (from
    /// `mend hash` or an earlier read): "file changed since you read it".
    #[arg(long, value_name = "PATH=HASH")]
    expect: Vec<String>,
    /// Seconds to wait for another mend process writing in the same root.
    #[arg(long, default_value_t = mend_workspace::DEFAULT_LOCK_TIMEOUT_SECS)]
    lock_timeout: u64,
    /// Refuse files larger than this many bytes.
    #[arg(long, default_value_t = mend_workspace::DEFAULT_MAX_BYTES)]
    max_bytes: u64,
    /// Checkpoint the worktree before writing, so the apply can be undone
    /// with `mend checkpoint restore`.
    #[arg(long)]
    checkpoint: bool,
    /// Add the changed files to the git index after writing.
    #[arg(long)]
    stage: bool,
    /// Hold the results as pending changes for review (`mend pending`)
    /// instead of writing the files; edits to a file with a pending output
    /// apply on top of it.
    #[arg(long, conflicts_with_all = ["checkpoint", "stage", "dry_run", "partial"])]
    pending: bool,
    /// The pending session (with --pending).
    #[arg(long, default_value = mend_pending::DEFAULT_SESSION, requires = "pending")]
    session: String,
    /// Parse each changed file (tree-sitter) and report syntax errors the
    /// edits introduce: `warn` writes and reports them, `refuse` writes
    /// nothing and exits 1, `off` does not check.
    #[arg(long, value_parser = parser::<SyntaxPolicy>(), default_value = "warn")]
    syntax: SyntaxPolicy,
    /// Pause this many milliseconds after each commit step: a test hook,
    /// so tests can interrupt a commit half-way.
    #[arg(long, hide = true, value_name = "MS")]
    commit_step_delay_ms: Option<u64>,
    /// The model's response; `-` or nothing reads standard input.
    input: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
struct ParseArgs {
    /// Edit format of the input; `auto` decides per block.
    #[arg(long, value_parser = parser::<Format>(), default_value = "auto")]
    format: Format,
    /// The model's response; `-` or nothing reads standard input.
    input: Option<PathBuf>,
}

/// A server applies edit after edit to the same files: it keeps the syntax
/// check's parses, so each check reparses only what the edit changed.
fn keep_parses_in_servers(command: &Command) {
    if matches!(
        command,
        Command::Mcp { .. } | Command::Editor { .. } | Command::Daemon(_)
    ) {
        mend_service::apply::keep_syntax_trees();
    }
}

fn main() -> ExitCode {
    let parsed = Cli::try_parse();
    if let Err(e) = &parsed
        && e.use_stderr()
        && let Some(code) = turn::hook_args_refused(
            &std::env::args_os().collect::<Vec<_>>(),
            &e.render().to_string(),
        )
    {
        return ExitCode::from(code);
    }
    let cli = match parsed {
        Ok(c) => c,
        Err(e) if e.use_stderr() && json_errors().is_some() => {
            let message = e.render().to_string();
            let apply = json_errors() == Some("apply");
            let _ = usage_json(&mut std::io::stdout().lock(), message.trim_end(), apply);
            return ExitCode::from(EXIT_USAGE);
        }
        Err(e) => {
            let code = if e.use_stderr() { EXIT_USAGE } else { EXIT_OK };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    keep_parses_in_servers(&cli.command);
    let result = match cli.command {
        Command::Apply(args) => run_apply(&args),
        Command::Parse(args) => run_parse(&args),
        Command::Prompt { format } => print(&formats::prompt::prompt(format)).map(|()| EXIT_OK),
        Command::Schema { format } => run_schema(format),
        Command::Recover { root } => run_recover(&mend_service::root(root.as_deref())),
        Command::Merge(args) => {
            return match merge::run_merge(&args) {
                Ok(code) => ExitCode::from(code),
                Err(e) => {
                    let _ = writeln!(std::io::stderr(), "mend merge: {e:#}");
                    ExitCode::from(255)
                }
            };
        }
        Command::Diff(args) => merge::run_diff(&args),
        Command::Checkpoint(args) => checkpoint::run(&args),
        Command::Daemon(args) => daemon::run(&args),
        Command::Pending(args) => pending::run(&args),
        Command::Turn(args) => turn::run(&args),
        Command::Review(args) => review::run(&args),
        Command::Mcp {
            root,
            tools,
            pending,
            syntax,
            no_watch,
        } => mcp::run(
            &root,
            tools.as_deref(),
            pending.as_deref(),
            syntax,
            !no_watch,
        ),
        Command::Hash { root, paths } => run_hash(&mend_service::root(root.as_deref()), &paths),
        Command::Editor { root, merge } => editor::run(root.as_deref(), merge),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        // A reader that stops early (`mend … | head`) is not a failure, as
        // in ripgrep; whatever mend was doing has already finished.
        Err(e) if is_broken_pipe(&e) => ExitCode::from(EXIT_OK),
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "mend: {e:#}");
            // A command that answers in JSON answers its errors too.
            if let Some(command) = json_errors() {
                let _ = error_json(&mut std::io::stdout().lock(), &e, command == "apply");
            }
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// An error that ended a `--json` command, as its one JSON document.
fn error_json(out: &mut impl std::io::Write, e: &anyhow::Error, apply: bool) -> anyhow::Result<()> {
    let failure = failure::classify(e).failure;
    if apply {
        let refused = ApplyRefused::failed(failure);
        writeln!(out, "{}", mend_service::to_json(&refused)?)?;
        Ok(())
    } else {
        failure::print_json(out, failure)
    }
}

/// Which command asks for every outcome as JSON, so that its usage
/// errors are JSON too: `mend pending … --json`, `mend turn … --json`,
/// `mend checkpoint … --json` and `mend apply --json`.
fn json_errors() -> Option<&'static str> {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let has = |flag: &str| args.iter().any(|a| a == flag);
    let command = args
        .iter()
        .find(|a| !a.to_string_lossy().starts_with('-'))?;
    if !has("--json") {
        None
    } else if command == "pending" || command == "turn" || command == "checkpoint" {
        Some("pending")
    } else if command == "apply" {
        Some("apply")
    } else {
        None
    }
}

/// A usage error as the one JSON document of a command's `--json`:
/// `{"error": {"kind": "usage", …}}`, with `"ok": false, "written":
/// false` for `apply`.
fn usage_json(out: &mut impl std::io::Write, message: &str, apply: bool) -> anyhow::Result<()> {
    let usage = mend_service::usage(message);
    if apply {
        writeln!(
            out,
            "{}",
            mend_service::to_json(&ApplyRefused::failed(usage))?
        )?;
        Ok(())
    } else {
        failure::print_json(out, usage)
    }
}

/// Text from files, made safe for a terminal: when standard output is
/// one, control characters other than line breaks and tabs are shown
/// escaped, so a file cannot move the cursor or recolour the screen;
/// otherwise the bytes are kept exactly (a diff piped to `git apply`).
fn for_terminal(text: &str) -> std::borrow::Cow<'_, str> {
    if std::io::stdout().is_terminal() {
        mend_core::text::escape_controls_in_text(text)
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn print(s: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(s.as_bytes())?;
    Ok(())
}

fn decode(bytes: Vec<u8>) -> anyhow::Result<String> {
    String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "the input is not valid UTF-8 (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

fn open_input(input: Option<&PathBuf>) -> anyhow::Result<Box<dyn Read>> {
    match input {
        Some(p) if p.as_os_str() != "-" => Ok(Box::new(mend_service::stream::open_response(p)?)),
        _ => {
            let stdin = std::io::stdin();
            if stdin.is_terminal() {
                anyhow::bail!(
                    "no input: pass a file with the model's response, or pipe it to standard input"
                );
            }
            Ok(Box::new(stdin))
        }
    }
}

fn read_input(input: Option<&PathBuf>) -> anyhow::Result<String> {
    read_all(open_input(input)?)
}

fn read_all(mut reader: Box<dyn Read>) -> anyhow::Result<String> {
    let mut buf = Vec::new();
    reader
        .read_to_end(&mut buf)
        .context("cannot read the input")?;
    decode(buf)
}

fn run_schema(format: Option<Format>) -> anyhow::Result<u8> {
    let all = formats::schema::schemas();
    let value = match format {
        None => all,
        Some(f) => match all.get(f.name()) {
            Some(v) => v.clone(),
            None => anyhow::bail!(
                "{} is not a JSON format; schemas exist for {}",
                f.name(),
                Format::ALL
                    .iter()
                    .filter(|f| f.is_json())
                    .map(|f| f.name())
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
        },
    };
    print(&(mend_service::to_json(&value)? + "\n"))?;
    Ok(EXIT_OK)
}

fn run_parse(args: &ParseArgs) -> anyhow::Result<u8> {
    let input = read_input(args.input.as_ref())?;
    let (json, clean) = mend_service::outcome::ParseJson::of(formats::parse(&input, args.format));
    print(&(mend_service::to_json(&json)? + "\n"))?;
    Ok(if clean { EXIT_OK } else { EXIT_FAILED })
}

fn open_workspace(root: &std::path::Path, opts: Options) -> anyhow::Result<Workspace> {
    mend_service::roots::open(root, opts)
        .map(prepared)
        .with_context(|| format!("cannot open root {}", root.display()))
}

/// `ws`, telling the person on standard error each time taking its lock
/// (here, or in a pending session's action) finished an interrupted
/// transaction, and what it kept as it was.
pub(crate) fn prepared(mut ws: Workspace) -> Workspace {
    ws.on_recovery(|r| {
        let level = match r {
            mend_workspace::Recovery::Ignored { .. } => "warning: ",
            mend_workspace::Recovery::RolledForward { kept, lost }
                if !kept.is_empty() || !lost.is_empty() =>
            {
                "warning: "
            }
            _ => "",
        };
        let _ = writeln!(std::io::stderr(), "mend: {level}{r}");
    });
    ws
}

fn run_recover(root: &std::path::Path) -> anyhow::Result<u8> {
    // Told on standard output below, not by a reporter.
    let ws = mend_service::roots::open(root, Options::default())
        .with_context(|| format!("cannot open root {}", root.display()))?;
    let (_lock, recovered) = mend_service::lock_recovered(&ws)?;
    let msg = match recovered {
        None => "nothing to recover".to_owned(),
        Some(r) => r.to_string(),
    };
    print(&format!("{msg}\n"))?;
    Ok(EXIT_OK)
}

fn run_hash(root: &std::path::Path, paths: &[String]) -> anyhow::Result<u8> {
    let ws = open_workspace(root, Options::default())?;
    let mut code = EXIT_OK;
    let mut out = String::new();
    for hashed in mend_service::files::hash(&ws, paths) {
        match hashed {
            Ok(h) => {
                if let Some(w) = &h.warning {
                    let _ = writeln!(std::io::stderr(), "mend: warning: {w}");
                }
                let hash = h
                    .hash
                    .map_or_else(|| "absent".to_owned(), |h| h.to_string());
                out.push_str(&format!("{hash}  {}\n", h.path));
            }
            Err(e) => {
                let _ = writeln!(std::io::stderr(), "mend: {e}");
                code = EXIT_FAILED;
            }
        }
    }
    print(&out)?;
    Ok(code)
}

fn run_apply(args: &ApplyArgs) -> anyhow::Result<u8> {
    let mut ws = open_workspace(
        &mend_service::root(args.root.as_deref()),
        Options {
            max_bytes: args.max_bytes,
            lock_timeout: std::time::Duration::from_secs(args.lock_timeout),
        },
    )?;
    ws.pause_commits(commit_step_delay(args.commit_step_delay_ms));
    let mut out = std::io::stdout().lock();
    match apply(&ws, args, &mut out) {
        Ok(code) => Ok(code),
        Err(e) => apply_failed(&mut out, args, e),
    }
}

/// The hidden `--commit-step-delay-ms` test hook.
fn commit_step_delay(ms: Option<u64>) -> Option<std::time::Duration> {
    ms.map(std::time::Duration::from_millis)
}

/// `mend apply`: argument mapping, one service call, the report printed.
fn apply(ws: &Workspace, args: &ApplyArgs, out: &mut impl std::io::Write) -> anyhow::Result<u8> {
    let progress = progress::Progress::default();
    let made = |cp: &mend_checkpoint::Checkpoint| {
        progress.clear();
        let _ = writeln!(
            std::io::stderr(),
            "mend: checkpoint {} (restore it to undo this apply)",
            cp.id
        );
    };
    let tick = |n: usize| progress.tick(n);
    let req = ApplyRequest {
        expect: mend_service::apply::expectations(ws, &args.expect)?,
        dry_run: args.dry_run,
        partial: args.partial,
        syntax: args.syntax,
        checkpoint: args.checkpoint.then_some(CheckpointFirst {
            progress: &tick,
            made: &made,
        }),
        stage: args.stage,
        ..ApplyRequest::default()
    };
    // Opened before anything is made: a response that cannot be opened
    // leaves no pending session behind.
    let mut reader = open_input(args.input.as_ref())?;
    let applier = Applier::new(ws, destination(args), req)?;
    // Standard input is read first, without the lock: a slow producer must
    // not block other writers.
    let mut input = if args.stream {
        applier.stream(&mut reader, args.format, &mut |index, line| {
            if args.json || index >= mend_core::report::CAPS.listed_edits {
                return Ok(());
            }
            writeln!(out, "{line}")?;
            out.flush()
        })?
    } else {
        Streamed::text(read_all(reader)?, args.format)
    };
    let streamed = std::mem::take(&mut input.lines);
    let applied = applier.finish(input)?;
    let code = if applied.report.ok {
        EXIT_OK
    } else {
        EXIT_FAILED
    };
    if args.json {
        writeln!(out, "{}", mend_service::to_json(&ApplyJson::of(applied))?)?;
    } else {
        let pending = args.pending.then_some(&args.session);
        print_human(out, &applied.report, &streamed, pending)?;
    }
    Ok(code)
}

/// Where `mend apply` puts its results.
fn destination(args: &ApplyArgs) -> Destination<'_> {
    if args.pending {
        Destination::Pending {
            session: &args.session,
            holder: if args.stream {
                "mend apply --pending --stream"
            } else {
                "mend apply --pending"
            },
        }
    } else {
        Destination::Files
    }
}

/// A failed `mend apply`: a refusal (no usable edits, a refused change
/// set, a session's refusal) exits 1 with its message on standard output;
/// anything else is an error (2). With `--json`, every failure is one JSON
/// document, `{"ok": false, "written": false, "error": Failure, …}`.
fn apply_failed(
    out: &mut impl std::io::Write,
    args: &ApplyArgs,
    e: anyhow::Error,
) -> anyhow::Result<u8> {
    let pending = args.pending.then_some(args.session.as_str());
    if args.json {
        let classified = failure::classify(&e);
        let service = e
            .chain()
            .find_map(|c| c.downcast_ref::<mend_service::Error>());
        let code = classified.code();
        let refused = match service {
            Some(s) => {
                // The message as classified: an error's whole chain.
                let mut refused = ApplyRefused::of(s, pending);
                refused.error.message = classified.failure.message;
                refused
            }
            None => ApplyRefused::failed(classified.failure),
        };
        writeln!(out, "{}", mend_service::to_json(&refused)?)?;
        return Ok(code);
    }
    let Some(service) = e.downcast_ref::<mend_service::Error>() else {
        return pending::fail(out, false, e, true);
    };
    let code = if service.is_refusal() {
        EXIT_FAILED
    } else {
        EXIT_USAGE
    };
    match service {
        mend_service::Error::Apply(mend_apply::ApplyError::Commit(c))
            if code == EXIT_FAILED && pending.is_none() =>
        {
            writeln!(out, "mend: nothing written: {c}")?;
        }
        _ if code == EXIT_FAILED => writeln!(out, "mend: {service}")?,
        mend_service::Error::Apply(mend_apply::ApplyError::Commit(_)) => {
            return Err(e.context("committing the planned files failed"));
        }
        _ => return Err(e),
    }
    Ok(code)
}

/// The report for a person; see [`for_terminal`] for what reaches a
/// terminal of the files' text.
fn print_human(
    out: &mut impl std::io::Write,
    report: &ApplyReport,
    streamed: &HashMap<usize, String>,
    pending: Option<&String>,
) -> anyhow::Result<()> {
    let mut text = Vec::new();
    write_human(&mut text, report, streamed, pending)?;
    let text = String::from_utf8_lossy(&text);
    out.write_all(for_terminal(&text).as_bytes())?;
    Ok(())
}

fn write_human(
    out: &mut impl std::io::Write,
    report: &ApplyReport,
    streamed: &HashMap<usize, String>,
    pending: Option<&String>,
) -> anyhow::Result<()> {
    // One line per edit, up to the listing cap; the rest are counted.
    let cap = mend_core::report::CAPS.listed_edits;
    for e in report.edits.iter().take(cap) {
        let line = e.summary();
        // Lines already printed while streaming are not repeated.
        if streamed.get(&e.index) != Some(&line) {
            writeln!(out, "{line}")?;
        }
    }
    if let Some(rest) = &report.omitted {
        writeln!(
            out,
            "… and {} more edits not listed ({})",
            rest.edits,
            rest.describe()
        )?;
    }
    if (report.dry_run || pending.is_some()) && report.ok {
        for f in &report.files {
            write!(out, "{}", f.diff)?;
        }
    }
    if let Some(ctx) = &report.retry_context {
        writeln!(out)?;
        write!(out, "{ctx}")?;
    }
    // When the findings refused the apply, the retry context holds them.
    if !report.syntax.is_empty() && !report.syntax_refused {
        writeln!(out)?;
        write!(
            out,
            "{}",
            mend_core::report::syntax::render_findings(&report.syntax, "WARNING")
        )?;
    }
    for u in &report.syntax_unchecked {
        let path = mend_core::text::escape_controls(&u.path);
        writeln!(out, "note: syntax not checked for {path}: {}", u.reason)?;
    }
    if !report.shell_suggestions.is_empty() {
        writeln!(out, "\nSuggested shell commands (not run):")?;
        for s in &report.shell_suggestions {
            let command = mend_core::text::escape_controls_in_text(&s.command);
            writeln!(out, "  $ {command}")?;
        }
    }
    writeln!(out, "{}", last_line(report, pending))?;
    Ok(())
}

/// The report's last line. A refused run changed no file, and says so in
/// the words of the refusal above it, not as "1 file(s) changed".
fn last_line(report: &ApplyReport, pending: Option<&String>) -> String {
    let (applied, requested) = (report.applied, report.requested);
    let snippets = report
        .edits
        .iter()
        .filter(|e| e.status == mend_core::EditStatus::Snippet)
        .count();
    if !report.ok && !report.written && snippets == requested && requested > 0 {
        return "no edit: every fence was a snippet, no file changed (nothing written)".into();
    }
    if !report.ok && !report.written {
        return format!(
            "{applied} of {requested} edits could be applied, no file changed (nothing written)"
        );
    }
    let read_as = match snippets {
        0 => String::new(),
        1 => " (1 of them a snippet, not an edit)".to_owned(),
        n => format!(" ({n} of them snippets, not edits)"),
    };
    format!(
        "{applied} of {requested} edits applied{read_as}, {} file(s) changed ({})",
        report.files.len(),
        verdict(report, pending)
    )
}

/// What became of the edits, for the last line of the report.
fn verdict(report: &ApplyReport, pending: Option<&String>) -> String {
    let verb = match pending {
        Some(s) if report.ok => return format!("held in pending session `{s}`, nothing written"),
        _ if report.written && !report.ok => "partial: the successful edits were written",
        _ if report.written => "written",
        _ if report.dry_run => "dry run, nothing written",
        // A refusal never gets here (see `last_line`).
        _ => "nothing to write",
    };
    verb.to_owned()
}
