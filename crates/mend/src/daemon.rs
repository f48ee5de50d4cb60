//! `mend daemon`: run, ask about, or stop the daemon of a root (see
//! `docs/daemon.md`). Commands that snapshot ask it through the
//! service's `Watched`.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mend_service::daemon::{CONNECT_WAIT, Client, Daemon};

/// `mend daemon` arguments.
#[derive(clap::Args, Debug)]
pub(crate) struct DaemonArgs {
    /// The root to serve [default: the git worktree holding the current
    /// folder, else the current folder, as checkpoint commands find it].
    #[arg(long, global = true)]
    root: Option<PathBuf>,
    /// Print JSON (`status`).
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Option<DaemonCommand>,
}

/// `mend daemon` subcommands; none runs the daemon.
#[derive(clap::Subcommand, Debug)]
enum DaemonCommand {
    /// Run the daemon in the foreground (the default).
    Run,
    /// Say whether a daemon serves the root: exit 0 if one answers, 1 if
    /// none does.
    Status,
    /// Stop the root's daemon: exit 0 once it has stopped, 1 if none runs.
    Stop,
}

/// Runs `mend daemon …`.
pub(crate) fn run(args: &DaemonArgs) -> anyhow::Result<u8> {
    let root = mend_service::root(args.root.as_deref());
    match args.command {
        None | Some(DaemonCommand::Run) => serve(&root),
        Some(DaemonCommand::Status) => status(&root, args.json),
        Some(DaemonCommand::Stop) => stop(&root),
    }
}

fn serve(root: &Path) -> anyhow::Result<u8> {
    // A refusal (another daemon serves the root, a home directory) exits
    // 1, as refusals do everywhere; nothing was made.
    let daemon = match Daemon::start(root) {
        Ok(d) => d,
        Err(e) if e.is_refusal() => {
            let _ = writeln!(std::io::stderr(), "mend: {}", mend_service::chain(&e));
            return Ok(crate::EXIT_FAILED);
        }
        Err(e) => return Err(e.into()),
    };
    let mut err = std::io::stderr().lock();
    let root = mend_core::text::escape_controls(&daemon.root().to_string_lossy()).into_owned();
    writeln!(
        err,
        "mend daemon: serving {root} (pid {}){}; stop it with `mend daemon stop`",
        std::process::id(),
        if daemon.watching() {
            ""
        } else {
            ", not watching (checkpoints scan in full)"
        }
    )?;
    drop(err);
    daemon.serve()?;
    Ok(crate::EXIT_OK)
}

fn status(root: &Path, json: bool) -> anyhow::Result<u8> {
    let mut out = std::io::stdout().lock();
    let Some(client) = Client::connect(root, CONNECT_WAIT)?.serving() else {
        let (held, pid) = mend_service::daemon::lock_holder(root)?;
        let why = match (held, pid) {
            (true, Some(p)) => format!("a daemon (pid {p}) holds the lock but does not answer"),
            (true, None) => "a daemon holds the lock but does not answer".into(),
            (false, _) => "no daemon serves this root".into(),
        };
        if json {
            writeln!(
                out,
                "{}",
                mend_service::to_json(&serde_json::json!({"serving": false, "why": why}))?
            )?;
        } else {
            writeln!(out, "{why}")?;
        }
        return Ok(crate::EXIT_FAILED);
    };
    let s = client.status();
    if json {
        let mut v = mend_service::to_value(s)?;
        if let Some(o) = v.as_object_mut() {
            o.insert("serving".into(), true.into());
        }
        writeln!(out, "{}", mend_service::to_json(&v)?)?;
    } else {
        writeln!(
            out,
            "serving {} (pid {}, {})",
            mend_core::text::escape_controls(&s.root),
            s.pid,
            if s.watching {
                "watching"
            } else {
                "not watching: checkpoints scan in full"
            }
        )?;
    }
    Ok(crate::EXIT_OK)
}

fn stop(root: &Path) -> anyhow::Result<u8> {
    let Some(mut client) = Client::connect(root, CONNECT_WAIT)?.serving() else {
        writeln!(std::io::stdout(), "no daemon serves this root")?;
        return Ok(crate::EXIT_FAILED);
    };
    let pid = client.status().pid;
    client.stop()?;
    // Stopped once it has let go of its lock.
    let start = Instant::now();
    while mend_service::daemon::lock_holder(root)?.0 {
        if start.elapsed() > Duration::from_secs(10) {
            anyhow::bail!("the daemon (pid {pid}) was asked to stop but still runs after 10 s");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    writeln!(std::io::stdout(), "stopped the daemon (pid {pid})")?;
    Ok(crate::EXIT_OK)
}
