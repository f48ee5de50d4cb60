//! Drawing the review screen: the file list with letters, the selected
//! file's numbered hunks, and a status line. Colour only when `color`.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::state::{Pane, State};

const KEYS: &str = "j/k move  tab pane  n/N hunk  a/r accept/reject hunk  p/x file  u sync  ? help";

const HELP: &[(&str, &str)] = &[
    ("j / k, arrows", "move (files, or hunks in the diff pane)"),
    ("tab", "switch panes"),
    ("n / N", "next or previous hunk"),
    ("space / a", "accept the hunk"),
    ("r", "reject the hunk"),
    ("p", "accept the file (a changed file is merged)"),
    ("x", "discard the file's output"),
    ("u", "sync: the file now becomes the context"),
    ("?", "this help"),
    ("q", "quit"),
];

/// Draws the screen. `diff` is the selected file's numbered diff, and
/// `note` a line above it (a `~M` file's merge preview).
pub fn draw(frame: &mut Frame<'_>, s: &State, diff: &str, note: Option<&str>, color: bool) {
    let [main, status] =
        Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(frame.area());
    let [files, right] =
        Layout::horizontal([Constraint::Percentage(30), Constraint::Percentage(70)]).areas(main);
    let style = |c: Color| {
        if color {
            Style::new().fg(c)
        } else {
            Style::new()
        }
    };
    frame.render_widget(file_list(s, color), files);
    frame.render_widget(diff_pane(s, diff, note, &style, right), right);
    let line = s.message.clone().unwrap_or_else(|| KEYS.to_owned());
    frame.render_widget(Paragraph::new(line).style(style(Color::Yellow)), status);
    if s.help {
        help(frame, main);
    }
}

fn title(name: &str, focused: bool) -> String {
    if focused {
        format!("[ {name} ]")
    } else {
        format!(" {name} ")
    }
}

fn file_list(s: &State, color: bool) -> Paragraph<'static> {
    let lines: Vec<Line<'static>> = s
        .rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mark = if i == s.selected { ">" } else { " " };
            let line = Line::from(format!("{mark} {:<2} {}", r.letter, r.path));
            if i == s.selected && color {
                line.style(Style::new().add_modifier(Modifier::REVERSED))
            } else {
                line
            }
        })
        .collect();
    let lines = if lines.is_empty() {
        vec![Line::from("  nothing pending")]
    } else {
        lines
    };
    Paragraph::new(lines).block(
        Block::new()
            .borders(Borders::ALL)
            .title(title("files", s.pane == Pane::Files)),
    )
}

fn diff_pane<'a>(
    s: &State,
    diff: &'a str,
    note: Option<&'a str>,
    style: &dyn Fn(Color) -> Style,
    area: Rect,
) -> Paragraph<'a> {
    let mut lines: Vec<Line<'a>> = note
        .into_iter()
        .flat_map(str::lines)
        .map(|l| Line::from(Span::styled(l, style(Color::Magenta))))
        .collect();
    let mut selected_at = 0;
    let mut hunk = 0;
    for l in diff.lines() {
        let line = if l.starts_with("@@ ") {
            hunk += 1;
            let here = hunk == s.hunk + 1;
            if here {
                selected_at = lines.len();
            }
            let mark = if here { "▶ " } else { "  " };
            Line::from(Span::styled(format!("{mark}{l}"), style(Color::Cyan)))
        } else if l.starts_with('+') && !l.starts_with("+++") {
            Line::from(Span::styled(format!("  {l}"), style(Color::Green)))
        } else if l.starts_with('-') && !l.starts_with("---") {
            Line::from(Span::styled(format!("  {l}"), style(Color::Red)))
        } else {
            Line::from(format!("  {l}"))
        };
        lines.push(line);
    }
    // Keep the selected hunk in view, a couple of lines from the top.
    let height = area.height.saturating_sub(2) as usize;
    let scroll = if selected_at + 2 > height {
        selected_at.saturating_sub(2)
    } else {
        0
    };
    Paragraph::new(lines)
        .scroll((u16::try_from(scroll).unwrap_or(u16::MAX), 0))
        .block(
            Block::new()
                .borders(Borders::ALL)
                .title(title("diff", s.pane == Pane::Diff)),
        )
}

fn help(frame: &mut Frame<'_>, area: Rect) {
    let width = 64.min(area.width);
    let height = (HELP.len() as u16 + 2).min(area.height);
    let popup = Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    };
    let lines: Vec<Line<'static>> = HELP
        .iter()
        .map(|(k, what)| Line::from(format!(" {k:<14} {what}")))
        .collect();
    frame.render_widget(Clear, popup);
    frame.render_widget(
        Paragraph::new(lines).block(Block::new().borders(Borders::ALL).title(" keys ")),
        popup,
    );
}

#[cfg(test)]
mod tests {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    use super::super::state::{Key, Row, State, update};
    use super::draw;

    const DIFF: &str = "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@ hunk 1\n one\n-two\n+TWO\n three\n@@ -7,3 +7,3 @@ hunk 2\n seven\n-eight\n+EIGHT\n nine\n";

    fn state() -> State {
        let rows = [("f.txt", "M"), ("g.txt", "~M"), ("new.txt", "A")]
            .iter()
            .map(|(p, l)| Row {
                path: (*p).into(),
                letter: (*l).into(),
            })
            .collect();
        let mut s = State::new(rows);
        s.hunks = 2;
        s
    }

    fn screen(s: &State, note: Option<&str>) -> String {
        let mut t = Terminal::new(TestBackend::new(80, 16)).unwrap();
        t.draw(|f| draw(f, s, DIFF, note, false)).unwrap();
        t.backend().to_string()
    }

    #[test]
    fn the_first_hunk_of_the_first_file() {
        insta::assert_snapshot!(screen(&state(), None));
    }

    #[test]
    fn the_second_hunk_with_the_diff_pane_focused() {
        let mut s = state();
        update(&mut s, Key::Tab);
        update(&mut s, Key::Char('j'));
        insta::assert_snapshot!(screen(&s, None));
    }

    #[test]
    fn a_conflicted_file_shows_its_merge_preview() {
        let mut s = state();
        update(&mut s, Key::Char('j'));
        let note = "changed locally: the merge has 1 conflict(s), p is refused\n<<<<<<< local\ntwo by hand\n=======\nTWO\n>>>>>>> proposal";
        insta::assert_snapshot!(screen(&s, Some(note)));
    }

    #[test]
    fn the_help() {
        let mut s = state();
        update(&mut s, Key::Char('?'));
        insta::assert_snapshot!(screen(&s, None));
    }
}
