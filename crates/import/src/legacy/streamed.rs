//! seri's own older files, imported as they are read: each line becomes
//! its events and they go into the store in batches, inside the one write
//! transaction that makes the file's session, so a file of any size is
//! imported in memory bounded by a batch (and the longest line), and still
//! whole or not at all: a store error, a file that cannot be read to its
//! end, or one whose bytes changed since they were hashed rolls everything
//! back.
//!
//! Another agent's file is read this way too, twice: its session is a
//! tree whose branch to import is known only at its end ([`super::peer_stream`]).

use std::io;

use seri_core::{SessionId, Timestamp, TitleSource};

use super::Source as _;
use super::file::{self, LegacyEvent};
use super::line::Header;
use super::lines::FileLines;
use super::report::{FileOutcome, LineWarning};
use seri_store::AgentStore;
use seri_store::ImportRecord;
use seri_store::{Result, StoreError};

/// At most this many events are held before they are written.
const BATCH_EVENTS: usize = 1024;

/// Nor more than the events of this many bytes of lines.
const BATCH_BYTES: u64 = 8 * 1024 * 1024;

/// The file being imported, as the caller knows it.
pub(crate) struct Streamed<'a> {
    /// What it is known by (its canonical path).
    pub(crate) key: &'a str,
    pub(crate) sha256: &'a str,
    pub(crate) bytes: u64,
    pub(crate) modified: Option<Timestamp>,
    pub(crate) cwd_fallback: &'a str,
}

/// Why a streamed import wrote nothing.
enum Failed {
    Store(StoreError),
    /// The file, read again, could not be read to its end or was changed.
    File(io::Error),
}

impl From<StoreError> for Failed {
    fn from(e: StoreError) -> Self {
        Self::Store(e)
    }
}

/// Imports the lines of `source`, seri's own older format, as one session:
/// what was done and the lines' warnings, or why the file could not be read
/// (nothing was written then); an error only when the store fails.
pub(crate) fn import(
    agent: &AgentStore<'_>,
    source: &FileLines<'_>,
    file: &Streamed<'_>,
) -> Result<std::result::Result<(FileOutcome, Vec<LineWarning>), io::Error>> {
    let (header, first_time) = first_look(source);
    if let Some(error) = source.failure() {
        return Ok(Err(error));
    }
    let written = agent.write(|tx| -> std::result::Result<(FileOutcome, Vec<LineWarning>), Failed> {
        let agent_id = tx.read().agent_id().clone();
        // Asked again inside the write lock: another process may have
        // imported the same file since the caller's lookup.
        if let Some(session_id) = tx.read().legacy_import_of(file.key, file.sha256)? {
            return Ok((FileOutcome::AlreadyImported { session_id }, Vec::new()));
        }
        let earlier = tx.read().earlier_legacy_imports(file.key)?;
        // When the session started: the header's time, else the first time
        // any event carried, else the file's modification time.
        let created_at = header
            .as_ref()
            .and_then(|header| header.created_at)
            .or(first_time)
            .unwrap_or_else(|| file.modified.unwrap_or_else(|| tx.now()));
        let mut reader = file::Reader::default();
        let mut session: Option<SessionId> = None;
        let (mut batch, mut batch_bytes, mut events, mut last) = (Vec::new(), 0u64, 0u64, created_at);
        let mut lines = source.raw_lines();
        loop {
            let next = lines.next();
            match &next {
                Some((number, raw)) => {
                    batch_bytes += raw.as_ref().map_or(0, |raw| raw.len() as u64);
                    reader.raw(*number, raw.as_deref().map_err(Clone::clone));
                }
                None => reader.finish(),
            }
            // Each event its own time, else the time of the one before it.
            for LegacyEvent { at, body, .. } in reader.take_events() {
                last = at.unwrap_or(last);
                batch.push((last, body));
            }
            let full = batch.len() >= BATCH_EVENTS || batch_bytes >= BATCH_BYTES || next.is_none();
            if full && !batch.is_empty() {
                // The first event settles the header (one after it is skipped).
                let session_id = match session {
                    Some(id) => id,
                    None => {
                        let id = create_session(tx, reader.header(), created_at, file.cwd_fallback)?.id;
                        *session.insert(id)
                    }
                };
                events += tx.append_dated(session_id, std::mem::take(&mut batch))?.len() as u64;
                batch_bytes = 0;
            }
            if next.is_none() {
                break;
            }
        }
        drop(lines);
        if let Some(error) = source.failure() {
            return Err(Failed::File(error));
        }
        let record = ImportRecord {
            agent: &agent_id,
            path: file.key,
            sha256: file.sha256,
            bytes: file.bytes,
            modified_at: file.modified,
            legacy_id: reader.header().and_then(|header| header.id.as_deref()),
            session_id: session,
            events,
            imported_at: tx.now(),
        };
        tx.record_legacy_import(&record)?;
        let outcome = match session {
            None => FileOutcome::NothingImportable,
            Some(session_id) if earlier.is_empty() => FileOutcome::Imported { session_id, events, forks: 0 },
            Some(session_id) => {
                FileOutcome::Reimported { session_id, events, earlier: earlier.into_iter().flatten().collect() }
            }
        };
        Ok((outcome, reader.take_warnings()))
    });
    match written {
        Ok(written) => Ok(Ok(written)),
        Err(Failed::File(error)) => Ok(Err(error)),
        Err(Failed::Store(error)) => Err(error),
    }
}

/// The file's header and the first time an event of it carries, read no
/// further than they take (the header's time, when it has one, is the
/// session's start, and it is the first line).
fn first_look(source: &FileLines<'_>) -> (Option<Header>, Option<Timestamp>) {
    let mut reader = file::Reader::default();
    for (number, raw) in source.raw_lines() {
        reader.raw(number, raw.as_deref().map_err(Clone::clone));
        if reader.header().is_some_and(|header| header.created_at.is_some()) {
            return (reader.header().cloned(), None);
        }
        if let Some(at) = reader.take_events().iter().find_map(|event| event.at) {
            return (reader.header().cloned(), Some(at));
        }
    }
    reader.finish();
    let at = reader.take_events().iter().find_map(|event| event.at);
    (reader.header().cloned(), at)
}

/// Creates the file's session, as its header describes it: its view.
pub(super) fn create_session(
    tx: &mut seri_store::WriteTx<'_>,
    header: Option<&Header>,
    created_at: Timestamp,
    cwd_fallback: &str,
) -> Result<seri_core::SessionInfo> {
    let cwd = header.and_then(|h| h.cwd.clone()).filter(|c| !c.is_empty()).unwrap_or_else(|| cwd_fallback.to_owned());
    let mut seed = tx.new_seed(cwd);
    seed.created_at = created_at;
    if let Some(title) = header.and_then(|h| h.title.clone()).filter(|t| !t.is_empty()) {
        seed.title = Some(title);
        seed.title_source = Some(TitleSource::User);
    }
    tx.create_session(&seed)
}
