//! `mend pending …`: review what `mend apply --pending` held back.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use mend_core::formats;
use mend_core::text::escape_controls as esc;
use mend_pending::{Against, ErrorReport, HunkGuard, Proposal, Propose, Session};
use mend_workspace::{Options, Workspace};

/// `mend pending` arguments.
#[derive(clap::Args, Debug)]
pub struct PendingArgs {
    /// Workspace root.
    #[arg(long, default_value = ".", global = true)]
    root: PathBuf,
    /// The session (default `default`).
    #[arg(long, default_value = mend_pending::DEFAULT_SESSION, global = true)]
    session: String,
    /// Print JSON: one document for every outcome, refusals and errors
    /// included (`{"error": {"kind", "message", …}}`).
    #[arg(long, global = true)]
    json: bool,
    /// Seconds to wait for another mend process acting on the session (or
    /// writing in the root) to finish.
    #[arg(long, default_value_t = mend_workspace::DEFAULT_LOCK_TIMEOUT_SECS, global = true)]
    lock_timeout: u64,
    /// How a file changed since the model saw it is merged with the
    /// proposal (accept, sync): `safe` (git's merge, then the resolvers
    /// whose result the inputs determine; an accept names them) or `git`
    /// (git's merge only).
    #[arg(long, default_value = "safe", value_name = "safe|git", global = true)]
    merge: mend_merge::Policy,
    #[command(subcommand)]
    command: PendingCommand,
}

