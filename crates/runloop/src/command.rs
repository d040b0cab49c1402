//! The run loop's inbound protocol: a closed [`Command`] enum, submitted
//! through one [`Runtime::submit`](crate::Runtime::submit). Outbound it speaks [`RunEvent`]s; the
//! REPL, headless mode and the server all drive it with the same commands.
//!
//! A submission runs to its end: a message is posted once the session is
//! free, its run goes on until the model ends its turn, and a continuation
//! is followed into the successor, whose run answers the copied message,
//! because the submitter sent it. Each submission is cancelled on its own
//! ([`Command::Cancel`] names the session), so many clients of one runtime
//! never stop each other's runs.
//!
//! [`RunEvent`]: crate::RunEvent

use seri_core::{EventId, Message, SessionId};
use seri_tools::{CallRef, Decision};

use crate::error::RunError;
use crate::protocol::{ContinuedTo, Lane, RunOutcome};
use crate::rewind::{RewindError, RewindPlan, RewindReport};

/// Something a client asks of the runtime.
// A command is built once per request and moved once into `submit`, never
// kept in bulk: boxing the message would cost every caller a line for no
// memory saved.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// A person's (or a trigger's) message: posted once no other run holds
    /// the session, then answered, following a continuation. A message from
    /// a trigger (`Actor::Trigger`: automation, not a person) is answered by
    /// a script run, which never sees `continue_session` or the coding tools.
    Send {
        /// Where it goes.
        session_id: SessionId,
        /// The message.
        message: Message,
        /// Its queue: interactive when someone waits for the answer.
        lane: Lane,
        /// The turn budget; `None`: the runtime's.
        max_turns: Option<u32>,
    },
    /// Answers a message already in the session that no run answered (a
    /// successor whose run was lost), or whose answer a stopped run left
    /// unfinished (a server taking over a job): its calls are settled and
    /// the answer goes on from there. A message answered since is left alone.
    Answer {
        /// The session.
        session_id: SessionId,
        /// The message.
        event_id: EventId,
        /// The turn budget; `None`: the runtime's.
        max_turns: Option<u32>,
    },
    /// Compacts the oldest part of the working context now (`/compact`); on
    /// the continue strategy it compacts nothing and says why.
    Compact {
        /// The session.
        session_id: SessionId,
        /// Words that steer the recap.
        focus: String,
    },
    /// Carries out a rewind plan (`/rewind`).
    Rewind {
        /// The plan, from [`Runtime::plan_rewind`](crate::Runtime::plan_rewind).
        plan: RewindPlan,
        /// Overwrite files changed outside seri's tools.
        overwrite_changed: bool,
    },
    /// Settles what a stopped process left in a session, and names the
    /// successor whose waiting message is still to be answered.
    Recover {
        /// The session opened.
        session_id: SessionId,
    },
    /// Cancels every submission running in (or started for) a session.
    Cancel {
        /// The session.
        session_id: SessionId,
    },
    /// Answers a question a run asks ([`crate::Approvals`]).
    Approve {
        /// The call that asks.
        call: CallRef,
        /// Yes, yes for the rest of the session, or no.
        decision: Decision,
    },
}

/// What a command came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Submitted {
    /// The runs a message took, in the order they ended (the session's own,
    /// then each successor's it continued into).
    Ran(Vec<RunOutcome>),
    /// What `/compact` tells the person.
    Compacted(String),
    /// What a rewind did.
    Rewound(RewindReport),
    /// The successor whose waiting message is to be answered, if any.
    Recovered(Option<ContinuedTo>),
    /// Whether anything was running to cancel.
    Cancelled(bool),
    /// Whether the question was still waiting.
    Approved(bool),
}

/// Why a command could not be carried out.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// The run loop failed before a run could start, or the store did.
    #[error(transparent)]
    Run(#[from] RunError),
    /// A rewind was refused.
    #[error(transparent)]
    Rewind(#[from] RewindError),
}
