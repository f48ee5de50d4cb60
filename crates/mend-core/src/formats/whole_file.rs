//! Whole-file writes: aider's "whole" format, and the fences of a response
//! that name a file.
//!
//! # Grammar
//!
//! ```text
//! block := path-line fence-open { line } fence-close
//!        | fence-open-naming-the-path { line } fence-close
//! ```
//!
//! The fence holds the entire new content of the file named on the line
//! above it (blank lines between are allowed) or in its info string
//! (```` ```python:src/app.py ````, see `fence.rs`). A `write_to_file` tool
//! call is one too (`tool_call.rs`).
//!
//! # Safety
//!
//! - The path line is the path alone (optionally in backticks or bold,
//!   after a `File:` label, with a trailing colon), so prose like "Edit
//!   `src/style.css` like this:" over a fence is an example, never a file.
//! - In auto-detection the write is *inferred*: the planner writes it over
//!   an existing file only when the fence evidently holds that whole file;
//!   an unchanged excerpt is a snippet, anything else is refused
//!   (`plan/whole.rs`). With `--format whole-file` (or a `write_to_file`
//!   call, or `write_file` JSON) it is explicit and written as sent.
//! - Fences in a shell, diff or JSON language are never whole files, unless
//!   the info string itself names the file; a citation (```` ```12:15:a.py ````)
//!   never is.
//! - A fence that is never closed, or whose extent nested fences make
//!   ambiguous, is malformed: the content may be cut short.
//! - Content that elides code (`# ... existing code ...`) is refused when
//!   planned, because writing it would delete that code.

use super::format::Format;
use super::search_replace::spaced_path;
use crate::edit::{Edit, EditOp, Origin};

/// The name used in reports.
pub const NAME: &str = Format::WholeFile.name();

/// A path on a line of its own: `src/a.py`, `` `src/a.py` ``, `**src/a.py**`,
/// `src/a.py:`, `File: src/a.py`. Prose around it disqualifies the line.
pub(crate) fn path_only(line: &str) -> Option<String> {
    let mut t = line.trim().trim_start_matches('#').trim();
    t = t.trim_matches(|c| c == '*' || c == '`').trim();
    for label in [
        "File:",
        "file:",
        "Path:",
        "path:",
        "Filename:",
        "filename:",
        "FILE:",
    ] {
        if let Some(rest) = t.strip_prefix(label) {
            t = rest.trim_start_matches(['*', ' ']).trim();
        }
    }
    let t = t
        .trim_matches(|c| c == '*' || c == '`')
        .trim_end_matches(':')
        .trim_matches(|c| c == '*' || c == '`');
    if t.is_empty() || (t.chars().any(char::is_whitespace) && !spaced_path(t)) {
        return None;
    }
    super::search_replace::path_from_line(t)
}

/// The edit for a fence holding a whole file; `inferred` when the write
/// was read from a path line in `auto` (the planner then writes it only
/// where it is evidently the whole file).
pub(crate) fn edit(path: &str, line: usize, content: &[String], inferred: bool) -> Edit {
    let mut text = content.join("\n");
    if !content.is_empty() {
        text.push('\n');
    }
    // Quoted in a fence longer than any backtick run the content starts a
    // line with, so the quote reads back whole.
    let run = content
        .iter()
        .map(|l| l.trim_start().chars().take_while(|&c| c == '`').count())
        .max()
        .unwrap_or(0);
    let fence = "`".repeat(run.max(2) + 1);
    Edit {
        path: path.to_owned(),
        op: EditOp::WriteFile {
            content: text.clone(),
            inferred,
        },
        origin: Some(Origin {
            format: Format::WholeFile.into(),
            line,
            text: format!("{path}\n{fence}\n{text}{fence}").into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::{Format, parse};

    #[test]
    fn path_alone_only() {
        assert_eq!(path_only("src/app.py").as_deref(), Some("src/app.py"));
        assert_eq!(path_only("**`src/app.py`**").as_deref(), Some("src/app.py"));
        assert_eq!(path_only("Here is `src/app.py`:"), None);
        assert_eq!(
            path_only("**File:** src/app.py").as_deref(),
            Some("src/app.py")
        );
        assert_eq!(
            path_only("File: `src/app.py`").as_deref(),
            Some("src/app.py")
        );
        assert_eq!(path_only("3. Edit `webpack.config.js` like this:"), None);
    }

    #[test]
    fn whole_file_in_auto_but_not_snippets() {
        let t = "src/app.py\n```python\nprint(1)\n```\n\nAnd call it like `src/app.py`:\n```python\nrun()\n```\n";
        let p = parse(t, Format::Auto).unwrap();
        let e: Vec<&Edit> = p.edits().collect();
        assert_eq!(e.len(), 1);
        assert!(
            matches!(&e[0].op, EditOp::WriteFile { content, inferred: true } if content == "print(1)\n")
        );
    }

    #[test]
    fn shell_fences_are_suggestions() {
        let t = "a.txt\n```\nx\n```\n```bash\n$ git add a.txt\ncargo test\n```\n";
        let p = parse(t, Format::Auto).unwrap();
        assert_eq!(p.shell.len(), 2);
        assert_eq!(p.shell[0].command, "git add a.txt");
    }
}
