//! `seri` with no `-p`: the interactive session. A line editor with history;
//! streamed output; Ctrl-C cancels the running turn (at the prompt it clears
//! the line), Ctrl-D exits; the context meter leads the prompt line; slash
//! commands act on the session.

use std::io::IsTerminal as _;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rustyline::error::ReadlineError;
use seri_core::{Message, SessionId};
use seri_runloop::{Approvals, Command, Quiet, Runtime};
use seri_store::SessionQuery;
use seri_tools::{ApprovalRequest, CallRef, Decision};
use tokio::sync::watch;

use crate::app::App;
use crate::completion::SeriHelper;
use crate::exit::Exit;
use crate::headless;
use crate::inspect;
use crate::render::{Style, Terminal};

mod commands;
mod status_line;

/// The REPL's line editor: history, and Tab completion of slash commands and `@path`.
type Editor = rustyline::Editor<SeriHelper, rustyline::history::DefaultHistory>;

/// What the REPL holds between lines.
struct Repl<'a> {
    app: &'a App,
    runtime: Runtime,
    /// The questions the runtime's tools ask, answered at the terminal.
    approvals: Approvals,
    /// The session messages go to; `None` until the first message (or after `/clear`).
    session: Option<SessionId>,
    max_turns: u32,
    style: Style,
    /// Set by Ctrl-C while a turn runs; cleared when the next turn starts.
    interrupted: watch::Receiver<bool>,
    interrupt: watch::Sender<bool>,
    /// Whether a turn runs now (a SIGTERM then waits for it to be cancelled).
    turn_running: Arc<AtomicBool>,
    /// A line typed after a question was abandoned (its turn cancelled):
    /// the question's reader took it, so it is the next input, not lost.
    typed_ahead: Option<String>,
    /// Keys typed during a turn without Enter: the next prompt starts with them.
    initial: Option<String>,
    /// `typed_ahead` holds the message given on the command line, not yet
    /// shown: it is printed after a prompt, as if typed there.
    echo_first: bool,
    /// Ctrl-D was typed during a turn: the REPL leaves after it.
    leave: bool,
    /// A permission mode the person chose (`--permission-mode`, Shift+Tab
    /// before the first message) that no session has recorded yet.
    pending_mode: Option<seri_core::PermissionMode>,
    /// Shift+Tab at the prompt, with the line it interrupted.
    shift_tab: crate::permission_mode::ShiftTab,
    /// The person's own slash commands (`.seri/commands/`, the profile's `commands/`).
    custom: Vec<crate::slash::CustomCommand>,
    /// A turn of this session just ended with an answer: in plan mode, the
    /// person is asked before the next prompt whether to carry the plan out.
    plan_offer: Option<SessionId>,
    /// The session's cost folded so far, which the status line carries on
    /// from (made again often, it reads only the events since).
    cost_so_far: std::sync::Mutex<commands::cost::Totals>,
    /// The tool outputs shown cut short, which `/expand N` shows in full.
    collapsed: Arc<crate::render::Collapsed>,
    /// The hits of the last `/search`, which `/search open N` counts in.
    search_hits: Vec<seri_store::search::SearchHit>,
}

