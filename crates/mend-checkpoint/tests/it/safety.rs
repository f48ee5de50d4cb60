//! Checkpoints are safe in any repository: one test per way other agents'
//! checkpoints failed their users, named after it.

use std::collections::HashSet;
use std::io::Write as _;
use std::path::Path;

use git2::{ObjectType, Oid, Repository};
use mend_checkpoint::{Checkpoints, CreateOptions, Error, OpenOptions, RestoreOptions};
use mend_test_support::{git, put, read_tree_without};

use super::{create, read, repo, repo_state};

/// Every ref in `store` that is not the user's own (branches, tags,
/// remotes, the stash, HEAD): all that mend wrote.
fn mend_refs(store: &Path) -> Vec<(String, Oid)> {
    let repo = Repository::open_bare(store).unwrap();
    let own = ["refs/heads/", "refs/tags/", "refs/remotes/", "refs/stash"];
    repo.references()
        .unwrap()
        .map(|r| r.unwrap())
        .filter(|r| !own.iter().any(|p| r.name().unwrap().starts_with(p)))
        .map(|r| (r.name().unwrap().to_owned(), r.target().unwrap()))
        .collect()
}

/// Every kind of checkpoint mend makes: created, a restore's safety
/// checkpoint, a turn's start, an open turn's hold on what it accepted,
/// and what is left after a gc.
fn make_every_kind(d: &Path) -> Checkpoints {
    let cps = Checkpoints::open(d).unwrap();
    put(d, "a.txt", b"one\n");
    let first = create(&cps, "first");
    put(d, "a.txt", b"two\n");
    cps.restore(&first.id, false, false).unwrap();
    let turns = mend_checkpoint::turn::Turns::open(d).unwrap();
    turns
        .begin(&mend_checkpoint::turn::BeginOptions::default(), &mut |_| {})
        .unwrap();
    put(d, "a.txt", b"three\n");
    turns
        .accept(&mend_checkpoint::turn::Selection::default())
        .unwrap();
    create(&cps, "last");
    cps.gc(Some(3), None).unwrap();
    cps
}

/// codex#28241 (refs pointing at tree objects broke libgit2 clients) and
/// codex#35910 (refs 214 characters long, past Windows' path limit): every
/// ref mend writes points at a commit and is at most 64 characters long,
/// in a git repository and in a shadow one, and git finds the store whole.
#[test]
fn every_ref_is_a_commit_and_short_codex_28241_35910() {
    let in_git = repo();
    let plain = tempfile::tempdir().unwrap();
    for d in [in_git.path(), plain.path()] {
        let cps = make_every_kind(d);
        let refs = mend_refs(cps.store());
        assert!(refs.len() >= 3, "{refs:?}");
        assert!(
            refs.iter()
                .any(|(name, _)| name.starts_with("refs/mend/turns/")),
            "{refs:?}"
        );
        let repo = Repository::open_bare(cps.store()).unwrap();
        for (name, target) in refs {
            assert!(name.len() <= 64, "{name} is {} long", name.len());
            let kind = repo.find_object(target, None).unwrap().kind();
            assert_eq!(kind, Some(ObjectType::Commit), "{name}");
        }
        let store = cps.store().to_str().unwrap();
        git(d, &["--git-dir", store, "fsck", "--full", "--strict"]);
    }
}

/// codex#19588 (`git add -A` run on a home directory): a filesystem root
/// is refused, and nothing is written there. (Home directories, by
/// `$HOME` and the password file, are refused the same way: the decision
/// is unit-tested in `guard.rs`, and through the binary with `$HOME` set
/// in `mend`'s tests.)
#[test]
fn a_filesystem_root_is_refused_codex_19588() {
    let made_before = Path::new("/.mend").exists();
    let Err(e) = Checkpoints::open(Path::new("/")) else {
        panic!("the filesystem root was opened for checkpoints");
    };
    assert!(e.is_refusal(), "{e}");
    let message = e.to_string();
    assert!(
        message.contains("it is the root of the filesystem") && message.contains("--force"),
        "{message}"
    );
    assert_eq!(Path::new("/.mend").exists(), made_before);
}

