//! Claude Code's settings read as they are: `~/.claude/settings.json`
//! (`$CLAUDE_CONFIG_DIR/settings.json`), and the project's
//! `.claude/settings.json` and `.claude/settings.local.json` at the
//! repository root.
//!
//! What seri takes from them: `hooks` (every event seri runs, with their
//! commands: they run beside `config.json`'s, contained the same way) and
//! `permissions` (`allow`, `ask` and `deny` rules: a tool's name,
//! `Bash(…)` commands, `mcp__server__tool`, and `Read(…)`/`Edit(…)`
//! (`Write`, `MultiEdit`) path patterns, which seri's file tools obey as
//! [`seri_tools::permissions::PathRules`]; and `defaultMode`). A `deny` of
//! a path, or a folder (`dir/**`), is kept stronger than Claude Code keeps
//! it: the place joins the sandbox's hidden (or read-only) places, which
//! bash commands do not reach either. Everything else is named with the
//! reason it is not used, for `seri config` to show: a file is never
//! ignored silently.
//!
//! A project's files are the repository's, which a model may have written:
//! they apply only once `seri mcp trust` trusted the project's files as
//! they are (the same fingerprint as `.mcp.json`'s), and even then a
//! project never sets `bypassPermissions`. The person's own file in their
//! home applies as it is, like the profile's `config.json`.
//!
//! Reading a file ([`read_file`]) is pure; [`ClaudeSetup::find`] reads the disk.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use seri_runloop::shell_hooks::{HookEvent, Hooks};
use seri_tools::permissions::PathAccess;
use seri_tools::{Permission, PermissionPolicy};

/// Claude Code's own folder: `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
pub(crate) fn claude_home() -> Option<PathBuf> {
    crate::codex_setup::home_folder("CLAUDE_CONFIG_DIR", ".claude")
}

/// Whose file it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// The person's, in their home.
    User,
    /// The repository's.
    Project,
}

/// One settings file and what became of it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ClaudeFile {
    pub(crate) path: PathBuf,
    pub(crate) scope: Scope,
    /// Whether what it says applies (a project's: once trusted).
    pub(crate) applied: bool,
    /// What it gives seri, one line each (`hooks: PreToolUse (2), Stop (1)`).
    pub(crate) used: Vec<String>,
    /// What seri does not use, each with why.
    pub(crate) not_used: Vec<String>,
    /// Its hooks, in `config.json`'s shape, only events and commands seri runs.
    pub(crate) hooks: Map<String, Value>,
    /// Its permission rules seri can follow.
    pub(crate) rules: Vec<(Permission, String)>,
    /// Its `defaultMode`, when seri takes it.
    pub(crate) mode: Option<String>,
    /// Its `statusLine` command.
    pub(crate) status_line: Option<String>,
    /// Its `Read(…)` and `Edit(…)` rules: what, which permission, the
    /// folder the pattern is below, the pattern, and the rule as written.
    pub(crate) path_rules: Vec<(PathAccess, Permission, PathBuf, String, String)>,
    /// Places its `Read(…)` deny rules keep from tools and commands.
    pub(crate) deny_read: Vec<PathBuf>,
    /// Places its `Edit(…)` and `Write(…)` deny rules keep from being written.
    pub(crate) deny_write: Vec<PathBuf>,
}

/// Where a file's relative paths are read from: Claude Code's rules say
/// `//abs` (absolute), `~/p` (the home folder), `/p` (the folder holding
/// the settings' `.claude/`) and `p` or `./p` (the working directory).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Places<'a> {
    pub(crate) cwd: &'a Path,
    pub(crate) home: Option<&'a Path>,
}

/// The folder a path rule's pattern is below, and the pattern below it;
/// `None` for `~/…` when there is no home folder.
fn rule_base(pattern: &str, settings: &Path, places: Places<'_>) -> Option<(PathBuf, String)> {
    let pattern = pattern.trim();
    Some(if let Some(absolute) = pattern.strip_prefix("//") {
        (PathBuf::from("/"), absolute.to_owned())
    } else if let Some(rest) = pattern.strip_prefix("~/") {
        (places.home?.to_path_buf(), rest.to_owned())
    } else if let Some(rest) = pattern.strip_prefix('/') {
        // The folder holding `.claude/`: the project's root, or the home folder.
        (settings.parent()?.parent()?.to_path_buf(), rest.to_owned())
    } else {
        (places.cwd.to_path_buf(), pattern.strip_prefix("./").unwrap_or(pattern).to_owned())
    })
}

