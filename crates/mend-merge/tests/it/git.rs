//! Differential tests against `git merge-file`.
//!
//! Generated cases (random edits on both sides of a random base, with CRLF,
//! missing final newlines, duplicate lines, adjacent and identical edits) and
//! real ones (versions of this project's own source files) are merged by
//! both, in all three styles, and compared byte for byte along with the
//! conflict count, and the two-way diffs under them are compared with
//! `git diff`'s hunks, small inputs and large (where xdiff's cut-offs for
//! expensive searches take over). No difference is tolerated.

use std::path::Path;
use std::process::Command;

use mend_merge::{Labels, LineHunk, Options, Style, merge};

/// `git diff --no-index` of two files written into `dir` under the given
/// names, git's Myers without the indent heuristic, with `context` lines.
fn git_diff(dir: &Path, a: (&str, &[u8]), b: (&str, &[u8]), context: usize) -> String {
    std::fs::write(dir.join(a.0), a.1).unwrap();
    std::fs::write(dir.join(b.0), b.1).unwrap();
    let out = Command::new("git")
        .current_dir(dir)
        .args([
            "diff",
            "--no-index",
            "--no-indent-heuristic",
            "--diff-algorithm=myers",
            "--no-color",
            &format!("-U{context}"),
            a.0,
            b.0,
        ])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `git diff` hunks (`-a,b +c,d`, git's Myers without the indent heuristic,
/// as merge-file uses). With no context lines, `git diff` first trims a
/// common tail in whole 1,024-byte blocks, which changes the line counts
/// xdiff's preparation sees and merge-file never does; so every two-way
/// case here ends with lines that differ.
fn git_hunks(dir: &Path, a: &[u8], b: &[u8]) -> Vec<LineHunk> {
    let out = git_diff(dir, ("da", a), ("db", b), 0);
    let parse = |s: &str| -> (usize, usize) {
        let (start, len) = match s.split_once(',') {
            Some((a, b)) => (a.parse::<usize>().unwrap(), b.parse::<usize>().unwrap()),
            None => (s.parse::<usize>().unwrap(), 1),
        };
        // -U0 numbers an empty range by the line before it.
        (if len == 0 { start } else { start - 1 }, len)
    };
    out.lines()
        .filter_map(|l| l.strip_prefix("@@ -"))
        .map(|l| {
            let mut parts = l.split(' ');
            let old = parse(parts.next().unwrap());
            let new = parse(parts.next().unwrap().trim_start_matches('+'));
            LineHunk {
                start: old.0,
                end: old.0 + old.1,
                text: new.0..new.0 + new.1,
            }
        })
        .collect()
}

fn git_available() -> bool {
    Command::new("git").arg("--version").output().is_ok()
}

/// Runs `git merge-file -p` and returns (output, conflicts).
pub(crate) fn git_merge(
    dir: &Path,
    base: &[u8],
    ours: &[u8],
    theirs: &[u8],
    style: Style,
) -> (Vec<u8>, i32) {
    std::fs::write(dir.join("ours"), ours).unwrap();
    std::fs::write(dir.join("base"), base).unwrap();
    std::fs::write(dir.join("theirs"), theirs).unwrap();
    let mut cmd = Command::new("git");
    cmd.current_dir(dir).args([
        "merge-file",
        "-p",
        "-L",
        "ours",
        "-L",
        "base",
        "-L",
        "theirs",
    ]);
    match style {
        Style::Merge => {}
        Style::Diff3 => {
            cmd.arg("--diff3");
        }
        Style::Zdiff3 => {
            cmd.arg("--zdiff3");
        }
    }
    cmd.args(["ours", "base", "theirs"]);
    let out = cmd.output().unwrap();
    (out.stdout, out.status.code().unwrap_or(-1))
}

pub(crate) fn mend_merge(base: &[u8], ours: &[u8], theirs: &[u8], style: Style) -> (Vec<u8>, i32) {
    let m = merge(
        base,
        ours,
        theirs,
        &Options {
            style,
            ..Options::default()
        },
    );
    let labels = Labels {
        ours: Some("ours".into()),
        base: Some("base".into()),
        theirs: Some("theirs".into()),
    };
    (m.render(&labels, style, 7), m.conflicts().min(127) as i32)
}

pub(crate) struct Rng(pub u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const WORDS: &[&str] = &[
    "alpha",
    "beta",
    "gamma",
    "}",
    "",
    "return x;",
    "fn f() {",
    "delta",
    "x = 1;",
    "epsilon",
];

fn random_base(rng: &mut Rng) -> Vec<String> {
    let n = rng.below(30);
    (0..n)
        .map(|_| {
            if rng.below(3) == 0 {
                WORDS[rng.below(WORDS.len())].to_owned()
            } else {
                format!("line {}", rng.below(40))
            }
        })
        .collect()
}

fn edit(rng: &mut Rng, base: &[String], tag: &str) -> Vec<String> {
    let mut v = base.to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(v.len() + 1);
        match rng.below(4) {
            0 => v.insert(at, format!("{tag} {}", rng.below(5))),
            1 if at < v.len() => {
                v.remove(at);
            }
            2 if at < v.len() => v[at] = format!("{tag} changed {}", rng.below(3)),
            _ => {
                let k = 1 + rng.below(3);
                for j in 0..k {
                    v.insert(at.min(v.len()), format!("{tag} block {j}"));
                }
            }
        }
    }
    v
}

fn join(lines: &[String], crlf: bool, final_nl: bool) -> Vec<u8> {
    let eol = if crlf { "\r\n" } else { "\n" };
    let mut s = lines.join(eol);
    if final_nl && !lines.is_empty() {
        s.push_str(eol);
    }
    s.into_bytes()
}

#[test]
fn generated_cases_match_git_byte_for_byte() {
    if !git_available() {
        panic!("git is required for the differential test");
    }
    let dir = tempfile::tempdir().unwrap();
    let seed: u64 = std::env::var("MERGE_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0xDEC0DE);
    let mut rng = Rng(seed);
    let mut failures = Vec::new();
    let mut conflicted = 0;
    let cases: usize = std::env::var("MERGE_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400);
    for case in 0..cases {
        let base = random_base(&mut rng);
        let ours = if rng.below(8) == 0 {
            base.clone()
        } else {
            edit(&mut rng, &base, "ours")
        };
        let theirs = match rng.below(10) {
            0 => base.clone(),
            1 => ours.clone(),
            _ => edit(&mut rng, &base, "theirs"),
        };
        let crlf = rng.below(4) == 0;
        let (fb, fo, ft) = (rng.below(5) != 0, rng.below(5) != 0, rng.below(5) != 0);
        let (b, o, t) = (
            join(&base, crlf, fb),
            join(&ours, crlf, fo),
            join(&theirs, crlf, ft),
        );
        for style in [Style::Merge, Style::Diff3, Style::Zdiff3] {
            let want = git_merge(dir.path(), &b, &o, &t, style);
            let got = mend_merge(&b, &o, &t, style);
            if want.1 > 0 {
                conflicted += 1;
            }
            if want != got {
                failures.push(format!(
                    "case {case} {style:?}\n--- base\n{}\n--- ours\n{}\n--- theirs\n{}\n--- git ({})\n{}\n--- mend ({})\n{}",
                    String::from_utf8_lossy(&b),
                    String::from_utf8_lossy(&o),
                    String::from_utf8_lossy(&t),
                    want.1,
                    String::from_utf8_lossy(&want.0),
                    got.1,
                    String::from_utf8_lossy(&got.0)
                ));
            }
        }
    }
    assert!(
        conflicted > cases / 4,
        "the cases must exercise conflicts: {conflicted}"
    );
    assert!(
        failures.is_empty(),
        "{} of {} merges differ from git:\n\n{}",
        failures.len(),
        cases * 3,
        failures
            .iter()
            .take(3)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n\n")
    );
}

/// Once the one deviation from git: `delta` occurs twice in the base, and
/// git pairs theirs' `delta` with the first. A generic Myers paired it with
/// the second and drew the conflict elsewhere; xdiff's own tie-breaking
/// gives git's bytes.
#[test]
fn repeated_lines_pair_as_git_pairs_them() {
    let dir = tempfile::tempdir().unwrap();
    let base = b"line 32\n\ndelta\nline 2\ndelta\n";
    let ours = b"ours 0\nours changed 2\n\ndelta\nline 2\ndelta\nours block 2\nours block 1\nours block 0\nours block 0\n";
    let theirs = b"line 32\n\ntheirs block 2\ntheirs block 1\ntheirs block 0\ndelta\ntheirs 3\ntheirs changed 1\n";
    for style in [Style::Merge, Style::Diff3, Style::Zdiff3] {
        let want = git_merge(dir.path(), base, ours, theirs, style);
        assert_eq!(mend_merge(base, ours, theirs, style), want, "{style:?}");
    }
    assert_eq!(
        mend_merge::line_hunks(base, theirs),
        git_hunks(dir.path(), base, theirs)
    );
}

/// A random file from a small vocabulary, so lines repeat a lot.
fn repetitive(rng: &mut Rng, n: usize, vocabulary: usize) -> Vec<String> {
    (0..n)
        .map(|_| format!("w{}", rng.below(vocabulary)))
        .collect()
}

/// Code-like text: unique lines among many blank lines and braces.
fn code_base(rng: &mut Rng) -> Vec<String> {
    let n = 300 + rng.below(1500);
    (0..n)
        .map(|i| {
            if rng.below(3) == 0 {
                common_line(rng)
            } else {
                format!("line {i}")
            }
        })
        .collect()
}

fn common_line(rng: &mut Rng) -> String {
    ["", "}", "{", "    }"][rng.below(4)].to_owned()
}

/// Blocks of new unique lines mixed with blanks and braces at random
/// densities, so runs of unmatched lines surround very common ones and
/// git's rule for setting those aside decides.
fn code_edit(rng: &mut Rng, base: &[String], tag: &str) -> Vec<String> {
    let mut b = base.to_vec();
    for k in 0..1 + rng.below(12) {
        let at = rng.below(b.len() + 1);
        let density = 1 + rng.below(6);
        let block: Vec<String> = (0..5 + rng.below(60))
            .map(|j| {
                if rng.below(density) == 0 {
                    common_line(rng)
                } else {
                    format!("{tag} {k} {j}")
                }
            })
            .collect();
        let cut = rng.below(8).min(b.len() - at);
        b.splice(at..at + cut, block);
    }
    b
}

fn code_like(rng: &mut Rng) -> (Vec<u8>, Vec<u8>) {
    let a = code_base(rng);
    let mut b = code_edit(rng, &a, "new");
    b.push("the last line differs".into());
    (join(&a, false, true), join(&b, false, true))
}

/// Merges of code-like files edited on both sides, in all three styles.
#[test]
fn code_like_merges_match_git() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(0xC0DE);
    for case in 0..60 {
        let base = code_base(&mut rng);
        let ours = code_edit(&mut rng, &base, "ours");
        let theirs = code_edit(&mut rng, &base, "theirs");
        let (b, o, t) = (
            join(&base, false, true),
            join(&ours, false, true),
            join(&theirs, false, true),
        );
        for style in [Style::Merge, Style::Diff3, Style::Zdiff3] {
            let want = git_merge(dir.path(), &b, &o, &t, style);
            assert!(
                mend_merge(&b, &o, &t, style) == want,
                "case {case} {style:?}"
            );
        }
    }
}

/// Two-way diffs against `git diff`'s hunks: small repetitive pairs, and
/// large ones whose edit cost passes xdiff's cut-offs (cost 256, and the
/// square root of the sizes), where git stops searching for a minimal
/// diff and its heuristics decide.
#[test]
fn two_way_diffs_match_git_diff() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x5EED_D1FF);
    let mut failures = Vec::new();
    let cases: usize = std::env::var("MERGE_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400);
    for case in 0..cases {
        let (n, vocabulary, edits) = match case % 8 {
            0 => (
                2000 + rng.below(3000),
                40 + rng.below(400),
                300 + rng.below(900),
            ),
            1 => (200 + rng.below(800), 3 + rng.below(20), 50 + rng.below(200)),
            _ => (rng.below(40), 2 + rng.below(8), 1 + rng.below(8)),
        };
        if case % 8 == 2 {
            let (a, b) = code_like(&mut rng);
            let want = git_hunks(dir.path(), &a, &b);
            if want != mend_merge::line_hunks(&a, &b) {
                failures.push(format!("case {case}: code-like, git {} hunks", want.len()));
            }
            continue;
        }
        let a = repetitive(&mut rng, n, vocabulary);
        let mut b = a.clone();
        for _ in 0..edits {
            let at = rng.below(b.len() + 1);
            match rng.below(3) {
                0 => b.insert(at, format!("w{}", rng.below(vocabulary + 3))),
                1 if at < b.len() => {
                    b.remove(at);
                }
                _ if at < b.len() => b[at] = format!("w{}", rng.below(vocabulary)),
                _ => {}
            }
        }
        b.push("the last line differs".into());
        let (a, b) = (join(&a, false, true), join(&b, false, rng.below(6) != 0));
        let want = git_hunks(dir.path(), &a, &b);
        let got = mend_merge::line_hunks(&a, &b);
        if want != got {
            failures.push(format!(
                "case {case}: {} lines, git {} hunks, mend {}",
                n,
                want.len(),
                got.len()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {cases} two-way diffs differ from git:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Files of 40,000 lines with clustered edits: past 65,536 diagonals
/// xdiff's cost limit rises above 256, and its good-snake cut-off (a long
/// run of matching lines reached far enough) decides the split. The diffs
/// and the merges must still be git's.
#[test]
fn huge_diffs_match_git_through_the_good_snake_cut_off() {
    let dir = tempfile::tempdir().unwrap();
    for seed in 1..=3u64 {
        let mut rng = Rng(0xB16 + seed);
        let a = repetitive(&mut rng, 40_000, 50);
        let mut b = a.clone();
        let mut at = 0;
        while at + 40 < b.len() {
            let n = 5 + rng.below(25);
            for line in &mut b[at..at + n] {
                *line = format!("w{}", rng.below(50));
            }
            at += n + 20 + rng.below(100);
        }
        b.push("the last line differs".into());
        let (a, b) = (join(&a, false, true), join(&b, false, true));
        assert_eq!(
            mend_merge::line_hunks(&a, &b),
            git_hunks(dir.path(), &a, &b),
            "seed {seed}"
        );
        let mut theirs = a.clone();
        theirs.splice(0..0, b"a new first line\n".iter().copied());
        let want = git_merge(dir.path(), &a, &b, &theirs, Style::Merge);
        assert!(
            mend_merge(&a, &b, &theirs, Style::Merge) == want,
            "seed {seed}"
        );
    }
}

/// `mend_core::diff::unified` against `git diff -U3`: the hunks, their
/// headers and their context lines, byte for byte. Every line is unique,
/// so the changed runs are the same whichever diff finds them, and what is
/// compared is how runs are cut into hunks: git joins two runs when the
/// unchanged lines between them are at most twice the context (6), so a
/// gap of exactly 6 lines is one hunk. The gaps drawn cluster around 6.
/// Lines start with a digit, so git adds no function name to a header.
#[test]
fn unified_diff_hunks_join_as_git_joins() {
    if !git_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x6A75_6E6B);
    let mut failures = Vec::new();
    let cases = 300;
    for case in 0..cases {
        let mut old = Vec::new();
        let mut new = Vec::new();
        for run in 0..1 + rng.below(6) {
            // Unchanged lines before each run: 0..=9, mostly 5..=7.
            let gap = match rng.below(4) {
                0 => rng.below(10),
                _ => 5 + rng.below(3),
            };
            for i in 0..gap {
                let line = format!("{case} {run} same {i}\n");
                old.push(line.clone());
                new.push(line);
            }
            let (gone, added) = match rng.below(3) {
                0 => (1 + rng.below(3), 0),
                1 => (0, 1 + rng.below(3)),
                _ => (1 + rng.below(3), 1 + rng.below(3)),
            };
            old.extend((0..gone).map(|i| format!("{case} {run} old {i}\n")));
            new.extend((0..added).map(|i| format!("{case} {run} new {i}\n")));
        }
        for i in 0..rng.below(10) {
            let line = format!("{case} tail {i}\n");
            old.push(line.clone());
            new.push(line);
        }
        let (old, new) = (old.concat(), new.concat());
        std::fs::write(dir.path().join("a"), &old).unwrap();
        std::fs::write(dir.path().join("b"), &new).unwrap();
        let out = Command::new("git")
            .current_dir(dir.path())
            .args(["diff", "--no-index", "--no-color", "-U3", "a", "b"])
            .output()
            .unwrap();
        let git = String::from_utf8_lossy(&out.stdout);
        let from_hunks = |d: &str| d.find("\n@@").map(|at| d[at + 1..].to_owned());
        let ours = mend_core::diff::unified(Some("a"), Some("b"), &old, &new);
        if from_hunks(&git) != from_hunks(&ours) {
            failures.push(format!("case {case}:\n--- git\n{git}\n--- mend\n{ours}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {cases} diffs cut into hunks unlike git:\n{}",
        failures.len(),
        failures[..failures.len().min(3)].join("\n")
    );
}

/// Random texts of a few repeated lines (so many diffs are minimal and
/// the tie-breaking matters), as base and a version with up to three
/// spans replaced, with or without a final newline. Lines start with a
/// digit or a brace, so git adds no function name to a hunk header, and
/// stay under 1,024 bytes, below `git diff`'s tail trimming.
fn shown_case() -> impl proptest::strategy::Strategy<Value = (String, String)> {
    use proptest::prelude::*;
    let line = prop_oneof![
        Just("1".to_owned()),
        Just("2 two".to_owned()),
        Just("}".to_owned()),
        Just(String::new()),
        "[0-9]{1,3}",
    ];
    let lines = move || prop::collection::vec(line.clone(), 0..40);
    let edit = (any::<prop::sample::Index>(), 0usize..5, lines());
    (
        lines(),
        prop::collection::vec(edit, 0..4),
        any::<(bool, bool)>(),
    )
        .prop_map(|(base, edits, (nl_old, nl_new))| {
            let mut new = base.clone();
            for (at, len, put) in edits {
                let a = at.index(new.len() + 1);
                let end = (a + len).min(new.len());
                new.splice(a..end, put.into_iter().take(6));
            }
            let join = |l: &[String], nl: bool| {
                let mut s = l.join("\n");
                if nl && !l.is_empty() {
                    s.push('\n');
                }
                s
            };
            (join(&base, nl_old), join(&new, nl_new))
        })
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]

    /// The diff mend shows (`mend_core::diff::render_file`: dry runs,
    /// `mend diff`, stale files, pending and turn diffs) is `git diff`'s,
    /// byte for byte from the first hunk on: the same changed lines, the
    /// same three lines of context, hunks joined where git joins them.
    #[test]
    fn the_shown_diff_is_git_diffs((old, new) in shown_case()) {
        if !git_available() {
            return Ok(());
        }
        let dir = tempfile::tempdir().unwrap();
        let git = git_diff(dir.path(), ("a", old.as_bytes()), ("b", new.as_bytes()), 3);
        let shown = mend_core::diff::render_file(("a", Some(&old)), ("b", Some(&new)), false);
        let ours = shown.text();
        let from_hunks = |d: &str| d.find("@@").map(|at| d[at..].to_owned());
        proptest::prop_assert_eq!(from_hunks(&git), from_hunks(&ours));
        // The hunks as data are the text's hunks.
        let count = ours.lines().filter(|l| l.starts_with("@@ ")).count();
        proptest::prop_assert_eq!(shown.hunks.len(), count);
    }
}
