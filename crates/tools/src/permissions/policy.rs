//! The permission policy: what each coding tool may do without asking, set
//! by defaults, `config.json` and command-line flags.
//!
//! # Precedence
//!
//! Later layers win, tool by tool:
//!
//! 1. Defaults: the reading tools (`read_file`, `list`, `grep`) `allow`;
//!    `write_file`, `edit` and `bash` `ask`.
//! 2. `config.json`: `{"permissions": {"bash": "allow", "edit": "deny"}}`,
//!    read with [`PermissionPolicy::apply_config`].
//! 3. Flags, read with [`PermissionPolicy::apply_flags`]: `--allow TOOL` and
//!    `--deny TOOL` (each repeatable) set that tool; naming one tool in both
//!    is a usage error. `--yes` marks a trusted run: every question the run
//!    would ask (a tool set to `ask`, a path outside the working directory)
//!    is answered yes. `--yes` never overrides `deny`.
//!
//! The same object takes Claude Code's keys: `"mode"` (or `"defaultMode"`)
//! sets the permission mode ([`PermissionMode`]), and `"allow"`, `"ask"`
//! and `"deny"` are lists of rules: `Bash(git *)` is a command pattern
//! ([`super::command`]), a tool's name (`Edit`, `edit`, `mcp__docs__*`)
//! sets that tool. `--allow` and `--deny` take the same rules.
//!
//! MCP servers' tools (`mcp__<server>__<tool>`) ask by default, like
//! `bash`. A setting may name one (`mcp__docs__search`) or every tool of a
//! server (`mcp__docs__*`); the one that names the tool wins.
//!
//! Then, per call: `deny` refuses; `allow` runs; `ask` asks the person in
//! the REPL and is refused in a headless run (nobody can answer). A path
//! outside the working directory and its allowed roots is asked about (or
//! refused, headless) even when the tool is `allow`.

use std::collections::BTreeMap;

use serde_json::Value;

use seri_core::PermissionMode;

use super::command::{CommandPattern, CommandRules};
use super::paths::{PathAccess, PathRules};
use crate::input::type_name;
use crate::pattern::PatternError;

/// What a tool may do without asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Permission {
    /// Run without asking.
    Allow,
    /// Ask the person first; refused when nobody can be asked.
    Ask,
    /// Never run.
    Deny,
}

impl Permission {
    /// `allow`, `ask` or `deny`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Permission::Allow => "allow",
            Permission::Ask => "ask",
            Permission::Deny => "deny",
        }
    }

    /// Reads `allow`, `ask` or `deny`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "allow" => Some(Permission::Allow),
            "ask" => Some(Permission::Ask),
            "deny" => Some(Permission::Deny),
            _ => None,
        }
    }
}

impl std::fmt::Display for Permission {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The tools that have a permission, with their defaults: reading is
/// allowed, changing files, running commands and writing memory ask.
pub const GATED_TOOLS: [(&str, Permission); 7] = [
    ("read_file", Permission::Allow),
    ("list", Permission::Allow),
    ("grep", Permission::Allow),
    ("write_file", Permission::Ask),
    ("edit", Permission::Ask),
    ("bash", Permission::Ask),
    ("remember", Permission::Ask),
];

/// The `--allow`, `--deny` and `--yes` flags as the CLI parsed them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PermissionFlags {
    /// `--allow TOOL`, in the order given.
    pub allow: Vec<String>,
    /// `--deny TOOL`, in the order given.
    pub deny: Vec<String>,
    /// `--yes`: a trusted run.
    pub yes: bool,
    /// `--permission-mode`.
    pub mode: Option<PermissionMode>,
}

/// A `permissions` setting or flag that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    /// `permissions` is not an object.
    #[error("`{field}`: expected an object mapping tool names to \"allow\", \"ask\" or \"deny\", got {got}")]
    NotAnObject {
        /// Where: `permissions`.
        field: String,
        /// The JSON type found.
        got: &'static str,
    },
    /// A tool without a permission (or a misspelt one).
    #[error("`{field}`: `{tool}` is not a tool with a permission; those are {}", known_tools())]
    UnknownTool {
        /// Where: `permissions.bahs`, `--allow`.
        field: String,
        /// The name given.
        tool: String,
    },
    /// A value other than `allow`, `ask`, `deny`.
    #[error("`{field}`: expected \"allow\", \"ask\" or \"deny\", got {got}")]
    BadValue {
        /// Where: `permissions.bash`.
        field: String,
        /// The value found, as JSON.
        got: String,
    },
    /// A mode name other than seri's or Claude Code's.
    #[error("`{field}`: {error}")]
    BadMode {
        /// Where: `permissions.mode`.
        field: String,
        /// What was wrong.
        error: String,
    },
    /// A rule of a list that is neither a tool nor `Bash(…)`.
    #[error(
        "`{field}`: `{rule}` is not a rule seri takes; a rule is a tool's name (`Edit`, `bash`, `mcp__docs__*`) or a command pattern `Bash(git *)` (only bash takes a pattern)"
    )]
    BadRule {
        /// Where: `permissions.allow[2]`.
        field: String,
        /// The rule.
        rule: String,
    },
    /// One tool in both `--allow` and `--deny`.
    #[error("--allow {tool} and --deny {tool} contradict each other; give one of them")]
    Contradiction {
        /// The tool.
        tool: String,
    },
}

