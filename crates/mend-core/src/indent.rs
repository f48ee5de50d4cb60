//! Re-basing a replacement's indentation onto the file's.
//!
//! When a whitespace-tolerant pass matched, the model's search and
//! replacement live in the model's indentation frame (wrong base depth, two
//! spaces instead of four, spaces instead of tabs, tabs expanded). New
//! replacement lines are carried into the file's frame, and everything is
//! measured in **columns**, never characters: a tab advances to the next
//! multiple of the file's tab width. The mapping that explains the matched
//! pairs (search line ↔ file line) is tried in this order:
//!
//! 1. identity: every pair has the same indentation, byte for byte;
//! 2. shift: the file is a constant number of columns deeper or shallower
//!    (the common "lost the base indentation" drift);
//! 3. scale: indentation measured in the model's unit (2, 4 or 8 columns)
//!    maps to the file's unit with a constant level offset (2-space ↔
//!    4-space, tabs expanded to 4 spaces in a file with 8-column tabs);
//! 4. otherwise the most common shift.
//!
//! The new column is then written in the file's own style ([`Style`]):
//! spaces, tabs, or GNU's tabs-then-spaces. So `\t  g ();` in a GNU file
//! (column 10) gets a sibling `\t  h ();`, whatever the model typed.

use crate::normalize::indent_of;

/// How a file writes indentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    /// Columns a tab advances to (a multiple of).
    pub tab_width: usize,
    /// Whether the file was seen to fix its tab width (files that mix
    /// space-indented and tab-indented lines, or align after tabs). A file
    /// indented only with tabs leaves the width to the pairs.
    pub tab_width_known: bool,
    /// Whether leading columns are written with tabs (then spaces for the
    /// remainder), rather than spaces only.
    pub tabs: bool,
    /// Columns per indentation level.
    pub unit: usize,
    /// Whether every indented line uses only the style's character (a file
    /// of tabs with no space-led line, or of spaces with no tab).
    pub pure: bool,
}

/// The column an indentation string reaches.
pub fn columns(indent: &str, tab_width: usize) -> usize {
    let tw = tab_width.max(1);
    indent.chars().fold(0, |col, c| match c {
        '\t' => (col / tw + 1) * tw,
        _ => col + 1,
    })
}

impl Style {
    /// Guesses a file's style from its lines.
    pub fn detect(lines: &[&str]) -> Style {
        let indents: Vec<&str> = lines
            .iter()
            .filter(|l| !l.trim().is_empty())
            .map(|l| indent_of(l))
            .filter(|i| !i.is_empty())
            .collect();
        let tab_led = indents.iter().filter(|i| i.contains('\t')).count();
        let deep_spaces = indents
            .iter()
            .filter(|i| !i.contains('\t') && i.len() >= 4)
            .count();
        let aligned_after_tab = indents.iter().any(|i| {
            let after = i.trim_start_matches('\t');
            i.starts_with('\t') && after.len() >= 4 && !after.contains('\t')
        });
        // Files that mix space-only and tab indentation (GNU style), or align
        // with spaces after tabs (Linux style), use 8-column tabs in
        // practice; a file with tabs only does not say.
        let known = tab_led > 0 && (deep_spaces > 0 || aligned_after_tab);
        let tab_width = if known || tab_led == 0 { 8 } else { 4 };
        // Tabs win when the lines deep enough to hold one mostly do.
        let spaces_past_a_tab = indents
            .iter()
            .filter(|i| !i.contains('\t') && i.len() >= tab_width)
            .count();
        let tabs = tab_led > 0 && tab_led >= spaces_past_a_tab;
        let pure = if tabs {
            indents.iter().all(|i| i.starts_with('\t'))
        } else {
            tab_led == 0
        };
        Style {
            tab_width,
            tab_width_known: known,
            tabs,
            unit: detect_unit(lines, tab_width, tabs && !known),
            pure,
        }
    }

    /// The same style with another tab width.
    fn with_tab_width(self, tab_width: usize) -> Style {
        let unit = if self.tabs && !self.tab_width_known {
            tab_width
        } else {
            self.unit
        };
        Style {
            tab_width,
            unit,
            ..self
        }
    }

