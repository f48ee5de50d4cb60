//! One `mend apply` process making one edit to a 1,000-line file, as an
//! agent's call costs it: the dry run (parse, read, locate, plan, check the
//! change set) beside the real run, which adds the lock, the signed
//! journal, the staged write and its fsyncs (`cargo bench -p mend --bench
//! apply`).

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};

fn main() {
    divan::main();
}

struct Root {
    dir: tempfile::TempDir,
}

impl Root {
    fn new() -> Root {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("root")).unwrap();
        std::fs::create_dir(dir.path().join("state")).unwrap();
        let text: String = (0..1000).map(|i| format!("value_{i} = {i}\n")).collect();
        std::fs::write(dir.path().join("root/f.py"), text).unwrap();
        Root { dir }
    }

    fn apply(&self, from: &str, to: &str, extra: &[&str]) {
        let edit = format!("f.py\n<<<<<<< SEARCH\n{from}\n=======\n{to}\n>>>>>>> REPLACE\n");
        let path: &Path = self.dir.path();
        let mut child = Command::new(env!("CARGO_BIN_EXE_mend"))
            .arg("apply")
            .arg("--root")
            .arg(path.join("root"))
            .args(extra)
            .env("MEND_STATE_DIR", path.join("state"))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), edit.as_bytes()).unwrap();
        assert!(child.wait().unwrap().success());
    }
}

#[divan::bench(sample_count = 50)]
fn dry_run(b: divan::Bencher<'_, '_>) {
    let root = Root::new();
    b.bench(|| root.apply("value_500 = 500", "value_500 = 501", &["--dry-run"]));
}

#[divan::bench(sample_count = 50)]
fn real_run(b: divan::Bencher<'_, '_>) {
    let root = Root::new();
    // Each run undoes the last, so every one writes.
    let flip = AtomicBool::new(false);
    b.bench(|| {
        let (from, to) = if flip.fetch_xor(true, Ordering::Relaxed) {
            ("value_500 = 501", "value_500 = 500")
        } else {
            ("value_500 = 500", "value_500 = 501")
        };
        root.apply(from, to, &[]);
    });
}
