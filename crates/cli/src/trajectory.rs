//! Trajectories at the command line, one module per job:
//! [`mod@record`] (whether runs are recorded, the knobs every header lists,
//! retention at the start of a session), [`mod@show`]
//! (`seri trajectory show`) and [`mod@diff`] (`seri trajectory diff`). This
//! file resolves the id either command is given.

mod diff;
mod record;
mod show;

use seri_core::{RunId, SessionId};

pub(crate) use diff::diff;
pub(crate) use record::{command, config_rows, prune, start};
pub(crate) use show::show;

use crate::app::App;
use crate::exit::Exit;

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

#[cfg(test)]
mod tests {
    use serde_json::json;
    use seri_core::{ModelRef, Timestamp, Usage};
    use seri_store::{StoredRecord, Trajectory, TrajectoryHeader, TrajectoryRecord};

    use super::diff::diff_lines;
    use super::record::{resolve_recording, toggle_lines};
    use super::show::render;
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
            usage: Some(Usage { input: 100, output: 10, ..Usage::default() }),
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
