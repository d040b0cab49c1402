//! One MCP server's tool as a seri tool: named `mcp__<server>__<tool>`, with
//! the server's description and JSON Schema, asked about before each call
//! (unless `permissions` allows it), cut off at the server's tool timeout.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use rmcp::model::CallToolRequestParams;
use rmcp::service::ServiceError;
use serde_json::Value;
use seri_tools::{ApprovalRequest, Availability, InputError, RunContext, Tool, ToolContext, ToolError, ToolOutcome};

use crate::server::Connection;

/// The longest tool name providers accept (OpenAI's and Anthropic's limit).
pub const MAX_TOOL_NAME: usize = 64;

/// The seri name of `server`'s tool `tool`: `mcp__server__tool`, with any
/// character providers refuse in a tool name made `_`. A name past
/// [`MAX_TOOL_NAME`] is cut and ends with a hash of the whole, so two long
/// names stay apart.
pub fn seri_name(server: &str, tool: &str) -> String {
    let clean: String =
        tool.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect();
    let name = format!("{}{server}__{clean}", seri_tools::MCP_TOOL_PREFIX);
    if name.len() <= MAX_TOOL_NAME {
        return name;
    }
    // FNV-1a: a stable, short fingerprint, not a security measure.
    let hash = format!("{}__{tool}", server)
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    format!("{}_{:08x}", &name[..MAX_TOOL_NAME - 9], hash as u32)
}

/// A tool of a running MCP server.
pub struct McpTool {
    /// The seri name.
    pub(crate) name: String,
    /// The server's name for it.
    remote: String,
    description: String,
    schema: Value,
    connection: Arc<Connection>,
    timeout: Duration,
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTool").field("name", &self.name).field("remote", &self.remote).finish_non_exhaustive()
    }
}

impl McpTool {
    /// The tool `listed` (its `tools/list` entry as JSON) of `connection`'s server.
    pub(crate) fn new(name: String, listed: &Value, connection: Arc<Connection>, timeout: Duration) -> Self {
        let remote = listed.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
        let description = listed
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| format!("The `{remote}` tool of the MCP server `{}`.", connection.name));
        let schema = match listed.get("inputSchema") {
            Some(schema @ Value::Object(_)) => schema.clone(),
            _ => serde_json::json!({"type": "object"}),
        };
        Self { name, remote, description, schema, connection, timeout }
    }
}

#[async_trait]
impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> Value {
        self.schema.clone()
    }

    fn availability(&self, run: &RunContext) -> Availability {
        // Like the coding tools: an MCP tool may do anything its server can.
        seri_tools::coding::availability(run)
    }

    async fn call(&self, ctx: ToolContext<'_>, input: Value) -> Result<ToolOutcome, ToolError> {
        let arguments = match input {
            Value::Object(map) => map,
            Value::Null => serde_json::Map::new(),
            other => return Err(InputError::new("", format!("expected an object of arguments, got {other}")).into()),
        };
        let shown = Value::Object(arguments.clone()).to_string();
        let request = ApprovalRequest {
            tool: self.name.clone(),
            target: cut(&shown, 200),
            path: None,
            outside_workspace: false,
            preview: None,
            call: None,
            arguments: serde_json::Value::Null,
            each_time: false,
        };
        seri_tools::check_permission(ctx, &request).await?;
        let server = &self.connection.name;
        if self.connection.is_stopped() {
            return Err(ToolError::Failed(format!(
                "the MCP server `{server}` has stopped{}; its tools cannot be called until seri starts it again",
                self.connection.stderr_tail()
            )));
        }
        let mut params = CallToolRequestParams::new(self.remote.clone());
        params.arguments = Some(arguments);
        // Dropping the request at the timeout cancels it on the server.
        let called = tokio::time::timeout(self.timeout, self.connection.service.peer().call_tool(params)).await;
        let result = match called {
            Err(_) => {
                return Err(ToolError::Failed(format!(
                    "the MCP server `{server}` did not answer `{}` within {} s (its toolTimeoutSec); the call was cancelled",
                    self.remote,
                    self.timeout.as_secs_f64()
                )));
            }
            Ok(Err(ServiceError::McpError(error))) => {
                return Err(ToolError::Failed(format!(
                    "the MCP server `{server}` refused the call: {}",
                    error.message
                )));
            }
            Ok(Err(error)) => {
                if matches!(error, ServiceError::TransportClosed | ServiceError::TransportSend(_)) {
                    self.connection.mark_stopped();
                }
                return Err(ToolError::Failed(format!(
                    "the MCP server `{server}` failed: {error}{}",
                    self.connection.stderr_tail()
                )));
            }
            Ok(Ok(result)) => result,
        };
        let value = serde_json::to_value(&result).unwrap_or(Value::Null);
        match crate::result::render(&value) {
            (text, true) => Err(ToolError::Failed(text)),
            (text, false) => Ok(ToolOutcome::text(text).with_images(crate::result::images(&value))),
        }
    }
}

fn cut(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_prefixed_cleaned_and_kept_within_the_limit() {
        assert_eq!(seri_name("everything", "get-sum"), "mcp__everything__get-sum");
        assert_eq!(seri_name("fs", "read.file/v2"), "mcp__fs__read_file_v2");
        let long = seri_name("server", &"x".repeat(80));
        let other = seri_name("server", &format!("{}y", "x".repeat(79)));
        assert_eq!(long.len(), MAX_TOOL_NAME);
        assert_ne!(long, other, "a hash keeps cut names apart");
    }
}
