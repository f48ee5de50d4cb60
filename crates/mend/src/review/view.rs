//! Drawing the review screen: a header with the session and its counts,
//! the file list with letters, the selected file's numbered hunks, and a
//! status area whose messages wrap. Colour only when `color`.
//!
//! Only the lines in view are built, so a diff of any length draws in the
//! same time. Tabs become spaces to the next multiple of 8 columns
//! (counted from the start of a file's text: after a diff line's `+`, `-`
//! or space), since the terminal widgets would drop them.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use unicode_width::UnicodeWidthChar;

use super::state::{Pane, Reviewed, State};

const KEYS: &str = "j/k move  tab pane  n/N hunk  a/r hunk  p/x file  m markers  u sync  ? help";

/// The keys of a turn's review: `r` and `x` revert, nothing is merged.
const TURN_KEYS: &str = "j/k move  tab pane  n/N hunk  a accept  r revert hunk  p/x file  ? help";

const HELP: &[(&str, &str)] = &[
    ("j / k, arrows", "move (files, or hunks in the diff pane)"),
    ("tab", "switch panes"),
    ("n / N", "next or previous hunk"),
    ("J / K", "scroll the diff a line"),
    ("PgDn / PgUp", "scroll the diff a page"),
    ("space / a", "accept the hunk on screen"),
    ("r", "reject the hunk on screen"),
    ("p", "accept the file (a changed file is merged)"),
    ("m", "accept a ~M file with conflict markers (asks)"),
    ("x", "discard the file's output"),
    ("u", "sync: the file now becomes the context"),
    ("?", "this help"),
    ("q, Esc, Ctrl-C", "quit"),
];

const TURN_HELP: &[(&str, &str)] = &[
    ("j / k, arrows", "move (files, or hunks in the diff pane)"),
    ("tab", "switch panes"),
    ("n / N", "next or previous hunk"),
    ("J / K", "scroll the diff a line"),
    ("PgDn / PgUp", "scroll the diff a page"),
    ("space / a", "accept the hunk on screen (marks it reviewed)"),
    ("r", "revert the hunk on screen to the turn's start"),
    ("p", "accept the file (marks it reviewed)"),
    ("x", "revert the whole file to the turn's start"),
    ("?", "this help"),
    ("q, Esc, Ctrl-C", "quit"),
];

/// The width of a tab stop.
const TAB: usize = 8;

/// The screen's parts: header, file list, diff pane, status area.
fn layout(area: Rect, s: &State) -> [Rect; 4] {
    let most = (area.height / 3).max(1);
    let status = status_lines(s, area.width);
    let status = u16::try_from(status.len())
        .unwrap_or(u16::MAX)
        .clamp(1, most);
    let [header, main, status] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(status),
    ])
    .areas(area);
    let [files, diff] =
        Layout::horizontal([Constraint::Percentage(30), Constraint::Percentage(70)]).areas(main);
    [header, files, diff, status]
}

/// How many rows the file list and the diff pane show on a screen of
/// this size (inside their borders).
pub(crate) fn heights(area: Rect, s: &State) -> (usize, usize) {
    let [_, files, diff, _] = layout(area, s);
    let inner = |r: Rect| usize::from(r.height.saturating_sub(2));
    (inner(files), inner(diff))
}

/// How many columns the diff pane has inside its borders.
pub(crate) fn diff_width(area: Rect, s: &State) -> usize {
    let [_, _, diff, _] = layout(area, s);
    usize::from(diff.width.saturating_sub(2))
}

/// Draws the screen from the state, as laid out for this frame.
pub(crate) fn draw(frame: &mut Frame<'_>, s: &State, color: bool) {
    let [header, files, diff, status] = layout(frame.area(), s);
    let style = |c: Color| {
        if color {
            Style::new().fg(c)
        } else {
            Style::new()
        }
    };
    frame.render_widget(Paragraph::new(header_line(s)), header);
    frame.render_widget(file_list(s, files, color), files);
    frame.render_widget(diff_pane(s, diff, &style), diff);
    let lines: Vec<Line<'static>> = status_lines(s, status.width)
        .into_iter()
        .map(Line::from)
        .collect();
    frame.render_widget(Paragraph::new(lines).style(style(Color::Yellow)), status);
    if s.help {
        let keys = match s.reviewed {
            Reviewed::Session => HELP,
            Reviewed::Turn => TURN_HELP,
        };
        help(frame, files.union(diff), keys);
    }
}

