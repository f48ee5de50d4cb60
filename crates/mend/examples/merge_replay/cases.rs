//! Finding, unpacking and reading the replay cases; the real files the
//! synthetic corpus draws from.

use std::path::{Path, PathBuf};
use std::process::Command;

/// One replayed merge of one file.
pub(crate) struct Case {
    pub(crate) id: String,
    /// The project it comes from (`meta.json`'s `repo`).
    pub(crate) project: String,
    /// The file's path in that project; its language picks the
    /// structured resolver's grammar.
    pub(crate) path: String,
    pub(crate) dir: PathBuf,
    pub(crate) base: Vec<u8>,
    pub(crate) ours: Vec<u8>,
    pub(crate) theirs: Vec<u8>,
    pub(crate) merged: Vec<u8>,
}

/// A real file the synthetic corpus edits.
pub(crate) struct Source {
    pub(crate) path: String,
    pub(crate) text: String,
}

/// The replay set: 1,677 merges from nine projects.
const TARBALL: &str = "cases-9.tar.gz";

/// The projects the resolvers may be tuned on; every other project is
/// held out, and the resolvers are reported on those. The rule, fixed
/// before any resolver was judged on the split: jinja, axios and fd (the
/// first replay set, which the resolvers were built on) are tune projects;
/// the six projects new in `cases-9`, in alphabetical order, alternate
/// tune, held out, tune, ... (attrs tune, clap held out, hyper tune, koa
/// held out, pluggy tune, werkzeug held out).
pub(crate) const TUNE: &[&str] = &["attrs", "axios", "fd", "hyper", "jinja", "pluggy"];

/// Which half of the split a project is in.
pub(crate) fn half(project: &str) -> &'static str {
    if TUNE.contains(&project) {
        "tune"
    } else {
        "held-out"
    }
}

pub(crate) fn workspace_root() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().unwrap_or(root)
}

/// The tarball: `$MEND_MERGE_REPLAY` (the file, or a folder holding
/// `cases-9.tar.gz`), else `../shared/merge-replay/cases-9.tar.gz` beside
/// the workspace root.
fn tarball() -> PathBuf {
    match std::env::var_os("MEND_MERGE_REPLAY") {
        Some(p) => {
            let p = PathBuf::from(p);
            if p.is_dir() { p.join(TARBALL) } else { p }
        }
        None => workspace_root()
            .join("../shared/merge-replay")
            .join(TARBALL),
    }
}

/// Unpacks and reads the cases; `Ok(None)`, after a loud line, when the
/// tarball is not there.
pub(crate) fn load(keep: &dyn Fn(&str) -> bool) -> Result<Option<Vec<Case>>, String> {
    let tgz = tarball();
    if !tgz.is_file() {
        println!(
            "\n*** MERGE REPLAY SKIPPED: no cases at {} (set MEND_MERGE_REPLAY to the \
             tarball, or place the shared folder beside the workspace); only the \
             synthetic corpus runs ***\n",
            tgz.display()
        );
        return Ok(None);
    }
    let into = workspace_root().join("target/merge-replay");
    let dir = into.join("merge-replay-cases");
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::create_dir_all(&into).map_err(|e| format!("{}: {e}", into.display()))?;
    let status = Command::new("tar")
        .arg("xzf")
        .arg(&tgz)
        .arg("-C")
        .arg(&into)
        .status()
        .map_err(|e| format!("cannot run tar: {e}"))?;
    if !status.success() {
        return Err(format!("tar could not unpack {}: {status}", tgz.display()));
    }
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    names.sort();
    let cases: Vec<Case> = names
        .iter()
        .map(|d| read_case(d))
        .filter(|c| c.as_ref().map_or(true, |c| keep(&c.project)))
        .collect::<Result<Vec<_>, _>>()?;
    if cases.is_empty() {
        return Err(format!(
            "{} holds no cases of the projects --projects names",
            tgz.display()
        ));
    }
    Ok(Some(cases))
}

fn read_case(dir: &Path) -> Result<Case, String> {
    let read = |name: &str| {
        std::fs::read(dir.join(name)).map_err(|e| format!("{}/{name}: {e}", dir.display()))
    };
    let meta: serde_json::Value = serde_json::from_slice(&read("meta.json")?)
        .map_err(|e| format!("{}/meta.json: {e}", dir.display()))?;
    let field = |k: &str| {
        meta[k]
            .as_str()
            .map(str::to_owned)
            .ok_or(format!("{}/meta.json has no {k}", dir.display()))
    };
    Ok(Case {
        id: field("id")?,
        project: field("repo")?,
        path: field("path")?,
        dir: dir.to_owned(),
        base: read("base")?,
        ours: read("ours")?,
        theirs: read("theirs")?,
        merged: read("merged")?,
    })
}

/// The cases' base files, each once.
pub(crate) fn sources_from_cases(cases: &[Case]) -> Vec<Source> {
    let mut seen = std::collections::HashSet::new();
    cases
        .iter()
        .filter(|c| seen.insert(c.base.clone()))
        .filter_map(|c| {
            Some(Source {
                path: c.path.clone(),
                text: String::from_utf8(c.base.clone()).ok()?,
            })
        })
        .collect()
}

/// This repository's own Rust sources, in path order.
pub(crate) fn own_sources() -> Vec<Source> {
    let root = workspace_root();
    let mut out = Vec::new();
    let mut stack = vec![root.join("crates")];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.filter_map(Result::ok) {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs")
                && let Ok(text) = std::fs::read_to_string(&p)
            {
                let path = p.strip_prefix(&root).unwrap_or(&p);
                out.push(Source {
                    path: path.to_string_lossy().into_owned(),
                    text,
                });
            }
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    println!("synthetic corpus: drawing from this repository's own sources\n");
    out
}
