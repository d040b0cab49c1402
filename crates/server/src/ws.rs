//! `GET /api/ws`: subscriptions over a WebSocket.
//!
//! The upgrade checks the token (bearer header, cookie, or `?token=` for
//! browsers, which cannot set headers on a WebSocket) and where it comes
//! from (`Origin`, `Sec-Fetch-Site`): a page of another origin may not open
//! one (cross-site WebSocket hijacking). A client subscribes to
//! sessions (`session-change`, `run-event`, `approval-requested` of each)
//! and to its account (`account-change`, and `session-change` of every
//! session). Frames reach only the sockets that follow them (see
//! [`crate::state::Hub`]); a client that falls behind by more than the
//! configured queue is sent a `resync` frame in place of the frames it
//! missed, and is never dropped for it: it never holds up a run or
//! another client.

use std::collections::HashSet;

use axum::extract::State;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use futures_util::{SinkExt as _, StreamExt as _};
use seri_core::{AgentId, SessionId};
use tokio::sync::{mpsc, oneshot};

use crate::auth::{Caller, agent_of, presented_token};
use crate::error::ApiError;
use crate::extract::ApiQuery;
use crate::guard::same_origin;
use crate::paths;
use crate::protocol::{ClientFrame, ServerFrame, SubscribeFrame, UnsubscribeFrame};
use crate::state::{AgentRuntime, Follower, Membership, Missed, ServerState};

/// Close code when the server stops.
pub const CLOSE_GOING_AWAY: u16 = 1001;

/// The `?token=` of an upgrade.
#[derive(Debug, serde::Deserialize)]
pub(crate) struct WsQuery {
    token: Option<String>,
}

/// The WebSocket: the client sends `ClientFrame`s (`subscribe`,
/// `unsubscribe`), the server sends `ServerFrame`s, each a JSON text frame.
///
/// The token comes as the bearer header, the web UI's cookie, or
/// `?token=` (browsers cannot set headers on a WebSocket). A request that
/// is not a WebSocket upgrade is 426 `not_websocket`, once the token and
/// the origin were checked.
#[utoipa::path(get, path = paths::WS,
    params(("token" = Option<String>, Query, description = "the token, for browsers")),
    responses((status = 101, description = "switching to the WebSocket protocol; frames are `ClientFrame` and `ServerFrame`"),
        (status = 426, body = crate::protocol::ErrorResponse, description = "not a WebSocket upgrade (`not_websocket`)")))]
pub(crate) async fn upgrade(
    State(state): State<ServerState>,
    headers: HeaderMap,
    ApiQuery(query): ApiQuery<WsQuery>,
    ws: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
    checked: Option<axum::Extension<Caller>>,
) -> Result<Response, ApiError> {
    // Whatever signs it: a browser opens a WebSocket with the cookie, or
    // with a `?token=` a page of another site could have been given.
    same_origin(&headers, "open this server's WebSocket")?;
    // The gate checked the token already; a router without it checks here.
    let agent = match checked {
        Some(axum::Extension(Caller(agent))) => agent,
        None => agent_of(&state, presented_token(&headers).or(query.token)).await?,
    };
    let ws = ws.map_err(|rejection| {
        ApiError::new(
            StatusCode::UPGRADE_REQUIRED,
            "not_websocket",
            format!("this route is a WebSocket: open it with a WebSocket client ({})", rejection.body_text()),
        )
    })?;
    let runtime = state.agent_runtime(&agent)?;
    Ok(ws.on_upgrade(move |socket| connection(state, agent, runtime, socket)))
}

