//! The exit-code table of `docs/exit-codes.md`, one test per row: every
//! refusal exits 1 and every error 2, whichever command meets it.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::{mend_bin, run_mend, search_replace};

fn repo() -> tempfile::TempDir {
    crate::support::repo(&[("f.txt", "one\ntwo\n")])
}

/// `mend` in `d` with `args`, its response (when given) in a file.
fn mend(d: &Path, args: &[&str]) -> Output {
    run_mend(d, args, None)
}

fn response(d: &Path, text: &str) -> String {
    let p = d.join(".git").join("response.md");
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

fn code(out: &Output) -> Option<i32> {
    out.status.code()
}

/// Runs `args` with every commit step paused, and appends a line to
/// `f.txt` as soon as the commit has staged its content, after its
/// staleness check and before its rename: the append must be kept and the
/// command refused.
fn raced_at_the_rename(d: &Path, args: &[&str]) -> Output {
    let child = Command::new(mend_bin())
        .args(args)
        .arg("--commit-step-delay-ms")
        .arg("400")
        .current_dir(d)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let staged = |d: &Path| {
        let lone = std::fs::read_dir(d.join(".mend/tmp")).is_ok_and(|mut e| e.next().is_some());
        lone || d.join(".mend/journal.json").exists()
    };
    let start = Instant::now();
    while !staged(d) {
        assert!(start.elapsed() < Duration::from_secs(60), "nothing staged");
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(d.join("f.txt"))
        .unwrap();
    f.write_all(b"typed meanwhile\n").unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn row_done_exits_0() {
    let dir = repo();
    let d = dir.path();
    let r = response(d, &search_replace("f.txt", "one", "ONE"));
    assert_eq!(code(&mend(d, &["apply", &r])), Some(0));
}

#[test]
fn row_an_edit_that_fails_exits_1() {
    let dir = repo();
    let d = dir.path();
    let r = response(d, &search_replace("f.txt", "absent", "x"));
    assert_eq!(code(&mend(d, &["apply", &r])), Some(1));
}

#[test]
fn row_a_file_changed_since_it_was_read_exits_1() {
    let dir = repo();
    let d = dir.path();
    let r = response(d, &search_replace("f.txt", "one", "ONE"));
    let stale = format!("f.txt={}", "0".repeat(64));
    let out = mend(d, &["apply", "--expect", &stale, &r]);
    assert_eq!(code(&out), Some(1), "{out:?}");
}

#[test]
fn row_a_file_changed_while_apply_writes_exits_1_as_changed() {
    let dir = repo();
    let d = dir.path();
    let r = response(d, &search_replace("f.txt", "one", "ONE"));
    let out = raced_at_the_rename(d, &["apply", "--json", &r]);
    assert_eq!(code(&out), Some(1), "{out:?}");
    let said: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(said["error"]["kind"], "changed", "{said}");
    assert_eq!(said["error"]["path"], "f.txt", "{said}");
    // The field that said it before every failure had a kind stays.
    assert_eq!(said["kind"], "changed", "{said}");
    assert!(
        said["error"]["message"]
            .as_str()
            .unwrap()
            .contains("f.txt: changed while mend was writing"),
        "{said}"
    );
    let now = std::fs::read_to_string(d.join("f.txt")).unwrap();
    assert_eq!(now, "one\ntwo\ntyped meanwhile\n");
}

#[test]
fn row_a_file_changed_while_pending_accept_writes_exits_1_as_changed() {
    let dir = repo();
    let d = dir.path();
    let r = response(d, &search_replace("f.txt", "one", "ONE"));
    assert_eq!(code(&mend(d, &["apply", "--pending", &r])), Some(0));
    let out = raced_at_the_rename(d, &["pending", "accept", "--json"]);
    assert_eq!(code(&out), Some(1), "{out:?}");
    let said: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(said["error"]["kind"], "changed", "{said}");
    assert_eq!(said["error"]["path"], "f.txt", "{said}");
    let now = std::fs::read_to_string(d.join("f.txt")).unwrap();
    assert_eq!(now, "one\ntwo\ntyped meanwhile\n");
}

#[test]
fn row_a_busy_session_exits_1_and_a_busy_lock_elsewhere_2() {
    let dir = repo();
    let d = dir.path();
    let r = response(d, &search_replace("f.txt", "one", "ONE"));
    assert_eq!(code(&mend(d, &["apply", "--pending", &r])), Some(0));
    // One apply holds the lock through its paused commit.
    let holder = Command::new(mend_bin())
        .args(["apply", "--commit-step-delay-ms", "1500", &r])
        .current_dir(d)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !std::fs::read_dir(d.join(".mend/tmp")).is_ok_and(|mut e| e.next().is_some()) {
        assert!(start.elapsed() < Duration::from_secs(60), "nothing staged");
        std::thread::sleep(Duration::from_millis(1));
    }
    let out = mend(d, &["pending", "accept", "--json", "--lock-timeout", "0"]);
    assert_eq!(code(&out), Some(1), "{out:?}");
    let said: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(said["error"]["kind"], "busy", "{said}");
    let r2 = response(d, &search_replace("f.txt", "two", "TWO"));
    let out = mend(d, &["apply", "--lock-timeout", "0", &r2]);
    assert_eq!(code(&out), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("holds its lock"));
    assert!(holder.wait_with_output().unwrap().status.success());
}

/// A planted or damaged state file is refused with the command that
/// clears it, so it is a refusal (exit 1, kind `corrupt`), never an error.
#[test]
fn row_a_damaged_state_file_exits_1_as_corrupt() {
    let dir = repo();
    let d = dir.path();
    assert_eq!(code(&mend(d, &["turn", "begin"])), Some(0));
    std::fs::write(d.join(".mend/turn.json"), b"{}").unwrap();
    for args in [&["turn", "status"][..], &["turn", "--json", "status"]] {
        let out = mend(d, args);
        assert_eq!(code(&out), Some(1), "{args:?}: {out:?}");
        let all = format!("{out:?}");
        assert!(all.contains("mend turn end"), "{all}");
    }
    let said: serde_json::Value =
        serde_json::from_slice(&mend(d, &["turn", "--json", "status"]).stdout).unwrap();
    assert_eq!(said["error"]["kind"], "corrupt", "{said}");
    let r = response(d, &search_replace("f.txt", "one", "ONE"));
    assert_eq!(code(&mend(d, &["apply", "--pending", &r])), Some(0));
    std::fs::write(d.join(".mend/pending/default/index.json"), b"garbage").unwrap();
    for args in [&["pending", "status"][..], &["pending", "accept"]] {
        let out = mend(d, args);
        assert_eq!(code(&out), Some(1), "{args:?}: {out:?}");
        let all = format!("{out:?}");
        assert!(all.contains("mend pending drop default"), "{all}");
    }
    let said: serde_json::Value =
        serde_json::from_slice(&mend(d, &["pending", "--json", "accept"]).stdout).unwrap();
    assert_eq!(said["error"]["kind"], "corrupt", "{said}");
    assert_eq!(std::fs::read(d.join("f.txt")).unwrap(), b"one\ntwo\n");
}

/// The root's lock held by a process that is not mend (a script's
/// `flock`), the lock file naming a mend long exited: apply, turn and
/// checkpoint each give up after their `--lock-timeout` with exit 2, and
/// none says the exited mend holds the lock.
#[test]
fn row_a_busy_root_lock_exits_2_after_lock_timeout_for_apply_turn_and_checkpoint() {
    let dir = repo();
    let d = dir.path();
    assert_eq!(code(&mend(d, &["turn", "begin"])), Some(0));
    let mut gone = Command::new("true").spawn().unwrap();
    gone.wait().unwrap();
    let recorded = format!("mend turn reject f.txt --hunk 7 (pid {})", gone.id());
    std::fs::write(d.join(".mend/lock"), format!("{recorded}\n")).unwrap();
    let held = std::fs::OpenOptions::new()
        .write(true)
        .open(d.join(".mend/lock"))
        .unwrap();
    held.lock().unwrap();
    let r = response(d, &search_replace("f.txt", "one", "ONE"));
    for args in [
        &["apply", "--lock-timeout", "0", &r][..],
        &["turn", "--lock-timeout", "0", "reject", "f.txt"],
        &["checkpoint", "--lock-timeout", "0", "create"],
        &[
            "checkpoint",
            "create",
            "--lock-timeout",
            "0",
            "--label",
            "x",
        ],
        &["checkpoint", "--lock-timeout", "0", "restore", "HEAD"],
    ] {
        let start = Instant::now();
        let out = mend(d, args);
        assert_eq!(code(&out), Some(2), "{args:?}: {out:?}");
        assert!(start.elapsed() < Duration::from_secs(20), "{args:?} waited");
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(said.contains("holds its lock"), "{args:?}: {said}");
        assert!(said.contains("has exited"), "{args:?}: {said}");
        assert!(!said.contains(&format!(": {recorded} holds")), "{said}");
    }
    assert_eq!(std::fs::read(d.join("f.txt")).unwrap(), b"one\ntwo\n");
}

#[test]
fn row_no_such_session_exits_1() {
    let dir = repo();
    let out = mend(dir.path(), &["pending", "--session", "nope", "accept"]);
    assert_eq!(code(&out), Some(1), "{out:?}");
}

#[test]
fn row_no_open_turn_exits_1() {
    let dir = repo();
    let out = mend(dir.path(), &["turn", "reject", "f.txt"]);
    assert_eq!(code(&out), Some(1), "{out:?}");
}

#[test]
fn row_no_such_checkpoint_exits_1() {
    let dir = repo();
    let out = mend(dir.path(), &["checkpoint", "restore", "deadbeef"]);
    assert_eq!(code(&out), Some(1), "{out:?}");
}

#[test]
fn row_a_usage_error_exits_2() {
    let dir = repo();
    assert_eq!(
        code(&mend(dir.path(), &["apply", "--no-such-flag"])),
        Some(2)
    );
}

#[test]
fn row_unreadable_input_exits_2() {
    let dir = repo();
    let missing = dir.path().join(".git").join("no-such-response.md");
    let out = mend(dir.path(), &["apply", missing.to_str().unwrap()]);
    assert_eq!(code(&out), Some(2), "{out:?}");
}

#[test]
fn row_a_root_that_cannot_be_used_exits_2() {
    let dir = repo();
    let d = dir.path();
    let r = response(d, &search_replace("f.txt", "one", "ONE"));
    let out = mend(d, &["apply", "--root", "f.txt", &r]);
    assert_eq!(code(&out), Some(2), "{out:?}");
}

/// The codes `docs/exit-codes.md` gives `kind` in its Kinds table.
fn documented(kind: &str) -> Vec<i32> {
    let doc = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/exit-codes.md");
    let doc = std::fs::read_to_string(doc).unwrap();
    let row = doc
        .lines()
        .find(|l| l.starts_with(&format!("| `{kind}` |")))
        .unwrap_or_else(|| panic!("`{kind}` is not in the Kinds table"));
    let cell = row.split('|').nth(2).unwrap();
    cell.split('/').map(|c| c.trim().parse().unwrap()).collect()
}

/// Each kind of failure the CLI reports, met for real: `--json` prints
/// `{"error": {"kind", "message", …}}` for it, refusal or error, and the
/// command exits with the code the Kinds table gives the kind.
#[test]
fn every_kind_the_cli_reports_exits_as_its_row() {
    let dir = crate::support::repo(&[("f.txt", "one\ntwo\n"), ("g.txt", "three\n")]);
    let d = dir.path();
    let two = search_replace("f.txt", "one", "ONE") + &search_replace("g.txt", "three", "3");
    let named = |name: &str, text: &str| {
        let p = d.join(".git").join(name);
        std::fs::write(&p, text).unwrap();
        p.to_string_lossy().into_owned()
    };
    let two = named("two.md", &two);
    assert_eq!(code(&mend(d, &["apply", "--pending", &two])), Some(0));
    assert_eq!(code(&mend(d, &["turn", "begin"])), Some(0));
    let prose = named("prose.md", "Nothing to change here.\n");
    let ok = named("ok.md", &search_replace("f.txt", "one", "ONE"));
    let grows = named(
        "grows.md",
        &search_replace("f.txt", "one", &"long ".repeat(20)),
    );
    let onto = "*** Begin Patch\n*** Update File: f.txt\n*** Move to: g.txt\n@@\n-one\n+ONE\n*** End Patch\n";
    let onto = named("onto.txt", onto);
    let cut = named("cut.json", r#"{"path": "#);
    let rows: [(&str, &[&str]); 15] = [
        ("no_edits", &["apply", "--json", &prose]),
        (
            "parse",
            &["apply", "--json", "--format", "str-replace", &cut],
        ),
        ("collision", &["apply", "--json", &onto]),
        ("usage", &["apply", "--json", "--no-such-flag", &ok]),
        ("error", &["apply", "--json", "--root", "f.txt", &ok]),
        (
            "too_large",
            &["apply", "--json", "--max-bytes", "20", &grows],
        ),
        (
            "no_session",
            &["pending", "--json", "--session", "nope", "accept"],
        ),
        (
            "bad_session",
            &["pending", "--json", "--session", ".x", "status"],
        ),
        ("nothing", &["pending", "--json", "reject", "absent.txt"]),
        (
            "no_hunk",
            &["pending", "--json", "accept", "f.txt", "--hunk", "9"],
        ),
        (
            "hunks_of_one_file",
            &["pending", "--json", "accept", "--hunk", "1"],
        ),
        ("usage", &["pending", "--json", "accept", "--no-such-flag"]),
        ("refused", &["turn", "--json", "reject", "f.txt"]),
        (
            "no_checkpoint",
            &["checkpoint", "--json", "restore", "deadbeef"],
        ),
        (
            "usage",
            &["checkpoint", "--json", "restore", "--no-such-flag"],
        ),
    ];
    for (kind, args) in rows {
        let out = mend(d, args);
        let said: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {out:?}"));
        assert_eq!(said["error"]["kind"], kind, "{args:?}: {said}");
        assert!(
            said["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "{said}"
        );
        let code = code(&out).unwrap();
        assert!(
            documented(kind).contains(&code),
            "{args:?}: exit {code}: {said}"
        );
    }
    assert_eq!(code(&mend(d, &["turn", "end"])), Some(0));
    let out = mend(d, &["turn", "--json", "status"]);
    let said: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (code(&out), &said["error"]["kind"]),
        (Some(1), &serde_json::json!("no_turn")),
        "{said}"
    );
    // Nothing any of them refused was written.
    assert_eq!(std::fs::read(d.join("f.txt")).unwrap(), b"one\ntwo\n");
    assert_eq!(std::fs::read(d.join("g.txt")).unwrap(), b"three\n");
}
