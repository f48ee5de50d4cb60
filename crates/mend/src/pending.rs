//! `mend pending …`: review what `mend apply --pending` held back.

use std::io::Write as _;
use std::path::PathBuf;

use anyhow::Context as _;
use mend_core::text::escape_controls as esc;
use mend_pending::{Against, Session};
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
    /// Print JSON.
    #[arg(long, global = true)]
    json: bool,
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
    /// `R` renames; `~` changed locally, no output; `~M` changed locally
    /// and there is an output (accept merges three ways).
    Status,
    /// Write outputs to the files (all with an output when no path is
    /// given); with --hunk, just those hunks of one file.
    Accept {
        /// Files, relative to the root.
        paths: Vec<String>,
        /// Hunk numbers, from 1, as `mend pending diff` shows them.
        #[arg(long = "hunk", value_name = "N", value_delimiter = ',')]
        hunks: Vec<usize>,
        /// Write git conflict markers where local and proposed changes
        /// overlap, instead of refusing.
        #[arg(long)]
        markers: bool,
    },
    /// Drop outputs (all when no path is given), or single hunks of one.
    Reject {
        /// Files, relative to the root.
        paths: Vec<String>,
        /// Hunk numbers, from 1, as `mend pending diff` shows them.
        #[arg(long = "hunk", value_name = "N", value_delimiter = ',')]
        hunks: Vec<usize>,
    },
    /// Set the context to the file as it is now.
    Sync {
        /// Files, relative to the root (default: all in the session).
        paths: Vec<String>,
    },
    /// A unified diff of the outputs, hunks numbered.
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

/// Refusals a user can act on exit 1; anything else is an error (2).
fn refused(e: &mend_pending::Error) -> bool {
    use mend_pending::Error as E;
    matches!(
        e,
        E::Streaming(_)
            | E::Conflict { .. }
            | E::Diverged { .. }
            | E::NoHunk { .. }
            | E::Nothing { .. }
            | E::NoSession(_)
    )
}

/// Runs `mend pending`.
pub fn run(args: &PendingArgs) -> anyhow::Result<u8> {
    let ws = Workspace::open(&args.root, Options::default())
        .with_context(|| format!("cannot open {}", args.root.display()))?;
    let mut out = std::io::stdout().lock();
    match act(&ws, args, &mut out) {
        Ok(code) => Ok(code),
        Err(e) => match e.downcast_ref::<mend_pending::Error>() {
            Some(p) if refused(p) => {
                writeln!(out, "mend: {p}")?;
                Ok(crate::EXIT_FAILED)
            }
            _ => Err(e),
        },
    }
}

fn act(ws: &Workspace, args: &PendingArgs, out: &mut impl std::io::Write) -> anyhow::Result<u8> {
    let name = args.session.as_str();
    match &args.command {
        PendingCommand::Add { paths } => {
            let added = Session::open(ws, name)?.add(paths)?;
            lines(out, args.json, "added", &added)?;
        }
        PendingCommand::Status => status(ws, args, out)?,
        PendingCommand::Accept {
            paths,
            hunks,
            markers,
        } => {
            let mut s = Session::existing(ws, name)?;
            let lock = crate::lock_and_recover(ws)?;
            let done = s.accept(&lock, paths, hunks, *markers)?;
            if args.json {
                writeln!(out, "{}", serde_json::to_string_pretty(&done)?)?;
            } else {
                for d in &done {
                    writeln!(out, "accepted {} ({})", esc(&d.path), d.how)?;
                }
            }
        }
        PendingCommand::Reject { paths, hunks } => {
            let done = Session::existing(ws, name)?.reject(paths, hunks)?;
            lines(out, args.json, "rejected", &done)?;
        }
        PendingCommand::Sync { paths } => {
            let done = Session::existing(ws, name)?.sync(paths)?;
            lines(out, args.json, "synced", &done)?;
        }
        PendingCommand::Diff { paths, against } => {
            let against = match against {
                AgainstArg::Context => Against::Context,
                AgainstArg::Local => Against::Local,
            };
            let diff = Session::existing(ws, name)?.diff(paths, against)?;
            if args.json {
                writeln!(out, "{}", serde_json::json!({ "diff": diff }))?;
            } else {
                write!(out, "{diff}")?;
            }
        }
        PendingCommand::List => lines(out, args.json, "", &Session::list(ws)?)?,
        PendingCommand::Drop { name } => {
            Session::drop_session(ws, name)?;
            lines(out, args.json, "dropped", std::slice::from_ref(name))?;
        }
        PendingCommand::RetryContext => {
            let s = Session::existing(ws, name)?;
            match s.retry_context() {
                Some(ctx) => write!(out, "{ctx}")?,
                None => return Ok(crate::EXIT_FAILED),
            }
        }
    }
    Ok(crate::EXIT_OK)
}

fn status(ws: &Workspace, args: &PendingArgs, out: &mut impl std::io::Write) -> anyhow::Result<()> {
    let s = Session::existing(ws, &args.session)?;
    let files = s.status()?;
    if args.json {
        let v = serde_json::json!({ "session": s.name(), "files": files });
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(());
    }
    for f in &files {
        let to =
            f.to.as_ref()
                .map_or(String::new(), |t| format!(" -> {}", esc(t)));
        writeln!(out, "{:<2} {}{to}", f.status, esc(&f.path))?;
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
