//! `read_file`: a text file with line numbers (`cat -n` style), a page at a
//! time. Binary files are refused; a page stops at [`DEFAULT_LINES`] lines
//! or [`MAX_OUTPUT_BYTES`] of output, whichever comes first, and says where
//! to continue.

use std::io::{BufRead as _, BufReader, Cursor, Read as _};

use async_trait::async_trait;
use serde_json::{Value, json};
use seri_core::{FileRead, ToolFacts};
use seri_prompt::text::tools;

use super::text::{SNIFF_BYTES, count, cut_line, looks_binary, size};
use super::{blocking, check, lookup_error, request_for};
use crate::error::{InputError, ToolError};
use crate::input::Obj;
use crate::outcome::ToolOutcome;
use crate::permissions::ResolvedPath;
use crate::run::RunContext;
use crate::tool::{Availability, Tool, ToolContext};

/// The tool's name.
pub const NAME: &str = "read_file";

/// Lines a read shows when `limit` is not given.
pub const DEFAULT_LINES: u64 = 2_000;

/// Most bytes of numbered lines one read returns.
pub const MAX_OUTPUT_BYTES: usize = 64 * 1024;

/// Longest line shown, in characters; the rest is cut with a note.
pub const MAX_LINE_CHARS: usize = 2_000;

/// The `read_file` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadFile;

#[async_trait]
impl Tool for ReadFile {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        tools::READ_FILE
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "The file, relative to the working directory or absolute."},
                "offset": {"type": "integer", "minimum": 1, "description": "First line to show, counting from 1. Default: 1."},
                "limit": {"type": "integer", "minimum": 1, "description": format!("Most lines to show. Default: {DEFAULT_LINES}.")}
            },
            "required": ["path"],
            "additionalProperties": false
        })
    }

    fn availability(&self, run: &RunContext) -> Availability {
        super::availability(run)
    }

    async fn call(&self, ctx: ToolContext<'_>, input: Value) -> Result<ToolOutcome, ToolError> {
        let obj = Obj::new(&input, "")?;
        obj.only(&["path", "offset", "limit"], "")?;
        let written = obj.req_str("path")?;
        let offset = obj.opt_u64("offset", 1)?.unwrap_or(1);
        let limit = obj.opt_u64("limit", 1)?.unwrap_or(DEFAULT_LINES);
        let resolved = ctx.workspace.resolve(written, "path")?;
        check(ctx, &request_for(NAME, &resolved)).await?;
        let (text, facts) = blocking(move || read_page(&resolved, offset, limit)).await?;
        Ok(ToolOutcome::text(text).with_facts(ToolFacts::Read(facts)))
    }
}

/// Lines `offset ..= offset + limit - 1` of the file, numbered, with a note
/// of what was left out; and what was read, as values.
fn read_page(resolved: &ResolvedPath, offset: u64, limit: u64) -> Result<(String, FileRead), ToolError> {
    let display = &resolved.display;
    // One open of the checked path, then everything from its handle: the
    // file read is the file checked, whatever happens to the tree meanwhile.
    let mut file = super::checked::open_read(&resolved.path).map_err(|e| lookup_error(e, "path", display, "read"))?;
    let meta = file.metadata().map_err(|e| lookup_error(e, "path", display, "read"))?;
    if meta.is_dir() {
        return Err(InputError::new("path", format!("`{display}` is a folder; use list to see what it holds")).into());
    }
    let io = |e| ToolError::io(format!("could not read {display}"), e);
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    file.by_ref().take(SNIFF_BYTES as u64).read_to_end(&mut head).map_err(io)?;
    if looks_binary(&head) {
        return Err(InputError::new(
            "path",
            format!("`{display}` is a binary file ({}); read_file reads text only", size(meta.len())),
        )
        .into());
    }
    let mut reader = BufReader::new(Cursor::new(head).chain(file));
    let end = offset.saturating_add(limit);
    let mut out = String::new();
    let mut line = Vec::new();
    let mut total = 0u64;
    let mut last_shown = None;
    let mut cut_by_size = false;
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).map_err(io)? == 0 {
            break;
        }
        total += 1;
        // Every line is counted so the note can say how many there are.
        if total < offset || total >= end || cut_by_size {
            continue;
        }
        let bytes = line.strip_suffix(b"\n").unwrap_or(&line);
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        let text = String::from_utf8_lossy(bytes);
        let numbered = format!("{total:>6}\t{}\n", cut_line(&text, MAX_LINE_CHARS));
        if out.len() + numbered.len() > MAX_OUTPUT_BYTES && last_shown.is_some() {
            cut_by_size = true;
            continue;
        }
        out.push_str(&numbered);
        last_shown = Some(total);
    }
    let facts = |from, to| FileRead { path: display.clone(), lines: total, bytes: meta.len(), from, to };
    if total == 0 {
        return Ok((format!("(`{display}` is empty)"), facts(None, None)));
    }
    let Some(last) = last_shown else {
        return Err(InputError::new(
            "offset",
            format!(
                "{offset} is past the end of `{display}`, which has {}",
                super::text::plural(total, "line", "lines")
            ),
        )
        .into());
    };
    out.pop();
    if last < total {
        let why =
            if cut_by_size { format!("output cut at {}: ", size(MAX_OUTPUT_BYTES as u64)) } else { String::new() };
        let shown = if last == offset {
            format!("line {}", count(last))
        } else {
            format!("lines {}–{}", count(offset), count(last))
        };
        out.push_str(&format!("\n\n({why}showing {shown} of {}; continue with offset {})", count(total), last + 1));
    }
    Ok((out, facts(Some(offset), Some(last))))
}
