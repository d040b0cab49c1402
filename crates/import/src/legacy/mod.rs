//! The legacy import: the older release's `.jsonl` session files become
//! sessions in the store, each file in one transaction, each at most once
//! per content. [`crate::LegacyImport::import_legacy_sessions`] does it and
//! returns an [`ImportReport`]; the files are only ever read.
//!
//! Reading a file is pure (the `file` and `line` modules turn bytes into
//! events and warnings); this module adds the file system and the
//! transaction. What follows is `crates/import/LEGACY_FORMAT.md`, the
//! format's definition.
//!
#![doc = include_str!("../../LEGACY_FORMAT.md")]

mod file;
mod forks;
mod line;
mod lines;
mod paths;
mod peer;
mod peer_stream;
mod report;
mod streamed;
pub(crate) mod time;

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use seri_core::{Timestamp, TitleSource};
use sha2::{Digest, Sha256};

pub use lines::LINE_LIMIT;
pub use paths::{import_path, import_path_with_progress};
pub use report::{FileOutcome, FileReport, Headline, ImportReport, LineWarning, Named, News, SessionNames};

use crate::peers::{Format, Source};
use forks::{fork_point, grow, unnamed_source};
use seri_store::Reader;
use seri_store::{AgentStore, FolderImport, ImportHead, ImportRecord};
use seri_store::{ImportError, Result, StoreError};

/// The suffix of a legacy session file's name.
const SUFFIX: &str = ".jsonl";

/// How long a start trusts the folder's own print ([`FolderCheck::FolderFirst`])
/// before it checks every file again: the longest a file the older release
/// appended to in place (which leaves the folder as it was) waits to be
/// imported, unless `seri import` is run.
pub const FOLDER_RECHECK: std::time::Duration = std::time::Duration::from_secs(10 * 60);

/// How much of a legacy folder an import looks at before it decides that
/// nothing is new.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FolderCheck {
    /// Every file, by its size and modification time (`seri import`): a file
    /// that matches its import record is not opened.
    EveryFile,
    /// The folder first (a start): when its legacy files' names and its
    /// modification time are those the last check of every file found all
    /// imported, less than [`FOLDER_RECHECK`] ago, nothing more is read
    /// and the report is empty. A file added, removed or renamed changes
    /// the folder, so every file is checked then, as with
    /// [`FolderCheck::EveryFile`].
    FolderFirst,
}

