//! Which grammar parses which file, chosen by name.

use std::sync::OnceLock;

/// A language mend can check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Language {
    /// Python.
    Python,
    /// JavaScript, JSX included.
    JavaScript,
    /// TypeScript.
    TypeScript,
    /// TypeScript with JSX.
    Tsx,
    /// Rust.
    Rust,
    /// Go.
    Go,
    /// Java.
    Java,
    /// C.
    C,
    /// C++ (and `.h` headers, which are as often C++ as C).
    Cpp,
    /// C#.
    CSharp,
    /// Ruby.
    Ruby,
    /// PHP, with the HTML around `<?php` tags.
    Php,
    /// Bash and POSIX shell.
    Bash,
    /// JSON (comments allowed, as in `tsconfig.json`).
    Json,
    /// TOML.
    Toml,
    /// YAML.
    Yaml,
    /// HTML.
    Html,
    /// CSS.
    Css,
    /// Lua.
    Lua,
}

/// Every language, in the order of the grammar set.
const ALL: [Language; 19] = [
    Language::Python,
    Language::JavaScript,
    Language::TypeScript,
    Language::Tsx,
    Language::Rust,
    Language::Go,
    Language::Java,
    Language::C,
    Language::Cpp,
    Language::CSharp,
    Language::Ruby,
    Language::Php,
    Language::Bash,
    Language::Json,
    Language::Toml,
    Language::Yaml,
    Language::Html,
    Language::Css,
    Language::Lua,
];

impl Language {
    /// The language's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::JavaScript => "javascript",
            Language::TypeScript => "typescript",
            Language::Tsx => "tsx",
            Language::Rust => "rust",
            Language::Go => "go",
            Language::Java => "java",
            Language::C => "c",
            Language::Cpp => "cpp",
            Language::CSharp => "c_sharp",
            Language::Ruby => "ruby",
            Language::Php => "php",
            Language::Bash => "bash",
            Language::Json => "json",
            Language::Toml => "toml",
            Language::Yaml => "yaml",
            Language::Html => "html",
            Language::Css => "css",
            Language::Lua => "lua",
        }
    }

    /// The language's grammar, from the set built once per process;
    /// `None` when mend was built without grammars.
    pub(crate) fn grammar(self) -> Option<tree_sitter::Language> {
        static SET: OnceLock<Vec<Option<tree_sitter::Language>>> = OnceLock::new();
        let set = SET.get_or_init(|| ALL.iter().map(|l| l.load()).collect());
        let i = ALL.iter().position(|l| *l == self)?;
        set[i].clone()
    }

    #[cfg(feature = "grammars")]
    fn load(self) -> Option<tree_sitter::Language> {
        let f = match self {
            Language::Python => tree_sitter_python::LANGUAGE,
            Language::JavaScript => tree_sitter_javascript::LANGUAGE,
            Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT,
            Language::Tsx => tree_sitter_typescript::LANGUAGE_TSX,
            Language::Rust => tree_sitter_rust::LANGUAGE,
            Language::Go => tree_sitter_go::LANGUAGE,
            Language::Java => tree_sitter_java::LANGUAGE,
            Language::C => tree_sitter_c::LANGUAGE,
            Language::Cpp => tree_sitter_cpp::LANGUAGE,
            Language::CSharp => tree_sitter_c_sharp::LANGUAGE,
            Language::Ruby => tree_sitter_ruby::LANGUAGE,
            Language::Php => tree_sitter_php::LANGUAGE_PHP,
            Language::Bash => tree_sitter_bash::LANGUAGE,
            Language::Json => tree_sitter_json::LANGUAGE,
            Language::Toml => tree_sitter_toml_ng::LANGUAGE,
            Language::Yaml => tree_sitter_yaml::LANGUAGE,
            Language::Html => tree_sitter_html::LANGUAGE,
            Language::Css => tree_sitter_css::LANGUAGE,
            Language::Lua => tree_sitter_lua::LANGUAGE,
        };
        Some(f.into())
    }

    #[cfg(not(feature = "grammars"))]
    fn load(self) -> Option<tree_sitter::Language> {
        None
    }
}

