//! Skills, as the open Agent Skills format defines them: a folder holding a
//! `SKILL.md` (front matter with `name` and `description`, then the
//! instructions) and whatever scripts and files it needs beside it.
//!
//! They are found in the project (`.seri/skills/`, `.claude/skills/`,
//! `.agents/skills/` at the repository root) and the person's own places
//! (the profile's `skills/`, and Claude Code's `~/.claude/skills/`). Only
//! each one's name and description go into a new session's frozen prompt;
//! the model loads a skill's instructions with the `skill` verb when a
//! task needs them, and that call and its result are events like any
//! other (so `read thread:`, projections and continuations carry them).
//! `/skills` lists them, with what could not be used and why.
//!
//! A project's skills are the repository's, which a model may have
//! written: they are offered only once `seri mcp trust` trusted the
//! project's files as they are (their `SKILL.md` files are part of the
//! fingerprint). The first skill of a name wins, the project's first.
//!
//! Reading one `SKILL.md` ([`parse`]) is pure.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};
use seri_tools::{Availability, InputError, RunContext, Tool, ToolContext, ToolError, ToolOutcome};
use sha2::{Digest as _, Sha256};

/// The verb's name.
pub(crate) const NAME: &str = "skill";

/// The project's skill folders, relative to the repository root.
pub(crate) const PROJECT_DIRS: [&str; 3] = [".seri/skills", ".claude/skills", ".agents/skills"];

/// The longest name the format allows.
const MAX_NAME: usize = 64;

/// The longest description the format allows.
const MAX_DESCRIPTION: usize = 1024;

/// Whose a skill is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    Project,
    User,
}

/// One skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Skill {
    pub(crate) name: String,
    pub(crate) description: String,
    /// Its instructions: `SKILL.md` after the front matter.
    pub(crate) body: String,
    /// Its folder.
    pub(crate) dir: PathBuf,
    pub(crate) scope: Scope,
    /// Hex SHA-256 of its `SKILL.md`.
    pub(crate) sha256: String,
}

/// What was found: the skills offered, and the folders that are not, each
/// with why.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Skills {
    pub(crate) found: Vec<Skill>,
    pub(crate) not_used: Vec<(PathBuf, String)>,
}

/// A markdown file's front matter, key by key, and the text after it.
pub(crate) type FrontMatter = (Vec<(String, String)>, String);

/// The front matter of a markdown file (`---`, `key: value` lines, `---`)
/// as its keys and values, and the text after it; `None` without one. A
/// folded or literal value (`key: >` and indented lines) is one line;
/// quotes around a value are taken off. Only the top level is read.
pub(crate) fn front_matter(text: &str) -> Option<Result<FrontMatter, String>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text.strip_prefix("---\n").or_else(|| text.strip_prefix("---\r\n"))?;
    let Some((front, body)) = rest.split_once("\n---") else {
        return Some(Err("its front matter has no closing `---`".to_owned()));
    };
    let body = body.split_once('\n').map_or("", |(_, body)| body).trim().to_owned();
    let mut pairs = Vec::new();
    let mut lines = front.lines().peekable();
    while let Some(line) = lines.next() {
        if line.starts_with([' ', '\t']) {
            continue;
        }
        let Some((key, value)) = line.split_once(':') else { continue };
        let mut value = value.trim().to_owned();
        if matches!(value.as_str(), ">" | ">-" | "|" | "|-") {
            let mut folded = Vec::new();
            while let Some(next) = lines.peek().filter(|l| l.starts_with([' ', '\t']) || l.trim().is_empty()) {
                folded.push(next.trim().to_owned());
                lines.next();
            }
            value = folded.join(" ").trim().to_owned();
        }
        let value = value.trim_matches(|c| c == '"' || c == '\'').trim().to_owned();
        pairs.push((key.trim().to_owned(), value));
    }
    Some(Ok((pairs, body)))
}

/// Reads a `SKILL.md` of the folder `folder` (its last component): its
/// name, description and instructions, or what is wrong with it.
pub(crate) fn parse(folder: &str, text: &str) -> Result<(String, String, String), String> {
    let Some(parsed) = front_matter(text) else {
        return Err("SKILL.md does not start with front matter (`---`, `name:`, `description:`, `---`)".to_owned());
    };
    let (pairs, body) = parsed.map_err(|e| format!("SKILL.md: {e}"))?;
    let (mut name, mut description) = (None, None);
    for (key, value) in pairs {
        match key.as_str() {
            "name" => name = Some(value),
            "description" => description = Some(value),
            _ => {}
        }
    }
    let name = name.filter(|n| !n.is_empty()).ok_or("SKILL.md's front matter has no `name`")?;
    let valid = name.len() <= MAX_NAME
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    if !valid {
        return Err(format!("`{name}` is not a skill name: at most {MAX_NAME} lowercase letters, digits and hyphens"));
    }
    if name != folder {
        return Err(format!("its name `{name}` is not its folder's name `{folder}`"));
    }
    let description = description.filter(|d| !d.is_empty()).ok_or("SKILL.md's front matter has no `description`")?;
    if description.chars().count() > MAX_DESCRIPTION {
        return Err(format!("its description is longer than {MAX_DESCRIPTION} characters"));
    }
    Ok((name, description, body))
}

/// The folders skills are found in, the project's first: the repository
/// root's, then the profile's and Claude Code's own.
pub(crate) fn places(repository: &Path, profile: &Path, claude_home: Option<&Path>) -> Vec<(PathBuf, Scope)> {
    let mut places: Vec<(PathBuf, Scope)> = PROJECT_DIRS.iter().map(|d| (repository.join(d), Scope::Project)).collect();
    places.push((profile.join("skills"), Scope::User));
    places.extend(claude_home.map(|home| (home.join("skills"), Scope::User)));
    places
}

