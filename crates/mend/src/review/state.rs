//! The review screen's state and its key handling: a pure function from a
//! key to an action, tested without a terminal.

/// One file of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// Its path.
    pub path: String,
    /// Its status letter.
    pub letter: String,
}

/// Which pane has the keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    /// The file list.
    Files,
    /// The diff.
    Diff,
}

/// What the screen shows and where the cursor is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct State {
    /// The files, with letters.
    pub rows: Vec<Row>,
    /// The selected file.
    pub selected: usize,
    /// The pane with the keys.
    pub pane: Pane,
    /// The selected hunk of the selected file, from 0.
    pub hunk: usize,
    /// How many hunks the selected file's diff has.
    pub hunks: usize,
    /// Whether the help is shown.
    pub help: bool,
    /// The outcome of the last action.
    pub message: Option<String>,
}

/// A key, as the screen understands it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// Up arrow.
    Up,
    /// Down arrow.
    Down,
    /// Tab.
    Tab,
    /// Escape.
    Esc,
    /// A character.
    Char(char),
}

/// What the runner does after a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Nothing beyond redrawing.
    Nothing,
    /// Leave.
    Quit,
    /// Another file was selected: load its diff.
    Select,
    /// Accept hunk N (from 1) of the file.
    AcceptHunk(String, usize),
    /// Reject hunk N (from 1) of the file.
    RejectHunk(String, usize),
    /// Accept the file's whole output.
    AcceptFile(String),
    /// Drop the file's output.
    DiscardFile(String),
    /// Make the file as it is now its context.
    Sync(String),
}

impl State {
    /// A state over these rows, the first selected.
    pub fn new(rows: Vec<Row>) -> State {
        State {
            rows,
            selected: 0,
            pane: Pane::Files,
            hunk: 0,
            hunks: 0,
            help: false,
            message: None,
        }
    }

    fn path(&self) -> Option<String> {
        self.rows.get(self.selected).map(|r| r.path.clone())
    }

    fn hunk_action(&self, make: fn(String, usize) -> Action) -> Action {
        match self.path() {
            Some(p) if self.hunks > 0 => make(p, self.hunk + 1),
            _ => Action::Nothing,
        }
    }

    fn file_action(&self, make: fn(String) -> Action) -> Action {
        self.path().map_or(Action::Nothing, make)
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
        self.hunk = 0;
        Action::Select
    }

    fn move_hunk(&mut self, down: bool) -> Action {
        self.hunk = if down {
            (self.hunk + 1).min(self.hunks.saturating_sub(1))
        } else {
            self.hunk.saturating_sub(1)
        };
        Action::Nothing
    }
}

/// Applies a key to the state and says what the runner must do.
pub fn update(s: &mut State, key: Key) -> Action {
    if s.help {
        s.help = false;
        return if key == Key::Char('q') {
            Action::Quit
        } else {
            Action::Nothing
        };
    }
    s.message = None;
    match key {
        Key::Char('q') | Key::Esc => Action::Quit,
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
        Key::Char(' ') | Key::Char('a') => s.hunk_action(Action::AcceptHunk),
        Key::Char('r') => s.hunk_action(Action::RejectHunk),
        Key::Char('p') => s.file_action(Action::AcceptFile),
        Key::Char('x') => s.file_action(Action::DiscardFile),
        Key::Char('u') => s.file_action(Action::Sync),
        Key::Char(_) => Action::Nothing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> State {
        let rows = ["a.txt", "b.txt", "c.txt"]
            .iter()
            .map(|p| Row {
                path: (*p).into(),
                letter: "M".into(),
            })
            .collect();
        let mut s = State::new(rows);
        s.hunks = 3;
        s
    }

    #[test]
    fn moving_through_files_resets_the_hunk_and_stops_at_the_ends() {
        let mut s = state();
        s.hunk = 2;
        assert_eq!(update(&mut s, Key::Char('j')), Action::Select);
        assert_eq!((s.selected, s.hunk), (1, 0));
        assert_eq!(update(&mut s, Key::Down), Action::Select);
        assert_eq!(update(&mut s, Key::Down), Action::Nothing);
        assert_eq!(s.selected, 2);
        assert_eq!(update(&mut s, Key::Char('k')), Action::Select);
        assert_eq!(update(&mut s, Key::Up), Action::Select);
        assert_eq!(update(&mut s, Key::Up), Action::Nothing);
        assert_eq!(s.selected, 0);
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

    #[test]
    fn keys_become_actions_on_the_selected_file_and_hunk() {
        let mut s = state();
        update(&mut s, Key::Char('n'));
        assert_eq!(
            update(&mut s, Key::Char(' ')),
            Action::AcceptHunk("a.txt".into(), 2)
        );
        assert_eq!(
            update(&mut s, Key::Char('a')),
            Action::AcceptHunk("a.txt".into(), 2)
        );
        assert_eq!(
            update(&mut s, Key::Char('r')),
            Action::RejectHunk("a.txt".into(), 2)
        );
        assert_eq!(
            update(&mut s, Key::Char('p')),
            Action::AcceptFile("a.txt".into())
        );
        assert_eq!(
            update(&mut s, Key::Char('x')),
            Action::DiscardFile("a.txt".into())
        );
        assert_eq!(update(&mut s, Key::Char('u')), Action::Sync("a.txt".into()));
        assert_eq!(update(&mut s, Key::Char('q')), Action::Quit);
        assert_eq!(update(&mut s, Key::Esc), Action::Quit);
        s.hunks = 0;
        assert_eq!(update(&mut s, Key::Char('a')), Action::Nothing);
        let mut empty = State::new(Vec::new());
        assert_eq!(update(&mut empty, Key::Char('p')), Action::Nothing);
        assert_eq!(update(&mut empty, Key::Char('j')), Action::Nothing);
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
