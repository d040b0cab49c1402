//! How seri_core values become table rows and back: the only place that
//! knows column order and encodings.

use std::str::FromStr;

use seri_core::event::EVENT_FORMAT_VERSION;
use seri_core::{
    AgentId, ContinuationEdge, ContinueReason, Event, EventBody, Seq, SessionContinuationManifest, SessionId,
    SessionInfo, SessionSeed, Timestamp, TitleSource, ToolCallId,
};

use crate::db::sql::Row;
pub(crate) use crate::db::sql::{Db, RowError, query_all, query_each, query_first};
use crate::error::{DataError, Result, StoreError};

/// A count or seq as a stored integer. Stored integers are signed; nothing
/// seri counts reaches `i64::MAX`, so the clamp is never hit in practice.
pub(crate) fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// A stored count or seq. The schema's CHECK constraints keep them from
/// being negative; `count(*)` never is.
pub(crate) fn uint(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

/// Keys of the seed's JSON that live in their own columns instead.
const SEED_COLUMN_KEYS: [&str; 4] = ["id", "agentId", "cwd", "createdAt"];

/// The seed's creation facts that are not columns, as JSON text.
pub(crate) fn seed_facts(seed: &SessionSeed) -> String {
    let mut value = serde_json::to_value(seed).unwrap_or_default();
    if let Some(map) = value.as_object_mut() {
        for key in SEED_COLUMN_KEYS {
            map.remove(key);
        }
    }
    value.to_string()
}

/// The columns of the `session_heads` view in the order [`SessionRow::read`] expects.
pub(crate) const SESSION_COLUMNS: &str =
    "id, agent_id, cwd, created_at, seed, title, description, title_source, last_seq, updated_at";

/// One `session_heads` row, undecoded where decoding costs (the seed JSON).
#[derive(Debug, Clone)]
pub(crate) struct SessionRow {
    pub(crate) id: SessionId,
    pub(crate) agent_id: AgentId,
    pub(crate) cwd: String,
    pub(crate) created_at: Timestamp,
    /// The seed's JSON (kilobytes: the frozen prompt), when it was read:
    /// an append reads the row without it ([`SessionRow::read_head`]).
    pub(crate) seed_facts: Option<String>,
    pub(crate) cached: Cached,
    /// The newest seq, from the events (0 while empty).
    pub(crate) last_seq: u64,
    /// The newest event's time, from the events (`created_at` while empty).
    pub(crate) updated_at: Timestamp,
}

/// The cached columns of `sessions`: what a fold of seed and events must reproduce.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cached {
    pub(crate) title: String,
    pub(crate) description: String,
    pub(crate) title_source: Option<TitleSource>,
}

impl Cached {
    /// The cached columns as a fold produces them.
    pub(crate) fn of(info: &SessionInfo) -> Self {
        Self { title: info.title.clone(), description: info.description.clone(), title_source: info.title_source }
    }
}

/// One row of a session list query, as a summary without its links
/// (`id, agent_id, cwd, created_at, title, description, title_source,
/// last_seq, updated_at, parent_run_id`).
pub(crate) fn read_summary(row: &Row<'_>) -> Result<crate::SessionSummary, RowError> {
    let id: String = row.get(0)?;
    let title_source = row
        .get::<_, Option<String>>(6)?
        .map(|s| title_source_from_sql(&s).ok_or_else(|| corrupt("sessions", &id, "unknown title_source")))
        .transpose()?;
    let parent: Option<String> = row.get(9)?;
    let parent_session: Option<String> = row.get(10)?;
    Ok(crate::SessionSummary {
        id: parse_id(&id, "sessions", &id)?,
        agent_id: AgentId(row.get(1)?),
        cwd: row.get(2)?,
        created_at: Timestamp(row.get(3)?),
        title: row.get(4)?,
        description: row.get(5)?,
        title_source,
        last_seq: uint(row.get(7)?),
        updated_at: Timestamp(row.get(8)?),
        continued_from: None,
        continued_to: None,
        parent_run_id: parent.and_then(|p| p.parse().ok()),
        parent_session_id: parent_session.map(|p| parse_id(&p, "runs", &id)).transpose()?,
        forked_from: None,
    })
}

/// The columns of the `session_heads` view in the order
/// [`SessionRow::read_head`] expects: all of [`SESSION_COLUMNS`] but the seed.
pub(crate) const HEAD_COLUMNS: &str =
    "id, agent_id, cwd, created_at, title, description, title_source, last_seq, updated_at";

