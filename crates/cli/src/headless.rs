//! `seri -p TEXT`: one task, no questions asked, the answer on standard
//! output (`text`), one JSON object at the end (`json`), or one JSON event
//! per line as the run proceeds (`stream-json`). On a terminal, `text`
//! draws the run as the REPL does while it streams (the answer as markdown,
//! a line per tool call, the spinner); in a pipe it prints the final
//! answer once, as it came.

use std::io::Read as _;

use anyhow::Context as _;
use seri_core::{Actor, EventBody, EventId, Message, Seq, SessionId};
use seri_runloop::shell_hooks::HookEvent;
use seri_runloop::{Command, ContinuedTo, Lane, Quiet, RunObserver, RunOutcome, Runtime, Submitted};
use seri_store::SeqRange;

use crate::app::App;
use crate::args::{OutputFormat, RunKindArg};
use crate::exit::Exit;
use crate::render::{JsonLines, Style, Terminal};
use crate::report::TaskReport;

/// Runs one task headless and prints its answer. `Ok(false)` when the task
/// did not finish (turn budget, failure): exit 1.
pub(crate) async fn run(
    app: &App,
    session: Option<SessionId>,
    text: &str,
    format: OutputFormat,
    kind: RunKindArg,
) -> Result<Ended, Exit> {
    let prompt = if text == "-" { read_stdin()? } else { with_piped_stdin(text)? };
    if prompt.trim().is_empty() {
        return Err(Exit::usage("the prompt is empty: give `-p TEXT`, or `-p -` with the text on standard input"));
    }
    let prompt = own_command(app, prompt)?;
    // Files are read before anything is created, so a mention that cannot
    // be brought leaves no empty session behind.
    let mentioned = crate::mentions::read(&app.cwd, &prompt)?;
    let runtime = app.runtime(None)?;
    let opened = session;
    let started = std::time::Instant::now();
    let session = match session {
        Some(id) => id,
        None => {
            // Screened before the session exists: a message a hook blocks
            // leaves no empty session behind.
            let id = runtime.new_session_id();
            if let Some(words) = runtime.screen_first_prompt(id, &app.cwd, &prompt).await? {
                let blocked = RunOutcome::blocked_prompt(id, words);
                return blocked_before_start(format, TaskReport::of(id, &[blocked]), started);
            }
            app.new_session_as(&runtime, Some(id), &app.cwd, None)?.id
        }
    };
    crate::permission_mode::record_flag(app, &runtime, session)?;
    crate::trajectory::start(app, &runtime, Some(session))?;
    session_started(&runtime, session, if opened.is_some() { "resume" } else { "startup" }).await;
    crate::storage::apply_retention(app, Some(session));
    // Ctrl-C, SIGTERM (`timeout`, a cancelled CI job) and SIGHUP (a closed
    // terminal) cancel the task, in whichever session it runs by then (a
    // recovered successor's too: this process submits nothing else). The
    // tools' processes die with their calls and the transcript stays
    // consistent; then seri exits as a cancelled task does.
    let canceller = runtime.clone();
    let interrupted = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let by_ctrl_c = interrupted.clone();
    // A reader that stopped reading (`| head -1`) ends the task the same
    // way, and then seri ends quietly.
    tokio::spawn(async move {
        // Ctrl-C is the person interrupting; the rest stop seri.
        let by_person = tokio::select! {
            signal = stop_requested() => signal == StopSignal::Interrupt,
            () = crate::stdout::closed() => false,
        };
        if by_person {
            by_ctrl_c.store(true, std::sync::atomic::Ordering::SeqCst);
            canceller.interrupt_all();
        } else {
            canceller.cancel_all();
        }
    });
    // The ending is said on stderr below, as in a pipe.
    let streamed = format == OutputFormat::Text && std::io::IsTerminal::is_terminal(&std::io::stdout());
    let terminal = streamed.then(|| Terminal::new(Style::detect()).without_endings());
    let observer: &dyn RunObserver = match (&terminal, format) {
        (Some(terminal), _) => terminal,
        (None, OutputFormat::StreamJson) => &JsonLines,
        (None, OutputFormat::Text | OutputFormat::Json) => &Quiet,
    };
    let max_turns = runtime.settings().max_turns;
    let task = async {
        // A session a stopped process left mid-continuation: its successor's
        // waiting message is answered first, and the task follows it there.
        let mut recovered = Vec::new();
        let mut target = session;
        if opened.is_some()
            && let Some(successor) = recover(&runtime, session).await?
        {
            recovered = runs(runtime.submit(answer_command(&successor, max_turns), observer).await?);
            target = successor.session_id;
        }
        // A script's task is a trigger's message: the runtime answers it with a
        // script run (no continuation, no coding tools that change anything).
        // `@path` mentions bring their files, as in the REPL.
        let (message, _) = mentioned.into_message(&app.store.agent(&app.agent), target)?;
        let message = match kind {
            RunKindArg::Interactive => message,
            RunKindArg::Script => Message { actor: Actor::Trigger, ..message },
        };
        let report = send(&runtime, target, message, max_turns, observer).await?;
        Ok::<_, Exit>((recovered, target, report))
    };
    let finished = task.await;
    let last =
        finished.as_ref().map_or(session, |(_, target, report)| report.continued_to_session_id.unwrap_or(*target));
    session_ended(&runtime, last, "other").await;
    if let Some(terminal) = &terminal {
        terminal.finish();
    }
    let (recovered, target, mut report) = match finished {
        Ok(done) => done,
        Err(exit) => {
            // A task that could not run to an outcome (the store went away,
            // the session could not be read) still answers a script that
            // reads the JSON document: which session, and why it failed.
            if format != OutputFormat::Text && !crate::stdout::is_closed() {
                let failed = TaskReport::failed(session, exit.message()).timed_and_priced(started.elapsed(), None);
                let mut value = serde_json::to_value(&failed).context("cannot encode the report")?;
                if format == OutputFormat::StreamJson {
                    value["type"] = "result".into();
                }
                emit(&value.to_string());
            }
            return Err(exit);
        }
    };
    if let Some(servers) = app.mcp.get() {
        for notice in crate::mcp::changed_notices(servers).await {
            eprintln!("seri: {notice}");
        }
    }
    if target != session {
        report = TaskReport::of(session, &recovered).then(report, target);
    }
    // Priced by the model that answered (the session's own, after a `/model`).
    let answered_by = app.store.agent(&app.agent).info(target).map(|info| runtime.session_model(&info));
    let price = answered_by.ok().and_then(|m| app.config.prices.get(&format!("{}/{}", m.provider, m.model)).cloned());
    report = report.timed_and_priced(started.elapsed(), price.as_ref());
    match format {
        // On a terminal the answer was drawn as it came.
        OutputFormat::Text if streamed => {}
        OutputFormat::Text => {
            if let Some(result) = &report.result {
                emit(result);
            }
        }
        OutputFormat::Json | OutputFormat::StreamJson => {
            let mut value = serde_json::to_value(&report).context("cannot encode the report")?;
            if format == OutputFormat::StreamJson {
                // The stream's last line, as Claude Code's `result` says it.
                value["type"] = "result".into();
                value["duration_ms"] = report.duration_ms.into();
                value["total_cost_usd"] = report.total_cost_usd.into();
            }
            emit(&value.to_string());
        }
    }
    if !crate::stdout::is_closed() {
        // Every ending but success says what happened on stderr, whatever
        // the output format printed: a budget run out has no error text.
        match (&report.error, report.status) {
            (Some(error), crate::report::TaskStatus::MaxTurns) => {
                eprintln_error(&format!("seri: the task stopped at its turn limit: {error}"));
            }
            (Some(error), _) => eprintln_error(&format!("seri: the task failed: {error}")),
            (None, crate::report::TaskStatus::MaxTurns) => eprintln_error(&format!(
                "seri: the model used all {} turns without finishing (--max-turns N allows more)",
                report.turns
            )),
            (None, crate::report::TaskStatus::Failed) => {
                eprintln_error("seri: the task failed without an answer");
            }
            (None, crate::report::TaskStatus::Succeeded) => {}
        }
    }
    Ok(if interrupted.load(std::sync::atomic::Ordering::SeqCst) {
        Ended::Interrupted
    } else if report.succeeded() {
        Ended::Succeeded
    } else {
        Ended::NotFinished
    })
}

