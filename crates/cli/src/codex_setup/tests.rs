//! Reading Codex's config.toml: its MCP servers in mcpServers' shape, and the rest named.

use super::*;

/// A config.toml as Codex's documentation writes one.
const DOCUMENTED: &str = r#"
model = "gpt-5-codex"
approval_policy = "on-request"

[mcp_servers.docs]
command = "npx"
args = ["-y", "mcp-server-docs"]
env = { "LEVEL" = "info" }
env_vars = ["DOCS_TOKEN"]
startup_timeout_sec = 20
tool_timeout_sec = 60

[mcp_servers.figma]
url = "https://mcp.figma.com/mcp"
bearer_token_env_var = "FIGMA_OAUTH_TOKEN"
http_headers = { "X-Figma-Region" = "us-east-1" }

[mcp_servers.old]
command = "old-server"
enabled = false

[mcp_servers.picky]
command = "picky"
enabled_tools = ["search"]
"#;

#[test]
fn codexs_servers_are_read_in_mcp_servers_shape_and_the_rest_is_named() {
    let file = read_text(Path::new("/home/ana/.codex/config.toml"), DOCUMENTED);
    insta::assert_json_snapshot!("servers", Value::Object(file.servers.clone()));
    insta::assert_debug_snapshot!("not_used", &file.not_used);
    // What seri's own reader makes of them: every one starts as written.
    let env = |name: &str| (name == "FIGMA_OAUTH_TOKEN").then(|| "t0ken".to_owned());
    let specs = seri_mcp::parse_servers(&Value::Object(file.servers), "config.toml", &env).unwrap();
    assert_eq!(specs.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["docs", "figma", "picky"]);
}

#[test]
fn a_file_that_is_not_toml_is_named() {
    let file = read_text(Path::new("c.toml"), "[mcp_servers.x\ncommand = 1");
    assert!(file.servers.is_empty());
    assert!(file.not_used[0].starts_with("the whole file: not TOML"), "{:?}", file.not_used);
}
