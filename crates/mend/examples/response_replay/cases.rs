//! Finding, unpacking and reading the cases.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::outcome::{Block, Kind, Tree, blocks};

/// One replayed response.
pub(crate) struct Case {
    pub(crate) id: String,
    pub(crate) kind: Kind,
    /// `owner/name` of the repository whose transcript it comes from.
    pub(crate) repo: String,
    pub(crate) model: String,
    pub(crate) family: String,
    /// aider's edit format, as the transcript names it (`unknown` when it
    /// does not).
    pub(crate) aider_format: String,
    /// The files aider had in the chat that the response names.
    pub(crate) paths: Vec<String>,
    pub(crate) dir: PathBuf,
    pub(crate) before: Tree,
    pub(crate) expected: Tree,
    pub(crate) blocks: Vec<Block>,
}

impl Case {
    pub(crate) fn response_path(&self) -> PathBuf {
        self.dir.join("response.md")
    }
}

pub(crate) fn workspace_root() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().unwrap_or(root)
}

/// The cases: `$MEND_RESPONSE_REPLAY` (the tarball, or a folder holding
/// `cases.tar.gz` or the unpacked cases), else
/// `../shared/response-replay/cases.tar.gz` beside the workspace root.
fn source() -> PathBuf {
    match std::env::var_os("MEND_RESPONSE_REPLAY") {
        Some(p) => {
            let p = PathBuf::from(p);
            if p.is_dir() && p.join("cases.tar.gz").is_file() {
                p.join("cases.tar.gz")
            } else {
                p
            }
        }
        None => workspace_root().join("../shared/response-replay/cases.tar.gz"),
    }
}

/// The folder of unpacked cases: the source itself when it is a folder,
/// else the tarball unpacked under `target/response-replay/`. `Ok(None)`,
/// after a loud line, when there is none.
pub(crate) fn unpacked() -> Result<Option<PathBuf>, String> {
    let src = source();
    if src.is_dir() {
        return Ok(Some(src));
    }
    if !src.is_file() {
        println!(
            "\n*** RESPONSE REPLAY SKIPPED: no cases at {} (set MEND_RESPONSE_REPLAY to the \
             tarball or a folder of cases, or place the shared folder beside the workspace) ***\n",
            src.display()
        );
        return Ok(None);
    }
    let into = workspace_root().join("target/response-replay");
    let dir = into.join("response-replay-cases");
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::create_dir_all(&into).map_err(|e| format!("{}: {e}", into.display()))?;
    let status = Command::new("tar")
        .arg("xzf")
        .arg(&src)
        .arg("-C")
        .arg(&into)
        .status()
        .map_err(|e| format!("cannot run tar: {e}"))?;
    if !status.success() {
        return Err(format!("tar could not unpack {}: {status}", src.display()));
    }
    if !dir.is_dir() {
        return Err(format!(
            "{} did not unpack to response-replay-cases/",
            src.display()
        ));
    }
    Ok(Some(dir))
}

/// Every case under `dir` (each a folder with a `meta.json`), in id order.
pub(crate) fn read_all(dir: &Path) -> Result<Vec<Case>, String> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("meta.json").is_file())
        .collect();
    names.sort();
    let cases = names
        .iter()
        .map(|d| read_case(d))
        .collect::<Result<Vec<_>, _>>()?;
    if cases.is_empty() {
        return Err(format!("{} holds no cases", dir.display()));
    }
    Ok(cases)
}

fn read_case(dir: &Path) -> Result<Case, String> {
    let at = |name: &str| format!("{}/{name}", dir.display());
    let meta: serde_json::Value = serde_json::from_slice(
        &std::fs::read(dir.join("meta.json")).map_err(|e| format!("{}: {e}", at("meta.json")))?,
    )
    .map_err(|e| format!("{}: {e}", at("meta.json")))?;
    let field = |k: &str| {
        meta[k]
            .as_str()
            .map(str::to_owned)
            .ok_or(format!("{} has no {k}", at("meta.json")))
    };
    let kind = match field("kind")?.as_str() {
        "ok" => Kind::Ok,
        "refuse_or_unknown" => Kind::RefuseOrUnknown,
        other => return Err(format!("{}: unknown kind {other}", at("meta.json"))),
    };
    let response = std::fs::read(dir.join("response.md"))
        .map_err(|e| format!("{}: {e}", at("response.md")))?;
    let paths = meta["paths"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|p| p.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    Ok(Case {
        id: field("id")?,
        kind,
        repo: field("repo")?,
        model: field("model").unwrap_or_default(),
        family: field("model_family").unwrap_or_else(|_| "other".into()),
        aider_format: field("aider_format").unwrap_or_else(|_| "unknown".into()),
        paths,
        before: read_tree(&dir.join("before"))?,
        expected: read_tree(&dir.join("expected"))?,
        blocks: blocks(&String::from_utf8_lossy(&response)),
        dir: dir.to_owned(),
    })
}

/// Every file under `root` (none when it does not exist), by its path
/// relative to `root` with `/`; a top-level `.mend/` (mend's own state)
/// is left out.
pub(crate) fn read_tree(root: &Path) -> Result<Tree, String> {
    let mut out = Tree::new();
    if !root.exists() {
        return Ok(out);
    }
    let mut stack = vec![root.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).map_err(|e| format!("{}: {e}", d.display()))? {
            let p = e.map_err(|e| format!("{}: {e}", d.display()))?.path();
            let rel = p.strip_prefix(root).unwrap_or(&p);
            let rel = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
            if rel == ".mend" {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else {
                let bytes = std::fs::read(&p).map_err(|e| format!("{}: {e}", p.display()))?;
                out.insert(rel, bytes);
            }
        }
    }
    Ok(out)
}

/// Writes `tree` under `root`.
pub(crate) fn write_tree(root: &Path, tree: &Tree) -> Result<(), String> {
    for (rel, bytes) in tree {
        let p = root.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        std::fs::write(&p, bytes).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    Ok(())
}