/// Turns Ctrl-C into a flag for as long as the REPL runs. The handler is
/// installed before the first prompt, so an interrupt between two lines can
/// never kill the process (at the prompt itself the line editor reads
/// Ctrl-C as a key).
///
/// SIGTERM and SIGHUP (a closed terminal) end the REPL: a running turn is
/// cancelled first, so every process its tools started dies with its call
/// and the transcript stays paired, and then seri exits; at the prompt,
/// where nothing runs, it exits at once.
fn listen_for_interrupts(turn_running: Arc<AtomicBool>) -> Result<(watch::Sender<bool>, watch::Receiver<bool>), Exit> {
    use tokio::signal::unix::{SignalKind, signal};
    let listen = |kind, what: &str| {
        signal(kind).map_err(|e| Exit::Failure(anyhow::Error::new(e).context(format!("cannot listen for {what}"))))
    };
    let mut interrupts = listen(SignalKind::interrupt(), "Ctrl-C")?;
    let (mut terminate, mut hangup) =
        (listen(SignalKind::terminate(), "SIGTERM")?, listen(SignalKind::hangup(), "SIGHUP")?);
    let (tx, rx) = watch::channel(false);
    let flag = tx.clone();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                Some(()) = interrupts.recv() => { let _ = flag.send(true); }
                Some(()) = terminate.recv() => break,
                Some(()) = hangup.recv() => break,
                else => return,
            }
        }
        TERMINATING.store(true, Ordering::SeqCst);
        let _ = flag.send(true);
        if !turn_running.load(Ordering::SeqCst) {
            std::process::exit(1);
        }
    });
    Ok((tx, rx))
}

/// Set once SIGTERM or SIGHUP arrived: the REPL leaves after the turn it
/// cancelled.
static TERMINATING: AtomicBool = AtomicBool::new(false);

