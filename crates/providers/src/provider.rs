//! The one trait every provider implements, and the sink its stream events
//! go to.

use std::sync::Arc;

use async_trait::async_trait;

use crate::error::ProviderError;
use crate::request::ModelRequest;
use crate::response::{ModelResponse, StreamEvent};

/// A model provider: sends a request and streams the answer back.
///
/// Implementations deliver deltas to `sink` as they arrive and return the
/// assembled [`ModelResponse`] only once the provider's stream ended
/// properly. A stream that drops, or that ends without the provider's end
/// marker, is an `Err`: the caller never receives half an answer marked
/// complete.
#[async_trait]
pub trait Provider: Send + Sync {
    /// The provider type as configured: `anthropic`, `openai`, `script`, …
    /// It names the provider in errors, in `ModelRef`s and in the request log.
    fn name(&self) -> &str;

    /// Sends `request` and streams the answer into `sink`.
    async fn stream(&self, request: &ModelRequest, sink: &dyn EventSink) -> Result<ModelResponse, ProviderError>;

    /// The provider a child run (a delegated subagent) talks to, asked once
    /// per child in the order the children are started. `None`, the
    /// default, means this provider serves its children itself, as every
    /// network provider does. The scripted provider hands each child the
    /// next script of its `children` list instead, so children that run in
    /// parallel each replay their own turns deterministically. Wrappers
    /// wrap the child's provider the same way they wrap this one.
    fn child_provider(&self) -> Option<Arc<dyn Provider>> {
        None
    }

    /// The ids of the models this provider serves, as its API lists them
    /// (OpenAI-compatible `GET {baseUrl}/models`, Anthropic's
    /// `GET /v1/models`, every page). `Ok(None)`, the default, means it has
    /// no list to ask (the scripted provider); an error means asking failed.
    async fn models(&self) -> Result<Option<Vec<String>>, ProviderError> {
        Ok(None)
    }

    /// Whether a request's pictures are sent to it as image parts. `true`,
    /// the default: Anthropic, OpenAI and OpenRouter take them. A provider
    /// that says `false` (a local server without `"images": true`) is sent
    /// a short note in each picture's place.
    fn takes_images(&self) -> bool {
        true
    }
}

/// Where stream events go while a response arrives. `emit` must not block:
/// it is called from inside the stream's read loop.
pub trait EventSink: Send + Sync {
    /// Receives one event.
    fn emit(&self, event: StreamEvent);
}

/// A channel is the usual sink: the caller consumes events as they arrive.
/// A receiver that was dropped just stops listening; the stream goes on.
impl EventSink for tokio::sync::mpsc::UnboundedSender<StreamEvent> {
    fn emit(&self, event: StreamEvent) {
        // An error here only means nobody listens any more, which is allowed.
        let _ = self.send(event);
    }
}

/// A sink that drops every event, for callers that want only the final response.
#[derive(Debug, Clone, Copy, Default)]
pub struct IgnoreEvents;

impl EventSink for IgnoreEvents {
    fn emit(&self, _event: StreamEvent) {}
}