/// The session, how many files have each letter, and how many hunks.
fn header_line(s: &State) -> String {
    let files = match s.rows.len() {
        0 => nothing(s).to_owned(),
        1 => "1 file".to_owned(),
        n => format!("{n} files"),
    };
    let letters: Vec<String> = s
        .counts
        .letters
        .iter()
        .map(|(l, n)| match l.trim() {
            "" => format!("{n} unchanged"),
            l => format!("{n} {l}"),
        })
        .collect();
    let letters = if letters.is_empty() {
        String::new()
    } else {
        format!(": {}", letters.join(", "))
    };
    let hunks = match s.counts.hunks {
        1 => "1 hunk".to_owned(),
        n => format!("{n} hunks"),
    };
    let what = match s.reviewed {
        Reviewed::Session => "session",
        Reviewed::Turn => "turn",
    };
    let streaming = if s.streaming.is_empty() {
        ""
    } else {
        " │ a request is streaming"
    };
    expand_tabs(&format!(
        " {what} {} │ {files}{letters} │ {hunks}{streaming}",
        s.session
    ))
}

/// What an empty list says.
fn nothing(s: &State) -> &'static str {
    match s.reviewed {
        Reviewed::Session => "nothing pending",
        Reviewed::Turn => "no changes",
    }
}

/// What the status area says: the question waiting for `y`, the outcome
/// of the last action, or the keys; wrapped to `width`.
fn status_lines(s: &State, width: u16) -> Vec<String> {
    let keys = match s.reviewed {
        Reviewed::Session => KEYS,
        Reviewed::Turn => TURN_KEYS,
    };
    let note;
    let text = match s.message.as_deref() {
        Some(m) => m,
        None if !s.streaming.is_empty() => {
            note = s.streaming_note();
            &note
        }
        None => keys,
    };
    wrap(&expand_tabs(text), usize::from(width))
}

/// `text` broken into lines of at most `width` columns, at spaces where it
/// can and inside a word where a word is longer than a line.
pub(crate) fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut out = Vec::new();
    for para in text.split('\n') {
        let mut line = String::new();
        let mut cols = 0;
        for word in para.split(' ') {
            let w: usize = word.chars().map(|c| c.width().unwrap_or(0)).sum();
            if cols > 0 && cols + 1 + w <= width {
                line.push(' ');
                cols += 1;
            } else if cols > 0 {
                out.push(std::mem::take(&mut line));
                cols = 0;
            }
            for c in word.chars() {
                let cw = c.width().unwrap_or(0);
                if cols + cw > width && cols > 0 {
                    out.push(std::mem::take(&mut line));
                    cols = 0;
                }
                line.push(c);
                cols += cw;
            }
        }
        out.push(line);
    }
    out
}

/// `text` with each tab replaced by spaces up to the next tab stop.
pub(crate) fn expand_tabs(text: &str) -> String {
    if !text.contains('\t') {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len() + TAB);
    let mut col = 0;
    for c in text.chars() {
        if c == '\t' {
            let n = TAB - col % TAB;
            out.extend(std::iter::repeat_n(' ', n));
            col += n;
        } else {
            out.push(c);
            col += c.width().unwrap_or(0);
        }
    }
    out
}

/// A diff line with its tabs expanded from the file text's first column.
fn diff_text(line: &str) -> String {
    match line.chars().next() {
        Some(c @ (' ' | '+' | '-')) if !line.starts_with("+++") && !line.starts_with("---") => {
            format!("{c}{}", expand_tabs(&line[1..]))
        }
        _ => expand_tabs(line),
    }
}

fn title(name: &str, focused: bool) -> String {
    if focused {
        format!("[ {name} ]")
    } else {
        format!(" {name} ")
    }
}

fn file_list(s: &State, area: Rect, color: bool) -> Paragraph<'static> {
    let h = usize::from(area.height.saturating_sub(2));
    let lines: Vec<Line<'static>> = s
        .rows
        .iter()
        .enumerate()
        .skip(s.files_top)
        .take(h)
        .map(|(i, r)| {
            let mark = if i == s.selected { ">" } else { " " };
            let line = Line::from(format!("{mark} {:<2} {}", r.letter, expand_tabs(&r.path)));
            if i == s.selected && color {
                line.style(Style::new().add_modifier(Modifier::REVERSED))
            } else {
                line
            }
        })
        .collect();
    let lines = if s.rows.is_empty() {
        vec![Line::from(format!("  {}", nothing(s)))]
    } else {
        lines
    };
    Paragraph::new(lines).block(
        Block::new()
            .borders(Borders::ALL)
            .title(title("files", s.pane == Pane::Files)),
    )
}

