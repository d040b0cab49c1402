//! What every routed request passes before its handler, in this order
//! (the route's bounds are [`crate::limits::ROUTES`]):
//!
//! 1. **Who.** A route that needs a token gets it checked first: none, or
//!    one this server does not know, is 401 before a byte of the body is
//!    read. The caller found travels to the handler ([`Caller`] takes it
//!    from there), and the connection is vouched for (it no longer counts
//!    against its address, see `listen`).
//! 2. **How much.** A body declared (`Content-Length`) larger than the
//!    route takes is 413 unread; one that grows past it while arriving is
//!    413 at that point. Either names the limit.
//! 3. **How long.** The body must arrive whole within
//!    [`limits::body_deadline`] of its length, with no gap longer than
//!    [`crate::ServerConfig::stall_timeout`]; else 408.
//!
//! A refusal that leaves a body unread says `Connection: close`, and the
//! connection closes once it is answered (lingering, not draining: see
//! `listen`). Only a caller with a token ever has a body buffered (up to
//! its route's limit); the sign-in form, read before its sender is known,
//! is 4 KiB at most.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::auth::{Caller, agent_of, presented_token};
use crate::error::ApiError;
use crate::limits::{self, Takes, Who};
use crate::listen::Visitor;
use crate::state::ServerState;

/// Admits `request` to its handler, or refuses it (see the module).
pub(crate) async fn admit(State(state): State<ServerState>, mut request: Request, next: Next) -> Response {
    let rule = match request.extensions().get::<MatchedPath>() {
        Some(path) => limits::of(request.method(), path.as_str()),
        None => &limits::UNLISTED,
    };
    let visitor = request.extensions().get::<Arc<Visitor>>().cloned();
    let carries_body = carries_body(request.headers());
    if rule.who != Who::Anyone {
        let mut token = presented_token(request.headers());
        if token.is_none() && rule.who == Who::AgentByQueryToo {
            token = query_token(request.uri().query());
        }
        match agent_of(&state, token).await {
            Ok(agent) => {
                request.extensions_mut().insert(Caller(agent));
                if let Some(visitor) = &visitor {
                    visitor.vouch();
                }
            }
            Err(refused) => return refusal(refused, carries_body, visitor.as_deref()),
        }
    }
    if rule.takes == Takes::Nothing || !carries_body {
        return next.run(request).await;
    }
    let config = state.config();
    let limit = rule.takes.limit(config);
    let declared = declared_length(request.headers());
    if declared.is_some_and(|length| length > limit) {
        return refusal(too_large(limit), true, visitor.as_deref());
    }
    let deadline = limits::body_deadline(config, declared.unwrap_or(limit));
    let (parts, body) = request.into_parts();
    match read_body(body, limit, deadline, config.stall_timeout).await {
        Ok(bytes) => next.run(Request::from_parts(parts, Body::from(bytes))).await,
        Err(refused) => refusal(refused, true, visitor.as_deref()),
    }
}

/// Whether a request says it has a body: a `Transfer-Encoding`, or a
/// `Content-Length` other than 0.
fn carries_body(headers: &HeaderMap) -> bool {
    headers.contains_key(header::TRANSFER_ENCODING)
        || (headers.contains_key(header::CONTENT_LENGTH) && declared_length(headers) != Some(0))
}

/// The `Content-Length` a request gives (hyper refused any it cannot parse).
fn declared_length(headers: &HeaderMap) -> Option<usize> {
    headers.get(header::CONTENT_LENGTH)?.to_str().ok()?.trim().parse().ok()
}

/// The `?token=` of a query string.
fn query_token(query: Option<&str>) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct TokenQuery {
        token: Option<String>,
    }
    let uri = format!("/?{}", query?).parse().ok()?;
    axum::extract::Query::<TokenQuery>::try_from_uri(&uri).ok()?.0.token
}

/// 413, naming `limit`.
fn too_large(limit: usize) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "too_large",
        format!("the body is larger than this route takes: at most {} ({limit} bytes)", limits::size(limit)),
    )
}

/// `refused` as an answer; when the request's body is left unread, one
/// that closes the connection.
fn refusal(refused: ApiError, body_unread: bool, visitor: Option<&Visitor>) -> Response {
    let mut response = refused.into_response();
    if body_unread {
        response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
        if let Some(visitor) = visitor {
            visitor.leave_unread();
        }
    }
    response
}

/// The whole body, if it is at most `limit` bytes and arrives within
/// `deadline`, with no gap longer than `stall`.
async fn read_body(
    body: Body,
    limit: usize,
    deadline: std::time::Duration,
    stall: std::time::Duration,
) -> Result<Bytes, ApiError> {
    use futures_util::StreamExt as _;
    let late = || {
        let message = format!(
            "the request body did not arrive within {}s (the time a body of this length gets)",
            deadline.as_secs()
        );
        ApiError::new(StatusCode::REQUEST_TIMEOUT, "body_timeout", message)
    };
    let mut chunks = body.into_data_stream();
    let mut read = Vec::new();
    let reading = async {
        loop {
            match tokio::time::timeout(stall, chunks.next()).await {
                Err(_) => {
                    let message = format!("the request body stopped arriving for {}s", stall.as_secs());
                    return Err(ApiError::new(StatusCode::REQUEST_TIMEOUT, "body_timeout", message));
                }
                Ok(None) => return Ok(()),
                Ok(Some(Ok(chunk))) => {
                    if read.len() + chunk.len() > limit {
                        return Err(too_large(limit));
                    }
                    read.extend_from_slice(&chunk);
                }
                Ok(Some(Err(e))) => {
                    return Err(ApiError::bad_request(
                        "bad_request",
                        format!("the request body could not be read: {e}"),
                    ));
                }
            }
        }
    };
    let outcome = tokio::time::timeout(deadline, reading).await;
    match outcome {
        Err(_) => Err(late()),
        Ok(Err(refused)) => Err(refused),
        Ok(Ok(())) => Ok(Bytes::from(read)),
    }
}
