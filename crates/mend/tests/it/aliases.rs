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