fn diff_pane(s: &State, area: Rect, style: &dyn Fn(Color) -> Style) -> Paragraph<'static> {
    let h = usize::from(area.height.saturating_sub(2));
    let selected = s.shown.hunk_span(s.hunk).map(|r| r.start);
    let lines: Vec<Line<'static>> = (s.scroll..s.shown.line_count().min(s.scroll + h))
        .filter_map(|i| Some((i, s.shown.line(i)?)))
        .map(|(i, (l, note))| {
            if note {
                return Line::from(Span::styled(expand_tabs(l), style(Color::Magenta)));
            }
            let text = diff_text(l);
            if s.shown.starts_hunk(i) {
                let mark = if Some(i) == selected { "▶ " } else { "  " };
                Line::from(Span::styled(format!("{mark}{text}"), style(Color::Cyan)))
            } else if l.starts_with('+') && !l.starts_with("+++") {
                Line::from(Span::styled(format!("  {text}"), style(Color::Green)))
            } else if l.starts_with('-') && !l.starts_with("---") {
                Line::from(Span::styled(format!("  {text}"), style(Color::Red)))
            } else {
                Line::from(format!("  {text}"))
            }
        })
        .collect();
    let name = match (s.path(), s.shown.hunks.len()) {
        (None, _) => "diff".to_owned(),
        (Some(p), 0) => format!("diff {}", expand_tabs(p)),
        (Some(p), n) => format!("diff {} · hunk {} of {n}", expand_tabs(p), s.hunk + 1),
    };
    Paragraph::new(lines).block(
        Block::new()
            .borders(Borders::ALL)
            .title(title(&name, s.pane == Pane::Diff)),
    )
}

fn help(frame: &mut Frame<'_>, area: Rect, keys: &[(&str, &str)]) {
    let width = 66.min(area.width);
    let height = u16::try_from(keys.len() + 2)
        .unwrap_or(u16::MAX)
        .min(area.height);
    let popup = Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    };
    let lines: Vec<Line<'static>> = keys
        .iter()
        .map(|(k, what)| Line::from(format!(" {k:<14} {what}")))
        .collect();
    frame.render_widget(Clear, popup);
    frame.render_widget(
        Paragraph::new(lines).block(Block::new().borders(Borders::ALL).title(" keys ")),
        popup,
    );
}

/// The screen as text, laid out for `width` × `height` as the runner lays
/// it out before each draw.
#[cfg(test)]
pub(crate) fn screen_of(s: &mut State, width: u16, height: u16) -> String {
    let (files, diff) = heights(Rect::new(0, 0, width, height), s);
    s.fit(files, diff);
    let backend = ratatui::backend::TestBackend::new(width, height);
    let mut t = ratatui::Terminal::new(backend).expect("a test terminal");
    t.draw(|f| draw(f, s, false)).expect("drawn");
    t.backend().to_string()
}

#[cfg(test)]
mod tests {
    use ratatui::layout::Rect;

    use super::super::state::{Counts, Key, Row, Shown, State, update};
    use super::{expand_tabs, heights, screen_of, wrap};

    const DIFF: &str = "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@ hunk 1\n one\n-two\n+TWO\n three\n@@ -7,3 +7,3 @@ hunk 2\n seven\n-eight\n+EIGHT\n nine\n";

    fn rows(rows: &[(&str, &str)]) -> Vec<Row> {
        rows.iter()
            .map(|(p, l)| Row {
                path: (*p).into(),
                letter: (*l).into(),
            })
            .collect()
    }

    fn state() -> State {
        let mut s = State::new(
            "default",
            rows(&[("f.txt", "M"), ("g.txt", "~M"), ("new.txt", "A")]),
        );
        s.counts = Counts {
            letters: vec![("A".into(), 1), ("M".into(), 1), ("~M".into(), 1)],
            hunks: 4,
        };
        fit(&mut s, 80, 16);
        s.show(
            Shown::new("", DIFF, &crate::review::state::cut(DIFF), None),
            false,
        );
        s
    }

    fn fit(s: &mut State, width: u16, height: u16) {
        let (files, diff) = heights(Rect::new(0, 0, width, height), s);
        s.fit(files, diff);
    }

    fn screen(s: &mut State) -> String {
        screen_of(s, 80, 16)
    }

    #[test]
    fn the_first_hunk_of_the_first_file() {
        insta::assert_snapshot!(screen(&mut state()));
    }

    #[test]
    fn the_second_hunk_with_the_diff_pane_focused() {
        let mut s = state();
        update(&mut s, Key::Tab);
        update(&mut s, Key::Char('j'));
        insta::assert_snapshot!(screen(&mut s));
    }

    #[test]
    fn a_conflicted_file_shows_its_merge_preview() {
        let mut s = state();
        update(&mut s, Key::Char('j'));
        let note = "changed locally: the merge has 1 conflict(s)\np is refused; m writes conflict markers\n<<<<<<< local\ntwo by hand\n=======\nTWO\n>>>>>>> proposal";
        s.show(
            Shown::new(note, DIFF, &crate::review::state::cut(DIFF), Some(1)),
            false,
        );
        insta::assert_snapshot!(screen(&mut s));
    }

