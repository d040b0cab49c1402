//! Fixtures shared by the tests: fixed ids, a thread builder, a projection
//! case with sensible defaults, and the invariants every projection keeps.

use std::convert::Infallible;

use seri_core::{
    Actor, ContinueReason, Event, EventBody, EventId, Handoff, Message, ProjectionPart, Role, Seq, SessionId, Source,
    Thinking, Timestamp, ToolCall, ToolResult,
};
use seri_projection::{
    CompileError, ContinuationInput, ContinuationProjection, Lineage, SeqRange, cited_ranges,
    compile_continuation_projection, escaped_transcript_line,
};

pub(crate) const ORIGIN: SessionId = SessionId::from_bytes([0x11; 16]);
pub(crate) const PREDECESSOR: SessionId = SessionId::from_bytes([0x22; 16]);
pub(crate) const OTHER: SessionId = SessionId::from_bytes([0x33; 16]);

/// A predecessor thread under construction; seqs start at 1.
#[derive(Debug, Clone, Default)]
pub(crate) struct Thread {
    pub(crate) events: Vec<Event>,
}

impl Thread {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// The seq the next event will get.
    pub(crate) fn next_seq(&self) -> u64 {
        self.events.len() as u64 + 1
    }

    pub(crate) fn push(mut self, body: EventBody) -> Self {
        let seq = self.next_seq();
        let mut id = [0u8; 16];
        id[8..].copy_from_slice(&seq.to_be_bytes());
        self.events.push(Event {
            id: EventId::from_bytes(id),
            session_id: PREDECESSOR,
            seq: Seq(seq),
            at: Timestamp(1_764_460_800_000 + seq as i64 * 1000),
            body,
        });
        self
    }

    pub(crate) fn message(self, role: Role, actor: Actor, text: &str) -> Self {
        self.push(EventBody::Message(Message { role, actor, content: text.into(), ..Message::default() }))
    }

    pub(crate) fn user(self, text: &str) -> Self {
        self.message(Role::User, Actor::User, text)
    }

    pub(crate) fn trigger(self, text: &str) -> Self {
        self.message(Role::User, Actor::Trigger, text)
    }

    pub(crate) fn system(self, text: &str) -> Self {
        self.message(Role::User, Actor::System, text)
    }

    pub(crate) fn assistant(self, text: &str) -> Self {
        self.message(Role::Assistant, Actor::Agent, text)
    }

    pub(crate) fn thinking(self, text: &str) -> Self {
        self.push(EventBody::Thinking(Thinking { text: text.into(), signature: None, encrypted_content: None }))
    }

    /// A tool call and its result.
    pub(crate) fn tool(self, name: &str, arguments: serde_json::Value, result: &str, is_error: bool) -> Self {
        let call_id = format!("call_{}", self.next_seq());
        self.push(EventBody::ToolCall(ToolCall { id: call_id.as_str().into(), name: name.into(), arguments })).push(
            EventBody::ToolResult(ToolResult {
                tool_call_id: call_id.as_str().into(),
                name: name.into(),
                content: result.into(),
                is_error,
                facts: None,
            }),
        )
    }

    /// The seq of the newest message from a user or a trigger.
    pub(crate) fn last_user_seq(&self) -> Option<u64> {
        self.events
            .iter()
            .rev()
            .find(|e| e.body.as_message().is_some_and(Message::is_from_user_or_trigger))
            .map(|e| e.seq.0)
    }
}

/// `thread:PREDECESSOR` seqs `from..=to`.
pub(crate) fn cites(from: u64, to: u64) -> Source {
    Source::SessionEvents { session_id: PREDECESSOR, from_seq: Seq(from), to_seq: Seq(to) }
}

/// `thread:PREDECESSOR` seq `seq`.
pub(crate) fn cites_event(seq: u64) -> Source {
    Source::SessionEvent { session_id: PREDECESSOR, seq: Seq(seq) }
}

pub(crate) fn sample_handoff() -> Handoff {
    Handoff {
        purpose: Some("Make the expression parser total: no input may panic it.".into()),
        current_request: Some("Fix the panic on empty input and add a regression test.".into()),
        established_facts: vec![
            "`parse(\"\")` panics at src/parser.rs:42 (unwrap on the first char).".into(),
            "The lexer already returns an empty token list for empty input.".into(),
        ],
        decisions: vec!["Return `Err(ParseError::Empty)` rather than an empty AST: callers must see it.".into()],
        open_questions: vec!["Should whitespace-only input count as empty?".into()],
        next_actions: vec!["Change `parse` to match on `tokens.first()`.".into(), "Run `cargo test -p parser`.".into()],
        cautions: vec!["Do not touch the public `Ast` type; two crates depend on it.".into()],
        extra: Default::default(),
    }
}

