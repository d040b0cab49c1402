//! The trajectory tables: `trajectories` (one header per run) and
//! `trajectory_records` (its numbered, elided records).

use crate::db::sql::params;
use serde_json::Value;
use seri_core::{RunId, SessionId, Timestamp};

use crate::db::read::Reader;
use crate::db::rows::{self, Db, RowError, corrupt, query_all, query_first};
use crate::db::write::WriteTx;
use crate::error::{DataError, LookupError, Result, StoreError};
use crate::trajectories::{StoredRecord, Trajectory, TrajectoryHeader, TrajectoryRecord, elide};

impl WriteTx<'_> {
    /// Starts a run's trajectory with its header. The run must be recorded
    /// (`runs`) in one of this agent's sessions.
    pub fn start_trajectory(&mut self, header: &TrajectoryHeader) -> Result<()> {
        self.read().require_session(header.session_id)?;
        let db = self.db();
        let fail = db.fail("starting a trajectory");
        let header_json = serde_json::to_string(header).map_err(|e| {
            StoreError::Data(DataError::CorruptRow {
                table: "trajectories",
                id: header.run_id.to_string(),
                problem: format!("the header does not encode: {e}"),
            })
        })?;
        let mut stmt = db
            .conn
            .prepare_cached("INSERT INTO trajectories (run_id, session_id, header, started_at) VALUES (?1, ?2, ?3, ?4)")
            .map_err(&fail)?;
        // Its answer is read with the records' (the next statement that
        // waits): it could only say it failed.
        stmt.execute_pipelined(vec![
            header.run_id.to_string().into(),
            header.session_id.to_string().into(),
            header_json.into(),
            header.started_at.millis().into(),
        ])
        .map_err(&fail)?;
        Ok(())
    }

    /// Appends a record to a run's trajectory, elided ([`elide::elide_record`]),
    /// and returns its number.
    pub fn append_trajectory_record(&mut self, run: RunId, record: &TrajectoryRecord) -> Result<u64> {
        let ords = self.append_trajectory_records(run, std::slice::from_ref(record))?;
        ords.first().copied().ok_or(StoreError::Lookup(LookupError::UnknownTrajectory { run_id: run }))
    }

    /// Appends `records` to a run's trajectory in their order, each elided
    /// ([`elide::elide_record`]), with one statement, and returns their
    /// numbers.
    pub fn append_trajectory_records(&mut self, run: RunId, records: &[TrajectoryRecord]) -> Result<Vec<u64>> {
        // Records are numbered by reading the newest and writing the next.
        self.db().lock(&format!("trajectory:{run}"));
        self.insert_trajectory_records(run, records)
    }

    /// Starts a run's trajectory with `header` ([`WriteTx::start_trajectory`])
    /// and appends `records` to it ([`WriteTx::append_trajectory_records`]).
    /// No other transaction sees the trajectory before this one commits,
    /// so none numbers records of it meanwhile: its lock is not taken.
    pub fn start_trajectory_with(
        &mut self,
        header: &TrajectoryHeader,
        records: &[TrajectoryRecord],
    ) -> Result<Vec<u64>> {
        self.start_trajectory(header)?;
        self.insert_trajectory_records(header.run_id, records)
    }

    fn insert_trajectory_records(&mut self, run: RunId, records: &[TrajectoryRecord]) -> Result<Vec<u64>> {
        if records.is_empty() {
            return Ok(Vec::new());
        }
        let (db, agent) = (self.db(), self.read().agent_id().clone());
        let mut values: Vec<Box<dyn crate::db::sql::Param>> =
            vec![Box::new(run.to_string()), Box::new(self.now().millis()), Box::new(agent.as_str().to_owned())];
        let mut tuples = Vec::with_capacity(records.len());
        for (n, record) in records.iter().enumerate() {
            let data = elide::elide_record(serde_json::to_value(record).unwrap_or(Value::Null));
            values.push(Box::new(record.kind().to_owned()));
            values.push(Box::new(data.to_string()));
            tuples.push(format!("({}, ?{}, ?{})", n + 1, values.len() - 1, values.len()));
        }
        // One statement: the run's trajectory must be this agent's, and the
        // records take the numbers after its newest (read once, before any
        // of them goes in).
        let sql = format!(
            "WITH v (n, kind, data) AS (VALUES {}) \
             INSERT INTO trajectory_records (run_id, ord, kind, data, at) \
             SELECT t.run_id, coalesce((SELECT max(r.ord) FROM trajectory_records r WHERE r.run_id = t.run_id), 0) + v.n, \
                    v.kind, v.data, ?2 \
             FROM trajectories t JOIN sessions s ON s.id = t.session_id CROSS JOIN v \
             WHERE t.run_id = ?1 AND s.agent_id = ?3 ORDER BY v.n \
             RETURNING ord",
            tuples.join(", ")
        );
        let params: Vec<&dyn crate::db::sql::Param> = values.iter().map(|v| v.as_ref()).collect();
        let mut ords: Vec<u64> =
            query_all(db, "recording trajectory records", &sql, params.as_slice(), |r| r.get::<_, i64>(0))?
                .into_iter()
                .map(rows::uint)
                .collect();
        if ords.is_empty() {
            return Err(StoreError::Lookup(LookupError::UnknownTrajectory { run_id: run }));
        }
        ords.sort_unstable();
        Ok(ords)
    }
}

