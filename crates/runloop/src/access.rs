//! [`StoreAccess`]: the tools' read interface, implemented over the store for
//! one agent. Every read goes through the agent's handle, so a tool can
//! never see another agent's threads.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use seri_core::{AgentId, Event, Seq, SessionId, SessionInfo};
use seri_store::{AttachmentError, LookupError, SeqRange, Store, StoreError};
use seri_tools::{AccessError, AttachmentHead, FoundEvent, SessionAccess};

/// The store, as tools see it.
#[derive(Debug, Clone)]
pub struct StoreAccess {
    store: Arc<Store>,
    agent: AgentId,
    memory_dir: PathBuf,
}

impl StoreAccess {
    /// Access for `agent`, with `~/memory/…` resolving under `memory_dir`.
    pub fn new(store: Arc<Store>, agent: AgentId, memory_dir: PathBuf) -> Self {
        Self { store, agent, memory_dir }
    }

    /// Where `~/memory/…` resolves.
    pub fn memory_dir(&self) -> &Path {
        &self.memory_dir
    }
}

#[async_trait]
impl SessionAccess for StoreAccess {
    async fn session(&self, id: SessionId) -> Result<Option<SessionInfo>, AccessError> {
        match self.store.agent(&self.agent).info(id) {
            Ok(info) => Ok(Some(info)),
            Err(StoreError::Lookup(LookupError::UnknownSession { .. })) => Ok(None),
            Err(e) => Err(AccessError::new(e)),
        }
    }

    async fn session_ids_with_prefix(
        &self,
        agent: &AgentId,
        prefix: &str,
        limit: usize,
    ) -> Result<Vec<SessionId>, AccessError> {
        if *agent != self.agent {
            return Ok(Vec::new());
        }
        match self.store.agent(&self.agent).resolve_session(prefix) {
            Ok(id) => Ok(vec![id]),
            Err(StoreError::Lookup(LookupError::AmbiguousSessionPrefix { candidates, .. })) => {
                Ok(candidates.into_iter().take(limit).collect())
            }
            Err(
                StoreError::Lookup(LookupError::UnknownSessionPrefix { .. })
                | StoreError::Lookup(LookupError::InvalidSessionPrefix { .. }),
            ) => Ok(Vec::new()),
            Err(e) => Err(AccessError::new(e)),
        }
    }

    async fn events(&self, id: SessionId, from: Seq, to: Seq, limit: usize) -> Result<Vec<Event>, AccessError> {
        let range = SeqRange::between(from, to);
        self.store.agent(&self.agent).events_page(id, range, Some(limit as u64)).map_err(AccessError::new)
    }

    async fn newest_user_message(&self, id: SessionId) -> Result<Option<Event>, AccessError> {
        self.store.agent(&self.agent).newest_user_message(id).map_err(AccessError::new)
    }

    fn memory_dir(&self) -> &Path {
        &self.memory_dir
    }

    async fn search(
        &self,
        query: &str,
        cwd: &str,
        limit: usize,
    ) -> Result<Result<Vec<FoundEvent>, String>, AccessError> {
        use seri_store::search::{Query, SearchRequest, SearchScope};
        let query = match Query::parse(query) {
            Ok(query) => query,
            Err(why) => return Ok(Err(why.to_string())),
        };
        let scope = if cwd.is_empty() { SearchScope::All } else { SearchScope::FolderFirst(cwd.to_owned()) };
        let request = SearchRequest { query, limit: limit as u64, scope, since: None };
        let hits = self.store.agent(&self.agent).search(&request).map_err(AccessError::new)?;
        Ok(Ok(hits
            .into_iter()
            .map(|hit| FoundEvent {
                session_id: hit.session_id,
                seq: hit.seq,
                kind: hit.kind.as_str().to_owned(),
                snippet: hit.snippet,
                at: hit.at,
                shared_with: hit.shared_with,
                continued_in: hit.continued_in,
                title: hit.title,
                cwd: hit.cwd,
            })
            .collect()))
    }

    async fn attachment(
        &self,
        session: SessionId,
        id: &str,
        head: usize,
    ) -> Result<Option<AttachmentHead>, AccessError> {
        let reference = format!("{}{id}", seri_store::ATTACHMENT_SCHEME);
        let path = match self.store.agent(&self.agent).resolve_attachment(session, &reference) {
            Ok(path) => path,
            Err(
                StoreError::Attachment(AttachmentError::Unknown { .. })
                | StoreError::Attachment(AttachmentError::InvalidId { .. })
                | StoreError::Attachment(AttachmentError::InvalidReference { .. }),
            ) => return Ok(None),
            Err(e) => return Err(AccessError::new(e)),
        };
        tokio::task::spawn_blocking(move || -> std::io::Result<AttachmentHead> {
            use std::io::Read as _;
            let file = std::fs::File::open(&path)?;
            let len = file.metadata()?.len();
            let mut bytes = Vec::new();
            file.take(head as u64).read_to_end(&mut bytes)?;
            Ok(AttachmentHead { len, head: bytes })
        })
        .await
        .map_err(AccessError::new)?
        .map(Some)
        .map_err(AccessError::new)
    }
}