/// Imports every legacy file in `dir`, with `read`'s answer from the store
/// as the import leaves it; see [`crate::LegacyImport::import_legacy_sessions_and_read`].
pub(crate) fn import<T>(
    agent: &AgentStore<'_>,
    dir: &Path,
    cwd_fallback: &str,
    folder_check: FolderCheck,
    progress: impl FnMut(u64, u64),
    mut read: impl FnMut(&Reader<'_>) -> Result<T>,
) -> Result<(ImportReport, Result<T>)> {
    let dir_error = |source| StoreError::Import(ImportError::Folder { path: dir.to_path_buf(), source });
    // Files are known by their canonical path, so the same file reached
    // through another spelling of the folder is still the same file.
    let canonical = match fs::canonicalize(dir) {
        Ok(canonical) => canonical,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((ImportReport::empty(dir), agent.read(read))),
        Err(e) => return Err(dir_error(e)),
    };
    // The folder's print, taken before its files are: a file added while
    // they are checked leaves the next start a print that differs.
    let print = match folder_check {
        FolderCheck::EveryFile => None,
        FolderCheck::FolderFirst => {
            let print = match FolderPrint::of(&canonical) {
                Ok(print) => print,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    return Ok((ImportReport::empty(dir), agent.read(read)));
                }
                Err(e) => return Err(dir_error(e)),
            };
            let key = print_setting(&canonical);
            let now = agent.store().now();
            // One read: the stored print and, when it still holds, the answer.
            let answer = agent.read(|r| {
                let holds = r.setting(&key)?.is_some_and(|stored| print.holds(&stored, now));
                Ok(holds.then(|| read(r)))
            })?;
            if let Some(answer) = answer {
                return Ok((ImportReport::empty(dir), answer));
            }
            Some((key, print))
        }
    };
    // `read`'s answer and every import's newest record, in one snapshot,
    // while a second thread lists the folder, `stat`s each file and, once
    // the records arrive, finds the files unchanged since their record:
    // with thousands of files these are most of what a start costs, and
    // the two threads share them about evenly. A file whose size and
    // modification time match its record is neither opened, read nor
    // hashed again.
    let (heads_to_check, heads) = std::sync::mpsc::sync_channel::<ImportHeads>(1);
    let (checked, answer) = std::thread::scope(|scope| {
        let checking = scope.spawn(move || -> io::Result<Vec<Checked>> {
            let entries = scan(dir)?;
            // No records when the snapshot failed: its error is returned.
            Ok(heads.recv().map(|heads| check(dir, entries, heads)).unwrap_or_default())
        });
        let mut heads_to_check = Some(heads_to_check);
        let answer = agent.read(|r| {
            // Sent once, by the first read that gets the heads; the check
            // may have ended already, on an error of its own.
            let heads = ImportHeads::newest(r.legacy_import_records(&canonical)?);
            if let Some(to_check) = heads_to_check.take() {
                let _ = to_check.send(heads);
            }
            Ok(read(r))
        });
        drop(heads_to_check);
        (checking.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)), answer)
    });
    let answer = answer?;
    let checked = match checked {
        Ok(checked) => checked,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((ImportReport::empty(dir), answer)),
        Err(e) => return Err(dir_error(e)),
    };
    // Whether the snapshot may differ from the store after the import: a
    // file went past its record, so something may have been written (by
    // this import or, since the snapshot, by another process's).
    let mut read_again = false;
    let mut files = Vec::with_capacity(checked.len());
    let size = |path: &Path| fs::metadata(path).map_or(0, |m| m.len());
    let total =
        checked.iter().map(|checked| if let Checked::Changed { path, .. } = checked { size(path) } else { 0 }).sum();
    let progress = paths::Progress::new(total, progress);
    for checked in checked {
        let (path, name) = match checked {
            Checked::Unchanged(report) => {
                files.push(report);
                continue;
            }
            Checked::Changed { path, name } => (path, name),
        };
        let key = canonical.join(&name).to_string_lossy().into_owned();
        // seri's own files are never forks another agent wrote: nothing is deferred.
        let file_size = size(&path);
        let within = |read: u64| progress.show(progress.done.get() + read.min(file_size));
        let imported = import_file(agent, path.clone(), &key, cwd_fallback, false, &within);
        progress.done.set(progress.done.get() + file_size);
        progress.show(progress.done.get());
        let Some(report) =
            imported.map_err(|source| StoreError::Import(ImportError::File { path, source: Box::new(source) }))?
        else {
            continue;
        };
        // An unreadable file seen before wrote nothing a `Reader` shows.
        read_again |= !matches!(report.outcome, FileOutcome::Unreadable { reported_before: true, .. });
        files.push(report);
    }
    let answer = if read_again { agent.read(read) } else { answer };
    // Every file is imported (or holds nothing to import): the next start
    // may trust the folder's print. A file that could not be read is tried
    // again at every start, as before.
    if let Some((key, print)) = print
        && !files.iter().any(|file| matches!(file.outcome, FileOutcome::Unreadable { .. }))
    {
        agent.write(|tx| {
            let stored = print.stored(tx.now());
            tx.set_setting(&key, &stored)
        })?;
    }
    Ok((ImportReport { dir: dir.to_path_buf(), files }, answer))
}

/// The setting that keeps a folder's print, per agent and canonical folder.
fn print_setting(canonical: &Path) -> String {
    format!("legacy.folder-print:{}", canonical.display())
}

/// What one `stat` and one listing of a legacy folder say of it, without a
/// look at any file: its modification time (which a file added, removed or
/// renamed moves) and its legacy files' names (which catch what a coarse
/// clock would not).
#[derive(Debug, Clone, PartialEq, Eq)]
struct FolderPrint {
    /// The folder's modification time, in nanoseconds (0 when unknown).
    modified_ns: u128,
    /// How many legacy files it lists.
    files: usize,
    /// The SHA-256 of their names, sorted, each followed by a NUL.
    names: String,
}

impl FolderPrint {
    fn of(dir: &Path) -> io::Result<Self> {
        let modified_ns = fs::metadata(dir)?
            .modified()
            .ok()
            .and_then(|m| m.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |m| m.as_nanos());
        let mut names = Vec::new();
        for entry in fs::read_dir(dir)? {
            let name = entry?.file_name();
            if is_legacy_name(&name.to_string_lossy()) {
                names.push(name);
            }
        }
        names.sort_unstable();
        let mut hash = Sha256::new();
        for name in &names {
            hash.update(name.as_encoded_bytes());
            hash.update([0]);
        }
        let names_hash = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();
        Ok(Self { modified_ns, files: names.len(), names: names_hash })
    }

