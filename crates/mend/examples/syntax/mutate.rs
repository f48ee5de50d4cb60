//! The edits measured on each file: a correct one (a name renamed
//! everywhere) and two broken ones (a closing bracket dropped, a string's
//! closing quote dropped), placed by a small lexer that knows each
//! language's strings and comments, so a bracket in a comment is not taken
//! for code.

use mend_syntax::Language;

/// A deterministic generator (SplitMix64), so every run measures the same
/// edits.
pub struct Rng(pub u64);

impl Rng {
    pub fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) % n.max(1) as u64) as usize
    }
}

/// One language's lexical conventions, as far as finding code goes.
struct Lexicon {
    line_comments: &'static [&'static str],
    block_comment: Option<(&'static str, &'static str)>,
    quotes: &'static [u8],
}

fn lexicon(lang: Language) -> Lexicon {
    let c_like = Lexicon {
        line_comments: &["//"],
        block_comment: Some(("/*", "*/")),
        quotes: b"\"'`",
    };
    match lang {
        Language::Python | Language::Ruby | Language::Bash | Language::Yaml | Language::Toml => {
            Lexicon {
                line_comments: &["#"],
                block_comment: None,
                quotes: b"\"'",
            }
        }
        // A `'` starts a lifetime as often as a character.
        Language::Rust => Lexicon {
            quotes: b"\"",
            ..c_like
        },
        Language::Php => Lexicon {
            line_comments: &["//", "#"],
            ..c_like
        },
        Language::Lua => Lexicon {
            line_comments: &["--"],
            block_comment: None,
            quotes: b"\"'",
        },
        Language::Json => Lexicon {
            line_comments: &["//"],
            block_comment: Some(("/*", "*/")),
            quotes: b"\"",
        },
        Language::Css => Lexicon {
            line_comments: &[],
            block_comment: Some(("/*", "*/")),
            quotes: b"\"'",
        },
        Language::Html => Lexicon {
            line_comments: &[],
            block_comment: Some(("<!--", "-->")),
            quotes: b"\"",
        },
        // A preprocessor line is text to the grammar, not code.
        Language::C | Language::Cpp => Lexicon {
            line_comments: &["//", "#"],
            ..c_like
        },
        _ => c_like,
    }
}

/// Where code is: for each byte, whether it is code (not in a string or a
/// comment), and each one-line string as (open, close) byte offsets.
struct Scan {
    closers: Vec<usize>,
    strings: Vec<(usize, usize)>,
}

fn scan(lang: Language, text: &str) -> Scan {
    let mut s = lex(lang, text);
    match lang {
        Language::Yaml => yaml_syntax(text, &mut s),
        Language::Html => s = html_syntax(text),
        _ => {}
    }
    s
}

/// Byte ranges of YAML's block scalars (`key: |` and the more indented
/// lines after it): text, whatever it holds.
fn yaml_blocks(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut block: Option<(usize, usize)> = None; // (indent, start)
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let indent = line.len() - line.trim_start().len();
        if let Some((ind, start)) = block
            && !line.trim().is_empty()
            && indent <= ind
        {
            out.push((start, at));
            block = None;
        }
        if block.is_none() {
            let code = line.split(" #").next().unwrap_or("").trim_end();
            let head = code.trim_end_matches(|c: char| c == '-' || c == '+' || c.is_ascii_digit());
            if head.ends_with(": |")
                || head.ends_with(": >")
                || head.ends_with("- |")
                || head.ends_with("- >")
            {
                block = Some((indent, at + line.len()));
            }
        }
        at += line.len();
    }
    if let Some((_, start)) = block {
        out.push((start, text.len()));
    }
    out
}

/// In YAML most brackets and quotes are text: only a flow collection that
/// starts a value, and a quote that starts a scalar, outside block
/// scalars, are syntax.
fn yaml_syntax(text: &str, s: &mut Scan) {
    let blocks = yaml_blocks(text);
    let in_block = |at: usize| blocks.iter().any(|&(a, b)| a <= at && at < b);
    s.closers.retain(|&at| !in_block(at));
    s.strings.retain(|&(open, _)| !in_block(open));
    let line_of = |at: usize| {
        let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
        (&text[start..end], start)
    };
    s.closers.retain(|&at| {
        let (line, _) = line_of(at);
        let t = line.trim_start().trim_start_matches("- ");
        [": [", ": {"].iter().any(|m| line.contains(m)) || t.starts_with(['[', '{'])
    });
    s.strings.retain(|&(open, _)| {
        let (line, start) = line_of(open);
        let before = line[..open - start].trim_end();
        before.is_empty() || before.ends_with([':', '-', '[', ',', '{'])
    });
}

