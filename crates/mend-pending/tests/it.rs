//! Pending sessions on real files in temporary folders.

use std::collections::BTreeMap;
use std::path::Path;

use mend_core::formats::{self, Format};
use mend_pending::{Against, Error, Propose, Session, Streamed};
use mend_test_support::{put, search_replace as sr};
use mend_workspace::{Options, Workspace};

fn root() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::open(dir.path(), Options::default()).unwrap();
    (dir, ws)
}

fn read(root: &Path, rel: &str) -> Vec<u8> {
    std::fs::read(root.join(rel)).unwrap()
}

fn propose(s: &mut Session<'_>, response: &str) -> mend_core::ApplyReport {
    let parsed = formats::parse(response, Format::Auto).unwrap();
    s.propose(&parsed).unwrap()
}

fn letters(s: &Session<'_>) -> BTreeMap<String, String> {
    s.status()
        .unwrap()
        .into_iter()
        .map(|f| (f.path, f.status.letter().to_owned()))
        .collect()
}

const TEN: &str = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n";

#[test]
fn every_status_letter() {
    let (dir, ws) = root();
    let d = dir.path();
    for f in [
        "clean.txt",
        "mod.txt",
        "del.txt",
        "ren.txt",
        "local.txt",
        "both.txt",
    ] {
        put(d, f, TEN.as_bytes());
    }
    let mut s = Session::open(&ws, "default").unwrap();
    s.add(&["clean.txt".into(), "local.txt".into()]).unwrap();
    let response = [
        sr("mod.txt", "two", "TWO"),
        sr("both.txt", "two", "TWO"),
        sr("new.txt", "", "brand new"),
        sr("taken.txt", "", "mine"),
        "*** Begin Patch\n*** Delete File: del.txt\n*** Update File: ren.txt\n*** Move to: moved.txt\n@@\n-one\n+ONE\n*** End Patch\n".into(),
    ]
    .join("\n");
    let report = propose(&mut s, &response);
    assert!(report.ok, "{:?}", report.retry_context);
    // Nothing was written.
    assert_eq!(read(d, "mod.txt"), TEN.as_bytes());
    assert!(!d.join("new.txt").exists());
    put(d, "local.txt", b"changed by a person\n");
    put(d, "both.txt", b"changed by a person\n");
    put(d, "taken.txt", b"made by a person meanwhile\n");
    let want: BTreeMap<String, String> = [
        ("both.txt", "~M"),
        ("clean.txt", " "),
        ("del.txt", "D"),
        ("local.txt", "~"),
        ("mod.txt", "M"),
        ("new.txt", "A"),
        ("ren.txt", "R"),
        ("taken.txt", "!A"),
    ]
    .into_iter()
    .map(|(p, l)| (p.to_owned(), l.to_owned()))
    .collect();
    assert_eq!(letters(&s), want);
}

#[test]
fn accepting_a_local_change_and_a_proposal_that_do_not_overlap_keeps_both() {
    let (dir, ws) = root();
    let d = dir.path();
    put(d, "f.txt", TEN.as_bytes());
    let mut s = Session::open(&ws, "default").unwrap();
    propose(&mut s, &sr("f.txt", "nine", "NINE"));
    put(d, "f.txt", TEN.replace("two", "TWO by hand").as_bytes());
    assert_eq!(letters(&s)["f.txt"], "~M");
    let lock = ws.lock().unwrap();
    let done = s.accept(&lock, &[], &[], false).unwrap();
    assert_eq!(done[0].how, "merged");
    let want = TEN.replace("two", "TWO by hand").replace("nine", "NINE");
    assert_eq!(read(d, "f.txt"), want.as_bytes());
    // The context is now what was accepted, and no output is left.
    assert_eq!(letters(&s)["f.txt"], " ");
}

