//! The person's subagents, in Claude Code's format: a markdown file whose
//! front matter says `name`, `description`, and optionally `tools` (a
//! comma-separated list of Claude Code's tool names) and `model`; its body
//! is the subagent's instructions. Found in the project's `.seri/agents/`
//! and `.claude/agents/`, and in the profile's `agents/` and Claude Code's
//! `~/.claude/agents/`; `delegate` offers them by name (`agent`), and a
//! child started as one reads its instructions before its task and has only
//! its tools.
//!
//! A project's are the repository's: offered once `seri mcp trust` trusted
//! the project's files (their files are part of the fingerprint). What seri
//! does not use (`model`, a tool it has no counterpart of) is named in
//! `/agents`' listing, never dropped silently. Reading a file ([`parse`]) is pure.

use std::path::{Path, PathBuf};

use seri_tools::Subagent;

/// The project's folders, relative to the repository root.
pub(crate) const PROJECT_DIRS: [&str; 2] = [".seri/agents", ".claude/agents"];

/// seri's tool for one of Claude Code's names; `None` when it has none.
fn seri_tool(claude: &str) -> Option<&str> {
    Some(match claude {
        "Bash" => "bash",
        "Edit" | "MultiEdit" => "edit",
        "Write" => "write_file",
        "Read" => "read_file",
        "Grep" => "grep",
        "Glob" | "LS" => "list",
        "Task" => "delegate",
        mcp if mcp.starts_with("mcp__") => mcp,
        _ => return None,
    })
}

/// One subagent read, with what it says that seri does not use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    pub(crate) agent: Subagent,
    pub(crate) path: PathBuf,
    pub(crate) not_used: Vec<String>,
}

/// The subagents found, and the files that could not be used, with why.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Agents {
    pub(crate) found: Vec<Found>,
    pub(crate) not_used: Vec<(PathBuf, String)>,
}

/// Reads one subagent file's `text`.
pub(crate) fn parse(path: &Path, text: &str) -> Result<Found, String> {
    let parsed = crate::skills::front_matter(text)
        .ok_or("it does not start with front matter (`---`, `name:`, `description:`, `---`)")?;
    let (pairs, body) = parsed?;
    let get = |key: &str| pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone()).filter(|v| !v.is_empty());
    let name = get("name").ok_or("its front matter has no `name`")?;
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        return Err(format!("`{name}` is not a subagent name: letters, digits, `-` and `_`"));
    }
    let description = get("description").ok_or("its front matter has no `description`")?;
    if body.is_empty() {
        return Err("it has no instructions after its front matter".to_owned());
    }
    let mut not_used = Vec::new();
    let tools = get("tools").map(|list| {
        let mut tools = Vec::new();
        for claude in list.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            match seri_tool(claude) {
                Some(tool) if !tools.iter().any(|t| t == tool) => tools.push(tool.to_owned()),
                Some(_) => {}
                None => not_used.push(format!("tools: `{claude}`: seri has no such tool")),
            }
        }
        tools
    });
    if let Some(model) = get("model") {
        not_used.push(format!("model `{model}`: a child uses the session's model"));
    }
    Ok(Found { agent: Subagent { name, description, instructions: body, tools }, path: path.to_path_buf(), not_used })
}

/// The folders subagents are found in, the project's first.
pub(crate) fn places(repository: &Path, profile: &Path, claude_home: Option<&Path>) -> Vec<(PathBuf, bool)> {
    let mut places: Vec<(PathBuf, bool)> = PROJECT_DIRS.iter().map(|d| (repository.join(d), true)).collect();
    places.push((profile.join("agents"), false));
    places.extend(claude_home.map(|home| (home.join("agents"), false)));
    places
}

/// The `*.md` files directly in `dir`, sorted, with their text.
fn files(dir: &Path) -> Vec<(PathBuf, String)> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut paths: Vec<PathBuf> =
        entries.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "md")).collect();
    paths.sort();
    paths.into_iter().filter_map(|path| std::fs::read_to_string(&path).ok().map(|text| (path, text))).collect()
}

/// A project's subagent files with their text, for the trust fingerprint.
pub(crate) fn project_files(repository: &Path) -> Vec<(PathBuf, String)> {
    PROJECT_DIRS.iter().flat_map(|dir| files(&repository.join(dir))).collect()
}

impl Agents {
    /// The subagents of `places` (each with whether it is the project's),
    /// a project's only when `project_trusted`; the first of a name wins.
    pub(crate) fn find(places: &[(PathBuf, bool)], project_trusted: bool) -> Self {
        let mut agents = Agents::default();
        for (dir, project) in places {
            for (path, text) in files(dir) {
                if *project && !project_trusted {
                    agents.not_used.push((
                        path,
                        "a project's subagent is offered once you trust the project: seri mcp trust".to_owned(),
                    ));
                    continue;
                }
                match parse(&path, &text) {
                    Ok(found) if agents.found.iter().any(|f| f.agent.name == found.agent.name) => {
                        let why = format!("another subagent is named `{}`", found.agent.name);
                        agents.not_used.push((path, why));
                    }
                    Ok(found) => agents.found.push(found),
                    Err(why) => agents.not_used.push((path, why)),
                }
            }
        }
        agents
    }

    /// `/agents`: each subagent, its tools and what it is for, then what
    /// could not be used.
    pub(crate) fn render(&self) -> String {
        let mut out = String::new();
        if self.found.is_empty() {
            out.push_str(
                "No subagents (a NAME.md in the project's .seri/agents/ or .claude/agents/, or in the profile's \
                 agents/ or ~/.claude/agents/).\n",
            );
        }
        for found in &self.found {
            let tools = found.agent.tools.as_ref().map_or_else(|| "a child's tools".to_owned(), |t| t.join(", "));
            out.push_str(&format!(
                "{}  ({}; tools: {tools})\n  {}\n",
                found.agent.name,
                found.path.display(),
                found.agent.description
            ));
            for not in &found.not_used {
                out.push_str(&format!("  not used: {not}\n"));
            }
        }
        for (path, why) in &self.not_used {
            out.push_str(&format!("not used: {}: {why}\n", path.display()));
        }
        out
    }
}

#[cfg(test)]
mod tests;