    /// The print as stored, with the time of the check that found every
    /// file imported.
    fn stored(&self, checked_at: Timestamp) -> String {
        format!("v1 {} {} {} {}", self.modified_ns, self.files, self.names, checked_at.millis())
    }

    /// Whether `stored` is this print, stored less than [`FOLDER_RECHECK`]
    /// before `now` (a time after `now` is not trusted either).
    fn holds(&self, stored: &str, now: Timestamp) -> bool {
        let Some((print, checked_at)) = stored.rsplit_once(' ') else { return false };
        let Ok(checked_at) = checked_at.parse::<i64>() else { return false };
        let age = now.millis().saturating_sub(checked_at);
        let recent = (0..i64::try_from(FOLDER_RECHECK.as_millis()).unwrap_or(i64::MAX)).contains(&age);
        recent && print == format!("v1 {} {} {}", self.modified_ns, self.files, self.names)
    }
}

/// Whether a folder entry's name is a legacy session file's.
fn is_legacy_name(name: &str) -> bool {
    name.len() > SUFFIX.len() && name.ends_with(SUFFIX) && !name.starts_with('.')
}

/// One legacy file of the folder, checked against its newest import.
enum Checked {
    /// Unchanged since, by its `stat` alone: reported from its record,
    /// neither opened, read nor hashed again.
    Unchanged(FileReport),
    /// New, changed, or not a regular file: for `import_file`.
    Changed { path: PathBuf, name: std::ffi::OsString },
}

/// Each scanned file of `dir`, in name order, checked against `heads`.
fn check(dir: &Path, entries: Vec<(std::ffi::OsString, Option<Stat>)>, mut heads: ImportHeads) -> Vec<Checked> {
    let check_one = |(name, stat): (std::ffi::OsString, Option<Stat>)| {
        let path = dir.join(&name);
        if let Some(head) = heads.get_mut(name.to_string_lossy().as_ref())
            && let Some(modified) = stat.and_then(|stat| stat.unchanged_since(head))
        {
            // The record's hash moves into the report.
            return Checked::Unchanged(FileReport {
                path,
                modified: Some(modified),
                sha256: Some(std::mem::take(&mut head.sha256)),
                format: None,
                outcome: FileOutcome::AlreadyImported { session_id: head.session_id },
                warnings: Vec::new(),
            });
        }
        Checked::Changed { path, name }
    };
    entries.into_iter().map(check_one).collect()
}

/// The newest import record of each file of one folder, sorted by name.
pub(crate) struct ImportHeads {
    heads: Vec<(String, ImportHead)>,
    /// Where the next lookup looks first: just after the last one found.
    next: usize,
}

impl ImportHeads {
    /// From every record of the folder's files, each keyed by its name and
    /// its order (imported_at, then id): the greatest of each name.
    pub(crate) fn newest(mut records: Vec<FolderImport>) -> Self {
        records.sort_unstable_by(|a, b| (&a.name, a.imported_at, &a.id).cmp(&(&b.name, b.imported_at, &b.id)));
        let mut heads: Vec<(String, ImportHead)> = Vec::with_capacity(records.len());
        for FolderImport { name, head, .. } in records {
            match heads.last_mut() {
                Some((last, newest)) if *last == name => *newest = head,
                _ => heads.push((name, head)),
            }
        }
        Self { heads, next: 0 }
    }

    /// The newest import of the file `name`. The folder's files are looked
    /// up in name order, so the record after the last one found is tried
    /// first: one comparison a file when every file has a record, a binary
    /// search otherwise.
    fn get_mut(&mut self, name: &str) -> Option<&mut ImportHead> {
        let at = match self.heads.get(self.next) {
            Some((next, _)) if next == name => self.next,
            _ => self.heads.binary_search_by(|(n, _)| n.as_str().cmp(name)).ok()?,
        };
        self.next = at + 1;
        Some(&mut self.heads[at].1)
    }
}

/// What a `stat` said of a regular file: its size and modification time.
#[derive(Debug, Clone, Copy)]
struct Stat {
    bytes: u64,
    modified: Option<Timestamp>,
}

