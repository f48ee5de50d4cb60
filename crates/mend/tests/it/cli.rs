//! Command-line behaviour beyond single fixtures: exit codes, stdin, JSON
//! reports, dry runs, binary and non-UTF-8 files, permissions.

use crate::run_mend;
use crate::support::tree as root_with;

const EDIT: &str = "a.txt\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n";

#[test]
fn reads_stdin_and_exits_zero() {
    let dir = root_with(&[("a.txt", b"old\n")]);
    let out = run_mend(dir.path(), &["apply"], Some(EDIT.as_bytes()));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(std::fs::read(dir.path().join("a.txt")).unwrap(), b"new\n");
}

#[test]
fn dry_run_prints_diff_and_writes_nothing() {
    let dir = root_with(&[("a.txt", b"old\n")]);
    let out = run_mend(
        dir.path(),
        &["apply", "--dry-run", "-"],
        Some(EDIT.as_bytes()),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stdout.contains("--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+new\n"),
        "{stdout}"
    );
    assert_eq!(std::fs::read(dir.path().join("a.txt")).unwrap(), b"old\n");
}

#[test]
fn json_report_has_documented_fields() {
    let dir = root_with(&[("a.txt", b"old\n")]);
    let out = run_mend(
        dir.path(),
        &["apply", "--json", "--dry-run"],
        Some(EDIT.as_bytes()),
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ok"], true);
    assert_eq!(v["written"], false);
    assert_eq!(v["format"], "search-replace");
    assert_eq!(v["applied"], 1);
    assert_eq!(v["requested"], 1);
    assert_eq!(v["files"][0]["status"], "M");
    let e = &v["edits"][0];
    assert_eq!(e["status"], "applied");
    assert_eq!(e["pass"], "exact");
    assert_eq!(e["lines"]["start"], 1);
    assert_eq!(e["similarity"], 1.0);
}

#[test]
fn json_failure_carries_best_candidate() {
    let dir = root_with(&[("a.txt", b"alpha\nbeta gamma delta\nepsilon zeta\n")]);
    let edit = "a.txt\n<<<<<<< SEARCH\nbeta gamma deltaa\nepsilon zeta eta theta\n=======\nx\n>>>>>>> REPLACE\n";
    let out = run_mend(dir.path(), &["apply", "--json"], Some(edit.as_bytes()));
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let f = &v["edits"][0]["failure"];
    assert_eq!(f["kind"], "not_found");
    assert_eq!(f["best"]["line"], 2);
    assert_eq!(f["best"]["lines"][0]["text"], "beta gamma delta");
    assert!(
        v["retry_context"]
            .as_str()
            .unwrap()
            .contains("Your edit was:")
    );
}

#[test]
fn usage_errors_exit_two() {
    let dir = root_with::<&[u8]>(&[]);
    let out = run_mend(dir.path(), &["apply", "--format", "klingon"], Some(b""));
    assert_eq!(out.status.code(), Some(2));
    let out = run_mend(dir.path(), &["apply", "no-such-input.txt"], None);
    assert_eq!(out.status.code(), Some(2));
    let out = run_mend(
        dir.path(),
        &["apply", "--root", "no/such/dir"],
        Some(EDIT.as_bytes()),
    );
    assert_eq!(out.status.code(), Some(2));
    let out = run_mend(dir.path(), &["apply"], Some(b"\xff\xfe bad"));
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn binary_and_non_utf8_files_are_refused() {
    let dir = root_with(&[("a.txt", b"old\0\x01\x02\n")]);
    let out = run_mend(dir.path(), &["apply"], Some(EDIT.as_bytes()));
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Cannot edit binary file a.txt"));
    let dir = root_with(&[("a.txt", b"old caf\xe9\n")]);
    let out = run_mend(dir.path(), &["apply"], Some(EDIT.as_bytes()));
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("is not UTF-8 or UTF-16 text"));
    assert_eq!(
        std::fs::read(dir.path().join("a.txt")).unwrap(),
        b"old caf\xe9\n"
    );
}

#[cfg(unix)]
#[test]
fn file_mode_is_preserved() {
    use std::os::unix::fs::PermissionsExt;
    let dir = root_with(&[("a.txt", b"old\n")]);
    let p = dir.path().join("a.txt");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = run_mend(dir.path(), &["apply"], Some(EDIT.as_bytes()));
    assert_eq!(out.status.code(), Some(0));
    let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o755);
    // No temporary files are left behind.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n != ".mend")
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
}

