//! Checks on the repository's own files that no compiler makes.

use std::path::Path;

/// The pure crates each ban the filesystem, processes, the environment,
/// the clock and the network in their own `clippy.toml` (clippy reads one
/// per crate). The copies must ban the same calls: a ban dropped from one
/// would let that crate's purity slip unnoticed.
#[test]
fn pure_crates_ban_the_same_calls() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let pure = ["mend-core", "mend-merge", "mend-sync", "mend-syntax"];
    let bans = |name: &str| -> String {
        let text = std::fs::read_to_string(root.join("crates").join(name).join("clippy.toml"))
            .unwrap_or_else(|e| panic!("{name}/clippy.toml: {e}"));
        text.lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| l.replace(name, "CRATE"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let first = bans(pure[0]);
    assert!(first.contains("std::fs::read"), "{first}");
    for name in &pure[1..] {
        assert_eq!(
            bans(name),
            first,
            "{name}/clippy.toml bans other calls than mend-core's"
        );
    }
}

/// Library functions over the limit that are still to be split (issue 27),
/// as `path fn`. Listed one by one so that no new long function slips in
/// beside them; each is removed from here when it is split, and a listed
/// function that fits already fails the test.
const LONG_FUNCTIONS_TO_SPLIT: &[&str] = &[];

/// The longest a non-test function may be, counted from its `fn` line to
/// its closing brace.
const MAX_FUNCTION_LINES: usize = 80;

/// Every non-test function and method under `crates/*/src` fits on a
/// screen: a longer one is a missing type or a missing step. Parsed with
/// `syn`, so functions in `#[cfg(test)]` modules and `#[test]` functions are
/// told apart from the library's own.
#[test]
fn library_functions_fit_on_a_screen() {
    use syn::visit::Visit;

    /// Whether a `cfg` predicate holds only in test builds.
    fn cfg_needs_test(meta: &syn::Meta) -> bool {
        type Nested = syn::punctuated::Punctuated<syn::Meta, syn::Token![,]>;
        match meta {
            syn::Meta::Path(path) => path.is_ident("test"),
            syn::Meta::List(list) => {
                let nested = list
                    .parse_args_with(Nested::parse_terminated)
                    .unwrap_or_default();
                if list.path.is_ident("all") {
                    nested.iter().any(cfg_needs_test)
                } else if list.path.is_ident("any") {
                    !nested.is_empty() && nested.iter().all(cfg_needs_test)
                } else {
                    false
                }
            }
            syn::Meta::NameValue(_) => false,
        }
    }

    fn is_test(attrs: &[syn::Attribute]) -> bool {
        attrs.iter().any(|attr| {
            attr.path().is_ident("test")
                || (attr.path().is_ident("cfg")
                    && attr
                        .parse_args::<syn::Meta>()
                        .is_ok_and(|m| cfg_needs_test(&m)))
        })
    }

    struct Long<'a> {
        file: &'a str,
        scope: Vec<String>,
        found: Vec<String>,
        listed: Vec<String>,
    }

    impl Long<'_> {
        fn check(&mut self, name: &syn::Ident, sig: &syn::Signature, body_end: proc_macro2::Span) {
            let first = sig.fn_token.span.start().line;
            let lines = body_end.end().line - first + 1;
            if lines > MAX_FUNCTION_LINES {
                let mut path = self.scope.clone();
                path.push(name.to_string());
                let key = format!("{} {}", self.file, path.join("::"));
                if !LONG_FUNCTIONS_TO_SPLIT.contains(&key.as_str()) {
                    self.found.push(format!(
                        "{}:{first} {} ({lines} lines)",
                        self.file,
                        path.join("::")
                    ));
                }
                self.listed.push(key);
            }
        }
    }

    impl<'ast> Visit<'ast> for Long<'_> {
        fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
            if !is_test(&item.attrs) {
                self.scope.push(item.ident.to_string());
                syn::visit::visit_item_mod(self, item);
                self.scope.pop();
            }
        }
        fn visit_item_impl(&mut self, item: &'ast syn::ItemImpl) {
            if !is_test(&item.attrs) {
                let ty = &item.self_ty;
                self.scope.push(quote_type(ty));
                syn::visit::visit_item_impl(self, item);
                self.scope.pop();
            }
        }
        fn visit_item_trait(&mut self, item: &'ast syn::ItemTrait) {
            if !is_test(&item.attrs) {
                self.scope.push(item.ident.to_string());
                syn::visit::visit_item_trait(self, item);
                self.scope.pop();
            }
        }
        fn visit_item_fn(&mut self, item: &'ast syn::ItemFn) {
            if !is_test(&item.attrs) {
                self.check(
                    &item.sig.ident,
                    &item.sig,
                    item.block.brace_token.span.close(),
                );
                syn::visit::visit_item_fn(self, item);
            }
        }
        fn visit_impl_item_fn(&mut self, item: &'ast syn::ImplItemFn) {
            if !is_test(&item.attrs) {
                self.check(
                    &item.sig.ident,
                    &item.sig,
                    item.block.brace_token.span.close(),
                );
                syn::visit::visit_impl_item_fn(self, item);
            }
        }
        fn visit_trait_item_fn(&mut self, item: &'ast syn::TraitItemFn) {
            if let Some(block) = &item.default
                && !is_test(&item.attrs)
            {
                self.check(&item.sig.ident, &item.sig, block.brace_token.span.close());
                syn::visit::visit_trait_item_fn(self, item);
            }
        }
    }

    /// The last segment of an impl's self type, which names it well enough.
    fn quote_type(ty: &syn::Type) -> String {
        match ty {
            syn::Type::Path(path) => path
                .path
                .segments
                .last()
                .map_or_else(String::new, |s| s.ident.to_string()),
            _ => "impl".to_owned(),
        }
    }

    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut found = Vec::new();
    let mut long = Vec::new();
    let mut files = 0;
    for file in library_sources(&root) {
        let rel = relative(&root, &file);
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let mut visit = Long {
            file: &rel,
            scope: Vec::new(),
            found: Vec::new(),
            listed: Vec::new(),
        };
        visit.visit_file(&ast);
        found.append(&mut visit.found);
        long.append(&mut visit.listed);
        files += 1;
    }
    assert!(
        files > 50,
        "only {files} source files found under crates/*/src"
    );
    let split: Vec<&&str> = LONG_FUNCTIONS_TO_SPLIT
        .iter()
        .filter(|f| !long.iter().any(|l| l == **f))
        .collect();
    assert!(
        split.is_empty(),
        "these fit on a screen now; remove them from LONG_FUNCTIONS_TO_SPLIT: {split:?}"
    );
    assert!(
        found.is_empty(),
        "{} non-test functions are over {MAX_FUNCTION_LINES} lines; split each where a type or step \
         is missing:\n{}",
        found.len(),
        found.join("\n")
    );
}