impl SessionRow {
    /// A row of [`SESSION_COLUMNS`].
    pub(crate) fn read(row: &Row<'_>) -> Result<Self, RowError> {
        Self::decode(row, true)
    }

    /// A row of [`HEAD_COLUMNS`]: without the seed, which an append does
    /// not need and which is most of the row (on PostgreSQL a TOASTed value
    /// fetched and sent for nothing).
    pub(crate) fn read_head(row: &Row<'_>) -> Result<Self, RowError> {
        Self::decode(row, false)
    }

    fn decode(row: &Row<'_>, with_seed: bool) -> Result<Self, RowError> {
        let id: String = row.get(0)?;
        let seed_facts = if with_seed { Some(row.get(4)?) } else { None };
        let at = usize::from(with_seed);
        Ok(Self {
            id: parse_id(&id, "sessions", &id)?,
            agent_id: AgentId(row.get(1)?),
            cwd: row.get(2)?,
            created_at: Timestamp(row.get(3)?),
            seed_facts,
            cached: Cached {
                title: row.get(4 + at)?,
                description: row.get(5 + at)?,
                title_source: row
                    .get::<_, Option<String>>(6 + at)?
                    .map(|s| title_source_from_sql(&s).ok_or_else(|| corrupt("sessions", &id, "unknown title_source")))
                    .transpose()?,
            },
            last_seq: uint(row.get(7 + at)?),
            updated_at: Timestamp(row.get(8 + at)?),
        })
    }

    fn seed_text(&self) -> Result<&str> {
        self.seed_facts.as_deref().ok_or_else(|| {
            StoreError::Data(DataError::CorruptRow {
                table: "sessions",
                id: self.id.to_string(),
                problem: "the seed is needed but was not read with the row (a store bug)".into(),
            })
        })
    }

    /// The delegating run of a child session, read from the seed without
    /// decoding all of it (a list shows it for every session; the frozen
    /// system prompt in the seed can be long). An unreadable seed has none
    /// here; [`SessionRow::seed`] reports it.
    pub(crate) fn parent_run_id(&self) -> Option<seri_core::RunId> {
        #[derive(serde::Deserialize)]
        struct Parent {
            #[serde(rename = "parentRunId")]
            parent_run_id: Option<seri_core::RunId>,
        }
        serde_json::from_str::<Parent>(self.seed_text().ok()?).ok().and_then(|p| p.parent_run_id)
    }

    /// The creation facts.
    pub(crate) fn seed(&self) -> Result<SessionSeed> {
        let corrupt = |problem: String| {
            StoreError::Data(DataError::CorruptRow { table: "sessions", id: self.id.to_string(), problem })
        };
        let mut value: serde_json::Value =
            serde_json::from_str(self.seed_text()?).map_err(|e| corrupt(format!("seed is not JSON: {e}")))?;
        let map = value.as_object_mut().ok_or_else(|| corrupt("seed is not a JSON object".to_owned()))?;
        map.insert("id".into(), self.id.to_string().into());
        map.insert("agentId".into(), self.agent_id.as_str().into());
        map.insert("cwd".into(), self.cwd.clone().into());
        map.insert("createdAt".into(), self.created_at.to_string().into());
        serde_json::from_value(value).map_err(|e| corrupt(format!("seed does not decode: {e}")))
    }

    /// A view carrying what the row holds without decoding the seed: the
    /// cached title columns and the head, to fold new events onto.
    pub(crate) fn head_view(&self) -> SessionInfo {
        let seed = SessionSeed::new(self.id, self.agent_id.clone(), self.cwd.clone(), self.created_at);
        let mut info = SessionInfo::from_seed(&seed);
        info.last_seq = self.last_seq;
        info.updated_at = self.updated_at;
        info.title.clone_from(&self.cached.title);
        info.description.clone_from(&self.cached.description);
        info.title_source = self.cached.title_source;
        info
    }
}

pub(crate) fn title_source_to_sql(source: Option<TitleSource>) -> Option<&'static str> {
    source.map(|s| match s {
        TitleSource::Agent => "agent",
        TitleSource::User => "user",
        TitleSource::Fallback => "fallback",
    })
}

fn title_source_from_sql(text: &str) -> Option<TitleSource> {
    [TitleSource::Agent, TitleSource::User, TitleSource::Fallback]
        .into_iter()
        .find(|s| title_source_to_sql(Some(*s)) == Some(text))
}

