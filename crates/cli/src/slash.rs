//! The REPL's slash commands: the built-in ones as one enum with their
//! usage and description (for `/help`, the `/` completion menu and the
//! "unknown command" line), and the person's own commands, markdown files
//! in the project's `.seri/commands/` and the profile's `commands/`, as
//! Claude Code reads them (`description` in front matter, `$ARGUMENTS`).
//! Also the text of `/config`, `/memory` and `/export`. Pure but for reading
//! those files.

use std::path::{Path, PathBuf};

/// A built-in slash command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SlashCommand {
    Compact,
    Continue,
    Clear,
    MaxTurns,
    Rewind,
    Fork,
    Trajectory,
    Status,
    Model,
    Context,
    Cost,
    Permissions,
    Sandbox,
    Config,
    Memory,
    Export,
    Expand,
    Init,
    Sessions,
    Resume,
    Search,
    Mcp,
    Skills,
    Agents,
    Help,
    Exit,
}

impl SlashCommand {
    /// Every built-in command, in the order `/help` lists them.
    pub(crate) const ALL: [SlashCommand; 26] = [
        SlashCommand::Compact,
        SlashCommand::Continue,
        SlashCommand::Clear,
        SlashCommand::MaxTurns,
        SlashCommand::Rewind,
        SlashCommand::Fork,
        SlashCommand::Trajectory,
        SlashCommand::Status,
        SlashCommand::Model,
        SlashCommand::Context,
        SlashCommand::Cost,
        SlashCommand::Permissions,
        SlashCommand::Sandbox,
        SlashCommand::Config,
        SlashCommand::Memory,
        SlashCommand::Export,
        SlashCommand::Expand,
        SlashCommand::Init,
        SlashCommand::Sessions,
        SlashCommand::Resume,
        SlashCommand::Search,
        SlashCommand::Mcp,
        SlashCommand::Skills,
        SlashCommand::Agents,
        SlashCommand::Help,
        SlashCommand::Exit,
    ];

