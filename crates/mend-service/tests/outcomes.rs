//! Each operation's outcome as its one JSON text, compared whole with
//! `tests/outcomes/NAME.json`; `MEND_BLESS=1` writes the files from the
//! outcomes instead.

use std::path::Path;

use mend_core::formats::Format;
use mend_service::apply::{Applier, ApplyRequest, Destination};
use mend_service::files::Window;
use mend_service::outcome::{ApplyJson, ApplyRefused, EditResult};
use mend_service::pending::{Action, Actor};
use mend_service::review::Selection;
use mend_service::stream::Streamed;
use mend_workspace::{Options, Workspace};

/// Compares `text` with the expected file `name`, or writes it.
fn expect(name: &str, text: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/outcomes")
        .join(format!("{name}.json"));
    if std::env::var_os("MEND_BLESS").is_some() {
        std::fs::write(&path, format!("{text}\n")).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (MEND_BLESS=1 writes it)", path.display()));
    assert_eq!(format!("{text}\n"), want, "{name}");
}

fn json<T: serde::Serialize>(v: &T) -> String {
    mend_service::to_json(v).unwrap()
}

fn root(files: &[(&str, &str)]) -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        std::fs::write(dir.path().join(path), text).unwrap();
    }
    let ws = Workspace::open(dir.path(), Options::default()).unwrap();
    (dir, ws)
}

fn sr(path: &str, search: &str, replace: &str) -> String {
    format!("{path}\n<<<<<<< SEARCH\n{search}\n=======\n{replace}\n>>>>>>> REPLACE\n")
}

fn apply(
    ws: &Workspace,
    dest: Destination<'_>,
    req: ApplyRequest<'_>,
    response: &str,
) -> Result<mend_service::apply::Applied, mend_service::Error> {
    let applier = Applier::new(ws, dest, req)?;
    applier.finish(Streamed::whole(response, Format::Auto))
}

const SESSION: Destination<'static> = Destination::Pending {
    session: "s",
    holder: "test",
};

#[test]
fn a_written_edit_answers_mcp_with_its_diff_and_version() {
    let (_dir, ws) = root(&[("a.txt", "one\ntwo\n")]);
    let req = ApplyRequest {
        versions: true,
        ..ApplyRequest::default()
    };
    let applied = apply(&ws, Destination::Files, req, &sr("a.txt", "two", "TWO")).unwrap();
    expect(
        "write_edit_result",
        &json(&EditResult::of(applied).unwrap()),
    );
}

#[test]
fn a_failed_edit_answers_mcp_with_the_retry_context() {
    let (_dir, ws) = root(&[("a.txt", "one\n")]);
    let req = ApplyRequest::default();
    let applied = apply(&ws, Destination::Files, req, &sr("a.txt", "absent", "x")).unwrap();
    let why = EditResult::of(applied).unwrap_err();
    assert!(why.contains("absent"), "{why}");
}

#[test]
fn a_written_edit_as_apply_json() {
    let (_dir, ws) = root(&[("a.txt", "one\n")]);
    let applied = apply(
        &ws,
        Destination::Files,
        ApplyRequest::default(),
        &sr("a.txt", "one", "ONE"),
    )
    .unwrap();
    expect("write_apply_json", &json(&ApplyJson::of(applied)));
}

#[test]
fn a_stale_expectation_is_refused_with_nothing_written() {
    let (dir, ws) = root(&[("a.txt", "one\n")]);
    let expect_arg = ["a.txt=sha256:0000".to_owned()];
    let req = ApplyRequest {
        expect: mend_service::apply::expectations(&ws, &expect_arg).unwrap(),
        ..ApplyRequest::default()
    };
    let applied = apply(&ws, Destination::Files, req, &sr("a.txt", "one", "ONE")).unwrap();
    assert!(!applied.report.ok);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "one\n"
    );
    let bad = mend_service::apply::expectations(&ws, &["a.txt".to_owned()]).unwrap_err();
    assert!(!bad.is_refusal());
    expect(
        "usage_refused",
        &json(&ApplyRefused::failed(mend_service::usage(&bad.to_string()))),
    );
}

