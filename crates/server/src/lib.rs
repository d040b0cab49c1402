//! `seri serve`: the HTTP and WebSocket API of the continuation document,
//! over the run loop and the store.
//!
//! - [`router`] builds the axum `Router` over one [`ServerState`]; [`serve`]
//!   runs it on a listener until a shutdown signal, then cancels and
//!   settles the runs in flight.
//! - [`protocol`] holds every wire type (`*Params`, `*Response`, `*Frame`),
//!   apart from the handlers; [`openapi`] generates the OpenAPI 3.1
//!   document from them.
//! - Every `/api` route but `/api/health` needs a token naming an agent
//!   ([`auth`]); another agent's session is a 404, exactly like a missing
//!   one, because every read goes through that agent's store handle.
//!
//! The server is a thin adapter: handlers parse, read the store on the
//! blocking pool, or submit a `seri_runloop::Command`, exactly as the REPL
//! does. It holds no SQL, no prompt text and no run-loop logic; a session's
//! frozen prompt and a runtime's provider come from its [`Backend`], which
//! the CLI implements with its own configuration. It reads no environment.

pub mod auth;
pub mod error;
pub mod extract;
mod jobs;
pub mod openapi;
pub mod protocol;
mod routes;
mod state;
pub mod ui;
mod ws;

use std::future::Future;
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};

pub use auth::{Caller, TOKEN_COOKIE, new_token, token_hash};
pub use error::ApiError;
pub use routes::{MAX_EVENTS_PAGE, MAX_SESSIONS_PAGE};
pub use state::{Backend, ServerConfig, ServerState};
pub use ws::{CLOSE_GOING_AWAY, CLOSE_TOO_SLOW};

/// How long a stopping server waits for its runs to settle.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Every route of the API, over `state`.
pub fn router(state: ServerState) -> Router {
    let limit = state.config().body_limit;
    let message_limit = state.config().message_body_limit;
    Router::new()
        .route("/api/health", get(routes::health))
        .route("/api/sessions", get(routes::list_sessions).post(routes::create_session))
        .route("/api/sessions/{id}", get(routes::get_session))
        .route("/api/sessions/{id}/events", get(routes::events))
        .route("/api/sessions/{id}/thread", get(routes::thread))
        .route("/api/sessions/{id}/messages", post(routes::post_message).layer(DefaultBodyLimit::max(message_limit)))
        .route("/api/sessions/{id}/cancel", post(routes::cancel))
        .route("/api/sessions/{id}/approvals", get(routes::approvals))
        .route("/api/runs/{run_id}/approvals/{call_id}", post(routes::approve))
        .route("/api/continuations/{id}", get(routes::continuation))
        .route(
            "/api/openapi.json",
            get(|| async { ([(axum::http::header::CONTENT_TYPE, "application/json")], openapi::document()) }),
        )
        .route("/api/ws", get(ws::upgrade))
        .merge(ui::routes())
        .fallback(|| async { ApiError::not_found("no such route") })
        .layer(DefaultBodyLimit::max(limit))
        .with_state(state)
}

/// Serves `state` on `listener` (and takes over runs that other servers on
/// the same database left, see the shared queue in `seri_store::jobs`)
/// until `shutdown` completes; then stops
/// taking requests, closes WebSockets, cancels every run in flight and
/// waits (up to [`SHUTDOWN_GRACE`]) for each to settle its calls.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: ServerState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    state.start_background();
    let stopping = state.clone();
    axum::serve(listener, router(state))
        .with_graceful_shutdown(async move {
            shutdown.await;
            stopping.shut_down(SHUTDOWN_GRACE).await;
        })
        .await
}
