//! `mend daemon`: run, ask about, or stop the daemon of a root (see
//! `docs/daemon.md`); and the one place CLI commands ask it.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mend_service::ScanKind;
use mend_service::daemon::wire::WireError;
use mend_service::daemon::{CONNECT_WAIT, Client, Daemon, Fallback, Found, SILENCE};

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
    let root = args.root.clone().unwrap_or_else(default_root);
    match args.command {
        None | Some(DaemonCommand::Run) => serve(&root),
        Some(DaemonCommand::Status) => status(&root, args.json),
        Some(DaemonCommand::Stop) => stop(&root),
    }
}

/// The root a command without `--root` acts on: the worktree holding the
/// current folder (as turns find it), else the current folder. A current
/// folder that is gone is refused when the root is opened.
pub(crate) fn default_root() -> PathBuf {
    std::env::current_dir().map_or_else(
        |_| PathBuf::from("."),
        |cwd| mend_service::turn::default_root(&cwd),
    )
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

/// What a CLI command that would scan in full found at its root.
pub(crate) enum Asked {
    /// A daemon, to do the work.
    Daemon(Client),
    /// No daemon at all: the command does exactly what it always did.
    None,
    /// A daemon, but no answer in time: a full scan, said.
    Silent,
}

/// Looks for the daemon serving `root`; with `verbose`, says on stderr
/// when there is none behind a socket, or one that does not answer.
pub(crate) fn ask(root: &Path, verbose: bool) -> Asked {
    let say = |what: &str| {
        if verbose {
            let _ = writeln!(std::io::stderr(), "mend: {what}; scanning in full");
        }
    };
    match Client::connect(root, CONNECT_WAIT) {
        Ok(Found::Serving(c)) => Asked::Daemon(c),
        Ok(Found::Absent) | Err(_) => Asked::None,
        Ok(Found::Stale) => {
            say("no daemon is running (a stopped one left its socket)");
            Asked::None
        }
        Ok(Found::Silent) => {
            say(&format!(
                "the daemon did not answer in {} ms",
                CONNECT_WAIT.as_millis()
            ));
            Asked::Silent
        }
    }
}

/// What became of work a CLI command asked a daemon for.
pub(crate) enum ByDaemon<T> {
    /// The daemon did it.
    Done(T),
    /// The daemon refused, after its wait for the lock: the command's
    /// refusal, not tried again (exit 1).
    Refused(WireError),
    /// The command does it itself: `scan` for its JSON (`full` when a
    /// daemon was there), waiting at most `lock_timeout` (what is left of
    /// its own) for the lock.
    Here {
        scan: Option<ScanKind>,
        lock_timeout: Duration,
    },
}

/// Has the daemon serving `root` do `work` (a progress bar while it
/// does), waiting at most `lock_timeout` in all for the workspace lock.
/// Says on stderr, with `verbose`, who did it and why the daemon did not;
/// a daemon gone silent at work is said always (the command waited).
pub(crate) fn by_daemon<T>(
    root: &Path,
    verbose: bool,
    lock_timeout: Duration,
    work: impl FnOnce(&mut Client, Duration, &mut dyn FnMut(usize)) -> Result<T, Fallback>,
) -> ByDaemon<T> {
    let asked = Instant::now();
    let mut client = match ask(root, verbose) {
        Asked::Daemon(c) => c,
        Asked::None => return here(None, lock_timeout, asked),
        Asked::Silent => return here(Some(ScanKind::Full), lock_timeout, asked),
    };
    let progress = crate::checkpoint::Progress::default();
    let done = work(&mut client, lock_timeout, &mut |n| progress.tick(n));
    progress.clear();
    let pid = client.status().pid;
    let why = match done {
        Ok(t) => return ByDaemon::Done(t),
        Err(Fallback::Refused(e)) => {
            if verbose {
                let _ = writeln!(
                    std::io::stderr(),
                    "mend: the daemon (pid {pid}) refused; its refusal is this command's, not tried again"
                );
            }
            return ByDaemon::Refused(e);
        }
        Err(Fallback::Hung) => {
            let _ = writeln!(
                std::io::stderr(),
                "mend: the daemon (pid {pid}) sent nothing for {} s; scanning in full here (`mend daemon stop` stops it)",
                SILENCE.as_secs()
            );
            return here(Some(ScanKind::Full), lock_timeout, asked);
        }
        Err(Fallback::Lost(why)) => why,
    };
    if verbose {
        let _ = writeln!(
            std::io::stderr(),
            "mend: the daemon (pid {pid}) did not do the work: {why}; scanning in full"
        );
    }
    here(Some(ScanKind::Full), lock_timeout, asked)
}

/// Work done here, with what is left of the lock wait.
fn here<T>(scan: Option<ScanKind>, lock_timeout: Duration, asked: Instant) -> ByDaemon<T> {
    ByDaemon::Here {
        scan,
        lock_timeout: lock_timeout.saturating_sub(asked.elapsed()),
    }
}

/// Says, with `verbose`, how a daemon's snapshot looked at the worktree.
pub(crate) fn said(scan: Option<ScanKind>, verbose: bool) {
    if verbose {
        let how = match scan {
            Some(ScanKind::Narrowed) => "only the paths its watcher saw change",
            _ => "every file",
        };
        let _ = writeln!(std::io::stderr(), "mend: the daemon examined {how}");
    }
}