#[test]
fn a_response_without_edits_is_refused_in_both_destinations() {
    let (_dir, ws) = root(&[("a.txt", "one\n")]);
    let e = apply(
        &ws,
        Destination::Files,
        ApplyRequest::default(),
        "prose only\n",
    )
    .unwrap_err();
    assert!(e.is_refusal());
    expect("no_edits_refused", &json(&ApplyRefused::of(&e, None)));
    let e = apply(&ws, SESSION, ApplyRequest::default(), "prose only\n").unwrap_err();
    assert!(e.is_refusal());
    let pending = ApplyRefused::of(&e, Some("s"));
    expect("no_edits_refused_pending", &json(&pending));
}

#[test]
fn a_proposal_is_held_and_every_pending_action_answers_its_shape() {
    let (dir, ws) = root(&[("a.txt", "one\n"), ("b.txt", "two\n")]);
    let response = sr("a.txt", "one", "ONE") + "\n" + &sr("b.txt", "two", "TWO");
    let req = ApplyRequest {
        versions: true,
        ..ApplyRequest::default()
    };
    let applied = apply(&ws, SESSION, req, &response).unwrap();
    assert_eq!(applied.versions.len(), 2);
    expect("propose_apply_json", &json(&ApplyJson::of(applied)));
    let who = Actor {
        session: "s",
        holder: "test",
        merge: None,
    };
    let act = |action| json(&mend_service::pending::act(&ws, &who, action).unwrap());
    expect("pending_status", &act(Action::Status));
    let diff = act(Action::Diff {
        paths: Vec::new(),
        against: mend_pending::Against::Context,
    });
    expect("pending_diff", &diff);
    expect(
        "pending_reject",
        &act(Action::Reject(Selection {
            paths: vec!["b.txt".into()],
            ..Selection::default()
        })),
    );
    expect(
        "pending_accept",
        &act(Action::Accept {
            selection: Selection::default(),
            markers: false,
        }),
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "ONE\n"
    );
    expect("pending_sync", &act(Action::Sync(Vec::new())));
    expect("pending_list", &act(Action::List));
    expect("pending_retry_context", &act(Action::RetryContext));
}

#[test]
fn a_busy_session_lock_is_a_refusal_with_kind_busy() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
    let opts = Options {
        lock_timeout: std::time::Duration::ZERO,
        ..Options::default()
    };
    let ws = Workspace::open(dir.path(), opts).unwrap();
    mend_pending::Session::open(&ws, "s").unwrap();
    let _held = ws.lock().unwrap();
    let who = Actor {
        session: "s",
        holder: "test",
        merge: None,
    };
    let accept = Action::Accept {
        selection: Selection::default(),
        markers: false,
    };
    let e = mend_service::pending::act(&ws, &who, accept).unwrap_err();
    assert!(e.is_refusal(), "{e}");
    assert_eq!(e.failure().kind, mend_service::Kind::Busy);
    // A plain apply waits for the lock as an error, not a refusal.
    let e = apply(
        &ws,
        Destination::Files,
        ApplyRequest::default(),
        &sr("a.txt", "one", "1"),
    )
    .unwrap_err();
    assert!(!e.is_refusal(), "{e}");
}

#[test]
fn read_answers_a_window_and_the_version() {
    let (_dir, ws) = root(&[("a.txt", "1\n2\n3\n4\n")]);
    let window = Window {
        offset: Some(2),
        limit: Some(2),
    };
    let read = mend_service::files::read(&ws, "a.txt", window, Destination::Files).unwrap();
    expect("read_window", &json(&read));
    let missing = mend_service::files::read(&ws, "nope.txt", window, Destination::Files);
    assert_eq!(missing.unwrap_err().to_string(), "File not found: nope.txt");
    let hashed = mend_service::files::hash(&ws, &["a.txt".into(), "nope.txt".into()]);
    let hashed: Vec<_> = hashed.into_iter().map(Result::unwrap).collect();
    expect("hash", &json(&hashed));
}

