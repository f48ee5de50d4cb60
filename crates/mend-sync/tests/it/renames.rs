//! Renames between open buffers, decided once renames go quiet: each case
//! opens buffers, plays the watcher's reports, fires the grace timer, and
//! names the notices and where every buffer ends.

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;

use mend_sync::{Disk, Editor, Input, Notice, Outcome, Output};

/// The watcher's reports, in order.
#[derive(Clone, Copy)]
enum W {
    Renamed(&'static str, &'static str),
    Write(&'static str, &'static str),
    Gone(&'static str),
}

struct Sim {
    core: Editor,
    files: BTreeMap<PathBuf, String>,
    timer: Option<u64>,
    notices: Vec<String>,
}

fn show(n: &Notice) -> String {
    let p = n.path.display();
    match &n.outcome {
        Outcome::Renamed { to } => format!("{p} renamed to {}", to.display()),
        Outcome::Replaced { by } => format!("{p} replaced by {}", by.display()),
        Outcome::Deleted => format!("{p} deleted"),
        Outcome::Reload(c) => format!("{p} reload {}", String::from_utf8_lossy(&c.text).trim()),
        Outcome::Merged(c) => format!("{p} merged {}", String::from_utf8_lossy(&c.text).trim()),
        other => format!("{p} {other:?}"),
    }
}

impl Sim {
    fn new(open: &[(&str, &str)]) -> Sim {
        let mut sim = Sim {
            core: Editor::new(),
            files: BTreeMap::new(),
            timer: None,
            notices: Vec::new(),
        };
        for (p, text) in open {
            sim.files.insert(p.into(), (*text).to_owned());
            sim.feed(Input::Open {
                path: p.into(),
                text: Arc::from(text.as_bytes()),
                dirty: false,
                version: Some(1),
                base: None,
            });
        }
        sim.notices.clear();
        sim
    }

    fn disk(&self, p: &PathBuf) -> Disk {
        match self.files.get(p) {
            Some(t) => Disk::Bytes(Arc::from(t.as_bytes())),
            None => Disk::Missing,
        }
    }

    fn feed(&mut self, input: Input) {
        let mut queue = VecDeque::from([input]);
        while let Some(i) = queue.pop_front() {
            for o in self.core.on(i).expect("open") {
                match o {
                    Output::Notice(n) => self.notices.push(show(&n)),
                    Output::Compute { buffer, job } => queue.push_back(Input::Computed {
                        buffer,
                        computed: job.run(),
                    }),
                    Output::Recheck { path, id } => queue.push_back(Input::Disk {
                        disk: self.disk(&path),
                        path,
                        recheck: Some(id),
                    }),
                    Output::Timer { id, .. } => self.timer = Some(id),
                }
            }
        }
    }

    /// Applies a report to the files, then tells the server what the
    /// watcher would: the rename, then a read of every path it named.
    fn watch(&mut self, w: W) {
        match w {
            W::Renamed(from, to) => {
                let under: Vec<PathBuf> = self
                    .files
                    .keys()
                    .filter(|p| p.starts_with(from))
                    .cloned()
                    .collect();
                for p in under {
                    let rest = p.strip_prefix(from).unwrap().to_path_buf();
                    let t = self.files.remove(&p).unwrap();
                    let dest = if rest.as_os_str().is_empty() {
                        PathBuf::from(to)
                    } else {
                        PathBuf::from(to).join(rest)
                    };
                    self.files.insert(dest, t);
                }
                self.feed(Input::Renamed {
                    from: from.into(),
                    to: to.into(),
                });
                for p in [from, to] {
                    self.read(p);
                }
            }
            W::Write(p, text) => {
                self.files.insert(p.into(), text.into());
                self.read(p);
            }
            W::Gone(p) => {
                self.files.remove(&PathBuf::from(p));
                self.read(p);
            }
        }
    }

    /// Reads what the watcher would: every tracked path at or under `p`.
    fn read(&mut self, p: &str) {
        let tracked: Vec<PathBuf> = self
            .core
            .paths()
            .into_iter()
            .filter(|t| t.starts_with(p))
            .collect();
        for path in tracked {
            let disk = self.disk(&path);
            self.feed(Input::Disk {
                path,
                disk,
                recheck: None,
            });
        }
    }

    fn settle(&mut self) {
        if let Some(id) = self.timer.take() {
            self.feed(Input::Timer(id));
        }
    }