#[test]
fn an_overlapping_local_change_is_refused_unless_markers() {
    let (dir, ws) = root();
    let d = dir.path();
    put(d, "f.txt", TEN.as_bytes());
    let mut s = Session::open(&ws, "default").unwrap();
    propose(&mut s, &sr("f.txt", "five", "FIVE from the model"));
    put(
        d,
        "f.txt",
        TEN.replace("five", "five from a person").as_bytes(),
    );
    let lock = ws.lock().unwrap();
    let err = s.accept(&lock, &[], &[], false).unwrap_err();
    assert!(matches!(err, Error::Conflict { conflicts: 1, .. }), "{err}");
    assert_eq!(
        read(d, "f.txt"),
        TEN.replace("five", "five from a person").as_bytes()
    );
    s.accept(&lock, &["f.txt".into()], &[], true).unwrap();
    let text = String::from_utf8(read(d, "f.txt")).unwrap();
    assert!(
        text.contains(
            "<<<<<<< local\nfive from a person\n=======\nFIVE from the model\n>>>>>>> proposal\n"
        ),
        "{text}"
    );
}

#[test]
fn accepting_hunk_one_and_rejecting_hunk_two_leaves_exactly_hunk_one() {
    let (dir, ws) = root();
    let d = dir.path();
    put(d, "f.txt", TEN.as_bytes());
    let mut s = Session::open(&ws, "default").unwrap();
    propose(
        &mut s,
        &format!(
            "{}\n{}",
            sr("f.txt", "two", "TWO"),
            sr("f.txt", "ten", "TEN")
        ),
    );
    let diff = s.diff(&[], Against::Context).unwrap();
    assert!(
        diff.contains("hunk 1\n") && diff.contains("hunk 2\n"),
        "{diff}"
    );
    let lock = ws.lock().unwrap();
    let err = s.accept(&lock, &["f.txt".into()], &[3], false).unwrap_err();
    assert!(matches!(err, Error::NoHunk { count: 2, .. }), "{err}");
    s.accept(&lock, &["f.txt".into()], &[1], false).unwrap();
    assert_eq!(read(d, "f.txt"), TEN.replace("two", "TWO").as_bytes());
    // What was hunk 2 is now the only hunk.
    assert_eq!(letters(&s)["f.txt"], "M");
    s.reject(&["f.txt".into()], &[1]).unwrap();
    assert_eq!(letters(&s)["f.txt"], " ");
    assert_eq!(read(d, "f.txt"), TEN.replace("two", "TWO").as_bytes());
}

#[test]
fn a_second_proposal_applies_on_top_of_the_first() {
    let (dir, ws) = root();
    let d = dir.path();
    put(d, "f.txt", TEN.as_bytes());
    let mut s = Session::open(&ws, "default").unwrap();
    propose(&mut s, &sr("f.txt", "two", "TWO"));
    // The second edit searches for text only the first proposal has.
    let report = propose(&mut s, &sr("f.txt", "TWO\nthree", "TWO\nTHREE"));
    assert!(report.ok, "{:?}", report.retry_context);
    let lock = ws.lock().unwrap();
    s.accept(&lock, &[], &[], false).unwrap();
    assert_eq!(
        read(d, "f.txt"),
        TEN.replace("two\nthree", "TWO\nTHREE").as_bytes()
    );
}

#[test]
fn a_failed_proposal_stores_only_its_retry_context() {
    let (dir, ws) = root();
    let d = dir.path();
    put(d, "f.txt", TEN.as_bytes());
    let mut s = Session::open(&ws, "default").unwrap();
    let report = propose(
        &mut s,
        &format!(
            "{}\n{}",
            sr("f.txt", "two", "TWO"),
            sr("f.txt", "eleven", "ELEVEN")
        ),
    );
    assert!(!report.ok);
    let retry = s.retry_context().unwrap().unwrap();
    assert!(retry.contains("eleven"), "{retry}");
    // All or nothing: the edit that matched is not stored either, and the
    // file the failed proposal named is not entered in the session.
    assert!(letters(&s).is_empty(), "{:?}", letters(&s));
    // It survives reopening, and a good proposal clears it.
    let mut s = Session::open(&ws, "default").unwrap();
    assert_eq!(s.retry_context().unwrap(), Some(retry));
    propose(&mut s, &sr("f.txt", "two", "TWO"));
    assert_eq!(s.retry_context().unwrap(), None);
}

