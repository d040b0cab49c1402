//! [`ServerState`]: everything the handlers share, in one `Arc`. One
//! runtime per agent (made on first use through the [`Backend`]), with its
//! own approvals and its own stream of frames for WebSocket clients.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use seri_core::{AgentId, ModelRef, SessionId, SessionInfo};
use seri_runloop::jobs::{JobQueue, JobSettings};
use seri_runloop::{Approvals, ChangeFeed, Runtime};
use seri_store::Store;
use seri_tools::Approver;
use tokio::sync::{broadcast, watch};

use crate::error::ApiError;
use crate::protocol::{ApprovalRequestedFrame, ServerFrame};
mod hub;
mod jobs;
pub(crate) mod relay;

pub(crate) use hub::{Follower, FrameKind, Hub, HubFrame, Membership, Missed};

use relay::{RelayHere, Relayed};

/// What the server needs from whoever starts it (the CLI): how to build an
/// agent's runtime, how to start a session (the frozen system prompt is
/// the caller's: the server holds no prompt text), and the context window.
pub trait Backend: Send + Sync + 'static {
    /// `agent`'s runtime, whose questions `approver` answers.
    fn runtime(&self, agent: &AgentId, approver: Arc<dyn Approver>) -> Result<Runtime, String>;

    /// A new session of `runtime`'s agent in `cwd` (the server's working
    /// directory when `None`), titled by a person when `title` is given.
    fn create_session(
        &self,
        runtime: &Runtime,
        cwd: Option<&str>,
        title: Option<String>,
    ) -> Result<SessionInfo, String>;

    /// The context window of `model` (the configured one when `None`).
    fn context_window(&self, model: Option<&ModelRef>) -> u64;

    /// The sandbox `bash` runs in, whose per-session choices
    /// `/api/sessions/{id}/sandbox` reads and sets; `None` (the default)
    /// when commands run without one, and the route is then a 404.
    fn sandbox(&self) -> Option<Arc<seri_tools::Sandbox>> {
        None
    }
}

/// How the server behaves.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The local agent's fixed token (`SERI_SERVER_TOKEN`), if any.
    pub local_token: Option<String>,
    /// How long a question waits for an answer before it is a refusal.
    pub approval_timeout: Duration,
    /// The largest body of a JSON control route (creating, forking a
    /// session, its sandbox and permissions, an approval), in bytes: 64 KiB
    /// by default. Every route's limit is in [`crate::limits`].
    pub body_limit: usize,
    /// The largest message body (`POST …/messages`), which may carry
    /// attachments: 28 MiB by default, room for a 20 MiB file as base64.
    pub message_body_limit: usize,
    /// How long any request body may take, at least: a body's whole time
    /// is this plus its length at [`crate::limits::MIN_BODY_RATE`]. Past it
    /// the request is refused with 408 and its connection closed, however
    /// steadily the body trickles.
    pub body_timeout: Duration,
    /// How many frames may wait for one WebSocket client: past it, the
    /// frames of a session it falls behind on are left out and it is sent a
    /// `resync` frame in their place once it has caught up (it is never
    /// dropped for it; one that takes nothing for [`Self::stall_timeout`] is).
    pub ws_queue: usize,
    /// How long this server's claim on a run it runs lasts without renewal
    /// (it renews every third of it): once a claim lapses (the server was
    /// killed, its machine lost), another server on the same database takes
    /// the run over.
    pub run_lease: Duration,
    /// How often the server looks for runs other servers left.
    pub job_poll: Duration,
    /// How long a connection may take to send a request's headers, counted
    /// from when the server waits for them: a new connection's first
    /// request, and the next request of a kept-alive one, so this is also
    /// how long an idle kept-alive connection stays open. Past it the
    /// connection is closed.
    pub header_timeout: Duration,
    /// How long a request's body may go without a byte arriving, and a
    /// response (or a WebSocket frame) without the client taking a byte of
    /// it. Past it the request is refused with 408, or the connection is
    /// closed: a client that never reads holds no connection for ever (one
    /// that trickles a body steadily is cut off by [`Self::body_timeout`]).
    pub stall_timeout: Duration,
    /// How many connections (WebSockets included) are served at once;
    /// beyond it a new one is answered 503 with `Retry-After` and closed.
    /// By default what the process's descriptor limit leaves room for
    /// ([`crate::connection_budget`]); set by hand, keep it under that
    /// limit: the store needs descriptors too.
    pub max_connections: usize,
    /// How many connections one address (the peer's IP) may hold open
    /// before any of them has presented a valid token. Past it a new
    /// connection from that address is answered 429 and closed at once,
    /// so one client cannot take the slots of [`Self::max_connections`]
    /// with connections that say nothing, or nothing true. Behind a load
    /// balancer every client has the balancer's address: raise it there.
    pub max_unauthenticated_per_client: usize,
    /// Names (`host` or `host:port`) a request's `Host` may give besides
    /// the loopback ones (`localhost`, `127.0.0.1`, `[::1]`) and the
    /// address listened on. When the server listens on a non-loopback
    /// address and this is empty, any `Host` is accepted (see `guard`).
    pub host_names: Vec<String>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            local_token: None,
            approval_timeout: Duration::from_secs(300),
            body_limit: 64 * 1024,
            message_body_limit: 28 * 1024 * 1024,
            body_timeout: Duration::from_secs(10),
            ws_queue: 256,
            run_lease: Duration::from_secs(30),
            job_poll: Duration::from_secs(1),
            header_timeout: Duration::from_secs(10),
            stall_timeout: Duration::from_secs(30),
            max_connections: crate::connection_budget(),
            max_unauthenticated_per_client: 64,
            host_names: Vec::new(),
        }
    }
}

