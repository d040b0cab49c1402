//! Shared fixtures: a store of each backend on a temporary profile with a
//! manual clock, and small builders for events.
//!
//! [`Fixture::on`] is the one place a backend plugs into the contract
//! suite: see `main.rs`.

use std::path::PathBuf;
use std::sync::Arc;

use seri_core::{
    AgentId, Event, EventBody, Message, MessageMeta, ModelRef, SessionId, StatusChanged, Thinking, Timestamp,
    TitleSource, ToolCall, ToolResult, Usage,
};
use seri_store::{AgentStore, ManualClock, Profile, Store, StoreOptions};

/// 2026-11-30T06:00:00Z: every test starts its clock here.
pub(crate) const T0: Timestamp = Timestamp(1_796_018_400_000);

/// A backend the store can stand on. Every contract test runs once per
/// entry of [`Backend::all`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Backend {
    /// `seri.db` in the profile directory.
    Sqlite,
    /// A schema of its own in the PostgreSQL database `SERI_TEST_POSTGRES_URL` names.
    Postgres,
}

/// The PostgreSQL database the suite may use (`cargo xtask ci` and
/// `cargo xtask postgres` start a throw-away cluster and set it).
pub(crate) fn postgres_url() -> Option<String> {
    let url = std::env::var("SERI_TEST_POSTGRES_URL").ok().filter(|u| !u.is_empty());
    if url.is_none() && std::env::var_os("SERI_REQUIRE_POSTGRES").is_some_and(|v| v == "1") {
        panic!("SERI_REQUIRE_POSTGRES=1 but SERI_TEST_POSTGRES_URL is not set: run `cargo xtask postgres`");
    }
    url
}

impl Backend {
    /// Every backend the contract suite runs against: SQLite, and
    /// PostgreSQL when a database is given.
    pub(crate) fn all() -> Vec<Backend> {
        let mut all = vec![Backend::Sqlite];
        if postgres_url().is_some() {
            all.push(Backend::Postgres);
        }
        all
    }
}

/// `base` with its connection's search_path set to a fresh schema, which
/// the store creates: every fixture gets an empty store of its own.
pub(crate) fn fresh_schema_url(base: &str) -> String {
    let schema = format!("t{}", uuid_like());
    let join = if base.contains('?') { '&' } else { '?' };
    format!("{base}{join}options=-csearch_path%3D{schema}")
}

fn uuid_like() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    format!("{}_{}_{}", std::process::id(), nanos, NEXT.fetch_add(1, Ordering::Relaxed))
}

/// A store on a fresh temporary profile, with a clock the test moves.
pub(crate) struct Fixture {
    /// Which backend the store stands on.
    pub(crate) backend: Backend,
    pub(crate) dir: tempfile::TempDir,
    pub(crate) clock: Arc<ManualClock>,
    pub(crate) store: Store,
    /// PostgreSQL: the schema's URL, for raw SQL beside the store.
    pub(crate) url: Option<String>,
}

impl Fixture {
    /// A fresh, empty store of `backend`: the one constructor a new backend adds an arm to.
    pub(crate) fn on(backend: Backend) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let clock = Arc::new(ManualClock::new(T0));
        let (store, url) = match backend {
            Backend::Sqlite => {
                (Profile::at(dir.path()).open_store_with(StoreOptions::with_clock(clock.clone())).unwrap(), None)
            }
            Backend::Postgres => {
                let url = fresh_schema_url(&postgres_url().expect("SERI_TEST_POSTGRES_URL"));
                let store = Profile::at(dir.path())
                    .open_store_url(Some(&url), StoreOptions::with_clock(clock.clone()))
                    .unwrap();
                (store, Some(url))
            }
        };
        Self { backend, dir, clock, store, url }
    }

    /// A fresh SQLite store, for the tests that reach under the contract
    /// (raw SQL, the database file itself) and so are SQLite's own.
    pub(crate) fn sqlite() -> Self {
        Self::on(Backend::Sqlite)
    }

    pub(crate) fn profile(&self) -> Profile {
        Profile::at(self.dir.path())
    }

    pub(crate) fn db_path(&self) -> PathBuf {
        self.profile().db_path()
    }

    /// The fixed local agent's handle.
    pub(crate) fn local(&self) -> AgentStore<'_> {
        self.store.agent(&AgentId::local())
    }

    /// Creates an untitled session of `agent` in `cwd`, one millisecond after the last thing.
    pub(crate) fn session(&self, agent: &AgentStore<'_>, cwd: &str) -> SessionId {
        self.clock.advance(1);
        let seed = agent.new_seed(cwd);
        agent.create_session(&seed).unwrap();
        seed.id
    }
}

pub(crate) fn user(text: &str) -> EventBody {
    EventBody::Message(Message::user(text))
}

pub(crate) fn trigger(text: &str) -> EventBody {
    EventBody::Message(Message { actor: seri_core::Actor::Trigger, ..Message::user(text) })
}

pub(crate) fn system(text: &str) -> EventBody {
    EventBody::Message(Message { actor: seri_core::Actor::System, ..Message::user(text) })
}

pub(crate) fn assistant(text: &str) -> EventBody {
    EventBody::Message(Message::assistant(text))
}

