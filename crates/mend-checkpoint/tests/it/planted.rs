//! State an agent could write to hide its work: a planted or altered
//! `.mend/turn.json`, a `.mend` made by something else in a folder
//! without git. Each is refused, naming what clears it; none is read.

use std::path::Path;

use mend_checkpoint::Checkpoints;
use mend_checkpoint::turn::{BeginOptions, Turns};
use mend_test_support::put;

/// A turn begun over `f.txt`, which an agent then changed.
fn changed_turn(d: &Path) -> Turns {
    put(d, "f.txt", "before\n");
    let turns = Turns::open(d).unwrap();
    turns.begin(&BeginOptions::default(), &mut |_| {}).unwrap();
    put(d, "f.txt", "the agent's change\n");
    let files = turns.status(false).unwrap().files;
    assert_eq!(files.len(), 1, "the change shows before the attack");
    turns
}

/// The turn's state with `f.txt` marked as reviewed at the agent's
/// content: what would hide the change from `status` and `diff`.
fn hiding_state(d: &Path) -> serde_json::Value {
    let bytes = std::fs::read(d.join(".mend/turn.json")).unwrap();
    // Sealed by mend (a first line and the seal), or plain JSON as
    // earlier versions wrote it.
    let body = match bytes.starts_with(b"mend sealed") {
        true => bytes.splitn(3, |&b| b == b'\n').nth(2).unwrap(),
        false => &bytes[..],
    };
    let mut state: serde_json::Value = serde_json::from_slice(body).unwrap();
    let blob = git2::Oid::hash_object(git2::ObjectType::Blob, b"the agent's change\n").unwrap();
    state["accepted"]["f.txt"] = serde_json::json!({ "blob": blob.to_string(), "mode": 0o100644 });
    state
}

fn refused(turns: &Turns) {
    for e in [
        turns.status(false).unwrap_err(),
        turns.diff(&[]).unwrap_err(),
    ] {
        assert!(
            matches!(e, mend_checkpoint::Error::TurnCorrupt { .. }),
            "{e}"
        );
        assert!(e.is_refusal(), "{e}");
        let msg = e.to_string();
        assert!(msg.contains(".mend/turn.json"), "{msg}");
        assert!(msg.contains("mend turn end"), "{msg}");
    }
}

/// A `turn.json` written by something other than mend (as an earlier
/// version of mend wrote it: plain JSON) is refused, so the change it
/// would hide is never hidden; `mend turn end` clears it.
#[test]
fn a_planted_turn_state_hiding_a_change_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let turns = changed_turn(d);
    let planted = serde_json::to_vec_pretty(&hiding_state(d)).unwrap();
    std::fs::write(d.join(".mend/turn.json"), planted).unwrap();
    refused(&turns);
    assert!(turns.end().unwrap().turn.is_none());
    turns.begin(&BeginOptions::default(), &mut |_| {}).unwrap();
    assert!(turns.status(false).unwrap().files.is_empty());
}

/// mend's own sealed `turn.json` with its body altered keeps the seal
/// line but no longer verifies.
#[test]
fn an_altered_turn_state_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let turns = changed_turn(d);
    let path = d.join(".mend/turn.json");
    let bytes = std::fs::read(&path).unwrap();
    let mut parts = bytes.splitn(3, |&b| b == b'\n');
    let (header, tag) = (parts.next().unwrap(), parts.next().unwrap());
    let mut altered = [header, b"\n", tag, b"\n"].concat();
    altered.extend(serde_json::to_vec_pretty(&hiding_state(d)).unwrap());
    std::fs::write(&path, altered).unwrap();
    refused(&turns);
    let msg = turns.status(false).unwrap_err().to_string();
    assert!(msg.contains("changed after mend wrote it"), "{msg}");
}

/// In a folder without git, a `.mend` mend did not make, holding a
/// shadow repository with a checkpoint in it, is not taken over: opening
/// the checkpoints is refused, so none is listed or restored, and nothing
/// is written into it.
#[test]
fn a_planted_shadow_store_is_not_adopted() {
    let src = tempfile::tempdir().unwrap();
    put(src.path(), "f.txt", "planted content\n");
    let cps = Checkpoints::open(src.path()).unwrap();
    let planted = cps.create(&Default::default(), &mut |_| {}).unwrap();
    assert_eq!(cps.list().unwrap().len(), 1, "{planted:?}");
    drop(cps);
    // The agent copies a shadow repository holding its checkpoint, but
    // not the owner mark (which another root's mend made, and which says
    // so).
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    put(d, "f.txt", "the person's work\n");
    copy_tree(
        &src.path().join(".mend/shadow.git"),
        &d.join(".mend/shadow.git"),
    );
    let before = listing(&d.join(".mend"));
    let err = Checkpoints::open(d).err().expect("refused");
    let msg = err.to_string();
    assert!(msg.contains("no owner mark"), "{msg}");
    assert!(msg.contains("mv .mend .mend.unknown"), "{msg}");
    assert_eq!(listing(&d.join(".mend")), before, "nothing written in it");
    assert_eq!(
        std::fs::read(d.join("f.txt")).unwrap(),
        b"the person's work\n"
    );
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

fn listing(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            out.push(p.strip_prefix(dir).unwrap().to_string_lossy().into_owned());
            if p.is_dir() {
                stack.push(p);
            }
        }
    }
    out.sort();
    out
}
