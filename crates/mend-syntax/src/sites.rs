//! The errors of one parse: where each ERROR or MISSING node starts and
//! what it says.

use tree_sitter::{Node, Parser, Tree};

use crate::Language;

/// One error of a parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Site {
    /// 0-based line.
    pub line: usize,
    /// 0-based column, in characters.
    pub column: usize,
    /// 0-based line the error node ends on.
    pub end_line: usize,
    /// `missing "}"`, `unexpected "else"` or `syntax error`.
    pub problem: String,
}

/// The errors of `text`, in document order; `None` when the parser gave
/// no tree at all.
pub(crate) fn errors(lang: Language, text: &str) -> Option<Vec<Site>> {
    let tree = parse(lang, text)?;
    Some(errors_of(lang, &tree, text))
}

/// The tree of `text`; `None` without grammars or when the parser gave
/// no tree.
pub(crate) fn parse(lang: Language, text: &str) -> Option<Tree> {
    let mut parser = Parser::new();
    parser.set_language(&lang.grammar()?).ok()?;
    parser.parse(text, None)
}

/// The tree of `text`, reusing `old`: the tree of the text before, already
/// told where it changed ([`Tree::edit`]).
pub(crate) fn reparse(lang: Language, text: &str, old: &Tree) -> Option<Tree> {
    let mut parser = Parser::new();
    parser.set_language(&lang.grammar()?).ok()?;
    parser.parse(text, Some(old))
}

/// The errors of `tree`, the parse of `text`, in document order.
pub(crate) fn errors_of(lang: Language, tree: &Tree, text: &str) -> Vec<Site> {
    let mut out = Vec::new();
    collect(tree.root_node(), text, &mut out);
    if lang == Language::Css {
        // The CSS grammar, like CSS itself, recovers from an unterminated
        // string silently; a string must end on its line.
        css_strings(text, &mut out);
        out.sort_by_key(|s| (s.line, s.column));
    }
    if lang == Language::Python {
        // The Python grammar takes any indentation without an error node:
        // the layout is checked here, as Python's own tokenizer would.
        python_layout(tree.root_node(), text, &mut out);
        out.sort_by_key(|s| (s.line, s.column));
    }
    out
}

/// Strings left open at the end of their line (an escaped newline
/// continues one), outside comments.
fn css_strings(text: &str, out: &mut Vec<Site>) {
    let mut in_comment = false;
    for (row, line) in text.lines().enumerate() {
        let b = line.as_bytes();
        let mut i = 0;
        let mut open: Option<(u8, usize)> = None;
        while i < b.len() {
            match (in_comment, open) {
                (true, _) if b[i..].starts_with(b"*/") => {
                    in_comment = false;
                    i += 1;
                }
                (true, _) => {}
                (false, None) if b[i..].starts_with(b"/*") => {
                    in_comment = true;
                    i += 1;
                }
                (false, None) if b[i] == b'"' || b[i] == b'\'' => open = Some((b[i], i)),
                (false, Some((q, _))) if b[i] == q => open = None,
                (false, Some(_)) if b[i] == b'\\' => i += 1,
                _ => {}
            }
            i += 1;
        }
        if let Some((_, col)) = open
            && !line.ends_with('\\')
        {
            out.push(Site {
                line: row,
                column: line[..col].chars().count(),
                end_line: row,
                problem: "unterminated string".to_owned(),
            });
        }
    }
}

/// Python's indentation errors: an empty block ("expected an indented
/// block"), and a statement of a block that starts its own line at another
/// column than the block's first ("unexpected indent", or an unindent that
/// matches no outer level).
///
/// Only nodes that can hold a block or a clause are entered (and any
/// with an error below it), so the walk skips the expressions that are
/// most of a tree.
fn python_layout(root: Node<'_>, text: &str, out: &mut Vec<Site>) {
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        match node.kind() {
            "block" | "module" => block_layout(node, text, out),
            "else_clause"
            | "elif_clause"
            | "except_clause"
            | "except_group_clause"
            | "finally_clause" => clause_layout(node, text, out),
            _ => {}
        }
        if (PYTHON_HOLDERS.contains(&node.kind()) || node.has_error()) && cursor.goto_first_child()
        {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return;
            }
        }
    }
}

/// The Python node kinds that can hold a block or a clause, at any depth,
/// in a tree without errors: every other kind holds only expressions,
/// names and simple statements (the grammar's node types say so; a test
/// derives this list from them).
const PYTHON_HOLDERS: &[&str] = &[
    "block",
    "case_clause",
    "class_definition",
    "decorated_definition",
    "elif_clause",
    "else_clause",
    "except_clause",
    "except_group_clause",
    "finally_clause",
    "for_statement",
    "function_definition",
    "if_statement",
    "match_statement",
    "module",
    "try_statement",
    "while_statement",
    "with_statement",
];

fn block_layout(block: Node<'_>, text: &str, out: &mut Vec<Site>) {
    let mut cursor = block.walk();
    let statements: Vec<Node<'_>> = block
        .named_children(&mut cursor)
        .filter(|n| n.kind() != "comment" && !n.is_error() && !n.is_missing())
        .collect();
    let Some(first) = statements.first() else {
        // A block holding only an error, inside one, or of a statement
        // with one is that error's, reported once (an unclosed bracket
        // swallowing the rest of the file leaves a block empty past the
        // file's end).
        let of_error = block.has_error()
            || block.parent().is_some_and(|p| p.has_error())
            || inside_error(block);
        if block.kind() == "block" && !of_error {
            // Where Python reports it: the line after the header.
            out.push(Site {
                line: block.start_position().row + 1,
                column: 0,
                end_line: block.start_position().row + 1,
                problem: "expected an indented block".to_owned(),
            });
        }
        return;
    };
    let column = first.start_position().column;
    for s in &statements[1..] {
        let p = s.start_position();
        if own_line(*s, text) && p.column != column {
            out.push(Site {
                line: p.row,
                column: p.column,
                end_line: p.row,
                problem: if p.column > column {
                    "unexpected indent".to_owned()
                } else {
                    "unindent does not match the block".to_owned()
                },
            });
        }
    }
}

