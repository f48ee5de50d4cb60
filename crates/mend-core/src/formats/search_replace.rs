//! SEARCH/REPLACE blocks: aider, Roo Code and Cline dialects.
//!
//! # Grammar
//!
//! ```text
//! response  := { prose | block }
//! block     := [path-line] [fence-open] open [hints] search divider replace close [fence-close]
//! path-line := a line naming the file, e.g. `src/app.py`, `**src/app.py**`,
//!              `` `src/app.py` ``, `File: src/app.py`, `<path>src/app.py</path>`
//! open      := "<<<<<<< SEARCH" | "------- SEARCH"          (5–9 `<`, 3–9 `-`)
//! hints     := { ":start_line:" N | ":end_line:" N } ["-------"]     (Roo)
//! divider   := "======="                                    (exactly 7 `=`)
//! close     := ">>>>>>> REPLACE" | "+++++++ REPLACE"        (5–9 `>`, 3–9 `+`)
//! ```
//!
//! Markers are whole lines; surrounding whitespace is ignored, anything else
//! on the line makes it content. The block's file is the nearest path-like
//! line above it (skipping blank lines and a fence opening); a block with no
//! path line above it continues the previous block's file, which is how
//! aider writes several blocks for one file in one fence.
//!
//! # Tolerated deviations
//!
//! - Roo's `:start_line:N` becomes a start-line hint; `:end_line:N` is
//!   accepted and ignored; the `-------` line after them is optional.
//! - Cline's `------- SEARCH` / `+++++++ REPLACE` and aider's
//!   `<<<<<<< SEARCH` / `>>>>>>> REPLACE` may be mixed; models do.
//! - A content line that would read as a marker is escaped with a backslash
//!   (`\=======`, `\<<<<<<<`, `\>>>>>>>`, `\-------`, `\+++++++`,
//!   `\:start_line:`); the backslash is removed. This is how a model edits a
//!   file that itself contains merge-conflict markers.
//! - An empty SEARCH means "create this file"; it is refused later if the
//!   file exists and is not empty.
//!
//! # Errors
//!
//! Marker order is validated with seed 003's state machine, and each error
//! names the line and what was expected there, e.g. `line 7: found
//! >>>>>>> REPLACE, expected =======`.

use crate::edit::{Edit, EditOp, Hints, Origin, Replace, Target};
use crate::error::Error;

/// The name used in reports.
pub const NAME: &str = "search-replace";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Marker {
    Open,
    Divider,
    Close,
}

fn marker(line: &str) -> Option<Marker> {
    let t = line.trim();
    let run = |s: &str, c: char| s.chars().take_while(|&x| x == c).count();
    if t.len() == 7 && run(t, '=') == 7 {
        return Some(Marker::Divider);
    }
    for (c, lo, word, m) in [
        ('<', 5, "SEARCH", Marker::Open),
        ('-', 3, "SEARCH", Marker::Open),
        ('>', 5, "REPLACE", Marker::Close),
        ('+', 3, "REPLACE", Marker::Close),
    ] {
        let n = run(t, c);
        if (lo..=9).contains(&n) {
            let rest = t[n..].trim_start();
            let rest = rest
                .strip_suffix('>')
                .or_else(|| rest.strip_suffix('<'))
                .unwrap_or(rest);
            if rest == word {
                return Some(m);
            }
        }
    }
    None
}

/// Whether the text contains at least one SEARCH marker line.
pub fn looks_like(text: &str) -> bool {
    text.lines().any(|l| marker(l) == Some(Marker::Open))
}

fn unescape(line: &str) -> String {
    for m in [
        "\\<<<<<<<",
        "\\=======",
        "\\>>>>>>>",
        "\\-------",
        "\\+++++++",
        "\\:start_line:",
        "\\:end_line:",
    ] {
        if let Some(rest) = line.strip_prefix(m) {
            return format!("{}{rest}", &m[1..]);
        }
    }
    line.to_owned()
}

fn is_fence(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("```") || t.starts_with("~~~")
}

/// Extracts a file path from a line above a block, if it looks like one.
pub(crate) fn path_from_line(line: &str) -> Option<String> {
    let mut t = line.trim();
    if let Some(inner) = t
        .strip_prefix("<path>")
        .and_then(|r| r.strip_suffix("</path>"))
    {
        return non_empty(inner.trim());
    }
    // A backticked token wins: "Edit `src/a b.py`:".
    if let Some(start) = t.find('`') {
        let rest = &t[start + 1..];
        if let Some(end) = rest.find('`') {
            let inner = rest[..end].trim();
            if looks_like_path(inner, true) {
                return Some(inner.to_owned());
            }
        }
    }
    t = t.trim_start_matches('#').trim();
    for prefix in [
        "File:",
        "file:",
        "Path:",
        "path:",
        "Filename:",
        "filename:",
        "FILE:",
    ] {
        if let Some(r) = t.strip_prefix(prefix) {
            t = r.trim();
        }
    }
    let t = t
        .trim_matches(|c| c == '*' || c == '`' || c == '"' || c == '\'')
        .trim_end_matches(':')
        .trim_matches(|c| c == '*' || c == '`')
        .trim();
    looks_like_path(t, false).then(|| t.to_owned())
}

