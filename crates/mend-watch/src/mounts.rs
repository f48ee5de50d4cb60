//! Filesystems mounted inside the watched tree: one that does not report
//! every change (a network or FUSE filesystem) makes the tree's change
//! log untrustworthy, as the root's own filesystem would.

use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;

/// Filesystem types whose files may change with no event here: changed
/// by another machine (network filesystems), by a process the kernel
/// does not see (FUSE, a virtual machine's shared folders), or in layers
/// outside the tree (overlay).
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

/// The filesystems mounted at or below a root: where, and of what type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mounts(Vec<(Vec<u8>, String)>);

impl Mounts {
    /// From the mount table (`/proc/self/mountinfo`); `None` when it cannot
    /// be read.
    pub(crate) fn read(root: &Path) -> Option<Mounts> {
        let table = std::fs::read("/proc/self/mountinfo").ok()?;
        Some(Mounts::parse(&table, root.as_os_str().as_bytes()))
    }

    fn parse(table: &[u8], root: &[u8]) -> Mounts {
        let mut points: Vec<(Vec<u8>, String)> = (table.split(|&b| b == b'\n'))
            .filter_map(parse)
            .filter(|(point, _)| {
                point == root
                    || (point.starts_with(root)
                        && (root == b"/" || point.get(root.len()) == Some(&b'/')))
            })
            .map(|(point, kind)| (point, kind.to_owned()))
            .collect();
        points.sort();
        Mounts(points)
    }

    /// Why one of them cannot be relied on, if one cannot.
    pub(crate) fn remote(&self) -> Option<&'static str> {
        self.0
            .iter()
            .any(|(_, kind)| REMOTE.contains(&kind.as_str()) || kind.starts_with("fuse."))
            .then_some(
                "a filesystem mounted in the tree does not report every change (a network, FUSE or overlay filesystem)",
            )
    }
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
30 22 0:40 / /ws/proj/data rw - nfs4 server:/export rw
31 22 0:41 / /ws/proj\\040two/mnt rw - fuse.sshfs host: rw
32 22 0:42 / /ws/projects rw - nfs server:/x rw
33 22 0:43 / /ws/other/tmp rw - tmpfs tmpfs rw
";

    fn remote(root: &str) -> bool {
        Mounts::parse(TABLE.as_bytes(), root.as_bytes())
            .remote()
            .is_some()
    }

    #[test]
    fn remote_mounts_at_or_below_the_root_are_found() {
        assert!(remote("/ws/proj"));
        assert!(remote("/ws/proj/data"));
        assert!(remote("/ws/proj two"));
        // A sibling whose name only starts the same, and a local mount.
        assert!(!remote("/ws/proj/src"));
        assert!(!remote("/ws/other"));
        assert!(!remote("/ws/proj two/src"));
    }

    /// A mount made or removed below the root changes the set: what the
    /// tree holds there changed with no event.
    #[test]
    fn the_set_of_mounts_below_a_root_is_compared_whole() {
        let before = Mounts::parse(TABLE.as_bytes(), b"/ws/other");
        assert_eq!(before.0, [(b"/ws/other/tmp".to_vec(), "tmpfs".to_owned())]);
        let more = format!("{TABLE}34 22 0:44 / /ws/other/x rw - tmpfs tmpfs rw\n");
        assert_ne!(Mounts::parse(more.as_bytes(), b"/ws/other"), before);
        let less = TABLE.replace("/ws/other/tmp", "/elsewhere");
        assert_ne!(Mounts::parse(less.as_bytes(), b"/ws/other"), before);
    }
}
