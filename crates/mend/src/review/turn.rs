//! `mend review --turn`: the review screen over the open turn. The keys
//! are those of a pending review; `r` puts a hunk back as the turn began
//! and `x` the whole file, `a` and `p` mark a hunk or the file reviewed.
//! Loading and every key that acts are each one call to
//! `mend_service::turn::act`, naming the version of the change the screen
//! showed, so that an action on a file that changed since is refused and
//! nothing is written.

use mend_service::review::{ReviewFile, Selection};
use mend_service::turn::{Action as TurnAction, Outcome, act};
use mend_workspace::Workspace;

use super::state::{Action, Counts, Row, Shown, State};

/// Runs a turn action with the workspace's lock timeout.
fn run(ws: &Workspace, action: &TurnAction) -> Result<Outcome, mend_service::Error> {
    act(ws.root(), action, ws.options().lock_timeout, &mut |_| {})
}

/// The open turn's files: the screen's rows, counts and turn id.
pub(super) fn load(ws: &Workspace, s: &mut State) -> Result<(), mend_service::Error> {
    let Outcome::Status(status) = run(ws, &TurnAction::Status { ignored: false })? else {
        return Ok(());
    };
    s.session = status.turn.id.clone();
    s.rows = status
        .files
        .iter()
        .map(|f| Row {
            path: f.path.clone(),
            letter: f.status.letter().to_owned(),
        })
        .collect();
    let mut letters = std::collections::BTreeMap::new();
    for r in &s.rows {
        *letters.entry(r.letter.clone()).or_insert(0) += 1;
    }
    s.counts = Counts {
        letters: letters.into_iter().collect(),
        hunks: status.files.iter().map(|f| f.hunks).sum(),
    };
    Ok(())
}

/// The diff pane's content for one file of the turn: what else to know
/// of it (a rename's old name, a type change), then its numbered diff.
pub(super) fn shown(ws: &Workspace, path: &str) -> Result<Shown, mend_service::Error> {
    let Outcome::Diff(d) = run(ws, &TurnAction::Diff(vec![path.to_owned()]))? else {
        return Ok(Shown::default());
    };
    let Some(f) = d.files.iter().find(|f| f.file.path == path) else {
        return Ok(Shown::default());
    };
    let mut shown = Shown::new(&note(&f.file), &f.diff, &f.diff_hunks, None);
    shown.version.clone_from(&f.file.version);
    Ok(shown)
}

fn note(f: &ReviewFile) -> String {
    let mut note = String::new();
    if let Some(from) = &f.from {
        note.push_str(&format!(
            "renamed from {}; x renames it back\n",
            mend_core::text::escape_controls(from)
        ));
    }
    if let Some(change) = f.content.as_ref().and_then(|c| c.change.as_ref()) {
        note.push_str(&format!("{change}; x undoes it\n"));
    }
    note
}

/// Runs a key's action as one turn action on the file as the screen
/// showed it, and says what it did.
pub(super) fn attempt(ws: &Workspace, action: &Action) -> Result<String, mend_service::Error> {
    let (seen, hunks, reject) = match action {
        Action::AcceptHunk(seen, n) => (seen, vec![*n], false),
        Action::RejectHunk(seen, n) => (seen, vec![*n], true),
        Action::AcceptFile(seen) => (seen, Vec::new(), false),
        Action::DiscardFile(seen) => (seen, Vec::new(), true),
        _ => return Ok(String::new()),
    };
    let path = mend_core::text::escape_controls(&seen.path);
    let Some(version) = seen.shown.version.clone() else {
        return Ok(format!(
            "not done: {path} is not shown as it is now; look again"
        ));
    };
    let selection = Selection {
        paths: vec![seen.path.clone()],
        hunks: hunks.clone(),
        seen: Some(version),
    };
    let what = match hunks.first() {
        Some(n) => format!("hunk {n} of {path}"),
        None => path.into_owned(),
    };
    Ok(if reject {
        let safety = match run(ws, &TurnAction::Reject(selection))? {
            Outcome::Rejected(r) => r.safety.id,
            _ => String::new(),
        };
        format!(
            "reverted {what} to the turn's start; `mend turn undo` undoes it (safety checkpoint {safety})"
        )
    } else {
        run(ws, &TurnAction::Accept(selection))?;
        format!("accepted {what}")
    })
}