/// Everything a projection is compiled from, with defaults.
#[derive(Debug, Clone)]
pub(crate) struct Case {
    pub(crate) thread: Thread,
    pub(crate) title: String,
    pub(crate) depth: u32,
    pub(crate) reason: ContinueReason,
    pub(crate) handoff: Handoff,
    pub(crate) sources: Vec<Source>,
    /// Defaults to the thread's newest user message.
    pub(crate) initiating: Option<u64>,
    pub(crate) budget: u64,
}

impl Case {
    pub(crate) fn new(thread: Thread) -> Self {
        Self {
            thread,
            title: "Parser hardening".into(),
            depth: 1,
            reason: ContinueReason::PhaseChange,
            handoff: sample_handoff(),
            sources: Vec::new(),
            initiating: None,
            budget: seri_projection::CONTINUATION_PROJECTION_BUDGET_BYTES,
        }
    }

    pub(crate) fn sources(self, sources: Vec<Source>) -> Self {
        Self { sources, ..self }
    }

    pub(crate) fn budget(self, budget: u64) -> Self {
        Self { budget, ..self }
    }

    /// The reason, which sets the recent exchanges' share of the budget
    /// (context pressure: all of it, for the tests of the budget itself).
    pub(crate) fn reason(self, reason: ContinueReason) -> Self {
        Self { reason, ..self }
    }

    pub(crate) fn handoff(self, handoff: Handoff) -> Self {
        Self { handoff, ..self }
    }

    pub(crate) fn initiating_seq(&self) -> Seq {
        Seq(self.initiating.or_else(|| self.thread.last_user_seq()).unwrap_or(0))
    }

    pub(crate) fn lineage(&self) -> Lineage {
        Lineage {
            origin_session_id: ORIGIN,
            predecessor_session_id: PREDECESSOR,
            predecessor_title: self.title.clone(),
            depth: self.depth,
            reason: self.reason,
        }
    }

    pub(crate) fn compile(&self) -> Result<ContinuationProjection, CompileError<Infallible>> {
        let lineage = self.lineage();
        let input = ContinuationInput::new(&lineage, &self.handoff, &self.sources, self.initiating_seq())
            .with_budget(self.budget);
        compile_continuation_projection(&input, &self.thread.events)
    }
}

/// The projection as a snapshot shows it: the text, then the manifest as
/// JSON, with the fixed ids replaced by their names.
pub(crate) fn snapshot_text(projection: &ContinuationProjection) -> String {
    let manifest = serde_json::to_string_pretty(&projection.manifest).unwrap();
    let text = format!("{}--- manifest ---\n{manifest}\n", projection.text);
    [(ORIGIN, "{origin}"), (PREDECESSOR, "{predecessor}"), (OTHER, "{other}")]
        .iter()
        .fold(text, |text, (id, name)| text.replace(&id.to_string(), name))
}

/// A budgeted block of the text: `<excerpt …>` or `<recent_exchanges …>`.
#[derive(Debug)]
pub(crate) struct Block {
    pub(crate) frame: &'static str,
    pub(crate) range: SeqRange,
    pub(crate) body: String,
}

/// The budgeted blocks of a projection's text, in order. Escaping makes
/// this unambiguous: no line of a body can be a frame tag.
pub(crate) fn budgeted_blocks(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut lines = text.split_inclusive('\n');
    while let Some(line) = lines.next() {
        let Some(frame) =
            ["excerpt", "recent_exchanges"].into_iter().find(|f| line.starts_with(&format!("<{f} from=\"")))
        else {
            continue;
        };
        let attrs: Vec<u64> = line.split('"').filter_map(|part| part.parse().ok()).collect();
        let range = SeqRange::new(Seq(attrs[0]), Seq(attrs[1])).unwrap();
        let close = format!("</{frame}>\n");
        let body: String = lines.by_ref().take_while(|l| *l != close).collect();
        blocks.push(Block { frame, range, body });
    }
    blocks
}

/// The escaped transcript lines of `range`, straight from the thread,
/// leaving out the events in `skip`.
pub(crate) fn expected_lines(thread: &Thread, range: SeqRange, skip: &[SeqRange]) -> String {
    thread
        .events
        .iter()
        .filter(|e| range.contains(e.seq) && !skip.iter().any(|s| s.contains(e.seq)))
        .map(|e| escaped_transcript_line(e) + "\n")
        .collect()
}

