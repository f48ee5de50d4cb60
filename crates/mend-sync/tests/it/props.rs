//! Properties of the merge jobs over random texts.

use std::sync::Arc;

use mend_merge::{Options, Policy};
use mend_sync::{Job, JobKind, Merged};
use proptest::prelude::*;

fn text() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop::sample::select(vec!["a\n", "b\n", "c\n", "}\n", "\n", "x"]),
        0..12,
    )
    .prop_map(|ls| ls.concat().into_bytes())
}

fn apply(old: &[u8], c: &mend_sync::Change) -> Vec<u8> {
    let mut lines: Vec<&[u8]> = old.split_inclusive(|&b| b == b'\n').collect();
    for h in c.hunks.iter().rev() {
        lines.splice(h.start..h.end, h.text.split_inclusive(|&b| b == b'\n'));
    }
    lines.concat()
}

fn lines(t: &[u8]) -> Vec<Vec<u8>> {
    t.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect()
}

proptest! {
    /// Whatever the texts, an editor applying a job's hunks ends with the
    /// job's text; conflict regions start and end at markers; and a merge
    /// never drops a line the buffer added.
    #[test]
    fn merges_keep_the_buffer_and_hunks_reproduce_it(base in text(), ours in text(), disk in text(), safe in any::<bool>()) {
        let policy = if safe { Policy::Safe } else { Policy::Git };
        let job = Job {
            seq: 1,
            kind: JobKind::Merge {
                base: Arc::from(&base[..]),
                text: Arc::from(&ours[..]),
                disk: Arc::from(&disk[..]),
            },
            options: Options::for_path("src/lib.rs", policy),
        };
        let result = job.run();
        prop_assert_eq!(result.seq, 1);
        let (change, regions) = match &result.result {
            Merged::Clean(c) => (c, &[][..]),
            Merged::Conflict { change, regions, .. } => (change, &regions[..]),
            Merged::InBuffer => return Ok(()),
            Merged::Reload(_) => panic!("a merge job reloaded"),
        };
        prop_assert_eq!(apply(&ours, change), change.text.to_vec());
        let out: Vec<&[u8]> = change.text.split_inclusive(|&b| b == b'\n').collect();
        for r in regions {
            prop_assert!(out[r.start].starts_with(b"<<<<<<< buffer"));
            prop_assert!(out[r.end - 1].starts_with(b">>>>>>> disk"));
        }
        prop_assert!(safe || change.resolved.is_empty());
        for r in &change.resolved {
            prop_assert!(r.lines.start <= r.lines.end && r.lines.end <= out.len());
            prop_assert!(regions.iter().all(|c| r.lines.end <= c.start || c.end <= r.lines.start));
        }
        // A conflict side's last line gets the newline it lacked.
        let (kept, base_lines) = (lines(&change.text), lines(&base));
        for line in lines(&ours) {
            if !base_lines.contains(&line) {
                prop_assert!(kept.contains(&line), "lost {:?}", String::from_utf8_lossy(&line));
            }
        }
    }

    /// A reload's hunks turn the buffer into the file exactly.
    #[test]
    fn reloads_reproduce_the_file(ours in text(), disk in text()) {
        let job = Job {
            seq: 7,
            kind: JobKind::Reload { text: Arc::from(&ours[..]), disk: Arc::from(&disk[..]) },
            options: Options::default(),
        };
        let Merged::Reload(c) = job.run().result else { panic!("not a reload") };
        prop_assert_eq!(&c.text[..], &disk[..]);
        prop_assert_eq!(apply(&ours, &c), disk);
        prop_assert_eq!(c.disk_sha256, mend_core::ContentHash::of(&c.text));
    }
}