#[derive(clap::Subcommand, Debug)]
enum PendingCommand {
    /// Snapshot files as the context the model sees.
    Add {
        /// Files, relative to the root.
        #[arg(required = true)]
        paths: Vec<String>,
    },
    /// One line per file: its status letter and path.
    ///
    /// ` ` in context, no output; `M` output differs from context; `A`
    /// creates a file; `!A` creates a file that now exists; `D` deletes;
    /// `R` renames; `!R` renames onto a path that now exists; `~` changed
    /// locally, no output; `~M` changed locally and there is an output
    /// (accept merges three ways); `?` the file cannot be read as text
    /// now (the reason follows).
    Status,
    /// Write outputs to the files (all with an output when no path is
    /// given); with --hunk, just those hunks of one file.
    ///
    /// --hunk counts hunks as the last `mend pending diff` of the file
    /// numbered them, and is refused (exit 1) when the file's proposal
    /// changed since; --seen VERSION checks against that diff's version
    /// line instead.
    Accept {
        /// Files, relative to the root; a rename's new name names it too.
        paths: Vec<String>,
        /// Hunk numbers, from 1, as `mend pending diff` shows them.
        #[arg(long = "hunk", value_name = "N", value_delimiter = ',')]
        hunks: Vec<usize>,
        /// The version the hunk numbers were read from (a diff's
        /// `# PATH: version ID` line): refused when the proposal changed.
        #[arg(long, value_name = "ID", requires = "hunks")]
        seen: Option<String>,
        /// Write git conflict markers where local and proposed changes
        /// overlap, instead of refusing.
        #[arg(long)]
        markers: bool,
    },
    /// Drop outputs (all when no path is given), or single hunks of one.
    ///
    /// A named file with no output that cannot be read now (`?`) is
    /// forgotten, so the next proposal reads it afresh;
    /// --hunk and --seen work as for accept.
    Reject {
        /// Files, relative to the root; a rename's new name names it too.
        paths: Vec<String>,
        /// Hunk numbers, from 1, as `mend pending diff` shows them.
        #[arg(long = "hunk", value_name = "N", value_delimiter = ',')]
        hunks: Vec<usize>,
        /// The version the hunk numbers were read from, as for accept.
        #[arg(long, value_name = "ID", requires = "hunks")]
        seen: Option<String>,
    },
    /// Set the context to the file as it is now, carrying each output
    /// over to it with a three-way merge (refused, for every file, when a
    /// merge conflicts). Syncing every file passes over a `?` file, with a
    /// note.
    Sync {
        /// Files, relative to the root (default: all in the session).
        paths: Vec<String>,
    },
    /// A unified diff of the outputs, hunks numbered.
    ///
    /// Each numbered file starts with a `# PATH: version ID` line; the
    /// session records it, so a later --hunk on a file whose proposal
    /// changed since is refused. To a terminal, control characters in the
    /// files are shown escaped (`\u{1b}`); to a pipe or file, the bytes
    /// are exact.
    Diff {
        /// Files, relative to the root (default: all with an output).
        paths: Vec<String>,
        /// Diff from what the model saw, or from the file as it is now.
        #[arg(long, value_enum, default_value_t = AgainstArg::Context)]
        against: AgainstArg,
    },
    /// The sessions of this root.
    List,
    /// Delete a session and everything it holds.
    Drop {
        /// The session to delete.
        name: String,
    },
    /// The retry context of the last failed proposal, to send back to the
    /// model.
    RetryContext,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
enum AgainstArg {
    Context,
    Local,
}

/// Runs `mend pending`. With `--json`, every outcome is one JSON document
/// on standard output, refusals and errors included (`{"error": …}`), and
/// the exit code is the same as without it.
pub fn run(args: &PendingArgs) -> anyhow::Result<u8> {
    let mut out = std::io::stdout().lock();
    let opts = Options {
        lock_timeout: Duration::from_secs(args.lock_timeout),
        ..Options::default()
    };
    let result = Workspace::open(&args.root, opts)
        .map(crate::prepared)
        .with_context(|| format!("cannot open {}", args.root.display()))
        .and_then(|ws| act(&ws, args, &mut out));
    match result {
        Ok(code) => Ok(code),
        Err(e) => fail(&mut out, args.json, e, false),
    }
}

/// A failed `mend pending` or `mend apply --pending`: a refusal a person can
/// act on exits 1, with its message on standard output; anything else is
/// an error (2). With `json`, either is printed as `{"error": …}` (and,
/// for `apply`, beside `"ok": false` and `"written": false`).
pub(crate) fn fail(
    out: &mut impl std::io::Write,
    json: bool,
    e: anyhow::Error,
    apply: bool,
) -> anyhow::Result<u8> {
    let pending = e.downcast_ref::<mend_pending::Error>();
    let code = if pending.is_some_and(mend_pending::Error::is_refusal) {
        crate::EXIT_FAILED
    } else {
        crate::EXIT_USAGE
    };
    if json {
        let report = match pending {
            Some(p) => p.report(),
            None => ErrorReport {
                kind: "error".into(),
                message: format!("{e:#}"),
                session: None,
                path: None,
            },
        };
        let v = if apply {
            serde_json::json!({ "ok": false, "written": false, "error": report })
        } else {
            serde_json::json!({ "error": report })
        };
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(code);
    }
    match pending {
        Some(p) if code == crate::EXIT_FAILED => {
            writeln!(out, "mend: {p}")?;
            Ok(code)
        }
        _ => Err(e),
    }
}

/// The named session, naming this command in its lock.
fn existing<'w>(
    ws: &'w Workspace,
    args: &PendingArgs,
    command: &str,
) -> anyhow::Result<Session<'w>> {
    let mut s = Session::existing(ws, &args.session)?;
    s.set_holder(&format!("mend pending {command}"));
    s.set_merge_policy(args.merge);
    Ok(s)
}