impl Stat {
    /// The file's modification time, when it and the file's size are those
    /// of its newest import `head`.
    fn unchanged_since(self, head: &ImportHead) -> Option<Timestamp> {
        self.modified.filter(|modified| self.bytes == head.bytes && Some(*modified) == head.modified_at)
    }
}

/// The names of the legacy files in `dir`, sorted, each with what a `stat`
/// (following links) said of it if it is a regular file.
fn scan(dir: &Path) -> io::Result<Vec<(std::ffi::OsString, Option<Stat>)>> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        if is_legacy_name(&name.to_string_lossy()) {
            // Relative to the open folder, which costs the kernel one name
            // to look up rather than the whole path; a link is followed.
            let metadata = match entry.metadata() {
                Ok(m) if m.file_type().is_symlink() => fs::metadata(entry.path()),
                other => other,
            };
            let stat = metadata.ok().filter(fs::Metadata::is_file).map(|metadata| {
                let modified = metadata.modified().ok().and_then(|m| m.duration_since(UNIX_EPOCH).ok());
                Stat {
                    bytes: metadata.len(),
                    modified: modified.and_then(|m| i64::try_from(m.as_millis()).ok()).map(Timestamp),
                }
            });
            files.push((name, stat));
        }
    }
    files.sort_unstable_by(|(a, _), (b, _)| a.cmp(b));
    Ok(files)
}

/// Imports one file: a report for anything wrong with the file itself, an
/// error only when the store fails (and then nothing of the file was written).
///
/// The file is read a line at a time ([`lines`]), never whole: it is
/// hashed first (bytes imported before are not read again), then seri's
/// own older format is imported as it is read ([`streamed`]) and another
/// agent's is parsed line by line into its session before it is written.
/// `progress` is told how far into the file the import has read, in bytes.
///
/// With `defer`, a fork another agent wrote to a file of its own whose
/// source is not imported yet is left for later (`Ok(None)`): the caller
/// imports it after the other files, so it can become a fork of its
/// source's session wherever the two files sort.
fn import_file(
    agent: &AgentStore<'_>,
    path: PathBuf,
    key: &str,
    cwd_fallback: &str,
    defer: bool,
    progress: &dyn Fn(u64),
) -> Result<Option<FileReport>> {
    let opened = open(&path).and_then(|(file, _, modified)| {
        let fingerprint = lines::fingerprint(&file, progress)?;
        Ok((file, modified, fingerprint))
    });
    let (file, modified, fingerprint) = match opened {
        Ok(opened) => opened,
        Err(error) => return unreadable(agent, path, key, error).map(Some),
    };
    // opencode's export is one JSON document, not lines: read whole (it
    // is no longer than a line may be), and imported as before.
    let format = crate::peers::detect(&fingerprint.head);
    let document = match format {
        Some(Format::Opencode) if fingerprint.whole() => Some(fingerprint.head.clone()),
        None if !fingerprint.whole()
            && may_be_document(&fingerprint.head)
            && fingerprint.bytes <= LINE_LIMIT as u64 =>
        {
            match read_all(&file) {
                Ok(bytes) if crate::peers::detect(&bytes) == Some(Format::Opencode) => Some(bytes),
                Ok(_) => None,
                Err(error) => return unreadable(agent, path, key, error).map(Some),
            }
        }
        _ => None,
    };
    if let Some(document) = document {
        return import_bytes(agent, path, key, &document, modified, cwd_fallback, defer);
    }
    let format = format.filter(|format| *format != Format::Opencode);
    let sha256 = fingerprint.sha256.clone();
    let done = |outcome, warnings| FileReport {
        path: path.clone(),
        modified,
        sha256: Some(sha256.clone()),
        format,
        outcome,
        warnings,
    };
    // A file imported before costs one hash and one lookup: its lines are not read again.
    if let Some(session_id) = agent.read(|r| r.legacy_import_of(key, &sha256))? {
        return Ok(Some(done(FileOutcome::AlreadyImported { session_id }, Vec::new())));
    }
    let source = lines::FileLines::new(&file, &fingerprint, progress);
    let Some(format) = format else {
        let streamed = streamed::Streamed { key, sha256: &sha256, bytes: fingerprint.bytes, modified, cwd_fallback };
        return match streamed::import(agent, &source, &streamed)? {
            Ok((outcome, warnings)) => {
                tracing::info!(path = %path.display(), ?outcome, "legacy file");
                Ok(Some(done(outcome, warnings)))
            }
            Err(error) => unreadable(agent, path, key, error).map(Some),
        };
    };
    // Its tree, then its content: hashing moved the first tenth.
    source.moving(100, 400);
    let Some(look) = peer_stream::first_look(format, &source) else { return Ok(None) };
    source.moving(400, 1000);
    if let Some(error) = source.failure() {
        return unreadable(agent, path, key, error).map(Some);
    }
    let mut note = None;
    if look.is_fork() {
        // A fork's file is compared with its source as a whole.
        if fingerprint.bytes <= peer_stream::WHOLE_FORK_LIMIT {
            drop(look);
            let parsed = crate::peers::parse_lines(format, &source).map(|session| peer::read_session(&session));
            if let Some(error) = source.failure() {
                return unreadable(agent, path, key, error).map(Some);
            }
            let Some((file, branches)) = parsed else { return Ok(None) };
            let bytes = fingerprint.bytes;
            let parsed = Parsed { path, key, sha256, bytes, modified, format: Some(format), file, branches };
            return import_parsed(agent, parsed, cwd_fallback, defer);
        }
        let problem = format!(
            "a fork of another session, in a file of {} MiB: only a fork's file of up to {} MiB is compared with \
             its source, so this one is imported as a session of its own (its history whole, not shared)",
            fingerprint.bytes >> 20,
            peer_stream::WHOLE_FORK_LIMIT >> 20
        );
        note = Some(report::LineWarning { line: 1, skipped: false, problem, count: 1 });
    }
    let streamed = streamed::Streamed { key, sha256: &sha256, bytes: fingerprint.bytes, modified, cwd_fallback };
    match peer_stream::import(agent, format, &source, &look, &streamed, note)? {
        Ok((outcome, warnings)) => {
            tracing::info!(path = %path.display(), ?outcome, "legacy file");
            Ok(Some(done(outcome, warnings)))
        }
        Err(error) => unreadable(agent, path, key, error).map(Some),
    }
}

