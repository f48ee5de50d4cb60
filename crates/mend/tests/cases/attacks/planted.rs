//! State planted where mend keeps its own: a `.mend/turn.json` that would
//! hide an agent's change from review, an altered one, a pending session's
//! index mend did not write, and a whole `.mend` with a shadow repository
//! in a folder without git. Each is refused naming the command that
//! clears it, and nothing is written from it.

use super::*;

/// This threat's cases, by name.
pub(super) const ALL: &[(&str, Case)] = &[
    (
        "planted_turn_state_hiding_a_change_refused",
        planted_turn_state_hiding_a_change_refused,
    ),
    ("altered_turn_state_refused", altered_turn_state_refused),
    (
        "planted_pending_index_refused",
        planted_pending_index_refused,
    ),
    (
        "planted_mend_with_a_shadow_checkpoint_not_adopted",
        planted_mend_with_a_shadow_checkpoint_not_adopted,
    ),
    (
        "copied_mend_not_adopted_a_moved_one_is",
        copied_mend_not_adopted_a_moved_one_is,
    ),
];

fn turn(s: &Sandbox, args: &[&str]) -> Out {
    let root = s.root_str();
    let mut all = vec!["turn", "--root", root.as_str()];
    all.extend_from_slice(args);
    s.mend(&all, None)
}

const TURN: &str = ".mend/turn.json";
const CHANGE: &str = "the agent's change\n";

/// A turn over `a.txt` (in a folder without git), which the agent then
/// changed: `status` shows it.
fn changed_turn(s: &Sandbox) -> R {
    s.write("a.txt", "alpha\n");
    let begun = turn(s, &["begin"]);
    ensure!(begun.ok(), "{begun:?}");
    s.write("a.txt", CHANGE);
    let status = turn(s, &["status"]);
    ensure!(status.ok() && status.stdout.contains("a.txt"), "{status:?}");
    Ok(())
}

/// The turn's state with `a.txt` marked reviewed at the agent's content:
/// what would make `status` and `diff` show nothing.
fn hiding(s: &Sandbox) -> Result<Value, String> {
    let bytes = s.read(TURN).ok_or("no turn state")?;
    let body = match bytes.starts_with(b"mend sealed") {
        true => bytes.splitn(3, |&b| b == b'\n').nth(2).unwrap_or_default(),
        false => &bytes[..],
    };
    let mut state: Value = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    let blob = git_blob(s, CHANGE);
    state["accepted"]["a.txt"] = json!({ "blob": blob, "mode": 0o100644 });
    Ok(state)
}

