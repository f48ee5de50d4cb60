//! The review screen's state and its key handling: a pure function from a
//! key to an action, tested without a terminal.
//!
//! The state also holds what the screen shows (the selected file's note
//! and diff, as lines) and how much of it fits, so that an action on a hunk
//! or a file carries exactly what the person saw: the runner refuses it if
//! the session shows something else by then.

use mend_service::review::Hunk;

/// One file of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Row {
    /// Its path.
    pub path: String,
    /// Its status letter.
    pub letter: String,
}

/// Which pane has the keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pane {
    /// The file list.
    Files,
    /// The diff.
    Diff,
}

/// What the diff pane shows of one file: a note (the merge preview of a
/// file changed locally) above its numbered diff.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Shown {
    /// The note's lines.
    pub note: Vec<String>,
    /// The diff's lines.
    pub diff: Vec<String>,
    /// Where each hunk's header is in `diff`, from the hunks the service
    /// cut (no line of the text is read for it).
    pub hunks: Vec<usize>,
    /// When accepting the file merges it three ways: how many conflicts.
    pub merge: Option<usize>,
    /// A turn's file: the version of its change as shown, which an action
    /// on it names, so that it is refused once the change is another.
    pub version: Option<String>,
}

impl Shown {
    /// A file's note and diff, split into lines, with the hunks the
    /// service cut the diff into: they are its last lines, each a header
    /// and its lines, after the lines that name the file.
    pub(crate) fn new(note: &str, diff: &str, cut: &[Hunk], merge: Option<usize>) -> Shown {
        let diff: Vec<String> = diff.lines().map(str::to_owned).collect();
        let body: usize = cut.iter().map(|h| 1 + h.lines.len()).sum();
        let mut at = diff.len().saturating_sub(body);
        let hunks = cut
            .iter()
            .map(|h| {
                let start = at;
                at += 1 + h.lines.len();
                start
            })
            .collect();
        Shown {
            note: note.lines().map(str::to_owned).collect(),
            diff,
            hunks,
            merge,
            version: None,
        }
    }

    /// How many lines the pane holds, note and diff.
    pub(crate) fn line_count(&self) -> usize {
        self.note.len() + self.diff.len()
    }

    /// Line `i` of the pane: a note line (`true`) or a diff line.
    pub(crate) fn line(&self, i: usize) -> Option<(&str, bool)> {
        match self.note.get(i) {
            Some(l) => Some((l, true)),
            None => self
                .diff
                .get(i - self.note.len())
                .map(|l| (l.as_str(), false)),
        }
    }

    /// The changed lines of hunk `n` (from 0): what identifies it when
    /// other hunks come and go around it.
    pub(crate) fn changes(&self, n: usize) -> Vec<&str> {
        let Some(span) = self.hunk_span(n) else {
            return Vec::new();
        };
        self.diff[span.start - self.note.len()..span.end - self.note.len()]
            .iter()
            .skip(1)
            .filter(|l| l.starts_with('+') || l.starts_with('-'))
            .map(String::as_str)
            .collect()
    }

    /// Whether pane line `i` is a hunk's header.
    pub(crate) fn starts_hunk(&self, i: usize) -> bool {
        i.checked_sub(self.note.len())
            .is_some_and(|d| self.hunks.contains(&d))
    }

    /// The pane lines hunk `n` (from 0) spans, its `@@` line first.
    pub(crate) fn hunk_span(&self, n: usize) -> Option<std::ops::Range<usize>> {
        let start = *self.hunks.get(n)?;
        let end = self.hunks.get(n + 1).copied().unwrap_or(self.diff.len());
        Some(self.note.len() + start..self.note.len() + end)
    }
}

/// The session as the header sums it up.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    /// How many files have each letter, in letter order.
    pub letters: Vec<(String, usize)>,
    /// How many hunks the whole session's diff has.
    pub hunks: usize,
}

