//! The child runs' lines at the bottom of the terminal: one line per child,
//! rewritten in place as the child moves on.
//!
//! On a terminal the lines form a block under everything else. An update
//! moves the cursor up over the block (`ESC[nA`), clears to the end of the
//! screen (`ESC[J`) and draws the block again, so each child keeps one line
//! that changes. Anything else printed meanwhile goes above the block, which
//! is drawn again under it; once every child in the block has finished, the
//! block stays where it is as a record and the next child starts a new one.
//! Elsewhere (a pipe, a file) a child's line is printed once each time it
//! changes, since a pipe cannot be rewritten.
//!
//! This is the state and the bytes to write; the caller writes them.

use seri_core::SessionId;
use seri_runloop::ChildProgress;

/// One child's line.
#[derive(Debug)]
struct Line {
    session: SessionId,
    text: String,
    finished: bool,
}

/// The block of child lines, and how much of it is on screen.
#[derive(Debug, Default)]
pub(crate) struct ChildLines {
    lines: Vec<Line>,
    /// How many lines of the block are drawn (live output only); the cursor
    /// is at the start of the line under them.
    drawn: usize,
    /// While a question is asked, updates only change the lines' state:
    /// drawing would erase the question the person is answering.
    paused: bool,
}

impl ChildLines {
    /// What to write for a child's new `text`; `None` when its line did not
    /// change.
    pub(crate) fn update(&mut self, progress: &ChildProgress, text: String, live: bool) -> Option<String> {
        let finished = progress.finished.is_some();
        match self.lines.iter_mut().find(|l| l.session == progress.session_id) {
            Some(line) if line.text == text => return None,
            Some(line) => {
                line.text.clone_from(&text);
                line.finished = finished;
            }
            None => self.lines.push(Line { session: progress.session_id, text: text.clone(), finished }),
        }
        if !live {
            return Some(format!("{text}\n"));
        }
        if self.paused {
            return None;
        }
        let mut out = self.erase();
        out.push_str(&self.draw());
        Some(out)
    }

    /// What to write before and after another line is printed (live output):
    /// the block is lifted and drawn again under it while a child still runs.
    /// A finished block is left in place.
    pub(crate) fn around_line(&mut self) -> (String, String) {
        if self.drawn == 0 {
            return (String::new(), String::new());
        }
        if self.lines.iter().all(|l| l.finished) {
            self.settle();
            return (String::new(), String::new());
        }
        (self.erase(), self.draw())
    }

    /// Takes the block off the screen for a question, and keeps it off
    /// until [`ChildLines::resume`]: what to write first.
    pub(crate) fn pause(&mut self) -> String {
        self.paused = true;
        self.erase()
    }

    /// Ends [`ChildLines::pause`]: the block, as it now stands, drawn again
    /// under the answered question.
    pub(crate) fn resume(&mut self) -> String {
        self.paused = false;
        if self.lines.is_empty() || self.lines.iter().all(|l| l.finished) {
            return String::new();
        }
        self.draw()
    }

    /// Leaves the block where it is: streamed text follows it, and the next
    /// child starts a new block.
    pub(crate) fn settle(&mut self) {
        self.lines.clear();
        self.drawn = 0;
    }

    fn erase(&mut self) -> String {
        if self.drawn == 0 {
            return String::new();
        }
        let out = format!("\x1b[{}A\r\x1b[J", self.drawn);
        self.drawn = 0;
        out
    }

    fn draw(&mut self) -> String {
        self.drawn = self.lines.len();
        self.lines.iter().map(|l| format!("{}\n", l.text)).collect()
    }
}

#[cfg(test)]
mod tests {
    use seri_core::ToolCallId;
    use seri_runloop::RunStatus;

    use super::*;

    fn progress(n: u8, finished: bool) -> ChildProgress {
        ChildProgress {
            call_id: ToolCallId(format!("d{n}")),
            session_id: SessionId::from_bytes([n; 16]),
            title: format!("child {n}"),
            turns: 0,
            last_tool: None,
            finished: finished.then_some(RunStatus::Succeeded),
        }
    }

    #[test]
    fn a_question_takes_the_block_off_screen_and_updates_wait_for_the_answer() {
        let mut lines = ChildLines::default();
        assert_eq!(lines.update(&progress(1, false), "a 0".into(), true).as_deref(), Some("a 0\n"));
        assert_eq!(lines.update(&progress(2, false), "b 0".into(), true).as_deref(), Some("\x1b[1A\r\x1b[Ja 0\nb 0\n"));
        assert_eq!(lines.pause(), "\x1b[2A\r\x1b[J", "lifted before the question is printed");
        assert_eq!(lines.update(&progress(1, false), "a 1".into(), true), None, "nothing drawn over the question");
        assert_eq!(lines.resume(), "a 1\nb 0\n", "drawn again, as it now stands, under the answer");
        assert_eq!(lines.update(&progress(2, false), "b 1".into(), true).as_deref(), Some("\x1b[2A\r\x1b[Ja 1\nb 1\n"));
    }

    #[test]
    fn a_pipe_gets_each_changed_line_once() {
        let mut lines = ChildLines::default();
        assert_eq!(lines.update(&progress(1, false), "a 0".into(), false).as_deref(), Some("a 0\n"));
        assert_eq!(lines.update(&progress(1, false), "a 0".into(), false), None, "unchanged");
        assert_eq!(lines.update(&progress(2, false), "b 0".into(), false).as_deref(), Some("b 0\n"));
        assert_eq!(lines.update(&progress(1, true), "a done".into(), false).as_deref(), Some("a done\n"));
        assert_eq!(lines.around_line(), (String::new(), String::new()), "nothing is drawn on a pipe");
    }

    #[test]
    fn a_terminal_gets_one_line_per_child_rewritten_in_place() {
        let mut lines = ChildLines::default();
        assert_eq!(lines.update(&progress(1, false), "a 0".into(), true).as_deref(), Some("a 0\n"));
        assert_eq!(lines.update(&progress(2, false), "b 0".into(), true).as_deref(), Some("\x1b[1A\r\x1b[Ja 0\nb 0\n"));
        assert_eq!(lines.update(&progress(1, false), "a 1".into(), true).as_deref(), Some("\x1b[2A\r\x1b[Ja 1\nb 0\n"));
        // A line printed meanwhile goes above the block.
        assert_eq!(lines.around_line(), ("\x1b[2A\r\x1b[J".to_owned(), "a 1\nb 0\n".to_owned()));
        lines.update(&progress(1, true), "a done".into(), true);
        lines.update(&progress(2, true), "b done".into(), true);
        // Every child finished: the block stays, and the next one starts anew.
        assert_eq!(lines.around_line(), (String::new(), String::new()));
        assert_eq!(lines.update(&progress(3, false), "c 0".into(), true).as_deref(), Some("c 0\n"));
    }
}
