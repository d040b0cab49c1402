//! HTTP plumbing shared by the streaming providers: the client, the POST
//! that expects an event stream back, and reading that stream event by event.
//!
//! Everything that can go wrong on the wire becomes a classified
//! [`ProviderError`] here: a refused connection or a timeout is
//! [`ErrorKind::Network`], a non-2xx answer is classified from its status and
//! body, a cut body is [`ErrorKind::Network`], broken SSE is
//! [`ErrorKind::MalformedResponse`].

use std::collections::VecDeque;
use std::error::Error as _;
use std::pin::Pin;
use std::sync::Once;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use reqwest::header::{CONTENT_TYPE, HeaderMap};

use crate::classify::{classify, read_error_body};
use crate::error::{ErrorKind, ProviderError};
use crate::retry_after::{parse_retry_after, parse_retry_after_ms};
use crate::sse::{SseDecoder, SseEvent};

/// Timeouts of the HTTP client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpOptions {
    /// How long to wait for a connection.
    pub connect_timeout: Duration,
    /// How long a stream may stay silent before it counts as dropped.
    /// Reasoning models can think for minutes before their first byte, and
    /// not every provider sends keep-alives, so this is long.
    pub idle_timeout: Duration,
    /// How long a stream may go without a data event. Keep-alive comments
    /// reset the silence timeout above but not this one, so a server that
    /// only ever pings cannot hold a request open for ever.
    pub event_idle_timeout: Duration,
    /// The most one request may take, first byte to last.
    pub request_timeout: Duration,
    /// The largest one event may grow (all its `data:` lines together).
    pub max_event_bytes: usize,
}

/// How long a stream may go without a data event, by default.
pub const DEFAULT_EVENT_IDLE_TIMEOUT: Duration = Duration::from_secs(120);

/// The most one request may take, by default: long enough for any answer a
/// person waits for, short enough that a stuck stream ends.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30 * 60);

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(600),
            event_idle_timeout: DEFAULT_EVENT_IDLE_TIMEOUT,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            max_event_bytes: crate::sse::MAX_EVENT_BYTES,
        }
    }
}

/// Installs rustls' ring crypto provider for the process, once. reqwest is
/// built without a provider of its own (aws-lc costs a third of a clean
/// build here). If the embedding program installed one already, that one stays.
pub(crate) fn install_crypto_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // An `Err` means a provider is already installed, which is all we need.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// Builds the HTTP client the providers share.
pub(crate) fn client(options: HttpOptions) -> Result<reqwest::Client, reqwest::Error> {
    install_crypto_provider();
    reqwest::Client::builder().connect_timeout(options.connect_timeout).read_timeout(options.idle_timeout).build()
}

/// An error and its causes, on one line: reqwest's own message says little
/// ("error sending request") and the reason is in its sources.
pub(crate) fn describe(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// The wait a response's headers ask for: OpenAI's `retry-after-ms`, else `retry-after`.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    header("retry-after-ms")
        .and_then(parse_retry_after_ms)
        .or_else(|| header("retry-after").and_then(|v| parse_retry_after(v, SystemTime::now())))
}

/// POSTs `body` as JSON and returns the response's event stream, or the
/// classified error when the provider refused.
pub(crate) async fn post_event_stream(
    client: &reqwest::Client,
    options: HttpOptions,
    provider: &str,
    url: &str,
    headers: &[(&str, String)],
    body: &serde_json::Value,
) -> Result<EventStream, ProviderError> {
    let started = tokio::time::Instant::now();
    let mut builder = client.post(url).header("accept", "text/event-stream").json(body);
    for (name, value) in headers {
        builder = builder.header(*name, value);
    }
    let response = send_checked(builder, provider, url).await?;
    let status = response.status();
    let content_type = response.headers().get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    if !content_type.starts_with("text/event-stream") {
        let text = response.text().await.unwrap_or_default();
        let start: String = text.chars().take(300).collect();
        return Err(ProviderError::new(
            ErrorKind::MalformedResponse,
            provider,
            format!("expected an event stream from {url} but got `{content_type}`: {start}"),
        )
        .with_status(status.as_u16()));
    }
    Ok(EventStream {
        provider: provider.to_owned(),
        body: Box::pin(response.bytes_stream()),
        decoder: SseDecoder::with_max_event_bytes(options.max_event_bytes),
        ready: VecDeque::new(),
        received: 0,
        options,
        started,
        last_event: tokio::time::Instant::now(),
    })
}

/// Sends `builder`'s request; a refusal (any status but success) is the
/// provider's classified error, a request that never got an answer a
/// network error.
async fn send_checked(
    builder: reqwest::RequestBuilder,
    provider: &str,
    url: &str,
) -> Result<reqwest::Response, ProviderError> {
    let response = builder.send().await.map_err(|e| {
        ProviderError::new(ErrorKind::Network, provider, format!("request to {url} failed: {}", describe(&e)))
    })?;
    let status = response.status();
    if !status.is_success() {
        let wait = retry_after(response.headers());
        let text = response.text().await.unwrap_or_default();
        return Err(classify(provider, Some(status.as_u16()), &read_error_body(&text), wait));
    }
    Ok(response)
}