/// What the screen reviews.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reviewed {
    /// A pending session's outputs, not yet written.
    Session,
    /// The open turn's changes, already in the files: `r` and `x` put
    /// the turn's start back, accepting marks reviewed.
    Turn,
}

/// What the screen shows and where the cursor is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct State {
    /// What is reviewed.
    pub reviewed: Reviewed,
    /// The session's name, or the turn's id.
    pub session: String,
    /// The files, with letters.
    pub rows: Vec<Row>,
    /// The header's counts.
    pub counts: Counts,
    /// The selected file.
    pub selected: usize,
    /// The first file the list shows.
    pub files_top: usize,
    /// The pane with the keys.
    pub pane: Pane,
    /// The selected file's note and diff.
    pub shown: Shown,
    /// The selected hunk of the selected file, from 0.
    pub hunk: usize,
    /// The first line of `shown` the diff pane shows.
    pub scroll: usize,
    /// How many rows the file list and the diff pane have, as last laid out.
    pub heights: (usize, usize),
    /// How many columns the diff pane has inside its borders, as last
    /// laid out (a note that says why a file cannot be shown wraps to it).
    pub width: usize,
    /// Whether the help is shown.
    pub help: bool,
    /// An action waiting for `y`.
    pub confirm: Option<Action>,
    /// The outcome of the last action.
    pub message: Option<String>,
    /// The requests coming into the session now (a proposal streaming in),
    /// each its command and pid: while there is one, the keys that act are
    /// off and the screen says so (seed 000: request running, read-only).
    pub streaming: Vec<String>,
}

/// A key, as the screen understands it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Key {
    /// Up arrow.
    Up,
    /// Down arrow.
    Down,
    /// Page down.
    PageDown,
    /// Page up.
    PageUp,
    /// Tab.
    Tab,
    /// Escape.
    Esc,
    /// Ctrl-C: quits whatever is shown.
    Interrupt,
    /// A character.
    Char(char),
}

/// What the person saw of a file when they pressed a key: the runner acts
/// only if the session still shows exactly that.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Seen {
    /// The file.
    pub path: String,
    /// Its note and diff as shown.
    pub shown: Shown,
}

/// What the runner does after a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Action {
    /// Nothing beyond redrawing.
    Nothing,
    /// Leave.
    Quit,
    /// Another file was selected: load its diff.
    Select,
    /// Accept hunk N (from 1) of the file.
    AcceptHunk(Seen, usize),
    /// Reject hunk N (from 1) of the file (in a turn: put its lines back
    /// as the turn began).
    RejectHunk(Seen, usize),
    /// Accept the file's whole output.
    AcceptFile(Seen),
    /// Accept the file's output merged three ways, with conflict markers
    /// where the local and proposed changes overlap.
    AcceptMarkers(Seen),
    /// Drop the file's output (in a turn: put the whole file back as the
    /// turn began).
    DiscardFile(Seen),
    /// Make the file as it is now its context.
    Sync(String),
}

impl State {
    /// A state over session `session`'s rows, the first selected.
    pub(crate) fn new(session: &str, rows: Vec<Row>) -> State {
        State {
            reviewed: Reviewed::Session,
            session: session.to_owned(),
            rows,
            counts: Counts::default(),
            selected: 0,
            files_top: 0,
            pane: Pane::Files,
            shown: Shown::default(),
            hunk: 0,
            scroll: 0,
            heights: (0, 0),
            width: 80,
            help: false,
            confirm: None,
            message: None,
            streaming: Vec::new(),
        }
    }

    /// A state over the open turn (its id filled in by the first load).
    pub(crate) fn turn() -> State {
        State {
            reviewed: Reviewed::Turn,
            ..State::new("", Vec::new())
        }
    }

    /// The selected file's path.
    pub(crate) fn path(&self) -> Option<&str> {
        self.rows.get(self.selected).map(|r| r.path.as_str())
    }

