//! `mend review`: a terminal UI over a pending session, in the spirit of
//! lazygit's staging view. Keys become actions in `state` (pure), the
//! screen is drawn by `view`, and this loop runs the actions against the
//! session and reloads it. Between keys it watches the session's index and
//! files, and reloads when another command changed them.

pub(crate) mod state;
mod turn;
pub(crate) mod view;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use mend_pending::Session;
use mend_service::pending::{self, Actor, Checked, Outcome, act_unless_changed};
use mend_service::review::{Selection, Stamp};
use mend_workspace::{Options, Workspace};
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};

use state::{Action, Counts, Key, Reviewed, Row, Seen, Shown, State};

/// How long the loop waits for a key before it looks for outside changes.
const POLL: Duration = Duration::from_millis(200);

/// `mend review` arguments.
#[derive(clap::Args, Debug)]
pub(crate) struct ReviewArgs {
    /// Workspace root [default: the git worktree holding the current
    /// folder, else the current folder].
    #[arg(long)]
    root: Option<PathBuf>,
    /// The session to review.
    #[arg(long, default_value = mend_pending::DEFAULT_SESSION)]
    session: String,
    /// Review the open turn (`mend turn`) instead: every change since it
    /// began, whoever made it; `r` reverts a hunk and `x` a whole file to
    /// the turn's start (undoably), `a` and `p` mark them reviewed.
    #[arg(long, conflicts_with = "session")]
    turn: bool,
    /// Seconds a key that writes (accept, reject, sync) waits for another
    /// mend process holding the session's or the workspace's lock. The
    /// screen says at once who holds it, and keys typed while it waits
    /// are dropped, not run afterwards. Refreshing the screen never
    /// waits: it tries again a moment later.
    #[arg(long, value_name = "SECS", default_value_t = 5)]
    lock_timeout: u64,
}

impl ReviewArgs {
    /// The one root rule: `--root`, else the git worktree holding the
    /// current folder, else the current folder.
    fn root(&self) -> anyhow::Result<PathBuf> {
        Ok(mend_service::root(self.root.as_deref()))
    }
}

/// The workspace at `root`, whose lock waits at most `wait` seconds.
fn open(root: &std::path::Path, wait: u64) -> anyhow::Result<Workspace> {
    let options = Options {
        lock_timeout: Duration::from_secs(wait),
        ..Options::default()
    };
    mend_service::roots::open(root, options)
        .with_context(|| format!("cannot open {}", root.display()))
}

/// Runs the review screen until `q`, Esc or Ctrl-C.
pub(crate) fn run(args: &ReviewArgs) -> anyhow::Result<u8> {
    let root = args.root()?;
    // Actions wait up to --lock-timeout; reloads never wait.
    let (ws, quick) = (open(&root, args.lock_timeout)?, open(&root, 0)?);
    // Fail before taking over the terminal, as `mend pending` does.
    let first = if args.turn {
        let mut s = State::turn();
        turn::load(&ws, &mut s)
            .map(|()| (Watch::turn(&ws), s))
            .map_err(anyhow::Error::from)
    } else {
        Watch::new(&quick, &args.session).map(|w| (w, State::new(&args.session, Vec::new())))
    };
    let (mut watch, first) = match first {
        Ok(first) => first,
        Err(e) => return crate::pending::fail(&mut std::io::stdout().lock(), false, e, false),
    };
    let color = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let mut terminal = ratatui::try_init().context("cannot use the terminal")?;
    let result = (|| -> anyhow::Result<()> {
        let mut s = first;
        let fit = |s: &mut State, size: ratatui::layout::Size| {
            let (files, diff) = view::heights(size.into(), s);
            s.fit(files, diff);
            s.width = view::diff_width(size.into(), s);
        };
        fit(&mut s, terminal.size()?);
        reload(&quick, &mut watch, &mut s)?;
        loop {
            fit(&mut s, terminal.size()?);
            terminal.draw(|f| view::draw(f, &s, color))?;
            let Some(input) = next_key()? else {
                if watch.changed(&quick, &s) {
                    reload(&quick, &mut watch, &mut s)?;
                }
                look_for_requests(&quick, &mut s);
                continue;
            };
            let Some(key) = input else { continue };
            match state::update(&mut s, key) {
                Action::Quit => return Ok(()),
                Action::Nothing => continue,
                Action::Select => {
                    if show_selected(&quick, &mut s, false)? {
                        watch.again();
                    }
                }
                action => {
                    let said = match attempt(&quick, (s.reviewed, &s.session), &action) {
                        Err(e) if busy_now(&e).is_some() => {
                            // Say who holds it before waiting, not after.
                            s.message = busy_now(&e)
                                .map(|b| format!("{b}; waiting up to {} s…", args.lock_timeout));
                            terminal.draw(|f| view::draw(f, &s, color))?;
                            let said = said_of(attempt(&ws, (s.reviewed, &s.session), &action));
                            match dropped_keys()? {
                                0 => said,
                                n => format!(
                                    "{said} ({n} key(s) typed while it waited were dropped)"
                                ),
                            }
                        }
                        done => said_of(done),
                    };
                    s.message = Some(said);
                    reload(&quick, &mut watch, &mut s)?;
                }
            }
        }
    })();
    ratatui::try_restore()?;
    result.map(|()| crate::EXIT_OK)
}

