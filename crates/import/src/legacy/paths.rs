//! `seri import PATH…`: a named file, or every session file below a folder
//! (searched recursively, as the other agents nest theirs:
//! `~/.claude/projects/<project>/`, `~/.codex/sessions/YYYY/MM/DD/`), each
//! imported as the legacy import imports a file: in one transaction, each
//! content once, its format recognised from its bytes.

use std::cell::{Cell, RefCell};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::report::{FileOutcome, FileReport, ImportReport};
use super::{SUFFIX, import_bytes, import_file};
use crate::peers::opencode_db;
use seri_store::AgentStore;
use seri_store::{ImportError, Result, StoreError};

/// What is imported as one file: a file, or one session of opencode's database.
enum Item {
    File(PathBuf),
    Session { key: String, path: PathBuf, session: opencode_db::DbSession },
}

impl Item {
    fn path(&self) -> &Path {
        match self {
            Item::File(path) | Item::Session { path, .. } => path,
        }
    }

    /// How many bytes importing it reads: the file's size, or the session's export's.
    fn size(&self) -> u64 {
        match self {
            Item::File(path) => fs::metadata(path).map_or(0, |m| m.len()),
            Item::Session { session, .. } => session.document.len() as u64,
        }
    }
}

/// How far an import of many files got, in bytes, told to its caller.
pub(super) struct Progress<F> {
    /// The bytes of the files imported so far.
    pub(super) done: Cell<u64>,
    /// The most told so far: what is told never goes back (a file read
    /// again, or put off to the second round, does not move it back).
    shown: Cell<u64>,
    total: u64,
    tell: RefCell<F>,
}

impl<F: FnMut(u64, u64)> Progress<F> {
    pub(super) fn new(total: u64, tell: F) -> Self {
        Progress { done: Cell::new(0), shown: Cell::new(0), total, tell: RefCell::new(tell) }
    }

    /// Tells `done` bytes, when that is further than told before.
    pub(super) fn show(&self, done: u64) {
        let done = done.min(self.total);
        if done > self.shown.get() || (done == self.total && self.shown.get() == 0) {
            self.shown.set(done);
            if let Ok(mut tell) = self.tell.try_borrow_mut() {
                tell(done, self.total);
            }
        }
    }
}

/// The suffix of an opencode export (`opencode export <id> > file.json`):
/// such a file is imported only when its content is one.
const EXPORT_SUFFIX: &str = ".json";

/// Folders that hold no sessions but may hold a great many files.
const PASSED_OVER: &[&str] = &[".git", "node_modules"];

/// Imports the session file `path` names, or every session file below the
/// folder it names: `.jsonl` files (seri's older ones, Claude Code's,
/// Codex's, pi's), `.json` files that are opencode exports, and opencode's
/// database (`opencode.db`, each of its sessions imported as a file would
/// be, known by `<database>#<session id>`, and a busy or unreadable
/// database reported as an unreadable file). Hidden
/// files are passed over, but not hidden folders (a copy of `~/.claude`
/// is one); `.git` and `node_modules` are, and links to folders are not
/// followed. A subfolder that cannot be listed is reported as an
/// unreadable file.
///
/// Each file is known by its canonical path and SHA-256, like the legacy
/// import's, so an unchanged file is not imported twice however it is
/// named. The error is the store's, or the named path's own (it does not
/// exist, or cannot be listed); nothing of a file is written when its
/// import fails.
pub fn import_path(agent: &AgentStore<'_>, path: &Path, cwd_fallback: &str) -> Result<ImportReport> {
    import_path_with_progress(agent, path, cwd_fallback, |_, _| {})
}

