//! `mend merge` and `mend diff` through the binary.

use std::process::Command;

use crate::{git, run_mend};

fn files(dir: &std::path::Path, files: &[(&str, &[u8])]) {
    for (n, c) in files {
        std::fs::write(dir.join(n), c).unwrap();
    }
}

#[test]
fn merge_writes_current_and_exits_with_the_conflict_count() {
    let dir = tempfile::tempdir().unwrap();
    files(
        dir.path(),
        &[
            ("cur", b"A\nb\nc\n"),
            ("base", b"a\nb\nc\n"),
            ("oth", b"a\nb\nC\n"),
        ],
    );
    let out = run_mend(dir.path(), &["merge", "cur", "base", "oth"], None);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(std::fs::read(dir.path().join("cur")).unwrap(), b"A\nb\nC\n");

    files(dir.path(), &[("cur", b"a\nX\nc\n"), ("oth", b"a\nY\nc\n")]);
    let out = run_mend(
        dir.path(),
        &[
            "merge",
            "-p",
            "-L",
            "mine",
            "-L",
            "orig",
            "-L",
            "yours",
            "--diff3",
            "--marker-size",
            "3",
            "cur",
            "base",
            "oth",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "a\n<<< mine\nX\n||| orig\nb\n===\nY\n>>> yours\nc\n"
    );
    // -p leaves CURRENT alone.
    assert_eq!(std::fs::read(dir.path().join("cur")).unwrap(), b"a\nX\nc\n");
}

#[test]
fn merge_matches_git_merge_file_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let base = b"fn a() {\r\n    one();\r\n}\r\n\r\nfn b() {\r\n    two();\r\n}\r\n";
    let cur = b"fn a() {\r\n    one();\r\n    more();\r\n}\r\n\r\nfn b() {\r\n    TWO();\r\n}\r\n";
    let oth = b"fn a() {\r\n    ONE();\r\n}\r\n\r\nfn b() {\r\n    two(2);\r\n}";
    for style in [None, Some("--diff3"), Some("--zdiff3")] {
        files(
            dir.path(),
            &[("m", cur), ("g", cur), ("base", base), ("oth", oth)],
        );
        let mut args = vec!["merge"];
        args.extend(style);
        args.extend(["m", "base", "oth"]);
        let mine = run_mend(dir.path(), &args, None);
        let mut git = Command::new("git");
        git.current_dir(dir.path()).arg("merge-file");
        git.args(style);
        let theirs = git.args(["-L", "m", "g", "base", "oth"]).output().unwrap();
        assert_eq!(mine.status.code(), theirs.status.code(), "{style:?}");
        assert_eq!(
            std::fs::read(dir.path().join("m")).unwrap(),
            std::fs::read(dir.path().join("g")).unwrap(),
            "{style:?}"
        );
    }
}