/// Runs the interactive session until `/exit` or Ctrl-D.
pub(crate) async fn run(
    app: &App,
    session: Option<SessionId>,
    pick: bool,
    first: Option<String>,
    allow_other_folder: bool,
) -> Result<ExitCode, Exit> {
    let session = match (session, pick) {
        (Some(id), _) => Some(id),
        (None, true) => {
            let id = pick_session(app)?;
            if !app.resume_here(id, allow_other_folder, Some(&mut ask_line))? {
                println!("Not resumed.");
                return Ok(ExitCode::SUCCESS);
            }
            Some(id)
        }
        (None, false) => None,
    };
    let style = Style::detect();
    // Questions are values: a tool's question waits in `approvals` until
    // the turn loop below asks the person and submits the answer.
    let approvals = Approvals::new(None);
    let runtime = app.runtime(Some(Arc::new(approvals.clone())))?;
    crate::trajectory::start(app, &runtime, session)?;
    crate::storage::apply_retention(app, session);
    let max_turns = runtime.settings().max_turns;
    let turn_running = Arc::new(AtomicBool::new(false));
    let (interrupt, interrupted) = listen_for_interrupts(turn_running.clone())?;
    let mut repl = Repl {
        app,
        runtime,
        approvals,
        session,
        max_turns,
        style,
        interrupted,
        interrupt,
        turn_running,
        // `seri "task"`: the first message, sent as if typed at the first prompt.
        echo_first: first.as_ref().is_some_and(|f| !f.trim().is_empty()),
        collapsed: Arc::default(),
        search_hits: Vec::new(),
        typed_ahead: first.filter(|f| !f.trim().is_empty()),
        initial: None,
        leave: false,
        pending_mode: app.flags.permission_mode.as_deref().and_then(|m| m.parse().ok()),
        shift_tab: crate::permission_mode::ShiftTab::default(),
        plan_offer: None,
        cost_so_far: std::sync::Mutex::default(),
        custom: crate::slash::custom_commands(
            &crate::prompt_files::repository_root(&app.cwd),
            app.profile.root(),
            app.project_trusted,
        ),
    };
    let mut editor: Editor = rustyline::Editor::new().map_err(|e| Exit::Failure(e.into()))?;
    editor.set_helper(Some(SeriHelper::new(crate::slash::menu_entries(&repl.custom), &app.cwd, style.is_coloured())));
    // Alt+Enter starts a new line of the same message (as `\` + Enter does).
    editor.bind_sequence(
        rustyline::KeyEvent(rustyline::KeyCode::Enter, rustyline::Modifiers::ALT),
        rustyline::Cmd::Newline,
    );
    // Shift+Tab cycles the permission mode.
    repl.shift_tab.bind(&mut editor);
    let history = app.profile.root().join("history");
    let _ = editor.load_history(&history);
    // A mode given on the command line is the session's from now on.
    repl.record_pending_mode()?;
    if let Some(id) = repl.session {
        headless::session_started(&repl.runtime, id, "resume").await;
        let info = app.store.agent(&app.agent).info(id)?;
        println!(
            "Resumed {} \u{201c}{}\u{201d} ({} events). /help for commands.",
            inspect::short(app, id),
            info.title,
            info.last_seq
        );
        println!("{}", style.dim(&repl.in_force(Some(&info))));
        for line in recent_exchanges(app, id, info.last_seq)? {
            println!("{}", style.dim(&line));
        }
        // A continuation a stopped process committed but never ran: its
        // successor's waiting message is answered there, and the REPL
        // follows it. A message nobody answered here (a successor whose run
        // was lost) is answered now, as if it had just been sent.
        if let Some(successor) = headless::recover(&repl.runtime, id).await? {
            println!(
                "This session continued into {} \u{201c}{}\u{201d} before seri stopped; answering the waiting message there.",
                inspect::short(app, successor.session_id),
                successor.title
            );
            repl.session = Some(successor.session_id);
            repl.turn(successor.session_id, Turn::Waiting(successor.user_event_id)).await?;
        } else if let Some((event, text)) = headless::unanswered_message(app, id)? {
            let first_line = text.lines().next().unwrap_or("");
            println!("Answering the waiting message: {first_line}");
            repl.turn(id, Turn::Waiting(event)).await?;
        }
    } else {
        println!("seri: a new session in {}. /help for commands, Ctrl-D to leave.", app.cwd.display());
        println!("{}", style.dim(&repl.in_force(None)));
    }
    // Ctrl-C at an empty prompt twice within two seconds leaves, as in
    // other agents; a line typed in between starts the count over.
    let mut presses = crate::ctrl_c::TwiceToLeave::default();
    let ctrl_c = crate::ctrl_c::CtrlC::default();
    ctrl_c.bind(&mut editor);
    loop {
        if repl.leave && repl.typed_ahead.is_none() {
            break;
        }
        if let Some(session) = repl.plan_offer.take()
            && repl.typed_ahead.is_none()
        {
            repl.offer_to_leave_plan(session).await?;
            continue;
        }
        let read = match repl.typed_ahead.take() {
            // The message given on the command line, shown as if typed.
            Some(line) if std::mem::take(&mut repl.echo_first) => {
                println!("{}{line}", repl.prompt());
                Ok(line)
            }
            Some(line) => Ok(line),
            None => {
                if let Some(status) = repl.status_line().await {
                    println!("{}", repl.style.dim(&status));
                }
                read_input(&mut editor, &repl.prompt(), repl.initial.take().unwrap_or_default())
            }
        };
        match read {
            Ok(line) => {
                presses.typed();
                let line = line.trim();
                if line.is_empty() {
                    continue;
                }
                let _ = editor.add_history_entry(line);
                if let Some(command) = line.strip_prefix('/') {
                    if repl.command(command).await? == Flow::Exit {
                        break;
                    }
                } else if let Some(command) = line.strip_prefix('!') {
                    shell(&app.cwd, command, repl.style);
                } else {
                    repl.say(line).await?;
                }
            }
            Err(ReadlineError::Interrupted) if let Some(line) = repl.shift_tab.take() => {
                repl.cycle_mode()?;
                repl.initial = Some(line);
            }
            Err(ReadlineError::Interrupted) => {
                let typed = ctrl_c.take().unwrap_or_default();
                match presses.press(std::time::Instant::now(), &typed) {
                    crate::ctrl_c::Press::Leave => break,
                    crate::ctrl_c::Press::Warn => println!("(Ctrl-C again within 2 s, Ctrl-D or /exit to leave)"),
                    crate::ctrl_c::Press::Cleared => {}
                }
            }
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(Exit::Failure(e.into())),
        }
    }
    let _ = editor.save_history(&history);
    if let Some(id) = repl.session {
        headless::session_ended(&repl.runtime, id, "prompt_input_exit").await;
        println!("To come back to this session: seri -r {}", inspect::short(app, id));
    }
    Ok(ExitCode::SUCCESS)
}

