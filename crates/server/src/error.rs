//! [`ApiError`]: every way a request can fail, as one `IntoResponse` type
//! with a status and the `{"error": {"code", "message"}}` body.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use seri_store::StoreError;

use crate::protocol::{ErrorDetail, ErrorResponse};

/// A failed request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{status}: {code}: {message}")]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// For programs: `not_found`, `bad_json`, …
    pub code: &'static str,
    /// For people: what was wrong.
    pub message: String,
    /// The queued job the failure concerns, if any.
    pub job_id: Option<String>,
}

impl ApiError {
    /// Any status, code and message.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self { status, code, message: message.into(), job_id: None }
    }

    /// 400.
    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }

    /// 401: no token, or not one of ours.
    pub fn unauthorized() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "a valid token is needed: send `Authorization: Bearer TOKEN` (seri token create makes one)",
        )
    }

    /// 404, the same for a missing thing and another agent's.
    pub fn not_found(what: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", what)
    }

    /// The same error, naming the queued job it concerns.
    #[must_use]
    pub fn with_job(self, job_id: impl Into<String>) -> Self {
        Self { job_id: Some(job_id.into()), ..self }
    }

    /// 500.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        use seri_store::StoreErrorKind as K;
        match e.kind() {
            K::NotFound => ApiError::not_found(e.to_string()),
            K::Invalid => ApiError::bad_request("bad_request", e.to_string()),
            K::Busy => ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "busy", e.to_string()),
            K::Unavailable => ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "store_unavailable", e.to_string()),
            K::Full => ApiError::new(StatusCode::INSUFFICIENT_STORAGE, "disk_full", e.to_string()),
            K::Conflict => ApiError::new(StatusCode::CONFLICT, "conflict", e.to_string()),
            K::Corrupt | K::NewerSchema | K::Unusable | K::Failed => {
                tracing::error!(error = %e, "store error");
                ApiError::internal(e.to_string())
            }
        }
    }
}

impl From<seri_runloop::RunError> for ApiError {
    fn from(e: seri_runloop::RunError) -> Self {
        match e {
            seri_runloop::RunError::Store(store) => store.into(),
            seri_runloop::RunError::Busy { .. } => ApiError::new(StatusCode::CONFLICT, "busy", e.to_string()),
            other => ApiError::internal(other.to_string()),
        }
    }
}

impl From<seri_runloop::CommandError> for ApiError {
    fn from(e: seri_runloop::CommandError) -> Self {
        match e {
            seri_runloop::CommandError::Run(run) => run.into(),
            other => ApiError::bad_request("refused", other.to_string()),
        }
    }
}

impl From<seri_runloop::jobs::JobError> for ApiError {
    fn from(e: seri_runloop::jobs::JobError) -> Self {
        use seri_runloop::jobs::JobError;
        match e {
            JobError::Store(store) => store.into(),
            JobError::Command(command) => command.into(),
            other => ApiError::internal(other.to_string()),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorResponse {
            error: ErrorDetail { code: self.code.to_owned(), message: self.message, job_id: self.job_id },
        };
        (self.status, axum::Json(body)).into_response()
    }
}
