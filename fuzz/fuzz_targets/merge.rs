//! The three-way merge on arbitrary triples: it never panics, its regions
//! cover every line of all three inputs in order, trivial merges give the
//! changed side byte for byte, a clean merge is the same in every style,
//! and where git's merge is clean every mode's resolvers leave it as is.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mend_merge::{Adjacent, Labels, Language, Options, RegionKind, Style, merge};

const STYLES: [Style; 3] = [Style::Merge, Style::Diff3, Style::Zdiff3];

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let mut parts = rest.splitn(3, |&b| b == 0xFF);
    let base = parts.next().unwrap_or_default();
    let ours = parts.next().unwrap_or_default();
    let theirs = parts.next().unwrap_or_default();
    let adjacent = if flags & 1 == 0 {
        Adjacent::Conflict
    } else {
        Adjacent::Merge
    };
    let structured = match (flags >> 1) & 3 {
        0 => None,
        1 => Some(Language::Python),
        2 => Some(Language::Rust),
        _ => Some(Language::Json),
    };
    let prose = flags & 8 != 0;
    let lines = |t: &[u8]| {
        t.iter().filter(|&&c| c == b'\n').count()
            + usize::from(!t.ends_with(b"\n") && !t.is_empty())
    };

    let mut clean: Option<Vec<u8>> = None;
    for style in STYLES {
        let opts = Options {
            style,
            adjacent,
            structured,
            prose,
        };
        let m = merge(base, ours, theirs, &opts);
        let git = merge(
            base,
            ours,
            theirs,
            &Options {
                style,
                ..Options::default()
            },
        );
        if git.is_clean() {
            let want = git.render(&Labels::default(), style, 7);
            assert_eq!(
                m.render(&Labels::default(), style, 7),
                want,
                "a resolver changed git's clean merge"
            );
        }
        let (mut pb, mut po, mut pt) = (0, 0, 0);
        for r in m.regions() {
            assert_eq!((r.base.start, r.ours.start, r.theirs.start), (pb, po, pt));
            if r.kind == RegionKind::Unchanged {
                assert_eq!(r.base.len(), r.ours.len());
                assert_eq!(r.ours.len(), r.theirs.len());
            }
            (pb, po, pt) = (r.base.end, r.ours.end, r.theirs.end);
        }
        assert_eq!((pb, po, pt), (lines(base), lines(ours), lines(theirs)));
        let out = m.render(&Labels::default(), style, 7);
        if m.is_clean() {
            if let Some(prev) = &clean {
                assert_eq!(prev, &out, "a clean merge depends on the conflict style");
            }
            clean = Some(out);
        }

        for (o, t, want) in [
            (ours, base, ours),
            (base, theirs, theirs),
            (ours, ours, ours),
        ] {
            let m = merge(base, o, t, &opts);
            assert!(m.is_clean(), "a trivial merge conflicted");
            assert_eq!(m.render(&Labels::default(), style, 7), want);
        }
    }
});
