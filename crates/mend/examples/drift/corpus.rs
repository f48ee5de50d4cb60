//! The corpus: real version pairs of open-source packages, fetched with the
//! ordinary registry clients (pip, npm, cargo) into a cache folder, and the
//! diff hunks between their versions.

use std::path::{Path, PathBuf};

pub use crate::registry::Registry;

/// A package and the two versions whose difference is the corpus, with a
/// release between them: the git-diff replay also applies the two
/// consecutive steps.
pub struct Package {
    pub registry: Registry,
    pub name: &'static str,
    pub old: &'static str,
    pub mid: &'static str,
    pub new: &'static str,
}

/// Python, JavaScript (spaces and tabs) and Rust, chosen for real churn
/// between two releases and for source shipped as written (no bundles);
/// `typing_extensions` and the PyYAML stubs (`types-PyYAML`) bring `...`
/// as code (`Protocol` bodies, overloads, `.pyi` stubs). Projects kept for
/// evaluating mend independently are never taken, here or in any other
/// benchmark (`docs/decisions.md` lists them).
pub const PACKAGES: &[Package] = &[
    Package {
        registry: Registry::PyPi,
        name: "urllib3",
        old: "2.0.7",
        mid: "2.1.0",
        new: "2.2.0",
    },
    Package {
        registry: Registry::PyPi,
        name: "rich",
        old: "13.3.5",
        mid: "13.5.3",
        new: "13.7.1",
    },
    Package {
        registry: Registry::PyPi,
        name: "attrs",
        old: "22.2.0",
        mid: "23.1.0",
        new: "23.2.0",
    },
    Package {
        registry: Registry::PyPi,
        name: "tornado",
        old: "6.2",
        mid: "6.3.3",
        new: "6.4.1",
    },
    Package {
        registry: Registry::PyPi,
        name: "typing_extensions",
        old: "4.5.0",
        mid: "4.9.0",
        new: "4.12.2",
    },
    Package {
        registry: Registry::PyPi,
        name: "types-PyYAML",
        old: "6.0.1",
        mid: "6.0.12",
        new: "6.0.12.20240917",
    },
    Package {
        registry: Registry::Npm,
        name: "koa",
        old: "2.11.0",
        mid: "2.13.4",
        new: "2.15.3",
    },
    Package {
        registry: Registry::Npm,
        name: "commander",
        old: "9.5.0",
        mid: "10.0.1",
        new: "11.1.0",
    },
    Package {
        registry: Registry::Npm,
        name: "chalk",
        old: "4.1.2",
        mid: "5.0.1",
        new: "5.3.0",
    },
    Package {
        registry: Registry::Npm,
        name: "axios",
        old: "1.4.0",
        mid: "1.6.0",
        new: "1.7.7",
    },
    Package {
        registry: Registry::Crates,
        name: "anyhow",
        old: "1.0.69",
        mid: "1.0.75",
        new: "1.0.86",
    },
    Package {
        registry: Registry::Crates,
        name: "semver",
        old: "1.0.16",
        mid: "1.0.20",
        new: "1.0.23",
    },
    Package {
        registry: Registry::Crates,
        name: "log",
        old: "0.4.17",
        mid: "0.4.20",
        new: "0.4.22",
    },
];

/// Which half of [`PACKAGES`] the package at `index` is in: 0 (A: the
/// packages rules are tuned on) or 1 (B: held out, to show the rules were
/// not fitted to them). Alternate entries, so each half has Python,
/// JavaScript and Rust.
pub fn half(index: usize) -> usize {
    index % 2
}

/// Source files worth editing: code as written, not bundles or minified.
fn wanted(rel: &str) -> bool {
    let ext_ok = [".py", ".pyi", ".js", ".mjs", ".ts", ".rs"]
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

/// A file present in both versions, with different content.
pub struct FilePair {
    pub path: String,
    pub old: String,
    pub new: String,
}

/// The changed source files between two extracted versions.
pub fn pairs(old_root: &Path, new_root: &Path) -> Vec<FilePair> {
    let list = |root: &Path| {
        let mut files = crate::registry::files_under(&root.join("src"));
        files.retain(|rel, _| wanted(rel));
        files
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

/// The extracted source tree of one version of `p`, fetched on first use.
pub fn fetch(cache: &Path, p: &Package, version: &str) -> Result<PathBuf, String> {
    crate::registry::fetch(cache, p.registry, p.name, version)
}