/// The place a path rule's pattern names: a path, or a folder given as
/// `dir/**` (or `dir/*`); `None` for any other pattern (`**/.env`, `*.key`).
fn rule_place(pattern: &str, settings: &Path, places: Places<'_>) -> Option<PathBuf> {
    let (base, rest) = rule_base(pattern, settings, places)?;
    let bare = rest.strip_suffix("/**").or_else(|| rest.strip_suffix("/*")).unwrap_or(&rest);
    if bare.is_empty() || bare.contains(['*', '?', '[', '{']) {
        return None;
    }
    Some(base.join(bare))
}

/// Every settings file found.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ClaudeSetup {
    pub(crate) files: Vec<ClaudeFile>,
}

/// Reads one file's `value` (`scope`'s, at `path`), as the module says.
pub(crate) fn read_file(path: &Path, scope: Scope, value: &Value, applied: bool, places: Places<'_>) -> ClaudeFile {
    let mut file = ClaudeFile {
        path: path.to_path_buf(),
        scope,
        applied,
        used: Vec::new(),
        not_used: Vec::new(),
        hooks: Map::new(),
        rules: Vec::new(),
        mode: None,
        status_line: None,
        path_rules: Vec::new(),
        deny_read: Vec::new(),
        deny_write: Vec::new(),
    };
    let Value::Object(settings) = value else {
        let why = match value {
            Value::String(text) => match serde_json::from_str::<Value>(text) {
                Err(e) => format!("not JSON: {e}"),
                Ok(_) => "not an object".to_owned(),
            },
            _ => "not an object".to_owned(),
        };
        file.not_used.push(format!("the whole file: {why}"));
        return file;
    };
    for (key, value) in settings {
        match key.as_str() {
            "hooks" => read_hooks(value, &mut file),
            "permissions" => read_permissions(value, &mut file, places),
            "$schema" => {}
            "env" => file
                .not_used
                .push("env: seri sets no variables from a settings file; export them where you start seri".to_owned()),
            "model" => {
                file.not_used.push("model: seri's model is config.json's `model` or --model".to_owned());
            }
            "statusLine" => {
                match (value.get("type").and_then(Value::as_str), value.get("command").and_then(Value::as_str)) {
                    (Some("command"), Some(command)) if !command.trim().is_empty() => {
                        file.status_line = Some(command.to_owned());
                        file.used.push("statusLine: its command".to_owned());
                    }
                    _ => file.not_used.push("statusLine: not a {\"type\": \"command\", \"command\"}".to_owned()),
                }
            }
            "mcpServers" | "enabledMcpjsonServers" | "enableAllProjectMcpServers" => file
                .not_used
                .push(format!("{key}: seri reads a project's servers from .mcp.json once `seri mcp trust` trusts it")),
            other => file.not_used.push(format!("{other}: not a setting seri has")),
        }
    }
    file
}

fn read_hooks(value: &Value, file: &mut ClaudeFile) {
    let Value::Object(events) = value else {
        file.not_used.push("hooks: not an object of events".to_owned());
        return;
    };
    let mut counts = Vec::new();
    for (name, matchers) in events {
        if !HookEvent::ALL.iter().any(|e| e.as_str() == name) {
            file.not_used.push(format!("hooks.{name}: not an event seri runs hooks on"));
            continue;
        }
        let Value::Array(matchers) = matchers else {
            file.not_used.push(format!("hooks.{name}: not a list"));
            continue;
        };
        let mut kept = Vec::new();
        let mut commands = 0;
        for (n, entry) in matchers.iter().enumerate() {
            let Some(Value::Array(list)) = entry.get("hooks") else {
                file.not_used.push(format!("hooks.{name}[{n}]: no `hooks` list"));
                continue;
            };
            let mut runnable = Vec::new();
            for (k, hook) in list.iter().enumerate() {
                match hook.get("type").and_then(Value::as_str) {
                    Some("command") => runnable.push(hook.clone()),
                    other => file.not_used.push(format!(
                        "hooks.{name}[{n}].hooks[{k}]: a `{}` hook; seri runs only `command` hooks",
                        other.unwrap_or("untyped")
                    )),
                }
            }
            if runnable.is_empty() {
                continue;
            }
            commands += runnable.len();
            let mut entry = entry.as_object().cloned().unwrap_or_default();
            entry.insert("hooks".to_owned(), Value::Array(runnable));
            kept.push(Value::Object(entry));
        }
        if commands > 0 {
            counts.push(format!("{name} ({commands})"));
            file.hooks.insert(name.clone(), Value::Array(kept));
        }
    }
    if !counts.is_empty() {
        file.used.push(format!("hooks: {}", counts.join(", ")));
    }
}

