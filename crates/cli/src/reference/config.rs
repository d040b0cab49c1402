//! `docs/src/reference/config.md`: every key of `config.json` (and of a
//! project's `.seri/config.json`), with its type, default and meaning.
//!
//! The types do not carry their doc comments at run time, so the words are
//! the table [`KEYS`] here, beside the types' own field lists: serde names
//! every field a struct takes when it refuses an unknown one, and the test
//! asks each configuration type for that list and compares it with the
//! table, so a key added to a type without a line here (or a line for a
//! key that is gone) fails. The keys of the free-form objects are checked
//! the same way against what their parsers accept: `mcpServers` entries
//! (the MCP crate's list of keys), `permissions` (the gated tools), `hooks`
//! (the events).

use std::collections::BTreeSet;

use serde::de::DeserializeOwned;

use super::{cell, check_fresh, header};

/// One key: where it is, what it holds, its default, what it does.
struct Key {
    path: &'static str,
    kind: &'static str,
    default: &'static str,
    meaning: &'static str,
}

const fn key(path: &'static str, kind: &'static str, default: &'static str, meaning: &'static str) -> Key {
    Key { path, kind, default, meaning }
}

/// Every key, in the order the page lists them. `NAME`, `MODEL`, `SERVER`,
/// `TOOL` and `EVENT` stand for names you choose (or the list says).
const KEYS: &[Key] = &[
    key(
        "provider",
        "string",
        "the first key found: `ANTHROPIC_API_KEY`, then `OPENAI_API_KEY`, then `OPENROUTER_API_KEY`",
        "The provider: `anthropic`, `openai`, `openrouter`, `ollama`, `openai-compatible`, `script`. Flag `--provider`, environment `SERI_PROVIDER`.",
    ),
    key(
        "model",
        "string",
        "the provider's: `claude-sonnet-4-5`, `gpt-4.1`, `anthropic/claude-sonnet-4.5`, `llama3.1` for Ollama",
        "The model id. Flag `--model`, environment `SERI_MODEL`.",
    ),
    key(
        "maxTurns",
        "whole number",
        "500",
        "Model turns per task; running out exits 1. Flag `--max-turns`, environment `SERI_MAX_TURNS`, `/max-turns` for the rest of a session.",
    ),
    key(
        "temperature",
        "number, 0 to 2",
        "unset: the provider's",
        "Sampling temperature, sent with every request of the conversation. Flag `--temperature`, environment `SERI_TEMPERATURE`.",
    ),
    key(
        "topP",
        "number, above 0 and at most 1",
        "unset: the provider's",
        "Nucleus sampling. Flag `--top-p`, environment `SERI_TOP_P`.",
    ),
    key(
        "maxOutputTokens",
        "whole number",
        "unset: the provider's",
        "The most output tokens one response may take. Flag `--max-output-tokens`, environment `SERI_MAX_OUTPUT_TOKENS`.",
    ),
    key(
        "reasoningEffort",
        "`minimal`, `low`, `medium` or `high`",
        "unset: the provider's",
        "For models that reason: Anthropic's thinking budget (1024, 4096, 10000 or 32000 tokens), OpenAI's `reasoning_effort` (`reasoning.effort` on the Responses API), OpenRouter's `reasoning.effort`. Flag `--reasoning-effort`, environment `SERI_REASONING_EFFORT`.",
    ),
    key("context", "object", "", "Context management: the keys below."),
    key(
        "context.strategy",
        "`continue` or `compact`",
        "`continue`",
        "How the working context is kept right ([Context strategies](../guide/context-strategies.md)). Flag `--context-strategy`, environment `SERI_CONTEXT_STRATEGY`.",
    ),
    key(
        "context.window",
        "whole number of tokens",
        "the model's (a local server's is asked of the server)",
        "Overrides the model's context window. Flag `--context-window`, environment `SERI_CONTEXT_WINDOW`.",
    ),
    key(
        "context.keepTokens",
        "whole number of tokens",
        "20000, cut to a quarter of a smaller window",
        "On the compact strategy, about how much of the newest context a compaction keeps; one at or past the 50% trigger is refused. Environment `SERI_KEEP_TOKENS`.",
    ),
    key(
        "providers",
        "object, by provider type",
        "",
        "Each provider's settings: the keys below, under its type (`openai-compatible`, `openrouter`, …).",
    ),
    key(
        "providers.NAME.baseUrl",
        "string (URL)",
        "the provider's (`http://127.0.0.1:11434/v1` for `ollama`)",
        "The base URL, e.g. `http://127.0.0.1:8000/v1` for a vLLM server.",
    ),
    key("providers.NAME.apiKey", "string", "", "The API key itself. Prefer the environment or `apiKeyEnv`."),
    key(
        "providers.NAME.apiKeyEnv",
        "string",
        "the provider's standard variable",
        "The environment variable to read the key from (the only way to give `openai-compatible` a key from the environment; one that is unset sends none).",
    ),
    key("providers.NAME.pin", "object", "", "OpenRouter only: the provider pin, the keys below."),
    key(
        "providers.NAME.pin.order",
        "list of strings",
        "",
        "Upstream providers (`\"anthropic\"`, `\"deepinfra/fp8\"`, …), preferred first.",
    ),
    key(
        "providers.NAME.pin.allowFallbacks",
        "boolean",
        "`false`",
        "Whether OpenRouter may fall back to providers not in `order`.",
    ),
    key(
        "providers.NAME.api",
        "`chat-completions` or `responses`",
        "`chat-completions`",
        "The OpenAI wire format, for OpenAI-compatible provider types only; `responses` keeps a reasoning model's reasoning across tool calls.",
    ),
    key(
        "providers.NAME.images",
        "boolean",
        "`true` for `anthropic`, `openai`, `openrouter`, `script`; `false` for `ollama`, `openai-compatible`",
        "Whether pictures are sent as images; when not, the model reads a short note in each picture's place.",
    ),
    key(
        "permissions",
        "object",
        "reading allowed; writes, edits, commands and `remember` ask",
        "What each tool may do without asking: the keys below ([Tools and permissions](../guide/tools-and-permissions.md)).",
    ),
    key(
        "permissions.mode",
        "`default`, `accept-edits`, `plan` or `bypass`",
        "`default`",
        "The permission mode sessions start in (Claude Code's `defaultMode`, `acceptEdits` and `bypassPermissions` are read too). Flag `--permission-mode`.",
    ),
    key("permissions.defaultMode", "string", "", "Claude Code's name of `mode`, read as it."),
    key(
        "permissions.allow",
        "list of rules",
        "",
        "Rules that run without asking: a tool's name (`Edit`, `Read`, `Write`, `Bash`, `Grep`, `Glob`, or seri's), or a command pattern `Bash(git log *)`. Flag `--allow`.",
    ),
    key("permissions.ask", "list of rules", "", "Rules that ask, as `allow`."),
    key("permissions.deny", "list of rules", "", "Rules that refuse, even with `--yes` or in bypass. Flag `--deny`."),
    key(
        "permissions.TOOL",
        "`allow`, `ask` or `deny`",
        "see the list below",
        "One tool's setting, by seri's name or an MCP tool's (`mcp__SERVER__TOOL`, `mcp__SERVER__*`; MCP tools ask by default).",
    ),
    key(
        "hooks",
        "object, by event",
        "",
        "Commands run around tool calls, prompts and turn ends, in Claude Code's shape ([Hooks](../guide/hooks.md), [hook events](hooks.md)).",
    ),
    key(
        "hooks.EVENT",
        "list of `{\"matcher\", \"hooks\": [{\"type\": \"command\", \"command\", \"timeout\"}]}`",
        "",
        "The hooks of one event; `matcher` is a regular expression over the tool name (empty or `*`: every tool), `timeout` in seconds (60).",
    ),
    key("subagents", "object", "", "Child runs started with the `delegate` tool: the keys below."),
    key("subagents.maxTurns", "whole number", "25", "Each child's turn budget, whatever the parent's."),
    key("subagents.parallel", "whole number", "3", "How many children of one turn run at once."),
    key("subagents.maxDepth", "whole number", "1", "How deep delegation may nest (1: children never delegate)."),
    key("trajectories", "object", "", "Run recording: the key below."),
    key(
        "trajectories.retentionDays",
        "whole number",
        "30",
        "Days a session's recordings are kept after its newest record (`SERI_TRAJECTORY=0|1` and `/trajectory` turn recording off and on).",
    ),
    key(
        "mcpServers",
        "object, by server name",
        "",
        "MCP servers whose tools sessions get, in Claude Code's `.mcp.json` shape ([MCP servers](../guide/mcp-servers.md)); `${VAR}` and `${VAR:-default}` in any value are read from the environment.",
    ),
    key("mcpServers.SERVER.type", "`stdio` or `http`", "`stdio`", "How seri speaks to the server."),
    key("mcpServers.SERVER.command", "string", "", "A stdio server's program."),
    key("mcpServers.SERVER.args", "list of strings", "", "Its arguments."),
    key(
        "mcpServers.SERVER.env",
        "object of strings",
        "",
        "Variables set in its environment (it inherits none of seri's but the MCP SDKs' list).",
    ),
    key("mcpServers.SERVER.passEnv", "list of strings", "", "Variables of seri's environment it may see."),
    key("mcpServers.SERVER.url", "string (URL)", "", "A streamable HTTP server's address (`\"type\": \"http\"`)."),
    key(
        "mcpServers.SERVER.headers",
        "object of strings",
        "",
        "Headers sent to an HTTP server (`\"Authorization\": \"Bearer ${TOKEN}\"`).",
    ),
    key(
        "mcpServers.SERVER.toolTimeoutSec",
        "whole number of seconds",
        "120",
        "seri's own: how long one call may take before it is cancelled.",
    ),
    key(
        "mcpServers.SERVER.startupTimeoutSec",
        "whole number of seconds",
        "30",
        "seri's own: how long the server may take to start.",
    ),
    key(
        "prices",
        "object, by `provider/model`",
        "",
        "What models cost, per million tokens, for `/cost`: seri keeps no price list of its own, since prices change.",
    ),
    key("prices.MODEL.input", "number", "", "Input tokens not read from the cache."),
    key("prices.MODEL.output", "number", "", "Output tokens."),
    key("prices.MODEL.cacheRead", "number", "the input price", "Input tokens read from the cache."),
    key("prices.MODEL.cacheWrite", "number", "the input price", "Input tokens written to the cache."),
    key("store", "object", "", "Where sessions are kept; a project's `.seri/config.json` cannot set it."),
    key(
        "store.url",
        "string",
        "the profile's `seri.db`",
        "`sqlite:` (the profile's `seri.db`), `sqlite:PATH`, or `postgres://…` ([Running on PostgreSQL](../operator/postgresql.md)). Environment `SERI_STORE_URL`, which wins.",
    ),
    key(
        "sandbox",
        "object",
        "",
        "What the commands seri runs may reach, and which secrets they see ([the security model](../operator/security-model.md)).",
    ),
    key(
        "sandbox.mode",
        "`read-only`, `workspace-write` or `full-access`",
        "`workspace-write`",
        "What commands may write: nothing, the workspace, the temporary folder and `writable`, or anything (no sandbox). Flag `--sandbox`, `/sandbox` in the REPL.",
    ),
    key("sandbox.network", "boolean", "`false`", "Whether commands may open TCP connections."),
    key(
        "sandbox.writable",
        "list of paths",
        "",
        "Folders commands may write besides the workspace and the temporary folder (`~/` is the home folder).",
    ),
    key("sandbox.writablePaths", "list of paths", "", "The older name of `writable`."),
    key(
        "sandbox.denyRead",
        "list of paths",
        "",
        "Places neither commands nor tools may read, besides the defaults (`~/.ssh`, `~/.aws`, … and seri's profile).",
    ),
    key("sandbox.hiddenPaths", "list of paths", "", "The older name of `denyRead`."),
    key(
        "sandbox.allowRead",
        "list of paths",
        "",
        "Defaults to take out of the places no command reads (`~/.docker`, say); seri's profile and store cannot be taken out.",
    ),
    key("sandbox.passEnv", "list of strings", "", "Secret variables commands may see anyway: `[\"OPENAI_API_KEY\"]`."),
    key(
        "sandbox.whenUnavailable",
        "`refuse` or `unsandboxed`",
        "`refuse`",
        "On a kernel that cannot enforce the sandbox: refuse the call, or run it with a warning.",
    ),
    key(
        "retention",
        "object",
        "unset: nothing is ever pruned",
        "How long sessions are kept, applied at most once a day when a session starts (and by `seri store prune`), saying on stderr what went. Whole lineages go; pinned sessions, sessions in use and history a kept fork shares stay. See the guide's storage page.",
    ),
    key(
        "retention.days",
        "whole number",
        "unset",
        "Lineages whose newest session last changed more than this many days ago are pruned.",
    ),
    key(
        "retention.maxBytes",
        "whole number",
        "unset",
        "Then the oldest lineages are pruned until what sessions hold (events, attachments and trajectories, as `seri store du` counts them) is at most this many bytes.",
    ),
    key(
        "statusLine",
        "object",
        "unset: none (else Claude Code's `statusLine`)",
        "A command whose first line the REPL shows before each prompt, as Claude Code's `statusLine`: it reads the session as JSON on its standard input (`session_id`, `transcript_path`, `cwd`, `model`, `workspace`, `version`, `cost`, `context_window`) and runs as a hook does, in the sandbox, for at most 5 s.",
    ),
    key("statusLine.type", "`command`", "", "The only kind."),
    key("statusLine.command", "string", "", "Run with `sh -c` in the session's folder."),
    key("statusLine.padding", "whole number", "0", "Spaces before the line."),
    key("serve", "object", "", "`seri serve`'s settings: the key below."),
    key(
        "serve.maxConnections",
        "whole number",
        "what the descriptor limit leaves room for",
        "How many connections (WebSockets included) `seri serve` serves at once; past it a new one is answered 503 with `Retry-After`. `--max-connections` is over it. By default the soft descriptor limit, raised to the hard limit at start, less 256 kept for the store and tools.",
    ),
];

