//! Attachment files on disk: `<attachments>/<session-id>/<attachment-id>`,
//! this machine's cache of the database's attachment rows (`db/attachment_rows.rs`):
//! a file the cache lacks (stored through another server, or the folder
//! was cleared) is written from the rows when it is resolved.
//!
//! A message names its files as `attachment:<id>`, resolved in the folder of
//! the session that holds the message. A continuation copies the initiating
//! message into the successor, so the successor needs the same files in its
//! own folder: they are hard-linked (no bytes copied, and deleting one folder
//! never breaks the other), or copied when the two folders are on different
//! file systems. Files are written to a temporary name and renamed, so a
//! reader never sees half a file.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use seri_core::SessionId;

use crate::error::{AttachmentError, Result, StoreError};

/// The prefix of an attachment reference in message text.
pub const ATTACHMENT_SCHEME: &str = "attachment:";

/// How an attachment reached a session's folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkOutcome {
    /// A hard link: both folders share one file.
    HardLinked,
    /// The folders are on different file systems (or links are refused): the bytes were copied.
    Copied,
    /// The target folder already had it; nothing was done.
    AlreadyPresent,
}

/// Checks that an attachment id can name a file and nothing else: no
/// separators, no `..`, no hidden names. Ids come from message text, which a
/// model may have written.
pub(crate) fn check_id(id: &str) -> Result<()> {
    let ok = !id.is_empty()
        && id.len() <= 128
        && !id.starts_with('.')
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if ok { Ok(()) } else { Err(StoreError::Attachment(AttachmentError::InvalidId { id: id.to_owned() })) }
}

/// The id in an `attachment:<id>` reference.
pub(crate) fn parse_reference(reference: &str) -> Result<&str> {
    let id = reference
        .strip_prefix(ATTACHMENT_SCHEME)
        .ok_or_else(|| StoreError::Attachment(AttachmentError::InvalidReference { reference: reference.to_owned() }))?;
    check_id(id)?;
    Ok(id)
}

pub(crate) fn session_dir(root: &Path, session: SessionId) -> PathBuf {
    root.join(session.to_string())
}

/// Where an attachment of a session is, if it exists.
pub(crate) fn existing(root: &Path, session: SessionId, id: &str) -> Result<PathBuf> {
    check_id(id)?;
    let path = session_dir(root, session).join(id);
    match fs::metadata(&path) {
        Ok(meta) if meta.is_file() => Ok(path),
        Ok(_) => Err(StoreError::Attachment(AttachmentError::Unknown {
            session_id: session,
            attachment_id: id.to_owned(),
            path,
        })),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(StoreError::Attachment(AttachmentError::Unknown {
            session_id: session,
            attachment_id: id.to_owned(),
            path,
        })),
        Err(source) => Err(StoreError::Attachment(AttachmentError::Io { path, source })),
    }
}

/// Writes a new attachment's bytes.
pub(crate) fn write(root: &Path, session: SessionId, id: &str, bytes: &[u8]) -> Result<PathBuf> {
    check_id(id)?;
    let dir = session_dir(root, session);
    create_dir(&dir)?;
    let path = dir.join(id);
    write_atomically(&path, |file| file.write_all(bytes))?;
    Ok(path)
}

/// Makes attachment `id` of session `from` available to session `to`.
pub(crate) fn link(root: &Path, from: SessionId, to: SessionId, id: &str) -> Result<(LinkOutcome, PathBuf)> {
    link_with(root, from, to, id, |src, dst| fs::hard_link(src, dst))
}

/// [`link`] with the hard-link operation supplied, so tests can make it fail.
pub(crate) fn link_with(
    root: &Path,
    from: SessionId,
    to: SessionId,
    id: &str,
    hard_link: impl Fn(&Path, &Path) -> io::Result<()>,
) -> Result<(LinkOutcome, PathBuf)> {
    let source = existing(root, from, id)?;
    let dir = session_dir(root, to);
    let target = dir.join(id);
    if target.exists() {
        return Ok((LinkOutcome::AlreadyPresent, target));
    }
    create_dir(&dir)?;
    match hard_link(&source, &target) {
        Ok(()) => Ok((LinkOutcome::HardLinked, target)),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok((LinkOutcome::AlreadyPresent, target)),
        Err(e) => {
            // Across file systems (EXDEV), or where links are not supported,
            // the bytes are copied instead; the successor must resolve either way.
            tracing::info!(from = %source.display(), to = %target.display(), error = %e, "hard link failed; copying");
            write_atomically(&target, |file| {
                let mut input = fs::File::open(&source)?;
                io::copy(&mut input, file).map(drop)
            })?;
            Ok((LinkOutcome::Copied, target))
        }
    }
}

/// Removes a file this transaction created, after it rolled back.
pub(crate) fn remove(path: &Path) {
    if let Err(e) = fs::remove_file(path) {
        tracing::warn!(path = %path.display(), error = %e, "could not remove an attachment of a rolled-back transaction");
    }
}

fn create_dir(dir: &Path) -> Result<()> {
    fs::create_dir_all(dir)
        .map_err(|source| StoreError::Attachment(AttachmentError::Io { path: dir.to_path_buf(), source }))
}

fn write_atomically(path: &Path, fill: impl FnOnce(&mut fs::File) -> io::Result<()>) -> Result<()> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let temp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut file = fs::File::create(&temp)?;
        fill(&mut file)?;
        file.sync_all()?;
        fs::rename(&temp, path)
    })();
    result.map_err(|source| {
        let _ = fs::remove_file(&temp);
        StoreError::Attachment(AttachmentError::Io { path: path.to_path_buf(), source })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_that_could_escape_the_folder_are_refused() {
        for bad in ["", ".", "..", "../x", "a/b", "a\\b", ".hidden", "a b", "é"] {
            assert!(check_id(bad).is_err(), "{bad:?}");
        }
        for good in ["0198a3b2-1c2d-7e3f-8a4b-5c6d7e8f9a0b", "shot_1.png", "A-b.c"] {
            assert!(check_id(good).is_ok(), "{good:?}");
        }
        assert_eq!(parse_reference("attachment:x.png").unwrap(), "x.png");
        assert!(matches!(
            parse_reference("x.png"),
            Err(StoreError::Attachment(AttachmentError::InvalidReference { .. }))
        ));
        assert!(matches!(
            parse_reference("attachment:../x"),
            Err(StoreError::Attachment(AttachmentError::InvalidId { .. }))
        ));
    }

    #[test]
    fn a_refused_hard_link_falls_back_to_a_copy() {
        let root = tempfile::tempdir().unwrap();
        let (a, b) = (SessionId::from_bytes([1; 16]), SessionId::from_bytes([2; 16]));
        write(root.path(), a, "f", b"bytes").unwrap();
        let cross_device = |_: &Path, _: &Path| Err(io::Error::from(io::ErrorKind::CrossesDevices));
        let (outcome, path) = link_with(root.path(), a, b, "f", cross_device).unwrap();
        assert_eq!(outcome, LinkOutcome::Copied);
        assert_eq!(fs::read(&path).unwrap(), b"bytes");
        // No temporary file is left behind.
        let names: Vec<_> =
            fs::read_dir(session_dir(root.path(), b)).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["f"]);
        let (again, _) = link_with(root.path(), a, b, "f", cross_device).unwrap();
        assert_eq!(again, LinkOutcome::AlreadyPresent);
    }
}
