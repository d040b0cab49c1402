//! How run events look on a terminal: streamed text, dimmed thinking, one
//! line per tool call with its result status, one live line per child run,
//! notices for retries and continuations. Colour only on a terminal and
//! never with `NO_COLOR`; on a terminal, answers are drawn as markdown
//! (with `NO_COLOR`, the same structure without colour) as they stream
//! (`crate::live`), thinking the same way behind a `│` gutter (dim and
//! italic in colour), and both raw in a pipe.
//!
//! On a terminal that can rewrite a line, a spinner says what seri waits
//! for, from the run's start to its end but while a question is asked:
//! the first token, a tool, the model's next turn. It stays on the line
//! under everything else: whatever is printed is written above it (the
//! spinner is lifted, the text written, the spinner drawn again under it),
//! so it never covers text being written.

use std::io::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use seri_core::{SessionId, ToolCallId};
use seri_runloop::{ChildProgress, ContinuedTo, RunEvent, RunObserver};

use crate::child_lines::ChildLines;
use crate::live::LiveText;

/// Terminal styling, off when output is not a terminal or `NO_COLOR` is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Style {
    color: bool,
}

impl Style {
    /// Styling for standard output as it is now.
    pub(crate) fn detect() -> Self {
        use std::io::IsTerminal as _;
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Style { color: std::io::stdout().is_terminal() && !no_color }
    }

    /// No styling at all: what a pipe or `NO_COLOR` gets.
    #[cfg(test)]
    pub(crate) const fn plain() -> Self {
        Style { color: false }
    }

    /// Whether text is painted at all.
    pub(crate) const fn is_coloured(self) -> bool {
        self.color
    }

    fn paint(self, code: &str, text: &str) -> String {
        if self.color { format!("\x1b[{code}m{text}\x1b[0m") } else { text.to_owned() }
    }

    /// Dimmed (thinking, tool lines).
    pub(crate) fn dim(self, text: &str) -> String {
        self.paint("2", text)
    }

    /// Amber (context filling).
    pub(crate) fn amber(self, text: &str) -> String {
        self.paint("33", text)
    }

    /// Red (context nearly full, errors).
    pub(crate) fn red(self, text: &str) -> String {
        self.paint("31", text)
    }

    /// Green (added lines).
    pub(crate) fn green(self, text: &str) -> String {
        self.paint("32", text)
    }

    /// Cyan (a diff's hunk headers).
    pub(crate) fn cyan(self, text: &str) -> String {
        self.paint("36", text)
    }

    /// A unified diff, indented by `indent`: removed lines red, added
    /// green, hunk headers cyan, the rest dimmed.
    pub(crate) fn diff(self, diff: &str, indent: &str) -> String {
        let mut out = String::new();
        for line in diff.lines() {
            let line: String = line.chars().take(200).collect();
            let painted = match line.chars().next() {
                Some('+') => self.green(&line),
                Some('-') => self.red(&line),
                Some('@') => self.cyan(&line),
                _ => self.dim(&line),
            };
            out.push_str(indent);
            out.push_str(&painted);
            out.push('\n');
        }
        out
    }

    /// The context meter: plain below 70%, amber from 70%, red from 85%.
    pub(crate) fn meter(self, percent: u64) -> String {
        let text = format!("{percent}%");
        match percent {
            0..=69 => text,
            70..=84 => self.amber(&text),
            _ => self.red(&text),
        }
    }
}

/// Whether the terminal is a dumb one (`TERM=dumb`): it cannot rewrite a
/// line, so no spinner, key watch or redrawn picker there.
pub(crate) fn dumb_terminal() -> bool {
    std::env::var("TERM").is_ok_and(|t| t == "dumb")
}

