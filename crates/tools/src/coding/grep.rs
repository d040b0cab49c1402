//! `grep`: lines matching a regular expression, in the files under a path
//! (the same walk as `list`, so `.gitignore` is honoured), as
//! `path:line:text`. Binary files and files over [`MAX_FILE_BYTES`] are
//! skipped; at most [`MAX_MATCH_LINES`] lines are shown, with a note of how
//! many more matched and in how many files.

use std::path::Path;

use async_trait::async_trait;
use regex::bytes::Regex;
use serde_json::{Value, json};
use seri_core::{SearchRun, ToolFacts};
use seri_prompt::text::tools;

use super::text::{count, cut_line, looks_binary, plural, size};
use super::walk::{EntryKind, Glob, Skip, display_path, walk};
use super::{blocking, check, lookup_error, request_for};
use crate::error::{InputError, ToolError, bounded};
use crate::input::Obj;
use crate::outcome::ToolOutcome;
use crate::pattern::{self, PatternError};
use crate::run::RunContext;
use crate::tool::{Availability, Tool, ToolContext};

/// The tool's name.
pub const NAME: &str = "grep";

/// Most matching lines one search shows.
pub const MAX_MATCH_LINES: usize = 250;

/// Longest matching line shown, in characters.
pub const MAX_LINE_CHARS: usize = 300;

/// Files larger than this are not searched (logs, data dumps).
pub const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// The `grep` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct Grep;

#[async_trait]
impl Tool for Grep {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        tools::GREP
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "A regular expression (Rust regex syntax); `(?i)` makes it case-insensitive."},
                "path": {"type": "string", "description": "A folder to search below, or one file. Default: the working directory."},
                "glob": {"type": "string", "description": "Only files matching this glob: `*.rs` matches names at any depth, `src/**/*.rs` paths below the folder."}
            },
            "required": ["pattern"],
            "additionalProperties": false
        })
    }

    fn availability(&self, run: &RunContext) -> Availability {
        super::availability(run)
    }

    async fn call(&self, ctx: ToolContext<'_>, input: Value) -> Result<ToolOutcome, ToolError> {
        let obj = Obj::new(&input, "")?;
        obj.only(&["pattern", "path", "glob"], "")?;
        let pattern = obj.req_str("pattern")?;
        let regex = pattern::regex(pattern).map_err(|e| match e {
            PatternError::Empty => InputError::new("pattern", "empty; give a regular expression"),
            other => InputError::new("pattern", other.to_string()),
        })?;
        let glob = obj.opt_str("glob")?.map(|g| Glob::new(g, "glob")).transpose()?;
        let resolved = ctx.workspace.resolve(obj.opt_str("path")?.unwrap_or("."), "path")?;
        check(ctx, &request_for(NAME, &resolved)).await?;
        let is_dir = super::checked::kind(&resolved.path)
            .map_err(|e| lookup_error(e, "path", &resolved.display, "search"))?
            .ok_or_else(|| {
                lookup_error(std::io::Error::from(std::io::ErrorKind::NotFound), "path", &resolved.display, "search")
            })?;
        let pattern = pattern.to_owned();
        let glob_text = obj.opt_str("glob")?.map(str::to_owned);
        let path = resolved.display.clone();
        let skip = Skip::of(ctx);
        let (text, matches, files) = blocking(move || {
            let search = Search::new(&regex, glob.as_ref());
            Ok(search.run(&resolved.path, &resolved.display, is_dir, &pattern, &skip))
        })
        .await?;
        let pattern = obj.req_str("pattern")?.to_owned();
        let facts = SearchRun { pattern, path, glob: glob_text, matches, files };
        Ok(ToolOutcome::text(text).with_facts(ToolFacts::Search(facts)))
    }
}

/// One search's state: what it looks for and what it found.
struct Search<'a> {
    regex: &'a Regex,
    glob: Option<&'a Glob>,
    out: String,
    matched_lines: u64,
    matched_files: u64,
    too_large: u64,
    unreadable: u64,
}

impl<'a> Search<'a> {
    fn new(regex: &'a Regex, glob: Option<&'a Glob>) -> Self {
        Self { regex, glob, out: String::new(), matched_lines: 0, matched_files: 0, too_large: 0, unreadable: 0 }
    }

    /// The text the model reads, the matching lines and the files with one.
    fn run(mut self, root: &Path, base: &str, is_dir: bool, pattern: &str, skip: &Skip) -> (String, u64, u64) {
        if is_dir {
            let (entries, unreadable) = walk(root, skip).unwrap_or((Vec::new(), 1));
            self.unreadable += unreadable;
            for entry in entries.iter().filter(|e| e.kind == EntryKind::File) {
                if self.glob.is_some_and(|g| !g.matches(&entry.relative)) {
                    continue;
                }
                self.file(&root.join(&entry.relative), &display_path(base, &entry.relative));
            }
        } else {
            self.file(root, base);
        }
        let (matches, files) = (self.matched_lines, self.matched_files);
        (self.finish(base, pattern), matches, files)
    }

    fn file(&mut self, path: &Path, display: &str) {
        // The walk names files by path; each is opened as a checked path,
        // so a folder swapped for a symlink on the way is unreadable, never
        // a way to read a file outside.
        let Ok(mut file) = super::checked::open_read(path) else {
            self.unreadable += 1;
            return;
        };
        match file.metadata() {
            Ok(meta) if meta.len() > MAX_FILE_BYTES => {
                self.too_large += 1;
                return;
            }
            Ok(meta) if !meta.is_file() => return,
            Ok(_) => {}
            Err(_) => {
                self.unreadable += 1;
                return;
            }
        }
        let mut bytes = Vec::new();
        if std::io::Read::read_to_end(&mut file, &mut bytes).is_err() {
            self.unreadable += 1;
            return;
        }
        if looks_binary(&bytes) {
            return;
        }
        let body = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
        let mut any = false;
        for (index, line) in body.split(|b| *b == b'\n').enumerate() {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if !self.regex.is_match(line) {
                continue;
            }
            any = true;
            self.matched_lines += 1;
            if self.matched_lines <= MAX_MATCH_LINES as u64 {
                let text = String::from_utf8_lossy(line);
                self.out.push_str(&format!("{display}:{}:{}\n", index + 1, cut_line(&text, MAX_LINE_CHARS)));
            }
        }
        self.matched_files += u64::from(any);
    }

    fn finish(mut self, base: &str, pattern: &str) -> String {
        let mut notes = Vec::new();
        if self.matched_lines == 0 {
            // The pattern is the model's: quoted like an error quotes it.
            notes.push(bounded(format!("no matches for `{pattern}` in {base}")));
        }
        if self.matched_lines > MAX_MATCH_LINES as u64 {
            notes.push(format!(
                "{} of {} matching lines shown, in {}; narrow with path, glob or a stricter pattern",
                count(MAX_MATCH_LINES as u64),
                count(self.matched_lines),
                plural(self.matched_files, "file", "files")
            ));
        }
        if self.too_large > 0 {
            notes.push(format!(
                "{} over {} not searched",
                plural(self.too_large, "file", "files"),
                size(MAX_FILE_BYTES)
            ));
        }
        if self.unreadable > 0 {
            notes.push(format!("{} could not be read", plural(self.unreadable, "entry", "entries")));
        }
        for note in notes {
            if !self.out.is_empty() {
                self.out.push('\n');
            }
            self.out.push_str(&format!("({note})\n"));
        }
        self.out.truncate(self.out.trim_end().len());
        self.out
    }
}
