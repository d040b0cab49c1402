//! What an import did, file by file and line by line, in a form a program
//! can inspect and a person can read ([`fmt::Display`]: one short line each).

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use seri_core::{SessionId, Timestamp};

use crate::peers::Format;

/// What [`crate::LegacyImport::import_legacy_sessions`] did with a folder.
#[derive(Debug)]
pub struct ImportReport {
    /// The folder, as given.
    pub dir: PathBuf,
    /// Every `.jsonl` file in it, in the order they were imported (by name).
    pub files: Vec<FileReport>,
}

/// What happened to one file.
#[derive(Debug)]
pub struct FileReport {
    /// The file: the folder as given, joined with its name.
    pub path: PathBuf,
    /// Its modification time when it was read (what the pruning of old
    /// recordings goes by for legacy files); `None` if it could not be read.
    pub modified: Option<Timestamp>,
    /// Lowercase hex SHA-256 of its bytes; `None` if it could not be read.
    pub sha256: Option<String>,
    /// The other agent that wrote it; `None` for seri's own older files
    /// (and for a file skipped by its `stat` alone, which was not read).
    pub format: Option<Format>,
    /// What was done with it.
    pub outcome: FileOutcome,
    /// Lines skipped, or imported with a note, in line order. Only a file
    /// that was read through has any: a file skipped as already imported is
    /// not read again.
    pub warnings: Vec<LineWarning>,
}

/// What was done with one file.
#[derive(Debug)]
pub enum FileOutcome {
    /// Imported as a new session, for the first time.
    Imported {
        /// The new session.
        session_id: SessionId,
        /// How many events it got.
        events: u64,
        /// How many branches the file's session left became forks of it.
        forks: u64,
    },
    /// Imported again as a new session: the file changed since it was last
    /// imported (the older release appends to its files). The earlier
    /// sessions stay as they were.
    Reimported {
        /// The new session.
        session_id: SessionId,
        /// How many events it got.
        events: u64,
        /// The sessions earlier contents of the file became, oldest first.
        earlier: Vec<SessionId>,
    },
    /// Another agent's file that grew since it was imported: its new
    /// events were appended to the session it became.
    Grew {
        /// The session it became before, which now holds the new events too.
        session_id: SessionId,
        /// How many events were appended.
        events: u64,
    },
    /// Skipped: these exact bytes were imported before.
    AlreadyImported {
        /// The session they became; `None` when they held nothing importable.
        session_id: Option<SessionId>,
    },
    /// Failed: no line could be imported, so no session was created. The
    /// bytes are recorded, so they are not examined and reported again.
    NothingImportable,
    /// Failed: the file could not be read. It is tried again at every
    /// import; the version of the file that failed is recorded, so the same
    /// failure is reported once.
    Unreadable {
        /// What the file system said.
        error: io::Error,
        /// Whether this version of the file failed before (and so was
        /// reported before).
        reported_before: bool,
    },
}

/// A line that was skipped, or imported with a note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineWarning {
    /// The 1-based line number.
    pub line: u64,
    /// Whether the line was left out (`false`: imported, with `problem` as a note).
    pub skipped: bool,
    /// What was wrong.
    pub problem: String,
    /// How many lines it stands for: a reason another agent's file gives
    /// for many lines is reported once, at the first of them.
    pub count: u64,
}

impl ImportReport {
    /// A report of nothing: the folder does not exist or has no `.jsonl` files.
    pub(crate) fn empty(dir: &Path) -> Self {
        Self { dir: dir.to_path_buf(), files: Vec::new() }
    }

    /// The sessions this import created, in file order.
    pub fn new_sessions(&self) -> Vec<SessionId> {
        self.files.iter().filter_map(FileReport::new_session).collect()
    }

    /// Whether there is nothing to tell: every file was skipped as already
    /// imported, or failed as it did before (or there were none). The
    /// command line prints [`ImportReport::news`] on first use only when
    /// this is false.
    pub fn is_quiet(&self) -> bool {
        self.files.iter().all(FileReport::is_old_news)
    }

    /// The report without the files that are old news: what an automatic
    /// import tells a person.
    pub fn news(&self) -> News<'_> {
        News { report: self, names: &whole }
    }

    /// [`ImportReport::news`] with each session named by `names`.
    pub fn news_naming<'a>(&'a self, names: SessionNames<'a>) -> News<'a> {
        News { report: self, names }
    }
}

/// [`ImportReport::news`]: one line per file that is news, and its warnings.
pub struct News<'a> {
    report: &'a ImportReport,
    names: SessionNames<'a>,
}

impl fmt::Debug for News<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("News").field("report", self.report).finish_non_exhaustive()
    }
}

impl fmt::Display for News<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let news = self.report.files.iter().filter(|file| !file.is_old_news());
        for (i, file) in news.enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{}", file.naming(self.names))?;
        }
        Ok(())
    }
}

impl FileReport {
    /// Skipped as imported before, or failed as it did before.
    pub fn is_old_news(&self) -> bool {
        matches!(
            self.outcome,
            FileOutcome::AlreadyImported { .. } | FileOutcome::Unreadable { reported_before: true, .. }
        )
    }