/// Waits a moment for input: `None` when there was none, `Some(None)` for
/// input the screen does not use (a resize redraws).
fn next_key() -> anyhow::Result<Option<Option<Key>>> {
    if !event::poll(POLL)? {
        return Ok(None);
    }
    let Event::Key(k) = event::read()? else {
        return Ok(Some(None));
    };
    if k.kind != KeyEventKind::Press {
        return Ok(Some(None));
    }
    Ok(Some(match k.code {
        KeyCode::Up => Some(Key::Up),
        KeyCode::Down => Some(Key::Down),
        KeyCode::PageDown => Some(Key::PageDown),
        KeyCode::PageUp => Some(Key::PageUp),
        KeyCode::Tab => Some(Key::Tab),
        KeyCode::Esc => Some(Key::Esc),
        // The terminal is raw: Ctrl-C arrives as a key, not a signal.
        KeyCode::Char('c') if k.modifiers.contains(KeyModifiers::CONTROL) => Some(Key::Interrupt),
        KeyCode::Char(c) => Some(Key::Char(c)),
        _ => None,
    }))
}

/// Keys typed while an action waited for a lock, read and dropped: the
/// screen they were typed at is gone, so running them would act blind.
fn dropped_keys() -> anyhow::Result<usize> {
    let mut n = 0;
    while event::poll(Duration::ZERO)? {
        if matches!(event::read()?, Event::Key(k) if k.kind == KeyEventKind::Press) {
            n += 1;
        }
    }
    Ok(n)
}

/// When an action's error says a lock is held: who holds it.
fn busy_now(e: &mend_service::Error) -> Option<String> {
    match e {
        mend_service::Error::Pending(p) => busy(p),
        mend_service::Error::Checkpoint(mend_checkpoint::Error::Workspace(w)) => locked(w),
        _ => None,
    }
}

/// When `e` says a lock is held: who holds it, for the status area.
fn busy(e: &mend_pending::Error) -> Option<String> {
    match e {
        mend_pending::Error::Busy { holder, .. } => Some(format!(
            "busy: held by {}",
            mend_core::text::escape_controls(holder)
        )),
        mend_pending::Error::Workspace(w) => locked(w),
        _ => None,
    }
}

/// When `e` says the workspace's lock is held: who holds it.
fn locked(e: &mend_workspace::Error) -> Option<String> {
    match e {
        mend_workspace::Error::Locked { holder, .. } => Some(format!(
            "busy: held by {} (the workspace's lock, .mend/lock)",
            mend_core::text::escape_controls(holder)
        )),
        _ => None,
    }
}

/// Runs an action against the session, if the session still shows what
/// the person saw; the message says how it went.
#[cfg(test)]
fn perform(ws: &Workspace, name: &str, action: &Action) -> String {
    said_of(attempt(ws, (Reviewed::Session, name), action))
}

/// What the status area says of an action's outcome.
fn said_of(done: Result<String, mend_service::Error>) -> String {
    done.unwrap_or_else(|e| match e {
        mend_service::Error::Pending(mend_pending::Error::Conflict { .. }) => {
            format!(
                "refused: {e}. Here: m writes the markers, after you confirm; x rejects the output"
            )
        }
        e => format!("refused: {e}"),
    })
}

