//! Why a run ended early. Every variant becomes a `failed` (or `cancelled`)
//! run outcome with this message; none of them loses recorded events.

use seri_core::SessionId;

use crate::context::PairingError;

/// What ended a run before the model finished.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The session store failed.
    #[error(transparent)]
    Store(#[from] seri_store::StoreError),
    /// The provider failed after its retries.
    #[error(transparent)]
    Provider(#[from] seri_providers::ProviderError),
    /// The request would have broken tool-call pairing; it was not sent.
    #[error("refusing to send a request with broken tool pairing: {0}")]
    Pairing(#[from] PairingError),
    /// The session's working directory cannot be used.
    #[error("the session's working directory cannot be used: {0}")]
    Workspace(String),
    /// The working context could not be read.
    #[error("the working context cannot be built: {0}")]
    Context(String),
    /// The provider refused the request as too long, and continuing into a
    /// successor (what the runtime does when nothing else saves the turn)
    /// failed too.
    #[error("{}; continuing into a successor failed too: {}", .0.0, .0.1)]
    OverflowUncontinued(Box<(seri_providers::ProviderError, String)>),
    /// Someone cancelled the run.
    #[error("cancelled")]
    Cancelled,
    /// A hook answered `"continue": false`: the run stopped there, and its
    /// `stopReason` is what the person is told.
    #[error("a {event} hook stopped the run: {reason}")]
    HookStopped {
        /// The hook's event (`PreToolUse`, …).
        event: &'static str,
        /// Its `stopReason`.
        reason: String,
    },
    /// Another run holds the session, and the runtime was told not to wait
    /// (`--no-wait`).
    #[error("session {session_id} is busy: {holder}")]
    Busy {
        /// The session.
        session_id: SessionId,
        /// Who holds it, or how many wait.
        holder: Box<crate::lease::Busy>,
    },
    /// The session's lease was taken from this run (its heartbeat stopped
    /// for longer than the lease lasts, so another host took over).
    #[error("this run lost session {session_id} to another process; it stopped before writing more")]
    LeaseLost {
        /// The session.
        session_id: SessionId,
    },
    /// `/model` named a model of another provider than the runtime's.
    #[error(
        "{chosen} is not a model of {configured}, the provider seri started with; start seri with --provider to use it"
    )]
    OtherProvider {
        /// The model asked for, `provider/model`.
        chosen: String,
        /// The runtime's provider.
        configured: String,
    },
    /// The message a run was to answer (a server taking over a job whose
    /// server stopped) was overtaken: a later message was posted in its
    /// session before it was answered. Answering it now would answer out of
    /// turn, after a reply the model gave with both in view; the run fails
    /// instead, saying so, and the message stays in the history as sent.
    #[error(
        "the message was not answered: its run stopped before it finished, and a later message (seq {later}) was \
         posted in session {session_id} before it could be answered; send it again if it still needs an answer"
    )]
    Overtaken {
        /// The session.
        session_id: SessionId,
        /// The later message's seq.
        later: u64,
    },
    /// An append returned no event.
    #[error("the store appended nothing to session {session_id}")]
    NothingAppended {
        /// The session.
        session_id: SessionId,
    },
}
