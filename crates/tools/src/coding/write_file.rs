//! `write_file`: create or replace a whole file. Missing parent folders are
//! created; the file is replaced atomically (a temporary file beside it,
//! flushed, then renamed over it), so a failure leaves the old file as it
//! was.

use async_trait::async_trait;
use serde_json::{Value, json};
use seri_prompt::text::tools;

use super::atomic::write_atomic;
use super::text::{plural, size};
use super::{blocking, check, preview, request_for};
use crate::error::{InputError, ToolError};
use crate::input::Obj;
use crate::outcome::ToolOutcome;
use crate::run::RunContext;
use crate::tool::{Availability, Tool, ToolContext};

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
        request.preview = Some(preview(&content, "+ "));
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
        if !request.outside_workspace {
            check(ctx, &request).await?;
        }
        let lines = plural(content.lines().count() as u64, "line", "lines");
        let bytes = size(content.len() as u64);
        let display = resolved.display.clone();
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
        Ok(ToolOutcome::text(format!("{verb} {display} ({lines}, {bytes}).")))
    }
}
