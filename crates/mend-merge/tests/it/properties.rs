//! Merge properties.

use mend_merge::{Adjacent, Labels, Language, Options, RegionKind, Style, merge};
use proptest::prelude::*;

fn text(lines: &[String], crlf: bool, final_nl: bool) -> Vec<u8> {
    let eol = if crlf { "\r\n" } else { "\n" };
    let mut s = lines.join(eol);
    if final_nl && !lines.is_empty() {
        s.push_str(eol);
    }
    s.into_bytes()
}

fn lines() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec("[a-c}]{0,3}", 0..25)
}

/// Lines that are whole items of Python (imports, assignments, list
/// expressions) and most of them of TOML (keys, table headers).
fn code_lines() -> impl Strategy<Value = Vec<String>> {
    let item = prop_oneof![
        "import [a-d]",
        "[a-d] = [0-3]",
        "\\[[a-c]\\]",
        Just(String::new()),
    ];
    prop::collection::vec(item, 0..20)
}

/// A base of [`code_lines`] and two descendants, each the base with one
/// span replaced by other such lines (so the sides share most items).
fn code_merge() -> impl Strategy<Value = (Vec<String>, Vec<String>, Vec<String>)> {
    let edit = || (any::<prop::sample::Index>(), 0usize..4, code_lines());
    (code_lines(), edit(), edit()).prop_map(|(base, o, t)| {
        let apply = |(at, len, new): (prop::sample::Index, usize, Vec<String>)| {
            let mut side = base.clone();
            let a = at.index(base.len() + 1);
            side.splice(a..(a + len).min(base.len()), new.into_iter().take(3));
            side
        };
        let (ours, theirs) = (apply(o), apply(t));
        (base, ours, theirs)
    })
}