/// `950`, `12.3k`, `1.2M`.
pub(crate) fn compact_count(n: u64) -> String {
    match n {
        0..1000 => n.to_string(),
        1000..1_000_000 => format!("{:.1}k", n as f64 / 1000.0),
        _ => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}

/// The line a continuation prints: `Continued in “title” (reason)`.
pub(crate) fn continued_line(c: &ContinuedTo) -> String {
    format!("Continued in \u{201c}{}\u{201d} ({})", c.title, c.reason.as_str().replace('_', " "))
}

/// A child run's line: `  ⤷ “title” · 3 turns · read_file` while it runs,
/// `  ⤷ “title” · 7 turns · succeeded` once it ended.
pub(crate) fn child_line(p: &ChildProgress) -> String {
    let turns = if p.turns == 1 { "1 turn".to_owned() } else { format!("{} turns", p.turns) };
    let state = match (p.finished, &p.last_tool) {
        (Some(status), _) => status.as_str().replace('_', " "),
        (None, Some(tool)) => tool.clone(),
        (None, None) => "starting".to_owned(),
    };
    format!("  \u{2937} \u{201c}{}\u{201d} \u{b7} {turns} \u{b7} {state}", p.title)
}

/// Prints run events to standard output as they arrive.
#[derive(Debug)]
pub(crate) struct Terminal {
    style: Style,
    /// Whether standard output is a terminal, whose child lines can be
    /// rewritten in place.
    live: bool,
    /// Whether the cursor is mid-line (after streamed text).
    mid_line: AtomicBool,
    /// Whether the last thing streamed was thinking.
    thinking: AtomicBool,
    /// The child runs' lines.
    children: Mutex<ChildLines>,
    /// Whether a spinner may be drawn: a terminal that can rewrite a line
    /// (not `TERM=dumb`).
    spins: bool,
    /// The spinner while seri waits for the model or a tool, and what for.
    waiting: Mutex<Option<(ProgressBar, String)>>,
    /// What the spinner waited for when a question took it off the screen:
    /// it comes back once the question is answered.
    asked: Mutex<Option<String>>,
    /// Tokens the run's model turns have used so far (input and output), as
    /// their providers reported them.
    tokens: AtomicU64,
    /// Tokens guessed for turns whose provider reported no usage (their
    /// output, a character in four): the spinner marks the sum `~`.
    guessed: AtomicU64,
    /// Characters streamed by the turn not yet recorded: its output so far,
    /// counted in the spinner (as a guess) until its usage is known.
    streamed: AtomicU64,
    /// The status line, shown after the spinner's figures ([`Terminal::set_status`]).
    status: Mutex<Option<String>>,
    /// How many of the run's events (deltas aside) were seen: the status
    /// line is made again when it moves.
    events: AtomicU64,
    /// Whether answers are drawn as markdown (on a terminal, coloured or
    /// not); the answer or thinking being streamed (`true`: thinking).
    markdown: bool,
    answer: Mutex<Option<(bool, LiveText)>>,
    /// Whether drawn lines may be rewritten (not on a dumb terminal).
    redraws: bool,
    /// The session of the run being drawn (a continuation moves it on).
    session: Mutex<Option<SessionId>>,
    /// The REPL's record of the outputs shown cut short, for `/expand`.
    collapsed: Option<std::sync::Arc<Collapsed>>,
    /// Whether a run that did not succeed says so here (the REPL), or its
    /// caller says it (`seri -p`, on standard error).
    endings: bool,
}

/// The tool outputs a terminal showed cut short, numbered from 1 in the
/// order shown: `/expand N` prints the Nth in full from its stored result.
#[derive(Debug, Default)]
pub(crate) struct Collapsed {
    calls: Mutex<Vec<(SessionId, ToolCallId)>>,
}

impl Collapsed {
    /// Records a call whose output was cut; its number.
    fn add(&self, session: SessionId, call: ToolCallId) -> usize {
        let mut calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
        calls.push((session, call));
        calls.len()
    }

    /// The `n`th call recorded (the newest without `n`), with its number.
    pub(crate) fn get(&self, n: Option<usize>) -> Option<(usize, SessionId, ToolCallId)> {
        let calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
        let n = n.unwrap_or(calls.len());
        let (session, call) = calls.get(n.checked_sub(1)?)?;
        Some((n, *session, call.clone()))
    }
}

impl Terminal {
    pub(crate) fn new(style: Style) -> Self {
        use std::io::IsTerminal as _;
        let live = std::io::stdout().is_terminal();
        let dumb = dumb_terminal();
        Self {
            style,
            live,
            mid_line: AtomicBool::new(false),
            thinking: AtomicBool::new(false),
            children: Mutex::new(ChildLines::default()),
            spins: live && !dumb,
            waiting: Mutex::new(None),
            asked: Mutex::new(None),
            tokens: AtomicU64::new(0),
            guessed: AtomicU64::new(0),
            streamed: AtomicU64::new(0),
            status: Mutex::new(None),
            events: AtomicU64::new(0),
            markdown: live,
            answer: Mutex::new(None),
            redraws: live && !dumb,
            session: Mutex::new(None),
            collapsed: None,
            endings: true,
        }
    }

    /// The same, numbering the outputs it cuts short in `collapsed` (the
    /// REPL's, which `/expand` reads).
    pub(crate) fn with_collapsed(self, collapsed: std::sync::Arc<Collapsed>) -> Self {
        Self { collapsed: Some(collapsed), ..self }
    }

    /// The same, without the line that says how a run that did not
    /// succeed ended: its caller says it.
    pub(crate) fn without_endings(self) -> Self {
        Self { endings: false, ..self }
    }

    /// Writes `bytes` to standard output, above the spinner when there is
    /// one: it is lifted while they are written and drawn again under them.
    fn put(&self, bytes: &str) {
        if bytes.is_empty() {
            return;
        }
        let bar = self.waiting.lock().unwrap_or_else(PoisonError::into_inner).as_ref().map(|(bar, _)| bar.clone());
        let write = || {
            let mut out = std::io::stdout().lock();
            let _ = write!(out, "{bytes}");
            let _ = out.flush();
        };
        match bar {
            Some(bar) => bar.suspend(write),
            None => write(),
        }
    }

    /// A new answer (or thinking), at the terminal's size as it is now.
    fn new_answer(&self, thinking: bool) -> LiveText {
        let (rows, columns) = console::Term::stdout().size();
        let reach = if self.redraws { usize::from(rows).saturating_sub(1) } else { 0 };
        let (width, columns) = (usize::from(columns), usize::from(columns));
        if thinking {
            LiveText::thinking(width, columns, reach, self.style.color)
        } else {
            LiveText::new(width, columns, reach, self.style.color)
        }
    }

    /// Draws what is left of a streamed answer: its end has come.
    fn flush_markdown(&self) {
        let answer = self.answer.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some((_, mut answer)) = answer {
            self.put(&answer.finish());
        }
    }

    /// Shows the spinner: `⠋ thinking · 3s · 1.2k tokens`, until the run
    /// ends. Never mid-line (it would overwrite streamed thinking).
    fn wait(&self, what: &str) {
        if !self.spins || self.mid_line.load(Ordering::Relaxed) {
            return;
        }
        let mut waiting = self.waiting.lock().unwrap_or_else(PoisonError::into_inner);
        let tokens = self.figures();
        if let Some((bar, shown)) = waiting.as_mut() {
            if shown != what {
                bar.set_message(what.to_owned());
                bar.reset_elapsed();
                *shown = what.to_owned();
            }
            bar.set_prefix(tokens);
            return;
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stdout());
        if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} · {elapsed}{prefix}") {
            bar.set_style(style.tick_chars("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏ "));
        }
        bar.set_message(what.to_owned());
        bar.set_prefix(tokens);
        bar.enable_steady_tick(Duration::from_millis(100));
        *waiting = Some((bar, what.to_owned()));
    }

    /// What the spinner says after the time: the tokens so far and the status line.
    fn figures(&self) -> String {
        let reported = self.tokens.load(Ordering::Relaxed);
        let guessed = self.guessed.load(Ordering::Relaxed) + self.streamed.load(Ordering::Relaxed).div_ceil(4);
        // A guess in the sum makes it a guess: marked, never passed off as counted.
        let mark = if guessed > 0 { "~" } else { "" };
        let tokens = reported + guessed;
        let mut figures =
            if tokens > 0 { format!(" · {mark}{} tokens", compact_count(tokens)) } else { String::new() };
        if let Some(status) = self.status.lock().unwrap_or_else(PoisonError::into_inner).as_deref() {
            figures.push_str(" · ");
            figures.push_str(&self.style.dim(status));
        }
        figures
    }

    /// Whether a status line can be shown while a run goes on: only
    /// beside a spinner.
    pub(crate) fn shows_status(&self) -> bool {
        self.spins
    }

    /// How many of the run's events (deltas aside) were seen so far.
    pub(crate) fn events_seen(&self) -> u64 {
        self.events.load(Ordering::Relaxed)
    }

    /// The status line made anew, shown beside the spinner from now on.
    pub(crate) fn set_status(&self, line: Option<String>) {
        *self.status.lock().unwrap_or_else(PoisonError::into_inner) = line;
        if let Some((bar, _)) = self.waiting.lock().unwrap_or_else(PoisonError::into_inner).as_ref() {
            bar.set_prefix(self.figures());
        }
    }

    /// Takes the spinner off the screen; returns what it was waiting for.
    fn stop_waiting(&self) -> Option<String> {
        let taken = self.waiting.lock().unwrap_or_else(PoisonError::into_inner).take();
        taken.map(|(bar, what)| {
            bar.finish_and_clear();
            what
        })
    }

    fn children(&self) -> std::sync::MutexGuard<'_, ChildLines> {
        self.children.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn line(&self, text: &str) {
        self.flush_markdown();
        let (before, after) = if self.live { self.children().around_line() } else { Default::default() };
        let newline = if self.mid_line.swap(false, Ordering::Relaxed) { "\n" } else { "" };
        self.put(&format!("{newline}{before}{text}\n{after}"));
    }

    fn stream(&self, text: &str, thinking: bool) {
        if self.markdown {
            self.children().settle();
            self.finish_line();
            let drawn = {
                let mut answer = self.answer.lock().unwrap_or_else(PoisonError::into_inner);
                // Thinking and the answer are drawn apart: one ends
                // before the other starts.
                let mut drawn = match answer.take_if(|(was, _)| *was != thinking) {
                    Some((_, mut ended)) => ended.finish(),
                    None => String::new(),
                };
                let (_, live) = answer.get_or_insert_with(|| (thinking, self.new_answer(thinking)));
                // A terminal resized mid-answer: what is still drawn as
                // it stands is wrapped anew.
                let (rows, columns) = console::Term::stdout().size();
                let columns = usize::from(columns);
                if live.size() != (columns, columns) {
                    let reach = if self.redraws { usize::from(rows).saturating_sub(1) } else { 0 };
                    live.resize(columns, columns, reach);
                }
                drawn.push_str(&live.push(text));
                drawn
            };
            // The spinner under it: the model is thinking, or writing and
            // goes on to write a tool call when the text stops.
            self.wait(if thinking { "thinking" } else { "writing" });
            self.put(&drawn);
            return;
        }
        self.flush_markdown();
        self.stop_waiting();
        self.children().settle();
        let mut out = std::io::stdout().lock();
        if self.thinking.swap(thinking, Ordering::Relaxed) != thinking && self.mid_line.load(Ordering::Relaxed) {
            let _ = writeln!(out);
        }
        let shown = if thinking { self.style.dim(text) } else { text.to_owned() };
        let _ = write!(out, "{shown}");
        let _ = out.flush();
        self.mid_line.store(!text.ends_with('\n'), Ordering::Relaxed);
    }

    /// One line per child run, rewritten as it moves on (see [`ChildLines`]).
    fn child(&self, progress: &ChildProgress) {
        let text = self.style.dim(&child_line(progress));
        let Some(update) = self.children().update(progress, text, self.live) else { return };
        let newline = if self.mid_line.swap(false, Ordering::Relaxed) { "\n" } else { "" };
        self.put(&format!("{newline}{update}"));
    }

    /// Before a question is printed: the child lines come off the screen
    /// and stay off until [`Terminal::after_question`], so a child's
    /// progress never overwrites what the person is asked.
    pub(crate) fn before_question(&self) {
        self.flush_markdown();
        if let Some(what) = self.stop_waiting() {
            *self.asked.lock().unwrap_or_else(PoisonError::into_inner) = Some(what);
        }
        if !self.live {
            return;
        }
        let lift = self.children().pause();
        let mut out = std::io::stdout().lock();
        if self.mid_line.swap(false, Ordering::Relaxed) {
            let _ = writeln!(out);
        }
        let _ = write!(out, "{lift}");
        let _ = out.flush();
    }

    /// After the answer: the child lines drawn again under it, and the
    /// spinner again under them (an approved tool runs now).
    pub(crate) fn after_question(&self) {
        if self.live {
            let block = self.children().resume();
            self.put(&block);
        }
        let asked = self.asked.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(what) = asked {
            self.wait(&what);
        }
    }

    /// The spinner for work of the REPL's own (`/compact`), until
    /// [`Terminal::finish`].
    pub(crate) fn waiting_for(&self, what: &str) {
        self.wait(what);
    }

    /// A line of the REPL's own (not a run event's), placed like one.
    pub(crate) fn note(&self, text: &str) {
        self.line(text);
    }

    /// Ends streamed text's line, so what follows starts on its own.
    fn finish_line(&self) {
        if self.mid_line.swap(false, Ordering::Relaxed) {
            self.put("\n");
        }
    }

    /// Ends a turn's output on a fresh line.
    pub(crate) fn finish(&self) {
        self.flush_markdown();
        self.stop_waiting();
        if self.mid_line.swap(false, Ordering::Relaxed) {
            let _ = writeln!(std::io::stdout());
        }
    }
}

