//! Recording at the command line: whether runs are recorded
//! (`/trajectory on|off`, `SERI_TRAJECTORY`), the configured knobs every
//! header lists, and retention at the start of a session.
//!
//! Recording is on by default. `/trajectory on|off` stores the toggle in
//! `seri.db` (config.json is the person's file and is never rewritten) and
//! applies it at once; `SERI_TRAJECTORY=0|1` wins over the stored toggle at
//! every start, and seri says so in one line when the toggle is set against
//! a variable that will override it.

use seri_core::SessionId;
use seri_providers::{ProviderKind, process_env};
use seri_runloop::{Runtime, TRAJECTORY_ENV, TrajectoryFacts};
use seri_store::{DEFAULT_RETENTION_DAYS, RetentionPolicy};

use crate::app::App;
use crate::exit::Exit;

/// The `settings` key of the stored `/trajectory` toggle.
pub(crate) const RECORDING_SETTING: &str = "trajectory.enabled";

/// Whether runs are recorded, and what decided it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Recording {
    /// On or off.
    pub(crate) on: bool,
    /// `environment SERI_TRAJECTORY`, `stored by /trajectory` or `default`.
    pub(crate) origin: String,
    /// The line to print when the environment overrides a stored toggle.
    pub(crate) overridden: Option<String>,
}

/// Decides recording from the environment variable and the stored toggle:
/// the variable wins, then the toggle, then on.
pub(crate) fn resolve_recording(env: Option<&str>, stored: Option<&str>) -> Result<Recording, Exit> {
    let stored = stored.and_then(parse_switch);
    let from_env = match env {
        Some(value) => Some(parse_switch(value).ok_or_else(|| {
            Exit::usage(format!("environment {TRAJECTORY_ENV} is {value:?}, which is not valid: expected 0 or 1"))
        })?),
        None => None,
    };
    Ok(match (from_env, stored) {
        (Some(on), stored) => Recording {
            on,
            origin: format!("environment {TRAJECTORY_ENV}"),
            overridden: stored
                .filter(|s| *s != on)
                .map(|s| format!("{TRAJECTORY_ENV}={} overrides the stored /trajectory {}", u8::from(on), on_off(s))),
        },
        (None, Some(on)) => Recording { on, origin: "stored by /trajectory".to_owned(), overridden: None },
        (None, None) => Recording { on: true, origin: "default".to_owned(), overridden: None },
    })
}

/// `0`/`1` (and `on`/`off`, `true`/`false`).
fn parse_switch(text: &str) -> Option<bool> {
    match text.trim() {
        "1" | "on" | "true" => Some(true),
        "0" | "off" | "false" => Some(false),
        _ => None,
    }
}

fn on_off(on: bool) -> &'static str {
    if on { "on" } else { "off" }
}

/// What `/trajectory on|off` prints: that it is stored, and the one line
/// saying an environment variable will override it at the next start.
pub(crate) fn toggle_lines(on: bool, env: Option<&str>) -> Vec<String> {
    let mut lines = vec![format!("Trajectory recording is {} (stored for the next start too).", on_off(on))];
    if let Some(value) = env.filter(|v| parse_switch(v).is_some_and(|e| e != on)) {
        lines.push(format!(
            "{TRAJECTORY_ENV}={value} is set in your environment and will turn recording {} again at the next start.",
            on_off(!on)
        ));
    }
    lines
}

/// The retention window in days: `trajectories.retentionDays`, else the default.
pub(crate) fn retention_days(app: &App) -> Result<u32, Exit> {
    match app.config.trajectories.retention_days {
        Some(0) => Err(Exit::usage(
            "config.json trajectories.retentionDays is 0, which is not valid: expected a positive number of days",
        )),
        Some(days) => Ok(days),
        None => Ok(DEFAULT_RETENTION_DAYS),
    }
}