fn known_tools() -> String {
    let names = GATED_TOOLS.iter().map(|(name, _)| *name).collect::<Vec<_>>().join(", ");
    format!("{names}, and an MCP server's tools as mcp__<server>__<tool> or mcp__<server>__*")
}

/// The prefix of every MCP server's tool name: `mcp__<server>__<tool>`.
pub const MCP_TOOL_PREFIX: &str = "mcp__";

/// The server of an MCP tool name or setting (`mcp__docs__search`,
/// `mcp__docs__*`), and the tool part; `None` for any other name.
fn mcp_parts(name: &str) -> Option<(&str, &str)> {
    let (server, tool) = name.strip_prefix(MCP_TOOL_PREFIX)?.split_once("__")?;
    (!server.is_empty() && !tool.is_empty()).then_some((server, tool))
}

/// What each coding tool may do without asking, and whether the run is
/// trusted (`--yes`). See the module doc for the precedence.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PermissionPolicy {
    /// Settings that differ from [`GATED_TOOLS`]'s defaults.
    settings: BTreeMap<&'static str, Permission>,
    /// Settings of MCP tools, by `mcp__server__tool` or `mcp__server__*`.
    mcp: BTreeMap<String, Permission>,
    trusted: bool,
    /// `bash`'s command patterns.
    commands: CommandRules,
    /// The mode sessions run under until the person picks another.
    mode: PermissionMode,
    /// `Read(…)` and `Edit(…)` rules.
    paths: PathRules,
}

/// The tool a rule of Claude Code's settings names (`Edit`, `Read`), as
/// seri calls it; seri's own names pass through.
fn tool_of_rule(rule: &str) -> &str {
    match rule {
        "Read" => "read_file",
        "Write" => "write_file",
        "Edit" | "MultiEdit" => "edit",
        "Bash" => "bash",
        "Grep" => "grep",
        "Glob" | "LS" => "list",
        other => other,
    }
}

impl PermissionPolicy {
    /// The defaults: reading allowed, writing and `bash` ask, not trusted.
    pub fn new() -> Self {
        Self::default()
    }

    /// The defaults with a `config.json` `permissions` object applied.
    pub fn from_config(permissions: &Value) -> Result<Self, PolicyError> {
        let mut policy = Self::new();
        policy.apply_config(permissions)?;
        Ok(policy)
    }

    /// What `tool` may do. A tool without a permission of its own (the
    /// session verbs, a tool added later) is `allow`: it is not gated.
    pub fn permission(&self, tool: &str) -> Permission {
        if let Some((server, _)) = mcp_parts(tool) {
            let every = format!("{MCP_TOOL_PREFIX}{server}__*");
            return self.mcp.get(tool).or_else(|| self.mcp.get(&every)).copied().unwrap_or(Permission::Ask);
        }
        match GATED_TOOLS.iter().find(|(name, _)| *name == tool) {
            Some((name, default)) => self.settings.get(name).copied().unwrap_or(*default),
            None => Permission::Allow,
        }
    }

    /// The settings of MCP tools (`mcp__server__tool`, `mcp__server__*`), by name.
    pub fn mcp_settings(&self) -> impl Iterator<Item = (&str, Permission)> {
        self.mcp.iter().map(|(name, permission)| (name.as_str(), *permission))
    }

    /// `bash`'s command patterns.
    pub fn commands(&self) -> &CommandRules {
        &self.commands
    }

    /// The mode sessions run under until the person picks another
    /// (`--permission-mode`, `permissions.mode`).
    pub fn mode(&self) -> PermissionMode {
        self.mode
    }

    /// Sets the mode sessions start in.
    pub fn set_mode(&mut self, mode: PermissionMode) {
        self.mode = mode;
    }

    /// Adds one rule to the list of `permission`: a `Bash(…)` pattern, or a
    /// tool's name (which sets the tool). `field` names where it came from.
    pub fn add_rule(&mut self, rule: &str, permission: Permission, field: &str) -> Result<(), PolicyError> {
        if let Some(pattern) = CommandPattern::from_rule(rule)
            && rule.contains('(')
        {
            let list = match permission {
                Permission::Allow => &mut self.commands.allow,
                Permission::Ask => &mut self.commands.ask,
                Permission::Deny => &mut self.commands.deny,
            };
            list.push(pattern);
            return Ok(());
        }
        if rule.contains('(') {
            return Err(PolicyError::BadRule { field: field.to_owned(), rule: rule.to_owned() });
        }
        self.set(tool_of_rule(rule.trim()), permission, field)
    }