fn act(ws: &Workspace, args: &PendingArgs, out: &mut impl std::io::Write) -> anyhow::Result<u8> {
    match &args.command {
        PendingCommand::Add { paths } => {
            let mut s = Session::open(ws, &args.session)?;
            s.set_holder("mend pending add");
            let added = s.add(paths)?;
            lines(out, args.json, "added", &added)?;
        }
        PendingCommand::Status => status(ws, args, out)?,
        PendingCommand::Accept {
            paths,
            hunks,
            seen,
            markers,
        } => {
            let mut s = existing(ws, args, "accept")?;
            let lock = crate::lock_and_recover(ws)?;
            let done = s.accept_with(&lock, paths, hunks, *markers, guard(seen))?;
            if args.json {
                writeln!(out, "{}", serde_json::to_string_pretty(&done)?)?;
            } else {
                for d in &done {
                    writeln!(out, "accepted {} ({})", esc(&d.path), esc(&d.how))?;
                }
            }
        }
        PendingCommand::Reject { paths, hunks, seen } => {
            let done = existing(ws, args, "reject")?.reject_with(paths, hunks, guard(seen))?;
            lines(out, args.json, "rejected", &done)?;
        }
        PendingCommand::Sync { paths } => {
            let done = existing(ws, args, "sync")?.sync(paths)?;
            lines(out, args.json, "synced", &done.synced)?;
            for (path, why) in &done.skipped {
                let note = format!("skipped {}: {}", esc(path), esc(why));
                if args.json {
                    let _ = std::io::Write::write_all(
                        &mut std::io::stderr(),
                        format!("mend: note: {note}\n").as_bytes(),
                    );
                } else {
                    writeln!(out, "{note}")?;
                }
            }
        }
        PendingCommand::Diff { paths, against } => diff(ws, args, paths, *against, out)?,
        PendingCommand::List => lines(out, args.json, "", &Session::list(ws)?)?,
        PendingCommand::Drop { name } => {
            Session::drop_session(ws, name)?;
            lines(out, args.json, "dropped", std::slice::from_ref(name))?;
        }
        PendingCommand::RetryContext => return retry_context(ws, args, out),
    }
    Ok(crate::EXIT_OK)
}

/// How `--hunk` knows its numbers: `--seen`, else the last recorded diff.
fn guard(seen: &Option<String>) -> HunkGuard<'_> {
    seen.as_deref()
        .map_or(HunkGuard::LastDiff, HunkGuard::Version)
}

/// `mend pending diff`: each numbered file after a `# PATH: version ID`
/// line, recorded as what the person was shown.
fn diff(
    ws: &Workspace,
    args: &PendingArgs,
    paths: &[String],
    against: AgainstArg,
    out: &mut impl std::io::Write,
) -> anyhow::Result<()> {
    let against = match against {
        AgainstArg::Context => Against::Context,
        AgainstArg::Local => Against::Local,
    };
    let files = existing(ws, args, "diff")?.diff_files(paths, against, true)?;
    let mut text = String::new();
    let mut versions = serde_json::Map::new();
    for f in files {
        if let Some(v) = f.version {
            text.push_str(&format!("# {}: version {v}\n", esc(&f.path)));
            versions.insert(f.path, v.into());
        }
        text.push_str(&f.text);
    }
    if args.json {
        let v = serde_json::json!({ "diff": text, "versions": versions });
        writeln!(out, "{v}")?;
    } else {
        write!(out, "{}", crate::for_terminal(&text))?;
    }
    Ok(())
}

/// The retry context of the last failed proposal; exit 1 when there is
/// none.
fn retry_context(
    ws: &Workspace,
    args: &PendingArgs,
    out: &mut impl std::io::Write,
) -> anyhow::Result<u8> {
    let s = existing(ws, args, "retry-context")?;
    let ctx = s.retry_context()?;
    let code = if ctx.is_some() {
        crate::EXIT_OK
    } else {
        crate::EXIT_FAILED
    };
    if args.json {
        let v = serde_json::json!({ "session": s.name(), "retry_context": ctx });
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(code);
    }
    match ctx {
        Some(ctx) => write!(out, "{ctx}")?,
        None => writeln!(
            out,
            "mend: pending session `{}` holds no retry context: its last proposal did not fail",
            esc(s.name())
        )?,
    }
    Ok(code)
}

