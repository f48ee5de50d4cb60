//! Re-basing a replacement's indentation onto the file's.
//!
//! When a whitespace-tolerant pass matched, the model's search and
//! replacement live in the model's indentation frame (wrong base depth, two
//! spaces instead of four, spaces instead of tabs). New replacement lines are
//! carried into the file's frame by the mapping that explains the matched
//! pairs (search line ↔ file line), tried in this order:
//!
//! 1. identity: every pair has the same indentation;
//! 2. offset: the file is a constant number of the same character deeper or
//!    shallower (the common "lost the base indentation" drift);
//! 3. levels: indentation measured in units (a tab, or 2/3/4/8 spaces) maps
//!    to the file's unit with a constant level offset (tabs ↔ spaces,
//!    2-space ↔ 4-space);
//! 4. otherwise the most common offset, as seed 003 does with its first line.
//!
//! Relative indentation inside the replacement is always kept.

use crate::normalize::indent_of;

/// An indentation unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// One tab per level.
    Tab,
    /// This many spaces per level.
    Spaces(usize),
}

/// Guesses a file's indentation unit from its lines.
pub fn detect_unit(lines: &[&str]) -> Unit {
    let tabs = lines.iter().filter(|l| l.starts_with('\t')).count();
    let spaces = lines.iter().filter(|l| l.starts_with(' ')).count();
    if tabs > spaces {
        return Unit::Tab;
    }
    // The most common positive step between consecutive non-blank lines.
    let mut counts = [0usize; 9];
    let mut prev: Option<usize> = None;
    for l in lines {
        if l.trim().is_empty() {
            continue;
        }
        let w = indent_of(l).chars().filter(|&c| c == ' ').count();
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
        Some(u) if counts[u] > 0 => Unit::Spaces(u),
        _ => Unit::Spaces(4),
    }
}

/// Levels and leftover spaces of an indent in a unit.
fn levels(indent: &str, unit: Unit) -> (usize, usize) {
    match unit {
        Unit::Tab => {
            let tabs = indent.chars().take_while(|&c| c == '\t').count();
            let rest = indent[tabs..].chars().filter(|&c| c == ' ').count();
            // Spaces before a tab are noise; count stray tabs as levels.
            let stray = indent[tabs..].chars().filter(|&c| c == '\t').count();
            (tabs + stray, rest)
        }
        Unit::Spaces(n) => {
            let w: usize = indent.chars().map(|c| if c == '\t' { n } else { 1 }).sum();
            (w / n, w % n)
        }
    }
}

fn render(levels: usize, extra: usize, unit: Unit) -> String {
    match unit {
        Unit::Tab => "\t".repeat(levels) + &" ".repeat(extra),
        Unit::Spaces(n) => " ".repeat(levels * n + extra),
    }
}

/// A mapping from the model's indentation frame to the file's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rebase {
    /// Keep replacement lines as they are.
    Identity,
    /// Add (`> 0`) or remove (`< 0`) this many leading characters; added
    /// characters are `fill`.
    Offset {
        /// Characters to add or remove.
        delta: isize,
        /// The indentation the file uses where characters are added.
        fill: String,
    },
    /// Convert between units with a level offset.
    Levels {
        /// The model's unit.
        from: Unit,
        /// The file's unit.
        to: Unit,
        /// Levels to add (may be negative).
        delta: isize,
    },
}

impl Rebase {
    /// Finds the mapping that explains `pairs` of (search line, file line).
    /// Blank lines carry no indentation information and are ignored.
    pub fn infer(pairs: &[(&str, &str)], file_unit: Unit) -> Rebase {
        let pairs: Vec<(&str, &str)> = pairs
            .iter()
            .filter(|(s, f)| !s.trim().is_empty() && !f.trim().is_empty())
            .map(|(s, f)| (indent_of(s), indent_of(f)))
            .collect();
        if pairs.iter().all(|(s, f)| s == f) {
            return Rebase::Identity;
        }
        let same_char = |a: &str, b: &str| {
            let mut cs = a.chars().chain(b.chars());
            match cs.next() {
                None => true,
                Some(c0) => cs.all(|c| c == c0),
            }
        };
        let width = |s: &str| s.chars().count() as isize;
        let deltas: Vec<isize> = pairs.iter().map(|(s, f)| width(f) - width(s)).collect();
        let fill = pairs
            .iter()
            .map(|(_, f)| *f)
            .max_by_key(|f| f.len())
            .unwrap_or("")
            .to_owned();
        if pairs.iter().all(|(s, f)| same_char(s, f)) && deltas.windows(2).all(|w| w[0] == w[1]) {
            return Rebase::Offset {
                delta: deltas[0],
                fill,
            };
        }
        for from in [
            Unit::Tab,
            Unit::Spaces(4),
            Unit::Spaces(2),
            Unit::Spaces(8),
            Unit::Spaces(3),
        ] {
            let mut delta = None;
            let consistent = pairs.iter().all(|(s, f)| {
                let (ls, es) = levels(s, from);
                let (lf, ef) = levels(f, file_unit);
                let d = lf as isize - ls as isize;
                es == ef && *delta.get_or_insert(d) == d
            });
            if consistent && let Some(delta) = delta {
                return Rebase::Levels {
                    from,
                    to: file_unit,
                    delta,
                };
            }
        }
        // No mapping explains every pair: use the most common offset.
        let mut best = (0usize, deltas[0]);
        for &d in &deltas {
            let c = deltas.iter().filter(|&&x| x == d).count();
            if c > best.0 {
                best = (c, d);
            }
        }
        Rebase::Offset {
            delta: best.1,
            fill,
        }
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
        match self {
            Rebase::Identity => line.to_owned(),
            Rebase::Offset { delta, fill } => {
                if *delta >= 0 {
                    let add: String = fill
                        .chars()
                        .chain(std::iter::repeat(fill.chars().last().unwrap_or(' ')))
                        .take(*delta as usize)
                        .collect();
                    format!("{add}{indent}{body}")
                } else {
                    let cut = delta.unsigned_abs().min(indent.len());
                    format!("{}{body}", &indent[cut..])
                }
            }
            Rebase::Levels { from, to, delta } => {
                let (l, e) = levels(indent, *from);
                let l = (l as isize + delta).max(0) as usize;
                format!("{}{body}", render(l, e, *to))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offset_keeps_relative_indentation() {
        // Seed 003's example: 2-space search and replacement, 4-space file
        // base, same relative structure.
        let r = Rebase::infer(&[("  def f():", "    def f():")], Unit::Spaces(4));
        assert_eq!(r.apply("    return 1"), "      return 1");
        assert_eq!(r.apply("  def f():"), "    def f():");
    }

    #[test]
    fn spaces_to_tabs() {
        let r = Rebase::infer(
            &[("if x {", "\tif x {"), ("    y();", "\t\ty();")],
            Unit::Tab,
        );
        assert_eq!(r.apply("    z();"), "\t\tz();");
        assert_eq!(r.apply("        w();"), "\t\t\tw();");
    }

    #[test]
    fn two_to_four_spaces() {
        let r = Rebase::infer(
            &[("def f():", "def f():"), ("  x = 1", "    x = 1")],
            Unit::Spaces(4),
        );
        assert_eq!(r.apply("  if x:"), "    if x:");
        assert_eq!(r.apply("    y = 2"), "        y = 2");
    }

    #[test]
    fn detects_units() {
        assert_eq!(detect_unit(&["a", "\tb", "\t\tc"]), Unit::Tab);
        assert_eq!(detect_unit(&["a", "  b", "    c", "  d"]), Unit::Spaces(2));
    }
}