/// Shared by every handler. Cheap to clone.
#[derive(Clone)]
pub struct ServerState {
    inner: Arc<Inner>,
}

struct Inner {
    store: Arc<Store>,
    backend: Arc<dyn Backend>,
    config: ServerConfig,
    agents: Mutex<HashMap<AgentId, Arc<AgentRuntime>>>,
    shutdown: watch::Sender<bool>,
    /// What this server and the others on the database tell each other
    /// of runs (PostgreSQL only; see `relay`), and what it heard, until
    /// the background starts listening.
    relay: Option<Arc<RelayHere>>,
    relay_heard: Mutex<Option<(tokio::sync::mpsc::UnboundedReceiver<String>, watch::Receiver<u64>)>>,
    /// This server's side of the shared queue of runs (the run loop's):
    /// it claims, runs, renews and hands back the jobs of the messages it
    /// accepts, and takes over those other servers left.
    jobs: JobQueue,
}

/// A [`ServerState`] held without keeping it: what the queue's host holds.
#[derive(Clone)]
pub(crate) struct WeakState(Weak<Inner>);

impl WeakState {
    /// The state, while the server is there.
    pub(crate) fn upgrade(&self) -> Option<ServerState> {
        self.0.upgrade().map(|inner| ServerState { inner })
    }
}

/// One agent's runtime and what hangs off it.
pub(crate) struct AgentRuntime {
    pub(crate) agent: AgentId,
    pub(crate) runtime: Runtime,
    pub(crate) approvals: Approvals,
    /// Where its frames go: the sockets that follow them.
    pub(crate) frames: Arc<Hub>,
}

impl ServerState {
    /// The state over `store`, building runtimes through `backend`.
    pub fn new(store: Arc<Store>, backend: Arc<dyn Backend>, config: ServerConfig) -> Self {
        let (shutdown, _) = watch::channel(false);
        let agents = Mutex::new(HashMap::new());
        let (sender, relay_heard) = match store.relay() {
            Some(relay) => (Some(relay.sender), Some((relay.received, relay.connected))),
            None => (None, None),
        };
        let relay_heard = Mutex::new(relay_heard);
        let settings = JobSettings { claim: config.run_lease, poll: config.job_poll };
        let inner = Arc::new_cyclic(|weak| {
            let host = Arc::new(jobs::Host(WeakState(weak.clone())));
            let jobs = JobQueue::new(store.clone(), host, settings, shutdown.subscribe());
            // Known to the others by the name it claims jobs by.
            let relay = sender
                .map(|sender| Arc::new(RelayHere::new(sender, config.approval_timeout, jobs.worker().to_owned())));
            Inner { store, backend, config, agents, shutdown, relay, relay_heard, jobs }
        });
        Self { inner }
    }

