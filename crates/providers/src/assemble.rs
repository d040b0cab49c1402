//! Assembles a streamed answer: forwards each delta to the sink as it comes
//! and builds the [`ModelResponse`] that is returned once the stream ended
//! properly.
//!
//! Every streaming provider feeds one of these, so what "complete" means is
//! decided once: tool-call arguments must be a JSON object (an empty string
//! counts as `{}`, since providers send no delta for a call without
//! arguments), and a call needs a name. Anything else is a
//! [`ErrorKind::MalformedResponse`] naming the call.

use seri_core::{Thinking, ToolCall, ToolCallId, Usage};

use crate::error::{ErrorKind, ProviderError};
use crate::provider::EventSink;
use crate::response::{ModelResponse, StopReason, StreamEvent};

/// The longest stretch of broken arguments quoted in an error.
const MAX_QUOTED_ARGUMENTS: usize = 300;

/// A tool call whose arguments are still arriving.
#[derive(Debug)]
struct PartialToolCall {
    /// The provider's key for the call within the stream (OpenAI's `index`,
    /// Anthropic's content-block index).
    key: u64,
    id: String,
    name: String,
    arguments: String,
}

/// The answer so far.
pub(crate) struct ResponseBuilder<'a> {
    provider: &'a str,
    sink: &'a dyn EventSink,
    text: String,
    thinking: Vec<(u64, Thinking)>,
    tool_calls: Vec<PartialToolCall>,
    /// `None` until the provider reports usage: unknown is not zero.
    usage: Option<Usage>,
    stop_reason: Option<StopReason>,
}

impl<'a> ResponseBuilder<'a> {
    pub(crate) fn new(provider: &'a str, sink: &'a dyn EventSink) -> Self {
        Self {
            provider,
            sink,
            text: String::new(),
            thinking: Vec::new(),
            tool_calls: Vec::new(),
            usage: None,
            stop_reason: None,
        }
    }

    pub(crate) fn text(&mut self, delta: &str) {
        if delta.is_empty() {
            return;
        }
        self.text.push_str(delta);
        self.sink.emit(StreamEvent::TextDelta(delta.to_owned()));
    }

    fn thinking_block(&mut self, key: u64) -> &mut Thinking {
        let at = match self.thinking.iter().position(|(k, _)| *k == key) {
            Some(at) => at,
            None => {
                self.thinking.push((key, Thinking::default()));
                self.thinking.len() - 1
            }
        };
        &mut self.thinking[at].1
    }

    /// Opens a reasoning block (Anthropic opens one per content block;
    /// OpenAI-style reasoning is one block with key 0).
    pub(crate) fn thinking_start(&mut self, key: u64, redacted_data: Option<&str>) {
        let block = self.thinking_block(key);
        if let Some(data) = redacted_data {
            // A redacted block is opaque: empty text, the data kept as its
            // signature so it can be sent back (see `seri_core::Thinking`).
            block.signature = Some(data.to_owned());
        }
    }

    pub(crate) fn thinking(&mut self, key: u64, delta: &str) {
        if delta.is_empty() {
            return;
        }
        self.thinking_block(key).text.push_str(delta);
        self.sink.emit(StreamEvent::ThinkingDelta(delta.to_owned()));
    }

    /// Keeps OpenAI Responses' encrypted reasoning on its block, to be sent back.
    pub(crate) fn thinking_encrypted(&mut self, key: u64, content: &str) {
        self.thinking_block(key).encrypted_content = Some(content.to_owned());
    }

    pub(crate) fn thinking_signature(&mut self, key: u64, delta: &str) {
        self.thinking_block(key).signature.get_or_insert_with(String::new).push_str(delta);
    }

