//! MCP servers for the command line: where their configuration comes from,
//! starting them once per process, `seri mcp list` / `/mcp`, and `seri mcp
//! trust` for a project's own servers.
//!
//! Servers are read from these places, later ones winning by name: the
//! profile's `config.json` `mcpServers` (and Codex's `~/.codex/config.toml`
//! `mcp_servers` of names it does not have, see `crate::codex_setup`), then
//! the repository root's `.mcp.json` and `.seri/config.json` `mcpServers`. A project's files are
//! code from whoever wrote the repository, so their servers start only
//! once a person ran `seri mcp trust` there; trusting records the files'
//! SHA-256 in the profile, so an edited file must be trusted again.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context as _;
use seri_core::FrozenTool;
use seri_mcp::{McpServers, ServerReport, ServerSpec, ServerState, parse_servers};
use sha2::{Digest as _, Sha256};

use crate::app::App;
use crate::exit::Exit;

/// The project files whose settings apply only once trusted, relative to
/// the repository root: those that may declare servers, and Claude Code's
/// settings (its hooks run commands; see `crate::claude_setup`).
pub(crate) const PROJECT_FILES: [&str; 4] =
    [".mcp.json", ".seri/config.json", ".claude/settings.json", ".claude/settings.local.json"];

/// What the configuration says, before anything starts.
#[derive(Debug, Default)]
pub(crate) struct McpConfig {
    /// The servers to start.
    pub(crate) specs: Vec<ServerSpec>,
    /// Project files with servers that were not trusted, and the servers' names.
    pub(crate) untrusted: Vec<(PathBuf, Vec<String>)>,
}

/// The servers the configuration declares for a session in `app.cwd`.
pub(crate) fn config(app: &App) -> Result<McpConfig, Exit> {
    let env = |name: &str| std::env::var(name).ok();
    let mut specs: Vec<ServerSpec> = match &app.config.mcp_servers {
        Some(value) => parse_servers(value, "config.json mcpServers", &env).map_err(Exit::usage)?,
        None => Vec::new(),
    };
    // Codex's, where config.json has no server of the name.
    if let Some(codex) = app.codex.as_ref().filter(|c| !c.servers.is_empty()) {
        let field = format!("{} mcp_servers", codex.path.display());
        let theirs =
            parse_servers(&serde_json::Value::Object(codex.servers.clone()), &field, &env).map_err(Exit::usage)?;
        for spec in theirs {
            if specs.iter().all(|s| s.name != spec.name) {
                specs.push(spec);
            }
        }
    }
    let mut untrusted = Vec::new();
    let files = project_files(&app.cwd)?;
    let project = project_servers(&files);
    let trusted = project.is_empty() || trusted(&app.store, &app.agent, &app.cwd, &files)?;
    for (path, value) in &project {
        let field = format!("{} mcpServers", path.display());
        if !trusted {
            let names = value.as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default();
            untrusted.push((path.clone(), names));
            continue;
        }
        for spec in parse_servers(value, &field, &env).map_err(Exit::usage)? {
            specs.retain(|s| s.name != spec.name);
            specs.push(spec);
        }
    }
    Ok(McpConfig { specs, untrusted })
}

/// Each project file there is, whole, with its path: `.mcp.json` (which
/// holds only `mcpServers`), `.seri/config.json` (any setting of
/// `config.json`, checked when it is merged) and Claude Code's settings
/// (read by `crate::claude_setup`, which names what it cannot use: one of
/// them that is not JSON is kept as its text, so seri still starts).
pub(crate) fn project_files(cwd: &Path) -> Result<Vec<(PathBuf, serde_json::Value)>, Exit> {
    let root = crate::prompt_files::repository_root(cwd);
    let mut found = Vec::new();
    for name in PROJECT_FILES {
        let path = root.join(name);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(anyhow::Error::new(e).context(format!("cannot read {}", path.display())).into()),
        };
        if name.starts_with(".claude/") {
            let value = serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text));
            found.push((path, value));
            continue;
        }
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| Exit::usage(format!("{}: not JSON: {e}", path.display())))?;
        let Some(object) = value.as_object() else {
            return Err(Exit::usage(format!("{}: expected an object", path.display())));
        };
        if name == ".mcp.json"
            && let Some(other) = object.keys().find(|k| *k != "mcpServers")
        {
            return Err(Exit::usage(format!(
                "{}: `{other}` is not read here; .mcp.json holds only `mcpServers`",
                path.display()
            )));
        }
        found.push((path, value));
    }
    // A project's skills, subagents and commands are its too: their files, as text.
    let skills = crate::skills::project_files(&root).into_iter();
    let agents = crate::agents::project_files(&root).into_iter();
    let commands = crate::slash::project_files(&root).into_iter();
    found.extend(skills.chain(agents).chain(commands).map(|(path, text)| (path, serde_json::Value::String(text))));
    Ok(found)
}

