//! Checkpoints on real git repositories in temporary folders.

use std::path::Path;

use mend_checkpoint::{Checkpoints, CreateOptions};
use mend_test_support::{git, git_with, put, read_tree_without};

mod differential;
mod exact;
mod narrowed;
mod planted;
mod safety;
mod turn;
mod turn_edges;
mod turn_ignored;
mod turn_undo;

/// The folders above `rel`, outermost first: `a`, `a/b` for `a/b/c`.
fn folders_above(rel: &str) -> Vec<String> {
    let parts: Vec<&str> = rel.split('/').collect();
    (1..parts.len()).map(|n| parts[..n].join("/")).collect()
}

fn read(dir: &Path, rel: &str) -> Option<Vec<u8>> {
    std::fs::read(dir.join(rel)).ok()
}

/// Everything a checkpoint must never change.
fn repo_state(dir: &Path) -> (String, String, Vec<u8>, String, String) {
    (
        git(dir, &["rev-parse", "HEAD"]),
        git(dir, &["symbolic-ref", "HEAD"]),
        std::fs::read(dir.join(".git/index")).unwrap(),
        git(dir, &["stash", "list"]),
        git(dir, &["for-each-ref", "refs/heads", "refs/tags"]),
    )
}

fn repo() -> tempfile::TempDir {
    let dir = mend_test_support::repo(&[
        (".gitignore", "*.log\nbuild/\n"),
        ("src/main.rs", "fn main() {}\n"),
        ("doomed.txt", "will be deleted\n"),
        ("run.sh", "#!/bin/sh\necho hi\n"),
    ]);
    let d = dir.path();
    // A stash and a staged change, so both can be checked for changes.
    put(d, "src/main.rs", b"fn main() { stash(); }\n");
    git(d, &["stash", "-q"]);
    put(d, "staged.txt", b"staged\n");
    git(d, &["add", "staged.txt"]);
    dir
}

fn create(cps: &Checkpoints, label: &str) -> mend_checkpoint::Checkpoint {
    cps.create(
        &CreateOptions {
            label: Some(label.into()),
            anchor: Some(format!("anchor-{label}")),
            ..CreateOptions::default()
        },
        &mut |_| {},
    )
    .unwrap()
}

