//! The Responses provider: POSTs the body to `{base_url}/responses` and
//! reads the event stream back.

use async_trait::async_trait;

use crate::error::ProviderError;
use crate::http::{HttpOptions, client, post_event_stream};
use crate::openai::dialect::OpenAiDialect;
use crate::openai::provider::silent_overflow;
use crate::openai::responses::body::request_body;
use crate::openai::responses::stream::EventReader;
use crate::provider::{EventSink, Provider};
use crate::request::ModelRequest;
use crate::response::ModelResponse;

/// A server speaking OpenAI's Responses API, reached through a base URL.
#[derive(Debug, Clone)]
pub struct OpenAiResponses {
    name: String,
    endpoint: String,
    models_endpoint: String,
    api_key: Option<String>,
    dialect: OpenAiDialect,
    client: reqwest::Client,
    http: HttpOptions,
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
        Ok(Self {
            name: name.into(),
            endpoint: format!("{}/responses", base_url.trim_end_matches('/')),
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
impl Provider for OpenAiResponses {
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
        let mut reader = EventReader::new(&self.name, sink);
        while let Some(event) = events.next().await? {
            reader.on_data(&event.data)?;
            if reader.is_done() {
                break;
            }
        }
        // A local server that answers an oversized prompt with an empty
        // stream does so whichever format it was asked in.
        if reader.is_empty()
            && let Some(window) = request.context_window
            && let Some(error) = silent_overflow(&self.name, &body, window)
        {
            return Err(error);
        }
        reader.finish()
    }
}
