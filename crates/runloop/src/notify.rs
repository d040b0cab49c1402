//! Change notifications: what clients subscribe to so they can redraw.

use seri_core::SessionId;
use tokio::sync::broadcast;

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
