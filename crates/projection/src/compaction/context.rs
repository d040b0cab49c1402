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

use seri_core::tokens::{BilledChars, CharsPerToken, model_visible_chars};
use seri_core::{
    ContextCompacted, ContextEstimate, Event, EventBody, MessageMeta, ModelRef, Role, Seq, Thinking, ToolCall,
    ToolCallId, ToolResult, Usage,
};

use super::cut::CutIndex;
use super::error::{ReadContextError, WorkingContextError};
use super::rewind::RewindMask;
use crate::framing::{escape_action_framing, is_frame_name};
use crate::thread::{SeqRange, ThreadEvents, is_context_mark};

/// The frame a recap is rendered in.
pub const RECAP_FRAME: &str = "compaction_recap";

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
    /// The person cancelled the turn while the answer was being written:
    /// `text` is what had arrived.
    pub interrupted: bool,
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
    ratios: Ratios,
    cuts: CutIndex,
}

/// What the context's billed requests teach about each model's tokenizer.
type Ratios = Vec<(ModelRef, BilledChars)>;

impl WorkingContext {
    /// Builds the working context from a session's events in seq order.
    ///
    /// The events must hold the newest `context_compacted` event and every
    /// event from its `keptFromSeq` on ([`read_working_context`] reads
    /// exactly those); older events may be present and are skipped. Fails
    /// when the events start after the `keptFromSeq` they need.
    pub fn from_events(events: &[Event]) -> Result<WorkingContext, WorkingContextError> {
        let marks = ContextMarks::walk(events.iter().rev().filter(|e| is_context_mark(e)));
        let first_loaded = events.first().map_or(Seq::FIRST, |e| e.seq);
        let start = match &marks.recap {
            Some((_, c)) if c.kept_from_seq < first_loaded => {
                return Err(WorkingContextError::MissingKeptEvents { kept_from_seq: c.kept_from_seq, first_loaded });
            }
            Some((_, c)) => c.kept_from_seq,
            None => first_loaded,
        };
        let from = events.partition_point(|e| e.seq < start);
        let mut assembly = Assembly::new(start, marks);
        for event in &events[from..] {
            assembly.push_borrowed(event);
        }
        assembly.last_seq = events.last().map(|e| e.seq);
        Ok(assembly.finish())
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
    /// model's. The local half is `ceil(characters / ratio)` over the recap and
    /// every message, at `model`'s learned ratio ([`WorkingContext::ratio`]).
    pub fn estimate(&self, model: &ModelRef) -> ContextEstimate {
        let billed = self.billed.as_ref().filter(|b| b.model.as_ref() == Some(model)).map(|b| b.usage.prompt_tokens());
        ContextEstimate { billed, local: self.ratio(model).tokens(self.chars()) }
    }

    /// The characters per token `model`'s bills in this context teach
    /// ([`seri_core::tokens::learned_ratio`] over the same messages): every
    /// assistant message `model` answered with its usage and its request's
    /// size. The default (4) until one did; after a compaction, until the
    /// first answer after it.
    pub fn ratio(&self, model: &ModelRef) -> CharsPerToken {
        self.ratios.iter().find(|(m, _)| m == model).map_or(CharsPerToken::DEFAULT, |(_, b)| b.ratio())
    }

    /// The ratio of the model that billed the newest answer, for an
    /// estimate made without knowing the next request's model.
    pub fn newest_ratio(&self) -> CharsPerToken {
        self.billed.as_ref().and_then(|b| b.model.as_ref()).map_or(CharsPerToken::DEFAULT, |m| self.ratio(m))
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
    let marks = ContextMarks::walk(events.iter().rev().filter(|e| is_context_mark(e)));
    let from = if marks.recap.is_some() { marks.kept_from } else { events[0].seq };
    SeqRange::new(from.min(last), last)
}

/// Reads the events of a session's working context, whose newest event is
/// `last_seq`, in seq order: the events from the newest recap's
/// `keptFromSeq` (or seq 1) to `last_seq`, that recap included.
///
/// It first finds the newest recap no rewind took back among the thread's
/// [context marks](ThreadEvents::context_marks), newest first and
/// [`CONTEXT_MARKS_PAGE`] at a time (a recap is almost always the newest
/// mark), then reads the working context in one range. So it reads the
/// working context and a few marks, never the history before it, however
/// long the session. [`load_working_context`] builds the context from the
/// same reads without holding the events.
pub fn read_working_context<T: ThreadEvents + ?Sized>(
    thread: &T,
    last_seq: Seq,
) -> Result<Vec<Event>, ReadContextError<T::Error>> {
    let marks = read_context_marks(thread, last_seq)?;
    if last_seq < marks.kept_from {
        return Ok(Vec::new());
    }
    read_range(thread, SeqRange { from: marks.kept_from, to: last_seq })
}

/// The working context of a thread whose newest event is `last_seq`, built
/// as its events are read: the same reads as [`read_working_context`], and
/// the same context as [`WorkingContext::from_events`] over what it reads,
/// but each event is taken apart as it arrives, so a long uncompacted
/// history (the continue strategy's) is never held twice, as events and as
/// messages.
pub fn load_working_context<T: ThreadEvents + ?Sized>(
    thread: &T,
    last_seq: Seq,
) -> Result<WorkingContext, ReadContextError<T::Error>> {
    let marks = read_context_marks(thread, last_seq)?;
    let start = marks.kept_from;
    let mut assembly = Assembly::new(start, marks);
    if last_seq < start {
        return Ok(assembly.finish());
    }
    let range = SeqRange { from: start, to: last_seq };
    // Each event makes at most one message: one allocation, not a copy of
    // the messages each time the vector doubles.
    assembly.builder.messages.reserve(usize::try_from(range.count()).unwrap_or(0));
    let mut next = start.get();
    let mut complete = true;
    thread
        .for_each_body(range, &mut |seq, body| {
            complete &= seq.get() == next;
            next = seq.get() + 1;
            if complete {
                assembly.push(seq, body);
            }
        })
        .map_err(|source| ReadContextError::Read { range, source })?;
    if !complete || next != last_seq.get() + 1 {
        return Err(ReadContextError::MissingEvents { range });
    }
    Ok(assembly.finish())
}

/// How many context marks [`read_working_context`] asks for at a time.
pub const CONTEXT_MARKS_PAGE: u64 = 8;

/// What the context marks say about a working context: where it starts,
/// its recap, and the rewinds inside it.
#[derive(Debug)]
struct ContextMarks {
    /// The newest recap's `keptFromSeq`, or seq 1.
    kept_from: Seq,
    /// The newest recap no rewind took back, and its seq.
    recap: Option<(Seq, ContextCompacted)>,
    /// The rewinds at or after `kept_from`, as (seq, `toSeq`), newest first.
    rewinds: Vec<(Seq, Seq)>,
    /// Whether the marks older than those visited cannot matter.
    done: bool,
    mask: RewindMask,
}

impl ContextMarks {
    fn new() -> Self {
        ContextMarks {
            kept_from: Seq::FIRST,
            recap: None,
            rewinds: Vec::new(),
            done: false,
            mask: RewindMask::default(),
        }
    }

    /// Visits marks newest first, until the ones left cannot matter.
    fn walk<'e>(marks: impl Iterator<Item = &'e Event>) -> Self {
        let mut found = ContextMarks::new();
        for mark in marks {
            found.visit(mark);
            if found.done {
                break;
            }
        }
        found
    }

    fn visit(&mut self, mark: &Event) {
        if self.recap.is_some() && mark.seq < self.kept_from {
            // Older than the working context: neither it nor anything
            // before it changes what the context shows.
            self.done = true;
            return;
        }
        // A recap that a later rewind took back does not count: the walk
        // goes on to the one before it. The mask needs only the rewinds,
        // and every rewind is a mark.
        let shown = self.mask.visit(mark);
        match &mark.body {
            EventBody::ContextRewound(rewind) => self.rewinds.push((mark.seq, rewind.to_seq)),
            EventBody::ContextCompacted(c) if shown && self.recap.is_none() => {
                self.kept_from = c.kept_from_seq;
                self.recap = Some((mark.seq, ContextCompacted::clone(c)));
            }
            _ => {}
        }
    }
}

/// Walks the thread's context marks back from `last_seq`, a page at a time.
fn read_context_marks<T: ThreadEvents + ?Sized>(
    thread: &T,
    last_seq: Seq,
) -> Result<ContextMarks, ReadContextError<T::Error>> {
    let mut marks = ContextMarks::new();
    let mut upto = last_seq;
    while upto.get() > 0 && !marks.done {
        let range = SeqRange { from: Seq::FIRST, to: upto };
        let page = thread
            .context_marks(upto, CONTEXT_MARKS_PAGE)
            .map_err(|source| ReadContextError::Read { range, source })?;
        for mark in page.iter().rev() {
            marks.visit(mark);
            if marks.done {
                break;
            }
        }
        match page.first() {
            Some(oldest) if page.len() as u64 == CONTEXT_MARKS_PAGE => upto = Seq(oldest.seq.get() - 1),
            _ => break,
        }
    }
    Ok(marks)
}

/// Which events, met oldest first, no later rewind took out: an event is
/// out when a rewind after it went back to before it (see [`super::rewind`]).
struct Rewinds {
    /// The rewinds' seqs, oldest first.
    at: Vec<Seq>,
    /// For each rewind, the smallest `toSeq` of it and every later one.
    back_to: Vec<Seq>,
    /// The first rewind after the events met so far.
    next: usize,
}

impl Rewinds {
    /// From rewinds given newest first, as (seq, `toSeq`).
    fn new(newest_first: &[(Seq, Seq)]) -> Self {
        let mut back_to = Vec::with_capacity(newest_first.len());
        let mut smallest: Option<Seq> = None;
        for &(_, to) in newest_first {
            let s = smallest.map_or(to, |s| s.min(to));
            smallest = Some(s);
            back_to.push(s);
        }
        back_to.reverse();
        let at = newest_first.iter().rev().map(|&(at, _)| at).collect();
        Rewinds { at, back_to, next: 0 }
    }

