//! Trajectories at the command line: whether runs are recorded
//! (`/trajectory on|off`, `SERI_TRAJECTORY`), retention at the start of a
//! session, and `seri trajectory show|diff`.
//!
//! Recording is on by default. `/trajectory on|off` stores the toggle in
//! `seri.db` (config.json is the person's file and is never rewritten) and
//! applies it at once; `SERI_TRAJECTORY=0|1` wins over the stored toggle at
//! every start, and seri says so in one line when the toggle is set against
//! a variable that will override it.

use std::fmt::Write as _;

use anyhow::Context as _;
use serde_json::Value;
use seri_core::{RunId, SessionId};
use seri_providers::{ProviderKind, process_env};
use seri_runloop::{Runtime, TRAJECTORY_ENV, TrajectoryFacts};
use seri_store::{
    DEFAULT_RETENTION_DAYS, RetentionPolicy, SeqRange, StoredRecord, Trajectory, TrajectoryHeader, TrajectoryRecord,
    elided_bytes,
};

use crate::app::App;
use crate::exit::Exit;
use crate::inspect;

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

/// The header facts the configuration decides: OpenRouter's pin. seri sends
/// no sampling knob and no reasoning effort of its own yet, so those read
/// as the provider's defaults.
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
    TrajectoryFacts { sampling: None, reasoning_effort: None, openrouter_pin: pin }
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

/// What an id given to `seri trajectory` names.
enum Target {
    Run(RunId),
    Session(SessionId),
}

fn resolve(app: &App, id: &str) -> Result<Target, Exit> {
    let store = app.store.agent(&app.agent);
    if let Ok(run) = id.parse::<RunId>()
        && store.trajectory(run)?.is_some()
    {
        return Ok(Target::Run(run));
    }
    let runs = store.read(|r| r.trajectory_by_prefix(id))?;
    if let [run] = runs.as_slice() {
        return Ok(Target::Run(*run));
    }
    match store.resolve_session(id) {
        Ok(session) => Ok(Target::Session(session)),
        Err(e) if runs.len() > 1 => {
            Err(Exit::usage(format!("`{id}` is ambiguous: it starts {} run ids ({e})", runs.len())))
        }
        Err(_) => Err(Exit::usage(format!(
            "no trajectory or session `{id}`: give a run id (see `seri trajectory show SESSION`) or a session id"
        ))),
    }
}

/// `seri trajectory show ID [--json]`: a run's trajectory, or every
/// trajectory of a session.
pub(crate) fn show(app: &App, id: &str, json: bool) -> Result<String, Exit> {
    let store = app.store.agent(&app.agent);
    let (session, trajectories) = match resolve(app, id)? {
        Target::Run(run) => {
            let trajectory =
                store.trajectory(run)?.ok_or_else(|| Exit::usage(format!("run `{run}` has no trajectory")))?;
            if json {
                return Ok(serde_json::to_string_pretty(&trajectory).context("cannot encode the trajectory")?);
            }
            return Ok(render(&trajectory));
        }
        Target::Session(session) => {
            let runs = store.trajectory_runs(session)?;
            let mut all = Vec::new();
            for run in runs {
                all.extend(store.trajectory(run)?);
            }
            (session, all)
        }
    };
    let legacy = legacy_part(app, session, json)?;
    if json {
        let mut value = serde_json::json!({ "sessionId": session, "trajectories": trajectories });
        if let Some(legacy) = legacy.json {
            value["legacy"] = legacy;
        }
        return Ok(serde_json::to_string_pretty(&value).context("cannot encode the trajectories")?);
    }
    let mut parts: Vec<String> = trajectories.iter().map(render).collect();
    parts.extend(legacy.text);
    if parts.is_empty() {
        return Ok(format!(
            "Session {} has no recorded trajectory: recording was off, or retention pruned it (the conversation \
             stays: seri thread {}).",
            inspect::short(app, session),
            inspect::short(app, session)
        ));
    }
    Ok(parts.join("\n\n"))
}

/// A legacy file's trajectory, rendered or as JSON.
#[derive(Default)]
struct LegacyPart {
    text: Option<String>,
    json: Option<Value>,
}