/// The last few messages of a resumed session, one line each (cut to the
/// terminal's usual width), so the person sees where they left off. Only
/// the session's tail is read.
fn recent_exchanges(app: &App, id: SessionId, last_seq: u64) -> Result<Vec<String>, Exit> {
    const SHOWN: usize = 4;
    let from = seri_core::Seq(last_seq.saturating_sub(63).max(1));
    let events =
        app.store.agent(&app.agent).events(id, seri_store::SeqRange::between(from, seri_core::Seq(last_seq.max(1))))?;
    let lines: Vec<String> = events
        .iter()
        .filter_map(|e| {
            let m = e.body.as_message()?;
            let who = match (m.role, m.actor) {
                (seri_core::Role::Assistant, _) => "seri",
                (_, seri_core::Actor::User) => "you",
                _ => return None,
            };
            let text = m.raw_markdown.as_deref().unwrap_or(&m.content);
            let first: String = text.lines().next().unwrap_or("").chars().take(160).collect();
            (!first.trim().is_empty()).then(|| format!("  {who}: {first}"))
        })
        .collect();
    Ok(lines[lines.len().saturating_sub(SHOWN)..].to_vec())
}

/// One input, which a line ending in `\\` continues on the next (the
/// backslash itself dropped): multi-line messages at a plain line editor.
fn read_input(editor: &mut Editor, prompt: &str, initial: String) -> Result<String, ReadlineError> {
    let mut text = editor.readline_with_initial(prompt, (&initial, ""))?;
    while let Some(head) = text.strip_suffix('\\') {
        let head = head.to_owned();
        let next = editor.readline("… ")?;
        text = format!("{head}\n{next}");
    }
    Ok(text)
}

/// `!cmd`: runs a shell command in the working directory and shows what it
/// printed and how it ended. The model is not told; it is the person's.
fn shell(cwd: &std::path::Path, command: &str, style: Style) {
    let output = std::process::Command::new("sh").arg("-c").arg(command).current_dir(cwd).output();
    match output {
        Ok(out) => {
            print!("{}", String::from_utf8_lossy(&out.stdout));
            eprint!("{}", String::from_utf8_lossy(&out.stderr));
            if !out.status.success() {
                println!("{}", style.red(&format!("({})", out.status)));
            }
        }
        Err(e) => println!("{}", style.red(&format!("cannot run sh: {e}"))),
    }
}

/// What a turn answers.
enum Turn {
    /// A message sent now.
    Say(Box<Message>),
    /// A message already in the session that nothing answered.
    Waiting(seri_core::EventId),
}

#[derive(Debug, PartialEq, Eq)]
enum Flow {
    Stay,
    Exit,
}

