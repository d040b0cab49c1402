//! [`Approvals`]: questions as values. A tool that needs a person's yes
//! parks its call here; whoever listens (the REPL's prompt, a server's
//! WebSocket clients) hears a [`PendingApproval`] and answers it with
//! [`crate::Command::Approve`]. Nobody answering within the timeout is a
//! no, recorded as a denial like any other.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use seri_core::SessionId;
use seri_tools::{ApprovalRequest, Approver, CallRef, Decision};
use tokio::sync::{broadcast, oneshot};

/// A question waiting for its answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingApproval {
    /// The call that asks.
    pub call: CallRef,
    /// What it wants to do.
    pub request: ApprovalRequest,
}

/// The questions of one runtime's runs, and who hears them. Cheap to clone;
/// clones share the questions.
#[derive(Clone)]
pub struct Approvals {
    inner: Arc<Hub>,
}

struct Hub {
    waiting: Mutex<HashMap<CallRef, (ApprovalRequest, oneshot::Sender<Decision>)>>,
    asked: broadcast::Sender<PendingApproval>,
    /// Each question that stopped waiting (answered, refused or timed out).
    settled: broadcast::Sender<CallRef>,
    timeout: Option<Duration>,
    /// Tools a person allowed for the rest of a session.
    remembered: Mutex<HashSet<(SessionId, String)>>,
}

impl std::fmt::Debug for Approvals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Approvals").field("timeout", &self.inner.timeout).finish_non_exhaustive()
    }
}

impl Approvals {
    /// Questions that wait for `timeout` at most (`None`: until answered).
    pub fn new(timeout: Option<Duration>) -> Self {
        let (asked, _) = broadcast::channel(64);
        let (settled, _) = broadcast::channel(64);
        Self {
            inner: Arc::new(Hub {
                waiting: Mutex::new(HashMap::new()),
                asked,
                settled,
                timeout,
                remembered: Mutex::new(HashSet::new()),
            }),
        }
    }

    /// Hears every question asked from now on. A question asked while
    /// nobody listens is a no at once: nobody could have answered it.
    pub fn subscribe(&self) -> broadcast::Receiver<PendingApproval> {
        self.inner.asked.subscribe()
    }

    /// Hears each question that stops waiting from now on: answered here,
    /// or timed out (a server tells its peers, which list it no more).
    pub fn subscribe_settled(&self) -> broadcast::Receiver<CallRef> {
        self.inner.settled.subscribe()
    }

    /// The questions waiting now, for a client that just arrived.
    pub fn waiting(&self) -> Vec<PendingApproval> {
        let waiting = self.inner.waiting.lock().unwrap_or_else(PoisonError::into_inner);
        waiting
            .iter()
            .map(|(call, (request, _))| PendingApproval { call: call.clone(), request: request.clone() })
            .collect()
    }

    /// Answers the question about `call`. `false`: none waits.
    /// [`Decision::AllowForSession`] also allows that tool for the rest of
    /// the call's session, without asking.
    pub fn answer(&self, call: &CallRef, decision: Decision) -> bool {
        let answer = self.inner.waiting.lock().unwrap_or_else(PoisonError::into_inner).remove(call);
        match answer {
            Some((request, reply)) => {
                if decision == Decision::AllowForSession {
                    let mut remembered = self.inner.remembered.lock().unwrap_or_else(PoisonError::into_inner);
                    remembered.insert((call.session_id, request.tool));
                }
                reply.send(decision).is_ok()
            }
            None => false,
        }
    }
}

#[async_trait]
impl Approver for Approvals {
    async fn approve(&self, request: &ApprovalRequest) -> Decision {
        // A question no run loop call names cannot be answered by anyone.
        let Some(call) = request.call.clone() else { return Decision::Deny };
        let key = (call.session_id, request.tool.clone());
        if !request.each_time && self.inner.remembered.lock().unwrap_or_else(PoisonError::into_inner).contains(&key) {
            return Decision::Allow;
        }
        let (reply, answer) = oneshot::channel();
        self.inner
            .waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(call.clone(), (request.clone(), reply));
        let pending = PendingApproval { call: call.clone(), request: request.clone() };
        if self.inner.asked.send(pending).is_err() {
            self.inner.waiting.lock().unwrap_or_else(PoisonError::into_inner).remove(&call);
            return Decision::Deny;
        }
        let decision = match self.inner.timeout {
            Some(limit) => tokio::time::timeout(limit, answer).await.ok().and_then(Result::ok),
            None => answer.await.ok(),
        };
        // Timed out or dropped: forget the question, and it is a no.
        self.inner.waiting.lock().unwrap_or_else(PoisonError::into_inner).remove(&call);
        // However it ended, it waits no more.
        let _ = self.inner.settled.send(call);
        decision.unwrap_or(Decision::Deny)
    }

    fn answer(&self, call: &CallRef, decision: Decision) -> bool {
        Approvals::answer(self, call, decision)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(n: u8) -> CallRef {
        CallRef {
            session_id: SessionId::from_bytes([1; 16]),
            run_id: None,
            call_id: seri_core::ToolCallId(format!("call_{n}")),
        }
    }

    /// "Allow for this session" answers the tool's next questions, but not
    /// one marked `each_time` (a command seri cannot see into, under a
    /// bash deny rule): that one is asked again.
    #[tokio::test]
    async fn allow_for_the_session_does_not_answer_a_question_asked_each_time() {
        let approvals = Approvals::new(Some(Duration::from_millis(200)));
        let mut asked = approvals.subscribe();
        let request = |n: u8, each_time: bool| ApprovalRequest {
            call: Some(call(n)),
            arguments: serde_json::Value::Null,
            each_time,
            ..ApprovalRequest::new("bash", "git status")
        };
        let first = {
            let approvals = approvals.clone();
            tokio::spawn(async move { approvals.approve(&request(1, false)).await })
        };
        let pending = asked.recv().await.unwrap();
        assert!(approvals.answer(&pending.call, Decision::AllowForSession));
        assert_eq!(first.await.unwrap(), Decision::AllowForSession);
        assert_eq!(approvals.approve(&request(2, false)).await, Decision::Allow, "remembered");
        // Asked, and nobody answers within the timeout: a no.
        assert_eq!(approvals.approve(&request(3, true)).await, Decision::Deny, "asked again, not remembered");
        assert_eq!(asked.recv().await.unwrap().call, call(3));
    }
}
