//! `mend checkpoint …`, and the progress bar of a checkpoint's snapshot.

use std::io::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use mend_checkpoint::{Checkpoint, CreateOptions};
use mend_service::checkpoint;
use mend_service::{Call, Watched};

use crate::progress::Progress;

/// `mend checkpoint` subcommands.
#[derive(clap::Subcommand, Debug)]
pub(crate) enum CheckpointCommand {
    /// Snapshot tracked and untracked (not ignored) files.
    Create {
        /// A label for humans.
        #[arg(long)]
        label: Option<String>,
        /// An anchor for clients, such as the chat message it precedes.
        #[arg(long)]
        anchor: Option<String>,
        /// Skip (and list) files larger than this many bytes.
        #[arg(long, default_value_t = mend_checkpoint::DEFAULT_MAX_FILE_BYTES)]
        max_file_bytes: u64,
        /// Checkpoint the root even when it is a home directory or the root
        /// of a filesystem (refused otherwise until it has a checkpoint).
        #[arg(long)]
        force: bool,
        /// Refuse the root's first checkpoint once it would hold more files
        /// than this.
        #[arg(long, default_value_t = mend_checkpoint::DEFAULT_MAX_FILES)]
        max_files: usize,
        /// Say on stderr whether a `mend daemon` did the snapshot, and how.
        #[arg(long)]
        verbose: bool,
    },
    /// List checkpoints, newest first.
    List,
    /// The files a checkpoint changed compared with the previous one.
    Show {
        /// Checkpoint id (or a unique prefix).
        id: String,
    },
    /// A unified diff from a checkpoint to the worktree now.
    Diff {
        /// Checkpoint id (or a unique prefix).
        id: String,
    },
    /// Restore the worktree to a checkpoint, after checkpointing it first.
    Restore {
        /// Checkpoint id (or a unique prefix).
        id: String,
        /// Print the changes and stop.
        #[arg(long)]
        dry_run: bool,
        /// Drop the checkpoints newer than the restored one (not the safety
        /// checkpoint), printing their ids and anchors.
        #[arg(long)]
        prune_later: bool,
        /// Copy files whose current content is in no checkpoint (ignored,
        /// or too large to snapshot) into .mend/aside/ and go on, instead
        /// of refusing.
        #[arg(long)]
        force: bool,
    },
    /// Delete a checkpoint.
    Drop {
        /// Checkpoint id (or a unique prefix).
        id: String,
    },
    /// Delete old checkpoints.
    Gc {
        /// Keep the newest N.
        #[arg(long)]
        keep: Option<usize>,
        /// Drop those older than this (`30m`, `12h`, `7d`).
        #[arg(long, value_parser = parse_duration)]
        older_than: Option<Duration>,
    },
}

/// `mend checkpoint` arguments.
#[derive(clap::Args, Debug)]
pub(crate) struct CheckpointArgs {
    /// Worktree root [default: the git worktree holding the current
    /// folder, else the current folder].
    #[arg(long, global = true)]
    root: Option<PathBuf>,
    /// Print JSON.
    #[arg(long, global = true)]
    json: bool,
    /// Seconds to wait for another mend process writing in the root
    /// [default: 30].
    #[arg(long, global = true)]
    lock_timeout: Option<u64>,
    #[command(subcommand)]
    command: CheckpointCommand,
}

impl CheckpointArgs {
    /// The root: `--root`, else the worktree holding the current folder
    /// (as turns find it), else the current folder.
    fn root(&self) -> PathBuf {
        mend_service::root(self.root.as_deref())
    }

    /// How long to wait for the root's lock: `--lock-timeout`, else the
    /// workspace's default.
    fn lock_timeout(&self) -> Duration {
        Duration::from_secs(
            self.lock_timeout
                .unwrap_or(mend_workspace::DEFAULT_LOCK_TIMEOUT_SECS),
        )
    }
}

