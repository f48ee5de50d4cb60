//! Fetching released packages with the ordinary registry clients (pip,
//! npm, cargo, apt) into a cache folder, for the measurements that run on
//! real code (the drift benchmark and the syntax-check corpus).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where a package comes from.
#[derive(Clone, Copy, Debug)]
pub enum Registry {
    PyPi,
    Npm,
    Crates,
    /// Debian's binary packages (`apt-get download`): the only registry
    /// here with Go, Ruby, PHP, C++, Lua and shell sources.
    Debian,
}

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

/// The extracted source tree (under `src/`) of one version of a package,
/// fetched on first use into `cache`.
pub fn fetch(
    cache: &Path,
    registry: Registry,
    name: &str,
    version: &str,
) -> Result<PathBuf, String> {
    let dir = match registry {
        Registry::PyPi => cache.join("pypi"),
        Registry::Npm => cache.join("npm"),
        Registry::Crates => cache.join("crates"),
        Registry::Debian => cache.join("debian"),
    }
    .join(format!("{name}-{version}"));
    let done = dir.join(".complete");
    if done.exists() {
        return Ok(dir);
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let dl = dir.join("download");
    std::fs::create_dir_all(&dl).map_err(|e| e.to_string())?;
    match registry {
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
                .arg(format!("{}=={version}", name)))?;
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
                .arg(format!("{}@{version}", name)))?;
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
                    name
                ),
            )
            .map_err(|e| e.to_string())?;
            std::fs::write(dl.join("src/lib.rs"), "").map_err(|e| e.to_string())?;
            run(Command::new("cargo")
                .args(["vendor", "-q", "--versioned-dirs"])
                .arg(dir.join("src"))
                .current_dir(&dl))?;
        }
        Registry::Debian => {
            // No version: the archive's own (Debian keeps one per release).
            let which = if version.is_empty() {
                name.to_owned()
            } else {
                format!("{name}={version}")
            };
            run(Command::new("apt-get")
                .args(["download", "-q"])
                .arg(which)
                .current_dir(&dl))?;
            let deb = only_file(&dl)?;
            run(Command::new("dpkg-deb")
                .arg("-x")
                .arg(&deb)
                .arg(dir.join("src")))?;
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

/// The regular files under `root` (links are not followed: a Debian
/// package's absolute links point into this machine), by path relative to
/// `root` with `/` separators and a vendored crate's version dropped from
/// its folder (`log-0.4.17/src/lib.rs` is `log/src/lib.rs`), so the paths
/// of two versions line up.
pub fn files_under(root: &Path) -> BTreeMap<String, PathBuf> {
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        let Ok(kind) = e.file_type() else { continue };
        if kind.is_dir() {
            walk(base, &p, out);
        } else if kind.is_file()
            && let Ok(rel) = p.strip_prefix(base)
        {
            out.insert(canonical(&rel.to_string_lossy().replace('\\', "/")), p);
        }
    }
}

fn canonical(rel: &str) -> String {
    match rel.split_once('/') {
        Some((head, rest)) => match head.rsplit_once('-') {
            Some((name, v)) if v.starts_with(|c: char| c.is_ascii_digit()) => {
                format!("{name}/{rest}")
            }
            _ => rel.to_owned(),
        },
        None => rel.to_owned(),
    }
}