/// In HTML, text is text: the syntax is a start tag's closing `>` and an
/// attribute value's quotes.
fn html_syntax(text: &str) -> Scan {
    let b = text.as_bytes();
    let mut out = Scan {
        closers: Vec::new(),
        strings: Vec::new(),
    };
    for (i, w) in b.windows(2).enumerate() {
        if w[0] == b'<' && w[1].is_ascii_alphabetic() {
            let end = b[i..].iter().position(|&c| c == b'>' || c == b'\n');
            if let Some(e) = end.filter(|&e| b[i + e] == b'>') {
                out.closers.push(i + e);
            }
        }
        if w == b"=\"" {
            let open = i + 1;
            if let Some(e) = b[open + 1..].iter().position(|&c| c == b'"' || c == b'\n')
                && b[open + 1 + e] == b'"'
                && e > 0
            {
                out.strings.push((open, open + 1 + e));
            }
        }
    }
    out
}

fn lex(lang: Language, text: &str) -> Scan {
    let lex = lexicon(lang);
    let b = text.as_bytes();
    let mut out = Scan {
        closers: Vec::new(),
        strings: Vec::new(),
    };
    let mut i = 0;
    // Bytes, not characters: every mark looked for is ASCII.
    let find = |from: usize, what: &[u8]| {
        b[from..]
            .windows(what.len())
            .position(|w| w == what)
            .map(|p| from + p)
    };
    while i < b.len() {
        let rest = &b[i..];
        if let Some((open, close)) = lex.block_comment
            && rest.starts_with(open.as_bytes())
        {
            i = find(i + open.len(), close.as_bytes()).map_or(b.len(), |e| e + close.len());
            continue;
        }
        if lex
            .line_comments
            .iter()
            .any(|c| rest.starts_with(c.as_bytes()))
        {
            i = find(i, b"\n").unwrap_or(b.len());
            continue;
        }
        let c = b[i];
        // Strings that may cross lines (Python's and TOML's triple quotes,
        // JavaScript's and Go's backticks) are skipped whole.
        if lex.quotes.contains(&c) && (c == b'`' || rest.starts_with(&[c, c, c])) {
            let mark = if c == b'`' { vec![c] } else { vec![c, c, c] };
            i = find(i + mark.len(), &mark).map_or(b.len(), |e| e + mark.len());
            continue;
        }
        if lex.quotes.contains(&c) {
            let mut j = i + 1;
            while j < b.len() && b[j] != c && b[j] != b'\n' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            if j < b.len() && b[j] == c {
                if j > i + 1 {
                    out.strings.push((i, j));
                }
                i = j + 1;
            } else {
                i = j;
            }
            continue;
        }
        if matches!(c, b')' | b']' | b'}') {
            out.closers.push(i);
        }
        i += 1;
    }
    out
}

/// `text` with the byte at `at` removed, and the 0-based line it was on.
fn without(text: &str, at: usize) -> (String, usize) {
    let mut s = String::with_capacity(text.len());
    s.push_str(&text[..at]);
    s.push_str(&text[at + 1..]);
    (s, text[..at].matches('\n').count())
}

/// The file with one closing bracket of its code dropped.
pub fn drop_bracket(lang: Language, text: &str, rng: &mut Rng) -> Option<(String, usize)> {
    let s = scan(lang, text);
    let at = *s.closers.get(rng.below(s.closers.len()))?;
    Some(without(text, at))
}

/// The file with one string's closing quote dropped.
pub fn break_string(lang: Language, text: &str, rng: &mut Rng) -> Option<(String, usize)> {
    let s = scan(lang, text);
    let (_, close) = *s.strings.get(rng.below(s.strings.len()))?;
    Some(without(text, close))
}

