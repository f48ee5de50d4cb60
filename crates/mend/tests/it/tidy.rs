//! Checks on the repository's own files that no compiler makes.

use std::path::Path;

/// The pure crates each ban the filesystem, processes, the environment,
/// the clock and the network in their own `clippy.toml` (clippy reads one
/// per crate). The copies must ban the same calls: a ban dropped from one
/// would let that crate's purity slip unnoticed.
#[test]
fn pure_crates_ban_the_same_calls() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let pure = ["mend-core", "mend-merge", "mend-sync", "mend-syntax"];
    let bans = |name: &str| -> String {
        let text = std::fs::read_to_string(root.join("crates").join(name).join("clippy.toml"))
            .unwrap_or_else(|e| panic!("{name}/clippy.toml: {e}"));
        text.lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| l.replace(name, "CRATE"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let first = bans(pure[0]);
    assert!(first.contains("std::fs::read"), "{first}");
    for name in &pure[1..] {
        assert_eq!(
            bans(name),
            first,
            "{name}/clippy.toml bans other calls than mend-core's"
        );
    }
}
