//! Whole-file writes: aider's "whole" format.
//!
//! # Grammar
//!
//! ```text
//! block := path-line fence-open { line } fence-close
//! ```
//!
//! The fence holds the entire new content of the file named on the line
//! above it (blank lines between are allowed).
//!
//! # Safety
//!
//! - In auto-detection, the path line must be the path alone (optionally in
//!   backticks or bold), so prose like "Here is the change to `a.py`:"
//!   followed by a snippet is never taken for a whole file. With
//!   `--format whole-file`, any line that names a path will do.
//! - Fences in a shell, diff or JSON language are never whole files.
//! - A fence that is never closed is malformed: the content may be cut short.
//! - Content that elides code (`# ... existing code ...`) is refused when
//!   planned, because writing it would delete that code.

use super::format::Format;
use super::search_replace::spaced_path;
use crate::edit::{Edit, EditOp, Origin};

/// The name used in reports.
pub const NAME: &str = Format::WholeFile.name();

/// A path on a line of its own: `src/a.py`, `` `src/a.py` ``, `**src/a.py**`,
/// `src/a.py:`. Prose around it disqualifies the line.
pub(crate) fn path_only(line: &str) -> Option<String> {
    let t = line.trim().trim_start_matches('#').trim();
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
