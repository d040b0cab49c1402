//! The `mcpServers` setting, in the shape Claude Code's `.mcp.json` uses:
//!
//! ```json
//! {"mcpServers": {
//!   "everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"], "env": {"KEY": "${KEY}"}},
//!   "docs": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}}
//! }}
//! ```
//!
//! A server with a `command` speaks MCP over its standard input and output
//! (`"type": "stdio"` may say so); `"type": "http"` (or `"streamable-http"`)
//! with a `url` speaks streamable HTTP. `${VAR}` in any string value is the
//! environment variable `VAR`, `${VAR:-default}` falls back to `default`;
//! a variable that is unset with no default is an error naming it. Two keys
//! are seri's own: `toolTimeoutSec` (how long one call may take, 120 by
//! default) and `startupTimeoutSec` (how long the server may take to start
//! and list its tools, 30 by default). Unknown keys are refused by name.
//! Parsing is pure: the environment comes in as a lookup function.
//!
//! A stdio server does not inherit seri's environment (which holds the
//! provider's key): it gets what the reference MCP SDKs pass
//! ([`INHERITED_ENV`]), the variables its `passEnv` list names (seri's own
//! key: `"passEnv": ["GITHUB_TOKEN"]`), and its `env` entries, which win.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

/// How long one tool call may take unless a server says otherwise.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(120);

/// How long a server may take to start and list its tools unless it says otherwise.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

/// The variables every stdio server gets from seri's environment, when set:
/// the list the reference MCP SDKs pass (`get_default_environment`).
pub const INHERITED_ENV: [&str; 6] = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

/// One configured server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSpec {
    /// The name it was given, which its tools are named by.
    pub name: String,
    /// How to reach it.
    pub transport: Transport,
    /// How long one call may take.
    pub tool_timeout: Duration,
    /// How long it may take to start and list its tools.
    pub startup_timeout: Duration,
}

/// How a server is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A child process speaking MCP over stdio.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Its whole environment: [`INHERITED_ENV`] and the `passEnv`
        /// variables as seri has them, then its `env` entries.
        env: BTreeMap<String, String>,
    },
    /// Streamable HTTP.
    Http {
        /// The endpoint.
        url: String,
        /// Headers sent with every request (`Authorization`, …).
        headers: BTreeMap<String, String>,
    },
}

impl Transport {
    /// `stdio` or `http`, as `seri mcp list` shows it.
    pub fn kind(&self) -> &'static str {
        match self {
            Transport::Stdio { .. } => "stdio",
            Transport::Http { .. } => "http",
        }
    }
}

/// An `mcpServers` entry that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{field}`: {problem}")]
pub struct ConfigError {
    /// Where: `mcpServers.docs.url`.
    pub field: String,
    /// What is wrong.
    pub problem: String,
}

fn error(field: impl Into<String>, problem: impl Into<String>) -> ConfigError {
    ConfigError { field: field.into(), problem: problem.into() }
}

