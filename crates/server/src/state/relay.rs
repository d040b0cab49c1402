//! Any server serves any client: what a run streams and asks reaches the
//! WebSocket clients of every server on the database, and a question is
//! answered on whichever server a person's request lands on.
//!
//! The store's relay ([`seri_store::relay`], PostgreSQL `NOTIFY`) carries
//! [`Relayed`] messages between servers. None of them is a fact: what a
//! run did is in its session's events, which every server reads; a
//! `run-event` frame a server missed (it was not listening yet, its
//! connection dropped) is what a client catches up on by reading them. A
//! question lives in the run that asks it: the server running it keeps it,
//! tells the others when it is asked ([`Relayed::Asked`]) and when it stops
//! waiting ([`Relayed::Settled`]); an answer given elsewhere travels to it
//! ([`Relayed::Answer`]) and its reply back ([`Relayed::Answered`]).
//! SQLite has no relay: one server is all there is.
//!
//! A run's frames go to the others only while a client of another server
//! watches its session: each server tells the others which sessions its
//! WebSocket clients subscribe to ([`Relayed::Watching`]), says it all
//! again every [`WATCH_REFRESH`] and when a server's relay connects, at its
//! start or after its connection dropped ([`Relayed::Hello`]), and a server
//! not heard from for [`WATCH_TTL`]
//! watches nothing. One server on a database, or several that nobody
//! watches through, send no run frames at all: on a busy server that was a
//! tenth of what PostgreSQL did (every `NOTIFY` takes the database's one
//! notification lock as it commits). A client that subscribes sees the run
//! from the moment the others heard it (a few milliseconds), as one that
//! subscribes mid-run does.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use seri_core::{AgentId, SessionId};
use seri_runloop::{Command, Submitted};
use seri_store::RelaySender;
use tokio::sync::{broadcast, oneshot};

use crate::protocol::{ApprovalParams, ApprovalRequestedFrame, ServerFrame};
use crate::state::{AgentRuntime, FrameKind, HubFrame, ServerState};

/// How long an answer given here waits for the server whose run asked to
/// say whether it reached the question.
pub(crate) const ANSWER_PATIENCE: Duration = Duration::from_secs(10);

/// How often a server says again which sessions its clients watch.
pub(crate) const WATCH_REFRESH: Duration = Duration::from_secs(10);

/// How long a server's word that its clients watch a session holds
/// without being said again (it stopped without saying so).
pub(crate) const WATCH_TTL: Duration = Duration::from_secs(30);

/// A message between the servers on one database.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub(crate) enum Relayed {
    /// A `run-event` frame of a run the sender runs, encoded as its
    /// clients get it.
    RunEvent { agent: AgentId, session: SessionId, frame: String },
    /// A run the sender runs asks a question.
    Asked { agent: AgentId, question: ApprovalRequestedFrame },
    /// That question waits no more (answered, refused or timed out).
    Settled { agent: AgentId, run_id: String, call_id: String },
    /// A person answered a question on the sender; `token` names the reply.
    Answer { agent: AgentId, run_id: String, call_id: String, params: ApprovalParams, token: String },
    /// The reply to [`Relayed::Answer`]: whether the question was waiting
    /// here and is answered now.
    Answered { token: String, answered: bool },
    /// Clients of `server` started (`on`) or stopped watching a session.
    Watching { server: String, agent: AgentId, session: SessionId, on: bool },
    /// Every session clients of `server` watch, said again.
    Watches { server: String, sessions: Vec<(AgentId, SessionId)> },
    /// `server` started listening: the others say what they watch.
    Hello { server: String },
}

/// A question another server's run asks.
struct Remote {
    agent: AgentId,
    question: ApprovalRequestedFrame,
    asked: Instant,
}