    /// Its name, without the slash.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            SlashCommand::Compact => "compact",
            SlashCommand::Continue => "continue",
            SlashCommand::Clear => "clear",
            SlashCommand::MaxTurns => "max-turns",
            SlashCommand::Rewind => "rewind",
            SlashCommand::Fork => "fork",
            SlashCommand::Trajectory => "trajectory",
            SlashCommand::Status => "status",
            SlashCommand::Model => "model",
            SlashCommand::Context => "context",
            SlashCommand::Cost => "cost",
            SlashCommand::Permissions => "permissions",
            SlashCommand::Sandbox => "sandbox",
            SlashCommand::Config => "config",
            SlashCommand::Memory => "memory",
            SlashCommand::Export => "export",
            SlashCommand::Expand => "expand",
            SlashCommand::Init => "init",
            SlashCommand::Sessions => "sessions",
            SlashCommand::Resume => "resume",
            SlashCommand::Search => "search",
            SlashCommand::Mcp => "mcp",
            SlashCommand::Skills => "skills",
            SlashCommand::Agents => "agents",
            SlashCommand::Help => "help",
            SlashCommand::Exit => "exit",
        }
    }

    /// What follows its name, as `/help` shows it.
    pub(crate) const fn arguments(self) -> &'static str {
        match self {
            SlashCommand::Compact | SlashCommand::Continue => "[focus]",
            SlashCommand::MaxTurns => "N",
            SlashCommand::Rewind | SlashCommand::Fork => "[SEQ]",
            SlashCommand::Trajectory => "on|off",
            SlashCommand::Model => "[name]",
            SlashCommand::Sandbox => "[MODE|network on|off]",
            SlashCommand::Export => "[FILE]",
            SlashCommand::Expand => "[N]",
            SlashCommand::Resume => "[ID]",
            SlashCommand::Search => "QUERY|open N|fork N",
            _ => "",
        }
    }

    /// What it does, in a line.
    pub(crate) const fn description(self) -> &'static str {
        match self {
            SlashCommand::Compact => "summarise the oldest context into a recap now (focus words steer the recap)",
            SlashCommand::Continue => {
                "carry the conversation into a successor session now (focus words steer the handoff)"
            }
            SlashCommand::Clear => "start a new session; the old one stays and stays resumable",
            SlashCommand::MaxTurns => "cap model turns per task for the rest of this session",
            SlashCommand::Rewind => {
                "go back to before a turn: the conversation, the files seri's tools changed, or both"
            }
            SlashCommand::Fork => {
                "branch this session: a new one sharing its events up to SEQ (default: before your last message, ready to edit)"
            }
            SlashCommand::Trajectory => "record runs locally (on by default; SERI_TRAJECTORY=0|1 wins at start)",
            SlashCommand::Status => "this session: title, description, context usage, model",
            SlashCommand::Model => {
                "the model this session talks to; a name sets it from the next request on (default: back to the configured one)"
            }
            SlashCommand::Context => "what fills the context window, part by part",
            SlashCommand::Cost => "tokens in, out and cached over this session's model turns",
            SlashCommand::Permissions => "what each tool may do without asking, and the permission mode",
            SlashCommand::Sandbox => {
                "what bash may touch in this session: read-only, workspace-write or full-access, and the network"
            }
            SlashCommand::Config => "the settings in force and where each came from",
            SlashCommand::Memory => "the instruction, rule and memory files seri reads, and where to edit them",
            SlashCommand::Export => "write this session's transcript as markdown to a file",
            SlashCommand::Expand => {
                "show a tool's output that was cut short in full: the Nth (`/expand N` under it), the newest by default"
            }
            SlashCommand::Init => "write a starter AGENTS.md at the repository root, after asking",
            SlashCommand::Sessions => "recent sessions",
            SlashCommand::Resume => "switch to another session, by id or picked from the recent ones",
            SlashCommand::Search => {
                "find words in every session (numbered hits; --here, --all, --since DATE, --limit N), then resume a hit's session or fork it at the hit"
            }
            SlashCommand::Mcp => "MCP servers: each one's state and tools",
            SlashCommand::Skills => {
                "skills: each one's name, whose it is and what it is for, and those not offered, with why"
            }
            SlashCommand::Agents => {
                "subagents `delegate` offers: each one's tools and what it is for, and those not offered, with why"
            }
            SlashCommand::Help => "this list",
            SlashCommand::Exit => "leave (Ctrl-D does too)",
        }
    }

    /// `/name ARGS`, as `/help` shows it.
    pub(crate) fn usage(self) -> String {
        match self.arguments() {
            "" => format!("/{}", self.name()),
            arguments => format!("/{} {arguments}", self.name()),
        }
    }

    /// The command named `name` (`quit` is `exit`).
    pub(crate) fn parse(name: &str) -> Option<Self> {
        if name == "quit" {
            return Some(SlashCommand::Exit);
        }
        Self::ALL.into_iter().find(|c| c.name() == name)
    }
}

/// Where a person's command was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CommandSource {
    /// The project's `.seri/commands/` or `.claude/commands/`, trusted.
    Project,
    /// The same, in a project `seri mcp trust` has not trusted as it is:
    /// listed, never sent (a model may have written it).
    UntrustedProject,
    /// The profile's `commands/` or `~/.claude/commands/`.
    User,
}

impl CommandSource {
    /// Whose command it is, as `/help` and the menu say.
    pub(crate) const fn word(self) -> &'static str {
        match self {
            CommandSource::Project => "project",
            CommandSource::UntrustedProject => "project, not trusted: seri mcp trust",
            CommandSource::User => "user",
        }
    }

    /// Whether the command may be sent.
    pub(crate) const fn runs(self) -> bool {
        !matches!(self, CommandSource::UntrustedProject)
    }
}

/// What is said when a person names a project's command the project's
/// trust does not cover.
pub(crate) fn untrusted_command(command: &CustomCommand) -> String {
    format!(
        "/{} is this project's command ({}), which runs once you trust the project's files as they are: seri mcp trust",
        command.name,
        command.path.display()
    )
}

/// A person's own slash command: a markdown file whose body is the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CustomCommand {
    /// The file's name without `.md`.
    pub(crate) name: String,
    /// Front matter's `description`, else the body's first line.
    pub(crate) description: String,
    /// The prompt, `$ARGUMENTS` where the words after the name go.
    pub(crate) body: String,
    pub(crate) source: CommandSource,
    pub(crate) path: PathBuf,
    /// Front matter keys seri reads but does not act on (Claude Code's
    /// `allowed-tools`, `model`), said in `/help`.
    pub(crate) not_used: Vec<String>,
}

