//! Apply and propose: a parsed (or streamed) response planned against the
//! files under the workspace lock, then written, held in a pending session
//! for review, or only shown (a dry run).

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::time::Duration;

use mend_apply::{ApplyError, ApplyOptions, BeforeWrite};
pub use mend_apply::{Expected, keep_syntax_trees};
use mend_checkpoint::{Checkpoint, Checkpoints, CreateOptions};
use mend_core::ApplyReport;
use mend_core::formats::Format;
use mend_core::report::syntax::SyntaxPolicy;
use mend_pending::{Propose, Session, StatusReport};
use mend_workspace::{ContentHash, Lock, Recovery, Workspace};

use crate::stream::{self, Streamed};
use crate::{Error, lock_recovered};

/// Where an apply's results go.
#[derive(Debug, Clone, Copy)]
pub enum Destination<'a> {
    /// Into the files (or nowhere, for a dry run).
    Files,
    /// Held as pending changes in a session, for a person to review.
    Pending {
        /// The session.
        session: &'a str,
        /// What names the front-end in the session's lock, and in the
        /// request the apply is while it runs (`mend apply --pending
        /// --stream`), which the actions it refuses name.
        holder: &'a str,
    },
}

/// What taking a checkpoint right before the write tells its caller.
#[derive(Clone, Copy)]
pub struct CheckpointFirst<'a> {
    /// How many files the snapshot has examined so far.
    pub progress: &'a (dyn Fn(usize) + 'a),
    /// The checkpoint, once made (before anything is written).
    pub made: &'a (dyn Fn(&Checkpoint) + 'a),
}

/// How to apply.
#[derive(Default)]
pub struct ApplyRequest<'a> {
    /// What the edits were based on, by normalized path (see
    /// [`expectations`] and [`Expected::parse`]).
    pub expect: HashMap<String, Expected>,
    /// Plan and show only.
    pub dry_run: bool,
    /// Write the edits that succeed (never with a pending destination).
    pub partial: bool,
    /// The syntax check.
    pub syntax: SyntaxPolicy,
    /// Checkpoint the worktree under the apply's lock right before writing.
    pub checkpoint: Option<CheckpointFirst<'a>>,
    /// Add the written files to git's index.
    pub stage: bool,
    /// Read each changed file back for its version (`expected_version`),
    /// remembering its content for a later stale edit.
    pub versions: bool,
    /// A pause after each commit step, for tests that interrupt a commit.
    pub commit_delay: Option<Duration>,
}

/// What an apply did.
#[derive(Debug)]
pub struct Applied {
    /// The report of every edit.
    pub report: ApplyReport,
    /// What finishing an interrupted transaction did first, if anything.
    pub recovery: Option<Recovery>,
    /// With [`ApplyRequest::versions`]: each changed file's new version.
    pub versions: BTreeMap<String, ContentHash>,
    /// For a pending destination: the session and what it now holds.
    pub held: Option<Held>,
}

/// What a proposal left in its session.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct Held {
    /// The session.
    pub pending: String,
    /// The files the proposal holds outputs for, with their letters;
    /// `null` when it failed or was a dry run.
    pub held: Option<StatusReport>,
}

/// Opens pending session `session` of `ws`, made when missing: a server
/// in review mode (`mend mcp --pending`) checks its name at start, not
/// at its first call.
pub fn open_session(ws: &Workspace, session: &str) -> Result<(), Error> {
    mend_pending::Session::open(ws, session)?;
    Ok(())
}

/// `--expect PATH=HASH` arguments, by normalized path. A `HASH` that is
/// not one mend gave out is refused as stale when the file is planned,
/// as a wrong one is.
pub fn expectations(ws: &Workspace, args: &[String]) -> Result<HashMap<String, Expected>, Error> {
    let mut expect = HashMap::new();
    for e in args {
        let Some((path, hash)) = e.rsplit_once('=') else {
            return Err(Error::Usage(format!(
                "--expect takes PATH=HASH, got `{}`",
                mend_core::text::escape_controls(e)
            )));
        };
        expect.insert(ws.normalize(path)?, Expected::parse(hash));
    }
    Ok(expect)
}

/// One apply, from its start (the session opened, or the checkpoints
/// found) to its outcome.
pub struct Applier<'w> {
    ws: &'w Workspace,
    session: Option<Session<'w>>,
    /// For a pending destination (not a dry run): the request this apply
    /// is, held from its start to its end, so no decision is made on the
    /// session while the proposal comes in.
    request: Option<mend_pending::Request>,
    req: ApplyRequest<'w>,
    before_write: Option<BeforeWrite<'w>>,
}