    /// A new line, indented in the other character than this file's, in
    /// this file's: a model that expands tabs to spaces (or the reverse)
    /// writes its new lines that way even where it copied the file's lines
    /// exactly. Only in a file that uses one character alone; `model_unit`
    /// is the model's spaces per level.
    pub fn conform(&self, line: &str, model_unit: Option<usize>) -> String {
        let indent = indent_of(line);
        if indent.is_empty() || !self.pure {
            return line.to_owned();
        }
        let body = &line[indent.len()..];
        if self.tabs && !indent.contains('\t') {
            let Some(u) = model_unit else {
                return line.to_owned();
            };
            let n = indent.len();
            return format!("{}{}{body}", "\t".repeat(n / u), " ".repeat(n % u));
        }
        if !self.tabs && indent.contains('\t') {
            let cols: usize = indent
                .chars()
                .map(|c| if c == '\t' { self.unit } else { 1 })
                .sum();
            return format!("{}{body}", " ".repeat(cols));
        }
        line.to_owned()
    }

    /// Writes `cols` columns of indentation in this style.
    pub fn render(&self, cols: usize) -> String {
        if self.tabs {
            let tw = self.tab_width.max(1);
            "\t".repeat(cols / tw) + &" ".repeat(cols % tw)
        } else {
            " ".repeat(cols)
        }
    }
}

/// The most common positive step between consecutive non-blank lines, in
/// columns; one tab for a file indented with tabs only.
fn detect_unit(lines: &[&str], tab_width: usize, tab_only: bool) -> usize {
    if tab_only {
        return tab_width;
    }
    let mut counts = [0usize; 9];
    let mut prev: Option<usize> = None;
    for l in lines {
        if l.trim().is_empty() {
            continue;
        }
        let w = columns(indent_of(l), tab_width);
        if let Some(p) = prev
            && w > p
            && w - p <= 8
        {
            counts[w - p] += 1;
        }
        prev = Some(w);
    }
    let best = (2..=8).max_by_key(|&u| (counts[u], usize::from(u == 4)));
    match best {
        Some(u) if counts[u] > 0 => u,
        _ => 4,
    }
}

/// A mapping from the model's indentation frame to the file's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rebase {
    /// Keep replacement lines as they are.
    Identity,
    /// Add (`> 0`) or remove (`< 0`) this many columns.
    Shift {
        /// Columns to add.
        delta: isize,
        /// The file's style, to write the result in.
        style: Style,
    },
    /// Convert levels of `from` columns to levels of `to` columns, adding
    /// `levels` levels.
    Scale {
        /// The model's unit, in columns.
        from: usize,
        /// The file's unit, in columns.
        to: usize,
        /// Levels to add (may be negative).
        levels: isize,
        /// The file's style.
        style: Style,
    },
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

impl Rebase {
    /// Finds the mapping that explains `pairs` of (search line, file line)
    /// in a file of `style`. Blank lines carry no indentation information
    /// and are ignored.
    pub fn infer(pairs: &[(&str, &str)], style: Style) -> Rebase {
        let pairs: Vec<(&str, &str)> = pairs
            .iter()
            .filter(|(s, f)| !s.trim().is_empty() && !f.trim().is_empty())
            .map(|(s, f)| (indent_of(s), indent_of(f)))
            .collect();
        if pairs.iter().all(|(s, f)| s == f) {
            return Rebase::Identity;
        }
        // A file indented with tabs only does not fix the tab width: take
        // the one under which the model's frame is a plain shift.
        let widths: &[usize] = if style.tab_width_known || !style.tabs {
            &[style.tab_width]
        } else {
            &[4, 8, 2]
        };
        for &tw in widths {
            let st = style.with_tab_width(tw);
            let deltas = Self::deltas(&pairs, tw);
            if deltas.windows(2).all(|w| w[0] == w[1]) {
                return Rebase::Shift {
                    delta: deltas[0],
                    style: st,
                };
            }
        }
        let st = style.with_tab_width(widths[0]);
        let tw = st.tab_width;
        let cols: Vec<(usize, usize)> = pairs
            .iter()
            .map(|(s, f)| (columns(s, tw), columns(f, tw)))
            .collect();
        let from = cols.iter().fold(0, |g, &(m, _)| gcd(g, m));
        if (2..=8).contains(&from) && st.unit > 0 {
            let mut levels = None;
            let consistent = cols.iter().all(|&(m, f)| {
                let l = (f / st.unit) as isize - (m / from) as isize;
                f % st.unit == 0 && *levels.get_or_insert(l) == l
            });
            if consistent && let Some(levels) = levels {
                return Rebase::Scale {
                    from,
                    to: st.unit,
                    levels,
                    style: st,
                };
            }
        }
        // No mapping explains every pair: use the most common shift.
        let deltas = Self::deltas(&pairs, tw);
        let mut best = (0usize, deltas[0]);
        for &d in &deltas {
            let c = deltas.iter().filter(|&&x| x == d).count();
            if c > best.0 {
                best = (c, d);
            }
        }
        Rebase::Shift {
            delta: best.1,
            style: st,
        }
    }

