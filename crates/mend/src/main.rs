//! The `mend` command line.
//!
//! This binary is the only place that knows about argument parsing,
//! terminals and exit codes; the engine lives in `mend-core`.

mod apply;
mod workspace;

use std::io::{IsTerminal, Read, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Parser, Subcommand, ValueEnum};
use mend_core::formats::Format;

use crate::apply::{ApplyError, ApplyOptions};
use crate::workspace::Workspace;

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
    /// Exit status: 0 when every edit applied, 1 when any edit failed (then
    /// nothing is written), 2 for a usage error or unreadable input.
    Apply(ApplyArgs),
}

#[derive(clap::Args, Debug)]
struct ApplyArgs {
    /// Workspace root; every path in the edits is relative to it.
    #[arg(long, default_value = ".")]
    root: PathBuf,
    /// Edit format of the input.
    #[arg(long, value_enum, default_value_t = FormatArg::Auto)]
    format: FormatArg,
    /// Print the unified diff that would be written, and write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Print the report as JSON (schema: mend_core::report).
    #[arg(long)]
    json: bool,
    /// The model's response; `-` or nothing reads standard input.
    input: Option<PathBuf>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum FormatArg {
    /// Detect the format from the input.
    Auto,
    /// SEARCH/REPLACE blocks (aider, Roo Code, Cline).
    SearchReplace,
    /// old_string/new_string JSON.
    StrReplace,
    /// modify_file/write_file JSON (anchored regions).
    Anchored,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Self {
        match f {
            FormatArg::Auto => Format::Auto,
            FormatArg::SearchReplace => Format::SearchReplace,
            FormatArg::StrReplace => Format::StrReplace,
            FormatArg::Anchored => Format::Anchored,
        }
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_USAGE } else { EXIT_OK };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match cli.command {
        Command::Apply(args) => match run_apply(&args) {
            Ok(code) => ExitCode::from(code),
            Err(e) => {
                eprintln_safe(&format!("mend: {e:#}"));
                ExitCode::from(EXIT_USAGE)
            }
        },
    }
}

fn eprintln_safe(msg: &str) {
    let _ = writeln!(std::io::stderr(), "{msg}");
}

fn read_input(input: Option<&PathBuf>) -> anyhow::Result<String> {
    let bytes = match input {
        Some(p) if p.as_os_str() != "-" => {
            std::fs::read(p).with_context(|| format!("cannot read input {}", p.display()))?
        }
        _ => {
            let stdin = std::io::stdin();
            if stdin.is_terminal() {
                anyhow::bail!(
                    "no input: pass a file with the model's response, or pipe it to standard input"
                );
            }
            let mut buf = Vec::new();
            stdin
                .lock()
                .read_to_end(&mut buf)
                .context("cannot read standard input")?;
            buf
        }
    };
    String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "the input is not valid UTF-8 (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

fn run_apply(args: &ApplyArgs) -> anyhow::Result<u8> {
    let input = read_input(args.input.as_ref())?;
    let ws = Workspace::open(&args.root)
        .with_context(|| format!("cannot open root {}", args.root.display()))?;
    let opts = ApplyOptions {
        format: args.format.into(),
        dry_run: args.dry_run,
    };
    let mut out = std::io::stdout().lock();
    let outcome = match apply::run(&ws, &input, &opts) {
        Ok(o) => o,
        Err(ApplyError::Parse(e)) => {
            if args.json {
                let v = serde_json::json!({
                    "ok": false,
                    "written": false,
                    "error": e.to_string(),
                    "no_edits": matches!(e, mend_core::Error::NoEdits),
                });
                writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
            } else {
                writeln!(out, "mend: {e}")?;
            }
            return Ok(EXIT_FAILED);
        }
        Err(ApplyError::Write(e)) => {
            return Err(anyhow::Error::new(e).context("writing the planned files failed"));
        }
    };
    let report = &outcome.report;
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(report)?)?;
    } else {
        for e in &report.edits {
            writeln!(out, "{}", e.summary())?;
        }
        if args.dry_run && report.ok {
            for f in &report.files {
                write!(out, "{}", f.diff)?;
            }
        }
        if let Some(ctx) = &report.retry_context {
            writeln!(out)?;
            write!(out, "{ctx}")?;
        }
        let verb = if report.written {
            "written"
        } else if report.dry_run && report.ok {
            "dry run, nothing written"
        } else if report.ok {
            "nothing to write"
        } else {
            "nothing written"
        };
        writeln!(
            out,
            "{} of {} edits applied, {} file(s) changed ({verb})",
            report.applied,
            report.requested,
            report.files.len()
        )?;
    }
    Ok(if report.ok { EXIT_OK } else { EXIT_FAILED })
}