    /// The session this import created from the file, if it created one.
    pub fn new_session(&self) -> Option<SessionId> {
        match self.outcome {
            FileOutcome::Imported { session_id, .. } | FileOutcome::Reimported { session_id, .. } => Some(session_id),
            FileOutcome::Grew { .. }
            | FileOutcome::AlreadyImported { .. }
            | FileOutcome::NothingImportable
            | FileOutcome::Unreadable { .. } => None,
        }
    }

    /// The path as reports show it: the folder's name and the file's.
    pub fn short_path(&self) -> String {
        let file = self.path.file_name().unwrap_or(self.path.as_os_str()).to_string_lossy();
        match self.path.parent().and_then(Path::file_name) {
            Some(dir) => format!("{}/{file}", dir.to_string_lossy()),
            None => file.into_owned(),
        }
    }
}

/// How a report names a session: its whole id, or what the caller gives
/// ([`ImportReport::naming`], [`FileReport::naming`]: the short id a
/// person reads).
pub type SessionNames<'a> = &'a dyn Fn(SessionId) -> String;

/// A session's whole id, as a report names it by default.
fn whole(id: SessionId) -> String {
    id.to_string()
}

impl fmt::Display for ImportReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.naming(&whole))
    }
}

impl ImportReport {
    /// The report with each session named by `names`.
    pub fn naming<'a>(&'a self, names: SessionNames<'a>) -> Named<'a, ImportReport> {
        Named { report: self, names }
    }
}

/// A report whose sessions are named by the caller ([`ImportReport::naming`],
/// [`FileReport::naming`]).
pub struct Named<'a, T> {
    report: &'a T,
    names: SessionNames<'a>,
}

impl fmt::Display for Named<'_, ImportReport> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let report = self.report;
        if report.files.is_empty() {
            return write!(f, "no .jsonl files in {}", report.dir.display());
        }
        for (i, file) in report.files.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{}", file.naming(self.names))?;
        }
        Ok(())
    }
}

impl FileReport {
    /// What was done with the file, in one line, without its warnings.
    pub fn headline(&self) -> Headline<'_> {
        Headline { report: self, names: &whole }
    }

    /// [`FileReport::headline`] with each session named by `names`.
    pub fn headline_naming<'a>(&'a self, names: SessionNames<'a>) -> Headline<'a> {
        Headline { report: self, names }
    }

    /// The whole report with each session named by `names`.
    pub fn naming<'a>(&'a self, names: SessionNames<'a>) -> Named<'a, FileReport> {
        Named { report: self, names }
    }
}

/// [`FileReport::headline`]: the first line of the report.
pub struct Headline<'a> {
    report: &'a FileReport,
    names: SessionNames<'a>,
}

impl fmt::Debug for Headline<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Headline").field("report", self.report).finish_non_exhaustive()
    }
}

impl fmt::Display for Headline<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let report = self.report;
        let name = self.names;
        let path = match report.format {
            Some(format) => format!("{} ({format})", report.short_path()),
            None => report.short_path(),
        };
        match &report.outcome {
            FileOutcome::Imported { session_id, events, forks } => {
                write!(f, "imported {path} → {} ({})", name(*session_id), Events(*events))?;
                match forks {
                    0 => {}
                    1 => f.write_str(", and 1 branch as a fork")?,
                    n => write!(f, ", and {n} branches as forks")?,
                }
            }
            FileOutcome::Reimported { session_id, events, earlier } => {
                write!(f, "re-imported {path} → {} ({}): it changed since ", name(*session_id), Events(*events))?;
                match earlier.as_slice() {
                    [] => f.write_str("it was last read")?,
                    ids => {
                        f.write_str("it was imported as ")?;
                        for (i, id) in ids.iter().enumerate() {
                            write!(f, "{}{}", if i > 0 { ", " } else { "" }, name(*id))?;
                        }
                    }
                }
            }
            FileOutcome::Grew { session_id, events } => {
                write!(f, "grew {path} → {} (+{})", name(*session_id), Events(*events))?;
            }
            FileOutcome::AlreadyImported { session_id: Some(id) } => {
                write!(f, "skipped {path}: already imported as {}", name(*id))?;
            }
            FileOutcome::AlreadyImported { session_id: None } => {
                write!(f, "skipped {path}: already read, and it held nothing importable")?;
            }
            FileOutcome::NothingImportable => write!(f, "failed {path}: no importable line, so no session")?,
            FileOutcome::Unreadable { error, reported_before: false } => {
                write!(f, "failed {path}: cannot read it: {error}")?;
            }
            FileOutcome::Unreadable { error, reported_before: true } => {
                write!(f, "failed {path}: cannot read it, as before: {error}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Display for FileReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.naming(&whole))
    }
}

impl fmt::Display for Named<'_, FileReport> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let report = self.report;
        write!(f, "{}", report.headline_naming(self.names))?;
        let path = report.short_path();
        for warning in &report.warnings {
            let skipped = if warning.skipped { "skipped: " } else { "" };
            write!(f, "\n{path}:{}: {skipped}{}", warning.line, warning.problem)?;
            if warning.count > 1 {
                write!(f, " ({} lines, the first here)", warning.count)?;
            }
        }
        Ok(())
    }
}

/// "1 event", "12 events".
struct Events(u64);

impl fmt::Display for Events {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            1 => f.write_str("1 event"),
            n => write!(f, "{n} events"),
        }
    }
}