impl CustomCommand {
    /// Reads one file's text: optional front matter (`---` lines, with
    /// `description: …`), then the prompt.
    pub(crate) fn parse(name: &str, text: &str, source: CommandSource, path: PathBuf) -> Self {
        let (front, body) = match text.strip_prefix("---\n").and_then(|rest| rest.split_once("\n---")) {
            Some((front, body)) => (front, body.trim_start_matches(['-']).trim_start_matches('\n')),
            None => ("", text),
        };
        let described = front.lines().find_map(|line| {
            let value = line.strip_prefix("description:")?.trim();
            Some(value.trim_matches(['"', '\'']).to_owned())
        });
        let not_used = front
            .lines()
            .filter_map(|line| line.split_once(':').map(|(key, _)| key.trim()))
            .filter(|key| matches!(*key, "allowed-tools" | "model" | "disable-model-invocation"))
            .map(str::to_owned)
            .collect();
        let body = body.trim().to_owned();
        let description =
            described.unwrap_or_else(|| body.lines().next().unwrap_or("").chars().take(80).collect::<String>());
        Self { name: name.to_owned(), description, body, source, path, not_used }
    }

    /// The prompt for `/name ARGS`: `$ARGUMENTS` replaced by the words
    /// (and `$1` … `$9` by each word, as Claude Code's commands take them),
    /// or the words added after the prompt when it has neither.
    pub(crate) fn expand(&self, arguments: &str) -> String {
        let arguments = arguments.trim();
        let positional = (1..=9).any(|n| self.body.contains(&format!("${n}")));
        if positional {
            let words: Vec<&str> = arguments.split_whitespace().collect();
            let mut body = self.body.replace("$ARGUMENTS", arguments);
            for n in (1..=9).rev() {
                body = body.replace(&format!("${n}"), words.get(n - 1).copied().unwrap_or(""));
            }
            body
        } else if self.body.contains("$ARGUMENTS") {
            self.body.replace("$ARGUMENTS", arguments)
        } else if arguments.is_empty() {
            self.body.clone()
        } else {
            format!("{}\n\nARGUMENTS: {arguments}", self.body)
        }
    }
}

/// The `.md` files below `dir`, sorted, with subfolders' too (Claude
/// Code's `frontend/component.md` is `/component`), at most two deep.
fn command_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut folders = vec![(dir.to_path_buf(), 0)];
    while let Some((folder, depth)) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else { continue };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            match entry.file_type() {
                Ok(kind) if kind.is_dir() && depth < 2 => folders.push((path, depth + 1)),
                Ok(kind) if kind.is_file() => files.push(path),
                _ => {}
            }
        }
    }
    files.sort();
    files
}

/// The folders of a project's commands, below its repository root.
pub(crate) const PROJECT_DIRS: [&str; 2] = [".seri/commands", ".claude/commands"];

/// A project's command files, with their text: what `seri mcp trust`
/// fingerprints with the project's other files.
pub(crate) fn project_files(repository: &Path) -> Vec<(PathBuf, String)> {
    PROJECT_DIRS
        .iter()
        .flat_map(|dir| command_files(&repository.join(dir)))
        .filter_map(|path| std::fs::read_to_string(&path).ok().map(|text| (path, text)))
        .collect()
}

/// The person's commands: the project's (`.seri/commands/` then Claude
/// Code's `.claude/commands/`, at the repository root) first, then the
/// profile's (`commands/`) and Claude Code's own (`~/.claude/commands/`);
/// each a `NAME.md`, in subfolders too. A name is taken by the first file
/// that has it, and no built-in name is. A project's commands run only
/// when `project_trusted` (else they are listed as not trusted).
pub(crate) fn custom_commands(repository: &Path, profile: &Path, project_trusted: bool) -> Vec<CustomCommand> {
    let mut found: Vec<CustomCommand> = Vec::new();
    let project = if project_trusted { CommandSource::Project } else { CommandSource::UntrustedProject };
    let mut dirs: Vec<(PathBuf, CommandSource)> =
        PROJECT_DIRS.iter().map(|dir| (repository.join(dir), project)).collect();
    dirs.push((profile.join("commands"), CommandSource::User));
    dirs.extend(crate::claude_setup::claude_home().map(|home| (home.join("commands"), CommandSource::User)));
    for (dir, source) in dirs {
        for path in command_files(&dir) {
            let Some(name) = path.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_suffix(".md")) else {
                continue;
            };
            let usable = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            if !usable || SlashCommand::parse(name).is_some() || found.iter().any(|c| c.name == name) {
                continue;
            }
            match std::fs::read_to_string(&path) {
                Ok(text) => found.push(CustomCommand::parse(name, &text, source, path.clone())),
                Err(error) => tracing::warn!(path = %path.display(), %error, "a command file cannot be read"),
            }
        }
    }
    found
}

