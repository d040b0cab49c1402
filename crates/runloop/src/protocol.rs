//! The run loop's protocol: what a caller asks for and what it hears back.
//!
//! A run is driven by a [`RunSpec`]; while it runs it reports [`RunEvent`]s,
//! a closed enum a client renders (the CLI prints them, a server would
//! forward them); it ends with a [`RunOutcome`].

use seri_core::{ContinuationId, ContinueReason, EventId, RunId, SessionId, ToolCallId, Usage};
pub use seri_core::{Lane, RunStatus};
use seri_providers::RetryNotice;
use seri_tools::RunKind;

/// A run to execute.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSpec {
    /// The session the run works in.
    pub session_id: SessionId,
    /// What kind of run it is (decides which tools it sees).
    pub kind: RunKind,
    /// Its queue.
    pub lane: Lane,
    /// The user messages it answers, already in the session. A run that
    /// finds one of them answered (another process ran first) does nothing.
    pub user_event_ids: Vec<EventId>,
    /// A message to post first, once the run holds the session: how a
    /// person's new message enters a session another run may be busy in,
    /// without ever landing inside that run's turn.
    pub message: Option<seri_core::Message>,
    /// Its turn budget.
    pub max_turns: u32,
}

/// Where a continued run's answer went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContinuedTo {
    /// The successor session.
    pub session_id: SessionId,
    /// The edge.
    pub continuation_id: ContinuationId,
    /// The successor's title.
    pub title: String,
    /// Why.
    pub reason: ContinueReason,
    /// The successor's copy of the initiating message, which its run answers.
    pub user_event_id: EventId,
}

/// The end of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    /// The run.
    pub run_id: RunId,
    /// Its session.
    pub session_id: SessionId,
    /// How it ended.
    pub status: RunStatus,
    /// The model's final text, when it ended its turn.
    pub result: Option<String>,
    /// Set when the run ended by continuing into a successor.
    pub continued_to: Option<ContinuedTo>,
    /// Model turns taken.
    pub turns: u32,
    /// Tokens billed over all its turns that reported usage; `None` when
    /// none did (null in JSON: unknown is not zero).
    pub usage: Option<Usage>,
    /// What went wrong, for `failed` and `cancelled`.
    pub error: Option<String>,
    /// For a typed child run: the value it handed back with
    /// `return_result`, checked against its parent's schema.
    pub returned: Option<serde_json::Value>,
    /// The run failed because the store was out of reach for longer than
    /// a run waits ([`crate::STORE_OUTAGE_PATIENCE`]): nothing it recorded
    /// is lost, and running it again once the store is back goes on from
    /// there (a server hands such a job back to the queue).
    pub store_out_of_reach: bool,
    /// The job this run answered ([`RunObserver::job_ending`]) was recorded
    /// done in the transaction that gave its session back.
    pub job_done: bool,
    /// A `UserPromptSubmit` hook blocked the message, which was not sent
    /// (no run started): what the hook said, for the person.
    pub blocked_by_hook: Option<String>,
}

impl RunOutcome {
    /// What the runs table keeps of the outcome.
    pub fn record(&self) -> seri_store::RunResult {
        seri_store::RunResult {
            turns: Some(self.turns),
            usage: self.usage,
            result: self.result.clone(),
            continued_to: self
                .continued_to
                .as_ref()
                .map(|c| seri_store::RunContinuedTo { session_id: c.session_id, continuation_id: c.continuation_id }),
            error: self.error.clone(),
            returned: self.returned.clone(),
        }
    }
}