#[test]
fn bytes_survive_accept_merge_and_hunks() {
    let (dir, ws) = root();
    let d = dir.path();
    let crlf =
        "\u{feff}one\r\ntwo\r\nthree\r\nfour\r\nfive\r\nsix\r\nseven\r\neight\r\nnine\r\nten";
    put(d, "w.txt", crlf.as_bytes());
    put(d, "m.txt", crlf.as_bytes());
    put(d, "h.txt", crlf.as_bytes());
    let mut s = Session::open(&ws, "default").unwrap();
    propose(
        &mut s,
        &[
            sr("w.txt", "two", "TWO"),
            sr("m.txt", "eight", "EIGHT"),
            sr("h.txt", "two", "TWO"),
            sr("h.txt", "ten", "TEN"),
        ]
        .join("\n"),
    );
    put(d, "m.txt", crlf.replace("one", "ONE").as_bytes());
    let lock = ws.lock().unwrap();
    s.accept(&lock, &["w.txt".into(), "m.txt".into()], &[], false)
        .unwrap();
    s.accept(&lock, &["h.txt".into()], &[2], false).unwrap();
    assert_eq!(read(d, "w.txt"), crlf.replace("two", "TWO").as_bytes());
    assert_eq!(
        read(d, "m.txt"),
        crlf.replace("one", "ONE")
            .replace("eight", "EIGHT")
            .as_bytes()
    );
    assert_eq!(read(d, "h.txt"), crlf.replace("ten", "TEN").as_bytes());
}

#[test]
fn deletions_and_renames_are_accepted_and_sessions_listed_and_dropped() {
    let (dir, ws) = root();
    let d = dir.path();
    put(d, "old.txt", b"x\n");
    put(d, "gone.txt", b"y\n");
    let mut s = Session::open(&ws, "work").unwrap();
    propose(
        &mut s,
        "*** Begin Patch\n*** Delete File: gone.txt\n*** Update File: old.txt\n*** Move to: new.txt\n@@\n-x\n+z\n*** End Patch\n",
    );
    let lock = ws.lock().unwrap();
    let done = s.accept(&lock, &[], &[], false).unwrap();
    assert_eq!(done.len(), 2);
    assert!(!d.join("gone.txt").exists() && !d.join("old.txt").exists());
    assert_eq!(read(d, "new.txt"), b"z\n");
    assert_eq!(
        letters(&s).into_iter().collect::<Vec<_>>(),
        [("new.txt".into(), " ".into())]
    );
    assert_eq!(Session::list(&ws).unwrap(), ["work"]);
    Session::drop_session(&ws, "work").unwrap();
    assert!(Session::list(&ws).unwrap().is_empty());
    assert!(matches!(
        Session::existing(&ws, "work"),
        Err(Error::NoSession(_))
    ));
    assert!(matches!(
        Session::open(&ws, "../x"),
        Err(Error::BadSession(_))
    ));
}

/// A proposal is syntax-checked against the text the model saw; with
/// `Refuse`, one that breaks a file is held back like a failed proposal
/// and its retry context names the finding.
#[test]
fn a_refusing_syntax_check_holds_nothing() {
    let (dir, ws) = root();
    let d = dir.path();
    put(d, "a.py", b"def f(x):\n    return g(x)\n");
    let mut s = Session::open(&ws, "default").unwrap();
    let broken = sr("a.py", "    return g(x)", "    return g(x");
    let warned = propose(&mut s, &broken);
    assert!(warned.ok && !warned.syntax.is_empty(), "{warned:?}");
    s.reject(&["a.py".into()], &[]).unwrap();

    s.set_syntax(mend_core::report::syntax::SyntaxPolicy::Refuse);
    let refused = propose(&mut s, &broken);
    assert!(!refused.ok && refused.syntax_refused, "{refused:?}");
    assert!(s.status().unwrap().iter().all(|f| f.status.letter() == " "));
    let retry = s.retry_context().unwrap().unwrap();
    assert!(retry.contains("REFUSED a.py:2:"), "{retry}");
}

