//! `seri -p TEXT`: one task, no questions asked, the answer on standard
//! output (`text`), one JSON object at the end (`json`), or one JSON event
//! per line as the run proceeds (`stream-json`).

use std::io::Read as _;

use anyhow::Context as _;
use seri_core::{Message, SessionId};
use seri_runloop::{Lane, Quiet, RunObserver, RunSpec, Runtime};
use seri_tools::RunKind;
use tokio::sync::watch;

use crate::app::App;
use crate::args::OutputFormat;
use crate::exit::Exit;
use crate::render::JsonLines;
use crate::report::TaskReport;

/// Runs one task headless and prints its answer. `Ok(false)` when the task
/// did not finish (turn budget, failure): exit 1.
pub(crate) async fn run(app: &App, session: Option<SessionId>, text: &str, format: OutputFormat) -> Result<bool, Exit> {
    let prompt = if text == "-" { read_stdin()? } else { text.to_owned() };
    if prompt.trim().is_empty() {
        return Err(Exit::usage("the prompt is empty: give `-p TEXT`, or `-p -` with the text on standard input"));
    }
    let runtime = app.runtime(None)?;
    let session = match session {
        Some(id) => id,
        None => app.new_session(&runtime)?.id,
    };
    crate::trajectory::start(app, &runtime, Some(session))?;
    let (cancel_tx, cancel) = watch::channel(false);
    // Ctrl-C cancels the run; the transcript stays consistent.
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            let _ = cancel_tx.send(true);
        }
    });
    let observer: Box<dyn RunObserver> = match format {
        OutputFormat::StreamJson => Box::new(JsonLines),
        OutputFormat::Text | OutputFormat::Json => Box::new(Quiet),
    };
    let max_turns = runtime.settings().max_turns;
    let report = send(&runtime, session, &prompt, max_turns, observer.as_ref(), &cancel).await?;
    match format {
        OutputFormat::Text => {
            if let Some(result) = &report.result {
                emit(result);
            }
            if let Some(error) = &report.error {
                tracing::error!("{error}");
                eprintln_error(&format!("seri: the run ended {}: {error}", report.status));
            }
        }
        OutputFormat::Json | OutputFormat::StreamJson => {
            let mut value = serde_json::to_value(&report).context("cannot encode the report")?;
            if format == OutputFormat::StreamJson {
                value["type"] = "result".into();
            }
            emit(&value.to_string());
        }
    }
    Ok(report.succeeded())
}

/// Posts `text` to `session` and runs it to the end, following a
/// continuation into its successor (this client sent the message).
pub(crate) async fn send(
    runtime: &Runtime,
    session: SessionId,
    text: &str,
    max_turns: u32,
    observer: &dyn RunObserver,
    cancel: &watch::Receiver<bool>,
) -> Result<TaskReport, Exit> {
    let event = runtime.post_user_message(session, Message::user(text))?;
    runtime.enqueue(RunSpec {
        session_id: session,
        kind: RunKind::Interactive,
        lane: Lane::Interactive,
        user_event_ids: vec![event],
        max_turns,
    });
    let outcomes = runtime.drain(observer, cancel).await;
    Ok(TaskReport::of(session, &outcomes))
}

fn read_stdin() -> Result<String, Exit> {
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text).context("cannot read the prompt from standard input")?;
    Ok(text)
}

#[allow(clippy::print_stdout)]
fn emit(text: &str) {
    println!("{text}");
}

#[allow(clippy::print_stderr)]
fn eprintln_error(text: &str) {
    eprintln!("{text}");
}
