//! `seri trajectory show`: a run's trajectory, or every trajectory of a
//! session (with a legacy file's tool calls), as text or JSON.
//!
//! The JSON is serialised from types, never assembled by hand; a session's
//! document goes through a `serde_json::Value` sorted at every level, so
//! its keys come out sorted, as they always have.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Context as _;
use serde::Serialize;
use serde_json::Value;
use seri_core::{EventBody, SessionId, Timestamp};
use seri_store::{SeqRange, StoredRecord, Trajectory, TrajectoryHeader, TrajectoryRecord, elided_bytes};

use super::{Target, resolve};
use crate::app::App;
use crate::exit::Exit;
use crate::inspect;

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
        let document = SessionTrajectories { session_id: session, trajectories: &trajectories, legacy: legacy.json };
        // Through a Value, whose map sorts its keys, so the document reads
        // as it always has, nested records included.
        let value =
            seri_core::json::sorted(&serde_json::to_value(&document).context("cannot encode the trajectories")?);
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

/// `seri trajectory show SESSION --json`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SessionTrajectories<'a> {
    session_id: SessionId,
    trajectories: &'a [Trajectory],
    #[serde(skip_serializing_if = "Option::is_none")]
    legacy: Option<LegacyJson>,
}

/// A legacy file's part of a session's JSON.
#[derive(Serialize)]
#[serde(untagged)]
enum LegacyJson {
    /// Retention forgot the file's tool calls; the file and the
    /// conversation are kept.
    #[serde(rename_all = "camelCase")]
    Pruned { path: PathBuf, pruned_at: Timestamp, file_modified_at: Option<Timestamp> },
    /// The tool calls and results the file brought in, elided like any
    /// trajectory record.
    Records { path: PathBuf, records: Vec<Value> },
}

/// A legacy file's trajectory, rendered or as JSON.
#[derive(Default)]
struct LegacyPart {
    text: Option<String>,
    json: Option<LegacyJson>,
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
            LegacyJson::Pruned { path: legacy.path, pruned_at: pruned, file_modified_at: legacy.file_modified_at };
        return Ok(LegacyPart { text: Some(text), json: Some(value) });
    }
    // The file's calls and results are the records a run would have
    // written for them, so they serialise (and elide) the same way.
    let records = store
        .events(session, SeqRange::ALL)?
        .into_iter()
        .filter_map(|e| match e.body {
            EventBody::ToolCall(c) => {
                Some(TrajectoryRecord::ToolCall { tool_call_id: c.id, name: c.name, arguments: c.arguments })
            }
            EventBody::ToolResult(r) => Some(TrajectoryRecord::ToolResult {
                tool_call_id: r.tool_call_id,
                name: r.name,
                is_error: r.is_error,
                content: Value::from(r.content),
            }),
            _ => None,
        })
        .map(|record| serde_json::to_value(record).map(seri_store::trajectories::elide::elide_record))
        .collect::<Result<Vec<Value>, _>>()
        .context("cannot encode the legacy file's records")?;
    if json {
        return Ok(LegacyPart { text: None, json: Some(LegacyJson::Records { path: legacy.path, records }) });
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
pub(super) fn header_fields(h: &TrajectoryHeader) -> Vec<(&'static str, String)> {
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
pub(super) fn brief(value: &Value) -> String {
    let text = match shown_value(value) {
        Value::String(s) => s.lines().next().unwrap_or("").to_owned(),
        other => seri_core::json::sorted_string(&other),
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
        TrajectoryRecord::Usage { turn, usage: Some(usage) } => format!(
            "turn {turn}: input {}, cache read {}, cache write {}, output {}",
            usage.input, usage.cache_read, usage.cache_write, usage.output
        ),
        TrajectoryRecord::Usage { turn, usage: None } => format!("turn {turn}: the provider reported no usage"),
        TrajectoryRecord::Retry { attempt, max_attempts, delay_ms, error } => {
            format!("attempt {attempt} of {max_attempts} failed, retrying in {delay_ms} ms: {}", brief(error))
        }
        TrajectoryRecord::Compaction { evicted_from_seq, evicted_to_seq, tokens_before, tokens_after } => {
            format!("seq {evicted_from_seq}–{evicted_to_seq} into a recap: {tokens_before} → {tokens_after} tokens")
        }
        TrajectoryRecord::CompactionFailed { error } => format!("failed: {}", brief(error)),
        TrajectoryRecord::Ended { status, turns, usage, error, continued_to, .. } => {
            let mut line = match usage {
                Some(u) => format!("{status} after {turns} turns (input {}, output {})", u.prompt_tokens(), u.output),
                None => format!("{status} after {turns} turns (no usage reported)"),
            };
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
