//! Rendering a merge with git's conflict markers.

use serde::Serialize;

use crate::{Merge, Mode, Step};

/// Conflict style.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Style {
    /// Ours and theirs between `<<<<<<<`, `=======` and `>>>>>>>`.
    #[default]
    Merge,
    /// Also the base, after `|||||||`.
    Diff3,
    /// Like diff3, with lines common to both sides moved out of the conflict.
    Zdiff3,
}

/// Labels printed after the markers (`<<<<<<< ours`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Labels {
    /// After `<<<<<<<`.
    pub ours: Option<String>,
    /// After `|||||||`.
    pub base: Option<String>,
    /// After `>>>>>>>`.
    pub theirs: Option<String>,
}

/// Whether line `i` of `lines` (or the lines around it) ends in CRLF;
/// `None` when the file cannot tell (no lines, or one without an ending).
fn eol_is_crlf(lines: &[&[u8]], i: usize) -> Option<bool> {
    let crlf = |l: &[u8]| l.len() > 1 && l[l.len() - 2] == b'\r' && l[l.len() - 1] == b'\n';
    let n = lines.len();
    if n == 0 {
        return None;
    }
    if i + 1 < n {
        return Some(crlf(lines[i]));
    }
    let last = lines[i.min(n - 1)];
    if last.ends_with(b"\n") {
        return Some(crlf(last));
    }
    if i == 0 {
        return None;
    }
    Some(crlf(lines[i - 1]))
}

/// Markers follow the line endings around the conflict: ours before it,
/// then theirs, then the base's first line; LF when nothing tells.
fn needs_cr(m: &Merge<'_>, s: &Step) -> bool {
    let before = |i: isize| (i - 1).max(0) as usize;
    let mut v = eol_is_crlf(&m.ours, before(s.i1));
    if v != Some(false) {
        v = eol_is_crlf(&m.theirs, before(s.i2));
    }
    if v != Some(false) {
        v = eol_is_crlf(&m.base, 0);
    }
    v == Some(true)
}

/// Appends lines; with `add_nl`, a last line without a newline gets one.
fn copy(out: &mut Vec<u8>, lines: &[&[u8]], cr: bool, add_nl: bool) {
    for l in lines {
        out.extend_from_slice(l);
    }
    if add_nl
        && let Some(last) = lines.last()
        && !last.ends_with(b"\n")
    {
        out.extend_from_slice(if cr { b"\r\n" } else { b"\n" });
    }
}

fn marker(out: &mut Vec<u8>, c: u8, size: usize, label: Option<&str>, cr: bool) {
    out.extend(std::iter::repeat_n(c, size));
    if let Some(l) = label {
        out.push(b' ');
        out.extend_from_slice(l.as_bytes());
    }
    out.extend_from_slice(if cr { b"\r\n" } else { b"\n" });
}

impl Merge<'_> {
    /// Writes the merged text. Conflicts are written with markers of
    /// `marker_size` characters (git's default is 7) in `style`, which
    /// should be the style the merge was computed with.
    pub fn render(&self, labels: &Labels, style: Style, marker_size: usize) -> Vec<u8> {
        self.render_marked(labels, style, marker_size).text
    }

    /// Like [`Merge::render`], and also says where each conflict and each
    /// resolved region landed in the output, so an editor can highlight
    /// them.
    pub fn render_marked(&self, labels: &Labels, style: Style, marker_size: usize) -> Marked {
        if let Some(whole) = self.whole {
            return Marked {
                text: whole.to_vec(),
                conflicts: Vec::new(),
                resolved: Vec::new(),
            };
        }
        let size = marker_size.max(1);
        let mut out = Vec::new();
        let mut marked = Vec::new();
        let mut resolved = Vec::new();
        let mut lines = LineCount::default();
        let mut i = 0;
        for s in &self.steps {
            let start = s.ours().start;
            match s.mode {
                Mode::Same => continue,
                Mode::Conflict => {
                    copy(&mut out, &self.ours[i..start], false, false);
                    let first = lines.of(&out);
                    let cr = needs_cr(self, s);
                    marker(&mut out, b'<', size, labels.ours.as_deref(), cr);
                    copy(&mut out, &self.ours[s.ours()], cr, true);
                    if style != Style::Merge {
                        marker(&mut out, b'|', size, labels.base.as_deref(), cr);
                        copy(&mut out, &self.base[s.base()], cr, true);
                    }
                    marker(&mut out, b'=', size, None, cr);
                    copy(&mut out, &self.theirs[s.theirs()], cr, true);
                    marker(&mut out, b'>', size, labels.theirs.as_deref(), cr);
                    marked.push(first..lines.of(&out));
                }
                Mode::Ours => {
                    copy(&mut out, &self.ours[i..s.ours().end], false, false);
                }
                Mode::Theirs => {
                    copy(&mut out, &self.ours[i..start], false, false);
                    copy(&mut out, &self.theirs[s.theirs()], false, false);
                }
                Mode::Resolved(k) => {
                    copy(&mut out, &self.ours[i..start], false, false);
                    let first = lines.of(&out);
                    let (resolver, bytes) = &self.resolved[k];
                    out.extend_from_slice(bytes);
                    let open = !bytes.is_empty() && !bytes.ends_with(b"\n");
                    resolved.push(Resolution {
                        resolver,
                        lines: first..lines.of(&out) + usize::from(open),
                    });
                }
            }
            i = s.ours().end;
        }
        copy(&mut out, &self.ours[i..], false, false);
        Marked {
            text: out,
            conflicts: marked,
            resolved,
        }
    }
}

/// A rendered merge and where its regions landed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marked {
    /// The merged text.
    pub text: Vec<u8>,
    /// Each conflict's output lines, from its `<<<<<<<` line through its
    /// `>>>>>>>` line (0-based, half-open).
    pub conflicts: Vec<std::ops::Range<usize>>,
    /// Each region a resolver settled, with its output lines.
    pub resolved: Vec<Resolution>,
}

/// A git conflict a resolver settled, as it landed in the output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Resolution {
    /// The resolver's name.
    pub resolver: &'static str,
    /// Its output lines (0-based, half-open). A resolved region that ends
    /// without a newline ends the file, and its last line counts.
    pub lines: std::ops::Range<usize>,
}

/// Counts the lines of a growing output incrementally. Every line before a
/// conflict and every marker ends in a newline, so at those points the
/// number of newlines is the number of lines.
#[derive(Default)]
struct LineCount {
    bytes: usize,
    lines: usize,
}

impl LineCount {
    fn of(&mut self, out: &[u8]) -> usize {
        self.lines += out[self.bytes..].iter().filter(|&&b| b == b'\n').count();
        self.bytes = out.len();
        self.lines
    }
}
