//! The working context: what the model sees of a session, as messages.
//!
//! Without a compaction it is every event of the session. After one, it is
//! the newest `context_compacted` event's recap, rendered as one user
//! message in a `<compaction_recap>` frame, followed by the events from that
//! event's `keptFromSeq` on. Events a later `context_rewound` took back
//! (see [`super::rewind`]) are left out, recaps among them. Events map to
//! messages the way the run loop sends them:
//!
//! - a user-role `message` (a person, a trigger, or the runtime) is one
//!   [`ContextBody::User`];
//! - consecutive `thinking`, assistant `message` and `tool_call` events are
//!   one [`ContextBody::Assistant`] turn; a `thinking` or an assistant
//!   `message` that follows text or calls starts the next turn;
//! - a `tool_result` is one [`ContextBody::ToolResult`];
//! - status, plan, permission-denial, compaction, rewind and unknown events are not
//!   part of the conversation and belong to no message.
//!
//! Each message knows its seq range and its size in characters (the
//! estimate's unit), counted once here so that the estimate and the cut
//! planner never serialise a tool call's arguments again. The same pass
//! gathers the planner's facts ([`CutIndex`]): where a cut may fall and
//! which files the calls touched.

use std::fmt::Write as _;

use seri_core::tokens::{model_visible_chars, tokens_from_chars};
use seri_core::{
    ContextCompacted, ContextEstimate, Event, EventBody, ModelRef, Role, Seq, Thinking, ToolCall, ToolCallId,
    ToolResult, Usage,
};

use super::cut::CutIndex;
use super::error::{ReadContextError, WorkingContextError};
use super::rewind::{RewindMask, rewind_visibility};
use crate::framing::{escape_action_framing, is_frame_name};
use crate::thread::{SeqRange, ThreadEvents};

/// The frame a recap is rendered in.
pub const RECAP_FRAME: &str = "compaction_recap";

/// How many events [`read_working_context`] asks the thread for at a time
/// while it walks back to the newest recap. Larger than the continuation
/// compiler's page because everything it reads (but the part of one page
/// before `keptFromSeq`) is part of the working context anyway.
pub const WORKING_CONTEXT_PAGE_EVENTS: u64 = 256;

/// One message of the working context.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextMessage {
    /// The seqs of the events it was built from (non-conversation events in
    /// between included).
    pub seqs: SeqRange,
    /// Characters the model reads: text, thinking, and tool arguments and
    /// results as JSON, as [`model_visible_chars`] counts them.
    pub chars: u64,
    /// What the message says.
    pub body: ContextBody,
}

/// What a [`ContextMessage`] says, in a provider-neutral shape.
#[derive(Debug, Clone, PartialEq)]
pub enum ContextBody {
    /// A user-role message: a person's, a trigger's, or the runtime's own.
    User {
        /// The text sent to the model: the content, then a reference line
        /// per attachment ([`message_text`](crate::transcript::message_text)).
        text: String,
        /// The attachments that are pictures, sent as images to providers
        /// that accept them (their bytes are the caller's to load).
        images: Vec<seri_core::Attachment>,
    },
    /// A turn the model wrote.
    Assistant(AssistantTurn),
    /// The answer to one tool call.
    ToolResult(ToolResult),
}

/// What the model wrote in one turn, in the order providers expect it back.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AssistantTurn {
    /// Reasoning blocks, with their signatures.
    pub thinking: Vec<Thinking>,
    /// The visible answer.
    pub text: String,
    /// The tools it asked to run.
    pub tool_calls: Vec<ToolCall>,
}

/// The newest recap of a working context.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextRecap {
    /// The seq of the `context_compacted` event.
    pub seq: Seq,
    /// The event's payload.
    pub compacted: ContextCompacted,
    /// The recap as the model reads it: one user message (see
    /// [`render_recap_message`]).
    pub message: String,
}

/// The newest billed prompt size after the newest recap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BilledPrompt {
    /// The assistant message that carried it.
    pub seq: Seq,
    /// What the request that produced it cost.
    pub usage: Usage,
    /// The model that billed it, when the run loop recorded one.
    pub model: Option<ModelRef>,
}

/// A session's working context: an optional recap, then messages.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkingContext {
    start: Seq,
    last_seq: Option<Seq>,
    recap: Option<ContextRecap>,
    messages: Vec<ContextMessage>,
    message_chars: u64,
    billed: Option<BilledPrompt>,
    cuts: CutIndex,
}

