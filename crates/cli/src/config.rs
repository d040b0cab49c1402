//! The effective configuration: flags, then environment, then `config.json`,
//! then defaults, with the source of every value kept so `seri config` can say
//! where each one came from.
//!
//! Parsing `config.json` is strict (unknown keys are refused with the key's
//! name): a typo such as `"stratgy"` silently falling back to a default is
//! the kind of bug that costs an afternoon.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use seri_prompt::ContextStrategy;
use seri_providers::{ProviderConfig, ReasoningEffort};

/// The default turn budget per task.
pub(crate) const DEFAULT_MAX_TURNS: u32 = 500;

/// The default compaction keep budget, in tokens.
pub(crate) const DEFAULT_KEEP_TOKENS: u64 = 20_000;

/// `config.json` as written by a person. Every field is optional.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ConfigFile {
    /// Provider type: `anthropic`, `openai`, `openrouter`, `ollama`, `openai-compatible`, `script`.
    pub(crate) provider: Option<String>,
    /// The model id.
    pub(crate) model: Option<String>,
    /// Per-provider settings, by provider type: base URL, key variable,
    /// OpenRouter's provider pin.
    #[serde(default)]
    pub(crate) providers: BTreeMap<String, ProviderConfig>,
    /// Context management.
    #[serde(default)]
    pub(crate) context: ContextConfig,
    /// Turn budget per task.
    pub(crate) max_turns: Option<u32>,
    /// Sampling temperature, 0 to 2.
    pub(crate) temperature: Option<f64>,
    /// Nucleus sampling, above 0 and at most 1.
    pub(crate) top_p: Option<f64>,
    /// The most output tokens one response may take.
    pub(crate) max_output_tokens: Option<u32>,
    /// `minimal`, `low`, `medium` or `high`, for models that reason.
    pub(crate) reasoning_effort: Option<String>,
    /// Tool permissions: `{"bash": "allow", "edit": "deny"}`.
    pub(crate) permissions: Option<serde_json::Value>,
    /// Commands run around tool calls, prompts and turn ends, in Claude
    /// Code's `hooks` shape.
    pub(crate) hooks: Option<serde_json::Value>,
    /// Trajectory recording.
    #[serde(default)]
    pub(crate) trajectories: TrajectoriesConfig,
    /// Child runs started with the `delegate` tool.
    #[serde(default)]
    pub(crate) subagents: SubagentsConfig,
    /// MCP servers whose tools sessions get, in Claude Code's `.mcp.json` shape.
    pub(crate) mcp_servers: Option<serde_json::Value>,
    /// What models cost, by `provider/model`, for `/cost`: seri keeps no
    /// price list of its own, since prices change.
    #[serde(default)]
    pub(crate) prices: BTreeMap<String, Price>,
    /// Where sessions are kept (the profile's `seri.db` unless it says otherwise).
    #[serde(default)]
    pub(crate) store: StoreConfig,
    /// What the commands seri runs may reach, and which secrets they see.
    #[serde(default)]
    pub(crate) sandbox: crate::sandbox::SandboxConfig,
    /// How long sessions are kept: none pruned without it.
    pub(crate) retention: Option<RetentionConfig>,
    /// `seri serve`'s settings.
    #[serde(default)]
    pub(crate) serve: ServeConfig,
    /// A command whose first line the REPL shows before each prompt, in
    /// Claude Code's `statusLine` shape.
    pub(crate) status_line: Option<StatusLineConfig>,
}

/// `statusLine` in `config.json`: `{"type": "command", "command": "…"}`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct StatusLineConfig {
    /// `command`, the only kind.
    #[serde(rename = "type")]
    pub(crate) kind: StatusLineKind,
    /// Run with `sh -c`, as a hook is.
    pub(crate) command: String,
    /// Claude Code's spaces before the line; accepted, and seri indents by it.
    pub(crate) padding: Option<u16>,
}

/// The kinds of status line: a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum StatusLineKind {
    /// A command's first line.
    Command,
}

