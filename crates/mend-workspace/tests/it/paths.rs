//! Confinement: at least 30 escapes, every one refused.

use mend_workspace::{Base, Change, Encoding, Error};

use crate::{put, workspace};

#[test]
fn escapes_are_refused() {
    let (dir, ws) = workspace();
    let outside = tempfile::tempdir().unwrap();
    put(outside.path(), "secret.txt", b"secret\n");
    put(dir.path(), "src/ok.rs", b"ok\n");
    std::fs::create_dir_all(dir.path().join(".git/hooks")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::symlink;
        symlink(outside.path(), dir.path().join("out_dir")).unwrap();
        symlink(
            outside.path().join("secret.txt"),
            dir.path().join("out_file"),
        )
        .unwrap();
        symlink(outside.path(), dir.path().join("src/deep_out")).unwrap();
        symlink("../../..", dir.path().join("src/up")).unwrap();
        symlink(dir.path().join(".git"), dir.path().join("git_link")).unwrap();
        symlink("/etc", dir.path().join("etc")).unwrap();
    }
    let abs_outside = outside
        .path()
        .join("secret.txt")
        .to_string_lossy()
        .into_owned();
    let mut cases: Vec<String> = [
        "../x",
        "../../x",
        "../../../etc/passwd",
        "a/../../x",
        "a/b/../../../x",
        "./../x",
        "src/../../x",
        "src/./../../x",
        "..",
        "/etc/passwd",
        "/nonexistent/x",
        "/",
        ".git/config",
        ".git/hooks/pre-commit",
        "./.git/hooks/post-checkout",
        "src/../.git/HEAD",
        ".mend/journal.json",
        "a\0b",
        "src/ok.rs\0.txt",
        "C:\\Windows\\system.ini",
        "c:/x",
        "D:x",
        "\\\\server\\share\\x",
        "//server/share/x",
        "src\\..\\..\\x",
        "",
        ".",
        "./",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    cases.push(abs_outside);
    #[cfg(unix)]
    cases.extend(
        [
            "out_dir/secret.txt",
            "out_dir/new.txt",
            "out_file",
            "src/deep_out/secret.txt",
            "src/up/etc/passwd",
            "git_link/config",
            "etc/passwd",
        ]
        .iter()
        .map(|s| (*s).to_owned()),
    );
    assert!(cases.len() >= 30, "{} cases", cases.len());
    for raw in &cases {
        match ws.resolve(raw) {
            Err(Error::PathRefused { .. }) => {}
            other => panic!("{raw:?} was not refused: {other:?}"),
        }
    }
    // Inside paths are fine, including absolute ones under the root.
    assert!(ws.resolve("src/ok.rs").is_ok());
    assert!(ws.resolve("src/./new/../ok.rs").is_ok());
    let abs_inside = dir.path().canonicalize().unwrap().join("src/ok.rs");
    assert!(ws.resolve(&abs_inside.to_string_lossy()).is_ok());
    assert_eq!(
        std::fs::read(outside.path().join("secret.txt")).unwrap(),
        b"secret\n"
    );
}

/// A folder swapped for a symlink after the plan was made is caught at
/// commit time, and nothing is written anywhere.
#[cfg(unix)]
#[test]
fn symlink_swapped_in_after_the_plan_is_refused() {
    let (dir, ws) = workspace();
    let outside = tempfile::tempdir().unwrap();
    put(dir.path(), "sub/file.txt", b"old\n");
    let snap = ws.read("sub/file.txt").unwrap();
    let hash = snap.text().unwrap().hash;
    // Swap `sub` for a link to a folder outside that has the same file.
    put(outside.path(), "file.txt", b"old\n");
    std::fs::rename(dir.path().join("sub"), dir.path().join("sub_moved")).unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("sub")).unwrap();
    let lock = ws.lock().unwrap();
    let err = ws
        .commit(
            &lock,
            &[Change::Write {
                path: "sub/file.txt".into(),
                text: "pwned\n".into(),
                encoding: Encoding::Utf8,
                base: Base::Hash(hash),
                mode_from: None,
                executable: None,
            }],
        )
        .unwrap_err();
    assert!(matches!(err, Error::PathRefused { .. }), "{err}");
    assert_eq!(
        std::fs::read(outside.path().join("file.txt")).unwrap(),
        b"old\n"
    );
}

#[test]
fn new_folders_are_created_inside_the_root() {
    let (dir, ws) = workspace();
    let lock = ws.lock().unwrap();
    ws.commit(
        &lock,
        &[Change::Write {
            path: "a/b/c/new.txt".into(),
            text: "hi\n".into(),
            encoding: Encoding::Utf8,
            base: Base::Absent,
            mode_from: None,
            executable: None,
        }],
    )
    .unwrap();
    assert_eq!(
        std::fs::read(dir.path().join("a/b/c/new.txt")).unwrap(),
        b"hi\n"
    );
}

/// A refused path names the rule it broke, so the fix a model reads is the
/// one that applies, not every rule at once.
#[test]
fn a_refused_path_names_the_rule_it_broke() {
    use mend_workspace::PathRule;
    let (dir, ws) = workspace();
    std::fs::create_dir_all(dir.path().join(".git")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink("/", dir.path().join("up")).unwrap();
    let cases: &[(&str, PathRule)] = &[
        ("", PathRule::NoFile),
        (".", PathRule::NoFile),
        ("../x.txt", PathRule::Outside),
        ("C:/x.txt", PathRule::Outside),
        ("/etc/passwd", PathRule::Outside),
        (".git/hooks/pre-commit", PathRule::Reserved),
        ("a/.mend/x", PathRule::Reserved),
        ("a\u{1b}b.txt", PathRule::Control),
        ("a\\b.txt", PathRule::Backslash),
        #[cfg(unix)]
        ("up/etc/passwd", PathRule::Link),
    ];
    let mut fixes = std::collections::BTreeSet::new();
    for (raw, want) in cases {
        match ws.resolve(raw) {
            Err(e @ Error::PathRefused { rule, .. }) => {
                assert_eq!(rule, *want, "{raw:?}: {e}");
                fixes.insert(e.fix());
            }
            other => panic!("{raw:?}: {other:?}"),
        }
    }
    // Six rules, six fixes; the one for .git speaks of nothing else.
    assert_eq!(fixes.len(), 6, "{fixes:?}");
    let git = PathRule::Reserved.fix();
    assert!(!git.contains("`..`") && !git.contains("control"), "{git}");
}