/// The `/` menu's lines: the built-in commands, then the person's (their
/// description from front matter or their first line, and whose they are).
pub(crate) fn menu_entries(custom: &[CustomCommand]) -> Vec<crate::completion::MenuEntry> {
    use crate::completion::MenuEntry;
    let builtins = SlashCommand::ALL.into_iter().map(|c| MenuEntry {
        name: format!("/{}", c.name()),
        arguments: c.arguments().to_owned(),
        description: c.description().to_owned(),
    });
    let own = custom.iter().map(|c| MenuEntry {
        name: format!("/{}", c.name),
        arguments: String::new(),
        description: format!("{} ({})", c.description, c.source.word()),
    });
    builtins.chain(own).collect()
}

/// `/help`: the built-in commands, then the person's.
pub(crate) fn help(custom: &[CustomCommand]) -> String {
    let mut out = String::new();
    for command in SlashCommand::ALL {
        out.push_str(&format!("  {:<18} {}\n", command.usage(), command.description()));
    }
    for command in custom {
        let mut whose = command.source.word().to_owned();
        if !command.not_used.is_empty() {
            whose.push_str(&format!("; seri does not use its {}", command.not_used.join(", ")));
        }
        out.push_str(&format!("  {:<18} {} ({whose})\n", format!("/{}", command.name), command.description));
    }
    out
}

/// A session's transcript as markdown: each message under a heading for
/// who wrote it, each tool call with its arguments and its result.
pub(crate) fn transcript_markdown(title: &str, id: &str, events: &[seri_core::EventBody]) -> String {
    use seri_core::{Actor, EventBody, Role};
    let mut out = format!("# {}\n\nseri session `{id}`\n", if title.is_empty() { "Untitled session" } else { title });
    for body in events {
        match body {
            EventBody::Message(m) => {
                let who = match (m.role, m.actor) {
                    (Role::Assistant, _) => "seri",
                    (_, Actor::User) => "You",
                    _ => "seri (system)",
                };
                out.push_str(&format!("\n## {who}\n\n{}\n", m.content.trim_end()));
            }
            EventBody::ToolCall(call) => {
                let arguments = serde_json::to_string_pretty(&call.arguments).unwrap_or_default();
                out.push_str(&format!("\n**Tool call** `{}`\n\n```json\n{arguments}\n```\n", call.name));
            }
            EventBody::ToolResult(result) => {
                let what = if result.is_error { "Tool error" } else { "Tool result" };
                let fence = if result.content.contains("```") { "````" } else { "```" };
                out.push_str(&format!(
                    "\n**{what}** `{}`\n\n{fence}\n{}\n{fence}\n",
                    result.name,
                    result.content.trim_end()
                ));
            }
            EventBody::PermissionModeChanged(m) => out.push_str(&format!("\n*Permission mode: {}*\n", m.mode)),
            EventBody::SandboxChanged(s) => {
                let network = s.network.map(|on| if on { "network on" } else { "network off" });
                let parts: Vec<&str> = s.mode.map(|m| m.as_str()).into_iter().chain(network).collect();
                out.push_str(&format!("\n*Sandbox: {}*\n", parts.join(", ")));
            }
            EventBody::ModelChanged(m) => {
                let model =
                    m.model.as_ref().map_or("the configured one".to_owned(), |m| format!("{}/{}", m.provider, m.model));
                out.push_str(&format!("\n*Model: {model}*\n"));
            }
            _ => {}
        }
    }
    out
}

