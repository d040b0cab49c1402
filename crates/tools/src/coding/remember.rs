//! `remember`: a memory write the person approves. The note lands in the
//! profile's `memory/` folder as one markdown file, written atomically, and
//! enters the system prompt of the next session seri starts, never the
//! current one: a session's prompt is frozen when it starts.

use async_trait::async_trait;
use serde_json::{Value, json};
use seri_prompt::text::tools;

use super::atomic::write_atomic;
use super::text::{plural, size};
use super::{blocking, check, preview};
use crate::error::{InputError, ToolError};
use crate::input::Obj;
use crate::outcome::ToolOutcome;
use crate::permissions::ApprovalRequest;
use crate::run::{RunContext, RunKind};
use crate::tool::{Availability, Tool, ToolContext};

/// The tool's name.
pub const NAME: &str = "remember";

/// The largest note, in bytes: memory files all go into every future
/// system prompt, so each stays small.
pub const MAX_MEMORY_BYTES: usize = 16 * 1024;

/// The longest note name.
const MAX_NAME_CHARS: usize = 64;

/// The `remember` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct Remember;

#[async_trait]
impl Tool for Remember {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        tools::REMEMBER
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "name": {
                    "type": "string",
                    "description": "The note's file name: lowercase letters, digits and dashes.",
                    "pattern": "^[a-z0-9][a-z0-9-]*$",
                    "maxLength": MAX_NAME_CHARS
                },
                "content": {"type": "string", "description": "The whole note, in markdown."}
            },
            "required": ["name", "content"],
            "additionalProperties": false
        })
    }

    /// A person's run writes memory; automation and child runs do not.
    fn availability(&self, run: &RunContext) -> Availability {
        match run.run.map(|r| r.kind) {
            Some(RunKind::Interactive) => Availability::Available,
            Some(RunKind::Script) => {
                Availability::Unavailable("runs started by a script or automation do not write memory")
            }
            Some(RunKind::DelegatedChild { .. } | RunKind::TypedChild { .. }) => {
                Availability::Unavailable("a child run reports to its parent; it does not write memory")
            }
            None => Availability::Unavailable("memory is written only inside a run"),
        }
    }

    async fn call(&self, ctx: ToolContext<'_>, input: Value) -> Result<ToolOutcome, ToolError> {
        let obj = Obj::new(&input, "")?;
        obj.only(&["name", "content"], "")?;
        let name = obj.req_str("name")?.to_owned();
        check_name(&name)?;
        let content = obj.req_str("content")?.to_owned();
        if content.trim().is_empty() {
            return Err(InputError::new("content", "is empty: give the note's text").into());
        }
        if content.len() > MAX_MEMORY_BYTES {
            let got = size(content.len() as u64);
            let most = size(MAX_MEMORY_BYTES as u64);
            return Err(InputError::new("content", format!("is {got}; a note holds at most {most}")).into());
        }
        let dir =
            canonical_dir(ctx.access.memory_dir()).map_err(|e| ToolError::io("could not find the memory folder", e))?;
        let path = dir.join(format!("{name}.md"));
        let shown = format!("~/memory/{name}.md");
        let request = ApprovalRequest {
            tool: NAME.to_owned(),
            target: shown.clone(),
            path: None,
            outside_workspace: false,
            preview: Some(preview(&content, "+ ")),
            call: None,
            arguments: serde_json::Value::Null,
            each_time: false,
        };
        check(ctx, &request).await?;
        let lines = plural(content.lines().count() as u64, "line", "lines");
        let bytes = size(content.len() as u64);
        let replaced = matches!(super::checked::kind(&path), Ok(Some(false)));
        let target = shown.clone();
        blocking(move || {
            super::checked::create_dirs(&dir)
                .map_err(|e| ToolError::io(format!("could not create the memory folder for {target}"), e))?;
            write_atomic(&path, content.as_bytes()).map_err(|e| ToolError::io(format!("could not write {target}"), e))
        })
        .await?;
        let verb = if replaced { "Replaced" } else { "Saved" };
        Ok(ToolOutcome::text(format!(
            "{verb} {shown} ({lines}, {bytes}). It enters the system prompt of the next session, not this one."
        )))
    }
}

/// `dir` through its symlinks (a profile under a linked home, a `memory/`
/// the person linked elsewhere), as the checked writes need: a canonical
/// path holds no symlink. A `memory/` not made yet is its parent's.
fn canonical_dir(dir: &std::path::Path) -> std::io::Result<std::path::PathBuf> {
    match std::fs::canonicalize(dir) {
        Ok(path) => Ok(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => match (dir.parent(), dir.file_name()) {
            (Some(parent), Some(name)) => Ok(std::fs::canonicalize(parent)?.join(name)),
            _ => Err(e),
        },
        Err(e) => Err(e),
    }
}

/// A name is one file in `memory/`: no folders, no dots, nothing hidden.
fn check_name(name: &str) -> Result<(), InputError> {
    let valid = !name.is_empty()
        && name.chars().count() <= MAX_NAME_CHARS
        && !name.starts_with('-')
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if valid {
        Ok(())
    } else {
        Err(InputError::new(
            "name",
            format!(
                "`{name}` is not a note name: use 1 to {MAX_NAME_CHARS} lowercase letters, digits and dashes, not starting with a dash"
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_one_plain_file_in_memory() {
        for good in ["deploys", "release-process", "a1", &"x".repeat(MAX_NAME_CHARS)] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in ["", "-x", "../secrets", "Notes", "a.md", "a b", ".hidden", &"x".repeat(MAX_NAME_CHARS + 1)] {
            let error = check_name(bad).unwrap_err().to_string();
            assert!(error.contains("is not a note name"), "{bad}: {error}");
        }
    }
}
