//! Who a request speaks for: a bearer token (`Authorization: Bearer …`,
//! or the `seri_token` cookie the web UI signs in with) names an agent.
//! `SERI_SERVER_TOKEN` is the local agent's; `seri token create` records
//! others, hashed. No token, or an unknown one, is 401.

use axum::extract::FromRequestParts;
use axum::http::HeaderMap;
use axum::http::request::Parts;
use seri_core::AgentId;
use sha2::{Digest, Sha256};

use crate::error::ApiError;
use crate::state::ServerState;

/// The cookie the web UI keeps the token in.
pub const TOKEN_COOKIE: &str = "seri_token";

/// The agent a request speaks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller(pub AgentId);

/// Lowercase hex SHA-256 of a token: what the store keeps.
pub fn token_hash(token: &str) -> String {
    Sha256::digest(token.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// A fresh token: `seri_` and 64 hex digits from the operating system's
/// random source.
pub fn new_token() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    Ok(format!("seri_{}", bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()))
}

/// The token a request carries: the bearer header first, then the cookie.
pub(crate) fn presented_token(headers: &HeaderMap) -> Option<String> {
    bearer_token(headers).or_else(|| cookie_token(headers))
}

/// The token of an `Authorization: Bearer …` header.
pub(crate) fn bearer_token(headers: &HeaderMap) -> Option<String> {
    headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(|t| t.trim().to_owned())
}

/// The token of the web UI's cookie: one a browser sends by itself, to
/// whichever page asks (see `guard::same_origin`).
pub(crate) fn cookie_token(headers: &HeaderMap) -> Option<String> {
    headers.get_all(axum::http::header::COOKIE).iter().filter_map(|v| v.to_str().ok()).find_map(|cookies| {
        cookies.split(';').find_map(|c| c.trim().strip_prefix(TOKEN_COOKIE)?.strip_prefix('=').map(str::to_owned))
    })
}

/// The agent `token` speaks for.
pub(crate) async fn agent_of(state: &ServerState, token: Option<String>) -> Result<AgentId, ApiError> {
    let Some(token) = token.filter(|t| !t.is_empty()) else { return Err(ApiError::unauthorized()) };
    let hash = token_hash(&token);
    if state.config().local_token.as_deref().is_some_and(|local| token_hash(local) == hash) {
        return Ok(AgentId::local());
    }
    state
        .blocking(move |store| store.server_token_agent(&hash).map_err(ApiError::from))
        .await?
        .ok_or_else(ApiError::unauthorized)
}

impl FromRequestParts<ServerState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &ServerState) -> Result<Self, ApiError> {
        // The gate checked the token already, before the body was read.
        if let Some(caller) = parts.extensions.get::<Caller>() {
            return Ok(caller.clone());
        }
        agent_of(state, presented_token(&parts.headers)).await.map(Caller)
    }
}
