//! The scripted provider: each request consumes the next turn of a
//! [`Script`], whatever the request says.
//!
//! Replies stream their thinking and text in a few deltas (or in the
//! script's `chunks`, `delay_ms` apart), so consumers of the event stream
//! are exercised exactly as with a real provider. Error
//! turns fail the request with the scripted kind (and so go through the same
//! retry policy as real errors; a retry consumes the next turn). When the
//! turns run out, every further request fails with
//! [`ErrorKind::ScriptExhausted`] naming the file.
//!
//! A script with a `children` list gives each child run its own provider
//! over the next child script ([`Provider::child_provider`]); a child
//! started after the list ran out gets a provider whose every request fails
//! with `ScriptExhausted`, naming the file and how many child scripts it has.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;

use crate::error::{ErrorKind, ProviderError};
use crate::provider::{EventSink, Provider};
use crate::request::ModelRequest;
use crate::response::{ModelResponse, StopReason, StreamEvent};
use crate::script::file::{Script, ScriptTurn};

/// How many deltas a scripted text is streamed in (fewer for short texts).
const DELTAS_PER_TEXT: usize = 3;

/// A provider that replays a script.
#[derive(Debug)]
pub struct ScriptedProvider {
    script: Script,
    next: AtomicUsize,
    next_child: AtomicUsize,
}

impl ScriptedProvider {
    /// Replays `script` from its first turn.
    pub fn new(script: Script) -> Self {
        Self { script, next: AtomicUsize::new(0), next_child: AtomicUsize::new(0) }
    }

    /// How many requests have been answered (or failed) so far.
    pub fn turns_used(&self) -> usize {
        self.next.load(Ordering::SeqCst).min(self.script.turns().len())
    }
}

#[async_trait]
impl Provider for ScriptedProvider {
    fn name(&self) -> &str {
        "script"
    }

    async fn stream(&self, _request: &ModelRequest, sink: &dyn EventSink) -> Result<ModelResponse, ProviderError> {
        let index = self.next.fetch_add(1, Ordering::SeqCst);
        let path = self.script.name();
        let total = self.script.turns().len();
        let Some(turn) = self.script.turns().get(index) else {
            return Err(ProviderError::new(
                ErrorKind::ScriptExhausted,
                self.name(),
                format!("script {path} has no turn left for request {}: all {total} turns were used", index + 1),
            ));
        };
        let reply = match turn {
            ScriptTurn::Error { kind, message } => {
                let message = message
                    .clone()
                    .unwrap_or_else(|| format!("scripted {} (turn {} of {path})", kind.error_kind(), index + 1));
                return Err(ProviderError::new(kind.error_kind(), self.name(), message));
            }
            ScriptTurn::Reply(reply) => reply,
        };
        let delay = std::time::Duration::from_millis(reply.delay_ms);
        let pause = || async move {
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
        };
        if let Some(thinking) = &reply.thinking {
            for piece in pieces(thinking, DELTAS_PER_TEXT) {
                pause().await;
                sink.emit(StreamEvent::ThinkingDelta(piece.to_owned()));
                tokio::task::yield_now().await;
            }
        }
        let text: Vec<&str> = if reply.chunks.is_empty() {
            pieces(&reply.text, DELTAS_PER_TEXT)
        } else {
            reply.chunks.iter().map(String::as_str).filter(|c| !c.is_empty()).collect()
        };
        for piece in text {
            pause().await;
            sink.emit(StreamEvent::TextDelta(piece.to_owned()));
            tokio::task::yield_now().await;
        }
        if reply.hang {
            std::future::pending::<()>().await;
        }
        if !reply.tool_calls.is_empty() {
            pause().await;
        }
        for call in &reply.tool_calls {
            sink.emit(StreamEvent::ToolCallStarted { id: call.id.to_string(), name: call.name.clone() });
            sink.emit(StreamEvent::ToolCallReady(call.clone()));
        }
        Ok(ModelResponse {
            thinking: reply
                .thinking
                .iter()
                .map(|text| seri_core::Thinking { text: text.clone(), signature: None, encrypted_content: None })
                .collect(),
            text: reply.text.clone(),
            tool_calls: reply.tool_calls.clone(),
            usage: reply.usage,
            stop_reason: if reply.tool_calls.is_empty() { StopReason::EndTurn } else { StopReason::ToolUse },
        })
    }

    fn child_provider(&self) -> Option<Arc<dyn Provider>> {
        let children = self.script.children()?;
        let index = self.next_child.fetch_add(1, Ordering::SeqCst);
        Some(match children.get(index) {
            Some(child) => Arc::new(ScriptedProvider::new(child.clone())),
            None => Arc::new(NoChildScript {
                message: format!(
                    "script {} has no script for child run {}: its `children` list has {}",
                    self.script.name(),
                    index + 1,
                    children.len()
                ),
            }),
        })
    }
}

/// What a child gets when the script's `children` list has run out: every
/// request fails, saying so.
#[derive(Debug)]
struct NoChildScript {
    message: String,
}

#[async_trait]
impl Provider for NoChildScript {
    fn name(&self) -> &str {
        "script"
    }

    async fn stream(&self, _request: &ModelRequest, _sink: &dyn EventSink) -> Result<ModelResponse, ProviderError> {
        Err(ProviderError::new(ErrorKind::ScriptExhausted, self.name(), self.message.clone()))
    }
}

/// Splits `text` into at most `n` non-empty pieces of about equal length,
/// cut on character boundaries.
fn pieces(text: &str, n: usize) -> Vec<&str> {
    let chars = text.chars().count();
    if chars == 0 {
        return Vec::new();
    }
    let per_piece = chars.div_ceil(n.max(1));
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let cut = rest.char_indices().nth(per_piece).map_or(rest.len(), |(at, _)| at);
        out.push(&rest[..cut]);
        rest = &rest[cut..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_are_cut_into_a_few_whole_character_pieces() {
        assert_eq!(pieces("", 3), Vec::<&str>::new());
        assert_eq!(pieces("ab", 3), ["a", "b"]);
        assert_eq!(pieces("Hello, wörld!", 3), ["Hello", ", wör", "ld!"]);
    }
}
