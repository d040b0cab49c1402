//! The OpenAI-compatible provider: POSTs the body to
//! `{base_url}/chat/completions` and reads the event stream back.
//!
//! An empty `200` stream (not one event, no `[DONE]`) after a request
//! larger than the window the caller knows is a context overflow, not a cut
//! connection: llama-cpp-python's server fails an oversized prompt after it
//! has sent its headers, and says nothing more. Retrying it would fail the
//! same way four times.

use async_trait::async_trait;

use crate::error::{ErrorKind, ProviderError};
use crate::http::{HttpOptions, client, post_event_stream};
use crate::openai::body::request_body;
use crate::openai::dialect::OpenAiDialect;
use crate::openai::stream::ChunkReader;
use crate::provider::{EventSink, Provider};
use crate::request::ModelRequest;
use crate::response::ModelResponse;

/// A chat-completions server reached through a base URL.
#[derive(Debug, Clone)]
pub struct OpenAiCompatible {
    name: String,
    endpoint: String,
    models_endpoint: String,
    api_key: Option<String>,
    dialect: OpenAiDialect,
    client: reqwest::Client,
    http: HttpOptions,
}

impl OpenAiCompatible {
    /// A provider named `name` (`openai`, `openrouter`, `ollama`, …) at
    /// `base_url` (for example `https://api.openai.com/v1`), sending
    /// `Authorization: Bearer {api_key}` when a key is given.
    pub fn new(
        name: impl Into<String>,
        base_url: &str,
        api_key: Option<String>,
        dialect: OpenAiDialect,
        http: HttpOptions,
    ) -> Result<Self, reqwest::Error> {
        Ok(Self {
            name: name.into(),
            endpoint: format!("{}/chat/completions", base_url.trim_end_matches('/')),
            models_endpoint: format!("{}/models", base_url.trim_end_matches('/')),
            api_key,
            dialect,
            client: client(http)?,
            http,
        })
    }

    /// The URL requests go to.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }
}

#[async_trait]
impl Provider for OpenAiCompatible {
    fn name(&self) -> &str {
        &self.name
    }

    async fn models(&self) -> Result<Option<Vec<String>>, ProviderError> {
        crate::openai::list_models(&self.client, &self.name, &self.models_endpoint, self.api_key.as_deref()).await
    }

    async fn stream(&self, request: &ModelRequest, sink: &dyn EventSink) -> Result<ModelResponse, ProviderError> {
        let body = request_body(request, &self.dialect);
        let headers: Vec<(&str, String)> =
            self.api_key.iter().map(|key| ("authorization", format!("Bearer {key}"))).collect();
        let mut events =
            post_event_stream(&self.client, self.http, &self.name, &self.endpoint, &headers, &body).await?;
        let mut reader = ChunkReader::new(&self.name, sink);
        while let Some(event) = events.next().await? {
            reader.on_data(&event.data)?;
            if reader.is_done() {
                break;
            }
        }
        if reader.is_empty()
            && let Some(window) = request.context_window
            && let Some(error) = silent_overflow(&self.name, &body, window)
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
pub(crate) fn silent_overflow(provider: &str, body: &serde_json::Value, window: u64) -> Option<ProviderError> {
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
