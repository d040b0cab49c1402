//! The system prompt: built once when a session starts, then frozen.
//!
//! Freezing is what lets a provider reuse its cached prefix on every turn:
//! AGENTS.md, always-on rules and memory files are read once by the caller
//! and never re-read mid-session. Anything that arrives later arrives as a
//! message in the conversation instead.

use seri_core::{FrozenPrompt, PromptFile};

use crate::escape::{escape_attr, neutralize_frames};
use crate::strategy::ContextStrategy;
use crate::text::{BASE_INSTRUCTIONS, CONTEXT_FILES_HEADING, SESSION_CONTINUATION_PROMPT, SKILLS_HEADING};

/// What kind of file a [`ContextFile`] is; files appear grouped in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ContextFileKind {
    /// `AGENTS.md` and its kin: the project's instructions.
    ProjectInstructions,
    /// An always-on rule.
    Rule,
    /// A memory file from the profile's `memory/` folder.
    Memory,
}

impl ContextFileKind {
    /// The frame the file's text is placed in.
    pub const fn frame(self) -> &'static str {
        match self {
            ContextFileKind::ProjectInstructions => "project_instructions",
            ContextFileKind::Rule => "rule",
            ContextFileKind::Memory => "memory",
        }
    }
}

/// A file the caller read for the system prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextFile {
    /// What it is.
    pub kind: ContextFileKind,
    /// Where it was read from, as the model should see it (`AGENTS.md`, `~/memory/style.md`).
    pub path: String,
    /// Its text.
    pub text: String,
    /// Hex SHA-256 of its bytes, recorded in the frozen prompt so two
    /// sessions can be compared without the files.
    pub sha256: String,
}

/// A skill as the system prompt lists it: its name and what it is for
/// (its instructions are loaded by the `skill` verb when needed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillEntry {
    /// Its name, which `skill` takes.
    pub name: String,
    /// What it is for, as its `SKILL.md` says.
    pub description: String,
    /// Where its `SKILL.md` was read from, recorded with the frozen prompt.
    pub path: String,
    /// Hex SHA-256 of its `SKILL.md`.
    pub sha256: String,
}

/// Builds a [`SystemPrompt`].
#[derive(Debug, Clone, Default)]
pub struct SystemPromptBuilder {
    strategy: ContextStrategy,
    files: Vec<ContextFile>,
    skills: Vec<SkillEntry>,
    environment: Option<crate::Environment>,
}

impl SystemPromptBuilder {
    /// A builder for a session on the given strategy. The continuation prompt
    /// is included exactly when the strategy is [`ContextStrategy::Continue`].
    pub fn new(strategy: ContextStrategy) -> Self {
        Self { strategy, files: Vec::new(), skills: Vec::new(), environment: None }
    }

    /// Adds a file. Files are grouped by kind (project instructions, rules,
    /// memory) and keep the order they were added in within a kind.
    pub fn file(mut self, file: ContextFile) -> Self {
        self.files.push(file);
        self
    }

    /// Adds several files; see [`SystemPromptBuilder::file`].
    pub fn files(mut self, files: impl IntoIterator<Item = ContextFile>) -> Self {
        self.files.extend(files);
        self
    }

    /// Lists skills, after the files: names and descriptions only.
    pub fn skills(mut self, skills: impl IntoIterator<Item = SkillEntry>) -> Self {
        self.skills.extend(skills);
        self
    }

    /// Adds where the session started, after everything else.
    pub fn environment(mut self, environment: crate::Environment) -> Self {
        self.environment = Some(environment);
        self
    }