/// Runs an action against the session, if the session still shows what
/// the person saw (see `mend_service::pending::act_unless_changed`), and
/// says what it did.
fn attempt(
    ws: &Workspace,
    (reviewed, name): (Reviewed, &str),
    action: &Action,
) -> Result<String, mend_service::Error> {
    if reviewed == Reviewed::Turn {
        return turn::attempt(ws, action);
    }
    let Some(todo) = to_service(action) else {
        return Ok(String::new());
    };
    let who = Actor {
        session: name,
        holder: "mend review",
        merge: None,
    };
    let changed = |s: &Session<'_>| match seen_of(action) {
        Some(seen) => changed_since(s, seen),
        None => Ok(None),
    };
    let done = match act_unless_changed(ws, &who, todo, &changed)? {
        Checked::Recovered(r) => return Ok(format!("{r}; nothing else was done, look again")),
        Checked::Changed(why) => return Ok(why),
        Checked::Done(done) => done,
    };
    Ok(match (action, done) {
        (Action::AcceptHunk(seen, n), _) => format!("accepted hunk {n} of {}", seen.path),
        (Action::RejectHunk(seen, n), _) => format!("rejected hunk {n} of {}", seen.path),
        (
            Action::AcceptFile(seen) | Action::AcceptMarkers(seen),
            Outcome::Accepted { accepted },
        ) => accepted
            .first()
            .map_or(format!("{}: nothing to accept", seen.path), |d| {
                format!("accepted {} ({})", seen.path, d.how)
            }),
        (Action::DiscardFile(seen), _) => format!("discarded the output of {}", seen.path),
        (Action::Sync(p), _) => format!("synced {p}"),
        _ => String::new(),
    })
}

/// A key's action as the service's: a hunk is named with the version of
/// the proposal the screen showed it in, as a turn's are, so it is
/// refused once the proposal is another.
fn to_service(action: &Action) -> Option<pending::Action> {
    let one = |p: &str| vec![p.to_owned()];
    let pick = |seen: &Seen, hunks: Vec<usize>| Selection {
        paths: one(&seen.path),
        seen: (!hunks.is_empty())
            .then(|| seen.shown.version.clone())
            .flatten(),
        hunks,
    };
    Some(match action {
        Action::AcceptHunk(seen, n) => pending::Action::Accept {
            selection: pick(seen, vec![*n]),
            markers: false,
        },
        Action::RejectHunk(seen, n) => pending::Action::Reject(pick(seen, vec![*n])),
        Action::AcceptFile(seen) | Action::AcceptMarkers(seen) => pending::Action::Accept {
            selection: pick(seen, Vec::new()),
            markers: matches!(action, Action::AcceptMarkers(_)),
        },
        Action::DiscardFile(seen) => pending::Action::Reject(pick(seen, Vec::new())),
        Action::Sync(p) => pending::Action::Sync(one(p)),
        Action::Nothing | Action::Quit | Action::Select => return None,
    })
}

/// What the person saw, for the actions that act on it.
fn seen_of(action: &Action) -> Option<&Seen> {
    match action {
        Action::AcceptHunk(seen, _)
        | Action::RejectHunk(seen, _)
        | Action::AcceptFile(seen)
        | Action::AcceptMarkers(seen)
        | Action::DiscardFile(seen) => Some(seen),
        Action::Nothing | Action::Quit | Action::Select | Action::Sync(_) => None,
    }
}

/// Why the action must not run: the file's diff or merge preview is no
/// longer what the screen showed when the key was pressed.
fn changed_since(s: &Session<'_>, seen: &Seen) -> Result<Option<String>, mend_pending::Error> {
    let now = on_screen(&pending::shown(s, &seen.path)?);
    Ok((now != seen.shown).then(|| {
        format!(
            "not done: {} changed since it was shown (another command, or an edit); look again",
            seen.path
        )
    }))
}

