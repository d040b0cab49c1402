//! Codex's setup read as it is: the MCP servers of `~/.codex/config.toml`
//! (`$CODEX_HOME/config.toml`), the person's own file, which applies as the
//! profile's `config.json` does. (Codex's `AGENTS.md` is already the
//! project's instructions.)
//!
//! Each `[mcp_servers.NAME]` becomes a server in `config.json`'s
//! `mcpServers` shape: `command`, `args`, `env`, `env_vars` (passed
//! through, `passEnv`), or `url` with `bearer_token_env_var` and
//! `http_headers`, and the two timeouts. A server `enabled = false` is
//! left out, said so; a key seri has no counterpart of, and every other
//! setting of the file, is named with why in `seri config`.
//!
//! Reading the text ([`read_text`]) is pure.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

/// The file and what became of it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct CodexFile {
    pub(crate) path: PathBuf,
    /// Its servers, in `mcpServers`' shape, by name.
    pub(crate) servers: Map<String, Value>,
    pub(crate) not_used: Vec<String>,
}

/// `$CODEX_HOME`, else `~/.codex`.
pub(crate) fn codex_home() -> Option<PathBuf> {
    home_folder("CODEX_HOME", ".codex")
}

/// Another agent's folder: `$variable` when set, else `~/name`.
pub(crate) fn home_folder(variable: &str, name: &str) -> Option<PathBuf> {
    match std::env::var_os(variable) {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => std::env::var_os("HOME").filter(|h| !h.is_empty()).map(|home| PathBuf::from(home).join(name)),
    }
}

/// The file in `home`, when there is one.
pub(crate) fn find(home: Option<&Path>) -> Option<CodexFile> {
    let path = home?.join("config.toml");
    match std::fs::read_to_string(&path) {
        Ok(text) => Some(read_text(&path, &text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => Some(CodexFile {
            path,
            not_used: vec![format!("the whole file: cannot be read: {e}")],
            ..CodexFile::default()
        }),
    }
}

/// A TOML value as JSON.
fn json_of_value(value: &toml_edit::Value) -> Value {
    use toml_edit::Value as T;
    match value {
        T::String(s) => json!(s.value()),
        T::Integer(i) => json!(i.value()),
        T::Float(f) => json!(f.value()),
        T::Boolean(b) => json!(b.value()),
        T::Datetime(d) => json!(d.value().to_string()),
        T::Array(array) => Value::Array(array.iter().map(json_of_value).collect()),
        T::InlineTable(table) => Value::Object(table.iter().map(|(k, v)| (k.to_owned(), json_of_value(v))).collect()),
    }
}

fn json_of(item: &toml_edit::Item) -> Value {
    use toml_edit::Item as I;
    match item {
        I::None => Value::Null,
        I::Value(value) => json_of_value(value),
        I::Table(table) => Value::Object(table.iter().map(|(k, v)| (k.to_owned(), json_of(v))).collect()),
        I::ArrayOfTables(tables) => Value::Array(
            tables.iter().map(|t| Value::Object(t.iter().map(|(k, v)| (k.to_owned(), json_of(v))).collect())).collect(),
        ),
    }
}

/// Reads the file's `text`.
pub(crate) fn read_text(path: &Path, text: &str) -> CodexFile {
    let mut file = CodexFile { path: path.to_path_buf(), ..CodexFile::default() };
    let document = match text.parse::<toml_edit::DocumentMut>() {
        Ok(document) => document,
        Err(e) => {
            let why = e.to_string().lines().next().unwrap_or("not TOML").trim().to_owned();
            file.not_used.push(format!("the whole file: not TOML: {why}"));
            return file;
        }
    };
    let Value::Object(top) = json_of(document.as_item()) else { return file };
    for (key, value) in top {
        if key != "mcp_servers" {
            file.not_used.push(format!("{key}: not a setting seri takes from Codex (seri reads its MCP servers)"));
            continue;
        }
        let Value::Object(servers) = value else {
            file.not_used.push("mcp_servers: not a table".to_owned());
            continue;
        };
        for (name, server) in servers {
            match server_of(&name, &server, &mut file.not_used) {
                Some(converted) => {
                    file.servers.insert(name, converted);
                }
                None => continue,
            }
        }
    }
    file
}

/// One `[mcp_servers.NAME]` in `mcpServers`' shape; `None` (said in
/// `not_used`) when it is off or cannot be said.
fn server_of(name: &str, server: &Value, not_used: &mut Vec<String>) -> Option<Value> {
    let Value::Object(table) = server else {
        not_used.push(format!("mcp_servers.{name}: not a table"));
        return None;
    };
    if table.get("enabled") == Some(&Value::Bool(false)) {
        not_used.push(format!("mcp_servers.{name}: enabled = false, so it is left out"));
        return None;
    }
    let mut out = Map::new();
    let mut headers = Map::new();
    for (key, value) in table {
        match key.as_str() {
            "command" | "args" | "env" | "url" => {
                out.insert(key.clone(), value.clone());
            }
            "env_vars" => {
                out.insert("passEnv".to_owned(), value.clone());
            }
            "startup_timeout_sec" => {
                out.insert("startupTimeoutSec".to_owned(), value.clone());
            }
            "tool_timeout_sec" => {
                out.insert("toolTimeoutSec".to_owned(), value.clone());
            }
            "bearer_token_env_var" => match value.as_str() {
                Some(variable) => {
                    headers.insert("Authorization".to_owned(), json!(format!("Bearer ${{{variable}}}")));
                }
                None => not_used.push(format!("mcp_servers.{name}.{key}: not a string")),
            },
            "http_headers" => match value {
                Value::Object(given) => headers.extend(given.clone()),
                _ => not_used.push(format!("mcp_servers.{name}.{key}: not a table")),
            },
            "enabled" => {}
            other => not_used.push(format!("mcp_servers.{name}.{other}: seri has no such server setting")),
        }
    }
    if out.contains_key("url") {
        out.insert("type".to_owned(), json!("http"));
        if !headers.is_empty() {
            out.insert("headers".to_owned(), Value::Object(headers));
        }
    } else if !headers.is_empty() {
        not_used.push(format!("mcp_servers.{name}: headers are for a server with a `url`"));
    }
    Some(Value::Object(out))
}

impl CodexFile {
    /// `seri config`'s lines.
    pub(crate) fn config_lines(&self) -> String {
        let mut out = format!("codex        {} (yours)\n", self.path.display());
        if !self.servers.is_empty() {
            let names: Vec<&str> = self.servers.keys().map(String::as_str).collect();
            out.push_str(&format!("  uses       mcp_servers: {}\n", names.join(", ")));
        }
        for not in &self.not_used {
            out.push_str(&format!("  not used   {not}\n"));
        }
        out
    }
}

#[cfg(test)]
mod tests;