fn non_empty(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_owned())
}

fn looks_like_path(s: &str, quoted: bool) -> bool {
    if s.is_empty() || s.len() > 4096 || marker(s).is_some() {
        return false;
    }
    if s.chars().any(char::is_control) {
        return false;
    }
    if !quoted && s.chars().any(char::is_whitespace) {
        return false;
    }
    // Prose rarely ends like a path; a path has a dot, a slash, or is a
    // well-known extensionless file name.
    let last = s.rsplit(['/', '\\']).next().unwrap_or(s);
    let bare_names = [
        "Makefile",
        "Dockerfile",
        "LICENSE",
        "README",
        "Gemfile",
        "Rakefile",
        "Procfile",
        "Justfile",
        "Vagrantfile",
    ];
    !s.ends_with('.')
        && !s.ends_with(',')
        && (s.contains('/') || last.contains('.') || bare_names.contains(&last))
}

/// Parses every SEARCH/REPLACE block of a response.
pub fn parse(text: &str) -> Result<Vec<Edit>, Error> {
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let err = |line: usize, message: String| Error::Parse {
        format: NAME,
        line,
        message,
    };
    let mut edits = Vec::new();
    let mut last_path: Option<String> = None;
    let mut i = 0;
    while i < lines.len() {
        match marker(lines[i]) {
            None => {
                i += 1;
                continue;
            }
            Some(Marker::Divider) => {
                return Err(err(
                    i + 1,
                    "found ======= before <<<<<<< SEARCH; a block starts with <<<<<<< SEARCH (escape a content line as \\=======)".into(),
                ));
            }
            Some(Marker::Close) => {
                return Err(err(
                    i + 1,
                    format!(
                        "found {} before <<<<<<< SEARCH; every block needs <<<<<<< SEARCH, then =======, then >>>>>>> REPLACE",
                        lines[i].trim()
                    ),
                ));
            }
            Some(Marker::Open) => {}
        }
        let open = i;
        // The path: nearest non-blank line above, past one fence opening,
        // unless that line ends the previous block.
        let mut path_line = None;
        let mut j = open;
        let mut fences = 0;
        while j > 0 {
            j -= 1;
            let l = lines[j];
            if l.trim().is_empty() {
                continue;
            }
            if is_fence(l) && fences == 0 {
                fences += 1;
                continue;
            }
            if marker(l).is_none() {
                path_line = Some(j);
            }
            break;
        }
        let (path, block_start) = match path_line
            .and_then(|j| path_from_line(lines[j]).map(|p| (p, j)))
        {
            Some(found) => found,
            None => match &last_path {
                Some(p) => (p.clone(), open),
                None => {
                    return Err(err(
                        open + 1,
                        "this SEARCH block has no file path; put the path alone on the line before the block (or before its ``` fence)".into(),
                    ));
                }
            },
        };

        // Roo hints directly after the open marker.
        i = open + 1;
        let mut hints = Hints::default();
        let mut saw_hint = false;
        while i < lines.len() {
            let t = lines[i].trim();
            if let Some(n) = t.strip_prefix(":start_line:") {
                let n: usize = n.trim().parse().map_err(|_| {
                    err(
                        i + 1,
                        format!("`{t}`: expected a line number after :start_line:"),
                    )
                })?;
                hints.start_line = Some(n.max(1));
                saw_hint = true;
                i += 1;
            } else if t.starts_with(":end_line:") {
                saw_hint = true;
                i += 1;
            } else {
                break;
            }
        }
        if i < lines.len() && lines[i].trim() == "-------" && (saw_hint || i == open + 1) {
            i += 1;
        }

        let mut search: Vec<String> = Vec::new();
        loop {
            let Some(&l) = lines.get(i) else {
                return Err(err(
                    open + 1,
                    "unexpected end of input: the block opened here has no ======= line".into(),
                ));
            };
            match marker(l) {
                Some(Marker::Divider) => break,
                Some(Marker::Open) => {
                    return Err(err(
                        i + 1,
                        format!(
                            "found {}, expected ======= (the block opened at line {} is still in its SEARCH part)",
                            l.trim(),
                            open + 1
                        ),
                    ));
                }
                Some(Marker::Close) => {
                    return Err(err(
                        i + 1,
                        format!(
                            "found {}, expected ======= between the SEARCH and REPLACE parts",
                            l.trim()
                        ),
                    ));
                }
                None => search.push(unescape(l)),
            }
            i += 1;
        }
        let divider = i;
        i += 1;
        let mut replace: Vec<String> = Vec::new();
        loop {
            let Some(&l) = lines.get(i) else {
                return Err(err(
                    divider + 1,
                    "unexpected end of input: expected >>>>>>> REPLACE after this ======= line"
                        .into(),
                ));
            };
            match marker(l) {
                Some(Marker::Close) => break,
                Some(Marker::Open) => {
                    return Err(err(
                        i + 1,
                        format!("found {}, expected >>>>>>> REPLACE", l.trim()),
                    ));
                }
                Some(Marker::Divider) => {
                    return Err(err(
                        i + 1,
                        "found =======, expected >>>>>>> REPLACE (escape a content line as \\=======)"
                            .into(),
                    ));
                }
                None => {
                    let t = l.trim_start();
                    if t.starts_with(":start_line:") || t.starts_with(":end_line:") {
                        return Err(err(
                            i + 1,
                            "line markers like :start_line: belong after <<<<<<< SEARCH, not in the REPLACE part (escape content as \\:start_line:)".into(),
                        ));
                    }
                    replace.push(unescape(l));
                }
            }
            i += 1;
        }
        let close = i;
        i += 1;
        let origin = Origin {
            format: NAME.into(),
            line: block_start + 1,
            text: lines[block_start..=close].join("\n"),
        };
        let op = if search.iter().all(|l| l.trim().is_empty()) {
            let mut content = replace.join("\n");
            if !replace.is_empty() {
                content.push('\n');
            }
            EditOp::Create { content }
        } else {
            EditOp::Replace(Replace {
                target: Target::Lines { search, replace },
                replace_all: false,
                hints,
            })
        };
        edits.push(Edit {
            path: path.clone(),
            op,
            origin: Some(origin),
        });
        last_path = Some(path);
    }
    Ok(edits)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_of(e: &Edit) -> (Vec<String>, Vec<String>) {
        match &e.op {
            EditOp::Replace(Replace {
                target: Target::Lines { search, replace },
                ..
            }) => (search.clone(), replace.clone()),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn aider_block_with_fence() {
        let t = "Here is the change:\n\nsrc/app.py\n```python\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n```\n";
        let e = parse(t).unwrap();
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].path, "src/app.py");
        assert_eq!(lines_of(&e[0]), (vec!["old".into()], vec!["new".into()]));
        assert_eq!(e[0].origin.as_ref().unwrap().line, 3);
    }

    #[test]
    fn second_block_reuses_path() {
        let t = "a.py\n```\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n\n<<<<<<< SEARCH\nz\n=======\nw\n>>>>>>> REPLACE\n```";
        let e = parse(t).unwrap();
        assert_eq!(e.len(), 2);
        assert_eq!(e[1].path, "a.py");
    }

    #[test]
    fn roo_hints_and_escapes() {
        let t = "f.txt\n<<<<<<< SEARCH\n:start_line:12\n-------\n\\=======\nkeep\n=======\n\\>>>>>>> theirs\n>>>>>>> REPLACE";
        let e = parse(t).unwrap();
        let EditOp::Replace(r) = &e[0].op else {
            panic!()
        };
        assert_eq!(r.hints.start_line, Some(12));
        assert_eq!(
            lines_of(&e[0]),
            (
                vec!["=======".into(), "keep".into()],
                vec![">>>>>>> theirs".into()]
            )
        );
    }

    #[test]
    fn cline_markers() {
        let t = "lib.rs\n------- SEARCH\nfn a() {}\n=======\nfn b() {}\n+++++++ REPLACE\n";
        let e = parse(t).unwrap();
        assert_eq!(e[0].path, "lib.rs");
    }

    #[test]
    fn marker_order_errors() {
        let cases = [
            ("a.py\n=======\n", "line 2: found ======= before"),
            (
                "a.py\n<<<<<<< SEARCH\nx\n>>>>>>> REPLACE\n",
                "line 4: found >>>>>>> REPLACE, expected =======",
            ),
            (
                "a.py\n<<<<<<< SEARCH\nx\n=======\n=======\n",
                "line 5: found =======, expected >>>>>>> REPLACE",
            ),
            (
                "a.py\n<<<<<<< SEARCH\nx\n",
                "line 2: unexpected end of input",
            ),
            (
                "<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE",
                "line 1: this SEARCH block has no file path",
            ),
        ];
        for (input, want) in cases {
            let msg = parse(input).unwrap_err().to_string();
            assert!(msg.contains(want), "{input:?}: {msg}");
        }
    }

    #[test]
    fn marker_mid_line_is_content() {
        let t = "a.md\n<<<<<<< SEARCH\nx ======= y\n=======\nz\n>>>>>>> REPLACE";
        assert_eq!(lines_of(&parse(t).unwrap()[0]).0, vec!["x ======= y"]);
    }

    #[test]
    fn empty_search_creates() {
        let e = parse("new.txt\n<<<<<<< SEARCH\n=======\nhello\n>>>>>>> REPLACE").unwrap();
        assert_eq!(
            e[0].op,
            EditOp::Create {
                content: "hello\n".into()
            }
        );
    }

    #[test]
    fn path_lines() {
        assert_eq!(path_from_line("**src/a.py**").as_deref(), Some("src/a.py"));
        assert_eq!(
            path_from_line("`my dir/a.py`:").as_deref(),
            Some("my dir/a.py")
        );
        assert_eq!(
            path_from_line("File: lib/x.rs").as_deref(),
            Some("lib/x.rs")
        );
        assert_eq!(path_from_line("Here is the change.").as_deref(), None);
        assert_eq!(path_from_line("Makefile").as_deref(), Some("Makefile"));
    }
}