/// Whether a file's first bytes may open one JSON document over many
/// lines (an opencode export) rather than a JSON line.
fn may_be_document(head: &[u8]) -> bool {
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let first = head.split(|b| *b == b'\n').find(|line| !line.iter().all(u8::is_ascii_whitespace));
    first.is_some_and(|line| {
        line.trim_ascii_start().starts_with(b"{") && serde_json::from_slice::<serde::de::IgnoredAny>(line).is_err()
    })
}

/// Reports a file that could not be read: tried at every start (it may be
/// readable now), reported once per version of the file.
fn unreadable(agent: &AgentStore<'_>, path: PathBuf, key: &str, error: io::Error) -> Result<FileReport> {
    let version = unreadable_version(&path, &error);
    // A version seen before costs one read, no write lock; a new one
    // is recorded (and the insert decides, should two processes race).
    let first = !agent.read(|r| r.legacy_unreadable_seen(key, &version))?
        && agent.write(|tx| tx.record_legacy_unreadable(key, &version, &error.to_string()))?;
    let outcome = FileOutcome::Unreadable { error, reported_before: !first };
    Ok(FileReport { path, modified: None, sha256: None, format: None, outcome, warnings: Vec::new() })
}

/// Imports one session's bytes, read from `path` and known by `key`: an
/// opencode export, or one session of opencode's database (`key`
/// `<database>#<session id>`, `bytes` the session as its export), each
/// known by its key and the SHA-256 of its bytes; see [`import_file`].
fn import_bytes(
    agent: &AgentStore<'_>,
    path: PathBuf,
    key: &str,
    bytes: &[u8],
    modified: Option<Timestamp>,
    cwd_fallback: &str,
    defer: bool,
) -> Result<Option<FileReport>> {
    let sha256: String = Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect();
    let format = crate::peers::detect(bytes);
    // A file imported before costs one hash and one lookup: its lines are not read again.
    if let Some(session_id) = agent.read(|r| r.legacy_import_of(key, &sha256))? {
        let outcome = FileOutcome::AlreadyImported { session_id };
        let report = FileReport { path, modified, sha256: Some(sha256), format, outcome, warnings: Vec::new() };
        return Ok(Some(report));
    }
    // Another agent's session, or seri's own older file.
    let (file, branches) = match format {
        Some(format) => (peer::read(format, bytes), peer::branches(format, bytes)),
        None => (file::read(bytes), Vec::new()),
    };
    let bytes = bytes.len() as u64;
    import_parsed(agent, Parsed { path, key, sha256, bytes, modified, format, file, branches }, cwd_fallback, defer)
}