    /// The `Read(…)` and `Edit(…)` rules.
    pub fn paths(&self) -> &PathRules {
        &self.paths
    }

    /// Adds a path rule (see [`PathRules::add`]).
    pub fn add_path_rule(
        &mut self,
        access: PathAccess,
        permission: Permission,
        base: &std::path::Path,
        pattern: &str,
        rule: &str,
    ) -> Result<(), PatternError> {
        self.paths.add(access, permission, base, pattern, rule)
    }

    /// Whether every question is answered yes (`--yes`).
    pub fn is_trusted(&self) -> bool {
        self.trusted
    }

    /// Sets one tool. `field` names where the setting came from, for the error.
    pub fn set(&mut self, tool: &str, permission: Permission, field: &str) -> Result<(), PolicyError> {
        if mcp_parts(tool).is_some() {
            self.mcp.insert(tool.to_owned(), permission);
            return Ok(());
        }
        let Some((name, _)) = GATED_TOOLS.iter().find(|(name, _)| *name == tool) else {
            return Err(PolicyError::UnknownTool { field: field.to_owned(), tool: tool.to_owned() });
        };
        self.settings.insert(name, permission);
        Ok(())
    }

    /// Makes the run trusted: every `ask` becomes `allow`; `deny` stays.
    pub fn trust(&mut self) {
        self.trusted = true;
    }

    /// Applies a `config.json` `permissions` object, such as
    /// `{"bash": "allow", "edit": "deny"}`. Nothing changes on an error.
    pub fn apply_config(&mut self, permissions: &Value) -> Result<(), PolicyError> {
        let Value::Object(map) = permissions else {
            return Err(PolicyError::NotAnObject { field: "permissions".to_owned(), got: type_name(permissions) });
        };
        let mut next = self.clone();
        for (tool, value) in map {
            let field = format!("permissions.{tool}");
            match tool.as_str() {
                "mode" | "defaultMode" => {
                    let mode = value
                        .as_str()
                        .ok_or_else(|| PolicyError::BadMode {
                            field: field.clone(),
                            error: format!("expected a string, got {value}"),
                        })?
                        .parse::<PermissionMode>()
                        .map_err(|e| PolicyError::BadMode { field: field.clone(), error: e.to_string() })?;
                    next.mode = mode;
                    continue;
                }
                "allow" | "ask" | "deny" => {
                    let permission = Permission::parse(tool).unwrap_or(Permission::Ask);
                    let Value::Array(rules) = value else {
                        return Err(PolicyError::BadRule { field, rule: value.to_string() });
                    };
                    for (n, rule) in rules.iter().enumerate() {
                        let field = format!("{field}[{n}]");
                        let Some(rule) = rule.as_str() else {
                            return Err(PolicyError::BadRule { field, rule: rule.to_string() });
                        };
                        next.add_rule(rule, permission, &field)?;
                    }
                    continue;
                }
                _ => {}
            }
            let permission = value
                .as_str()
                .and_then(Permission::parse)
                .ok_or_else(|| PolicyError::BadValue { field: field.clone(), got: value.to_string() })?;
            next.set(tool, permission, &field)?;
        }
        *self = next;
        Ok(())
    }

    /// Applies the `--allow`, `--deny` and `--yes` flags, over whatever the
    /// config set. Nothing changes on an error.
    pub fn apply_flags(&mut self, flags: &PermissionFlags) -> Result<(), PolicyError> {
        if let Some(tool) = flags.allow.iter().find(|t| flags.deny.contains(t)) {
            return Err(PolicyError::Contradiction { tool: tool.clone() });
        }
        let mut next = self.clone();
        for tool in &flags.allow {
            next.add_rule(tool, Permission::Allow, "--allow")?;
        }
        for tool in &flags.deny {
            next.add_rule(tool, Permission::Deny, "--deny")?;
        }
        if flags.yes {
            next.trust();
        }
        if let Some(mode) = flags.mode {
            next.mode = mode;
        }
        *self = next;
        Ok(())
    }
}

#[cfg(test)]
mod mcp_tests {
    use super::*;

    #[test]
    fn mcp_tools_ask_by_default_and_a_named_tool_beats_its_servers_wildcard() {
        let mut policy = PermissionPolicy::new();
        assert_eq!(policy.permission("mcp__docs__search"), Permission::Ask);
        policy.set("mcp__docs__*", Permission::Allow, "permissions").unwrap();
        policy.set("mcp__docs__delete", Permission::Deny, "permissions").unwrap();
        assert_eq!(policy.permission("mcp__docs__search"), Permission::Allow);
        assert_eq!(policy.permission("mcp__docs__delete"), Permission::Deny);
        assert_eq!(policy.permission("mcp__other__search"), Permission::Ask);
        let error = policy.set("mcp__", Permission::Allow, "--allow").unwrap_err();
        assert!(error.to_string().contains("mcp__<server>__<tool>"), "{error}");
    }
}
