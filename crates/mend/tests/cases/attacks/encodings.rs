//! Encodings and size limits: UTF-32 files refused by name, and writes or
//! edits that would pass the size limit refused before anything is
//! written.

use super::*;

/// This threat's cases, by name.
pub(super) const ALL: &[(&str, Case)] = &[
    ("utf32le_refused_by_name", utf32le_refused_by_name),
    ("utf32be_refused_by_name", utf32be_refused_by_name),
    (
        "write_over_the_size_limit_refused",
        write_over_the_size_limit_refused,
    ),
    (
        "edit_growing_past_the_size_limit_refused",
        edit_growing_past_the_size_limit_refused,
    ),
];

fn utf32le_refused_by_name(s: &Sandbox) -> R {
    let bytes: Vec<u8> = [0xFF, 0xFE, 0, 0]
        .into_iter()
        .chain("hi\n".chars().flat_map(|c| (c as u32).to_le_bytes()))
        .collect();
    s.write("w.txt", &bytes);
    s.baseline();
    let res = s.mcp_call("write_file", &json!({"path": "w.txt", "content": "ho\n"}))?;
    tool_refused(&res, "UTF-32LE")?;
    unchanged(s, "w.txt", &bytes)
}

fn utf32be_refused_by_name(s: &Sandbox) -> R {
    let bytes: Vec<u8> = [0, 0, 0xFE, 0xFF]
        .into_iter()
        .chain("hi\n".chars().flat_map(|c| (c as u32).to_be_bytes()))
        .collect();
    s.write("w.txt", &bytes);
    s.baseline();
    refused(
        &s.apply(&[], &search_replace("w.txt", "hi", "ho")),
        "UTF-32BE",
    )?;
    unchanged(s, "w.txt", &bytes)
}

fn write_over_the_size_limit_refused(s: &Sandbox) -> R {
    s.baseline();
    let big = "x".repeat(200);
    let out = s.apply(&["--max-bytes", "100"], &patch_add("big.txt", &big));
    refused(&out, "over the 100-byte limit")?;
    ensure!(!s.exists("big.txt"), "the file was written");
    Ok(())
}

fn edit_growing_past_the_size_limit_refused(s: &Sandbox) -> R {
    s.write("a.txt", "alpha\n");
    s.baseline();
    let out = s.apply(
        &["--max-bytes", "100"],
        &search_replace("a.txt", "alpha", &"y".repeat(150)),
    );
    refused(&out, "over the 100-byte limit")?;
    unchanged(s, "a.txt", b"alpha\n")
}
