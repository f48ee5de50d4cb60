//! Hostile inputs: responses and files that once made mend's cost explode.
//! Each must finish well within a generous bound and print a bounded
//! report. Sizes are the ones the bug reports named in a debug build, and
//! ten times larger in a release build (`.ci/run` runs both).
//!
//! The real timings come from `cargo bench -p mend --bench hostile`; the
//! release run is `cargo test --release -p mend --test it hostile::`.

use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How much larger than the reported sizes this build runs.
fn scale() -> usize {
    if cfg!(debug_assertions) { 1 } else { 10 }
}

/// Nothing here may take this long, even in a debug build on a slow
/// machine: the reports that motivated these tests took minutes.
const BOUND: Duration = Duration::from_secs(60);

use mend_test_support::edits::{
    code_line, code_lines as lines, foreign_search, near_miss_search, search_replace,
};

struct Run {
    code: i32,
    stdout: Vec<u8>,
    took: Duration,
}

/// Runs `mend apply ARGS` in a root holding `files`, feeding `input` on
/// standard input, killing it past [`BOUND`].
fn apply(files: &[(&str, &str)], args: &[&str], input: &[u8]) -> Run {
    let dir = tempfile::tempdir().unwrap();
    for (p, c) in files {
        std::fs::write(dir.path().join(p), c).unwrap();
    }
    let mut cmd = Command::new(crate::mend_bin());
    cmd.arg("apply")
        .arg("--root")
        .arg(dir.path())
        .args(args)
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let start = Instant::now();
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = wait_bounded(child, start);
    feeder.join().unwrap();
    drop(dir);
    out
}

fn wait_bounded(mut child: std::process::Child, start: Instant) -> Run {
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut { stdout }, &mut buf).unwrap();
        buf
    });
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Run {
                code: status.code().unwrap_or(-1),
                stdout: reader.join().unwrap(),
                took: start.elapsed(),
            };
        }
        if start.elapsed() > BOUND {
            let _ = child.kill();
            panic!("mend ran past {BOUND:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn assert_bounded(run: &Run, max_output: usize) {
    assert!(run.took < BOUND, "took {:?}", run.took);
    assert!(
        run.stdout.len() <= max_output,
        "printed {} bytes",
        run.stdout.len()
    );
}

#[test]
fn whole_file_write_of_100k_lines() {
    let n = 100_000 * scale();
    let response = format!("big.py\n```python\n{}```\n", lines(n));
    // At ten times the scale the file passes the default size limit, which
    // applies to what mend writes too. Over a file it does not evidently
    // hold, the write must be asked for.
    let run = apply(
        &[("big.py", "x = 1\n")],
        &["--max-bytes", "1000000000", "--format", "whole-file"],
        response.as_bytes(),
    );
    assert_eq!(run.code, 0);
    assert_bounded(&run, 10_000);
}

#[test]
fn whole_file_judged_against_100k_lines() {
    // In auto, the fence is judged against the file: an excerpt search and
    // a covering test over every line, bounded however the lines repeat.
    let n = 100_000 * scale();
    let file = format!("import os\n{}", lines(n));
    let rewrite = format!("big.py\n```python\nimport os\n{}main()\n```\n", lines(n));
    let run = apply(
        &[("big.py", &file)],
        &["--max-bytes", "1000000000"],
        rewrite.as_bytes(),
    );
    assert_eq!(run.code, 0, "{}", String::from_utf8_lossy(&run.stdout));
    assert_bounded(&run, 10_000);
    let same = "    same = 1\n".repeat(n);
    let snippet = format!(
        "big.py\n```python\n{}    other = 2\n```\n",
        "    same = 1\n".repeat(n / 2)
    );
    let run = apply(
        &[("big.py", &same)],
        &["--max-bytes", "1000000000"],
        snippet.as_bytes(),
    );
    assert_eq!(run.code, 1, "{}", String::from_utf8_lossy(&run.stdout));
    assert_bounded(&run, 20_000);
}

#[test]
fn fifty_thousand_small_blocks() {
    // Ten times larger means ten such files: one file that size would pass
    // the 20 MB file limit.
    let per_file = 50_000;
    let file = lines(per_file);
    let names: Vec<String> = (0..scale()).map(|k| format!("f{k}.py")).collect();
    let mut response = String::new();
    for name in &names {
        for i in 0..per_file {
            let l = code_line(i);
            response.push_str(&format!(
                "{name}\n<<<<<<< SEARCH\n{l}\n=======\n{l}  # edited\n>>>>>>> REPLACE\n"
            ));
        }
    }
    let files: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), file.as_str())).collect();
    let run = apply(&files, &[], response.as_bytes());
    assert_eq!(run.code, 0);
    // The per-edit lines are capped; the rest are counted.
    assert_bounded(&run, 200_000);
    assert!(String::from_utf8_lossy(&run.stdout).contains("more edits not listed"));
}