    /// This server's side of the shared queue of runs.
    pub(crate) fn jobs(&self) -> &JobQueue {
        &self.inner.jobs
    }

    /// This server as a claimant of jobs.
    pub(crate) fn worker(&self) -> &str {
        self.inner.jobs.worker()
    }

    /// Starts what runs beside the handlers: taking over jobs other servers
    /// left, and turning the store's changes into frames.
    pub(crate) fn start_background(&self) {
        tokio::spawn(self.inner.jobs.clone().work());
        tokio::spawn(forward_changes(self.clone(), ChangeFeed::new(&self.inner.store)));
        if let Some((heard, connected)) = self.inner.relay_heard.lock().unwrap_or_else(PoisonError::into_inner).take() {
            tokio::spawn(relay::hear(self.clone(), heard, connected));
        }
    }

    /// The relay to the other servers on the database (PostgreSQL only).
    pub(crate) fn relay(&self) -> Option<&Arc<RelayHere>> {
        self.inner.relay.as_ref()
    }

    /// The runtime of `agent` if one was made here.
    pub(crate) fn existing_runtime(&self, agent: &AgentId) -> Option<Arc<AgentRuntime>> {
        self.inner.agents.lock().unwrap_or_else(PoisonError::into_inner).get(agent).cloned()
    }

    pub(crate) fn backend(&self) -> &Arc<dyn Backend> {
        &self.inner.backend
    }

    pub(crate) fn config(&self) -> &ServerConfig {
        &self.inner.config
    }

    /// Flips once the server is stopping: WebSocket clients close.
    pub(crate) fn shutting_down(&self) -> watch::Receiver<bool> {
        self.inner.shutdown.subscribe()
    }

