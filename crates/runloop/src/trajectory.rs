//! Trajectories: the run loop's local recording of each run, on by default.
//!
//! A small recorder fed from the points where the run loop already reports
//! what it does. The recorder is a value the runtime owns (one per
//! runtime, holding its own store handle and the facts every header
//! lists); it knows nothing of the runtime. [`Runtime::run`] wraps its
//! observer in the recorder's `TrajectoryTee`, which passes every [`RunEvent`] on unchanged and turns
//! the ones a trajectory keeps into records: token usage per turn, retries,
//! compactions, and how the run ended. The tool path adds what events do
//! not carry: each call with its arguments, the checkpoint taken before a
//! file changed, a denial with its reason, a `bash` command's exit status
//! (a check, from the [`seri_tools::ToolFacts`] the tool reports, never
//! from its text), a `write_file` or `edit` outcome, and the result the model
//! read. The store elides large values as it writes them.
//!
//! The header (model, strategy, window, sampling knobs, OpenRouter pin,
//! reasoning effort, the hashes of the frozen prompt and its files, seri's
//! version) is written before the run's first record: lazily, because the
//! run's row in `runs` is written just after the run is announced.
//!
//! Recording never fails a run: a failed write is logged with `tracing` and
//! the run goes on, unrecorded from then on.
//!
//! A child run reports through its parent's observer; the parent's tee
//! leaves the events between a foreign `RunStarted` and its `RunFinished`
//! alone, since the child's own tee records them in the child's trajectory.
//!
//! [`Runtime::run`]: crate::Runtime::run

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;
use seri_core::{AgentId, EventBody, ModelRef, RunId, Seq, SessionId, SessionSeed, ToolCall, ToolResult};
use seri_prompt::ContextStrategy;
use seri_store::{AgentStore, EditOutcome, FileState, Store, StoreError, TrajectoryHeader, TrajectoryRecord};
use seri_tools::coding::{edit, write_file};
use seri_tools::{CommandExit, ToolFacts};

use crate::protocol::{RunEvent, RunObserver, RunSpec};

/// The environment variable that turns recording on (`1`) or off (`0`),
/// over whatever `/trajectory` stored. Read by the command line.
pub const TRAJECTORY_ENV: &str = "SERI_TRAJECTORY";

/// What a trajectory's header records beyond what the runtime knows
/// itself: the knobs the command line configured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TrajectoryFacts {
    /// The sampling knobs sent with each request, as camelCase JSON
    /// (`temperature`, `topP`, `topK`, `seed`, and the output cap as
    /// `maxOutputTokens`); `None` or an empty object:
    /// the provider's defaults.
    pub sampling: Option<Value>,
    /// The reasoning effort asked for, if any.
    pub reasoning_effort: Option<String>,
    /// OpenRouter's provider pin, when the provider is OpenRouter and one is set.
    pub openrouter_pin: Option<Value>,
}

/// What every header of one runtime says about how it runs: fixed for the
/// runtime's life, so the recorder takes it once.
#[derive(Debug, Clone)]
pub(crate) struct RuntimeFacts {
    /// The model in use.
    pub(crate) model: ModelRef,
    /// The context strategy.
    pub(crate) strategy: ContextStrategy,
    /// The context window in force, in tokens.
    pub(crate) context_window: u64,
}

/// The recorder, one per runtime: the recording toggle, the configured
/// knobs, and the runs being recorded.
#[derive(Debug)]
pub(crate) struct Recorder {
    store: Arc<Store>,
    agent: AgentId,
    fixed: RuntimeFacts,
    enabled: AtomicBool,
    facts: Mutex<TrajectoryFacts>,
    runs: Mutex<HashMap<RunId, ActiveRun>>,
}

/// A run in progress.
#[derive(Debug)]
struct ActiveRun {
    /// The user message the run answers: the checkpoint boundary.
    turn_seq: Option<Seq>,
    /// Whether this run is being recorded (the toggle when it started, and
    /// no write has failed since).
    recording: bool,
    /// The header, until it is written with the first record.
    pending_header: Option<Box<TrajectoryHeader>>,
    /// Usage records not written yet: they go in with the next record
    /// written, or with how the run ended, in the transaction that gives
    /// its session back ([`Recorder::ending`]), rather than one each.
    deferred: Vec<TrajectoryRecord>,
    /// Model turns recorded so far, to number usage records.
    turns: u32,
}

impl Recorder {
    /// A recorder over `agent`'s part of `store`, recording by default.
    pub(crate) fn new(store: Arc<Store>, agent: AgentId, fixed: RuntimeFacts) -> Self {
        Self { store, agent, fixed, enabled: AtomicBool::new(true), facts: Mutex::default(), runs: Mutex::default() }
    }