impl WorkingContext {
    /// Builds the working context from a session's events in seq order.
    ///
    /// The events must hold the newest `context_compacted` event and every
    /// event from its `keptFromSeq` on ([`read_working_context`] reads
    /// exactly those); older events may be present and are skipped. Fails
    /// when the events start after the `keptFromSeq` they need.
    pub fn from_events(events: &[Event]) -> Result<WorkingContext, WorkingContextError> {
        // Events a later `context_rewound` took back are not part of the
        // conversation, and neither is a recap among them.
        let visible = rewind_visibility(events);
        let recap_at =
            (0..events.len()).rev().find(|&i| visible[i] && matches!(events[i].body, EventBody::ContextCompacted(_)));
        let recap = recap_at.and_then(|i| match &events[i].body {
            EventBody::ContextCompacted(c) => {
                Some(ContextRecap { seq: events[i].seq, compacted: c.clone(), message: render_recap_message(c) })
            }
            _ => None,
        });
        let first_loaded = events.first().map_or(Seq::FIRST, |e| e.seq);
        let start = match &recap {
            Some(r) if r.compacted.kept_from_seq < first_loaded => {
                return Err(WorkingContextError::MissingKeptEvents {
                    kept_from_seq: r.compacted.kept_from_seq,
                    first_loaded,
                });
            }
            Some(r) => r.compacted.kept_from_seq,
            None => first_loaded,
        };
        let recap_seq = recap.as_ref().map(|r| r.seq);
        let from = events.partition_point(|e| e.seq < start);
        let mut builder = Builder::default();
        for (event, _) in events[from..].iter().zip(&visible[from..]).filter(|(_, shown)| **shown) {
            builder.push(event, recap_seq);
        }
        let (messages, billed, cuts) = builder.finish();
        let message_chars = messages.iter().map(|m| m.chars).sum();
        let last_seq = events.last().map(|e| e.seq);
        Ok(WorkingContext { start, last_seq, recap, messages, message_chars, billed, cuts })
    }

    /// The first seq of the working context: the newest recap's
    /// `keptFromSeq`, or the first event's seq without a recap.
    pub fn start(&self) -> Seq {
        self.start
    }

    /// The newest seq the context was built from, if any.
    pub fn last_seq(&self) -> Option<Seq> {
        self.last_seq
    }

    /// The newest recap, if the session was ever compacted.
    pub fn recap(&self) -> Option<&ContextRecap> {
        self.recap.as_ref()
    }

    /// The recap and the messages, taken out: what a request is built from
    /// without copying a long transcript's text once more.
    pub fn into_parts(self) -> (Option<ContextRecap>, Vec<ContextMessage>) {
        (self.recap, self.messages)
    }

    /// The messages after the recap, oldest first.
    pub fn messages(&self) -> &[ContextMessage] {
        &self.messages
    }

    /// Characters of the messages, the recap not included.
    pub fn message_chars(&self) -> u64 {
        self.message_chars
    }

    /// Characters of the whole context: the recap message and the messages.
    pub fn chars(&self) -> u64 {
        self.recap_chars() + self.message_chars
    }

    fn recap_chars(&self) -> u64 {
        self.recap.as_ref().map_or(0, |r| r.message.chars().count() as u64)
    }

    /// The oldest tool call that has no result yet, if any: a compaction
    /// keeps its turn (see [`CompactionPlan::pending_call`](super::CompactionPlan::pending_call)).
    pub fn pending_call(&self) -> Option<&ToolCallId> {
        self.cuts.pending_call()
    }

    pub(crate) fn cuts(&self) -> &CutIndex {
        &self.cuts
    }

    /// The newest billed prompt after the newest recap, whichever model
    /// billed it. [`WorkingContext::estimate`] uses it only for the current model.
    pub fn billed(&self) -> Option<&BilledPrompt> {
        self.billed.as_ref()
    }

    /// The context estimate for a request to `model`: `max(billed, local)`.
    ///
    /// The billed half is the newest assistant message's prompt size
    /// (`input + cacheRead + cacheWrite`), and only when that message came
    /// after the newest recap and was billed by `model` itself. A figure from
    /// before the recap measured the context the recap replaced, and one from
    /// another model measured another tokenizer (or another system prompt);
    /// either would overstate the context and trigger a compaction that
    /// frees nothing. A message with no recorded model is treated as another
    /// model's. The local half is `ceil(characters / 4)` over the recap and
    /// every message.
    pub fn estimate(&self, model: &ModelRef) -> ContextEstimate {
        let billed = self.billed.as_ref().filter(|b| b.model.as_ref() == Some(model)).map(|b| b.usage.prompt_tokens());
        ContextEstimate { billed, local: tokens_from_chars(self.chars()) }
    }
}

