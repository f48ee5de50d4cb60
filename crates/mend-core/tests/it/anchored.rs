//! Property tests of anchored edits (`modify_file`): a random region of a
//! random or real-looking file (Python and JavaScript shapes: functions,
//! classes, stubs, blank lines between blocks), changed the way a model
//! changes code (lines rewritten, inserted, deleted, a block body turned
//! into a `...` stub), then sent as a model sends it: anchors of 1–4
//! lines that may occur more than once, with the drift models make
//! (a blank line in an anchor the file lacks, anchors made only of blank
//! lines, unchanged lines of `content` elided by a marker or a bare `...`,
//! trailing spaces, the frame shifted). The result is the intended file or
//! a refusal, never a third file.
//!
//! Run it long with `PROPTEST_CASES=200000 cargo test --release -p
//! mend-core --test it anchored::`; the cases it found are kept in
//! `proptest-regressions/anchored.txt`.

use mend_core::{Edit, EditOp, Hints, PlanOptions, Replace, Target, plan_file};
use proptest::prelude::*;

/// The file's language: where `...` is code, and how comments are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lang {
    Py,
    Js,
}

impl Lang {
    fn path(self) -> &'static str {
        match self {
            Lang::Py => "f.py",
            Lang::Js => "f.js",
        }
    }

    fn comment(self) -> &'static str {
        match self {
            Lang::Py => "#",
            Lang::Js => "//",
        }
    }
}

fn pad(depth: usize) -> String {
    "    ".repeat(depth)
}

/// One statement (one or two lines) at `depth`, from a small vocabulary so
/// that lines repeat, as `return x` and `}` do in real files.
fn statement(lang: Lang, depth: usize, shape: u8, n: u8) -> Vec<String> {
    let p = pad(depth);
    let q = pad(depth + 1);
    match (lang, shape) {
        (_, 0) => vec![String::new()],
        (Lang::Py, 1) => vec![format!("{p}x_{n} = compute(x_{n})")],
        (Lang::Py, 2) => vec![format!("{p}return x_{n}")],
        (Lang::Py, 3) => vec![format!("{p}if x_{n}:"), format!("{q}x_{n} += 1")],
        (Lang::Py, 4) => vec![format!("{p}# step {n}")],
        (Lang::Py, 5) => vec![format!("{p}...")],
        (Lang::Py, 6) => vec![format!("{p}print(\"done\")")],
        (Lang::Py, 7) => vec![format!("{p}pass")],
        (Lang::Py, _) => vec![
            format!("{p}for item in items_{n}:"),
            format!("{q}yield item"),
        ],
        (Lang::Js, 1) => vec![format!("{p}x_{n} = compute(x_{n});")],
        (Lang::Js, 2) => vec![format!("{p}return x_{n};")],
        (Lang::Js, 3) => vec![
            format!("{p}if (x_{n}) {{"),
            format!("{q}x_{n} += 1;"),
            format!("{p}}}"),
        ],
        (Lang::Js, 4) => vec![format!("{p}// step {n}")],
        (Lang::Js, 5) => vec![format!("{p}const y_{n} = [...x_{n}];")],
        (Lang::Js, 6) => vec![format!("{p}console.log(\"done\");")],
        (Lang::Js, 7) => vec![format!("{p}}}")],
        (Lang::Js, _) => vec![format!("{p}let x_{n} = 0;")],
    }
}

/// A statement's parameters: shape and number.
fn stmt() -> impl Strategy<Value = (u8, u8)> {
    (0u8..9, 0u8..3)
}

/// A top-level block: a function, a stub, a class with a method, or loose
/// statements, followed by one or two blank lines.
fn block(lang: Lang) -> impl Strategy<Value = Vec<String>> {
    (
        0u8..4,
        0u8..3,
        prop::collection::vec(stmt(), 1..6),
        1usize..3,
    )
        .prop_map(move |(kind, name, body, blanks)| {
            let mut out = Vec::new();
            let body_at = |out: &mut Vec<String>, depth: usize| {
                for &(shape, n) in &body {
                    out.extend(statement(lang, depth, shape, n));
                }
            };
            match (lang, kind) {
                (Lang::Py, 0) => {
                    out.push(format!("def f_{name}(x):"));
                    body_at(&mut out, 1);
                }
                (Lang::Py, 1) => {
                    out.push(format!("def f_{name}(x) -> int:"));
                    out.push("    ...".into());
                }
                (Lang::Py, 2) => {
                    out.push(format!("class C_{name}:"));
                    out.push(format!("    def m_{name}(self):"));
                    body_at(&mut out, 2);
                }
                (Lang::Js, 0) | (Lang::Js, 1) => {
                    out.push(format!("function f_{name}(x) {{"));
                    body_at(&mut out, 1);
                    out.push("}".into());
                }
                (Lang::Js, 2) => {
                    out.push(format!("class C_{name} {{"));
                    out.push(format!("    m_{name}() {{"));
                    body_at(&mut out, 2);
                    out.push("    }".into());
                    out.push("}".into());
                }
                _ => body_at(&mut out, 0),
            }
            out.extend(std::iter::repeat_n(String::new(), blanks));
            out
        })
}