/// At the start of a session: applies the recording decision and the
/// configured knobs to the runtime, then ages recordings out, keeping the
/// session about to be recorded. Pruning that fails is logged; it never
/// stops seri from starting.
pub(crate) fn start(app: &App, runtime: &Runtime, session: Option<SessionId>) -> Result<(), Exit> {
    let store = app.store.agent(&app.agent);
    let stored = store.setting(RECORDING_SETTING)?;
    let recording = resolve_recording(process_env(TRAJECTORY_ENV).as_deref(), stored.as_deref())?;
    if let Some(line) = &recording.overridden {
        eprintln!("seri: {line}");
    }
    runtime.set_trajectory_recording(recording.on);
    runtime.set_trajectory_facts(facts(app));
    prune(app, session)
}

/// Ages recordings out, keeping `session` (the one about to be recorded,
/// if it exists yet). `/clear` calls it too: a new session starts there.
pub(crate) fn prune(app: &App, session: Option<SessionId>) -> Result<(), Exit> {
    let store = app.store.agent(&app.agent);
    let policy = RetentionPolicy { days: retention_days(app)?, current_session: session };
    match store.prune_trajectories(&policy) {
        Ok(report) if !report.is_empty() => tracing::info!(
            sessions = report.sessions.len(),
            legacy_files = report.legacy_files.len(),
            "aged out trajectories older than {} days",
            policy.days
        ),
        Ok(_) => {}
        Err(e) => tracing::warn!(error = %e, "could not age out old trajectories"),
    }
    Ok(())
}

/// The header facts the configuration decides: the sampling knobs and the
/// output cap sent with each request (none: the provider's defaults), the
/// reasoning effort, and OpenRouter's pin.
fn facts(app: &App) -> TrajectoryFacts {
    let pin = match app.effective.provider.value.parse::<ProviderKind>() {
        Ok(ProviderKind::OpenRouter) => app
            .config
            .providers
            .get(ProviderKind::OpenRouter.as_str())
            .and_then(|c| c.pin.as_ref())
            .and_then(|p| serde_json::to_value(p).ok()),
        _ => None,
    };
    let e = &app.effective;
    let mut sampling = serde_json::Map::new();
    if let Some(t) = e.temperature.value {
        sampling.insert("temperature".into(), t.into());
    }
    if let Some(p) = e.top_p.value {
        sampling.insert("topP".into(), p.into());
    }
    if let Some(n) = e.max_output_tokens.value {
        sampling.insert("maxOutputTokens".into(), n.into());
    }
    TrajectoryFacts {
        sampling: Some(serde_json::Value::Object(sampling)),
        reasoning_effort: e.reasoning_effort.value.map(|r| r.as_str().to_owned()),
        openrouter_pin: pin,
    }
}

/// `/trajectory [on|off]`.
pub(crate) fn command(app: &App, runtime: &Runtime, rest: &str) -> Result<Vec<String>, Exit> {
    let on = match rest {
        "" => {
            return Ok(vec![format!(
                "Trajectory recording is {}; recordings are kept {} days. /trajectory on|off to change.",
                on_off(runtime.trajectory_recording()),
                retention_days(app)?
            )]);
        }
        "on" => true,
        "off" => false,
        _ => return Ok(vec!["usage: /trajectory on|off".to_owned()]),
    };
    app.store.agent(&app.agent).set_setting(RECORDING_SETTING, on_off(on))?;
    runtime.set_trajectory_recording(on);
    Ok(toggle_lines(on, process_env(TRAJECTORY_ENV).as_deref()))
}

/// `seri config` rows about trajectories: (setting, value, origin).
pub(crate) fn config_rows(app: &App) -> Result<Vec<(String, String, String)>, Exit> {
    let stored = app.store.agent(&app.agent).setting(RECORDING_SETTING)?;
    let recording = resolve_recording(process_env(TRAJECTORY_ENV).as_deref(), stored.as_deref())?;
    let days_origin = if app.config.trajectories.retention_days.is_some() {
        "config.json trajectories.retentionDays"
    } else {
        "default"
    };
    Ok(vec![
        ("trajectories".to_owned(), on_off(recording.on).to_owned(), recording.origin),
        ("trajectories.retentionDays".to_owned(), retention_days(app)?.to_string(), days_origin.to_owned()),
    ])
}
