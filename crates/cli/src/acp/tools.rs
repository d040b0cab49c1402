//! What an editor shows of a tool call, from what seri knows of it: its
//! kind (the editor's icon), a title, the file it follows, an edit as a
//! diff, a command's output. Pure: the same call always comes out the
//! same, so the mapping is snapshot-tested.

use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{
    ContentBlock, Diff, TextContent, ToolCall, ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields, ToolKind,
};
use serde_json::Value;
use seri_core::{CommandExit, ToolFacts};

/// One call as the model wrote it, with the folder its paths are relative to.
#[derive(Debug, Clone)]
pub(super) struct Call<'a> {
    /// The call's id.
    pub(super) id: &'a str,
    /// The tool.
    pub(super) name: &'a str,
    /// Its arguments.
    pub(super) arguments: &'a Value,
    /// The session's working directory.
    pub(super) cwd: &'a Path,
}

impl Call<'_> {
    fn text(&self, key: &str) -> Option<&str> {
        self.arguments.get(key).and_then(Value::as_str)
    }

    /// A path argument, absolute (editors open what they are given).
    fn path(&self, key: &str) -> Option<PathBuf> {
        self.text(key).map(|path| self.cwd.join(path))
    }

    /// The editor's icon for this tool. seri has no tool that deletes,
    /// moves or fetches: `bash` does those, and is `execute`.
    pub(super) fn kind(&self) -> ToolKind {
        match self.name {
            "read_file" | "read" => ToolKind::Read,
            "edit" | "write_file" | "remember" => ToolKind::Edit,
            "grep" | "list" => ToolKind::Search,
            "bash" => ToolKind::Execute,
            "plan" => ToolKind::Think,
            _ => ToolKind::Other,
        }
    }

    /// A line that says what the call does.
    pub(super) fn title(&self) -> String {
        let shown = |key: &str| self.text(key).map(str::to_owned);
        let titled = match self.name {
            "bash" => shown("command").map(|command| format!("$ {}", first_line(&command))),
            "read_file" => shown("path").map(|path| format!("Read {path}")),
            "edit" => shown("path").map(|path| format!("Edit {path}")),
            "write_file" => shown("path").map(|path| format!("Write {path}")),
            "grep" => shown("pattern").map(|pattern| match self.text("path") {
                Some(path) => format!("Search {path} for {pattern}"),
                None => format!("Search for {pattern}"),
            }),
            "list" => Some(format!("List {}", self.text("path").unwrap_or("."))),
            "read" => shown("target").map(|target| format!("Read {target}")),
            "delegate" => Some("Delegate a task".to_owned()),
            "continue_session" => Some("Continue in a new session".to_owned()),
            "plan" => Some("Update the plan".to_owned()),
            "status" => Some("Set the session's status".to_owned()),
            "remember" => Some("Remember".to_owned()),
            _ => None,
        };
        titled.unwrap_or_else(|| self.name.to_owned())
    }

    /// The files the call works on, for an editor that follows along.
    pub(super) fn locations(&self) -> Vec<ToolCallLocation> {
        let Some(path) = self.path("path") else { return Vec::new() };
        match self.name {
            "read_file" => {
                let line = self.arguments.get("offset").and_then(Value::as_u64).and_then(|l| u32::try_from(l).ok());
                vec![ToolCallLocation::new(path).line(line)]
            }
            "edit" | "write_file" | "grep" | "list" => vec![ToolCallLocation::new(path)],
            _ => Vec::new(),
        }
    }

    /// What the call would change, as the editor's diff: an edit's
    /// replaced and replacing text; a written file's whole new text over
    /// `before` (its text now, `None` when it does not exist or was not
    /// read). Other calls change no file seri can show.
    pub(super) fn diff(&self, before: Option<&str>) -> Option<ToolCallContent> {
        let path = self.path("path")?;
        match self.name {
            "edit" => {
                let old = self.text("old")?;
                let new = self.text("new").unwrap_or("");
                Some(ToolCallContent::Diff(Diff::new(path, new).old_text(old.to_owned())))
            }
            "write_file" => {
                let content = self.text("content")?;
                Some(ToolCallContent::Diff(Diff::new(path, content).old_text(before.map(str::to_owned))))
            }
            _ => None,
        }
    }

    /// What a person sees of the call before it runs: the diff of an edit,
    /// the command of `bash`.
    pub(super) fn preview(&self, before: Option<&str>) -> Vec<ToolCallContent> {
        if let Some(diff) = self.diff(before) {
            return vec![diff];
        }
        match (self.name, self.text("command")) {
            ("bash", Some(command)) => vec![text(format!("```sh\n{command}\n```"))],
            _ => Vec::new(),
        }
    }

    /// The `tool_call` that tells the editor the call started.
    pub(super) fn started(&self, before: Option<&str>) -> ToolCall {
        ToolCall::new(self.id.to_owned(), self.title())
            .kind(self.kind())
            .status(ToolCallStatus::InProgress)
            .locations(self.locations())
            .content(self.preview(before))
            .raw_input(self.arguments.clone())
    }

    /// The `tool_call_update` that ends it: completed or failed, with what
    /// it came to.
    pub(super) fn finished(&self, ended: &Ended<'_>, before: Option<&str>) -> ToolCallUpdate {
        let status = if ended.is_error { ToolCallStatus::Failed } else { ToolCallStatus::Completed };
        let mut content = Vec::new();
        match ended.facts {
            Some(ToolFacts::Change(_)) => content.extend(self.diff(before)),
            Some(ToolFacts::Command(run)) => {
                let exit = match run.exit {
                    CommandExit::Code { code } => format!("exit {code}"),
                    CommandExit::Signal { signal } => format!("killed by signal {signal}"),
                    CommandExit::Timeout => format!("killed at its {} ms timeout", run.timeout),
                    CommandExit::Unknown => "ended, how is unknown".to_owned(),
                };
                let output = run.tail.trim_end();
                content.push(text(if output.is_empty() {
                    exit
                } else {
                    let fence = fence_for(output);
                    format!("{fence}\n{output}\n{fence}\n{exit}")
                }));
            }
            _ => {}
        }
        if content.is_empty() && !ended.summary.is_empty() {
            content.push(text(ended.summary.to_owned()));
        }
        let raw = ended.facts.and_then(|facts| serde_json::to_value(facts).ok());
        ToolCallUpdate::new(
            self.id.to_owned(),
            ToolCallUpdateFields::new().status(status).content(content).raw_output(raw),
        )
    }
}

/// How a call ended, as seri recorded it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Ended<'a> {
    /// Whether it failed or was refused.
    pub(super) is_error: bool,
    /// The first line of its result.
    pub(super) summary: &'a str,
    /// What it came to, as values.
    pub(super) facts: Option<&'a ToolFacts>,
}

/// A text block of tool content.
pub(super) fn text(text: impl Into<String>) -> ToolCallContent {
    ToolCallContent::from(ContentBlock::Text(TextContent::new(text)))
}

fn first_line(text: &str) -> String {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("");
    if lines.next().is_some() { format!("{first} …") } else { first.to_owned() }
}

/// A code fence longer than any run of backticks in `text`.
fn fence_for(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

#[cfg(test)]
mod tests;
