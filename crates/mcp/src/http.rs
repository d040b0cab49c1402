//! Streamable HTTP, with what the SDK's types drop read from the wire.
//!
//! rmcp decodes an HTTP server's answers inside its HTTP client, before
//! seri sees them, and its `Tool` has no `execution` field. [`Noting`] is
//! the client rmcp's transport runs on: every message goes through reqwest
//! exactly as rmcp sends it, except a `tools/list` request, which this
//! client posts itself (the same URL, session, headers and `Accept`) so that
//! the answer's raw JSON, a JSON body or the data of each server-sent event,
//! is read for each tool's `execution.taskSupport` ([`Declared`]) before
//! rmcp decodes it. The answer reaches rmcp unchanged.

use std::collections::HashMap;
use std::sync::Arc;

use futures_util::StreamExt as _;
use futures_util::stream::BoxStream;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ServerJsonRpcMessage};
use rmcp::transport::common::http_header::{EVENT_STREAM_MIME_TYPE, HEADER_SESSION_ID, JSON_MIME_TYPE};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use sse_stream::{Sse, SseStream};

use crate::raw::Declared;

type Error = StreamableHttpError<reqwest::Error>;

/// rmcp's reqwest client, noting what `tools/list` answers declare.
#[derive(Debug, Clone)]
pub(crate) struct Noting {
    inner: reqwest::Client,
    declared: Declared,
}

impl Noting {
    pub(crate) fn new(inner: reqwest::Client, declared: Declared) -> Self {
        Self { inner, declared }
    }

    /// Posts a `tools/list` request and reads its answer on the way.
    async fn list_tools(
        &self,
        uri: &str,
        message: &ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let mut request =
            self.inner.post(uri).header(ACCEPT, [EVENT_STREAM_MIME_TYPE, JSON_MIME_TYPE].join(", ")).json(message);
        if let Some(token) = auth_header {
            request = request.bearer_auth(token);
        }
        for (name, value) in custom_headers {
            request = request.header(name, value);
        }
        let with_session = session_id.is_some();
        if let Some(id) = session_id {
            request = request.header(HEADER_SESSION_ID, id.as_ref());
        }
        let response = request.send().await.map_err(StreamableHttpError::Client)?;
        let status = response.status();
        let new_session = response.headers().get(HEADER_SESSION_ID).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let content_type = response.headers().get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).map(str::to_owned);
        if status == reqwest::StatusCode::NOT_FOUND && with_session {
            return Err(StreamableHttpError::SessionExpired);
        }
        let is = |mime: &str| content_type.as_deref().is_some_and(|ct| media_type(ct).eq_ignore_ascii_case(mime));
        if status.is_success() && is(EVENT_STREAM_MIME_TYPE) {
            // Bounded as a whole by one event's limit: the stream that
            // answers a tool list carries little else.
            let limit = limits.max_sse_event_size;
            let mut seen = 0usize;
            let bytes = response.bytes_stream().map(move |chunk| {
                let chunk = chunk.map_err(std::io::Error::other)?;
                seen = seen.saturating_add(chunk.len());
                if seen > limit {
                    return Err(std::io::Error::other(format!("the tool list's event stream passed {limit} bytes")));
                }
                Ok(chunk)
            });
            let declared = self.declared.clone();
            let events: BoxStream<'static, Result<Sse, SseError>> = SseStream::from_bytes_stream(bytes)
                .inspect(move |event| {
                    if let Ok(Sse { data: Some(data), .. }) = event {
                        declared.note(data.as_bytes());
                    }
                })
                .boxed();
            return Ok(StreamableHttpPostResponse::Sse(events, new_session));
        }
        if !is(JSON_MIME_TYPE) {
            return Err(if status.is_success() {
                StreamableHttpError::UnexpectedContentType(content_type)
            } else {
                StreamableHttpError::UnexpectedServerResponse(format!("HTTP {status}").into())
            });
        }
        let body = read_bounded(response, limits.max_json_response_size).await?;
        if status.is_success() {
            self.declared.note(&body);
        }
        match serde_json::from_slice::<ServerJsonRpcMessage>(&body) {
            // A JSON-RPC error (with any status) is the request's answer.
            Ok(message) if status.is_success() || matches!(message, ServerJsonRpcMessage::Error(_)) => {
                Ok(StreamableHttpPostResponse::Json(message, new_session))
            }
            Ok(_) => Err(StreamableHttpError::UnexpectedServerResponse(format!("HTTP {status}").into())),
            Err(error) if status.is_success() => Err(StreamableHttpError::Deserialize(error)),
            Err(_) => Err(StreamableHttpError::UnexpectedServerResponse(format!("HTTP {status}").into())),
        }
    }
}

/// A content type's media type: `application/json` of
/// `application/json; charset=utf-8`.
fn media_type(content_type: &str) -> &str {
    content_type.split(';').next().unwrap_or_default().trim()
}

/// A response's body, refused past `limit` bytes.
async fn read_bounded(response: reqwest::Response, limit: usize) -> Result<Vec<u8>, Error> {
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(StreamableHttpError::Client)?;
        if body.len() + chunk.len() > limit {
            return Err(StreamableHttpError::ResponseBodyTooLarge { max_size: limit });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// Whether `message` asks for the server's tools.
fn lists_tools(message: &ClientJsonRpcMessage) -> bool {
    matches!(message, ClientJsonRpcMessage::Request(request) if matches!(request.request, ClientRequest::ListToolsRequest(_)))
}

impl StreamableHttpClient for Noting {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Error> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_sse_event_size = max_sse_event_size;
        self.post_message_with_response_limits(uri, message, session_id, auth_header, custom_headers, limits).await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Error> {
        if lists_tools(&message) {
            return self.list_tools(&uri, &message, session_id, auth_header, custom_headers, limits).await;
        }
        self.inner
            .post_message_with_response_limits(uri, message, session_id, auth_header, custom_headers, limits)
            .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Error> {
        self.inner.delete_session(uri, session_id, auth_header, custom_headers).await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Error> {
        self.inner.get_stream(uri, session_id, last_event_id, auth_header, custom_headers).await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Error> {
        self.inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }
}

/// The streamable HTTP transport to `url`, sending `headers` on every
/// request and noting into `declared` what its tool lists declare.
pub(crate) fn transport(
    url: &str,
    headers: &std::collections::BTreeMap<String, String>,
    declared: Declared,
) -> Result<rmcp::transport::StreamableHttpClientTransport<Noting>, String> {
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    install_crypto_provider();
    let mut custom = HashMap::new();
    for (name, value) in headers {
        let header = HeaderName::from_bytes(name.as_bytes()).map_err(|e| format!("header `{name}`: {e}"))?;
        let value = HeaderValue::from_str(value).map_err(|e| format!("header `{name}`: {e}"))?;
        custom.insert(header, value);
    }
    let client = reqwest::Client::builder().build().map_err(|e| format!("cannot build an HTTP client: {e}"))?;
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned()).custom_headers(custom);
    Ok(rmcp::transport::StreamableHttpClientTransport::with_client(Noting::new(client, declared), config))
}

/// rustls' ring provider for the process, once (reqwest is built without one).
fn install_crypto_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_media_type_is_read_without_its_parameters() {
        assert_eq!(media_type("application/json; charset=utf-8"), "application/json");
        assert_eq!(media_type(" text/event-stream "), "text/event-stream");
    }
}
