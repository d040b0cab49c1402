//! Extractors whose refusals are [`ApiError`]s: a malformed body, an
//! unknown field, a body over the limit or a bad query is a 4xx with the
//! usual `{"error": …}` body naming what was wrong, and nothing is written.

use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::StatusCode;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use crate::error::ApiError;

/// A JSON body.
#[derive(Debug, Clone)]
pub struct ApiJson<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        if !is_json(request.headers()) {
            return Err(json_refusal(&JsonRejection::MissingJsonContentType(Default::default())));
        }
        let bytes = axum::body::Bytes::from_request(request, state).await.map_err(|rejection| {
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "too_large", "the body is larger than the server takes")
            } else {
                ApiError::bad_request("bad_body", format!("the body cannot be read: {}", rejection.body_text()))
            }
        })?;
        // serde reads a struct from an array too (`[null, null]`); every
        // body of this API is an object, as the document says.
        if bytes.iter().find(|b| !b.is_ascii_whitespace()).is_some_and(|b| *b != b'{') {
            return Err(ApiError::bad_request("bad_json", "the body must be a JSON object"));
        }
        match axum::Json::<T>::from_bytes(&bytes) {
            Ok(axum::Json(value)) => Ok(ApiJson(value)),
            Err(rejection) => Err(json_refusal(&rejection)),
        }
    }
}

/// Whether the request says its body is JSON: `application/json` or
/// `application/…+json`, as axum's `Json` asks.
fn is_json(headers: &axum::http::HeaderMap) -> bool {
    let Some(value) = headers.get(axum::http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let essence = value.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    essence == "application/json" || (essence.starts_with("application/") && essence.ends_with("+json"))
}

fn json_refusal(rejection: &JsonRejection) -> ApiError {
    let detail = rejection.body_text();
    match rejection {
        JsonRejection::JsonDataError(_) if detail.contains("unknown field") => {
            ApiError::bad_request("unknown_field", format!("the body has a field this route does not take: {detail}"))
        }
        JsonRejection::JsonDataError(_) => {
            ApiError::bad_request("bad_json", format!("the body does not fit: {detail}"))
        }
        JsonRejection::JsonSyntaxError(_) => {
            ApiError::bad_request("bad_json", format!("the body is not JSON: {detail}"))
        }
        JsonRejection::MissingJsonContentType(_) => ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "bad_content_type",
            "send the body as JSON, with `Content-Type: application/json`",
        ),
        _ if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "too_large", "the body is larger than the server takes")
        }
        _ => ApiError::bad_request("bad_body", format!("the body cannot be read: {detail}")),
    }
}

/// A query string.
#[derive(Debug, Clone)]
pub struct ApiQuery<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        match axum::extract::Query::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Query(value)) => Ok(ApiQuery(value)),
            Err(rejection) => Err(query_refusal(&rejection)),
        }
    }
}

fn query_refusal(rejection: &QueryRejection) -> ApiError {
    ApiError::bad_request("bad_query", format!("the query string does not fit: {}", rejection.body_text()))
}