/// The language of the file at `path`, by its extension or its name.
pub fn language_for(path: &str) -> Option<Language> {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let by_name = match name {
        "Rakefile" | "Gemfile" | "Guardfile" | "Podfile" | "Vagrantfile" => Some(Language::Ruby),
        ".bashrc" | ".bash_profile" | ".profile" | "PKGBUILD" => Some(Language::Bash),
        "Cargo.lock" | "Pipfile" | "poetry.lock" => Some(Language::Toml),
        ".clang-format" => Some(Language::Yaml),
        _ => None,
    };
    if by_name.is_some() {
        return by_name;
    }
    let (_, ext) = name.rsplit_once('.')?;
    let lang = match ext.to_ascii_lowercase().as_str() {
        "py" | "pyi" | "pyw" => Language::Python,
        "js" | "mjs" | "cjs" | "jsx" => Language::JavaScript,
        "ts" | "mts" | "cts" => Language::TypeScript,
        "tsx" => Language::Tsx,
        "rs" => Language::Rust,
        "go" => Language::Go,
        "java" => Language::Java,
        "c" => Language::C,
        "h" | "cc" | "cpp" | "cxx" | "c++" | "hh" | "hpp" | "hxx" | "h++" | "ipp" | "tpp"
        | "inl" => Language::Cpp,
        "cs" => Language::CSharp,
        "rb" | "rake" | "gemspec" | "ru" => Language::Ruby,
        "php" | "phtml" => Language::Php,
        "sh" | "bash" => Language::Bash,
        "json" | "jsonc" | "code-workspace" => Language::Json,
        "toml" => Language::Toml,
        "yaml" | "yml" => Language::Yaml,
        "html" | "htm" | "xhtml" => Language::Html,
        "css" => Language::Css,
        "lua" => Language::Lua,
        _ => return None,
    };
    Some(lang)
}

/// Why `text` must not be given to `lang`'s parser, if it must not.
///
/// The Bash grammar's scanner classifies the character after a `{` (and
/// after `{N..`) with C's `isdigit`, which is only defined up to 255: a
/// character beyond Latin-1 there reads outside the table, and can crash
/// the process. Such a file is not checked rather than risk it.
pub(crate) fn unreadable(lang: Language, text: &str) -> Option<String> {
    if lang != Language::Bash {
        return None;
    }
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '{' {
            continue;
        }
        while let Some(&d) = chars.peek() {
            if d.is_ascii_digit() || d == '.' {
                chars.next();
            } else {
                break;
            }
        }
        if chars.peek().is_some_and(|&d| u32::from(d) > 0xFF) {
            return Some(
                "the bash grammar cannot read a `{` before a character beyond Latin-1".to_owned(),
            );
        }
    }
    None
}

/// Why a file has no grammar, for the report.
pub(crate) fn no_grammar_reason(path: &str) -> String {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => format!("no grammar for .{ext} files"),
        _ => format!("no grammar for a file named {name:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_matched_by_extension_or_name() {
        assert_eq!(language_for("src/app.PY"), Some(Language::Python));
        assert_eq!(language_for("a/b/Component.tsx"), Some(Language::Tsx));
        assert_eq!(language_for("include/x.h"), Some(Language::Cpp));
        assert_eq!(language_for("Rakefile"), Some(Language::Ruby));
        assert_eq!(language_for("README.md"), None);
        assert_eq!(language_for("Makefile"), None);
        assert_eq!(no_grammar_reason("docs/a.md"), "no grammar for .md files");
        assert_eq!(
            no_grammar_reason("Makefile"),
            "no grammar for a file named \"Makefile\""
        );
    }

    #[test]
    fn bash_text_the_grammar_cannot_read_is_not_given_to_it() {
        assert!(unreadable(Language::Bash, "echo {\u{68a45}").is_some());
        assert!(unreadable(Language::Bash, "echo {1..\u{10ffff}").is_some());
        assert!(unreadable(Language::Bash, "echo {a,é} ${x}").is_none());
        assert!(unreadable(Language::Python, "{\u{68a45}").is_none());
    }

    #[cfg(feature = "grammars")]
    #[test]
    fn every_grammar_loads_into_a_parser() {
        for l in ALL {
            let g = l.grammar().expect("built with grammars");
            tree_sitter::Parser::new()
                .set_language(&g)
                .unwrap_or_else(|e| panic!("{}: {e}", l.name()));
        }
    }
}