    fn store(&self) -> AgentStore<'_> {
        self.store.agent(&self.agent)
    }

    /// Whether new runs are recorded.
    pub(crate) fn recording(&self) -> bool {
        self.enabled.load(Ordering::SeqCst)
    }

    /// Turns recording of new runs on or off (a run in progress keeps what
    /// it started with).
    pub(crate) fn set_recording(&self, on: bool) {
        self.enabled.store(on, Ordering::SeqCst);
    }

    /// Sets the configured knobs every new trajectory's header lists.
    pub(crate) fn set_facts(&self, facts: TrajectoryFacts) {
        *self.facts.lock().unwrap_or_else(PoisonError::into_inner) = facts;
    }

    /// Wraps a run's observer so its events are also recorded. `seed`
    /// gives the session's seed, for the header.
    pub(crate) fn tee<'a>(
        &'a self,
        run_id: RunId,
        spec: &RunSpec,
        inner: &'a dyn RunObserver,
        seed: impl FnOnce() -> Result<Arc<SessionSeed>, StoreError>,
    ) -> TrajectoryTee<'a> {
        let header = if self.recording() { self.header(run_id, spec, seed) } else { None };
        // A run that posts its message is told its seq once posted
        // (`set_run_turn`); until then it changes no file, so no checkpoint
        // asks for it, and nothing is read for it here.
        let turn_seq = match spec.message {
            Some(_) => None,
            None => self.store().newest_user_message(spec.session_id).ok().flatten().map(|e| e.seq),
        };
        let active = ActiveRun {
            turn_seq,
            recording: header.is_some(),
            pending_header: header.map(Box::new),
            deferred: Vec::new(),
            turns: 0,
        };
        self.runs.lock().unwrap_or_else(PoisonError::into_inner).insert(run_id, active);
        TrajectoryTee { recorder: self, run_id, inner, foreign_runs: Mutex::new(0) }
    }

    /// The header of a run starting now; `None` (and a warning) when the
    /// session cannot be read.
    fn header(
        &self,
        run_id: RunId,
        spec: &RunSpec,
        seed: impl FnOnce() -> Result<Arc<SessionSeed>, StoreError>,
    ) -> Option<TrajectoryHeader> {
        let seed = match seed() {
            Ok(seed) => seed,
            Err(e) => {
                tracing::warn!(run = %run_id, error = %e, "not recording this run's trajectory: its session is unreadable");
                return None;
            }
        };
        let facts = self.facts.lock().unwrap_or_else(PoisonError::into_inner).clone();
        let prompt = seed.system_prompt.as_ref();
        Some(TrajectoryHeader {
            run_id,
            session_id: spec.session_id,
            started_at: self.store.now(),
            seri_version: env!("CARGO_PKG_VERSION").to_owned(),
            model: self.fixed.model.clone(),
            strategy: self.fixed.strategy.to_string(),
            context_window: self.fixed.context_window,
            max_turns: spec.max_turns,
            kind: spec.kind.name(),
            lane: spec.lane,
            sampling: facts.sampling.unwrap_or_else(|| Value::Object(serde_json::Map::new())),
            reasoning_effort: facts.reasoning_effort,
            openrouter_pin: facts.openrouter_pin,
            system_prompt_sha256: prompt.map(|p| seri_store::sha256_hex(p.text.as_bytes())),
            prompt_files: prompt.map(|p| p.files.clone()).unwrap_or_default(),
        })
    }

    /// The user message the run answers, for checkpoints.
    /// The run posted its message ([`crate::RunSpec::message`]) once it held
    /// the session: that message, not the one before it, is the boundary of
    /// the checkpoints it takes.
    pub(crate) fn set_run_turn(&self, run_id: RunId, turn_seq: Seq) {
        if let Some(active) = self.runs.lock().unwrap_or_else(PoisonError::into_inner).get_mut(&run_id) {
            active.turn_seq = Some(turn_seq);
        }
    }

    pub(crate) fn run_turn(&self, run_id: RunId, session_id: SessionId) -> Option<Seq> {
        let known = self.runs.lock().unwrap_or_else(PoisonError::into_inner).get(&run_id).and_then(|r| r.turn_seq);
        known.or_else(|| self.store().newest_user_message(session_id).ok().flatten().map(|e| e.seq))
    }

    /// Appends a record to a run's trajectory, writing the header first if
    /// it is still pending. Failures are logged and stop the recording.
    pub(crate) fn record(&self, run_id: RunId, record: TrajectoryRecord) {
        let mut runs = self.runs.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(active) = runs.get_mut(&run_id) else { return };
        if !active.recording {
            return;
        }
        if let TrajectoryRecord::Usage { turn, .. } = &record {
            active.turns = *turn;
            active.deferred.push(record);
            return;
        }
        let kind = record.kind();
        let mut records = std::mem::take(&mut active.deferred);
        records.push(record);
        let pending = PendingRecords { header: active.pending_header.take(), records };
        if let Err(e) = self.store().write(|tx| pending.write(run_id, tx)) {
            tracing::warn!(run = %run_id, kind, error = %e, "could not record the trajectory; the run goes on unrecorded");
            active.recording = false;
        }
    }

    /// The next usage record's turn number.
    fn next_turn(&self, run_id: RunId) -> u32 {
        let runs = self.runs.lock().unwrap_or_else(PoisonError::into_inner);
        runs.get(&run_id).map_or(1, |r| r.turns + 1)
    }

    /// What is left to write of a run's trajectory as it ends (its header
    /// and usage records if not written yet, and how it ended), for the
    /// transaction that gives its session back: the run is recorded no
    /// further (`RunFinished` writes nothing more). `None` when it is not
    /// recorded.
    pub(crate) fn ending(&self, run_id: RunId, outcome: &crate::protocol::RunOutcome) -> Option<PendingRecords> {
        let active = self.runs.lock().unwrap_or_else(PoisonError::into_inner).remove(&run_id)?;
        if !active.recording {
            return None;
        }
        let mut records = active.deferred;
        records.push(ended(outcome));
        Some(PendingRecords { header: active.pending_header, records })
    }

    fn end(&self, run_id: RunId) {
        self.runs.lock().unwrap_or_else(PoisonError::into_inner).remove(&run_id);
    }

    /// Records a tool call as it starts.
    pub(crate) fn record_tool_call(&self, run_id: RunId, call: &ToolCall) {
        self.record(
            run_id,
            TrajectoryRecord::ToolCall {
                tool_call_id: call.id.clone(),
                name: call.name.clone(),
                arguments: call.arguments.clone(),
            },
        );
    }

    /// Records what a tool call came to: a denial, a check, an edit outcome,
    /// and the result the model reads. `facts` are what its command came
    /// to, if it ran one; `after` is what a checkpointed file held once the
    /// call ended.
    pub(crate) fn record_tool_outcome(
        &self,
        run_id: RunId,
        call: &ToolCall,
        result: &ToolResult,
        extra: &[EventBody],
        facts: Option<&ToolFacts>,
        after: Option<FileState>,
    ) {
        let denial = extra.iter().find_map(|e| match e {
            EventBody::PermissionDenied(d) if d.tool_call_id == call.id => Some(d),
            _ => None,
        });
        if let Some(d) = denial {
            self.record(
                run_id,
                TrajectoryRecord::Denial {
                    tool_call_id: call.id.clone(),
                    tool: d.tool.clone(),
                    reason: d.reason,
                    detail: Value::from(d.detail.clone()),
                },
            );
        }
        let first_line = || Value::from(result.content.lines().next().unwrap_or("").to_owned());
        if let Some(run) = facts.and_then(ToolFacts::command).filter(|_| denial.is_none()) {
            if let Some(check) = check_of(call, run.exit) {
                self.record(run_id, check);
            }
        } else if call.name == write_file::NAME || call.name == edit::NAME {
            let outcome = match (denial, result.is_error) {
                (Some(_), _) => EditOutcome::Denied,
                (None, true) => EditOutcome::Failed,
                (None, false) => EditOutcome::Applied,
            };
            self.record(
                run_id,
                TrajectoryRecord::Edit {
                    tool_call_id: call.id.clone(),
                    tool: call.name.clone(),
                    path: call.arguments.get("path").and_then(Value::as_str).map(str::to_owned),
                    outcome,
                    detail: first_line(),
                    after,
                },
            );
        }
        self.record(
            run_id,
            TrajectoryRecord::ToolResult {
                tool_call_id: call.id.clone(),
                name: call.name.clone(),
                is_error: result.is_error,
                content: Value::from(result.content.clone()),
            },
        );
    }
}