/// The recap of a `context_compacted` event as the one user message that
/// opens the working context:
///
/// ```text
/// <compaction_recap from="1" to="40">
/// Seq 1 to 40 of this conversation were compacted into this recap; the messages after it follow on from them.
///
/// ## Goal
/// …
/// Read: src/lexer.rs
/// Modified: src/parser.rs
/// </compaction_recap>
/// ```
///
/// Everything inside the frame was written by a model or taken from tool
/// calls, so it goes through [`escape_action_framing`]: a recap that quotes
/// `</compaction_recap>` cannot close its own frame.
pub fn render_recap_message(compacted: &ContextCompacted) -> String {
    debug_assert!(is_frame_name(RECAP_FRAME));
    let to = Seq(compacted.kept_from_seq.get().saturating_sub(1));
    let mut out = String::new();
    let _ = writeln!(out, "<{RECAP_FRAME} from=\"{}\" to=\"{to}\">", Seq::FIRST);
    let _ = writeln!(
        out,
        "Seq {} to {to} of this conversation were compacted into this recap; the messages after it follow on from them.\n",
        Seq::FIRST
    );
    out.push_str(&escape_action_framing(&compacted.recap_text()));
    let _ = write!(out, "\n</{RECAP_FRAME}>");
    out
}

/// The seq range of the working context within `events` (a session's
/// events in seq order, or any suffix of them that holds the newest
/// recap): from the newest recap's `keptFromSeq`, or the first event, to the
/// last event. `None` for no events.
///
/// A caller that holds the events already uses it to load or keep only
/// those; one that does not uses [`read_working_context`].
pub fn working_context_range(events: &[Event]) -> Option<SeqRange> {
    let last = events.last()?.seq;
    let mut mask = RewindMask::default();
    let from = events
        .iter()
        .rev()
        .find_map(|e| {
            let shown = mask.visit(e);
            match &e.body {
                EventBody::ContextCompacted(c) if shown => Some(c.kept_from_seq),
                _ => None,
            }
        })
        .unwrap_or(events[0].seq);
    SeqRange::new(from.min(last), last)
}

/// Reads the events of a session's working context, whose newest event is
/// `last_seq`, in seq order: the events from the newest recap's
/// `keptFromSeq` (or seq 1) to `last_seq`, that recap included.
///
/// It walks back from `last_seq` in pages, the first of
/// [`WORKING_CONTEXT_PAGE_EVENTS`] and each one twice the one before, until
/// it meets a `context_compacted` event, then reads what is left of the
/// kept part in one range. So it reads the working context and at most as
/// much again before it (and the first page), never the session's whole
/// history, in a number of reads that grows with the log of its length.
pub fn read_working_context<T: ThreadEvents + ?Sized>(
    thread: &T,
    last_seq: Seq,
) -> Result<Vec<Event>, ReadContextError<T::Error>> {
    // Pages newest first; reversed into seq order at the end.
    let mut pages: Vec<Vec<Event>> = Vec::new();
    let mut oldest_loaded = last_seq.get() + 1;
    let mut kept_from = Seq::FIRST;
    // A recap that a later rewind took back does not count: the walk goes on
    // to the one before it.
    let mut mask = RewindMask::default();
    // Pages double in size: a long uncompacted history (the continue
    // strategy's) takes a few reads, not one per page, and the walk past
    // the recap's page stays within what was read before it.
    let mut page_len = WORKING_CONTEXT_PAGE_EVENTS;
    while oldest_loaded > 1 {
        let hi = oldest_loaded - 1;
        let lo = hi.saturating_sub(page_len - 1).max(1);
        page_len = page_len.saturating_mul(2);
        let page = read_range(thread, SeqRange { from: Seq(lo), to: Seq(hi) })?;
        let newest_recap = page.iter().rev().find_map(|e| {
            let shown = mask.visit(e);
            match &e.body {
                EventBody::ContextCompacted(c) if shown => Some(c.kept_from_seq),
                _ => None,
            }
        });
        pages.push(page);
        oldest_loaded = lo;
        if let Some(from) = newest_recap {
            kept_from = from;
            break;
        }
    }
    if kept_from.get() < oldest_loaded {
        // The kept part reaches back past the page that held the recap.
        let range = SeqRange { from: kept_from, to: Seq(oldest_loaded - 1) };
        pages.push(read_range(thread, range)?);
    }
    let mut events: Vec<Event> = pages.into_iter().rev().flatten().collect();
    events.retain(|e| e.seq >= kept_from);
    Ok(events)
}

