//! `write_file`: create or replace a whole file. Missing parent folders are
//! created; the file is replaced atomically (a temporary file beside it,
//! flushed, then renamed over it), so a failure leaves the old file as it
//! was.

use async_trait::async_trait;
use serde_json::{Value, json};
use seri_core::{FileChange, ToolFacts};
use seri_prompt::text::tools;

use super::atomic::write_atomic;
use super::text::{plural, size};
use super::{PREVIEW_DIFF_LINES, blocking, check, request_for};
use crate::error::{InputError, ToolError};
use crate::input::Obj;
use crate::outcome::ToolOutcome;
use crate::run::RunContext;
use crate::tool::{Availability, Tool, ToolContext};

/// The largest existing file a question diffs against the new content.
const MAX_DIFFED_BYTES: u64 = 1024 * 1024;

/// The tool's name.
pub const NAME: &str = "write_file";

/// The `write_file` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteFile;

#[async_trait]
impl Tool for WriteFile {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        tools::WRITE_FILE
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "The file, relative to the working directory or absolute."},
                "content": {"type": "string", "description": "The whole new content of the file."}
            },
            "required": ["path", "content"],
            "additionalProperties": false
        })
    }

    fn availability(&self, run: &RunContext) -> Availability {
        super::availability(run)
    }

    async fn call(&self, ctx: ToolContext<'_>, input: Value) -> Result<ToolOutcome, ToolError> {
        let obj = Obj::new(&input, "")?;
        obj.only(&["path", "content"], "")?;
        let written = obj.req_str("path")?;
        let content = obj.req_str("content")?.to_owned();
        let resolved = ctx.workspace.resolve(written, "path")?;
        let mut request = request_for(NAME, &resolved);
        request.preview = Some(super::diff::created(&content, PREVIEW_DIFF_LINES));
        // Outside the workspace, nothing is looked at before the answer.
        if request.outside_workspace {
            check(ctx, &request).await?;
        }
        let existed = match super::checked::kind(&resolved.path) {
            Ok(Some(true)) => {
                return Err(InputError::new(
                    "path",
                    format!("`{}` is a folder; write_file writes files", resolved.display),
                )
                .into());
            }
            Ok(Some(false)) => true,
            Ok(None) | Err(_) => false,
        };
        // The question shows what changes: a diff over the file's text as it
        // is (read only inside the workspace), or the new file's head.
        let old = if existed {
            let resolved = resolved.clone();
            // A file too big or not text gets no diff, only the new head.
            blocking(move || {
                let small = std::fs::metadata(&resolved.path).is_ok_and(|m| m.len() <= MAX_DIFFED_BYTES);
                Ok(small.then(|| super::edit::read_text(&resolved).ok()).flatten())
            })
            .await?
        } else {
            None
        };
        let (change, whole) = match &old {
            Some(old) => super::diff::unified_kept(old, &content, PREVIEW_DIFF_LINES),
            None => super::diff::created_kept(&content, PREVIEW_DIFF_LINES),
        };
        let (added, removed) = match &old {
            Some(old) => super::diff::counts(old, &content),
            None if existed => {
                // Too big or not text to diff: the whole file is replaced.
                let resolved = resolved.clone();
                let old_lines = blocking(move || Ok(line_count(&resolved.path))).await?;
                (content.lines().count() as u64, old_lines)
            }
            None => (content.lines().count() as u64, 0),
        };
        if !request.outside_workspace {
            request.preview = Some(change.clone());
            check(ctx, &request).await?;
        }
        let lines = plural(content.lines().count() as u64, "line", "lines");
        let bytes = size(content.len() as u64);
        let display = resolved.display.clone();
        let facts = ToolFacts::Change(FileChange {
            path: display.clone(),
            created: !existed,
            diff: change,
            added,
            removed,
            whole,
        });
        blocking(move || {
            if let Some(parent) = resolved.path.parent() {
                super::checked::create_dirs(parent)
                    .map_err(|e| ToolError::io(format!("could not create the folders for {}", resolved.display), e))?;
            }
            write_atomic(&resolved.path, content.as_bytes())
                .map_err(|e| ToolError::io(format!("could not write {}", resolved.display), e))
        })
        .await?;
        let verb = if existed { "Replaced" } else { "Created" };
        Ok(ToolOutcome::text(format!("{verb} {display} ({lines}, {bytes}).")).with_facts(facts))
    }
}

/// How many lines the file at `path` holds (newlines, and a last line
/// without one); 0 when it cannot be read.
fn line_count(path: &std::path::Path) -> u64 {
    let Ok(bytes) = std::fs::read(path) else { return 0 };
    let newlines = bytes.iter().filter(|b| **b == b'\n').count() as u64;
    newlines + u64::from(bytes.last().is_some_and(|b| *b != b'\n'))
}