impl RunObserver for Terminal {
    fn event(&self, event: RunEvent) {
        match &event {
            // Counted before it is drawn, so the spinner under it says it.
            RunEvent::TextDelta(text) | RunEvent::ThinkingDelta(text) => {
                self.streamed.fetch_add(text.chars().count() as u64, Ordering::Relaxed);
            }
            _ => {
                self.events.fetch_add(1, Ordering::Relaxed);
            }
        }
        match event {
            RunEvent::TextDelta(text) => self.stream(&text, false),
            RunEvent::ThinkingDelta(text) => self.stream(&text, true),
            RunEvent::RunStarted { session_id, .. } => {
                *self.session.lock().unwrap_or_else(PoisonError::into_inner) = Some(session_id);
                self.wait("thinking");
            }
            RunEvent::ToolStarted { name, .. } => {
                self.flush_markdown();
                self.finish_line();
                self.wait(&format!("running {name}"));
            }
            RunEvent::TurnRecorded { usage, .. } => {
                self.flush_markdown();
                // The turn's streamed output now counts as its usage, or as a guess without one.
                let streamed = self.streamed.swap(0, Ordering::Relaxed);
                match usage {
                    Some(usage) => {
                        self.tokens.fetch_add(usage.prompt_tokens() + usage.output, Ordering::Relaxed);
                    }
                    None => {
                        self.guessed.fetch_add(streamed.div_ceil(4), Ordering::Relaxed);
                    }
                }
            }
            RunEvent::MessagePosted { .. } => {}
            RunEvent::ToolFinished { id, name, is_error, summary, facts, .. } => {
                let mut call = crate::tool_line::Finished {
                    name: &name,
                    is_error,
                    summary: &summary,
                    facts: facts.as_ref(),
                    expand: None,
                };
                let session = *self.session.lock().unwrap_or_else(PoisonError::into_inner);
                if let (Some(collapsed), Some(session)) = (&self.collapsed, session)
                    && crate::tool_line::cuts_output(call)
                {
                    call.expand = Some(collapsed.add(session, id));
                }
                for line in crate::tool_line::lines(self.style, call) {
                    self.line(&line);
                }
                // The model reads the results next.
                self.wait("thinking");
            }
            RunEvent::Retrying(notice) => {
                self.line(&self.style.dim(&retry_line(&notice)));
                // The provider's own words (a URL, an error chain) go to the log.
                tracing::warn!(error = %notice.error, attempt = notice.attempt, "retrying a model call");
                self.wait("waiting to retry");
            }
            RunEvent::Continued(c) => self.line(&continued_line(&c)),
            RunEvent::Compacted {
                evicted_from_seq,
                evicted_to_seq,
                tokens_before,
                tokens_after,
                still_past_trigger,
            } => {
                let still = if still_past_trigger {
                    "; still above half the window: the newest messages, which stay word for word, are that large"
                } else {
                    ""
                };
                self.line(&self.style.dim(&format!(
                    "  compacted seq {evicted_from_seq}–{evicted_to_seq} into a recap (about {tokens_before} → {tokens_after} tokens{still})"
                )));
            }
            RunEvent::CompactionFailed { error, retry_at_tokens } => {
                self.line(&self.style.amber(&format!(
                    "  compaction failed, continuing uncompacted: {error}; next attempt once the context reaches about {retry_at_tokens} tokens"
                )));
            }
            RunEvent::CompactionSkipped { reason } => self.line(&self.style.dim(&format!("  {reason}"))),
            RunEvent::RuleFired { path, touched } => {
                self.line(&self.style.dim(&format!("  rule {path} applies from here on (it covers {touched})")));
            }
            RunEvent::RulesSkipped { error } => {
                self.line(&self.style.amber(&format!("  no glob rules in this run: {error}")));
            }
            RunEvent::ChildProgress(progress) => self.child(&progress),
            RunEvent::RunFinished(outcome) => {
                self.flush_markdown();
                self.stop_waiting();
                if let Some(error) = &outcome.error
                    && self.endings
                {
                    self.line(&ended_line(self.style, outcome.status, error));
                }
            }
        }
    }
}

