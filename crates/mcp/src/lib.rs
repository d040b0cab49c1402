//! MCP servers as seri tools: a Model Context Protocol client on the
//! official Rust SDK (`rmcp`).
//!
//! - [`config`]: the `mcpServers` setting, in the shape Claude Code's
//!   `.mcp.json` uses, with `${VAR}` expanded from the environment.
//! - [`McpServers`]: starts every configured server at once (a child
//!   process over stdio, or streamable HTTP), each within its startup
//!   timeout, and reports each one's state and tools.
//! - [`McpTool`]: one server tool as a [`seri_tools::Tool`] named
//!   `mcp__<server>__<tool>`, asked about before it runs (`permissions`
//!   may allow `mcp__server__tool` or `mcp__server__*`), cut off at its
//!   server's tool timeout; what it returns is rendered by [`result`].
//!
//! Failure stays with the server: one that does not start, exits, hangs or
//! answers garbage makes its own calls fail with a message saying so, and
//! nothing else. Which tools a session offers is the caller's to freeze.

pub mod config;
mod http;
mod raw;
pub mod result;
mod server;
mod tool;

pub use config::{ConfigError, ServerSpec, Transport, parse_servers};
pub use server::{McpServers, ServerReport, ServerState, SkippedTool};
pub use tool::{MAX_TOOL_NAME, McpTool, seri_name};