/// This server's side of the relay.
pub(crate) struct RelayHere {
    sender: RelaySender,
    /// Questions other servers' runs ask, by run and call.
    remote: Mutex<HashMap<(String, String), Remote>>,
    /// Answers sent from here, waiting for their reply.
    replies: Mutex<HashMap<String, oneshot::Sender<bool>>>,
    next_token: std::sync::atomic::AtomicU64,
    /// How long a question may wait (a question older than this was
    /// settled, even if its server went away without saying so).
    patience: Duration,
    /// This server, as the others know it.
    server: String,
    /// How many clients here watch each session.
    watched_here: Mutex<HashMap<(AgentId, SessionId), usize>>,
    /// The sessions clients of other servers watch: by server, when it last said so.
    watched_there: Mutex<HashMap<(AgentId, SessionId), HashMap<String, Instant>>>,
}

impl RelayHere {
    /// Relaying through `sender`, as `server` (a name no other server has:
    /// the one it claims jobs by).
    pub(crate) fn new(sender: RelaySender, patience: Duration, server: String) -> Self {
        Self {
            sender,
            remote: Mutex::new(HashMap::new()),
            replies: Mutex::new(HashMap::new()),
            next_token: std::sync::atomic::AtomicU64::new(0),
            patience,
            server,
            watched_here: Mutex::new(HashMap::new()),
            watched_there: Mutex::new(HashMap::new()),
        }
    }

    /// A client here subscribed to `session`: the others hear of it when
    /// it is the first here.
    pub(crate) fn watch(&self, agent: &AgentId, session: SessionId) {
        let first = {
            let mut here = self.watched_here.lock().unwrap_or_else(PoisonError::into_inner);
            let count = here.entry((agent.clone(), session)).or_default();
            *count += 1;
            *count == 1
        };
        if first {
            self.send(&Relayed::Watching { server: self.server.clone(), agent: agent.clone(), session, on: true });
        }
    }

    /// A client here stopped watching `session` (unsubscribed, or went):
    /// the others hear of it when it was the last here.
    pub(crate) fn unwatch(&self, agent: &AgentId, session: SessionId) {
        let last = {
            let mut here = self.watched_here.lock().unwrap_or_else(PoisonError::into_inner);
            let key = (agent.clone(), session);
            match here.get_mut(&key) {
                Some(count) if *count > 1 => {
                    *count -= 1;
                    false
                }
                Some(_) => here.remove(&key).is_some(),
                None => false,
            }
        };
        if last {
            self.send(&Relayed::Watching { server: self.server.clone(), agent: agent.clone(), session, on: false });
        }
    }

    /// Whether a client of another server watches `session`: only then do
    /// its run's frames go to the others.
    pub(crate) fn watched_elsewhere(&self, agent: &AgentId, session: SessionId) -> bool {
        let there = self.watched_there.lock().unwrap_or_else(PoisonError::into_inner);
        there.get(&(agent.clone(), session)).is_some_and(|servers| servers.values().any(|at| at.elapsed() < WATCH_TTL))
    }

    /// Says again every session clients here watch (nothing when none),
    /// and forgets what other servers said long enough ago to have lapsed.
    pub(crate) fn say_watches(&self) {
        let mut there = self.watched_there.lock().unwrap_or_else(PoisonError::into_inner);
        there.retain(|_, servers| {
            servers.retain(|_, at| at.elapsed() < WATCH_TTL);
            !servers.is_empty()
        });
        drop(there);
        let sessions: Vec<(AgentId, SessionId)> =
            self.watched_here.lock().unwrap_or_else(PoisonError::into_inner).keys().cloned().collect();
        if !sessions.is_empty() {
            self.send(&Relayed::Watches { server: self.server.clone(), sessions });
        }
    }

    /// What another server said its clients watch.
    fn heard_watching(&self, server: String, agent: AgentId, session: SessionId, on: bool) {
        let mut there = self.watched_there.lock().unwrap_or_else(PoisonError::into_inner);
        let key = (agent, session);
        if on {
            there.entry(key).or_default().insert(server, Instant::now());
        } else if let Some(servers) = there.get_mut(&key) {
            servers.remove(&server);
            if servers.is_empty() {
                there.remove(&key);
            }
        }
    }

