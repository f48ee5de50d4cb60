//! Hostile names and paths: newlines and escape sequences that would
//! forge report lines or reach the terminal, control characters, Unicode
//! normalisation twins, and a root reached through a link.

use super::*;

/// This threat's cases, by name.
pub(super) const ALL: &[(&str, Case)] = &[
    (
        "newline_in_a_path_cannot_forge_a_report_line",
        newline_in_a_path_cannot_forge_a_report_line,
    ),
    (
        "escape_sequence_in_a_path_never_reaches_the_terminal",
        escape_sequence_in_a_path_never_reaches_the_terminal,
    ),
    ("c1_control_in_a_path_refused", c1_control_in_a_path_refused),
    (
        "control_character_path_refused_over_mcp",
        control_character_path_refused_over_mcp,
    ),
    ("nfc_name_edits_the_nfd_file", nfc_name_edits_the_nfd_file),
    (
        "nfc_write_makes_no_look_alike_twin",
        nfc_write_makes_no_look_alike_twin,
    ),
    (
        "nfc_name_reads_the_nfd_file_over_mcp",
        nfc_name_reads_the_nfd_file_over_mcp,
    ),
    (
        "symlinked_root_accepts_its_absolute_paths",
        symlinked_root_accepts_its_absolute_paths,
    ),
    (
        "symlinked_root_accepts_its_absolute_paths_over_mcp",
        symlinked_root_accepts_its_absolute_paths_over_mcp,
    ),
];

fn newline_in_a_path_cannot_forge_a_report_line(s: &Sandbox) -> R {
    s.baseline();
    let path = "ok.txt\napplied  #9 src/main.rs:1 (pass: exact)";
    let out = s.apply(&[], &str_replace_json(path, "", "x\n"));
    refused(&out, "control character")?;
    ensure!(
        !out.stdout.lines().any(|l| l.starts_with("applied  #9")),
        "a forged line was printed: {out:?}"
    );
    ensure!(!s.exists("ok.txt\napplied  #9 src"), "the folder was made");
    Ok(())
}

fn escape_sequence_in_a_path_never_reaches_the_terminal(s: &Sandbox) -> R {
    s.baseline();
    let out = s.apply(
        &[],
        &str_replace_json("\u{1b}[2J\u{1b}]0;pwned\u{7}x.txt", "", "x\n"),
    );
    refused(&out, "control character")?;
    ensure!(
        !out.all().contains('\u{1b}'),
        "a raw escape was printed: {out:?}"
    );
    Ok(())
}

fn c1_control_in_a_path_refused(s: &Sandbox) -> R {
    s.baseline();
    let out = s.apply(&[], &str_replace_json("a\u{9b}31mb.txt", "", "x\n"));
    refused(&out, "control character")?;
    ensure!(
        !out.all().contains('\u{9b}'),
        "a raw C1 control was printed: {out:?}"
    );
    Ok(())
}

fn control_character_path_refused_over_mcp(s: &Sandbox) -> R {
    s.baseline();
    let res = s.mcp_call("write_file", &json!({"path": "a\nb.txt", "content": "x\n"}))?;
    tool_refused(&res, "control character")?;
    ensure!(!s.exists("a\nb.txt"), "the file was made");
    Ok(())
}

const NFD: &str = "cafe\u{301}.py";
const NFC: &str = "caf\u{e9}.py";

fn nfc_name_edits_the_nfd_file(s: &Sandbox) -> R {
    s.write(NFD, "x = 1\n");
    s.baseline();
    let out = s.apply(&[], &search_replace(NFC, "x = 1", "x = 2"));
    ensure!(out.ok(), "{out:?}");
    unchanged(s, NFD, b"x = 2\n")?;
    ensure!(!s.exists(NFC), "a look-alike file was made");
    Ok(())
}

fn nfc_write_makes_no_look_alike_twin(s: &Sandbox) -> R {
    s.write(NFD, "x = 1\n");
    s.baseline();
    let res = s.mcp_call("write_file", &json!({"path": NFC, "content": "x = 3\n"}))?;
    tool_ok(&res)?;
    unchanged(s, NFD, b"x = 3\n")?;
    ensure!(!s.exists(NFC), "a look-alike file was made");
    Ok(())
}

fn nfc_name_reads_the_nfd_file_over_mcp(s: &Sandbox) -> R {
    s.write(NFD, "x = 1\n");
    s.baseline();
    let v = tool_ok(&s.mcp_call("read_file", &json!({"path": NFC}))?)?;
    ensure!(v["content"] == "x = 1\n", "{v}");
    Ok(())
}

fn symlinked_root_accepts_its_absolute_paths(s: &Sandbox) -> R {
    s.write("a.txt", "alpha\n");
    let link = s.base.join("link_root");
    std::os::unix::fs::symlink(&s.root, &link).unwrap();
    s.baseline();
    let abs = link.join("a.txt").to_string_lossy().into_owned();
    let link_str = link.to_string_lossy().into_owned();
    let out = s.mend(
        &["apply", "--root", &link_str],
        Some(str_replace_json(&abs, "alpha", "beta").as_bytes()),
    );
    ensure!(out.ok(), "{out:?}");
    unchanged(s, "a.txt", b"beta\n")
}

fn symlinked_root_accepts_its_absolute_paths_over_mcp(s: &Sandbox) -> R {
    s.write("a.txt", "alpha\n");
    let link = s.base.join("link_root");
    std::os::unix::fs::symlink(&s.root, &link).unwrap();
    s.baseline();
    let abs = link.join("a.txt").to_string_lossy().into_owned();
    let link_str = link.to_string_lossy().into_owned();
    let steps = json!([[{"tool": "edit_file", "args": {"path": abs,
        "edits": [{"old_string": "alpha", "new_string": "beta"}]}}]]);
    let r = s.mcp(&[&link_str], &steps)?;
    tool_ok(&r[0][0])?;
    unchanged(s, "a.txt", b"beta\n")
}