/// The `mcpServers` of each project file that has one, with its path.
fn project_servers(files: &[(PathBuf, serde_json::Value)]) -> Vec<(PathBuf, serde_json::Value)> {
    files
        .iter()
        // Claude Code keeps a project's servers in `.mcp.json`, never in its settings.
        .filter(|(path, _)| !path.parent().is_some_and(|dir| dir.ends_with(".claude")))
        .filter_map(|(path, value)| value.get("mcpServers").cloned().map(|servers| (path.clone(), servers)))
        .collect()
}

/// This project's `.seri/config.json` settings other than its servers, to
/// merge over the profile's, and whether the project's files are trusted.
pub(crate) struct ProjectSettings {
    /// The file.
    pub(crate) path: PathBuf,
    /// Its settings, `mcpServers` left out (they start through [`config`]).
    pub(crate) settings: serde_json::Map<String, serde_json::Value>,
    /// Whether `seri mcp trust` trusted the project's files as they are.
    pub(crate) trusted: bool,
}

/// The project's own settings, if its `.seri/config.json` has any.
pub(crate) fn project_settings(
    store: &seri_store::Store,
    agent: &seri_core::AgentId,
    cwd: &Path,
) -> Result<Option<ProjectSettings>, Exit> {
    let files = project_files(cwd)?;
    let Some((path, value)) = files.iter().find(|(p, _)| p.ends_with(".seri/config.json")) else { return Ok(None) };
    let mut settings = value.as_object().cloned().unwrap_or_default();
    settings.remove("mcpServers");
    if settings.is_empty() {
        return Ok(None);
    }
    let trusted = trusted(store, agent, cwd, &files)?;
    Ok(Some(ProjectSettings { path: path.clone(), settings, trusted }))
}

/// The setting that records a trusted project's files, by repository root.
fn trust_key(cwd: &Path) -> String {
    format!("mcp.trusted:{}", crate::prompt_files::repository_root(cwd).display())
}