    /// Whether the event at `seq` is shown; seqs must be met in order.
    fn shows(&mut self, seq: Seq) -> bool {
        while self.at.get(self.next).is_some_and(|&at| at <= seq) {
            self.next += 1;
        }
        self.back_to.get(self.next).is_none_or(|&to| seq <= to)
    }
}

/// A working context being built from its events, oldest first.
struct Assembly {
    start: Seq,
    recap: Option<ContextRecap>,
    rewinds: Rewinds,
    builder: Builder,
    last_seq: Option<Seq>,
}

impl Assembly {
    fn new(start: Seq, marks: ContextMarks) -> Self {
        let recap = marks.recap.map(|(seq, compacted)| {
            let message = render_recap_message(&compacted);
            ContextRecap { seq, compacted, message }
        });
        Assembly { start, recap, rewinds: Rewinds::new(&marks.rewinds), builder: Builder::default(), last_seq: None }
    }

    fn push(&mut self, seq: Seq, body: EventBody) {
        self.last_seq = Some(seq);
        if self.rewinds.shows(seq) {
            self.builder.push(seq, body, self.recap.as_ref().map(|r| r.seq));
        }
    }

    /// [`Assembly::push`], copying only what the context keeps.
    fn push_borrowed(&mut self, event: &Event) {
        self.last_seq = Some(event.seq);
        if self.rewinds.shows(event.seq) && is_conversation(&event.body) {
            self.builder.push(event.seq, event.body.clone(), self.recap.as_ref().map(|r| r.seq));
        }
    }

