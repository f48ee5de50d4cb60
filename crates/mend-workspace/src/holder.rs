//! Who holds the workspace lock, said truly.
//!
//! Each mend that takes `.mend/lock` writes its command line and process
//! id into it, but a lock can also be held by something else (a script's
//! `flock`, an editor plugin), and then the file still names the last mend
//! that held it, long exited. So the recorded holder is named only when
//! its process is alive and, where the system lists its locks
//! (`/proc/locks` on Linux), is among the lock's holders.

use std::fs::File;

use mend_core::text::escape_controls as esc;

/// The holder of the lock on `file`, given what the file says (`recorded`,
/// as the last mend to take it wrote it).
pub(crate) fn describe(recorded: &str, file: &File) -> String {
    let recorded = recorded.trim();
    let holders = flock_holders(file).unwrap_or_default();
    let Some(pid) = recorded_pid(recorded) else {
        return match holders.is_empty() {
            true => "another mend process".to_owned(),
            false => format!("another process ({})", named(&holders)),
        };
    };
    let alive = alive(pid);
    if alive && (holders.is_empty() || holders.contains(&pid)) {
        return esc(recorded).into_owned();
    }
    let which = match holders.is_empty() {
        true => String::new(),
        false => format!("{}; ", named(&holders)),
    };
    let last = match alive {
        true => "no longer holds it",
        false => "has exited",
    };
    format!(
        "another process ({which}the last mend that held it, {}, {last})",
        esc(recorded)
    )
}

/// The process id at the end of a recorded holder: `… (pid N)`.
fn recorded_pid(recorded: &str) -> Option<u32> {
    let (_, tail) = recorded.rsplit_once("(pid ")?;
    tail.strip_suffix(')')?.parse().ok()
}

/// Whether a process with this id exists (one we may not signal does).
fn alive(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    match rustix::process::test_kill_process(pid) {
        Ok(()) => true,
        Err(e) => e == rustix::io::Errno::PERM,
    }
}

/// The processes `/proc/locks` lists as holding a lock on `file`'s inode;
/// `None` where it cannot be read.
fn flock_holders(file: &File) -> Option<Vec<u32>> {
    let st = rustix::fs::fstat(file).ok()?;
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    Some(holders_in(&locks, st.st_ino as u64))
}

/// The pids of the lines of `locks` (as `/proc/locks` writes them) that
/// lock inode `ino`: `1: FLOCK ADVISORY WRITE <pid> <maj>:<min>:<ino> …`.
/// Lines of waiters (`->`) are left out.
fn holders_in(locks: &str, ino: u64) -> Vec<u32> {
    let mut pids: Vec<u32> = locks
        .lines()
        .filter(|l| !l.contains("->"))
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let at = f.iter().position(|w| w.matches(':').count() == 2)?;
            let inode = f[at].rsplit(':').next()?.parse::<u64>().ok()?;
            (inode == ino).then(|| f.get(at.checked_sub(1)?)?.parse().ok())?
        })
        .collect();
    pids.sort_unstable();
    pids.dedup();
    pids
}

/// Each process as `pid N (its name)`, where its name can be read.
fn named(pids: &[u32]) -> String {
    pids.iter()
        .map(
            |p| match std::fs::read_to_string(format!("/proc/{p}/comm")) {
                Ok(n) if !n.trim().is_empty() => format!("pid {p}, {}", esc(n.trim())),
                _ => format!("pid {p}"),
            },
        )
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_holders_of_one_inode_are_read_from_proc_locks() {
        let locks = "1: FLOCK  ADVISORY  WRITE 10856 fe:00:2859239 0 EOF\n\
                     1: -> FLOCK  ADVISORY  WRITE 777 fe:00:2859239 0 EOF\n\
                     2: POSIX  ADVISORY  WRITE 12 08:01:99 0 EOF\n\
                     3: FLOCK  ADVISORY  WRITE 10854 fe:00:2859114 0 EOF\n";
        assert_eq!(holders_in(locks, 2859239), [10856]);
        assert_eq!(holders_in(locks, 99), [12]);
        assert!(holders_in(locks, 5).is_empty());
        assert_eq!(
            recorded_pid("mend turn reject f.txt (pid 15889)"),
            Some(15889)
        );
        assert_eq!(recorded_pid("mend apply"), None);
    }
}