/// Two handles on one session act on it as it is when each acts: a handle
/// opened before another's decision does not bring back what it decided.
#[test]
fn each_action_reads_the_session_as_it_is_when_it_runs() {
    let (dir, ws) = root();
    let d = dir.path();
    put(d, "f.txt", TEN.as_bytes());
    put(d, "g.txt", TEN.as_bytes());
    let mut early = Session::open(&ws, "default").unwrap();
    let mut s = Session::open(&ws, "default").unwrap();
    propose(&mut s, &sr("f.txt", "two", "TWO"));
    s.reject(&["f.txt".into()], &[]).unwrap();
    propose(&mut early, &sr("g.txt", "two", "TWO"));
    assert_eq!(letters(&s)["f.txt"], " ");
    assert_eq!(letters(&s)["g.txt"], "M");
    // The early handle sees the reject too.
    let err = early.accept(&ws.lock().unwrap(), &["f.txt".into()], &[], false);
    assert!(matches!(err, Err(Error::Nothing { .. })), "{err:?}");
}

/// Plans `response` as `mend apply --pending --stream` does: each block
/// against the session's view as it arrives, through a recorder.
fn stream(s: &Session<'_>, ws: &Workspace, response: &str) -> (formats::Parsed, Streamed) {
    let parsed = formats::parse(response, Format::Auto).unwrap();
    let recorder = s.recorder();
    let view = |raw: &str| recorder.read(raw);
    let mut planner = mend_apply::StreamPlanner::new(ws, false).with_source(&view);
    for (i, e) in parsed.entries.iter().enumerate() {
        if let formats::Entry::Edit(e) = e {
            assert!(planner.check(i, e).is_ok());
        }
    }
    let plans = planner.finish();
    (parsed, recorder.finish(plans))
}

fn held(
    s: &mut Session<'_>,
    parsed: &formats::Parsed,
    streamed: Streamed,
) -> mend_core::ApplyReport {
    let opts = Propose {
        streamed: Some(streamed),
        ..Propose::default()
    };
    s.propose_with(parsed, opts).unwrap().report
}

/// A streamed proposal is held against the session as it is at its end:
/// a reject and another proposal made while it streamed are kept, and it
/// is merged onto them.
#[test]
fn a_streamed_proposal_is_merged_onto_what_changed_meanwhile() {
    let (dir, ws) = root();
    let d = dir.path();
    put(d, "f.txt", TEN.as_bytes());
    let mut s = Session::open(&ws, "default").unwrap();
    propose(&mut s, &sr("f.txt", "two", "TWO"));
    let (parsed, streamed) = stream(&s, &ws, &sr("f.txt", "nine", "NINE"));
    let mut other = Session::open(&ws, "default").unwrap();
    other.reject(&[], &[]).unwrap();
    propose(&mut other, &sr("f.txt", "five", "FIVE"));
    let report = held(&mut s, &parsed, streamed);
    assert!(report.ok, "{:?}", report.retry_context);
    // The diff is against the session as it is now: FIVE is already there.
    assert!(
        !report.files[0].diff.contains("+FIVE"),
        "{}",
        report.files[0].diff
    );
    assert!(
        report.files[0].diff.contains("-nine\n+NINE\n"),
        "{}",
        report.files[0].diff
    );
    s.accept(&ws.lock().unwrap(), &[], &[], false).unwrap();
    assert_eq!(
        read(d, "f.txt"),
        TEN.replace("five", "FIVE")
            .replace("nine", "NINE")
            .as_bytes()
    );
}

/// A streamed proposal whose file changed meanwhile where it changes it is
/// refused, naming why, and what changed meanwhile is kept.
#[test]
fn a_streamed_proposal_overlapping_what_changed_meanwhile_is_refused() {
    let (dir, ws) = root();
    let d = dir.path();
    put(d, "f.txt", TEN.as_bytes());
    let mut s = Session::open(&ws, "default").unwrap();
    let (parsed, streamed) = stream(&s, &ws, &sr("f.txt", "nine", "NINE"));
    let mut other = Session::open(&ws, "default").unwrap();
    propose(&mut other, &sr("f.txt", "nine", "nine!"));
    let report = held(&mut s, &parsed, streamed);
    assert!(!report.ok);
    let retry = report.retry_context.unwrap();
    assert!(
        retry.contains("changed while the proposal streamed in") && retry.contains("overlaps"),
        "{retry}"
    );
    s.accept(&ws.lock().unwrap(), &[], &[], false).unwrap();
    assert_eq!(read(d, "f.txt"), TEN.replace("nine", "nine!").as_bytes());
}

