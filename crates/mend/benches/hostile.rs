//! The hostile inputs of `tests/it/hostile.rs`, at the sizes the bug reports
//! named, timed as a user sees them: one `mend apply --dry-run` process
//! each (`cargo bench -p mend --bench hostile`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn main() {
    divan::main();
}

use mend_test_support::edits::{
    code_line, code_lines as lines, foreign_search, near_miss_search, search_replace as block,
};

/// A root with `files` and the response saved beside it.
struct Case {
    dir: tempfile::TempDir,
    response: PathBuf,
}

fn case(files: &[(&str, String)], response: &str) -> Case {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    for (p, c) in files {
        std::fs::write(root.join(p), c).unwrap();
    }
    let path = dir.path().join("response");
    std::fs::write(&path, response).unwrap();
    Case {
        dir,
        response: path,
    }
}

fn run(c: &Case, extra: &[&str]) {
    let root: &Path = &c.dir.path().join("root");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mend"));
    cmd.arg("apply")
        .arg("--root")
        .arg(root)
        .arg("--dry-run")
        .args(extra);
    if extra.contains(&"--stream") {
        cmd.stdin(std::fs::File::open(&c.response).unwrap());
    } else {
        cmd.arg(&c.response);
    }
    let status = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.code().is_some_and(|c| c <= 1));
}

#[divan::bench(sample_count = 10)]
fn whole_file_write_of_100k_lines(b: divan::Bencher<'_, '_>) {
    let c = case(
        &[("big.py", "x = 1\n".into())],
        &format!("big.py\n```python\n{}```\n", lines(100_000)),
    );
    b.bench(|| run(&c, &[]));
}

#[divan::bench(sample_count = 10)]
fn fifty_thousand_small_blocks(b: divan::Bencher<'_, '_>) {
    let response: String = (0..50_000)
        .map(|i| {
            let l = code_line(i);
            block("f.py", &l, &format!("{l}  # edited"))
        })
        .collect();
    let c = case(&[("f.py", lines(50_000))], &response);
    b.bench(|| run(&c, &[]));
}

fn near_miss(n: usize) -> Case {
    let search = near_miss_search(n);
    case(
        &[("f.py", lines(4_000))],
        &block("f.py", &search.join("\n"), "x = 1"),
    )
}

/// Searches that share two of every three lines with the file.
#[divan::bench(sample_count = 10, args = [400, 1600])]
fn long_search_that_does_not_match(b: divan::Bencher<'_, '_>, n: usize) {
    let c = near_miss(n);
    b.bench(|| run(&c, &[]));
}

/// Searches that share no line with the file.
#[divan::bench(sample_count = 10, args = [400, 1600])]
fn long_search_with_no_line_in_the_file(b: divan::Bencher<'_, '_>, n: usize) {
    let search = foreign_search(1000..1000 + n);
    let c = case(
        &[("f.py", lines(4_000))],
        &block("f.py", &search.join("\n"), "x = 1"),
    );
    b.bench(|| run(&c, &[]));
}

#[divan::bench(sample_count = 10)]
fn stream_of_2000_small_edits(b: divan::Bencher<'_, '_>) {
    let response: String = (0..4_000)
        .step_by(2)
        .map(|i| {
            let l = code_line(i);
            block("f.py", &l, &format!("{l}  # e"))
        })
        .collect();
    let c = case(&[("f.py", lines(4_000))], &response);
    b.bench(|| run(&c, &["--stream"]));
}

#[divan::bench(sample_count = 10)]
fn stream_with_a_failing_150_line_block(b: divan::Bencher<'_, '_>) {
    let bad = foreign_search(1000..1150);
    let mut response = block("f.py", &bad.join("\n"), "x = 1");
    for i in 2000..2030 {
        let l = code_line(i);
        response.push_str(&block("f.py", &l, &format!("{l}  # e")));
    }
    let c = case(&[("f.py", lines(4_000))], &response);
    b.bench(|| run(&c, &["--stream"]));
}

#[divan::bench(sample_count = 10, args = [25_000, 100_000])]
fn str_replace_of_a_large_region(b: divan::Bencher<'_, '_>, n: usize) {
    let file = lines(n + 2_000);
    let region: String = file
        .lines()
        .skip(1_000)
        .take(n)
        .map(|l| format!("{l}\n"))
        .collect();
    let response = format!(
        "{{\"path\": \"f.py\", \"old_string\": {}, \"new_string\": \"pass\\n\"}}",
        serde_json::to_string(&region).unwrap()
    );
    let c = case(&[("f.py", file)], &response);
    b.bench(|| run(&c, &[]));
}

#[divan::bench(sample_count = 10)]
fn a_hundred_thousand_failing_edits(b: divan::Bencher<'_, '_>) {
    let response: String = (0..100_000)
        .map(|i| block("f.py", &format!("missing_{i}()"), &format!("found_{i}()")))
        .collect();
    let c = case(&[("f.py", "x = 1\n".into())], &response);
    b.bench(|| run(&c, &[]));
}
