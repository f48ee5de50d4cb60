//! The progress bar of a snapshot (a checkpoint's, a turn's begin, an
//! apply's checkpoint first), and the notes of who took it.

use std::cell::RefCell;
use std::io::Write as _;
use std::time::{Duration, Instant};

/// A progress bar on standard error for a checkpoint's snapshot, shown
/// once it has taken more than a second.
pub(crate) struct Progress {
    start: Instant,
    bar: RefCell<Option<indicatif::ProgressBar>>,
}

impl Default for Progress {
    fn default() -> Self {
        Progress {
            start: Instant::now(),
            bar: RefCell::new(None),
        }
    }
}

impl Progress {
    /// `n` files examined so far.
    pub(crate) fn tick(&self, n: usize) {
        let mut bar = self.bar.borrow_mut();
        if bar.is_none() && self.start.elapsed() > Duration::from_secs(1) {
            let b = indicatif::ProgressBar::with_draw_target(
                None,
                indicatif::ProgressDrawTarget::stderr(),
            );
            b.set_style(
                indicatif::ProgressStyle::with_template(
                    "{spinner} checkpoint: {pos} files examined",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
            );
            *bar = Some(b);
        }
        if let Some(b) = bar.as_ref() {
            b.set_position(n as u64);
        }
    }

    /// The snapshot is done.
    pub(crate) fn clear(&self) {
        if let Some(b) = self.bar.borrow_mut().take() {
            b.finish_and_clear();
        }
    }
}

/// Prints a service's note on standard error: a verbose one only when
/// `verbose` (`--verbose`).
pub(crate) fn note(verbose: bool) -> impl FnMut(mend_service::Note) {
    move |n| {
        if verbose || !n.verbose {
            let _ = writeln!(std::io::stderr(), "mend: {}", n.text);
        }
    }
}
