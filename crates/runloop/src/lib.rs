//! seri's run loop: the engine that turns events into model requests and
//! model output back into events.
//!
//! - [`Runtime`] owns the store, the provider, the tool registry and the
//!   settings. [`Runtime::run`] executes one run: build the request from
//!   events ([`context`]), call the provider, record the assistant turn, run
//!   each tool call and record its result, repeat until the model ends its
//!   turn, the turn budget runs out, the run is cancelled, or the session
//!   continues into a successor.
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

pub mod access;
mod checkpoint;
pub mod compaction;
pub mod context;
pub mod continuation;
pub mod error;
pub mod notify;
pub mod protocol;
pub mod queue;
pub mod rewind;
mod runtime;
pub mod trajectory;

pub use access::StoreAccess;
pub use compaction::{CompactionError, MAX_SUMMARY_REQUESTS, SUMMARY_OUTPUT_RESERVE_TOKENS, compacted_line};
pub use continuation::{ContinuationRefused, MAX_SESSION_CONTINUATIONS_PER_SESSION};
pub use error::RunError;
pub use notify::{AccountChangeReason, Notification, Notifier};
pub use protocol::{ChildProgress, ContinuedTo, Lane, Quiet, RunEvent, RunObserver, RunOutcome, RunSpec, RunStatus};
pub use rewind::{
    FileRestore, REWIND_LIST_TURNS, RewindError, RewindPlan, RewindReport, RewindScope, RewindTurn, RewindTurns,
};
pub use runtime::{CHILD_MAX_TURNS, DEFAULT_MAX_TURNS, MAX_PARALLEL_CHILDREN, Runtime, RuntimeParts, RuntimeSettings};
pub use trajectory::{TRAJECTORY_ENV, TrajectoryFacts};