/// Reads an `mcpServers` object (`field` names where it came from, such as
/// `mcpServers` or `.mcp.json: mcpServers`), expanding `${VAR}` through `env`.
pub fn parse_servers(
    value: &Value,
    field: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<ServerSpec>, ConfigError> {
    let Value::Object(map) = value else {
        return Err(error(field, format!("expected an object of servers by name, got {}", type_name(value))));
    };
    // By name, whatever order the file has them in: tools and lists come
    // out the same for the same servers.
    let mut servers: Vec<ServerSpec> = map
        .iter()
        .map(|(name, server)| parse_server(name, server, &format!("{field}.{name}"), env))
        .collect::<Result<_, _>>()?;
    servers.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(servers)
}

fn parse_server(
    name: &str,
    value: &Value,
    field: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<ServerSpec, ConfigError> {
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        return Err(error(field, "a server's name may hold only letters, digits, `-` and `_`"));
    }
    let Value::Object(map) = value else {
        return Err(error(field, format!("expected an object, got {}", type_name(value))));
    };
    const KEYS: [&str; 9] =
        ["type", "command", "args", "env", "passEnv", "url", "headers", "toolTimeoutSec", "startupTimeoutSec"];
    if let Some(unknown) = map.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(error(format!("{field}.{unknown}"), format!("unknown key; known: {}", KEYS.join(", "))));
    }
    let string = |key: &str| -> Result<Option<String>, ConfigError> {
        match map.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => expand(s, env).map(Some).map_err(|p| error(format!("{field}.{key}"), p)),
            Some(other) => Err(error(format!("{field}.{key}"), format!("expected a string, got {}", type_name(other)))),
        }
    };
    let strings = |key: &str| -> Result<BTreeMap<String, String>, ConfigError> {
        match map.get(key) {
            None => Ok(BTreeMap::new()),
            Some(Value::Object(entries)) => entries
                .iter()
                .map(|(k, v)| match v {
                    Value::String(s) => {
                        expand(s, env).map(|s| (k.clone(), s)).map_err(|p| error(format!("{field}.{key}.{k}"), p))
                    }
                    other => {
                        Err(error(format!("{field}.{key}.{k}"), format!("expected a string, got {}", type_name(other))))
                    }
                })
                .collect(),
            Some(other) => {
                Err(error(format!("{field}.{key}"), format!("expected an object, got {}", type_name(other))))
            }
        }
    };
    let kind = string("type")?;
    let transport = match kind.as_deref() {
        None | Some("stdio") => {
            let command = string("command")?.ok_or_else(|| {
                error(field, "needs a `command` (a stdio server) or `\"type\": \"http\"` with a `url`")
            })?;
            let args = match map.get("args") {
                None => Vec::new(),
                Some(Value::Array(items)) => items
                    .iter()
                    .enumerate()
                    .map(|(n, item)| match item {
                        Value::String(s) => expand(s, env).map_err(|p| error(format!("{field}.args[{n}]"), p)),
                        other => Err(error(
                            format!("{field}.args[{n}]"),
                            format!("expected a string, got {}", type_name(other)),
                        )),
                    })
                    .collect::<Result<_, _>>()?,
                Some(other) => {
                    return Err(error(
                        format!("{field}.args"),
                        format!("expected a list of strings, got {}", type_name(other)),
                    ));
                }
            };
            if map.contains_key("url") || map.contains_key("headers") {
                return Err(error(
                    field,
                    "a stdio server takes no `url` or `headers`; an HTTP one needs `\"type\": \"http\"`",
                ));
            }
            let mut environment = BTreeMap::new();
            for name in INHERITED_ENV.iter().map(|n| (*n).to_owned()).chain(variable_names(map.get("passEnv"), field)?)
            {
                if let Some(value) = env(&name) {
                    environment.insert(name, value);
                }
            }
            environment.extend(strings("env")?);
            Transport::Stdio { command, args, env: environment }
        }
        Some("http" | "streamable-http" | "streamableHttp") => {
            let url = string("url")?.ok_or_else(|| error(field, "an HTTP server needs a `url`"))?;
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(error(format!("{field}.url"), format!("`{url}` is not an http:// or https:// address")));
            }
            if map.contains_key("command") || map.contains_key("args") || map.contains_key("passEnv") {
                return Err(error(field, "an HTTP server takes no `command`, `args` or `passEnv`"));
            }
            Transport::Http { url, headers: strings("headers")? }
        }
        Some("sse") => {
            return Err(error(
                format!("{field}.type"),
                "the legacy SSE transport is not supported; use \"http\" (streamable HTTP)",
            ));
        }
        Some(other) => {
            return Err(error(
                format!("{field}.type"),
                format!("`{other}` is not a transport; use \"stdio\" or \"http\""),
            ));
        }
    };
    let seconds = |key: &str, default: Duration| -> Result<Duration, ConfigError> {
        match map.get(key) {
            None => Ok(default),
            Some(v) => match v.as_f64() {
                Some(s) if s > 0.0 && s <= 86_400.0 => Ok(Duration::from_secs_f64(s)),
                _ => Err(error(
                    format!("{field}.{key}"),
                    format!("expected a number of seconds from 0 to 86400, got {v}"),
                )),
            },
        }
    };
    Ok(ServerSpec {
        name: name.to_owned(),
        transport,
        tool_timeout: seconds("toolTimeoutSec", DEFAULT_TOOL_TIMEOUT)?,
        startup_timeout: seconds("startupTimeoutSec", DEFAULT_STARTUP_TIMEOUT)?,
    })
}

/// The names of a `passEnv` list, each an environment variable's name.
fn variable_names(value: Option<&Value>, field: &str) -> Result<Vec<String>, ConfigError> {
    let Some(value) = value else { return Ok(Vec::new()) };
    let Value::Array(items) = value else {
        return Err(error(
            format!("{field}.passEnv"),
            format!("expected a list of variable names, got {}", type_name(value)),
        ));
    };
    items
        .iter()
        .enumerate()
        .map(|(n, item)| match item {
            Value::String(name) if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => {
                Ok(name.clone())
            }
            Value::String(name) => {
                Err(error(format!("{field}.passEnv[{n}]"), format!("`{name}` is not an environment variable's name")))
            }
            other => {
                Err(error(format!("{field}.passEnv[{n}]"), format!("expected a string, got {}", type_name(other))))
            }
        })
        .collect()
}

