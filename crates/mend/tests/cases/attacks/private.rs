//! Links inside `.mend`, once mend owns it: each thing mend keeps there
//! (pending sessions, their `blobs/` and `index.json`, `tmp/`, `aside/`,
//! the journal, the shadow repository and its state) replaced by a link
//! out of the root, and links swapped in while mend is using the folder.
//! Nothing outside may be read, written or deleted (the harness checks),
//! and a link found in the way is refused with the command that removes
//! it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::harness::{Out, Sandbox};
use super::{Case, R, refused, search_replace, unchanged};

/// This threat's cases, by name.
pub(super) const ALL: &[(&str, Case)] = &[
    ("pending_folder_link_propose_refused", |s| {
        folder_link(s, PENDING, propose)
    }),
    ("pending_folder_link_drop_refused", |s| {
        folder_link(s, PENDING, drop)
    }),
    ("pending_session_link_propose_refused", |s| {
        folder_link(s, SESSION, propose)
    }),
    ("pending_session_link_drop_refused", |s| {
        folder_link(s, SESSION, drop)
    }),
    ("pending_session_link_list_refused", |s| {
        folder_link(s, SESSION, list)
    }),
    ("pending_blobs_link_propose_refused", |s| {
        folder_link(s, BLOBS, propose)
    }),
    ("pending_blobs_link_drop_refused", |s| {
        folder_link(s, BLOBS, drop)
    }),
    ("pending_index_link_status_refused", |s| {
        index_link(s, status)
    }),
    ("pending_index_link_propose_refused", |s| {
        index_link(s, propose)
    }),
    ("pending_index_link_drop_refused", |s| index_link(s, drop)),
    ("private_tmp_link_refused", private_tmp_link_refused),
    ("private_aside_link_refused", private_aside_link_refused),
    ("private_journal_link_refused", private_journal_link_refused),
    (
        "shadow_repository_link_refused",
        shadow_repository_link_refused,
    ),
    ("shadow_state_link_refused", shadow_state_link_refused),
    (
        "race_pending_folder_swapped_while_a_proposal_waits",
        race_pending_folder_swapped_while_a_proposal_waits,
    ),
    ("race_mend_swapped_mid_commit", race_mend_swapped_mid_commit),
    (
        "race_tmp_swapped_before_the_rename",
        race_tmp_swapped_before_the_rename,
    ),
];

// ---------------------------------------------------------------- helpers

const PENDING: &str = ".mend/pending";
const SESSION: &str = ".mend/pending/default";
const BLOBS: &str = ".mend/pending/default/blobs";

type Attack = fn(&Sandbox) -> Out;

fn pending(s: &Sandbox, args: &[&str]) -> Out {
    let root = s.root_str();
    let mut all = vec!["pending", "--root", root.as_str()];
    all.extend_from_slice(args);
    s.mend(&all, None)
}

/// A proposal for `a.txt`, held in the default session.
fn propose(s: &Sandbox) -> Out {
    s.apply(&["--pending"], &search_replace("a.txt", "alpha", "beta"))
}

fn drop(s: &Sandbox) -> Out {
    pending(s, &["drop", "default"])
}

fn list(s: &Sandbox) -> Out {
    pending(s, &["list"])
}

fn status(s: &Sandbox) -> Out {
    pending(s, &["status"])
}

/// `a.txt`, and the default session holding it as context.
fn with_session(s: &Sandbox) -> R {
    s.write("a.txt", "alpha\n");
    let out = pending(s, &["add", "a.txt"]);
    ensure!(out.ok(), "setting up the session failed: {out:?}");
    Ok(())
}

/// A folder outside holding one file, `keep.txt`.
fn outside_folder(s: &Sandbox, rel: &str) -> PathBuf {
    let dir = s.outside.join(rel);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("keep.txt"), "keep me\n").unwrap();
    dir
}

/// Replaces what is at `rel` under the root with a link to `to`.
fn relink(s: &Sandbox, rel: &str, to: &Path) {
    let p = s.root.join(rel);
    match p.symlink_metadata() {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(&p).unwrap(),
        Ok(_) => std::fs::remove_file(&p).unwrap(),
        Err(_) => {}
    }
    s.symlink(to, rel);
}

/// Runs `attack`, which must be refused with the command that removes
/// the link at `rel`.
fn refused_naming(s: &Sandbox, attack: Attack, rel: &str) -> R {
    let out = attack(s);
    refused(&out, &format!("rm {rel}"))?;
    unchanged(s, "a.txt", b"alpha\n")
}

// ------------------------------------------------------- pending sessions

/// The folder of the session at `rel` links to a folder outside, which
/// holds a `default/` of its own so that following the link would find
/// one.
fn folder_link(s: &Sandbox, rel: &str, attack: Attack) -> R {
    with_session(s)?;
    let to = outside_folder(s, "linked");
    outside_folder(s, "linked/default");
    relink(s, rel, &to);
    s.baseline();
    refused_naming(s, attack, rel)
}