    #[test]
    fn the_help() {
        let mut s = state();
        update(&mut s, Key::Char('?'));
        insta::assert_snapshot!(screen_of(&mut s, 80, 24));
    }

    /// The selected file stays in view when the list is longer than the
    /// pane, so `p` and `x` act on a file the person sees.
    #[test]
    fn the_file_list_scrolls_with_the_selection() {
        let names: Vec<String> = (0..30).map(|i| format!("f{i:02}.txt")).collect();
        let list: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "M")).collect();
        let mut s = State::new("default", rows(&list));
        s.counts.letters = vec![("M".into(), 30)];
        fit(&mut s, 80, 16);
        s.show(
            Shown::new("", DIFF, &crate::review::state::cut(DIFF), None),
            false,
        );
        for _ in 0..20 {
            update(&mut s, Key::Down);
        }
        insta::assert_snapshot!(screen(&mut s));
    }

    /// The last hunk of a diff longer than 65,535 lines is shown, and the
    /// title says which hunk is selected.
    #[test]
    fn a_diff_longer_than_a_u16_scrolls_to_its_last_hunk() {
        let mut diff = String::from("--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@ hunk 1\n-a\n+b\n");
        for i in 0..70_000 {
            diff.push_str(&format!(" line {i}\n"));
        }
        diff.push_str("@@ -70002,2 +70002,2 @@ hunk 2\n-c\n+d\n end\n");
        let mut s = state();
        s.show(
            Shown::new("", &diff, &crate::review::state::cut(&diff), None),
            false,
        );
        update(&mut s, Key::Char('n'));
        insta::assert_snapshot!(screen(&mut s));
    }

    /// Tabs in a file name and in a diff become spaces to the next stop
    /// of 8, counted from the file text's own first column.
    #[test]
    fn tabs_become_spaces_to_the_next_tab_stop() {
        let mut s = State::new("default", rows(&[("a\tb.txt", "M")]));
        fit(&mut s, 80, 12);
        let diff = "--- a/a\tb.txt\n+++ b/a\tb.txt\n@@ -1,2 +1,2 @@ fn\tmain\n-\tx = 1;\n+\tx = 2;\n \tab\tc\n";
        s.show(
            Shown::new("", diff, &crate::review::state::cut(diff), None),
            false,
        );
        insta::assert_snapshot!(screen_of(&mut s, 80, 12));
        assert_eq!(expand_tabs("ab\tc\t\td"), "ab      c               d");
        assert_eq!(
            expand_tabs("日本\tx"),
            "日本    x",
            "wide characters take 2 columns"
        );
    }

    /// A refusal longer than a line wraps in the status area, keeping its
    /// advice, and the panes give up the rows it needs.
    #[test]
    fn a_long_message_wraps_in_the_status_area() {
        let mut s = state();
        update(&mut s, Key::Char('j'));
        s.show(
            Shown::new("", DIFF, &crate::review::state::cut(DIFF), Some(1)),
            false,
        );
        s.message = Some("refused: g.txt: your changes and the proposal overlap (1 conflict(s), starting at line(s) 2 of the merge); nothing was written. Accept with --markers to write git conflict markers, sync, or reject the output. Here: m writes the markers, after you confirm".into());
        insta::assert_snapshot!(screen(&mut s));
    }

    /// While a request streams in, the header says so and the status area
    /// names it in place of the keys.
    #[test]
    fn a_request_streaming_in() {
        let mut s = state();
        s.streaming = vec!["mend apply --pending --stream (pid 4242)".into()];
        insta::assert_snapshot!(screen(&mut s));
    }

    /// `m` on a `~M` file asks before writing markers.
    #[test]
    fn markers_are_asked_for() {
        let mut s = state();
        update(&mut s, Key::Char('j'));
        let note =
            "changed locally: the merge has 1 conflict(s)\np is refused; m writes conflict markers";
        s.show(
            Shown::new(note, DIFF, &crate::review::state::cut(DIFF), Some(1)),
            false,
        );
        update(&mut s, Key::Char('m'));
        insta::assert_snapshot!(screen(&mut s));
    }

    /// With nothing pending the header says so and the panes are empty.
    #[test]
    fn an_empty_session() {
        let mut s = State::new("review-2", Vec::new());
        insta::assert_snapshot!(screen(&mut s));
    }

    #[test]
    fn wrapping_breaks_at_spaces_and_inside_long_words() {
        assert_eq!(wrap("one two three", 7), ["one two", "three"]);
        assert_eq!(wrap("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(wrap("a\n\nb", 10), ["a", "", "b"]);
        assert_eq!(wrap("", 10), [""]);
        assert_eq!(wrap("x  y", 10), ["x  y"], "spaces inside a line are kept");
    }
}
