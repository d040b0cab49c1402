//! The retry policy: retryable errors are tried again with bounded
//! exponential backoff, honouring the provider's `Retry-After` up to a cap;
//! every retry is reported to the caller as a [`StreamEvent::Retrying`].
//!
//! Waiting goes through a [`Sleeper`], so tests substitute one that records
//! the delays and returns at once: no test sleeps for real.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use crate::error::ProviderError;
use crate::provider::{EventSink, Provider};
use crate::request::ModelRequest;
use crate::response::{ModelResponse, RetryNotice, StreamEvent};

/// How often and how patiently a failed request is tried again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// The most attempts in all, the first included (1 means never retry).
    pub max_attempts: u32,
    /// The wait before the first retry; each further retry doubles it.
    pub initial_delay: Duration,
    /// No wait is longer than this, whatever the backoff or `Retry-After` say.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    /// Five attempts, waiting 1 s, 2 s, 4 s, 8 s between them (or what
    /// `Retry-After` asks, up to a minute).
    fn default() -> Self {
        Self { max_attempts: 5, initial_delay: Duration::from_secs(1), max_delay: Duration::from_secs(60) }
    }
}

impl RetryPolicy {
    /// The same number of attempts with no waiting: for the scripted
    /// provider, whose errors are replayed and gain nothing from a pause.
    pub fn without_waiting(self) -> Self {
        Self { initial_delay: Duration::ZERO, max_delay: Duration::ZERO, ..self }
    }

    /// How long to wait after failed attempt number `attempt` (from 1) with
    /// `error`: the provider's `Retry-After` when it gave one, else
    /// `initial_delay · 2^(attempt−1)`; never more than `max_delay`.
    pub fn delay_after(&self, attempt: u32, error: &ProviderError) -> Duration {
        let backoff = || {
            let factor = 2u32.checked_pow(attempt.saturating_sub(1)).unwrap_or(u32::MAX);
            self.initial_delay.checked_mul(factor).unwrap_or(self.max_delay)
        };
        error.retry_after.unwrap_or_else(backoff).min(self.max_delay)
    }
}

/// Waits between attempts. Tokio's clock in production; tests record.
#[async_trait]
pub trait Sleeper: Send + Sync {
    /// Returns after `delay`.
    async fn sleep(&self, delay: Duration);
}

/// Sleeps on tokio's clock (which `#[tokio::test(start_paused = true)]` can pause).
#[derive(Debug, Clone, Copy, Default)]
pub struct TokioSleeper;

#[async_trait]
impl Sleeper for TokioSleeper {
    async fn sleep(&self, delay: Duration) {
        tokio::time::sleep(delay).await;
    }
}

/// A provider whose retryable failures are retried under a [`RetryPolicy`].
pub struct Retrying {
    inner: Arc<dyn Provider>,
    policy: RetryPolicy,
    sleeper: Arc<dyn Sleeper>,
}

impl Retrying {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn Provider>, policy: RetryPolicy, sleeper: Arc<dyn Sleeper>) -> Self {
        Self { inner, policy, sleeper }
    }
}

#[async_trait]
impl Provider for Retrying {
    fn name(&self) -> &str {
        self.inner.name()
    }

    async fn stream(&self, request: &ModelRequest, sink: &dyn EventSink) -> Result<ModelResponse, ProviderError> {
        let max_attempts = self.policy.max_attempts.max(1);
        let mut attempt = 1;
        loop {
            match self.inner.stream(request, sink).await {
                Ok(response) => return Ok(response),
                Err(error) if error.kind.is_retryable() && attempt < max_attempts => {
                    let delay = self.policy.delay_after(attempt, &error);
                    tracing::warn!(provider = self.inner.name(), attempt, ?delay, %error, "model call failed; retrying");
                    sink.emit(StreamEvent::Retrying(RetryNotice { attempt, max_attempts, delay, error }));
                    self.sleeper.sleep(delay).await;
                    attempt += 1;
                }
                Err(error) => return Err(error),
            }
        }
    }

    /// A child's requests are retried under the same policy.
    fn child_provider(&self) -> Option<Arc<dyn Provider>> {
        let inner = self.inner.child_provider()?;
        Some(Arc::new(Retrying::new(inner, self.policy, self.sleeper.clone())))
    }

    /// Asked once: a person waits for the answer, and an unanswered list
    /// only means the name goes unchecked.
    async fn models(&self) -> Result<Option<Vec<String>>, ProviderError> {
        self.inner.models().await
    }

    fn takes_images(&self) -> bool {
        self.inner.takes_images()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn backoff_doubles_up_to_the_cap_and_honours_retry_after() {
        let policy = RetryPolicy::default();
        let server = ProviderError::new(ErrorKind::Server, "p", "boom");
        let delays: Vec<u64> = (1..=8).map(|n| policy.delay_after(n, &server).as_secs()).collect();
        assert_eq!(delays, [1, 2, 4, 8, 16, 32, 60, 60]);
        let asked = server.clone().with_retry_after(Some(Duration::from_secs(7)));
        assert_eq!(policy.delay_after(1, &asked), Duration::from_secs(7));
        let too_long = server.with_retry_after(Some(Duration::from_secs(3600)));
        assert_eq!(policy.delay_after(1, &too_long), Duration::from_secs(60));
        assert_eq!(policy.delay_after(u32::MAX, &ProviderError::new(ErrorKind::Server, "p", "")), policy.max_delay);
    }
}
