//! How much a request may send, route by route, who must have sent it
//! before a byte of its body is read, and how long it may take: one table,
//! [`ROUTES`], which the gate (`gate.rs`) applies and the book's **Limits** (Serving the API)
//! repeats.
//!
//! | Route | Who | Body limit |
//! |---|---|---|
//! | `POST /api/sessions/{id}/messages` | token | [`ServerConfig::message_body_limit`] (28 MiB: text and attachments, a 20 MiB file as base64) |
//! | `POST /api/sessions`, `…/fork`, `…/cancel`, `PUT …/sandbox`, `…/permissions`, `POST /api/runs/{runId}/approvals/{callId}` | token | [`ServerConfig::body_limit`] (64 KiB) |
//! | every other `/api` route (`GET`) | token | none read |
//! | `GET /api/ws` | token (or `?token=`) | none read |
//! | `/api/health`, `/api/openapi.json`, the web UI's pages and files | anyone | none read |
//! | `POST /sign-in`, `POST /sign-out` | anyone | [`SIGN_IN_BODY_LIMIT`] (4 KiB) |
//!
//! Every request's headers: at most [`MAX_HEADER_BYTES`], within
//! [`ServerConfig::header_timeout`]. Every body: within
//! [`ServerConfig::body_timeout`] plus its length at [`MIN_BODY_RATE`]
//! ([`body_deadline`]), and no gap longer than
//! [`ServerConfig::stall_timeout`].

use std::time::Duration;

use axum::http::Method;

use crate::ServerConfig;
use crate::paths;

/// The largest body of the web UI's sign-in and sign-out forms: they are
/// read before their sender is known, so they are small (a token is 69
/// characters).
pub const SIGN_IN_BODY_LIMIT: usize = 4 * 1024;

/// The slowest a body may arrive on average, in bytes a second: a body of
/// `n` bytes gets [`ServerConfig::body_timeout`] plus `n` at this rate
/// (28 MiB: 10 s + 224 s).
pub const MIN_BODY_RATE: u64 = 128 * 1024;

/// The most a request's line and headers may take, in bytes (431 beyond):
/// what one connection can make the server buffer before it is answered.
pub const MAX_HEADER_BYTES: usize = 64 * 1024;

/// Who may send a route a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Who {
    /// Anyone: the route needs no token, or (the web UI's pages and
    /// forms) checks one itself.
    Anyone,
    /// A caller with a valid token (bearer header or the UI's cookie),
    /// checked before a byte of the body is read: without one, 401.
    Agent,
    /// The same, the token also taken from `?token=` (the WebSocket, which
    /// a browser cannot give headers).
    AgentByQueryToo,
}

/// The body a route takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Takes {
    /// None: its handler reads no body, and none is read.
    Nothing,
    /// A JSON control body, up to [`ServerConfig::body_limit`].
    Control,
    /// A message, up to [`ServerConfig::message_body_limit`].
    Message,
    /// A form of the web UI, up to [`SIGN_IN_BODY_LIMIT`].
    Form,
}

impl Takes {
    /// The largest body, in bytes, under `config`.
    pub fn limit(self, config: &ServerConfig) -> usize {
        match self {
            Takes::Nothing => 0,
            Takes::Control => config.body_limit,
            Takes::Message => config.message_body_limit,
            Takes::Form => SIGN_IN_BODY_LIMIT,
        }
    }
}

/// One route's bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteLimit {
    /// `GET`, `POST`, `PUT`.
    pub method: &'static str,
    /// The route's template, as [`paths`] names it.
    pub path: &'static str,
    /// Who may send it.
    pub who: Who,
    /// What body it takes.
    pub takes: Takes,
}

const fn route(method: &'static str, path: &'static str, who: Who, takes: Takes) -> RouteLimit {
    RouteLimit { method, path, who, takes }
}