/// A pending rename's target is one with the rename: an edit there changes
/// the renamed text, a move back makes it a plain edit, a deletion there
/// deletes the original.
#[test]
fn a_rename_target_follows_later_proposals() {
    let (dir, ws) = root();
    let d = dir.path();
    put(d, "a.txt", TEN.as_bytes());
    let mut s = Session::open(&ws, "default").unwrap();
    let mv = |from: &str, to: &str| {
        format!(
            "*** Begin Patch\n*** Update File: {from}\n*** Move to: {to}\n@@\n-one\n+one\n*** End Patch\n"
        )
    };
    let ok = |s: &mut Session<'_>, response: &str| {
        let report = propose(s, response);
        assert!(report.ok, "{:?}", report.retry_context);
    };
    ok(&mut s, &mv("a.txt", "b.txt"));
    assert_eq!(s.seen("b.txt").unwrap().text().unwrap().text, TEN);
    assert!(s.seen("a.txt").unwrap().text().is_none());
    ok(&mut s, &sr("b.txt", "two", "TWO"));
    ok(&mut s, &mv("b.txt", "c.txt"));
    let status = s.status().unwrap();
    assert_eq!(
        (status[0].status.letter(), status[0].to.as_deref()),
        ("R", Some("c.txt"))
    );
    ok(&mut s, &mv("c.txt", "a.txt"));
    assert_eq!(
        letters(&s).into_iter().collect::<Vec<_>>(),
        [("a.txt".into(), "M".into())]
    );
    assert_eq!(
        s.seen("a.txt").unwrap().text().unwrap().text,
        TEN.replace("two", "TWO")
    );
    ok(&mut s, &mv("a.txt", "d.txt"));
    ok(
        &mut s,
        "*** Begin Patch\n*** Delete File: d.txt\n*** End Patch\n",
    );
    assert_eq!(letters(&s)["a.txt"], "D");
    // A new file where a pending rename moved one away is refused.
    let mut s = Session::open(&ws, "other").unwrap();
    ok(&mut s, &mv("a.txt", "b.txt"));
    let parsed = formats::parse(&sr("a.txt", "", "new"), Format::Auto).unwrap();
    let report = s.propose(&parsed).unwrap();
    assert!(!report.ok);
    assert!(
        report
            .retry_context
            .unwrap()
            .contains("pending rename to b.txt")
    );
}

/// A file that cannot be read gets `?` with its reason, and the others
/// keep their letters.
#[test]
fn an_unreadable_file_gets_a_question_mark_and_a_reason() {
    let (dir, ws) = root();
    let d = dir.path();
    put(d, "a.txt", TEN.as_bytes());
    put(d, "b.txt", TEN.as_bytes());
    let mut s = Session::open(&ws, "default").unwrap();
    propose(
        &mut s,
        &format!(
            "{}\n{}",
            sr("a.txt", "two", "TWO"),
            sr("b.txt", "two", "TWO")
        ),
    );
    put(d, "b.txt", b"\0\0binary");
    let status = s.status().unwrap();
    assert_eq!(status[0].status.letter(), "M");
    assert_eq!(
        (status[1].status.letter(), status[1].reason.as_deref()),
        ("?", Some("it is a binary file"))
    );
    // Its diff from the context still shows; there is no merge to preview.
    assert!(
        s.diff(&["b.txt".into()], Against::Context)
            .unwrap()
            .contains("+TWO")
    );
    assert_eq!(s.merge_preview("b.txt").unwrap(), None);
    let err = s.accept(&ws.lock().unwrap(), &[], &[], false).unwrap_err();
    assert!(matches!(err, Error::Unreadable { .. }), "{err}");
    assert!(err.is_refusal());
}