    /// Runs `f` on the blocking pool with the store: SQLite never blocks an
    /// async worker.
    pub(crate) async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Store) -> Result<T, ApiError> + Send + 'static,
    ) -> Result<T, ApiError> {
        let store = self.inner.store.clone();
        tokio::task::spawn_blocking(move || f(&store))
            .await
            .map_err(|e| ApiError::internal(format!("a store task failed: {e}")))?
    }

    /// `agent`'s runtime, made (with its notification and question
    /// forwarders) on first use.
    pub(crate) fn agent_runtime(&self, agent: &AgentId) -> Result<Arc<AgentRuntime>, ApiError> {
        let mut agents = self.inner.agents.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(existing) = agents.get(agent) {
            return Ok(existing.clone());
        }
        let approvals = Approvals::new(Some(self.inner.config.approval_timeout));
        let runtime = self
            .inner
            .backend
            .runtime(agent, Arc::new(approvals.clone()))
            .map_err(|e| ApiError::internal(format!("cannot start a runtime: {e}")))?;
        let frames = Arc::new(Hub::default());
        let made = Arc::new(AgentRuntime { agent: agent.clone(), runtime, approvals, frames });
        tokio::spawn(forward_questions(self.clone(), made.clone()));
        tokio::spawn(relay::tell_settled(self.clone(), made.clone()));
        agents.insert(agent.clone(), made.clone());
        Ok(made)
    }

    /// Stops: WebSocket clients are told, every run in flight is
    /// cancelled, and this waits (at most `limit`) until each has settled
    /// its calls and recorded how it ended.
    pub async fn shut_down(&self, limit: Duration) {
        let _ = self.inner.shutdown.send(true);
        let runtimes: Vec<Arc<AgentRuntime>> =
            self.inner.agents.lock().unwrap_or_else(PoisonError::into_inner).values().cloned().collect();
        for agent in &runtimes {
            agent.runtime.cancel_all();
        }
        // Each job settles its calls and hands itself back to the queue
        // (another server, or this one restarted, answers it).
        let deadline = tokio::time::Instant::now() + limit;
        let busy =
            || runtimes.iter().any(|a| a.runtime.running_submissions() > 0) || self.inner.jobs.running_here() > 0;
        while busy() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// A `session-change` frame for each of `changed`, with its view as of now.
async fn send_session_changes(state: &ServerState, agent: &AgentRuntime, changed: Vec<SessionId>) {
    for session_id in changed {
        if !agent.frames.wanted(FrameKind::SessionChange, Some(session_id)) {
            continue;
        }
        let owner = agent.agent.clone();
        let info = state.blocking(move |store| Ok(store.agent(&owner).info(session_id)?)).await;
        let Ok(info) = info else { continue };
        let frame = ServerFrame::session_change(session_id.to_string(), info);
        if let Some(frame) = HubFrame::new(FrameKind::SessionChange, Some(session_id), &frame) {
            agent.frames.send(&frame);
        }
    }
}

/// Turns the change feed (the store's commits: every server's on
/// PostgreSQL, this one's on SQLite) into `session-change` and
/// `account-change` frames for this server's WebSocket clients. A burst of
/// changes to one session (a streaming run appends often) becomes one
/// frame, and nothing is folded for an agent no client of this server hears.
async fn forward_changes(state: ServerState, mut feed: ChangeFeed) {
    let mut stopping = state.shutting_down();
    loop {
        // Until the server stops: dropping the feed ends the listening.
        let batch = tokio::select! {
            batch = feed.next_batch() => match batch {
                Some(batch) => batch,
                None => return,
            },
            _ = stopping.changed() => return,
        };
        for (agent_id, changes) in batch {
            let Some(agent) = state.existing_runtime(&agent_id) else { continue };
            if agent.frames.is_empty() {
                continue;
            }
            for (reasons, sessions) in changes.accounts {
                let frame = ServerFrame::account_change(reasons, sessions.iter().map(ToString::to_string).collect());
                if let Some(frame) = HubFrame::new(FrameKind::AccountChange, None, &frame) {
                    agent.frames.send(&frame);
                }
            }
            send_session_changes(&state, &agent, changes.sessions).await;
            send_interrupted(&state, &agent, changes.interrupted).await;
        }
    }
}

/// A `run-event` frame with the `run_finished` of each run the store
/// found its process gone from and recorded `interrupted`, as recorded:
/// the process never sent it, and a client that watched the run (streamed
/// from it, here or through the relay) would go on showing it running.
/// Every server on the database hears the store say so, whichever took the
/// run's session over.
async fn send_interrupted(state: &ServerState, agent: &AgentRuntime, runs: Vec<(SessionId, seri_core::RunId)>) {
    for (session_id, run_id) in runs {
        let owner = agent.agent.clone();
        let record = state.blocking(move |store| Ok(store.agent(&owner).read(|r| r.run(run_id))?)).await;
        let Some(event) = record.ok().flatten().as_ref().and_then(seri_protocol::StreamEvent::recorded_end) else {
            continue;
        };
        let frame = ServerFrame::run_event(session_id.to_string(), run_id.to_string(), event);
        if let Some(frame) = HubFrame::new(FrameKind::RunEvent, Some(session_id), &frame) {
            agent.frames.send(&frame);
        }
    }
}

/// Turns each question a run asks into an `approval-requested` frame for
/// the clients of its session, with the call's arguments the question
/// carries, and tells the other servers on the database.
async fn forward_questions(state: ServerState, agent: Arc<AgentRuntime>) {
    let mut asked = agent.approvals.subscribe();
    loop {
        let pending = match asked.recv().await {
            Ok(pending) => pending,
            Err(broadcast::error::RecvError::Lagged(_)) => continue,
            Err(broadcast::error::RecvError::Closed) => return,
        };
        // Notification hooks (a desktop ping) run beside the frame.
        let (runtime, notified) = (agent.runtime.clone(), pending.clone());
        tokio::spawn(async move { runtime.notification_hooks(&notified).await });
        let question = ApprovalRequestedFrame::of(&pending);
        if let Some(relay) = state.relay() {
            relay.send(&Relayed::Asked { agent: agent.agent.clone(), question: question.clone() });
        }
        let frame = ServerFrame::ApprovalRequested(question);
        if let Some(frame) = HubFrame::new(FrameKind::Approval, Some(pending.call.session_id), &frame) {
            agent.frames.send(&frame);
        }
    }
}
