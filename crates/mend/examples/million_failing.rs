//! The memory figure of a response whose edits all fail: builds a
//! response of a million SEARCH/REPLACE blocks that match nothing (76 MB)
//! and prints the peak resident memory of `mend apply --dry-run`, plain
//! and with `--json`, as `/usr/bin/time` measures it.
//!
//! ```text
//! cargo build --release -p mend
//! cargo run --release -p mend --example million_failing [EDITS]
//! ```
//!
//! The `mend` measured is the one built beside this example (the same
//! profile's `target/*/mend`).

#![expect(clippy::print_stdout, reason = "an example that prints its figures")]

use std::path::PathBuf;
use std::process::{Command, Stdio};

fn main() {
    let edits: usize = std::env::args()
        .nth(1)
        .map_or(1_000_000, |n| n.parse().expect("EDITS is a number"));
    let mend = mend_binary();
    let dir = tempfile::tempdir().expect("a temporary folder");
    let root = dir.path().join("root");
    std::fs::create_dir(&root).expect("the root");
    std::fs::write(root.join("f.py"), "x = 1\n").expect("the file");
    let response = dir.path().join("response");
    let mut text = String::with_capacity(edits * 80);
    for i in 0..edits {
        text.push_str(&format!(
            "f.py\n<<<<<<< SEARCH\nmissing_{i}()\n=======\nfound_{i}()\n>>>>>>> REPLACE\n"
        ));
    }
    std::fs::write(&response, &text).expect("the response");
    println!(
        "{edits} failing edits ({:.0} MB of input), {}",
        text.len() as f64 / 1e6,
        mend.display()
    );
    drop(text);
    for extra in [&[][..], &["--json"][..]] {
        let started = std::time::Instant::now();
        let out = Command::new("/usr/bin/time")
            .args(["-f", "%M"])
            .arg(&mend)
            .args(["apply", "--dry-run", "--root"])
            .arg(&root)
            .args(extra)
            .arg(&response)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .expect("/usr/bin/time (GNU time) runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let kb: u64 = stderr
            .lines()
            .last()
            .and_then(|l| l.trim().parse().ok())
            .unwrap_or_else(|| panic!("no peak in /usr/bin/time's output: {stderr}"));
        println!(
            "mend apply --dry-run {:<7} peak {:>6.1} MB, {:.1} s",
            extra.join(" "),
            kb as f64 / 1024.0,
            started.elapsed().as_secs_f64()
        );
    }
}

/// `mend` built beside this example.
fn mend_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("the example's path");
    let dir = exe
        .parent()
        .and_then(|examples| examples.parent())
        .expect("target/<profile>/examples");
    let mend = dir.join("mend");
    assert!(
        mend.exists(),
        "{} is missing: run `cargo build --release -p mend` first",
        mend.display()
    );
    mend
}
