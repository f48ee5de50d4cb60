//! Turns at the edges the tester found: a version given with a
//! whole-file action, links that point outside the root, names that are
//! not UTF-8 or that a model's paths may not use, large files, files that
//! become ignored, and repositories made during the turn.

use std::path::Path;

use mend_checkpoint::turn::{BeginOptions, Selection, Turns};
use mend_test_support::put;

fn begin(dir: &Path) -> Turns {
    let turns = Turns::open(dir).unwrap();
    turns.begin(&BeginOptions::default(), &mut |_| {}).unwrap();
    turns
}

fn whole(path: &str, seen: Option<String>) -> Selection {
    Selection {
        paths: vec![path.into()],
        hunks: Vec::new(),
        seen,
    }
}

/// A whole-file reject or accept given the version `status` showed is
/// refused, writing nothing, once the file changed since; at the version
/// it is now, it goes ahead.
#[test]
fn a_whole_file_action_checks_the_version_it_was_given() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let base: String = (1..=50).map(|i| format!("{i}\n")).collect();
    put(d, "f", &base);
    let turns = begin(d);
    put(d, "f", base.replace("30\n", "THIRTY\n"));
    let shown = turns.status(false).unwrap().files[0].version.clone();
    let person = format!("{}person\n", base.replace("30\n", "THIRTY\n"));
    put(d, "f", &person);
    let checkpoints = turns.checkpoints().list().unwrap().len();
    for reject in [true, false] {
        let sel = whole("f", Some(shown.clone()));
        let e = if reject {
            turns.reject(&sel).unwrap_err()
        } else {
            turns.accept(&sel).unwrap_err()
        };
        assert!(
            e.is_refusal() && e.to_string().contains("changed since"),
            "{e}"
        );
        assert_eq!(std::fs::read_to_string(d.join("f")).unwrap(), person);
        assert_eq!(turns.checkpoints().list().unwrap().len(), checkpoints);
        assert_eq!(turns.status(false).unwrap().files.len(), 1);
    }
    let now = turns.status(false).unwrap().files[0].version.clone();
    turns.reject(&whole("f", Some(now))).unwrap();
    assert_eq!(std::fs::read_to_string(d.join("f")).unwrap(), base);
}