/// The diff pane's content for one file: its diff from the context and,
/// when accepting it would merge with local changes, the merge preview.
fn on_screen(now: &pending::Shown) -> Shown {
    let (diff, cut, version) = match &now.diff {
        Some(d) => (
            d.diff.as_str(),
            d.diff_hunks.as_slice(),
            d.file.version.clone(),
        ),
        None => ("", &[][..], None),
    };
    let mut shown = match &now.merge {
        None => Shown::new("", diff, cut, None),
        Some((merged, conflicts)) => {
            Shown::new(&merge_note(merged, *conflicts), diff, cut, Some(*conflicts))
        }
    };
    shown.version = version;
    shown
}

/// What the pane says above a file that accepting would merge.
fn merge_note(merged: &str, conflicts: usize) -> String {
    match conflicts {
        0 => "changed locally: the three-way merge is clean\np accepts the merge".to_owned(),
        n => format!(
            "changed locally: the merge has {n} conflict(s)\np is refused; m writes conflict markers\n{}",
            conflict_excerpt(merged)
        ),
    }
}

/// Loads the selected file into the diff pane; a file that cannot be
/// shown says why there (wrapped to the pane), and the rest of the
/// session still works. `true` when that was because a lock is busy, so
/// the caller looks again soon.
fn show_selected(ws: &Workspace, s: &mut State, same_file: bool) -> anyhow::Result<bool> {
    let mut busy_now = false;
    let shown = match s.path() {
        Some(p) => {
            let got = match s.reviewed {
                Reviewed::Session => pending::show(ws, &s.session, p).map(|now| on_screen(&now)),
                Reviewed::Turn => turn::shown(ws, p),
            };
            got.unwrap_or_else(|e| {
                busy_now = self::busy_now(&e).is_some();
                let why = format!("cannot show {p}: {e}");
                Shown::new(&view::wrap(&why, s.width).join("\n"), "", &[], None)
            })
        }
        None => Shown::default(),
    };
    s.show(shown, same_file);
    Ok(busy_now)
}

/// What the status area adds while a lock keeps the screen from
/// refreshing.
const STALE: &str = "; the screen shows the session as it was, and refreshes once it is free";

/// Whether a request is coming into the session: one starting, ending or
/// dying shows at the next look, which costs a few system calls (no lock
/// is waited for), so it runs between keys. A look that fails changes
/// nothing: the service refuses the keys anyway while a request runs.
fn look_for_requests(ws: &Workspace, s: &mut State) {
    if s.reviewed != Reviewed::Session {
        return;
    }
    if let Ok(now) = pending::streaming(ws, &s.session) {
        s.streaming = now;
    }
}

