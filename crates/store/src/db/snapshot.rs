//! Folded session snapshots (`session_snapshots`): a session's view as of
//! some seq, so [`Reader::info`](crate::Reader::info) folds only the events
//! after it. A snapshot is a cache of a fold: one that is missing or does
//! not decode (written by another build) is simply not used.

use crate::db::sql::params;
use seri_core::{Seq, SessionId, SessionInfo};

use crate::SeqRange;
use crate::db::read::Reader;
use crate::db::rows::{self, Db, SessionRow};
use crate::db::sql::Value;
use crate::error::Result;

pub(crate) use crate::sessions::SNAPSHOT_EVERY_EVENTS;

/// The session's snapshot: the seq it was folded to and the view.
pub(crate) fn read(db: Db<'_>, session: SessionId) -> Result<Option<(u64, SessionInfo)>> {
    let sql = "SELECT seq, info FROM session_snapshots WHERE session_id = ?1";
    let row = rows::query_first(db, "reading a session snapshot", sql, params![session.to_string()], |row| {
        Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
    })?;
    Ok(row.and_then(|(seq, text)| match serde_json::from_str::<SessionInfo>(&text) {
        Ok(info) => Some((u64::try_from(seq).unwrap_or(0), info)),
        Err(error) => {
            tracing::warn!(%session, %error, "a session snapshot does not decode; folding from the start");
            None
        }
    }))
}

/// Writes the session's snapshot, `info` folded through `info.last_seq`
/// (links left out: they are read from the edges).
pub(crate) fn write(db: Db<'_>, info: &SessionInfo) -> Result<()> {
    let mut info = info.clone();
    info.continued_from = None;
    info.continued_to = None;
    info.forked_from = None;
    let text = serde_json::to_string(&info).map_err(|e| {
        crate::StoreError::Data(crate::DataError::CorruptRow {
            table: "session_snapshots",
            id: info.id.to_string(),
            problem: format!("the view does not encode: {e}"),
        })
    })?;
    let fail = db.fail("writing a session snapshot");
    db.conn
        .prepare_cached(
            "INSERT INTO session_snapshots (session_id, seq, info) VALUES (?1, ?2, ?3) \
             ON CONFLICT (session_id) DO UPDATE SET seq = excluded.seq, info = excluded.info",
        )
        .map_err(&fail)?
        .execute_pipelined(vec![
            Value::Text(info.id.to_string()),
            Value::Int(rows::int(info.last_seq)),
            Value::Text(text),
        ])
        .map_err(&fail)?;
    Ok(())
}

/// The session's view without links: its snapshot, with the events after
/// it folded on (all of them, from the seed, when there is none).
pub(crate) fn folded(reader: &Reader<'_>, row: &SessionRow) -> Result<SessionInfo> {
    let (mut info, seq) = match read(reader.db(), row.id)? {
        Some((seq, info)) if seq <= row.last_seq && info.id == row.id => (info, seq),
        _ => (SessionInfo::from_seed(&row.seed()?), 0),
    };
    if seq < row.last_seq {
        let rest = reader.events(row.id, SeqRange::between(Seq(seq + 1), Seq(row.last_seq)))?;
        for event in &rest {
            info.apply(event);
        }
    }
    Ok(info)
}

impl crate::agent::AgentStore<'_> {
    /// Reads in one transaction, as [`AgentStore::read`](crate::AgentStore::read)
    /// does, handing `f` the session's view as of its head too: what a
    /// run's turn needs, read once. The view has no links
    /// (`continuedFrom`, `continuedTo`, `forkedFrom`: see
    /// [`Reader::info`](crate::Reader::info)). It is this process's live
    /// view of the session when that is as of the head (the appends of
    /// this process keep it up to date), so a turn after an append reads
    /// only the head for it; otherwise it is folded from the snapshot, and
    /// kept as the live view once the read ends (its events are committed).
    pub fn read_with_view<T>(
        &self,
        session: SessionId,
        mut f: impl FnMut(&Reader<'_>, &SessionInfo) -> Result<T>,
    ) -> Result<(SessionInfo, T)> {
        let (store, agent) = (self.store(), self.agent_id());
        let mut fresh = false;
        let (view, value) = store.read_transaction(|db| {
            let reader = Reader::new(db, agent, store);
            let kept = match store.live_view(session) {
                Some(kept) => {
                    let head = reader.session_head(session)?.last_seq;
                    Some(kept).filter(|v| v.last_seq == head)
                }
                None => None,
            };
            fresh = kept.is_none();
            let view = match kept {
                Some(view) => view,
                None => folded(&reader, &reader.session_row(session)?)?,
            };
            let value = f(&reader, &view)?;
            Ok((view, value))
        })?;
        if fresh {
            store.keep_read_view(view.clone());
        }
        Ok((view, value))
    }
}
