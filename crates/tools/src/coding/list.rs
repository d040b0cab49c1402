//! `list`: the files and folders under a folder, recursively, as the
//! shared walk sees them (`.gitignore` honoured, symlinks shown but not
//! followed). Folders end in `/`; with a `glob`, only matching files are
//! listed. At most [`MAX_ENTRIES`] entries, with a note of how many more.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use serde_json::{Value, json};
use seri_core::{Listing, ToolFacts};
use seri_prompt::text::tools;

use super::text::{count, plural};
use super::walk::{EntryKind, Glob, Skip, display_path, walk};
use super::{blocking, check, lookup_error, request_for};
use crate::error::{InputError, ToolError, bounded};
use crate::input::Obj;
use crate::outcome::ToolOutcome;
use crate::run::RunContext;
use crate::tool::{Availability, Tool, ToolContext};

/// The tool's name.
pub const NAME: &str = "list";

/// Most entries one listing shows.
pub const MAX_ENTRIES: usize = 1_000;

/// The `list` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct List;

#[async_trait]
impl Tool for List {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        tools::LIST
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "The folder, relative to the working directory or absolute; `.` for the working directory."},
                "glob": {"type": "string", "description": "Only files matching this glob: `*.rs` matches names at any depth, `src/**/*.rs` paths below the folder."}
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
        obj.only(&["path", "glob"], "")?;
        let written = obj.req_str("path")?;
        let glob = obj.opt_str("glob")?.map(|g| Glob::new(g, "glob")).transpose()?;
        let glob_text = obj.opt_str("glob")?.map(str::to_owned);
        let resolved = ctx.workspace.resolve(written, "path")?;
        check(ctx, &request_for(NAME, &resolved)).await?;
        let is_dir = super::checked::kind(&resolved.path)
            .map_err(|e| lookup_error(e, "path", &resolved.display, "list"))?
            .ok_or_else(|| {
                lookup_error(std::io::Error::from(std::io::ErrorKind::NotFound), "path", &resolved.display, "list")
            })?;
        if !is_dir {
            return Err(
                InputError::new("path", format!("`{}` is a file; read it with read_file", resolved.display)).into()
            );
        }
        let path = resolved.display.clone();
        let skip = Skip::of(ctx);
        let (text, entries) = blocking(move || {
            Ok(listing(&resolved.path, &resolved.display, glob.as_ref(), glob_text.as_deref(), &skip))
        })
        .await?;
        Ok(ToolOutcome::text(text).with_facts(ToolFacts::List(Listing { path, entries })))
    }
}

/// The listing the model reads, and how many entries it found.
fn listing(root: &Path, base: &str, glob: Option<&Glob>, glob_text: Option<&str>, skip: &Skip) -> (String, u64) {
    let mut out = String::new();
    let mut total = 0usize;
    let (entries, unreadable) = match walk(root, skip) {
        Ok(walked) => walked,
        Err(_) => (Vec::new(), 1),
    };
    for entry in entries {
        let relative = entry.relative.as_path();
        let is_dir = entry.kind == EntryKind::Folder;
        if let Some(glob) = glob
            && (is_dir || !glob.matches(relative))
        {
            continue;
        }
        total += 1;
        if total > MAX_ENTRIES {
            continue;
        }
        out.push_str(&display_path(base, relative));
        if is_dir {
            out.push('/');
        } else if entry.kind == EntryKind::Symlink {
            let target = std::fs::read_link(root.join(relative)).unwrap_or_else(|_| PathBuf::from("?"));
            out.push_str(&format!(" -> {}", target.display()));
        }
        out.push('\n');
    }
    let mut notes = Vec::new();
    if total == 0 {
        notes.push(match glob_text {
            // The glob is the model's: quoted like an error quotes it.
            Some(g) => bounded(format!("no files match `{g}` in {base}")),
            None => format!("{base} is empty"),
        });
    }
    if total > MAX_ENTRIES {
        notes.push(format!(
            "{} of {} entries shown; list a subfolder, or narrow with glob",
            count(MAX_ENTRIES as u64),
            count(total as u64)
        ));
    }
    if unreadable > 0 {
        notes.push(format!("{} could not be read", plural(unreadable, "entry", "entries")));
    }
    for note in notes {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&format!("({note})\n"));
    }
    out.truncate(out.trim_end().len());
    (out, total as u64)
}
