//! Fences as CommonMark reads them, and aider's tag fences. A leaf of the
//! formats graph: `stream` tracks the open fence with it.
//!
//! - A fence opens with three or more backticks or tildes, then an optional
//!   info string (a backtick fence's info string holds no backtick). It is
//!   closed by a line of the same character, at least as long, with no info
//!   string, indented at most three columns more than the opening.
//! - Inside an open fence, a line that opens a fence with an info string
//!   (```` ```python ````) is content, as in CommonMark. When such a nested
//!   opening could be closed by a line that also closes the outer fence
//!   (same character, at least as long), the outer fence's extent is
//!   ambiguous: [`Open::ambiguous`] says so, and a whole-file write in it is
//!   refused rather than cut short. A longer outer fence (```` ```` ````)
//!   holding ```` ``` ```` fences is unambiguous.
//! - aider's alternative fences `<source>`, `<code>`, `<pre>`, `<codeblock>`
//!   and `<sourcecode>` (a tag alone on its line) open a fence that the
//!   matching closing tag ends; aider uses them when a file holds backticks.
//! - The info string may carry the file's path: ```` ```python:src/app.py ````
//!   (Cursor), ```` ```python src/app.py ```` (Continue),
//!   ```` ```tsx file="app/page.tsx" ```` (also `filename=`, `path=`,
//!   `filepath=`, `title=`), or a bare ```` ```src/app.py ```` with a folder
//!   in it. ```` ```12:15:src/app.py ```` is a citation of lines of a file
//!   (Cursor's code reference), never an edit.

use super::search_replace::looks_like_path;

/// aider's alternative fence tags.
const TAGS: [&str; 5] = ["source", "code", "pre", "codeblock", "sourcecode"];

/// What ends a fence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Closer {
    /// A run of `ch` at least `len` long, indented at most `indent + 3`.
    Run { ch: char, len: usize, indent: usize },
    /// The closing tag `</name>`.
    Tag(&'static str),
}

/// A fence opening line, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Opening {
    /// What closes it.
    pub(crate) closer: Closer,
    /// The info string's language, lowercased (empty when none).
    pub(crate) lang: String,
    /// A path the info string names.
    pub(crate) path: Option<String>,
    /// The info string cites lines of a file (`12:15:src/app.py`).
    pub(crate) citation: bool,
}

impl Opening {
    /// Whether the opening has no info string (```` ``` ```` or a tag).
    pub(crate) fn is_bare(&self) -> bool {
        self.lang.is_empty() && self.path.is_none() && !self.citation
    }
}

/// Reads a fence opening.
pub(crate) fn open(line: &str) -> Option<Opening> {
    let t = line.trim_start();
    let indent = line.len() - t.len();
    if let Some((tag, lang)) = tag_open(t.trim_end()) {
        return Some(Opening {
            closer: Closer::Tag(tag),
            lang,
            path: None,
            citation: false,
        });
    }
    let ch = t.chars().next().filter(|&c| c == '`' || c == '~')?;
    let len = t.chars().take_while(|&x| x == ch).count();
    if len < 3 {
        return None;
    }
    let info = t[len..].trim();
    if ch == '`' && info.contains('`') {
        return None;
    }
    let (lang, path, citation) = read_info(info);
    Some(Opening {
        closer: Closer::Run { ch, len, indent },
        lang,
        path,
        citation,
    })
}

/// `<source>`, or `<source>python` (aider reads any line that starts with
/// the tag as its fence).
fn tag_open(t: &str) -> Option<(&'static str, String)> {
    let (name, lang) = t.strip_prefix('<')?.split_once('>')?;
    let tag = TAGS.iter().copied().find(|tag| *tag == name)?;
    let word = |c: char| c.is_ascii_alphanumeric() || "+#-.".contains(c);
    lang.chars().all(word).then(|| (tag, lang.to_lowercase()))
}

impl Closer {
    /// Whether `line` closes a fence this closer ends.
    pub(crate) fn closes(&self, line: &str) -> bool {
        match self {
            Closer::Tag(name) => {
                let t = line.trim();
                t.strip_prefix("</")
                    .and_then(|r| r.strip_suffix('>'))
                    .is_some_and(|n| n == *name)
            }
            Closer::Run { ch, len, indent } => {
                let body = line.trim_start();
                let lead = line.len() - body.len();
                let t = body.trim_end();
                lead <= indent + 3 && t.len() >= *len && t.chars().all(|x| x == *ch)
            }
        }
    }

    /// Whether `line` opens, inside this fence, a nested fence (one with an
    /// info string) whose closing line would also close this one.
    pub(crate) fn nests(&self, line: &str) -> bool {
        let Closer::Run { ch, len, indent } = self else {
            return false;
        };
        let Some(o) = open(line) else {
            return false;
        };
        match o.closer {
            Closer::Run {
                ch: c,
                len: l,
                indent: i,
            } => c == *ch && l >= *len && i <= indent + 3 && !o.is_bare(),
            Closer::Tag(_) => false,
        }
    }
}

