//! A request's size as seri's local estimate counts it: characters, part
//! by part. Pure.
//!
//! The run loop measures every request it sends with [`request_chars`] and
//! records the figure with the answer, beside the tokens the provider
//! billed for the same request; the ratio of the two is what the estimate
//! learns a model's characters per token from (`seri_core::tokens`). So the
//! count must be the same wherever it is taken: `/context`'s parts, the
//! per-turn block's estimate and the recorded size all come from here.

use crate::request::{ModelRequest, RequestMessage};

/// One part of a request and its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestPart {
    /// What it is: `system prompt`, `tools`, `tool results`, …
    pub name: &'static str,
    /// How many items it holds (tools, messages, calls).
    pub items: u64,
    /// Its characters.
    pub chars: u64,
}

/// The characters of `value` as JSON, as the estimate counts a request's
/// structured parts (tool definitions, calls, results). Counted as the
/// JSON is written, never kept: a long session's request is counted on
/// every turn, and building its whole text only to count it was a quarter
/// of a resume.
pub fn json_chars(value: &impl serde::Serialize) -> u64 {
    let mut counter = CharCounter(0);
    match serde_json::to_writer(&mut counter, value) {
        Ok(()) => counter.0,
        Err(_) => 0,
    }
}

/// Counts the characters of the UTF-8 written to it: every byte that does
/// not continue a character.
struct CharCounter(u64);

impl std::io::Write for CharCounter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.iter().filter(|&&b| b & 0xC0 != 0x80).count() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The characters of `request` the estimate counts: the sum of its parts.
pub fn request_chars(request: &ModelRequest) -> u64 {
    request_parts(request).iter().map(|p| p.chars).sum()
}

/// The parts of `request`, in the order it holds them: the system prompt,
/// the tools (their JSON), people's messages (and recaps and projections),
/// the model's answers (text and thinking), its tool calls, the tool
/// results, and the per-turn blocks (the last user message).
pub fn request_parts(request: &ModelRequest) -> [RequestPart; 7] {
    let (mut messages, mut answers, mut calls, mut results, mut blocks) = (0u64, 0u64, 0u64, 0u64, 0u64);
    let (mut n_messages, mut n_answers, mut n_calls, mut n_results) = (0u64, 0u64, 0u64, 0u64);
    let last = request.messages.len().saturating_sub(1);
    for (i, message) in request.messages.iter().enumerate() {
        match message {
            RequestMessage::User { text, images } if i == last && images.is_empty() => {
                blocks += text.chars().count() as u64;
            }
            RequestMessage::User { .. } => {
                messages += json_chars(message);
                n_messages += 1;
            }
            RequestMessage::Assistant(turn) => {
                let said = turn.text.chars().count() as u64 + turn.thinking.iter().map(json_chars).sum::<u64>();
                if said > 0 {
                    answers += said;
                    n_answers += 1;
                }
                calls += turn.tool_calls.iter().map(json_chars).sum::<u64>();
                n_calls += turn.tool_calls.len() as u64;
            }
            RequestMessage::Tool(result) => {
                results += json_chars(result);
                n_results += 1;
            }
        }
    }
    let part = |name, items, chars| RequestPart { name, items, chars };
    [
        part("system prompt", 1, request.system.chars().count() as u64),
        part("tools", request.tools.len() as u64, json_chars(&request.tools)),
        part("messages (yours, recaps, projections)", n_messages, messages),
        part("the model's answers", n_answers, answers),
        part("tool calls", n_calls, calls),
        part("tool results", n_results, results),
        part("per-turn blocks", 1, blocks),
    ]
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::json_chars;

    proptest! {
        /// Counting as it is written gives what counting the written text
        /// gives: escapes, quotes and characters of every width.
        #[test]
        fn counting_as_written_is_counting_the_text(text in any::<String>(), n in any::<i64>()) {
            let value = serde_json::json!({ "text": text, "n": n, "list": [text.clone(), "é\\n\u{1F600}"] });
            prop_assert_eq!(json_chars(&value), serde_json::to_string(&value).unwrap().chars().count() as u64);
        }
    }
}