/// Reloads the session's files, counts and the selected file, keeping the
/// selection on the same file where it can. The watch keeps the stamp the
/// session had before it was read, so a change made meanwhile is seen.
fn reload(ws: &Workspace, watch: &mut Watch, s: &mut State) -> anyhow::Result<()> {
    if s.reviewed == Reviewed::Turn {
        return reload_turn(ws, watch, s);
    }
    watch.was = watch.stamp(ws, s);
    let was = s.path().map(str::to_owned);
    let who = Actor {
        session: &s.session,
        holder: "mend review",
        merge: None,
    };
    let status = match pending::act(ws, &who, pending::Action::Status) {
        Ok(Outcome::Status(status)) => status,
        Ok(_) => return Ok(()),
        Err(e) if busy_now(&e).is_some() => {
            watch.again();
            if s.message.as_deref().is_none_or(|m| m.starts_with("busy: ")) {
                s.message = busy_now(&e).map(|b| format!("{b}{STALE}"));
            }
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    };
    if s.message.as_deref().is_some_and(|m| m.ends_with(STALE)) {
        s.message = None;
    }
    s.streaming = status.streaming;
    s.rows = status
        .files
        .iter()
        .map(|f| Row {
            path: f.path.clone(),
            letter: f.status.letter().to_owned(),
        })
        .collect();
    if let Some(i) = was
        .as_deref()
        .and_then(|p| s.rows.iter().position(|r| r.path == p))
    {
        s.selected = i;
    }
    s.selected = s.selected.min(s.rows.len().saturating_sub(1));
    let mut letters = BTreeMap::new();
    for r in &s.rows {
        *letters.entry(r.letter.clone()).or_insert(0) += 1;
    }
    // The status counts each file's numbered hunks.
    let hunks = status.files.iter().map(|f| f.hunks).sum();
    s.counts = Counts {
        letters: letters.into_iter().collect(),
        hunks,
    };
    let same = was.is_some() && was.as_deref() == s.path();
    if show_selected(ws, s, same)? {
        watch.again();
    }
    Ok(())
}

/// [`reload`] of the open turn. Loading the selected file's diff records
/// it in the turn's state as shown, so the stamp is taken after it; the
/// watch also looks again now and then (`Watch::every`), for files the
/// stamp does not cover (a new one anywhere).
fn reload_turn(ws: &Workspace, watch: &mut Watch, s: &mut State) -> anyhow::Result<()> {
    let began = Instant::now();
    let was = s.path().map(str::to_owned);
    match turn::load(ws, s) {
        Ok(()) => {
            if s.message.as_deref().is_some_and(|m| m.ends_with(STALE)) {
                s.message = None;
            }
        }
        Err(e) if busy_now(&e).is_some() => {
            watch.again();
            if s.message.as_deref().is_none_or(|m| m.starts_with("busy: ")) {
                s.message = busy_now(&e).map(|b| format!("{b}{STALE}"));
            }
            return Ok(());
        }
        // The turn ended, or its state cannot be read: say so, list nothing.
        Err(e) => {
            s.rows.clear();
            s.counts = Counts::default();
            s.message = Some(format!("cannot show the turn: {e}"));
        }
    }
    if let Some(i) = was
        .as_deref()
        .and_then(|p| s.rows.iter().position(|r| r.path == p))
    {
        s.selected = i;
    }
    s.selected = s.selected.min(s.rows.len().saturating_sub(1));
    let same = was.is_some() && was.as_deref() == s.path();
    let held = show_selected(ws, s, same)?;
    watch.was = watch.stamp(ws, s);
    // A worktree that takes long to look at is looked at less often, so
    // that an open screen never keeps a core busy.
    watch.every = TURN_REFRESH.max(began.elapsed() * 10);
    watch.loaded = Instant::now();
    if held {
        watch.again();
    }
    Ok(())
}

/// How often the screen of a turn looks at the whole worktree again, at
/// the most.
const TURN_REFRESH: Duration = Duration::from_secs(3);

/// Watches a session for changes other commands make, by its metadata
/// alone: cheap enough to look between keys.
struct Watch {
    index: PathBuf,
    was: Stamp,
    /// For a turn: when it was last loaded, and how long until it is
    /// looked at again ([`TURN_REFRESH`], or ten times as long as the
    /// load took).
    turn: bool,
    loaded: Instant,
    every: Duration,
}

impl Watch {
    fn new(ws: &Workspace, name: &str) -> anyhow::Result<Watch> {
        Ok(Watch {
            index: pending::index_path(ws, name)?,
            was: Stamp::new(),
            turn: false,
            loaded: Instant::now(),
            every: TURN_REFRESH,
        })
    }

    /// A watch of the open turn: its state file and the files it lists.
    fn turn(ws: &Workspace) -> Watch {
        Watch {
            index: mend_service::turn::state_path(ws.root()),
            was: Stamp::new(),
            turn: true,
            loaded: Instant::now(),
            every: TURN_REFRESH,
        }
    }

    /// The index's and the listed files' metadata now. A file added to
    /// the list changes the stamp once more, after the reload that shows
    /// it; the reload after that is stable.
    fn stamp(&self, ws: &Workspace, s: &State) -> Stamp {
        let files = s.rows.iter().map(|r| ws.root().join(&r.path));
        mend_service::review::stamp(std::iter::once(self.index.clone()).chain(files))
    }

    /// Makes the next look see a change, so a reload a busy lock cut
    /// short is tried again.
    fn again(&mut self) {
        self.was = Stamp::new();
    }

    /// Whether the session or one of its files changed since the last
    /// reload.
    fn changed(&self, ws: &Workspace, s: &State) -> bool {
        (self.turn && self.loaded.elapsed() >= self.every) || self.stamp(ws, s) != self.was
    }
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

#[cfg(test)]
mod tests {
    use mend_core::formats::{self, Format};
    use mend_pending::Session;
    use mend_workspace::{Options, Workspace};

    use super::state::{Action, Key, State, update};
    use super::view::screen_of;
    use super::{Watch, look_for_requests, perform, reload};

    /// Twenty lines: `two`, `five` and `nine` far enough apart (lines 2,
    /// 10 and 18) that each change to them is a hunk of its own.
    const TEN: &str = "one\ntwo\nthree\nfour\nl5\nl6\nl7\nl8\nl9\nfive\nl11\nl12\nl13\nl14\nl15\nl16\nl17\nnine\nl19\nten\n";

    fn sr(path: &str, search: &str, replace: &str) -> String {
        format!("{path}\n<<<<<<< SEARCH\n{search}\n=======\n{replace}\n>>>>>>> REPLACE\n")
    }

    /// Another command proposing into the session, as `mend apply
    /// --pending` would.
    fn propose(ws: &Workspace, response: &str) {
        let parsed = formats::parse(response, Format::Auto).unwrap();
        let report = Session::open(ws, "default")
            .unwrap()
            .propose(&parsed)
            .unwrap();
        assert!(report.ok, "{report:?}");
    }

    /// A root with f.txt and g.txt (TEN), hunks on lines 2, 10 and 18 of
    /// f.txt proposed, and the review state loaded from it.
    fn proposed() -> (tempfile::TempDir, Workspace, State, Watch) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f.txt"), TEN).unwrap();
        std::fs::write(dir.path().join("g.txt"), TEN).unwrap();
        let ws = Workspace::open(dir.path(), Options::default()).unwrap();
        let edits = [("two", "TWO"), ("five", "FIVE"), ("nine", "NINE")];
        let response: Vec<String> = edits.iter().map(|(a, b)| sr("f.txt", a, b)).collect();
        propose(&ws, &response.join("\n"));
        let mut s = State::new("default", Vec::new());
        let mut watch = Watch::new(&ws, "default").unwrap();
        reload(&ws, &mut watch, &mut s).unwrap();
        (dir, ws, s, watch)
    }

    /// The watch sees a proposal, a local edit and a rejection made by
    /// other commands, and a reload shows them: files, letters, counts,
    /// the merge preview.
    #[test]
    fn the_view_refreshes_when_the_session_changes_outside() {
        let (dir, ws, mut s, mut watch) = proposed();
        assert!(watch.changed(&ws, &s), "the first stamp covered no files");
        reload(&ws, &mut watch, &mut s).unwrap();
        assert!(!watch.changed(&ws, &s), "nothing changed since");
        insta::assert_snapshot!("refresh_before", screen_of(&mut s, 80, 14));
        propose(&ws, &sr("g.txt", "three", "THREE"));
        assert!(watch.changed(&ws, &s), "the index was replaced");
        reload(&ws, &mut watch, &mut s).unwrap();
        // The stamp was taken over the rows shown before: g.txt is new, so
        // the next look differs once, and the reload after it is stable.
        assert!(watch.changed(&ws, &s));
        reload(&ws, &mut watch, &mut s).unwrap();
        assert!(!watch.changed(&ws, &s));
        std::fs::write(dir.path().join("f.txt"), TEN.replace("two", "two by hand")).unwrap();
        assert!(watch.changed(&ws, &s), "a file of the session was edited");
        reload(&ws, &mut watch, &mut s).unwrap();
        insta::assert_snapshot!("refresh_after", screen_of(&mut s, 80, 14));
    }

    /// An action carries what was on screen: when another command changed
    /// the file's hunks meanwhile, nothing is done, even though a hunk with
    /// the same number exists. Once the screen shows the new hunks, with the
    /// selection still on the hunk the person chose, the action goes
    /// through.
    #[test]
    fn a_hunk_renumbered_by_another_command_is_not_acted_on() {
        let (dir, ws, mut s, mut watch) = proposed();
        screen_of(&mut s, 80, 30);
        update(&mut s, Key::Char('n'));
        let accept = update(&mut s, Key::Char('a'));
        assert!(matches!(&accept, Action::AcceptHunk(_, 2)), "{accept:?}");
        let mut other = Session::existing(&ws, "default").unwrap();
        other.reject(&["f.txt".into()], &[1]).unwrap();
        let said = perform(&ws, "default", &accept);
        assert_eq!(
            said,
            "not done: f.txt changed since it was shown (another command, or an edit); look again"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("f.txt")).unwrap(),
            TEN
        );
        reload(&ws, &mut watch, &mut s).unwrap();
        assert_eq!(
            (s.hunk, s.shown.hunks.len()),
            (0, 2),
            "the selection followed FIVE's hunk, now hunk 1"
        );
        let said = perform(&ws, "default", &update(&mut s, Key::Char('a')));
        assert_eq!(said, "accepted hunk 1 of f.txt");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("f.txt")).unwrap(),
            TEN.replace("five", "FIVE")
        );
    }

    /// A file whose stored output is lost says so in the diff pane; the
    /// screen still loads, and an action on it is refused.
    #[test]
    fn a_file_that_cannot_be_shown_says_why() {
        let (dir, ws, mut s, mut watch) = proposed();
        let blobs = dir.path().join(".mend/pending/default/blobs");
        for b in std::fs::read_dir(&blobs).unwrap() {
            std::fs::remove_file(b.unwrap().path()).unwrap();
        }
        reload(&ws, &mut watch, &mut s).unwrap();
        assert_eq!(s.rows.len(), 1);
        assert!(
            s.shown.note[0].starts_with("cannot show f.txt: "),
            "{:?}",
            s.shown
        );
        screen_of(&mut s, 80, 20);
        let said = perform(&ws, "default", &update(&mut s, Key::Char('p')));
        assert!(said.starts_with("refused: "), "{said}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("f.txt")).unwrap(),
            TEN
        );
    }

    /// A request coming in shows on the screen and turns the keys that
    /// act off; one that ends shows at the next look, and the keys act
    /// again. An action that got past the keys is refused by the service.
    #[test]
    fn a_request_streaming_in_shows_and_ends() {
        let (dir, ws, mut s, mut watch) = proposed();
        let session = Session::existing(&ws, "default").unwrap();
        let request = session.request("mend apply --pending --stream").unwrap();
        let named = format!("mend apply --pending --stream (pid {})", std::process::id());
        look_for_requests(&ws, &mut s);
        assert_eq!(s.streaming, std::slice::from_ref(&named));
        screen_of(&mut s, 80, 30);
        assert_eq!(update(&mut s, Key::Char('p')), Action::Nothing);
        s.streaming.clear();
        let said = perform(&ws, "default", &update(&mut s, Key::Char('p')));
        assert!(said.starts_with("refused: "), "{said}");
        assert!(said.contains(&named), "{said}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("f.txt")).unwrap(),
            TEN
        );
        reload(&ws, &mut watch, &mut s).unwrap();
        assert_eq!(s.streaming, [named], "a reload looks too");
        drop(request);
        look_for_requests(&ws, &mut s);
        assert!(s.streaming.is_empty());
        let said = perform(&ws, "default", &update(&mut s, Key::Char('p')));
        assert_eq!(said, "accepted f.txt (written)");
    }

    /// `p` on a conflicted file is refused with advice for this screen;
    /// `m` then `y` writes the merge with conflict markers.
    #[test]
    fn markers_are_written_after_a_confirmation() {
        let (dir, ws, mut s, mut watch) = proposed();
        let f = dir.path().join("f.txt");
        std::fs::write(&f, TEN.replace("two", "two by hand")).unwrap();
        reload(&ws, &mut watch, &mut s).unwrap();
        screen_of(&mut s, 80, 30);
        let said = perform(&ws, "default", &update(&mut s, Key::Char('p')));
        assert!(
            said.starts_with("refused: f.txt: your changes and the proposal overlap"),
            "{said}"
        );
        assert!(
            said.ends_with("Here: m writes the markers, after you confirm; x rejects the output"),
            "{said}"
        );
        assert_eq!(update(&mut s, Key::Char('m')), Action::Nothing);
        let said = perform(&ws, "default", &update(&mut s, Key::Char('y')));
        assert_eq!(said, "accepted f.txt (merged with conflict markers)");
        let merged = TEN
            .replace(
                "two\n",
                "<<<<<<< local\ntwo by hand\n=======\nTWO\n>>>>>>> proposal\n",
            )
            .replace("five", "FIVE")
            .replace("nine", "NINE");
        assert_eq!(std::fs::read_to_string(&f).unwrap(), merged);
    }
}