impl<'w> Applier<'w> {
    /// Starts an apply to `dest`. For a pending destination this starts
    /// a request into the session (see [`Session::request`]): accept,
    /// reject, sync, add and drop are refused until the apply ends, or its
    /// process does.
    pub fn new(
        ws: &'w Workspace,
        dest: Destination<'_>,
        req: ApplyRequest<'w>,
    ) -> Result<Applier<'w>, Error> {
        let (session, request) = match dest {
            Destination::Files => (None, None),
            Destination::Pending { session, holder } => {
                let mut s = Session::open(ws, session)?;
                s.set_syntax(req.syntax);
                s.set_holder(holder);
                // A dry run changes nothing, so it is no request.
                let request = (!req.dry_run).then(|| s.request(holder)).transpose()?;
                (Some(s), request)
            }
        };
        // The checkpoints are found before the response is read; the
        // checkpoint itself is taken under the apply's lock.
        let before_write = match req.checkpoint {
            Some(c) if !req.dry_run && session.is_none() => Some(checkpoint_first(ws, c)?),
            _ => None,
        };
        Ok(Applier {
            ws,
            session,
            request,
            req,
            before_write,
        })
    }

    /// Reads a response as it arrives, checking each block against its
    /// file (or, for a pending destination, the session's view of it) as
    /// soon as it is complete, without the lock; `line` gets each entry's
    /// status line as it is known.
    pub fn stream(
        &self,
        input: &mut dyn Read,
        format: Format,
        line: &mut dyn FnMut(usize, &str) -> std::io::Result<()>,
    ) -> Result<Streamed, Error> {
        let partial = self.req.partial;
        match &self.session {
            None => {
                let source = |raw: &str| self.ws.read(raw);
                stream::parse(self.ws, &source, input, format, partial, line)
            }
            Some(s) => {
                let recorder = s.recorder();
                let source = |raw: &str| recorder.read(raw);
                let mut out = stream::parse(self.ws, &source, input, format, partial, line)?;
                let plans = std::mem::take(&mut out.plans);
                out.recorded = Some(recorder.finish(plans));
                Ok(out)
            }
        }
    }

    /// Applies a parsed response (or a streamed one, whose plans are reused
    /// for files unchanged since) under the workspace lock.
    pub fn finish(self, input: Streamed) -> Result<Applied, Error> {
        let Applier {
            ws,
            session,
            request,
            req,
            before_write,
        } = self;
        let applied = match session {
            Some(s) => propose(ws, s, input, req),
            None => write(ws, input, req, before_write),
        };
        // The request ends once the proposal is held (or refused).
        drop(request);
        applied
    }
}

/// Applies to the files.
fn write(
    ws: &Workspace,
    input: Streamed,
    req: ApplyRequest<'_>,
    before_write: Option<BeforeWrite<'_>>,
) -> Result<Applied, Error> {
    let (lock, recovery) = lock_recovered(ws)?;
    let opts = ApplyOptions {
        dry_run: req.dry_run,
        partial: req.partial,
        expect: req.expect,
        before_write,
        preplanned: input.plans,
        commit_delay: req.commit_delay,
        syntax: req.syntax,
    };
    let report = match (input.text, input.parsed) {
        (Some((text, format)), _) => mend_apply::run_text(ws, &lock, &text, format, &opts)?,
        (None, parsed) => {
            let parsed = parsed.map_err(ApplyError::Parse)?;
            mend_apply::run_parsed(ws, &lock, &parsed, &opts)?
        }
    };
    // Read back under the lock, so the snapshots go in the `.mend` it
    // verified.
    let versions = if req.versions {
        read_back(&report, &|p| {
            let snap = ws.read(p)?;
            if let Some(t) = snap.text() {
                // A version is still a version without its snapshot.
                let _ = ws.remember_locked(&lock, t);
            }
            Ok(snap)
        })
    } else {
        BTreeMap::new()
    };
    drop(lock);
    if req.stage && report.written {
        let (changed, deleted) = crate::checkpoint::stage_list(&report);
        crate::checkpoint::stage(ws.root(), &changed, &deleted)?;
    }
    Ok(Applied {
        report,
        recovery,
        versions,
        held: None,
    })
}

/// Holds the results in the session instead of writing them.
fn propose(
    ws: &Workspace,
    mut s: Session<'_>,
    mut input: Streamed,
    req: ApplyRequest<'_>,
) -> Result<Applied, Error> {
    let recorded = input.recorded.take();
    let parsed = input.into_parsed().map_err(ApplyError::Parse)?;
    let (_lock, recovery) = lock_recovered(ws).map_err(pending_lock)?;
    let opts = Propose {
        expect: req.expect,
        dry_run: req.dry_run,
        streamed: recorded,
    };
    let proposal = s.propose_with(&parsed, opts)?;
    let versions = if req.versions {
        read_back(&proposal.report, &|p| s.seen(p))
    } else {
        BTreeMap::new()
    };
    Ok(Applied {
        report: proposal.report,
        recovery,
        versions,
        held: Some(Held {
            pending: s.name().to_owned(),
            held: proposal.held,
        }),
    })
}

/// The version of each file a successful report changed, as `read`
/// gives it now (a file that cannot be read has none).
fn read_back(
    report: &ApplyReport,
    read: &dyn Fn(&str) -> Result<mend_workspace::Snapshot, mend_workspace::Error>,
) -> BTreeMap<String, ContentHash> {
    let mut versions = BTreeMap::new();
    for f in report.files.iter().filter(|_| report.ok) {
        let p = f.renamed_to.as_deref().unwrap_or(&f.path);
        if let Ok(snap) = read(p)
            && let Some(t) = snap.text()
        {
            versions.insert(snap.rel.clone(), t.hash);
        }
    }
    versions
}

/// A busy lock is a session's refusal (`busy`, exit 1) wherever a session
/// is acted on.
pub(crate) fn pending_lock(e: Error) -> Error {
    match e {
        Error::Workspace(busy @ mend_workspace::Error::Locked { .. }) => {
            Error::Pending(mend_pending::Error::from(busy))
        }
        other => other,
    }
}

/// The step before writing: a checkpoint taken under the apply's lock.
fn checkpoint_first<'a>(ws: &Workspace, c: CheckpointFirst<'a>) -> Result<BeforeWrite<'a>, Error> {
    let cps = Checkpoints::open(ws.root())?;
    let CheckpointFirst { progress, made } = c;
    Ok(Box::new(move |lock: &Lock| {
        let opts = CreateOptions {
            label: Some("before mend apply".into()),
            ..CreateOptions::default()
        };
        let cp = cps
            .create_locked(lock, &opts, &mut |n| progress(n))
            .map_err(|e| e.to_string())?;
        made(&cp);
        Ok(())
    }))
}