    /// Shows a newly loaded file. When it is the same file, the selection
    /// stays on the hunk with the same changes if there still is one (the
    /// view moving with it), else on the same number; another file shows
    /// from the top (the note first), its first hunk selected.
    pub(crate) fn show(&mut self, shown: Shown, same_file: bool) {
        let was = self.shown.changes(self.hunk).join("\n");
        // Where it was in the diff: the view moves as far as the hunk moved
        // within the diff, not as far as a note above it grew.
        let was_at = self.shown.hunks.get(self.hunk).copied();
        self.shown = shown;
        if !same_file {
            self.hunk = 0;
            self.scroll = 0;
        } else if let Some(n) = (0..self.shown.hunks.len())
            .find(|&n| !was.is_empty() && self.shown.changes(n).join("\n") == was)
        {
            let now_at = self.shown.hunks[n];
            self.scroll = (self.scroll + now_at).saturating_sub(was_at.unwrap_or(0));
            self.hunk = n;
        }
        self.hunk = self.hunk.min(self.shown.hunks.len().saturating_sub(1));
        self.scroll = self.scroll.min(self.max_scroll());
    }

    /// Records the pane heights of a new layout and keeps the selected
    /// file in view and the diff's scroll in range.
    pub(crate) fn fit(&mut self, files: usize, diff: usize) {
        self.heights = (files, diff);
        self.selected = self.selected.min(self.rows.len().saturating_sub(1));
        self.follow_file();
        self.scroll = self.scroll.min(self.max_scroll());
    }

    /// Whether any line of the selected hunk is in the diff pane.
    pub(crate) fn hunk_in_view(&self) -> bool {
        let view = self.scroll..self.scroll + self.heights.1;
        self.shown
            .hunk_span(self.hunk)
            .is_some_and(|h| h.start < view.end && view.start < h.end)
    }

    fn max_scroll(&self) -> usize {
        self.shown.line_count().saturating_sub(self.heights.1)
    }

    fn follow_file(&mut self) {
        let h = self.heights.0.max(1);
        if self.selected < self.files_top {
            self.files_top = self.selected;
        } else if self.selected >= self.files_top + h {
            self.files_top = self.selected + 1 - h;
        }
        self.files_top = self.files_top.min(self.rows.len().saturating_sub(h));
    }

    /// Scrolls so the selected hunk's `@@` line shows, with two lines
    /// above it, and as much of the hunk below it as fits.
    fn show_hunk(&mut self) {
        let Some(span) = self.shown.hunk_span(self.hunk) else {
            return;
        };
        let h = self.heights.1;
        if h == 0 {
            return;
        }
        let above = span.start.saturating_sub(2);
        if span.start < self.scroll {
            self.scroll = above;
        } else if span.end > self.scroll + h {
            self.scroll = above.min(span.end.saturating_sub(h));
        }
        self.scroll = self.scroll.min(self.max_scroll());
    }

    fn seen(&self) -> Option<Seen> {
        Some(Seen {
            path: self.path()?.to_owned(),
            shown: self.shown.clone(),
        })
    }

    fn hunk_action(&mut self, make: fn(Seen, usize) -> Action) -> Action {
        let Some(seen) = self.seen() else {
            return Action::Nothing;
        };
        if seen.shown.hunks.is_empty() {
            self.message = Some(format!(
                "{} has no hunks to pick; p and x act on the whole file",
                seen.path
            ));
            return Action::Nothing;
        }
        if !self.hunk_in_view() {
            self.message = Some(format!(
                "hunk {} is not on screen; n/N or J/K bring it into view",
                self.hunk + 1
            ));
            return Action::Nothing;
        }
        make(seen, self.hunk + 1)
    }

    fn file_action(&self, make: fn(Seen) -> Action) -> Action {
        self.seen().map_or(Action::Nothing, make)
    }