/// For a session imported from an older release's file: the tool calls
/// and results the file brought in, or, once retention forgot them, a
/// line saying so. The conversation itself is always kept.
fn legacy_part(app: &App, session: SessionId, json: bool) -> Result<LegacyPart, Exit> {
    let store = app.store.agent(&app.agent);
    let Some(legacy) = store.legacy_trajectory(session)? else { return Ok(LegacyPart::default()) };
    if let Some(pruned) = legacy.pruned_at {
        let modified = legacy.file_modified_at.map_or_else(|| "unknown".to_owned(), |t| t.to_string());
        let text = format!(
            "The trajectory of the legacy file {} (last modified {modified}) was pruned on {pruned}: it fell out of \
             the retention window. The file is untouched and the conversation is kept: seri thread {}.",
            legacy.path.display(),
            inspect::short(app, session)
        );
        let value =
            serde_json::json!({"path": legacy.path, "prunedAt": pruned, "fileModifiedAt": legacy.file_modified_at});
        return Ok(LegacyPart { text: Some(text), json: Some(value) });
    }
    let records: Vec<Value> = store
        .events(session, SeqRange::ALL)?
        .iter()
        .filter_map(|e| match &e.body {
            seri_core::EventBody::ToolCall(c) => Some(serde_json::json!({
                "kind": "tool_call", "toolCallId": c.id, "name": c.name, "arguments": c.arguments,
            })),
            seri_core::EventBody::ToolResult(r) => Some(serde_json::json!({
                "kind": "tool_result", "toolCallId": r.tool_call_id, "name": r.name, "isError": r.is_error,
                "content": r.content,
            })),
            _ => None,
        })
        .map(seri_store::trajectories::elide::elide_record)
        .collect();
    if json {
        return Ok(LegacyPart { text: None, json: Some(serde_json::json!({"path": legacy.path, "records": records})) });
    }
    let mut out = format!("legacy file  {}\n", legacy.path.display());
    for (i, record) in records.iter().enumerate() {
        let _ = writeln!(out, "{:>4}  {}", i + 1, record_line_of_value(record));
    }
    Ok(LegacyPart { text: Some(out.trim_end().to_owned()), json: None })
}

/// A trajectory as text: the header, then one line per record.
pub(crate) fn render(trajectory: &Trajectory) -> String {
    let h = &trajectory.header;
    let mut out = String::new();
    let _ = writeln!(out, "run          {}  (session {})", h.run_id, h.session_id);
    for (label, value) in header_fields(h) {
        let _ = writeln!(out, "{label:<12} {value}");
    }
    for record in &trajectory.records {
        let _ = writeln!(out, "{:>4}  {}", record.ord, record_line(record));
    }
    out.trim_end().to_owned()
}

/// The header as labelled values, in the order `show` prints and `diff` compares them.
fn header_fields(h: &TrajectoryHeader) -> Vec<(&'static str, String)> {
    let files = if h.prompt_files.is_empty() {
        "(none)".to_owned()
    } else {
        h.prompt_files.iter().map(|f| format!("{} {}", f.path, short_hash(&f.sha256))).collect::<Vec<_>>().join(", ")
    };
    vec![
        ("started", h.started_at.to_string()),
        ("model", format!("{}/{}", h.model.provider, h.model.model)),
        ("strategy", h.strategy.clone()),
        ("window", format!("{} tokens", h.context_window)),
        ("max turns", h.max_turns.to_string()),
        ("kind", format!("{} ({} lane)", h.kind, h.lane)),
        (
            "sampling",
            if h.sampling.as_object().is_none_or(|m| m.is_empty()) {
                "(provider defaults)".to_owned()
            } else {
                h.sampling.to_string()
            },
        ),
        ("reasoning", h.reasoning_effort.clone().unwrap_or_else(|| "(not set)".to_owned())),
        ("pin", h.openrouter_pin.as_ref().map_or_else(|| "(none)".to_owned(), Value::to_string)),
        ("prompt", h.system_prompt_sha256.as_deref().map_or_else(|| "(none)".to_owned(), |s| short_hash(s).to_owned())),
        ("files", files),
        ("seri", h.seri_version.clone()),
    ]
}

fn short_hash(hash: &str) -> &str {
    hash.get(..12).unwrap_or(hash)
}