fn run(b: &[u8], o: &[u8], t: &[u8], style: Style, adjacent: Adjacent) -> (Vec<u8>, usize) {
    let m = merge(
        b,
        o,
        t,
        &Options {
            style,
            adjacent,
            ..Options::default()
        },
    );
    (m.render(&Labels::default(), style, 7), m.conflicts())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn trivial_merges(b in lines(), x in lines(), crlf in any::<bool>(), nl in any::<bool>(), nl2 in any::<bool>()) {
        let (b, x) = (text(&b, crlf, nl), text(&x, crlf, nl2));
        for style in [Style::Merge, Style::Diff3, Style::Zdiff3] {
            for adjacent in [Adjacent::Conflict, Adjacent::Merge] {
                prop_assert_eq!(run(&b, &x, &b, style, adjacent), (x.clone(), 0));
                prop_assert_eq!(run(&b, &b, &x, style, adjacent), (x.clone(), 0));
                prop_assert_eq!(run(&b, &x, &x, style, adjacent), (x.clone(), 0));
            }
        }
    }

    #[test]
    fn regions_cover_all_inputs(b in lines(), o in lines(), t in lines()) {
        let (b, o, t) = (text(&b, false, true), text(&o, false, true), text(&t, false, true));
        for style in [Style::Merge, Style::Diff3, Style::Zdiff3] {
            let m = merge(&b, &o, &t, &Options { style, ..Options::default() });
            let (mut pb, mut po, mut pt) = (0, 0, 0);
            for r in m.regions() {
                prop_assert_eq!((r.base.start, r.ours.start, r.theirs.start), (pb, po, pt));
                if r.kind == RegionKind::Unchanged {
                    prop_assert_eq!(r.base.len(), r.ours.len());
                    prop_assert_eq!(r.ours.len(), r.theirs.len());
                }
                pb = r.base.end;
                po = r.ours.end;
                pt = r.theirs.end;
            }
            let count = |t: &[u8]| t.iter().filter(|&&c| c == b'\n').count();
            prop_assert_eq!((pb, po, pt), (count(&b), count(&o), count(&t)));
        }
    }

    /// A clean merge, in either policy, only holds whole lines of its
    /// inputs: no two lines glued together, whatever the final newlines.
    #[test]
    fn clean_merges_hold_only_input_lines(
        b in lines(), o in lines(), t in lines(),
        nl in any::<(bool, bool, bool)>(),
    ) {
        let (b, o, t) = (text(&b, false, nl.0), text(&o, false, nl.1), text(&t, false, nl.2));
        let known: std::collections::HashSet<&[u8]> = [&b, &o, &t]
            .iter()
            .flat_map(|x| x.split(|&c| c == b'\n'))
            .collect();
        for adjacent in [Adjacent::Conflict, Adjacent::Merge] {
            let (out, conflicts) = run(&b, &o, &t, Style::Merge, adjacent);
            if conflicts == 0 {
                for line in out.split(|&c| c == b'\n') {
                    prop_assert!(known.contains(line), "{:?} made {:?}", adjacent, String::from_utf8_lossy(line));
                }
            }
        }
    }

    /// With `Adjacent::Merge`, edits to separate (possibly touching) parts of
    /// the base either merge into the result that holds both sides'
    /// changes or stay in conflict; they stay in conflict only where they
    /// touch, and touching replacements of non-empty spans always merge.
    #[test]
    fn adjacent_merge_keeps_both_sides(
        n in 2usize..30,
        cut in any::<prop::sample::Index>(),
        ours_len in 0usize..4, ours_new in 0usize..4,
        theirs_len in 0usize..4, theirs_new in 0usize..4,
        gap in 0usize..3,
    ) {
        let base: Vec<String> = (0..n).map(|i| format!("base {i}")).collect();
        let a = cut.index(n);
        let a_end = (a + ours_len).min(n);
        let b_start = (a_end + gap).min(n);
        let b_end = (b_start + theirs_len).min(n);
        // Two insertions at the same place have no right order: skip.
        prop_assume!(!(a == a_end && b_start == b_end && a_end == b_start));
        prop_assume!(a_end > a || ours_new > 0);
        prop_assume!(b_end > b_start || theirs_new > 0);
        let ours_lines: Vec<String> = (0..ours_new).map(|i| format!("ours {i}")).collect();
        let theirs_lines: Vec<String> = (0..theirs_new).map(|i| format!("theirs {i}")).collect();
        let mut ours = base.clone();
        ours.splice(a..a_end, ours_lines.clone());
        let mut theirs = base.clone();
        theirs.splice(b_start..b_end, theirs_lines.clone());
        let mut both = base.clone();
        both.splice(b_start..b_end, theirs_lines);
        both.splice(a..a_end, ours_lines);
        let both = text(&both, false, true);
        let (b, o, t) = (text(&base, false, true), text(&ours, false, true), text(&theirs, false, true));
        let touching_spans = a_end > a && b_end > b_start && a_end == b_start;
        for style in [Style::Merge, Style::Diff3, Style::Zdiff3] {
            let (out, conflicts) = run(&b, &o, &t, style, Adjacent::Merge);
            if conflicts == 0 {
                prop_assert_eq!(&out, &both);
            } else {
                prop_assert_eq!(b_start, a_end, "only touching edits may conflict");
                prop_assert!(!touching_spans, "touching replacements must merge");
            }
            // git's policy may conflict on touching edits, but a clean
            // result is the same text.
            let (out, conflicts) = run(&b, &o, &t, style, Adjacent::Conflict);
            if conflicts == 0 {
                prop_assert_eq!(&out, &both);
            } else {
                prop_assert_eq!(b_start, a_end, "only touching edits may conflict");
            }
        }
    }

    /// Where git merges cleanly, every mode gives git's bytes: resolvers
    /// only ever see git's conflicts. The lines are Python and TOML items,
    /// so the structured resolver has trees to follow.
    #[test]
    fn clean_git_merges_are_kept_by_every_mode(
        (b, o, t) in code_merge(),
        nl in any::<(bool, bool, bool)>(), crlf in any::<bool>(),
    ) {
        let (b, o, t) = (text(&b, crlf, nl.0), text(&o, crlf, nl.1), text(&t, crlf, nl.2));
        for style in [Style::Merge, Style::Diff3, Style::Zdiff3] {
            let (git, conflicts) = run(&b, &o, &t, style, Adjacent::Conflict);
            if conflicts != 0 {
                continue;
            }
            for adjacent in [Adjacent::Conflict, Adjacent::Merge] {
                for structured in [None, Some(Language::Python), Some(Language::Toml)] {
                    let m = merge(&b, &o, &t, &Options { style, adjacent, structured, ..Options::default() });
                    let out = m.render(&Labels::default(), style, 7);
                    prop_assert_eq!((out, m.conflicts()), (git.clone(), 0));
                }
            }
        }
    }

    /// The structured resolver settles only what git left in conflict, and
    /// what it writes holds only lines of the inputs.
    #[test]
    fn structured_merges_hold_only_input_lines((b, o, t) in code_merge()) {
        let (b, o, t) = (text(&b, false, true), text(&o, false, true), text(&t, false, true));
        let known: std::collections::HashSet<&[u8]> = [&b, &o, &t]
            .iter()
            .flat_map(|x| x.split(|&c| c == b'\n'))
            .collect();
        for structured in [Language::Python, Language::Toml] {
            let opts = Options { structured: Some(structured), ..Options::default() };
            let m = merge(&b, &o, &t, &opts);
            let out = m.render(&Labels::default(), Style::Merge, 7);
            for line in out.split(|&c| c == b'\n') {
                prop_assert!(line.starts_with(b"<<<<<<<") || line.starts_with(b"=======")
                    || line.starts_with(b">>>>>>>") || known.contains(line),
                    "made {:?}", String::from_utf8_lossy(line));
            }
        }
    }

    /// Theirs makes every change ours made and more (each a rewrite of a
    /// distinct line). The union of both is theirs, so a clean merge in
    /// any style is exactly theirs.
    #[test]
    fn a_side_holding_the_others_changes_merges_to_it(
        n in 3usize..30,
        picks in prop::collection::vec((any::<prop::sample::Index>(), any::<bool>()), 1..8),
    ) {
        let base: Vec<String> = (0..n).map(|i| format!("line {i} = {i};")).collect();
        let mut ours = base.clone();
        let mut theirs = base.clone();
        for (at, shared) in &picks {
            let i = at.index(n);
            theirs[i] = format!("line {i} = new;");
            if *shared {
                ours[i] = theirs[i].clone();
            }
        }
        prop_assume!(ours != base && ours != theirs);
        let (b, o, t) = (text(&base, false, true), text(&ours, false, true), text(&theirs, false, true));
        for style in [Style::Merge, Style::Diff3, Style::Zdiff3] {
            let (out, conflicts) = run(&b, &o, &t, style, Adjacent::Merge);
            if conflicts == 0 {
                prop_assert_eq!(&out, &t);
            }
        }
    }

    /// Both sides write the same block a few lines apart (one may also
    /// rewrite the lines after it). Where `Adjacent::Merge` settles what
    /// git left in conflict, the block is never written twice.
    #[test]
    fn adjacent_merge_never_duplicates_a_block(
        n in 1usize..20,
        at in any::<prop::sample::Index>(),
        shift in 0usize..=3,
        block_len in 1usize..4,
        rewrite in 0usize..3,
        theirs_first in any::<bool>(),
        indent in any::<bool>(),
    ) {
        let base: Vec<String> = (0..n).map(|i| format!("base {i}")).collect();
        let p = at.index(n + 1);
        let q = (p + shift).min(n);
        let block: Vec<String> = (0..block_len).map(|i| format!("block {i}()")).collect();
        let mut one = base.clone();
        one.splice(p..p, block.clone());
        // The other side writes the block (perhaps indented differently)
        // at q, in place of up to `rewrite` lines it also rewrites.
        let end = (q + rewrite).min(n);
        let mut written: Vec<String> = block
            .iter()
            .map(|l| if indent { format!("    {l}") } else { l.clone() })
            .collect();
        written.extend((q..end).map(|i| format!("rewritten {i}")));
        let mut other = base.clone();
        other.splice(q..end, written);
        let (ours, theirs) = if theirs_first { (other, one) } else { (one, other) };
        let (b, o, t) = (text(&base, false, true), text(&ours, false, true), text(&theirs, false, true));
        for style in [Style::Merge, Style::Diff3, Style::Zdiff3] {
            let m = merge(&b, &o, &t, &Options { style, adjacent: Adjacent::Merge, ..Options::default() });
            if m.resolved() > 0 {
                let out = String::from_utf8(m.render(&Labels::default(), style, 7)).unwrap();
                let copies = out.lines().filter(|l| l.trim() == block[0]).count();
                prop_assert_eq!(copies, 1, "a resolved merge wrote the block {} times:\n{}", copies, out);
            }
        }
    }

    /// The two-way diff is an edit script: keeping the lines outside its
    /// hunks and taking each hunk's new lines rebuilds the second text.
    #[test]
    fn two_way_hunks_rebuild_the_new_text(a in lines(), b in lines(), nl in any::<bool>()) {
        let (a, b) = (text(&a, false, true), text(&b, false, nl));
        let split = |t: &[u8]| -> Vec<Vec<u8>> {
            t.split_inclusive(|&c| c == b'\n').map(<[u8]>::to_vec).collect()
        };
        let (old, new) = (split(&a), split(&b));
        let mut rebuilt = Vec::new();
        let mut at = 0;
        for h in mend_merge::line_hunks(&a, &b) {
            prop_assert!(h.start >= at);
            rebuilt.extend_from_slice(&old[at..h.start]);
            rebuilt.extend_from_slice(&new[h.text]);
            at = h.end;
        }
        rebuilt.extend_from_slice(&old[at..]);
        prop_assert_eq!(rebuilt, new);
    }
}