/// `index.json` links to a copy of itself outside, so following the link
/// would succeed.
fn index_link(s: &Sandbox, attack: Attack) -> R {
    with_session(s)?;
    let index = s.read(".mend/pending/default/index.json").unwrap();
    let to = s.outside.join("index.json");
    std::fs::write(&to, index).unwrap();
    relink(s, ".mend/pending/default/index.json", &to);
    s.baseline();
    refused_naming(s, attack, ".mend/pending/default/index.json")
}

// ------------------------------------------- the rest of mend's own files

/// A first edit, so `.mend` (and its `tmp/`) exist.
fn after_an_edit(s: &Sandbox) -> R {
    s.write("a.txt", "alpha\n");
    let out = s.apply(&[], &search_replace("a.txt", "alpha", "beta"));
    ensure!(out.ok(), "the first edit failed: {out:?}");
    s.write("a.txt", "alpha\n");
    Ok(())
}

fn edit(s: &Sandbox) -> Out {
    s.apply(&[], &search_replace("a.txt", "alpha", "gamma"))
}

/// Recovery empties `tmp/` before every write.
fn private_tmp_link_refused(s: &Sandbox) -> R {
    after_an_edit(s)?;
    let to = outside_folder(s, "tmp");
    relink(s, ".mend/tmp", &to);
    s.baseline();
    refused_naming(s, edit, ".mend/tmp")
}

fn private_journal_link_refused(s: &Sandbox) -> R {
    after_an_edit(s)?;
    let to = s.outside.join("journal.json");
    std::fs::write(&to, "not a journal\n").unwrap();
    relink(s, ".mend/journal.json", &to);
    s.baseline();
    refused_naming(s, edit, ".mend/journal.json")
}

fn checkpoint(s: &Sandbox, args: &[&str]) -> Out {
    let root = s.root_str();
    let mut all = vec!["checkpoint", "--root", root.as_str(), "--json"];
    all.extend_from_slice(args);
    s.mend(&all, None)
}

/// A restore with `--force` copies into `.mend/aside/` the new content of
/// `.env`, which was checkpointed only before it was ignored.
fn private_aside_link_refused(s: &Sandbox) -> R {
    s.git(&s.root, &["init", "-q"]);
    s.write(".env", "TOKEN=old\n");
    let first = checkpoint(s, &["create"]);
    ensure!(first.ok(), "{first:?}");
    let v: serde_json::Value = serde_json::from_str(&first.stdout).map_err(|e| e.to_string())?;
    let id = v["id"].as_str().unwrap_or_default().to_owned();
    std::fs::remove_file(s.root.join(".env")).unwrap();
    ensure!(checkpoint(s, &["create"]).ok(), "second checkpoint");
    s.write(".gitignore", ".env\n");
    s.write(".env", "TOKEN=only-here\n");
    let to = outside_folder(s, "aside");
    relink(s, ".mend/aside", &to);
    s.baseline();
    let out = checkpoint(s, &["restore", &id, "--force"]);
    refused(&out, "rm .mend/aside")?;
    unchanged(s, ".env", b"TOKEN=only-here\n")
}

/// A shadow repository (the root is no git repository) that links to a
/// real repository outside.
fn shadow_repository_link_refused(s: &Sandbox) -> R {
    after_an_edit(s)?;
    let to = s.outside.join("shadow.git");
    s.git(&s.outside, &["init", "-q", "--bare", "shadow.git"]);
    relink(s, ".mend/shadow.git", &to);
    s.baseline();
    let out = checkpoint(s, &["create"]);
    refused(&out, "rm .mend/shadow.git")
}

/// The snapshot state links to a copy of itself outside.
fn shadow_state_link_refused(s: &Sandbox) -> R {
    after_an_edit(s)?;
    ensure!(checkpoint(s, &["create"]).ok(), "the first checkpoint");
    let state = ".mend/shadow.git/mend-snapshot-state";
    let to = s.outside.join("state");
    std::fs::write(&to, s.read(state).unwrap()).unwrap();
    relink(s, state, &to);
    s.baseline();
    let out = checkpoint(s, &["create"]);
    refused(&out, &format!("rm {state}"))
}

// ------------------------------------------------------------------ races

