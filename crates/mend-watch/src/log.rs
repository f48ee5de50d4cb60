//! The change log: every path an event named, with the token of its last
//! change, indexed by token so that what changed since a token costs what
//! changed, not every path ever named. A long-running watcher (a daemon's)
//! would otherwise grow with every temporary file a build makes.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::path::PathBuf;

/// How many paths the log holds before it forgets the older half.
const CAP: usize = 1 << 16;

pub(crate) struct Log {
    by_path: HashMap<PathBuf, u64>,
    by_token: BTreeMap<u64, PathBuf>,
    /// The newest token forgotten: the log cannot answer for earlier ones.
    floor: u64,
    cap: usize,
}

impl Log {
    pub(crate) fn new() -> Log {
        Log::with_cap(CAP)
    }

    fn with_cap(cap: usize) -> Log {
        Log {
            by_path: HashMap::new(),
            by_token: BTreeMap::new(),
            floor: 0,
            cap,
        }
    }

    /// `path` changed at `token`, newer than every token noted before.
    pub(crate) fn note(&mut self, path: PathBuf, token: u64) {
        if let Some(old) = self.by_path.insert(path.clone(), token) {
            self.by_token.remove(&old);
        }
        self.by_token.insert(token, path);
        if self.by_path.len() > self.cap {
            self.forget_oldest(self.by_path.len() - self.cap / 2);
        }
    }

    fn forget_oldest(&mut self, n: usize) {
        for _ in 0..n {
            let Some((token, path)) = self.by_token.pop_first() else {
                break;
            };
            self.by_path.remove(&path);
            self.floor = token;
        }
    }

    /// Whether the log still holds every change after `token`.
    pub(crate) fn answers_for(&self, token: u64) -> bool {
        token >= self.floor
    }

    /// The paths changed after `token` that the log holds, sorted.
    pub(crate) fn since(&self, token: u64) -> Vec<PathBuf> {
        let mut paths: Vec<PathBuf> = (self.by_token)
            .range((Bound::Excluded(token), Bound::Unbounded))
            .map(|(_, p)| p.clone())
            .collect();
        paths.sort();
        paths
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(names: &[&str]) -> Vec<PathBuf> {
        names.iter().map(PathBuf::from).collect()
    }

    #[test]
    fn a_path_is_listed_once_at_its_last_change() {
        let mut log = Log::new();
        log.note("b".into(), 1);
        log.note("a".into(), 2);
        log.note("b".into(), 3);
        assert_eq!(log.since(0), paths(&["a", "b"]));
        assert_eq!(log.since(2), paths(&["b"]));
        assert_eq!(log.since(3), paths(&[]));
        assert!(log.answers_for(0));
    }

    /// Past its bound the log forgets its older half, and no longer
    /// answers for the tokens they covered (a caller scans in full).
    #[test]
    fn the_log_is_bounded_and_says_what_it_forgot() {
        let mut log = Log::with_cap(4);
        for (t, name) in ["a", "b", "c", "d", "e"].iter().enumerate() {
            log.note((*name).into(), t as u64 + 1);
        }
        assert_eq!(log.by_path.len(), 2);
        assert_eq!(log.by_token.len(), 2);
        assert!(!log.answers_for(2));
        assert!(log.answers_for(3));
        assert_eq!(log.since(3), paths(&["d", "e"]));
        log.note("d".into(), 6);
        assert_eq!(log.since(5), paths(&["d"]));
    }
}