/// What a run reports while it runs.
#[derive(Debug, Clone, PartialEq)]
pub enum RunEvent {
    /// A run began.
    RunStarted {
        /// The run.
        run_id: RunId,
        /// Its session.
        session_id: SessionId,
    },
    /// Streamed answer text.
    TextDelta(String),
    /// Streamed reasoning.
    ThinkingDelta(String),
    /// The provider failed and the call is being retried.
    Retrying(RetryNotice),
    /// A model turn was recorded.
    TurnRecorded {
        /// Its usage, `None` when the provider reported none.
        usage: Option<Usage>,
        /// The context window in force.
        window: u64,
    },
    /// A tool is about to run.
    ToolStarted {
        /// The call.
        id: ToolCallId,
        /// The tool.
        name: String,
        /// Its arguments, as the model wrote them.
        arguments: serde_json::Value,
    },
    /// A tool finished.
    ToolFinished {
        /// The call.
        id: ToolCallId,
        /// The tool.
        name: String,
        /// Whether it failed or was refused.
        is_error: bool,
        /// The first line of its result.
        summary: String,
        /// For a command that ran and exited non-zero (or was killed): the
        /// last lines of what it printed, for the person to see. The model
        /// reads the whole result either way.
        failed_output: Option<String>,
        /// For a call that changed a file: a unified diff of the change,
        /// for the person; the model reads the result only.
        change: Option<String>,
        /// What the call came to, as values: what its `tool_result` stores.
        facts: Option<seri_core::ToolFacts>,
    },
    /// The message the run answers was posted ([`RunSpec::message`]), once
    /// the run held the session.
    MessagePosted {
        /// The session.
        session_id: SessionId,
        /// The message's event.
        event_id: EventId,
        /// Its seq.
        seq: seri_core::Seq,
    },
    /// The session continued into a successor.
    Continued(ContinuedTo),
    /// The oldest part of the working context was replaced by a recap.
    Compacted {
        /// The first evicted seq.
        evicted_from_seq: seri_core::Seq,
        /// The last evicted seq.
        evicted_to_seq: seri_core::Seq,
        /// The estimate before.
        tokens_before: u64,
        /// The estimate after.
        tokens_after: u64,
        /// The context is still at or past the compaction trigger (half the
        /// window): what must stay word for word is that large.
        still_past_trigger: bool,
    },
    /// An automatic compaction failed; the turn goes on uncompacted, and
    /// no automatic compaction of the session is tried again before its
    /// context reaches `retry_at_tokens` (an overflow's retry still is).
    CompactionFailed {
        /// Why.
        error: String,
        /// The context size (by the same estimate as the trigger) at which
        /// the next automatic attempt is made.
        retry_at_tokens: u64,
    },
    /// An automatic compaction at the trigger was skipped: no safe cut
    /// leaves four messages to evict; said once per session.
    CompactionSkipped {
        /// Why, in a sentence.
        reason: String,
    },
    /// A glob rule fired: its text was appended as a message, because a
    /// call worked on a file it covers.
    RuleFired {
        /// The rule file, as the model sees it.
        path: String,
        /// The file that fired it, relative to the project root.
        touched: String,
    },
    /// The glob rules could not be read for this run; none fire in it.
    RulesSkipped {
        /// Why.
        error: String,
    },
    /// A child run this run delegated to moved on: it started, recorded a
    /// turn, started a tool, or ended. A client shows one line per child
    /// and rewrites it as these arrive.
    ChildProgress(ChildProgress),
    /// The run ended.
    RunFinished(RunOutcome),
}

/// Where one child run stands, as its parent's observer hears it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildProgress {
    /// The parent's `delegate` call the child answers: one line per call.
    pub call_id: ToolCallId,
    /// The child's own session (`seri thread` reads it).
    pub session_id: SessionId,
    /// Its title: the task's first line.
    pub title: String,
    /// Model turns it has recorded so far.
    pub turns: u32,
    /// The tool it started most recently.
    pub last_tool: Option<String>,
    /// How it ended, once it has.
    pub finished: Option<RunStatus>,
}

/// Where run events go. A closed channel or a slow client must never stall
/// or fail a run, so emitting cannot fail.
pub trait RunObserver: Send + Sync {
    /// Receives one event.
    fn event(&self, event: RunEvent);

    /// The job of the shared queue whose message this run answers, to be
    /// recorded done with `outcome` in the transaction that gives the
    /// session back, so the answer and the job's end commit together.
    /// `None` (the default) when the run answers no job, or when how it
    /// ended is not yet the job's end (it continued into a successor, it
    /// stopped here, the store was out of reach). An observer that passes
    /// events on passes this on too; one of a child run does not.
    fn job_ending(&self, outcome: &RunOutcome) -> Option<JobEnding> {
        let _ = outcome;
        None
    }
}

/// A job to record done as a run gives its session back
/// ([`RunObserver::job_ending`]).
#[derive(Debug, Clone, PartialEq)]
pub struct JobEnding {
    /// The job.
    pub job_id: String,
    /// The process that holds its claim: the job is recorded done only
    /// while it still does.
    pub owner: String,
    /// What the job came to, as its outcome is stored.
    pub outcome: seri_store::JobOutcome,
}

impl RunObserver for tokio::sync::mpsc::UnboundedSender<RunEvent> {
    fn event(&self, event: RunEvent) {
        let _ = self.send(event);
    }
}

/// An observer that drops everything.
#[derive(Debug, Clone, Copy, Default)]
pub struct Quiet;

impl RunObserver for Quiet {
    fn event(&self, _event: RunEvent) {}
}