/// The SHA-256 of the project files as they are, as one fingerprint: an
/// edit to either (a server or a setting) asks for trust again.
fn fingerprint(files: &[(PathBuf, serde_json::Value)]) -> String {
    let mut hash = Sha256::new();
    for (path, value) in files {
        hash.update(path.to_string_lossy().as_bytes());
        hash.update(seri_core::json::sorted_string(value).as_bytes());
    }
    hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `seri mcp trust` trusted the project's `files` as they are now.
pub(crate) fn trusted(
    store: &seri_store::Store,
    agent: &seri_core::AgentId,
    cwd: &Path,
    files: &[(PathBuf, serde_json::Value)],
) -> Result<bool, Exit> {
    let recorded = store.agent(agent).setting(&trust_key(cwd))?;
    Ok(recorded.as_deref() == Some(fingerprint(files).as_str()))
}

/// `seri mcp trust`: lets this project's servers start and its
/// `.seri/config.json` settings apply, as the files are now.
pub(crate) fn trust(app: &App) -> Result<String, Exit> {
    let files = project_files(&app.cwd)?;
    if files.is_empty() {
        return Ok("This project has no .mcp.json, .seri/config.json, Claude Code settings, skills, subagents or commands to trust."
            .to_owned());
    }
    app.store.agent(&app.agent).set_setting(&trust_key(&app.cwd), &fingerprint(&files))?;
    let names: Vec<String> = files.iter().map(|(p, _)| p.display().to_string()).collect();
    Ok(format!(
        "Trusted {}: its servers start, its settings and hooks apply from the next session (editing a file asks for trust again).",
        names.join(" and ")
    ))
}

/// Starts the configured servers, once per process, and says on standard
/// error which ones could not start or were not trusted.
pub(crate) async fn start(app: &App) -> Result<Arc<McpServers>, Exit> {
    start_with(app, Vec::new()).await
}

/// [`start`], with `more` servers beside the configured ones (an editor's,
/// for `seri acp`); one of `more` takes the place of a configured server
/// of the same name.
pub(crate) async fn start_with(app: &App, more: Vec<ServerSpec>) -> Result<Arc<McpServers>, Exit> {
    if let Some(started) = app.mcp.get() {
        return Ok(started.clone());
    }
    let mut config = config(app)?;
    config.specs.retain(|spec| more.iter().all(|extra| extra.name != spec.name));
    config.specs.extend(more);
    for (path, names) in &config.untrusted {
        eprintln!(
            "seri: {} declares MCP servers ({}) that are not trusted here; `seri mcp trust` lets them start",
            path.display(),
            names.join(", ")
        );
    }
    let servers = Arc::new(McpServers::start_launched(config.specs, &app.cwd, Some(&app.sandbox)).await);
    for report in servers.report() {
        if let ServerState::Failed { error } = &report.state {
            eprintln!("seri: MCP server `{}` is not available: {error}", report.name);
        }
    }
    Ok(app.mcp.get_or_init(|| servers).clone())
}

/// The running servers' tools as a new session freezes them.
pub(crate) fn frozen_tools(servers: &McpServers) -> Vec<FrozenTool> {
    servers
        .tools()
        .iter()
        .map(|t| FrozenTool {
            name: t.name().to_owned(),
            description: t.description().to_owned(),
            input_schema: t.input_schema(),
        })
        .collect()
}

/// Lines saying which servers changed their tools since last asked.
pub(crate) async fn changed_notices(servers: &McpServers) -> Vec<String> {
    servers
        .take_changed()
        .await
        .into_iter()
        .map(|name| format!("MCP server `{name}` changed its tools; the change reaches the next session"))
        .collect()
}

/// `seri mcp list` and `/mcp`: each server, its transport, its state and tools.
pub(crate) fn render(reports: &[ServerReport], untrusted: &[(PathBuf, Vec<String>)]) -> String {
    let mut out = String::new();
    if reports.is_empty() && untrusted.is_empty() {
        out.push_str("No MCP servers are configured (mcpServers in config.json, .mcp.json or .seri/config.json).\n");
    }
    for report in reports {
        match &report.state {
            ServerState::Running { tools, skipped } => {
                out.push_str(&format!("{}  {}  running, {} tools\n", report.name, report.transport, tools.len()));
                for tool in tools {
                    out.push_str(&format!("  {tool}\n"));
                }
                for tool in skipped {
                    out.push_str(&format!("  skipped {}: {}\n", tool.name, tool.reason));
                }
            }
            ServerState::Failed { error } => {
                out.push_str(&format!("{}  {}  failed: {error}\n", report.name, report.transport));
            }
        }
    }
    for (path, names) in untrusted {
        out.push_str(&format!(
            "{}  not trusted ({}): run `seri mcp trust` to start them\n",
            path.display(),
            names.join(", ")
        ));
    }
    out
}

/// `seri mcp list [--json]`: the list, and whether a configured server
/// failed (then seri exits 1, so a script notices).
pub(crate) async fn list(app: &App, json: bool) -> Result<(String, bool), Exit> {
    let config = config(app)?;
    let untrusted = config.untrusted.clone();
    let servers = McpServers::start_launched(config.specs, &app.cwd, Some(&app.sandbox)).await;
    let reports = servers.report();
    let failed = reports.iter().any(|r| matches!(r.state, ServerState::Failed { .. }));
    if !json {
        return Ok((render(&reports, &untrusted).trim_end().to_owned(), failed));
    }
    let servers: Vec<serde_json::Value> = reports
        .iter()
        .map(|r| match &r.state {
            ServerState::Running { tools, skipped } => {
                let skipped: Vec<serde_json::Value> =
                    skipped.iter().map(|t| serde_json::json!({"name": t.name, "reason": t.reason})).collect();
                serde_json::json!({
                    "name": r.name, "transport": r.transport, "state": "running", "tools": tools, "skipped": skipped,
                })
            }
            ServerState::Failed { error } => {
                serde_json::json!({"name": r.name, "transport": r.transport, "state": "failed", "error": error})
            }
        })
        .collect();
    let untrusted: Vec<serde_json::Value> = untrusted
        .iter()
        .map(|(path, names)| serde_json::json!({"file": path.display().to_string(), "servers": names}))
        .collect();
    let text = serde_json::to_string_pretty(&serde_json::json!({"servers": servers, "untrusted": untrusted}))
        .context("cannot encode the list")
        .map_err(Exit::from)?;
    Ok((text, failed))
}

/// The profile's `config.json` as JSON (an empty object when there is none).
fn read_config(path: &Path) -> Result<serde_json::Value, Exit> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text)
            .map_err(|e| Exit::usage(format!("{} is not JSON ({e}); fix it before seri edits it", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(serde_json::json!({})),
        Err(e) => Err(Exit::Failure(anyhow::anyhow!("cannot read {}: {e}", path.display()))),
    }
}

fn write_config(path: &Path, config: &serde_json::Value) -> Result<(), Exit> {
    let text = serde_json::to_string_pretty(config).context("cannot encode config.json").map_err(Exit::from)?;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| Exit::Failure(e.into()))?;
    }
    std::fs::write(path, format!("{text}\n"))
        .map_err(|e| Exit::Failure(anyhow::anyhow!("cannot write {}: {e}", path.display())))
}

