//! seri's run loop: the engine that turns events into model requests and
//! model output back into events.
//!
//! - [`Runtime`] owns the store, the provider, the tool registry and the
//!   settings. [`Runtime::run`] executes one run: build the request from
//!   events ([`context`]), call the provider, record the assistant turn, run
//!   each tool call and record its result, repeat until the model ends its
//!   turn, the turn budget runs out, the run is cancelled, or the session
//!   continues into a successor.
//! - [`command`]: the inbound protocol. Every client (the REPL, headless
//!   mode, the server) drives the runtime with the same closed [`Command`]s
//!   through one [`Runtime::submit`]: send a message, answer a waiting one,
//!   compact, rewind, recover, cancel, answer an approval.
//! - [`approvals`]: a tool's question to a person is a value
//!   ([`PendingApproval`]) that waits until a client answers it with
//!   [`Command::Approve`], or until its time runs out (a refusal).
//! - [`protocol`]: what a caller hears while a run runs ([`RunEvent`]) and
//!   how it ended ([`RunOutcome`]).
//! - [`continuation`]: the runtime behind `continue_session`: replay, cap,
//!   projection, the fits-the-window check, and the atomic creation of the
//!   successor, its edge and its first two events.
//! - [`compaction`]: the compact strategy: the automatic check before every
//!   model call, the overflow retry, and `/compact`.
//! - Child runs: a turn's `delegate` calls are decided first and park the
//!   turn; each child runs in its own session linked to the parent run, with
//!   its own tools, provider and turn budget ([`CHILD_MAX_TURNS`]), at most
//!   [`MAX_PARALLEL_CHILDREN`] at a time; their answers are recorded in call
//!   order, and a child's failure is the parent's error result, never the
//!   parent's failure. Progress reaches the observer as
//!   [`RunEvent::ChildProgress`].
//! - [`lease`]: a run owns its session while it runs. It takes the
//!   session's lease before it reads the history and gives it back after
//!   its last append; a second run waits in the session's queue
//!   (interactive first, across processes) or, told not to wait, fails
//!   naming the holder. Calls are settled as interrupted only once their
//!   run's holder is gone.
//! - [`jobs`]: the shared queue of runs, worked: a message a server
//!   accepts is a job it claims and runs, renewing its claim; a job whose
//!   claimant stopped is taken over by another process on the database.
//! - [`notify`]: `session-change` and `account-change` notifications.
//! - [`queue`]: runs wait in lanes, interactive first.
//! - [`trajectory`]: each run's local recording (on by default): a header
//!   of the settings in force, then tool calls and results, checkpoints,
//!   denials, checks, edit outcomes, usage, retries and how it ended.
//!   Recording never fails a run.
//! - [`rewind`]: `/rewind` to before a turn, for the conversation (an
//!   appended `context_rewound` event), the files (from the checkpoints
//!   taken before `write_file` and `edit` changed them), or both; never
//!   across a compaction, and never over a file changed outside seri's
//!   tools without being told to.
//!
//! The run loop never writes SQL and never assembles prompt text: the store
//! appends, the prompt crate renders, the projection crate compiles. Every
//! request is checked for tool-call pairing before it is sent, and every
//! tool call gets a result, a cancelled one if need be, so a transcript is
//! never left in a state a provider would refuse forever.
//!
//! # Example
//!
//! One task on a scripted model, over a store in memory
//! (`cargo run -p seri-runloop --example scripted_turn` adds a tool of its
//! own and prints every [`RunEvent`]):
//!
//! ```
//! use std::sync::Arc;
//!
//! use seri_core::{AgentId, FrozenPrompt, Message, ModelRef};
//! use seri_providers::ConfiguredProvider;
//! use seri_providers::script::{Script, ScriptReply, ScriptTurn, ScriptedProvider};
//! use seri_runloop::{Lane, Quiet, RunSpec, RunStatus, Runtime, RuntimeParts, RuntimeSettings};
//! use seri_store::Store;
//! use seri_tools::{PermissionPolicy, Permissions, RunKind, ToolRegistry};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let reply = ScriptReply { text: "Hello!".into(), ..ScriptReply::default() };
//! let script = Script::from_turns("inline", vec![ScriptTurn::Reply(reply)]);
//! let runtime = Runtime::new(RuntimeParts {
//!     store: Arc::new(Store::open_in_memory()?),
//!     agent: AgentId::local(),
//!     provider: ConfiguredProvider {
//!         model: ModelRef::new("script", "scripted"),
//!         provider: Arc::new(ScriptedProvider::new(script)),
//!     },
//!     tools: ToolRegistry::with_session_verbs(),
//!     memory_dir: std::env::temp_dir().join("memory"),
//!     permissions: Permissions::headless(PermissionPolicy::new()),
//!     settings: RuntimeSettings::default(),
//!     session_prompts: None,
//! });
//! let prompt = FrozenPrompt { text: "Be brief.".into(), files: Vec::new(), tools: Vec::new() };
//! let session = runtime.create_session(&std::env::temp_dir().to_string_lossy(), prompt)?.id;
//! let message = runtime.post_user_message(session, Message::user("Say hello"))?;
//! runtime.enqueue(RunSpec {
//!     session_id: session,
//!     kind: RunKind::Interactive,
//!     lane: Lane::Interactive,
//!     user_event_ids: vec![message],
//!     message: None,
//!     max_turns: 10,
//! });
//!
//! let (_cancel, cancelled) = tokio::sync::watch::channel(false);
//! let tokio = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
//! let outcomes = tokio.block_on(runtime.drain(&Quiet, &cancelled));
//! assert_eq!(outcomes[0].status, RunStatus::Succeeded);
//! assert_eq!(outcomes[0].result.as_deref(), Some("Hello!"));
//! # Ok(()) }
//! ```