    /// Starts a tool call, or adds to the one with the same key. Some
    /// servers repeat the id and name on every fragment; only the first
    /// sighting announces the call.
    pub(crate) fn tool_call(&mut self, key: u64, id: Option<&str>, name: Option<&str>, arguments: &str) {
        let call = match self.tool_calls.iter_mut().position(|c| c.key == key) {
            Some(at) => &mut self.tool_calls[at],
            None => {
                self.tool_calls.push(PartialToolCall {
                    key,
                    id: String::new(),
                    name: String::new(),
                    arguments: String::new(),
                });
                let last = self.tool_calls.len() - 1;
                &mut self.tool_calls[last]
            }
        };
        let announce = call.name.is_empty() && name.is_some_and(|n| !n.is_empty());
        if call.id.is_empty()
            && let Some(id) = id
        {
            call.id = id.to_owned();
        }
        if call.name.is_empty()
            && let Some(name) = name
        {
            call.name = name.to_owned();
        }
        call.arguments.push_str(arguments);
        if announce {
            let event = StreamEvent::ToolCallStarted { id: call.id.clone(), name: call.name.clone() };
            self.sink.emit(event);
        }
    }

    pub(crate) fn usage_mut(&mut self) -> &mut Usage {
        self.usage.get_or_insert_with(Usage::default)
    }

    pub(crate) fn stop(&mut self, reason: StopReason) {
        self.stop_reason = Some(reason);
    }

    pub(crate) fn has_stop_reason(&self) -> bool {
        self.stop_reason.is_some()
    }

    /// The complete response, once the provider's end marker was seen.
    pub(crate) fn finish(self) -> Result<ModelResponse, ProviderError> {
        let stop_reason = self.stop_reason.clone().ok_or_else(|| {
            ProviderError::new(ErrorKind::MalformedResponse, self.provider, "the stream ended without a stop reason")
        })?;
        let mut tool_calls = Vec::with_capacity(self.tool_calls.len());
        for (n, call) in self.tool_calls.into_iter().enumerate() {
            tool_calls.push(parse_tool_call(self.provider, n, call, &stop_reason)?);
        }
        // Some servers say `stop` while asking for tools; the calls are what count.
        let stop_reason = match stop_reason {
            StopReason::EndTurn if !tool_calls.is_empty() => StopReason::ToolUse,
            other => other,
        };
        for call in &tool_calls {
            self.sink.emit(StreamEvent::ToolCallReady(call.clone()));
        }
        Ok(ModelResponse {
            thinking: self.thinking.into_iter().map(|(_, t)| t).collect(),
            text: self.text,
            tool_calls,
            usage: self.usage,
            stop_reason,
        })
    }
}

fn parse_tool_call(
    provider: &str,
    n: usize,
    call: PartialToolCall,
    stop_reason: &StopReason,
) -> Result<ToolCall, ProviderError> {
    let malformed = |what: String| ProviderError::new(ErrorKind::MalformedResponse, provider, what);
    if call.name.is_empty() {
        return Err(malformed(format!("tool call {} (#{}) has no tool name", call.id, n + 1)));
    }
    // A provider that sends no id gets one that no other call ever has, in
    // any response of any process: a per-response `call_1` would repeat in
    // every turn, and a repeated `continue_session` id looks like a replay.
    let id = if call.id.is_empty() { format!("call_{}", uuid::Uuid::now_v7().simple()) } else { call.id };
    let text = if call.arguments.trim().is_empty() { "{}" } else { call.arguments.as_str() };
    let cut_off =
        if *stop_reason == StopReason::MaxTokens { " (the output hit max_tokens and was cut off)" } else { "" };
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(arguments @ serde_json::Value::Object(_)) => Ok(ToolCall { id: ToolCallId(id), name: call.name, arguments }),
        Ok(other) => Err(malformed(format!(
            "arguments of tool call {id} ({}) must be a JSON object, got {}",
            call.name,
            quote(&other.to_string())
        ))),
        Err(error) => Err(malformed(format!(
            "arguments of tool call {id} ({}) are not valid JSON{cut_off}: {error}; arguments: {}",
            call.name,
            quote(text)
        ))),
    }
}