/// The language, a path and whether it is a citation, from an info string.
fn read_info(info: &str) -> (String, Option<String>, bool) {
    let mut words = info.split_whitespace();
    let first = words.next().unwrap_or("");
    if let Some(path) = citation(first) {
        return (String::new(), Some(path), true);
    }
    let (lang, glued) = match first.split_once(':') {
        Some((l, p)) if !l.is_empty() && !l.contains(['/', '\\', '.']) => (l, Some(p)),
        _ => (first, None),
    };
    let lang_word = lang.split(['{', ',']).next().unwrap_or("").to_lowercase();
    let path = glued
        .filter(|p| looks_like_path(p, false))
        .map(str::to_owned)
        .or_else(|| keyed_path(info))
        .or_else(|| {
            let rest: Vec<&str> = words.collect();
            match rest.as_slice() {
                [p] if looks_like_path(p, false) => Some((*p).to_owned()),
                _ => None,
            }
        });
    // A bare `src/app.py` info string: a path with a folder in it (a bare
    // `node.js` is as likely a language name as a file).
    if path.is_none()
        && glued.is_none()
        && info == first
        && first.contains('/')
        && looks_like_path(first, false)
    {
        return (String::new(), Some(first.to_owned()), false);
    }
    (lang_word, path, false)
}

/// `12:15:src/app.py`: lines 12 to 15 of a file, cited.
fn citation(word: &str) -> Option<String> {
    let mut parts = word.splitn(3, ':');
    let (a, b, p) = (parts.next()?, parts.next()?, parts.next()?);
    let numeric = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (numeric(a) && numeric(b) && !p.is_empty()).then(|| p.to_owned())
}

/// `file="app/page.tsx"`, `filename=a.py`, `path=…`, `filepath=…`,
/// `title="…"`.
fn keyed_path(info: &str) -> Option<String> {
    for key in ["file", "filename", "path", "filepath", "title"] {
        let mut rest = info;
        while let Some(i) = rest.find(key) {
            let before = rest[..i].chars().next_back();
            let after = rest[i + key.len()..].trim_start();
            rest = &rest[i + key.len()..];
            if before.is_some_and(|c| !c.is_whitespace()) {
                continue;
            }
            let Some(value) = after.strip_prefix('=') else {
                continue;
            };
            let value = value.trim_start();
            let v = match value.chars().next() {
                Some(q @ ('"' | '\'')) => value[1..].split(q).next().unwrap_or(""),
                _ => value.split_whitespace().next().unwrap_or(""),
            };
            if looks_like_path(v, true) {
                return Some(v.to_owned());
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(line: &str) -> Option<String> {
        open(line).and_then(|o| o.path)
    }

    #[test]
    fn info_string_paths() {
        assert_eq!(path("```python:src/app.py").as_deref(), Some("src/app.py"));
        assert_eq!(path("```python src/app.py").as_deref(), Some("src/app.py"));
        assert_eq!(path("```python app.py").as_deref(), Some("app.py"));
        assert_eq!(
            path("```tsx file=\"app/page.tsx\"").as_deref(),
            Some("app/page.tsx")
        );
        assert_eq!(path("```py title='a b.py'").as_deref(), Some("a b.py"));
        assert_eq!(path("```src/app.py").as_deref(), Some("src/app.py"));
        assert_eq!(path("```node.js"), None);
        assert_eq!(path("```python"), None);
        assert_eq!(path("```python {linenos=true}"), None);
        assert_eq!(path("```js copy showLineNumbers"), None);
        assert_eq!(open("```python:src/app.py").unwrap().lang, "python");
        let cite = open("```12:15:src/app.py").unwrap();
        assert!(cite.citation);
        assert_eq!(cite.path.as_deref(), Some("src/app.py"));
    }

    #[test]
    fn closing_lines() {
        let o = open("```python").unwrap();
        assert!(o.closer.closes("```"));
        assert!(o.closer.closes("````  "));
        assert!(o.closer.closes("   ```"));
        assert!(!o.closer.closes("    ```"), "four more columns is content");
        assert!(!o.closer.closes("```python"));
        assert!(!o.closer.closes("~~~"));
        let long = open("````markdown").unwrap();
        assert!(!long.closer.closes("```"));
        assert!(long.closer.closes("````"));
        let tilde = open("  ~~~").unwrap();
        assert!(tilde.closer.closes("~~~~"));
        assert!(!tilde.closer.closes("```"));
    }

    #[test]
    fn nested_openings() {
        let outer = open("```markdown").unwrap().closer;
        assert!(outer.nests("```python"));
        assert!(!outer.nests("```"), "a bare fence closes");
        assert!(!outer.nests("~~~python"));
        let longer = open("````markdown").unwrap().closer;
        assert!(!longer.nests("```python"), "its close cannot close ````");
        assert!(longer.nests("````python"));
    }

    #[test]
    fn tag_fences() {
        let o = open("<source>").unwrap();
        assert!(o.is_bare());
        assert!(o.closer.closes("</source>"));
        assert!(!o.closer.closes("```"));
        assert!(!o.closer.closes("</code>"));
        for t in ["<code>", "<pre>", "<codeblock>", "<sourcecode>"] {
            assert!(open(t).is_some(), "{t}");
        }
        assert!(open("<sources>").is_none());
        assert!(open("<source> x").is_none());
        let lang = open("<source>markdown").unwrap();
        assert_eq!(lang.lang, "markdown");
        assert!(lang.closer.closes("</source>"));
    }
}
