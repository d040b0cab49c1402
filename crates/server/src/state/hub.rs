//! Routing one agent's frames to the WebSocket clients that follow them.
//!
//! Each socket joins the [`Hub`] with a bounded queue of its own and says
//! which sessions (and whether the account) it follows. A frame goes only
//! to the queues of the sockets that follow what it is about, encoded once
//! and shared: the cost of a frame grows with the sockets that want it,
//! never with the ones that do not.
//!
//! A socket whose own queue is full is not dropped and holds nothing up:
//! the frame is left out for it and the hub remembers what it missed (the
//! session, or the account). Once the socket has written what it had
//! queued, it sends a `resync` frame for each, and the client reads again
//! what it missed from the session's events (by `seq`). A burst on
//! sessions a socket does not follow never reaches its queue, so it never
//! costs that socket anything.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};

use axum::extract::ws::Utf8Bytes;
use seri_core::SessionId;
use tokio::sync::{Notify, mpsc};

use crate::protocol::ServerFrame;

/// What a frame is, for routing it to the clients that asked for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FrameKind {
    SessionChange,
    AccountChange,
    RunEvent,
    Approval,
}

/// A frame on its way to the WebSocket clients of one agent, encoded once
/// (each socket's copy shares the bytes).
#[derive(Debug, Clone)]
pub(crate) struct HubFrame {
    pub(crate) kind: FrameKind,
    pub(crate) session: Option<SessionId>,
    pub(crate) text: Utf8Bytes,
}

impl HubFrame {
    pub(crate) fn new(kind: FrameKind, session: Option<SessionId>, frame: &ServerFrame) -> Option<Self> {
        let text = serde_json::to_string(frame).ok()?;
        Some(Self { kind, session, text: text.into() })
    }
}

/// The sockets of one agent and what each follows.
#[derive(Debug, Default)]
pub(crate) struct Hub {
    routes: Mutex<Routes>,
}

#[derive(Debug, Default)]
struct Routes {
    next: u64,
    sockets: HashMap<u64, Arc<Follower>>,
    /// The sockets following each session.
    sessions: HashMap<SessionId, HashSet<u64>>,
    /// The sockets following the account.
    account: HashSet<u64>,
}

/// One socket's side of the hub: its queue, and what it missed when the
/// queue was full.
#[derive(Debug)]
pub(crate) struct Follower {
    queue: mpsc::Sender<Utf8Bytes>,
    missed: Mutex<Missed>,
    /// Rung when something was missed: the socket's writer may be waiting
    /// on an empty queue.
    pub(crate) wake: Notify,
}

/// What one socket missed while its queue was full.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Missed {
    /// Sessions whose frames were left out.
    pub(crate) sessions: BTreeSet<SessionId>,
    /// Whether account frames were left out.
    pub(crate) account: bool,
}

impl Missed {
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.sessions.is_empty() && !self.account
    }
}

impl Follower {
    /// What was missed since last asked, now forgotten.
    pub(crate) fn take_missed(&self) -> Missed {
        std::mem::take(&mut *self.missed.lock().unwrap_or_else(PoisonError::into_inner))
    }

    fn offer(&self, frame: &HubFrame) {
        if let Err(mpsc::error::TrySendError::Full(_)) = self.queue.try_send(frame.text.clone()) {
            {
                let mut missed = self.missed.lock().unwrap_or_else(PoisonError::into_inner);
                match frame.session {
                    Some(session) => missed.sessions.insert(session),
                    None => std::mem::replace(&mut missed.account, true),
                };
            }
            self.wake.notify_one();
        }
    }
}

/// A socket's place in the hub, left when it drops.
#[derive(Debug)]
pub(crate) struct Membership {
    hub: Arc<Hub>,
    id: u64,
    pub(crate) follower: Arc<Follower>,
}

impl Membership {
    /// Follows `session` (or stops following it).
    pub(crate) fn follow(&self, session: SessionId, follow: bool) {
        let mut routes = self.hub.lock();
        if follow {
            routes.sessions.entry(session).or_default().insert(self.id);
        } else if let Some(ids) = routes.sessions.get_mut(&session) {
            ids.remove(&self.id);
            if ids.is_empty() {
                routes.sessions.remove(&session);
            }
        }
    }

    /// Follows the account (or stops following it).
    pub(crate) fn follow_account(&self, follow: bool) {
        let mut routes = self.hub.lock();
        if follow {
            routes.account.insert(self.id);
        } else {
            routes.account.remove(&self.id);
        }
    }
}

impl Drop for Membership {
    fn drop(&mut self) {
        let mut routes = self.hub.lock();
        routes.sockets.remove(&self.id);
        routes.account.remove(&self.id);
        routes.sessions.retain(|_, ids| {
            ids.remove(&self.id);
            !ids.is_empty()
        });
    }
}

impl Hub {
    fn lock(&self) -> std::sync::MutexGuard<'_, Routes> {
        self.routes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A new socket, with a queue of `capacity` frames; it follows nothing yet.
    pub(crate) fn join(self: &Arc<Self>, capacity: usize) -> (Membership, mpsc::Receiver<Utf8Bytes>) {
        let (queue, frames) = mpsc::channel(capacity.max(1));
        let follower = Arc::new(Follower { queue, missed: Mutex::default(), wake: Notify::new() });
        let mut routes = self.lock();
        let id = routes.next;
        routes.next += 1;
        routes.sockets.insert(id, follower.clone());
        (Membership { hub: self.clone(), id, follower }, frames)
    }

    /// Whether any socket would receive a frame about `session` of `kind`:
    /// when none would, the frame need not be encoded.
    pub(crate) fn wanted(&self, kind: FrameKind, session: Option<SessionId>) -> bool {
        let routes = self.lock();
        let of_session = || session.is_some_and(|s| routes.sessions.contains_key(&s));
        match kind {
            FrameKind::AccountChange => !routes.account.is_empty(),
            FrameKind::SessionChange => !routes.account.is_empty() || of_session(),
            FrameKind::RunEvent | FrameKind::Approval => of_session(),
        }
    }

    /// Whether no socket is joined.
    pub(crate) fn is_empty(&self) -> bool {
        self.lock().sockets.is_empty()
    }

    /// Puts `frame` in the queue of each socket that follows what it is about.
    pub(crate) fn send(&self, frame: &HubFrame) {
        let routes = self.lock();
        let of_session = frame.session.and_then(|s| routes.sessions.get(&s));
        let offer = |id: &u64| {
            if let Some(follower) = routes.sockets.get(id) {
                follower.offer(frame);
            }
        };
        match frame.kind {
            FrameKind::AccountChange => routes.account.iter().for_each(offer),
            FrameKind::SessionChange => {
                routes.account.iter().for_each(offer);
                // A socket following both hears it once.
                of_session.into_iter().flatten().filter(|id| !routes.account.contains(id)).for_each(offer);
            }
            FrameKind::RunEvent | FrameKind::Approval => of_session.into_iter().flatten().for_each(offer),
        }
    }
}

#[cfg(test)]
mod tests;
