//! Editor sync's decisions on arbitrary sequences of what the editor, the
//! disk and the shell report: opens, reports with any version and any
//! `applied`, saves, disk bytes (binary and invalid UTF-8 included),
//! missing and unreadable files, renames of files and folders, timers, and
//! job results delivered late or not at all. It never panics, and every
//! text change's hunks turn the buffer's text into the new text.
#![no_main]

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use mend_sync::{BufferId, Disk, Editor, Input, Job, Outcome, Output, Skipped};

const PATHS: [&str; 5] = ["a.rs", "b.rs", "src/c.rs", "src/d.rs", "lib/c.rs"];

/// Reads the fuzzer's bytes as small numbers and short texts.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }

    fn path(&mut self) -> Option<PathBuf> {
        Some(PathBuf::from(PATHS[usize::from(self.byte()?) % PATHS.len()]))
    }

    fn text(&mut self) -> Option<Arc<[u8]>> {
        let n = usize::from(self.byte()? % 24);
        let take = n.min(self.0.len());
        let (t, rest) = self.0.split_at(take);
        self.0 = rest;
        // Mostly lines, so merges have something to align.
        let t: Vec<u8> = t.iter().map(|&b| if b % 5 == 0 { b'\n' } else { b }).collect();
        Some(Arc::from(t))
    }
}

fn apply(old: &[u8], c: &mend_sync::Change) -> Vec<u8> {
    let mut lines: Vec<&[u8]> = old.split_inclusive(|&b| b == b'\n').collect();
    for h in c.hunks.iter().rev() {
        lines.splice(h.start..h.end, h.text.split_inclusive(|&b| b == b'\n'));
    }
    lines.concat()
}

fn input(b: &mut Bytes<'_>, timer: u64, jobs: &mut VecDeque<(BufferId, Job)>) -> Option<Input> {
    Some(match b.byte()? % 10 {
        0 => Input::Open {
            path: b.path()?,
            text: b.text()?,
            dirty: b.byte()? % 2 == 0,
            version: Some(i64::from(b.byte()?)),
            // The editor's `disk`, or the file read before the answer.
            base: match b.byte()? % 2 {
                0 => Some(b.text()?),
                _ => None,
            },
        },
        1 | 2 => Input::Report {
            path: b.path()?,
            text: b.text()?,
            dirty: b.byte()? % 2 == 0,
            version: Some(i64::from(b.byte()?)),
            applied: Some(u64::from(b.byte()? % 8)),
        },
        3 => Input::Saved {
            path: b.path()?,
            text: b.text()?,
            version: Some(i64::from(b.byte()?)),
        },
        4 | 5 => {
            let disk = match b.byte()? % 6 {
                0 => Disk::Missing,
                1 => Disk::Unreadable(Skipped::NotAFile("a FIFO (named pipe)".into())),
                _ => Disk::Bytes(b.text()?),
            };
            let recheck = (b.byte()? % 3 == 0).then_some(u64::from(b.byte()? % 8));
            Input::Disk {
                path: b.path()?,
                disk,
                recheck,
            }
        }
        6 => {
            // A file or a whole folder moves.
            let from = match b.byte()? % 3 {
                0 => PathBuf::from("src"),
                _ => b.path()?,
            };
            let to = match b.byte()? % 3 {
                0 => PathBuf::from("lib"),
                _ => b.path()?,
            };
            Input::Renamed { from, to }
        }
        7 => Input::Timer(timer),
        8 => Input::Close { path: b.path()? },
        _ => {
            let (buffer, job) = jobs.pop_front()?;
            Input::Computed {
                buffer,
                computed: job.run(),
            }
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes(data);
    let mut core = Editor::new();
    let mut jobs = VecDeque::new();
    let mut timer = 0;
    while let Some(i) = input(&mut b, timer, &mut jobs) {
        let Ok(outputs) = core.on(i) else { continue };
        for o in outputs {
            match o {
                Output::Notice(n) => {
                    if let Outcome::Reload(c) | Outcome::Merged(c) | Outcome::Conflict { change: c, .. } =
                        &n.outcome
                    {
                        let text = core.buffer(&n.path).expect("notified about an open buffer").text();
                        assert_eq!(apply(text, c), c.text.to_vec(), "hunks do not give the text");
                    }
                }
                Output::Compute { buffer, job } => jobs.push_back((buffer, job)),
                Output::Recheck { .. } => {}
                Output::Timer { id, .. } => timer = id,
            }
        }
    }
});