    fn deltas(pairs: &[(&str, &str)], tw: usize) -> Vec<isize> {
        pairs
            .iter()
            .map(|(s, f)| columns(f, tw) as isize - columns(s, tw) as isize)
            .collect()
    }

    /// Applies the mapping to one replacement line.
    pub fn apply(&self, line: &str) -> String {
        if line.trim().is_empty() {
            return match self {
                Rebase::Identity => line.to_owned(),
                _ => String::new(),
            };
        }
        let indent = indent_of(line);
        let body = &line[indent.len()..];
        let (cols, style) = match *self {
            Rebase::Identity => return line.to_owned(),
            Rebase::Shift { delta, style } => {
                let c = columns(indent, style.tab_width) as isize + delta;
                (c.max(0) as usize, style)
            }
            Rebase::Scale {
                from,
                to,
                levels,
                style,
            } => {
                let c = columns(indent, style.tab_width);
                let level = (c / from) as isize + levels;
                (level.max(0) as usize * to + c % from, style)
            }
        };
        format!("{}{body}", style.render(cols))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spaces(unit: usize) -> Style {
        Style {
            tab_width: 8,
            tab_width_known: false,
            tabs: false,
            unit,
            pure: true,
        }
    }

    #[test]
    fn new_lines_follow_a_pure_files_character() {
        let tabs = Style::detect(&["a", "\tb", "\t\tc"]);
        assert_eq!(tabs.conform("        x", Some(4)), "\t\tx");
        assert_eq!(tabs.conform("      x", Some(4)), "\t  x");
        assert_eq!(spaces(2).conform("\tx", None), "  x");
        let gnu = Style::detect(&["a", "  b", "\t  c"]);
        assert_eq!(gnu.conform("    x", Some(4)), "    x");
    }

    #[test]
    fn shift_keeps_relative_indentation() {
        // A search and replacement indented by 2 spaces, a file by 4:
        // the same relative structure lands 2 spaces deeper.
        let r = Rebase::infer(&[("  def f():", "    def f():")], spaces(4));
        assert_eq!(r.apply("    return 1"), "      return 1");
        assert_eq!(r.apply("  def f():"), "    def f():");
    }

    #[test]
    fn spaces_to_tabs() {
        let style = Style::detect(&["a", "\tb", "\t\tc"]);
        assert!(style.tabs);
        let r = Rebase::infer(&[("if x {", "\tif x {"), ("    y();", "\t\ty();")], style);
        assert_eq!(r.apply("    z();"), "\t\tz();");
        assert_eq!(r.apply("        w();"), "\t\t\tw();");
    }

    #[test]
    fn two_to_four_spaces() {
        let r = Rebase::infer(
            &[("def f():", "def f():"), ("  x = 1", "    x = 1")],
            spaces(4),
        );
        assert_eq!(r.apply("  if x:"), "    if x:");
        assert_eq!(r.apply("    y = 2"), "        y = 2");
    }

    #[test]
    fn gnu_mixed_indentation_is_kept_in_columns() {
        let file = [
            "int",
            "main (void)",
            "{",
            "  if (x)",
            "    {",
            "      f ();",
            "\t  g ();",
            "    }",
            "}",
        ];
        let style = Style::detect(&file);
        assert_eq!((style.tab_width, style.tabs, style.unit), (8, true, 2));
        // The model expanded the tab to spaces.
        let r = Rebase::infer(
            &[
                ("      f ();", "      f ();"),
                ("          g ();", "\t  g ();"),
            ],
            style,
        );
        assert_eq!(r.apply("          h ();"), "\t  h ();");
        assert_eq!(r.apply("      k ();"), "      k ();");
    }

    #[test]
    fn kernel_tabs_with_four_space_model() {
        let file = ["int f(void)", "{", "\tif (x) {", "\t\ty();", "\t}", "}"];
        let style = Style::detect(&file);
        let r = Rebase::infer(
            &[("    if (x) {", "\tif (x) {"), ("        y();", "\t\ty();")],
            style,
        );
        assert_eq!(r.apply("            z();"), "\t\t\tz();");
    }

    #[test]
    fn detects_units() {
        assert_eq!(Style::detect(&["a", "\tb", "\t\tc"]).unit, 4);
        assert!(Style::detect(&["a", "\tb", "\t\tc"]).tabs);
        assert_eq!(Style::detect(&["a", "  b", "    c", "  d"]).unit, 2);
        assert_eq!(columns("\t  ", 8), 10);
        assert_eq!(columns("  \t", 8), 8);
    }
}