pub mod access;
pub mod approvals;
mod checkpoint;
pub mod command;
pub mod compaction;
pub mod context;
pub mod continuation;
pub mod error;
pub mod jobs;
pub mod lease;
pub mod notify;
pub mod protocol;
pub mod queue;
pub mod recalls;
pub mod rewind;
pub mod rules;
mod runtime;
pub mod shell_hooks;
pub mod trajectory;

pub use access::StoreAccess;
pub use approvals::{Approvals, PendingApproval};
pub use command::{Command, CommandError, Submitted};
pub use compaction::{
    COMPACTION_RETRY_GROWTH_PERCENT, CompactionError, MAX_SUMMARY_REQUESTS, NOT_ON_CONTINUE,
    SUMMARY_OUTPUT_RESERVE_TOKENS, compacted_line,
};
pub use continuation::{ContinuationRefused, MAX_SESSION_CONTINUATIONS_PER_SESSION};
pub use error::RunError;
pub use lease::{Busy, BusyPolicy, LEASE_TTL, STORE_OUTAGE_PATIENCE};
pub use notify::{AccountChangeReason, AgentChanges, ChangeFeed, Notification, Notifier};
pub use protocol::{
    ChildProgress, ContinuedTo, JobEnding, Lane, Quiet, RunEvent, RunObserver, RunOutcome, RunSpec, RunStatus,
};
pub use rewind::{
    FileRestore, REWIND_LIST_TURNS, RewindError, RewindPlan, RewindReport, RewindScope, RewindTurn, RewindTurns,
};
pub use rules::{GlobRule, GlobRuleError, GlobRules};
pub use runtime::{
    CHILD_MAX_TURNS, ContextPart, ContextReport, DEFAULT_MAX_TURNS, Generation, MAX_PARALLEL_CHILDREN, Runtime,
    RuntimeParts, RuntimeSettings, SessionPromptError, SessionPrompts, folder_refusal, measure_request,
};
pub use trajectory::{TRAJECTORY_ENV, TrajectoryFacts};