    fn ask_markers(&mut self) -> Action {
        let Some(seen) = self.seen() else {
            return Action::Nothing;
        };
        self.message = Some(if seen.shown.merge.is_none() {
            format!(
                "{}: m is for a file changed locally since the model saw it (~M); p accepts this one",
                seen.path
            )
        } else {
            let path = seen.path.clone();
            self.confirm = Some(Action::AcceptMarkers(seen));
            format!(
                "write {path} merged, with conflict markers where your changes and the proposal overlap? y writes, any other key cancels"
            )
        });
        Action::Nothing
    }

    fn move_file(&mut self, down: bool) -> Action {
        let before = self.selected;
        self.selected = if down {
            (self.selected + 1).min(self.rows.len().saturating_sub(1))
        } else {
            self.selected.saturating_sub(1)
        };
        if self.selected == before {
            return Action::Nothing;
        }
        self.follow_file();
        Action::Select
    }

    fn move_hunk(&mut self, down: bool) -> Action {
        self.hunk = if down {
            (self.hunk + 1).min(self.shown.hunks.len().saturating_sub(1))
        } else {
            self.hunk.saturating_sub(1)
        };
        self.show_hunk();
        Action::Nothing
    }

    /// Scrolls the diff by `by` lines; when the selected hunk leaves the
    /// pane, the first hunk in view (the last, scrolling up) is selected.
    fn scroll_by(&mut self, by: usize, down: bool) -> Action {
        self.scroll = if down {
            (self.scroll + by).min(self.max_scroll())
        } else {
            self.scroll.saturating_sub(by)
        };
        if !self.hunk_in_view() {
            let view = self.scroll..self.scroll + self.heights.1;
            let in_view = (0..self.shown.hunks.len()).filter(|&n| {
                self.shown
                    .hunk_span(n)
                    .is_some_and(|h| h.start < view.end && view.start < h.end)
            });
            let pick = if down { in_view.min() } else { in_view.max() };
            if let Some(n) = pick {
                self.hunk = n;
            }
        }
        Action::Nothing
    }
}

/// Whether a key acts on the session (accepts, rejects, merges or syncs),
/// rather than moving or showing.
fn acts(key: Key) -> bool {
    matches!(key, Key::Char(' ' | 'a' | 'r' | 'p' | 'm' | 'x' | 'u'))
}

impl State {
    /// What the screen says while a request streams in.
    pub(crate) fn streaming_note(&self) -> String {
        format!(
            "a request is streaming in from {}: a, r, p, m, x and u wait until it ends; moving and viewing work",
            self.streaming.join(" and ")
        )
    }
}

/// Applies a key to the state and says what the runner must do.
pub(crate) fn update(s: &mut State, key: Key) -> Action {
    if key == Key::Interrupt {
        return Action::Quit;
    }
    if s.help {
        s.help = false;
        return if key == Key::Char('q') {
            Action::Quit
        } else {
            Action::Nothing
        };
    }
    s.message = None;
    if let Some(action) = s.confirm.take() {
        if key == Key::Char('y') && !s.streaming.is_empty() {
            s.message = Some(format!("not written: {}", s.streaming_note()));
            return Action::Nothing;
        }
        if key == Key::Char('y') {
            return action;
        }
        s.message = Some("cancelled: nothing was written".into());
        return Action::Nothing;
    }
    if acts(key) && !s.streaming.is_empty() {
        s.message = Some(s.streaming_note());
        return Action::Nothing;
    }
    let page = s.heights.1.saturating_sub(2).max(1);
    match key {
        Key::Char('q') | Key::Esc | Key::Interrupt => Action::Quit,
        Key::Char('?') => {
            s.help = true;
            Action::Nothing
        }
        Key::Tab => {
            s.pane = match s.pane {
                Pane::Files => Pane::Diff,
                Pane::Diff => Pane::Files,
            };
            Action::Nothing
        }
        Key::Down | Key::Char('j') if s.pane == Pane::Files => s.move_file(true),
        Key::Up | Key::Char('k') if s.pane == Pane::Files => s.move_file(false),
        Key::Down | Key::Char('j') | Key::Char('n') => s.move_hunk(true),
        Key::Up | Key::Char('k') | Key::Char('N') => s.move_hunk(false),
        Key::Char('J') => s.scroll_by(1, true),
        Key::Char('K') => s.scroll_by(1, false),
        Key::PageDown => s.scroll_by(page, true),
        Key::PageUp => s.scroll_by(page, false),
        Key::Char(' ') | Key::Char('a') => s.hunk_action(Action::AcceptHunk),
        Key::Char('r') => s.hunk_action(Action::RejectHunk),
        Key::Char('p') => s.file_action(Action::AcceptFile),
        Key::Char('m' | 'u') if s.reviewed == Reviewed::Turn => {
            s.message = Some(
                "m and u are for pending sessions; in a turn, r puts a hunk back, x the whole file"
                    .into(),
            );
            Action::Nothing
        }
        Key::Char('m') => s.ask_markers(),
        Key::Char('x') => s.file_action(Action::DiscardFile),
        Key::Char('u') => s.path().map_or(Action::Nothing, |p| Action::Sync(p.into())),
        Key::Char(_) => Action::Nothing,
    }
}