/// Every route the server answers, with its bounds.
pub const ROUTES: &[RouteLimit] = &[
    route("GET", paths::HEALTH, Who::Anyone, Takes::Nothing),
    route("GET", paths::OPENAPI, Who::Anyone, Takes::Nothing),
    route("GET", paths::SESSIONS, Who::Agent, Takes::Nothing),
    route("POST", paths::SESSIONS, Who::Agent, Takes::Control),
    route("GET", paths::SESSION, Who::Agent, Takes::Nothing),
    route("GET", paths::SESSION_EVENTS, Who::Agent, Takes::Nothing),
    route("GET", paths::SESSION_THREAD, Who::Agent, Takes::Nothing),
    route("POST", paths::SESSION_MESSAGES, Who::Agent, Takes::Message),
    route("POST", paths::SESSION_CANCEL, Who::Agent, Takes::Control),
    route("POST", paths::SESSION_FORK, Who::Agent, Takes::Control),
    route("GET", paths::SESSION_SANDBOX, Who::Agent, Takes::Nothing),
    route("PUT", paths::SESSION_SANDBOX, Who::Agent, Takes::Control),
    route("GET", paths::SESSION_PERMISSIONS, Who::Agent, Takes::Nothing),
    route("PUT", paths::SESSION_PERMISSIONS, Who::Agent, Takes::Control),
    route("GET", paths::SESSION_APPROVALS, Who::Agent, Takes::Nothing),
    route("POST", paths::RUN_APPROVAL, Who::Agent, Takes::Control),
    route("GET", paths::CONTINUATION, Who::Agent, Takes::Nothing),
    route("GET", paths::RECALLS, Who::Agent, Takes::Nothing),
    route("GET", paths::SEARCH, Who::Agent, Takes::Nothing),
    route("GET", paths::JOB, Who::Agent, Takes::Nothing),
    route("GET", paths::WS, Who::AgentByQueryToo, Takes::Nothing),
    route("GET", "/", Who::Anyone, Takes::Nothing),
    route("GET", "/s/{id}", Who::Anyone, Takes::Nothing),
    route("GET", "/ui/{*file}", Who::Anyone, Takes::Nothing),
    route("POST", "/sign-in", Who::Anyone, Takes::Form),
    route("POST", "/sign-out", Who::Anyone, Takes::Form),
];

/// What a route missing from [`ROUTES`] gets: the strictest bounds.
pub const UNLISTED: RouteLimit = route("", "", Who::Agent, Takes::Control);

/// The bounds of `method` on the route template `path` (a `HEAD` is its
/// `GET`'s).
pub fn of(method: &Method, path: &str) -> &'static RouteLimit {
    let method = if method == Method::HEAD { "GET" } else { method.as_str() };
    ROUTES.iter().find(|r| r.method == method && r.path == path).unwrap_or(&UNLISTED)
}

/// How long a body of `length` bytes may take in all.
pub fn body_deadline(config: &ServerConfig, length: usize) -> Duration {
    let length = u64::try_from(length).unwrap_or(u64::MAX);
    config.body_timeout + Duration::from_millis(length.saturating_mul(1000) / MIN_BODY_RATE)
}

/// `bytes` for people: `64 KiB`, `28 MiB`, `1500 bytes`.
pub fn size(bytes: usize) -> String {
    const KIB: usize = 1024;
    match bytes {
        b if b >= KIB * KIB && b % (KIB * KIB) == 0 => format!("{} MiB", b / (KIB * KIB)),
        b if b >= KIB && b % KIB == 0 => format!("{} KiB", b / KIB),
        b => format!("{b} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_api_route_is_in_the_table() {
        for path in paths::ALL {
            assert!(ROUTES.iter().any(|r| r.path == *path), "{path} has no limits");
        }
        let config = ServerConfig::default();
        assert_eq!(of(&Method::POST, paths::SESSION_MESSAGES).takes.limit(&config), 28 * 1024 * 1024);
        assert_eq!(of(&Method::POST, paths::SESSIONS).takes.limit(&config), 64 * 1024);
        assert_eq!(of(&Method::HEAD, paths::HEALTH).who, Who::Anyone);
        assert_eq!(of(&Method::DELETE, paths::SESSION), &UNLISTED);
    }

    #[test]
    fn a_body_gets_its_floor_and_time_in_proportion() {
        let config = ServerConfig::default();
        assert_eq!(body_deadline(&config, 0), Duration::from_secs(10));
        assert_eq!(body_deadline(&config, 28 * 1024 * 1024), Duration::from_secs(10 + 224));
        assert_eq!(size(64 * 1024), "64 KiB");
        assert_eq!(size(28 * 1024 * 1024), "28 MiB");
        assert_eq!(size(1500), "1500 bytes");
    }
}
