//! `@path` in a person's message. A mention of a file brings the file along:
//! a text file's content follows the person's words in a
//! `<mentioned_file>` frame; a picture or any other binary file is stored
//! as an attachment in the profile's `attachments/` (the model reads its
//! `[attachment:<id> "name"]` line, sees a picture as an image where the
//! provider accepts one, and can `read attachment:<id>`).
//!
//! A mention is `@` at the start of a word, up to the next whitespace; a
//! trailing `,`, `.`, `:`, `;`, `!`, `?` or `)` is dropped when the path
//! without it exists. A mention that names no file (an `@handle`) stays
//! text. The message keeps the line as typed in `rawMarkdown`.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use seri_core::{Attachment, MAX_ATTACHMENT_BYTES, Message, SessionId, image_media_type};
use seri_prompt::mentioned_file;
use seri_store::AgentStore;

use crate::exit::Exit;

/// The largest text file placed in a message whole; a larger one is attached.
pub(crate) const MAX_INLINE_BYTES: u64 = 256 * 1024;

/// The words of `line` that are mentions, as written after the `@`, in order.
pub(crate) fn mentions(line: &str) -> Vec<&str> {
    line.split_whitespace().filter_map(|word| word.strip_prefix('@')).filter(|m| !m.is_empty()).collect()
}

/// What one mention comes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Brought {
    /// A text file, placed in the message.
    Inline { path: String, bytes: u64 },
    /// A binary file or picture, attached.
    Attached(Attachment),
}

impl std::fmt::Display for Brought {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Brought::Inline { path, bytes } => write!(f, "included {path} ({bytes} bytes of text)"),
            Brought::Attached(a) => {
                let kind = if a.is_image() { "picture" } else { "file" };
                write!(f, "attached {} as attachment:{} ({kind}, {} bytes)", a.name, a.id, a.bytes)
            }
        }
    }
}

/// A typed line with the files its mentions name read, not yet stored:
/// reading comes first, so a mention that cannot be brought stops the
/// message before any session or attachment is created for it.
#[derive(Debug)]
pub(crate) struct Mentioned {
    line: String,
    files: Vec<(String, PathBuf, Vec<u8>)>,
}

/// Reads the files `line`'s mentions name, relative to `cwd`.
pub(crate) fn read(cwd: &Path, line: &str) -> Result<Mentioned, Exit> {
    let mut files: Vec<(String, PathBuf, Vec<u8>)> = Vec::new();
    for written in mentions(line) {
        let Some((written, path)) = existing_file(cwd, written) else { continue };
        if files.iter().any(|(_, seen, _)| *seen == path) {
            continue;
        }
        let len = std::fs::metadata(&path).with_context(|| format!("cannot read @{written}"))?.len();
        if len > MAX_ATTACHMENT_BYTES {
            return Err(Exit::usage(format!(
                "@{written} is {len} bytes; a mention attaches at most {MAX_ATTACHMENT_BYTES} bytes"
            )));
        }
        let bytes = std::fs::read(&path).with_context(|| format!("cannot read @{written}"))?;
        files.push((written.to_owned(), path, bytes));
    }
    Ok(Mentioned { line: line.to_owned(), files })
}

impl Mentioned {
    /// These mentions and the files at `paths` (absolute: links an editor
    /// sent), each read once and under the same limit.
    pub(crate) fn with_files(mut self, paths: &[PathBuf]) -> Result<Self, Exit> {
        for path in paths {
            if self.files.iter().any(|(_, seen, _)| seen == path) {
                continue;
            }
            let written = path.to_string_lossy().into_owned();
            let len = std::fs::metadata(path).with_context(|| format!("cannot read {written}"))?.len();
            if len > MAX_ATTACHMENT_BYTES {
                return Err(Exit::usage(format!(
                    "{written} is {len} bytes; a file attaches at most {MAX_ATTACHMENT_BYTES} bytes"
                )));
            }
            let bytes = std::fs::read(path).with_context(|| format!("cannot read {written}"))?;
            self.files.push((written, path.clone(), bytes));
        }
        Ok(self)
    }

    /// The message, with text files placed after the words and the rest
    /// stored as attachments of `session`; and what each mention brought,
    /// to show the person.
    pub(crate) fn into_message(
        self,
        store: &AgentStore<'_>,
        session: SessionId,
    ) -> Result<(Message, Vec<Brought>), Exit> {
        let mut message = Message::user(self.line.as_str());
        let mut brought = Vec::new();
        for (written, path, bytes) in self.files {
            match as_text(&bytes) {
                Some(text) if bytes.len() as u64 <= MAX_INLINE_BYTES => {
                    message.content.push_str("\n\n");
                    message.content.push_str(&mentioned_file(&written, text));
                    brought.push(Brought::Inline { path: written, bytes: bytes.len() as u64 });
                }
                _ => {
                    let name = path.file_name().map_or_else(|| written.clone(), |n| n.to_string_lossy().into_owned());
                    let media_type = image_media_type(&bytes).map(str::to_owned);
                    let attachment = store.store_attachment(session, name, media_type, &bytes)?;
                    message.attachments.push(attachment.clone());
                    brought.push(Brought::Attached(attachment));
                }
            }
        }
        if message.content != self.line {
            message.raw_markdown = Some(self.line);
        }
        Ok((message, brought))
    }
}

/// The mention as a file that exists, with trailing punctuation dropped if
/// that is what makes it one; `~/` is the home folder.
fn existing_file<'a>(cwd: &Path, written: &'a str) -> Option<(&'a str, PathBuf)> {
    let trimmed = written.trim_end_matches([',', '.', ':', ';', '!', '?', ')']);
    [written, trimmed].into_iter().filter(|w| !w.is_empty()).find_map(|w| {
        let path = match w.strip_prefix("~/") {
            Some(rest) => std::env::var_os("HOME").map(PathBuf::from)?.join(rest),
            None => cwd.join(w),
        };
        path.is_file().then_some((w, path))
    })
}

/// The file as text, when it is: UTF-8 without NUL bytes.
fn as_text(bytes: &[u8]) -> Option<&str> {
    std::str::from_utf8(bytes).ok().filter(|t| !t.contains('\0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_start_a_word() {
        assert_eq!(mentions("see @src/lib.rs, and mail a@b.c or @ alone @./x.png"), ["src/lib.rs,", "./x.png"]);
    }

    #[test]
    fn trailing_punctuation_is_dropped_only_when_that_names_a_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.rs"), "").unwrap();
        std::fs::write(dir.path().join("b.rs."), "").unwrap();
        assert_eq!(existing_file(dir.path(), "a.rs,").map(|(w, _)| w), Some("a.rs"));
        assert_eq!(existing_file(dir.path(), "b.rs.").map(|(w, _)| w), Some("b.rs."));
        assert_eq!(existing_file(dir.path(), "handle"), None);
        assert_eq!(existing_file(dir.path(), "."), None, "a folder is not a file");
    }
}