/// The git blob id of `text`.
fn git_blob(s: &Sandbox, text: &str) -> String {
    let tmp = s.outside.join("blob.txt");
    std::fs::write(&tmp, text).unwrap();
    let out = std::process::Command::new("git")
        .args(["hash-object", "--no-filters"])
        .arg(&tmp)
        .output()
        .unwrap();
    std::fs::remove_file(&tmp).unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// Status and diff are refused naming `mend turn end`, and the change is
/// never hidden.
fn turn_refused(s: &Sandbox) -> R {
    for args in [&["status"][..], &["diff"]] {
        let out = turn(s, args);
        refused(&out, "mend turn end")?;
        refused(&out, TURN)?;
    }
    unchanged(s, "a.txt", CHANGE.as_bytes())
}

fn planted_turn_state_hiding_a_change_refused(s: &Sandbox) -> R {
    changed_turn(s)?;
    let planted = serde_json::to_vec_pretty(&hiding(s)?).unwrap();
    s.write(TURN, planted);
    s.baseline();
    turn_refused(s)
}

fn altered_turn_state_refused(s: &Sandbox) -> R {
    changed_turn(s)?;
    let bytes = s.read(TURN).unwrap();
    let seal_lines: Vec<&[u8]> = bytes.splitn(3, |&b| b == b'\n').take(2).collect();
    let mut altered = seal_lines.join(&b'\n');
    altered.push(b'\n');
    altered.extend(serde_json::to_vec_pretty(&hiding(s)?).unwrap());
    s.write(TURN, altered);
    s.baseline();
    turn_refused(s)?;
    refused(&turn(s, &["status"]), "changed after mend wrote it")
}

/// A session's index replaced by one proposing to delete `a.txt`: accept
/// is refused naming `mend pending drop`, and `a.txt` stays.
fn planted_pending_index_refused(s: &Sandbox) -> R {
    s.write("a.txt", "alpha\n");
    let root = s.root_str();
    let added = s.mend(&["pending", "--root", &root, "add", "a.txt"], None);
    ensure!(added.ok(), "{added:?}");
    let planted = json!({
        "files": { "a.txt": { "context": null, "output": { "kind": "delete" } } },
        "retry": null,
    });
    s.write(
        ".mend/pending/default/index.json",
        serde_json::to_vec(&planted).unwrap(),
    );
    s.baseline();
    let out = s.mend(&["pending", "--root", &root, "accept"], None);
    refused(&out, "mend pending drop default")?;
    unchanged(s, "a.txt", b"alpha\n")
}

/// Another root's shadow repository, holding a checkpoint of other
/// content, copied into this folder's `.mend` without mend's mark: no
/// command lists or restores its checkpoint.
fn planted_mend_with_a_shadow_checkpoint_not_adopted(s: &Sandbox) -> R {
    let other = s.outside.join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("a.txt"), "planted\n").unwrap();
    let other_root = other.to_string_lossy().into_owned();
    let made = s.mend(
        &["checkpoint", "--root", &other_root, "--json", "create"],
        None,
    );
    ensure!(made.ok(), "{made:?}");
    let v: Value = serde_json::from_str(&made.stdout).map_err(|e| e.to_string())?;
    let id = v["id"].as_str().unwrap_or_default().to_owned();
    s.write("a.txt", "the person's work\n");
    copy_tree(
        &other.join(".mend/shadow.git"),
        &s.root.join(".mend/shadow.git"),
    );
    std::fs::remove_dir_all(&other).unwrap();
    s.baseline();
    let root = s.root_str();
    let list = s.mend(&["checkpoint", "--root", &root, "list"], None);
    refused(&list, "no owner mark")?;
    refused(&list, "mv .mend .mend.unknown")?;
    ensure!(
        !list.all().contains(&id),
        "the planted checkpoint is listed: {list:?}"
    );
    let restore = s.mend(&["checkpoint", "--root", &root, "restore", &id], None);
    refused(&restore, "no owner mark")?;
    let begun = turn(s, &["begin"]);
    refused(&begun, "no owner mark")?;
    unchanged(s, "a.txt", b"the person's work\n")
}

/// A whole `.mend` mend made in another folder without git (owner mark
/// included, with a checkpoint of other content) copied into this one: no
/// command lists or restores its checkpoint, whether the original is still
/// there or was removed after the copy. The original folder moved whole
/// keeps its `.mend` and its checkpoint.
fn copied_mend_not_adopted_a_moved_one_is(s: &Sandbox) -> R {
    let other = s.outside.join("src");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("a.txt"), "evil\n").unwrap();
    let other_root = other.to_string_lossy().into_owned();
    let made = s.mend(
        &["checkpoint", "--root", &other_root, "--json", "create"],
        None,
    );
    ensure!(made.ok(), "{made:?}");
    let v: Value = serde_json::from_str(&made.stdout).map_err(|e| e.to_string())?;
    let id = v["id"].as_str().unwrap_or_default().to_owned();
    s.write("a.txt", "the person's work\n");
    copy_tree(&other.join(".mend"), &s.root.join(".mend"));
    s.baseline();
    let root = s.root_str();
    for (why, remove) in [
        ("is a copy of the one mend made for", false),
        ("not the folder mend made there", true),
    ] {
        let moved = s.outside.join("moved");
        if remove {
            // The original moved away, as if deleted: the copy is still
            // not the folder mend made.
            std::fs::rename(&other, &moved).unwrap();
            s.baseline();
        }
        let list = s.mend(&["checkpoint", "--root", &root, "list"], None);
        refused(&list, why)?;
        refused(&list, "mv .mend .mend.unknown")?;
        ensure!(
            !list.all().contains(&id),
            "the copied checkpoint is listed: {list:?}"
        );
        let restore = s.mend(&["checkpoint", "--root", &root, "restore", &id], None);
        refused(&restore, why)?;
        unchanged(s, "a.txt", b"the person's work\n")?;
        if remove {
            let at = moved.to_string_lossy().into_owned();
            let list = s.mend(&["checkpoint", "--root", &at, "list"], None);
            ensure!(
                list.ok() && list.stdout.contains(&id),
                "the move lost it: {list:?}"
            );
            // Listing there marks the moved folder for its new place.
            s.baseline();
        }
    }
    Ok(())
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
