//! The `runs` table: a run row is inserted when the run starts and
//! finished exactly once, by `UPDATE … WHERE status = 'running'`.

use crate::db::sql::params;
use seri_core::{AgentId, RunId, RunStatus, SessionId, Timestamp};

use crate::db::rows::{Db, RowError, corrupt, query_all, query_first};
use crate::error::{Result, StoreError, WriteError};
use crate::runs::{RunRecord, RunResult};

const RUN_COLUMNS: &str = "id, session_id, kind, lane, parent_run_id, status, result, started_at, finished_at";

/// Records `run`; a run recorded already (the same id) stays as it is.
/// Sent without waiting for its answer (on PostgreSQL; see
/// [`crate::db::sql::Statement::execute_pipelined`]): nothing it could say
/// but a failure, which the transaction's next wait reports.
pub(crate) fn insert(db: Db<'_>, run: &RunRecord) -> Result<()> {
    let fail = db.fail("recording a run");
    let mut stmt = db
        .conn
        .prepare_cached(&format!(
            "INSERT INTO runs ({RUN_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) ON CONFLICT (id) DO NOTHING"
        ))
        .map_err(&fail)?;
    stmt.execute_pipelined(vec![
        run.id.to_string().into(),
        run.session_id.to_string().into(),
        run.kind.as_str().into(),
        run.lane.as_str().into(),
        run.parent_run_id.map(|id| id.to_string()).into(),
        run.status.as_str().into(),
        run.result.as_ref().map(result_text).into(),
        run.started_at.millis().into(),
        run.finished_at.map(Timestamp::millis).into(),
    ])
    .map_err(&fail)?;
    Ok(())
}

pub(crate) fn finish(db: Db<'_>, run: RunId, status: RunStatus, result: &RunResult, at: Timestamp) -> Result<()> {
    let fail = db.fail("finishing a run");
    let mut stmt = db
        .conn
        .prepare_cached(
            "UPDATE runs SET status = ?2, result = ?3, finished_at = ?4 WHERE id = ?1 AND status = 'running'",
        )
        .map_err(&fail)?;
    let changed =
        stmt.execute(params![run.to_string(), status.as_str(), result_text(result), at.millis()]).map_err(&fail)?;
    if changed == 0 {
        return Err(StoreError::Write(WriteError::RunNotRunning { run_id: run }));
    }
    Ok(())
}

pub(crate) fn of_session(db: Db<'_>, session: SessionId) -> Result<Vec<RunRecord>> {
    query_all(
        db,
        "reading runs",
        &format!("SELECT {RUN_COLUMNS} FROM runs WHERE session_id = ?1 ORDER BY started_at, id"),
        params![session.to_string()],
        read_run,
    )
}

/// The runs `parent` delegated, in sessions of `agent`, oldest first.
pub(crate) fn children_of(db: Db<'_>, agent: &AgentId, parent: RunId) -> Result<Vec<RunRecord>> {
    query_all(
        db,
        "reading child runs",
        &format!(
            "SELECT {RUN_COLUMNS} FROM runs WHERE parent_run_id = ?1 \
             AND session_id IN (SELECT id FROM sessions WHERE agent_id = ?2) ORDER BY started_at, id"
        ),
        params![parent.to_string(), agent.as_str()],
        read_run,
    )
}

/// One run, if it is in a session of `agent`.
pub(crate) fn by_id(db: Db<'_>, agent: &AgentId, run: RunId) -> Result<Option<RunRecord>> {
    query_first(
        db,
        "reading a run",
        &format!(
            "SELECT {RUN_COLUMNS} FROM runs WHERE id = ?1 \
             AND session_id IN (SELECT id FROM sessions WHERE agent_id = ?2)"
        ),
        params![run.to_string(), agent.as_str()],
        read_run,
    )
}

/// A run's result as its column keeps it: JSON text.
fn result_text(result: &RunResult) -> String {
    serde_json::to_string(result).unwrap_or_default()
}

fn read_run(row: &crate::db::sql::Row<'_>) -> std::result::Result<RunRecord, RowError> {
    let id: String = row.get(0)?;
    let bad = |problem: String| corrupt("runs", &id, problem);
    let parse_id = |text: &str| text.parse::<RunId>().map_err(|e| bad(e.to_string()));
    let result: Option<String> = row.get(6)?;
    let finished: Option<i64> = row.get(8)?;
    Ok(RunRecord {
        id: parse_id(&id)?,
        session_id: row.get::<_, String>(1)?.parse().map_err(|e: seri_core::ParseIdError| bad(e.to_string()))?,
        kind: row.get::<_, String>(2)?.parse().map_err(|e: seri_core::UnknownName| bad(e.to_string()))?,
        lane: row.get::<_, String>(3)?.parse().map_err(|e: seri_core::UnknownName| bad(e.to_string()))?,
        parent_run_id: row.get::<_, Option<String>>(4)?.as_deref().map(parse_id).transpose()?,
        status: row.get::<_, String>(5)?.parse().map_err(|e: seri_core::UnknownName| bad(e.to_string()))?,
        result: result
            .as_deref()
            .map(serde_json::from_str)
            .transpose()
            .map_err(|e| bad(format!("result is not a run's result: {e}")))?,
        started_at: Timestamp(row.get(7)?),
        finished_at: finished.map(Timestamp),
    })
}