/// Waits (up to 20 s) until `ready` holds.
fn wait_for(what: &str, ready: impl Fn() -> bool) -> R {
    let start = Instant::now();
    while !ready() {
        ensure!(
            start.elapsed() < Duration::from_secs(20),
            "{what} never happened"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    Ok(())
}

/// A proposal opens its session, then waits for its input; meanwhile
/// `.mend/pending` is moved away and a link to a folder outside put in
/// its place. What the proposal stores goes to the folder it opened.
fn race_pending_folder_swapped_while_a_proposal_waits(s: &Sandbox) -> R {
    s.write("a.txt", "alpha\n");
    let to = outside_folder(s, "p");
    s.baseline();
    let root = s.root_str();
    let mut child = s.start(&["apply", "--root", &root, "--pending"]);
    let session = s.root.join(".mend/pending/default");
    if let Err(e) = wait_for("opening the session", || session.is_dir()) {
        let _ = child.kill();
        let _ = child.wait();
        return Err(e);
    }
    std::fs::rename(
        s.root.join(".mend/pending"),
        s.root.join(".mend/pending-moved"),
    )
    .unwrap();
    s.symlink(&to, ".mend/pending");
    let input = search_replace("a.txt", "alpha", "beta");
    let out = s.finish(child, input.as_bytes());
    ensure!(out.code.is_some(), "the proposal did not finish: {out:?}");
    unchanged(s, "a.txt", b"alpha\n")?;
    // The next command finds the link and says what to remove.
    refused(&status(s), "rm .mend/pending")
}

/// A two-file commit pauses after each step; once its journal is written,
/// `.mend` is moved away and a link to a folder outside put in its place.
/// The commit finishes through the folder it opened.
fn race_mend_swapped_mid_commit(s: &Sandbox) -> R {
    s.write("a.txt", "alpha\n");
    s.write("b.txt", "alpha\n");
    let to = outside_folder(s, "st");
    s.baseline();
    let root = s.root.clone();
    let edit = format!(
        "{}{}",
        search_replace("a.txt", "alpha", "beta"),
        search_replace("b.txt", "alpha", "beta")
    );
    let out = std::thread::scope(|scope| {
        let swapper = scope.spawn(|| {
            wait_for("the journal", || root.join(".mend/journal.json").exists())?;
            std::fs::rename(root.join(".mend"), root.join(".mend-moved")).unwrap();
            std::os::unix::fs::symlink(&to, root.join(".mend")).unwrap();
            Ok::<(), String>(())
        });
        let root = s.root_str();
        let out = s.mend_env(
            &["apply", "--commit-step-delay-ms", "300", "--root", &root],
            &[],
            Some(edit.as_bytes()),
        );
        swapper.join().unwrap().map(|()| out)
    })?;
    ensure!(out.ok(), "the commit did not finish: {out:?}");
    unchanged(s, "a.txt", b"beta\n")?;
    unchanged(s, "b.txt", b"beta\n")?;
    refused(&edit_b(s), "rm .mend")
}

fn edit_b(s: &Sandbox) -> Out {
    s.apply(&[], &search_replace("b.txt", "beta", "gamma"))
}

/// A lone write is staged in `.mend/tmp/` and renamed into place; between
/// the two, `tmp/` is moved away and replaced by a link to a folder
/// holding a decoy under the staged file's name. The decoy must stay
/// where it is, and the file get what the edit wrote.
fn race_tmp_swapped_before_the_rename(s: &Sandbox) -> R {
    after_an_edit(s)?;
    // Made again by the write, so it is not among what `.mend` held.
    std::fs::remove_dir(s.root.join(".mend/tmp")).unwrap();
    let decoys = s.base.join("decoys");
    std::fs::create_dir_all(&decoys).unwrap();
    s.baseline();
    let root = s.root.clone();
    let staged = || -> Option<std::ffi::OsString> {
        std::fs::read_dir(root.join(".mend/tmp"))
            .ok()?
            .flatten()
            .map(|e| e.file_name())
            .find(|n| n.to_string_lossy().ends_with(".tmp"))
    };
    let out = std::thread::scope(|scope| {
        let swapper = scope.spawn(|| {
            wait_for("staging", || staged().is_some())?;
            let name = staged().ok_or("the staged file went")?;
            std::fs::rename(root.join(".mend/tmp"), root.join(".mend/tmp-moved")).unwrap();
            std::fs::write(decoys.join(&name), "decoy\n").unwrap();
            std::os::unix::fs::symlink(&decoys, root.join(".mend/tmp")).unwrap();
            Ok::<std::ffi::OsString, String>(name)
        });
        let root = s.root_str();
        let out = s.mend_env(
            &["apply", "--commit-step-delay-ms", "300", "--root", &root],
            &[],
            Some(search_replace("a.txt", "alpha", "gamma").as_bytes()),
        );
        swapper.join().unwrap().map(|name| (out, name))
    });
    let (out, name) = out?;
    ensure!(out.ok(), "the write did not finish: {out:?}");
    unchanged(s, "a.txt", b"gamma\n")?;
    ensure!(
        std::fs::read(decoys.join(&name)).ok().as_deref() == Some(&b"decoy\n"[..]),
        "the decoy outside was moved into the root"
    );
    refused(&edit(s), "rm .mend/tmp")
}