/// How a run that did not succeed ended, in words: `cancelled`, `failed:
/// …`, never the status word twice (`cancelled: cancelled`).
pub(crate) fn ended_line(style: Style, status: seri_core::RunStatus, error: &str) -> String {
    let word = status.as_str().replace('_', " ");
    if error.is_empty() || error == status.as_str() || error == word {
        return style.dim(&word);
    }
    style.red(&format!("{word}: {error}"))
}

/// `--output-format stream-json`: one JSON object per line as the run proceeds.
#[derive(Debug, Default)]
pub(crate) struct JsonLines;

impl RunObserver for JsonLines {
    fn event(&self, event: RunEvent) {
        crate::stdout::line(&seri_protocol::StreamEvent::of(&event).to_value().to_string());
    }
}

/// A retry, in one short line: what failed, which attempt, when the next
/// one goes (`anthropic: server error (HTTP 529); attempt 2 of 5, next
/// try in 1.2s`). The provider's whole message is in the log (`logs/seri.log`).
pub(crate) fn retry_line(notice: &seri_providers::RetryNotice) -> String {
    let error = &notice.error;
    let status = error.status.map(|s| format!(" (HTTP {s})")).unwrap_or_default();
    format!(
        "  {}: {}{status}; attempt {} of {}, next try in {:.1}s",
        error.provider,
        error.kind,
        notice.attempt + 1,
        notice.max_attempts,
        notice.delay.as_secs_f64()
    )
}

#[cfg(test)]
mod tests {
    use seri_core::RunStatus;

    use super::*;

    #[test]
    fn a_retry_is_one_short_line_without_the_providers_whole_message() {
        let error = seri_providers::ProviderError::new(
            seri_providers::ErrorKind::Server,
            "anthropic",
            "overloaded_error at https://api.anthropic.com/v1/messages: caused by: connection reset",
        )
        .with_status(529);
        let notice =
            seri_providers::RetryNotice { attempt: 1, max_attempts: 5, delay: Duration::from_millis(1200), error };
        assert_eq!(retry_line(&notice), "  anthropic: server error (HTTP 529); attempt 2 of 5, next try in 1.2s");
    }

    #[test]
    fn an_ending_never_repeats_its_status_word() {
        let plain = Style::plain();
        assert_eq!(ended_line(plain, RunStatus::Cancelled, "cancelled"), "cancelled");
        assert_eq!(
            ended_line(plain, RunStatus::Failed, "the provider refused the key"),
            "failed: the provider refused the key"
        );
        assert_eq!(ended_line(plain, RunStatus::MaxTurns, "max turns"), "max turns");
    }
}
