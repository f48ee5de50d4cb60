//! Syntax findings as data: what the check after planning found, and how a
//! person or a model reads it. The check itself (tree-sitter grammars)
//! lives in `mend-syntax`; the report only carries its results.

use serde::{Deserialize, Serialize};

/// What to do when an apply would leave a file that no longer parses.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum SyntaxPolicy {
    /// Write the edits and report the findings.
    #[default]
    Warn,
    /// Write nothing when there is a finding; the apply fails.
    Refuse,
    /// Do not check.
    Off,
}

/// A syntax error that the planned edits introduced into a file that
/// parsed before them (or into a file they create).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SyntaxFinding {
    /// The file, as the edits named it.
    pub path: String,
    /// The grammar that parsed it (`python`, `tsx`, …).
    pub language: String,
    /// 1-based line in the planned text.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// What the parser found: `missing "}"`, `unexpected "else"`, or
    /// `syntax error`.
    pub problem: String,
    /// The edit whose replacement contains or precedes the position, when
    /// one can be named: its 0-based `index` in the edit reports. Kept for
    /// tools that read it; `edit_number` says the same 1-based, as every
    /// other position in a report is.
    pub edit: Option<usize>,
    /// The same edit's number, 1-based (`#1`, as the text shows it).
    pub edit_number: Option<usize>,
    /// A few numbered lines of the planned text around the position, the
    /// position's line marked with `>`.
    pub excerpt: String,
    /// The edits create the file (there was no text before).
    pub new_file: bool,
    /// The text before already had syntax errors: this one is new, on or
    /// next to a changed line, but the file did not parse before either.
    pub had_errors: bool,
}

/// A changed file the check did not look at, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SyntaxUnchecked {
    /// The file.
    pub path: String,
    /// Why: no grammar for its kind of file, too large, not built in.
    pub reason: String,
}

impl SyntaxFinding {
    /// The finding's heading line and excerpt, the heading starting with
    /// `word` (`WARNING` when the edits were written, `REFUSED` when not).
    pub fn render(&self, word: &str) -> String {
        let path = crate::text::escape_controls(&self.path);
        let by = self
            .edit
            .map_or(String::new(), |e| format!(" after edit #{}", e + 1));
        format!(
            "{word} {path}:{}:{}: {} ({} syntax){by}\n{}",
            self.line, self.column, self.problem, self.language, self.excerpt
        )
    }
}

/// Findings as blocks a model can act on: each with its excerpt, and after
/// each file's findings what to do about them.
pub fn render_findings(findings: &[SyntaxFinding], word: &str) -> String {
    let mut out = String::new();
    for (i, f) in findings.iter().enumerate() {
        out.push_str(&f.render(word));
        if findings.get(i + 1).is_some_and(|n| n.path == f.path) {
            continue;
        }
        let mut edits: Vec<usize> = findings
            .iter()
            .filter(|g| g.path == f.path)
            .filter_map(|g| g.edit)
            .collect();
        edits.dedup();
        let which = match edits.as_slice() {
            [] => "the edits".to_owned(),
            [e] => format!("edit #{}", e + 1),
            many => {
                let n: Vec<String> = many.iter().map(|e| format!("#{}", e + 1)).collect();
                format!("edits {}", n.join(", "))
            }
        };
        let what = if f.new_file {
            "The new file does not parse."
        } else if f.had_errors {
            "The file did not parse before this apply either, but this error is new, on or next to a changed line."
        } else {
            "The file parsed before this apply and does not after it."
        };
        out.push_str(&format!(
            "{what} Check {which} for a dropped closing bracket or brace, an unterminated string, a line indented to the wrong level, or a placeholder such as `...` pasted as code, and send a corrected edit.\n"
        ));
    }
    out
}

/// The retry-style section for findings that refused an apply.
pub fn render_refusal(findings: &[SyntaxFinding]) -> String {
    let files = {
        let mut p: Vec<&str> = findings.iter().map(|f| f.path.as_str()).collect();
        p.dedup();
        p.len()
    };
    format!(
        "The edits applied, but {} would no longer parse, so no file was changed (syntax check: refuse). Fix the edits below and send all of the edits again.\n\n{}",
        if files == 1 {
            "one file".to_owned()
        } else {
            format!("{files} files")
        },
        render_findings(findings, "REFUSED")
    )
}

/// Numbered lines of `text` around 1-based `line`, two either side, the
/// line itself marked.
pub fn excerpt(text: &str, line: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let first = line.saturating_sub(2).max(1);
    let last = (line + 2).min(lines.len().max(line));
    let width = last.to_string().len();
    let mut out = String::new();
    for n in first..=last {
        let body = lines.get(n - 1).copied().unwrap_or("");
        let mark = if n == line { '>' } else { ' ' };
        let shown = crate::text::escape_controls(clip(body));
        out.push_str(&format!("{mark} {n:>width$} | {shown}\n"));
    }
    out
}

/// A line cut to a readable length (a minified file's one line can be
/// megabytes long).
fn clip(line: &str) -> &str {
    const MAX: usize = 240;
    match line.char_indices().nth(MAX) {
        Some((i, _)) => &line[..i],
        None => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpt_marks_the_line_and_stops_at_the_ends() {
        let text = "a\nb\nc\nd\ne\nf\n";
        assert_eq!(excerpt(text, 1), "> 1 | a\n  2 | b\n  3 | c\n");
        assert_eq!(excerpt(text, 6), "  4 | d\n  5 | e\n> 6 | f\n");
        // A position past the last line (a missing token at the end).
        assert_eq!(excerpt("a\n", 2), "  1 | a\n> 2 | \n");
    }

    #[test]
    fn a_finding_names_its_edit() {
        let f = SyntaxFinding {
            path: "a.py".into(),
            language: "python".into(),
            line: 2,
            column: 5,
            problem: "missing \")\"".into(),
            edit: Some(0),
            edit_number: Some(1),
            excerpt: "> 2 | x(\n".into(),
            new_file: false,
            had_errors: false,
        };
        let g = SyntaxFinding {
            line: 3,
            edit: Some(2),
            edit_number: Some(3),
            ..f.clone()
        };
        let r = render_findings(&[f, g], "WARNING");
        assert!(r.starts_with(
            "WARNING a.py:2:5: missing \")\" (python syntax) after edit #1\n> 2 | x(\nWARNING a.py:3:5"
        ));
        assert_eq!(r.matches("Check edits #1, #3 for").count(), 1);
    }
}
