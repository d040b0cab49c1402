//! `SERI_REQUEST_LOG`: one JSON line per request sent, for every provider.
//!
//! The line is `{"provider", "model", "system", "messages", "tools"}`: the
//! exact model context in the neutral format, so two runs (or two turns of
//! one run) can be compared without knowing any provider's wire format. It
//! is written by a wrapper, [`Logged`], once for all providers, before the
//! request goes out, so a request that then fails is logged too. Each retry
//! is a request sent, so each is logged.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use serde::Serialize;

use crate::error::{ErrorKind, ProviderError};
use crate::provider::{EventSink, Provider};
use crate::request::{ModelRequest, RequestMessage, ToolSpec};

/// The environment variable the CLI reads the log's path from.
pub const REQUEST_LOG_ENV: &str = "SERI_REQUEST_LOG";

/// One line of the log.
#[derive(Serialize)]
struct Line<'a> {
    provider: &'a str,
    model: &'a str,
    system: &'a str,
    messages: &'a [RequestMessage],
    tools: &'a [ToolSpec],
}

/// An append-only file of logged requests.
#[derive(Debug, Clone)]
pub struct RequestLog {
    path: PathBuf,
}

impl RequestLog {
    /// A log at `path`, created on first write.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// Where the log is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The line logged for `request` sent through `provider`, without the newline.
    pub fn line(provider: &str, request: &ModelRequest) -> String {
        let line = Line {
            provider,
            model: &request.model,
            system: &request.system,
            messages: &request.messages,
            tools: &request.tools,
        };
        // The neutral types serialize to JSON without fail: every key is a string.
        serde_json::to_string(&line).unwrap_or_default()
    }

    /// Appends the line for `request`. The whole line goes out in one write
    /// to a file opened for appending, so lines from concurrent runs do not
    /// interleave.
    pub async fn append(&self, provider: &str, request: &ModelRequest) -> Result<(), ProviderError> {
        let mut line = Self::line(provider, request);
        line.push('\n');
        let path = self.path.clone();
        let written = tokio::task::spawn_blocking(move || {
            let mut file = std::fs::OpenOptions::new().create(true).append(true).open(&path)?;
            file.write_all(line.as_bytes())
        })
        .await;
        let failure = match written {
            Ok(Ok(())) => return Ok(()),
            Ok(Err(error)) => error.to_string(),
            Err(join) => join.to_string(),
        };
        Err(ProviderError::new(
            ErrorKind::RequestLog,
            provider,
            format!("could not append to the request log {} ({REQUEST_LOG_ENV}): {failure}", self.path.display()),
        ))
    }
}

/// A provider whose every request is appended to a [`RequestLog`] first.
pub struct Logged {
    inner: Arc<dyn Provider>,
    log: RequestLog,
}

impl Logged {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn Provider>, log: RequestLog) -> Self {
        Self { inner, log }
    }
}

#[async_trait]
impl Provider for Logged {
    fn name(&self) -> &str {
        self.inner.name()
    }

    async fn stream(
        &self,
        request: &ModelRequest,
        sink: &dyn EventSink,
    ) -> Result<crate::response::ModelResponse, ProviderError> {
        self.log.append(self.inner.name(), request).await?;
        self.inner.stream(request, sink).await
    }

    /// A child's requests go to the same log.
    fn child_provider(&self) -> Option<Arc<dyn Provider>> {
        let inner = self.inner.child_provider()?;
        Some(Arc::new(Logged::new(inner, self.log.clone())))
    }

    async fn models(&self) -> Result<Option<Vec<String>>, ProviderError> {
        self.inner.models().await
    }

    fn takes_images(&self) -> bool {
        self.inner.takes_images()
    }
}
