//! The path normalizer on arbitrary strings: it never panics, and whatever
//! it accepts is a plain relative path inside the root that names neither
//! `.git` nor `.mend` in any spelling and carries no control character.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mend_workspace::{Options, Workspace};

fn workspace() -> &'static (tempfile::TempDir, Workspace) {
    static WS: OnceLock<(tempfile::TempDir, Workspace)> = OnceLock::new();
    WS.get_or_init(|| {
        let dir = tempfile::tempdir().expect("a temporary root");
        std::fs::create_dir_all(dir.path().join("src/nested")).expect("folders");
        std::fs::write(dir.path().join("src/lib.rs"), "fn main() {}\n").expect("a file");
        let ws = Workspace::open(dir.path(), Options::default()).expect("the workspace opens");
        (dir, ws)
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(raw) = std::str::from_utf8(data) else {
        return;
    };
    let (dir, ws) = workspace();
    let Ok(rel) = ws.normalize(raw) else {
        return;
    };
    assert!(!rel.is_empty());
    assert!(!rel.starts_with('/'), "{raw:?} became absolute {rel:?}");
    for part in rel.split('/') {
        assert!(
            !part.is_empty() && part != "." && part != "..",
            "{raw:?} → {rel:?}"
        );
        let folded: String = part
            .trim_end_matches(['.', ' '])
            .split(':')
            .next()
            .unwrap_or_default()
            .chars()
            .filter(|c| !matches!(c, '\u{200c}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{206a}'..='\u{206f}' | '\u{feff}'))
            .flat_map(char::to_lowercase)
            .collect();
        assert!(
            !matches!(folded.as_str(), ".git" | ".mend" | "git~1" | "mend~1"),
            "{raw:?} reaches a protected folder as {rel:?}"
        );
    }
    assert!(
        !rel.chars().any(char::is_control),
        "{raw:?} kept a control character"
    );
    let abs = ws.resolve(raw).expect("what normalizes resolves");
    let root = dir.path().canonicalize().expect("the root exists");
    assert!(
        abs.starts_with(&root),
        "{raw:?} resolved outside the root: {abs:?}"
    );
});