/// How long a model listing may take.
pub(crate) const LIST_TIMEOUT: Duration = Duration::from_secs(15);

/// GETs `url` and reads its JSON answer, or the classified error when the
/// provider refused (a wrong key is [`ErrorKind::Auth`]).
pub(crate) async fn get_json(
    client: &reqwest::Client,
    provider: &str,
    url: &str,
    headers: &[(&str, String)],
) -> Result<serde_json::Value, ProviderError> {
    let mut builder = client.get(url).timeout(LIST_TIMEOUT);
    for (name, value) in headers {
        builder = builder.header(*name, value);
    }
    let response = send_checked(builder, provider, url).await?;
    let status = response.status();
    response.json::<serde_json::Value>().await.map_err(|e| {
        ProviderError::new(
            ErrorKind::MalformedResponse,
            provider,
            format!("{url} answered with no JSON: {}", describe(&e)),
        )
        .with_status(status.as_u16())
    })
}

/// The model ids of a listing page (`{"data": [{"id": …}, …]}`, the shape
/// of OpenAI's and Anthropic's lists), or `None` when it has no such list.
pub(crate) fn listed_model_ids(page: &serde_json::Value) -> Option<Vec<String>> {
    let data = page.get("data")?.as_array()?;
    Some(data.iter().filter_map(|m| m.get("id")?.as_str().map(str::to_owned)).collect())
}

/// A response body read as server-sent events.
pub(crate) struct EventStream {
    provider: String,
    body: Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send>>,
    decoder: SseDecoder,
    ready: VecDeque<SseEvent>,
    received: usize,
    options: HttpOptions,
    started: tokio::time::Instant,
    /// When the last data event (not a keep-alive) arrived.
    last_event: tokio::time::Instant,
}

impl EventStream {
    /// The next event; `None` once the body ended. Whether the stream was
    /// complete is the provider's to judge from the events it saw.
    pub(crate) async fn next(&mut self) -> Result<Option<SseEvent>, ProviderError> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                self.last_event = tokio::time::Instant::now();
                return Ok(Some(event));
            }
            let idle_until = self.last_event + self.options.event_idle_timeout;
            let done_by = self.started + self.options.request_timeout;
            let next = match tokio::time::timeout_at(idle_until.min(done_by), self.body.next()).await {
                Ok(next) => next,
                Err(_) if done_by <= idle_until => {
                    return Err(ProviderError::new(
                        ErrorKind::Network,
                        &self.provider,
                        format!(
                            "the request took longer than its limit of {}; it was stopped after {} bytes",
                            span(self.options.request_timeout),
                            self.received
                        ),
                    ));
                }
                Err(_) => {
                    return Err(ProviderError::new(
                        ErrorKind::Network,
                        &self.provider,
                        format!(
                            "no event arrived for {} (keep-alives do not count): the stream is stalled",
                            span(self.options.event_idle_timeout)
                        ),
                    ));
                }
            };
            match next {
                None => return Ok(None),
                Some(Err(error)) => {
                    return Err(ProviderError::new(
                        ErrorKind::Network,
                        &self.provider,
                        format!("the stream was cut after {} bytes: {}", self.received, describe(&error)),
                    ));
                }
                Some(Ok(bytes)) => {
                    self.received += bytes.len();
                    let events = self.decoder.push(&bytes).map_err(|e| {
                        // An event past the cap is the server's misbehaviour
                        // now, not a reply that can never be read: try again.
                        let kind = match e {
                            crate::sse::SseError::EventTooLarge { .. } => ErrorKind::Network,
                            crate::sse::SseError::NotUtf8(_) | crate::sse::SseError::LineTooLong => {
                                ErrorKind::MalformedResponse
                            }
                        };
                        ProviderError::new(kind, &self.provider, e.to_string())
                    })?;
                    self.ready.extend(events);
                }
            }
        }
    }
}

/// A limit as people read it: `120 s`, or `250 ms` under a second.
fn span(limit: Duration) -> String {
    if limit < Duration::from_secs(1) { format!("{} ms", limit.as_millis()) } else { format!("{} s", limit.as_secs()) }
}

/// The error for a body that ended before the provider's end marker.
pub(crate) fn ended_early(provider: &str, marker: &str) -> ProviderError {
    ProviderError::new(
        ErrorKind::Network,
        provider,
        format!("the stream ended before {marker}: the connection dropped"),
    )
}

/// The error for an event whose JSON could not be read.
pub(crate) fn unreadable_event(provider: &str, data: &str, error: &serde_json::Error) -> ProviderError {
    let start: String = data.chars().take(200).collect();
    ProviderError::new(ErrorKind::MalformedResponse, provider, format!("unreadable stream event ({error}): {start}"))
}
