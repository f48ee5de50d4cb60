//! Filesystems mounted inside the watched tree: one that does not report
//! every change (a network or FUSE filesystem) makes the tree's change
//! log untrustworthy, as the root's own filesystem would.

use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;

/// Filesystem types whose files may change with no event here: changed
/// by another machine (network filesystems) or by a process the kernel
/// does not see (FUSE, a virtual machine's shared folders).
const REMOTE: &[&str] = &[
    "nfs",
    "nfs4",
    "cifs",
    "smb3",
    "smbfs",
    "ncpfs",
    "9p",
    "afs",
    "ceph",
    "coda",
    "glusterfs",
    "lustre",
    "gpfs",
    "gfs2",
    "ocfs2",
    "vboxsf",
    "virtiofs",
    "fuse",
    "fuseblk",
];

/// Why a filesystem mounted at or below `root` cannot be relied on, from
/// the mount table (`/proc/self/mountinfo`); `None` when none is such, or
/// the table cannot be read.
pub(crate) fn remote_below(root: &Path) -> Option<&'static str> {
    let table = std::fs::read("/proc/self/mountinfo").ok()?;
    remote_in(&table, root.as_os_str().as_bytes())
}

fn remote_in(table: &[u8], root: &[u8]) -> Option<&'static str> {
    table.split(|&b| b == b'\n').find_map(|line| {
        let (point, kind) = parse(line)?;
        let below = point == root
            || (point.starts_with(root) && (root == b"/" || point.get(root.len()) == Some(&b'/')));
        let remote = REMOTE.contains(&kind) || kind.starts_with("fuse.");
        (below && remote).then_some(
            "a filesystem mounted in the tree does not report every change (a network or FUSE filesystem)",
        )
    })
}

/// A mountinfo line's mount point (unescaped) and filesystem type: the
/// fifth field, and the first after the ` - ` separator.
fn parse(line: &[u8]) -> Option<(Vec<u8>, &str)> {
    let text = std::str::from_utf8(line).ok()?;
    let (before, after) = text.split_once(" - ")?;
    let point = before.split(' ').nth(4)?;
    let kind = after.split(' ').next()?;
    Some((unescape(point.as_bytes()), kind))
}

/// Undoes the table's octal escapes (`\040` for a space).
fn unescape(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        let octal = s
            .get(i + 1..i + 4)
            .filter(|d| s[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match octal {
            Some(d) => {
                out.push(d.iter().fold(0u8, |n, c| n.wrapping_mul(8) + (c - b'0')));
                i += 4;
            }
            None => {
                out.push(s[i]);
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "\
22 1 253:1 / / rw,relatime - ext4 /dev/vda rw
30 22 0:40 / /home/u/proj/data rw - nfs4 server:/export rw
31 22 0:41 / /home/u/proj\\040two/mnt rw - fuse.sshfs host: rw
32 22 0:42 / /home/u/projects rw - nfs server:/x rw
33 22 0:43 / /home/u/other/tmp rw - tmpfs tmpfs rw
";

    #[test]
    fn remote_mounts_at_or_below_the_root_are_found() {
        let t = TABLE.as_bytes();
        assert!(remote_in(t, b"/home/u/proj").is_some());
        assert!(remote_in(t, b"/home/u/proj/data").is_some());
        assert!(remote_in(t, b"/home/u/proj two").is_some());
        // A sibling whose name only starts the same, and a local mount.
        assert!(remote_in(t, b"/home/u/proj/src").is_none());
        assert!(remote_in(t, b"/home/u/other").is_none());
        assert!(remote_in(t, b"/home/u/proj two/src").is_none());
    }
}
