//! `mend checkpoint …` and `mend apply --checkpoint/--stage`.

use crate::{git, run_mend};

fn repo() -> tempfile::TempDir {
    mend_test_support::repo(&[("a.txt", "old\n")])
}

const EDIT: &str = "a.txt\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n";

#[test]
fn apply_with_checkpoint_can_be_undone() {
    let dir = repo();
    let d = dir.path();
    let out = run_mend(d, &["apply", "--checkpoint"], Some(EDIT.as_bytes()));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(d.join("a.txt")).unwrap(), "new\n");
    let list = run_mend(d, &["checkpoint", "list", "--json"], None);
    let v: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(v[0]["label"], "before mend apply");
    let id = v[0]["id"].as_str().unwrap().to_owned();
    let dry = run_mend(
        d,
        &["checkpoint", "restore", &id, "--dry-run", "--json"],
        None,
    );
    let r: serde_json::Value = serde_json::from_slice(&dry.stdout).unwrap();
    assert_eq!(r["changes"][0]["path"], "a.txt");
    assert_eq!(std::fs::read_to_string(d.join("a.txt")).unwrap(), "new\n");
    let out = run_mend(d, &["checkpoint", "restore", &id], None);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(d.join("a.txt")).unwrap(), "old\n");
    let show = run_mend(d, &["checkpoint", "show", &id], None);
    assert_eq!(show.status.code(), Some(0));
    let diff = run_mend(d, &["checkpoint", "diff", &id], None);
    assert_eq!(diff.status.code(), Some(0));
    let gc = run_mend(d, &["checkpoint", "gc", "--keep", "1", "--json"], None);
    let dropped: serde_json::Value = serde_json::from_slice(&gc.stdout).unwrap();
    assert_eq!(dropped.as_array().unwrap().len(), 1);
    // HEAD never moved.
    assert_eq!(git(d, &["log", "--oneline"]).lines().count(), 1);
}

#[test]
fn apply_stage_adds_changed_files_to_the_index() {
    let dir = repo();
    let d = dir.path();
    let out = run_mend(d, &["apply", "--stage"], Some(EDIT.as_bytes()));
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(git(d, &["diff", "--cached", "--name-only"]), "a.txt\n");
}

#[test]
fn checkpoint_commands_in_a_plain_folder() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("n.txt"), "one\n").unwrap();
    let out = run_mend(
        d,
        &[
            "checkpoint",
            "create",
            "--label",
            "start",
            "--anchor",
            "msg-7",
            "--json",
        ],
        None,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cp: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(cp["anchor"], "msg-7");
    std::fs::write(d.join("n.txt"), "two\n").unwrap();
    let id = cp["id"].as_str().unwrap();
    let out = run_mend(d, &["checkpoint", "restore", id, "--prune-later"], None);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(d.join("n.txt")).unwrap(), "one\n");
    // A refusal, as an unknown session is: exit 1.
    let out = run_mend(d, &["checkpoint", "drop", "nope"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no checkpoint `nope`"));
}

#[test]
fn gc_ages_past_what_can_be_counted_never_drop_everything() {
    let dir = repo();
    let d = dir.path();
    assert!(
        run_mend(d, &["checkpoint", "create"], None)
            .status
            .success()
    );
    let count = |d: &std::path::Path| {
        let out = run_mend(d, &["checkpoint", "list", "--json"], None);
        serde_json::from_slice::<serde_json::Value>(&out.stdout)
            .unwrap()
            .as_array()
            .map_or(0, Vec::len)
    };
    // Past i64 seconds: kept, since nothing is that old.
    let out = run_mend(
        d,
        &["checkpoint", "gc", "--older-than", "10000000000000000000"],
        None,
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(count(d), 1);
    // Past u64 seconds once the unit is applied: refused as usage.
    let out = run_mend(
        d,
        &["checkpoint", "gc", "--older-than", "150000000000000000d"],
        None,
    );
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("longer than mend can count"));
    assert_eq!(count(d), 1);
}

#[test]
fn an_ambiguous_id_prefix_lists_the_ids_it_matches() {
    let dir = repo();
    let d = dir.path();
    // Seventeen ids guarantee two that share their first hex digit.
    let mut ids: Vec<String> = Vec::new();
    for n in 0..17 {
        std::fs::write(d.join("a.txt"), format!("{n}\n")).unwrap();
        let out = run_mend(d, &["checkpoint", "create", "--json"], None);
        let cp: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        ids.push(cp["id"].as_str().unwrap().to_owned());
    }
    let (a, b) = ids
        .iter()
        .enumerate()
        .find_map(|(i, a)| {
            ids[i + 1..]
                .iter()
                .find(|b| b[..1] == a[..1])
                .map(|b| (a, b))
        })
        .unwrap();
    let out = run_mend(d, &["checkpoint", "show", &a[..1]], None);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(a.as_str()) && err.contains(b.as_str()),
        "{err}"
    );
    assert!(!err.contains("no checkpoint"), "{err}");
}

#[test]
fn concurrent_creates_all_succeed_and_a_stale_index_lock_does_not_block() {
    let dir = repo();
    let d = dir.path();
    // What a process killed while writing the private index leaves.
    std::fs::create_dir_all(d.join(".git/mend")).unwrap();
    std::fs::write(d.join(".git/mend/checkpoint-index.lock"), "").unwrap();
    let children: Vec<_> = (0..6)
        .map(|n| {
            std::fs::write(d.join(format!("f{n}.txt")), format!("{n}\n")).unwrap();
            std::process::Command::new(crate::mend_bin())
                .args(["checkpoint", "create", "--label", &format!("c{n}")])
                .current_dir(d)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{out:?}");
    }
    let out = run_mend(d, &["checkpoint", "list", "--json"], None);
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 6);
}