    /// Another server's whole list: each session refreshed.
    fn heard_watches(&self, server: &str, sessions: Vec<(AgentId, SessionId)>) {
        let mut there = self.watched_there.lock().unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        for key in sessions {
            there.entry(key).or_default().insert(server.to_owned(), now);
        }
    }

    /// Tells the other servers.
    pub(crate) fn send(&self, message: &Relayed) {
        match serde_json::to_string(message) {
            Ok(text) => {
                self.sender.send(text);
            }
            Err(e) => tracing::warn!(error = %e, "cannot encode a relayed message"),
        }
    }

    /// The questions other servers' runs ask in `agent`'s `session`.
    pub(crate) fn questions(&self, agent: &AgentId, session: SessionId) -> Vec<ApprovalRequestedFrame> {
        let mut remote = self.remote.lock().unwrap_or_else(PoisonError::into_inner);
        remote.retain(|_, r| r.asked.elapsed() < self.patience);
        let session = session.to_string();
        let mut questions: Vec<_> = remote
            .values()
            .filter(|r| &r.agent == agent && r.question.session_id == session)
            .map(|r| (r.asked, r.question.clone()))
            .collect();
        questions.sort_by_key(|(asked, _)| *asked);
        questions.into_iter().map(|(_, q)| q).collect()
    }

    /// Answers a question another server's run asks: `None` when no server
    /// here knows of one, else whether it was still waiting.
    pub(crate) async fn answer(
        &self,
        agent: &AgentId,
        run_id: &str,
        call_id: &str,
        params: ApprovalParams,
        worker: &str,
    ) -> Option<bool> {
        let key = (run_id.to_owned(), call_id.to_owned());
        let known =
            self.remote.lock().unwrap_or_else(PoisonError::into_inner).get(&key).is_some_and(|r| &r.agent == agent);
        if !known {
            return None;
        }
        let n = self.next_token.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let token = format!("{worker} {n}");
        let (reply, replied) = oneshot::channel();
        self.replies.lock().unwrap_or_else(PoisonError::into_inner).insert(token.clone(), reply);
        let (run_id, call_id) = key;
        self.send(&Relayed::Answer { agent: agent.clone(), run_id, call_id, params, token: token.clone() });
        let answered = tokio::time::timeout(ANSWER_PATIENCE, replied).await.ok().and_then(Result::ok);
        self.replies.lock().unwrap_or_else(PoisonError::into_inner).remove(&token);
        Some(answered.unwrap_or(false))
    }
}