/// `seri config` and `/config`: the profile, the files read, the store,
/// and every setting in force with where it came from.
pub(crate) fn config_text(app: &crate::app::App) -> Result<String, crate::exit::Exit> {
    let project = match &app.project_config {
        Some((path, true)) => format!("project      {} (trusted; merged over config.json)\n", path.display()),
        Some((path, false)) => format!("project      {} (not trusted, not applied: seri mcp trust)\n", path.display()),
        None => String::new(),
    };
    let codex = app.codex.as_ref().map(crate::codex_setup::CodexFile::config_lines).unwrap_or_default();
    let project = format!("{project}{}{codex}", app.claude.config_lines());
    let mode = app.flags.permission_mode.clone().unwrap_or_else(|| "default".to_owned());
    let mode_origin =
        if app.flags.permission_mode.is_some() { "--permission-mode" } else { "default or permissions.mode" };
    Ok(format!(
        "profile      {}\nconfig.json  {}\nstore        {} ({})\n{project}\n{}\npermission mode: {mode} ({mode_origin})",
        app.root().display(),
        app.profile.config_path().display(),
        app.store.path().display(),
        app.store_origin,
        crate::config::render(
            &app.effective,
            app.context_window_of(None),
            &[
                crate::trajectory::config_rows(app)?,
                crate::sandbox::config_rows(&app.config.sandbox, app.flags.sandbox.as_deref(), &app.sandbox),
            ]
            .concat()
        )
    ))
}

/// `/context` (the REPL's and an editor's): the measured figure, then each part of the next request.
pub(crate) fn context_lines(report: &seri_runloop::ContextReport) -> String {
    let compact = crate::render::compact_count;
    let window = report.window.max(1);
    let mut out = match report.measured {
        Some(tokens) => format!(
            "context      {} of {} tokens on the last turn ({}%)\n",
            compact(tokens),
            compact(window),
            seri_prompt::ContextUsage::new(
                tokens,
                std::num::NonZeroU64::new(window).unwrap_or(std::num::NonZeroU64::MIN)
            )
            .percent()
        ),
        None => format!("context      nothing measured yet; the window is {} tokens\n", compact(window)),
    };
    let ratio = report.chars_per_token;
    if ratio == seri_core::tokens::CharsPerToken::DEFAULT {
        out.push_str("next request, estimated (characters / 4):\n");
    } else {
        let per_token = ratio.milli() as f64 / 1000.0;
        out.push_str(&format!(
            "next request, estimated (characters / {per_token:.2}, learned from this model's bills):\n"
        ));
    }
    for part in &report.parts {
        let name = match part.name {
            "system prompt" | "per-turn blocks" => part.name.to_owned(),
            name => format!("{name} ({})", part.items),
        };
        out.push_str(&format!("  {name:<44} {:>7}\n", compact(part.tokens)));
    }
    out.push_str(&format!("  {:<44} {:>7}", "total", compact(report.estimated)));
    out
}

/// `/memory`: the files a session started here reads (project
/// instructions, rules, memory), and where to add more.
pub(crate) fn memory_text(app: &crate::app::App) -> Result<String, crate::exit::Exit> {
    let files = crate::prompt_files::read(&app.cwd, &app.profile)?;
    let root = crate::prompt_files::repository_root(&app.cwd);
    let mut out = String::new();
    if files.frozen.is_empty() {
        out.push_str("No instruction, rule or memory files: a new session starts with seri's own prompt only.\n");
    }
    for file in &files.frozen {
        let kind = match file.kind {
            seri_prompt::ContextFileKind::ProjectInstructions => "instructions",
            seri_prompt::ContextFileKind::Rule => "rule",
            seri_prompt::ContextFileKind::Memory => "memory",
        };
        out.push_str(&format!("  {kind:<13} {} ({} bytes)\n", file.path, file.text.len()));
    }
    out.push_str(&format!(
        "Edit {} (or CLAUDE.md) for the project, rules in {} and {}, memory in {}; a session reads them when it starts.\n",
        root.join("AGENTS.md").display(),
        root.join(".seri/rules").display(),
        app.profile.root().join("rules").display(),
        app.profile.memory_dir().display()
    ));
    Ok(out)
}

/// What the provider's model list says of a name `/model` was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ModelCheck {
    /// The provider lists it.
    Listed,
    /// The provider lists models, and not this one: the nearest name when
    /// one is close, and the count listed.
    Unknown { nearest: Option<String>, listed: usize },
    /// Nothing to check against: why (the provider has no list, or asking
    /// it failed).
    NotChecked(String),
}

