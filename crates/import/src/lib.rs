//! Other agents' sessions and older seri files, read into seri's store.
//!
//! - [`legacy`]: the import of a folder of session files, each file in one
//!   transaction, each content once: the older seri release's
//!   `sessions/*.jsonl` ([`LegacyImport::import_legacy_sessions`]), and
//!   any file or folder a peer recorded ([`import_path`]) — Claude Code,
//!   Codex, pi, opencode. An [`ImportReport`] says what became of every
//!   file and every line that was skipped; the files are only ever read.
//! - [`peers`]: the peers' formats, read into one tree of entries
//!   ([`peers::PeerSession`]): pure, bytes in, no store.
//!
//! Everything here writes through the store's public API: a
//! [`seri_store::WriteTx`] appends the events with the times the files
//! recorded ([`seri_store::WriteTx::append_dated`]), forks by reference
//! ([`seri_store::WriteTx::fork_session_from`]) and records each import
//! ([`seri_store::ImportRecord`]), so an import is idempotent and a
//! failure leaves nothing of the file it failed on. The store knows no
//! file format; this crate knows no SQL.
//!
//! ```no_run
//! use seri_import::LegacyImport as _;
//!
//! # fn main() -> Result<(), seri_store::StoreError> {
//! let profile = seri_store::Profile::from_env()?;
//! let store = profile.open_store()?;
//! let agent = store.agent(&seri_core::AgentId::local());
//! let report = agent.import_legacy_sessions(&profile.legacy_sessions_dir(), "/home/me")?;
//! println!("{} new sessions", report.new_sessions().len());
//! # Ok(())
//! # }
//! ```

pub mod legacy;
pub mod peers;

use std::path::Path;

use seri_store::{AgentStore, Reader, Result};

pub use legacy::{
    FOLDER_RECHECK, FileOutcome, FileReport, FolderCheck, Headline, ImportReport, LINE_LIMIT, LineWarning, Named, News,
    SessionNames, import_path, import_path_with_progress,
};

/// The import of a folder of legacy session files, as a method of the
/// agent whose sessions they become.
pub trait LegacyImport {
    /// Imports the older release's session files in `dir` (usually
    /// [`seri_store::Profile::legacy_sessions_dir`]): every `*.jsonl` file, by
    /// name, each into one new session of this agent in one transaction.
    /// The files are only ever read. The format, and what becomes of each
    /// line, is described in [`legacy`].
    ///
    /// Importing is idempotent: a file whose bytes were imported before (by
    /// path and SHA-256) is skipped, and one whose bytes changed since is
    /// imported again as a new session. A session gets the header's `cwd`,
    /// else `cwd_fallback`. A malformed line is reported and skipped, a file
    /// with no importable line or one that cannot be read is reported, and
    /// a folder that does not exist is an empty report.
    ///
    /// Errors: [`seri_store::ImportError::Folder`] when the folder exists but cannot
    /// be listed; [`seri_store::ImportError::File`] when the store fails on a
    /// file, which is then not imported at all while the files before it are.
    ///
    /// ```no_run
    /// # use seri_import::LegacyImport as _;
    /// # fn main() -> Result<(), seri_store::StoreError> {
    /// let profile = seri_store::Profile::from_env()?;
    /// let store = profile.open_store()?;
    /// let agent = store.agent(&seri_core::AgentId::local());
    /// let report = agent.import_legacy_sessions(&profile.legacy_sessions_dir(), "/home/me")?;
    /// if !report.is_quiet() {
    ///     tracing::info!("{report}");
    /// }
    /// # Ok(())
    /// # }
    /// ```
    fn import_legacy_sessions(&self, dir: &Path, cwd_fallback: &str) -> Result<ImportReport>;

    /// [`LegacyImport::import_legacy_sessions`], and `read`'s answer from the
    /// store as the import leaves it, for about the cost of the slower of
    /// the two rather than their sum: `read` runs while a second thread
    /// lists and `stat`s the folder, in the snapshot the import records are
    /// read from. When every file proves unchanged since its record (or
    /// fails to read as it did before), nothing was written and that
    /// snapshot is the store after the import; otherwise `read` runs once
    /// more, after it. A command that only reads (`seri sessions list`)
    /// starts this way.
    ///
    /// `folder_check` says how much is looked at: every file
    /// ([`FolderCheck::EveryFile`], as `import_legacy_sessions`
    /// does), or, for a start, the folder first
    /// ([`FolderCheck::FolderFirst`]: one `stat` and one listing of
    /// the folder when it is as the last full check left it, and then
    /// `read` runs once, with an empty report).
    ///
    /// `progress(done, total)` is told, in bytes, how far the import of
    /// the files that changed got (`done` never goes back), for a progress
    /// bar; nothing when no file changed.
    ///
    /// The import's errors are the outer `Err`, as for
    /// [`LegacyImport::import_legacy_sessions`]; `read`'s own error is the
    /// inner one, next to the report of what the import did.
    ///
    /// ```no_run
    /// # use seri_import::LegacyImport as _;
    /// # fn main() -> Result<(), seri_store::StoreError> {
    /// let profile = seri_store::Profile::from_env()?;
    /// let store = profile.open_store()?;
    /// let agent = store.agent(&seri_core::AgentId::local());
    /// let query = seri_store::SessionQuery::default();
    /// let (report, sessions) =
    ///     agent.import_legacy_sessions_and_read(&profile.legacy_sessions_dir(), "/home/me", seri_import::FolderCheck::FolderFirst, |_, _| {}, |r| r.list_sessions(&query))?;
    /// let sessions = sessions?; // every session, those just imported among them
    /// # Ok(())
    /// # }
    /// ```
    fn import_legacy_sessions_and_read<T>(
        &self,
        dir: &Path,
        cwd_fallback: &str,
        folder_check: FolderCheck,
        progress: impl FnMut(u64, u64),
        read: impl FnMut(&Reader<'_>) -> Result<T>,
    ) -> Result<(ImportReport, Result<T>)>;
}

impl LegacyImport for AgentStore<'_> {
    fn import_legacy_sessions(&self, dir: &Path, cwd_fallback: &str) -> Result<ImportReport> {
        legacy::import(self, dir, cwd_fallback, FolderCheck::EveryFile, |_, _| {}, |_| Ok(())).map(|(report, _)| report)
    }

    fn import_legacy_sessions_and_read<T>(
        &self,
        dir: &Path,
        cwd_fallback: &str,
        folder_check: FolderCheck,
        progress: impl FnMut(u64, u64),
        read: impl FnMut(&Reader<'_>) -> Result<T>,
    ) -> Result<(ImportReport, Result<T>)> {
        legacy::import(self, dir, cwd_fallback, folder_check, progress, read)
    }
}