#[cfg(unix)]
#[test]
fn symlink_out_of_root_is_refused() {
    let outside = root_with(&[("secret.txt", b"old\n")]);
    let dir = root_with::<&[u8]>(&[]);
    std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).unwrap();
    let edit = "link/secret.txt\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n";
    let out = run_mend(dir.path(), &["apply"], Some(edit.as_bytes()));
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("symbolic link"));
    assert_eq!(
        std::fs::read(outside.path().join("secret.txt")).unwrap(),
        b"old\n"
    );
}

#[test]
fn both_formats_work_on_real_files() {
    let dir = root_with(&[("src/main.rs", b"fn main() {\n    println!(\"hi\");\n}\n")]);
    let sr = "src/main.rs\n<<<<<<< SEARCH\n    println!(\"hi\");\n=======\n    println!(\"hello\");\n>>>>>>> REPLACE\n";
    let out = run_mend(
        dir.path(),
        &["apply", "--format", "search-replace"],
        Some(sr.as_bytes()),
    );
    assert_eq!(out.status.code(), Some(0));
    let js = r#"{"path":"src/main.rs","old_string":"\"hello\"","new_string":"\"bye\""}"#;
    let out = run_mend(
        dir.path(),
        &["apply", "--format", "str-replace"],
        Some(js.as_bytes()),
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("src/main.rs")).unwrap(),
        "fn main() {\n    println!(\"bye\");\n}\n"
    );
    // The wrong format for the input is a clear failure, not a guess.
    let out = run_mend(
        dir.path(),
        &["apply", "--format", "str-replace"],
        Some(sr.as_bytes()),
    );
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn an_io_error_prints_its_cause_once() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    let out = run_mend(
        dir.path(),
        &["apply", "--root", &missing.to_string_lossy()],
        Some(b"x"),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");
}

#[test]
fn a_reader_that_stops_early_is_not_a_failure() {
    // Megabytes of parse output into `head -c 10`: mend's writes hit a
    // closed pipe.
    let dir = tempfile::tempdir().unwrap();
    let block = "a.py\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n";
    std::fs::write(dir.path().join("in.txt"), block.repeat(20_000)).unwrap();
    let script = format!(
        "'{}' parse in.txt | head -c 10 > /dev/null; echo \"${{PIPESTATUS[0]}}\"",
        crate::mend_bin().display()
    );
    let out = std::process::Command::new("bash")
        .args(["-c", &script])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "0", "{out:?}");
    assert!(out.stderr.is_empty(), "{out:?}");
}

/// One root rule: without `--root`, `mend apply` in a subfolder of a git
/// worktree acts on the worktree (the edits' paths are relative to it),
/// and makes no `.mend` in the subfolder; `--root` still overrides.
#[test]
fn apply_in_a_subfolder_acts_on_the_worktree() {
    let dir = crate::support::repo(&[("a.txt", "old\n"), ("sub/b.txt", "old\n")]);
    let sub = dir.path().join("sub");
    let out = run_mend(&sub, &["apply"], Some(EDIT.as_bytes()));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read(dir.path().join("a.txt")).unwrap(), b"new\n");
    assert_eq!(std::fs::read(sub.join("b.txt")).unwrap(), b"old\n");
    assert!(
        !sub.join("a.txt").exists(),
        "a.txt was made in the subfolder"
    );
    assert!(!sub.join(".mend").exists(), "sub/.mend was made");

    let edit_b = EDIT.replace("a.txt", "b.txt");
    let out = run_mend(&sub, &["apply", "--root", "."], Some(edit_b.as_bytes()));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(std::fs::read(sub.join("b.txt")).unwrap(), b"new\n");
}