/// The fields serde's derived `Deserialize` of `T` takes, from the error
/// it gives for a key it does not know.
fn serde_fields<T: DeserializeOwned>() -> BTreeSet<String> {
    let error = match serde_json::from_value::<T>(serde_json::json!({ "\u{1}": 0 })) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("a configuration type took an unknown key: it must deny unknown fields"),
    };
    let (_, expected) = error.split_once("expected").unwrap_or_default();
    expected.split('`').skip(1).step_by(2).map(str::to_owned).collect()
}

/// The keys `KEYS` lists directly under `prefix` (`""`: the top level).
fn table_children(prefix: &str) -> BTreeSet<String> {
    KEYS.iter()
        .filter_map(|k| k.path.strip_prefix(prefix))
        .filter(|rest| !rest.contains('.') && !rest.is_empty())
        .map(str::to_owned)
        .collect()
}

/// What each configuration object takes, as its parser says, by the
/// prefix its keys have in `KEYS`.
fn code_children() -> Vec<(&'static str, BTreeSet<String>)> {
    let mcp = seri_mcp::parse_servers(&serde_json::json!({"s": {"\u{1}": 0}}), "mcpServers", &|_| None)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    let mcp_keys = mcp.split_once("known: ").map(|(_, k)| k).unwrap_or_default();
    vec![
        ("", serde_fields::<crate::config::ConfigFile>()),
        ("context.", serde_fields::<crate::config::ContextConfig>()),
        ("subagents.", serde_fields::<crate::config::SubagentsConfig>()),
        ("trajectories.", serde_fields::<crate::config::TrajectoriesConfig>()),
        ("store.", serde_fields::<crate::config::StoreConfig>()),
        ("prices.MODEL.", serde_fields::<crate::config::Price>()),
        ("sandbox.", serde_fields::<crate::sandbox::SandboxConfig>()),
        ("retention.", serde_fields::<crate::config::RetentionConfig>()),
        ("serve.", serde_fields::<crate::config::ServeConfig>()),
        ("statusLine.", serde_fields::<crate::config::StatusLineConfig>()),
        ("providers.NAME.", serde_fields::<seri_providers::ProviderConfig>()),
        ("providers.NAME.pin.", serde_fields::<seri_providers::openai::ProviderPin>()),
        ("mcpServers.SERVER.", mcp_keys.split(", ").map(|k| k.trim().to_owned()).collect()),
    ]
}

