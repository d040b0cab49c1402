//! The retry policy: retryable kinds are retried (and reported) until they
//! succeed, non-retryable kinds fail at once, attempts are bounded, and
//! waits follow the backoff or `Retry-After`, capped.

use std::sync::Arc;
use std::time::Duration;

use seri_providers::openai::{OpenAiCompatible, OpenAiDialect};
use seri_providers::retry::Retrying;
use seri_providers::{ErrorKind, HttpOptions, Provider, RetryNotice, StreamEvent};

use crate::server::{self, TestServer};
use crate::support::{RecordingSleeper, channel, drain, fixture, hello_request, recording_sleeper, test_policy};

const OVERLOADED: &str =
    r#"{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}"#;

fn retrying(base: &str) -> (Retrying, Arc<RecordingSleeper>) {
    let inner =
        OpenAiCompatible::new("openai", base, Some("k".into()), OpenAiDialect::openai(), HttpOptions::default())
            .unwrap();
    let (recorded, sleeper) = recording_sleeper();
    (Retrying::new(Arc::new(inner), test_policy(), sleeper), recorded)
}

fn notices(events: &[StreamEvent]) -> Vec<(u32, ErrorKind, Duration)> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Retrying(RetryNotice { attempt, error, delay, .. }) => Some((*attempt, error.kind, *delay)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn retryable_kinds_are_retried_then_succeed_and_each_retry_is_reported() {
    let server = TestServer::start(vec![
        server::status(429, "Too Many Requests", &[("retry-after", "3")], "{}"),
        server::status(500, "Internal Server Error", &[], OVERLOADED),
        server::sse(&fixture("openai_text.sse")),
    ])
    .await;
    let (provider, sleeper) = retrying(&server.base);
    let (sink, mut events) = channel();
    let response = provider.stream(&hello_request("gpt-4.1"), &sink).await.unwrap();
    assert_eq!(response.text, "Hello wörld!");
    assert_eq!(
        notices(&drain(&mut events)),
        [(1, ErrorKind::RateLimited, Duration::from_secs(3)), (2, ErrorKind::Server, Duration::from_secs(2))]
    );
    assert_eq!(sleeper.delays(), [Duration::from_secs(3), Duration::from_secs(2)]);
    assert_eq!(server.request_count(), 3);
}

#[tokio::test]
async fn auth_and_overflow_fail_at_once() {
    let overflow = r#"{"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}"#;
    for (reply, kind) in [
        (server::status(401, "Unauthorized", &[], "{}"), ErrorKind::Auth),
        (server::status(403, "Forbidden", &[], "{}"), ErrorKind::Auth),
        (server::status(400, "Bad Request", &[], overflow), ErrorKind::ContextOverflow),
    ] {
        let server = TestServer::start(vec![reply, server::sse(&fixture("openai_text.sse"))]).await;
        let (provider, sleeper) = retrying(&server.base);
        let (sink, mut events) = channel();
        let error = provider.stream(&hello_request("gpt-4.1"), &sink).await.unwrap_err();
        assert_eq!(error.kind, kind);
        assert_eq!(server.request_count(), 1, "{kind} must not be retried");
        assert!(notices(&drain(&mut events)).is_empty());
        assert!(sleeper.delays().is_empty());
    }
}

#[tokio::test]
async fn attempts_are_bounded() {
    let server = TestServer::start(vec![
        server::status(500, "Internal Server Error", &[], OVERLOADED),
        server::status(502, "Bad Gateway", &[], "bad gateway"),
        server::status(503, "Service Unavailable", &[], ""),
        server::sse(&fixture("openai_text.sse")),
    ])
    .await;
    let (provider, sleeper) = retrying(&server.base);
    let error = provider.stream(&hello_request("gpt-4.1"), &seri_providers::IgnoreEvents).await.unwrap_err();
    assert_eq!((error.kind, error.status), (ErrorKind::Server, Some(503)));
    assert_eq!(server.request_count(), 3, "three attempts, then the last error");
    assert_eq!(sleeper.delays(), [Duration::from_secs(1), Duration::from_secs(2)]);
}

#[tokio::test]
async fn a_retry_after_date_is_honoured_up_to_the_cap() {
    let server = TestServer::start(vec![
        server::status(429, "Too Many Requests", &[("retry-after", "Fri, 01 Jan 2100 00:00:00 GMT")], "{}"),
        server::status(429, "Too Many Requests", &[("retry-after", "Thu, 01 Jan 1970 00:00:00 GMT")], "{}"),
        server::sse(&fixture("openai_text.sse")),
    ])
    .await;
    let (provider, sleeper) = retrying(&server.base);
    provider.stream(&hello_request("gpt-4.1"), &seri_providers::IgnoreEvents).await.unwrap();
    assert_eq!(sleeper.delays(), [test_policy().max_delay, Duration::ZERO]);
}

#[tokio::test]
async fn an_unreachable_server_is_a_retried_network_error() {
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let (provider, sleeper) = retrying(&base);
    let error = provider.stream(&hello_request("gpt-4.1"), &seri_providers::IgnoreEvents).await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::Network);
    assert!(error.message.starts_with(&format!("request to {base}/chat/completions failed")), "{error}");
    assert_eq!(sleeper.delays().len(), 2);
}
