//! `mend checkpoint …` and the checkpoint/stage wiring of `mend apply`.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use mend_checkpoint::{Checkpoint, Checkpoints, CreateOptions};

/// `mend checkpoint` subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum CheckpointCommand {
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
pub struct CheckpointArgs {
    /// Worktree root.
    #[arg(long, default_value = ".", global = true)]
    root: PathBuf,
    /// Print JSON.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: CheckpointCommand,
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

/// Creates a checkpoint, with a progress bar on stderr once it has taken
/// more than a second. `held` is the workspace lock when the caller holds
/// it already.
pub fn create_with_progress(
    cps: &Checkpoints,
    opts: &CreateOptions,
    held: Option<&mend_workspace::Lock>,
) -> anyhow::Result<Checkpoint> {
    let start = Instant::now();
    let mut bar: Option<indicatif::ProgressBar> = None;
    let mut progress = |n: usize| {
        if bar.is_none() && start.elapsed() > Duration::from_secs(1) {
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
            bar = Some(b);
        }
        if let Some(b) = &bar {
            b.set_position(n as u64);
        }
    };
    let cp = match held {
        Some(lock) => cps.create_locked(lock, opts, &mut progress)?,
        None => cps.create(opts, &mut progress)?,
    };
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(cp)
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

/// Runs `mend checkpoint …`.
pub fn run(args: &CheckpointArgs) -> anyhow::Result<u8> {
    let cps = Checkpoints::open(&args.root)
        .with_context(|| format!("cannot open checkpoints of {}", args.root.display()))?;
    let mut out = std::io::stdout().lock();
    let json = |out: &mut dyn std::io::Write, v: &dyn erased::Json| -> anyhow::Result<()> {
        writeln!(out, "{}", v.to_json()?)?;
        Ok(())
    };
    match &args.command {
        CheckpointCommand::Create {
            label,
            anchor,
            max_file_bytes,
        } => {
            let cp = create_with_progress(
                &cps,
                &CreateOptions {
                    label: label.clone(),
                    anchor: anchor.clone(),
                    max_file_bytes: *max_file_bytes,
                },
                None,
            )?;
            if args.json {
                json(&mut out, &cp)?;
            } else {
                writeln!(out, "created {}", line(&cp))?;
                for s in &cp.skipped {
                    writeln!(out, "  skipped {} ({})", esc(&s.path), s.reason)?;
                }
            }
        }
        CheckpointCommand::List => {
            let all = cps.list()?;
            if args.json {
                json(&mut out, &all)?;
            } else {
                for c in &all {
                    writeln!(out, "{}", line(c))?;
                }
            }
        }
        CheckpointCommand::Show { id } => {
            let changes = cps.show(id)?;
            if args.json {
                json(&mut out, &changes)?;
            } else {
                for c in &changes {
                    writeln!(out, "{} {}", c.status, esc(&c.path))?;
                }
            }
        }
        CheckpointCommand::Diff { id } => {
            let diff = cps.diff(id)?;
            if args.json {
                json(&mut out, &serde_json::json!({ "diff": diff }))?;
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
            let r = cps.restore_with(id, &opts)?;
            if args.json {
                json(&mut out, &r)?;
            } else {
                if let Some(s) = &r.safety {
                    writeln!(out, "safety checkpoint {} (restore it to undo this)", s.id)?;
                }
                for c in &r.changes {
                    writeln!(out, "{} {}", c.status, esc(&c.path))?;
                }
                for p in &r.aside {
                    let verb = if *dry_run { "would copy" } else { "copied" };
                    writeln!(out, "{verb} aside: {}", esc(p))?;
                }
                for p in &r.pruned {
                    writeln!(out, "pruned {}", line(p))?;
                }
                let verb = if *dry_run {
                    "would restore"
                } else {
                    "restored"
                };
                writeln!(
                    out,
                    "{verb} {} ({} file(s))",
                    r.checkpoint.id,
                    r.changes.len()
                )?;
            }
        }
        CheckpointCommand::Drop { id } => {
            let c = cps.drop(id)?;
            if args.json {
                json(&mut out, &c)?;
            } else {
                writeln!(out, "dropped {}", line(&c))?;
            }
        }
        CheckpointCommand::Gc { keep, older_than } => {
            if keep.is_none() && older_than.is_none() {
                anyhow::bail!("gc needs --keep N or --older-than DURATION");
            }
            let dropped = cps.gc(*keep, *older_than)?;
            if args.json {
                json(&mut out, &dropped)?;
            } else {
                for c in &dropped {
                    writeln!(out, "dropped {}", line(c))?;
                }
            }
        }
    }
    Ok(0)
}

/// Adds paths to the user's git index (`mend apply --stage`).
pub fn stage(root: &Path, added_or_modified: &[String], deleted: &[String]) -> anyhow::Result<()> {
    let repo =
        git2::Repository::open(root).context("--stage needs the root to be a git repository")?;
    let mut index = repo.index()?;
    for p in added_or_modified {
        index.add_path(Path::new(p))?;
    }
    for p in deleted {
        index.remove_path(Path::new(p))?;
    }
    index.write()?;
    Ok(())
}

mod erased {
    /// Serializes any report as pretty JSON.
    pub trait Json {
        fn to_json(&self) -> serde_json::Result<String>;
    }
    impl<T: serde::Serialize + ?Sized> Json for T {
        fn to_json(&self) -> serde_json::Result<String> {
            serde_json::to_string_pretty(self)
        }
    }
}

/// A path or label from the worktree, safe to print to a terminal.
fn esc(s: &str) -> std::borrow::Cow<'_, str> {
    mend_core::text::escape_controls(s)
}
