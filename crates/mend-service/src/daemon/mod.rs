//! `mend daemon`: one process per root that keeps a watcher and the
//! snapshot state in memory, so that `mend checkpoint create` and `mend
//! turn begin` examine only what changed (see `docs/daemon.md`).
//!
//! The daemon answers on a Unix socket in `.mend/daemon/` (0700), one
//! JSON object per line each way ([`wire`]); it takes requests from its
//! own user only (the folder's mode, and the peer's credentials). One
//! daemon serves a root: it holds `.mend/daemon/lock` while it runs, and a
//! socket left by a killed daemon is replaced by the next. A client that
//! finds no daemon, or one that does not answer in time, does the work
//! itself with a full scan ([`Client`]); so does one whose daemon goes
//! silent at work ([`SILENCE`]) or dies there.

pub(crate) mod ask;
mod client;
mod place;
mod serve;
pub mod wire;

pub use client::{CONNECT_WAIT, Client, Fallback, Found, SILENCE, lock_holder};
pub use serve::Daemon;
pub use wire::Status;