/// While a request comes in, every action that changes the session is
/// refused, naming the request; status, diff and the model's own reads are
/// not. Once it ends, the actions work again.
#[test]
fn a_request_refuses_the_actions_that_change_the_session_until_it_ends() {
    let (dir, ws) = root();
    let d = dir.path();
    put(d, "f.txt", TEN.as_bytes());
    let mut s = Session::open(&ws, "default").unwrap();
    propose(&mut s, &sr("f.txt", "two", "TWO"));
    let request = s.request("a test proposer").unwrap();
    let named = format!("a test proposer (pid {})", std::process::id());
    assert_eq!(s.streaming().unwrap(), std::slice::from_ref(&named));
    let busy = |r: Result<(), Error>| match r {
        Err(e @ Error::Streaming { .. }) => {
            assert!(e.is_refusal());
            assert!(e.to_string().contains(&named), "{e}");
        }
        other => panic!("not refused as streaming: {other:?}"),
    };
    let lock = ws.lock().unwrap();
    busy(s.accept(&lock, &[], &[], false).map(drop));
    drop(lock);
    busy(s.reject(&[], &[]).map(drop));
    busy(s.sync(&[]).map(drop));
    busy(s.add(&["f.txt".into()]).map(drop));
    busy(Session::drop_session(&ws, "default"));
    assert_eq!(letters(&s)["f.txt"], "M");
    assert!(s.diff(&[], Against::Context).unwrap().contains("+TWO"));
    assert_eq!(s.report().unwrap().streaming, [named]);
    // Another proposal may come in beside it.
    let other = s.request("another proposer").unwrap();
    assert_eq!(s.streaming().unwrap().len(), 2);
    propose(&mut s, &sr("f.txt", "nine", "NINE"));
    drop(other);
    drop(request);
    let records = d.join(".mend/pending/default/requests");
    let left: Vec<_> = std::fs::read_dir(records).unwrap().collect();
    assert!(
        left.is_empty(),
        "a request that ends removes its record: {left:?}"
    );
    assert!(s.streaming().unwrap().is_empty());
    assert!(s.report().unwrap().streaming.is_empty());
    s.accept(&ws.lock().unwrap(), &[], &[], false).unwrap();
    assert_eq!(
        read(d, "f.txt"),
        TEN.replace("two", "TWO").replace("nine", "NINE").as_bytes()
    );
    s.sync(&[]).unwrap();
    s.add(&["f.txt".into()]).unwrap();
    Session::drop_session(&ws, "default").unwrap();
}

/// A record left by a proposer that is gone (its lock died with it) is not
/// a request: nothing is refused for it, and it is cleared.
#[test]
fn the_record_of_a_proposer_that_is_gone_is_no_request() {
    let (dir, ws) = root();
    let d = dir.path();
    put(d, "f.txt", TEN.as_bytes());
    let mut s = Session::open(&ws, "default").unwrap();
    propose(&mut s, &sr("f.txt", "two", "TWO"));
    let records = d.join(".mend/pending/default/requests");
    std::fs::create_dir_all(&records).unwrap();
    let said = "a killed proposer (pid 4242)\n";
    std::fs::write(records.join("4242-0"), said).unwrap();
    // Killed before it renamed its record into place.
    std::fs::write(records.join(".4242-1.new"), said).unwrap();
    // One that may not have locked its record yet: nothing to remove.
    std::fs::write(records.join(".4243-0.new"), "").unwrap();
    assert!(s.streaming().unwrap().is_empty());
    assert!(
        !records.join("4242-0").exists(),
        "the stale record is removed"
    );
    assert!(
        !records.join(".4242-1.new").exists(),
        "so is one written aside"
    );
    assert!(records.join(".4243-0.new").exists(), "an empty one is left");
    s.accept(&ws.lock().unwrap(), &[], &[], false).unwrap();
    assert_eq!(read(d, "f.txt"), TEN.replace("two", "TWO").as_bytes());
}
