//! Checkpoints narrowed by a watcher: `mend daemon` asked by the CLI,
//! `mend mcp` and `mend editor` holding their own; each narrowed
//! checkpoint's tree compared with the worktree as git stores it from
//! scratch (a fresh index, `git add -A`, `git write-tree`).
//!
//! A connection from another user cannot be tested here (it needs a
//! second account); the daemon checks `SO_PEERCRED` and its folder is
//! 0700, which `the_daemon_folder_is_private` checks.

use std::io::{BufRead as _, BufReader, Write as _};
use std::os::unix::net::{UnixListener, UnixStream};
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

/// Asserts `out` exited 0.
fn ok_code(out: &std::process::Output) {
    assert_eq!(out.status.code(), Some(0), "{out:?}");
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
    // A socket with no daemon behind it is no daemon: no `scan`, as
    // docs/daemon.md says, and `--verbose` says which it was.
    let out = run_mend(d, &["checkpoint", "create", "--json", "--verbose"], None);
    let made = ok(&out);
    assert!(made.get("scan").is_none(), "{made}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("no daemon is running"), "{said}");
    assert!(!said.contains("did not answer"), "{said}");
    assert_eq!(tree_of(d, made["commit"].as_str().unwrap()), git_tree(d));
    let status = run_mend(d, &["daemon", "status"], None);
    assert_eq!(status.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&status.stdout),
        "no daemon serves this root\n"
    );
    // The next daemon replaces the stale socket and serves.
    a_new_daemon_serves(d, 1);
}

/// A daemon started on `d` now serves it: after one full scan, the
/// checkpoint after `change(d, round)` is narrowed.
fn a_new_daemon_serves(d: &Path, round: usize) {
    let _again = Daemon::start(d);
    create(d);
    change(d, round);
    assert_eq!(create(d)["scan"], "narrowed");
}