pub(crate) fn assistant_with_usage(text: &str, input: u64) -> EventBody {
    EventBody::Message(Message {
        meta: Some(Box::new(MessageMeta {
            usage: Some(Usage { input, cache_read: 0, cache_write: 0, output: 10 }),
            model: Some(ModelRef::new("script", "scripted")),
            ..MessageMeta::default()
        })),
        ..Message::assistant(text)
    })
}

pub(crate) fn thinking(text: &str) -> EventBody {
    EventBody::Thinking(Thinking { text: text.to_owned(), signature: None, encrypted_content: None })
}

pub(crate) fn tool_call(id: &str, name: &str) -> EventBody {
    EventBody::ToolCall(ToolCall { id: id.into(), name: name.to_owned(), arguments: serde_json::json!({"path": "a"}) })
}

pub(crate) fn tool_result(id: &str, name: &str, content: &str) -> EventBody {
    EventBody::ToolResult(ToolResult {
        tool_call_id: id.into(),
        name: name.to_owned(),
        content: content.to_owned(),
        is_error: false,
        facts: None,
    })
}

pub(crate) fn status(title: Option<&str>, description: Option<&str>) -> EventBody {
    EventBody::StatusChanged(StatusChanged {
        title: title.map(str::to_owned),
        description: description.map(str::to_owned),
        source: TitleSource::Agent,
    })
}

/// The seqs of some events, as plain numbers.
pub(crate) fn seqs(events: &[Event]) -> Vec<u64> {
    events.iter().map(|e| e.seq.get()).collect()
}

/// The text content of message events, in order.
pub(crate) fn texts(events: &[Event]) -> Vec<String> {
    events.iter().filter_map(|e| e.body.as_message().map(|m| m.content.clone())).collect()
}

/// An error of the caller's own, to show that a transaction rolls back on
/// any error the closure returns, not only the store's.
#[derive(Debug)]
pub(crate) enum StepError {
    Store(seri_store::StoreError),
    Injected { after_step: usize },
}

impl From<seri_store::StoreError> for StepError {
    fn from(e: seri_store::StoreError) -> Self {
        StepError::Store(e)
    }
}

/// The steps of one continuation, in the order the run loop makes them.
pub(crate) const CONTINUATION_STEPS: [&str; 4] =
    ["create the successor", "insert the edge", "append the two successor events", "link the attachments"];

/// Makes the writes of one continuation of `predecessor` for `tool_call`,
/// failing on purpose after `fail_after` steps when given.
pub(crate) fn continue_session(
    tx: &mut seri_store::WriteTx<'_>,
    predecessor: SessionId,
    tool_call: &str,
    title: &str,
    fail_after: Option<usize>,
) -> Result<seri_core::ContinuationEdge, StepError> {
    use seri_core::{ContinuationEdge, ContinueReason, ContinuedFrom, SessionContinuationManifest, Source};
    let check = |step: usize| match fail_after {
        Some(n) if n == step => Err(StepError::Injected { after_step: step }),
        _ => Ok(()),
    };
    check(0)?;
    let read = tx.read();
    let initiating = read.newest_user_message(predecessor)?.expect("the predecessor has a user message");
    let origin = read.continuation_into(predecessor)?.map_or(predecessor, |e| e.origin_session_id);
    let mut seed = tx.new_seed("/work");
    seed.title = Some(title.to_owned());
    seed.description = Some("continued".to_owned());
    seed.title_source = Some(TitleSource::Agent);
    tx.create_session(&seed)?;
    check(1)?;

    let edge = ContinuationEdge {
        id: tx.new_continuation_id(),
        predecessor_session_id: predecessor,
        successor_session_id: seed.id,
        origin_session_id: origin,
        tool_call_id: tool_call.into(),
        initiating_event_id: initiating.id,
        reason: ContinueReason::TopicChange,
        manifest: SessionContinuationManifest {
            format_version: seri_core::continuation::MANIFEST_FORMAT_VERSION,
            budget_bytes: 16_384,
            used_bytes: 120,
            projection_bytes: 900,
            origin_session_id: origin,
            predecessor_session_id: predecessor,
            depth: 1,
            initiating_seq: initiating.seq,
            sources: vec![Source::SessionEvent { session_id: predecessor, seq: initiating.seq }],
            included: vec![],
            omitted: vec![],
        },
        created_at: tx.now(),
    };
    tx.insert_continuation(&edge)?;
    check(2)?;

    let mut copied = initiating.body.as_message().cloned().expect("a message");
    copied.meta_mut().continued_from =
        Some(ContinuedFrom { session_id: predecessor, event_id: initiating.id, seq: initiating.seq });
    let mut projection = Message { actor: seri_core::Actor::System, ..Message::user("## Handoff\n…") };
    projection.meta_mut().projection_of = Some(edge.id);
    tx.append(seed.id, [EventBody::Message(projection), EventBody::Message(copied.clone())])?;
    check(3)?;

    for attachment in &copied.attachments {
        tx.link_attachment(predecessor, seed.id, &attachment.id)?;
    }
    check(4)?;
    Ok(edge)
}
