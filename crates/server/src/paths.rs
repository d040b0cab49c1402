//! Every route path of the API, written once: the router mounts these
//! constants and the OpenAPI document names them (`#[utoipa::path(path =
//! …)]`), so the two cannot disagree. Parameters are in braces, the syntax
//! both axum and OpenAPI read; a parameter's name is the document's (axum
//! hands handlers path parameters by position).

/// `GET`: whether the server and its store answer. Needs no token.
pub const HEALTH: &str = "/api/health";
/// `GET`: the caller's sessions; `POST`: a new one.
pub const SESSIONS: &str = "/api/sessions";
/// `GET`: one session, with its context window and usage.
pub const SESSION: &str = "/api/sessions/{id}";
/// `GET`: a page of a session's stored events.
pub const SESSION_EVENTS: &str = "/api/sessions/{id}/events";
/// `GET`: a session's `[seq] who: text` lines.
pub const SESSION_THREAD: &str = "/api/sessions/{id}/thread";
/// `POST`: a person's (or automation's) message to a session.
pub const SESSION_MESSAGES: &str = "/api/sessions/{id}/messages";
/// `POST`: a fork of a session at a seq: a new session sharing its events.
pub const SESSION_FORK: &str = "/api/sessions/{id}/fork";
/// `GET`: what `bash` may touch in a session; `PUT`: changes it.
pub const SESSION_SANDBOX: &str = "/api/sessions/{id}/sandbox";
/// `GET`: the permission mode a session's tools run under; `PUT`: changes it.
pub const SESSION_PERMISSIONS: &str = "/api/sessions/{id}/permissions";
/// `POST`: cancels what runs in a session.
pub const SESSION_CANCEL: &str = "/api/sessions/{id}/cancel";
/// `GET`: the questions waiting in a session.
pub const SESSION_APPROVALS: &str = "/api/sessions/{id}/approvals";
/// `POST`: answers a question a run asks before a tool acts.
pub const RUN_APPROVAL: &str = "/api/runs/{runId}/approvals/{callId}";
/// `GET`: one continuation edge.
pub const CONTINUATION: &str = "/api/continuations/{id}";
/// `GET`: how often successors read back what their projection left out.
pub const RECALLS: &str = "/api/recalls";
/// `GET`: full-text search over the caller's sessions.
pub const SEARCH: &str = "/api/search";
/// `GET`: what became of an accepted message.
pub const JOB: &str = "/api/jobs/{id}";
/// `GET`: the OpenAPI 3.1 document.
pub const OPENAPI: &str = "/api/openapi.json";
/// `GET`: the WebSocket.
pub const WS: &str = "/api/ws";

/// Every path above, for the tests that compare the router, the document
/// and the clients.
pub const ALL: &[&str] = &[
    HEALTH,
    SESSIONS,
    SESSION,
    SESSION_EVENTS,
    SESSION_THREAD,
    SESSION_MESSAGES,
    SESSION_CANCEL,
    SESSION_FORK,
    SESSION_SANDBOX,
    SESSION_PERMISSIONS,
    SESSION_APPROVALS,
    RUN_APPROVAL,
    CONTINUATION,
    RECALLS,
    SEARCH,
    JOB,
    OPENAPI,
    WS,
];

/// The path template of [`ALL`] that `path` (a request's path, without its
/// query) is an instance of: a `{parameter}` stands for one non-empty
/// segment.
pub fn template_of(path: &str) -> Option<&'static str> {
    let segments: Vec<&str> = path.split('/').collect();
    ALL.iter().copied().find(|template| {
        let wanted: Vec<&str> = template.split('/').collect();
        wanted.len() == segments.len()
            && wanted.iter().zip(&segments).all(|(w, s)| if w.starts_with('{') { !s.is_empty() } else { w == s })
    })
}
