//! Knowing that every event the kernel queued before now has been handled.
//!
//! A read is taken as the writer's finished file only if no event says the
//! file is being written. But the thread handling events can run late (a
//! loaded machine delays it by tens of milliseconds): a read just after a
//! writer truncated the file, and before its event was handled, would look
//! settled and be an empty or partial file. So after each read the reader
//! writes a sentinel file in a folder the same `notify` watcher watches and
//! waits until the handler has seen that write. Events of one watcher come
//! through one kernel queue in order, so every event queued before the
//! sentinel's (the truncation's among them) has been handled by then, and
//! the read is checked against it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};

/// The reader's side: writes the sentinel and waits for it.
pub(crate) struct Barrier {
    dir: PathBuf,
    file: PathBuf,
    passed: Receiver<()>,
    /// Writes of the sentinel, and answers taken, by [`Barrier::pass_counted`].
    written: u64,
    answered: u64,
}

/// The event handler's side: what to look for, and whom to tell.
#[derive(Clone)]
pub(crate) struct Marker {
    pub(crate) file: PathBuf,
    pub(crate) tell: Sender<()>,
}

impl Barrier {
    /// A private folder for the sentinel under the system's temporary
    /// folder; the caller watches [`Barrier::dir`].
    pub(crate) fn new() -> std::io::Result<(Barrier, Marker)> {
        let base = std::env::temp_dir();
        let mut n = 0u32;
        let dir = loop {
            let dir = base.join(format!("mend-watch-{}-{n}", std::process::id()));
            match std::fs::create_dir(&dir) {
                Ok(()) => break dir,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 100 => n += 1,
                Err(e) => return Err(e),
            }
        };
        let file = dir.join("sentinel");
        std::fs::write(&file, b"")?;
        let (tell, passed) = crossbeam_channel::unbounded();
        let marker = Marker {
            file: file.clone(),
            tell,
        };
        let barrier = Barrier {
            dir,
            file,
            passed,
            written: 0,
            answered: 0,
        };
        Ok((barrier, marker))
    }

    /// The folder to watch.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes the sentinel and waits up to `wait` until the handler has
    /// seen it. False when it did not (the read is then tried again).
    pub(crate) fn pass(&self, wait: Duration) -> bool {
        while self.passed.try_recv().is_ok() {}
        if std::fs::write(&self.file, b"x").is_err() {
            return false;
        }
        self.passed.recv_timeout(wait).is_ok()
    }
}

impl Barrier {
    /// [`Barrier::pass`] for a caller that needs certainty: each write is
    /// answered once (the handler answers its close), so an answer to a
    /// write whose wait timed out is not taken for a later one's.
    pub(crate) fn pass_counted(&mut self, wait: Duration) -> bool {
        if std::fs::write(&self.file, b"x").is_err() {
            return false;
        }
        self.written += 1;
        let deadline = std::time::Instant::now() + wait;
        while self.answered < self.written {
            if self.passed.recv_deadline(deadline).is_err() {
                return false;
            }
            self.answered += 1;
        }
        true
    }
}

impl Drop for Barrier {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
