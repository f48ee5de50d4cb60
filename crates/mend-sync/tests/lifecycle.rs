//! The buffer-sync lifecycle as a table: each row opens a buffer on a file,
//! then plays what the person, the editor and the disk do, naming the
//! notices each step produces and the state at the end. One test per row.
//!
//! The harness runs every job at once and answers every recheck with the
//! file as it is; the editor side is explicit (`Apply`, `Resync`), so rows
//! can hold a notification back while the person goes on typing.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use libtest_mimic::{Arguments, Failed, Trial};
use mend_sync::{Bytes, Disk, Editor, Input, Notice, Outcome, Output, Skipped};

#[derive(Clone, Copy)]
enum Ev {
    /// Something else writes the file; the watcher reports it.
    Write(&'static str),
    /// The file becomes something that is not read.
    Special(&'static str),
    /// The file is deleted.
    Delete,
    /// The person types: the buffer becomes this, with unsaved changes.
    Type(&'static str),
    /// Undo back to the saved state: the buffer is this, unmodified.
    Clean(&'static str),
    /// The editor applies the oldest notification it has not handled (or
    /// refuses it, if its buffer moved on) and reports.
    Apply,
    /// Like `Apply`, but the editor cannot hold the text exactly: it ends
    /// with this instead, and says which notification it applied.
    ApplyAs(&'static str),
    /// The same for a reload: the buffer stays unmodified.
    ApplyCleanAs(&'static str),
    /// The editor passes over the oldest notification and reports.
    Resync,
    /// `:w`: the file becomes the buffer.
    Save,
}

struct Row {
    name: &'static str,
    /// The file, and the buffer (with unsaved changes when it differs).
    start: (&'static str, &'static str),
    /// Each step with the notices it produces, as [`summary`] writes them,
    /// joined by "; " (empty for none).
    steps: &'static [(Ev, &'static str)],
    /// Buffer text, server base, dirty, conflict mode at the end.
    end: (&'static str, &'static str, bool, bool),
}

const BASE: &str = "fn a() {\n    1\n}\n\nfn b() {\n    2\n}\n\nfn c() {\n    3\n}\n";
const USER_A: &str = "fn a() {\n    10\n}\n\nfn b() {\n    2\n}\n\nfn c() {\n    3\n}\n";
const AGENT_C: &str = "fn a() {\n    1\n}\n\nfn b() {\n    2\n}\n\nfn c() {\n    30\n}\n";
const BOTH: &str = "fn a() {\n    10\n}\n\nfn b() {\n    2\n}\n\nfn c() {\n    30\n}\n";
const AGENT_A: &str = "fn a() {\n    11\n}\n\nfn b() {\n    2\n}\n\nfn c() {\n    3\n}\n";
const CONFLICT_A: &str = "fn a() {\n<<<<<<< buffer\n    10\n=======\n    11\n>>>>>>> disk\n}\n\nfn b() {\n    2\n}\n\nfn c() {\n    3\n}\n";
const AGENT_A_C: &str = "fn a() {\n    11\n}\n\nfn b() {\n    2\n}\n\nfn c() {\n    30\n}\n";
const RESOLVED_A_C: &str = "fn a() {\n    10\n}\n\nfn b() {\n    2\n}\n\nfn c() {\n    30\n}\n";
const AGENT_C_B: &str = "fn a() {\n    1\n}\n\nfn b() {\n    20\n}\n\nfn c() {\n    30\n}\n";
const USER_A_B: &str = "fn a() {\n    10\n}\n\nfn b() {\n    20\n}\n\nfn c() {\n    3\n}\n";
const BOTH_B: &str = "fn a() {\n    10\n}\n\nfn b() {\n    20\n}\n\nfn c() {\n    30\n}\n";
const AGENT_C2: &str = "fn a() {\n    1\n}\n\nfn b() {\n    2\n}\n\nfn c() {\n    300\n}\n";
const BOTH_C2: &str = "fn a() {\n    10\n}\n\nfn b() {\n    2\n}\n\nfn c() {\n    300\n}\n";
const USER_AB_C2: &str = "fn a() {\n    10\n}\n\nfn b() {\n    20\n}\n\nfn c() {\n    300\n}\n";

use Ev::*;

const ROWS: &[Row] = &[
    Row {
        name: "clean_buffer_reloads",
        start: (BASE, BASE),
        steps: &[(Write(AGENT_C), "reload 1 hunk"), (Apply, "")],
        end: (AGENT_C, AGENT_C, false, false),
    },
    Row {
        name: "dirty_buffer_merges_other_region",
        start: (BASE, USER_A),
        steps: &[(Write(AGENT_C), "merged 1 hunk"), (Apply, "")],
        end: (BOTH, AGENT_C, true, false),
    },
    Row {
        name: "the_base_moves_only_when_the_editor_applied_the_merge",
        start: (BASE, USER_A),
        steps: &[(Write(AGENT_C), "merged 1 hunk")],
        end: (USER_A, BASE, true, false),
    },
    Row {
        name: "same_line_changed_both_ways_is_a_conflict",
        start: (BASE, USER_A),
        steps: &[(Write(AGENT_A), "conflict 1 region at 1..6"), (Apply, "")],
        end: (CONFLICT_A, AGENT_A, true, true),
    },
    Row {
        // Typing while a notification is on its way: the server never pairs
        // that notification's base with a buffer that lacks it.
        name: "typing_while_a_merge_is_in_flight_merges_again",
        start: (BASE, USER_A),
        steps: &[
            (Write(AGENT_C), "merged 1 hunk"),
            (Type(USER_A_B), "merged 1 hunk"),
            (Write(AGENT_C2), ""),
            (Apply, ""),
            (Apply, "merged 1 hunk"),
            (Apply, ""),
        ],
        end: (USER_AB_C2, AGENT_C2, true, false),
    },
    Row {
        // A reload computed while the buffer was clean races the person's
        // first keystroke: it is passed over, and the typing merges.
        name: "typing_while_a_reload_is_in_flight_merges_instead",
        start: (BASE, BASE),
        steps: &[
            (Write(AGENT_C), "reload 1 hunk"),
            (Type(USER_A), "merged 1 hunk"),
            (Apply, ""),
            (Apply, ""),
        ],
        end: (BOTH, AGENT_C, true, false),
    },
    Row {
        // The case the issue reproduced over the protocol: the agent writes
        // one line twice while the person types elsewhere.
        name: "agent_writes_a_line_twice_while_the_person_types",
        start: (BASE, USER_A),
        steps: &[
            (Write(AGENT_C), "merged 1 hunk"),
            (Type(USER_A_B), "merged 1 hunk"),
            (Apply, ""),
            (Write(AGENT_C2), ""),
            (Apply, "merged 1 hunk"),
            (Apply, ""),
        ],
        end: (USER_AB_C2, AGENT_C2, true, false),
    },
    Row {
        name: "writes_during_conflict_mode_wait_and_merge_after_resolution",
        start: (BASE, USER_A),
        steps: &[
            (Write(AGENT_A), "conflict 1 region at 1..6"),
            (Apply, ""),
            (Write(AGENT_A_C), "skipped conflict"),
            (Write(AGENT_A), ""),
            (Write(AGENT_A_C), "skipped conflict"),
            // Resolving every marker ends conflict mode; the waiting write
            // merges at once.
            (Type(USER_A), "merged 1 hunk"),
            (Apply, ""),
        ],
        end: (RESOLVED_A_C, AGENT_A_C, true, false),
    },
    Row {
        name: "markers_left_in_the_text_keep_conflict_mode",
        start: (BASE, USER_A),
        steps: &[
            (Write(AGENT_A), "conflict 1 region at 1..6"),
            (Apply, ""),
            (Type(CONFLICT_A), ""),
            (Write(AGENT_A_C), "skipped conflict"),
        ],
        end: (CONFLICT_A, AGENT_A, true, true),
    },
    Row {
        name: "saving_with_markers_keeps_them_and_ends_conflict_mode",
        start: (BASE, USER_A),
        steps: &[
            (Write(AGENT_A), "conflict 1 region at 1..6"),
            (Apply, ""),
            (Save, ""),
        ],
        end: (CONFLICT_A, CONFLICT_A, false, false),
    },
    Row {
        name: "save_then_the_next_write_merges",
        start: (BASE, USER_A),
        steps: &[
            (Save, ""),
            (Type(USER_A_B), ""),
            (Write(BOTH), "merged 1 hunk"),
            (Apply, ""),
        ],
        end: (BOTH_B, BOTH, true, false),
    },
    Row {
        // A save starts a new version: a merge computed before it is
        // passed over, and the file as it is after the save reloads.
        name: "a_save_passes_over_a_merge_computed_before_it",
        start: (BASE, USER_A),
        steps: &[(Write(AGENT_C), "merged 1 hunk"), (Save, ""), (Apply, "")],
        end: (USER_A, USER_A, false, false),
    },
    Row {
        name: "touch_without_content_change_is_ignored",
        start: (BASE, USER_A),
        steps: &[(Write(BASE), "")],
        end: (USER_A, BASE, true, false),
    },
    Row {
        name: "convergent_change_is_already_in_the_buffer",
        start: (BASE, USER_A),
        steps: &[(Write(USER_A), "")],
        end: (USER_A, USER_A, true, false),
    },
    Row {
        name: "merge_then_the_agents_next_write_beside_it_merges",
        start: (BASE, USER_A),
        steps: &[
            (Write(AGENT_C), "merged 1 hunk"),
            (Apply, ""),
            (Write(AGENT_C_B), "merged 1 hunk"),
            (Apply, ""),
        ],
        end: (BOTH_B, AGENT_C_B, true, false),
    },
    Row {
        name: "user_deletes_a_line_agent_changes_it",
        start: ("one\ntwo\nthree\n", "one\nthree\n"),
        steps: &[
            (Write("one\nTWO\nthree\n"), "conflict 1 region at 1..5"),
            (Apply, ""),
        ],
        end: (
            "one\n<<<<<<< buffer\n=======\nTWO\n>>>>>>> disk\nthree\n",
            "one\nTWO\nthree\n",
            true,
            true,
        ),
    },
    Row {
        name: "adjacent_line_edits_merge",
        start: ("one\ntwo\nthree\nfour\n", "one\nTWO\nthree\nfour\n"),
        steps: &[
            (Write("one\ntwo\nTHREE\nfour\n"), "merged 1 hunk"),
            (Apply, ""),
        ],
        end: (
            "one\nTWO\nTHREE\nfour\n",
            "one\ntwo\nTHREE\nfour\n",
            true,
            false,
        ),
    },
    Row {
        name: "empty_file_written_whole_reloads",
        start: ("", ""),
        steps: &[(Write("all\nnew\n"), "reload 1 hunk"), (Apply, "")],
        end: ("all\nnew\n", "all\nnew\n", false, false),
    },
    Row {
        name: "crlf_file_merges_with_its_endings",
        start: ("a\r\nb\r\nc\r\nd\r\n", "A\r\nb\r\nc\r\nd\r\n"),
        steps: &[
            (Write("a\r\nb\r\nc\r\nD\r\n"), "merged 1 hunk"),
            (Apply, ""),
        ],
        end: ("A\r\nb\r\nc\r\nD\r\n", "a\r\nb\r\nc\r\nD\r\n", true, false),
    },
    Row {
        name: "delete_asks_and_save_recreates",
        start: (BASE, USER_A),
        steps: &[(Delete, "deleted"), (Delete, ""), (Save, "")],
        end: (USER_A, USER_A, false, false),
    },
    Row {
        name: "deleted_then_recreated_reloads_a_clean_buffer",
        start: (BASE, BASE),
        steps: &[
            (Delete, "deleted"),
            (Write(AGENT_C), "reload 1 hunk"),
            (Apply, ""),
        ],
        end: (AGENT_C, AGENT_C, false, false),
    },
    Row {
        name: "undo_back_to_clean_reloads",
        start: (BASE, USER_A),
        steps: &[
            (Write(AGENT_C), "merged 1 hunk"),
            (Apply, ""),
            // Undo walks back past the merge to the text as loaded.
            (Clean(BASE), "reload 1 hunk"),
            (Apply, ""),
        ],
        end: (AGENT_C, AGENT_C, false, false),
    },
    Row {
        name: "binary_content_is_skipped_once",
        start: (BASE, USER_A),
        steps: &[(Write("a\0b\n"), "skipped binary"), (Write("a\0b\n"), "")],
        end: (USER_A, BASE, true, false),
    },
    Row {
        name: "a_fifo_is_skipped_and_text_afterwards_merges",
        start: (BASE, USER_A),
        steps: &[
            (Special("a FIFO (named pipe)"), "skipped not-a-file"),
            (Write(AGENT_C), "merged 1 hunk"),
            (Apply, ""),
        ],
        end: (BOTH, AGENT_C, true, false),
    },
    Row {
        name: "a_refused_merge_is_computed_again_for_the_current_text",
        start: (BASE, USER_A),
        steps: &[
            (Write(AGENT_C), "merged 1 hunk"),
            (Type(USER_A_B), "merged 1 hunk"),
            (Resync, ""),
            (Apply, ""),
        ],
        end: (BOTH_B, AGENT_C, true, false),
    },
    Row {
        // An editor that cannot hold the text exactly says which
        // notification it applied; what it holds then counts as its own
        // change, and nothing is sent again and again.
        name: "an_editor_that_cannot_hold_the_text_does_not_loop",
        start: (BASE, BASE),
        steps: &[(Write(AGENT_C), "reload 1 hunk"), (ApplyAs(AGENT_C2), "")],
        end: (AGENT_C2, AGENT_C, true, false),
    },
    Row {
        // The same for a clean buffer (an editor that normalizes line
        // endings, a final newline or a BOM): it stays on what it holds,
        // derived from the file, and is not reloaded again and again.
        name: "a_clean_buffer_that_cannot_hold_the_text_is_reloaded_once",
        start: (BASE, BASE),
        steps: &[
            (Write(AGENT_C), "reload 1 hunk"),
            (ApplyCleanAs(AGENT_C2), ""),
        ],
        end: (AGENT_C2, AGENT_C, false, false),
    },
    Row {
        // A byte order mark is not part of the first line: a conflict there
        // keeps it at the start of the file, not inside the markers.
        name: "a_conflict_on_the_first_line_keeps_the_bom_first",
        start: ("\u{feff}a\nb\n", "\u{feff}user\nb\n"),
        steps: &[
            (Write("\u{feff}agent\nb\n"), "conflict 1 region at 0..5"),
            (Apply, ""),
        ],
        end: (
            "\u{feff}<<<<<<< buffer\nuser\n=======\nagent\n>>>>>>> disk\nb\n",
            "\u{feff}agent\nb\n",
            true,
            true,
        ),
    },
    Row {
        name: "an_acknowledged_text_with_more_typing_moves_the_base",
        start: (BASE, USER_A),
        steps: &[(Write(AGENT_C), "merged 1 hunk"), (ApplyAs(BOTH_C2), "")],
        end: (BOTH_C2, AGENT_C, true, false),
    },
];

fn summary(o: &Outcome) -> String {
    let n = |c: &mend_sync::Change| match c.hunks.len() {
        1 => "1 hunk".to_owned(),
        k => format!("{k} hunks"),
    };
    match o {
        Outcome::Reload(c) => format!("reload {}", n(c)),
        Outcome::Merged(c) => format!("merged {}", n(c)),
        Outcome::Conflict { regions, .. } => {
            let at: Vec<String> = regions
                .iter()
                .map(|r| format!("{}..{}", r.start, r.end))
                .collect();
            let k = regions.len();
            let noun = if k == 1 { "region" } else { "regions" };
            format!("conflict {k} {noun} at {}", at.join(","))
        }
        Outcome::Deleted => "deleted".into(),
        Outcome::Skipped(s) => format!("skipped {}", s.reason()),
        Outcome::Renamed { to } => format!("renamed {}", to.display()),
        Outcome::Replaced { by } => format!("replaced by {}", by.display()),
    }
}

/// The text an editor ends with when it applies `change`'s hunks, last
/// first, to `old`.
fn apply_hunks(old: &[u8], change: &mend_sync::Change) -> Vec<u8> {
    let mut lines: Vec<Vec<u8>> = old
        .split_inclusive(|&b| b == b'\n')
        .map(<[u8]>::to_vec)
        .collect();
    for h in change.hunks.iter().rev() {
        let new: Vec<Vec<u8>> = h
            .text
            .split_inclusive(|&b| b == b'\n')
            .map(<[u8]>::to_vec)
            .collect();
        lines.splice(h.start..h.end, new);
    }
    lines.concat()
}

/// The editor, the file and the server of one row.
struct Harness {
    core: Editor,
    path: PathBuf,
    disk: Disk,
    text: String,
    saved: String,
    version: i64,
    applied: Option<u64>,
    inbox: VecDeque<Notice>,
}

fn bytes(s: &str) -> Bytes {
    Arc::from(s.as_bytes())
}

impl Harness {
    /// Feeds the server, runs its jobs and rechecks to the end, and returns
    /// the notices.
    fn server(&mut self, input: Input) -> Result<Vec<Notice>, Failed> {
        let mut queue = VecDeque::from([input]);
        let mut notices = Vec::new();
        while let Some(input) = queue.pop_front() {
            for o in self.core.on(input).map_err(|e| e.to_string())? {
                match o {
                    Output::Notice(n) => notices.push(n),
                    Output::Compute { buffer, job } => queue.push_back(Input::Computed {
                        buffer,
                        computed: job.run(),
                    }),
                    Output::Recheck { path, id } => queue.push_back(Input::Disk {
                        path,
                        disk: self.disk.clone(),
                        recheck: Some(id),
                    }),
                    // Nothing else happens while the grace period runs.
                    Output::Timer { id, .. } => queue.push_back(Input::Timer(id)),
                }
            }
        }
        Ok(notices)
    }

    fn report(&mut self) -> Result<Vec<Notice>, Failed> {
        self.server(Input::Report {
            path: self.path.clone(),
            text: bytes(&self.text),
            dirty: self.text != self.saved,
            version: Some(self.version),
            applied: self.applied,
        })
    }

    fn watch(&mut self, disk: Disk) -> Result<Vec<Notice>, Failed> {
        self.disk = disk.clone();
        self.server(Input::Disk {
            path: self.path.clone(),
            disk,
            recheck: None,
        })
    }

    fn step(&mut self, ev: Ev) -> Result<Vec<Notice>, Failed> {
        match ev {
            Write(s) => self.watch(Disk::Bytes(bytes(s))),
            Special(kind) => self.watch(Disk::Unreadable(Skipped::NotAFile(kind.into()))),
            Delete => self.watch(Disk::Missing),
            Type(s) | Clean(s) => {
                self.text = s.into();
                if matches!(ev, Clean(_)) {
                    self.saved = s.into();
                }
                self.version += 1;
                self.report()
            }
            Apply | ApplyAs(_) | ApplyCleanAs(_) | Resync => self.apply(ev),
            Save => {
                self.disk = Disk::Bytes(bytes(&self.text));
                self.saved.clone_from(&self.text);
                self.version += 1;
                self.server(Input::Saved {
                    path: self.path.clone(),
                    text: bytes(&self.text),
                    version: Some(self.version),
                })
            }
        }
    }

    fn apply(&mut self, ev: Ev) -> Result<Vec<Notice>, Failed> {
        let n = self.inbox.pop_front().ok_or("no notification to apply")?;
        let (Outcome::Reload(change) | Outcome::Merged(change) | Outcome::Conflict { change, .. }) =
            &n.outcome
        else {
            return Err(format!("not a text change: {n:?}").into());
        };
        if matches!(ev, Resync) || n.version != Some(self.version) {
            return self.report();
        }
        if apply_hunks(self.text.as_bytes(), change) != change.text[..] {
            return Err("the hunks do not produce the new text".into());
        }
        self.text = match ev {
            ApplyAs(s) | ApplyCleanAs(s) => s.into(),
            _ => String::from_utf8_lossy(&change.text).into_owned(),
        };
        if matches!(n.outcome, Outcome::Reload(_)) && !matches!(ev, ApplyAs(_)) {
            self.saved.clone_from(&self.text);
        }
        self.version += 1;
        self.applied = Some(change.seq);
        self.report()
    }
}

fn run(row: &Row) -> Result<(), Failed> {
    let (file, text) = row.start;
    // The rows run with the safe resolvers, which editor sync runs when
    // asked (`--merge safe`): some rows settle neighbouring edits.
    let mut core = Editor::new();
    core.set_policy(mend_merge::Policy::Safe);
    let mut h = Harness {
        core,
        path: PathBuf::from("src/lib.rs"),
        disk: Disk::Bytes(bytes(file)),
        text: file.into(),
        saved: file.into(),
        version: 1,
        applied: None,
        inbox: VecDeque::new(),
    };
    h.server(Input::Open {
        path: h.path.clone(),
        text: bytes(file),
        dirty: false,
        version: Some(1),
        base: None,
    })?;
    if text != file {
        h.step(Type(text))?;
    }
    for (i, (ev, want)) in row.steps.iter().enumerate() {
        let notices = h.step(*ev)?;
        let got: Vec<String> = notices.iter().map(|n| summary(&n.outcome)).collect();
        if got.join("; ") != *want {
            return Err(format!("step {i}: expected `{want}`, got `{}`", got.join("; ")).into());
        }
        h.inbox.extend(
            notices
                .into_iter()
                .filter(|n| !matches!(n.outcome, Outcome::Skipped(_) | Outcome::Deleted)),
        );
    }
    let b = h.core.buffer(Path::new("src/lib.rs")).ok_or("not open")?;
    let (text, base, dirty, conflict) = row.end;
    let got = (
        h.text.clone(),
        String::from_utf8_lossy(b.base().unwrap_or_default()).into_owned(),
        b.is_dirty(),
        b.in_conflict(),
    );
    let want = (text.to_owned(), base.to_owned(), dirty, conflict);
    if got != want {
        return Err(format!(
            "end state (text, base, dirty, conflict):\n  want {want:?}\n  got  {got:?}"
        )
        .into());
    }
    if b.text() != h.text.as_bytes() {
        return Err("the server's text is not the editor's".into());
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let mut trials: Vec<Trial> = ROWS
        .iter()
        .map(|row| Trial::test(row.name, move || run(row)))
        .collect();
    trials.push(Trial::test(
        "a_file_created_under_a_new_dirty_buffer_is_merged_against_nothing",
        || {
            // The buffer was opened with unsaved text for a file that did not
            // exist; another program creates it. Both texts are new: a
            // conflict, never the file taken silently as the buffer's base.
            let mut h = Harness {
                core: Editor::new(),
                path: PathBuf::from("new.rs"),
                disk: Disk::Missing,
                text: "mine\n".into(),
                saved: String::new(),
                version: 1,
                applied: None,
                inbox: VecDeque::new(),
            };
            h.server(Input::Open {
                path: h.path.clone(),
                text: bytes("mine\n"),
                dirty: true,
                version: Some(1),
                base: None,
            })?;
            let got: Vec<String> = h
                .watch(Disk::Bytes(bytes("theirs\n")))?
                .iter()
                .map(|n| summary(&n.outcome))
                .collect();
            if got == ["conflict 1 region at 0..5"] {
                Ok(())
            } else {
                Err(format!("{got:?}").into())
            }
        },
    ));
    trials.push(Trial::test(
        "a_write_in_the_dirty_open_window_is_merged",
        dirty_open_window,
    ));
    trials.push(Trial::test("too_large_is_skipped", || {
        let big = "a".repeat(mend_sync::MAX_BYTES + 1);
        let mut h = Harness {
            core: Editor::new(),
            path: PathBuf::from("f"),
            disk: Disk::Bytes(bytes("a\n")),
            text: "a\n".into(),
            saved: "a\n".into(),
            version: 1,
            applied: None,
            inbox: VecDeque::new(),
        };
        h.server(Input::Open {
            path: h.path.clone(),
            text: bytes("a\n"),
            dirty: false,
            version: Some(1),
            base: None,
        })?;
        let got: Vec<String> = h
            .watch(Disk::Bytes(bytes(&big)))?
            .iter()
            .map(|n| summary(&n.outcome))
            .collect();
        if got == ["skipped too-large"] {
            Ok(())
        } else {
            Err(format!("{got:?}").into())
        }
    }));
    libtest_mimic::run(&args, trials).exit();
}

/// A dirty buffer is opened deriving from BASE (the text the editor last
/// loaded, or the file as read before the open was answered), and an agent
/// writes the file before the first read after the open: that read is a
/// change to merge, never the buffer's base (which would revert the agent's
/// change at the next save).
fn dirty_open_window() -> Result<(), Failed> {
    let mut h = Harness {
        core: Editor::new(),
        path: PathBuf::from("src/lib.rs"),
        disk: Disk::Bytes(bytes(AGENT_C)),
        text: USER_A.into(),
        saved: BASE.into(),
        version: 1,
        applied: None,
        inbox: VecDeque::new(),
    };
    let notices = h.server(Input::Open {
        path: h.path.clone(),
        text: bytes(USER_A),
        dirty: true,
        version: Some(1),
        base: Some(bytes(BASE)),
    })?;
    let got: Vec<String> = notices.iter().map(|n| summary(&n.outcome)).collect();
    if got != ["merged 1 hunk"] {
        return Err(format!("notices after the open: {got:?}").into());
    }
    h.inbox.extend(notices);
    h.apply(Apply)?;
    let b = h.core.buffer(Path::new("src/lib.rs")).ok_or("not open")?;
    if h.text != BOTH || b.base() != Some(AGENT_C.as_bytes()) {
        return Err(format!(
            "text {:?}, base {:?}",
            h.text,
            b.base().map(String::from_utf8_lossy)
        )
        .into());
    }
    Ok(())
}