/// The check a command's facts make: its exit code or signal, or that it
/// timed out. `None` when it ended with no status to judge it by.
fn check_of(call: &ToolCall, exit: CommandExit) -> Option<TrajectoryRecord> {
    let (exit_code, signal, timed_out) = match exit {
        CommandExit::Code { code } => (Some(code), None, false),
        CommandExit::Signal { signal } => (None, Some(signal), false),
        CommandExit::Timeout => (None, None, true),
        CommandExit::Unknown => return None,
    };
    Some(TrajectoryRecord::Check {
        tool_call_id: call.id.clone(),
        command: call.arguments.get("command").cloned().unwrap_or(Value::Null),
        exit_code,
        signal,
        timed_out,
        passed: exit_code == Some(0),
    })
}

/// How a run ended, as its trajectory's last record.
fn ended(outcome: &crate::protocol::RunOutcome) -> TrajectoryRecord {
    TrajectoryRecord::Ended {
        status: outcome.status,
        turns: outcome.turns,
        usage: outcome.usage,
        result: outcome.result.clone().map(Value::from),
        error: outcome.error.clone().map(Value::from),
        continued_to: outcome.continued_to.as_ref().map(|c| c.session_id),
    }
}

/// Records of a run's trajectory waiting to be written together: its
/// header first, when it is not written yet.
#[derive(Debug)]
pub(crate) struct PendingRecords {
    header: Option<Box<TrajectoryHeader>>,
    records: Vec<TrajectoryRecord>,
}