async fn connection(state: ServerState, agent: AgentId, runtime: std::sync::Arc<AgentRuntime>, socket: WebSocket) {
    let (mut sink, mut incoming) = socket.split();
    let (membership, mut queue) = runtime.frames.join(state.config().ws_queue);
    let follower = membership.follower.clone();
    // What this client follows, for the relay's bookkeeping.
    let mut interest = Interest { membership, sessions: HashSet::new(), account: false };
    let (replies, mut replied) = mpsc::channel::<String>(1);
    let (close, closing) = oneshot::channel::<(u16, &'static str)>();
    // One writer: frames in order, a `resync` for what was left out once
    // the queue is drained, then a close frame when the connection ends.
    let writer = tokio::spawn(async move {
        let mut closing = closing;
        loop {
            let text: Utf8Bytes = tokio::select! {
                biased;
                reason = &mut closing => {
                    let (code, why) = reason.unwrap_or((1000, "bye"));
                    let _ = sink.send(Message::Close(Some(CloseFrame { code, reason: why.into() }))).await;
                    return;
                }
                Some(reply) = replied.recv() => reply.into(),
                next = queue.recv() => match next {
                    Some(text) => text,
                    None => return,
                },
                () = follower.wake.notified() => {
                    if queue.is_empty() && send_resyncs(&mut sink, &follower).await.is_err() {
                        return;
                    }
                    continue;
                }
            };
            if sink.send(Message::Text(text)).await.is_err() {
                return;
            }
            if queue.is_empty() && send_resyncs(&mut sink, &follower).await.is_err() {
                return;
            }
        }
    });
    let mut stopping = state.shutting_down();
    let reason = loop {
        tokio::select! {
            message = incoming.next() => match message {
                Some(Ok(Message::Text(text))) => {
                    // Waits for this socket's writer only: backpressure on
                    // the client that sent it, nobody else.
                    if let Some(reply) = subscribe(&state, &agent, &mut interest, text.as_str()).await
                        && replies.send(reply).await.is_err()
                    {
                        break (1000, "bye");
                    }
                }
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break (1000, "bye"),
                Some(Ok(_)) => {}
            },
            _ = stopping.changed() => break (CLOSE_GOING_AWAY, "the server is stopping"),
        }
    };
    if let Some(relay) = state.relay() {
        for id in interest.sessions.drain() {
            relay.unwatch(&agent, id);
        }
    }
    drop(interest);
    let _ = close.send(reason);
    let _ = writer.await;
}

/// Sends a `resync` frame for each session (and the account) whose frames
/// were left out while the client's queue was full.
async fn send_resyncs(
    sink: &mut futures_util::stream::SplitSink<WebSocket, Message>,
    follower: &Follower,
) -> Result<(), axum::Error> {
    let Missed { sessions, account } = follower.take_missed();
    let frames = sessions.iter().map(|s| Some(s.to_string())).chain(account.then_some(None));
    for session in frames {
        if let Ok(text) = serde_json::to_string(&ServerFrame::resync(session)) {
            sink.send(Message::Text(text.into())).await?;
        }
    }
    Ok(())
}

/// What one client asked to hear: its place in the agent's hub, and the
/// same again for the relay to the other servers.
struct Interest {
    membership: Membership,
    sessions: HashSet<SessionId>,
    account: bool,
}

/// Applies a client frame; returns the frame to send back: `subscribed`
/// once it took effect, `error` when it was refused.
async fn subscribe(state: &ServerState, agent: &AgentId, interest: &mut Interest, text: &str) -> Option<String> {
    let refuse = |code: &str, message: String| serde_json::to_string(&ServerFrame::error(code, message)).ok();
    let frame = match ClientFrame::parse(text) {
        Ok(frame) => frame,
        Err(e) => {
            return refuse(
                "bad_frame",
                format!(
                    "a frame is {{\"type\": \"subscribe\", \"sessionId\"}} or {{\"type\": \"subscribe\", \"account\": true}}: {e}"
                ),
            );
        }
    };
    let (subscribing, session, account) = match frame {
        ClientFrame::Subscribe(SubscribeFrame { session_id, account, .. }) => (true, session_id, account),
        ClientFrame::Unsubscribe(UnsubscribeFrame { session_id, account, .. }) => (false, session_id, account),
    };
    if let Some(account) = account {
        interest.account = subscribing && account;
        interest.membership.follow_account(interest.account);
    }
    if let Some(text) = &session {
        let Ok(id) = text.parse::<SessionId>() else { return refuse("not_found", format!("no session {text}")) };
        if subscribing {
            let owner = agent.clone();
            if state.blocking(move |store| Ok(store.agent(&owner).summary(id)?)).await.is_err() {
                return refuse("not_found", format!("no session {text}"));
            }
            interest.membership.follow(id, true);
            if interest.sessions.insert(id)
                && let Some(relay) = state.relay()
            {
                relay.watch(agent, id);
            }
        } else {
            interest.membership.follow(id, false);
            if interest.sessions.remove(&id)
                && let Some(relay) = state.relay()
            {
                relay.unwatch(agent, id);
            }
        }
    }
    serde_json::to_string(&ServerFrame::subscribed(session, interest.account)).ok()
}
