//! `seri serve`: the HTTP and WebSocket API of the continuation document,
//! over the run loop and the store.
//!
//! - [`router`] builds the axum `Router` over one [`ServerState`]; [`serve`]
//!   runs it on a listener until a shutdown signal, then cancels and
//!   settles the runs in flight.
//! - [`paths`] names every route once, for the router and the document.
//! - [`protocol`] holds every wire type (`*Params`, `*Response`, `*Frame`),
//!   apart from the handlers; [`openapi`] generates the OpenAPI 3.1
//!   document from them.
//! - Every `/api` route but `/api/health` needs a token naming an agent
//!   ([`auth`]); another agent's session is a 404, exactly like a missing
//!   one, because every read goes through that agent's store handle.
//! - Hostile clients are held off before any handler runs (`guard`,
//!   `gate`, `listen`): a `Host` that does not name this server is 421, a
//!   write signed by the UI's cookie from a page of another origin is 403,
//!   a missing or unknown token is 401 before a byte of the body is read,
//!   a body past its route's limit ([`limits`]) is 413 and one too slow is
//!   408, a connection slow to send its headers (or idle) is closed, at
//!   most [`ServerConfig::max_unauthenticated_per_client`] connections
//!   without a valid token are held from one address, and at most
//!   [`ServerConfig::max_connections`] are served at once (503 beyond).
//!
//! The server is a thin adapter: handlers parse, read the store on the
//! blocking pool, or submit a `seri_runloop::Command`, exactly as the REPL
//! does. It holds no SQL, no prompt text and no run-loop logic; a session's
//! frozen prompt and a runtime's provider come from its [`Backend`], which
//! the CLI implements with its own configuration. It reads no environment.

pub mod auth;
pub mod error;
pub mod extract;
mod gate;
mod guard;
mod idempotency;
pub mod limits;
mod listen;
pub mod openapi;
pub mod paths;
pub mod protocol;
mod routes;
mod state;
pub mod ui;
mod ws;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{DefaultBodyLimit, State};
use axum::routing::{get, post};

pub use auth::{Caller, TOKEN_COOKIE, new_token, token_hash};
pub use error::ApiError;
pub use listen::{RESERVED_DESCRIPTORS, connection_budget, raise_descriptor_limit};
pub use routes::{MAX_EVENTS_PAGE, MAX_SESSIONS_PAGE};
pub use state::{Backend, ServerConfig, ServerState};
pub use ws::CLOSE_GOING_AWAY;

/// How long a stopping server waits for its runs to settle.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// How many async worker threads `seri serve` runs on, at least (one a
/// core when there are more cores). The store is synchronous and a run
/// calls it from its task: on PostgreSQL each call blocks its worker for a
/// round trip, so with one worker a core (two on a small machine) a couple
/// of runs waiting on the database hold every worker, and every other
/// request, run step and wake-up waits behind them. Issue 35's profile of
/// 50 clients on 10 sessions: an await of the blocking pool took 14 ms
/// where its transaction took 3. An idle worker is one parked thread.
pub const MIN_WORKER_THREADS: usize = 8;

/// The async runtime `seri serve` runs on (the load benchmark builds the
/// same): [`MIN_WORKER_THREADS`] workers or one a core, whichever is more.
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    tokio::runtime::Builder::new_multi_thread().worker_threads(MIN_WORKER_THREADS.max(cores)).enable_all().build()
}

/// Every route of the API, over `state`, with writes signed by the UI's
/// cookie refused to pages of other origins. [`serve`] adds the checks
/// that need the address listened on (the `Host`) and the connection's
/// bounds.
pub fn router(state: ServerState) -> Router {
    // One store check of `/api/health` at a time: a store that hangs ties
    // up one blocking thread, however often health is asked.
    let health_probe = Arc::new(tokio::sync::Semaphore::new(1));
    let health = move |State(state): State<ServerState>| routes::health(state, health_probe.clone());
    Router::new()
        .route(paths::HEALTH, get(health))
        .route(paths::SESSIONS, get(routes::list_sessions).post(routes::create_session))
        .route(paths::SESSION, get(routes::get_session))
        .route(paths::SESSION_EVENTS, get(routes::events))
        .route(paths::SESSION_THREAD, get(routes::thread))
        .route(paths::SESSION_MESSAGES, post(routes::messages::post_message))
        .route(paths::SESSION_CANCEL, post(routes::cancel))
        .route(paths::SESSION_FORK, post(routes::fork))
        .route(paths::SESSION_SANDBOX, get(routes::settings::get_sandbox).put(routes::settings::set_sandbox))
        .route(
            paths::SESSION_PERMISSIONS,
            get(routes::settings::get_permissions).put(routes::settings::set_permissions),
        )
        .route(paths::SESSION_APPROVALS, get(routes::approvals))
        .route(paths::RUN_APPROVAL, post(routes::approve))
        .route(paths::CONTINUATION, get(routes::continuation))
        .route(paths::RECALLS, get(routes::recalls))
        .route(paths::SEARCH, get(routes::search::search))
        .route(paths::JOB, get(routes::job))
        .route(paths::OPENAPI, get(openapi::serve_document))
        .route(paths::WS, get(ws::upgrade))
        .merge(ui::routes())
        // Every route's token, body limit and body time, before its handler
        // (and its extractors) run; the bodies it lets through are read whole.
        .route_layer(axum::middleware::from_fn_with_state(state.clone(), gate::admit))
        .fallback(|| async { ApiError::not_found("no such route") })
        .layer(DefaultBodyLimit::disable())
        .layer(axum::middleware::from_fn(guard::refuse_cross_site_writes))
        .with_state(state)
}

/// Serves `state` on `listener` (and takes over runs that other servers on
/// the same database left, see the shared queue in `seri_store::jobs`)
/// until `shutdown` completes; then stops taking requests, closes
/// WebSockets, cancels every run in flight and waits (up to
/// [`SHUTDOWN_GRACE`]) for each to settle its calls, and as long again for
/// the connections to close.
///
/// A request whose `Host` does not name this server is refused (see
/// [`ServerConfig::host_names`]); a connection must send each request's
/// headers within [`ServerConfig::header_timeout`], and at most
/// [`ServerConfig::max_connections`] are served at once.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: ServerState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_wrapped(listener, state, shutdown, |app| app).await
}

/// [`serve`], with `wrap` around everything the server answers, the
/// refusals of a wrong `Host` included: a layer of the embedder's (the
/// test suite checks every answer against the OpenAPI document there).
pub async fn serve_wrapped(
    listener: tokio::net::TcpListener,
    state: ServerState,
    shutdown: impl Future<Output = ()> + Send + 'static,
    wrap: impl FnOnce(Router) -> Router,
) -> std::io::Result<()> {
    let served = listener.local_addr()?;
    let config = state.config();
    let hosts = Arc::new(guard::Hosts::new(served, &config.host_names));
    let limits = listen::Limits {
        header_timeout: config.header_timeout,
        max_connections: config.max_connections,
        max_unauthenticated_per_client: config.max_unauthenticated_per_client,
        stall_timeout: config.stall_timeout,
        grace: SHUTDOWN_GRACE,
    };
    state.start_background();
    let app = wrap(router(state.clone()).layer(axum::middleware::from_fn_with_state(hosts, guard::check_host)));
    listen::run(listener, app, limits, async move {
        shutdown.await;
        state.shut_down(SHUTDOWN_GRACE).await;
    })
    .await;
    Ok(())
}