/// Turns what other servers relay into frames for this server's clients,
/// questions it lists, and answers for its own runs' questions; says what
/// its clients watch every [`WATCH_REFRESH`], and says hello each time its
/// relay connects and listens: at start, and after its connection dropped
/// (the database restarted), when what the others said meanwhile was lost
/// to it. So they say again what they watch, and it says what its own
/// clients watch (a word it sent as the connection dropped may be lost too).
pub(crate) async fn hear(
    state: ServerState,
    mut received: tokio::sync::mpsc::UnboundedReceiver<String>,
    mut connected: tokio::sync::watch::Receiver<u64>,
) {
    let mut stopping = state.shutting_down();
    let mut refresh = tokio::time::interval(WATCH_REFRESH);
    refresh.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let text = tokio::select! {
            text = received.recv() => match text {
                Some(text) => text,
                None => return,
            },
            Ok(()) = connected.changed() => {
                if let Some(relay) = state.relay() {
                    relay.send(&Relayed::Hello { server: relay.server.clone() });
                    relay.say_watches();
                }
                continue;
            }
            _ = refresh.tick() => {
                if let Some(relay) = state.relay() {
                    relay.say_watches();
                }
                continue;
            }
            _ = stopping.changed() => return,
        };
        let Some(relay) = state.relay() else { return };
        let message = match serde_json::from_str::<Relayed>(&text) {
            Ok(message) => message,
            Err(e) => {
                tracing::warn!(error = %e, "an unreadable relayed message");
                continue;
            }
        };
        match message {
            Relayed::RunEvent { agent, session, frame } => {
                if let Some(runtime) = state.existing_runtime(&agent) {
                    let frame = HubFrame { kind: FrameKind::RunEvent, session: Some(session), text: frame.into() };
                    runtime.frames.send(&frame);
                }
            }
            Relayed::Asked { agent, question } => {
                if let Some(runtime) = state.existing_runtime(&agent)
                    && let Ok(session) = question.session_id.parse::<SessionId>()
                {
                    let frame = ServerFrame::ApprovalRequested(question.clone());
                    if let Some(frame) = HubFrame::new(FrameKind::Approval, Some(session), &frame) {
                        runtime.frames.send(&frame);
                    }
                }
                let key = (question.run_id.clone(), question.call_id.clone());
                let remote = Remote { agent, question, asked: Instant::now() };
                relay.remote.lock().unwrap_or_else(PoisonError::into_inner).insert(key, remote);
            }
            Relayed::Settled { agent, run_id, call_id } => {
                let mut remote = relay.remote.lock().unwrap_or_else(PoisonError::into_inner);
                if remote.get(&(run_id.clone(), call_id.clone())).is_some_and(|r| r.agent == agent) {
                    remote.remove(&(run_id, call_id));
                }
            }
            Relayed::Answer { agent, run_id, call_id, params, token } => {
                // Only the server whose run asks has it waiting; the others stay silent.
                let Some(runtime) = state.existing_runtime(&agent) else { continue };
                let waiting = runtime.approvals.waiting();
                let Some(pending) = waiting.into_iter().find(|p| {
                    p.call.run_id.is_some_and(|r| r.to_string() == run_id) && p.call.call_id.as_str() == call_id
                }) else {
                    continue;
                };
                let Ok(decision) = params.decision() else { continue };
                let answered = runtime
                    .runtime
                    .submit(Command::Approve { call: pending.call, decision }, &seri_runloop::Quiet)
                    .await;
                let answered = matches!(answered, Ok(Submitted::Approved(true)));
                relay.send(&Relayed::Answered { token, answered });
            }
            Relayed::Answered { token, answered } => {
                if let Some(reply) = relay.replies.lock().unwrap_or_else(PoisonError::into_inner).remove(&token) {
                    let _ = reply.send(answered);
                }
            }
            Relayed::Watching { server, agent, session, on } => relay.heard_watching(server, agent, session, on),
            Relayed::Watches { server, sessions } => relay.heard_watches(&server, sessions),
            Relayed::Hello { .. } => relay.say_watches(),
        }
    }
}

/// Tells the other servers each question `agent`'s runs stop waiting on.
pub(crate) async fn tell_settled(state: ServerState, agent: std::sync::Arc<AgentRuntime>) {
    let Some(relay) = state.relay() else { return };
    let mut settled = agent.approvals.subscribe_settled();
    loop {
        let call = match settled.recv().await {
            Ok(call) => call,
            Err(broadcast::error::RecvError::Lagged(_)) => continue,
            Err(broadcast::error::RecvError::Closed) => return,
        };
        let run_id = call.run_id.map(|r| r.to_string()).unwrap_or_default();
        relay.send(&Relayed::Settled { agent: agent.agent.clone(), run_id, call_id: call.call_id.to_string() });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relayed_messages_read_back_as_sent() {
        let sent = Relayed::Answer {
            agent: AgentId::local(),
            run_id: "r".into(),
            call_id: "c".into(),
            params: ApprovalParams { allow: false, remember: None, instead: Some("no".into()) },
            token: "t 1".into(),
        };
        let text = serde_json::to_string(&sent).unwrap();
        assert!(text.starts_with(r#"{"type":"answer""#), "{text}");
        let back: Relayed = serde_json::from_str(&text).unwrap();
        assert!(matches!(back, Relayed::Answer { params: ApprovalParams { allow: false, .. }, .. }));
    }
}