/// A file read into its session, for [`import_parsed`].
struct Parsed<'a> {
    path: PathBuf,
    key: &'a str,
    sha256: String,
    /// How many bytes the file had.
    bytes: u64,
    modified: Option<Timestamp>,
    format: Option<Format>,
    /// Its main branch.
    file: file::LegacyFile,
    /// The branches it left ([`peer::branches`]).
    branches: Vec<file::LegacyFile>,
}

/// Writes a file read whole into its session (and its forks), in one
/// transaction; see [`import_file`].
fn import_parsed(
    agent: &AgentStore<'_>,
    parsed: Parsed<'_>,
    cwd_fallback: &str,
    defer: bool,
) -> Result<Option<FileReport>> {
    let Parsed { path, key, sha256, bytes, modified, format, file, branches } = parsed;
    let done = |outcome, warnings| FileReport {
        path: path.clone(),
        modified,
        sha256: Some(sha256.clone()),
        format,
        outcome,
        warnings,
    };
    if defer && format.is_some() {
        // A fork whose file does not name its source waits always: its
        // source may be any other file of the import.
        let waits = match &file.header.forked_from {
            Some(source) => agent.read(|r| r.legacy_imports_of_session(source))?.iter().flatten().next().is_none(),
            None => file.header.copies_unnamed_source,
        };
        if waits {
            return Ok(None);
        }
    }
    let outcome = agent.write(|tx| -> Result<FileOutcome> {
        let agent_id = tx.read().agent_id().clone();
        // Asked again inside the write lock: another process may have
        // imported the same file since the lookup above.
        if let Some(session_id) = tx.read().legacy_import_of(key, &sha256)? {
            return Ok(FileOutcome::AlreadyImported { session_id });
        }
        let earlier = tx.read().earlier_legacy_imports(key)?;
        // Another agent's file that grew since its newest import (a session
        // it went on with): its new events go on that session, when all it
        // holds is what the file still begins with. Not recorded: a session
        // has one import record (`legacy_imports.session_id` is unique), so
        // the file is compared again at the next import, which reads the
        // session and writes nothing.
        // A file that moved (`codex archive`) is known by its session's id.
        let moved = match (&file.header.id, format.is_some() && earlier.is_empty()) {
            (Some(id), true) => tx.read().legacy_imports_of_session(id)?,
            _ => Vec::new(),
        };
        if format.is_some()
            && let Some(Some(session_id)) = earlier.last().or(moved.last())
            && let Some(added) = grow(tx, *session_id, &file, modified)?
        {
            return Ok(match added {
                0 => FileOutcome::AlreadyImported { session_id: Some(*session_id) },
                events => FileOutcome::Grew { session_id: *session_id, events },
            });
        }
        let mut forks = 0;
        let session = if file.events.is_empty() {
            None
        } else {
            let created_at = file.created_at(modified.unwrap_or_else(|| tx.now()));
            let main = file.dated_events(created_at);
            // A fork the peer wrote to a file of its own becomes a fork by
            // reference of its source's session: the file's events from
            // `own_start` on are its own, numbered after `base`.
            let source = match (&file.header.forked_from, format) {
                (Some(source), Some(_)) => tx.read().legacy_imports_of_session(source)?.into_iter().flatten().last(),
                _ => None,
            };
            let linked = match source {
                Some(source) => {
                    fork_point(tx, source, &main, created_at)?.map(|(seq, own_start)| (source, seq, own_start))
                }
                None if format.is_some() && file.header.copies_unnamed_source => {
                    unnamed_source(tx, file.header.cwd.as_deref(), &main)?
                }
                None => None,
            };
            let (session_id, own_start, base) = match linked {
                Some((source, fork_seq, own_start)) => {
                    let fork = tx.fork_session(source, Some(fork_seq), seri_core::ForkVia::Import)?;
                    (fork.id, own_start, fork_seq.get())
                }
                None => {
                    let cwd =
                        file.header.cwd.clone().filter(|c| !c.is_empty()).unwrap_or_else(|| cwd_fallback.to_owned());
                    let mut seed = tx.new_seed(cwd);
                    seed.created_at = created_at;
                    if let Some(title) = file.header.title.clone().filter(|t| !t.is_empty()) {
                        seed.title = Some(title);
                        seed.title_source = Some(TitleSource::User);
                    }
                    tx.create_session(&seed)?;
                    (seed.id, 0, 0)
                }
            };
            let events = tx.append_dated(session_id, main[own_start..].to_vec())?;
            // Each branch the session left becomes a fork by reference at
            // the last event it shares with the main branch; one with no
            // events of its own (a bookkeeping line off the main path) is
            // none, and so is one inside what a fork's file copied from
            // its source (the source's import made that one).
            let mut seen = Vec::new();
            for branch in &branches {
                let dated = branch.dated_events(created_at);
                let shared = main.iter().zip(&dated).take_while(|(a, b)| a.1 == b.1).count();
                let own: Vec<_> = dated.into_iter().skip(shared).collect();
                if own.is_empty() || shared < own_start || seen.contains(&(shared, own.clone())) {
                    continue;
                }
                let at = seri_core::Seq(base + (shared - own_start) as u64);
                let fork = tx.fork_session(session_id, Some(at), seri_core::ForkVia::Import)?;
                tx.append_dated(fork.id, own.clone())?;
                seen.push((shared, own));
            }
            forks = seen.len() as u64;
            Some((session_id, events.len() as u64))
        };
        let record = ImportRecord {
            agent: &agent_id,
            path: key,
            sha256: &sha256,
            bytes,
            modified_at: modified,
            legacy_id: file.header.id.as_deref(),
            session_id: session.map(|(id, _)| id),
            events: session.map_or(0, |(_, events)| events),
            imported_at: tx.now(),
        };
        tx.record_legacy_import(&record)?;
        Ok(match session {
            None => FileOutcome::NothingImportable,
            Some((session_id, events)) if earlier.is_empty() => FileOutcome::Imported { session_id, events, forks },
            Some((session_id, events)) => {
                FileOutcome::Reimported { session_id, events, earlier: earlier.into_iter().flatten().collect() }
            }
        })
    })?;
    tracing::info!(path = %path.display(), ?outcome, "legacy file");
    let warnings = match outcome {
        FileOutcome::AlreadyImported { .. } => Vec::new(),
        _ => file.warnings,
    };
    Ok(Some(done(outcome, warnings)))
}