#[test]
fn roots_route_paths_and_refuse_a_call_spanning_two() {
    let (a, first) = root(&[("x.txt", "x\n")]);
    let (b, second) = root(&[("y.txt", "y\n")]);
    let roots = mend_service::Roots::new(first, vec![second]);
    let (ws, rel) = roots.locate("x.txt").unwrap();
    assert_eq!((ws.root(), rel.as_str()), (roots.first().root(), "x.txt"));
    let y = b.path().canonicalize().unwrap().join("y.txt");
    let (ws, rel) = roots.locate(y.to_str().unwrap()).unwrap();
    assert_eq!(
        (ws.root(), rel.as_str()),
        (b.path().canonicalize().unwrap().as_path(), "y.txt")
    );
    let both = sr(a.path().join("x.txt").to_str().unwrap(), "x", "X")
        + "\n"
        + &sr(y.to_str().unwrap(), "y", "Y");
    let parsed = mend_core::formats::parse(&both, Format::Auto).unwrap();
    let err = roots.route(parsed).err().unwrap();
    assert_eq!(
        err.to_string(),
        "these edits span more than one project root; send one call per root"
    );
    assert!(roots.locate("/elsewhere/z.txt").is_err());
    assert!(roots.pick(Some("/elsewhere")).is_err());
    assert_eq!(
        roots.pick(Some(b.path().to_str().unwrap())).unwrap().root(),
        ws.root()
    );
}

/// Every turn action's outcome as its one JSON, ids and times written as
/// placeholders (a checkpoint's id depends on the time it was made).
#[test]
fn every_turn_action_answers_its_shape() {
    use mend_checkpoint::turn::{BeginOptions, Selection};
    use mend_service::turn::{Action as Turn, act};
    let (dir, _ws) = root(&[("a.txt", "one\ntwo\n"), ("b.txt", "bee\n")]);
    let d = dir.path();
    let wait = std::time::Duration::from_secs(5);
    let run = |action: Turn| act(d, &action, wait, &mut |_| {}).unwrap();
    let begun = run(Turn::Begin(BeginOptions {
        label: Some("t".into()),
        session: Some("s-1".into()),
        agent: Some("claude".into()),
        force: false,
    }));
    let text = json(&begun);
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    let id = value["turn"]["id"].as_str().unwrap().to_owned();
    let time = value["turn"]["time"].to_string();
    let plain = |s: String| {
        s.replace(&id, "TURN")
            .replace(&format!("\"time\": {time}"), "\"time\": 0")
    };
    expect("turn_begin", &plain(text));
    std::fs::write(d.join("a.txt"), "one\nTWO\n").unwrap();
    std::fs::remove_file(d.join("b.txt")).unwrap();
    expect(
        "turn_status",
        &plain(json(&run(Turn::Status { ignored: false }))),
    );
    expect("turn_diff", &plain(json(&run(Turn::Diff(vec![])))));
    let pick = |paths: &[&str], hunks: Vec<usize>| Selection {
        paths: paths.iter().map(|p| (*p).to_owned()).collect(),
        hunks,
        seen: None,
    };
    let rejected = json(&run(Turn::Reject(pick(&["b.txt"], vec![]))));
    let value: serde_json::Value = serde_json::from_str(&rejected).unwrap();
    let safety = &value["safety"];
    let rejected = rejected
        .replace(safety["commit"].as_str().unwrap(), "SAFETY-COMMIT")
        .replace(safety["id"].as_str().unwrap(), "SAFETY")
        .replace(&format!("\"time\": {}", safety["time"]), "\"time\": 0");
    expect("turn_reject", &plain(rejected));
    expect(
        "turn_accept",
        &plain(json(&run(Turn::Accept(pick(&["a.txt"], vec![1]))))),
    );
    expect("turn_end", &plain(json(&run(Turn::End))));
    let refused = act(d, &Turn::Status { ignored: false }, wait, &mut |_| {}).unwrap_err();
    assert!(refused.is_refusal(), "{refused}");
    expect("turn_refused", &json(&refused.failure()));
}
