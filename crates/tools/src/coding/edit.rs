//! `edit`: replace an exact piece of text in a file. The text must occur
//! exactly once unless `replaceAll` is set; zero or several matches are
//! refused with how many there were. The file is read, checked, and written
//! back atomically in one piece, so it is never left half edited.

use async_trait::async_trait;
use serde_json::{Value, json};
use seri_core::{FileChange, ToolFacts};
use seri_prompt::text::tools;

use super::atomic::write_atomic;
use super::text::{looks_binary, plural, size};
use super::{PREVIEW_DIFF_LINES, blocking, check, lookup_error, request_for};
use crate::error::{InputError, ToolError};
use crate::input::Obj;
use crate::outcome::ToolOutcome;
use crate::permissions::ResolvedPath;
use crate::run::RunContext;
use crate::tool::{Availability, Tool, ToolContext};

/// The tool's name.
pub const NAME: &str = "edit";

/// Most match line numbers a result or error lists.
const LISTED_LINES: usize = 10;

/// The `edit` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct Edit;

#[async_trait]
impl Tool for Edit {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        tools::EDIT
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "The file, relative to the working directory or absolute."},
                "old": {"type": "string", "description": "The exact text to replace, whitespace included."},
                "new": {"type": "string", "description": "The text to put in its place."},
                "replaceAll": {"type": "boolean", "description": "Replace every occurrence instead of exactly one. Default: false."}
            },
            "required": ["path", "old", "new"],
            "additionalProperties": false
        })
    }

    fn availability(&self, run: &RunContext) -> Availability {
        super::availability(run)
    }

    async fn call(&self, ctx: ToolContext<'_>, input: Value) -> Result<ToolOutcome, ToolError> {
        let obj = Obj::new(&input, "")?;
        obj.only(&["path", "old", "new", "replaceAll"], "")?;
        let written = obj.req_str("path")?;
        let old = obj.req_str("old")?.to_owned();
        let new = obj.req_str("new")?.to_owned();
        let replace_all = obj.opt_bool("replaceAll")?.unwrap_or(false);
        if old.is_empty() {
            return Err(InputError::new(
                "old",
                "empty; give the exact text to replace (to write a whole file, use write_file)",
            )
            .into());
        }
        if old == new {
            return Err(InputError::new("new", "the same as `old`; nothing would change").into());
        }
        let resolved = ctx.workspace.resolve(written, "path")?;
        let mut request = request_for(NAME, &resolved);
        // Outside the workspace the question shows only the call's own text.
        request.preview = Some(super::diff::unified(&old, &new, PREVIEW_DIFF_LINES));
        // Outside the workspace, nothing is read before the answer: a match
        // count would tell the model what the file holds.
        if request.outside_workspace {
            check(ctx, &request).await?;
        }
        let before = {
            let resolved = resolved.clone();
            blocking(move || read_text(&resolved)).await?
        };
        let planned = plan(&before, &old, &new, replace_all, &resolved.display)?;
        let (change, whole) = super::diff::unified_kept(&before, &planned.after, PREVIEW_DIFF_LINES);
        if !request.outside_workspace {
            request.preview = Some(change.clone());
            check(ctx, &request).await?;
        }
        let display = resolved.display.clone();
        let (added, removed) = super::diff::counts(&before, &planned.after);
        let facts = ToolFacts::Change(FileChange {
            path: display.clone(),
            created: false,
            diff: change,
            added,
            removed,
            whole,
        });
        blocking(move || {
            // The person may have taken a while to answer: write only over
            // the text that was checked.
            if read_text(&resolved)? != before {
                return Err(InputError::new(
                    "path",
                    format!(
                        "`{}` changed while the edit waited for approval; read it again and redo the edit",
                        resolved.display
                    ),
                )
                .into());
            }
            write_atomic(&resolved.path, planned.after.as_bytes())
                .map_err(|e| ToolError::io(format!("could not write {}", resolved.display), e))
        })
        .await?;
        Ok(ToolOutcome::text(format!(
            "Edited {display}: replaced {} ({}).",
            plural(planned.lines.len() as u64, "occurrence", "occurrences"),
            lines_text(&planned.lines)
        ))
        .with_facts(facts))
    }
}