/// Says that a `UserPromptSubmit` hook blocked the first message of a
/// session that was never made: the hook's words whole on stderr, and for
/// JSON output the report with `session_id` null (no session exists).
fn blocked_before_start(format: OutputFormat, report: TaskReport, started: std::time::Instant) -> Result<Ended, Exit> {
    let report = report.timed_and_priced(started.elapsed(), None);
    if format != OutputFormat::Text {
        let mut value = serde_json::to_value(&report).context("cannot encode the report")?;
        value["session_id"] = serde_json::Value::Null;
        if format == OutputFormat::StreamJson {
            value["type"] = "result".into();
        }
        emit(&value.to_string());
    }
    if let Some(error) = &report.error {
        eprintln_error(&format!("seri: {error}"));
    }
    Ok(Ended::NotFinished)
}

/// How a headless task ended, for its exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ended {
    /// It finished: exit 0.
    Succeeded,
    /// Its turn budget ran out, or it failed: exit 1.
    NotFinished,
    /// The person pressed Ctrl-C (SIGINT): exit 130, as a shell's command
    /// killed by it does, so a script can tell an interruption from a failure.
    Interrupted,
}

/// Sends `message` to `session` and runs it to the end, following a
/// continuation into its successor (this client sent the message). The
/// message waits for the session like a run does: it is posted once no
/// other run (another terminal's) holds the session, never inside its turn.
pub(crate) async fn send(
    runtime: &Runtime,
    session: SessionId,
    message: Message,
    max_turns: u32,
    observer: &dyn RunObserver,
) -> Result<TaskReport, Exit> {
    let command = Command::Send { session_id: session, message, lane: Lane::Interactive, max_turns: Some(max_turns) };
    Ok(TaskReport::of(session, &runs(runtime.submit(command, observer).await?)))
}

