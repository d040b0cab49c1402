//! The summarizer's input: the evicted events as transcript lines, with
//! oversized payloads elided, the recap being updated and the focus words;
//! and the trimming that makes it fit a budget.
//!
//! The lines are [`escaped_transcript_line`]s, the same `[seq] who: text`
//! lines `seri thread` prints, so the summarizer can quote seqs that mean
//! the same everywhere. Earlier `context_compacted` events are left out:
//! their recap is given whole, as the one being updated. So are events a
//! later `/rewind` took out of the conversation, and the rewinds themselves.
//!
//! # Trimming
//!
//! The summarizer's request must fit the window like any other.
//! [`SummarizerInput::trim_to_fit`] makes it fit a token budget in at most
//! [`MAX_SUMMARY_TRIM_ATTEMPTS`] steps, each walking the events oldest
//! first and stopping as soon as the input fits:
//!
//! 1. tool results are shortened to the elided marker, whatever their size;
//! 2. tool call arguments and thinking are shortened the same way (a call
//!    keeps its short scalar arguments);
//! 3. whole events are left out.
//!
//! What was trimmed is reported ([`TrimReport`]) and the events left out are
//! named to the summarizer. Trimming shapes this one request: every trimmed
//! event stays in the store.

use seri_core::tokens::tokens_from_chars;
use seri_core::{CompactionRecap, Event, EventBody, Seq, Thinking};

use super::elide::{ELIDE_PAYLOAD_BYTES, elide_call, elide_payload, elide_result, elided_marker};
use super::error::{SummarizerInputError, TrimError};
use super::plan::CompactionPlan;
use super::rewind::rewind_visibility;
use crate::thread::SeqRange;
use crate::transcript::escaped_transcript_line;

/// The most trimming steps [`SummarizerInput::trim_to_fit`] takes (see the
/// module doc); after the last one the input fits or cannot.
pub const MAX_SUMMARY_TRIM_ATTEMPTS: u32 = 3;

/// One evicted event as the summarizer reads it.
#[derive(Debug, Clone, PartialEq)]
struct Item {
    event: Event,
    line: String,
    chars: u64,
    /// Whether its payload or thinking is already the elided marker.
    elided: bool,
}

impl Item {
    fn new(event: Event, elided: bool) -> Self {
        let line = escaped_transcript_line(&event);
        // Each line is followed by a newline in the transcript.
        let chars = line.chars().count() as u64 + 1;
        Item { event, line, chars, elided }
    }
}

/// What [`SummarizerInput::trim_to_fit`] did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TrimReport {
    /// Trimming steps taken, over every call to `trim_to_fit` (at most
    /// [`MAX_SUMMARY_TRIM_ATTEMPTS`] a call; 0 when the input always fit).
    pub attempts: u32,
    /// Events whose payload or thinking was shortened to the elided marker,
    /// oldest first.
    pub shortened: Vec<Seq>,
    /// The oldest evicted events, left out of the request altogether.
    pub dropped: Option<SeqRange>,
}

impl TrimReport {
    /// Whether nothing was trimmed.
    pub fn is_empty(&self) -> bool {
        self.shortened.is_empty() && self.dropped.is_none()
    }
}

/// What the summarizer is asked to recap.
#[derive(Debug, Clone, PartialEq)]
pub struct SummarizerInput {
    evicted: SeqRange,
    previous_recap: Option<CompactionRecap>,
    focus: Option<String>,
    items: Vec<Item>,
    /// Items before this index were left out by trimming.
    first_kept: usize,
    fixed_chars: u64,
    item_chars: u64,
    report: TrimReport,
}

impl SummarizerInput {
    /// The input for `plan`, from `events` (the working context's events in
    /// seq order, as the context was built from). Payloads over
    /// [`ELIDE_PAYLOAD_BYTES`] are elided.
    ///
    /// Fails when `events` do not hold every event of the plan's evicted range.
    pub fn new(plan: &CompactionPlan, events: &[Event]) -> Result<SummarizerInput, SummarizerInputError> {
        let evicted = plan.evicted;
        let from = events.partition_point(|e| e.seq < evicted.from);
        let to = events.partition_point(|e| e.seq <= evicted.to);
        let in_range = &events[from..to];
        let complete = in_range.len() as u64 == evicted.count()
            && in_range.iter().zip(evicted.from.get()..).all(|(e, seq)| e.seq.get() == seq);
        if !complete {
            return Err(SummarizerInputError::MissingEvictedEvents { evicted });
        }
        // Events a later rewind took back are not part of the conversation
        // the recap summarises.
        let visible = rewind_visibility(events);
        let items: Vec<Item> = in_range
            .iter()
            .zip(&visible[from..to])
            .filter(|(e, shown)| {
                **shown && !matches!(e.body, EventBody::ContextCompacted(_) | EventBody::ContextRewound(_))
            })
            .map(|(e, _)| e)
            .map(|e| match elide_payload(&e.body, ELIDE_PAYLOAD_BYTES) {
                Some(body) => Item::new(Event { body, ..e.clone() }, true),
                None => Item::new(e.clone(), false),
            })
            .collect();
        let previous_recap = plan.previous_recap.clone();
        let focus = plan.focus.clone();
        let fixed_chars = previous_recap.as_ref().map_or(0, |r| r.to_markdown().chars().count() as u64)
            + focus.as_ref().map_or(0, |f| f.chars().count() as u64);
        let item_chars = items.iter().map(|i| i.chars).sum();
        Ok(SummarizerInput {
            evicted,
            previous_recap,
            focus,
            items,
            first_kept: 0,
            fixed_chars,
            item_chars,
            report: TrimReport::default(),
        })
    }

