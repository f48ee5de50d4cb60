//! How a command's failure reaches the person or the script that ran it:
//! its exit code (1 for a refusal, 2 for an error) and, with `--json`,
//! `{"error": Failure}` on standard output, whatever the command.

use mend_service::{Failure, Kind};

/// A command's failure, classified: the shape every front-end reports,
/// and whether it is a refusal (exit 1) rather than an error (exit 2).
pub(crate) struct Classified {
    /// The failure.
    pub(crate) failure: Failure,
    /// Whether the caller can act on it: nothing was written, and the
    /// message says what to do instead.
    pub(crate) refusal: bool,
}

impl Classified {
    /// The exit code.
    pub(crate) fn code(&self) -> u8 {
        if self.refusal {
            crate::EXIT_FAILED
        } else {
            crate::EXIT_USAGE
        }
    }
}

/// Classifies `e`: a library's error, however it was wrapped, as the
/// service classifies it; anything else is an error of kind `error`. An
/// error's message is the whole chain, with the context the binary added.
pub(crate) fn classify(e: &anyhow::Error) -> Classified {
    let found = e.chain().find_map(mend_service::classify);
    let (mut failure, refusal) =
        found.unwrap_or_else(|| (Failure::new(Kind::Error, String::new()), false));
    if !refusal {
        failure.message = format!("{e:#}");
    }
    Classified { failure, refusal }
}

/// Prints a failure as `{"error": Failure}` (one JSON document).
pub(crate) fn print_json(out: &mut impl std::io::Write, failure: Failure) -> anyhow::Result<()> {
    let text = mend_service::to_json(&mend_service::failure::Failed { error: failure })?;
    writeln!(out, "{text}")?;
    Ok(())
}
