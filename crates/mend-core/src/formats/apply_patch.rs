//! Codex's apply-patch envelope.
//!
//! # Grammar
//!
//! ```text
//! patch   := "*** Begin Patch" { file } "*** End Patch"
//! file    := "*** Add File: " path { "+" line }
//!          | "*** Delete File: " path
//!          | "*** Update File: " path [ "*** Move to: " path ] { chunk }
//! chunk   := { "@@" [ " " context-line ] } { " " line | "-" line | "+" line }
//!            [ "*** End of File" ]
//! ```
//!
//! Each chunk's context (` `) and removed (`-`) lines are the search, its
//! context and added (`+`) lines the replacement. Chunks are located with
//! the ladder, in order: each after the previous one. An `@@ <line>` names a
//! line above the chunk (a function or class header); stacked `@@` lines
//! narrow step by step, each found after the previous, and the chunk is then
//! looked for after the last. When the chunk occurs several times there,
//! the one inside that line's indented block is taken, or the chunk is
//! refused: Codex takes the first match silently, mend does not.
//! A chunk that only adds lines is inserted after its `@@` line, or, when
//! it has none, appended at the end of the file without moving the cursor
//! (Codex's semantics: a later chunk may still edit an earlier line). `*** End of File` anchors a chunk to
//! the end of the file. Removed lines must match the file's lines (up to
//! whitespace and Unicode folding), even when the chunk was found by
//! similarity.
//!
//! # Tolerated deviations
//!
//! - A heredoc wrapper (`apply_patch <<'EOF'` … `EOF`) or a shell fence
//!   around the envelope: only the envelope is read.
//! - Markers with surrounding spaces, and blank lines between them.
//! - A blank line inside a chunk is an empty context line (editors strip the
//!   lone space).
//! - A first chunk without `@@`.
//! - Blank lines after `*** End of File` (before `*** End Patch`).
//! - Context that elides code (`...`, `// ... existing code ...`): the
//!   elided lines are kept, as in a SEARCH/REPLACE block.
//! - Line numbers pasted after the `+` of added lines (`+3→    x()`),
//!   stripped or refused as on every new side
//!   (`normalize::new_side_numbers`); an `*** Add File` numbered from 1
//!   is written without them.
//!
//! Chunks climb the whole ladder, similarity included; a removed line must
//! still have a counterpart in the located region (at most a slip away), so
//! a chunk is never reported applied while its `-` lines were not removed.

use super::block::{BlockParser, Feed, PartialBlock, malformed};
use super::event::{Entry, Event};
use super::format::Format;
use crate::edit::{Edit, EditOp, Hints, Origin, Replace, Target};

/// The name used in reports.
pub const NAME: &str = Format::ApplyPatch.name();

#[derive(Default)]
struct Chunk {
    context: Vec<String>,
    body: Vec<(char, String)>,
    at_eof: bool,
    line: usize,
}

enum Current {
    None,
    Add {
        path: String,
        lines: Vec<String>,
    },
    Update {
        path: String,
        move_to: Option<String>,
        chunks: Vec<Chunk>,
    },
    /// A file section that failed; lines are skipped up to the next header.
    Broken,
}

/// An apply-patch envelope being read.
pub(crate) struct Block {
    open: usize,
    text: Vec<String>,
    file_start: usize,
    file_text: Vec<String>,
    current: Current,
}

impl Block {
    pub(crate) fn start(n: usize) -> Self {
        Block {
            open: n,
            text: vec!["*** Begin Patch".into()],
            file_start: n,
            file_text: Vec::new(),
            current: Current::None,
        }
    }

    fn edit(&self, path: &str, op: EditOp) -> Event {
        self.edit_at(path, op, self.file_start)
    }

    fn edit_at(&self, path: &str, op: EditOp, line: usize) -> Event {
        Event::Entry(Entry::Edit(Edit {
            path: path.to_owned(),
            op,
            origin: Some(Origin {
                format: Format::ApplyPatch.into(),
                line,
                text: self.file_text.join("\n").into(),
            }),
        }))
    }

    /// The first file the envelope names.
    fn first_path(&self) -> Option<String> {
        const HEADERS: [&str; 3] = ["*** Update File:", "*** Add File:", "*** Delete File:"];
        self.text.iter().find_map(|l| {
            let t = l.trim();
            HEADERS
                .iter()
                .find_map(|h| t.strip_prefix(h))
                .map(|p| p.trim().to_owned())
                .filter(|p| !p.is_empty())
        })
    }

