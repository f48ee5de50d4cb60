//! Fixture scenarios: `tests/fixtures/<case>/` holds `input/` (a tree),
//! `edit.txt` or `edit.json` (the model's response), and optionally
//! `expected/` (the tree after `mend apply`; when absent the tree must be
//! unchanged, byte for byte), `args` (extra flags, one per line), `exit`
//! (expected exit code; default 0 with `expected/`, 1 without), `stdout`
//! (lines that must appear in the output) and `not_stdout` (lines that
//! must not).
//!
//! Each folder is its own test, so `cargo test -p mend --test cases
//! fixtures::NAME` runs one case and a failure names its folder.

use std::path::Path;

use libtest_mimic::{Failed, Trial};
use mend_test_support::{copy_tree, read_tree, run_mend};

fn check_case(dir: &Path) -> Result<(), String> {
    let name = dir.file_name().unwrap().to_string_lossy().to_string();
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("root");
    std::fs::create_dir_all(&root).unwrap();
    copy_tree(&dir.join("input"), &root);
    let before = read_tree(&root);
    let edit = ["edit.txt", "edit.json"]
        .iter()
        .map(|f| dir.join(f))
        .find(|p| p.exists())
        .ok_or_else(|| format!("{name}: no edit.txt or edit.json"))?;
    let mut args: Vec<String> = vec![
        "apply".into(),
        "--root".into(),
        root.to_string_lossy().into(),
    ];
    if let Ok(extra) = std::fs::read_to_string(dir.join("args")) {
        args.extend(extra.lines().filter(|l| !l.is_empty()).map(str::to_owned));
    }
    args.push(edit.to_string_lossy().into());
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run_mend(work.path(), &argv, None);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let expected_dir = dir.join("expected");
    let want_exit: i32 = match std::fs::read_to_string(dir.join("exit")) {
        Ok(s) => s.trim().parse().unwrap(),
        Err(_) if expected_dir.exists() => 0,
        Err(_) => 1,
    };
    let got_exit = out.status.code().unwrap_or(-1);
    let ctx = || format!("\n--- stdout\n{stdout}\n--- stderr\n{stderr}");
    if got_exit != want_exit {
        return Err(format!(
            "{name}: exit {got_exit}, want {want_exit}{}",
            ctx()
        ));
    }
    if let Ok(lines) = std::fs::read_to_string(dir.join("stdout")) {
        for line in lines.lines().filter(|l| !l.is_empty()) {
            if !stdout.contains(line) {
                return Err(format!("{name}: stdout lacks {line:?}{}", ctx()));
            }
        }
    }
    if let Ok(lines) = std::fs::read_to_string(dir.join("not_stdout")) {
        for line in lines.lines().filter(|l| !l.is_empty()) {
            if stdout.contains(line) {
                return Err(format!("{name}: stdout has {line:?}{}", ctx()));
            }
        }
    }
    let after = read_tree(&root);
    let want = if expected_dir.exists() {
        read_tree(&expected_dir)
    } else {
        before
    };
    if after != want {
        let show = |t: &[(String, Vec<u8>)]| {
            t.iter()
                .map(|(p, b)| format!("{p}: {:?}", String::from_utf8_lossy(b)))
                .collect::<Vec<_>>()
                .join("\n")
        };
        return Err(format!(
            "{name}: tree differs\n--- got\n{}\n--- want\n{}{}",
            show(&after),
            show(&want),
            ctx()
        ));
    }
    Ok(())
}

/// One test per case folder, named `fixtures::NAME`.
pub fn trials() -> Vec<Trial> {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut dirs: Vec<_> = std::fs::read_dir(&base)
        .expect("tests/fixtures")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs.into_iter()
        .map(|dir| {
            let name = dir.file_name().unwrap().to_string_lossy().into_owned();
            let name = format!("fixtures::{name}");
            Trial::test(name, move || check_case(&dir).map_err(Failed::from))
        })
        .collect()
}