/// What stands for an unreadable file's bytes: its metadata (device,
/// inode, size, modification time, mode), or that it has none, and the
/// kind of error. Any change to the file gives a new version.
fn unreadable_version(path: &Path, error: &io::Error) -> String {
    use std::os::unix::fs::MetadataExt as _;
    let kind = error.kind();
    match fs::metadata(path) {
        Ok(m) => {
            format!("{}:{}:{}:{}.{}:{:o}:{kind:?}", m.dev(), m.ino(), m.size(), m.mtime(), m.mtime_nsec(), m.mode())
        }
        Err(e) => format!("no metadata ({:?}):{kind:?}", e.kind()),
    }
}

/// A read-only handle on the file, its size and its modification time.
///
/// Only a regular file is opened. The handle is opened without blocking and
/// checked, so a FIFO, a socket or a device named `*.jsonl` (or a file
/// swapped for one after the folder was listed) is reported as unreadable
/// instead of hanging every command that imports.
fn open(path: &Path) -> io::Result<(fs::File, u64, Option<Timestamp>)> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let nonblocking = rustix::fs::OFlags::NONBLOCK.bits();
    let file = fs::OpenOptions::new().read(true).custom_flags(i32::try_from(nonblocking).unwrap_or(0)).open(path)?;
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        use std::os::unix::fs::FileTypeExt as _;
        let kind = metadata.file_type();
        let what = if kind.is_dir() {
            "a folder"
        } else if kind.is_fifo() {
            "a FIFO"
        } else if kind.is_socket() {
            "a socket"
        } else {
            "a device"
        };
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("not a regular file ({what})")));
    }
    let modified = metadata.modified().ok().and_then(|t| t.duration_since(UNIX_EPOCH).ok());
    let modified = modified.map(|d| Timestamp(i64::try_from(d.as_millis()).unwrap_or(i64::MAX)));
    Ok((file, metadata.len(), modified))
}

/// An opened file's bytes, from its start.
fn read_all(mut file: &fs::File) -> io::Result<Vec<u8>> {
    use std::io::Seek as _;
    file.seek(io::SeekFrom::Start(0))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}