/// A diff's hunks read back from its text, for tests that write diffs
/// by hand (the screen itself is given them by the service).
#[cfg(test)]
pub(crate) fn cut(diff: &str) -> Vec<Hunk> {
    let mut out: Vec<Hunk> = Vec::new();
    for l in diff.lines() {
        if l.starts_with("@@ ") {
            out.push(Hunk {
                number: out.len() + 1,
                header: l.to_owned(),
                lines: Vec::new(),
            });
        } else if let Some(h) = out.last_mut() {
            h.lines.push(l.to_owned());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIFF: &str = "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@ hunk 1\n-one\n+ONE\n two\n@@ -5,2 +5,2 @@ hunk 2\n-five\n+FIVE\n six\n@@ -9,2 +9,2 @@ hunk 3\n-nine\n+NINE\n ten\n";

    fn state() -> State {
        let rows = ["a.txt", "b.txt", "c.txt"]
            .iter()
            .map(|p| Row {
                path: (*p).into(),
                letter: "M".into(),
            })
            .collect();
        let mut s = State::new("default", rows);
        s.show(Shown::new("", DIFF, &cut(DIFF), None), false);
        s.fit(3, 20);
        s
    }

    fn seen(s: &State) -> Seen {
        Seen {
            path: "a.txt".into(),
            shown: s.shown.clone(),
        }
    }

    #[test]
    fn moving_through_files_stops_at_the_ends() {
        let mut s = state();
        assert_eq!(update(&mut s, Key::Char('j')), Action::Select);
        assert_eq!(s.selected, 1);
        assert_eq!(update(&mut s, Key::Down), Action::Select);
        assert_eq!(update(&mut s, Key::Down), Action::Nothing);
        assert_eq!(s.selected, 2);
        assert_eq!(update(&mut s, Key::Char('k')), Action::Select);
        assert_eq!(update(&mut s, Key::Up), Action::Select);
        assert_eq!(update(&mut s, Key::Up), Action::Nothing);
        assert_eq!(s.selected, 0);
    }

    #[test]
    fn another_file_starts_at_its_first_hunk_and_the_same_file_keeps_its_place() {
        let mut s = state();
        s.hunk = 2;
        s.show(Shown::new("", DIFF, &cut(DIFF), None), true);
        assert_eq!(s.hunk, 2);
        s.show(Shown::new("", DIFF, &cut(DIFF), None), false);
        assert_eq!((s.hunk, s.scroll), (0, 0));
        s.hunk = 2;
        s.show(
            Shown::new(
                "",
                "@@ -1 +1 @@\n-a\n+b\n",
                &cut("@@ -1 +1 @@\n-a\n+b\n"),
                None,
            ),
            true,
        );
        assert_eq!(s.hunk, 0, "clamped to the hunks there are");
    }

    /// When another command drops hunk 1, the selection stays on the
    /// hunk it was on (now hunk 1), not on the hunk that took its number.
    #[test]
    fn the_selection_follows_its_hunk_when_others_go() {
        let mut s = state();
        s.fit(3, 6);
        update(&mut s, Key::Char('n'));
        assert_eq!((s.hunk, s.scroll), (1, 4));
        let without_first = DIFF.replace("@@ -1,2 +1,2 @@ hunk 1\n-one\n+ONE\n two\n", "");
        s.show(
            Shown::new("", &without_first, &cut(&without_first), None),
            true,
        );
        assert_eq!(s.hunk, 0);
        assert_eq!(s.shown.changes(0), ["-five", "+FIVE"]);
        assert_eq!(s.scroll, 0, "the view moved up with it");
    }

    #[test]
    fn the_file_list_scrolls_with_the_selection() {
        let rows = (0..10)
            .map(|i| Row {
                path: format!("f{i}.txt"),
                letter: "M".into(),
            })
            .collect();
        let mut s = State::new("default", rows);
        s.fit(4, 10);
        for _ in 0..6 {
            update(&mut s, Key::Down);
        }
        assert_eq!((s.selected, s.files_top), (6, 3));
        for _ in 0..4 {
            update(&mut s, Key::Up);
        }
        assert_eq!((s.selected, s.files_top), (2, 2));
        s.selected = 9;
        s.fit(3, 10);
        assert_eq!(
            s.files_top, 7,
            "a new layout brings the selection into view"
        );
        s.rows.truncate(5);
        s.fit(3, 10);
        assert_eq!((s.selected, s.files_top), (4, 2));
    }

    #[test]
    fn hunks_move_with_n_and_in_the_diff_pane() {
        let mut s = state();
        update(&mut s, Key::Char('n'));
        update(&mut s, Key::Char('n'));
        update(&mut s, Key::Char('n'));
        assert_eq!(s.hunk, 2);
        update(&mut s, Key::Char('N'));
        assert_eq!(s.hunk, 1);
        update(&mut s, Key::Tab);
        assert_eq!(s.pane, Pane::Diff);
        update(&mut s, Key::Char('k'));
        assert_eq!((s.hunk, s.selected), (0, 0));
        update(&mut s, Key::Char('j'));
        assert_eq!((s.hunk, s.selected), (1, 0));
    }

    /// A diff far longer than a u16 scrolls to its last hunk, and back.
    #[test]
    fn any_diff_length_scrolls_to_the_selected_hunk() {
        let mut diff = String::from("@@ -1 +1 @@\n-a\n+b\n");
        diff.push_str(&" same\n".repeat(100_000));
        diff.push_str("@@ -100002 +100002 @@\n-c\n+d\n");
        let mut s = state();
        s.show(Shown::new("", &diff, &cut(&diff), None), false);
        s.fit(3, 10);
        update(&mut s, Key::Char('n'));
        assert_eq!(s.hunk, 1);
        assert_eq!(s.scroll, 100_006 - 10, "the whole hunk, at the bottom");
        assert!(s.hunk_in_view());
        update(&mut s, Key::Char('N'));
        assert_eq!(s.scroll, 0);
    }

    #[test]
    fn scrolling_by_lines_selects_a_hunk_in_view() {
        let mut s = state();
        s.fit(3, 4);
        assert_eq!((s.hunk, s.scroll), (0, 0));
        update(&mut s, Key::Char('J'));
        update(&mut s, Key::Char('J'));
        assert_eq!((s.hunk, s.scroll), (0, 2));
        update(&mut s, Key::PageDown);
        assert_eq!((s.hunk, s.scroll), (0, 4), "hunk 1 is still partly in view");
        update(&mut s, Key::PageDown);
        assert_eq!((s.hunk, s.scroll), (1, 6));
        update(&mut s, Key::PageDown);
        update(&mut s, Key::PageDown);
        update(&mut s, Key::PageDown);
        assert_eq!((s.hunk, s.scroll), (2, 10), "stops at the last page");
        update(&mut s, Key::PageUp);
        assert_eq!((s.hunk, s.scroll), (2, 8));
        update(&mut s, Key::PageUp);
        assert_eq!((s.hunk, s.scroll), (1, 6), "the last hunk in view");
        update(&mut s, Key::Char('K'));
        assert_eq!((s.hunk, s.scroll), (1, 5));
    }

    #[test]
    fn keys_become_actions_on_what_is_seen() {
        let mut s = state();
        update(&mut s, Key::Char('n'));
        let hunk2 = |make: fn(Seen, usize) -> Action| make(seen(&s), 2);
        let (accept, reject) = (hunk2(Action::AcceptHunk), hunk2(Action::RejectHunk));
        assert_eq!(update(&mut s, Key::Char(' ')), accept);
        assert_eq!(update(&mut s, Key::Char('a')), accept);
        assert_eq!(update(&mut s, Key::Char('r')), reject);
        let file = Action::AcceptFile(seen(&s));
        assert_eq!(update(&mut s, Key::Char('p')), file);
        let discard = Action::DiscardFile(seen(&s));
        assert_eq!(update(&mut s, Key::Char('x')), discard);
        assert_eq!(update(&mut s, Key::Char('u')), Action::Sync("a.txt".into()));
        assert_eq!(update(&mut s, Key::Char('q')), Action::Quit);
        assert_eq!(update(&mut s, Key::Esc), Action::Quit);
        // Ctrl-C quits even from the help or a question waiting for `y`.
        assert_eq!(update(&mut s, Key::Interrupt), Action::Quit);
        update(&mut s, Key::Char('?'));
        assert_eq!(update(&mut s, Key::Interrupt), Action::Quit);
        s.confirm = Some(Action::AcceptMarkers(seen(&s)));
        assert_eq!(update(&mut s, Key::Interrupt), Action::Quit);
        let mut empty = State::new("default", Vec::new());
        assert_eq!(update(&mut empty, Key::Char('p')), Action::Nothing);
        assert_eq!(update(&mut empty, Key::Char('j')), Action::Nothing);
        assert_eq!(update(&mut empty, Key::Char('m')), Action::Nothing);
    }

    /// A hunk the pane does not show is never acted on.
    #[test]
    fn a_hunk_off_screen_or_missing_is_refused() {
        let mut s = state();
        s.show(Shown::new("", "", &cut(""), None), false);
        assert_eq!(update(&mut s, Key::Char('a')), Action::Nothing);
        assert_eq!(
            s.message.as_deref(),
            Some("a.txt has no hunks to pick; p and x act on the whole file")
        );
        let note = "line\n".repeat(30);
        s.show(Shown::new(&note, DIFF, &cut(DIFF), Some(0)), false);
        assert_eq!(s.scroll, 0);
        assert!(!s.hunk_in_view(), "a new file shows its note first");
        assert_eq!(update(&mut s, Key::Char('a')), Action::Nothing);
        assert_eq!(update(&mut s, Key::Char('r')), Action::Nothing);
        assert!(s.message.as_deref().unwrap().contains("not on screen"));
        update(&mut s, Key::Char('N'));
        assert!(s.hunk_in_view(), "moving to a hunk shows it");
        update(&mut s, Key::PageUp);
        update(&mut s, Key::PageUp);
        assert!(!s.hunk_in_view(), "scrolled back to the note");
        assert_eq!(update(&mut s, Key::Char('a')), Action::Nothing);
        s.fit(3, 0);
        assert_eq!(update(&mut s, Key::Char('a')), Action::Nothing, "no pane");
    }

    #[test]
    fn markers_need_a_merge_and_a_confirmation() {
        let mut s = state();
        assert_eq!(update(&mut s, Key::Char('m')), Action::Nothing);
        assert!(s.confirm.is_none());
        assert!(s.message.as_deref().unwrap().contains("(~M)"));
        s.show(Shown::new("merge note", DIFF, &cut(DIFF), Some(1)), true);
        assert_eq!(update(&mut s, Key::Char('m')), Action::Nothing);
        assert!(s.message.as_deref().unwrap().contains("y writes"));
        assert_eq!(update(&mut s, Key::Char('n')), Action::Nothing);
        assert_eq!(s.message.as_deref(), Some("cancelled: nothing was written"));
        assert_eq!(s.hunk, 0, "the cancelling key does nothing else");
        update(&mut s, Key::Char('m'));
        assert_eq!(update(&mut s, Key::Char('q')), Action::Nothing, "q cancels");
        update(&mut s, Key::Char('m'));
        let markers = Action::AcceptMarkers(seen(&s));
        assert_eq!(update(&mut s, Key::Char('y')), markers);
        assert!(s.confirm.is_none());
        assert_eq!(update(&mut s, Key::Char('y')), Action::Nothing);
    }

    /// A turn's changes are in the files already: nothing to merge or
    /// sync, so `m` and `u` only say what reverts; `r` and `x` revert.
    #[test]
    fn a_turn_has_no_markers_or_sync() {
        let mut s = State::turn();
        s.rows = state().rows;
        s.show(Shown::new("", DIFF, &cut(DIFF), None), false);
        s.fit(3, 20);
        assert_eq!(update(&mut s, Key::Char('m')), Action::Nothing);
        assert!(s.confirm.is_none());
        assert!(s.message.as_deref().unwrap().contains("r puts a hunk back"));
        assert_eq!(update(&mut s, Key::Char('u')), Action::Nothing);
        assert_eq!(
            update(&mut s, Key::Char('r')),
            Action::RejectHunk(seen(&s), 1)
        );
        assert_eq!(
            update(&mut s, Key::Char('x')),
            Action::DiscardFile(seen(&s))
        );
    }

    /// While a request streams in, every key that acts does nothing and
    /// says why, a question waiting for `y` is not answered, and moving
    /// and viewing still work; once it ends, the keys act again.
    #[test]
    fn acting_keys_are_off_while_a_request_streams_in() {
        let mut s = state();
        s.streaming = vec!["mend apply --pending --stream (pid 7)".into()];
        for c in [' ', 'a', 'r', 'p', 'm', 'x', 'u'] {
            assert_eq!(update(&mut s, Key::Char(c)), Action::Nothing, "{c}");
            assert_eq!(
                s.message.as_deref(),
                Some(
                    "a request is streaming in from mend apply --pending --stream (pid 7): a, r, p, m, x and u wait until it ends; moving and viewing work"
                ),
                "{c}"
            );
        }
        assert_eq!(update(&mut s, Key::Char('j')), Action::Select);
        update(&mut s, Key::Char('k'));
        update(&mut s, Key::Char('n'));
        assert_eq!(s.hunk, 1, "hunks still move");
        s.confirm = Some(Action::AcceptMarkers(seen(&s)));
        assert_eq!(update(&mut s, Key::Char('y')), Action::Nothing);
        assert!(s.confirm.is_none());
        assert!(s.message.as_deref().unwrap().starts_with("not written: "));
        s.streaming.clear();
        assert_eq!(
            update(&mut s, Key::Char('a')),
            Action::AcceptHunk(seen(&s), 2)
        );
    }

    #[test]
    fn help_opens_and_any_key_closes_it() {
        let mut s = state();
        s.message = Some("accepted".into());
        assert_eq!(update(&mut s, Key::Char('?')), Action::Nothing);
        assert!(s.help && s.message.is_none());
        assert_eq!(update(&mut s, Key::Char('p')), Action::Nothing);
        assert!(!s.help);
        update(&mut s, Key::Char('?'));
        assert_eq!(update(&mut s, Key::Char('q')), Action::Quit);
    }
}
