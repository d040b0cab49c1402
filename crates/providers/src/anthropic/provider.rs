//! The Anthropic provider: POSTs the body to `{base_url}/v1/messages` with
//! the key and API version headers, and reads the event stream back.

use async_trait::async_trait;

use crate::anthropic::body::request_body;
use crate::anthropic::stream::EventReader;
use crate::error::ProviderError;
use crate::http::{HttpOptions, client, post_event_stream};
use crate::provider::{EventSink, Provider};
use crate::request::ModelRequest;
use crate::response::ModelResponse;

/// The `anthropic-version` header sent with every request.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Anthropic's Messages API.
#[derive(Debug, Clone)]
pub struct Anthropic {
    endpoint: String,
    api_key: String,
    client: reqwest::Client,
    http: HttpOptions,
}

impl Anthropic {
    /// The API at `base_url` (`https://api.anthropic.com`), authenticated with `api_key`.
    pub fn new(base_url: &str, api_key: String, http: HttpOptions) -> Result<Self, reqwest::Error> {
        let endpoint = format!("{}/v1/messages", base_url.trim_end_matches('/'));
        Ok(Self { endpoint, api_key, client: client(http)?, http })
    }

    /// The URL requests go to.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }
}

#[async_trait]
impl Provider for Anthropic {
    fn name(&self) -> &str {
        "anthropic"
    }

    async fn stream(&self, request: &ModelRequest, sink: &dyn EventSink) -> Result<ModelResponse, ProviderError> {
        let body = request_body(request);
        let headers = [("x-api-key", self.api_key.clone()), ("anthropic-version", ANTHROPIC_VERSION.to_owned())];
        let mut events =
            post_event_stream(&self.client, self.http, self.name(), &self.endpoint, &headers, &body).await?;
        let mut reader = EventReader::new(self.name(), sink);
        while let Some(event) = events.next().await? {
            reader.on_data(&event.data)?;
            if reader.is_done() {
                break;
            }
        }
        reader.finish()
    }
}