/// One process after another edits a Python file: each finds the outline
/// the one before kept in `.mend/`, and reports exactly what a process
/// without it reports (the same text edited in a second root that never
/// keeps one, its cache removed before each run). A cache file not sealed
/// by mend is ignored.
#[test]
fn outlines_kept_between_processes_change_no_finding() {
    let text: String = (0..200)
        .map(|i| format!("def f{i}(x):\n    return g(x, {i})\n\n\n"))
        .collect();
    let kept = root_with(&[("app.py", text.as_bytes())]);
    let fresh = root_with(&[("app.py", text.as_bytes())]);
    let steps = [
        ("    return g(x, 7)", "    return g(x + 1, 7)"),
        ("    return g(x, 9)", "    return g(x, 9"),
        ("    return g(x, 9", "    return g(x, 9)"),
        ("def f100(x):", "def f100(x)"),
        ("def f100(x)", "def f100(x, y):"),
        ("    return g(x, 20)", "    if x:\n    return g(x, 20)"),
        (
            "    if x:\n    return g(x, 20)",
            "    s = '''\n    return g(x, 20)",
        ),
        ("    s = '''\n", ""),
    ];
    let run = |dir: &std::path::Path, from: &str, to: &str| {
        let edit = format!("app.py\n<<<<<<< SEARCH\n{from}\n=======\n{to}\n>>>>>>> REPLACE\n");
        let out = run_mend(dir, &["apply", "--json", "-"], Some(edit.as_bytes()));
        let mut v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["syntax"].take()
    };
    for (i, (from, to)) in steps.iter().enumerate() {
        let _ = std::fs::remove_file(fresh.path().join(".mend/outlines"));
        let with = run(kept.path(), from, to);
        let without = run(fresh.path(), from, to);
        assert_eq!(with, without, "step {i}: {from:?} -> {to:?}");
        assert!(kept.path().join(".mend/outlines").exists());
        assert_eq!(
            std::fs::read(kept.path().join("app.py")).unwrap(),
            std::fs::read(fresh.path().join("app.py")).unwrap()
        );
    }
    // Findings were reported on the way (the steps break and mend the
    // file), so the comparison compared something.
    let broken = run(kept.path(), "def f3(x):", "def f3(x:");
    assert!(broken.as_array().is_some_and(|a| !a.is_empty()), "{broken}");
    assert_eq!(
        run(kept.path(), "def f3(x:", "def f3(x):"),
        serde_json::json!([])
    );
    // A cache file that is not mend's (not sealed by it) is ignored, and
    // the check still finds the break.
    std::fs::write(kept.path().join(".mend/outlines"), b"planted").unwrap();
    let again = run(kept.path(), "def f4(x):", "def f4(x:");
    assert!(again.as_array().is_some_and(|a| !a.is_empty()), "{again}");
}

/// Processes that share `.mend/outlines` run at once: each edits its own
/// Python file (some edits break it, some mend it), and every report's
/// findings are the ones the same edit gets in a root that never had a
/// cache (the reference). Round after round, so each process reads a cache
/// the others are rewriting.
#[test]
fn concurrent_processes_sharing_outlines_report_as_a_fresh_root() {
    const FILES: usize = 4;
    let text: String = (0..120)
        .map(|i| format!("def f{i}(x):\n    return g(x, {i})\n\n\n"))
        .collect();
    let name = |k: usize| format!("m{k}.py");
    let files: Vec<(String, &[u8])> = (0..FILES).map(|k| (name(k), text.as_bytes())).collect();
    let files: Vec<(&str, &[u8])> = files.iter().map(|(n, t)| (n.as_str(), *t)).collect();
    let shared = root_with(&files);
    let fresh = root_with(&files);
    // Each round's edit of file k: break line `round`'s call, or mend it.
    let edit = |k: usize, round: usize| {
        let i = round / 2;
        let (from, to) = if round.is_multiple_of(2) {
            (
                format!("    return g(x, {i})"),
                format!("    return g(x, {i}"),
            )
        } else {
            (
                format!("    return g(x, {i}"),
                format!("    return g(x, {i})"),
            )
        };
        format!(
            "{}\n<<<<<<< SEARCH\n{from}\n=======\n{to}\n>>>>>>> REPLACE\n",
            name(k)
        )
    };
    let run = |dir: &std::path::Path, e: &str| {
        let out = run_mend(dir, &["apply", "--json", "-"], Some(e.as_bytes()));
        let mut v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (out.status.code(), v["syntax"].take())
    };
    for round in 0..6 {
        let got: Vec<_> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..FILES)
                .map(|k| {
                    let e = edit(k, round);
                    let dir = shared.path();
                    s.spawn(move || run(dir, &e))
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (k, got) in got.into_iter().enumerate() {
            let _ = std::fs::remove_file(fresh.path().join(".mend/outlines"));
            let want = run(fresh.path(), &edit(k, round));
            assert_eq!(got, want, "round {round}, file {k}");
            assert_eq!(got.0, Some(0), "round {round}, file {k}: {:?}", got.1);
            // Odd rounds mend what even rounds broke: findings only then.
            assert_eq!(
                got.1.as_array().unwrap().is_empty(),
                !round.is_multiple_of(2)
            );
        }
    }
    for k in 0..FILES {
        assert_eq!(
            std::fs::read(shared.path().join(name(k))).unwrap(),
            std::fs::read(fresh.path().join(name(k))).unwrap()
        );
    }
}