/// The `SKILL.md` files of a project, with their text, for the trust
/// fingerprint.
pub(crate) fn project_files(repository: &Path) -> Vec<(PathBuf, String)> {
    PROJECT_DIRS.iter().flat_map(|dir| skill_files(&repository.join(dir))).collect()
}

/// Each `SKILL.md` directly in a subfolder of `dir`, sorted, with its text.
fn skill_files(dir: &Path) -> Vec<(PathBuf, String)> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut paths: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path().join("SKILL.md")).collect();
    paths.sort();
    paths.into_iter().filter_map(|path| std::fs::read_to_string(&path).ok().map(|text| (path, text))).collect()
}

impl Skills {
    /// The skills of `places`, a project's only when `project_trusted`.
    pub(crate) fn find(places: &[(PathBuf, Scope)], project_trusted: bool) -> Self {
        let mut skills = Skills::default();
        for (dir, scope) in places {
            for (path, text) in skill_files(dir) {
                let Some(folder) = path.parent() else { continue };
                if *scope == Scope::Project && !project_trusted {
                    skills.not_used.push((
                        folder.to_path_buf(),
                        "a project's skill is offered once you trust the project: seri mcp trust".to_owned(),
                    ));
                    continue;
                }
                let folder_name = folder.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                match parse(&folder_name, &text) {
                    Ok((name, _, _)) if skills.found.iter().any(|s| s.name == name) => {
                        skills.not_used.push((folder.to_path_buf(), format!("another skill is named `{name}`")));
                    }
                    Ok((name, description, body)) => {
                        let sha256 = Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
                        skills.found.push(Skill {
                            name,
                            description,
                            body,
                            dir: folder.to_path_buf(),
                            scope: *scope,
                            sha256,
                        });
                    }
                    Err(why) => skills.not_used.push((folder.to_path_buf(), why)),
                }
            }
        }
        skills
    }

    /// The system prompt's entries.
    pub(crate) fn entries(&self) -> Vec<seri_prompt::SkillEntry> {
        self.found
            .iter()
            .map(|s| seri_prompt::SkillEntry {
                name: s.name.clone(),
                description: s.description.clone(),
                path: s.dir.join("SKILL.md").to_string_lossy().into_owned(),
                sha256: s.sha256.clone(),
            })
            .collect()
    }

    /// `/skills`: each skill, whose it is and what it is for, then what
    /// could not be used.
    pub(crate) fn render(&self) -> String {
        let mut out = String::new();
        if self.found.is_empty() {
            out.push_str(
                "No skills (a folder with a SKILL.md in .seri/skills/, .claude/skills/ or .agents/skills/ of the \
                 project, or in the profile's skills/ or ~/.claude/skills/).\n",
            );
        }
        for skill in &self.found {
            let whose = match skill.scope {
                Scope::Project => "project",
                Scope::User => "user",
            };
            out.push_str(&format!("{}  ({whose}, {})\n  {}\n", skill.name, skill.dir.display(), skill.description));
        }
        for (dir, why) in &self.not_used {
            out.push_str(&format!("not used: {}: {why}\n", dir.display()));
        }
        out
    }
}

/// The `skill` verb: a listed skill's instructions and files.
#[derive(Debug)]
pub(crate) struct SkillTool {
    pub(crate) skills: Arc<Skills>,
}

/// The files of a skill's folder but `SKILL.md`, relative to it, sorted;
/// at most 100.
fn folder_files(dir: &Path) -> Vec<String> {
    let mut files = Vec::new();
    let mut folders = vec![(dir.to_path_buf(), 0)];
    while let Some((folder, depth)) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else { continue };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            match entry.file_type() {
                Ok(kind) if kind.is_dir() && depth < 3 => folders.push((path, depth + 1)),
                Ok(kind) if kind.is_file() => {
                    if let Ok(relative) = path.strip_prefix(dir)
                        && relative != Path::new("SKILL.md")
                    {
                        files.push(relative.to_string_lossy().into_owned());
                    }
                }
                _ => {}
            }
        }
    }
    files.sort();
    files.truncate(100);
    files
}

#[async_trait]
impl Tool for SkillTool {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        seri_prompt::text::verbs::SKILL
    }

    fn input_schema(&self) -> Value {
        let names: Vec<&str> = self.skills.found.iter().map(|s| s.name.as_str()).collect();
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "enum": names, "description": "The skill, as the system prompt lists it."}
            },
            "required": ["name"],
            "additionalProperties": false
        })
    }

    fn availability(&self, _run: &RunContext) -> Availability {
        Availability::Available
    }

    async fn call(&self, _ctx: ToolContext<'_>, input: Value) -> Result<ToolOutcome, ToolError> {
        let name =
            input.get("name").and_then(Value::as_str).ok_or_else(|| InputError::new("name", "expected a string"))?;
        let Some(skill) = self.skills.found.iter().find(|s| s.name == name) else {
            let known: Vec<&str> = self.skills.found.iter().map(|s| s.name.as_str()).collect();
            return Err(
                InputError::new("name", format!("no skill `{name}`; the skills are: {}", known.join(", "))).into()
            );
        };
        let files = folder_files(&skill.dir);
        let mut text = format!(
            "<skill name=\"{}\" folder=\"{}\">\n{}\n</skill>",
            skill.name,
            skill.dir.display(),
            seri_prompt::escape::neutralize_frames(&skill.body)
        );
        if files.is_empty() {
            text.push_str("\nIts folder holds nothing else.");
        } else {
            text.push_str(&format!("\nIn its folder ({}): {}", skill.dir.display(), files.join(", ")));
        }
        Ok(ToolOutcome::text(text))
    }
}

#[cfg(test)]
mod tests;
