//! What the SDK's typed messages drop, read from the wire: a listed tool's
//! `execution.taskSupport`. rmcp's `Tool` has no `execution` field, so a
//! tool that only runs as an MCP task (which seri does not speak) would be
//! offered to the model and fail on every call. [`Tee`] sees a stdio
//! server's output before the SDK decodes it and notes, per tool name, what
//! each `tools/list` answer declared; over streamable HTTP, the client in
//! [`crate::http`] notes the same into the same [`Declared`].

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use serde_json::Value;
use tokio::io::{AsyncRead, ReadBuf};

/// The longest line the tee keeps to read; a longer one (a huge tool list)
/// is passed on unread, and its tools count as declaring nothing.
const MAX_LINE: usize = 8 << 20;

/// Each listed tool's declared `execution.taskSupport`, by the server's
/// name for the tool; filled as `tools/list` answers arrive.
#[derive(Debug, Clone, Default)]
pub(crate) struct Declared(Arc<Mutex<HashMap<String, String>>>);

impl Declared {
    /// What `tool` declared as its `taskSupport`, if anything.
    pub(crate) fn task_support(&self, tool: &str) -> Option<String> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).get(tool).cloned()
    }

    /// Notes what one JSON-RPC message declares, when it answers a
    /// `tools/list`.
    pub(crate) fn note(&self, message: &[u8]) {
        let found = task_support(message);
        if found.is_empty() {
            return;
        }
        let mut map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        map.extend(found);
    }
}

/// The `(tool, taskSupport)` pairs a `tools/list` answer declares; nothing
/// for any other message, or one that is not JSON.
pub(crate) fn task_support(message: &[u8]) -> Vec<(String, String)> {
    // Most messages are not tool lists: skip parsing those.
    if !message.windows(7).any(|w| w == b"\"tools\"") {
        return Vec::new();
    }
    let Ok(value) = serde_json::from_slice::<Value>(message) else { return Vec::new() };
    let Some(tools) = value.get("result").and_then(|r| r.get("tools")).and_then(Value::as_array) else {
        return Vec::new();
    };
    tools
        .iter()
        .filter_map(|tool| {
            let name = tool.get("name")?.as_str()?;
            let support = tool.get("execution")?.get("taskSupport")?.as_str()?;
            Some((name.to_owned(), support.to_owned()))
        })
        .collect()
}

/// Why a tool is not offered, or `None` when seri can call it: one whose
/// calls must run as MCP tasks.
pub(crate) fn unsupported(task_support: Option<&str>) -> Option<String> {
    (task_support == Some("required"))
        .then(|| "it runs only as an MCP task (execution.taskSupport: required), which seri does not support".into())
}

/// A stdio server's output, passed through unchanged while each line is
/// read for what [`Declared`] keeps.
pub(crate) struct Tee<R> {
    inner: R,
    line: Vec<u8>,
    /// The current line passed [`MAX_LINE`]: skip to its end.
    overlong: bool,
    declared: Declared,
}

impl<R> Tee<R> {
    pub(crate) fn new(inner: R, declared: Declared) -> Self {
        Self { inner, line: Vec::new(), overlong: false, declared }
    }

    fn take_in(&mut self, bytes: &[u8]) {
        for part in bytes.split_inclusive(|b| *b == b'\n') {
            let (body, ends) = match part.strip_suffix(b"\n") {
                Some(body) => (body, true),
                None => (part, false),
            };
            if !self.overlong {
                if self.line.len() + body.len() > MAX_LINE {
                    self.overlong = true;
                    self.line = Vec::new();
                } else {
                    self.line.extend_from_slice(body);
                }
            }
            if ends {
                if !self.overlong {
                    self.declared.note(&self.line);
                }
                self.line.clear();
                self.overlong = false;
            }
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Tee<R> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            this.take_in(&buf.filled()[before..]);
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_list_answer_declares_task_support_and_nothing_else_does() {
        let listed = br#"{"jsonrpc":"2.0","id":2,"result":{"tools":[
            {"name":"echo","inputSchema":{"type":"object"}},
            {"name":"research","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}},
            {"name":"maybe","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}}]}}"#;
        assert_eq!(
            task_support(listed),
            vec![("research".to_owned(), "required".to_owned()), ("maybe".to_owned(), "optional".to_owned())]
        );
        assert!(
            task_support(br#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"\"tools\""}]}}"#)
                .is_empty()
        );
        assert!(task_support(b"\"tools\" but not json").is_empty());
        assert!(unsupported(Some("required")).is_some());
        assert!(unsupported(Some("optional")).is_none() && unsupported(None).is_none());
    }

    #[test]
    fn the_tee_reads_lines_split_across_reads() {
        let declared = Declared::default();
        let mut tee = Tee::new(tokio::io::empty(), declared.clone());
        let message = br#"{"id":1,"result":{"tools":[{"name":"t","execution":{"taskSupport":"required"}}]}}"#;
        let mut wire = b"{\"id\":0,\"result\":{}}\n".to_vec();
        wire.extend_from_slice(message);
        wire.push(b'\n');
        for chunk in wire.chunks(7) {
            tee.take_in(chunk);
        }
        assert_eq!(declared.task_support("t").as_deref(), Some("required"));
        assert_eq!(declared.task_support("other"), None);
    }
}