fn read_permissions(value: &Value, file: &mut ClaudeFile, places: Places<'_>) {
    let Value::Object(permissions) = value else {
        file.not_used.push("permissions: not an object".to_owned());
        return;
    };
    for (key, value) in permissions {
        match key.as_str() {
            "allow" | "ask" | "deny" => {
                let permission = Permission::parse(key).unwrap_or(Permission::Ask);
                let Value::Array(rules) = value else {
                    file.not_used.push(format!("permissions.{key}: not a list"));
                    continue;
                };
                let mut taken = 0;
                let mut paths = 0;
                let mut kept_out = 0;
                let mut patterns = Vec::new();
                for (n, rule) in rules.iter().enumerate() {
                    let Some(rule) = rule.as_str() else {
                        file.not_used.push(format!("permissions.{key}[{n}]: not a string"));
                        continue;
                    };
                    let path_rule = ["Read(", "Edit(", "Write(", "MultiEdit("]
                        .iter()
                        .find_map(|tool| rule.strip_prefix(tool).and_then(|r| r.strip_suffix(')')).map(|p| (*tool, p)));
                    if let Some((tool, pattern)) = path_rule {
                        let access = if tool == "Read(" { PathAccess::Read } else { PathAccess::Edit };
                        let Some((base, rest)) = rule_base(pattern, &file.path, places) else {
                            file.not_used.push(format!("permissions.{key}[{n}] `{rule}`: there is no home folder"));
                            continue;
                        };
                        if let Err(e) = PermissionPolicy::new().add_path_rule(access, permission, &base, &rest, rule) {
                            file.not_used
                                .push(format!("permissions.{key}[{n}] `{rule}`: not a pattern seri reads: {e}"));
                            continue;
                        }
                        file.path_rules.push((access, permission, base, rest, rule.to_owned()));
                        paths += 1;
                        // A place (not a pattern) is kept from bash too, by the sandbox.
                        if permission == Permission::Deny {
                            match rule_place(pattern, &file.path, places) {
                                Some(place) => {
                                    let list = if tool == "Read(" { &mut file.deny_read } else { &mut file.deny_write };
                                    list.push(place);
                                    kept_out += 1;
                                }
                                None => patterns.push(format!("`{rule}`")),
                            }
                        }
                        continue;
                    }
                    // Tried on a policy of its own: a rule seri cannot say is named, not fatal.
                    match PermissionPolicy::new().add_rule(rule, permission, &format!("permissions.{key}[{n}]")) {
                        Ok(()) => {
                            file.rules.push((permission, rule.to_owned()));
                            taken += 1;
                        }
                        Err(_) if rule.starts_with("WebFetch(") || rule.starts_with("WebSearch") => {
                            file.not_used.push(format!(
                                "permissions.{key}[{n}] `{rule}`: seri has no web tool; bash reaches the network only \
                                 when sandbox.network allows it"
                            ))
                        }
                        Err(_) => file.not_used.push(format!(
                            "permissions.{key}[{n}] `{rule}`: seri's rules name a tool, a Bash(…) command, an MCP \
                             tool, or a path as Read(…) or Edit(…)"
                        )),
                    }
                }
                if taken > 0 {
                    file.used.push(format!("permissions.{key}: {taken} rule{}", if taken == 1 { "" } else { "s" }));
                }
                if paths > 0 {
                    file.used.push(format!(
                        "permissions.{key}: {paths} path rule{} for seri's file tools",
                        if paths == 1 { "" } else { "s" }
                    ));
                }
                if kept_out > 0 {
                    file.used.push(format!(
                        "permissions.deny: {kept_out} place{} kept from bash too, by the sandbox",
                        if kept_out == 1 { "" } else { "s" }
                    ));
                }
                if !patterns.is_empty() {
                    file.not_used.push(format!(
                        "permissions.deny {}: a pattern binds seri's file tools, not bash (the sandbox keeps \
                         places); list the places in sandbox.denyRead",
                        patterns.join(", ")
                    ));
                }
            }
            "defaultMode" => match value.as_str() {
                Some("bypassPermissions") if file.scope == Scope::Project => file.not_used.push(
                    "permissions.defaultMode `bypassPermissions`: a project never turns every question off".to_owned(),
                ),
                Some(mode) if mode.parse::<seri_core::PermissionMode>().is_ok() => {
                    file.mode = Some(mode.to_owned());
                    file.used.push(format!("permissions.defaultMode: {mode}"));
                }
                _ => file.not_used.push(format!("permissions.defaultMode {value}: not a mode seri has")),
            },
            other => file.not_used.push(format!("permissions.{other}: not a setting seri has")),
        }
    }
}

