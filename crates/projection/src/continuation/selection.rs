//! Choosing what a projection loads within its budget, reading only what it
//! needs.
//!
//! The budget pays for the bytes of excerpt and exchange *lines* (each an
//! escaped transcript line plus its `\n`); frames and the unbudgeted parts
//! are outside it. Two passes spend it:
//!
//! 1. **Cited ranges**, merged, in seq order. Each is loaded whole if it fits
//!    in what is left. A merged range that does not fit is tried again as
//!    the citations it was merged from, in seq order, each without what an
//!    earlier one already loaded: a small citation is not lost with a large
//!    neighbour it touches. What still does not fit is omitted; a range that
//!    does not fit does not stop the smaller ones after it.
//! 2. **Recent exchanges**, walking back from the initiating message in pages
//!    of [`READ_PAGE_EVENTS`]. An exchange is a message from a user or a
//!    trigger and everything after it up to the next one (the events before
//!    the thread's first such message count as one exchange too). Each is
//!    kept whole or not at all; the walk stops at the first one that does not
//!    fit, so what is loaded is always the unbroken tail of the conversation.
//!    Events already loaded as an excerpt are not repeated (their lines are
//!    left out of the exchange and cost nothing; the seqs show the gap), so
//!    no event appears twice in a projection. Events a `/rewind` took out of
//!    the conversation are left out the same way, and so are the rewinds.
//!
//! Cost: the compiler reads the cited ranges (a merged range that did not fit
//! whole, twice: whole, then as its citations), the exchanges it loads, and the
//! one exchange that stopped the walk (read to its start so that its range
//! and size can be reported), plus at most one page of overshoot. It never
//! reads anything because of the thread's length. Lines of a range that has
//! already outgrown the room left are measured and dropped, so memory stays
//! within the budget too.

use seri_core::{Event, EventBody, Seq, SessionId};

use super::citations::CitedGroup;
use super::error::CompileError;
use crate::compaction::RewindMask;
use crate::thread::{SeqRange, ThreadEvents};
use crate::transcript::push_escaped_transcript_line;

/// How many events the compiler asks the thread for at a time.
pub const READ_PAGE_EVENTS: u64 = 64;

/// A range that was read and measured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Measured {
    /// The seqs.
    pub(crate) range: SeqRange,
    /// Bytes of the escaped lines it adds, newlines included (for an
    /// exchange, without the events already loaded as excerpts).
    pub(crate) bytes: u64,
}

/// A range that fits, with its lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Loaded {
    /// What it is and costs.
    pub(crate) measured: Measured,
    /// Its escaped transcript lines, each ending in `\n` (may be empty for an
    /// exchange that lies wholly inside loaded excerpts).
    pub(crate) lines: String,
}

/// What the budget bought and what it could not.
#[derive(Debug, Default)]
pub(crate) struct Selection {
    /// Cited ranges loaded, in seq order.
    pub(crate) excerpts: Vec<Loaded>,
    /// Cited ranges that did not fit, in seq order.
    pub(crate) omitted_excerpts: Vec<Measured>,
    /// Exchanges loaded, oldest first.
    pub(crate) exchanges: Vec<Loaded>,
    /// The exchange that stopped the walk.
    pub(crate) omitted_exchange: Option<Measured>,
    /// Bytes of the budget spent.
    pub(crate) used_bytes: u64,
}

/// Reads `cited` and the exchanges before `initiating` from `thread`, within
/// `budget` bytes, the exchanges within `exchange_share` percent of it (see
/// [`super::recent_exchange_share`]).
pub(crate) fn select<T: ThreadEvents + ?Sized>(
    thread: &T,
    session_id: SessionId,
    cited: &[CitedGroup],
    initiating: Seq,
    budget: u64,
    exchange_share: u64,
) -> Result<Selection, CompileError<T::Error>> {
    let mut reader = Reader { thread, session_id, scratch: String::new() };
    reader.check_initiating(initiating)?;
    let mut selection = Selection::default();
    for group in cited {
        match reader.load(group.range, budget - selection.used_bytes)? {
            Ok(loaded) => selection.include(loaded),
            Err(measured) if group.parts.len() < 2 => selection.omitted_excerpts.push(measured),
            Err(_) => reader.load_parts(&group.parts, budget, &mut selection)?,
        }
    }
    let for_exchanges = budget.saturating_mul(exchange_share.min(100)) / 100;
    let limit = budget.min(selection.used_bytes.saturating_add(for_exchanges));
    reader.walk_exchanges(initiating, limit, &mut selection)?;
    Ok(selection)
}

impl Selection {
    fn include(&mut self, loaded: Loaded) {
        self.used_bytes += loaded.measured.bytes;
        self.excerpts.push(loaded);
    }
}

struct Reader<'t, T: ?Sized> {
    thread: &'t T,
    session_id: SessionId,
    scratch: String,
}

