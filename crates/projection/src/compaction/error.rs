//! Why a compaction step refused its input.

use seri_core::{RecapField, Seq};

use crate::thread::SeqRange;

/// Why [`WorkingContext::from_events`](super::WorkingContext::from_events)
/// refused its events.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorkingContextError {
    /// The newest recap keeps events from a seq the caller did not load.
    #[error(
        "the working context starts at seq {kept_from_seq} (the newest recap's keptFromSeq), \
         but the events given start at seq {first_loaded}: load from seq {kept_from_seq} on"
    )]
    MissingKeptEvents {
        /// Where the kept part starts.
        kept_from_seq: Seq,
        /// The first seq given.
        first_loaded: Seq,
    },
}

/// Why [`read_working_context`](super::read_working_context) failed. `E` is
/// the thread reader's error.
#[derive(Debug, thiserror::Error)]
pub enum ReadContextError<E> {
    /// The thread did not return every event of a range it was asked for.
    #[error(
        "the thread does not hold every event of {range}: the range runs past its end or the reader skipped events"
    )]
    MissingEvents {
        /// The range asked for.
        range: SeqRange,
    },
    /// The thread reader failed.
    #[error("reading {range} of the thread failed")]
    Read {
        /// The range asked for.
        range: SeqRange,
        /// What the reader said.
        #[source]
        source: E,
    },
}

/// Why [`SummarizerInput::new`](super::SummarizerInput::new) refused the
/// events it was given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SummarizerInputError {
    /// The events do not cover the plan's evicted range.
    #[error("the events given do not hold every event of {evicted}, the range the plan evicts")]
    MissingEvictedEvents {
        /// The plan's evicted range.
        evicted: SeqRange,
    },
}

/// Why [`SummarizerInput::trim_to_fit`](super::SummarizerInput::trim_to_fit)
/// could not make the summarizer's input fit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TrimError {
    /// Even with every evicted event left out, the previous recap and the
    /// focus words exceed the budget.
    #[error(
        "the summarizer's input needs {tokens} tokens even with every evicted event left out \
         (the previous recap and the focus words), more than the budget of {budget}"
    )]
    DoesNotFit {
        /// The budget asked for.
        budget: u64,
        /// The estimate after trimming everything that can be trimmed.
        tokens: u64,
    },
}

/// Why the summarizer's answer is not a recap.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", missing_message(.missing))]
pub struct RecapParseError {
    /// The fields whose `## Heading` the answer lacks, in recap order.
    pub missing: Vec<RecapField>,
}

fn missing_message(missing: &[RecapField]) -> String {
    let names: Vec<String> = missing.iter().map(|f| format!("`## {}`", f.heading())).collect();
    let all: Vec<String> = RecapField::ALL.iter().map(|f| format!("## {}", f.heading())).collect();
    format!(
        "the summarizer's answer has no {} section; a recap needs all four sections: {}",
        names.join(", "),
        all.join(", ")
    )
}
