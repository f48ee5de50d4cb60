//! The corpus: real version pairs of open-source packages, fetched with the
//! ordinary registry clients (pip, npm, cargo) into a cache folder, and the
//! diff hunks between their versions.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Where a package comes from.
#[derive(Clone, Copy, Debug)]
pub enum Registry {
    PyPi,
    Npm,
    Crates,
}

/// A package and the two versions whose difference is the corpus.
pub struct Package {
    pub registry: Registry,
    pub name: &'static str,
    pub old: &'static str,
    pub new: &'static str,
}

/// Python, JavaScript (spaces and tabs) and Rust, chosen for real churn
/// between two releases and for source shipped as written (no bundles).
pub const PACKAGES: &[Package] = &[
    Package {
        registry: Registry::PyPi,
        name: "requests",
        old: "2.28.2",
        new: "2.32.3",
    },
    Package {
        registry: Registry::PyPi,
        name: "click",
        old: "8.0.4",
        new: "8.1.7",
    },
    Package {
        registry: Registry::PyPi,
        name: "attrs",
        old: "22.2.0",
        new: "23.2.0",
    },
    Package {
        registry: Registry::PyPi,
        name: "flask",
        old: "2.2.5",
        new: "3.0.3",
    },
    Package {
        registry: Registry::Npm,
        name: "express",
        old: "4.17.3",
        new: "4.21.0",
    },
    Package {
        registry: Registry::Npm,
        name: "commander",
        old: "9.5.0",
        new: "11.1.0",
    },
    Package {
        registry: Registry::Npm,
        name: "chalk",
        old: "4.1.2",
        new: "5.3.0",
    },
    Package {
        registry: Registry::Npm,
        name: "axios",
        old: "1.4.0",
        new: "1.7.7",
    },
    Package {
        registry: Registry::Crates,
        name: "anyhow",
        old: "1.0.69",
        new: "1.0.86",
    },
    Package {
        registry: Registry::Crates,
        name: "semver",
        old: "1.0.16",
        new: "1.0.23",
    },
    Package {
        registry: Registry::Crates,
        name: "log",
        old: "0.4.17",
        new: "0.4.22",
    },
];

fn run(cmd: &mut Command) -> Result<(), String> {
    let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{cmd:?} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// The extracted source tree of one version, fetched on first use.
pub fn fetch(cache: &Path, p: &Package, version: &str) -> Result<PathBuf, String> {
    let dir = match p.registry {
        Registry::PyPi => cache.join("pypi"),
        Registry::Npm => cache.join("npm"),
        Registry::Crates => cache.join("crates"),
    }
    .join(format!("{}-{version}", p.name));
    let done = dir.join(".complete");
    if done.exists() {
        return Ok(dir);
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let dl = dir.join("download");
    std::fs::create_dir_all(&dl).map_err(|e| e.to_string())?;
    match p.registry {
        Registry::PyPi => {
            run(Command::new("python3")
                .args([
                    "-m",
                    "pip",
                    "download",
                    "-q",
                    "--no-deps",
                    "--only-binary=:all:",
                ])
                .arg("--dest")
                .arg(&dl)
                .arg(format!("{}=={version}", p.name)))?;
            let wheel = only_file(&dl)?;
            run(Command::new("python3")
                .args(["-m", "zipfile", "-e"])
                .arg(&wheel)
                .arg(dir.join("src")))?;
        }
        Registry::Npm => {
            run(Command::new("npm")
                .args(["pack", "-q", "--pack-destination"])
                .arg(&dl)
                .arg(format!("{}@{version}", p.name)))?;
            let tgz = only_file(&dl)?;
            std::fs::create_dir_all(dir.join("src")).map_err(|e| e.to_string())?;
            run(Command::new("tar")
                .arg("xzf")
                .arg(&tgz)
                .arg("-C")
                .arg(dir.join("src")))?;
        }
        Registry::Crates => {
            std::fs::create_dir_all(dl.join("src")).map_err(|e| e.to_string())?;
            std::fs::write(
                dl.join("Cargo.toml"),
                format!(
                    "[package]\nname = \"fetch\"\nversion = \"0.0.0\"\nedition = \"2021\"\n[workspace]\n[dependencies]\n{} = {{ version = \"={version}\", default-features = false }}\n",
                    p.name
                ),
            )
            .map_err(|e| e.to_string())?;
            std::fs::write(dl.join("src/lib.rs"), "").map_err(|e| e.to_string())?;
            run(Command::new("cargo")
                .args(["vendor", "-q", "--versioned-dirs"])
                .arg(dir.join("src"))
                .current_dir(&dl))?;
        }
    }
    let _ = std::fs::remove_dir_all(&dl);
    std::fs::write(&done, "").map_err(|e| e.to_string())?;
    Ok(dir)
}

fn only_file(dir: &Path) -> Result<PathBuf, String> {
    std::fs::read_dir(dir)
        .map_err(|e| e.to_string())?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.is_file())
        .ok_or_else(|| format!("nothing was downloaded into {}", dir.display()))
}

/// Source files worth editing: code as written, not bundles or minified.
fn wanted(rel: &str) -> bool {
    let ext_ok = [".py", ".js", ".mjs", ".ts", ".rs"]
        .iter()
        .any(|e| rel.ends_with(e));
    let generated = [
        "/dist/",
        ".min.",
        "/node_modules/",
        ".d.ts",
        "/tests/",
        "/test/",
    ]
    .iter()
    .any(|g| rel.contains(g));
    ext_ok && !generated
}

fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(base, &p, out);
        } else if let Ok(rel) = p.strip_prefix(base) {
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
}

/// A file present in both versions, with different content.
pub struct FilePair {
    pub path: String,
    pub old: String,
    pub new: String,
}

/// Strips the version from a vendored crate's folder name, so both
/// versions' paths line up.
fn canonical(rel: &str) -> String {
    match rel.split_once('/') {
        Some((head, rest))
            if head.contains('-')
                && head
                    .rsplit('-')
                    .next()
                    .is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit())) =>
        {
            let name = head.rsplit_once('-').map_or(head, |(n, _)| n);
            format!("{name}/{rest}")
        }
        _ => rel.to_owned(),
    }
}

/// The changed source files between two extracted versions.
pub fn pairs(old_root: &Path, new_root: &Path) -> Vec<FilePair> {
    let list = |root: &Path| {
        let src = root.join("src");
        let mut v = Vec::new();
        walk(&src, &src, &mut v);
        v.retain(|r| wanted(r));
        v.into_iter()
            .map(|r| (canonical(&r), src.join(&r)))
            .collect::<std::collections::BTreeMap<_, _>>()
    };
    let (old, new) = (list(old_root), list(new_root));
    let mut out = Vec::new();
    for (rel, op) in &old {
        let Some(np) = new.get(rel) else { continue };
        let (Ok(o), Ok(n)) = (std::fs::read_to_string(op), std::fs::read_to_string(np)) else {
            continue;
        };
        // Long lines mean generated code; mixed or CR endings are their own
        // fixtures, not this benchmark's subject.
        let plain = |s: &str| !s.contains('\r') && s.lines().all(|l| l.len() <= 300);
        if o != n && plain(&o) && plain(&n) && o.len() < 400_000 {
            out.push(FilePair {
                path: rel.clone(),
                old: o,
                new: n,
            });
        }
    }
    out
}