#[test]
fn adjacent_merge_policy_and_json_regions() {
    let dir = tempfile::tempdir().unwrap();
    files(
        dir.path(),
        &[
            ("cur", b"1\nTWO\n3\n4\n"),
            ("base", b"1\n2\n3\n4\n"),
            ("oth", b"1\n2\nTHREE\n4\n"),
        ],
    );
    let out = run_mend(dir.path(), &["merge", "-p", "cur", "base", "oth"], None);
    assert_eq!(out.status.code(), Some(1), "git's policy conflicts");
    let out = run_mend(
        dir.path(),
        &[
            "merge",
            "-p",
            "--adjacent",
            "merge",
            "--json",
            "cur",
            "base",
            "oth",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["conflicts"], 0);
    assert_eq!(v["merged"], "1\nTWO\nTHREE\n4\n");
    let kinds: Vec<&str> = v["regions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["kind"].as_str().unwrap())
        .collect();
    // git's conflict region, settled by the adjacent resolver, which the
    // region names; unresolved regions carry no resolver.
    assert_eq!(kinds, vec!["unchanged", "resolved", "unchanged"]);
    assert_eq!(v["regions"][1]["resolver"], "adjacent");
    assert_eq!(
        v["regions"][1]["base"],
        serde_json::json!({"start": 1, "end": 3})
    );
    assert!(v["regions"][0].get("resolver").is_none());
}

#[test]
fn structured_merge_follows_the_language_of_current_or_path() {
    let dir = tempfile::tempdir().unwrap();
    let base = b"[deps]\nanyhow = \"1\"\nserde = \"1\"\n";
    let cur = b"[deps]\nanyhow = \"1\"\nregex = \"1\"\nserde = \"1\"\n";
    let oth = b"[deps]\nanyhow = \"1\"\nclap = \"4\"\nserde = \"1\"\n";
    let merged = "[deps]\nanyhow = \"1\"\nclap = \"4\"\nregex = \"1\"\nserde = \"1\"\n";
    files(
        dir.path(),
        &[
            ("Cargo.toml", cur),
            ("tmp1", cur),
            ("base", base),
            ("oth", oth),
        ],
    );
    let merge = |args: &[&str]| {
        let mut all = vec!["merge", "-p"];
        all.extend(args);
        run_mend(dir.path(), &all, None)
    };
    // Off by default; on, the language comes from CURRENT's name.
    let out = merge(&["Cargo.toml", "base", "oth"]);
    assert_eq!(out.status.code(), Some(1));
    let out = merge(&["--structured", "--json", "Cargo.toml", "base", "oth"]);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["merged"], merged);
    let resolvers: Vec<&str> = v["regions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["resolver"].as_str())
        .collect();
    assert_eq!(resolvers, vec!["structured"]);
    // A temporary CURRENT (git's merge driver) names no language: --path
    // gives the file's real one.
    let out = merge(&["--structured", "tmp1", "base", "oth"]);
    assert_eq!(out.status.code(), Some(1));
    let out = merge(&[
        "--structured",
        "--path",
        "Cargo.toml",
        "tmp1",
        "base",
        "oth",
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout), merged);
}

#[test]
fn conflict_count_is_capped_and_errors_are_255() {
    let dir = tempfile::tempdir().unwrap();
    let mk = |tag: &str| -> Vec<u8> {
        (0..130)
            .map(|i| format!("keep {i}\nkeep {i}b\nkeep {i}c\nkeep {i}d\n{tag} {i}\n"))
            .collect::<String>()
            .into_bytes()
    };
    files(
        dir.path(),
        &[
            ("cur", &mk("ours")),
            ("base", &mk("base")),
            ("oth", &mk("theirs")),
        ],
    );
    let out = run_mend(dir.path(), &["merge", "-p", "cur", "base", "oth"], None);
    assert_eq!(out.status.code(), Some(127));
    files(dir.path(), &[("bin", b"\x89PNG\0\0")]);
    let out = run_mend(dir.path(), &["merge", "cur", "base", "bin"], None);
    assert_eq!(out.status.code(), Some(255));
    assert!(String::from_utf8_lossy(&out.stderr).contains("binary"));
    let out = run_mend(dir.path(), &["merge", "cur", "base", "missing"], None);
    assert_eq!(out.status.code(), Some(255));
}

#[test]
fn diff_output_is_accepted_by_git_apply() {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q", "."]);
    files(
        dir.path(),
        &[
            ("old.txt", b"one\ntwo\nthree"),
            ("new.txt", b"one\n2\nthree\nfour\n"),
        ],
    );
    let out = run_mend(dir.path(), &["diff", "old.txt", "new.txt"], None);
    assert_eq!(out.status.code(), Some(1));
    std::fs::write(dir.path().join("p.patch"), &out.stdout).unwrap();
    let json = run_mend(dir.path(), &["diff", "--json", "old.txt", "new.txt"], None);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["hunks"][0]["lines"][1]["tag"], "-");
    git(dir.path(), &["apply", "p.patch"]);
    assert_eq!(
        std::fs::read(dir.path().join("old.txt")).unwrap(),
        std::fs::read(dir.path().join("new.txt")).unwrap()
    );
    let out = run_mend(dir.path(), &["diff", "old.txt", "old.txt"], None);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
}