/// `serve` in `config.json`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ServeConfig {
    /// How many connections `seri serve` serves at once (`--max-connections`
    /// over it; by default what the descriptor limit leaves room for).
    pub(crate) max_connections: Option<u64>,
}

/// `retention` in `config.json`: whole lineages older than `days`, then
/// the oldest until what sessions hold fits `maxBytes`, are pruned (see
/// `seri store prune`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct RetentionConfig {
    /// Lineages whose newest session last changed more than this many days ago go.
    pub(crate) days: Option<u32>,
    /// Then the oldest lineages go until sessions hold at most this many bytes.
    pub(crate) max_bytes: Option<u64>,
}

/// `store` in `config.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct StoreConfig {
    /// `sqlite:` (the profile's `seri.db`), `sqlite:PATH`, or `postgres://…`.
    pub(crate) url: Option<String>,
}

/// The environment variable that names the store, over `store.url`.
pub(crate) const STORE_URL_ENV: &str = "SERI_STORE_URL";

/// The store URL in force: `SERI_STORE_URL`, else `store.url` of the
/// profile's `config.json`, else none (the profile's `seri.db`).
///
/// `env` reads the variable as it is set, empty or not: a
/// `SERI_STORE_URL` set but empty is an error naming it (a script that
/// meant a database must not quietly get the profile's SQLite file), and
/// one seri cannot use is refused naming it too.
pub(crate) fn store_url(
    env: &dyn Fn(&str) -> Option<String>,
    file: &ConfigFile,
) -> Result<Sourced<Option<String>>, String> {
    if let Some(url) = env(STORE_URL_ENV) {
        if url.trim().is_empty() {
            return Err(format!(
                "{STORE_URL_ENV} is set but empty: set it to `sqlite:` (the profile's seri.db), `sqlite:PATH` or \
                 `postgres://…`, or unset it to use config.json's store.url or the profile's seri.db"
            ));
        }
        seri_store::StoreUrl::parse(Some(&url)).map_err(|e| format!("{STORE_URL_ENV}: {e}"))?;
        return Ok(Sourced { value: Some(url), origin: Origin::Env(STORE_URL_ENV) });
    }
    Ok(match file.store.url.clone().filter(|u| !u.trim().is_empty()) {
        Some(url) => Sourced { value: Some(url), origin: Origin::File("store.url") },
        None => Sourced { value: None, origin: Origin::Default },
    })
}

/// A model's price in a currency per million tokens (`prices` in `config.json`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Price {
    /// Input tokens not read from the cache.
    pub(crate) input: f64,
    /// Output tokens.
    pub(crate) output: f64,
    /// Input tokens read from the cache (default: the input price).
    pub(crate) cache_read: Option<f64>,
    /// Input tokens written to the cache (default: the input price).
    pub(crate) cache_write: Option<f64>,
}

impl Price {
    /// What `usage` cost.
    pub(crate) fn of(&self, usage: &seri_core::Usage) -> f64 {
        let per = |tokens: u64, price: f64| tokens as f64 * price / 1_000_000.0;
        per(usage.input, self.input)
            + per(usage.cache_read, self.cache_read.unwrap_or(self.input))
            + per(usage.cache_write, self.cache_write.unwrap_or(self.input))
            + per(usage.output, self.output)
    }
}

/// The `subagents` object of `config.json`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct SubagentsConfig {
    /// Each child's turn budget (default 25), whatever the parent's.
    pub(crate) max_turns: Option<u32>,
    /// How many children of one turn run at once (default 3).
    pub(crate) parallel: Option<usize>,
    /// How deep delegation may nest (default 1: children never delegate).
    pub(crate) max_depth: Option<u32>,
}

/// The `trajectories` object of `config.json`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct TrajectoriesConfig {
    /// Days a recording is kept after its session's newest record
    /// (default `seri_store::DEFAULT_RETENTION_DAYS`, 30).
    pub(crate) retention_days: Option<u32>,
}

/// The `context` object of `config.json`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ContextConfig {
    /// `continue` or `compact`.
    pub(crate) strategy: Option<String>,
    /// Overrides the model's context window, in tokens.
    pub(crate) window: Option<u64>,
    /// Compaction's keep budget, in tokens.
    pub(crate) keep_tokens: Option<u64>,
}

