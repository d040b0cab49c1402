//! Change notifications: what clients subscribe to so they can redraw.
//! [`ChangeFeed`] is the one feed a server hears them from, on either
//! backend: the store's committed changes, folded into what changed per agent.

use std::collections::BTreeMap;

use seri_core::{AgentId, RunId, SessionId};
use seri_store::{ChangeKind, Store, StoreChange};
use tokio::sync::{broadcast, mpsc};

/// Why an account-wide change was announced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AccountChangeReason {
    /// A session was created.
    SessionCreated,
    /// A session's title, description, events or links changed.
    SessionUpdated,
    /// A session continued into a successor.
    SessionContinued,
}

impl AccountChangeReason {
    /// Why a change the store committed is account-wide: none for an
    /// append (only its session changed).
    pub const fn of(change: ChangeKind) -> &'static [AccountChangeReason] {
        match change {
            ChangeKind::Created => &[AccountChangeReason::SessionCreated],
            ChangeKind::Continued => &[AccountChangeReason::SessionUpdated, AccountChangeReason::SessionContinued],
            ChangeKind::Updated | ChangeKind::RunInterrupted | ChangeKind::JobDone | ChangeKind::JobQueued => &[],
        }
    }

    /// The wire name, e.g. `session-continued`.
    pub const fn as_str(self) -> &'static str {
        match self {
            AccountChangeReason::SessionCreated => "session-created",
            AccountChangeReason::SessionUpdated => "session-updated",
            AccountChangeReason::SessionContinued => "session-continued",
        }
    }
}

/// One notification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notification {
    /// `session-change`: one session changed.
    SessionChange {
        /// The session.
        session_id: SessionId,
    },
    /// `account-change`: the list of sessions changed.
    AccountChange {
        /// Why.
        reasons: Vec<AccountChangeReason>,
        /// The sessions it is about (a continuation: both ends).
        session_ids: Vec<SessionId>,
    },
}

/// The sending side, shared by everything that changes sessions.
#[derive(Debug, Clone)]
pub struct Notifier {
    sender: broadcast::Sender<Notification>,
}

impl Notifier {
    /// A notifier whose subscribers each buffer up to `capacity` notifications.
    pub fn new(capacity: usize) -> Self {
        Self { sender: broadcast::channel(capacity.max(1)).0 }
    }

    /// A new subscription. A subscriber that falls behind misses the oldest
    /// notifications (and is told so by the channel), never blocks a run.
    pub fn subscribe(&self) -> broadcast::Receiver<Notification> {
        self.sender.subscribe()
    }

    /// Announces a change; nobody listening is fine.
    pub fn send(&self, notification: Notification) {
        let _ = self.sender.send(notification);
    }

    /// `session-change` for a session.
    pub fn session_changed(&self, session_id: SessionId) {
        self.send(Notification::SessionChange { session_id });
    }
}

impl Default for Notifier {
    fn default() -> Self {
        Self::new(256)
    }
}

/// The store's change feed ([`Store::subscribe_changes`]: on SQLite this
/// process's commits, on PostgreSQL every process's) as notifications, in
/// batches: what a server turns into `session-change` and `account-change`
/// frames, the same way on both backends.
#[derive(Debug)]
pub struct ChangeFeed {
    changes: mpsc::UnboundedReceiver<StoreChange>,
}

/// What one batch of the feed says about one agent's sessions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentChanges {
    /// Each session that changed, once, in the order first heard.
    pub sessions: Vec<SessionId>,
    /// The account-wide changes, in order: why, and about which sessions
    /// (a continuation: both ends).
    pub accounts: Vec<(Vec<AccountChangeReason>, Vec<SessionId>)>,
    /// Runs a stopped process left `running`, recorded `interrupted` now,
    /// with their sessions, in the order heard: their `run_finished` was
    /// never sent by the process that ran them.
    pub interrupted: Vec<(SessionId, RunId)>,
}

impl ChangeFeed {
    /// Every change committed to `store` from now on. Dropping the feed
    /// stops listening.
    pub fn new(store: &Store) -> Self {
        Self { changes: store.subscribe_changes() }
    }

    /// The changes committed since the last batch, at least one (a burst of
    /// changes to one session, as a streaming run appends, names it once),
    /// by agent; `None` once the store stopped telling.
    pub async fn next_batch(&mut self) -> Option<BTreeMap<AgentId, AgentChanges>> {
        let first = self.changes.recv().await?;
        let mut batch = vec![first];
        while let Ok(change) = self.changes.try_recv() {
            batch.push(change);
        }
        Some(Self::fold(batch))
    }

    /// What `batch` says, agent by agent (a pure fold).
    pub fn fold(batch: impl IntoIterator<Item = StoreChange>) -> BTreeMap<AgentId, AgentChanges> {
        let mut agents: BTreeMap<AgentId, AgentChanges> = BTreeMap::new();
        for change in batch {
            // A job's change is the queue's: no view of a session changed.
            if change.change.is_job() {
                continue;
            }
            let changes = agents.entry(change.agent.clone()).or_default();
            if change.change == ChangeKind::RunInterrupted {
                if let Some(run) = change.run
                    && !changes.interrupted.contains(&(change.session, run))
                {
                    changes.interrupted.push((change.session, run));
                }
                continue;
            }
            let touched: Vec<SessionId> = std::iter::once(change.session).chain(change.successor).collect();
            for session in &touched {
                if !changes.sessions.contains(session) {
                    changes.sessions.push(*session);
                }
            }
            let reasons = AccountChangeReason::of(change.change);
            if !reasons.is_empty() {
                changes.accounts.push((reasons.to_vec(), touched));
            }
        }
        agents
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_names_each_session_once_and_says_why_the_account_changed() {
        let (a, b, c) = (SessionId::v7(1, [1; 10]), SessionId::v7(2, [2; 10]), SessionId::v7(3, [3; 10]));
        let change = |agent: &str, session, change, successor| StoreChange {
            successor,
            ..StoreChange::of(AgentId(agent.into()), session, change)
        };
        let folded = ChangeFeed::fold([
            change("local", a, ChangeKind::Updated, None),
            change("other", c, ChangeKind::Created, None),
            change("local", b, ChangeKind::Created, None),
            change("local", a, ChangeKind::Updated, None),
            change("local", a, ChangeKind::Continued, Some(b)),
        ]);
        let local = &folded[&AgentId::local()];
        assert_eq!(local.sessions, [a, b]);
        assert_eq!(
            local.accounts,
            [
                (vec![AccountChangeReason::SessionCreated], vec![b]),
                (vec![AccountChangeReason::SessionUpdated, AccountChangeReason::SessionContinued], vec![a, b]),
            ]
        );
        let other = &folded[&AgentId("other".into())];
        assert_eq!((other.sessions.as_slice(), other.accounts.len()), (&[c][..], 1));
    }

    #[test]
    fn an_interrupted_run_is_named_with_its_session_and_a_job_change_is_no_session_change() {
        let a = SessionId::v7(1, [1; 10]);
        let run = RunId::from_bytes([7; 16]);
        let interrupted =
            StoreChange { run: Some(run), ..StoreChange::of(AgentId::local(), a, ChangeKind::RunInterrupted) };
        let job = StoreChange { job: Some("j1".into()), ..StoreChange::of(AgentId::local(), a, ChangeKind::JobDone) };
        let folded = ChangeFeed::fold([job, interrupted.clone(), interrupted]);
        let local = &folded[&AgentId::local()];
        assert_eq!(local.interrupted, [(a, run)]);
        assert!(local.sessions.is_empty() && local.accounts.is_empty(), "{local:?}");
    }
}