/// Words no language here lets a name replace: keywords, contextual ones
/// included, and literals.
const KEYWORDS: &[&str] = &[
    "abstract",
    "alignas",
    "alignof",
    "and",
    "array",
    "assert",
    "async",
    "await",
    "begin",
    "bool",
    "break",
    "case",
    "catch",
    "char",
    "class",
    "const",
    "constexpr",
    "continue",
    "crate",
    "decltype",
    "declare",
    "def",
    "default",
    "defer",
    "delete",
    "done",
    "double",
    "dyn",
    "echo",
    "elif",
    "else",
    "elseif",
    "elsif",
    "empty",
    "endforeach",
    "endif",
    "ensure",
    "enum",
    "esac",
    "explicit",
    "export",
    "extends",
    "extern",
    "false",
    "final",
    "finally",
    "float",
    "for",
    "foreach",
    "friend",
    "from",
    "func",
    "function",
    "global",
    "goto",
    "impl",
    "implements",
    "import",
    "include",
    "infer",
    "inline",
    "instanceof",
    "interface",
    "isset",
    "keyof",
    "lambda",
    "let",
    "list",
    "local",
    "long",
    "loop",
    "macro_rules",
    "match",
    "module",
    "move",
    "mutable",
    "namespace",
    "new",
    "next",
    "noexcept",
    "none",
    "nonlocal",
    "not",
    "null",
    "nullptr",
    "operator",
    "override",
    "package",
    "pass",
    "permits",
    "print",
    "private",
    "protected",
    "public",
    "raise",
    "range",
    "readonly",
    "record",
    "redo",
    "register",
    "repeat",
    "require",
    "requires",
    "rescue",
    "retry",
    "return",
    "satisfies",
    "sealed",
    "select",
    "self",
    "Self",
    "short",
    "signed",
    "sizeof",
    "static",
    "static_assert",
    "struct",
    "super",
    "switch",
    "template",
    "then",
    "this",
    "throw",
    "throws",
    "trait",
    "true",
    "type",
    "typedef",
    "typename",
    "typeof",
    "undef",
    "union",
    "unless",
    "unsafe",
    "unsigned",
    "until",
    "using",
    "virtual",
    "void",
    "volatile",
    "when",
    "where",
    "while",
    "with",
    "yield",
    "None",
    "True",
    "False",
    "nil",
    "chan",
    "fallthrough",
    "interface",
    "goto",
    "ifdef",
    "ifndef",
    "endif",
    "define",
    "pragma",
    "elseif",
    "endwhile",
    "endfor",
    "endswitch",
    "declare",
    "insteadof",
    "clone",
    "callable",
    "iterable",
    "object",
    "mixed",
    "never",
    "parent",
    "get",
    "set",
    "value",
    "var",
    "base",
    "checked",
    "event",
    "fixed",
    "implicit",
    "internal",
    "lock",
    "params",
    "partial",
    "sbyte",
    "stackalloc",
    "ulong",
    "unchecked",
    "ushort",
    "volatile",
    "when",
    "init",
    "required",
    "scoped",
    "file",
    "nameof",
    "alias",
    "ascending",
    "descending",
    "orderby",
    "group",
    "join",
    "into",
    "equals",
    "function",
    "typeof",
    "__END__",
    "BEGIN",
    "END",
    "__FILE__",
    "__LINE__",
    "defined",
    "undef",
    "alias",
    "except",
    "exec",
    "strict_types",
    "ticks",
    "encoding",
    "elif",
    "fi",
];

/// A name of the file renamed everywhere it stands as a whole word: a
/// correct edit in any language. The name is picked among words of four or
/// more characters that are no keyword, not after `#` or `@` (directives,
/// at-rules, decorators) and not a tag's name.
pub fn rename(text: &str, rng: &mut Rng) -> Option<String> {
    let words = word_spans(text);
    let names: Vec<&str> = words
        .iter()
        .map(|&(s, e)| &text[s..e])
        .filter(|w| w.len() >= 4 && !KEYWORDS.contains(w))
        .filter(|w| !w.starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    let name = *names.get(rng.below(names.len()))?;
    let special = words.iter().any(|&(s, e)| {
        &text[s..e] == name && {
            let before = &text[..s];
            before.ends_with('#')
                || before.ends_with('@')
                || before.ends_with('<')
                || before.ends_with("</")
                || before.ends_with('%')
        }
    });
    if special {
        return None;
    }
    let mut out = String::with_capacity(text.len() + 64);
    let mut last = 0;
    for &(s, e) in &words {
        if &text[s..e] == name {
            out.push_str(&text[last..e]);
            out.push_str("_x");
            last = e;
        }
    }
    out.push_str(&text[last..]);
    Some(out)
}

/// Every maximal run of identifier characters.
fn word_spans(text: &str) -> Vec<(usize, usize)> {
    let is_word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if is_word(b[i]) {
            let s = i;
            while i < b.len() && is_word(b[i]) {
                i += 1;
            }
            out.push((s, i));
        } else {
            i += 1;
        }
    }
    out
}