/// No bare `#[allow(` in any crate's sources, the binary's included: a lint that is right
/// to silence says why with `#[expect(lint, reason = "…")]` (which also
/// fails once the lint no longer fires), and the usual `allow` of
/// `type_complexity` or `too_many_arguments` marks a missing struct.
#[test]
fn library_crates_have_no_bare_allows() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut found = Vec::new();
    for file in library_sources(&root) {
        let rel = relative(&root, &file);
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{rel}: {e}"));
        for (n, line) in text.lines().enumerate() {
            if line.contains("#[allow(") || line.contains("#![allow(") {
                found.push(format!("{rel}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "use #[expect(lint, reason = \"…\")] or the missing type instead of:\n{}",
        found.join("\n")
    );
}

/// Every `.rs` file under `crates/*/src`, sorted.
fn library_sources(root: &Path) -> Vec<std::path::PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries {
            let path = entry
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    let crates = std::fs::read_dir(root.join("crates")).unwrap_or_else(|e| panic!("crates: {e}"));
    for krate in crates {
        let src = krate
            .unwrap_or_else(|e| panic!("crates: {e}"))
            .path()
            .join("src");
        if src.is_dir() {
            walk(&src, &mut out);
        }
    }
    out.sort();
    out
}

/// `path` relative to the workspace root, with `/` separators.
fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

/// The subcommands `mend --help` lists, `help` left out.
fn help_subcommands(root: &Path) -> Vec<String> {
    let out = crate::run_mend(root, &["--help"], None);
    assert!(out.status.success(), "mend --help failed: {out:?}");
    let help = String::from_utf8(out.stdout).expect("--help is UTF-8");
    let listed: Vec<String> = help
        .lines()
        .skip_while(|l| l.trim() != "Commands:")
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        // A subcommand's line starts with two spaces and its name; a wrapped
        // description's lines are indented further.
        .filter(|l| l.starts_with("  ") && l[2..].starts_with(|c: char| c.is_ascii_lowercase()))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect();
    assert!(
        listed.len() >= 10,
        "too few subcommands parsed from:\n{help}"
    );
    listed
}

/// The code in a Markdown text: fenced blocks whole, and the inline spans
/// between backticks. Prose ("mend applies…") is left out, and so is a
/// `markdown` fence, which holds prose (an instruction for an agent).
fn markdown_code(text: &str) -> Vec<&str> {
    let mut code = Vec::new();
    // `None` outside a fence, else whether the fence holds code.
    let mut fence: Option<bool> = None;
    for line in text.lines() {
        if let Some(info) = line.trim_start().strip_prefix("```") {
            fence = match fence {
                Some(_) => None,
                None => Some(!matches!(info.trim(), "markdown" | "md")),
            };
        } else if let Some(holds_code) = fence {
            if holds_code {
                code.push(line);
            }
        } else {
            code.extend(line.split('`').skip(1).step_by(2));
        }
    }
    code
}

/// Every word that follows `mend ` in `code` as a subcommand would: `mend`
/// standing alone (not `crates/mend`, `"mend"`, `mend-0.1.vsix`), then a
/// space and a lowercase word (not `--version`, `0.0.0` or `v0.0.0`).
fn named_subcommands(code: &[&str]) -> Vec<String> {
    let mut named = Vec::new();
    for line in code {
        for (at, _) in line.match_indices("mend ") {
            let before = line[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || "/.-_'\"".contains(c)) {
                continue;
            }
            let word = line[at + 5..]
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .trim_end_matches([')', ',', ';', ':', '.']);
            if word.starts_with(|c: char| c.is_ascii_lowercase())
                && word.chars().all(|c| c.is_ascii_lowercase() || c == '-')
            {
                named.push(word.to_owned());
            }
        }
    }
    named
}

/// The README is the front door, and its synopsis is the binary's: every
/// `mend <subcommand>` it names is one `mend --help` lists, and every
/// subcommand `--help` lists is named there (its command table and feature
/// map link the rest to `docs/`).
#[test]
fn readme_synopsis_matches_help() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let listed = help_subcommands(&root);
    let named = named_subcommands(&markdown_code(&readme));
    assert!(
        named.len() >= listed.len(),
        "too few commands found in README.md: {named:?}"
    );
    let unknown: Vec<&String> = named.iter().filter(|n| !listed.contains(n)).collect();
    assert!(
        unknown.is_empty(),
        "README.md names subcommands `mend --help` does not list: {unknown:?} (listed: {listed:?})"
    );
    let missing: Vec<&String> = listed.iter().filter(|l| !named.contains(l)).collect();
    assert!(
        missing.is_empty(),
        "README.md does not name these subcommands of `mend --help`: {missing:?}"
    );
}

/// The README stays a front door (issue 42): at most 250 lines, with the
/// install command and an MCP configuration in its first 60; its test
/// command is the one `.ci/run` runs; the version its install output shows
/// is the one `mend --version` prints; ARCHITECTURE.md stays within 300 lines.
#[test]
fn readme_is_a_front_door() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let lines: Vec<&str> = readme.lines().collect();
    assert!(
        lines.len() <= 250,
        "README.md has {} lines; move detail to docs/",
        lines.len()
    );
    let head = lines[..lines.len().min(60)].join("\n");
    assert!(
        head.contains("cargo install --locked --path crates/mend"),
        "the install command is not in README.md's first 60 lines"
    );
    assert!(
        head.contains("\"mcpServers\""),
        "no MCP configuration in README.md's first 60 lines"
    );
    // The test command is the first line of the first code block after the
    // sentence that introduces it.
    let test_command = lines
        .iter()
        .skip_while(|l| !l.contains("whole test suite"))
        .skip_while(|l| !l.starts_with("```"))
        .nth(1)
        .expect("README.md has no test command after \"whole test suite\"");
    let ci = std::fs::read_to_string(root.join(".ci/run")).expect(".ci/run");
    assert!(
        ci.lines().any(|l| l.trim() == test_command.trim()),
        ".ci/run does not run README.md's test command `{test_command}`"
    );
    // What install prints is this crate's version, as `mend --version` says.
    let version = env!("CARGO_PKG_VERSION");
    let out = crate::run_mend(&root, &["--version"], None);
    let printed = String::from_utf8(out.stdout).expect("--version is UTF-8");
    assert_eq!(printed.trim(), format!("mend {version}"));
    for shown in [
        format!("$ mend --version\nmend {version}\n"),
        format!("Installed package `mend v{version} ("),
    ] {
        assert!(
            readme.contains(&shown),
            "README.md does not show `{shown}`: bring its install output up to date"
        );
    }
    let architecture =
        std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let count = architecture.lines().count();
    assert!(
        count <= 300,
        "ARCHITECTURE.md has {count} lines; at most 300"
    );
}

/// The formats modules depend one way: the leaves (`block`, `event`,
/// `format`, `json`, `schema`) → the format modules → `stream` → the
/// facade (`mod.rs`). A format module that reached back into `stream` or
/// the facade would close a circle.
#[test]
fn formats_depend_one_way() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../mend-core/src/formats");
    let leaves = ["block", "event", "format", "json", "schema"];
    let mut found = Vec::new();
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .path();
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_owned();
        if name == "mod" || name == "stream" {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}.rs: {e}"));
        // Test modules may use the facade, as any caller does.
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        checked += 1;
        for (n, line) in code.lines().enumerate() {
            let back = line.contains("super::stream")
                || line.contains("crate::formats::")
                || line.contains("super::{")
                || line.contains("super::Format")
                || line.contains("super::Entry")
                || line.contains("super::Event")
                || line.contains("super::parse");
            let leaf_reaches_up = leaves.contains(&name.as_str())
                && line.contains("super::")
                && !leaves.iter().any(|l| line.contains(&format!("super::{l}")));
            if back || leaf_reaches_up {
                found.push(format!("formats/{name}.rs:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(checked >= 10, "only {checked} format modules found");
    assert!(
        found.is_empty(),
        "imports against the formats graph:\n{}",
        found.join("\n")
    );
}

/// No module circle in any crate: a module that reaches another through
/// `crate::…` or `super::…` paths (in `use` or in code, test modules
/// aside) depends on it, and no module depends on itself through others.
/// A circle is two modules that are one in disguise, or a type in the
/// wrong one; the fix is to move what both need where both can reach it.
#[test]
fn modules_depend_without_circles() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut found = Vec::new();
    let mut crates = 0;
    for krate in std::fs::read_dir(root.join("crates")).unwrap_or_else(|e| panic!("crates: {e}")) {
        let src = krate
            .unwrap_or_else(|e| panic!("crates: {e}"))
            .path()
            .join("src");
        if !src.is_dir() {
            continue;
        }
        crates += 1;
        let graph = modules::graph(&src);
        for circle in modules::circles(&graph) {
            let name = relative(&root, &src);
            found.push(format!("{name}: {}", circle.join(" -> ")));
        }
    }
    assert!(crates >= 10, "only {crates} crates found");
    assert!(found.is_empty(), "module circles:\n{}", found.join("\n"));
}

/// The module graph of a crate, read from its sources' paths.
mod modules {
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::Path;

    /// Each module (`a::b`, `""` for the crate root) and the modules its
    /// `crate::`/`super::` paths reach.
    pub type Graph = BTreeMap<String, BTreeSet<String>>;

    /// The module a source file is, from its path under `src`.
    fn module_of(rel: &Path) -> Option<String> {
        let mut parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if parts.first().is_some_and(|p| p == "bin") {
            return None;
        }
        let last = parts.pop()?;
        let stem = last.strip_suffix(".rs")?;
        if !["mod", "lib", "main"].contains(&stem) {
            parts.push(stem.to_owned());
        }
        Some(parts.join("::"))
    }

    fn walk(dir: &Path, src: &Path, out: &mut BTreeMap<String, String>) {
        for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .path();
            if path.is_dir() {
                walk(&path, src, out);
                continue;
            }
            let rel = path.strip_prefix(src).unwrap_or(&path);
            if let Some(m) = module_of(rel) {
                let text = std::fs::read_to_string(&path)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                out.insert(m, text);
            }
        }
    }

    /// The text of a module without its tests and its comments.
    fn code(text: &str) -> String {
        let text = text.split("#[cfg(test)]").next().unwrap_or_default();
        text.lines()
            .map(|l| l.split("//").next().unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The paths a module names after `crate::` or `super::`: each as
    /// the segments after the prefix, a `use` group split into its
    /// members; `super` climbs from `module`.
    fn paths(module: &str, code: &str) -> Vec<Vec<String>> {
        let here: Vec<&str> = module.split("::").filter(|s| !s.is_empty()).collect();
        let mut out = Vec::new();
        let words = code
            .replace("{", " { ")
            .replace("}", " } ")
            .replace(",", " , ");
        let mut rest = words.as_str();
        while let Some(at) = rest
            .find("crate::")
            .into_iter()
            .chain(rest.find("super::"))
            .min()
        {
            let before = rest[..at].chars().next_back();
            let tail = &rest[at..];
            rest = &rest[at + 7..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let mut base: Vec<String> = Vec::new();
            let mut t = tail;
            if t.starts_with("crate::") {
                t = &t[7..];
            } else {
                let mut up = 0;
                while let Some(r) = t.strip_prefix("super::") {
                    up += 1;
                    t = r;
                }
                let keep = here.len().saturating_sub(up);
                base = here[..keep].iter().map(|s| (*s).to_owned()).collect();
            }
            out.extend(expand(base, t.trim_start()));
        }
        out
    }

    /// `a::b::{c, d::e}` after a prefix, as whole paths.
    fn expand(mut base: Vec<String>, text: &str) -> Vec<Vec<String>> {
        let ident = |s: &str| -> String {
            s.chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect()
        };
        let mut t = text;
        loop {
            if let Some(group) = t.strip_prefix('{') {
                let end = group.find('}').unwrap_or(group.len());
                return group[..end]
                    .split(',')
                    .map(|m| {
                        let mut p = base.clone();
                        p.extend(
                            m.split("::")
                                .map(|s| ident(s.trim()))
                                .filter(|s| !s.is_empty()),
                        );
                        p
                    })
                    .collect();
            }
            let word = ident(t);
            if word.is_empty() {
                return vec![base];
            }
            base.push(word.clone());
            t = &t[word.len()..];
            match t.strip_prefix("::") {
                Some(r) => t = r.trim_start(),
                None => return vec![base],
            }
        }
    }

    /// The crate's module graph.
    pub fn graph(src: &Path) -> Graph {
        let mut texts = BTreeMap::new();
        walk(src, src, &mut texts);
        let mut graph = Graph::new();
        for (module, text) in &texts {
            let mut reached = BTreeSet::new();
            for mut path in paths(module, &code(text)) {
                // The longest prefix that is a module.
                while !path.is_empty() && !texts.contains_key(&path.join("::")) {
                    path.pop();
                }
                let target = path.join("::");
                if &target != module {
                    reached.insert(target);
                }
            }
            graph.insert(module.clone(), reached);
        }
        graph
    }

    /// Each circle, as the modules around it (the first repeated last).
    pub fn circles(graph: &Graph) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        let mut done = BTreeSet::new();
        for start in graph.keys() {
            let mut path = vec![start.clone()];
            if let Some(circle) = around(graph, start, &mut path, &mut BTreeSet::new()) {
                let key: BTreeSet<String> = circle.iter().cloned().collect();
                if done.insert(key.into_iter().collect::<Vec<_>>()) {
                    out.push(circle);
                }
            }
        }
        out
    }

    /// A path from the last module of `path` back to `start`, if any.
    fn around(
        graph: &Graph,
        start: &str,
        path: &mut Vec<String>,
        seen: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        let at = path.last()?.clone();
        for next in graph.get(&at).into_iter().flatten() {
            if next == start {
                let mut circle = path.clone();
                circle.push(start.to_owned());
                return Some(circle);
            }
            if seen.insert(next.clone()) {
                path.push(next.clone());
                if let Some(c) = around(graph, start, path, seen) {
                    return Some(c);
                }
                path.pop();
            }
        }
        None
    }

    #[test]
    fn paths_are_read_with_their_groups_and_supers() {
        let code = "use crate::a::{b, c::d};\nuse super::e::F;\nfn f() { crate::g::h(); }";
        let got = paths("x::y", code);
        let want: Vec<Vec<&str>> = vec![
            vec!["a", "b"],
            vec!["a", "c", "d"],
            vec!["x", "e", "F"],
            vec!["g", "h"],
        ];
        assert_eq!(got, want);
    }
}

/// Binary files still to be routed through the service's review model
/// (issue 42, part 2): listed one by one so that no other file opens a
/// store; a listed file that no longer does fails the test.
const STORES_TO_ROUTE: &[&str] = &[];

/// The binary is glue: outside tests it opens no store, reads no project
/// file and names no path under `.mend`; the service does those, with
/// the one root rule.
#[test]
fn the_binary_opens_no_store() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let banned = [
        "Workspace::open",
        "Session::existing",
        "Session::open",
        "Checkpoints::open",
        "Turns::open",
        "std::fs::",
        "\".mend/",
    ];
    let mut found = Vec::new();
    let mut still = Vec::new();
    let mut checked = 0;
    for path in library_sources(&root) {
        let name = relative(&root, &path);
        if !name.starts_with("crates/mend/src/") {
            continue;
        }
        checked += 1;
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        let hits: Vec<String> = code
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim_start().starts_with("//"))
            .filter(|(_, l)| banned.iter().any(|b| l.contains(b)))
            .map(|(n, l)| format!("{name}:{}: {}", n + 1, l.trim()))
            .collect();
        if STORES_TO_ROUTE.contains(&name.as_str()) {
            if hits.is_empty() {
                still.push(name);
            }
        } else {
            found.extend(hits);
        }
    }
    assert!(checked >= 10, "only {checked} binary sources found");
    assert!(
        still.is_empty(),
        "these files open no store any more; take them off STORES_TO_ROUTE: {still:?}"
    );
    assert!(
        found.is_empty(),
        "the binary opens stores itself; call the service instead:\n{}",
        found.join("\n")
    );
}