/// The file's text; a file that is missing, a folder, binary or not UTF-8
/// cannot be edited.
pub(super) fn read_text(resolved: &ResolvedPath) -> Result<String, ToolError> {
    let display = &resolved.display;
    let mut file = super::checked::open_read(&resolved.path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            InputError::new("path", format!("`{display}` does not exist; create it with write_file")).into()
        }
        _ => lookup_error(e, "path", display, "read"),
    })?;
    let meta = file.metadata().map_err(|e| lookup_error(e, "path", display, "read"))?;
    if meta.is_dir() {
        return Err(InputError::new("path", format!("`{display}` is a folder; edit changes files")).into());
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut file, &mut bytes).map_err(|e| lookup_error(e, "path", display, "read"))?;
    if looks_binary(&bytes) {
        return Err(InputError::new(
            "path",
            format!("`{display}` is a binary file ({}); edit changes text only", size(bytes.len() as u64)),
        )
        .into());
    }
    String::from_utf8(bytes).map_err(|_| {
        InputError::new("path", format!("`{display}` is not UTF-8 text; edit cannot change it without corrupting it"))
            .into()
    })
}

/// The edited text and the line of each match in the original.
#[derive(Debug)]
struct Planned {
    after: String,
    lines: Vec<u64>,
}

fn plan(text: &str, old: &str, new: &str, replace_all: bool, display: &str) -> Result<Planned, InputError> {
    let lines = match_lines(text, old);
    match lines.len() {
        0 => {
            let mut problem = format!(
                "not found in `{display}` (0 matches). Copy the text exactly as it is in the file, whitespace included and without read_file's line numbers"
            );
            if text.contains("\r\n") && !old.contains('\r') {
                problem
                    .push_str("; the file has Windows line endings, so `old` must contain \\r\\n where it spans lines");
            }
            Err(InputError::new("old", problem))
        }
        1 => Ok(Planned { after: text.replacen(old, new, 1), lines }),
        _ if replace_all => Ok(Planned { after: text.replace(old, new), lines }),
        n => Err(InputError::new(
            "old",
            format!(
                "found {n} matches in `{display}` ({}); include more surrounding text so it matches once, or set replaceAll to replace all {n}",
                lines_text(&lines)
            ),
        )),
    }
}

/// The line (from 1) where each non-overlapping match of `old` starts.
fn match_lines(text: &str, old: &str) -> Vec<u64> {
    let mut lines = Vec::new();
    let mut line = 1u64;
    let mut scanned = 0;
    for (at, _) in text.match_indices(old) {
        line += text[scanned..at].bytes().filter(|b| *b == b'\n').count() as u64;
        scanned = at;
        lines.push(line);
    }
    lines
}

/// `line 4` or `lines 4, 9, 20`, listing at most [`LISTED_LINES`].
fn lines_text(lines: &[u64]) -> String {
    let listed: Vec<String> = lines.iter().take(LISTED_LINES).map(u64::to_string).collect();
    let more = if lines.len() > LISTED_LINES { ", …" } else { "" };
    let word = if lines.len() == 1 { "line" } else { "lines" };
    format!("{word} {}{more}", listed.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_are_counted_without_overlap_and_located_by_line() {
        assert_eq!(match_lines("a\nxx\nb\nxx xx\n", "xx"), [2, 4, 4]);
        assert_eq!(match_lines("aaaa", "aa"), [1, 1]);
        assert_eq!(match_lines("abc", "z"), Vec::<u64>::new());
        assert_eq!(lines_text(&[3]), "line 3");
        assert_eq!(lines_text(&(1..=12).collect::<Vec<_>>()), "lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, …");
    }
}