/// Objects and bytes in a store's `objects/` folder, as git counts them.
fn objects(store: &Path) -> (usize, u64) {
    let out = git(store, &["--git-dir", ".", "count-objects", "-v"]);
    let field = |k: &str| -> u64 {
        out.lines()
            .find_map(|l| l.strip_prefix(&format!("{k}: ")))
            .unwrap()
            .parse()
            .unwrap()
    };
    (
        (field("count") + field("in-pack")) as usize,
        (field("size") + field("size-pack")) * 1024,
    )
}

/// codex#19588 again (a home directory has millions of files): a root's
/// first checkpoint over the file limit is refused, the refusal says how
/// many files were counted, and no object of the refused snapshot stays.
#[test]
fn too_many_files_for_a_first_checkpoint_is_refused_codex_19588() {
    let in_git = repo();
    let plain = tempfile::tempdir().unwrap();
    for d in [in_git.path(), plain.path()] {
        for i in 0..300 {
            put(d, &format!("dir{}/f{i}.txt", i % 7), format!("{i}\n"));
        }
        let opts = OpenOptions {
            max_files: 100,
            ..OpenOptions::default()
        };
        let cps = Checkpoints::open_with(d, &opts).unwrap();
        let before = objects(cps.store());
        let e = cps
            .create(&CreateOptions::default(), &mut |_| {})
            .unwrap_err();
        let Error::TooManyFiles { max, counted, .. } = &e else {
            panic!("{e}");
        };
        assert_eq!(*max, 100);
        assert!(*counted > 100 && *counted <= 304, "{counted}");
        let message = e.to_string();
        assert!(message.contains("more than 100 files"), "{message}");
        assert!(
            message.contains(&format!("stopped at {counted}")),
            "{message}"
        );
        assert!(e.is_refusal());
        assert_eq!(
            objects(cps.store()),
            before,
            "the refused snapshot left objects"
        );
        assert!(cps.list().unwrap().is_empty());
        // A higher limit takes it; later checkpoints are not limited.
        let cps = Checkpoints::open_with(
            d,
            &OpenOptions {
                max_files: 1000,
                ..opts
            },
        )
        .unwrap();
        cps.create(&CreateOptions::default(), &mut |_| {}).unwrap();
        let cps = Checkpoints::open_with(d, &opts).unwrap();
        cps.create(&CreateOptions::default(), &mut |_| {}).unwrap();
    }
}

/// Every object a commit reaches (not through parents).
fn reach(repo: &Repository, commit: &str) -> HashSet<Oid> {
    let c = repo.find_commit(Oid::from_str(commit).unwrap()).unwrap();
    let mut out = HashSet::from([c.id(), c.tree_id()]);
    c.tree()
        .unwrap()
        .walk(git2::TreeWalkMode::PreOrder, |_, e| {
            out.insert(e.id());
            git2::TreeWalkResult::Ok
        })
        .unwrap();
    out
}

/// codex#29388 (102 GB of orphaned objects on a 5.7 GB project): once
/// checkpoints are dropped and gc runs, at least 95% of the objects only
/// they held are gone, counted in the store, in a git repository and in a
/// shadow one; what is kept still restores, and git finds the store whole.
#[test]
fn dropped_checkpoints_storage_is_freed_codex_29388() {
    let in_git = repo();
    let plain = tempfile::tempdir().unwrap();
    for d in [in_git.path(), plain.path()] {
        let state = d.join(".git").exists().then(|| repo_state(d));
        let cps = Checkpoints::open(d).unwrap();
        let mut made = Vec::new();
        for round in 0..4 {
            for i in 0..200 {
                let text = format!("round {round} file {i}\n").repeat(20);
                put(d, &format!("gen/d{}/f{i}.txt", i % 9), text);
            }
            made.push(create(&cps, &format!("round {round}")));
        }
        let store = Repository::open_bare(cps.store()).unwrap();
        let kept = made.last().unwrap();
        let mut held_by_kept = reach(&store, &kept.commit);
        if let Ok(head) = store.head() {
            held_by_kept.extend(reach(&store, &head.target().unwrap().to_string()));
        }
        let only_dropped: HashSet<Oid> = made[..3]
            .iter()
            .flat_map(|c| reach(&store, &c.commit))
            .filter(|o| !held_by_kept.contains(o))
            .collect();
        assert!(only_dropped.len() > 600, "{}", only_dropped.len());
        let (count_before, bytes_before) = objects(cps.store());
        let (dropped, pruned) = cps.gc_with(Some(1), None).unwrap();
        assert_eq!(dropped.len(), 3);
        let reopened = Repository::open_bare(cps.store()).unwrap();
        let odb = reopened.odb().unwrap();
        let left = only_dropped.iter().filter(|o| odb.exists(**o)).count();
        let (count_after, bytes_after) = objects(cps.store());
        // The measurement, shown with `--nocapture`.
        let _ = writeln!(
            std::io::stderr(),
            "{}: {} objects only dropped checkpoints held, {left} left; store {count_before} → {count_after} objects, {bytes_before} → {bytes_after} bytes; gc says {pruned:?}",
            if state.is_some() { "git" } else { "shadow" },
            only_dropped.len()
        );
        assert!(
            left * 20 <= only_dropped.len(),
            "{left} of {} left",
            only_dropped.len()
        );
        let store = cps.store().to_str().unwrap().to_owned();
        git(d, &["--git-dir", &store, "fsck", "--full", "--strict"]);
        if let Some(state) = state {
            assert_eq!(repo_state(d), state, "gc changed the repository");
        }
        // The kept checkpoint is whole.
        put(d, "gen/d0/f0.txt", b"changed\n");
        cps.restore(&kept.id, false, false).unwrap();
        assert_eq!(
            read(d, "gen/d0/f0.txt").unwrap(),
            "round 3 file 0\n".repeat(20).as_bytes()
        );
    }
}