fn parse_duration(s: &str) -> Result<Duration, String> {
    let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: u64 = num
        .parse()
        .map_err(|_| format!("`{s}`: expected a number and a unit, like 7d"))?;
    let unit_secs: u64 = match unit {
        "s" | "" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86400,
        "w" => 7 * 86400,
        _ => return Err(format!("`{s}`: units are s, m, h, d, w")),
    };
    n.checked_mul(unit_secs)
        .map(Duration::from_secs)
        .ok_or_else(|| format!("`{s}` is longer than mend can count; give a shorter age"))
}

fn line(c: &Checkpoint) -> String {
    let mut s = format!("{}  {}", c.id, c.time);
    if let Some(l) = &c.label {
        s.push_str(&format!("  {}", esc(l)));
    }
    if let Some(a) = &c.anchor {
        s.push_str(&format!("  [anchor {}]", esc(a)));
    }
    s
}

/// Prints an outcome's JSON.
fn json(out: &mut impl std::io::Write, v: &impl serde::Serialize) -> anyhow::Result<()> {
    writeln!(out, "{}", mend_service::to_json(v)?)?;
    Ok(())
}

/// A list as its JSON, or one line per item.
fn each<T: serde::Serialize>(
    out: &mut impl std::io::Write,
    as_json: bool,
    items: &[T],
    line: impl Fn(&T) -> String,
) -> anyhow::Result<()> {
    if as_json {
        return json(out, &items);
    }
    for item in items {
        writeln!(out, "{}", line(item))?;
    }
    Ok(())
}

/// The options of a first checkpoint `create`'s flags allow.
fn open_options(command: &CheckpointCommand) -> mend_checkpoint::OpenOptions {
    match command {
        CheckpointCommand::Create {
            force, max_files, ..
        } => mend_checkpoint::OpenOptions {
            force: *force,
            max_files: *max_files,
        },
        _ => mend_checkpoint::OpenOptions::default(),
    }
}

/// Runs `mend checkpoint …`. A refusal (a home directory or filesystem
/// root, too many files for a first checkpoint) exits 1, as refusals do
/// everywhere; nothing was written. With --json, a refusal is also its
/// JSON document, `{"error": Failure}` (an error's is printed by `main`).
pub(crate) fn run(args: &CheckpointArgs) -> anyhow::Result<u8> {
    let e = match run_command(args) {
        Err(e) => e,
        done => return done,
    };
    let classified = crate::failure::classify(&e);
    // An error's JSON is printed where every command's is.
    if !classified.refusal {
        return Err(e);
    }
    if args.json {
        crate::failure::print_json(&mut std::io::stdout().lock(), classified.failure)?;
    }
    let _ = writeln!(std::io::stderr(), "mend: {e:#}");
    Ok(crate::EXIT_FAILED)
}

fn run_command(args: &CheckpointArgs) -> anyhow::Result<u8> {
    let watched = Watched::once(&args.root());
    let call = Call::new(None, Some(args.lock_timeout()));
    let mut out = std::io::stdout().lock();
    let out = &mut out;
    match &args.command {
        CheckpointCommand::Create { .. } => create(out, &watched, args)?,
        CheckpointCommand::List => {
            let all = watched.checkpoints(&call, checkpoint::list)?.checkpoints;
            each(out, args.json, &all, line)?;
        }
        CheckpointCommand::Show { id } => {
            let changes = watched.checkpoints(&call, |c| checkpoint::show(c, id))?;
            each(out, args.json, &changes, |c| {
                format!("{} {}", c.status, esc(&c.path))
            })?;
        }
        CheckpointCommand::Diff { id } => {
            let diff = watched.checkpoints(&call, |c| checkpoint::diff(c, id))?;
            if args.json {
                json(out, &diff)?;
            } else {
                write!(out, "{}", diff.diff)?;
            }
        }
        CheckpointCommand::Restore {
            id,
            dry_run,
            prune_later,
            force,
        } => {
            let opts = mend_checkpoint::RestoreOptions {
                dry_run: *dry_run,
                prune_later: *prune_later,
                force: *force,
            };
            let r = watched.restore(&call, id, &opts, false)?;
            if args.json {
                json(out, &r)?;
            } else {
                restored(out, &r, *dry_run)?;
            }
        }
        CheckpointCommand::Drop { id } => {
            let c = watched.checkpoints(&call, |c| checkpoint::drop(c, id))?;
            if args.json {
                json(out, &c)?;
            } else {
                writeln!(out, "dropped {}", line(&c))?;
            }
        }
        CheckpointCommand::Gc { keep, older_than } => {
            let dropped = watched.checkpoints(&call, |c| checkpoint::gc(c, *keep, *older_than))?;
            each(out, args.json, &dropped, |c| format!("dropped {}", line(c)))?;
        }
    }
    Ok(0)
}

