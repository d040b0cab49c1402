//! Settling: a call a stopped run left without a result gets one (a
//! replayed continuation, or an interrupted result) before anything else
//! is appended to its session, and only by a holder of the session's
//! lease. A person's message outside a run and `recover` both settle first.

use seri_core::{Event, EventBody, EventId, Message, Seq, SessionId, ToolResult};
use seri_prompt::ContinuedBeforeStop;
use seri_prompt::text::results;
use seri_store::SeqRange;
use seri_tools::{ContinueSession, Tool};

use super::Runtime;
use crate::context::unanswered_calls;
use crate::continuation::{self, replay};
use crate::error::RunError;
use crate::protocol::ContinuedTo;

impl Runtime {
    /// Appends a message a person typed and returns its event id, when no
    /// run holds the session; a busy session is [`RunError::Busy`]. (A
    /// message that should wait for a busy session goes in
    /// [`RunSpec::message`](crate::RunSpec::message): the run posts it once it
    /// holds the session.)
    ///
    /// Tool calls a stopped run left without a result are settled first, in
    /// the same transaction, so the message never lands between a call and
    /// its result.
    pub fn post_user_message(&self, session_id: SessionId, message: Message) -> Result<EventId, RunError> {
        let lease = self.inner.leases.try_now(session_id)?;
        let (events, _) = self.settle_then_append(session_id, Some(EventBody::Message(message)))?;
        lease.release(|_| Ok(()))?;
        self.inner.notifier.session_changed(session_id);
        events.last().map(|e| e.id).ok_or(RunError::NothingAppended { session_id })
    }

    /// What opening a session finds left over from a process that stopped:
    /// once nobody holds the session, the calls its last run left without a
    /// result are settled, and a continuation it committed is replayed. The
    /// successor is returned when its run was lost (it holds nothing but its
    /// first two events), so the caller answers its waiting message there
    /// and follows it, whichever end of the continuation was opened.
    ///
    /// A session a live run holds has nothing to recover: `Ok(None)`.
    pub fn recover(&self, session_id: SessionId) -> Result<Option<ContinuedTo>, RunError> {
        let lease = match self.inner.leases.try_now(session_id) {
            Ok(lease) => lease,
            Err(RunError::Busy { .. }) => return Ok(None),
            Err(e) => return Err(e),
        };
        let (settled, replayed) = self.settle_then_append(session_id, None)?;
        lease.release(|_| Ok(()))?;
        if !settled.is_empty() {
            self.inner.notifier.session_changed(session_id);
        }
        // Reads, like the writes before them, wait out a brief outage.
        let leases = &self.inner.leases;
        // The replayed continuation, or one whose tool result was written
        // before the process stopped: either way the newest edge's successor
        // may never have run.
        let successor = match replayed {
            Some(continued) => Some(continued),
            None => leases.read_patiently("finding a session's successor", || {
                self.agent_store().read(|r| crate::continuation::newest_successor(r, session_id))
            })?,
        };
        match successor {
            Some(continued)
                if leases.read_patiently("reading a successor", || {
                    continuation::successor_unstarted(&self.agent_store(), &continued)
                })? =>
            {
                Ok(Some(continued))
            }
            _ => Ok(None),
        }
    }

    /// Settles tool calls a stopped run left without a result, then appends
    /// `then`, all in one transaction. The caller holds the session's lease,
    /// so any call without a result belongs to a run that is gone. A `continue_session` whose successor
    /// exists is replayed (its successor is returned, so a run can end its
    /// turn); any other call is reported as interrupted, since it may or may
    /// not have taken effect. Without this the pairing check would refuse
    /// the session forever.
    pub(crate) fn settle_then_append(
        &self,
        session_id: SessionId,
        then: Option<EventBody>,
    ) -> Result<(Vec<Event>, Option<ContinuedTo>), RunError> {
        let (events, continued, _) = self.settle_then_post(session_id, then, None)?;
        Ok((events, continued))
    }

    /// [`Runtime::settle_then_append`] of a shared-queue job's message
    /// (`job`: its id, and the run posting it): in the same transaction the
    /// job is read, and a message it posted already (a server whose claim
    /// lapsed while it answered) is returned instead of appending `then`
    /// again; otherwise the message appended is recorded as the job's. The
    /// posting and its record commit together, so a job's message is posted
    /// once whoever runs it. A store out of reach meanwhile is waited out
    /// ([`crate::lease::Leases::write_patiently`]): a brief outage delays
    /// the message instead of failing its run, and never posts it twice.
    pub(crate) fn settle_then_post(
        &self,
        session_id: SessionId,
        then: Option<EventBody>,
        job: Option<(&str, seri_core::RunId)>,
    ) -> Result<Settled, RunError> {
        let leases = &self.inner.leases;
        let owner = leases.owner();
        let settled = leases.write_patiently(
            "settling and posting a message",
            |tx| {
                tx.require_lease(session_id, owner)?;
                settle_then_post_in(tx, session_id, then.clone(), job)
            },
            |(events, _, _): &Settled| events.first().map(|e| e.id),
        )?;
        Ok(settled)
    }
}

/// The settling and posting of [`Runtime::settle_then_post`], in the
/// caller's transaction, which holds the session's lease: its own, or the
/// one that takes the lease (a job's message is posted there).
pub(crate) fn settle_then_post_in(
    tx: &mut seri_store::WriteTx<'_>,
    session_id: SessionId,
    then: Option<EventBody>,
    job: Option<(&str, seri_core::RunId)>,
) -> Result<Settled, seri_store::StoreError> {
    let posted_before = match job {
        Some((id, _)) => tx.job_posted_event(id)?,
        None => None,
    };
    let reader = tx.read();
    // Unanswered calls can only belong to the newest assistant turn,
    // and its calls follow its message: read from there, however
    // many calls the turn made.
    let tail_from = reader.newest_assistant_message(session_id)?.map_or(Seq::FIRST, |e| e.seq);
    let tail = reader.events(session_id, SeqRange::starting_at(tail_from))?;
    let mut bodies = Vec::new();
    let mut continued = None;
    for call in unanswered_calls(&tail) {
        let replayed = if call.name == ContinueSession.name() { replay(&reader, session_id, &call)? } else { None };
        let content = match &replayed {
            Some(c) => ContinuedBeforeStop { session_id: c.session_id, title: &c.title }.to_string(),
            None => results::INTERRUPTED.to_owned(),
        };
        let is_error = replayed.is_none();
        continued = continued.or(replayed);
        bodies.push(EventBody::ToolResult(ToolResult {
            tool_call_id: call.id.clone(),
            name: call.name.clone(),
            content,
            is_error,
            facts: None,
        }));
    }
    let posting = posted_before.is_none() && then.is_some();
    bodies.extend(then.filter(|_| posting));
    let events = if bodies.is_empty() { Vec::new() } else { tx.append(session_id, bodies)? };
    if posting
        && let Some((id, run)) = job
        && let Some(message) = events.last()
    {
        tx.record_job_posted(id, message.id, Some(run))?;
    }
    Ok((events, continued, posted_before))
}

/// What settling found and appended: the events appended (the settled
/// results, then the message), the successor of a continuation replayed,
/// and the message a job posted before (then not posted again).
pub(crate) type Settled = (Vec<Event>, Option<ContinuedTo>, Option<EventId>);
