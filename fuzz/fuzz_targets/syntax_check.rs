//! The syntax check on arbitrary bytes in every language: no grammar may
//! crash or hang mend (the Bash grammar's scanner once read outside a
//! table), an unchanged file never has a finding, every finding's
//! position is in the text, and the check from the old text's kept base
//! (a Python outline: only the edited statements parsed; else an
//! incremental reparse) gives exactly the from-scratch check.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mend_syntax::{Check, base_of, check, check_from};

const PATHS: &[&str] = &[
    "a.py", "a.js", "a.ts", "a.tsx", "a.rs", "a.go", "a.java", "a.c", "a.cpp", "a.cs", "a.rb",
    "a.php", "a.sh", "a.json", "a.toml", "a.yaml", "a.html", "a.css", "a.lua",
];

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let path = PATHS[usize::from(which) % PATHS.len()];
    let text = String::from_utf8_lossy(rest);
    let (old, new) = text.split_once('\u{1}').unwrap_or((&text, &text));
    assert!(!matches!(check(path, Some(old), old, &[]), Check::Findings(_)));
    let scratch = check(path, Some(old), new, &[]);
    let base = base_of(path, old);
    let (kept, _) = check_from(path, Some(old), base.as_ref(), new, &[]);
    assert_eq!(kept, scratch, "the check from the kept base differs");
    if let Check::Findings(f) = scratch {
        let lines = new.lines().count() + 1;
        for finding in f {
            assert!(finding.line >= 1 && finding.line <= lines, "{finding:?}");
        }
    }
});