impl Repl<'_> {
    /// `[42%] › `: the context meter of the current session, then the
    /// prompt. When the provider reported no usage for the newest answer,
    /// the meter is the local estimate of the next request, marked `~`:
    /// unknown is not zero.
    fn prompt(&self) -> String {
        let meter = self.session.and_then(|id| {
            let info = self.app.store.agent(&self.app.agent).info(id).ok()?;
            // An empty session has nothing to measure yet.
            (info.last_seq > 0).then_some(())?;
            let window = std::num::NonZeroU64::new(self.runtime.session_context_window(&info))
                .unwrap_or(std::num::NonZeroU64::MIN);
            // The per-turn block's own figures (and the server's contextUsage).
            let usage = match info.last_usage {
                Some(usage) => seri_prompt::ContextUsage::new(usage.prompt_tokens(), window),
                None => seri_prompt::ContextUsage::estimated(self.runtime.context_report(id).ok()?.estimated, window),
            };
            Some((usage.percent(), if usage.estimated { "~" } else { "" }))
        });
        let mode = crate::permission_mode::prompt_label(self.mode(), self.style);
        match meter {
            Some((p, mark)) => format!("[{mark}{}] {mode}› ", self.style.meter(p)),
            None => format!("{mode}› "),
        }
    }

    /// The permission mode the next call runs under: the person's choice
    /// not yet recorded, else the session's, else the runtime's.
    /// What is in force for the session (`info`) or a new one: the model
    /// and its provider, the permission mode and the sandbox, one line
    /// under the greeting, as other agents' start banners say.
    fn in_force(&self, info: Option<&seri_core::SessionInfo>) -> String {
        let model = info.map_or_else(|| self.runtime.model().clone(), |info| self.runtime.session_model(info));
        let model =
            if model.model.is_empty() { model.provider.clone() } else { format!("{}/{}", model.provider, model.model) };
        let chosen = info.map(seri_tools::SessionSandbox::of).unwrap_or_default();
        format!("model {model} · mode {} · sandbox {}", self.mode(), self.app.sandbox.describe(chosen))
    }

    fn mode(&self) -> seri_core::PermissionMode {
        if let Some(mode) = self.pending_mode {
            return mode;
        }
        self.session
            .and_then(|id| self.app.store.agent(&self.app.agent).info(id).ok())
            .map_or(self.runtime.permissions().mode(), |info| self.runtime.session_permission_mode(&info))
    }

    /// Records the mode the person chose on the session, once there is one.
    fn record_pending_mode(&mut self) -> Result<(), Exit> {
        let (Some(id), Some(mode)) = (self.session, self.pending_mode) else { return Ok(()) };
        let info = self.app.store.agent(&self.app.agent).info(id)?;
        if info.permission_mode != Some(mode) {
            self.runtime.set_permission_mode(id, mode)?;
        }
        self.pending_mode = None;
        Ok(())
    }

    /// Shift+Tab: the next permission mode (bypass only when this run
    /// started in it), recorded on the session when there is one.
    fn cycle_mode(&mut self) -> Result<(), Exit> {
        let next = self.mode().next(self.runtime.permissions().mode() == seri_core::PermissionMode::Bypass);
        self.pending_mode = Some(next);
        self.record_pending_mode()?;
        println!("{}", self.style.dim(&crate::permission_mode::changed_line(next)));
        Ok(())
    }

    /// After a turn that ended with an answer in plan mode: asks whether
    /// to carry out the plan; a yes leaves plan mode and tells the agent to
    /// go ahead. Leaving plan mode is only ever the person's choice.
    async fn offer_to_leave_plan(&mut self, session: SessionId) -> Result<(), Exit> {
        use crate::permission_mode::{LEAVE_PLAN_QUESTION, PlanAnswer, plan_answer};
        if self.mode() != seri_core::PermissionMode::Plan || self.session != Some(session) {
            return Ok(());
        }
        let Some(answer) = ask_line(&self.style.cyan(LEAVE_PLAN_QUESTION)) else { return Ok(()) };
        let PlanAnswer::Go(mode) = plan_answer(&answer) else {
            println!("{}", self.style.dim("Still in plan mode: say what to change, or Shift+Tab to leave it."));
            return Ok(());
        };
        self.pending_mode = Some(mode);
        self.record_pending_mode()?;
        println!("{}", self.style.dim(&crate::permission_mode::changed_line(mode)));
        let message = Message::user(seri_prompt::text::requests::PLAN_APPROVED);
        self.turn(session, Turn::Say(Box::new(message))).await
    }

    /// Sends a message and streams the answer; follows a continuation into
    /// its successor, since this client sent the message.
    async fn send(&mut self, message: Message) -> Result<(), Exit> {
        let session = self.session_or_new()?;
        self.turn(session, Turn::Say(Box::new(message))).await
    }

    /// Sends what the person typed, with the files its `@path` mentions
    /// bring (`crate::mentions`). A mention that cannot be brought is
    /// explained and nothing is sent, so the line can be fixed and sent again.
    async fn say(&mut self, line: &str) -> Result<(), Exit> {
        let mentioned = match crate::mentions::read(&self.app.cwd, line) {
            Ok(mentioned) => mentioned,
            Err(e) => {
                println!("{}", self.style.red(&format!("{}; nothing was sent", e.message())));
                return Ok(());
            }
        };
        let session = match self.session {
            Some(id) => id,
            None => {
                // Screened before the session exists: a message a hook
                // blocks leaves no empty session behind.
                let id = self.runtime.new_session_id();
                if let Some(words) = self.runtime.screen_first_prompt(id, &self.app.cwd, line).await? {
                    Self::say_blocked(self.style, &words);
                    return Ok(());
                }
                let id = self.app.new_session_as(&self.runtime, Some(id), &self.app.cwd, None)?.id;
                self.session = Some(id);
                self.record_pending_mode()?;
                headless::session_started(&self.runtime, id, "startup").await;
                id
            }
        };
        let (message, brought) = mentioned.into_message(&self.app.store.agent(&self.app.agent), session)?;
        for item in &brought {
            println!("{}", self.style.dim(&format!("  {item}")));
        }
        self.turn(session, Turn::Say(Box::new(message))).await
    }

    /// Says, whole, what a `UserPromptSubmit` hook said when it blocked a message.
    fn say_blocked(style: Style, words: &str) {
        println!("{}", style.red("A UserPromptSubmit hook blocked this message; it was not sent. The hook said:"));
        println!("{words}");
    }

    /// The session this REPL talks in, started now if there is none yet.
    fn session_or_new(&mut self) -> Result<SessionId, Exit> {
        match self.session {
            Some(id) => Ok(id),
            None => {
                let id = self.app.new_session(&self.runtime)?.id;
                self.session = Some(id);
                self.record_pending_mode()?;
                Ok(id)
            }
        }
    }

    /// Runs one turn of `session` and follows it into a successor. While
    /// it runs, the turn's questions are asked at the terminal one at a
    /// time, and Ctrl-C cancels it; both go to the runtime as commands.
    async fn turn(&mut self, session: SessionId, turn: Turn) -> Result<(), Exit> {
        // A Ctrl-C from before this turn does not cancel it; a SIGTERM does.
        self.turn_running.store(true, Ordering::SeqCst);
        if !TERMINATING.load(Ordering::SeqCst) {
            let _ = self.interrupt.send(false);
        }
        let mut interrupted = self.interrupted.clone();
        let mut asked = self.approvals.subscribe();
        let terminal = Terminal::new(self.style).with_collapsed(self.collapsed.clone());
        let running = async {
            match turn {
                Turn::Say(message) => headless::send(&self.runtime, session, *message, self.max_turns, &terminal).await,
                Turn::Waiting(event) => {
                    headless::answer(&self.runtime, session, event, self.max_turns, &terminal).await
                }
            }
        };
        tokio::pin!(running);
        // Esc cancels the turn; keys typed meanwhile go to the next prompt.
        let (esc, mut escaped) = tokio::sync::mpsc::unbounded_channel();
        let keys = crate::keys::KeyWatch::start(esc);
        let mut waiting = std::collections::VecDeque::new();
        let mut asking: Option<(CallRef, tokio::task::JoinHandle<String>)> = None;
        // The status line beside the spinner, made again once events moved
        // on (at most every status_line::REFRESH, as Claude Code debounces it).
        let refreshes = terminal.shows_status() && self.status_command().is_some();
        let mut refresh = tokio::time::interval(status_line::REFRESH);
        refresh.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut status_at = 0;
        // Made beside the turn, which goes on meanwhile.
        let mut making: Option<std::pin::Pin<Box<dyn std::future::Future<Output = Option<String>> + '_>>> = None;
        let report = loop {
            tokio::select! {
                report = &mut running => break report,
                _ = refresh.tick(), if refreshes && making.is_none() => {
                    if terminal.events_seen() != status_at {
                        status_at = terminal.events_seen();
                        making = Some(Box::pin(self.status_line()));
                    }
                }
                Some(line) = async { match &mut making { Some(made) => Some(made.await), None => None } } => {
                    making = None;
                    terminal.set_status(line);
                }
                Some(()) = escaped.recv() => {
                    terminal.note(&self.style.dim("(Esc: cancelling the turn)"));
                    self.runtime.submit(Command::Cancel { session_id: session }, &Quiet).await?;
                }
                Ok(pending) = asked.recv() => {
                    // Notification hooks (a desktop ping) run beside the question, never before it.
                    let (runtime, notified) = (self.runtime.clone(), pending.clone());
                    tokio::spawn(async move { runtime.notification_hooks(&notified).await });
                    waiting.push_back(pending);
                }
                Ok(()) = interrupted.changed() => {
                    if *interrupted.borrow_and_update() {
                        self.runtime.submit(Command::Cancel { session_id: session }, &Quiet).await?;
                    }
                }
                Some(answer) = async { match &mut asking { Some((_, answer)) => answer.await.ok(), None => None } } => {
                    terminal.after_question();
                    if let Some(keys) = &keys {
                        keys.resume();
                    }
                    if let Some((call, _)) = asking.take() {
                        let decision = decision_of(&answer);
                        self.runtime.submit(Command::Approve { call, decision }, &Quiet).await?;
                    }
                }
            }
            if asking.is_none()
                && let Some(next) = waiting.pop_front()
            {
                terminal.before_question();
                if let Some(keys) = &keys {
                    keys.pause();
                }
                asking = Some((next.call.clone(), ask_on_terminal(self.style, &next.request)));
            }
        };
        // A status line still being made is not waited for.
        drop(making);
        // The terminal back in line mode before anything reads a line.
        let (typed, eof) = keys.map(crate::keys::KeyWatch::stop).unwrap_or_default();
        // Ctrl-D typed while the turn ran: leave, as at the prompt.
        self.leave |= eof;
        match typed.split_once('\n') {
            Some((line, _)) if self.typed_ahead.is_none() && !line.trim().is_empty() => {
                self.typed_ahead = Some(line.to_owned());
            }
            Some(_) => {}
            None if !typed.trim().is_empty() => self.initial = Some(typed),
            None => {}
        }
        terminal.finish();
        self.turn_running.store(false, Ordering::SeqCst);
        if let Some((_, reader)) = asking.take() {
            // The turn ended (Ctrl-C) with a question open. Its reader still
            // waits for a line, so the line the person types next is theirs
            // to send: it is taken as the next input, not as an answer.
            println!("{}", self.style.dim("(the question was withdrawn; type your next message)"));
            if let Ok(line) = reader.await
                && !line.trim().is_empty()
            {
                self.typed_ahead = Some(line.trim_end_matches(['\n', '\r']).to_owned());
            }
        }
        if TERMINATING.load(Ordering::SeqCst) {
            // Cancelled by SIGTERM or SIGHUP: everything is settled; leave.
            std::process::exit(1);
        }
        let report = report?;
        if let Some(words) = &report.blocked_by_hook {
            Self::say_blocked(self.style, words);
        }
        if let Some(servers) = self.app.mcp.get() {
            for notice in crate::mcp::changed_notices(servers).await {
                println!("{}", self.style.dim(&notice));
            }
        }
        if let Some(successor) = report.continued_to_session_id {
            self.session = Some(successor);
        }
        if report.status == crate::report::TaskStatus::MaxTurns {
            println!(
                "{}",
                self.style.amber(&format!("Stopped after {} turns (/max-turns N to change).", report.turns))
            );
        }
        if report.status == crate::report::TaskStatus::Succeeded && report.continued_to_session_id.is_none() {
            self.plan_offer = Some(session);
        }
        Ok(())
    }
}