impl Reader<'_> {
    /// A run's trajectory, if it was recorded (and not pruned).
    pub fn trajectory(&self, run: RunId) -> Result<Option<Trajectory>> {
        let sql = "SELECT t.header FROM trajectories t JOIN sessions s ON s.id = t.session_id \
                   WHERE t.run_id = ?1 AND s.agent_id = ?2";
        let run_text = run.to_string();
        let header =
            query_first(self.db(), "reading a trajectory", sql, params![run_text, self.agent_id().as_str()], |r| {
                let text: String = r.get(0)?;
                serde_json::from_str::<TrajectoryHeader>(&text)
                    .map_err(|e| corrupt("trajectories", &run_text, format!("the header does not decode: {e}")))
            })?;
        let Some(header) = header else { return Ok(None) };
        let records = records(self.db(), run)?;
        Ok(Some(Trajectory { header, records }))
    }

    /// The runs of a session that have a trajectory, oldest first.
    pub fn trajectory_runs(&self, session: SessionId) -> Result<Vec<RunId>> {
        self.require_session(session)?;
        let sql = "SELECT run_id FROM trajectories WHERE session_id = ?1 ORDER BY started_at, run_id";
        query_all(self.db(), "listing trajectories", sql, params![session.to_string()], |r| {
            let text: String = r.get(0)?;
            text.parse::<RunId>().map_err(|_| corrupt("trajectories", &text, "run_id is not an id"))
        })
    }

    /// The trajectory whose run id starts with `prefix` (hex digits and
    /// hyphens), if exactly one of this agent's does.
    pub fn trajectory_by_prefix(&self, prefix: &str) -> Result<Vec<RunId>> {
        let Some(prefix) = crate::prefix::normalize(prefix) else { return Ok(Vec::new()) };
        let sql = "SELECT t.run_id FROM trajectories t JOIN sessions s ON s.id = t.session_id \
                   WHERE t.run_id >= ?1 AND t.run_id < ?2 AND s.agent_id = ?3 ORDER BY t.run_id LIMIT 21";
        let upper = crate::prefix::upper_bound(&prefix);
        query_all(self.db(), "resolving a run id prefix", sql, params![prefix, upper, self.agent_id().as_str()], |r| {
            let text: String = r.get(0)?;
            text.parse::<RunId>().map_err(|_| corrupt("trajectories", &text, "run_id is not an id"))
        })
    }
}

fn records(db: Db<'_>, run: RunId) -> Result<Vec<StoredRecord>> {
    let sql = "SELECT ord, at, kind, data FROM trajectory_records WHERE run_id = ?1 ORDER BY ord";
    let run_text = run.to_string();
    query_all(
        db,
        "reading trajectory records",
        sql,
        params![&run_text],
        |r| -> std::result::Result<StoredRecord, RowError> {
            let data: String = r.get(3)?;
            Ok(StoredRecord {
                ord: rows::uint(r.get(0)?),
                at: Timestamp(r.get(1)?),
                kind: r.get(2)?,
                data: serde_json::from_str(&data)
                    .map_err(|e| corrupt("trajectory_records", &run_text, format!("data is not JSON: {e}")))?,
            })
        },
    )
}
