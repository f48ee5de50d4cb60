//! Renders a (drifted) hunk in each edit format, as a model would send it.

use mend_core::Format;

use crate::drift::Kind;
use crate::hunks::{Hunk, Tag, side};

/// The formats under test, with the names the report uses.
pub const FORMATS: [Format; 6] = [
    Format::SearchReplace,
    Format::EditBlock,
    Format::StrReplace,
    Format::Anchored,
    Format::ApplyPatch,
    Format::UnifiedDiff,
];

fn marker_like(lines: &[(Tag, String)]) -> bool {
    lines.iter().any(|(_, l)| {
        let t = l.trim();
        t.starts_with("<<<<<<<")
            || t.starts_with(">>>>>>>")
            || t == "======="
            || t.starts_with("*** ")
            || t.starts_with("««« EDIT")
            || t.starts_with("»»»")
            || t.contains("═══════ REPL")
    })
}

/// The response text for `lines` (the drifted hunk) in `format`, or `None`
/// when the format cannot express it. `clean` is the undrifted hunk, used
/// to choose anchors a model would choose (unique in the file).
pub fn render(
    format: Format,
    clean: &Hunk,
    lines: &[(Tag, String)],
    kind: Kind,
    file: &str,
) -> Option<String> {
    if marker_like(lines) {
        return None;
    }
    let path = &clean.path;
    let search = side(lines, Tag::Add);
    let replace = side(lines, Tag::Del);
    Some(match format {
        Format::SearchReplace => format!(
            "{path}\n```\n<<<<<<< SEARCH\n{}\n=======\n{}{}>>>>>>> REPLACE\n```\n",
            search.join("\n"),
            replace.join("\n"),
            if replace.is_empty() { "" } else { "\n" }
        ),
        Format::EditBlock => format!(
            "{path}\n««« EDIT\n{}\n═══════ REPL\n{}{}»»» EDIT END\n",
            search.join("\n"),
            replace.join("\n"),
            if replace.is_empty() { "" } else { "\n" }
        ),
        Format::StrReplace => serde_json::json!({
            "path": path,
            "old_string": search.join("\n"),
            "new_string": replace.join("\n"),
        })
        .to_string(),
        Format::Anchored if matches!(kind, Kind::AnchoredElision | Kind::AnchoredBareElision) => {
            anchored_elided(clean, kind, file)?
        }
        Format::Anchored => anchored(clean, lines, kind, file)?,
        Format::ApplyPatch => {
            let mut s = format!("*** Begin Patch\n*** Update File: {path}\n@@\n");
            push_diff_lines(&mut s, lines);
            s.push_str("*** End Patch\n");
            s
        }
        Format::UnifiedDiff => {
            let old = search.len();
            let new = replace.len();
            let at = clean.old_start + 1;
            // A header's line numbers tell twins apart, rightly; the twins
            // kind measures the tie without them, as a model's `@@ ... @@`.
            let header = if kind == Kind::Twins {
                "@@ ... @@".to_owned()
            } else {
                format!("@@ -{at},{old} +{at},{new} @@")
            };
            let mut s = format!("--- a/{path}\n+++ b/{path}\n{header}\n");
            push_diff_lines(&mut s, lines);
            s
        }
        _ => return None,
    })
}

fn push_diff_lines(s: &mut String, lines: &[(Tag, String)]) {
    for (t, l) in lines {
        s.push(match t {
            Tag::Ctx => ' ',
            Tag::Del => '-',
            Tag::Add => '+',
        });
        s.push_str(l);
        s.push('\n');
    }
}

fn count(file: &[&str], lines: &[String], from: usize) -> usize {
    let m = lines.len();
    if file.len() < m {
        return 0;
    }
    (from..=file.len() - m)
        .filter(|&i| file[i..i + m].iter().zip(lines).all(|(a, b)| a == b))
        .count()
}

fn typo(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::TypoContext | Kind::TypoRemoved | Kind::TypoAnyLine | Kind::TypoShort
    )
}

/// Whether a typo drift slipped a line of an anchor (the first `ks` or
/// last `ke` search lines): a slip elsewhere in the region is in lines an
/// anchored edit does not copy, so it would measure an exact edit.
fn slip_in_anchor(clean: &Hunk, body: &[(Tag, String)], ks: usize, ke: usize) -> bool {
    let n = clean.search().len();
    let mut si = 0;
    for ((tag, d), (_, c)) in body.iter().zip(&clean.lines) {
        if *tag == Tag::Add {
            continue;
        }
        if d != c && (si < ks || si >= n - ke) {
            return true;
        }
        si += 1;
    }
    false
}