/// Prints `question` and reads one line from the terminal; `None` at end of input.
pub(crate) fn ask_line(question: &str) -> Option<String> {
    use std::io::Write as _;
    print!("{question}");
    let _ = std::io::stdout().flush();
    let mut line = String::new();
    match std::io::stdin().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line),
    }
}

/// Picks a session to resume (`--resume` without an id, `/resume`): this
/// directory's sessions first, then the rest, newest first, each with its
/// title, how long ago it changed and its directory. On a terminal that can
/// redraw, arrows move and typing filters; on a dumb one, a numbered list.
fn pick_session(app: &App) -> Result<SessionId, Exit> {
    if !std::io::stdin().is_terminal() {
        return Err(Exit::usage("--resume without an id needs a terminal to pick from; give the session id"));
    }
    let query = SessionQuery { cwd: None, limit: Some(200), without_children: true, ..SessionQuery::default() };
    let mut sessions = app.store.agent(&app.agent).list_sessions(&query)?;
    if sessions.is_empty() {
        return Err(Exit::usage("there are no sessions to resume"));
    }
    let here = app.cwd.display().to_string();
    // Stable: newest first within each group.
    sessions.sort_by_key(|s| s.cwd != here);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    let items: Vec<String> = sessions
        .iter()
        .map(|s| {
            let title = if s.title.is_empty() { "(untitled)" } else { s.title.as_str() };
            let place = if s.cwd == here { "here".to_owned() } else { s.cwd.clone() };
            format!("{title}  ·  {}  ·  {place}", inspect::ago(now, s.updated_at.millis()))
        })
        .collect();
    let dumb = crate::render::dumb_terminal();
    if !dumb {
        let picked = dialoguer::FuzzySelect::new()
            .with_prompt("Resume which session? (type to filter, Enter picks, Esc leaves)")
            .items(&items)
            .default(0)
            .max_length(15)
            .interact_opt();
        return match picked {
            Ok(Some(i)) => Ok(sessions[i].id),
            Ok(None) => Err(Exit::usage("no session picked")),
            Err(e) => Err(Exit::Failure(anyhow::Error::new(e).context("the session picker failed"))),
        };
    }
    for (i, item) in items.iter().enumerate().take(20) {
        println!("{:>2}. {item}", i + 1);
    }
    let shown = items.len().min(20);
    let mut editor = rustyline::DefaultEditor::new().map_err(|e| Exit::Failure(e.into()))?;
    loop {
        match editor.readline("Resume which? ") {
            Ok(answer) => match answer.trim().parse::<usize>() {
                Ok(n) if (1..=shown).contains(&n) => return Ok(sessions[n - 1].id),
                _ => println!("Type a number from 1 to {shown}."),
            },
            Err(_) => return Err(Exit::usage("no session picked")),
        }
    }
}