impl ClaudeSetup {
    /// The person's file (in `claude_home`) and the project's (given with
    /// `project_files`, the trusted project files as `crate::mcp` reads
    /// them, and whether they are trusted).
    pub(crate) fn find(
        claude_home: Option<&Path>,
        project_files: &[(PathBuf, Value)],
        project_trusted: bool,
        places: Places<'_>,
    ) -> Self {
        let mut files = Vec::new();
        if let Some(home) = claude_home {
            let path = home.join("settings.json");
            match std::fs::read_to_string(&path) {
                Ok(text) => {
                    let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
                    files.push(read_file(&path, Scope::User, &value, true, places));
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    let mut file = read_file(&path, Scope::User, &Value::Null, true, places);
                    file.not_used = vec![format!("the whole file: cannot be read: {e}")];
                    files.push(file);
                }
            }
        }
        for (path, value) in project_files {
            if path.parent().is_some_and(|dir| dir.ends_with(".claude")) {
                files.push(read_file(path, Scope::Project, value, project_trusted, places));
            }
        }
        Self { files }
    }

    /// The hooks of the files that apply, `config.json`'s first.
    pub(crate) fn hooks(&self, configured: Hooks) -> Result<Hooks, String> {
        let mut hooks = configured;
        for file in self.files.iter().filter(|f| f.applied && !f.hooks.is_empty()) {
            let more = Hooks::from_config(&Value::Object(file.hooks.clone()))
                .map_err(|e| format!("{}: {e}", file.path.display()))?;
            hooks = hooks.merged(more);
        }
        Ok(hooks)
    }

    /// `policy` with the rules and mode of the files that apply, before
    /// `config.json`'s (which is applied over them).
    pub(crate) fn apply(&self, policy: &mut PermissionPolicy) -> Result<(), String> {
        for file in self.files.iter().filter(|f| f.applied) {
            for (permission, rule) in &file.rules {
                let field = format!("{} permissions", file.path.display());
                policy.add_rule(rule, *permission, &field).map_err(|e| e.to_string())?;
            }
            for (access, permission, base, pattern, rule) in &file.path_rules {
                policy
                    .add_path_rule(*access, *permission, base, pattern, rule)
                    .map_err(|e| format!("{} permissions: `{rule}`: {e}", file.path.display()))?;
            }
            if let Some(mode) = &file.mode
                && let Ok(mode) = mode.parse()
            {
                policy.set_mode(mode);
            }
        }
        Ok(())
    }

    /// The places the files that apply keep from being read, and from
    /// being written: for the sandbox's hidden and read-only places.
    pub(crate) fn kept_out(&self) -> (Vec<PathBuf>, Vec<PathBuf>) {
        let applied = || self.files.iter().filter(|f| f.applied);
        (
            applied().flat_map(|f| f.deny_read.iter().cloned()).collect(),
            applied().flat_map(|f| f.deny_write.iter().cloned()).collect(),
        )
    }

    /// The status line command of the files that apply: the project's over the person's.
    pub(crate) fn status_line(&self) -> Option<&str> {
        self.files.iter().rev().filter(|f| f.applied).find_map(|f| f.status_line.as_deref())
    }

    /// `seri config`'s lines: each file, whether it applies, what it gives
    /// and what it does not.
    pub(crate) fn config_lines(&self) -> String {
        let mut out = String::new();
        for file in &self.files {
            let state = match (file.scope, file.applied) {
                (Scope::User, _) => "yours",
                (Scope::Project, true) => "project, trusted",
                (Scope::Project, false) => "project, not trusted, not applied: seri mcp trust",
            };
            out.push_str(&format!("claude       {} ({state})\n", file.path.display()));
            for used in &file.used {
                out.push_str(&format!("  uses       {used}\n"));
            }
            for not in &file.not_used {
                out.push_str(&format!("  not used   {not}\n"));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;