/// gemini-cli#13331 (a restore deleted almost every file): a restore
/// deletes nothing its checkpoint did not cover. Ignored files, nested
/// repositories (files too large to snapshot: see
/// `a_file_too_large_to_snapshot_is_not_deleted_silently`) stay byte for
/// byte; the untracked files it does delete are in the safety
/// checkpoint, whose restore brings them back.
#[test]
fn a_restore_deletes_nothing_its_checkpoint_did_not_cover_gemini_cli_13331() {
    let dir = repo();
    let d = dir.path();
    let cps = Checkpoints::open(d).unwrap();
    let early = create(&cps, "early, almost empty");
    put(d, "app.log", b"ignored log\n");
    put(d, "build/out.o", b"ignored build output\n");
    std::fs::create_dir_all(d.join("vendor/lib")).unwrap();
    git(&d.join("vendor/lib"), &["init", "-q", "."]);
    put(d, "vendor/lib/file.c", b"int nested;\n");
    for i in 0..50 {
        put(d, &format!("work/n{i}.txt"), format!("new work {i}\n"));
    }
    let uncovered = [
        "app.log",
        "build/out.o",
        "vendor/lib/file.c",
        "vendor/lib/.git/HEAD",
    ];
    let outside = |d: &Path| uncovered.map(|p| read(d, p));
    let before = outside(d);
    assert!(before.iter().all(Option::is_some));
    let all_before = read_tree_without(d, &[".git", ".mend"]);
    let r = cps
        .restore_with(
            &early.id,
            &RestoreOptions {
                force: false,
                ..RestoreOptions::default()
            },
        )
        .unwrap();
    assert_eq!(
        outside(d),
        before,
        "a restore deleted what it did not cover"
    );
    assert_eq!(
        read(d, "work/n0.txt"),
        None,
        "untracked work absent then is removed"
    );
    cps.restore(&r.safety.unwrap().id, false, false).unwrap();
    assert_eq!(read_tree_without(d, &[".git", ".mend"]), all_before);
}

/// gemini-cli#4115 (checkpoints silently did nothing outside git): outside
/// git a checkpoint works, in its own store, and says where that is.
#[test]
fn outside_git_a_checkpoint_works_in_its_own_store_gemini_cli_4115() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    put(d, "notes.txt", b"kept\n");
    let cps = Checkpoints::open(d).unwrap();
    assert!(cps.is_shadow());
    assert_eq!(
        cps.store(),
        d.canonicalize().unwrap().join(".mend/shadow.git/")
    );
    let cp = create(&cps, "plain folder");
    assert_eq!(cps.list().unwrap()[0].id, cp.id);
    put(d, "notes.txt", b"lost?\n");
    cps.restore(&cp.id, false, false).unwrap();
    assert_eq!(read(d, "notes.txt").unwrap(), b"kept\n");
    assert!(!d.join(".git").exists());
}