/// Checks `name` against what `provider` answered when asked for its models.
pub(crate) fn check_model(name: &str, provider: &str, answer: Result<Option<Vec<String>>, String>) -> ModelCheck {
    let listed = match answer {
        Ok(Some(listed)) if !listed.is_empty() => listed,
        Ok(Some(_)) => return ModelCheck::NotChecked(format!("{provider} listed no models")),
        Ok(None) => return ModelCheck::NotChecked(format!("{provider} has no model list to check against")),
        Err(error) => return ModelCheck::NotChecked(format!("{provider}'s model list could not be read: {error}")),
    };
    if listed.iter().any(|m| m == name) {
        return ModelCheck::Listed;
    }
    ModelCheck::Unknown { nearest: nearest_model(name, &listed).map(str::to_owned), listed: listed.len() }
}

/// The listed name nearest `name`: the same but for case, else the
/// shortest that contains it (`sonnet`), else one within a few edits
/// (a third of the name's length, at least two).
fn nearest_model<'a>(name: &str, listed: &'a [String]) -> Option<&'a str> {
    let lower = name.to_lowercase();
    if let Some(same) = listed.iter().find(|m| m.to_lowercase() == lower) {
        return Some(same);
    }
    if lower.chars().count() >= 3
        && let Some(containing) =
            listed.iter().filter(|m| m.to_lowercase().contains(&lower)).min_by_key(|m| (m.len(), m.as_str()))
    {
        return Some(containing);
    }
    let allowed = (lower.chars().count() / 3).max(2);
    listed
        .iter()
        .map(|m| (crate::args::edit_distance(&lower, &m.to_lowercase()), m))
        .filter(|(distance, _)| *distance <= allowed)
        .min()
        .map(|(_, m)| m.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_reads_back_by_its_name() {
        for command in SlashCommand::ALL {
            assert_eq!(SlashCommand::parse(command.name()), Some(command));
            assert!(!command.description().is_empty());
        }
        assert_eq!(SlashCommand::parse("quit"), Some(SlashCommand::Exit));
        assert_eq!(SlashCommand::parse("nonsense"), None);
        assert_eq!(SlashCommand::Export.usage(), "/export [FILE]");
    }

    #[test]
    fn a_model_name_is_checked_against_the_providers_list_with_the_nearest_offered() {
        let listed = || Ok(Some(vec!["gpt-4.1".to_owned(), "gpt-4.1-mini".to_owned(), "o3".to_owned()]));
        assert_eq!(check_model("gpt-4.1", "openai", listed()), ModelCheck::Listed);
        let unknown = |nearest: &str| ModelCheck::Unknown { nearest: Some(nearest.to_owned()), listed: 3 };
        assert_eq!(check_model("gpt-41", "openai", listed()), unknown("gpt-4.1"));
        assert_eq!(check_model("GPT-4.1", "openai", listed()), unknown("gpt-4.1"));
        assert_eq!(check_model("mini", "openai", listed()), unknown("gpt-4.1-mini"));
        assert_eq!(check_model("nonsense", "openai", listed()), ModelCheck::Unknown { nearest: None, listed: 3 });
        assert_eq!(
            check_model("x", "script", Ok(None)),
            ModelCheck::NotChecked("script has no model list to check against".to_owned())
        );
        assert_eq!(
            check_model("x", "openai", Err("401 bad key".to_owned())),
            ModelCheck::NotChecked("openai's model list could not be read: 401 bad key".to_owned())
        );
    }

    #[test]
    fn a_command_file_takes_its_description_and_arguments_as_claude_codes_do() {
        let path = PathBuf::from("review.md");
        let described = CustomCommand::parse(
            "review",
            "---\ndescription: Review a file\nallowed-tools: Read\n---\nReview $ARGUMENTS for bugs.\n",
            CommandSource::Project,
            path.clone(),
        );
        assert_eq!(described.description, "Review a file");
        assert_eq!(described.expand(" src/lib.rs "), "Review src/lib.rs for bugs.");
        let plain = CustomCommand::parse("tests", "Run the tests and fix what fails.\n", CommandSource::User, path);
        assert_eq!(plain.description, "Run the tests and fix what fails.");
        assert_eq!(plain.expand(""), "Run the tests and fix what fails.");
        assert_eq!(plain.expand("only unit"), "Run the tests and fix what fails.\n\nARGUMENTS: only unit");
    }
}