/// Whether `node` lies inside an error node.
fn inside_error(node: Node<'_>) -> bool {
    let mut at = node.parent();
    while let Some(n) = at {
        if n.is_error() {
            return true;
        }
        at = n.parent();
    }
    false
}

/// Error and missing nodes under `root`, not descending into an error
/// (its inner errors are one problem) nor into subtrees without errors.
/// A cursor rather than recursion: nesting depth is the input's to choose.
fn collect(root: Node<'_>, text: &str, out: &mut Vec<Site>) {
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        let descend = if node.is_missing() || node.is_error() {
            out.push(site(node, text));
            false
        } else {
            node.has_error()
        };
        if descend && cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return;
            }
        }
    }
}

fn site(node: Node<'_>, text: &str) -> Site {
    let p = node.start_position();
    let line_start = node.start_byte() - p.column;
    let column = text
        .get(line_start..node.start_byte())
        .map_or(p.column, |s| s.chars().count());
    let problem = if node.is_missing() {
        format!("missing {:?}", node.kind())
    } else {
        match first_token(node, text) {
            Some(t) => format!("unexpected {t:?}"),
            None => "syntax error".to_owned(),
        }
    };
    Site {
        line: p.row,
        column,
        end_line: node.end_position().row,
        problem,
    }
}

/// Whether `node` is the first thing on its line.
fn own_line(node: Node<'_>, text: &str) -> bool {
    let line_start = node.start_byte() - node.start_position().column;
    text.get(line_start..node.start_byte())
        .is_some_and(|before| before.trim().is_empty())
}

/// An `else:`, `elif`, `except` or `finally` on its own line must line up
/// with the statement it continues.
fn clause_layout(clause: Node<'_>, text: &str, out: &mut Vec<Site>) {
    let Some(parent) = clause.parent() else {
        return;
    };
    let (p, want) = (clause.start_position(), parent.start_position().column);
    if own_line(clause, text) && own_line(parent, text) && p.column != want {
        out.push(Site {
            line: p.row,
            column: p.column,
            end_line: p.row,
            problem: format!(
                "{:?} does not line up with its statement",
                first_word(clause, text)
            ),
        });
    }
}

fn first_word<'t>(node: Node<'_>, text: &'t str) -> &'t str {
    let s = text.get(node.start_byte()..node.end_byte()).unwrap_or("");
    s.split(|c: char| !c.is_alphanumeric()).next().unwrap_or("")
}

/// The first few characters of an error node's text, on its first line.
fn first_token(node: Node<'_>, text: &str) -> Option<String> {
    let s = text.get(node.start_byte()..node.end_byte())?;
    let line = s.lines().next()?.trim();
    if line.is_empty() {
        return None;
    }
    let cut: String = line.chars().take(24).collect();
    Some(if cut.len() < line.len() {
        format!("{cut}…")
    } else {
        cut
    })
}

#[cfg(all(test, feature = "grammars"))]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    /// The kinds that can hold a block or a clause, from the grammar's
    /// node types: the least set closed under "has a child of a kind in
    /// it", supertypes read as their subtypes.
    #[test]
    fn the_python_holders_are_what_the_grammar_says() {
        let types: Vec<serde_json::Value> =
            serde_json::from_str(tree_sitter_python::NODE_TYPES).expect("node types are JSON");
        let name = |v: &serde_json::Value| v["type"].as_str().unwrap_or_default().to_owned();
        let subtypes: BTreeMap<String, Vec<String>> = types
            .iter()
            .filter_map(|t| {
                Some((
                    name(t),
                    t["subtypes"].as_array()?.iter().map(name).collect(),
                ))
            })
            .collect();
        let expand = |k: &str| -> Vec<String> {
            let mut out = Vec::new();
            let mut todo = vec![k.to_owned()];
            while let Some(k) = todo.pop() {
                match subtypes.get(&k) {
                    Some(s) => todo.extend(s.iter().cloned()),
                    None => out.push(k),
                }
            }
            out
        };
        let children: BTreeMap<String, BTreeSet<String>> = types
            .iter()
            .map(|t| {
                let mut kids = BTreeSet::new();
                let fields = t["fields"].as_object().into_iter().flat_map(|f| f.values());
                for list in fields.chain([&t["children"]]) {
                    for k in list["types"].as_array().into_iter().flatten() {
                        kids.extend(expand(&name(k)));
                    }
                }
                (name(t), kids)
            })
            .collect();
        let mut holders: BTreeSet<String> = BTreeSet::new();
        let targets = [
            "block",
            "module",
            "else_clause",
            "elif_clause",
            "except_clause",
            "except_group_clause",
            "finally_clause",
        ];
        loop {
            let more: Vec<String> = children
                .iter()
                .filter(|(k, kids)| {
                    !holders.contains(*k)
                        && kids
                            .iter()
                            .any(|c| targets.contains(&c.as_str()) || holders.contains(c))
                })
                .map(|(k, _)| k.clone())
                .collect();
            if more.is_empty() {
                break;
            }
            holders.extend(more);
        }
        // A kind this grammar version lacks is harmless in the list; every
        // kind the grammar has that can hold one must be in it.
        for h in &holders {
            assert!(
                super::PYTHON_HOLDERS.contains(&h.as_str()),
                "{h} can hold a block"
            );
        }
    }
}
