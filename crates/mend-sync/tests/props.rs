//! Properties of the state machine over random texts.

use mend_sync::{Buffer, Event, Outcome};
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

proptest! {
    /// Whatever the texts, an editor applying the hunks ends with the text
    /// the machine holds, and the base becomes the disk's bytes.
    #[test]
    fn hunks_reproduce_the_text(base in text(), ours in text(), disk in text(), dirty: bool) {
        let mut buf = Buffer::new(&base, &ours, dirty);
        let out = buf.on(Event::Disk(&disk));
        match &out {
            Outcome::Reload(c) | Outcome::Merged(c) | Outcome::Conflict { change: c, .. } => {
                prop_assert_eq!(apply(&ours, c), c.text.clone());
                prop_assert_eq!(&c.text[..], buf.text());
                prop_assert_eq!(buf.base(), &disk[..]);
            }
            Outcome::Ignored(_) => prop_assert_eq!(buf.text(), &ours[..]),
            other => prop_assert!(false, "unexpected {:?}", other),
        }
        if let Outcome::Conflict { change, regions } = &out {
            let lines: Vec<&[u8]> = change.text.split_inclusive(|&b| b == b'\n').collect();
            for r in regions {
                prop_assert!(lines[r.start].starts_with(b"<<<<<<< buffer"));
                prop_assert!(lines[r.end - 1].starts_with(b">>>>>>> disk"));
            }
        }
        // Unsaved text is never thrown away for the disk's: a dirty buffer
        // with its own changes never reloads, and keeps every line it
        // changed or added.
        if dirty && ours != base {
            prop_assert!(!matches!(out, Outcome::Reload(_)), "{:?}", out);
            // A conflict side's last line gets the newline it lacked.
            let lines = |t: &[u8]| -> Vec<Vec<u8>> {
                t.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect()
            };
            let (kept, base_lines) = (lines(buf.text()), lines(&base));
            for line in lines(&ours) {
                if !base_lines.contains(&line) {
                    prop_assert!(kept.contains(&line), "lost {:?}", String::from_utf8_lossy(&line));
                }
            }
        }
        // A clean buffer always ends equal to the disk.
        if !dirty {
            prop_assert_eq!(buf.text(), &disk[..]);
        }
    }

    /// A buffer without its own changes takes the disk's bytes exactly,
    /// dirty flag or not.
    #[test]
    fn unchanged_buffer_takes_the_disk(base in text(), disk in text()) {
        let mut buf = Buffer::new(&base, &base, true);
        buf.on(Event::Disk(&disk));
        prop_assert_eq!(buf.text(), &disk[..]);
        prop_assert!(!buf.in_conflict());
    }
}