fn page() -> String {
    let mut out = header(
        "config.json",
        "the configuration types (`crates/cli/src/config.rs`, `crates/cli/src/sandbox.rs`, \
         `seri_providers::ProviderConfig`) and the table beside them in `crates/cli/src/reference/config.rs`",
    );
    out.push_str(
        "Every key of the profile's `config.json` (`~/.seri/config.json`, or `$SERI_HOME/config.json`) and \
         of a project's `.seri/config.json`, which is merged over it key by key once trusted. Flags win over \
         the environment, which wins over `config.json`, which wins over the defaults; `seri config` prints \
         every value in force and where it came from ([Configuration](../guide/configuration.md)). An \
         unknown key is refused by name, and a value of the wrong kind names its key.\n\n\
         | key | type | default | what it does |\n|---|---|---|---|\n",
    );
    for k in KEYS {
        let default = if k.default.is_empty() { String::new() } else { cell(k.default) };
        out.push_str(&format!("| `{}` | {} | {} | {} |\n", k.path, cell(k.kind), default, cell(k.meaning)));
    }
    out.push_str("\n## The tools `permissions` sets\n\n| tool | default |\n|---|---|\n");
    for (tool, default) in seri_tools::permissions::GATED_TOOLS {
        out.push_str(&format!("| `{tool}` | `{}` |\n", default.as_str()));
    }
    out.push_str("\n## The events `hooks` takes\n\n");
    let events: Vec<String> = seri_runloop::shell_hooks::HookEvent::ALL
        .iter()
        .map(|e| format!("[`{0}`](hooks.md#{1})", e.as_str(), e.as_str().to_lowercase()))
        .collect();
    out.push_str(&format!("{}.\n", events.join(", ")));
    out
}

#[test]
fn every_config_key_is_in_the_reference_and_the_reference_is_fresh() {
    let mut problems = Vec::new();
    for (prefix, code) in code_children() {
        assert!(!code.is_empty(), "no field list for `{prefix}`");
        let table = table_children(prefix);
        for missing in code.difference(&table) {
            problems.push(format!("`{prefix}{missing}` is a key the code takes, with no line in KEYS"));
        }
        for gone in table.difference(&code) {
            problems.push(format!("`{prefix}{gone}` is in KEYS, but the code takes no such key"));
        }
    }
    for k in KEYS {
        if k.meaning.trim().is_empty() || k.kind.trim().is_empty() {
            problems.push(format!("`{}` has no type or meaning", k.path));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    check_fresh("config.md", &page());
}
