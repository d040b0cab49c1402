//! Compiles a continuation projection and plans a compaction cut over an
//! event source of the caller's own, through `seri-projection`'s public API
//! only.
//!
//! The compilers never take a whole thread: they read through the
//! [`ThreadEvents`] trait, by seq range. Here the source is `Journal`, an
//! in-memory map that logs every range it is asked for, so the example can
//! show that a projection reads only what it includes (plus the one
//! exchange that did not fit), however long the thread is.
//!
//! ```sh
//! cargo run -p seri-projection --example projection_tour
//! ```

// An example talks to a person: printing is its whole job.
#![allow(clippy::print_stdout)]

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;

use seri_core::{
    CompactionTrigger, ContinueReason, Event, EventBody, EventId, Handoff, Message, ModelRef, Seq, SessionId, Source,
    Timestamp, ToolCall, ToolResult,
};
use seri_projection::{
    CompactionDecision, CompactionSettings, ContinuationInput, Lineage, SeqRange, SummarizerInput, ThreadEvents,
    WorkingContext, compile_continuation_projection, parse_recap, plan_compaction, read_working_context,
};

/// The caller's own event source: events by seq, and a log of every read.
struct Journal {
    session: SessionId,
    events: BTreeMap<u64, Event>,
    reads: RefCell<Vec<SeqRange>>,
}

/// Why the journal could not answer (it never fails here, but a database would).
#[derive(Debug)]
struct JournalError(String);

impl fmt::Display for JournalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "journal unreadable: {}", self.0)
    }
}

impl std::error::Error for JournalError {}

impl ThreadEvents for Journal {
    type Error = JournalError;

    fn events(&self, range: SeqRange) -> Result<Vec<Event>, JournalError> {
        self.reads.borrow_mut().push(range);
        Ok(self.events.range(range.from.get()..=range.to.get()).map(|(_, e)| e.clone()).collect())
    }
}

impl Journal {
    fn new(session: SessionId) -> Self {
        Self { session, events: BTreeMap::new(), reads: RefCell::new(Vec::new()) }
    }

    fn last_seq(&self) -> Seq {
        Seq(self.events.keys().next_back().copied().unwrap_or(0))
    }

    fn push(&mut self, body: EventBody) -> Seq {
        let seq = self.last_seq().next();
        let at = Timestamp(1_796_018_400_000 + i64::try_from(seq.get()).unwrap_or(0) * 1_000);
        let id = EventId::from_bytes(u128::from(seq.get()).to_be_bytes());
        self.events.insert(seq.get(), Event { id, session_id: self.session, seq, at, body });
        seq
    }

    /// One coding exchange: a question, a file read and its result, an answer.
    fn exchange(&mut self, n: u64) {
        let call_id = format!("call_{n}");
        let path = format!("src/module_{n}.rs");
        self.push(EventBody::Message(Message::user(format!("Question {n}: what does module {n} do?"))));
        self.push(EventBody::ToolCall(ToolCall {
            id: call_id.as_str().into(),
            name: "read_file".into(),
            arguments: serde_json::json!({ "path": path }),
        }));
        self.push(EventBody::ToolResult(ToolResult {
            tool_call_id: call_id.as_str().into(),
            name: "read_file".into(),
            content: format!("// module {n}\npub fn run() {{ /* … */ }}\n").repeat(20),
            is_error: false,
            facts: None,
        }));
        self.push(EventBody::Message(Message::assistant(format!("Module {n} runs step {n} of the pipeline."))));
    }

