//! The files of the syntax-check corpus: released packages from PyPI, npm,
//! crates.io and Debian, and the pairs of versions whose change is a
//! correct edit.

use std::collections::BTreeMap;
use std::path::Path;

use crate::registry::{Registry, fetch, files_under};

/// A package; with two versions, its change between them is also measured.
pub struct Source {
    pub registry: Registry,
    pub name: &'static str,
    pub old: &'static str,
    pub new: Option<&'static str>,
}

const fn pair(
    registry: Registry,
    name: &'static str,
    old: &'static str,
    new: &'static str,
) -> Source {
    Source {
        registry,
        name,
        old,
        new: Some(new),
    }
}

const fn one(registry: Registry, name: &'static str, version: &'static str) -> Source {
    Source {
        registry,
        name,
        old: version,
        new: None,
    }
}

/// Chosen for code as its authors wrote it, in every language of the
/// check: Python, JavaScript, TypeScript, CSS and JSON from PyPI and npm;
/// Rust and TOML from crates.io; Go, Ruby, PHP, C and C++ headers, shell,
/// Lua, YAML and HTML from Debian (its only source of most of those). A Debian version
/// is the one in the archive (`apt-get download NAME`). Projects kept for
/// evaluating mend independently are never taken (`docs/decisions.md`
/// lists them).
pub const SOURCES: &[Source] = &[
    pair(Registry::PyPi, "urllib3", "2.0.7", "2.2.0"),
    pair(Registry::PyPi, "rich", "13.3.5", "13.7.1"),
    pair(Registry::PyPi, "tornado", "6.2", "6.4.1"),
    pair(Registry::PyPi, "attrs", "22.2.0", "23.2.0"),
    pair(Registry::PyPi, "docutils", "0.20.1", "0.21.2"),
    pair(Registry::Npm, "koa", "2.11.0", "2.15.3"),
    pair(Registry::Npm, "commander", "9.5.0", "11.1.0"),
    pair(Registry::Npm, "axios", "1.4.0", "1.7.7"),
    pair(Registry::Npm, "rxjs", "7.5.0", "7.8.1"),
    pair(Registry::Npm, "bootstrap", "5.2.3", "5.3.3"),
    pair(Registry::Crates, "anyhow", "1.0.69", "1.0.86"),
    pair(Registry::Crates, "semver", "1.0.16", "1.0.23"),
    pair(Registry::Crates, "log", "0.4.17", "0.4.22"),
    one(Registry::Debian, "golang-github-spf13-cobra-dev", ""),
    one(Registry::Debian, "golang-github-stretchr-testify-dev", ""),
    one(Registry::Debian, "ruby-thor", ""),
    one(Registry::Debian, "ruby-rack", ""),
    one(Registry::Debian, "php-symfony-console", ""),
    one(Registry::Debian, "php-league-commonmark", ""),
    one(Registry::Debian, "libfmt-dev", ""),
    one(Registry::Debian, "libspdlog-dev", ""),
    one(Registry::Debian, "zlib1g-dev", ""),
    one(Registry::Debian, "bash-completion", ""),
    one(Registry::Debian, "lua-penlight", ""),
    one(Registry::Debian, "dracut-core", ""),
    one(Registry::Debian, "ansible-core", ""),
    one(Registry::Debian, "python-pygments-doc", ""),
    one(Registry::Debian, "python-jinja2-doc", ""),
];

/// A file of the corpus, by its path under the package.
pub struct File {
    pub path: String,
    pub text: String,
    /// The same file in the package's newer version, when it changed.
    pub newer: Option<String>,
}

/// Text files of a language the check knows, as written: not minified or
/// generated (long lines; prose in HTML has its own), not too large,
/// UTF-8, LF line endings.
fn wanted(rel: &str, text: &str) -> bool {
    let generated = ["/dist/", ".min.", "/node_modules/", ".d.ts", ".map"]
        .iter()
        .any(|g| rel.contains(g));
    let longest = if rel.ends_with(".html") { 2000 } else { 300 };
    !generated
        && mend_syntax::language_for(rel).is_some()
        && text.len() < 400_000
        && !text.contains('\r')
        && text.lines().all(|l| l.len() <= longest)
}

/// The files of `s`, fetched into `cache` on first use.
pub fn files(cache: &Path, s: &Source) -> Result<Vec<File>, String> {
    let read = |version: &str| -> Result<BTreeMap<String, String>, String> {
        let root = fetch(cache, s.registry, s.name, version)?.join("src");
        Ok(files_under(&root)
            .into_iter()
            .filter_map(|(rel, p)| {
                let text = std::fs::read_to_string(p).ok()?;
                wanted(&rel, &text).then_some((rel, text))
            })
            .collect())
    };
    let old = read(s.old)?;
    let new = match s.new {
        Some(v) => read(v)?,
        None => BTreeMap::new(),
    };
    Ok(old
        .into_iter()
        .map(|(path, text)| {
            let newer = new.get(&path).filter(|n| **n != text).cloned();
            File { path, text, newer }
        })
        .collect())
}
