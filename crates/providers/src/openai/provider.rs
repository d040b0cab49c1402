//! The OpenAI-compatible provider: POSTs the body to
//! `{base_url}/chat/completions` and reads the event stream back (through
//! the transport both OpenAI wire formats share).

use async_trait::async_trait;

use crate::error::ProviderError;
use crate::http::HttpOptions;
use crate::openai::body::request_body;
use crate::openai::dialect::OpenAiDialect;
use crate::openai::stream::ChunkReader;
use crate::openai::transport::Transport;
use crate::provider::{EventSink, Provider};
use crate::request::ModelRequest;
use crate::response::ModelResponse;

/// A chat-completions server reached through a base URL.
#[derive(Debug, Clone)]
pub struct OpenAiCompatible {
    transport: Transport,
    dialect: OpenAiDialect,
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
        Ok(Self { transport: Transport::new(name.into(), base_url, "chat/completions", api_key, http)?, dialect })
    }

    /// The URL requests go to.
    pub fn endpoint(&self) -> &str {
        self.transport.endpoint()
    }
}

#[async_trait]
impl Provider for OpenAiCompatible {
    fn name(&self) -> &str {
        self.transport.name()
    }

    async fn models(&self) -> Result<Option<Vec<String>>, ProviderError> {
        self.transport.models().await
    }

    async fn stream(&self, request: &ModelRequest, sink: &dyn EventSink) -> Result<ModelResponse, ProviderError> {
        let body = request_body(request, &self.dialect);
        let reader = ChunkReader::new(self.transport.name(), sink);
        self.transport.stream(&body, request.context_window, reader).await
    }
}
