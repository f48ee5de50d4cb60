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
        Ok((Barrier { dir, file, passed }, marker))
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

impl Drop for Barrier {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
