//! Decoding a long read on a second core while the first reads the rows.
//!
//! Resuming a long uncompacted session reads every event of its working
//! context: stepping the database through the rows is about as much work as
//! decoding their JSON payloads, and both ran on one thread, one after the
//! other. [`decode_rows`] splits them once a read is long: the thread that
//! holds the connection copies each row's raw columns into a batch and
//! hands full batches over, in order, to a scoped second thread that
//! decodes them and gives each body to the caller's visitor. A few batches are in flight at
//! once, so memory stays bounded whatever the length of the history, and the
//! batches go back to be filled again rather than allocated anew.
//!
//! The second thread stops at the first row it cannot decode, and the
//! reader stops with it: the error is the one a one-thread read would have
//! returned, for the same row, and the visitor saw exactly the rows before
//! it. A database error stops the reader; the rows already handed over are
//! still visited, in order, as they would have been.

use std::ops::Range;
use std::sync::mpsc;

use seri_core::{EventBody, Seq, SessionId};

use crate::db::rows::{self, RowError};
use crate::db::sql::Row;
use crate::error::{Result, StoreError};

use crate::sessions::DECODE_BESIDE_FROM_ROWS;

/// Rows per batch: enough to make each hand-over cheap, few enough that the
/// decoder starts soon.
const BATCH_ROWS: usize = 256;

/// Full batches waiting for the decoder before the reader waits for it.
const IN_FLIGHT: usize = 4;

/// One row's raw columns, as ranges of its batch's bytes.
struct RawRow {
    seq: Seq,
    format: i64,
    kind: Range<usize>,
    payload: Range<usize>,
}

/// Rows copied out of the database, waiting to be decoded.
#[derive(Default)]
struct Batch {
    bytes: Vec<u8>,
    rows: Vec<RawRow>,
}

impl Batch {
    /// Copies a row of `seq, type, format_version, payload`.
    fn push(&mut self, row: &Row<'_>) -> std::result::Result<(), RowError> {
        let seq = Seq(rows::uint(row.get(0)?));
        let kind = self.copy(row.text(1)?.as_bytes());
        let format = row.get(2)?;
        let payload = self.copy(row.text_bytes(3)?);
        self.rows.push(RawRow { seq, format, kind, payload });
        Ok(())
    }

    fn copy(&mut self, bytes: &[u8]) -> Range<usize> {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(bytes);
        start..self.bytes.len()
    }

    /// Decodes each row in order into `visit`; how many it decoded.
    fn decode(
        &self,
        session_id: SessionId,
        visit: &mut (dyn FnMut(Seq, EventBody) + Send),
    ) -> std::result::Result<usize, StoreError> {
        for row in &self.rows {
            // The kind was copied from a `&str` whole, so it is still one.
            let kind = std::str::from_utf8(&self.bytes[row.kind.clone()]).unwrap_or_default();
            visit(row.seq, rows::decode_body(session_id, row.seq, kind, row.format, &self.bytes[row.payload.clone()])?);
        }
        Ok(self.rows.len())
    }

    fn clear(&mut self) {
        self.bytes.clear();
        self.rows.clear();
    }
}

/// Runs `read`, which hands each row of `seq, type, format_version,
/// payload` (of `session_id`'s events, in seq order) to the function it is
/// given until that returns `false`, and decodes each row into `visit`, in
/// the same order: the first [`DECODE_BESIDE_FROM_ROWS`] as they are read,
/// the rest (given a second core) on a second thread. The number of rows
/// visited.
pub(crate) fn decode_rows(
    session_id: SessionId,
    visit: &mut (dyn FnMut(Seq, EventBody) + Send),
    read: impl FnOnce(&mut dyn FnMut(&Row<'_>) -> std::result::Result<bool, RowError>) -> Result<()>,
) -> Result<usize> {
    let parallel = second_core();
    std::thread::scope(|scope| {
        let mut visit = Some(visit);
        let mut inline = 0usize;
        let mut beside: Option<Beside<'_>> = None;
        let read = read(&mut |row| {
            if let Some(beside) = &mut beside {
                return beside.push(row);
            }
            let (seq, body) = rows::read_body(row, session_id)?;
            if let Some(visit) = visit.as_deref_mut() {
                visit(seq, body);
            }
            inline += 1;
            if parallel
                && inline as u64 == DECODE_BESIDE_FROM_ROWS
                && let Some(visit) = visit.take()
            {
                beside = Some(Beside::start(scope, session_id, visit));
            }
            Ok(true)
        });
        // The decoder's error first: when there is one, it is why the read stopped.
        let decoded = match beside {
            Some(beside) => beside.finish(read.is_ok())?,
            None => 0,
        };
        read?;
        Ok(inline + decoded)
    })
}

/// Whether this process may use a second core, asked once: the standard
/// library reads the cgroup's files each time (1.7% of a busy server's
/// time went there, every turn's read asking again).
fn second_core() -> bool {
    static SECOND_CORE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *SECOND_CORE.get_or_init(|| std::thread::available_parallelism().is_ok_and(|n| n.get() > 1))
}

/// The reader's end of a decoder on a second thread.
struct Beside<'scope> {
    batch: Batch,
    full: mpsc::SyncSender<Batch>,
    emptied: mpsc::Receiver<Batch>,
    decoder: std::thread::ScopedJoinHandle<'scope, std::result::Result<usize, StoreError>>,
}

impl<'scope> Beside<'scope> {
    fn start<'env>(
        scope: &'scope std::thread::Scope<'scope, 'env>,
        session_id: SessionId,
        visit: &'scope mut (dyn FnMut(Seq, EventBody) + Send),
    ) -> Self {
        let (full, to_decode) = mpsc::sync_channel::<Batch>(IN_FLIGHT);
        let (recycle, emptied) = mpsc::channel::<Batch>();
        let decoder = scope.spawn(move || {
            let mut decoded = 0;
            for mut batch in to_decode {
                decoded += batch.decode(session_id, visit)?;
                batch.clear();
                // Refused only once the reader is done: the batch is dropped.
                let _ = recycle.send(batch);
            }
            Ok(decoded)
        });
        Self { batch: Batch::default(), full, emptied, decoder }
    }

    /// Copies a row into the batch, handing the batch over once full;
    /// `false` once the decoder stopped (at a row it could not decode: it
    /// has the error, and reading on is pointless).
    fn push(&mut self, row: &Row<'_>) -> std::result::Result<bool, RowError> {
        self.batch.push(row)?;
        if self.batch.rows.len() < BATCH_ROWS {
            return Ok(true);
        }
        let next = self.emptied.try_recv().unwrap_or_default();
        Ok(self.full.send(std::mem::replace(&mut self.batch, next)).is_ok())
    }

    /// Hands over the last rows (when the read went well), waits for the
    /// decoder, and says how many rows it decoded or where it stopped.
    fn finish(self, read_ok: bool) -> std::result::Result<usize, StoreError> {
        let Self { batch, full, decoder, .. } = self;
        if read_ok && !batch.rows.is_empty() {
            // Refused, as above, only by a decoder that stopped.
            let _ = full.send(batch);
        }
        drop(full);
        decoder.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    }
}