    /// Emits the file section that just ended.
    fn close_file(&mut self) -> Vec<Event> {
        let current = std::mem::replace(&mut self.current, Current::None);
        let mut out = Vec::new();
        match current {
            Current::None | Current::Broken => {}
            Current::Add { path, lines } => {
                let mut content = lines.join("\n");
                if !lines.is_empty() {
                    content.push('\n');
                }
                out.push(self.edit(&path, EditOp::Create { content }));
            }
            Current::Update {
                path,
                move_to,
                chunks,
            } => {
                for c in chunks {
                    if c.body.is_empty() && c.context.is_empty() {
                        continue;
                    }
                    let line = c.line;
                    out.push(self.edit_at(&path, chunk_op(c), line));
                }
                if let Some(to) = move_to {
                    out.push(self.edit(&path, EditOp::Rename { to }));
                }
            }
        }
        self.file_text.clear();
        out
    }

    /// `*** Add File:`, `*** Delete File:` or `*** Update File:` ends the
    /// file before and starts the next; `None` for any other line.
    fn file_header(&mut self, n: usize, line: &str) -> Option<Vec<Event>> {
        let t = line.trim();
        let (kind, path) = [
            ("*** Add File:", 0),
            ("*** Delete File:", 1),
            ("*** Update File:", 2),
        ]
        .into_iter()
        .find_map(|(h, k)| t.strip_prefix(h).map(|p| (k, p.trim().to_owned())))?;
        let mut out = self.close_file();
        self.file_start = n;
        self.file_text.push(line.to_owned());
        if path.is_empty() {
            out.extend(self.broken(n, &format!("`{t}` names no file")));
            return Some(out);
        }
        match kind {
            0 => {
                self.current = Current::Add {
                    path,
                    lines: Vec::new(),
                }
            }
            1 => out.push(self.edit(&path, EditOp::Delete)),
            _ => {
                self.current = Current::Update {
                    path,
                    move_to: None,
                    chunks: vec![Chunk {
                        line: n + 1,
                        ..Chunk::default()
                    }],
                }
            }
        }
        Some(out)
    }

    /// Before the first file header: only blank lines.
    fn between_files(&mut self, n: usize, t: &str) -> Vec<Event> {
        if t.is_empty() {
            return Vec::new();
        }
        self.broken(
            n,
            &format!(
                "`{t}` is not a valid file header; expected `*** Add File: <path>`, `*** Delete File: <path>`, `*** Update File: <path>` or `*** End Patch`"
            ),
        )
    }

    /// In an added file: `+` lines (a blank line is an empty one).
    fn in_added_file(&mut self, n: usize, line: &str) -> Vec<Event> {
        let t = line.trim();
        let Current::Add { lines, .. } = &mut self.current else {
            return Vec::new();
        };
        if let Some(rest) = line.strip_prefix('+') {
            lines.push(rest.to_owned());
        } else if t.is_empty() {
            lines.push(String::new());
        } else {
            return self.broken(
                n,
                &format!("every line of an added file starts with `+`; found `{t}`"),
            );
        }
        Vec::new()
    }

    /// In an updated file: `*** Move to:`, `@@` chunk starts, `*** End of
    /// File`, and context, removed and added lines.
    fn in_update(&mut self, n: usize, line: &str) -> Vec<Event> {
        let t = line.trim();
        let Current::Update {
            move_to, chunks, ..
        } = &mut self.current
        else {
            return Vec::new();
        };
        if let Some(to) = t.strip_prefix("*** Move to:") {
            *move_to = Some(to.trim().to_owned());
            return Vec::new();
        }
        let chunk = chunks.last_mut().expect("an update has a chunk");
        if let Some(ctx) = line.strip_prefix("@@") {
            if !chunk.body.is_empty() {
                chunks.push(Chunk {
                    line: n,
                    ..Chunk::default()
                });
            }
            let chunk = chunks.last_mut().expect("just pushed");
            let ctx = ctx.strip_prefix(' ').unwrap_or(ctx).trim_end();
            if !ctx.trim().is_empty() {
                chunk.context.push(ctx.to_owned());
            }
            return Vec::new();
        }
        if t == "*** End of File" {
            chunk.at_eof = true;
            return Vec::new();
        }
        // Blank lines after `*** End of File` are formatting, not
        // context: nothing can follow the end of the file.
        if chunk.at_eof && t.is_empty() {
            return Vec::new();
        }
        match line.chars().next() {
            Some(c @ (' ' | '-' | '+')) => chunk.body.push((c, line[1..].to_owned())),
            None => chunk.body.push((' ', String::new())),
            Some(_) => {
                return self.broken(
                    n,
                    &format!(
                        "`{t}` is not a chunk line; in an update, lines start with ` ` (context), `-` (remove) or `+` (add), and chunks start with `@@`"
                    ),
                );
            }
        }
        Vec::new()
    }

    fn broken(&mut self, n: usize, message: &str) -> Vec<Event> {
        let path = match &self.current {
            Current::Add { path, .. } | Current::Update { path, .. } => Some(path.clone()),
            _ => None,
        };
        self.current = Current::Broken;
        vec![malformed(
            Format::ApplyPatch.into(),
            n,
            path,
            format!("line {n}: {message}"),
            &self.file_text.join("\n"),
        )]
    }
}

