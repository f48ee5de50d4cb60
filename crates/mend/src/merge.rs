//! `mend merge` (git merge-file's interface) and `mend diff`.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use mend_merge::{Adjacent, Labels, Options, Style, merge};
use serde::Serialize;

/// `mend merge` arguments.
#[derive(clap::Args, Debug)]
pub struct MergeArgs {
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
    #[arg(long, value_enum, default_value_t = AdjacentArg::Conflict)]
    adjacent: AdjacentArg,
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

#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
enum AdjacentArg {
    Conflict,
    Merge,
}

/// `mend diff` arguments.
#[derive(clap::Args, Debug)]
pub struct DiffArgs {
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

fn read_text(path: &Path) -> anyhow::Result<Vec<u8>> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    if bytes.iter().take(8000).any(|&b| b == 0) {
        anyhow::bail!("Cannot merge binary files: {}", path.display());
    }
    Ok(bytes)
}

#[derive(Serialize)]
struct JsonMerge<'a> {
    conflicts: usize,
    /// Line ranges are 0-based and end-exclusive.
    regions: &'a [mend_merge::Region],
    merged: Option<String>,
}

/// The longest conflict marker `--marker-size` may ask for: longer ones
/// would cost memory for nothing (git's own limit is its `int`).
const MAX_MARKER_SIZE: i64 = 4096;

/// `--marker-size` as git reads it: 0 or less is the default, 7.
fn marker_size(n: i64) -> anyhow::Result<usize> {
    if n > MAX_MARKER_SIZE {
        anyhow::bail!("--marker-size {n} is too long: at most {MAX_MARKER_SIZE}");
    }
    Ok(if n <= 0 { 7 } else { n as usize })
}

/// Runs `mend merge`; the exit code is the number of conflicts (at most 127).
pub fn run_merge(args: &MergeArgs) -> anyhow::Result<u8> {
    if args.labels.len() > 3 {
        anyhow::bail!("at most three -L labels: CURRENT, BASE, OTHER");
    }
    let current = read_text(&args.current)?;
    let base = read_text(&args.base)?;
    let other = read_text(&args.other)?;
    let style = if args.diff3 {
        Style::Diff3
    } else if args.zdiff3 {
        Style::Zdiff3
    } else {
        Style::Merge
    };
    let adjacent = match args.adjacent {
        AdjacentArg::Conflict => Adjacent::Conflict,
        AdjacentArg::Merge => Adjacent::Merge,
    };
    let named = args
        .path
        .as_ref()
        .unwrap_or(&args.current)
        .to_string_lossy();
    let structured = if args.structured {
        mend_merge::language_for(&named)
    } else {
        None
    };
    let m = merge(
        &base,
        &current,
        &other,
        &Options {
            style,
            adjacent,
            structured,
            prose: mend_merge::is_prose(&named),
        },
    );
    // As git: a missing label is the file name as given.
    let label = |k: usize, p: &Path| {
        Some(
            args.labels
                .get(k)
                .cloned()
                .unwrap_or_else(|| p.to_string_lossy().into_owned()),
        )
    };
    let labels = Labels {
        ours: label(0, &args.current),
        base: label(1, &args.base),
        theirs: label(2, &args.other),
    };
    let result = m.render(&labels, style, marker_size(args.marker_size)?);
    let mut out = std::io::stdout().lock();
    if args.json {
        let v = JsonMerge {
            conflicts: m.conflicts(),
            regions: m.regions(),
            merged: String::from_utf8(result.clone()).ok(),
        };
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
    } else if args.stdout {
        out.write_all(&result)?;
    }
    if !args.stdout {
        mend_workspace::replace_file(&args.current, &result)?;
    }
    Ok(m.conflicts().min(127) as u8)
}

/// Runs `mend diff`: a unified diff that `git apply` applies to OLD's path
/// to turn OLD into NEW; exit 0 when the files are equal, 1 when they differ
/// (as `diff`).
pub fn run_diff(args: &DiffArgs) -> anyhow::Result<u8> {
    let text = |p: &Path| -> anyhow::Result<String> {
        let bytes = read_text(p)?;
        String::from_utf8(bytes).map_err(|_| anyhow::anyhow!("{} is not UTF-8 text", p.display()))
    };
    let (old, new) = (text(&args.old)?, text(&args.new)?);
    let name = args.path.clone().unwrap_or_else(|| {
        args.old
            .to_string_lossy()
            .trim_start_matches("./")
            .to_owned()
    });
    let diff = mend_core::diff::unified(Some(&name), Some(&name), &old, &new);
    let mut out = std::io::stdout().lock();
    if args.json {
        let hunks = mend_core::diff::hunks(&old, &new);
        let v = serde_json::json!({ "path": name, "hunks": hunks, "diff": diff });
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
    } else {
        out.write_all(diff.as_bytes())?;
    }
    Ok(u8::from(old != new))
}
