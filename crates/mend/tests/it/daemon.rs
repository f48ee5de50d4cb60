//! Checkpoints narrowed by a watcher: `mend daemon` asked by the CLI,
//! `mend mcp` and `mend editor` holding their own; each narrowed
//! checkpoint's tree compared with the worktree as git stores it from
//! scratch (a fresh index, `git add -A`, `git write-tree`).
//!
//! A connection from another user cannot be tested here (it needs a
//! second account); the daemon checks `SO_PEERCRED` and its folder is
//! 0700, which `the_daemon_folder_is_private` checks.

use std::io::{BufRead as _, BufReader, Write as _};
use std::os::unix::net::UnixStream;
use std::path::Path;

use mend_test_support::serve::{Daemon, Mcp};
use serde_json::{Value, json};

use crate::pending_model::{Rng, env};
use crate::{git, run_mend};

/// A repository whose files are committed, as a project is.
fn project() -> tempfile::TempDir {
    let files: Vec<(String, String)> = (0..40)
        .map(|i| (format!("src/m{}/f{i}.txt", i % 4), format!("file {i}\n")))
        .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    mend_test_support::repo(&refs)
}

/// The worktree's tree as git writes it from a fresh index: what a full
/// scan must give for a worktree with no ignored or nested files.
fn git_tree(d: &Path) -> String {
    let scratch = tempfile::tempdir().unwrap();
    let index = scratch.path().join("index");
    let env = [("GIT_INDEX_FILE", index.as_path())];
    mend_test_support::git_with(d, &env, &["add", "-A"]);
    mend_test_support::git_with(d, &env, &["write-tree"])
        .trim()
        .to_owned()
}

fn tree_of(d: &Path, commit: &str) -> String {
    git(d, &["rev-parse", &format!("{commit}^{{tree}}")])
        .trim()
        .to_owned()
}

fn ok(out: &std::process::Output) -> Value {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn create(d: &Path) -> Value {
    ok(&run_mend(d, &["checkpoint", "create", "--json"], None))
}

/// Changes ten files: edits, a new file, a deletion, a rename.
fn change(d: &Path, round: usize) {
    for i in 0..6 {
        std::fs::write(
            d.join(format!("src/m{}/f{}.txt", i % 4, i * 4 + round % 4)),
            format!("round {round}\n"),
        )
        .unwrap();
    }
    std::fs::write(d.join(format!("new{round}.txt")), "new\n").unwrap();
    let _ = std::fs::remove_file(d.join(format!("src/m1/f{}.txt", 9 + round * 4)));
    let _ = std::fs::rename(
        d.join(format!("src/m2/f{}.txt", 10 + round * 4)),
        d.join(format!("src/m3/moved{round}.txt")),
    );
}

#[test]
fn the_cli_has_the_daemon_checkpoint_and_its_tree_is_a_full_scans() {
    let dir = project();
    let d = dir.path();
    let _daemon = Daemon::start(d);
    let first = create(d);
    assert_eq!(first["scan"], "full", "{first}");
    for round in 0..3 {
        change(d, round);
        let made = create(d);
        assert_eq!(made["scan"], "narrowed", "round {round}: {made}");
        let commit = made["commit"].as_str().unwrap();
        assert_eq!(tree_of(d, commit), git_tree(d), "round {round}");
    }
    // The text output is the CLI's own, whoever scanned.
    let out = run_mend(d, &["checkpoint", "create", "--label", "x"], None);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("created ") && text.trim_end().ends_with("  x"),
        "{text}"
    );
    let verbose = run_mend(d, &["checkpoint", "create", "--verbose"], None);
    let said = String::from_utf8_lossy(&verbose.stderr);
    assert!(
        said.contains("the daemon examined only the paths"),
        "{said}"
    );
}

#[test]
fn without_a_daemon_the_output_is_todays() {
    let dir = project();
    let d = dir.path();
    let made = create(d);
    assert!(made.get("scan").is_none(), "{made}");
    assert!(!d.join(".mend/daemon").exists());
    let status = run_mend(d, &["daemon", "status"], None);
    assert_eq!(status.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&status.stdout),
        "no daemon serves this root\n"
    );
    // Asking for a daemon made nothing in a root without `.mend`.
    let plain = tempfile::tempdir().unwrap();
    std::fs::write(plain.path().join("a"), "a").unwrap();
    assert_eq!(
        run_mend(plain.path(), &["daemon", "status"], None)
            .status
            .code(),
        Some(1)
    );
    assert!(!plain.path().join(".mend").exists());
}

#[test]
fn a_killed_daemon_means_a_full_scan_and_its_socket_is_replaced() {
    let dir = project();
    let d = dir.path();
    let mut daemon = Daemon::start(d);
    create(d);
    daemon.kill();
    assert!(
        d.join(".mend/daemon/sock").exists(),
        "a killed daemon leaves its socket"
    );
    change(d, 0);
    let made = create(d);
    assert_eq!(made["scan"], "full", "{made}");
    assert_eq!(tree_of(d, made["commit"].as_str().unwrap()), git_tree(d));
    let status = run_mend(d, &["daemon", "status"], None);
    assert_eq!(status.status.code(), Some(1));
    // The next daemon replaces the stale socket and serves.
    let _again = Daemon::start(d);
    create(d);
    change(d, 1);
    assert_eq!(create(d)["scan"], "narrowed");
}

