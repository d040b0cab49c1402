//! The Responses provider: POSTs the body to `{base_url}/responses` and
//! reads the event stream back (through the transport both OpenAI wire
//! formats share).

use async_trait::async_trait;

use crate::error::ProviderError;
use crate::http::HttpOptions;
use crate::openai::dialect::OpenAiDialect;
use crate::openai::responses::body::request_body;
use crate::openai::responses::stream::EventReader;
use crate::openai::transport::Transport;
use crate::provider::{EventSink, Provider};
use crate::request::ModelRequest;
use crate::response::ModelResponse;

/// A server speaking OpenAI's Responses API, reached through a base URL.
#[derive(Debug, Clone)]
pub struct OpenAiResponses {
    transport: Transport,
    dialect: OpenAiDialect,
}

impl OpenAiResponses {
    /// A provider named `name` (`openai`, `openrouter`, …) at `base_url`
    /// (for example `https://api.openai.com/v1`), sending
    /// `Authorization: Bearer {api_key}` when a key is given. Of the
    /// dialect only OpenRouter's provider pin applies: the Responses API
    /// spells everything else one way.
    pub fn new(
        name: impl Into<String>,
        base_url: &str,
        api_key: Option<String>,
        dialect: OpenAiDialect,
        http: HttpOptions,
    ) -> Result<Self, reqwest::Error> {
        Ok(Self { transport: Transport::new(name.into(), base_url, "responses", api_key, http)?, dialect })
    }

    /// The URL requests go to.
    pub fn endpoint(&self) -> &str {
        self.transport.endpoint()
    }
}

#[async_trait]
impl Provider for OpenAiResponses {
    fn name(&self) -> &str {
        self.transport.name()
    }

    async fn models(&self) -> Result<Option<Vec<String>>, ProviderError> {
        self.transport.models().await
    }

    async fn stream(&self, request: &ModelRequest, sink: &dyn EventSink) -> Result<ModelResponse, ProviderError> {
        let body = request_body(request, &self.dialect);
        let reader = EventReader::new(self.transport.name(), sink);
        self.transport.stream(&body, request.context_window, reader).await
    }
}