/// `seri mcp add NAME (--url URL | -- COMMAND ARGS…) [-e KEY=VALUE…]`:
/// the server, in Claude Code's shape, in the profile's `config.json`
/// `mcpServers`, checked as seri reads it before anything is written.
pub(crate) fn add(
    path: &Path,
    name: &str,
    url: Option<String>,
    env: &[String],
    command: &[String],
) -> Result<String, Exit> {
    let server = match (url, command.split_first()) {
        (Some(_), Some(_)) => return Err(Exit::usage("give either --url URL or -- COMMAND ARGS, not both")),
        (None, None) => return Err(Exit::usage("give the server's command after --, or --url URL")),
        (Some(url), None) => serde_json::json!({"type": "http", "url": url}),
        (None, Some((program, args))) => {
            let mut vars = serde_json::Map::new();
            for pair in env {
                let Some((key, value)) = pair.split_once('=').filter(|(k, _)| !k.is_empty()) else {
                    return Err(Exit::usage(format!("--env {pair}: expected KEY=VALUE")));
                };
                vars.insert(key.to_owned(), serde_json::json!(value));
            }
            let mut server = serde_json::json!({"command": program, "args": args});
            if !vars.is_empty() {
                server["env"] = serde_json::Value::Object(vars);
            }
            server
        }
    };
    let mut config = read_config(path)?;
    let Some(map) = config.as_object_mut() else {
        return Err(Exit::usage(format!("{} is not a JSON object", path.display())));
    };
    let servers = map.entry("mcpServers").or_insert_with(|| serde_json::json!({}));
    let Some(servers) = servers.as_object_mut() else {
        return Err(Exit::usage("config.json mcpServers is not an object"));
    };
    if servers.contains_key(name) {
        return Err(Exit::usage(format!(
            "a server named {name} is configured already; `seri mcp remove {name}` first"
        )));
    }
    servers.insert(name.to_owned(), server);
    let all = serde_json::Value::Object(servers.clone());
    seri_mcp::parse_servers(&all, "mcpServers", &|_| Some(String::new())).map_err(|e| Exit::usage(e.to_string()))?;
    write_config(path, &config)?;
    Ok(format!("Added {name} to {}; `seri mcp list` starts it.", path.display()))
}

/// `seri mcp remove NAME`.
pub(crate) fn remove(path: &Path, name: &str) -> Result<String, Exit> {
    let mut config = read_config(path)?;
    let removed = config.get_mut("mcpServers").and_then(serde_json::Value::as_object_mut).and_then(|s| s.remove(name));
    if removed.is_none() {
        return Err(Exit::usage(format!("no server named {name} in {}", path.display())));
    }
    write_config(path, &config)?;
    Ok(format!("Removed {name} from {}.", path.display()))
}