/// A long search that shares two of every three lines with the file, so
/// the similarity pass has thousands of anchored places to weigh; the
/// file holds its lines twice, so every place it nearly matches has a
/// twin. Whatever the passes find, nothing may be taken: the edit is
/// refused (exit 1) with `kind`, and nothing is written.
fn near_miss(search_lines: usize, kind: &str) {
    let file_lines = 2_000 * scale();
    let file = lines(file_lines).repeat(2);
    let response = search_replace("f.py", &near_miss_search(search_lines).join("\n"), "x = 1");
    let run = apply(&[("f.py", &file)], &["--json"], response.as_bytes());
    // The JSON report shows the place it came closest to, as long as the
    // search: bounded by the input's size, never by the file's.
    assert_bounded(&run, 200_000.max(2 * response.len()));
    assert_eq!(run.code, 1, "{}", String::from_utf8_lossy(&run.stdout));
    let report: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(
        (&report["ok"], &report["written"]),
        (&serde_json::json!(false), &serde_json::json!(false))
    );
    let failure = &report["edits"][0]["failure"];
    assert_eq!(failure["kind"], kind, "{failure}");
}

#[test]
fn a_400_line_search_that_does_not_match() {
    // Weighed in full, it nearly matches two places, twins. Ten times
    // larger (a release build) it passes the similarity pass's budget,
    // and is not found.
    let kind = if scale() == 1 {
        "ambiguous"
    } else {
        "not_found"
    };
    near_miss(400 * scale(), kind);
}

#[test]
fn a_1600_line_search_that_does_not_match() {
    near_miss(1600 * scale(), "not_found");
}

#[test]
fn streaming_2000_small_edits_to_one_file() {
    let n = 2_000 * scale();
    let file = lines(2 * n);
    let mut response = String::new();
    for i in (0..2 * n).step_by(2) {
        let l = code_line(i);
        response.push_str(&format!(
            "f.py\n<<<<<<< SEARCH\n{l}\n=======\n{l}  # e\n>>>>>>> REPLACE\n"
        ));
    }
    let run = apply(
        &[("f.py", &file)],
        &["--stream", "--dry-run"],
        response.as_bytes(),
    );
    assert_eq!(run.code, 0);
}

#[test]
fn streaming_a_failing_block_then_more_edits() {
    let file = lines(4_000 * scale());
    let mut response = search_replace("f.py", &foreign_search(1000..1150).join("\n"), "x = 1");
    for i in 2000..2000 + 30 * scale() {
        let l = code_line(i);
        response.push_str(&format!(
            "f.py\n<<<<<<< SEARCH\n{l}\n=======\n{l}  # e\n>>>>>>> REPLACE\n"
        ));
    }
    let run = apply(&[("f.py", &file)], &["--stream"], response.as_bytes());
    assert_eq!(run.code, 1);
    assert_bounded(&run, 200_000);
}

