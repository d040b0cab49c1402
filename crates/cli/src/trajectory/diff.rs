//! `seri trajectory diff`: where two runs' headers and outcomes differ,
//! one `label: A → B` line each.

use seri_store::{StoredRecord, Trajectory, TrajectoryRecord};

use super::show::{brief, header_fields};
use super::{Target, resolve};
use crate::app::App;
use crate::exit::Exit;

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
            usage.map_or_else(
                || "not reported".to_owned(),
                |u| format!("input {}, output {}", u.prompt_tokens(), u.output),
            ),
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
