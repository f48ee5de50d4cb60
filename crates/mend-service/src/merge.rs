//! `mend merge` (git merge-file's interface) and `mend diff`, on files
//! named on the command line.

use std::path::Path;

use mend_merge::{Adjacent, Labels, Options, Region, Style};
use serde::Serialize;

use crate::Error;

/// A three-way merge of files.
#[derive(Debug, Clone)]
pub struct MergeRequest<'a> {
    /// Our version.
    pub current: &'a Path,
    /// The common ancestor.
    pub base: &'a Path,
    /// Their version.
    pub other: &'a Path,
    /// Conflict style.
    pub style: Style,
    /// git's conflicts between changes that do not really overlap.
    pub adjacent: Adjacent,
    /// Settle conflicts between different syntax items.
    pub structured: bool,
    /// The file's path in the project (its name picks the language and
    /// tells prose from code); by default `current`'s.
    pub path: Option<&'a Path>,
    /// Labels of current, base and other (a missing one is the file name
    /// as given); at most three.
    pub labels: &'a [String],
    /// Conflict marker length as git reads it: 0 or less is 7.
    pub marker_size: i64,
}

/// A merge's outcome: `mend merge --json`.
#[derive(Debug, Clone, Serialize)]
pub struct Merged {
    /// How many conflicts are left.
    pub conflicts: usize,
    /// The merge regions; line ranges are 0-based and end-exclusive.
    pub regions: Vec<Region>,
    /// The result, when it is UTF-8.
    pub merged: Option<String>,
    /// The result's bytes.
    #[serde(skip)]
    pub bytes: Vec<u8>,
}

/// The longest conflict marker `--marker-size` may ask for: longer ones
/// would cost memory for nothing (git's own limit is its `int`).
const MAX_MARKER_SIZE: i64 = 4096;

/// `--marker-size` as git reads it: 0 or less is the default, 7.
fn marker_size(n: i64) -> Result<usize, Error> {
    if n > MAX_MARKER_SIZE {
        return Err(Error::Usage(format!(
            "--marker-size {n} is too long: at most {MAX_MARKER_SIZE}"
        )));
    }
    Ok(usize::try_from(n).ok().filter(|&n| n > 0).unwrap_or(7))
}

/// A file's bytes, refused when they look binary (a NUL in the first
/// 8,000 bytes, as git decides).
fn read_text(path: &Path) -> Result<Vec<u8>, Error> {
    let bytes = std::fs::read(path).map_err(|source| Error::Io {
        what: format!("cannot read {}", path.display()),
        source,
    })?;
    if bytes.iter().take(8000).any(|&b| b == 0) {
        return Err(Error::Usage(format!(
            "Cannot merge binary files: {}",
            path.display()
        )));
    }
    Ok(bytes)
}

/// Merges three files as `git merge-file` does, then runs the resolvers
/// the request turns on.
pub fn merge(req: &MergeRequest<'_>) -> Result<Merged, Error> {
    if req.labels.len() > 3 {
        return Err(Error::Usage(
            "at most three -L labels: CURRENT, BASE, OTHER".into(),
        ));
    }
    let current = read_text(req.current)?;
    let base = read_text(req.base)?;
    let other = read_text(req.other)?;
    let named = req.path.unwrap_or(req.current).to_string_lossy();
    let structured = if req.structured {
        mend_merge::language_for(&named)
    } else {
        None
    };
    let opts = Options {
        style: req.style,
        adjacent: req.adjacent,
        structured,
        prose: mend_merge::is_prose(&named),
    };
    let m = mend_merge::merge(&base, &current, &other, &opts);
    // As git: a missing label is the file name as given.
    let label = |k: usize, p: &Path| {
        Some(
            req.labels
                .get(k)
                .cloned()
                .unwrap_or_else(|| p.to_string_lossy().into_owned()),
        )
    };
    let labels = Labels {
        ours: label(0, req.current),
        base: label(1, req.base),
        theirs: label(2, req.other),
    };
    let bytes = m.render(&labels, req.style, marker_size(req.marker_size)?);
    Ok(Merged {
        conflicts: m.conflicts(),
        regions: m.regions().to_vec(),
        merged: String::from_utf8(bytes.clone()).ok(),
        bytes,
    })
}

/// A diff's outcome: `mend diff --json`.
#[derive(Debug, Clone, Serialize)]
pub struct Diffed {
    /// The path in the headers.
    pub path: String,
    /// The hunks.
    pub hunks: Vec<mend_core::diff::Hunk>,
    /// The unified diff, which `git apply` applies to turn old into new.
    pub diff: String,
    /// Whether the files differ.
    #[serde(skip)]
    pub differ: bool,
}

/// A unified diff from `old` to `new`, naming `path` (by default `old`'s)
/// in its headers.
pub fn diff(old: &Path, new: &Path, path: Option<&str>) -> Result<Diffed, Error> {
    let text = |p: &Path| -> Result<String, Error> {
        String::from_utf8(read_text(p)?)
            .map_err(|_| Error::Usage(format!("{} is not UTF-8 text", p.display())))
    };
    let (old_text, new_text) = (text(old)?, text(new)?);
    let name = path.map_or_else(
        || old.to_string_lossy().trim_start_matches("./").to_owned(),
        str::to_owned,
    );
    Ok(Diffed {
        diff: mend_core::diff::unified(Some(&name), Some(&name), &old_text, &new_text),
        hunks: mend_core::diff::hunks(&old_text, &new_text),
        path: name,
        differ: old_text != new_text,
    })
}
