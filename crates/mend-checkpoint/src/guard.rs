//! Roots no checkpoint should cover: a home directory (whole lives, not
//! projects: an agent once ran `git add -A` on one), or the root of a
//! filesystem. Decided from the root's canonical path, `$HOME`, the
//! password file and the mount table, read once; the decision itself is a
//! pure function of them, so it is tested on any machine.

use std::path::{Path, PathBuf};

/// What the decision needs to know about the machine.
pub(crate) struct Machine {
    /// `$HOME`, canonical.
    pub(crate) home: Option<PathBuf>,
    /// `/etc/passwd`'s text.
    pub(crate) passwd: String,
    /// `/proc/self/mountinfo`'s text (Linux).
    pub(crate) mountinfo: Option<String>,
    /// Whether the root is on another device than its parent (where no
    /// mount table can be read).
    pub(crate) other_device_than_parent: bool,
}

impl Machine {
    /// This machine, as seen for `root`.
    pub(crate) fn read(root: &Path) -> Machine {
        use std::os::unix::fs::MetadataExt as _;
        let dev = |p: &Path| std::fs::metadata(p).map(|m| m.dev()).ok();
        let parent = root.parent().unwrap_or(root);
        Machine {
            home: std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .and_then(|h| Path::new(&h).canonicalize().ok()),
            passwd: std::fs::read_to_string("/etc/passwd").unwrap_or_default(),
            mountinfo: std::fs::read_to_string("/proc/self/mountinfo").ok(),
            other_device_than_parent: dev(root) != dev(parent),
        }
    }
}

/// Why `root` (canonical) should not be checkpointed, if it should not.
pub(crate) fn refusal(root: &Path, m: &Machine) -> Option<String> {
    if root.parent().is_none() {
        return Some("it is the root of the filesystem".into());
    }
    if let Some(home) = &m.home {
        if home == root {
            return Some("it is your home directory".into());
        }
        if home.starts_with(root) {
            return Some(format!("it holds your home directory ({})", home.display()));
        }
    }
    for (user, home) in homes(&m.passwd) {
        let home = Path::new(home);
        if home == root || home.canonicalize().is_ok_and(|h| h == root) {
            return Some(format!("it is the home directory of the user {user}"));
        }
    }
    match &m.mountinfo {
        Some(table) if is_filesystem_root(root, table) => Some(format!(
            "it is the root of a filesystem (mounted at {})",
            root.display()
        )),
        Some(_) => None,
        None if m.other_device_than_parent => Some(format!(
            "it is the root of a filesystem (mounted at {})",
            root.display()
        )),
        None => None,
    }
}

/// `(user, home)` of each entry of a password file.
fn homes(passwd: &str) -> impl Iterator<Item = (&str, &str)> {
    passwd
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            (f.len() >= 7 && f[5].starts_with('/')).then(|| (f[0], f[5]))
        })
}

/// Whether a mount has its filesystem's own root at `root` (a bind mount
/// of a folder, as a container's project folder is, does not).
fn is_filesystem_root(root: &Path, mountinfo: &str) -> bool {
    mountinfo.lines().any(|l| {
        // id parent major:minor root mount-point options …
        let f: Vec<&str> = l.split(' ').collect();
        f.len() > 4 && f[3] == "/" && Path::new(&unescape(f[4])) == root
    })
}

/// The mount table's octal escapes (`\040` for a space).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match octal {
            Some(d) if b[i] == b'\\' => {
                out.push(d.iter().fold(0u8, |n, c| n.wrapping_mul(8) + (c - b'0')));
                i += 4;
            }
            _ => {
                out.push(b[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PASSWD: &str = "root:x:0:0:root:/root:/bin/bash\n\
        # a comment\n\
        ada:x:1000:1000:Ada:/srv/people/ada:/bin/sh\n\
        broken line\n";

    const MOUNTS: &str = "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n\
        30 22 8:2 / /mnt/data\\040disk rw - ext4 /dev/sda2 rw\n\
        31 22 8:1 /srv/people/ada/project /workspace rw - ext4 /dev/sda1 rw\n";

    fn machine() -> Machine {
        Machine {
            home: Some(PathBuf::from("/srv/people/me")),
            passwd: PASSWD.into(),
            mountinfo: Some(MOUNTS.into()),
            other_device_than_parent: false,
        }
    }

    fn why(root: &str) -> Option<String> {
        refusal(Path::new(root), &machine())
    }

    #[test]
    fn each_kind_of_root_is_refused_with_its_reason() {
        let cases: &[(&str, Option<&str>)] = &[
            ("/", Some("it is the root of the filesystem")),
            ("/srv/people/me", Some("it is your home directory")),
            (
                "/srv/people",
                Some("it holds your home directory (/srv/people/me)"),
            ),
            ("/root", Some("it is the home directory of the user root")),
            (
                "/srv/people/ada",
                Some("it is the home directory of the user ada"),
            ),
            (
                "/mnt/data disk",
                Some("it is the root of a filesystem (mounted at /mnt/data disk)"),
            ),
            // A project, a project in a home, a bind-mounted project.
            ("/srv/people/me/src/app", None),
            ("/srv/people/ada/app", None),
            ("/workspace", None),
            ("/mnt/data disk/app", None),
        ];
        for (root, expected) in cases {
            assert_eq!(why(root).as_deref(), *expected, "{root}");
        }
    }

    #[test]
    fn without_a_mount_table_another_device_is_a_filesystem_root() {
        let m = Machine {
            mountinfo: None,
            other_device_than_parent: true,
            ..machine()
        };
        assert!(refusal(Path::new("/Volumes/stick"), &m).is_some());
        let m = Machine {
            other_device_than_parent: false,
            ..m
        };
        assert_eq!(refusal(Path::new("/Volumes/stick"), &m), None);
    }
}