fn quote(text: &str) -> String {
    match text.char_indices().nth(MAX_QUOTED_ARGUMENTS) {
        Some((cut, _)) => format!("{:?}… ({} bytes)", &text[..cut], text.len()),
        None => format!("{text:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::IgnoreEvents;
    use proptest::prelude::*;

    #[test]
    fn split_arguments_assemble_and_validate() {
        let mut b = ResponseBuilder::new("p", &IgnoreEvents);
        b.tool_call(0, Some("call_a"), Some("read"), "");
        b.tool_call(1, Some("call_b"), Some("plan"), "{\"st");
        b.tool_call(0, None, None, "{\"path\":");
        b.tool_call(1, None, None, "eps\": []}");
        b.tool_call(0, None, None, " \"a.rs\"}");
        b.tool_call(2, Some("call_c"), Some("status"), "");
        b.stop(StopReason::ToolUse);
        let response = b.finish().unwrap();
        let args: Vec<String> = response.tool_calls.iter().map(|c| c.arguments.to_string()).collect();
        assert_eq!(args, [r#"{"path":"a.rs"}"#, r#"{"steps":[]}"#, "{}"]);
    }

    #[test]
    fn broken_arguments_are_a_malformed_response_naming_the_call() {
        let mut b = ResponseBuilder::new("p", &IgnoreEvents);
        b.tool_call(0, Some("call_a"), Some("read"), "{\"path\": \"a.r");
        b.stop(StopReason::MaxTokens);
        let err = b.finish().unwrap_err();
        assert_eq!(err.kind, ErrorKind::MalformedResponse);
        assert!(err.message.starts_with("arguments of tool call call_a (read) are not valid JSON (the output hit max_tokens and was cut off): EOF while parsing"), "{}", err.message);
        assert!(err.message.ends_with(r#"arguments: "{\"path\": \"a.r""#), "{}", err.message);
    }

    #[test]
    fn non_object_arguments_and_nameless_calls_are_refused() {
        let mut b = ResponseBuilder::new("p", &IgnoreEvents);
        b.tool_call(0, Some("call_a"), Some("read"), "[1]");
        b.stop(StopReason::ToolUse);
        assert!(b.finish().unwrap_err().message.contains("must be a JSON object, got \"[1]\""));
        let mut b = ResponseBuilder::new("p", &IgnoreEvents);
        b.tool_call(0, Some("call_a"), None, "{}");
        b.stop(StopReason::ToolUse);
        assert_eq!(b.finish().unwrap_err().message, "tool call call_a (#1) has no tool name");
    }

    #[test]
    fn no_stop_reason_is_no_response() {
        let mut b = ResponseBuilder::new("p", &IgnoreEvents);
        b.text("half an ans");
        assert_eq!(b.finish().unwrap_err().kind, ErrorKind::MalformedResponse);
    }

    proptest! {
        /// However the arguments are split into deltas, the same call comes out.
        #[test]
        fn any_split_of_the_arguments_assembles_the_same(cuts in proptest::collection::vec(0usize..60, 0..8)) {
            let arguments = r#"{"path": "src/ü.rs", "lines": [1, 2], "note": "a \"quoted\" word"}"#;
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % arguments.len())
                .filter(|c| arguments.is_char_boundary(*c)).collect();
            cuts.sort_unstable();
            cuts.push(arguments.len());
            let mut b = ResponseBuilder::new("p", &IgnoreEvents);
            let mut start = 0;
            b.tool_call(0, Some("call_1"), Some("read"), "");
            for cut in cuts {
                b.tool_call(0, None, None, &arguments[start..cut]);
                start = cut;
            }
            b.stop(StopReason::ToolUse);
            let response = b.finish().unwrap();
            let expected: serde_json::Value = serde_json::from_str(arguments).unwrap();
            prop_assert_eq!(&response.tool_calls[0].arguments, &expected);
        }
    }

    #[test]
    fn calls_without_ids_get_ids_no_other_call_has() {
        let ids: Vec<String> = (0..2)
            .map(|_| {
                let mut b = ResponseBuilder::new("p", &IgnoreEvents);
                b.tool_call(0, None, Some("read"), "{}");
                b.stop(StopReason::ToolUse);
                b.finish().unwrap().tool_calls[0].id.0.clone()
            })
            .collect();
        assert!(ids.iter().all(|id| id.starts_with("call_") && id.len() > "call_".len() + 16), "{ids:?}");
        assert_ne!(ids[0], ids[1], "two responses never give the same synthesised id");
    }
}