    /// The finished prompt.
    pub fn build(mut self) -> SystemPrompt {
        // A stable sort keeps the caller's order within each kind.
        self.files.sort_by_key(|f| f.kind);
        let mut sections: Vec<String> = vec![BASE_INSTRUCTIONS.to_owned()];
        match self.strategy {
            ContextStrategy::Continue => sections.push(SESSION_CONTINUATION_PROMPT.to_owned()),
            ContextStrategy::Compact => {}
        }
        if !self.files.is_empty() {
            sections.push(CONTEXT_FILES_HEADING.to_owned());
            sections.extend(self.files.iter().map(render_file));
        }
        if !self.skills.is_empty() {
            let listed: Vec<String> = self
                .skills
                .iter()
                .map(|s| {
                    format!(
                        "<skill name=\"{}\">{}</skill>",
                        escape_attr(&s.name),
                        neutralize_frames(s.description.trim())
                    )
                })
                .collect();
            sections.push(format!("{SKILLS_HEADING}\n\n{}", listed.join("\n")));
        }
        if let Some(environment) = &self.environment {
            sections.push(environment.to_string());
        }
        let skill_files = self.skills.into_iter().map(|s| PromptFile { path: s.path, sha256: s.sha256 });
        let files =
            self.files.into_iter().map(|f| PromptFile { path: f.path, sha256: f.sha256 }).chain(skill_files).collect();
        SystemPrompt { text: sections.join("\n\n"), files }
    }
}

fn render_file(file: &ContextFile) -> String {
    let frame = file.kind.frame();
    format!("<{frame} path=\"{}\">\n{}\n</{frame}>", escape_attr(&file.path), neutralize_frames(file.text.trim_end()))
}

/// The system prompt of one session, as sent on every request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SystemPrompt {
    text: String,
    files: Vec<PromptFile>,
}

impl SystemPrompt {
    /// A builder; see [`SystemPromptBuilder`].
    pub fn builder(strategy: ContextStrategy) -> SystemPromptBuilder {
        SystemPromptBuilder::new(strategy)
    }

    /// The exact text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The files it was built from, with their hashes.
    pub fn files(&self) -> &[PromptFile] {
        &self.files
    }

    /// The form stored on the session at creation, so `--resume` sends the
    /// same prefix.
    pub fn freeze(self) -> FrozenPrompt {
        FrozenPrompt { text: self.text, files: self.files, tools: Vec::new() }
    }

    /// A child run's prompt, from its parent session's frozen one: the same
    /// instructions and files without the session-continuation piece, since
    /// a child reports to its parent and never continues. Exactly what
    /// [`SystemPromptBuilder`] builds for the compact strategy from the
    /// same files; a prompt without the piece is returned as it is.
    pub fn for_child(parent: &FrozenPrompt) -> FrozenPrompt {
        let piece = format!("\n\n{SESSION_CONTINUATION_PROMPT}");
        FrozenPrompt {
            text: parent.text.replacen(&piece, "", 1),
            files: parent.files.clone(),
            tools: parent.tools.clone(),
        }
    }
}

#[cfg(test)]
mod child_tests {
    use super::*;

    #[test]
    fn a_childs_prompt_is_the_compact_prompt_of_the_same_files() {
        let file = || ContextFile {
            kind: ContextFileKind::ProjectInstructions,
            path: "AGENTS.md".into(),
            text: "Use tabs.".into(),
            sha256: "ab".repeat(32),
        };
        let parent = SystemPrompt::builder(ContextStrategy::Continue).file(file()).build().freeze();
        let compact = SystemPrompt::builder(ContextStrategy::Compact).file(file()).build().freeze();
        assert!(parent.text.contains(SESSION_CONTINUATION_PROMPT));
        assert_eq!(SystemPrompt::for_child(&parent), compact);
        assert_eq!(SystemPrompt::for_child(&compact), compact, "nothing to remove");
    }
}

#[cfg(test)]
mod skill_tests {
    use super::*;

    #[test]
    fn skills_are_listed_by_name_and_description_only() {
        let skill = |name: &str, description: &str| SkillEntry {
            name: name.into(),
            description: description.into(),
            path: format!(".claude/skills/{name}/SKILL.md"),
            sha256: "cd".repeat(32),
        };
        let prompt = SystemPrompt::builder(ContextStrategy::Compact)
            .skills([
                skill("pdf-forms", "Fill in PDF forms. Use when the person hands you a PDF form."),
                skill("release-notes", "Write release notes from the git log </skill> in our house style."),
            ])
            .build();
        let text = prompt.text();
        let listed = &text[text.find("# Skills").expect("a skills section")..];
        insta::assert_snapshot!(listed);
        assert_eq!(prompt.files().len(), 2, "each SKILL.md is recorded with the frozen prompt");
        let none = SystemPrompt::builder(ContextStrategy::Compact).build();
        assert!(!none.text().contains("# Skills"), "no skills, no section");
    }
}
