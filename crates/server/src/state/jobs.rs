//! The server's side of the shared queue of runs ([`seri_runloop::jobs`],
//! which claims, runs, renews, takes over and hands back jobs): which
//! runtime runs an agent's job, and the `run-event` frames its runs become
//! for the WebSocket clients of every server on the database. A job's
//! outcome is the store's typed `JobOutcome`; the response a client reads
//! is built from it when asked (`MessageSessionResponse::of`).

use seri_core::{AgentId, RunId, SessionId};
use seri_runloop::RunEvent;
use seri_runloop::jobs::JobHost;

use crate::protocol::ServerFrame;
use crate::state::relay::Relayed;
use crate::state::{FrameKind, HubFrame, WeakState};

/// The queue's host: this server (held weakly: the server holds the queue).
pub(crate) struct Host(pub(crate) WeakState);

impl JobHost for Host {
    fn runtime(&self, agent: &AgentId) -> Result<seri_runloop::Runtime, String> {
        let state = self.0.upgrade().ok_or_else(|| "the server is gone".to_owned())?;
        state.agent_runtime(agent).map(|made| made.runtime.clone()).map_err(|e| e.message)
    }

    fn run_event(&self, agent: &AgentId, session: SessionId, run: RunId, event: &RunEvent) {
        let Some(state) = self.0.upgrade() else { return };
        let Some(runtime) = state.existing_runtime(agent) else { return };
        // Relayed only while a client of another server watches the session.
        let relay = state.relay().filter(|relay| relay.watched_elsewhere(agent, session));
        // Nothing is encoded while no client, here or elsewhere, listens.
        if relay.is_none() && !runtime.frames.wanted(FrameKind::RunEvent, Some(session)) {
            return;
        }
        let frame = ServerFrame::run_event(session.to_string(), run.to_string(), seri_protocol::StreamEvent::of(event));
        if let Some(frame) = HubFrame::new(FrameKind::RunEvent, Some(session), &frame) {
            // The clients of other servers on the database hear it too.
            if let Some(relay) = relay {
                relay.send(&Relayed::RunEvent { agent: agent.clone(), session, frame: frame.text.as_str().to_owned() });
            }
            runtime.frames.send(&frame);
        }
    }
}
