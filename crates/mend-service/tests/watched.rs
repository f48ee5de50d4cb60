//! A holder of a root's checkpoints over time (`Watched`, as `mend
//! daemon`, `mend mcp` and `mend editor` hold one) follows the store the
//! root resolves to now: a repository made, removed or replaced under it
//! reopens its checkpoints, so every id it returns is one a fresh open
//! (a command run now) lists.

use std::path::Path;
use std::process::Command;

use mend_checkpoint::{Checkpoints, CreateOptions};
use mend_service::{Call, ScanKind, Watched};

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// A folder without git with one file, and a holder of its checkpoints.
fn holder() -> (tempfile::TempDir, Watched) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    let held = Watched::new(dir.path(), None);
    (dir, held)
}

/// Creates a checkpoint through `held`; its id and how it scanned.
fn create(held: &Watched) -> Result<(String, Option<ScanKind>), mend_service::Error> {
    let mut call = Call::new(None, None);
    let made = held.create(
        &mut call,
        &CreateOptions::default(),
        &Default::default(),
        false,
    )?;
    let id = made.checkpoint.expect("not a dry run").id;
    Ok((id, made.scan))
}

/// The ids a fresh open of `root` lists, and whether it is a shadow.
fn fresh(root: &Path) -> (Vec<String>, bool) {
    let cps = Checkpoints::open(root).expect("the root opens");
    let ids = cps.list().unwrap().into_iter().map(|c| c.id).collect();
    (ids, cps.is_shadow())
}

#[test]
fn a_holder_follows_the_store_the_root_resolves_to() {
    let (dir, held) = holder();
    let d = dir.path();
    let (shadowed, _) = create(&held).unwrap();
    assert_eq!(fresh(d), (vec![shadowed.clone()], true));

    // `git init` under the holder: the next checkpoint is the
    // repository's, as a command run now would make it.
    git(d, &["init", "-q", "-b", "main", "."]);
    let (in_git, scan) = create(&held).unwrap();
    assert_eq!(
        scan,
        Some(ScanKind::Full),
        "a reopened holder scans in full"
    );
    assert_eq!(fresh(d), (vec![in_git.clone()], false));

    // The repository removed: back to the shadow store.
    std::fs::remove_dir_all(d.join(".git")).unwrap();
    let (shadowed_again, _) = create(&held).unwrap();
    let (ids, shadow) = fresh(d);
    assert!(shadow && ids.contains(&shadowed_again), "{ids:?}");

    // The repository replaced by another: its own checkpoints.
    git(d, &["init", "-q", "-b", "main", "."]);
    create(&held).unwrap();
    std::fs::remove_dir_all(d.join(".git")).unwrap();
    git(d, &["init", "-q", "-b", "main", "."]);
    let (replaced, _) = create(&held).unwrap();
    assert_eq!(fresh(d), (vec![replaced], false));
}

#[test]
fn a_holder_fails_where_a_fresh_open_fails_and_recovers_with_it() {
    let (dir, held) = holder();
    let d = dir.path();
    create(&held).unwrap();
    // An empty `.git`: no command can open the checkpoints, nor may the
    // holder go on in the shadow store.
    std::fs::create_dir(d.join(".git")).unwrap();
    assert!(Checkpoints::open(d).is_err());
    assert!(create(&held).is_err());
    assert!(create(&held).is_err(), "nothing was held after the failure");
    // `git init` fills that same folder: both open the repository.
    git(d, &["init", "-q", "-b", "main", "."]);
    let (id, _) = create(&held).unwrap();
    assert_eq!(fresh(d), (vec![id], false));
}

#[test]
fn a_shadow_store_whose_mend_folder_is_replaced_is_reopened() {
    let (dir, held) = holder();
    let d = dir.path();
    create(&held).unwrap();
    std::fs::remove_dir_all(d.join(".mend")).unwrap();
    let (id, _) = create(&held).unwrap();
    assert_eq!(fresh(d), (vec![id], true));
}