/// `mend checkpoint create` with `$HOME` set to `home`.
fn create_in_home(
    home: &std::path::Path,
    root: &std::path::Path,
    more: &[&str],
) -> std::process::Output {
    in_home(home, root, &[&["checkpoint", "create"], more].concat())
}

/// `mend ARGS --root ROOT` with `$HOME` set to `home`.
fn in_home(home: &std::path::Path, root: &std::path::Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(mend_test_support::mend_bin())
        .args(args)
        .arg("--root")
        .arg(root)
        .env("HOME", home)
        .current_dir(root)
        .output()
        .unwrap()
}

/// codex#19588 (`git add -A` run on a home directory): a home directory is
/// refused, saying why and how to go on, and nothing is written there;
/// with `--force` it is checkpointed, and from then on it has checkpoints
/// and needs no flag. A git repository at home is refused the same way.
#[test]
fn a_home_directory_is_refused_until_forced_codex_19588() {
    for with_git in [false, true] {
        let home = tempfile::tempdir().unwrap();
        let h = home.path();
        std::fs::write(h.join(".bashrc"), "alias l=ls\n").unwrap();
        if with_git {
            git(h, &["init", "-q", "."]);
        }
        let out = create_in_home(h, h, &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        // A refusal, as everywhere in mend: exit 1, nothing written.
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains("it is your home directory"), "{err}");
        assert!(err.contains("--force"), "{err}");
        assert!(!h.join(".mend/shadow.git").exists());
        // A project inside it is fine.
        std::fs::create_dir(h.join("project")).unwrap();
        std::fs::write(h.join("project/a.txt"), "a\n").unwrap();
        let out = create_in_home(h, &h.join("project"), &[]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let out = create_in_home(h, h, &["--force"]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let out = create_in_home(h, h, &[]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// A turn's start is a checkpoint: `mend turn begin` refuses a home
/// directory as `mend checkpoint create` does (exit 1, nothing written),
/// and `--force` goes through.
#[test]
fn turn_begin_in_a_home_directory_is_refused_until_forced() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    std::fs::write(h.join(".bashrc"), "alias l=ls\n").unwrap();
    let out = in_home(h, h, &["turn", "begin"]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("it is your home directory"), "{said}");
    assert!(!h.join(".mend/shadow.git").exists());
    let out = in_home(h, h, &["turn", "begin", "--force"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = in_home(h, h, &["turn", "status", "--json"]);
    assert_eq!(out.status.code(), Some(0));
}

/// gemini-cli#4115 (checkpoints silently did nothing outside git): the
/// CLI says where a plain folder's checkpoints are kept, in words and in
/// JSON.
#[test]
fn outside_git_create_says_where_checkpoints_are_kept_gemini_cli_4115() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("n.txt"), "one\n").unwrap();
    let out = run_mend(d, &["checkpoint", "create"], None);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let store = d.canonicalize().unwrap().join(".mend/shadow.git");
    assert!(
        err.contains("is no git repository; its checkpoints are kept in")
            && err.contains(&*store.to_string_lossy()),
        "{err}"
    );
    let out = run_mend(d, &["checkpoint", "create", "--json"], None);
    let made: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(made["store"], store.to_string_lossy().as_ref());
    // In a git repository, nothing more is said.
    let dir = repo();
    let out = run_mend(dir.path(), &["checkpoint", "create", "--json"], None);
    let made: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(made.get("store").is_none(), "{made}");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The file limit through the CLI: `--max-files` refuses a first
/// checkpoint over it (exit 1), and the message counts.
#[test]
fn max_files_refuses_a_first_checkpoint_over_it() {
    let dir = repo();
    let d = dir.path();
    for i in 0..30 {
        std::fs::write(d.join(format!("f{i}.txt")), format!("{i}\n")).unwrap();
    }
    let out = run_mend(d, &["checkpoint", "create", "--max-files", "10"], None);
    let err = String::from_utf8_lossy(&out.stderr);
    // A refusal, as everywhere in mend: exit 1, nothing kept.
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("holds more than 10 files"), "{err}");
    let out = run_mend(d, &["checkpoint", "create", "--max-files", "100"], None);
    assert_eq!(out.status.code(), Some(0));
}

/// A restore that would overwrite bytes no checkpoint holds (a file
/// ignored since) is a refusal like any other: exit 1, nothing changed,
/// and `--force` copies the file aside and goes on.
#[test]
fn a_restore_over_unheld_bytes_is_refused_with_exit_1() {
    let dir = repo();
    let root = dir.path();
    std::fs::write(root.join(".env"), "KEY=old\n").unwrap();
    let out = run_mend(root, &["checkpoint", "create", "--json"], None);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = v["id"].as_str().unwrap().to_owned();
    std::fs::write(root.join(".gitignore"), ".env\n").unwrap();
    std::fs::write(root.join(".env"), "KEY=secret\n").unwrap();
    let out = run_mend(root, &["checkpoint", "restore", &id], None);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("in no checkpoint"), "{err}");
    assert_eq!(std::fs::read(root.join(".env")).unwrap(), b"KEY=secret\n");
    let out = run_mend(root, &["checkpoint", "restore", &id, "--force"], None);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read(root.join(".env")).unwrap(), b"KEY=old\n");
}
