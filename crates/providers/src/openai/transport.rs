//! What both OpenAI wire formats share: a base URL, an optional bearer
//! key, the HTTP client, `GET {base}/models`, and a streamed POST read by
//! a format's own reader until it says the response is done.
//!
//! An empty `200` stream (not one event, no `[DONE]`) after a request
//! larger than the window the caller knows is a context overflow, not a cut
//! connection: llama-cpp-python's server fails an oversized prompt after it
//! has sent its headers, and says nothing more, whichever format it was
//! asked in. Retrying it would fail the same way four times.

use crate::error::{ErrorKind, ProviderError};
use crate::http::{HttpOptions, client, post_event_stream};
use crate::response::ModelResponse;

/// A wire format's sans-IO reader of stream events (chat completions'
/// chunks, or the Responses API's typed events).
pub(crate) trait StreamReader {
    /// Reads one event's data.
    fn on_data(&mut self, data: &str) -> Result<(), ProviderError>;
    /// Whether the response ended: nothing after it is read.
    fn is_done(&self) -> bool;
    /// Whether no event at all was read.
    fn is_empty(&self) -> bool;
    /// The response read.
    fn finish(self) -> Result<ModelResponse, ProviderError>;
}

/// One OpenAI-compatible server's endpoint for one wire format.
#[derive(Debug, Clone)]
pub(crate) struct Transport {
    name: String,
    endpoint: String,
    models_endpoint: String,
    api_key: Option<String>,
    client: reqwest::Client,
    http: HttpOptions,
}

impl Transport {
    /// The provider `name` at `base_url`, posting to `{base_url}/{path}`.
    pub(crate) fn new(
        name: String,
        base_url: &str,
        path: &str,
        api_key: Option<String>,
        http: HttpOptions,
    ) -> Result<Self, reqwest::Error> {
        let base = base_url.trim_end_matches('/');
        Ok(Self {
            name,
            endpoint: format!("{base}/{path}"),
            models_endpoint: format!("{base}/models"),
            api_key,
            client: client(http)?,
            http,
        })
    }

    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn endpoint(&self) -> &str {
        &self.endpoint
    }

    fn headers(&self) -> Vec<(&'static str, String)> {
        self.api_key.iter().map(|key| ("authorization", format!("Bearer {key}"))).collect()
    }

    /// The models the server lists at `GET {base}/models`.
    pub(crate) async fn models(&self) -> Result<Option<Vec<String>>, ProviderError> {
        let page = crate::http::get_json(&self.client, &self.name, &self.models_endpoint, &self.headers()).await?;
        match crate::http::listed_model_ids(&page) {
            Some(ids) => Ok(Some(ids)),
            None => Err(ProviderError::new(
                ErrorKind::MalformedResponse,
                &self.name,
                format!("{} answered without a `data` list of models", self.models_endpoint),
            )),
        }
    }

    /// POSTs `body` and feeds the stream's events to `reader` until it is
    /// done or the stream ends; `window`, the context window the caller
    /// knows, turns an empty stream after a request too large for it into
    /// an overflow.
    pub(crate) async fn stream(
        &self,
        body: &serde_json::Value,
        window: Option<u64>,
        mut reader: impl StreamReader,
    ) -> Result<ModelResponse, ProviderError> {
        let headers = self.headers();
        let mut events = post_event_stream(&self.client, self.http, &self.name, &self.endpoint, &headers, body).await?;
        while let Some(event) = events.next().await? {
            reader.on_data(&event.data)?;
            if reader.is_done() {
                break;
            }
        }
        if reader.is_empty()
            && let Some(window) = window
            && let Some(error) = silent_overflow(&self.name, body, window)
        {
            return Err(error);
        }
        reader.finish()
    }
}

/// The overflow an empty stream means when the request did not fit `window`.
///
/// The request's size is its body's characters over three: higher than the
/// usual four, because being wrong here costs one compaction while missing
/// an overflow leaves the message unanswered; tool schemas and JSON
/// punctuation in the body make up for the rest.
fn silent_overflow(provider: &str, body: &serde_json::Value, window: u64) -> Option<ProviderError> {
    let chars = u64::try_from(body.to_string().chars().count()).unwrap_or(u64::MAX);
    let estimate = chars.div_ceil(3);
    (estimate > window).then(|| {
        ProviderError::new(
            ErrorKind::ContextOverflow,
            provider,
            format!(
                "the server answered with an empty stream to a request of about {estimate} tokens \
                 ({chars} characters), more than its {window}-token context window"
            ),
        )
    })
}
