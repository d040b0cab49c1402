//! A job's message, recorded in the transaction that posts it: a run of a
//! shared-queue job reads whether the job's message was posted already, and
//! records the one it posts, in the same write transaction as the append,
//! under its session's lease (see `runloop::jobs`).

use seri_core::RunId;

use crate::db::sql::{self, params};
use crate::error::Result;

impl crate::db::write::WriteTx<'_> {
    /// The message recorded as job `id`'s, if one was: read by the
    /// transaction that would post it, under its session's lease, so a job
    /// whose message another run posted is answered, never posted again.
    pub fn job_posted_event(&self, id: &str) -> Result<Option<seri_core::EventId>> {
        let sql = "SELECT posted_event_id FROM run_jobs WHERE id = ?1";
        let posted = sql::query_first(self.db(), "reading a job's message", sql, params![id], |row| {
            row.get::<_, Option<String>>(0)?
                .map(|t| {
                    t.parse().map_err(|_| crate::db::rows::corrupt("run_jobs", id, "posted_event_id is not an id"))
                })
                .transpose()
        })?;
        Ok(posted.flatten())
    }

    /// Records `event_id`, appended in this transaction, as the message job
    /// `id` posted, and `run_id` as the run answering it, unless a message
    /// is recorded already: the posting and its record commit together.
    pub fn record_job_posted(&mut self, id: &str, event_id: seri_core::EventId, run_id: Option<RunId>) -> Result<()> {
        let fail = self.db().fail("recording a job's message");
        self.db()
            .conn
            .prepare_cached(
                "UPDATE run_jobs SET posted_event_id = ?2, run_id = coalesce(?3, run_id) \
                 WHERE id = ?1 AND posted_event_id IS NULL",
            )
            .map_err(&fail)?
            .execute_pipelined(vec![
                sql::Value::Text(id.to_owned()),
                sql::Value::Text(event_id.to_string()),
                run_id.map_or(sql::Value::Null, |r| sql::Value::Text(r.to_string())),
            ])
            .map_err(&fail)?;
        Ok(())
    }
}