/// A value as one short line: elided values as their size, long text cut.
fn brief(value: &Value) -> String {
    let text = match shown_value(value) {
        Value::String(s) => s.lines().next().unwrap_or("").to_owned(),
        other => other.to_string(),
    };
    if text.chars().count() > 100 { format!("{}…", text.chars().take(100).collect::<String>()) } else { text }
}

/// `value` with every elision marker replaced by `<elided: N bytes>`.
fn shown_value(value: &Value) -> Value {
    if let Some(bytes) = elided_bytes(value) {
        return Value::from(format!("<elided: {bytes} bytes>"));
    }
    match value {
        Value::Array(items) => Value::Array(items.iter().map(shown_value).collect()),
        Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), shown_value(v))).collect()),
        other => other.clone(),
    }
}

fn record_line(record: &StoredRecord) -> String {
    match record.record() {
        Some(r) => typed_line(&r),
        None => record_line_of_value(&record.data),
    }
}

fn record_line_of_value(data: &Value) -> String {
    let kind = data["kind"].as_str().unwrap_or("?");
    format!("{kind:<12} {}", brief(data))
}

fn typed_line(record: &TrajectoryRecord) -> String {
    let kind = record.kind();
    let rest = match record {
        TrajectoryRecord::ToolCall { tool_call_id, name, arguments } => {
            format!("{tool_call_id} {name} {}", brief(arguments))
        }
        TrajectoryRecord::ToolResult { tool_call_id, name, is_error, content } => {
            format!("{tool_call_id} {name}{}: {}", if *is_error { " (error)" } else { "" }, brief(content))
        }
        TrajectoryRecord::Checkpoint { tool_call_id, path, before } => {
            format!("{tool_call_id} {path} (before: {})", state(before))
        }
        TrajectoryRecord::Denial { tool_call_id, tool, reason, detail } => {
            format!("{tool_call_id} {tool} refused ({reason}): {}", brief(detail))
        }
        TrajectoryRecord::Check { tool_call_id, command, exit_code, signal, timed_out, passed } => {
            let how = match (exit_code, signal, timed_out) {
                (_, _, true) => "timed out".to_owned(),
                (Some(code), _, _) => format!("exit {code}"),
                (None, Some(signal), _) => format!("signal {signal}"),
                (None, None, false) => "no status".to_owned(),
            };
            format!("{tool_call_id} {} {how}: {}", if *passed { "passed" } else { "failed" }, brief(command))
        }
        TrajectoryRecord::Edit { tool_call_id, tool, path, outcome, detail, .. } => {
            let outcome =
                serde_json::to_value(outcome).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
            format!("{tool_call_id} {tool} {}: {outcome} ({})", path.as_deref().unwrap_or("?"), brief(detail))
        }
        TrajectoryRecord::Usage { turn, usage } => format!(
            "turn {turn}: input {}, cache read {}, cache write {}, output {}",
            usage.input, usage.cache_read, usage.cache_write, usage.output
        ),
        TrajectoryRecord::Retry { attempt, max_attempts, delay_ms, error } => {
            format!("attempt {attempt} of {max_attempts} failed, retrying in {delay_ms} ms: {}", brief(error))
        }
        TrajectoryRecord::Compaction { evicted_from_seq, evicted_to_seq, tokens_before, tokens_after } => {
            format!("seq {evicted_from_seq}–{evicted_to_seq} into a recap: {tokens_before} → {tokens_after} tokens")
        }
        TrajectoryRecord::CompactionFailed { error } => format!("failed: {}", brief(error)),
        TrajectoryRecord::Ended { status, turns, usage, error, continued_to, .. } => {
            let mut line =
                format!("{status} after {turns} turns (input {}, output {})", usage.prompt_tokens(), usage.output);
            if let Some(to) = continued_to {
                let _ = write!(line, ", continued in {}", to);
            }
            if let Some(error) = error {
                let _ = write!(line, ": {}", brief(error));
            }
            line
        }
    };
    format!("{kind:<12} {rest}")
}

fn state(s: &seri_store::FileState) -> String {
    match s {
        seri_store::FileState::Absent => "no file".to_owned(),
        seri_store::FileState::Present { sha256, bytes } => format!("{bytes} bytes, {}", short_hash(sha256)),
    }
}