#[test]
fn a_second_daemon_on_a_root_is_refused_and_stop_stops_the_first() {
    let dir = project();
    let d = dir.path();
    let mut daemon = Daemon::start(d);
    let second = run_mend(d, &["daemon"], None);
    assert_eq!(second.status.code(), Some(2));
    let said = String::from_utf8_lossy(&second.stderr);
    assert!(
        said.contains(&format!(
            "a daemon already serves this root (pid {})",
            daemon.pid()
        )),
        "{said}"
    );
    let stop = run_mend(d, &["daemon", "stop"], None);
    assert_eq!(
        stop.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&stop.stderr)
    );
    assert!(daemon.wait().success());
    assert!(!d.join(".mend/daemon/sock").exists());
    assert_eq!(
        run_mend(d, &["daemon", "stop"], None).status.code(),
        Some(1)
    );
}

#[test]
fn the_daemon_folder_is_private() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = project();
    let d = dir.path();
    let _daemon = Daemon::start(d);
    let mode = std::fs::metadata(d.join(".mend/daemon"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700);
}

/// Sends `line` (a newline is added) and reads one answer.
fn exchange(conn: &mut BufReader<UnixStream>, line: &[u8]) -> Value {
    let mut out = conn.get_ref();
    out.write_all(line).unwrap();
    out.write_all(b"\n").unwrap();
    let mut answer = String::new();
    conn.read_line(&mut answer).unwrap();
    serde_json::from_str(&answer).unwrap()
}