impl<T: ThreadEvents + ?Sized> Reader<'_, T> {
    /// The events of `range`, all of them, in order.
    fn read(&self, range: SeqRange) -> Result<Vec<Event>, CompileError<T::Error>> {
        let session_id = self.session_id;
        let events = self.thread.events(range).map_err(|source| CompileError::Read { session_id, range, source })?;
        let complete = events.len() as u64 == range.count()
            && events.iter().zip(range.from.0..).all(|(event, expected)| event.seq.0 == expected);
        if complete { Ok(events) } else { Err(CompileError::MissingEvents { session_id, range }) }
    }

    fn check_initiating(&self, seq: Seq) -> Result<(), CompileError<T::Error>> {
        let events = self.read(SeqRange::single(seq))?;
        let is_message = events.first().and_then(|e| e.body.as_message()).is_some_and(|m| m.is_from_user_or_trigger());
        if is_message { Ok(()) } else { Err(CompileError::NotInitiatingMessage { session_id: self.session_id, seq }) }
    }

    /// Reads `range` page by page: `Ok` with its lines if they take at most
    /// `room` bytes, else `Err` with its size.
    fn load(&mut self, range: SeqRange, room: u64) -> Result<Result<Loaded, Measured>, CompileError<T::Error>> {
        let mut lines = String::new();
        let mut bytes = 0;
        let mut from = range.from;
        loop {
            let to = Seq(from.0.saturating_add(READ_PAGE_EVENTS - 1).min(range.to.0));
            // A page past the thread's end is reported as the whole cited range.
            let page = self.read(SeqRange { from, to }).map_err(|e| match e {
                CompileError::MissingEvents { session_id, .. } => CompileError::MissingEvents { session_id, range },
                other => other,
            })?;
            for event in page {
                let before = lines.len();
                push_escaped_transcript_line(&mut lines, &mut self.scratch, &event);
                bytes += (lines.len() - before) as u64;
                if bytes > room {
                    lines.clear();
                }
            }
            if to == range.to {
                break;
            }
            from = to.next();
        }
        let measured = Measured { range, bytes };
        Ok(if bytes <= room { Ok(Loaded { measured, lines }) } else { Err(measured) })
    }

    /// Loads each of `parts` (sorted citations of one merged range) that
    /// fits, without the seqs an earlier part loaded, so no event is loaded
    /// twice and the excerpts stay sorted and apart.
    fn load_parts(
        &mut self,
        parts: &[SeqRange],
        budget: u64,
        selection: &mut Selection,
    ) -> Result<(), CompileError<T::Error>> {
        let mut loaded_to: Option<Seq> = None;
        for part in parts {
            let from = loaded_to.map_or(part.from, |to| part.from.max(to.next()));
            let Some(range) = SeqRange::new(from, part.to) else { continue };
            match self.load(range, budget - selection.used_bytes)? {
                Ok(loaded) => {
                    loaded_to = Some(range.to);
                    selection.include(loaded);
                }
                Err(measured) => selection.omitted_excerpts.push(measured),
            }
        }
        Ok(())
    }

    /// Walks back from just before `initiating`, loading whole exchanges
    /// newest first until one does not fit or the thread's start is reached.
    fn walk_exchanges(
        &mut self,
        initiating: Seq,
        budget: u64,
        selection: &mut Selection,
    ) -> Result<(), CompileError<T::Error>> {
        let Some(mut hi) = initiating.0.checked_sub(1).filter(|&s| s >= 1) else { return Ok(()) };
        let excerpts: Vec<SeqRange> = selection.excerpts.iter().map(|l| l.measured.range).collect();
        let already_loaded = |seq: Seq| {
            let i = excerpts.partition_point(|r| r.to < seq);
            excerpts.get(i).is_some_and(|r| r.contains(seq))
        };
        let mut newest_first = Vec::new();
        // Turns a `/rewind` took back are not part of the conversation the
        // successor continues, and the rewinds themselves are no exchange.
        let mut rewinds = RewindMask::default();
        // The exchange being read, newest line first.
        let mut exchange_to = hi;
        let mut lines: Vec<String> = Vec::new();
        let mut bytes = 0;
        'pages: loop {
            let lo = hi.saturating_sub(READ_PAGE_EVENTS - 1).max(1);
            for event in self.read(SeqRange { from: Seq(lo), to: Seq(hi) })?.iter().rev() {
                if !rewinds.visit(event) || matches!(event.body, EventBody::ContextRewound(_)) {
                    continue;
                }
                let room = budget - selection.used_bytes;
                if !already_loaded(event.seq) {
                    let mut line = String::new();
                    push_escaped_transcript_line(&mut line, &mut self.scratch, event);
                    bytes += line.len() as u64;
                    if bytes <= room {
                        lines.push(line);
                    } else {
                        lines.clear();
                    }
                }
                let starts_exchange =
                    event.seq.0 == 1 || event.body.as_message().is_some_and(|m| m.is_from_user_or_trigger());
                if !starts_exchange {
                    continue;
                }
                let measured = Measured { range: SeqRange { from: event.seq, to: Seq(exchange_to) }, bytes };
                if bytes > room {
                    selection.omitted_exchange = Some(measured);
                    break 'pages;
                }
                selection.used_bytes += bytes;
                lines.reverse();
                // An exchange wholly inside an excerpt is carried already:
                // it is no recent exchange of its own (a 0-byte part).
                if !lines.is_empty() {
                    newest_first.push(Loaded { measured, lines: lines.concat() });
                }
                lines.clear();
                bytes = 0;
                exchange_to = event.seq.0 - 1;
            }
            if lo == 1 {
                break;
            }
            hi = lo - 1;
        }
        newest_first.reverse();
        selection.exchanges = newest_first;
        Ok(())
    }
}
