//! `mend pending …`: review what `mend apply --pending` held back. Each
//! subcommand maps its arguments onto one `mend_service::pending` action
//! and prints the outcome (its JSON with `--json`).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use mend_core::text::escape_controls as esc;
use mend_pending::Against;
use mend_service::choice::parser;
use mend_service::pending::{Action, Actor, Outcome};
use mend_service::review::Selection;
use mend_workspace::{Options, Workspace};

/// `mend pending` arguments.
#[derive(clap::Args, Debug)]
pub(crate) struct PendingArgs {
    /// Workspace root [default: the git worktree holding the current
    /// folder, else the current folder].
    #[arg(long, global = true)]
    root: Option<PathBuf>,
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
    /// proposal (accept, sync, preview): `git` (git's merge only, the
    /// default) or `safe` (git's merge, then the resolvers whose result the
    /// inputs determine; an accept names them).
    #[arg(long, default_value = "git", value_name = "git|safe", global = true)]
    merge: mend_merge::Policy,
    /// Pause this many milliseconds after each commit step: a test hook,
    /// so tests can interrupt a commit half-way.
    #[arg(long, hide = true, value_name = "MS", global = true)]
    commit_step_delay_ms: Option<u64>,
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
        #[arg(long, value_parser = parser::<Against>(), default_value = "context")]
        against: Against,
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

/// Runs `mend pending`. With `--json`, every outcome is one JSON document
/// on standard output, refusals and errors included (`{"error": …}`), and
/// the exit code is the same as without it.
pub(crate) fn run(args: &PendingArgs) -> anyhow::Result<u8> {
    let mut out = std::io::stdout().lock();
    let opts = Options {
        lock_timeout: Duration::from_secs(args.lock_timeout),
        ..Options::default()
    };
    let root = mend_service::root(args.root.as_deref());
    let result = mend_service::roots::open(&root, opts)
        .map(crate::prepared)
        .with_context(|| format!("cannot open {}", root.display()))
        .and_then(|mut ws| {
            ws.pause_commits(args.commit_step_delay_ms.map(Duration::from_millis));
            act(&ws, args, &mut out)
        });
    match result {
        Ok(code) => Ok(code),
        Err(e) => fail(&mut out, args.json, e, false),
    }
}

/// A failed `mend pending`, `mend review` or `mend apply --pending`: a
/// refusal a person can act on exits 1, with its message on standard
/// output; anything else is an error (2). With `json`, either is printed
/// as `{"error": Failure}` (and, for `apply`, beside `"ok": false` and
/// `"written": false`).
pub(crate) fn fail(
    out: &mut impl std::io::Write,
    json: bool,
    e: anyhow::Error,
    apply: bool,
) -> anyhow::Result<u8> {
    let classified = crate::failure::classify(&e);
    let code = classified.code();
    if json {
        if apply {
            let refused = mend_service::outcome::ApplyRefused::failed(classified.failure);
            writeln!(out, "{}", mend_service::to_json(&refused)?)?;
        } else {
            crate::failure::print_json(out, classified.failure)?;
        }
        return Ok(code);
    }
    if classified.refusal {
        writeln!(out, "mend: {}", classified.failure.message)?;
        return Ok(code);
    }
    Err(e)
}

/// The subcommand as a service action.
fn action(command: &PendingCommand) -> Action {
    let selection = |paths: &[String], numbers: &[usize], seen: &Option<String>| Selection {
        paths: paths.to_vec(),
        hunks: numbers.to_vec(),
        seen: seen.clone(),
    };
    match command {
        PendingCommand::Add { paths } => Action::Add(paths.clone()),
        PendingCommand::Status => Action::Status,
        PendingCommand::Accept {
            paths,
            hunks: numbers,
            seen,
            markers,
        } => Action::Accept {
            selection: selection(paths, numbers, seen),
            markers: *markers,
        },
        PendingCommand::Reject {
            paths,
            hunks: numbers,
            seen,
        } => Action::Reject(selection(paths, numbers, seen)),
        PendingCommand::Sync { paths } => Action::Sync(paths.clone()),
        PendingCommand::Diff { paths, against } => Action::Diff {
            paths: paths.clone(),
            against: *against,
        },
        PendingCommand::List => Action::List,
        PendingCommand::Drop { name } => Action::Drop(name.clone()),
        PendingCommand::RetryContext => Action::RetryContext,
    }
}

fn act(ws: &Workspace, args: &PendingArgs, out: &mut impl std::io::Write) -> anyhow::Result<u8> {
    let who = Actor {
        session: &args.session,
        holder: "mend pending",
        merge: Some(args.merge),
    };
    let outcome = mend_service::pending::act(ws, &who, action(&args.command))?;
    // `retry-context` exits 1 when the last proposal did not fail.
    let code = match &outcome {
        Outcome::RetryContext {
            retry_context: None,
            ..
        } => crate::EXIT_FAILED,
        _ => crate::EXIT_OK,
    };
    if args.json {
        writeln!(out, "{}", mend_service::to_json(&outcome)?)?;
    } else {
        print(out, &outcome)?;
    }
    Ok(code)
}

/// An outcome for a person.
fn print(out: &mut impl std::io::Write, outcome: &Outcome) -> anyhow::Result<()> {
    match outcome {
        Outcome::Added(paths) => lines(out, "added ", paths)?,
        Outcome::Status(report) => status(out, report)?,
        Outcome::Accepted { accepted } => {
            for d in accepted {
                writeln!(out, "accepted {} ({})", esc(&d.path), esc(&d.how))?;
            }
        }
        Outcome::Rejected { rejected } => lines(out, "rejected ", rejected)?,
        Outcome::Synced { synced, skipped } => {
            lines(out, "synced ", synced)?;
            for s in skipped {
                writeln!(out, "skipped {}: {}", esc(&s.path), esc(&s.why))?;
            }
        }
        Outcome::Diff(d) => write!(out, "{}", crate::for_terminal(&d.diff))?,
        Outcome::Output { text, .. } => write!(out, "{}", text.as_deref().unwrap_or(""))?,
        Outcome::Sessions { sessions } => lines(out, "", sessions)?,
        Outcome::Dropped(names) => lines(out, "dropped ", names)?,
        Outcome::RetryContext {
            session,
            retry_context,
        } => match retry_context {
            Some(ctx) => write!(out, "{ctx}")?,
            None => writeln!(
                out,
                "mend: pending session `{}` holds no retry context: its last proposal did not fail",
                esc(session)
            )?,
        },
    }
    Ok(())
}

fn status(
    out: &mut impl std::io::Write,
    report: &mend_service::pending::Status,
) -> anyhow::Result<()> {
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
    // A note beside the list, not a line of it: scripts read the letters.
    use std::io::Write as _;
    for r in &report.streaming {
        writeln!(
            std::io::stderr(),
            "mend: a request is streaming in from {}: accept, reject, sync, add and drop wait until it ends",
            esc(r)
        )?;
    }
    Ok(())
}

/// Prints `verb path` lines.
fn lines(out: &mut impl std::io::Write, verb: &str, paths: &[String]) -> anyhow::Result<()> {
    for p in paths {
        writeln!(out, "{verb}{}", esc(p))?;
    }
    Ok(())
}