/// [`import_path`], calling `progress(done, total)` as it reads, in bytes:
/// `total` is the size of every file to import (each session of opencode's
/// database counted as its export's), `done` how much of it was read and
/// imported so far. `done` never goes back, and reaches `total` at the end.
pub fn import_path_with_progress(
    agent: &AgentStore<'_>,
    path: &Path,
    cwd_fallback: &str,
    progress: impl FnMut(u64, u64),
) -> Result<ImportReport> {
    let path_error = |source| StoreError::Import(ImportError::Folder { path: path.to_path_buf(), source });
    let metadata = fs::metadata(path).map_err(path_error)?;
    let (files, mut unreadable) =
        if metadata.is_dir() { walk(path).map_err(path_error)? } else { (vec![path.to_path_buf()], Vec::new()) };
    let mut reports = Vec::with_capacity(files.len() + unreadable.len());
    // opencode's database holds many sessions: each is imported as a file
    // of its own would be, known by `<database>#<session id>`.
    let mut items = Vec::with_capacity(files.len());
    for file in files {
        if !opencode_db::is_database(&file) {
            items.push(Item::File(file));
            continue;
        }
        let canonical = fs::canonicalize(&file).unwrap_or_else(|_| file.clone());
        match opencode_db::read(&file) {
            Ok(sessions) => items.extend(sessions.into_iter().map(|session| Item::Session {
                key: format!("{}#{}", canonical.display(), session.id),
                path: PathBuf::from(format!("{}#{}", file.display(), session.id)),
                session,
            })),
            Err(error) => reports.push(FileReport {
                path: file,
                modified: None,
                sha256: None,
                format: Some(crate::peers::Format::Opencode),
                outcome: FileOutcome::Unreadable { error: io::Error::other(error.to_string()), reported_before: false },
                warnings: Vec::new(),
            }),
        }
    }
    let sizes: Vec<u64> = items.iter().map(Item::size).collect();
    let total: u64 = sizes.iter().sum();
    let progress = Progress::new(total, progress);
    // A fork whose source is not imported yet waits for the other files,
    // then is imported in a second round (as a fork when its source was
    // among them, else on its own).
    let mut deferred = Vec::new();
    let items: Vec<(Item, u64)> = items.into_iter().zip(sizes).collect();
    for (round, items) in [(0, items), (1, Vec::new())] {
        let items = if round == 0 { items } else { std::mem::take(&mut deferred) };
        for (item, size) in items {
            let imported = match &item {
                Item::File(file) => {
                    let key = fs::canonicalize(file).unwrap_or_else(|_| file.clone()).to_string_lossy().into_owned();
                    let within = |read: u64| progress.show(progress.done.get() + read.min(size));
                    import_file(agent, file.clone(), &key, cwd_fallback, round == 0, &within)
                }
                Item::Session { key, path, session } => {
                    let modified = session.updated_at.map(seri_core::Timestamp);
                    import_bytes(agent, path.clone(), key, &session.document, modified, cwd_fallback, round == 0)
                }
            };
            let imported = imported.map_err(|source| {
                StoreError::Import(ImportError::File { path: item.path().to_path_buf(), source: Box::new(source) })
            })?;
            match imported {
                Some(report) => {
                    reports.push(report);
                    progress.done.set(progress.done.get() + size);
                    progress.show(progress.done.get());
                }
                None => deferred.push((item, size)),
            }
        }
    }
    reports.append(&mut unreadable);
    reports.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(ImportReport { dir: path.to_path_buf(), files: reports })
}

/// The session files below `dir`, and a report for each subfolder that
/// could not be listed.
fn walk(dir: &Path) -> io::Result<(Vec<PathBuf>, Vec<FileReport>)> {
    let mut files = Vec::new();
    let mut unreadable = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let entries = match fs::read_dir(&folder) {
            Ok(entries) => entries,
            Err(error) if folder == dir => return Err(error),
            Err(error) => {
                unreadable.push(FileReport {
                    path: folder,
                    modified: None,
                    sha256: None,
                    format: None,
                    outcome: FileOutcome::Unreadable { error, reported_before: false },
                    warnings: Vec::new(),
                });
                continue;
            }
        };
        for entry in entries {
            let entry = entry?;
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let path = entry.path();
            let kind = entry.file_type()?;
            if kind.is_dir() {
                if !PASSED_OVER.contains(&name.as_ref()) {
                    folders.push(path);
                }
            } else if name.starts_with('.') {
                continue;
            } else if (name.len() > SUFFIX.len() && name.ends_with(SUFFIX))
                || name == opencode_db::FILE_NAME
                || (name.ends_with(EXPORT_SUFFIX) && is_opencode_export(&path))
            {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok((files, unreadable))
}

/// Whether the `.json` file at `path` is an opencode export. An export is one JSON document, read whole: no longer than a line may be.
fn is_opencode_export(path: &Path) -> bool {
    let small = fs::metadata(path).is_ok_and(|m| m.len() <= super::LINE_LIMIT as u64);
    small && fs::read(path).ok().and_then(|bytes| crate::peers::detect(&bytes)) == Some(crate::peers::Format::Opencode)
}