    fn take_reads(&self) -> Vec<SeqRange> {
        std::mem::take(&mut *self.reads.borrow_mut())
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let session = SessionId::from_bytes([0x22; 16]);
    let mut journal = Journal::new(session);
    for n in 1..=60 {
        journal.exchange(n);
    }
    let initiating_seq = journal.push(EventBody::Message(Message::user("Now let's write the docs for all of it.")));
    println!("the thread holds {} events", journal.events.len());

    // 1. A continuation projection: what a successor session is shown first.
    let lineage = Lineage {
        origin_session_id: session,
        predecessor_session_id: session,
        predecessor_title: "Read the pipeline".into(),
        depth: 1,
        reason: ContinueReason::PhaseChange,
    };
    let handoff = Handoff {
        purpose: Some("Document the pipeline, module by module.".into()),
        current_request: Some("Write the docs for all of it.".into()),
        established_facts: vec!["Module n runs step n of the pipeline.".into()],
        next_actions: vec!["Start with module 1.".into()],
        ..Handoff::default()
    };
    // Cite the first exchange, where module 1 was read.
    let sources = [Source::SessionEvents { session_id: session, from_seq: Seq(1), to_seq: Seq(4) }];
    // A small budget, so some recent exchanges are linked rather than loaded.
    let input = ContinuationInput::new(&lineage, &handoff, &sources, initiating_seq).with_budget(8 * 1024);
    let projection = compile_continuation_projection(&input, &journal)?;
    let manifest = &projection.manifest;
    println!();
    println!(
        "projection: {} bytes, {} of a {}-byte budget used for excerpts and exchanges",
        manifest.projection_bytes, manifest.used_bytes, manifest.budget_bytes
    );
    for range in &manifest.included {
        println!("  included {:?} seq {}..={} ({} bytes)", range.part, range.from_seq, range.to_seq, range.bytes);
    }
    for range in &manifest.omitted {
        println!("  omitted  {:?} seq {}..={} ({} bytes)", range.part, range.from_seq, range.to_seq, range.bytes);
    }
    let reads = journal.take_reads();
    let read_events: u64 = reads.iter().map(SeqRange::count).sum();
    println!("  it read {read_events} of {} events, in {} ranges", journal.events.len(), reads.len());
    let head: Vec<&str> = projection.text.lines().take(12).collect();
    println!("  its text starts:\n    {}", head.join("\n    "));

    // 2. Compaction planning: where the oldest part of the working context
    //    would be cut and replaced by one recap.
    let model = ModelRef::new("ollama", "qwen2.5-coder:7b");
    let events = read_working_context(&journal, journal.last_seq())?;
    let context = WorkingContext::from_events(&events)?;
    // A small local window (16k tokens) so this thread is past the 50% trigger.
    let settings = CompactionSettings::new(16_384, model.clone());
    let decision = plan_compaction(&context, &settings, CompactionTrigger::Automatic, None);
    println!();
    println!("compaction: {decision}");
    let CompactionDecision::Compact(plan) = decision else {
        println!("  (nothing to cut)");
        return Ok(());
    };
    println!("  keep budget {} tokens; Read: {:?}", plan.keep_budget, &plan.read[..3.min(plan.read.len())]);

    // The summarizer's input is shaped here; the model call is the caller's.
    let summarizer = SummarizerInput::new(&plan, &events)?;
    println!("  the summarizer would read {} tokens of transcript", summarizer.tokens());
    let answer = "## Goal\nUnderstand the pipeline.\n\n## Progress\nThe first modules are read; each runs one step.\n\n\
                  ## Blockers\n(none)\n\n## Next steps\nRead the rest, then write docs.";
    let compacted = plan.compacted(parse_recap(answer)?);
    println!("  tokens {} before, about {} after", compacted.tokens_before, compacted.tokens_after);

    // The recap is one more event: nothing is deleted, the working context
    // now starts at its `keptFromSeq`.
    journal.push(EventBody::ContextCompacted(Box::new(compacted)));
    journal.take_reads();
    let events = read_working_context(&journal, journal.last_seq())?;
    let context = WorkingContext::from_events(&events)?;
    println!(
        "  after the recap the working context starts at seq {} ({} messages; {} events read of {})",
        context.start(),
        context.messages().len(),
        events.len(),
        journal.events.len()
    );
    Ok(())
}