#[cfg(unix)]
#[test]
fn round_trip_of_every_kind_of_file_and_repo_state_untouched() {
    use std::os::unix::fs::PermissionsExt;
    let dir = repo();
    let d = dir.path();
    std::fs::set_permissions(d.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    put(d, "untracked.txt", b"untracked\n");
    put(d, "img.bin", b"\x89PNG\r\n\x1a\n\0\x01\x02\xff");
    put(d, "app.log", b"ignored log\n");
    std::os::unix::fs::symlink("src/main.rs", d.join("link.rs")).unwrap();
    let before = repo_state(d);
    let cps = Checkpoints::open(d).unwrap();
    let cp = create(&cps, "one");
    assert_eq!(repo_state(d), before, "create changed the repository");

    // Change everything.
    put(d, "src/main.rs", b"fn main() { changed(); }\n");
    std::fs::remove_file(d.join("doomed.txt")).unwrap();
    std::fs::remove_file(d.join("untracked.txt")).unwrap();
    put(d, "img.bin", b"different");
    std::fs::set_permissions(d.join("run.sh"), std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::remove_file(d.join("link.rs")).unwrap();
    put(d, "link.rs", b"now a file\n");
    put(d, "new_after.txt", b"created after the checkpoint\n");
    put(d, "app.log", b"log changed\n");
    put(d, "build/out.o", b"ignored build output\n");

    let r = cps.restore(&cp.id, false, false).unwrap();
    assert!(r.safety.is_some());
    assert_eq!(read(d, "src/main.rs").unwrap(), b"fn main() {}\n");
    assert_eq!(read(d, "doomed.txt").unwrap(), b"will be deleted\n");
    assert_eq!(read(d, "untracked.txt").unwrap(), b"untracked\n");
    assert_eq!(
        read(d, "img.bin").unwrap(),
        b"\x89PNG\r\n\x1a\n\0\x01\x02\xff"
    );
    assert_eq!(
        std::fs::metadata(d.join("run.sh"))
            .unwrap()
            .permissions()
            .mode()
            & 0o111,
        0o111
    );
    assert!(
        d.join("link.rs")
            .symlink_metadata()
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        std::fs::read_link(d.join("link.rs")).unwrap(),
        Path::new("src/main.rs")
    );
    assert_eq!(
        read(d, "new_after.txt"),
        None,
        "untracked, not ignored, absent: deleted"
    );
    // Ignored files are never touched.
    assert_eq!(read(d, "app.log").unwrap(), b"log changed\n");
    assert_eq!(read(d, "build/out.o").unwrap(), b"ignored build output\n");
    assert_eq!(repo_state(d), before, "restore changed the repository");
    cps.drop(&r.safety.unwrap().id).unwrap();
    cps.gc(Some(0), None).unwrap();
    assert_eq!(repo_state(d), before, "drop/gc changed the repository");
    assert!(cps.list().unwrap().is_empty());
}

#[test]
fn ignored_files_survive_even_after_gitignore_changed() {
    let dir = repo();
    let d = dir.path();
    put(d, "keep.log", b"ignored at checkpoint time\n");
    let cps = Checkpoints::open(d).unwrap();
    let cp = create(&cps, "one");
    // Now *.log is no longer ignored: keep.log looks untracked and absent
    // from the checkpoint, but it was ignored under the checkpoint's rules.
    put(d, ".gitignore", b"build/\n");
    put(
        d,
        "fresh.log",
        b"created after, ignored by the checkpoint's rules\n",
    );
    let r = cps.restore(&cp.id, false, false).unwrap();
    assert_eq!(
        read(d, "keep.log").unwrap(),
        b"ignored at checkpoint time\n"
    );
    assert_eq!(
        read(d, "fresh.log").unwrap(),
        b"created after, ignored by the checkpoint's rules\n"
    );
    assert!(r.kept.iter().any(|k| k == "keep.log"), "{:?}", r.kept);
    assert_eq!(read(d, ".gitignore").unwrap(), b"*.log\nbuild/\n");
}

#[test]
fn a_restore_is_undone_by_restoring_its_safety_checkpoint() {
    let dir = repo();
    let d = dir.path();
    let cps = Checkpoints::open(d).unwrap();
    let cp = create(&cps, "one");
    put(d, "src/main.rs", b"fn main() { work_in_progress(); }\n");
    put(d, "notes.txt", b"my notes\n");
    let r = cps.restore(&cp.id, false, false).unwrap();
    assert_eq!(read(d, "notes.txt"), None);
    let safety = r.safety.unwrap();
    cps.restore(&safety.id, false, false).unwrap();
    assert_eq!(
        read(d, "src/main.rs").unwrap(),
        b"fn main() { work_in_progress(); }\n"
    );
    assert_eq!(read(d, "notes.txt").unwrap(), b"my notes\n");
}

#[test]
fn dry_run_changes_nothing() {
    let dir = repo();
    let d = dir.path();
    let cps = Checkpoints::open(d).unwrap();
    let cp = create(&cps, "one");
    put(d, "src/main.rs", b"changed\n");
    let r = cps.restore(&cp.id, true, false).unwrap();
    assert!(r.safety.is_none());
    assert_eq!(r.changes.len(), 1);
    assert_eq!(read(d, "src/main.rs").unwrap(), b"changed\n");
    assert_eq!(cps.list().unwrap().len(), 1);
}

#[test]
fn prune_later_drops_newer_checkpoints_but_not_the_safety_one() {
    let dir = repo();
    let d = dir.path();
    let cps = Checkpoints::open(d).unwrap();
    let first = create(&cps, "first");
    put(d, "a.txt", b"a\n");
    let second = create(&cps, "second");
    put(d, "b.txt", b"b\n");
    let third = create(&cps, "third");
    let r = cps.restore(&first.id, false, true).unwrap();
    let pruned: Vec<&str> = r.pruned.iter().map(|c| c.id.as_str()).collect();
    assert!(
        pruned.contains(&second.id.as_str()) && pruned.contains(&third.id.as_str()),
        "{pruned:?}"
    );
    assert_eq!(
        r.pruned
            .iter()
            .find(|c| c.id == third.id)
            .unwrap()
            .anchor
            .as_deref(),
        Some("anchor-third")
    );
    let left: Vec<String> = cps.list().unwrap().into_iter().map(|c| c.id).collect();
    assert!(left.contains(&first.id));
    assert!(left.contains(&r.safety.unwrap().id));
    assert_eq!(left.len(), 2);
}

#[test]
fn show_and_diff() {
    let dir = repo();
    let d = dir.path();
    let cps = Checkpoints::open(d).unwrap();
    create(&cps, "one");
    put(d, "added.txt", b"new\n");
    let two = create(&cps, "two");
    let changes = cps.show(&two.id).unwrap();
    assert!(
        changes
            .iter()
            .any(|c| c.path == "added.txt" && c.status.letter() == "A"),
        "{changes:?}"
    );
    put(d, "added.txt", b"newer\n");
    let diff = cps.diff(&two.id).unwrap();
    assert!(diff.contains("-new\n+newer\n"), "{diff}");
}

#[test]
fn shadow_repository_for_a_plain_folder() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    put(d, "a.txt", b"one\n");
    put(d, ".gitignore", b"*.tmp\n");
    put(d, "scratch.tmp", b"ignored\n");
    let cps = Checkpoints::open(d).unwrap();
    assert!(cps.is_shadow());
    let cp = create(&cps, "one");
    put(d, "a.txt", b"two\n");
    put(d, "b.txt", b"later\n");
    cps.restore(&cp.id, false, false).unwrap();
    assert_eq!(read(d, "a.txt").unwrap(), b"one\n");
    assert_eq!(read(d, "b.txt"), None);
    assert_eq!(read(d, "scratch.tmp").unwrap(), b"ignored\n");
    assert!(d.join(".mend/shadow.git").is_dir());
    assert!(!d.join(".git").exists());
    // Reopening finds the same checkpoints.
    assert_eq!(Checkpoints::open(d).unwrap().list().unwrap().len(), 2);
}

#[test]
fn large_files_and_nested_repositories_are_skipped_and_listed() {
    let dir = repo();
    let d = dir.path();
    put(d, "big.dat", vec![b'x'; 2048]);
    git(&d.join("."), &["status"]);
    std::fs::create_dir_all(d.join("vendor/lib")).unwrap();
    git(&d.join("vendor/lib"), &["init", "-q", "."]);
    put(d, "vendor/lib/file.c", b"int x;\n");
    let cps = Checkpoints::open(d).unwrap();
    let cp = cps
        .create(
            &CreateOptions {
                max_file_bytes: 1024,
                ..CreateOptions::default()
            },
            &mut |_| {},
        )
        .unwrap();
    let skipped: Vec<&str> = cp.skipped.iter().map(|s| s.path.as_str()).collect();
    assert!(skipped.contains(&"big.dat"), "{skipped:?}");
    assert!(
        skipped.iter().any(|p| p.starts_with("vendor/lib")),
        "{skipped:?}"
    );
    // The nested repository's .git is left where it is.
    assert!(d.join("vendor/lib/.git").is_dir());
    let listed = cps.get(&cp.id).unwrap();
    assert_eq!(listed.skipped.len(), cp.skipped.len());
}

#[test]
fn a_folder_with_a_git_file_is_a_nested_repository() {
    // A submodule's or linked worktree's `.git` is a file naming its
    // repository: the folder is skipped as a nested repository all the
    // same, found in its listing whatever the entry's type.
    let dir = repo();
    let d = dir.path();
    put(d, "deps/sub/.git", b"gitdir: ../../.git/modules/sub\n");
    put(d, "deps/sub/lib.c", b"int y;\n");
    put(d, "deps/plain/lib.c", b"int z;\n");
    let cps = Checkpoints::open(d).unwrap();
    let cp = cps.create(&CreateOptions::default(), &mut |_| {}).unwrap();
    let skipped: Vec<(&str, &str)> = cp
        .skipped
        .iter()
        .map(|s| (s.path.as_str(), s.reason.as_str()))
        .collect();
    assert_eq!(skipped, [("deps/sub", "nested repository")]);
}

#[test]
fn metadata_round_trips_through_git_trailers() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    put(d, "small.txt", b"x\n");
    put(d, "big (1).dat", [b'x'; 64]);
    put(d, "odd: name (too large).bin", [b'y'; 64]);
    let cps = Checkpoints::open(d).unwrap();
    let made = cps
        .create(
            &CreateOptions {
                label: Some("label: with (parens)".into()),
                anchor: Some("msg-1".into()),
                max_file_bytes: 10,
            },
            &mut |_| {},
        )
        .unwrap();
    let read = cps.get(&made.id).unwrap();
    assert_eq!(read, made);
    let mut paths: Vec<&str> = read.skipped.iter().map(|s| s.path.as_str()).collect();
    paths.sort_unstable();
    assert_eq!(paths, ["big (1).dat", "odd: name (too large).bin"]);
    assert!(
        read.skipped
            .iter()
            .all(|s| s.reason == "too large (64 bytes)")
    );
    assert_eq!(read.label.as_deref(), Some("label: with (parens)"));
}