/// What every projection must satisfy, whatever its input.
pub(crate) fn assert_invariants(case: &Case, projection: &ContinuationProjection) {
    let m = &projection.manifest;
    let text = &projection.text;
    assert_eq!(m.projection_bytes, text.len() as u64);
    assert_eq!(m.budget_bytes, case.budget);
    assert!(m.used_bytes <= m.budget_bytes, "used {} of a {} byte budget", m.used_bytes, m.budget_bytes);
    assert_eq!(m.sources, case.sources);
    assert_eq!(m.initiating_seq, case.initiating_seq());

    // The budgeted blocks hold exactly the escaped lines of what the
    // manifest says was included, byte for byte, and cost what it says;
    // exchanges leave out what the excerpts already show.
    let blocks = budgeted_blocks(text);
    let budgeted: u64 = blocks.iter().map(|b| b.body.len() as u64).sum();
    assert_eq!(budgeted, m.used_bytes, "the budgeted blocks and used_bytes disagree");
    let excerpts: Vec<_> = m.included.iter().filter(|r| r.part == ProjectionPart::Excerpt).collect();
    let exchanges: Vec<_> = m.included.iter().filter(|r| r.part == ProjectionPart::RecentExchange).collect();
    let loaded: Vec<SeqRange> = excerpts.iter().map(|r| SeqRange::new(r.from_seq, r.to_seq).unwrap()).collect();
    let excerpt_blocks: Vec<_> = blocks.iter().filter(|b| b.frame == "excerpt").collect();
    assert_eq!(excerpt_blocks.len(), excerpts.len());
    for (block, range) in excerpt_blocks.iter().zip(&loaded) {
        assert_eq!(block.range, *range);
        assert_eq!(block.body, expected_lines(&case.thread, block.range, &[]), "excerpt {}", block.range);
    }
    let recent: Vec<_> = blocks.iter().filter(|b| b.frame == "recent_exchanges").collect();
    let exchange_bytes: u64 = exchanges.iter().map(|r| r.bytes).sum();
    assert_eq!(recent.len(), usize::from(exchange_bytes > 0));
    if let Some(block) = recent.first() {
        assert_eq!(block.range.from, exchanges[0].from_seq);
        assert_eq!(block.range.to, exchanges[exchanges.len() - 1].to_seq);
        assert_eq!(block.body, expected_lines(&case.thread, block.range, &loaded));
    }
    for r in m.included.iter().chain(&m.omitted) {
        let range = SeqRange::new(r.from_seq, r.to_seq).unwrap();
        let skip = if r.part == ProjectionPart::Excerpt { &[][..] } else { &loaded[..] };
        assert_eq!(r.bytes, expected_lines(&case.thread, range, skip).len() as u64, "bytes of {range}");
    }

    // Every excerpt, included or omitted, lies inside one merged cited
    // range (whole, or one of the citations it was merged from when it did
    // not fit whole); included excerpts are sorted and never overlap; every
    // cited seq is in an included or an omitted excerpt.
    let asked: Vec<SeqRange> = m
        .included
        .iter()
        .chain(&m.omitted)
        .filter(|r| r.part == ProjectionPart::Excerpt)
        .map(|r| SeqRange::new(r.from_seq, r.to_seq).unwrap())
        .collect();
    let cited = cited_ranges(PREDECESSOR, &case.sources).unwrap();
    for range in &asked {
        assert!(cited.iter().any(|c| c.from <= range.from && range.to <= c.to), "excerpt {range} was not cited");
    }
    assert!(loaded.windows(2).all(|w| w[0].to < w[1].from), "included excerpts overlap: {loaded:?}");
    for c in &cited {
        for seq in c.from.0..=c.to.0 {
            assert!(asked.iter().any(|r| r.contains(Seq(seq))), "cited seq {seq} is neither included nor omitted");
        }
    }

    // Exchanges: an unbroken run ending just before the initiating message,
    // each starting at a user message (or the thread's start), oldest first,
    // but for exchanges wholly inside an included excerpt (carried already,
    // so no 0-byte part of their own); the one that did not fit sits right
    // before it; without one, the run reaches back to seq 1.
    let omitted: Vec<_> = m.omitted.iter().filter(|r| r.part == ProjectionPart::RecentExchange).collect();
    assert!(omitted.len() <= 1);
    assert!(exchanges.iter().all(|r| r.bytes > 0), "no 0-byte exchange is listed: {exchanges:?}");
    let carried = |from: u64, to: u64| (from..=to).all(|seq| loaded.iter().any(|r| r.contains(Seq(seq))));
    let mut expected_to = case.initiating_seq().0 - 1;
    for r in exchanges.iter().rev().chain(&omitted) {
        if r.to_seq.0 < expected_to {
            assert!(carried(r.to_seq.0 + 1, expected_to), "a gap between exchanges that no excerpt carries");
            expected_to = r.to_seq.0;
        }
        assert_eq!(r.to_seq.0, expected_to, "exchanges must be contiguous");
        let first = &case.thread.events[r.from_seq.0 as usize - 1];
        assert!(
            r.from_seq.0 == 1 || first.body.as_message().is_some_and(Message::is_from_user_or_trigger),
            "exchange {}..{} does not start at a user message",
            r.from_seq,
            r.to_seq
        );
        expected_to = r.from_seq.0 - 1;
    }
    if omitted.is_empty() {
        assert!(expected_to == 0 || carried(1, expected_to), "with nothing omitted, the exchanges reach back to seq 1");
    }
}
