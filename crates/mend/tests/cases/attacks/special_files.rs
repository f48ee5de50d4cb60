//! Special files where a regular file is expected: FIFOs, sockets and
//! character devices are refused by name without being opened, and
//! neither the CLI nor the MCP server blocks on one.

use super::*;

/// This threat's cases, by name.
pub(super) const ALL: &[(&str, Case)] = &[
    (
        "fifo_hash_refused_without_blocking",
        fifo_hash_refused_without_blocking,
    ),
    (
        "fifo_apply_refused_without_blocking",
        fifo_apply_refused_without_blocking,
    ),
    ("fifo_delete_refused", fifo_delete_refused),
    ("fifo_mcp_read_file_refused", fifo_mcp_read_file_refused),
    (
        "fifo_mcp_reads_do_not_freeze_the_server",
        fifo_mcp_reads_do_not_freeze_the_server,
    ),
    ("fifo_mcp_write_file_refused", fifo_mcp_write_file_refused),
    (
        "fifo_server_exits_when_stdin_closes",
        fifo_server_exits_when_stdin_closes,
    ),
    ("socket_refused_by_name", socket_refused_by_name),
    (
        "character_device_refused_unread",
        character_device_refused_unread,
    ),
];

fn fifo_hash_refused_without_blocking(s: &Sandbox) -> R {
    s.mkfifo("p.txt");
    s.baseline();
    refused(
        &s.mend(&["hash", "--root", &s.root_str(), "p.txt"], None),
        "FIFO",
    )
}

fn fifo_apply_refused_without_blocking(s: &Sandbox) -> R {
    s.mkfifo("p.txt");
    s.baseline();
    refused(&s.apply(&[], &search_replace("p.txt", "a", "b")), "FIFO")
}

fn fifo_delete_refused(s: &Sandbox) -> R {
    s.mkfifo("p.txt");
    s.baseline();
    let out = s.apply(
        &[],
        "*** Begin Patch\n*** Delete File: p.txt\n*** End Patch\n",
    );
    refused(&out, "FIFO")?;
    ensure!(s.exists("p.txt"), "the FIFO was deleted");
    Ok(())
}

fn fifo_mcp_read_file_refused(s: &Sandbox) -> R {
    s.mkfifo("p.txt");
    s.baseline();
    tool_refused(&s.mcp_call("read_file", &json!({"path": "p.txt"}))?, "FIFO")
}

fn fifo_mcp_reads_do_not_freeze_the_server(s: &Sandbox) -> R {
    s.mkfifo("p.txt");
    s.baseline();
    let read = |p: &str| json!({"tool": "read_file", "args": {"path": p}});
    let steps = json!([[read("p.txt"), read("p.txt")], [read(PROBE)]]);
    let r = s.mcp(&[&s.root_str()], &steps)?;
    tool_refused(&r[0][0], "FIFO")?;
    tool_refused(&r[0][1], "FIFO")?;
    tool_ok(&r[1][0]).map(drop)
}

fn fifo_mcp_write_file_refused(s: &Sandbox) -> R {
    s.mkfifo("p.txt");
    s.baseline();
    let res = s.mcp_call("write_file", &json!({"path": "p.txt", "content": "x\n"}))?;
    tool_refused(&res, "FIFO")?;
    ensure!(
        std::fs::symlink_metadata(s.root.join("p.txt"))
            .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_fifo(&m.file_type())),
        "the FIFO was replaced"
    );
    Ok(())
}

fn fifo_server_exits_when_stdin_closes(s: &Sandbox) -> R {
    s.mkfifo("p.txt");
    s.baseline();
    let read = tools_call(1, "read_file", &json!({"path": "p.txt"}));
    let read2 = tools_call(2, "read_file", &json!({"path": "p.txt"}));
    let (replies, exited) = s.mcp_raw(&[&initialize(), &initialized(), &read, &read2]);
    ensure!(
        exited,
        "the server was still running 20 s after its input closed"
    );
    ensure!(
        replies.iter().any(|r| r["id"] == 2),
        "the call in flight got no answer: {replies:?}"
    );
    Ok(())
}

fn socket_refused_by_name(s: &Sandbox) -> R {
    let _listener = std::os::unix::net::UnixListener::bind(s.root.join("s.sock")).unwrap();
    s.baseline();
    refused(&s.apply(&[], &search_replace("s.sock", "a", "b")), "socket")
}

fn character_device_refused_unread(s: &Sandbox) -> R {
    // A copy of /dev/zero inside the root where the system allows making
    // one; otherwise the project root is /dev itself (read-only use).
    let made = std::process::Command::new("mknod")
        .arg(s.root.join("zero"))
        .args(["c", "1", "5"])
        .status()
        .is_ok_and(|st| st.success());
    s.baseline();
    let out = if made {
        s.mend(&["hash", "--root", &s.root_str(), "zero"], None)
    } else {
        s.mend(&["hash", "--root", "/dev", "zero"], None)
    };
    refused(&out, "character device")
}
