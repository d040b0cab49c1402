//! OpenAI-compatible chat completions, streamed: OpenAI itself, OpenRouter,
//! Ollama, vLLM and llama.cpp servers, all through a base URL.
//!
//! - [`dialect`]: what differs between those servers (the max-tokens field,
//!   how reasoning effort is asked for, `top_k`, OpenRouter's provider pin,
//!   the `content` of a tool-call-only assistant message).
//! - [`body`]: the neutral request as a `/chat/completions` body (pure).
//! - [`stream`]: the `chat.completion.chunk` events read back into a response.
//! - [`provider`]: the [`OpenAiCompatible`] provider tying them to HTTP.
//! - [`responses`]: the same servers' other wire format, OpenAI's Responses
//!   API, chosen per provider with `"api": "responses"`.

pub mod body;
pub mod dialect;
pub mod provider;
pub mod responses;
pub mod stream;

pub use dialect::{MaxTokensField, OpenAiDialect, ProviderPin, ReasoningField, ToolCallContent};
pub use provider::OpenAiCompatible;
pub use responses::OpenAiResponses;

/// The models an OpenAI-compatible server lists at `GET {base}/models`
/// (`models_endpoint`), with the key when there is one.
pub(crate) async fn list_models(
    client: &reqwest::Client,
    provider: &str,
    models_endpoint: &str,
    api_key: Option<&str>,
) -> Result<Option<Vec<String>>, crate::error::ProviderError> {
    let headers: Vec<(&str, String)> = api_key.iter().map(|key| ("authorization", format!("Bearer {key}"))).collect();
    let page = crate::http::get_json(client, provider, models_endpoint, &headers).await?;
    match crate::http::listed_model_ids(&page) {
        Some(ids) => Ok(Some(ids)),
        None => Err(crate::error::ProviderError::new(
            crate::error::ErrorKind::MalformedResponse,
            provider,
            format!("{models_endpoint} answered without a `data` list of models"),
        )),
    }
}