/// A real-looking file: blocks of one language.
fn shaped_file() -> impl Strategy<Value = (Lang, Vec<String>)> {
    prop_oneof![Just(Lang::Py), Just(Lang::Js)].prop_flat_map(|lang| {
        (
            Just(lang),
            prop::collection::vec(block(lang), 2..8).prop_map(|b| b.concat()),
        )
    })
}

/// A random file: statements at random depths, in no block structure.
fn random_file() -> impl Strategy<Value = (Lang, Vec<String>)> {
    prop_oneof![Just(Lang::Py), Just(Lang::Js)].prop_flat_map(|lang| {
        (
            Just(lang),
            prop::collection::vec((0usize..3, stmt()), 6..40).prop_map(move |v| {
                v.into_iter()
                    .flat_map(|(d, (s, n))| statement(lang, d, s, n))
                    .collect()
            }),
        )
    })
}

/// A change to the region, by region line (clamped to the region).
#[derive(Debug, Clone)]
enum Change {
    /// The line replaced by a statement.
    Rewrite(usize, (u8, u8)),
    /// A statement inserted before the line.
    Insert(usize, (u8, u8)),
    Delete(usize),
    /// Python: the body of the block the line opens replaced by `...`.
    Stub(usize),
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        3 => (0usize..16, stmt()).prop_map(|(i, s)| Change::Rewrite(i, s)),
        3 => (0usize..16, stmt()).prop_map(|(i, s)| Change::Insert(i, s)),
        2 => (0usize..16).prop_map(Change::Delete),
        1 => (0usize..16).prop_map(Change::Stub),
    ]
}

/// What the model does to what it sends.
#[derive(Debug, Clone, Copy)]
enum Drift {
    None,
    /// A blank line after the end anchor (or the start, without one), in
    /// the anchor and in `content`.
    EndBlank,
    /// A blank line before the start anchor, in the anchor and `content`.
    StartBlank,
    /// The end anchor is the region's trailing blank lines alone.
    BlankOnlyEnd,
    /// The start anchor is the region's leading blank lines alone.
    BlankOnlyStart,
    /// A run of unchanged `content` lines (from the given one) elided by
    /// `# ... existing code ...` (`//` in JavaScript).
    Elide(usize, usize),
    /// The same with a bare `...` (Python).
    ElideBare(usize, usize),
    TrailingSpace,
    /// The model's frame: four columns less on every line.
    Dedent,
}

fn drift() -> impl Strategy<Value = Drift> {
    prop_oneof![
        1 => Just(Drift::None),
        2 => Just(Drift::EndBlank),
        1 => Just(Drift::StartBlank),
        2 => Just(Drift::BlankOnlyEnd),
        1 => Just(Drift::BlankOnlyStart),
        3 => (0usize..16, 1usize..5).prop_map(|(a, n)| Drift::Elide(a, n)),
        3 => (0usize..16, 1usize..5).prop_map(|(a, n)| Drift::ElideBare(a, n)),
        1 => Just(Drift::TrailingSpace),
        1 => Just(Drift::Dedent),
    ]
}

fn indent(l: &str) -> &str {
    &l[..l.len() - l.trim_start().len()]
}

fn blank(l: &str) -> bool {
    l.trim().is_empty()
}

