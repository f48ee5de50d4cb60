//! `mend review`: a terminal UI over a pending session, in the spirit of
//! lazygit's staging view. Keys become actions in `state` (pure), the
//! screen is drawn by `view`, and this loop runs the actions against the
//! session and reloads it.

pub mod state;
pub mod view;

use std::path::PathBuf;

use anyhow::Context as _;
use mend_pending::{Against, Session};
use mend_workspace::{Options, Workspace};
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind};

use state::{Action, Key, Row, State};

/// `mend review` arguments.
#[derive(clap::Args, Debug)]
pub struct ReviewArgs {
    /// Workspace root.
    #[arg(long, default_value = ".")]
    root: PathBuf,
    /// The session to review.
    #[arg(long, default_value = mend_pending::DEFAULT_SESSION)]
    session: String,
}

/// What the screen shows of the selected file.
#[derive(Default)]
struct Shown {
    diff: String,
    note: Option<String>,
}

/// Runs the review screen until `q`.
pub fn run(args: &ReviewArgs) -> anyhow::Result<u8> {
    let ws = Workspace::open(&args.root, Options::default())
        .with_context(|| format!("cannot open {}", args.root.display()))?;
    // Fail before taking over the terminal.
    Session::existing(&ws, &args.session)?;
    let color = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let mut terminal = ratatui::try_init().context("cannot use the terminal")?;
    let result = (|| -> anyhow::Result<()> {
        let mut s = State::new(Vec::new());
        let mut shown = reload(&ws, &args.session, &mut s)?;
        loop {
            terminal.draw(|f| view::draw(f, &s, &shown.diff, shown.note.as_deref(), color))?;
            let Some(key) = next_key()? else { continue };
            match state::update(&mut s, key) {
                Action::Quit => return Ok(()),
                Action::Nothing => continue,
                Action::Select => {}
                action => s.message = Some(perform(&ws, &args.session, action)),
            }
            shown = reload(&ws, &args.session, &mut s)?;
        }
    })();
    ratatui::try_restore()?;
    result.map(|()| crate::EXIT_OK)
}

/// The next key press the screen understands.
fn next_key() -> anyhow::Result<Option<Key>> {
    let Event::Key(k) = event::read()? else {
        return Ok(None);
    };
    if k.kind != KeyEventKind::Press {
        return Ok(None);
    }
    Ok(match k.code {
        KeyCode::Up => Some(Key::Up),
        KeyCode::Down => Some(Key::Down),
        KeyCode::Tab => Some(Key::Tab),
        KeyCode::Esc => Some(Key::Esc),
        KeyCode::Char(c) => Some(Key::Char(c)),
        _ => None,
    })
}

/// Runs an action against the session; the message says how it went.
fn perform(ws: &Workspace, name: &str, action: Action) -> String {
    let run = || -> Result<String, mend_pending::Error> {
        let mut s = Session::existing(ws, name)?;
        Ok(match action {
            Action::AcceptHunk(p, n) => {
                let lock = ws.lock()?;
                s.accept(&lock, std::slice::from_ref(&p), &[n], false)?;
                format!("accepted hunk {n} of {p}")
            }
            Action::RejectHunk(p, n) => {
                s.reject(std::slice::from_ref(&p), &[n])?;
                format!("rejected hunk {n} of {p}")
            }
            Action::AcceptFile(p) => {
                let lock = ws.lock()?;
                let done = s.accept(&lock, std::slice::from_ref(&p), &[], false)?;
                done.first().map_or(format!("{p}: nothing to accept"), |d| {
                    format!("accepted {p} ({})", d.how)
                })
            }
            Action::DiscardFile(p) => {
                s.reject(std::slice::from_ref(&p), &[])?;
                format!("discarded the output of {p}")
            }
            Action::Sync(p) => {
                s.sync(std::slice::from_ref(&p))?;
                format!("synced {p}")
            }
            Action::Nothing | Action::Quit | Action::Select => String::new(),
        })
    };
    run().unwrap_or_else(|e| format!("refused: {e}"))
}

/// Reloads the session's files and the selected file's diff, keeping the
/// selection where it can.
fn reload(ws: &Workspace, name: &str, s: &mut State) -> anyhow::Result<Shown> {
    let session = Session::existing(ws, name)?;
    s.rows = session
        .status()?
        .into_iter()
        .map(|f| Row {
            path: f.path,
            letter: f.status.to_owned(),
        })
        .collect();
    s.selected = s.selected.min(s.rows.len().saturating_sub(1));
    let Some(row) = s.rows.get(s.selected) else {
        s.hunks = 0;
        return Ok(Shown::default());
    };
    let path = std::slice::from_ref(&row.path);
    let mut shown = Shown {
        diff: session.diff(path, Against::Context)?,
        note: None,
    };
    if row.letter == "~M"
        && let Some((merged, conflicts)) = session.merge_preview(&row.path)?
    {
        shown.note = Some(match conflicts {
            0 => "changed locally: the three-way merge is clean, p accepts it".into(),
            n => format!(
                "changed locally: the merge has {n} conflict(s), p is refused\n{}",
                conflict_excerpt(&merged)
            ),
        });
    }
    s.hunks = shown.diff.lines().filter(|l| l.starts_with("@@ ")).count();
    s.hunk = s.hunk.min(s.hunks.saturating_sub(1));
    Ok(shown)
}

/// The conflicted regions of a merge, markers included.
fn conflict_excerpt(merged: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for l in merged.lines() {
        inside |= l.starts_with("<<<<<<< ");
        if inside {
            out.push_str(l);
            out.push('\n');
        }
        if l.starts_with(">>>>>>> ") {
            inside = false;
        }
    }
    out
}
