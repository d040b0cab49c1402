//! The Anthropic provider: POSTs the body to `{base_url}/v1/messages` with
//! the key and API version headers, and reads the event stream back; lists
//! the models with `GET {base_url}/v1/models`, page by page.

use async_trait::async_trait;

use crate::anthropic::body::request_body;
use crate::anthropic::stream::EventReader;
use crate::error::ProviderError;
use crate::http::{HttpOptions, client, get_json, listed_model_ids, post_event_stream};
use crate::provider::{EventSink, Provider};
use crate::request::ModelRequest;
use crate::response::ModelResponse;

/// The `anthropic-version` header sent with every request.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Anthropic's Messages API.
#[derive(Debug, Clone)]
pub struct Anthropic {
    endpoint: String,
    models_endpoint: String,
    api_key: String,
    client: reqwest::Client,
    http: HttpOptions,
}

impl Anthropic {
    /// The API at `base_url` (`https://api.anthropic.com`), authenticated with `api_key`.
    pub fn new(base_url: &str, api_key: String, http: HttpOptions) -> Result<Self, reqwest::Error> {
        let base = base_url.trim_end_matches('/');
        let (endpoint, models_endpoint) = (format!("{base}/v1/messages"), format!("{base}/v1/models"));
        Ok(Self { endpoint, models_endpoint, api_key, client: client(http)?, http })
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

    /// Every page of `GET /v1/models` (`has_more`, then `after_id` the
    /// page's `last_id`), up to [`MAX_MODEL_PAGES`] pages.
    async fn models(&self) -> Result<Option<Vec<String>>, ProviderError> {
        let headers = [("x-api-key", self.api_key.clone()), ("anthropic-version", ANTHROPIC_VERSION.to_owned())];
        let mut ids = Vec::new();
        let mut after: Option<String> = None;
        for _ in 0..MAX_MODEL_PAGES {
            let url = match &after {
                Some(last) => format!("{}?limit=1000&after_id={last}", self.models_endpoint),
                None => format!("{}?limit=1000", self.models_endpoint),
            };
            let page = get_json(&self.client, self.name(), &url, &headers).await?;
            let Some(listed) = listed_model_ids(&page) else {
                return Err(crate::error::ProviderError::new(
                    crate::error::ErrorKind::MalformedResponse,
                    self.name(),
                    format!("{url} answered without a `data` list of models"),
                ));
            };
            ids.extend(listed);
            let more = page.get("has_more").and_then(serde_json::Value::as_bool) == Some(true);
            after = page.get("last_id").and_then(serde_json::Value::as_str).map(str::to_owned);
            if !more || after.is_none() {
                break;
            }
        }
        Ok(Some(ids))
    }
}

/// The most pages of models asked for: a list that long is a broken server.
pub const MAX_MODEL_PAGES: usize = 20;
