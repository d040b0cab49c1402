//! Why a continuation projection could not be compiled.

use seri_core::{Seq, SessionId};

use super::citations::CitationError;
use crate::thread::SeqRange;

/// Why [`compile_continuation_projection`](super::compile_continuation_projection)
/// refused its input or could not read the thread. `E` is the thread
/// reader's error.
#[derive(Debug, thiserror::Error)]
pub enum CompileError<E> {
    /// A cited source is malformed.
    #[error(transparent)]
    Citation(#[from] CitationError),
    /// The initiating seq was 0.
    #[error("the initiating message's seq is 0: seqs start at 1")]
    InitiatingSeqZero,
    /// The lineage's depth was 0.
    #[error("the continuation's depth is 0: the first successor of a chain has depth 1")]
    DepthZero,
    /// The initiating seq names an event that no person or trigger wrote.
    #[error(
        "the event at seq {seq} of thread {session_id} is not a message from a user or a trigger, \
         so it cannot be the initiating message"
    )]
    NotInitiatingMessage {
        /// The predecessor.
        session_id: SessionId,
        /// The initiating seq given.
        seq: Seq,
    },
    /// The thread did not return every event of a range it was asked for.
    #[error(
        "thread {session_id} does not hold every event of {range}: the range runs past the thread's end \
         or the reader skipped events"
    )]
    MissingEvents {
        /// The predecessor.
        session_id: SessionId,
        /// The range asked for.
        range: SeqRange,
    },
    /// The thread reader failed.
    #[error("reading {range} of thread {session_id} failed")]
    Read {
        /// The predecessor.
        session_id: SessionId,
        /// The range asked for.
        range: SeqRange,
        /// What the reader said.
        #[source]
        source: E,
    },
}