    fn finish(self) -> WorkingContext {
        let (messages, billed, ratios, cuts) = self.builder.finish();
        let message_chars = messages.iter().map(|m| m.chars).sum();
        WorkingContext {
            start: self.start,
            last_seq: self.last_seq,
            recap: self.recap,
            messages,
            message_chars,
            billed,
            ratios,
            cuts,
        }
    }
}

/// Whether an event is part of the conversation (see the module doc).
fn is_conversation(body: &EventBody) -> bool {
    matches!(body, EventBody::Thinking(_) | EventBody::Message(_) | EventBody::ToolCall(_) | EventBody::ToolResult(_))
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
    ratios: Ratios,
    cuts: CutIndex,
}

impl Builder {
    fn push(&mut self, seq: Seq, body: EventBody, recap_seq: Option<Seq>) {
        let chars = model_visible_chars(&body);
        match body {
            EventBody::Thinking(thinking) => {
                self.flush_if_answered();
                self.turn_at(seq, chars).thinking.push(thinking);
            }
            EventBody::Message(m) if m.role == Role::Assistant => {
                self.flush_if_answered();
                if let Some(usage) = m.meta().usage
                    && recap_seq.is_none_or(|recap| seq > recap)
                {
                    self.billed = Some(BilledPrompt { seq, usage, model: m.meta().model.clone() });
                }
                self.learn(m.meta());
                let interrupted = m.meta().interrupted;
                let turn = self.turn_at(seq, chars);
                turn.text = m.content;
                turn.interrupted = interrupted;
            }
            EventBody::ToolCall(call) => {
                // Open the turn (or extend it) before the cut index hears
                // of the call: whether a cut may fall before a new turn
                // depends on the calls before it, not on this one.
                self.turn_at(seq, chars);
                // The turn is the next message to be pushed.
                self.cuts.call(self.messages.len(), &call);
                self.turn_at(seq, 0).tool_calls.push(call);
            }
            EventBody::Message(m) => {
                self.flush();
                let safe = self.cuts.turn_start_is_safe(self.messages.len());
                // The content itself, unless attachment lines were added.
                let with_lines = match crate::transcript::message_text(&m) {
                    std::borrow::Cow::Owned(text) => Some(text),
                    std::borrow::Cow::Borrowed(_) => None,
                };
                let text = with_lines.unwrap_or(m.content);
                let images = m.attachments.into_iter().filter(|a| a.is_image()).collect();
                self.push_message(seq, chars, safe, ContextBody::User { text, images });
            }
            EventBody::ToolResult(result) => {
                self.flush();
                self.cuts.result(&result);
                self.push_message(seq, chars, false, ContextBody::ToolResult(result));
            }
            EventBody::StatusChanged(_)
            | EventBody::PlanUpdated(_)
            | EventBody::PermissionDenied(_)
            | EventBody::ContextCompacted(_)
            | EventBody::ContextRewound(_)
            | EventBody::ModelChanged(_)
            | EventBody::PermissionModeChanged(_)
            | EventBody::SandboxChanged(_)
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

    /// Adds an answer's request size and bill to its model's ratio.
    fn learn(&mut self, meta: &MessageMeta) {
        let (Some(chars), Some(usage), Some(model)) = (meta.prompt_chars, meta.usage, meta.model.as_ref()) else {
            return;
        };
        match self.ratios.iter_mut().find(|(m, _)| m == model) {
            Some((_, billed)) => *billed = billed.with(chars, usage.prompt_tokens()),
            None => self.ratios.push((model.clone(), BilledChars::default().with(chars, usage.prompt_tokens()))),
        }
    }

    fn finish(mut self) -> (Vec<ContextMessage>, Option<BilledPrompt>, Ratios, CutIndex) {
        self.flush();
        (self.messages, self.billed, self.ratios, self.cuts)
    }
}