/// Every file under the worktree but `.git` and `.mend`, with its bytes.
fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    read_tree_without(dir, &[".git", ".mend"])
}

#[test]
fn undoing_a_restore_deletes_a_tracked_file_the_restore_brought_back() {
    let dir = repo();
    let d = dir.path();
    let cps = Checkpoints::open(d).unwrap();
    let cp = create(&cps, "one");
    // doomed.txt is tracked; deleting it is part of the work to keep.
    std::fs::remove_file(d.join("doomed.txt")).unwrap();
    put(d, "src/main.rs", b"fn main() { work(); }\n");
    let had = tree(d);
    let r = cps.restore(&cp.id, false, false).unwrap();
    assert_eq!(read(d, "doomed.txt").unwrap(), b"will be deleted\n");
    cps.restore(&r.safety.unwrap().id, false, false).unwrap();
    assert_eq!(tree(d), had, "the undo did not give back the tree");
}

#[cfg(unix)]
#[test]
fn a_restore_replaces_a_link_that_stands_where_a_folder_was() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    put(d, ".gitignore", b"cache/\n");
    put(d, "d/file.txt", b"checkpointed\n");
    let cps = Checkpoints::open(d).unwrap();
    let cp = create(&cps, "one");
    // d becomes a link (one the safety checkpoint holds) to an ignored
    // folder holding its own file.txt.
    std::fs::remove_dir_all(d.join("d")).unwrap();
    put(d, "cache/file.txt", b"ignored, not in any checkpoint\n");
    std::os::unix::fs::symlink("cache", d.join("d")).unwrap();
    let r = cps.restore(&cp.id, false, false).unwrap();
    assert!(d.join("d").symlink_metadata().unwrap().is_dir());
    assert_eq!(read(d, "d/file.txt").unwrap(), b"checkpointed\n");
    assert_eq!(
        read(d, "cache/file.txt").unwrap(),
        b"ignored, not in any checkpoint\n"
    );
    // Undo brings the link back.
    cps.restore(&r.safety.unwrap().id, false, false).unwrap();
    assert_eq!(std::fs::read_link(d.join("d")).unwrap(), Path::new("cache"));
    assert_eq!(
        read(d, "cache/file.txt").unwrap(),
        b"ignored, not in any checkpoint\n"
    );
}

