//! The format-facing commands: every `--format` name, `--stream`, `parse`,
//! `prompt` and `schema`.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use crate::support::tree as root;
use crate::{mend_bin, run_mend};

#[test]
fn every_format_name_applies() {
    let cases: &[(&str, &str)] = &[
        (
            "search-replace",
            "a.txt\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n",
        ),
        (
            "str-replace",
            r#"{"path":"a.txt","old_string":"old","new_string":"new"}"#,
        ),
        (
            "anchored",
            r#"{"path":"a.txt","changes":[{"start":["old"],"content":["new"]}]}"#,
        ),
        (
            "edit-block",
            "a.txt\n««« EDIT\nold\n═══════ REPL\nnew\n»»» EDIT END\n",
        ),
        (
            "apply-patch",
            "*** Begin Patch\n*** Update File: a.txt\n-old\n+new\n*** End Patch\n",
        ),
        (
            "unified-diff",
            "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+new\n",
        ),
        ("whole-file", "a.txt\n```\nnew\n```\n"),
    ];
    for (name, input) in cases {
        for format in [*name, "auto"] {
            // In auto, a fence under a file's name replaces an existing file
            // only when it evidently holds that file (one line for another
            // does not): there it creates the file.
            let files: &[(&str, &str)] = match (*name, format) {
                ("whole-file", "auto") => &[],
                _ => &[("a.txt", "old\n")],
            };
            let dir = root(files);
            let out = run_mend(
                dir.path(),
                &["apply", "--format", format],
                Some(input.as_bytes()),
            );
            assert_eq!(
                out.status.code(),
                Some(0),
                "{name} as {format}: {}",
                String::from_utf8_lossy(&out.stdout)
            );
            assert_eq!(
                std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
                "new\n",
                "{name} as {format}"
            );
        }
    }
}

#[test]
fn stream_reports_each_block_before_the_input_ends() {
    let dir = root(&[("a.txt", "one\n"), ("b.txt", "two\n")]);
    let mut child = Command::new(mend_bin())
        .args(["apply", "--stream"])
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    stdin
        .write_all(b"a.txt\n<<<<<<< SEARCH\none\n=======\nONE\n>>>>>>> REPLACE\n")
        .unwrap();
    stdin.flush().unwrap();
    // The first block's status arrives while stdin is still open.
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert!(first.starts_with("applied  #1 a.txt:1"), "{first}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "one\n"
    );
    stdin
        .write_all(b"b.txt\n<<<<<<< SEARCH\ntwo\n=======\nTWO\n>>>>>>> REPLACE\n")
        .unwrap();
    drop(stdin);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{rest}");
    assert!(rest.contains("applied  #2 b.txt:1"), "{rest}");
    assert!(rest.contains("2 of 2 edits applied"), "{rest}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "ONE\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("b.txt")).unwrap(),
        "TWO\n"
    );
}

#[test]
fn stream_still_writes_all_or_nothing() {
    let dir = root(&[("a.txt", "one\n")]);
    let input = "a.txt\n<<<<<<< SEARCH\none\n=======\nONE\n>>>>>>> REPLACE\na.txt\n<<<<<<< SEARCH\nmissing\n=======\nx\n>>>>>>> REPLACE\n";
    let out = run_mend(dir.path(), &["apply", "--stream"], Some(input.as_bytes()));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "one\n"
    );
}

#[test]
fn parse_prints_edits_and_touches_nothing() {
    let dir = root(&[("a.txt", "old\n")]);
    let input =
        "a.txt\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n```bash\nmake test\n```\n";
    let out = run_mend(dir.path(), &["parse"], Some(input.as_bytes()));
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["format"], "search-replace");
    assert_eq!(v["entries"][0]["type"], "edit");
    assert_eq!(v["entries"][0]["path"], "a.txt");
    assert_eq!(v["shell_suggestions"][0]["command"], "make test");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "old\n"
    );
    let out = run_mend(dir.path(), &["parse"], Some(b"nothing here"));
    assert_eq!(out.status.code(), Some(1));
    let out = run_mend(dir.path(), &["parse"], Some(b"a.txt\n<<<<<<< SEARCH\nx\n"));
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn prompt_and_schema() {
    let dir = root::<&str>(&[]);
    for f in [
        "search-replace",
        "str-replace",
        "anchored",
        "edit-block",
        "apply-patch",
        "unified-diff",
        "whole-file",
    ] {
        let out = run_mend(dir.path(), &["prompt", f], None);
        assert_eq!(out.status.code(), Some(0), "{f}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("exactly"), "{f}: {text}");
        assert!(text.contains("line numbers"), "{f}");
    }
    let out = run_mend(dir.path(), &["schema"], None);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["str-replace"].is_object() && v["anchored"].is_object());
    let out = run_mend(dir.path(), &["schema", "apply-patch"], None);
    assert_eq!(out.status.code(), Some(2));
}

#[cfg(unix)]
#[test]
fn diff_mode_change_sets_executable() {
    use std::os::unix::fs::PermissionsExt;
    let dir = root(&[("run.sh", "echo hi\n")]);
    let input = "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n";
    let out = run_mend(dir.path(), &["apply"], Some(input.as_bytes()));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let mode = std::fs::metadata(dir.path().join("run.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o111, 0o111);
}