impl BlockParser for Block {
    fn partial(&self) -> PartialBlock {
        let path = match &self.current {
            Current::Add { path, .. } | Current::Update { path, .. } => Some(path.clone()),
            _ => None,
        };
        PartialBlock {
            format: NAME,
            path,
            start_line: self.open,
            lines: self.text.len(),
        }
    }
    fn feed(&mut self, n: usize, line: &str) -> Feed {
        self.text.push(line.to_owned());
        let t = line.trim();
        if t == "*** End Patch" {
            return Feed::Done(self.close_file());
        }
        if let Some(out) = self.file_header(n, line) {
            return Feed::More(out);
        }
        self.file_text.push(line.to_owned());
        Feed::More(match &self.current {
            Current::Broken => Vec::new(),
            Current::None => self.between_files(n, t),
            Current::Add { .. } => self.in_added_file(n, line),
            Current::Update { .. } => self.in_update(n, line),
        })
    }

    /// An envelope without `*** End Patch`: nothing in it is applied, since
    /// it may have been cut short; the report names the file it changes
    /// and says the envelope is not closed.
    fn eof(mut self, _n: usize) -> Vec<Event> {
        let text = self.text.join("\n");
        let _ = self.close_file();
        vec![malformed(
            Format::ApplyPatch.into(),
            self.open,
            self.first_path(),
            format!(
                "the patch envelope opened with `*** Begin Patch` at line {} is not closed: `*** End Patch` is missing after its last line, so the patch may have been cut short",
                self.open
            ),
            &text,
        )]
    }
}

/// The edit for one update chunk.
fn chunk_op(mut c: Chunk) -> EditOp {
    let search: Vec<String> = c
        .body
        .iter()
        .filter(|(k, _)| *k != '+')
        .map(|(_, l)| l.clone())
        .collect();
    let replace: Vec<String> = c
        .body
        .iter()
        .filter(|(k, _)| *k != '-')
        .map(|(_, l)| l.clone())
        .collect();
    let (search, replace) = if search.is_empty() {
        match c.context.pop() {
            // Only additions: insert right after the last `@@` line.
            Some(ctx) => (
                vec![ctx.clone()],
                std::iter::once(ctx).chain(replace).collect(),
            ),
            None => {
                c.at_eof = true;
                (Vec::new(), replace)
            }
        }
    } else {
        (search, replace)
    };
    EditOp::Replace(Replace {
        target: Target::Lines { search, replace },
        replace_all: false,
        hints: Hints {
            context: c.context,
            after_previous: true,
            at_eof: c.at_eof,
            exact_removals: true,
            ..Hints::default()
        },
    })
}

#[cfg(test)]
mod tests {
    use crate::formats::{Entry, Format, parse};
    use crate::{EditOp, Target};

    fn entries(t: &str) -> Vec<Entry> {
        parse(t, Format::ApplyPatch).unwrap().entries
    }

    #[test]
    fn all_operations() {
        let t = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: new.txt\n+hello\n*** Delete File: old.txt\n  *** Update File: a.py  \n*** Move to: b.py\n@@ def f():\n-    return 1\n+    return 2\n*** End Patch\nEOF\n";
        let e = entries(t);
        let ops: Vec<&EditOp> = e
            .iter()
            .map(|x| match x {
                Entry::Edit(e) => &e.op,
                Entry::Malformed(m) => panic!("{}", m.message),
            })
            .collect();
        assert!(matches!(ops[0], EditOp::Create { content } if content == "hello\n"));
        assert!(matches!(ops[1], EditOp::Delete));
        let EditOp::Replace(r) = ops[2] else { panic!() };
        assert_eq!(r.hints.context, vec!["def f():".to_owned()]);
        assert!(
            matches!(&r.target, Target::Lines { search, .. } if search == &vec!["    return 1".to_owned()])
        );
        assert!(matches!(ops[3], EditOp::Rename { to } if to == "b.py"));
    }

    #[test]
    fn pure_addition_goes_after_context() {
        let t =
            "*** Begin Patch\n*** Update File: a.py\n@@ import os\n+import sys\n*** End Patch\n";
        let Entry::Edit(e) = &entries(t)[0] else {
            panic!()
        };
        let EditOp::Replace(r) = &e.op else { panic!() };
        assert!(
            matches!(&r.target, Target::Lines { search, replace } if search == &vec!["import os".to_owned()] && replace.len() == 2)
        );
    }

    #[test]
    fn bad_lines_and_unclosed() {
        let t = "*** Begin Patch\n*** Update File: a.py\n@@\nno prefix\n";
        let e = entries(t);
        assert!(matches!(&e[0], Entry::Malformed(m) if m.message.contains("is not a chunk line")));
        assert!(matches!(&e[1], Entry::Malformed(m) if m.message.contains("is not closed")));
    }
}