/// `mend checkpoint create`, with a progress bar: taken by a daemon
/// serving the root when one answers and the flags allow no more than
/// its checkpoints do, else scanned in full here.
fn create(
    out: &mut impl std::io::Write,
    watched: &Watched,
    args: &CheckpointArgs,
) -> anyhow::Result<()> {
    let CheckpointCommand::Create {
        label,
        anchor,
        max_file_bytes,
        verbose,
        ..
    } = &args.command
    else {
        return Ok(());
    };
    let opts = CreateOptions {
        label: label.clone(),
        anchor: anchor.clone(),
        max_file_bytes: *max_file_bytes,
    };
    let progress = Progress::default();
    let mut call = Call::new(None, Some(args.lock_timeout()))
        .progress(|n| progress.tick(n))
        .notes(crate::progress::note(*verbose));
    let made = watched.create(&mut call, &opts, &open_options(&args.command), false);
    drop(call);
    progress.clear();
    print_created(out, &made?, args.json)
}

/// A created checkpoint, as JSON or for a person; outside git, where it
/// went is said on stderr.
fn print_created(
    out: &mut impl std::io::Write,
    made: &mend_service::checkpoint::CreateResult,
    as_json: bool,
) -> anyhow::Result<()> {
    if let Some(store) = &made.store {
        // Outside git a checkpoint still works, and says where it went:
        // in the root's `.mend`, two levels above the store.
        let root = std::path::Path::new(store)
            .parent()
            .and_then(std::path::Path::parent)
            .map_or(store.clone(), |r| r.to_string_lossy().into_owned());
        let _ = writeln!(
            std::io::stderr(),
            "mend: {} is no git repository; its checkpoints are kept in {}",
            esc(&root),
            esc(store)
        );
    }
    if as_json {
        return json(out, made);
    }
    if let Some(cp) = &made.checkpoint {
        writeln!(out, "created {}", line(cp))?;
        for s in &cp.skipped {
            writeln!(out, "  skipped {} ({})", esc(&s.path), s.reason)?;
        }
    }
    Ok(())
}

/// What a restore did, for a person.
fn restored(
    out: &mut impl std::io::Write,
    r: &mend_checkpoint::Restored,
    dry_run: bool,
) -> anyhow::Result<()> {
    if let Some(s) = &r.safety {
        writeln!(out, "safety checkpoint {} (restore it to undo this)", s.id)?;
    }
    for c in &r.changes {
        writeln!(out, "{} {}", c.status, esc(&c.path))?;
    }
    let (copy, restore) = if dry_run {
        ("would copy", "would restore")
    } else {
        ("copied", "restored")
    };
    for p in &r.aside {
        writeln!(out, "{copy} aside: {}", esc(p))?;
    }
    for p in &r.pruned {
        writeln!(out, "pruned {}", line(p))?;
    }
    for l in &r.left {
        writeln!(out, "left as it is: {}: {}", esc(&l.path), l.reason)?;
    }
    writeln!(
        out,
        "{restore} {} ({} file(s))",
        r.checkpoint.id,
        r.changes.len()
    )?;
    Ok(())
}

/// A path or label from the worktree, safe to print to a terminal.
fn esc(s: &str) -> std::borrow::Cow<'_, str> {
    mend_core::text::escape_controls(s)
}