fn read_range<T: ThreadEvents + ?Sized>(thread: &T, range: SeqRange) -> Result<Vec<Event>, ReadContextError<T::Error>> {
    let events = thread.events(range).map_err(|source| ReadContextError::Read { range, source })?;
    let complete = events.len() as u64 == range.count()
        && events.iter().zip(range.from.get()..).all(|(e, seq)| e.seq.get() == seq);
    if complete { Ok(events) } else { Err(ReadContextError::MissingEvents { range }) }
}

/// Groups events into messages (see the module doc), and gathers the
/// planner's [`CutIndex`] in the same pass.
#[derive(Default)]
struct Builder {
    messages: Vec<ContextMessage>,
    /// The turn being built: its seqs, its characters, whether a cut may
    /// fall before it, and what it says.
    turn: Option<(SeqRange, u64, bool, AssistantTurn)>,
    billed: Option<BilledPrompt>,
    cuts: CutIndex,
}

impl Builder {
    fn push(&mut self, event: &Event, recap_seq: Option<Seq>) {
        let chars = model_visible_chars(&event.body);
        match &event.body {
            EventBody::Thinking(thinking) => {
                self.flush_if_answered();
                self.turn_at(event.seq, chars).thinking.push(thinking.clone());
            }
            EventBody::Message(m) if m.role == Role::Assistant => {
                self.flush_if_answered();
                self.turn_at(event.seq, chars).text = m.content.clone();
                if let Some(usage) = m.meta.usage
                    && recap_seq.is_none_or(|recap| event.seq > recap)
                {
                    self.billed = Some(BilledPrompt { seq: event.seq, usage, model: m.meta.model.clone() });
                }
            }
            EventBody::ToolCall(call) => {
                self.turn_at(event.seq, chars).tool_calls.push(call.clone());
                // The turn is the next message to be pushed.
                self.cuts.call(self.messages.len(), call);
            }
            EventBody::Message(m) => {
                self.flush();
                let safe = self.cuts.turn_start_is_safe(self.messages.len());
                let text = crate::transcript::message_text(m).into_owned();
                let images = m.attachments.iter().filter(|a| a.is_image()).cloned().collect();
                self.push_message(event.seq, chars, safe, ContextBody::User { text, images });
            }
            EventBody::ToolResult(result) => {
                self.flush();
                self.cuts.result(result);
                self.push_message(event.seq, chars, false, ContextBody::ToolResult(result.clone()));
            }
            EventBody::StatusChanged(_)
            | EventBody::PlanUpdated(_)
            | EventBody::PermissionDenied(_)
            | EventBody::ContextCompacted(_)
            | EventBody::ContextRewound(_)
            | EventBody::ModelChanged(_)
            | EventBody::Unknown { .. } => {}
        }
    }

    /// The open turn, extended to `seq` and `chars`, or a new one.
    fn turn_at(&mut self, seq: Seq, chars: u64) -> &mut AssistantTurn {
        let safe = self.cuts.turn_start_is_safe(self.messages.len());
        let (range, total, _, turn) =
            self.turn.get_or_insert_with(|| (SeqRange::single(seq), 0, safe, AssistantTurn::default()));
        range.to = seq;
        *total += chars;
        turn
    }

    /// Thinking and text open a turn; after text or calls they open the next.
    fn flush_if_answered(&mut self) {
        if self.turn.as_ref().is_some_and(|(_, _, _, t)| !t.text.is_empty() || !t.tool_calls.is_empty()) {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if let Some((seqs, chars, safe, turn)) = self.turn.take() {
            self.messages.push(ContextMessage { seqs, chars, body: ContextBody::Assistant(turn) });
            self.cuts.message(chars, safe);
        }
    }

    fn push_message(&mut self, seq: Seq, chars: u64, safe: bool, body: ContextBody) {
        self.messages.push(ContextMessage { seqs: SeqRange::single(seq), chars, body });
        self.cuts.message(chars, safe);
    }

    fn finish(mut self) -> (Vec<ContextMessage>, Option<BilledPrompt>, CutIndex) {
        self.flush();
        (self.messages, self.billed, self.cuts)
    }
}
