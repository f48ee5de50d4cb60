//! Whose `.mend` it is: a folder without mend's owner mark is never taken
//! over, git repository or not; one moved with its project keeps its
//! sealed state; a sealed file altered or planted does not verify.

use mend_workspace::{Error, Workspace};

use crate::{put, workspace};

/// A `.mend` made by something else in a folder without git, holding a
/// shadow repository and a turn, is refused: nothing is written into it
/// (no mark, no lock) and nothing in it is read as mend's.
#[test]
fn a_planted_mend_in_a_folder_without_git_is_never_adopted() {
    let dir = tempfile::tempdir().unwrap();
    put(dir.path(), "a.txt", b"one\n");
    put(
        dir.path(),
        ".mend/shadow.git/HEAD",
        b"ref: refs/heads/main\n",
    );
    put(dir.path(), ".mend/turn.json", b"{}");
    let ws = Workspace::open(dir.path(), Default::default()).unwrap();
    for err in [
        ws.lock().unwrap_err(),
        ws.private_dir().unwrap_err(),
        ws.existing_private_dir().unwrap_err(),
    ] {
        assert!(matches!(err, Error::Untrusted { .. }), "{err}");
        let msg = err.to_string();
        assert!(msg.contains("no owner mark"), "{msg}");
        assert!(msg.contains("mv .mend .mend.unknown"), "{msg}");
    }
    let mut names: Vec<_> = std::fs::read_dir(dir.path().join(".mend"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["shadow.git", "turn.json"]);
}

/// A mark copied from another user's mend, or made up, is no mark.
#[test]
fn a_forged_mark_is_no_mark() {
    let (dir, ws) = workspace();
    drop(ws.lock().unwrap());
    let owner = dir.path().join(".mend/owner");
    let mark = std::fs::read_to_string(&owner).unwrap();
    let (body, tag) = mark.trim_end().rsplit_once('\n').unwrap();
    let forged = tag.replace(|c: char| c != '0', "0");
    std::fs::write(&owner, format!("{body}\n{forged}\n")).unwrap();
    let ws = Workspace::open(dir.path(), Default::default()).unwrap();
    let msg = ws.lock().unwrap_err().to_string();
    assert!(msg.contains("no owner mark"), "{msg}");
}

/// A project moved with its `.mend` keeps it, and a file sealed before
/// the move still opens after it: the seal follows the folder's store,
/// not its place.
#[test]
fn a_moved_project_keeps_its_sealed_state() {
    let top = tempfile::tempdir().unwrap();
    let old = top.path().join("old");
    std::fs::create_dir(&old).unwrap();
    let ws = Workspace::open(&old, Default::default()).unwrap();
    ws.private_dir()
        .unwrap()
        .write_sealed("state.json", "state.json", b"{\"n\":1}")
        .unwrap();
    let new = top.path().join("new");
    std::fs::rename(&old, &new).unwrap();
    let ws = Workspace::open(&new, Default::default()).unwrap();
    let dir = ws.private_dir().unwrap();
    let body = dir.read_sealed("state.json", "state.json", 99).unwrap();
    assert_eq!(body.as_deref(), Some(&b"{\"n\":1}"[..]));
    let mark = std::fs::read(new.join(".mend/owner")).unwrap();
    let root = hex(new.canonicalize().unwrap().as_os_str().as_encoded_bytes());
    assert!(
        String::from_utf8(mark).unwrap().contains(&root),
        "marked for the new place"
    );
}

/// A `.mend` copied (`cp -r`) into another folder without git is never
/// taken over, whether the original is still there or was removed since:
/// it would hand the original's checkpoints and review state to this
/// folder. Nothing in the copy is rewritten.
#[test]
fn a_copied_mend_is_never_adopted() {
    for remove_original in [false, true] {
        let top = tempfile::tempdir().unwrap();
        let (src, copy) = (top.path().join("src"), top.path().join("ng"));
        std::fs::create_dir(&src).unwrap();
        let ws = Workspace::open(&src, Default::default()).unwrap();
        ws.private_dir()
            .unwrap()
            .write_sealed("state.json", "state.json", b"{\"n\":1}")
            .unwrap();
        copy_tree(&src, &copy);
        let mark = std::fs::read(copy.join(".mend/owner")).unwrap();
        if remove_original {
            std::fs::remove_dir_all(&src).unwrap();
        }
        let ws = Workspace::open(&copy, Default::default()).unwrap();
        for err in [ws.lock().unwrap_err(), ws.private_dir().unwrap_err()] {
            assert!(matches!(err, Error::Untrusted { .. }), "{err}");
            let msg = err.to_string();
            let why = match remove_original {
                false => "is a copy of the one mend made for",
                true => "not the folder mend made there",
            };
            assert!(msg.contains(why), "{msg}");
            assert!(msg.contains("mv .mend .mend.unknown"), "{msg}");
        }
        assert_eq!(std::fs::read(copy.join(".mend/owner")).unwrap(), mark);
    }
}

/// A project moved with its `.mend` and moved back keeps it both times;
/// a folder moved into another project keeps being refused as a copy
/// while the root it was made for still holds the original.
#[test]
fn a_move_is_taken_over_and_a_second_copy_is_not() {
    let top = tempfile::tempdir().unwrap();
    let (a, b, c) = (
        top.path().join("a"),
        top.path().join("b"),
        top.path().join("c"),
    );
    std::fs::create_dir(&a).unwrap();
    drop(
        Workspace::open(&a, Default::default())
            .unwrap()
            .lock()
            .unwrap(),
    );
    std::fs::rename(&a, &b).unwrap();
    drop(
        Workspace::open(&b, Default::default())
            .unwrap()
            .lock()
            .unwrap(),
    );
    std::fs::rename(&b, &a).unwrap();
    drop(
        Workspace::open(&a, Default::default())
            .unwrap()
            .lock()
            .unwrap(),
    );
    copy_tree(&a, &c);
    let msg = Workspace::open(&c, Default::default())
        .unwrap()
        .lock()
        .unwrap_err()
        .to_string();
    assert!(msg.contains("is a copy"), "{msg}");
}

fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
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

/// A sealed file altered by a byte, one written without a seal, and one
/// sealed for another name are each refused as unsealed.
#[test]
fn altered_unsealed_and_renamed_state_is_refused() {
    let (dir, ws) = workspace();
    let private = ws.private_dir().unwrap();
    private.write_sealed("a.json", "a.json", b"[1]").unwrap();
    private.write_sealed("b.json", "b.json", b"[2]").unwrap();
    let a = dir.path().join(".mend/a.json");
    let mut bytes = std::fs::read(&a).unwrap();
    *bytes.last_mut().unwrap() = b'[';
    std::fs::write(&a, &bytes).unwrap();
    std::fs::write(dir.path().join(".mend/c.json"), b"[3]").unwrap();
    std::fs::copy(
        dir.path().join(".mend/b.json"),
        dir.path().join(".mend/d.json"),
    )
    .unwrap();
    for (name, why) in [
        ("a.json", mend_workspace::Unsealed::Foreign),
        ("c.json", mend_workspace::Unsealed::Missing),
        ("d.json", mend_workspace::Unsealed::Foreign),
    ] {
        match private.read_sealed(name, name, 99) {
            Err(Error::Unsealed { why: Some(w), .. }) => assert_eq!(w, why, "{name}"),
            other => panic!("{name}: {other:?}"),
        }
    }
    assert_eq!(
        private
            .read_sealed("b.json", "b.json", 99)
            .unwrap()
            .unwrap(),
        b"[2]"
    );
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
