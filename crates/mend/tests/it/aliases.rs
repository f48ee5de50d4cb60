//! One file under two names (a link to it, a link to its folder): a change
//! set that writes it under both is refused before anything is written,
//! whether applied at once or accepted from a pending session.

#![cfg(unix)]

use crate::run_mend;

/// A SEARCH/REPLACE block and a blank line after it.
fn sr(path: &str, search: &str, replace: &str) -> String {
    crate::search_replace(path, search, replace) + "\n"
}

/// `real.txt` with `link.txt` pointing to it, `d1/a.txt` with `d2`
/// pointing to `d1`.
fn linked() -> tempfile::TempDir {
    let dir = crate::tree(&[("real.txt", "one\ntwo\n"), ("d1/a.txt", "one\ntwo\n")]);
    std::os::unix::fs::symlink("real.txt", dir.path().join("link.txt")).unwrap();
    std::os::unix::fs::symlink("d1", dir.path().join("d2")).unwrap();
    dir
}

fn refused(out: &std::process::Output, first: &str, second: &str) {
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{said}");
    for s in [first, second, "are one file", "under one name"] {
        assert!(said.contains(s), "{s}: {said}");
    }
}

fn untouched(d: &std::path::Path) {
    for f in ["real.txt", "d1/a.txt"] {
        assert_eq!(std::fs::read(d.join(f)).unwrap(), b"one\ntwo\n", "{f}");
    }
}

#[test]
fn apply_refuses_one_file_under_two_names() {
    for (a, b) in [("real.txt", "link.txt"), ("d1/a.txt", "d2/a.txt")] {
        let dir = linked();
        let edit = sr(a, "one", "ONE") + &sr(b, "two", "TWO");
        let out = run_mend(dir.path(), &["apply"], Some(edit.as_bytes()));
        refused(&out, a, b);
        untouched(dir.path());
    }
}

#[test]
fn pending_accept_refuses_one_file_under_two_names() {
    for (a, b) in [("real.txt", "link.txt"), ("d1/a.txt", "d2/a.txt")] {
        // In one response, and across two proposals.
        for responses in [
            vec![sr(a, "one", "ONE") + &sr(b, "two", "TWO")],
            vec![sr(a, "one", "ONE"), sr(b, "two", "TWO")],
        ] {
            let dir = linked();
            let d = dir.path();
            for r in &responses {
                let out = run_mend(d, &["apply", "--pending"], Some(r.as_bytes()));
                assert_eq!(out.status.code(), Some(0), "{out:?}");
            }
            let out = run_mend(d, &["pending", "accept"], None);
            refused(&out, a, b);
            untouched(d);
            // Accepting under one name goes through.
            let out = run_mend(d, &["pending", "accept", a], None);
            assert_eq!(out.status.code(), Some(0), "{out:?}");
            assert_eq!(std::fs::read(d.join(a)).unwrap(), b"ONE\ntwo\n");
        }
    }
}

/// A hard link whose other name is under `.git` or outside the root: an
/// edit (apply, and a turn's hunk reject) reaches only the named file,
/// never the hook or the outside file.
#[test]
fn a_hard_link_into_git_or_outside_is_never_written_through() {
    let dir = crate::tree(&[("h.sh", "#!/bin/sh\necho hi\n")]);
    let d = dir.path();
    std::fs::create_dir_all(d.join(".git/hooks")).unwrap();
    let hook = d.join(".git/hooks/pre-commit");
    std::fs::hard_link(d.join("h.sh"), &hook).unwrap();
    let outside = tempfile::tempdir().unwrap();
    let copy = outside.path().join("kept.sh");
    std::fs::hard_link(d.join("h.sh"), &copy).unwrap();
    let edit = sr("h.sh", "echo hi", "echo PWNED");
    let out = run_mend(d, &["apply"], Some(edit.as_bytes()));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(
        std::fs::read_to_string(d.join("h.sh")).unwrap(),
        "#!/bin/sh\necho PWNED\n"
    );
    for other in [&hook, &copy] {
        assert_eq!(
            std::fs::read_to_string(other).unwrap(),
            "#!/bin/sh\necho hi\n",
            "{}",
            other.display()
        );
    }
}
