//! `mend checkpoint …`, and the progress bar of a checkpoint's snapshot.

use std::cell::RefCell;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use mend_checkpoint::{Checkpoint, Checkpoints, CreateOptions};

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
        self.root
            .clone()
            .unwrap_or_else(crate::daemon::default_root)
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

/// A progress bar on standard error for a checkpoint's snapshot, shown
/// once it has taken more than a second.
pub(crate) struct Progress {
    start: Instant,
    bar: RefCell<Option<indicatif::ProgressBar>>,
}

impl Default for Progress {
    fn default() -> Self {
        Progress {
            start: Instant::now(),
            bar: RefCell::new(None),
        }
    }
}

impl Progress {
    /// `n` files examined so far.
    pub(crate) fn tick(&self, n: usize) {
        let mut bar = self.bar.borrow_mut();
        if bar.is_none() && self.start.elapsed() > Duration::from_secs(1) {
            let b = indicatif::ProgressBar::with_draw_target(
                None,
                indicatif::ProgressDrawTarget::stderr(),
            );
            b.set_style(
                indicatif::ProgressStyle::with_template(
                    "{spinner} checkpoint: {pos} files examined",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
            );
            *bar = Some(b);
        }
        if let Some(b) = bar.as_ref() {
            b.set_position(n as u64);
        }
    }

    /// The snapshot is done.
    pub(crate) fn clear(&self) {
        if let Some(b) = self.bar.borrow_mut().take() {
            b.finish_and_clear();
        }
    }
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

/// The root's checkpoints, with what `create`'s flags allow a first
/// checkpoint to cover.
fn open(args: &CheckpointArgs) -> anyhow::Result<Checkpoints> {
    let opts = match &args.command {
        CheckpointCommand::Create {
            force, max_files, ..
        } => mend_checkpoint::OpenOptions {
            force: *force,
            max_files: *max_files,
        },
        _ => mend_checkpoint::OpenOptions::default(),
    };
    let mut cps = open_at(&args.root(), &opts)?;
    cps.set_lock_timeout(args.lock_timeout())?;
    Ok(cps)
}

fn open_at(root: &Path, opts: &mend_checkpoint::OpenOptions) -> anyhow::Result<Checkpoints> {
    Checkpoints::open_with(root, opts)
        .with_context(|| format!("cannot open checkpoints of {}", root.display()))
}

/// `create` with the default open options (which a daemon's checkpoints
/// were opened with): its options, and `--verbose`.
fn plain_create(command: &CheckpointCommand) -> Option<(CreateOptions, bool)> {
    let CheckpointCommand::Create {
        label,
        anchor,
        max_file_bytes,
        force: false,
        max_files: mend_checkpoint::DEFAULT_MAX_FILES,
        verbose,
    } = command
    else {
        return None;
    };
    let opts = CreateOptions {
        label: label.clone(),
        anchor: anchor.clone(),
        max_file_bytes: *max_file_bytes,
    };
    Some((opts, *verbose))
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
    if let Some((opts, verbose)) = plain_create(&args.command) {
        return create_asking(args, &opts, verbose);
    }
    let cps = open(args)?;
    let mut out = std::io::stdout().lock();
    let out = &mut out;
    match &args.command {
        CheckpointCommand::Create {
            label,
            anchor,
            max_file_bytes,
            ..
        } => {
            let opts = CreateOptions {
                label: label.clone(),
                anchor: anchor.clone(),
                max_file_bytes: *max_file_bytes,
            };
            create(out, &cps, &opts, args.json, None)?;
        }
        CheckpointCommand::List => {
            let all = mend_service::checkpoint::list(&cps)?.checkpoints;
            each(out, args.json, &all, line)?;
        }
        CheckpointCommand::Show { id } => each(out, args.json, &cps.show(id)?, |c| {
            format!("{} {}", c.status, esc(&c.path))
        })?,
        CheckpointCommand::Diff { id } => {
            let diff = cps.diff(id)?;
            if args.json {
                json(out, &mend_service::checkpoint::DiffResult { diff })?;
            } else {
                write!(out, "{diff}")?;
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
            let r = mend_service::checkpoint::restore(&cps, id, &opts, false)?;
            if args.json {
                json(out, &r)?;
            } else {
                restored(out, &r, *dry_run)?;
            }
        }
        CheckpointCommand::Drop { id } => {
            let c = cps.drop(id)?;
            if args.json {
                json(out, &c)?;
            } else {
                writeln!(out, "dropped {}", line(&c))?;
            }
        }
        CheckpointCommand::Gc { keep, older_than } => {
            let dropped = mend_service::checkpoint::gc(&cps, *keep, *older_than)?;
            each(out, args.json, &dropped, |c| format!("dropped {}", line(c)))?;
        }
    }
    Ok(0)
}

/// `mend checkpoint create` with the default open options: done by a
/// daemon serving the root when one answers (its snapshot state is in
/// memory and its watcher knows what changed), else scanned in full here,
/// waiting for the lock only as long as the daemon did not.
fn create_asking(args: &CheckpointArgs, opts: &CreateOptions, verbose: bool) -> anyhow::Result<u8> {
    use crate::daemon::ByDaemon;
    let root = args.root();
    let wait = args.lock_timeout();
    let asked = crate::daemon::by_daemon(&root, verbose, wait, |client, wait, progress| {
        client.checkpoint(opts, false, wait, progress)
    });
    let (scan, wait) = match asked {
        ByDaemon::Done(made) => {
            crate::daemon::said(made.scan, verbose);
            print_created(&mut std::io::stdout().lock(), &made, args.json)?;
            return Ok(0);
        }
        ByDaemon::Refused(e) => {
            let _ = writeln!(std::io::stderr(), "mend: {}", e.message);
            if args.json {
                crate::failure::print_json(&mut std::io::stdout().lock(), e.into_failure())?;
            }
            return Ok(crate::EXIT_FAILED);
        }
        ByDaemon::Here { scan, lock_timeout } => (scan, lock_timeout),
    };
    let mut cps = open_at(&root, &mend_checkpoint::OpenOptions::default())?;
    cps.set_lock_timeout(wait)?;
    create(&mut std::io::stdout().lock(), &cps, opts, args.json, scan)?;
    Ok(0)
}

/// `mend checkpoint create`, with a progress bar; `scan` is said in its
/// JSON when a daemon could have narrowed it.
fn create(
    out: &mut impl std::io::Write,
    cps: &Checkpoints,
    opts: &CreateOptions,
    as_json: bool,
    scan: Option<mend_service::ScanKind>,
) -> anyhow::Result<()> {
    let progress = Progress::default();
    let mut made = mend_service::checkpoint::create(cps, opts, false, &mut |n| progress.tick(n))?;
    progress.clear();
    made.scan = scan;
    print_created(out, &made, as_json)
}

/// A created checkpoint, as JSON or for a person; outside git, where it
/// went is said on stderr.
fn print_created(
    out: &mut impl std::io::Write,
    made: &mend_service::checkpoint::CreateResult,
    as_json: bool,
) -> anyhow::Result<()> {
    if let Some(store) = &made.store {
        // Outside git a checkpoint still works, and says where it went.
        let root = store
            .strip_suffix("/.mend/shadow.git")
            .unwrap_or(store.as_str());
        let _ = writeln!(
            std::io::stderr(),
            "mend: {} is no git repository; its checkpoints are kept in {}",
            esc(root),
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