/// `content` for the region after the changes: each line with the region
/// line it copies unchanged, if any.
fn changed(lang: Lang, region: &[String], changes: &[Change]) -> Vec<(String, Option<usize>)> {
    let mut out: Vec<(String, Option<usize>)> = region
        .iter()
        .enumerate()
        .map(|(i, l)| (l.clone(), Some(i)))
        .collect();
    // New lines are statements, but not a bare `...`: in `content` that is
    // an elision marker, unless it is a block's only statement (`Stub`).
    let shape = |s: u8| if lang == Lang::Py && s == 5 { 1 } else { s };
    for c in changes {
        let n = out.len();
        match *c {
            Change::Rewrite(i, (s, k)) if n > 0 => {
                let i = i % n;
                let depth = indent(&out[i].0).len() / 4;
                let mut new = statement(lang, depth, shape(s), k);
                new.truncate(1);
                out.splice(i..=i, new.into_iter().map(|l| (l, None)));
            }
            Change::Insert(i, (s, k)) => {
                let i = i % (n + 1);
                let depth = out.get(i).map_or(0, |(l, _)| indent(l).len() / 4);
                let new = statement(lang, depth, shape(s), k);
                out.splice(i..i, new.into_iter().map(|l| (l, None)));
            }
            Change::Delete(i) if n > 0 => {
                out.remove(i % n);
            }
            Change::Stub(i) if lang == Lang::Py && n > 0 => stub(&mut out, i % n),
            _ => {}
        }
    }
    out
}

/// Replaces the body of the block line `i` opens (deeper lines, blank
/// lines among them, up to a line no deeper than the opener, which must be
/// in the region) with `...` at the body's depth.
fn stub(out: &mut Vec<(String, Option<usize>)>, i: usize) {
    let opener = &out[i].0;
    if !opener.trim_end().ends_with(':') {
        return;
    }
    let depth = indent(opener).len();
    let mut j = i + 1;
    while j < out.len() && (blank(&out[j].0) || indent(&out[j].0).len() > depth) {
        j += 1;
    }
    // Trailing blank lines are not the body.
    let mut end = j;
    while end > i + 1 && blank(&out[end - 1].0) {
        end -= 1;
    }
    if j == out.len() || end == i + 1 {
        return;
    }
    let body = format!("{}    ...", indent(opener));
    out.splice(i + 1..end, [(body, None)]);
}

/// Whether anchors of blank lines alone mean what mend reads them as: the
/// edge of the other anchor's block (the region's lines between the
/// anchors blank or deeper than that anchor's first line with text). A
/// region running past that block, its boundary lines deleted, sends the
/// same anchors and `content` as one that does not: no reader can tell.
fn readable_blank_anchors(region: &[String], start: &[String], end: &[String]) -> bool {
    let blank_only = |a: &[String]| !a.is_empty() && a.iter().all(|l| blank(l));
    let within = |anchor: &[String], between: &[String]| {
        let depth = anchor
            .iter()
            .find(|l| !blank(l))
            .map_or(0, |l| indent(l).len());
        between.iter().all(|l| blank(l) || indent(l).len() > depth)
    };
    // In the file's frame: the anchors are the region's first and last lines.
    let lo = start.len().min(region.len());
    let hi = region.len().saturating_sub(end.len()).max(lo);
    let between = &region[lo..hi];
    if blank_only(end) {
        within(&region[..lo], between)
    } else if blank_only(start) {
        within(&region[hi..], between)
    } else {
        true
    }
}

/// Whether, with a blank line added to an anchor, a new line with text
/// repeats one of the eight file lines beyond the region on that side. The
/// anchor as sent may match exactly a little further on; `content` then
/// reads as copying the lines up to there, and a model that inserts a copy
/// of the lines beside the region sends what one replacing them would.
fn copies_beside(
    lines: &[String],
    a: usize,
    len: usize,
    new: &[(String, Option<usize>)],
    drift: Drift,
) -> bool {
    let beyond = match drift {
        Drift::EndBlank => &lines[a + len..(a + len + 8).min(lines.len())],
        Drift::StartBlank => &lines[a.saturating_sub(8)..a],
        _ => return false,
    };
    new.iter()
        .filter(|(l, o)| o.is_none() && !blank(l))
        .any(|(l, _)| beyond.iter().any(|b| b.trim() == l.trim()))
}

/// Whether every new `...` line is a block's only statement, as `Stub`
/// makes it (a later change may have deleted its opener): elsewhere in
/// `content` a bare `...` is an elision marker.
fn stubs_alone(new: &[(String, Option<usize>)]) -> bool {
    let width = |j: usize| indent(&new[j].0).len();
    (0..new.len())
        .filter(|&k| new[k].1.is_none() && new[k].0.trim() == "...")
        .all(|k| {
            let prev = (0..k).rev().find(|&j| !blank(&new[j].0));
            let next = (k + 1..new.len()).find(|&j| !blank(&new[j].0));
            prev.is_some_and(|j| new[j].0.ends_with(':') && width(j) < width(k))
                && next.is_none_or(|j| width(j) < width(k))
        })
}

