//! [`InMemorySessions`]: a [`SessionAccess`] over sessions held in memory,
//! for tests of the tools and of anything built on them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use seri_core::{
    AgentId, ContinuationId, ContinueReason, Event, EventBody, EventId, Seq, SessionContinuationLink, SessionId,
    SessionInfo, SessionSeed, Timestamp,
};

use crate::access::{AccessError, SessionAccess};

/// Sessions, their events and their continuation links, in memory.
///
/// Event ids and times are derived from the session and seq, so everything
/// a test prints is deterministic.
#[derive(Debug, Clone, Default)]
pub struct InMemorySessions {
    sessions: BTreeMap<SessionId, Stored>,
    memory_dir: PathBuf,
}

#[derive(Debug, Clone)]
struct Stored {
    seed: SessionSeed,
    events: Vec<Event>,
    continued_from: Option<SessionContinuationLink>,
    continued_to: Option<SessionContinuationLink>,
}

impl InMemorySessions {
    /// No sessions; `~/memory/…` resolves against `memory_dir`.
    pub fn new(memory_dir: impl Into<PathBuf>) -> Self {
        Self { sessions: BTreeMap::new(), memory_dir: memory_dir.into() }
    }

    /// Adds a session with its events, numbered from seq 1. Replaces a
    /// session with the same id.
    pub fn add_session(&mut self, seed: SessionSeed, bodies: impl IntoIterator<Item = EventBody>) -> &mut Self {
        let id = seed.id;
        self.sessions.insert(id, Stored { seed, events: Vec::new(), continued_from: None, continued_to: None });
        self.append(id, bodies);
        self
    }

    /// Appends events to a session, as the store would after a tool call.
    /// Events for a session that does not exist are dropped.
    pub fn append(&mut self, id: SessionId, bodies: impl IntoIterator<Item = EventBody>) -> &mut Self {
        if let Some(stored) = self.sessions.get_mut(&id) {
            for body in bodies {
                let seq = Seq(stored.events.len() as u64 + 1);
                let at = Timestamp(stored.seed.created_at.millis() + seq.get() as i64 * 1_000);
                stored.events.push(Event { id: event_id(id, seq), session_id: id, seq, at, body });
            }
        }
        self
    }

    /// Records a continuation edge from `predecessor` to `successor`.
    pub fn link(&mut self, predecessor: SessionId, successor: SessionId, reason: ContinueReason) -> &mut Self {
        let title = |id: SessionId| self.fold(id).map(|info| info.title).unwrap_or_default();
        let continuation_id = ContinuationId::from_bytes(*successor.as_bytes());
        let at = self.sessions.get(&successor).map(|s| s.seed.created_at).unwrap_or_default();
        let to =
            SessionContinuationLink { continuation_id, session_id: successor, title: title(successor), reason, at };
        let from =
            SessionContinuationLink { continuation_id, session_id: predecessor, title: title(predecessor), reason, at };
        if let Some(p) = self.sessions.get_mut(&predecessor) {
            p.continued_to = Some(to);
        }
        if let Some(s) = self.sessions.get_mut(&successor) {
            s.continued_from = Some(from);
        }
        self
    }

    fn fold(&self, id: SessionId) -> Option<SessionInfo> {
        let stored = self.sessions.get(&id)?;
        Some(
            SessionInfo::fold(&stored.seed, &stored.events)
                .with_links(stored.continued_from.clone(), stored.continued_to.clone()),
        )
    }
}

/// A deterministic event id: the session's first eight bytes, then the seq.
fn event_id(session: SessionId, seq: Seq) -> EventId {
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&session.as_bytes()[..8]);
    bytes[8..].copy_from_slice(&seq.get().to_be_bytes());
    EventId::from_bytes(bytes)
}

#[async_trait]
impl SessionAccess for InMemorySessions {
    async fn session(&self, id: SessionId) -> Result<Option<SessionInfo>, AccessError> {
        Ok(self.fold(id))
    }

    async fn session_ids_with_prefix(
        &self,
        agent: &AgentId,
        prefix: &str,
        limit: usize,
    ) -> Result<Vec<SessionId>, AccessError> {
        Ok(self
            .sessions
            .values()
            .filter(|s| &s.seed.agent_id == agent && s.seed.id.to_string().starts_with(prefix))
            .map(|s| s.seed.id)
            .take(limit)
            .collect())
    }

    async fn events(&self, id: SessionId, from: Seq, to: Seq, limit: usize) -> Result<Vec<Event>, AccessError> {
        let Some(stored) = self.sessions.get(&id) else { return Ok(Vec::new()) };
        Ok(stored.events.iter().filter(|e| from <= e.seq && e.seq <= to).take(limit).cloned().collect())
    }

    async fn newest_user_message(&self, id: SessionId) -> Result<Option<Event>, AccessError> {
        let Some(stored) = self.sessions.get(&id) else { return Ok(None) };
        Ok(stored
            .events
            .iter()
            .rev()
            .find(|e| e.body.as_message().is_some_and(|m| m.is_from_user_or_trigger()))
            .cloned())
    }

    fn memory_dir(&self) -> &Path {
        &self.memory_dir
    }
}
