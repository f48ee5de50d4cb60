//! `mend turn …`: review every change of an agent's turn, however it was
//! made. Each subcommand maps its arguments onto one
//! `mend_service::turn` action and prints the outcome (its JSON with
//! `--json`); `hook` reads an agent's JSON and always exits 0.

use std::io::{Read as _, Write as _};
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use mend_checkpoint::turn::{BeginOptions, Selection};
use mend_service::turn::Action;
use mend_service::turn::hook::{self, Agent};
use mend_service::{Call, Watched};

use crate::progress::Progress;

/// How long a hook waits for the workspace lock, in seconds, unless
/// `--lock-timeout` says otherwise: an agent waits for its hook.
const HOOK_LOCK_TIMEOUT_SECS: u64 = 5;

/// The most a hook reads from standard input; agents send a few KiB.
const HOOK_INPUT_LIMIT: u64 = 16 << 20;

/// How long a hook waits for its standard input to end: agents write
/// their JSON and close it at once, and one that keeps it open must not
/// hold its hook (and so itself) until its own timeout.
const HOOK_INPUT_DEADLINE: Duration = Duration::from_secs(5);

/// `mend turn` arguments.
#[derive(clap::Args, Debug)]
pub(crate) struct TurnArgs {
    /// Worktree root [default: the git worktree holding the current
    /// folder, else the current folder]. Without it, paths are relative
    /// to the current folder; with it, to the root.
    #[arg(long, global = true)]
    root: Option<PathBuf>,
    /// Print JSON: one document for every outcome, refusals and errors
    /// included (`{"error": {"kind", "message", …}}`).
    #[arg(long, global = true)]
    json: bool,
    /// Seconds to wait for another mend process writing in the root
    /// [default: 30, or 5 for `hook`, which its agent waits for].
    #[arg(long, global = true)]
    lock_timeout: Option<u64>,
    #[command(subcommand)]
    command: TurnCommand,
}

#[derive(clap::Subcommand, Debug)]
enum TurnCommand {
    /// Checkpoint the worktree as a turn's start and print the turn's id.
    /// An open turn is ended first (its start stays a checkpoint).
    Begin {
        /// A label for humans.
        #[arg(long)]
        label: Option<String>,
        /// The agent's session id.
        #[arg(long)]
        session: Option<String>,
        /// Begin even when the root is a home directory or the root of a
        /// filesystem (refused otherwise until it has a checkpoint).
        #[arg(long)]
        force: bool,
        /// Say on stderr whether a `mend daemon` did the snapshot, and how.
        #[arg(long)]
        verbose: bool,
    },
    /// What changed since the turn began, whoever changed it: `M`
    /// modified, `A` added, `D` deleted, `R` renamed (found by content),
    /// `T` type or mode changed (file ↔ link or folder, `chmod +x`).
    /// Binary and large files are listed with their sizes, without diffs.
    Status {
        /// Also list ignored files modified during the turn (no
        /// checkpoint holds them: no diff, no reject).
        #[arg(long)]
        ignored: bool,
    },
    /// The diff since the turn began, hunks numbered as --hunk takes them.
    Diff {
        /// Files or folders (default: every change).
        paths: Vec<String>,
    },
    /// Put back the turn-start content of files (or of hunks of one file),
    /// after a safety checkpoint that undoes it. A hunk changed since
    /// `mend turn diff` showed it is refused, and nothing is written.
    Reject(SelectArgs),
    /// Mark files or hunks reviewed: they leave status and diff; nothing is
    /// written.
    Accept(SelectArgs),
    /// Undo the last reject or accept exactly, path by path: a path
    /// changed since is left as it is (and named), and every other change
    /// made after it is kept.
    Undo,
    /// Close the turn; its start stays a checkpoint (`mend checkpoint
    /// restore` rewinds the whole turn, undoably).
    End,
    /// Run as an agent's hook: read its JSON (standard input, or the last
    /// argument for Codex's notify), begin a turn on a prompt and print
    /// the turn's summary when the reply is done. Always exits 0.
    Hook {
        /// claude, gemini, codex, opencode or cline.
        agent: String,
        /// The agent's JSON, for agents that pass it as an argument
        /// (Codex's notify); default: standard input.
        input: Option<String>,
    },
}