/// `seri trajectory diff A B`: where two runs' headers and outcomes differ.
pub(crate) fn diff(app: &App, a: &str, b: &str) -> Result<String, Exit> {
    let load = |id: &str| -> Result<Trajectory, Exit> {
        match resolve(app, id)? {
            Target::Run(run) => app
                .store
                .agent(&app.agent)
                .trajectory(run)?
                .ok_or_else(|| Exit::usage(format!("run `{run}` has no trajectory"))),
            Target::Session(_) => Err(Exit::usage(format!(
                "`{id}` is a session; diff compares two runs (see `seri trajectory show {id}`)"
            ))),
        }
    };
    let (left, right) = (load(a)?, load(b)?);
    let lines = diff_lines(&left, &right);
    let mut out = format!("A  run {}\nB  run {}\n", left.header.run_id, right.header.run_id);
    if lines.is_empty() {
        out.push_str("No differences in header or outcome.");
    } else {
        out.push_str(&lines.join("\n"));
    }
    Ok(out)
}

/// One line per header field or outcome figure that differs: `label: A → B`.
pub(crate) fn diff_lines(a: &Trajectory, b: &Trajectory) -> Vec<String> {
    let mut lines = Vec::new();
    let skip = ["started"];
    for ((label, left), (_, right)) in header_fields(&a.header).into_iter().zip(header_fields(&b.header)) {
        if !skip.contains(&label) && left != right {
            lines.push(format!("{label}: {left} → {right}"));
        }
    }
    for ((label, left), (_, right)) in outcome(a).into_iter().zip(outcome(b)) {
        if left != right {
            lines.push(format!("{label}: {left} → {right}"));
        }
    }
    lines
}