/// The columns of `session_events` in the order [`read_event`] expects.
pub(crate) const EVENT_COLUMNS: &str = "id, session_id, seq, type, format_version, payload, created_at";

/// The payload column's text for a body.
pub(crate) fn encode_payload(body: &EventBody) -> String {
    body.to_payload().to_string()
}

/// Decodes one `session_events` row, payload included.
pub(crate) fn read_event(row: &Row<'_>) -> Result<Event, RowError> {
    let id = row.text(0)?;
    let session = row.text(1)?;
    let session_id: SessionId = parse_id(session, "session_events", id)?;
    let seq = Seq(uint(row.get(2)?));
    let body = decode_body(session_id, seq, row.text(3)?, row.get(4)?, row.text_bytes(5)?)?;
    Ok(Event { id: parse_id(id, "session_events", id)?, session_id, seq, at: Timestamp(row.get(6)?), body })
}

/// Decodes a row of `seq, type, format_version, payload` of `session_id`'s
/// events: the body alone.
pub(crate) fn read_body(row: &Row<'_>, session_id: SessionId) -> Result<(Seq, EventBody), RowError> {
    let seq = Seq(uint(row.get(0)?));
    Ok((seq, decode_body(session_id, seq, row.text(1)?, row.get(2)?, row.text_bytes(3)?)?))
}

/// Decodes the body of `session_id`'s event `seq` from its `type`,
/// `format_version` and `payload` columns.
pub(crate) fn decode_body(
    session_id: SessionId,
    seq: Seq,
    kind: &str,
    format: i64,
    payload: &[u8],
) -> Result<EventBody, StoreError> {
    if format > i64::from(EVENT_FORMAT_VERSION) {
        return Err(StoreError::Data(DataError::NewerEventFormat {
            session_id,
            seq,
            found: format,
            supported: EVENT_FORMAT_VERSION,
        }));
    }
    EventBody::from_payload(kind, payload)
        .map_err(|source| StoreError::Data(DataError::CorruptEvent { session_id, seq, source }))
}

/// The columns of `session_continuations` in the order [`read_edge`] expects.
pub(crate) const EDGE_COLUMNS: &str = "id, predecessor_session_id, successor_session_id, origin_session_id, \
     tool_call_id, initiating_event_id, reason, manifest_cbor, created_at";

pub(crate) fn encode_manifest(manifest: &SessionContinuationManifest) -> Vec<u8> {
    let mut out = Vec::new();
    // Writing CBOR into a Vec cannot fail: the only errors are the writer's.
    let _ = ciborium::into_writer(manifest, &mut out);
    out
}

pub(crate) fn reason_from_sql(text: &str) -> Option<ContinueReason> {
    ContinueReason::ALL.into_iter().find(|r| r.as_str() == text)
}

/// Decodes one `session_continuations` row.
pub(crate) fn read_edge(row: &Row<'_>) -> Result<ContinuationEdge, RowError> {
    let id: String = row.get(0)?;
    let table = "session_continuations";
    let text = |i: usize| -> Result<String, RowError> { row.get(i) };
    let reason = text(6)?;
    let manifest: Vec<u8> = row.get(7)?;
    Ok(ContinuationEdge {
        id: parse_id(&id, table, &id)?,
        predecessor_session_id: parse_id(&text(1)?, table, &id)?,
        successor_session_id: parse_id(&text(2)?, table, &id)?,
        origin_session_id: parse_id(&text(3)?, table, &id)?,
        tool_call_id: ToolCallId(text(4)?),
        initiating_event_id: parse_id(&text(5)?, table, &id)?,
        reason: reason_from_sql(&reason).ok_or_else(|| corrupt(table, &id, format!("unknown reason `{reason}`")))?,
        manifest: ciborium::from_reader(manifest.as_slice())
            .map_err(|e| corrupt(table, &id, format!("manifest_cbor does not decode: {e}")))?,
        created_at: Timestamp(row.get(8)?),
    })
}

pub(crate) fn corrupt(table: &'static str, id: &str, problem: impl Into<String>) -> RowError {
    RowError::Store(StoreError::Data(DataError::CorruptRow { table, id: id.to_owned(), problem: problem.into() }))
}

pub(crate) fn parse_id<T: FromStr>(text: &str, table: &'static str, row: &str) -> Result<T, RowError> {
    text.parse().map_err(|_| corrupt(table, row, format!("`{text}` is not an id")))
}