#[derive(clap::Args, Debug)]
struct SelectArgs {
    /// Files or folders (default: every change).
    paths: Vec<String>,
    /// Just these hunks of one file, as `mend turn diff` numbered them.
    #[arg(long, value_delimiter = ',')]
    hunk: Vec<usize>,
    /// The file's version as `status --json` or `diff --json` gave it:
    /// refused if the file changed since.
    #[arg(long)]
    seen: Option<String>,
}

impl SelectArgs {
    fn selection(&self, place: &Place) -> Selection {
        Selection {
            paths: place.paths(&self.paths),
            hunks: self.hunk.clone(),
            seen: self.seen.clone(),
        }
    }
}

impl TurnArgs {
    /// The root, and how to read a path argument: relative to the root
    /// when `--root` names it, else relative to the current folder.
    fn place(&self) -> (PathBuf, Place) {
        if let Some(r) = &self.root {
            return (r.clone(), Place::Root);
        }
        // A current folder that is gone is refused by the service, as "."
        let Ok(cwd) = std::env::current_dir() else {
            return (PathBuf::from("."), Place::Root);
        };
        let root = mend_service::roots::worktree_of(&cwd);
        let sub = match (cwd.canonicalize(), root.canonicalize()) {
            (Ok(c), Ok(r)) => c.strip_prefix(&r).map(Path::to_path_buf).ok(),
            _ => None,
        };
        (root, sub.map_or(Place::Root, Place::Under))
    }
}

/// Where relative path arguments start.
enum Place {
    Root,
    /// A folder under the root (`""` for the root itself).
    Under(PathBuf),
}

impl Place {
    /// `path` relative to the root. A path climbing out of the root is
    /// passed on as written, for the service to refuse by its rules.
    fn path(&self, path: &str) -> String {
        let Place::Under(sub) = self else {
            return path.to_owned();
        };
        if Path::new(path).is_absolute() || sub.as_os_str().is_empty() {
            return path.to_owned();
        }
        let mut out: Vec<&std::ffi::OsStr> = sub.iter().collect();
        for c in Path::new(path).components() {
            match c {
                Component::CurDir => {}
                Component::ParentDir if out.pop().is_some() => {}
                Component::Normal(n) => out.push(n),
                _ => return path.to_owned(),
            }
        }
        let joined: PathBuf = out.iter().collect();
        let joined = joined.to_string_lossy().into_owned();
        if joined.is_empty() {
            ".".into()
        } else {
            joined
        }
    }

    fn paths(&self, paths: &[String]) -> Vec<String> {
        paths.iter().map(|p| self.path(p)).collect()
    }
}

/// Runs `mend turn …`: the action through the service's `Watched`,
/// which has a daemon serving the root take a begin's snapshot.
pub(crate) fn run(args: &TurnArgs) -> anyhow::Result<u8> {
    let secs = |default| Duration::from_secs(args.lock_timeout.unwrap_or(default));
    let (root, place) = args.place();
    let mut verbose = false;
    let action = match &args.command {
        TurnCommand::Hook { agent, input } => {
            let timeout = secs(HOOK_LOCK_TIMEOUT_SECS);
            return Ok(run_hook(agent, input.as_deref(), timeout));
        }
        TurnCommand::Begin {
            label,
            session,
            force,
            verbose: v,
        } => {
            verbose = *v;
            Action::Begin(BeginOptions {
                label: label.clone(),
                session: session.clone(),
                agent: None,
                force: *force,
            })
        }
        TurnCommand::Status { ignored } => Action::Status { ignored: *ignored },
        TurnCommand::Diff { paths } => Action::Diff(place.paths(paths)),
        TurnCommand::Reject(sel) => Action::Reject(sel.selection(&place)),
        TurnCommand::Accept(sel) => Action::Accept(sel.selection(&place)),
        TurnCommand::Undo => Action::Undo,
        TurnCommand::End => Action::End,
    };
    let mut out = std::io::stdout().lock();
    let progress = Progress::default();
    let timeout = secs(mend_workspace::DEFAULT_LOCK_TIMEOUT_SECS);
    let mut call = Call::new(None, Some(timeout))
        .progress(|n| progress.tick(n))
        .notes(crate::progress::note(verbose));
    let result = Watched::once(&root).turn(&mut call, &action);
    drop(call);
    progress.clear();
    match result {
        Ok((outcome, _)) => {
            if args.json {
                writeln!(out, "{}", mend_service::to_json(&outcome)?)?;
            } else {
                write!(out, "{}", outcome.text())?;
            }
            Ok(crate::EXIT_OK)
        }
        Err(e) => crate::pending::fail(&mut out, args.json, e.into(), false),
    }
}