fn status(ws: &Workspace, args: &PendingArgs, out: &mut impl std::io::Write) -> anyhow::Result<()> {
    let report = existing(ws, args, "status")?.report()?;
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
        return Ok(());
    }
    for f in &report.files {
        let to =
            f.to.as_ref()
                .map_or(String::new(), |t| format!(" -> {}", esc(t)));
        let why = f
            .reason
            .as_ref()
            .map_or(String::new(), |r| format!("  ({})", esc(r)));
        writeln!(out, "{:<2} {}{to}{why}", f.status, esc(&f.path))?;
    }
    Ok(())
}

/// Prints `verb path` lines (or a JSON list).
fn lines(
    out: &mut impl std::io::Write,
    json: bool,
    verb: &str,
    paths: &[String],
) -> anyhow::Result<()> {
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(paths)?)?;
        return Ok(());
    }
    for p in paths {
        if verb.is_empty() {
            writeln!(out, "{}", esc(p))?;
        } else {
            writeln!(out, "{verb} {}", esc(p))?;
        }
    }
    Ok(())
}

/// `mend apply --pending`: plans the response as `mend apply` does and
/// holds the results in the session instead of writing them. With
/// `--stream`, each block is checked as it arrives against the session's
/// view, without the session's lock, and the whole proposal is held at the
/// end against the session as it is then.
pub(crate) fn apply(
    ws: &Workspace,
    args: &crate::ApplyArgs,
    expect: HashMap<String, String>,
) -> anyhow::Result<u8> {
    let mut out = std::io::stdout().lock();
    match propose(ws, args, expect, &mut out) {
        Ok(code) => Ok(code),
        Err(e) => fail(&mut out, args.json, e, true),
    }
}

fn propose(
    ws: &Workspace,
    args: &crate::ApplyArgs,
    expect: HashMap<String, String>,
    out: &mut impl std::io::Write,
) -> anyhow::Result<u8> {
    let mut s = Session::open(ws, &args.session)?;
    s.set_syntax(args.syntax.into());
    s.set_holder("mend apply --pending");
    let (parsed, printed, streamed) = if args.stream {
        let recorder = s.recorder();
        let view = |raw: &str| recorder.read(raw);
        let (parsed, printed, plans) = crate::stream_parse(ws, &view, args, out)?;
        (parsed, printed, Some(recorder.finish(plans)))
    } else {
        let input = crate::read_input(args.input.as_ref())?;
        let parsed = formats::parse(&input, args.format.into());
        (parsed, HashMap::new(), None)
    };
    let parsed = match parsed {
        Ok(p) => p,
        Err(e) => return unparsed(out, args, &e),
    };
    let _lock = crate::lock_and_recover(ws)?;
    let opts = Propose {
        expect,
        dry_run: false,
        streamed,
    };
    let Proposal { report, held } = s.propose_with(&parsed, opts)?;
    let code = if report.ok {
        crate::EXIT_OK
    } else {
        crate::EXIT_FAILED
    };
    if args.json {
        let listed = report.capped(mend_core::report::CAPS.listed_edits);
        let mut v = serde_json::to_value(&listed)?;
        v["pending"] = s.name().into();
        v["held"] = serde_json::to_value(&held)?;
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(code);
    }
    crate::print_human(out, &report, &printed, Some(&args.session))?;
    Ok(code)
}

/// A response that holds no edits, or cannot be parsed: nothing is held.
fn unparsed(
    out: &mut impl std::io::Write,
    args: &crate::ApplyArgs,
    e: &mend_core::Error,
) -> anyhow::Result<u8> {
    let no_edits = matches!(e, mend_core::Error::NoEdits);
    if args.json {
        let error = ErrorReport {
            kind: if no_edits { "no_edits" } else { "parse" }.into(),
            message: e.to_string(),
            session: Some(args.session.clone()),
            path: None,
        };
        let v = serde_json::json!({
            "ok": false,
            "written": false,
            "pending": args.session,
            "held": null,
            "error": error,
            "no_edits": no_edits,
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
    } else {
        writeln!(out, "mend: {e}")?;
    }
    Ok(crate::EXIT_FAILED)
}
