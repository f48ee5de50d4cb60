//! The buffer-sync lifecycle as a table: each row starts a buffer, feeds it
//! events, and names the outcome of every step and the state at the end.
//! One test per row.

use libtest_mimic::{Arguments, Failed, Trial};
use mend_sync::{Buffer, Event, Ignored, Outcome, Skipped};

/// An event in a row; owned so rows can be plain data.
#[derive(Clone, Copy)]
enum Ev {
    Disk(&'static str),
    Edited(&'static str, bool),
    Saved(&'static str),
    Deleted,
    Renamed(&'static str),
    Refused(&'static str, bool),
}

struct Row {
    name: &'static str,
    /// Base, text, dirty.
    start: (&'static str, &'static str, bool),
    /// Each event with the outcome expected, written as [`summary`] does.
    steps: &'static [(Ev, &'static str)],
    /// Text, base, dirty, conflict mode at the end.
    end: (&'static str, &'static str, bool, bool),
}

const BASE: &str = "fn a() {\n    1\n}\n\nfn b() {\n    2\n}\n\nfn c() {\n    3\n}\n";
const USER_A: &str = "fn a() {\n    10\n}\n\nfn b() {\n    2\n}\n\nfn c() {\n    3\n}\n";
const AGENT_C: &str = "fn a() {\n    1\n}\n\nfn b() {\n    2\n}\n\nfn c() {\n    30\n}\n";
const BOTH: &str = "fn a() {\n    10\n}\n\nfn b() {\n    2\n}\n\nfn c() {\n    30\n}\n";
const AGENT_A: &str = "fn a() {\n    11\n}\n\nfn b() {\n    2\n}\n\nfn c() {\n    3\n}\n";
const CONFLICT_A: &str = "fn a() {\n<<<<<<< buffer\n    10\n=======\n    11\n>>>>>>> disk\n}\n\nfn b() {\n    2\n}\n\nfn c() {\n    3\n}\n";
const AGENT_A_C: &str = "fn a() {\n    11\n}\n\nfn b() {\n    2\n}\n\nfn c() {\n    30\n}\n";
const AGENT_C_B: &str = "fn a() {\n    1\n}\n\nfn b() {\n    20\n}\n\nfn c() {\n    30\n}\n";
const USER_A_B: &str = "fn a() {\n    10\n}\n\nfn b() {\n    20\n}\n\nfn c() {\n    3\n}\n";
const BOTH_B: &str = "fn a() {\n    10\n}\n\nfn b() {\n    20\n}\n\nfn c() {\n    30\n}\n";

const ROWS: &[Row] = &[
    Row {
        name: "clean_buffer_reloads",
        start: (BASE, BASE, false),
        steps: &[(Ev::Disk(AGENT_C), "reload 1 hunk")],
        end: (AGENT_C, AGENT_C, false, false),
    },
    Row {
        name: "dirty_buffer_merges_other_region",
        start: (BASE, USER_A, true),
        steps: &[(Ev::Disk(AGENT_C), "merged 1 hunk")],
        end: (BOTH, AGENT_C, true, false),
    },
    Row {
        name: "same_line_changed_both_ways_is_a_conflict",
        start: (BASE, USER_A, true),
        steps: &[(Ev::Disk(AGENT_A), "conflict 1 region at 1..6")],
        end: (CONFLICT_A, AGENT_A, true, true),
    },
    Row {
        name: "conflict_mode_ignores_disk_changes",
        start: (BASE, USER_A, true),
        steps: &[
            (Ev::Disk(AGENT_A), "conflict 1 region at 1..6"),
            (Ev::Disk(AGENT_A_C), "ignored conflict-mode"),
            (Ev::Disk(AGENT_A), "ignored unchanged"),
        ],
        end: (CONFLICT_A, AGENT_A, true, true),
    },
    Row {
        name: "edits_in_conflict_mode_keep_it",
        start: (BASE, USER_A, true),
        steps: &[
            (Ev::Disk(AGENT_A), "conflict 1 region at 1..6"),
            (Ev::Edited(AGENT_A, true), "noted"),
            (Ev::Edited(BASE, false), "noted"),
            (Ev::Disk(AGENT_C), "ignored conflict-mode"),
        ],
        end: (BASE, AGENT_A, false, true),
    },
    Row {
        name: "save_leaves_conflict_mode_and_the_next_write_merges",
        start: (BASE, USER_A, true),
        steps: &[
            (Ev::Disk(AGENT_A), "conflict 1 region at 1..6"),
            (Ev::Edited(USER_A, true), "noted"),
            (Ev::Saved(USER_A), "recheck"),
            (Ev::Disk(USER_A), "ignored unchanged"),
            (Ev::Edited(USER_A_B, true), "noted"),
            (Ev::Disk(BOTH), "merged 1 hunk"),
        ],
        end: (BOTH_B, BOTH, true, false),
    },
    Row {
        name: "save_then_a_write_made_during_conflict_mode_reloads",
        start: (BASE, USER_A, true),
        steps: &[
            (Ev::Disk(AGENT_A), "conflict 1 region at 1..6"),
            (Ev::Edited(USER_A, true), "noted"),
            (Ev::Saved(USER_A), "recheck"),
            (Ev::Disk(BOTH), "reload 1 hunk"),
        ],
        end: (BOTH, BOTH, false, false),
    },
    Row {
        name: "own_save_is_ignored",
        start: (BASE, USER_A, true),
        steps: &[
            (Ev::Saved(USER_A), "recheck"),
            (Ev::Disk(USER_A), "ignored unchanged"),
        ],
        end: (USER_A, USER_A, false, false),
    },
    Row {
        name: "own_save_seen_before_the_saved_event",
        start: (BASE, USER_A, true),
        steps: &[
            (Ev::Disk(USER_A), "ignored in-buffer"),
            (Ev::Saved(USER_A), "recheck"),
            (Ev::Disk(USER_A), "ignored unchanged"),
        ],
        end: (USER_A, USER_A, false, false),
    },
    Row {
        name: "touch_without_content_change_is_ignored",
        start: (BASE, USER_A, true),
        steps: &[(Ev::Disk(BASE), "ignored unchanged")],
        end: (USER_A, BASE, true, false),
    },
    Row {
        name: "convergent_change_is_already_in_the_buffer",
        start: (BASE, USER_A, true),
        steps: &[(Ev::Disk(USER_A), "ignored in-buffer")],
        end: (USER_A, USER_A, true, false),
    },
    Row {
        name: "merge_then_the_agents_next_write_beside_it_merges",
        start: (BASE, USER_A, true),
        steps: &[
            (Ev::Disk(AGENT_C), "merged 1 hunk"),
            (Ev::Edited(BOTH, true), "noted"),
            (Ev::Disk(AGENT_C_B), "merged 1 hunk"),
        ],
        end: (BOTH_B, AGENT_C_B, true, false),
    },
    Row {
        name: "user_deletes_a_function_agent_adds_another",
        start: (
            "fn a() {}\n\nfn b() {}\n\nfn c() {}\n",
            "fn a() {}\n\nfn c() {}\n",
            true,
        ),
        steps: &[(
            Ev::Disk("fn a() {}\n\nfn b() {}\n\nfn c() {}\n\nfn d() {}\n"),
            "merged 1 hunk",
        )],
        end: (
            "fn a() {}\n\nfn c() {}\n\nfn d() {}\n",
            "fn a() {}\n\nfn b() {}\n\nfn c() {}\n\nfn d() {}\n",
            true,
            false,
        ),
    },
    Row {
        name: "agent_adds_a_function_while_the_user_edits_one",
        start: (BASE, USER_A, true),
        steps: &[(
            Ev::Disk(concat!(
                "fn a() {\n    1\n}\n\nfn b() {\n    2\n}\n\nfn c() {\n    3\n}\n",
                "\nfn d() {\n    4\n}\n"
            )),
            "merged 1 hunk",
        )],
        end: (
            "fn a() {\n    10\n}\n\nfn b() {\n    2\n}\n\nfn c() {\n    3\n}\n\nfn d() {\n    4\n}\n",
            "fn a() {\n    1\n}\n\nfn b() {\n    2\n}\n\nfn c() {\n    3\n}\n\nfn d() {\n    4\n}\n",
            true,
            false,
        ),
    },
    Row {
        name: "agent_rewrites_a_body_while_the_user_adds_an_import",
        start: (
            "use a;\n\nfn f() {\n    let x = 1;\n    x\n}\n",
            "use a;\nuse b;\n\nfn f() {\n    let x = 1;\n    x\n}\n",
            true,
        ),
        steps: &[(
            Ev::Disk("use a;\n\nfn f() {\n    let y = 2;\n    y * 2\n}\n"),
            "merged 1 hunk",
        )],
        end: (
            "use a;\nuse b;\n\nfn f() {\n    let y = 2;\n    y * 2\n}\n",
            "use a;\n\nfn f() {\n    let y = 2;\n    y * 2\n}\n",
            true,
            false,
        ),
    },
    Row {
        name: "agent_changes_a_signature_the_user_the_body_below",
        start: (
            "fn f(a: u8) {\n    a\n}\n",
            "fn f(a: u8) {\n    a + 1\n}\n",
            true,
        ),
        steps: &[(Ev::Disk("fn f(a: u16) {\n    a\n}\n"), "merged 1 hunk")],
        end: (
            "fn f(a: u16) {\n    a + 1\n}\n",
            "fn f(a: u16) {\n    a\n}\n",
            true,
            false,
        ),
    },
    Row {
        name: "saving_with_markers_keeps_them_and_ends_conflict_mode",
        start: (BASE, USER_A, true),
        steps: &[
            (Ev::Disk(AGENT_A), "conflict 1 region at 1..6"),
            (Ev::Saved(CONFLICT_A), "recheck"),
            (Ev::Disk(CONFLICT_A), "ignored unchanged"),
        ],
        end: (CONFLICT_A, CONFLICT_A, false, false),
    },
    Row {
        name: "adjacent_line_edits_merge",
        start: ("one\ntwo\nthree\nfour\n", "one\nTWO\nthree\nfour\n", true),
        steps: &[(Ev::Disk("one\ntwo\nTHREE\nfour\n"), "merged 1 hunk")],
        end: (
            "one\nTWO\nTHREE\nfour\n",
            "one\ntwo\nTHREE\nfour\n",
            true,
            false,
        ),
    },
    Row {
        name: "user_deletes_a_line_agent_changes_it",
        start: ("one\ntwo\nthree\n", "one\nthree\n", true),
        steps: &[(Ev::Disk("one\nTWO\nthree\n"), "conflict 1 region at 1..5")],
        end: (
            "one\n<<<<<<< buffer\n=======\nTWO\n>>>>>>> disk\nthree\n",
            "one\nTWO\nthree\n",
            true,
            true,
        ),
    },
    Row {
        name: "empty_file_written_whole_reloads",
        start: ("", "", false),
        steps: &[(Ev::Disk("all\nnew\n"), "reload 1 hunk")],
        end: ("all\nnew\n", "all\nnew\n", false, false),
    },
    Row {
        name: "user_appends_agent_prepends",
        start: ("a\nb\nc\n", "a\nb\nc\nuser\n", true),
        steps: &[(Ev::Disk("agent\na\nb\nc\n"), "merged 1 hunk")],
        end: ("agent\na\nb\nc\nuser\n", "agent\na\nb\nc\n", true, false),
    },
    Row {
        name: "crlf_file_merges_with_its_endings",
        start: ("a\r\nb\r\nc\r\nd\r\n", "A\r\nb\r\nc\r\nd\r\n", true),
        steps: &[(Ev::Disk("a\r\nb\r\nc\r\nD\r\n"), "merged 1 hunk")],
        end: ("A\r\nb\r\nc\r\nD\r\n", "a\r\nb\r\nc\r\nD\r\n", true, false),
    },
    Row {
        name: "delete_asks_and_save_recreates",
        start: (BASE, USER_A, true),
        steps: &[
            (Ev::Deleted, "ask-recreate"),
            (Ev::Saved(USER_A), "recheck"),
            (Ev::Disk(USER_A), "ignored unchanged"),
        ],
        end: (USER_A, USER_A, false, false),
    },
    Row {
        name: "deleted_then_recreated_by_the_agent_reloads_a_clean_buffer",
        start: (BASE, BASE, false),
        steps: &[
            (Ev::Deleted, "ask-recreate"),
            (Ev::Disk(AGENT_C), "reload 1 hunk"),
        ],
        end: (AGENT_C, AGENT_C, false, false),
    },
    Row {
        name: "rename_is_followed",
        start: (BASE, USER_A, true),
        steps: &[(Ev::Renamed("src/new.rs"), "follow src/new.rs")],
        end: (USER_A, BASE, true, false),
    },
    Row {
        name: "undo_to_clean_rechecks_and_reloads",
        start: (BASE, USER_A, true),
        steps: &[
            (Ev::Disk(AGENT_C), "merged 1 hunk"),
            (Ev::Edited(BOTH, true), "noted"),
            // Undo walks back past the merge to the text as loaded.
            (Ev::Edited(BASE, false), "recheck"),
            (Ev::Disk(AGENT_C), "reload 1 hunk"),
        ],
        end: (AGENT_C, AGENT_C, false, false),
    },
    Row {
        name: "binary_and_huge_files_are_skipped",
        start: (BASE, USER_A, true),
        steps: &[(Ev::Disk("a\0b\n"), "skipped binary")],
        end: (USER_A, BASE, true, false),
    },
    Row {
        name: "refused_merge_goes_back_and_merges_the_current_text",
        start: (BASE, USER_A, true),
        steps: &[
            (Ev::Disk(AGENT_C), "merged 1 hunk"),
            // The user typed before the merge arrived; the editor refuses it.
            (Ev::Refused(BOTH_B, true), "recheck"),
            (Ev::Disk(AGENT_C), "ignored in-buffer"),
        ],
        end: (BOTH_B, AGENT_C, true, false),
    },
    Row {
        name: "refused_merge_with_user_text_elsewhere_merges_again",
        start: (BASE, USER_A, true),
        steps: &[
            (Ev::Disk(AGENT_C), "merged 1 hunk"),
            (Ev::Refused(USER_A_B, true), "recheck"),
            (Ev::Disk(AGENT_C), "merged 1 hunk"),
        ],
        end: (BOTH_B, AGENT_C, true, false),
    },
];

fn summary(o: &Outcome) -> String {
    let n = |c: &mend_sync::Change| match c.hunks.len() {
        1 => "1 hunk".to_owned(),
        k => format!("{k} hunks"),
    };
    let ignored = |i: Ignored| match i {
        Ignored::Unchanged => "unchanged",
        Ignored::InBuffer => "in-buffer",
        Ignored::ConflictMode => "conflict-mode",
    };
    match o {
        Outcome::Noted => "noted".into(),
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
        Outcome::Ignored(i) => format!("ignored {}", ignored(*i)),
        Outcome::Skipped(Skipped::Binary) => "skipped binary".into(),
        Outcome::Skipped(Skipped::TooLarge) => "skipped too-large".into(),
        Outcome::Recheck => "recheck".into(),
        Outcome::AskRecreate => "ask-recreate".into(),
        Outcome::Follow { to } => format!("follow {to}"),
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

fn run(row: &Row) -> Result<(), Failed> {
    let (base, text, dirty) = row.start;
    let mut buf = Buffer::new(base.as_bytes(), text.as_bytes(), dirty);
    for (i, (ev, want)) in row.steps.iter().enumerate() {
        let before = buf.text().to_vec();
        let event = match *ev {
            Ev::Disk(b) => Event::Disk(b.as_bytes()),
            Ev::Edited(t, d) => Event::Edited {
                text: t.as_bytes(),
                dirty: d,
            },
            Ev::Saved(t) => Event::Saved(t.as_bytes()),
            Ev::Deleted => Event::Deleted,
            Ev::Renamed(to) => Event::Renamed(to),
            Ev::Refused(t, d) => Event::Refused {
                text: t.as_bytes(),
                dirty: d,
            },
        };
        let out = buf.on(event);
        let got = summary(&out);
        if got != *want {
            return Err(format!("step {i}: expected `{want}`, got `{got}` ({out:?})").into());
        }
        let change = match &out {
            Outcome::Reload(c) | Outcome::Merged(c) | Outcome::Conflict { change: c, .. } => {
                Some(c)
            }
            _ => None,
        };
        if let Some(c) = change
            && (apply_hunks(&before, c) != c.text || c.text != buf.text())
        {
            return Err(format!("step {i}: the hunks do not produce the new text").into());
        }
    }
    let (text, base, dirty, conflict) = row.end;
    let got = (
        String::from_utf8_lossy(buf.text()).into_owned(),
        String::from_utf8_lossy(buf.base()).into_owned(),
        buf.is_dirty(),
        buf.in_conflict(),
    );
    let want = (text.to_owned(), base.to_owned(), dirty, conflict);
    if got != want {
        return Err(format!(
            "end state (text, base, dirty, conflict):\n  want {want:?}\n  got  {got:?}"
        )
        .into());
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let mut trials: Vec<Trial> = ROWS
        .iter()
        .map(|row| Trial::test(row.name, move || run(row)))
        .collect();
    trials.push(Trial::test("too_large_is_skipped", || {
        let big = vec![b'a'; mend_sync::MAX_BYTES + 1];
        let mut buf = Buffer::new(b"a\n", b"b\n", true);
        match buf.on(Event::Disk(&big)) {
            Outcome::Skipped(Skipped::TooLarge) if buf.base() == b"a\n" => Ok(()),
            other => Err(format!("{other:?}").into()),
        }
    }));
    libtest_mimic::run(&args, trials).exit();
}