#[test]
fn a_second_daemon_on_a_root_is_refused_and_stop_stops_the_first() {
    let dir = project();
    let d = dir.path();
    let mut daemon = Daemon::start(d);
    // A refusal exits 1, as refusals do everywhere in mend.
    let second = run_mend(d, &["daemon"], None);
    assert_eq!(second.status.code(), Some(1));
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

/// MCP asks a running daemon too: even without a watcher of its own
/// (`--no-watch`), its checkpoints are the daemon's, narrowed, in the
/// store the CLI lists.
#[test]
fn mcp_has_a_running_daemon_checkpoint() {
    let dir = project();
    let d = dir.path();
    let _daemon = Daemon::start(d);
    assert_eq!(create(d)["scan"], "full");
    let mut mcp = Mcp::start(d, &["--no-watch"]);
    for round in 0..2 {
        change(d, round);
        let made = mcp.call("checkpoint_create", &json!({"label": format!("r{round}")}));
        assert_eq!(made["scan"], "narrowed", "round {round}: {made}");
        assert_eq!(tree_of(d, made["commit"].as_str().unwrap()), git_tree(d));
        let listed = ok(&run_mend(d, &["checkpoint", "list", "--json"], None));
        assert_eq!(listed[0]["id"], made["id"], "{listed}");
    }
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

/// A folder without git, its files listed.
fn plain() -> tempfile::TempDir {
    mend_test_support::tree(&[("a.txt", "a\n"), ("src/b.txt", "b\n")])
}

/// The ids `mend checkpoint list` gives (a command opening the store the
/// root resolves to now).
fn listed(d: &Path) -> Vec<String> {
    let list = ok(&run_mend(d, &["checkpoint", "list", "--json"], None));
    let ids = list.as_array().unwrap().iter();
    ids.map(|c| c["id"].as_str().unwrap().to_owned()).collect()
}

/// A daemon started where there is no repository keeps its checkpoints
/// in the shadow store; a `git init` under it, the repository removed
/// again, or an empty `.git`, and it follows what a command would open:
/// every id it returns is one `checkpoint list` finds.
#[test]
fn a_daemon_checkpoints_in_the_store_the_cli_opens_now() {
    let dir = plain();
    let d = dir.path();
    let _daemon = Daemon::start(d);
    let first = create(d);
    assert_eq!(listed(d), vec![first["id"].as_str().unwrap()]);
    assert!(first["store"].is_string(), "{first}");

    git(d, &["init", "-q", "-b", "main", "."]);
    let in_git = create(d);
    assert_eq!(in_git["scan"], "full", "a reopened store scans in full");
    assert!(in_git.get("store").is_none(), "{in_git}");
    assert_eq!(listed(d), vec![in_git["id"].as_str().unwrap()]);
    // It restores, as any checkpoint the CLI finds.
    std::fs::write(d.join("a.txt"), "changed\n").unwrap();
    let id = in_git["id"].as_str().unwrap();
    ok(&run_mend(d, &["checkpoint", "restore", id, "--json"], None));
    assert_eq!(std::fs::read_to_string(d.join("a.txt")).unwrap(), "a\n");

    std::fs::remove_dir_all(d.join(".git")).unwrap();
    let shadowed = create(d);
    assert!(listed(d).contains(&shadowed["id"].as_str().unwrap().to_owned()));

    // An empty `.git`: the command fails as it would without a daemon,
    // and no id comes from a store nobody opens.
    std::fs::create_dir(d.join(".git")).unwrap();
    let out = run_mend(d, &["checkpoint", "create", "--json"], None);
    assert_ne!(out.status.code(), Some(0), "{out:?}");
    let said: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(said["error"]["kind"], "error", "{said}");
    assert!(said.get("id").is_none(), "{said}");
}

/// What a fake daemon does with the work it is asked for.
#[derive(Clone, Copy)]
enum Fake {
    /// Reads the request and says nothing more until the client leaves.
    Hang,
    /// Closes the connection: a daemon that died at work.
    Die,
}

/// A socket at `.mend/daemon/sock` (the root's `.mend` made by mend
/// already) that answers one client's `status` as a daemon does, then
/// does `fake` with its next request.
fn fake_daemon(d: &Path, fake: Fake) -> std::thread::JoinHandle<()> {
    use std::os::unix::fs::DirBuilderExt as _;
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(d.join(".mend/daemon"))
        .unwrap();
    let listener = UnixListener::bind(d.join(".mend/daemon/sock")).unwrap();
    std::thread::spawn(move || {
        let (conn, _) = listener.accept().unwrap();
        let mut conn = BufReader::new(conn);
        let mut line = String::new();
        conn.read_line(&mut line).unwrap();
        let status = json!({"v": 1, "id": 1, "result": {"pid": std::process::id(),
            "root": "/", "instance": "fake", "started": 0, "token": null, "watching": true}});
        writeln!(conn.get_ref(), "{status}").unwrap();
        line.clear();
        conn.read_line(&mut line).unwrap();
        assert!(line.contains("\"checkpoint\""), "{line}");
        if let Fake::Hang = fake {
            // Until the client gives up and closes.
            line.clear();
            let _ = conn.read_line(&mut line);
        }
    })
}

/// A daemon that answers `status` and then says nothing is given up on
/// (after 5 s without a progress line: a daemon at work sends one twice
/// a second), said even without `--verbose`, and the command scans itself.
#[test]
fn a_daemon_silent_at_work_is_given_up_on_and_said() {
    let dir = project();
    let d = dir.path();
    create(d);
    let fake = fake_daemon(d, Fake::Hang);
    change(d, 0);
    let out = run_mend(d, &["checkpoint", "create", "--json"], None);
    let made = ok(&out);
    assert_eq!(made["scan"], "full", "{made}");
    assert_eq!(tree_of(d, made["commit"].as_str().unwrap()), git_tree(d));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("sent nothing for 5 s; scanning in full here"),
        "{said}"
    );
    fake.join().unwrap();
}

/// A daemon that dies at work: the command scans itself, `--verbose` says
/// why, and the JSON says `"scan": "full"` (a daemon was there).
#[test]
fn a_daemon_that_dies_at_work_is_said_with_verbose() {
    let dir = project();
    let d = dir.path();
    create(d);
    let fake = fake_daemon(d, Fake::Die);
    let out = run_mend(d, &["checkpoint", "create", "--json", "--verbose"], None);
    let made = ok(&out);
    assert_eq!(made["scan"], "full", "{made}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("did not do the work: it stopped answering"),
        "{said}"
    );
    fake.join().unwrap();
}

/// How long a lock error says its process waited.
fn waited_ms(message: &str) -> u64 {
    let after = message.split("(waited ").nth(1).expect(message);
    after.split(' ').next().unwrap().parse().expect(message)
}

/// The daemon waits for the workspace lock as long as the command would
/// (`--lock-timeout`), and the command's own try after it gets what is
/// left of that wait, not a second one: one wait in all.
#[test]
fn a_lock_the_daemon_waited_for_is_not_waited_for_again() {
    let dir = project();
    let d = dir.path();
    let daemon = Daemon::start(d);
    let lock = std::fs::File::options()
        .write(true)
        .create(true)
        .truncate(false)
        .open(d.join(".mend/lock"))
        .unwrap();
    lock.lock().unwrap();
    let out = run_mend(
        d,
        &[
            "turn",
            "begin",
            "--json",
            "--verbose",
            "--lock-timeout",
            "1",
        ],
        None,
    );
    // A busy lock is an error for `turn begin`, daemon or not.
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    let pid = daemon.pid();
    let by_daemon = said
        .strip_prefix(&format!(
            "mend: the daemon (pid {pid}) did not do the work: "
        ))
        .expect(&said);
    assert!(waited_ms(by_daemon) >= 1000, "{said}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let message = v["error"]["message"].as_str().unwrap();
    assert!(message.contains("another process is writing"), "{v}");
    assert!(waited_ms(message) < 1000, "a second wait: {message}");
    drop(lock);
    ok(&run_mend(d, &["turn", "begin", "--json"], None));
}

/// A home directory is refused (exit 1, a refusal) and the refused start
/// leaves nothing behind: no `.mend`, no lock.
#[test]
fn a_refused_daemon_start_exits_1_and_leaves_nothing() {
    let dir = plain();
    let d = dir.path();
    let out = std::process::Command::new(mend_test_support::mend_bin())
        .args(["daemon", "--root"])
        .arg(d)
        .env("HOME", d)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("home"), "{said}");
    assert!(!d.join(".mend").exists());
}

/// A daemon whose `.mend` is deleted (and made again by a command) stops:
/// no client reaches it, and a new daemon serves the root.
#[test]
fn an_orphaned_daemon_stops_and_a_new_one_serves() {
    let dir = project();
    let d = dir.path();
    let mut daemon = Daemon::start(d);
    create(d);
    std::fs::remove_dir_all(d.join(".mend")).unwrap();
    let made = create(d);
    assert!(made.get("scan").is_none(), "{made}");
    let mut ended = None;
    for _ in 0..1500 {
        ended = daemon.ended();
        if ended.is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let ended = ended.expect("the orphaned daemon still runs after 30 s");
    assert!(!ended.success(), "{ended}");
    a_new_daemon_serves(d, 0);
}

/// Checkpoint commands run in a subfolder of a worktree act on the
/// worktree, as turns do; outside any repository, on the current folder.
#[test]
fn checkpoint_commands_in_a_subfolder_act_on_the_worktree() {
    let dir = project();
    let d = dir.path();
    let sub = d.join("src/m0");
    let made = ok(&run_mend(&sub, &["checkpoint", "create", "--json"], None));
    assert!(made.get("store").is_none(), "{made}");
    assert!(!sub.join(".mend").exists());
    assert_eq!(tree_of(d, made["commit"].as_str().unwrap()), git_tree(d));
    let id = made["id"].as_str().unwrap();
    assert_eq!(listed(&sub), vec![id]);
    assert_eq!(listed(d), vec![id]);
    // A daemon started there without `--root` serves the worktree too.
    let mut daemon = std::process::Command::new(mend_test_support::mend_bin())
        .arg("daemon")
        .current_dir(&sub)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    while !run_mend(d, &["daemon", "status"], None).status.success() {
        assert!(daemon.try_wait().unwrap().is_none(), "the daemon exited");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    create(d);
    change(d, 0);
    let made = ok(&run_mend(&sub, &["checkpoint", "create", "--json"], None));
    assert_eq!(made["scan"], "narrowed", "{made}");
    ok_code(&run_mend(&sub, &["daemon", "stop"], None));
    assert!(daemon.wait().unwrap().success());
    let outside = plain();
    let inner = outside.path().join("src");
    let made = ok(&run_mend(&inner, &["checkpoint", "create", "--json"], None));
    assert!(made["store"].as_str().unwrap().contains("src"), "{made}");
    assert!(inner.join(".mend").exists());
}