#[cfg(unix)]
#[test]
fn a_restore_never_writes_through_a_folder_that_became_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The link itself is ignored, so no checkpoint holds it: it stays, and
    // the restore is refused rather than written through it.
    put(d, ".gitignore", b"cache/\n");
    put(d, "d/file.txt", b"checkpointed\n");
    let cps = Checkpoints::open(d).unwrap();
    let cp = create(&cps, "one");
    put(d, ".gitignore", b"cache/\n/d\n");
    // d becomes a link to an ignored folder holding its own file.txt.
    std::fs::remove_dir_all(d.join("d")).unwrap();
    put(d, "cache/file.txt", b"ignored, not in any checkpoint\n");
    std::os::unix::fs::symlink("cache", d.join("d")).unwrap();
    for dry_run in [true, false] {
        let err = cps.restore(&cp.id, dry_run, false).unwrap_err().to_string();
        assert!(err.contains("d is now a symbolic link"), "{err}");
    }
    assert_eq!(
        read(d, "cache/file.txt").unwrap(),
        b"ignored, not in any checkpoint\n"
    );
    assert!(
        d.join("d")
            .symlink_metadata()
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

/// Each checkpoint names the newest one before it (a trailer, not a
/// parent: its parent is HEAD, so a dropped checkpoint's objects are held
/// by nothing), even when many are made in the same second, and `list`
/// and `get` agree on them.
#[test]
fn checkpoints_made_in_one_second_chain_in_order() {
    let dir = repo();
    let d = dir.path();
    let cps = Checkpoints::open(d).unwrap();
    let mut made = Vec::new();
    for n in 0..6 {
        put(d, "chain.txt", format!("{n}\n").as_bytes());
        made.push(create(&cps, &format!("c{n}")));
    }
    let head = git(d, &["rev-parse", "HEAD"]);
    for pair in made.windows(2) {
        let previous = git(
            d,
            &[
                "log",
                "-1",
                "--format=%(trailers:key=Mend-Previous,valueonly)",
                &pair[1].commit,
            ],
        );
        assert_eq!(
            previous.trim(),
            pair[0].commit,
            "{} follows {}",
            pair[1].id,
            pair[0].id
        );
        let parent = git(d, &["rev-parse", &format!("{}^", pair[1].commit)]);
        assert_eq!(parent.trim(), head.trim());
    }
    let listed: Vec<String> = cps.list().unwrap().into_iter().map(|c| c.id).collect();
    let want: Vec<String> = made.iter().rev().map(|c| c.id.clone()).collect();
    assert_eq!(listed, want);
    for c in &made {
        assert_eq!(cps.get(&c.id[..8]).unwrap(), *c);
        // The commit's whole id, as `create --json` gives it, in any case.
        assert_eq!(cps.get(&c.commit).unwrap(), *c);
        assert_eq!(cps.get(&c.commit.to_uppercase()).unwrap(), *c);
        let mut wrong = c.commit.clone();
        wrong.replace_range(39.., if c.commit.ends_with('0') { "1" } else { "0" });
        assert!(cps.get(&wrong).is_err());
    }
}

/// The snapshot state names objects that only checkpoints hold. Once the
/// checkpoint it was saved with is dropped and git prunes, it must not be
/// trusted, or the next checkpoint would name objects that are gone.
#[test]
fn a_state_whose_checkpoint_was_dropped_and_pruned_is_not_trusted() {
    let dir = repo();
    let d = dir.path();
    put(d, "notes.txt", b"only a checkpoint ever held this\n");
    let cps = Checkpoints::open(d).unwrap();
    let first = create(&cps, "one");
    cps.drop(&first.id).unwrap();
    git(d, &["gc", "-q", "--prune=now"]);
    let second = create(&cps, "two");
    // Every object the new checkpoint names is there.
    git(d, &["fsck", "--no-dangling", "--connectivity-only"]);
    let blob = git(d, &["rev-parse", &format!("{}:notes.txt", second.commit)]);
    assert_eq!(
        git(d, &["cat-file", "blob", blob.trim()]),
        "only a checkpoint ever held this\n"
    );
    // And the state saved with the second is trusted again: no new blob.
    let third = create(&cps, "three");
    assert_eq!(
        git(d, &["rev-parse", &format!("{}^{{tree}}", third.commit)]),
        git(d, &["rev-parse", &format!("{}^{{tree}}", second.commit)])
    );
}

/// A FIFO where HEAD tracks a file in an ignored folder: the snapshot
/// looks at what HEAD tracks there, and a FIFO's open would wait for a
/// writer forever. It is left out, as FIFOs are everywhere.
#[test]
fn a_fifo_where_head_tracks_an_ignored_file_does_not_hang() {
    let dir = repo();
    let d = dir.path();
    put(d, "logs/kept.txt", b"tracked\n");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "logs"]);
    put(d, ".gitignore", b"logs/\n");
    std::fs::remove_file(d.join("logs/kept.txt")).unwrap();
    let mode = rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR;
    let fifo = d.join("logs/kept.txt");
    rustix::fs::mknodat(rustix::fs::CWD, &fifo, rustix::fs::FileType::Fifo, mode, 0).unwrap();
    let cps = Checkpoints::open(d).unwrap();
    let cp = create(&cps, "with a fifo");
    let tree = git(d, &["ls-tree", "-r", "--name-only", &cp.commit]);
    assert!(!tree.contains("logs/kept.txt"), "{tree}");
}