/// `modify_file` with the shortest start and end anchors (1–4 lines) that
/// are unique in the file, as the seed's guidance asks of a model. The
/// drift touches what a model copies into an anchored edit: the anchors,
/// and the content lines that repeat them; the rest of `content` is the
/// model's own text, exact by the format's definition (its frame still
/// shifts with indentation drift, and copied lines carry numbers).
fn anchored(clean: &Hunk, drifted: &[(Tag, String)], kind: Kind, file: &str) -> Option<String> {
    if kind == Kind::Elision {
        return None;
    }
    let n = clean.search().len();
    let (ks, ke) = match kind {
        Kind::AnchoredBlankEnd => blank_end_counts(clean, file)?,
        _ => anchor_counts(clean, file)?,
    };
    let pad = usize::from(kind == Kind::BlankEdges);
    let body = &drifted[pad..drifted.len() - pad];
    if typo(kind) && !slip_in_anchor(clean, body, ks, ke) {
        return None;
    }
    let whole_frame = matches!(kind, Kind::Indentation | Kind::LineNumbers);
    let (mut start, mut end, mut content) = (Vec::new(), Vec::new(), Vec::new());
    let mut si = 0;
    for ((tag, d), (_, c)) in body.iter().zip(&clean.lines) {
        let anchor = *tag != Tag::Add && (si < ks || si >= n - ke);
        if *tag != Tag::Add {
            if si < ks {
                start.push(d.clone());
            } else if si >= n - ke {
                end.push(d.clone());
            }
            si += 1;
        }
        if *tag != Tag::Del {
            let copied = *tag == Tag::Ctx && (anchor || kind == Kind::LineNumbers);
            content.push(if copied || (whole_frame && kind == Kind::Indentation) {
                d.clone()
            } else {
                c.clone()
            });
        }
    }
    if pad == 1 {
        start.insert(0, String::new());
        content.insert(0, String::new());
        if end.is_empty() {
            start.push(String::new());
        } else {
            end.push(String::new());
        }
        content.push(String::new());
    }
    if kind == Kind::AnchoredEndBlank {
        // A blank line the file lacks after the region.
        let after = file.lines().nth(clean.old_start + n);
        if after.is_some_and(|l| l.trim().is_empty()) {
            return None;
        }
        if end.is_empty() { &mut start } else { &mut end }.push(String::new());
        content.push(String::new());
    }
    let mut change = serde_json::json!({ "start": start, "content": content });
    if !end.is_empty() {
        change["end"] = serde_json::json!(end);
    }
    Some(
        serde_json::json!({
            "path": clean.path,
            "changes": [change],
        })
        .to_string(),
    )
}

/// The anchors of [`Kind::AnchoredBlankEnd`]: the start as
/// [`anchor_counts`] chooses it, and an end of the blank lines (1–4) the
/// search ends with alone, when the search has lines with text before them.
fn blank_end_counts(clean: &Hunk, file: &str) -> Option<(usize, usize)> {
    let cs = clean.search();
    let n = cs.len();
    let k = cs.iter().rev().take_while(|l| l.trim().is_empty()).count();
    if k == 0 || k > 4 || k == n {
        return None;
    }
    let file_lines: Vec<&str> = file.lines().collect();
    let ks = (1..=4.min(n - k)).find(|&s| {
        !cs[..s].iter().all(|l| l.trim().is_empty()) && count(&file_lines, &cs[..s], 0) == 1
    })?;
    Some((ks, k))
}

/// How many search lines the start and end anchors take: the shortest
/// (1–4 lines) unique in the file, as the seed's guidance asks of a model;
/// a search of four lines or fewer is all start anchor.
fn anchor_counts(clean: &Hunk, file: &str) -> Option<(usize, usize)> {
    let file_lines: Vec<&str> = file.lines().collect();
    let cs = clean.search();
    let n = cs.len();
    let unique = |lines: &[String], from: usize| {
        !lines.iter().all(|l| l.trim().is_empty()) && count(&file_lines, lines, from) == 1
    };
    if n <= 4 {
        return Some((n, 0));
    }
    let ks = (1..=4).find(|&k| unique(&cs[..k], 0))?;
    let ke = (1..=4).find(|&k| k + ks <= n && unique(&cs[n - k..], clean.old_start + ks))?;
    Some((ks, ke))
}

/// `modify_file` whose `content` elides unchanged lines: anchors as
/// [`anchored`] chooses them, and `content` the new side with the longest
/// run of two or more context lines replaced by the marker (a bare `...`
/// for [`Kind::AnchoredBareElision`]), as a model skips what it does not
/// change. The run lies between the anchors, with an unchanged line on
/// each side: next to a removed line, what the marker stands for would be
/// a guess. `None` when the hunk has no such run.
fn anchored_elided(clean: &Hunk, kind: Kind, file: &str) -> Option<String> {
    let (ks, ke) = anchor_counts(clean, file)?;
    let n = clean.search().len();
    // Each line with whether it may be elided.
    let ctx = |i: usize| clean.lines.get(i).is_some_and(|(t, _)| *t == Tag::Ctx);
    let mut si = 0;
    let inner: Vec<bool> = (0..clean.lines.len())
        .map(|i| {
            let between = ctx(i) && si >= ks && si < n - ke;
            si += usize::from(clean.lines[i].0 != Tag::Add);
            between && i > 0 && ctx(i - 1) && ctx(i + 1)
        })
        .collect();
    let mut best: Option<(usize, usize)> = None;
    let mut i = 0;
    while i < inner.len() {
        let s = i;
        while i < inner.len() && inner[i] {
            i += 1;
        }
        let real = clean.lines[s..i].iter().any(|(_, l)| !l.trim().is_empty());
        if i - s >= 2 && real && best.is_none_or(|(a, b)| i - s > b - a) {
            best = Some((s, i));
        }
        i = i.max(s + 1);
    }
    let (a, b) = best?;
    let bare = kind == Kind::AnchoredBareElision;
    let marker = crate::drift::elision_marker(
        &clean.path,
        bare,
        &crate::drift::run_indent(&clean.lines[a..b]),
    );
    let mut lines = clean.lines.clone();
    lines.splice(a..b, [(Tag::Ctx, marker)]);
    let cs = clean.search();
    let mut change = serde_json::json!({
        "start": cs[..ks],
        "content": side(&lines, Tag::Del),
    });
    if ke > 0 {
        change["end"] = serde_json::json!(cs[n - ke..]);
    }
    Some(serde_json::json!({ "path": clean.path, "changes": [change] }).to_string())
}