    fn open_paths(&self) -> Vec<String> {
        self.core.status().into_iter().map(|s| s.path).collect()
    }
}

fn case(open: &[(&str, &str)], events: &[W], notices: &[&str], open_after: &[&str]) {
    let mut sim = Sim::new(open);
    for &w in events {
        sim.watch(w);
    }
    assert!(
        sim.notices.is_empty(),
        "before the grace period: {:?}",
        sim.notices
    );
    sim.settle();
    assert_eq!(sim.notices, notices);
    assert_eq!(sim.open_paths(), open_after);
}

#[test]
fn a_rename_is_followed_once_renames_go_quiet() {
    case(
        &[("a.rs", "one\n")],
        &[W::Renamed("a.rs", "b.rs")],
        &["a.rs renamed to b.rs"],
        &["b.rs"],
    );
}

#[test]
fn a_backup_style_save_keeps_the_buffer_on_its_file() {
    case(
        &[("f.rs", "one\n")],
        &[
            W::Renamed("f.rs", "f.rs~"),
            W::Write("f.rs", "two\n"),
            W::Gone("f.rs~"),
        ],
        &["f.rs reload two"],
        &["f.rs"],
    );
}

#[test]
fn a_backup_kept_beside_the_file_keeps_the_buffer_on_its_file() {
    case(
        &[("f.rs", "one\n")],
        &[W::Renamed("f.rs", "f.rs~"), W::Write("f.rs", "two\n")],
        &["f.rs reload two"],
        &["f.rs"],
    );
}

#[test]
fn a_swap_through_a_temporary_name_moves_both_buffers() {
    case(
        &[("a.rs", "alpha\n"), ("b.rs", "beta\n")],
        &[
            W::Renamed("a.rs", "tmp"),
            W::Renamed("b.rs", "a.rs"),
            W::Renamed("tmp", "b.rs"),
        ],
        // A cycle: whichever goes first, the editor meets a name still in
        // use, and must hold one buffer aside for a moment.
        &["b.rs renamed to a.rs", "a.rs renamed to b.rs"],
        &["a.rs", "b.rs"],
    );
}

#[test]
fn a_rename_onto_an_open_buffer_replaces_it() {
    case(
        &[("a.rs", "alpha\n"), ("b.rs", "beta\n")],
        &[W::Renamed("a.rs", "b.rs")],
        &["b.rs replaced by a.rs", "a.rs renamed to b.rs"],
        &["b.rs"],
    );
}

#[test]
fn the_later_of_two_renames_onto_one_path_wins() {
    case(
        &[("a.rs", "alpha\n"), ("b.rs", "beta\n")],
        &[W::Renamed("a.rs", "c.rs"), W::Renamed("b.rs", "c.rs")],
        &["a.rs replaced by b.rs", "b.rs renamed to c.rs"],
        &["c.rs"],
    );
}

#[test]
fn a_folder_rename_moves_every_buffer_in_it_and_none_is_deleted() {
    case(
        &[
            ("src/a.rs", "alpha\n"),
            ("src/b.rs", "beta\n"),
            ("c.rs", "gamma\n"),
        ],
        &[
            W::Renamed("src/a.rs", "lib/a.rs"),
            W::Renamed("src/b.rs", "lib/b.rs"),
            W::Gone("src/a.rs"),
        ],
        &[
            "src/a.rs renamed to lib/a.rs",
            "src/b.rs renamed to lib/b.rs",
        ],
        &["c.rs", "lib/a.rs", "lib/b.rs"],
    );
}

#[test]
fn a_folder_rename_reported_once_moves_its_buffers() {
    case(
        &[
            ("src/a.rs", "alpha\n"),
            ("src/deep/b.rs", "beta\n"),
            ("srcx.rs", "x\n"),
        ],
        &[W::Renamed("src", "lib")],
        &[
            "src/a.rs renamed to lib/a.rs",
            "src/deep/b.rs renamed to lib/deep/b.rs",
        ],
        &["lib/a.rs", "lib/deep/b.rs", "srcx.rs"],
    );
}

#[test]
fn a_file_renamed_away_and_back_stays() {
    case(
        &[("a.rs", "alpha\n")],
        &[W::Renamed("a.rs", "x"), W::Renamed("x", "a.rs")],
        &[],
        &["a.rs"],
    );
}

#[test]
fn messages_under_the_old_name_still_reach_the_buffer() {
    let mut sim = Sim::new(&[("a.rs", "one\n")]);
    sim.watch(W::Renamed("a.rs", "b.rs"));
    sim.settle();
    sim.feed(Input::Report {
        path: "a.rs".into(),
        text: Arc::from(&b"one\ntwo\n"[..]),
        dirty: true,
        version: Some(2),
        applied: None,
    });
    let b = sim
        .core
        .buffer(std::path::Path::new("b.rs"))
        .expect("moved");
    assert_eq!(b.text(), b"one\ntwo\n");
}

#[test]
fn a_write_onto_a_buffer_waiting_for_a_rename_is_merged_after() {
    // The buffer at b.rs saw a.rs land on it; while that is decided it
    // takes no bytes, so it never merges a.rs's content as its own.
    let mut sim = Sim::new(&[("a.rs", "alpha\n"), ("b.rs", "beta\n")]);
    sim.watch(W::Renamed("a.rs", "b.rs"));
    assert!(sim.notices.is_empty(), "{:?}", sim.notices);
}