/// The outcome figures `diff` compares.
fn outcome(t: &Trajectory) -> Vec<(&'static str, String)> {
    let records: Vec<TrajectoryRecord> = t.records.iter().filter_map(StoredRecord::record).collect();
    let count = |f: &dyn Fn(&TrajectoryRecord) -> bool| records.iter().filter(|r| f(r)).count().to_string();
    let (status, turns, usage, result, error) = match t.ended() {
        Some(TrajectoryRecord::Ended { status, turns, usage, result, error, .. }) => (
            status.to_string(),
            turns.to_string(),
            format!("input {}, output {}", usage.prompt_tokens(), usage.output),
            result.as_ref().map_or_else(|| "(none)".to_owned(), brief),
            error.as_ref().map_or_else(|| "(none)".to_owned(), brief),
        ),
        _ => ("(did not finish)".to_owned(), "?".to_owned(), "?".to_owned(), "?".to_owned(), "?".to_owned()),
    };
    let tools: Vec<String> = records
        .iter()
        .filter_map(|r| match r {
            TrajectoryRecord::ToolCall { name, .. } => Some(name.clone()),
            _ => None,
        })
        .collect();
    vec![
        ("status", status),
        ("turns", turns),
        ("usage", usage),
        ("tool calls", if tools.is_empty() { "(none)".to_owned() } else { tools.join(", ") }),
        ("denials", count(&|r| matches!(r, TrajectoryRecord::Denial { .. }))),
        ("checks passed", count(&|r| matches!(r, TrajectoryRecord::Check { passed: true, .. }))),
        ("checks failed", count(&|r| matches!(r, TrajectoryRecord::Check { passed: false, .. }))),
        (
            "edits applied",
            count(&|r| matches!(r, TrajectoryRecord::Edit { outcome: seri_store::EditOutcome::Applied, .. })),
        ),
        ("retries", count(&|r| matches!(r, TrajectoryRecord::Retry { .. }))),
        ("result", result),
        ("error", error),
    ]
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use seri_core::{ModelRef, Timestamp, Usage};

    use super::*;

    #[test]
    fn the_environment_wins_over_the_stored_toggle_and_says_so() {
        let r = resolve_recording(Some("1"), Some("off")).unwrap();
        assert!(r.on);
        assert_eq!(r.origin, "environment SERI_TRAJECTORY");
        assert_eq!(r.overridden.as_deref(), Some("SERI_TRAJECTORY=1 overrides the stored /trajectory off"));
        let r = resolve_recording(Some("0"), Some("off")).unwrap();
        assert_eq!((r.on, r.overridden), (false, None), "agreeing is not overriding");
        assert!(!resolve_recording(None, Some("off")).unwrap().on);
        let default = resolve_recording(None, None).unwrap();
        assert_eq!((default.on, default.origin.as_str()), (true, "default"));
        let err = resolve_recording(Some("maybe"), None).unwrap_err();
        assert_eq!(err.message(), "environment SERI_TRAJECTORY is \"maybe\", which is not valid: expected 0 or 1");
    }

    #[test]
    fn setting_the_toggle_against_the_environment_prints_one_line_about_it() {
        assert_eq!(
            toggle_lines(false, Some("1")),
            [
                "Trajectory recording is off (stored for the next start too).",
                "SERI_TRAJECTORY=1 is set in your environment and will turn recording on again at the next start."
            ]
        );
        assert_eq!(toggle_lines(true, Some("1")).len(), 1, "no notice when they agree");
        assert_eq!(toggle_lines(true, None).len(), 1);
    }

    fn trajectory(model: &str, records: Vec<TrajectoryRecord>) -> Trajectory {
        let run: RunId = "01937b2e-0000-7000-8000-000000000001".parse().unwrap();
        let session: SessionId = "01937b2e-0000-7000-8000-000000000002".parse().unwrap();
        Trajectory {
            header: TrajectoryHeader {
                run_id: run,
                session_id: session,
                started_at: Timestamp(1_796_018_400_000),
                seri_version: "0.0.0".into(),
                model: ModelRef::new("openrouter", model),
                strategy: "continue".into(),
                context_window: 200_000,
                max_turns: 500,
                kind: seri_core::RunKindName::Interactive,
                lane: seri_core::Lane::Interactive,
                sampling: json!({}),
                reasoning_effort: None,
                openrouter_pin: Some(json!({"order": ["anthropic"], "allowFallbacks": false})),
                system_prompt_sha256: Some("ab".repeat(32)),
                prompt_files: vec![seri_core::PromptFile { path: "AGENTS.md".into(), sha256: "cd".repeat(32) }],
            },
            records: records
                .into_iter()
                .enumerate()
                .map(|(i, r)| StoredRecord {
                    ord: i as u64 + 1,
                    at: Timestamp(1_796_018_400_000),
                    kind: r.kind().to_owned(),
                    data: seri_store::trajectories::elide::elide_record(serde_json::to_value(&r).unwrap()),
                })
                .collect(),
        }
    }

    fn ended(status: &str, turns: u32) -> TrajectoryRecord {
        TrajectoryRecord::Ended {
            status: status.parse().unwrap(),
            turns,
            usage: Usage { input: 100, output: 10, ..Usage::default() },
            result: Some(json!("Done.")),
            error: None,
            continued_to: None,
        }
    }

    #[test]
    fn show_renders_the_header_and_one_line_per_record() {
        let t = trajectory(
            "anthropic/claude-sonnet-4.5",
            vec![
                TrajectoryRecord::ToolCall {
                    tool_call_id: "c1".into(),
                    name: "write_file".into(),
                    arguments: json!({"path": "a.txt", "content": "x".repeat(5000)}),
                },
                TrajectoryRecord::Check {
                    tool_call_id: "c2".into(),
                    command: json!("cargo test"),
                    exit_code: Some(101),
                    signal: None,
                    timed_out: false,
                    passed: false,
                },
                ended("succeeded", 2),
            ],
        );
        insta::assert_snapshot!("trajectory_show_text", render(&t));
    }

    #[test]
    fn diff_lists_header_and_outcome_differences_only() {
        let a = trajectory("anthropic/claude-sonnet-4.5", vec![ended("succeeded", 2)]);
        let b = trajectory(
            "openai/gpt-4.1",
            vec![
                TrajectoryRecord::Retry { attempt: 1, max_attempts: 5, delay_ms: 1000, error: json!("server") },
                ended("max_turns", 500),
            ],
        );
        assert_eq!(
            diff_lines(&a, &b),
            [
                "model: openrouter/anthropic/claude-sonnet-4.5 → openrouter/openai/gpt-4.1",
                "status: succeeded → max_turns",
                "turns: 2 → 500",
                "retries: 0 → 1",
            ]
        );
        assert!(diff_lines(&a, &a).is_empty());
    }
}