/// Runs the `SessionStart` hooks of `session` (`source`: `startup` for a
/// new session, `resume`): what they print reaches the model with the
/// session's next message. A hook that cannot run is logged; it never
/// stops the person.
pub(crate) async fn session_started(runtime: &Runtime, session: SessionId, source: &str) {
    let fields = serde_json::json!({ "source": source });
    if let Err(e) = runtime.session_hooks(HookEvent::SessionStart, session, source, fields).await {
        tracing::warn!(%session, error = %e, "the SessionStart hooks did not run");
    }
}

/// Runs the `SessionEnd` hooks of `session` (`reason`:
/// `prompt_input_exit` when the REPL was left, else `other`).
pub(crate) async fn session_ended(runtime: &Runtime, session: SessionId, reason: &str) {
    let fields = serde_json::json!({ "reason": reason });
    if let Err(e) = runtime.session_hooks(HookEvent::SessionEnd, session, reason, fields).await {
        tracing::warn!(%session, error = %e, "the SessionEnd hooks did not run");
    }
}

/// Answers `event`, a message already in `session` that nothing answered,
/// following a continuation into its successor.
pub(crate) async fn answer(
    runtime: &Runtime,
    session: SessionId,
    event: EventId,
    max_turns: u32,
    observer: &dyn RunObserver,
) -> Result<TaskReport, Exit> {
    let command = Command::Answer { session_id: session, event_id: event, max_turns: Some(max_turns) };
    Ok(TaskReport::of(session, &runs(runtime.submit(command, observer).await?)))
}

/// What opening `session` finds left by a process that stopped: the
/// successor whose waiting message is still to be answered, if any.
pub(crate) async fn recover(runtime: &Runtime, session: SessionId) -> Result<Option<ContinuedTo>, Exit> {
    match runtime.submit(Command::Recover { session_id: session }, &Quiet).await? {
        Submitted::Recovered(successor) => Ok(successor),
        _ => Ok(None),
    }
}