/// Why `config.json` could not be used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConfigError {
    /// The file exists but could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The file is not valid configuration.
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong, with line and column.
        message: String,
    },
    /// A setting holds a value that is not valid for it.
    #[error("{origin} is {value:?}, which is not valid: expected {expected}")]
    Invalid {
        /// Where the value came from (`environment SERI_MAX_TURNS`, `config.json context.strategy`).
        origin: String,
        /// The value.
        value: String,
        /// What it should be.
        expected: &'static str,
    },
}

/// What is wrong with a configuration file, for a person: the key (as a
/// path, `context.strategy`) and what is wrong with it, in words, then
/// where in the file; never the parser's own terms (`invalid type`,
/// `field`, `struct`).
fn problem(error: &serde_path_to_error::Error<serde_json::Error>) -> String {
    let inner = error.inner();
    let at = format!("(line {}, column {})", inner.line(), inner.column());
    if inner.is_syntax() || inner.is_eof() {
        return format!("not valid JSON {at}");
    }
    let said = inner.to_string();
    let said = said.rsplit_once(" at line ").map_or(said.as_str(), |(message, _)| message);
    let key = error.path().to_string();
    let (key, what) = if let Some(rest) = said.strip_prefix("unknown field `") {
        let (name, known) = rest.split_once('`').unwrap_or((rest, ""));
        let known = known.trim_start_matches(", expected one of ").trim_start_matches(", expected ").replace('`', "");
        // The path names the unknown key already.
        let full = if key == "." { name.to_owned() } else { key };
        let hint = if known.is_empty() || known == "there are no fields" {
            String::new()
        } else {
            format!("; the settings here are {known}")
        };
        (full, format!("is not a setting{hint}"))
    } else if let Some(rest) = said.strip_prefix("missing field `") {
        let name = rest.trim_end_matches('`');
        let full = if key == "." || key.ends_with(name) { name.to_owned() } else { format!("{key}.{name}") };
        (full, "is required here".to_owned())
    } else if let Some(rest) = said.strip_prefix("invalid type: ") {
        let (found, expected) = rest.split_once(", expected ").unwrap_or((rest, "something else"));
        (key, format!("is {}; expected {}", found_in_words(found), expected_in_words(expected)))
    } else if let Some(rest) = said.strip_prefix("invalid value: ") {
        let (found, expected) = rest.split_once(", expected ").unwrap_or((rest, "something else"));
        (key, format!("is {}; expected {}", found_in_words(found), expected_in_words(expected)))
    } else if let Some(rest) = said.strip_prefix("invalid length ") {
        // A list where an object of fixed fields was expected.
        let (_, expected) = rest.split_once(", expected ").unwrap_or((rest, "something else"));
        (key, format!("is a list; expected {}", expected_in_words(expected)))
    } else if let Some(rest) = said.strip_prefix("unknown variant `") {
        let (value, known) = rest.split_once('`').unwrap_or((rest, ""));
        let known = known.trim_start_matches(", expected one of ").trim_start_matches(", expected ").replace('`', "");
        (key, format!("is \"{value}\"; expected {known}"))
    } else {
        (key, said.to_owned())
    };
    let what = what.replace("struct ", "").replace("a map", "an object").replace("map", "object");
    if key == "." { format!("{what} {at}") } else { format!("{key} {what} {at}") }
}

/// What the parser found, in words: `string "x"` is `the text "x"`,
/// ``integer `3` `` is `the number 3`.
fn found_in_words(found: &str) -> String {
    let quoted = |rest: &str| rest.trim_matches('`').to_owned();
    if let Some(text) = found.strip_prefix("string ") {
        format!("the text {text}")
    } else if let Some(n) = found.strip_prefix("integer ").or_else(|| found.strip_prefix("floating point ")) {
        format!("the number {}", quoted(n))
    } else if let Some(b) = found.strip_prefix("boolean ") {
        quoted(b)
    } else {
        match found {
            "map" => "an object".to_owned(),
            "sequence" => "a list".to_owned(),
            "unit value" | "null" => "null".to_owned(),
            other => other.to_owned(),
        }
    }
}