#[test]
fn str_replace_of_a_25k_line_region() {
    let n = 25_000 * scale();
    let file = lines(n + 2_000);
    let region: String = file
        .lines()
        .skip(1_000)
        .take(n)
        .map(|l| format!("{l}\n"))
        .collect();
    let response = serde_json::json!({
        "path": "f.py",
        "old_string": region,
        "new_string": "pass\n",
    })
    .to_string();
    let run = apply(&[("f.py", &file)], &[], response.as_bytes());
    assert_eq!(run.code, 0);
    assert_bounded(&run, 10_000);
}

#[test]
fn a_hundred_thousand_failing_edits() {
    let n = 100_000 * scale();
    let mut response = String::with_capacity(n * 70);
    for i in 0..n {
        response.push_str(&format!(
            "f.py\n<<<<<<< SEARCH\nmissing_{i}()\n=======\nfound_{i}()\n>>>>>>> REPLACE\n"
        ));
    }
    let run = apply(&[("f.py", "x = 1\n")], &[], response.as_bytes());
    assert_eq!(run.code, 1);
    // The retry context shows 64 KiB of failures and counts the rest.
    assert_bounded(&run, 300_000);
    let text = String::from_utf8_lossy(&run.stdout);
    assert!(
        text.contains("more failed edits not shown"),
        "{}",
        &text[text.len() - 500..]
    );
}

#[test]
fn the_json_report_is_bounded_too() {
    let n = 20_000;
    let mut response = String::new();
    for i in 0..n {
        response.push_str(&format!(
            "f.py\n<<<<<<< SEARCH\nmissing_{i}()\n=======\nfound_{i}()\n>>>>>>> REPLACE\n"
        ));
    }
    let run = apply(&[("f.py", "x = 1\n")], &["--json"], response.as_bytes());
    assert_eq!(run.code, 1);
    assert_bounded(&run, 1_000_000);
    let v: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(v["edits"].as_array().unwrap().len(), 500);
    assert_eq!(v["omitted"]["edits"], n - 500);
    assert_eq!(v["omitted"]["failed"]["not_found"], n - 500);
}

/// Edits to two files, interleaved, that each planner finishes in its own
/// order: the report still lists the first 500 in input order and counts
/// the rest exactly, by kind.
#[test]
fn failing_edits_to_two_files_are_listed_in_order_and_counted() {
    let n = 3_000;
    let mut response = String::new();
    for i in 0..n {
        let (path, search) = match i % 3 {
            0 => ("a.py", "a = 1".to_owned()),
            1 => ("b.py", format!("missing_{i}()")),
            _ => ("a.py", format!("missing_{i}()")),
        };
        response.push_str(&format!(
            "{path}\n<<<<<<< SEARCH\n{search}\n=======\n{search}  # {i}\n>>>>>>> REPLACE\n"
        ));
    }
    let files = [("a.py", "a = 1\n"), ("b.py", "b = 2\n")];
    let run = apply(&files, &["--json"], response.as_bytes());
    assert_eq!(run.code, 1);
    let v: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    let listed: Vec<u64> = v["edits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["index"].as_u64().unwrap())
        .collect();
    assert_eq!(listed, (0..500).collect::<Vec<u64>>());
    assert_eq!(v["requested"], n);
    // Every `a = 1` edit after the first overlaps it; the first fails with them.
    assert_eq!(v["applied"], 0);
    assert_eq!(v["omitted"]["edits"], n - 500);
    let text =
        String::from_utf8_lossy(&apply(&files, &[], response.as_bytes()).stdout).into_owned();
    assert!(
        text.contains("3000 of 3000 edits could not be applied"),
        "{}",
        &text[..300]
    );
    let tail = text.lines().rev().find(|l| l.starts_with("… and")).unwrap();
    assert_eq!(
        tail,
        "… and 2500 more edits not listed (0 applied, 1667 not found, 833 overlap)"
    );
}