/// Asks the person at the terminal whether a tool may act (`ask` policy),
/// on the blocking pool: the question, what would change (a coloured
/// diff, for a file), and the line typed. A line read after the question
/// was withdrawn is the next input instead.
fn ask_on_terminal(style: Style, request: &ApprovalRequest) -> tokio::task::JoinHandle<String> {
    let mut question = format!("\n{}\n", style.amber(&request.summary()));
    if let Some(preview) = &request.preview {
        question.push_str(&style.diff(preview, "  "));
    }
    question.push_str("Allow? [y]es, [a]lways in this session, [n]o, or type what to do instead: ");
    tokio::task::spawn_blocking(move || {
        use std::io::Write as _;
        print!("{question}");
        let _ = std::io::stdout().flush();
        let mut line = String::new();
        let _ = std::io::stdin().read_line(&mut line);
        line
    })
}

/// The answer a typed line gives: `y`/`yes` allows once, `a`/`always`
/// allows the tool for the rest of the session, `n`/`no` or nothing
/// refuses, and anything else refuses with those words for the model.
fn decision_of(line: &str) -> Decision {
    let line = line.trim();
    match line.to_lowercase().as_str() {
        "y" | "yes" => Decision::Allow,
        "a" | "always" => Decision::AllowForSession,
        "" | "n" | "no" => Decision::Deny,
        _ => Decision::Instead(line.to_owned()),
    }
}

#[cfg(test)]
mod tests;