fn answer_command(successor: &ContinuedTo, max_turns: u32) -> Command {
    Command::Answer { session_id: successor.session_id, event_id: successor.user_event_id, max_turns: Some(max_turns) }
}

/// The runs a message took.
fn runs(submitted: Submitted) -> Vec<RunOutcome> {
    match submitted {
        Submitted::Ran(outcomes) => outcomes,
        _ => Vec::new(),
    }
}

/// The session's newest event, when it is a message from a person or a
/// trigger that nothing answered yet: what a successor whose run was lost
/// (a crash right after a continuation) is left with.
pub(crate) fn unanswered_message(app: &App, session: SessionId) -> Result<Option<(EventId, String)>, Exit> {
    let store = app.store.agent(&app.agent);
    let last = store.summary(session)?.last_seq;
    if last == 0 {
        return Ok(None);
    }
    let newest = store.events(session, SeqRange::between(Seq(last), Seq(last)))?;
    Ok(newest.into_iter().next().and_then(|event| match &event.body {
        EventBody::Message(m) if m.is_from_user_or_trigger() => Some((event.id, m.content.clone())),
        _ => None,
    }))
}

/// Which signal asked seri to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StopSignal {
    /// SIGINT: Ctrl-C, the person at the terminal.
    Interrupt,
    /// SIGTERM or SIGHUP: a service manager, `timeout`, a closed terminal.
    Terminate,
}

/// The first of SIGINT, SIGTERM or SIGHUP. Without the handlers (an
/// unusual platform) it waits for ever, and the default actions stand.
pub(crate) async fn stop_requested() -> StopSignal {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut int), Ok(mut term), Ok(mut hup)) =
        (signal(SignalKind::interrupt()), signal(SignalKind::terminate()), signal(SignalKind::hangup()))
    else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = int.recv() => StopSignal::Interrupt,
        _ = term.recv() => StopSignal::Terminate,
        _ = hup.recv() => StopSignal::Terminate,
    }
}

/// `seri -p "/name ARGS"`: a person's command (the profile's, or a
/// project's once `seri mcp trust` trusted its files as they are) is
/// expanded as the REPL expands it; any other text, a built-in's name
/// included, is the message as it is. A project's command that is not
/// trusted is refused: a file in the workspace may have been written by a
/// model, and a headless run often runs unattended.
fn own_command(app: &App, prompt: String) -> Result<String, Exit> {
    let Some(typed) = prompt.strip_prefix('/') else { return Ok(prompt) };
    let (name, arguments) = typed.split_once(char::is_whitespace).unwrap_or((typed, ""));
    let repository = crate::prompt_files::repository_root(&app.cwd);
    let commands = crate::slash::custom_commands(&repository, app.profile.root(), app.project_trusted);
    match commands.iter().find(|command| command.name == name) {
        Some(command) if command.source.runs() => Ok(command.expand(arguments)),
        Some(command) => Err(Exit::usage(crate::slash::untrusted_command(command))),
        None => Ok(prompt),
    }
}

/// `cat file | seri -p "explain"`: when standard input is not a terminal,
/// what it holds follows the prompt in a fenced block (a longer fence than
/// any the text itself holds). Nothing is added when it is empty.
fn with_piped_stdin(text: &str) -> Result<String, Exit> {
    use std::io::IsTerminal as _;
    if std::io::stdin().is_terminal() {
        return Ok(text.to_owned());
    }
    let piped = read_stdin()?;
    if piped.trim().is_empty() {
        return Ok(text.to_owned());
    }
    let longest = piped.lines().map(|l| l.len() - l.trim_start_matches('`').len()).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    Ok(format!("{text}\n\n{fence}\n{}\n{fence}", piped.trim_end_matches(['\n', '\r'])))
}

fn read_stdin() -> Result<String, Exit> {
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text).context("cannot read the prompt from standard input")?;
    Ok(text)
}

fn emit(text: &str) {
    crate::stdout::line(text);
}

#[allow(clippy::print_stderr)]
fn eprintln_error(text: &str) {
    eprintln!("{text}");
}