/// An anchored edit of the file at `path`.
fn region_edit(path: &str, start: Vec<String>, end: Vec<String>, content: Vec<String>) -> Edit {
    Edit {
        path: path.into(),
        op: EditOp::Replace(Replace {
            target: Target::Region {
                start,
                end,
                content,
            },
            replace_all: false,
            hints: Hints::default(),
        }),
        origin: None,
    }
}

/// The edit a model sends: (start, end, content), or `None` when the drift
/// does not fit this change.
fn sent(
    lang: Lang,
    region: &[String],
    new: &[(String, Option<usize>)],
    (ks, ke): (usize, usize),
    drift: Drift,
) -> Option<(Vec<String>, Vec<String>, Vec<String>)> {
    let len = region.len();
    let mut start = region[..ks].to_vec();
    let mut end = region[len - ke..].to_vec();
    let mut content: Vec<String> = new.iter().map(|(l, _)| l.clone()).collect();
    // A blank line added to an anchor of blank lines alone is not drift
    // at its edge but a miscount of the lines it is made of.
    let blank_only = |a: &[String]| !a.is_empty() && a.iter().all(|l| blank(l));
    match drift {
        Drift::None => {}
        Drift::EndBlank if blank_only(if end.is_empty() { &start } else { &end }) => return None,
        Drift::StartBlank if blank_only(&start) => return None,
        Drift::EndBlank if end.is_empty() => {
            start.push(String::new());
            content.push(String::new());
        }
        Drift::EndBlank => {
            end.push(String::new());
            content.push(String::new());
        }
        Drift::StartBlank => {
            start.insert(0, String::new());
            content.insert(0, String::new());
        }
        Drift::BlankOnlyEnd => {
            let k = region.iter().rev().take_while(|l| blank(l)).count();
            if k == 0 || k > 4 || k == len {
                return None;
            }
            start = region[..ks.min(len - k)].to_vec();
            end = region[len - k..].to_vec();
        }
        Drift::BlankOnlyStart => {
            let k = region.iter().take_while(|l| blank(l)).count();
            if k == 0 || k > 4 || k + ke > len || ke == 0 {
                return None;
            }
            start = region[..k].to_vec();
        }
        Drift::Elide(a, n) | Drift::ElideBare(a, n) => {
            let bare = matches!(drift, Drift::ElideBare(..));
            if bare && lang != Lang::Py || repeats_region(region, new) {
                return None;
            }
            content = elided(lang, new, len, a, n, bare)?;
        }
        Drift::TrailingSpace => {
            for l in start.iter_mut().chain(end.iter_mut()) {
                if !blank(l) {
                    l.push_str("  ");
                }
            }
        }
        Drift::Dedent => {
            let all = || start.iter().chain(&end).chain(&content);
            if !all().all(|l| blank(l) || l.starts_with("    ")) {
                return None;
            }
            for l in start
                .iter_mut()
                .chain(end.iter_mut())
                .chain(content.iter_mut())
            {
                if !blank(l) {
                    *l = l[4..].to_owned();
                }
            }
        }
    }
    Some((start, end, content))
}

/// Whether a new line with text repeats a line of the region. `content`
/// is read by pairing its lines with the region's, so beside an elision
/// such a line reads as the copy of its twin, and what the marker stands
/// for moves: a model that duplicates a line next to an elided stretch
/// cannot say so in `content` (nor in the other formats' replacement).
fn repeats_region(region: &[String], new: &[(String, Option<usize>)]) -> bool {
    new.iter()
        .filter(|(l, o)| o.is_none() && !blank(l))
        .any(|(l, _)| region.iter().any(|r| r.trim() == l.trim()))
}

