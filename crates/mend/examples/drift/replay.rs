//! The git-diff replay: every changed file between two versions of a
//! package, as `git diff` prints it, applied with mend-core to the old file.
//! Real diffs carry lines a model's never would (a comment ending in
//! `...`, a `// ...` in a doc comment, a doctest prompt): they are content,
//! and the replay must write them. Three ways: the headers as printed,
//! every hunk's line numbers shifted by seven, and the numbers dropped
//! (`@@ ... @@`, as aider's prompt has models write them).

use similar::TextDiff;

use mend_core::formats::Format;

use crate::hunks::Hunk;
use crate::judge::{Outcome, plan};

/// How the hunk headers are written.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Way {
    Exact,
    Shifted,
    Dropped,
}

impl Way {
    pub const ALL: [Way; 3] = [Way::Exact, Way::Shifted, Way::Dropped];

    pub fn name(self) -> &'static str {
        match self {
            Way::Exact => "exact headers",
            Way::Shifted => "headers +7",
            Way::Dropped => "@@ ... @@",
        }
    }

    /// The `--check` floor, in percent of files.
    pub fn floor(self) -> f64 {
        match self {
            Way::Exact | Way::Shifted => 100.0,
            Way::Dropped => 98.0,
        }
    }
}

/// Seven hex digits for a blob, standing for git's abbreviated object id:
/// mend reads the `index` line as a header only, so no real hash is due.
fn short_id(text: &str) -> String {
    let h = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{:07x}", h & 0xfff_ffff)
}

/// Git's default hunk-header context: the nearest line above the hunk
/// that starts with a letter, `_` or `$`, cut to 80 bytes.
fn funcname(old: &[&str], before: usize) -> Option<String> {
    let line = old[..before.min(old.len())]
        .iter()
        .rev()
        .find(|l| l.starts_with(|c: char| c.is_alphabetic() || c == '_' || c == '$'))?;
    let mut end = line.len().min(80);
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    Some(line[..end].trim_end().to_owned())
}

/// A hunk range as git prints it: `start,len`, the length left out when it
/// is one, and an empty range numbered by the line before it.
fn range(start: usize, len: usize, shift: usize) -> String {
    match len {
        1 => format!("{}", start + 1 + shift),
        0 => format!("{},0", start + shift),
        _ => format!("{},{len}", start + 1 + shift),
    }
}

/// The whole-file diff of `path` from `old` to `new` as `git diff` prints
/// it (three lines of context), with its hunk headers written `way`.
pub fn git_diff(path: &str, old: &str, new: &str, way: Way) -> String {
    let diff = TextDiff::from_lines(old, new);
    let old_lines: Vec<&str> = old.lines().collect();
    let mut s = format!(
        "diff --git a/{path} b/{path}\nindex {}..{} 100644\n--- a/{path}\n+++ b/{path}\n",
        short_id(old),
        short_id(new)
    );
    let mut udiff = diff.unified_diff();
    udiff.context_radius(3).missing_newline_hint(true);
    for hunk in udiff.iter_hunks() {
        let ops = hunk.ops();
        let (Some(first), Some(last)) = (ops.first(), ops.last()) else {
            continue;
        };
        let (o, n) = (first.old_range().start, first.new_range().start);
        let (ol, nl) = (last.old_range().end - o, last.new_range().end - n);
        let shift = if way == Way::Shifted { 7 } else { 0 };
        let mut header = match way {
            Way::Dropped => "@@ ... @@".to_owned(),
            _ => format!("@@ -{} +{} @@", range(o, ol, shift), range(n, nl, shift)),
        };
        if way != Way::Dropped
            && let Some(f) = funcname(&old_lines, o)
        {
            header.push(' ');
            header.push_str(&f);
        }
        let body = hunk.to_string();
        let body = body.split_once('\n').map_or("", |(_, rest)| rest);
        s.push_str(&header);
        s.push('\n');
        s.push_str(body);
    }
    s
}

/// Applies the diff of one file, written `way`, to its old text: success
/// is exactly the new text.
pub fn replay(path: &str, old: &str, new: &str, way: Way) -> (String, Outcome) {
    let text = git_diff(path, old, new, way);
    let target = Hunk {
        path: path.to_owned(),
        lines: Vec::new(),
        old_start: 0,
        expected: new.to_owned(),
    };
    let outcome = plan(Format::UnifiedDiff, &text, old, &target);
    (text, outcome)
}