impl PendingRecords {
    /// Writes them in `tx`.
    pub(crate) fn write(&self, run_id: RunId, tx: &mut seri_store::WriteTx<'_>) -> Result<(), StoreError> {
        match &self.header {
            Some(header) => tx.start_trajectory_with(header, &self.records)?,
            None => tx.append_trajectory_records(run_id, &self.records)?,
        };
        Ok(())
    }
}

/// A run's observer that records what a trajectory keeps and passes every
/// event on.
pub(crate) struct TrajectoryTee<'a> {
    recorder: &'a Recorder,
    run_id: RunId,
    inner: &'a dyn RunObserver,
    /// Child runs reporting through this observer that have not finished.
    foreign_runs: Mutex<u32>,
}

impl RunObserver for TrajectoryTee<'_> {
    fn event(&self, event: RunEvent) {
        self.observe(&event);
        self.inner.event(event);
    }

    fn job_ending(&self, outcome: &crate::protocol::RunOutcome) -> Option<crate::protocol::JobEnding> {
        self.inner.job_ending(outcome)
    }
}

impl TrajectoryTee<'_> {
    fn observe(&self, event: &RunEvent) {
        let own = {
            let mut foreign = self.foreign_runs.lock().unwrap_or_else(PoisonError::into_inner);
            match event {
                RunEvent::RunStarted { run_id, .. } if *run_id != self.run_id => {
                    *foreign += 1;
                    false
                }
                RunEvent::RunFinished(outcome) if outcome.run_id != self.run_id => {
                    *foreign = foreign.saturating_sub(1);
                    false
                }
                _ => *foreign == 0,
            }
        };
        if own {
            self.own(event);
        }
    }

    fn own(&self, event: &RunEvent) {
        let recorder = self.recorder;
        let run = self.run_id;
        match event {
            RunEvent::TurnRecorded { usage, .. } => {
                recorder.record(run, TrajectoryRecord::Usage { turn: recorder.next_turn(run), usage: *usage });
            }
            RunEvent::Retrying(notice) => recorder.record(
                run,
                TrajectoryRecord::Retry {
                    attempt: notice.attempt,
                    max_attempts: notice.max_attempts,
                    delay_ms: u64::try_from(notice.delay.as_millis()).unwrap_or(u64::MAX),
                    error: Value::from(notice.error.to_string()),
                },
            ),
            RunEvent::Compacted { evicted_from_seq, evicted_to_seq, tokens_before, tokens_after, .. } => recorder
                .record(
                    run,
                    TrajectoryRecord::Compaction {
                        evicted_from_seq: evicted_from_seq.get(),
                        evicted_to_seq: evicted_to_seq.get(),
                        tokens_before: *tokens_before,
                        tokens_after: *tokens_after,
                    },
                ),
            RunEvent::CompactionFailed { error, .. } => {
                recorder.record(run, TrajectoryRecord::CompactionFailed { error: Value::from(error.clone()) });
            }
            // A run that held its session wrote this as it gave it back
            // (`Recorder::ending`): then the run is no longer recorded here.
            RunEvent::RunFinished(outcome) => {
                recorder.record(run, ended(outcome));
                recorder.end(run);
            }
            // The start (the header waits for the first record), streamed
            // text, tool start and finish lines (the tool path
            // records calls and results whole), continuations (the ended
            // record names the successor) and a child's progress (its own
            // trajectory records it) add nothing.
            _ => {}
        }
    }
}

impl Drop for TrajectoryTee<'_> {
    fn drop(&mut self) {
        // A run always ends with RunFinished; this only matters if it was
        // dropped mid-run (its future cancelled).
        self.recorder.end(self.run_id);
    }
}