/// `mend turn hook AGENT`: exit 0 whatever happens.
fn run_hook(agent: &str, input: Option<&str>, timeout: Duration) -> u8 {
    let reply = match Agent::named(agent) {
        Some(a) => {
            let text = match input {
                Some(t) => t.to_owned(),
                None => match hook_input() {
                    Ok(t) => t,
                    Err(why) => return print_reply(&hook::refused(Some(a), &why)),
                },
            };
            let env_dir = a
                .project_variable()
                .and_then(std::env::var_os)
                .map(PathBuf::from);
            hook::run(a, &text, env_dir.as_deref(), timeout)
        }
        None => hook::refused(None, &no_agent(Some(agent))),
    };
    print_reply(&reply)
}

/// The hook's standard input, read until it ends, for at most
/// [`HOOK_INPUT_DEADLINE`] and [`HOOK_INPUT_LIMIT`] bytes; why not, when
/// it did not end in time, is over the limit, or is not UTF-8. The read
/// runs on a thread of its own, which a blocked read leaves behind when
/// the process exits.
fn hook_input() -> Result<String, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let read = std::io::stdin()
            .lock()
            .take(HOOK_INPUT_LIMIT + 1)
            .read_to_end(&mut bytes);
        let _ = tx.send(read.map(|_| bytes));
    });
    let bytes = match rx.recv_timeout(HOOK_INPUT_DEADLINE) {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(e)) => return Err(format!("its input could not be read ({e})")),
        Err(_) => {
            return Err(format!(
                "its input did not end within {} seconds (the agent kept standard input open), so no event was read",
                HOOK_INPUT_DEADLINE.as_secs()
            ));
        }
    };
    if bytes.len() as u64 > HOOK_INPUT_LIMIT {
        return Err(format!(
            "its input is over {} MiB, far more than an agent's hook JSON, so none of it was read as an event",
            HOOK_INPUT_LIMIT >> 20
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "its input is not UTF-8 (byte {} is not), so it is no agent's JSON",
            e.utf8_error().valid_up_to()
        )
    })
}

/// Why an agent name is missing or unknown.
fn no_agent(name: Option<&str>) -> String {
    let names: Vec<&str> = Agent::ALL.iter().map(|(n, _)| *n).collect();
    let what = match name {
        Some(n) => format!("no agent `{}`", mend_core::text::escape_controls(n)),
        None => "no agent named".to_owned(),
    };
    format!("{what}; use {}", names.join(", "))
}

fn print_reply(reply: &hook::Reply) -> u8 {
    let _ = std::io::stdout().lock().write_all(reply.stdout.as_bytes());
    let _ = std::io::stderr().lock().write_all(reply.stderr.as_bytes());
    crate::EXIT_OK
}

/// `mend turn … hook …` whose arguments clap refused (no agent, an
/// unknown option, a bad `--lock-timeout`): a hook must never block its
/// agent, so it says why and exits 0 instead of the usage error's 2 (on
/// which Claude Code and Cline stop). `None` when `args` (the whole
/// command line, program first) is not a hook's.
pub(crate) fn hook_args_refused(args: &[std::ffi::OsString], usage: &str) -> Option<u8> {
    let args: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    if args.get(1).map(String::as_str) != Some("turn") {
        return None;
    }
    let at = args.iter().skip(2).position(|a| a == "hook")? + 2;
    let named = args.get(at + 1).filter(|a| !a.starts_with('-'));
    let agent = named.and_then(|n| Agent::named(n));
    let why = match (named, agent) {
        (_, Some(_)) => {
            let first = usage.lines().next().unwrap_or(usage);
            format!(
                "its arguments are wrong ({}); see `mend turn hook --help`",
                first.trim_start_matches("error: ").trim()
            )
        }
        (named, None) => no_agent(named.map(String::as_str)),
    };
    Some(print_reply(&hook::refused(agent, &why)))
}
