//! Ctrl-C at the prompt: with a line typed it clears the line; on an empty
//! prompt the first press says how to leave and a second within
//! [`WINDOW`] leaves. Anything typed in between starts over, so a line the
//! person went on to type is never lost to a late second press.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rustyline::{Cmd, ConditionalEventHandler, Event, EventContext, EventHandler, KeyCode, KeyEvent, Modifiers};

/// How soon the second Ctrl-C must follow the first to leave.
pub(crate) const WINDOW: Duration = Duration::from_secs(2);

/// What a Ctrl-C at the prompt does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Press {
    /// A line was typed: it is cleared, and the count starts over.
    Cleared,
    /// The first on an empty prompt: say how to leave.
    Warn,
    /// The second within the window: leave.
    Leave,
}

/// The presses so far.
#[derive(Debug, Default)]
pub(crate) struct TwiceToLeave {
    last: Option<Instant>,
}

impl TwiceToLeave {
    /// A Ctrl-C at `now`, with `typed` the line it interrupted.
    pub(crate) fn press(&mut self, now: Instant, typed: &str) -> Press {
        if !typed.trim().is_empty() {
            self.last = None;
            return Press::Cleared;
        }
        match self.last.replace(now) {
            Some(first) if now.saturating_duration_since(first) <= WINDOW => Press::Leave,
            _ => Press::Warn,
        }
    }

    /// A line was entered (or a turn ran): the next Ctrl-C is a first one.
    pub(crate) fn typed(&mut self) {
        self.last = None;
    }
}

/// Ctrl-C bound in the line editor to end the read as before, keeping the
/// line it interrupted for [`TwiceToLeave::press`].
#[derive(Debug, Clone, Default)]
pub(crate) struct CtrlC(Arc<Mutex<Option<String>>>);

impl CtrlC {
    /// Binds Ctrl-C in `editor`.
    pub(crate) fn bind<H: rustyline::Helper, I: rustyline::history::History>(
        &self,
        editor: &mut rustyline::Editor<H, I>,
    ) {
        editor.bind_sequence(
            KeyEvent(KeyCode::Char('C'), Modifiers::CTRL),
            EventHandler::Conditional(Box::new(self.clone())),
        );
    }

    /// The line typed when Ctrl-C was last pressed, if it was.
    pub(crate) fn take(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }
}

impl ConditionalEventHandler for CtrlC {
    fn handle(&self, _: &Event, _: rustyline::RepeatCount, _: bool, ctx: &EventContext) -> Option<Cmd> {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(ctx.line().to_owned());
        Some(Cmd::Interrupt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_presses_within_two_seconds_leave() {
        let start = Instant::now();
        let mut presses = TwiceToLeave::default();
        assert_eq!(presses.press(start, ""), Press::Warn);
        assert_eq!(presses.press(start + Duration::from_millis(1_900), ""), Press::Leave);
    }

    #[test]
    fn a_second_press_after_the_window_warns_again() {
        let start = Instant::now();
        let mut presses = TwiceToLeave::default();
        assert_eq!(presses.press(start, ""), Press::Warn);
        let late = start + Duration::from_millis(2_500);
        assert_eq!(presses.press(late, ""), Press::Warn);
        assert_eq!(presses.press(late + Duration::from_millis(500), ""), Press::Leave, "counted from the newest");
    }

    #[test]
    fn typing_in_between_starts_over() {
        let start = Instant::now();
        let mut presses = TwiceToLeave::default();
        assert_eq!(presses.press(start, ""), Press::Warn);
        assert_eq!(presses.press(start + Duration::from_millis(300), "half a line"), Press::Cleared);
        assert_eq!(presses.press(start + Duration::from_millis(600), ""), Press::Warn, "the line was not lost to it");
        presses.typed();
        assert_eq!(presses.press(start + Duration::from_millis(900), ""), Press::Warn);
    }
}