/// `text` with every `${VAR}` and `${VAR:-default}` replaced from `env`.
/// `$` not followed by `{` is kept as it is.
pub fn expand(text: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| format!("`${{` at byte {} is never closed by `}}`", text.len() - rest.len() + start))?;
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!("`${{{inner}}}` does not name an environment variable"));
        }
        match (env(name), default) {
            (Some(value), _) => out.push_str(&value),
            (None, Some(default)) => out.push_str(default),
            (None, None) => {
                return Err(format!(
                    "the environment variable {name} is not set (write ${{{name}:-default}} for a fallback)"
                ));
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn env(name: &str) -> Option<String> {
        match name {
            "TOKEN" => Some("s3cret".into()),
            "HOME" => Some("/home/me".into()),
            "OPENAI_API_KEY" => Some("sk-never-passed".into()),
            _ => None,
        }
    }

    #[test]
    fn both_transports_in_claude_codes_shape_with_variables_expanded() {
        let config = json!({
            "files": {"command": "npx", "args": ["-y", "server", "${HOME}/work"], "env": {"LEVEL": "${LEVEL:-info}"}},
            "docs": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}, "toolTimeoutSec": 5},
        });
        let servers = parse_servers(&config, "mcpServers", &env).unwrap();
        assert_eq!(servers[0].name, "docs");
        assert_eq!(
            servers[0].transport,
            Transport::Http {
                url: "https://mcp.example.com/mcp".into(),
                headers: [("Authorization".to_owned(), "Bearer s3cret".to_owned())].into(),
            }
        );
        assert_eq!(servers[0].tool_timeout, Duration::from_secs(5));
        assert_eq!(
            servers[1].transport,
            Transport::Stdio {
                command: "npx".into(),
                args: vec!["-y".into(), "server".into(), "/home/me/work".into()],
                env: [("HOME".to_owned(), "/home/me".to_owned()), ("LEVEL".to_owned(), "info".to_owned())].into(),
            }
        );
        assert_eq!(servers[1].startup_timeout, DEFAULT_STARTUP_TIMEOUT);
    }

    #[test]
    fn a_stdio_server_gets_the_sdk_list_and_what_its_configuration_names_and_nothing_else() {
        let config = json!({
            "plain": {"command": "x"},
            "passing": {"command": "x", "passEnv": ["TOKEN", "UNSET"], "env": {"HOME": "/elsewhere"}},
        });
        let servers = parse_servers(&config, "mcpServers", &env).unwrap();
        let env_of = |name: &str| match &servers.iter().find(|s| s.name == name).unwrap().transport {
            Transport::Stdio { env, .. } => env.clone(),
            Transport::Http { .. } => unreachable!(),
        };
        assert_eq!(env_of("plain"), [("HOME".to_owned(), "/home/me".to_owned())].into(), "no key, no TOKEN");
        assert_eq!(
            env_of("passing"),
            [("HOME".to_owned(), "/elsewhere".to_owned()), ("TOKEN".to_owned(), "s3cret".to_owned())].into()
        );
    }

    #[test]
    fn each_mistake_names_its_field() {
        let cases = [
            (json!([]), "`mcpServers`: expected an object of servers by name, got a list"),
            (json!({"a": {"args": []}}), "`mcpServers.a`: needs a `command`"),
            (json!({"a": {"command": "x", "colour": 1}}), "`mcpServers.a.colour`: unknown key"),
            (json!({"a": {"command": "x", "args": [1]}}), "`mcpServers.a.args[0]`: expected a string, got a number"),
            (json!({"a": {"type": "http", "url": "ftp://x"}}), "`mcpServers.a.url`: `ftp://x` is not an http"),
            (json!({"a": {"type": "sse", "url": "http://x"}}), "`mcpServers.a.type`: the legacy SSE transport"),
            (json!({"a": {"command": "${NOPE}"}}), "`mcpServers.a.command`: the environment variable NOPE is not set"),
            (json!({"a b": {"command": "x"}}), "`mcpServers.a b`: a server's name may hold only"),
            (json!({"a": {"command": "x", "toolTimeoutSec": 0}}), "`mcpServers.a.toolTimeoutSec`: expected a number"),
            (json!({"a": {"command": "x", "passEnv": "K"}}), "`mcpServers.a.passEnv`: expected a list of variable"),
            (json!({"a": {"command": "x", "passEnv": ["A=B"]}}), "`mcpServers.a.passEnv[0]`: `A=B` is not"),
            (json!({"a": {"type": "http", "url": "http://x", "passEnv": []}}), "`mcpServers.a`: an HTTP server takes"),
        ];
        for (config, expected) in cases {
            let error = parse_servers(&config, "mcpServers", &env).unwrap_err().to_string();
            assert!(error.starts_with(expected), "{error}\nexpected: {expected}");
        }
    }

    #[test]
    fn expansion_keeps_a_lone_dollar_and_refuses_an_unclosed_brace() {
        assert_eq!(expand("$5 and ${TOKEN}!", &env).unwrap(), "$5 and s3cret!");
        assert!(expand("${TOKEN", &env).unwrap_err().contains("never closed"));
        assert!(expand("${}", &env).unwrap_err().contains("does not name"));
    }

    proptest::proptest! {
        #[test]
        fn text_without_a_variable_is_unchanged(text in "[^$]{0,60}") {
            proptest::prop_assert_eq!(expand(&text, &env).unwrap(), text);
        }

        #[test]
        fn a_default_is_used_exactly_when_the_variable_is_unset(default in "[a-z0-9 ./-]{0,20}") {
            let unset = format!("${{NOPE:-{default}}}");
            let set = format!("${{TOKEN:-{default}}}");
            proptest::prop_assert_eq!(expand(&unset, &env).unwrap(), default);
            proptest::prop_assert_eq!(expand(&set, &env).unwrap(), "s3cret");
        }
    }
}