    /// The seqs the recap replaces.
    pub fn evicted(&self) -> SeqRange {
        self.evicted
    }

    /// The recap being updated, if any.
    pub fn previous_recap(&self) -> Option<&CompactionRecap> {
        self.previous_recap.as_ref()
    }

    /// The focus words given with `/compact`, if any.
    pub fn focus(&self) -> Option<&str> {
        self.focus.as_deref()
    }

    /// The evicted events as escaped transcript lines, each followed by a
    /// newline; the events trimming left out are not among them.
    pub fn transcript(&self) -> String {
        let mut out = String::with_capacity(self.item_chars as usize);
        for item in &self.items[self.first_kept..] {
            out.push_str(&item.line);
            out.push('\n');
        }
        out
    }

    /// The seqs of the events in [`SummarizerInput::transcript`].
    pub fn transcript_seqs(&self) -> Option<SeqRange> {
        let kept = &self.items[self.first_kept..];
        Some(SeqRange { from: kept.first()?.event.seq, to: kept.last()?.event.seq })
    }

    /// What trimming did so far.
    pub fn trimmed(&self) -> &TrimReport {
        &self.report
    }

    /// The local estimate of the input: `ceil(characters / 4)` over the
    /// transcript, the previous recap and the focus words. The caller adds
    /// the summarizer's instructions and the frames around these parts.
    pub fn tokens(&self) -> u64 {
        tokens_from_chars(self.fixed_chars + self.item_chars)
    }

    /// Trims the input until [`SummarizerInput::tokens`] is at most
    /// `budget` (see the module doc for the steps), and reports what it
    /// trimmed in total.
    ///
    /// The budget is what the window leaves for this input: the window, less
    /// the instructions, the frames and the room reserved for the answer.
    /// Calling it again with a smaller budget (after the provider refused
    /// the summarizer's request as too long) trims further. Fails when even
    /// an input with no event at all does not fit.
    pub fn trim_to_fit(&mut self, budget: u64) -> Result<&TrimReport, TrimError> {
        let steps: [fn(&mut Item) -> bool; 2] = [shorten_result, shorten_call_or_thinking];
        let mut attempts = 0;
        for step in steps {
            if self.fits(budget) {
                break;
            }
            attempts += 1;
            self.shorten_until_fits(budget, step);
        }
        if !self.fits(budget) {
            attempts += 1;
            self.drop_until_fits(budget);
        }
        debug_assert!(attempts <= MAX_SUMMARY_TRIM_ATTEMPTS);
        self.report.attempts += attempts;
        self.report.shortened.sort_unstable();
        self.report.shortened.dedup();
        if self.fits(budget) { Ok(&self.report) } else { Err(TrimError::DoesNotFit { budget, tokens: self.tokens() }) }
    }

    fn fits(&self, budget: u64) -> bool {
        self.tokens() <= budget
    }

    fn shorten_until_fits(&mut self, budget: u64, step: fn(&mut Item) -> bool) {
        for i in self.first_kept..self.items.len() {
            if self.fits(budget) {
                return;
            }
            let item = &mut self.items[i];
            let before = item.chars;
            if !item.elided && step(item) {
                self.item_chars = self.item_chars - before + item.chars;
                self.report.shortened.push(item.event.seq);
            }
        }
    }

    fn drop_until_fits(&mut self, budget: u64) {
        while self.first_kept < self.items.len() && !self.fits(budget) {
            self.item_chars -= self.items[self.first_kept].chars;
            self.first_kept += 1;
        }
        if self.first_kept > 0 {
            let to = self.items[self.first_kept - 1].event.seq;
            self.report.dropped = Some(SeqRange { from: self.evicted.from, to });
            self.report.shortened.retain(|&seq| seq > to);
        }
    }
}

/// Step 1: a tool result becomes the elided marker.
fn shorten_result(item: &mut Item) -> bool {
    let EventBody::ToolResult(result) = &item.event.body else { return false };
    let Some(short) = elide_result(result, 0) else { return false };
    replace(item, EventBody::ToolResult(short))
}

/// Step 2: a tool call's arguments, or a thinking's text, become the marker.
fn shorten_call_or_thinking(item: &mut Item) -> bool {
    let body = match &item.event.body {
        EventBody::ToolCall(call) => match elide_call(call, 0) {
            Some(short) => EventBody::ToolCall(short),
            None => return false,
        },
        EventBody::Thinking(thinking) if !thinking.text.is_empty() => {
            let text = elided_marker(thinking.text.len()).to_string();
            EventBody::Thinking(Thinking { text, signature: None, encrypted_content: None })
        }
        _ => return false,
    };
    replace(item, body)
}

/// Replaces the item's body when that makes it shorter.
fn replace(item: &mut Item, body: EventBody) -> bool {
    let shorter = Item::new(Event { body, ..item.event.clone() }, true);
    if shorter.chars >= item.chars {
        return false;
    }
    *item = shorter;
    true
}
