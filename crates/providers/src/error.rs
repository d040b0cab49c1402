//! Provider errors, classified by what the caller should do about them.
//!
//! Every failure of a model call becomes one [`ProviderError`] with an
//! [`ErrorKind`]: the run loop compacts on [`ErrorKind::ContextOverflow`],
//! the retry policy retries the kinds [`ErrorKind::is_retryable`] names, and
//! everything else fails the turn with the provider's own message.

use std::fmt;
use std::time::Duration;

use serde::Serialize;

/// What kind of failure a model call met.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The prompt does not fit the model's context window. Not retried:
    /// the same request would fail again; the caller must shrink it.
    ContextOverflow,
    /// Too many requests (HTTP 429). Retried, after `Retry-After` when given.
    RateLimited,
    /// The provider failed or is overloaded (HTTP 5xx, Anthropic's 529). Retried.
    Server,
    /// No connection, a timeout, or a stream that was cut or ended early. Retried.
    Network,
    /// The key is missing, wrong or not allowed (HTTP 401/403). Not retried.
    Auth,
    /// The provider answered something seri cannot read: broken SSE, an
    /// unexpected JSON shape, or tool-call arguments that are not a JSON
    /// object. Retried: a garbled answer is usually gone on the next attempt
    /// (a model that wrote broken JSON samples again), and attempts are bounded.
    MalformedResponse,
    /// The provider refused the request for another reason (HTTP 400, 404,
    /// an exhausted quota): a configuration or request problem. Not retried.
    Rejected,
    /// The scripted provider has no turn left. Not retried.
    ScriptExhausted,
    /// `SERI_REQUEST_LOG` is set but the log could not be written. Not retried.
    RequestLog,
}

impl ErrorKind {
    /// Whether the retry policy tries the request again.
    pub fn is_retryable(self) -> bool {
        match self {
            ErrorKind::RateLimited | ErrorKind::Server | ErrorKind::Network | ErrorKind::MalformedResponse => true,
            ErrorKind::ContextOverflow
            | ErrorKind::Auth
            | ErrorKind::Rejected
            | ErrorKind::ScriptExhausted
            | ErrorKind::RequestLog => false,
        }
    }

    /// A short name for messages and trajectories.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::ContextOverflow => "context overflow",
            ErrorKind::RateLimited => "rate limited",
            ErrorKind::Server => "server error",
            ErrorKind::Network => "network error",
            ErrorKind::Auth => "authentication failed",
            ErrorKind::MalformedResponse => "malformed response",
            ErrorKind::Rejected => "request rejected",
            ErrorKind::ScriptExhausted => "script exhausted",
            ErrorKind::RequestLog => "request log not written",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failed model call: its kind, the provider, and the provider's own words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ProviderError {
    /// What kind of failure it was.
    pub kind: ErrorKind,
    /// The provider type that failed (`anthropic`, `openai`, `script`, …).
    pub provider: String,
    /// What went wrong, in the provider's words where it gave any.
    pub message: String,
    /// The HTTP status, when there was a response.
    pub status: Option<u16>,
    /// How long the provider asked us to wait (`Retry-After`), when it did.
    pub retry_after: Option<Duration>,
}

impl ProviderError {
    /// An error with no HTTP status and no `Retry-After`.
    pub fn new(kind: ErrorKind, provider: impl Into<String>, message: impl Into<String>) -> Self {
        Self { kind, provider: provider.into(), message: message.into(), status: None, retry_after: None }
    }

    /// The same error, with the HTTP status that carried it.
    pub fn with_status(mut self, status: u16) -> Self {
        self.status = Some(status);
        self
    }

    /// The same error, with the wait the provider asked for.
    pub fn with_retry_after(mut self, retry_after: Option<Duration>) -> Self {
        self.retry_after = retry_after;
        self
    }
}

impl fmt::Display for ProviderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.provider, self.kind)?;
        if let Some(status) = self.status {
            write!(f, " (HTTP {status})")?;
        }
        write!(f, ": {}", self.message)?;
        if let Some(wait) = self.retry_after {
            write!(f, " (retry after {:.3}s)", wait.as_secs_f64())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_provider_kind_status_and_wait() {
        let err = ProviderError::new(ErrorKind::RateLimited, "openai", "slow down")
            .with_status(429)
            .with_retry_after(Some(Duration::from_secs(7)));
        assert_eq!(err.to_string(), "openai: rate limited (HTTP 429): slow down (retry after 7.000s)");
        let err = ProviderError::new(ErrorKind::ScriptExhausted, "script", "no turn left");
        assert_eq!(err.to_string(), "script: script exhausted: no turn left");
    }
}