/// `content` with the run of unchanged copies from line `a` (up to `n`
/// lines of one stretch of the region) replaced by a marker at the run's
/// first non-blank line's indentation.
fn elided(
    lang: Lang,
    new: &[(String, Option<usize>)],
    len: usize,
    a: usize,
    n: usize,
    bare: bool,
) -> Option<Vec<String>> {
    let a = a % new.len().max(1);
    let mut b = a;
    while b < new.len()
        && b - a < n
        && new[b].1.is_some()
        && (b == a || new[b].1 == new[b - 1].1.map(|r| r + 1))
    {
        b += 1;
    }
    let run = &new[a..b];
    // The marker's neighbours are the region lines beside the run, copied
    // (or the region's edge): a line deleted or inserted beside a marker
    // sends the same content as a longer or shorter elision.
    let (r0, r1) = (run.first()?.1?, run.last()?.1?);
    let before = if a == 0 {
        r0 == 0
    } else {
        r0 > 0 && new[a - 1].1 == Some(r0 - 1)
    };
    let after = if b == new.len() {
        r1 + 1 == len
    } else {
        new[b].1 == Some(r1 + 1)
    };
    if !(before && after) {
        return None;
    }
    let first = run.iter().find(|(l, _)| !blank(l))?;
    let ind = indent(&first.0);
    let marker = if bare {
        format!("{ind}...")
    } else {
        format!("{ind}{} ... existing code ...", lang.comment())
    };
    let mut out: Vec<String> = new[..a].iter().map(|(l, _)| l.clone()).collect();
    out.push(marker);
    out.extend(new[b..].iter().map(|(l, _)| l.clone()));
    Some(out)
}

fn numbered(lines: &[String]) -> String {
    lines
        .iter()
        .enumerate()
        .map(|(i, l)| format!("{:>3}|{l}\n", i + 1))
        .collect()
}

fn text(lines: &[String]) -> String {
    if lines.is_empty() {
        String::new()
    } else {
        lines.join("\n") + "\n"
    }
}

/// A file, the region's first line and length, the changes, the anchors'
/// lengths (start, end) and the drift.
type Case = (
    (Lang, Vec<String>),
    usize,
    usize,
    Vec<Change>,
    (usize, usize),
    Drift,
);

fn case() -> impl Strategy<Value = Case> {
    (
        prop_oneof![3 => shaped_file(), 1 => random_file()],
        any::<prop::sample::Index>(),
        1usize..14,
        prop::collection::vec(change(), 1..4),
        (1usize..5, 0usize..5),
        drift(),
    )
        .prop_map(|(file, at, len, changes, anchors, drift)| {
            let n = file.1.len();
            let a = at.index(n);
            (file, a, len.min(n - a), changes, anchors, drift)
        })
}

/// 3,000 cases, or more with `PROPTEST_CASES` (which the default reads).
fn config() -> ProptestConfig {
    ProptestConfig::with_cases(ProptestConfig::default().cases.max(3000))
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn an_anchored_edit_gives_the_intended_file_or_a_refusal(
        ((lang, lines), a, len, changes, (ks, ke), drift) in case()
    ) {
        let region = &lines[a..a + len];
        // Without an end anchor the region is the start anchor alone.
        let (ks, ke) = if len <= ks { (len, 0) } else { (ks, ke.clamp(1, len - ks)) };
        // Cases that are no edit, or whose start anchor is blank lines alone
        // without the drift that means it, are skipped (not rejected: they
        // are common, and rejections are capped).
        if region[..ks].iter().all(|l| blank(l)) && !matches!(drift, Drift::BlankOnlyStart) {
            return Ok(());
        }
        let new = changed(lang, region, &changes);
        let new_lines: Vec<String> = new.iter().map(|(l, _)| l.clone()).collect();
        if new_lines == region || !stubs_alone(&new) {
            return Ok(());
        }
        let Some((start, end, content)) = sent(lang, region, &new, (ks, ke), drift) else {
            return Ok(());
        };
        if !readable_blank_anchors(region, &start, &end) || copies_beside(&lines, a, len, &new, drift) {
            return Ok(());
        }
        let mut intended = lines[..a].to_vec();
        intended.extend(new_lines);
        intended.extend(lines[a + len..].iter().cloned());
        let (old, want) = (text(&lines), text(&intended));
        let e = region_edit(lang.path(), start, end, content);
        let p = plan_file(lang.path(), Some(&old), &[(0, &e)], &PlanOptions::default());
        if p.is_ok() {
            prop_assert_eq!(
                p.content.as_deref(),
                Some(want.as_str()),
                "wrong file\nedit: {:?}\nregion: lines {}-{} of\n{}",
                e.op,
                a + 1,
                a + len,
                numbered(&lines)
            );
        }
    }
}
