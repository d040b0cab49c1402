//! The suite's MCP server: `xtask faults-mcp` speaks MCP over stdio
//! (newline-delimited JSON-RPC) with one tool, `echo`, which returns its
//! `text`. seri starts it from `config.json`'s `mcpServers`, so MCP calls
//! are among a schedule's tool calls without Node.js or the network.

use std::io::{BufRead, Write};

use serde_json::{Value, json};

/// The answer to one JSON-RPC message, if it wants one.
pub(crate) fn respond(message: &Value) -> Option<Value> {
    let id = message.get("id")?.clone();
    let method = message["method"].as_str().unwrap_or("");
    let result = match method {
        "initialize" => {
            let version = message["params"]["protocolVersion"].as_str().unwrap_or("2025-06-18");
            json!({
                "protocolVersion": version,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "fq", "version": "0.0.0"},
            })
        }
        "ping" => json!({}),
        "tools/list" => json!({"tools": [{
            "name": "echo",
            "description": "Returns its text.",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        }]}),
        "tools/call" if message["params"]["name"] == "echo" => {
            let text = message["params"]["arguments"]["text"].as_str().unwrap_or("");
            json!({"content": [{"type": "text", "text": text}], "isError": false})
        }
        _ => {
            return Some(
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": format!("no method {method}")}}),
            );
        }
    };
    Some(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

/// Serves MCP on stdin and stdout until stdin closes.
pub(crate) fn serve_stdio() -> Result<(), String> {
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout();
    for line in stdin.lock().lines() {
        let line = line.map_err(|e| format!("cannot read stdin: {e}"))?;
        let Ok(message) = serde_json::from_str::<Value>(&line) else { continue };
        if let Some(answer) = respond(&message) {
            writeln!(stdout, "{answer}").and_then(|()| stdout.flush()).map_err(|e| format!("cannot write: {e}"))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initialize_list_and_call() {
        let init = respond(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-03-26"}}),
        );
        assert_eq!(init.unwrap()["result"]["protocolVersion"], "2025-03-26");
        assert_eq!(respond(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"})), None);
        let list = respond(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})).unwrap();
        assert_eq!(list["result"]["tools"][0]["name"], "echo");
        let call = respond(
            &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}}),
        );
        assert_eq!(call.unwrap()["result"]["content"][0]["text"], "hi");
        let unknown = respond(&json!({"jsonrpc": "2.0", "id": 4, "method": "resources/list"})).unwrap();
        assert_eq!(unknown["error"]["code"], -32601);
    }
}
