//! `mend merge` (git merge-file's interface) and `mend diff`.

use std::io::Write as _;
use std::path::PathBuf;

use mend_merge::{Adjacent, Style};
use mend_service::choice::parser;
use mend_service::merge::MergeRequest;

/// `mend merge` arguments.
#[derive(clap::Args, Debug)]
pub(crate) struct MergeArgs {
    /// Print the result instead of writing it into CURRENT.
    #[arg(short = 'p', long = "stdout")]
    stdout: bool,
    /// Show the base between `|||||||` and `=======` in conflicts.
    #[arg(long, conflicts_with = "zdiff3")]
    diff3: bool,
    /// Like --diff3, with lines common to both sides moved out of conflicts.
    #[arg(long)]
    zdiff3: bool,
    /// Labels for CURRENT, BASE and OTHER (in that order; up to three).
    #[arg(short = 'L', value_name = "LABEL")]
    labels: Vec<String>,
    /// Conflict marker length; as in git, 0 or less means the default 7.
    #[arg(long, default_value_t = 7, allow_negative_numbers = true)]
    marker_size: i64,
    /// git's conflicts between changes that do not really overlap:
    /// `conflict` (as git) or `merge`, which settles edits on neighbouring
    /// lines (not in prose: Markdown, reStructuredText, README…) and a
    /// side whose change already holds the other's.
    #[arg(long, value_parser = parser::<Adjacent>(), default_value = "conflict")]
    adjacent: Adjacent,
    /// Also settle conflicts whose sides change different syntax items
    /// (functions, methods, imports, entries), following the grammar of
    /// the file's language; files without a grammar merge as without it.
    #[arg(long)]
    structured: bool,
    /// The file's path in the project, whose name picks the language for
    /// --structured and tells prose from code for --adjacent=merge (git's
    /// merge driver passes it as %P, with CURRENT a temporary file); by
    /// default CURRENT's.
    #[arg(long, value_name = "PATH")]
    path: Option<PathBuf>,
    /// Print the merge regions as JSON (and still write CURRENT unless -p).
    #[arg(long)]
    json: bool,
    /// Our version; receives the result.
    current: PathBuf,
    /// The common ancestor.
    base: PathBuf,
    /// Their version.
    other: PathBuf,
}

/// `mend diff` arguments.
#[derive(clap::Args, Debug)]
pub(crate) struct DiffArgs {
    /// Print the hunks as JSON.
    #[arg(long)]
    json: bool,
    /// The path to name in the headers (`a/PATH`, `b/PATH`); by default
    /// OLD's, so that `git apply` turns OLD into NEW.
    #[arg(long)]
    path: Option<String>,
    /// The old file.
    old: PathBuf,
    /// The new file.
    new: PathBuf,
}

/// Runs `mend merge`; the exit code is the number of conflicts (at most 127).
pub(crate) fn run_merge(args: &MergeArgs) -> anyhow::Result<u8> {
    let style = if args.diff3 {
        Style::Diff3
    } else if args.zdiff3 {
        Style::Zdiff3
    } else {
        Style::Merge
    };
    let m = mend_service::merge::merge(&MergeRequest {
        current: &args.current,
        base: &args.base,
        other: &args.other,
        style,
        adjacent: args.adjacent,
        structured: args.structured,
        path: args.path.as_deref(),
        labels: &args.labels,
        marker_size: args.marker_size,
    })?;
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", mend_service::to_json(&m)?)?;
    } else if args.stdout {
        out.write_all(&m.bytes)?;
    }
    if !args.stdout {
        mend_workspace::replace_file(&args.current, &m.bytes)?;
    }
    Ok(m.conflicts.min(127) as u8)
}

/// Runs `mend diff`: a unified diff that `git apply` applies to OLD's path
/// to turn OLD into NEW; exit 0 when the files are equal, 1 when they differ
/// (as `diff`).
pub(crate) fn run_diff(args: &DiffArgs) -> anyhow::Result<u8> {
    let d = mend_service::merge::diff(&args.old, &args.new, args.path.as_deref())?;
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", mend_service::to_json(&d)?)?;
    } else {
        out.write_all(d.diff.as_bytes())?;
    }
    Ok(u8::from(d.differ))
}
