//! The one shape of a failure, whichever front-end reports it: the CLI's
//! `--json` prints `{"error": Failure}`, MCP returns it as a failed call's
//! structured content, the editor protocol as an error's `data`, and the
//! daemon's wire carries it. `docs/exit-codes.md` tables every [`Kind`]
//! with its exit code.

use serde::{Deserialize, Serialize};

/// What kind of failure, stable for scripts and clients: snake_case on
/// the wire. A refusal (exit 1) says what to do instead and wrote
/// nothing; an error (exit 2) is a failure of the command itself.
/// `busy` is both: a refusal where a pending session is acted on, an error
/// for the root's lock (see [`crate::Error::is_refusal`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Kind {
    /// A file changed while mend was writing it; that change was kept.
    Changed,
    /// A lock is held by another process past the wait (`holder` names it).
    Busy,
    /// Local changes and a proposal overlap.
    Conflict,
    /// A file changed locally in a way the action cannot combine.
    Diverged,
    /// Two changes meet at one path, or a move lands on an existing file.
    Collision,
    /// The new content would pass the size limit.
    TooLarge,
    /// No pending session of that name.
    NoSession,
    /// No turn is open.
    NoTurn,
    /// No checkpoint with that id, or a prefix of several.
    NoCheckpoint,
    /// A hunk number out of range.
    NoHunk,
    /// The path is not in the session, or has no output for the action.
    Nothing,
    /// Hunks were given and the action selected other than one file.
    HunksOfOneFile,
    /// Sync could not carry the outputs over.
    Unsyncable,
    /// A file of the session cannot be read as text now.
    Unreadable,
    /// Hunks numbered by a diff that no longer shows them.
    Unseen,
    /// A state file is damaged or planted; the message names what clears it.
    Corrupt,
    /// Refused for a reason the message gives (a turn's selection that
    /// names nothing, a restore that would lose bytes, a daemon's refusal).
    Refused,
    /// The response held no edits.
    NoEdits,
    /// The response could not be read as edits.
    Parse,
    /// An edit failed (MCP): the message is the retry context.
    EditFailed,
    /// An argument the command cannot use; the message names its form.
    Usage,
    /// A session name that cannot be one.
    BadSession,
    /// The message is not one the protocol allows (editor, MCP framing).
    Protocol,
    /// `read_file` of a file that does not exist.
    NotFound,
    /// A path outside every project root, or a call spanning roots.
    Roots,
    /// A pending session's workspace failed.
    Workspace,
    /// A pending session's planning failed.
    Apply,
    /// A pending session's files could not be read or written.
    Io,
    /// Any other failure of mend's own or the filesystem's; also what a
    /// kind this mend does not know reads as (a newer daemon's).
    #[serde(other)]
    Error,
}

impl Kind {
    /// Every kind, in the order `docs/exit-codes.md` tables them.
    pub const ALL: [Kind; 29] = [
        Kind::Changed,
        Kind::Busy,
        Kind::Conflict,
        Kind::Diverged,
        Kind::Collision,
        Kind::TooLarge,
        Kind::NoSession,
        Kind::NoTurn,
        Kind::NoCheckpoint,
        Kind::NoHunk,
        Kind::Nothing,
        Kind::HunksOfOneFile,
        Kind::Unsyncable,
        Kind::Unreadable,
        Kind::Unseen,
        Kind::Corrupt,
        Kind::Refused,
        Kind::NoEdits,
        Kind::Parse,
        Kind::EditFailed,
        Kind::Usage,
        Kind::BadSession,
        Kind::Protocol,
        Kind::NotFound,
        Kind::Roots,
        Kind::Workspace,
        Kind::Apply,
        Kind::Io,
        Kind::Error,
    ];

    /// The kind's name on the wire.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Changed => "changed",
            Kind::Busy => "busy",
            Kind::Conflict => "conflict",
            Kind::Diverged => "diverged",
            Kind::Collision => "collision",
            Kind::TooLarge => "too_large",
            Kind::NoSession => "no_session",
            Kind::NoTurn => "no_turn",
            Kind::NoCheckpoint => "no_checkpoint",
            Kind::NoHunk => "no_hunk",
            Kind::Nothing => "nothing",
            Kind::HunksOfOneFile => "hunks_of_one_file",
            Kind::Unsyncable => "unsyncable",
            Kind::Unreadable => "unreadable",
            Kind::Unseen => "unseen",
            Kind::Corrupt => "corrupt",
            Kind::Refused => "refused",
            Kind::NoEdits => "no_edits",
            Kind::Parse => "parse",
            Kind::EditFailed => "edit_failed",
            Kind::Usage => "usage",
            Kind::BadSession => "bad_session",
            Kind::Protocol => "protocol",
            Kind::NotFound => "not_found",
            Kind::Roots => "roots",
            Kind::Workspace => "workspace",
            Kind::Apply => "apply",
            Kind::Io => "io",
            Kind::Error => "error",
        }
    }

    /// The kind named `name`, when there is one.
    pub fn named(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A failure as every front-end reports it: its kind, the message (as the
/// text output prints it: what is wrong and what to do instead), and what
/// it concerns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Failure {
    /// What kind of refusal or error.
    pub kind: Kind,
    /// The message.
    pub message: String,
    /// The pending session, when the failure concerns one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The file, relative to the root, when the failure concerns one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// For `busy`: what holds the lock (its command and process id, as it
    /// recorded them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holder: Option<String>,
}

impl Failure {
    /// A failure of `kind` with `message`, concerning nothing in particular.
    pub fn new(kind: Kind, message: impl Into<String>) -> Failure {
        Failure {
            kind,
            message: message.into(),
            session: None,
            path: None,
            holder: None,
        }
    }

    /// The failure, concerning `session`.
    pub fn session(mut self, session: impl Into<String>) -> Failure {
        self.session = Some(session.into());
        self
    }
}

/// Any command's failure with `--json`: `{"error": Failure}`.
#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Failed {
    /// What went wrong.
    pub error: Failure,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_serdes_and_each_names_one_kind() {
        for kind in &Kind::ALL {
            let name = kind.name();
            assert_eq!(serde_json::to_value(kind).unwrap(), name);
            assert_eq!(Kind::named(name), Some(*kind));
            let back: Kind = serde_json::from_value(serde_json::json!(name)).unwrap();
            assert_eq!(back, *kind);
        }
        let mut names: Vec<&str> = Kind::ALL.iter().map(|k| k.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Kind::ALL.len());
    }

    /// `docs/exit-codes.md` tables every kind, in [`Kind::ALL`]'s order.
    #[test]
    fn the_docs_table_every_kind() {
        let doc = include_str!("../../../docs/exit-codes.md");
        let kinds = doc.split("\n## Kinds\n").nth(1).expect("a Kinds section");
        let kinds = kinds.split("\n## ").next().unwrap_or_default();
        let tabled: Vec<&str> = kinds
            .lines()
            .filter_map(|l| l.strip_prefix("| `")?.split('`').next())
            .collect();
        let all: Vec<&str> = Kind::ALL.iter().map(|k| k.name()).collect();
        assert_eq!(tabled, all);
    }

    #[test]
    fn a_failure_prints_only_what_it_concerns() {
        let f = Failure::new(Kind::NoSession, "there is no pending session `x`").session("x");
        assert_eq!(
            serde_json::to_string(&f).unwrap(),
            r#"{"kind":"no_session","message":"there is no pending session `x`","session":"x"}"#
        );
    }
}