/// What the parser expected, in words: never a Rust type's name.
fn expected_in_words(expected: &str) -> String {
    let whole = |max: u64| format!("a whole number from 0 to {max}");
    match expected {
        "u8" => whole(u64::from(u8::MAX)),
        "u16" => whole(u64::from(u16::MAX)),
        "u32" => whole(u64::from(u32::MAX)),
        "u64" | "usize" => "a whole number, 0 or more".to_owned(),
        "i8" | "i16" | "i32" | "i64" | "isize" => "a whole number".to_owned(),
        "f32" | "f64" => "a number".to_owned(),
        "a sequence" => "a list".to_owned(),
        "a map" => "an object".to_owned(),
        other if other.starts_with("struct ") || other.contains(" with ") => "an object".to_owned(),
        other => other.to_owned(),
    }
}

impl ConfigFile {
    /// Reads `config.json`; a missing file is an empty configuration.
    pub(crate) fn load(path: &Path) -> Result<ConfigFile, ConfigError> {
        match std::fs::read_to_string(path) {
            Ok(text) => Self::parse(path, &text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(ConfigFile::default()),
            Err(source) => Err(ConfigError::Read { path: path.to_owned(), source }),
        }
    }

    /// Parses configuration text; `path` only names the file in errors.
    ///
    /// Every object refuses keys it does not know, by name: serde does it
    /// for fixed fields; the maps (providers by type, permissions by tool)
    /// and the counts that must not be zero are checked here, so a typo is
    /// an error at any command, never a setting silently ignored.
    pub(crate) fn parse(path: &Path, text: &str) -> Result<ConfigFile, ConfigError> {
        let bad = |message: String| ConfigError::Parse { path: path.to_owned(), message };
        let file: ConfigFile = serde_path_to_error::deserialize(&mut serde_json::Deserializer::from_str(text))
            .map_err(|e| bad(problem(&e)))?;
        for name in file.providers.keys() {
            if name.parse::<seri_providers::ProviderKind>().is_err() {
                let known: Vec<&str> = seri_providers::ProviderKind::ALL.iter().map(|k| k.as_str()).collect();
                return Err(bad(format!("providers.{name}: not a provider; expected one of: {}", known.join(", "))));
            }
        }
        if let Some(url) = &file.store.url {
            seri_store::StoreUrl::parse(Some(url)).map_err(|e| bad(format!("store.url: {e}")))?;
        }
        if let Some(servers) = &file.mcp_servers {
            // The shape is checked now; `${VAR}`s are read when servers start.
            seri_mcp::parse_servers(servers, "mcpServers", &|_| Some(String::new())).map_err(|e| bad(e.to_string()))?;
        }
        if let Some(permissions) = &file.permissions {
            seri_tools::PermissionPolicy::from_config(permissions).map_err(|e| bad(e.to_string()))?;
        }
        if let Some(hooks) = &file.hooks {
            seri_runloop::shell_hooks::Hooks::from_config(hooks).map_err(|e| bad(e.to_string()))?;
        }
        if file.subagents.parallel == Some(0) {
            return Err(bad("subagents.parallel is 0: at least 1 child must be able to run at a time".to_owned()));
        }
        if file.subagents.max_turns == Some(0) {
            return Err(bad("subagents.maxTurns is 0: a child needs at least 1 turn to answer".to_owned()));
        }
        Ok(file)
    }
}

/// Where an effective value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Origin {
    /// A command-line flag.
    Flag(&'static str),
    /// An environment variable.
    Env(&'static str),
    /// `config.json`, at a key path.
    File(&'static str),
    /// A trusted project's `.seri/config.json`, at a key path.
    Project(&'static str),
    /// No provider chosen: the first key found in the environment chose it.
    KeyFound(&'static str),
    /// Asked of the model's server (and remembered in the profile), at
    /// this place (`llama.cpp /props`, …).
    Server(&'static str),
    /// Built in.
    Default,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Flag(flag) => write!(f, "flag {flag}"),
            Origin::Env(var) => write!(f, "environment {var}"),
            Origin::File(key) => write!(f, "config.json {key}"),
            Origin::Project(key) => write!(f, "project .seri/config.json {key}"),
            Origin::KeyFound(var) => write!(f, "default: the first key found, {var}"),
            Origin::Server(place) => write!(f, "the server ({place}), remembered in {}", crate::server_window::FILE),
            Origin::Default => f.write_str("default"),
        }
    }
}

/// A value and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sourced<T> {
    /// The value in force.
    pub(crate) value: T,
    /// Where it came from.
    pub(crate) origin: Origin,
}

/// Settings a person can give on the command line.
#[derive(Debug, Clone, Default)]
pub(crate) struct FlagSettings {
    /// `--provider`.
    pub(crate) provider: Option<String>,
    /// `--model`.
    pub(crate) model: Option<String>,
    /// `--context-strategy`.
    pub(crate) context_strategy: Option<ContextStrategy>,
    /// `--context-window`.
    pub(crate) context_window: Option<u64>,
    /// `--max-turns`.
    pub(crate) max_turns: Option<u32>,
    /// `--temperature`.
    pub(crate) temperature: Option<f64>,
    /// `--top-p`.
    pub(crate) top_p: Option<f64>,
    /// `--max-output-tokens`.
    pub(crate) max_output_tokens: Option<u32>,
    /// `--reasoning-effort`.
    pub(crate) reasoning_effort: Option<String>,
}

/// The configuration in force, every value with its origin.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Effective {
    /// Provider type.
    pub(crate) provider: Sourced<String>,
    /// Model id; `None` means the provider's default.
    pub(crate) model: Sourced<Option<String>>,
    /// Context strategy.
    pub(crate) context_strategy: Sourced<ContextStrategy>,
    /// Context window override; `None` means the model table.
    pub(crate) context_window: Sourced<Option<u64>>,
    /// Compaction keep budget.
    pub(crate) keep_tokens: Sourced<u64>,
    /// Turn budget per task.
    pub(crate) max_turns: Sourced<u32>,
    /// Sampling temperature; `None`: the provider's default.
    pub(crate) temperature: Sourced<Option<f64>>,
    /// Top-p; `None`: the provider's default.
    pub(crate) top_p: Sourced<Option<f64>>,
    /// Output cap per response; `None`: the provider's default.
    pub(crate) max_output_tokens: Sourced<Option<u32>>,
    /// Reasoning effort; `None`: the model's default.
    pub(crate) reasoning_effort: Sourced<Option<ReasoningEffort>>,
    /// One line per setting that the environment overrides against the
    /// config file, for seri to print.
    pub(crate) overridden: Vec<String>,
}

/// Resolves flags, environment (through `env`), and the config file.
pub(crate) fn resolve(
    flags: &FlagSettings,
    env: &dyn Fn(&str) -> Option<String>,
    file: &ConfigFile,
) -> Result<Effective, ConfigError> {
    let mut overridden = Vec::new();
    let mut pick = |flag: (&'static str, Option<String>),
                    var: &'static str,
                    key: &'static str,
                    from_file: Option<String>|
     -> Option<Sourced<String>> {
        let from_env = env(var).filter(|v| !v.is_empty());
        if let (Some(env_value), Some(file_value)) = (&from_env, &from_file)
            && env_value != file_value
        {
            overridden.push(format!("{var}={env_value} overrides config.json {key}={file_value}"));
        }
        if let Some(value) = flag.1 {
            return Some(Sourced { value, origin: Origin::Flag(flag.0) });
        }
        if let Some(value) = from_env {
            return Some(Sourced { value, origin: Origin::Env(var) });
        }
        from_file.map(|value| Sourced { value, origin: Origin::File(key) })
    };

    let provider = pick(("--provider", flags.provider.clone()), "SERI_PROVIDER", "provider", file.provider.clone());
    let model = pick(("--model", flags.model.clone()), "SERI_MODEL", "model", file.model.clone());
    let strategy = pick(
        ("--context-strategy", flags.context_strategy.map(|s| s.to_string())),
        "SERI_CONTEXT_STRATEGY",
        "context.strategy",
        file.context.strategy.clone(),
    );
    let window = pick(
        ("--context-window", flags.context_window.map(|n| n.to_string())),
        "SERI_CONTEXT_WINDOW",
        "context.window",
        file.context.window.map(|n| n.to_string()),
    );
    let keep = pick(
        ("--keep-tokens", None),
        "SERI_KEEP_TOKENS",
        "context.keepTokens",
        file.context.keep_tokens.map(|n| n.to_string()),
    );
    let max_turns = pick(
        ("--max-turns", flags.max_turns.map(|n| n.to_string())),
        "SERI_MAX_TURNS",
        "maxTurns",
        file.max_turns.map(|n| n.to_string()),
    );

    let temperature = pick(
        ("--temperature", flags.temperature.map(|n| n.to_string())),
        "SERI_TEMPERATURE",
        "temperature",
        file.temperature.map(|n| n.to_string()),
    );
    let top_p =
        pick(("--top-p", flags.top_p.map(|n| n.to_string())), "SERI_TOP_P", "topP", file.top_p.map(|n| n.to_string()));
    let max_output_tokens = pick(
        ("--max-output-tokens", flags.max_output_tokens.map(|n| n.to_string())),
        "SERI_MAX_OUTPUT_TOKENS",
        "maxOutputTokens",
        file.max_output_tokens.map(|n| n.to_string()),
    );
    let reasoning_effort = pick(
        ("--reasoning-effort", flags.reasoning_effort.clone()),
        "SERI_REASONING_EFFORT",
        "reasoningEffort",
        file.reasoning_effort.clone(),
    );

    let provider = provider.unwrap_or_else(|| {
        let (value, found) = default_provider(env);
        Sourced { value, origin: found.map_or(Origin::Default, Origin::KeyFound) }
    });
    let context_strategy = match strategy {
        Some(s) => Sourced { value: parse_strategy(&s)?, origin: s.origin },
        None => Sourced { value: ContextStrategy::Continue, origin: Origin::Default },
    };
    let context_window = match window {
        Some(w) => Sourced { value: Some(parse_number(&w, "a positive number of tokens")?), origin: w.origin },
        None => Sourced { value: None, origin: Origin::Default },
    };
    let keep_tokens = match keep {
        Some(k) => Sourced { value: parse_number(&k, "a positive number of tokens")?, origin: k.origin },
        None => Sourced { value: DEFAULT_KEEP_TOKENS, origin: Origin::Default },
    };
    let max_turns = match max_turns {
        Some(m) => Sourced { value: parse_number(&m, "a positive number of turns")?, origin: m.origin },
        None => Sourced { value: DEFAULT_MAX_TURNS, origin: Origin::Default },
    };
    let temperature = parse_optional(temperature, |s| parse_fraction(s, 0.0..=2.0, "a number from 0 to 2"))?;
    let top_p = parse_optional(top_p, |s| match parse_fraction(s, 0.0..=1.0, "a number above 0, at most 1")? {
        0.0 => Err(invalid(s, "a number above 0, at most 1")),
        p => Ok(p),
    })?;
    let max_output_tokens = parse_optional(max_output_tokens, |s| parse_number(s, "a positive number of tokens"))?;
    let reasoning_effort = parse_optional(reasoning_effort, parse_effort)?;
    Ok(Effective {
        provider,
        model: optional(model),
        context_strategy,
        context_window,
        keep_tokens,
        max_turns,
        temperature,
        top_p,
        max_output_tokens,
        reasoning_effort,
        overridden,
    })
}

/// An optional setting: parsed where it was set, else the default `None`.
fn parse_optional<T>(
    value: Option<Sourced<String>>,
    parse: impl Fn(&Sourced<String>) -> Result<T, ConfigError>,
) -> Result<Sourced<Option<T>>, ConfigError> {
    Ok(match value {
        Some(s) => Sourced { value: Some(parse(&s)?), origin: s.origin },
        None => Sourced { value: None, origin: Origin::Default },
    })
}

fn parse_fraction(
    s: &Sourced<String>,
    range: std::ops::RangeInclusive<f64>,
    expected: &'static str,
) -> Result<f64, ConfigError> {
    match s.value.parse::<f64>() {
        Ok(n) if range.contains(&n) => Ok(n),
        _ => Err(invalid(s, expected)),
    }
}

fn parse_effort(s: &Sourced<String>) -> Result<ReasoningEffort, ConfigError> {
    match s.value.as_str() {
        "minimal" => Ok(ReasoningEffort::Minimal),
        "low" => Ok(ReasoningEffort::Low),
        "medium" => Ok(ReasoningEffort::Medium),
        "high" => Ok(ReasoningEffort::High),
        _ => Err(invalid(s, "minimal, low, medium or high")),
    }
}

fn optional(value: Option<Sourced<String>>) -> Sourced<Option<String>> {
    match value {
        Some(s) => Sourced { value: Some(s.value), origin: s.origin },
        None => Sourced { value: None, origin: Origin::Default },
    }
}

/// With no provider chosen, the first key found in the environment picks
/// one (and the variable that did); with none, `anthropic`.
fn default_provider(env: &dyn Fn(&str) -> Option<String>) -> (String, Option<&'static str>) {
    let has = |var: &str| env(var).is_some_and(|v| !v.is_empty());
    for (var, provider) in
        [("ANTHROPIC_API_KEY", "anthropic"), ("OPENAI_API_KEY", "openai"), ("OPENROUTER_API_KEY", "openrouter")]
    {
        if has(var) {
            return (provider.to_owned(), Some(var));
        }
    }
    ("anthropic".to_owned(), None)
}

/// The settings a trusted project's `.seri/config.json` set (`project`,
/// its top-level object) are said to come from there, not from the
/// profile's `config.json` it was merged over.
pub(crate) fn mark_project(effective: &mut Effective, project: &serde_json::Map<String, serde_json::Value>) {
    fn mark(origin: &mut Origin, project: &serde_json::Map<String, serde_json::Value>) {
        let Origin::File(key) = *origin else { return };
        let mut path = key.split('.');
        let first = path.next().and_then(|k| project.get(k));
        if path.try_fold(first, |value, k| Some(value?.get(k))).flatten().is_some() {
            *origin = Origin::Project(key);
        }
    }
    let e = effective;
    for origin in [
        &mut e.provider.origin,
        &mut e.model.origin,
        &mut e.context_strategy.origin,
        &mut e.context_window.origin,
        &mut e.keep_tokens.origin,
        &mut e.max_turns.origin,
        &mut e.temperature.origin,
        &mut e.top_p.origin,
        &mut e.max_output_tokens.origin,
        &mut e.reasoning_effort.origin,
    ] {
        mark(origin, project);
    }
}

fn parse_strategy(s: &Sourced<String>) -> Result<ContextStrategy, ConfigError> {
    s.value.parse().map_err(|_| invalid(s, "continue or compact"))
}

fn parse_number<T: std::str::FromStr + PartialOrd + From<u8>>(
    s: &Sourced<String>,
    expected: &'static str,
) -> Result<T, ConfigError> {
    match s.value.parse::<T>() {
        Ok(n) if n > T::from(0) => Ok(n),
        _ => Err(invalid(s, expected)),
    }
}

fn invalid(s: &Sourced<String>, expected: &'static str) -> ConfigError {
    ConfigError::Invalid { origin: s.origin.to_string(), value: s.value.clone(), expected }
}

/// The keep budget in force, and its reason.
fn keep_row(effective: &Effective, window: u64) -> (String, String, String) {
    use seri_projection::compaction::{KEEP_MAX_WINDOW_PERCENT, KeepReason, keep_budget};
    let asked = &effective.keep_tokens;
    let (used, reason) = keep_budget(window, asked.value, asked.origin != Origin::Default);
    let origin = match reason {
        KeepReason::Chosen | KeepReason::Default => asked.origin.to_string(),
        KeepReason::CutToWindow => format!(
            "default {}, cut to {KEEP_MAX_WINDOW_PERCENT}% of the {window}-token window so compaction can free something",
            asked.value
        ),
    };
    ("context.keepTokens".to_owned(), used.to_string(), origin)
}

/// Renders the effective configuration for `seri config`: one line per
/// setting, its value, and where the value came from; `extra` rows
/// (setting, value, origin) are settings kept elsewhere, such as the
/// stored `/trajectory` toggle.
///
/// `window` is the context window in force: the keep budget is shown as the
/// one used, with why (a chosen one as given, the default cut to a quarter
/// of a small window).
pub(crate) fn render(effective: &Effective, window: u64, extra: &[(String, String, String)]) -> String {
    fn show<T: fmt::Display>(value: &Option<T>, unset: &str) -> String {
        value.as_ref().map_or_else(|| unset.to_owned(), T::to_string)
    }
    let row = |key: &str, value: String, origin: &Origin| (key.to_owned(), value, origin.to_string());
    // The model in force is named, the provider's default too.
    let provider = &effective.provider.value;
    let model = match &effective.model.value {
        Some(model) => row("model", model.clone(), &effective.model.origin),
        None => match provider.parse::<seri_providers::ProviderKind>() {
            // A provider with no default model (a script answers as written;
            // an OpenAI-compatible server serves the one it loaded) says so.
            Ok(kind) if default_model(kind).is_empty() => (
                "model".to_owned(),
                "(none: the provider answers with its own)".to_owned(),
                format!("default for {provider}"),
            ),
            Ok(kind) => ("model".to_owned(), default_model(kind).to_owned(), format!("default for {provider}")),
            Err(_) => row("model", "(the provider's default)".to_owned(), &effective.model.origin),
        },
    };
    let mut rows = vec![
        row("provider", provider.clone(), &effective.provider.origin),
        model,
        row("context.strategy", effective.context_strategy.value.to_string(), &effective.context_strategy.origin),
        row("context.window", show(&effective.context_window.value, "(the model's)"), &effective.context_window.origin),
        keep_row(effective, window),
        row("maxTurns", effective.max_turns.value.to_string(), &effective.max_turns.origin),
        row(
            "temperature",
            show(&effective.temperature.value, "(the provider's default)"),
            &effective.temperature.origin,
        ),
        row("topP", show(&effective.top_p.value, "(the provider's default)"), &effective.top_p.origin),
        row(
            "maxOutputTokens",
            show(&effective.max_output_tokens.value, "(the provider's default)"),
            &effective.max_output_tokens.origin,
        ),
        row(
            "reasoningEffort",
            show(&effective.reasoning_effort.value.map(ReasoningEffort::as_str), "(the model's default)"),
            &effective.reasoning_effort.origin,
        ),
    ];
    rows.extend(extra.iter().cloned());
    let key_width = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    let value_width = rows.iter().map(|r| r.1.chars().count()).max().unwrap_or(0);
    let mut lines: Vec<String> =
        rows.iter().map(|(k, v, o)| format!("{k:<key_width$}  {v:<value_width$}  ({o})")).collect();
    lines.extend(effective.overridden.iter().cloned());
    lines.join("\n")
}

/// The model each provider uses when none is configured.
pub(crate) fn default_model(kind: seri_providers::ProviderKind) -> &'static str {
    match kind {
        seri_providers::ProviderKind::Anthropic => "claude-sonnet-4-5",
        seri_providers::ProviderKind::OpenAi => "gpt-4.1",
        seri_providers::ProviderKind::OpenRouter => "anthropic/claude-sonnet-4.5",
        seri_providers::ProviderKind::Ollama => "llama3.1",
        seri_providers::ProviderKind::OpenAiCompatible | seri_providers::ProviderKind::Script => "",
    }
}

/// The variable a server token is taken from (`seri serve`, and the
/// secrets bash never sees).
pub(crate) const SERVER_TOKEN_ENV: &str = "SERI_SERVER_TOKEN";

#[cfg(test)]
mod tests;