#[test]
fn garbage_frames_are_answered_and_the_daemon_keeps_serving() {
    let dir = project();
    let d = dir.path();
    let _daemon = Daemon::start(d);
    let mut conn = BufReader::new(UnixStream::connect(d.join(".mend/daemon/sock")).unwrap());
    let huge = vec![b'x'; 100_000];
    let cases: Vec<(&[u8], &str)> = vec![
        (b"not json", "bad_frame"),
        (b"\xff\xfe\x00", "bad_frame"),
        (b"[1,2]", "bad_frame"),
        (br#"{"v":1,"id":1}"#, "bad_frame"),
        (
            br#"{"v":1,"id":1,"method":"status","extra":1}"#,
            "bad_frame",
        ),
        (br#"{"v":2,"id":1,"method":"status"}"#, "version"),
        (
            br#"{"v":1,"id":1,"method":"format_disk"}"#,
            "unknown_method",
        ),
        (
            br#"{"v":1,"id":1,"method":"checkpoint","params":{"label":3}}"#,
            "bad_params",
        ),
        (
            br#"{"v":1,"id":1,"method":"changes","params":[1]}"#,
            "bad_params",
        ),
        (&huge, "too_large"),
    ];
    for (line, code) in cases {
        let a = exchange(&mut conn, line);
        assert_eq!(a["v"], 1, "{a}");
        assert_eq!(a["error"]["code"], code, "{a}");
        assert!(
            a["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty())
        );
    }
    let a = exchange(&mut conn, br#"{"v":1,"id":"s","method":"status"}"#);
    assert_eq!(a["id"], "s");
    assert_eq!(a["result"]["watching"], true, "{a}");
}

#[test]
fn changes_names_the_paths_changed_since_a_token_or_doubts() {
    let dir = project();
    let d = dir.path();
    let _daemon = Daemon::start(d);
    let mut conn = BufReader::new(UnixStream::connect(d.join(".mend/daemon/sock")).unwrap());
    let first = exchange(&mut conn, br#"{"v":1,"id":1,"method":"changes"}"#);
    let r = &first["result"];
    assert!(r["doubt"].is_string(), "{first}");
    let (token, instance) = (r["token"].clone(), r["instance"].clone());
    std::fs::write(d.join("src/m0/f0.txt"), "changed\n").unwrap();
    let ask = json!({"v": 1, "id": 2, "method": "changes",
                     "params": {"since": token, "instance": instance}});
    let next = exchange(&mut conn, ask.to_string().as_bytes());
    let paths = next["result"]["paths"].as_array().unwrap();
    assert!(paths.contains(&json!("src/m0/f0.txt")), "{next}");
    let other = json!({"v": 1, "id": 3, "method": "changes",
                       "params": {"since": token, "instance": "1-1"}});
    let doubt = exchange(&mut conn, other.to_string().as_bytes());
    assert!(doubt["result"]["doubt"].is_string(), "{doubt}");
}

#[test]
fn turn_begin_through_the_daemon_is_the_clis_turn() {
    let dir = project();
    let d = dir.path();
    let _daemon = Daemon::start(d);
    let begun = ok(&run_mend(
        d,
        &["turn", "begin", "--label", "t", "--json"],
        None,
    ));
    assert_eq!(begun["turn"]["label"], "t");
    std::fs::write(d.join("src/m0/f0.txt"), "turned\n").unwrap();
    let out = run_mend(d, &["turn", "begin", "--json", "--verbose"], None);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("the daemon examined only the paths"),
        "{said}"
    );
    let again = ok(&out);
    assert_eq!(again["ended"]["id"], begun["turn"]["id"]);
    let start = again["turn"]["start"].as_str().unwrap();
    let list = ok(&run_mend(d, &["checkpoint", "list", "--json"], None));
    let commit = list
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == start)
        .unwrap()["commit"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(tree_of(d, &commit), git_tree(d));
}

#[test]
fn mcp_checkpoint_create_is_narrowed_and_equals_a_full_scan() {
    let dir = project();
    let d = dir.path();
    let mut mcp = Mcp::start(d, &[]);
    let first = mcp.call("checkpoint_create", &json!({}));
    assert_eq!(first["scan"], "full", "{first}");
    for round in 0..3 {
        change(d, round);
        let made = mcp.call("checkpoint_create", &json!({"label": format!("r{round}")}));
        assert_eq!(made["scan"], "narrowed", "{made}");
        assert_eq!(tree_of(d, made["commit"].as_str().unwrap()), git_tree(d));
    }
    let mut plain = Mcp::start(d, &["--no-watch"]);
    change(d, 3);
    plain.call("checkpoint_create", &json!({}));
    assert_eq!(plain.call("checkpoint_create", &json!({}))["scan"], "full");
}

#[test]
fn editor_checkpoint_create_is_narrowed_and_equals_a_full_scan() {
    let dir = project();
    let d = dir.path();
    let mut c = crate::editor::client::Client::start(d);
    let first = c.request("checkpoint/create", json!({})).unwrap();
    assert_eq!(first["scan"], "full", "{first}");
    for round in 0..2 {
        change(d, round);
        let made = c.request("checkpoint/create", json!({})).unwrap();
        assert_eq!(made["scan"], "narrowed", "{made}");
        assert_eq!(tree_of(d, made["commit"].as_str().unwrap()), git_tree(d));
    }
    c.finish();
}

/// One random file operation under `d`: write, append, truncate, a
/// same-size rewrite, delete, rename a file or a folder, make and fill a
/// folder, remove one, chmod +x, a symbolic link.
fn operate(d: &Path, rng: &mut Rng) {
    use std::os::unix::fs::PermissionsExt as _;
    let dirs = ["a", "a/b", "c", "c/d/e"];
    let dir = d.join(dirs[rng.below(dirs.len())]);
    let file = dir.join(format!("f{}", rng.below(6)));
    let _ = std::fs::create_dir_all(&dir);
    let _ = match rng.below(10) {
        0 | 1 => std::fs::write(&file, format!("{}\n", rng.below(1000))),
        2 => std::fs::OpenOptions::new()
            .append(true)
            .open(&file)
            .and_then(|mut f| f.write_all(b"more\n")),
        3 => std::fs::write(&file, ""),
        // Same size, same second: only the content differs.
        4 => std::fs::read(&file).and_then(|mut b| {
            b.iter_mut()
                .for_each(|c| *c = if *c == b'1' { b'2' } else { b'1' });
            std::fs::write(&file, b)
        }),
        5 => std::fs::remove_file(&file),
        6 => std::fs::rename(&file, dir.join(format!("r{}", rng.below(6)))),
        7 => {
            let to = d.join(format!("moved{}", rng.below(3)));
            let _ = std::fs::remove_dir_all(&to);
            std::fs::rename(&dir, &to)
        }
        8 => std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)),
        _ => std::os::unix::fs::symlink(format!("f{}", rng.below(6)), dir.join("link")),
    };
}

/// Random operations in a real root with the daemon watching: after every
/// batch, the daemon's checkpoint has the tree a full scan gives. The
/// number of sequences is `MEND_DAEMON_DIFF_CASES` (default 3).
#[test]
fn daemon_checkpoints_equal_full_scans_over_random_operations() {
    let cases = env("MEND_DAEMON_DIFF_CASES", 3);
    let mut narrowed = 0;
    for seed in 1..=cases {
        let dir = mend_test_support::repo(&[("a/f0", "zero\n"), ("c/d/e/f1", "one\n")]);
        let d = dir.path();
        let _daemon = Daemon::start(d);
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        create(d);
        for step in 0..8 {
            for _ in 0..1 + rng.below(6) {
                operate(d, &mut rng);
            }
            let made = create(d);
            narrowed += usize::from(made["scan"] == "narrowed");
            let commit = made["commit"].as_str().unwrap();
            assert_eq!(tree_of(d, commit), git_tree(d), "seed {seed}, step {step}");
        }
    }
    assert!(narrowed > 0, "no checkpoint was narrowed");
}
