//! The inbound protocol: every client drives the runtime with the same
//! `Command`s through `Runtime::submit`. A message is answered (and a
//! continuation followed), a question a tool asks is a value answered with
//! `Command::Approve` (or refused when nobody answers in time), and
//! `Command::Cancel` stops the submission in that session and no other.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use seri_core::{AgentId, EventBody, Message};
use seri_runloop::{Approvals, Command, Lane, Quiet, RunStatus, Submitted};
use seri_tools::{PermissionPolicy, Permissions};

use crate::support::{Harness, Options, Waits, call, ran, send, text};

fn asking(approvals: &Approvals) -> Options {
    Options {
        permissions: Some(Permissions::interactive(PermissionPolicy::new(), Arc::new(approvals.clone()))),
        ..Options::default()
    }
}

#[tokio::test]
async fn a_sent_message_is_posted_answered_and_a_continuation_followed() {
    let h = Harness::new(json!([
        crate::continuation::continue_call("c1", "topic_change"),
        text("Answered in the successor.")
    ]));
    let outcomes = ran(h.runtime.submit(send(h.session, "New topic: a hotel in Lisbon."), &Quiet).await.unwrap());
    assert_eq!(outcomes.len(), 2, "{outcomes:?}");
    let successor = outcomes[0].continued_to.clone().unwrap();
    assert_eq!(outcomes[1].session_id, successor.session_id);
    assert_eq!(outcomes[1].result.as_deref(), Some("Answered in the successor."));
}

#[tokio::test]
async fn a_question_is_a_value_answered_with_approve() {
    let approvals = Approvals::new(None);
    let h = Harness::with(
        json!([call("b1", "bash", json!({ "command": "echo approved" })), text("Ran it.")]),
        asking(&approvals),
    );
    let mut asked = approvals.subscribe();
    let runtime = h.runtime.clone();
    let answerer = tokio::spawn(async move {
        let pending = asked.recv().await.unwrap();
        assert_eq!(pending.request.tool, "bash");
        assert_eq!(pending.call.call_id.as_str(), "b1");
        assert!(pending.call.run_id.is_some(), "the question names its run");
        assert_eq!(approvals.waiting(), vec![pending.clone()], "a client arriving now sees it too");
        let answered = runtime
            .submit(Command::Approve { call: pending.call.clone(), decision: seri_tools::Decision::Allow }, &Quiet)
            .await;
        assert_eq!(answered.unwrap(), Submitted::Approved(true));
        let again =
            runtime.submit(Command::Approve { call: pending.call, decision: seri_tools::Decision::Deny }, &Quiet).await;
        assert_eq!(again.unwrap(), Submitted::Approved(false), "a question is answered once");
    });
    let outcomes = ran(h.runtime.submit(send(h.session, "Run it."), &Quiet).await.unwrap());
    answerer.await.unwrap();
    assert_eq!(outcomes[0].result.as_deref(), Some("Ran it."));
    assert!(
        h.transcript(h.session).contains("tool result bash: exit code: 0\n  stdout:\n  approved"),
        "{}",
        h.transcript(h.session)
    );
}

#[tokio::test]
async fn a_question_nobody_answers_in_time_is_a_recorded_refusal() {
    // A short limit, so the test does not wait long; nothing is timed.
    let approvals = Approvals::new(Some(Duration::from_millis(50)));
    let h = Harness::with(
        json!([call("b1", "bash", json!({ "command": "echo never" })), text("Refused, then.")]),
        asking(&approvals),
    );
    let _listening = approvals.subscribe();
    let outcomes = ran(h.runtime.submit(send(h.session, "Run it."), &Quiet).await.unwrap());
    assert_eq!(outcomes[0].result.as_deref(), Some("Refused, then."));
    let denied = h.events(h.session).into_iter().any(|e| matches!(e.body, EventBody::PermissionDenied(_)));
    assert!(denied, "the refusal is recorded like any other: {}", h.transcript(h.session));
    assert!(approvals.waiting().is_empty());
}

#[tokio::test]
async fn cancel_stops_the_submission_in_that_session_and_no_other() {
    let started = Arc::new(tokio::sync::Semaphore::new(0));
    let waits: Arc<dyn seri_tools::Tool> = Arc::new(Waits { started: started.clone() });
    let h = Harness::with(
        json!([call("w1", "wait", json!({})), text("The other one answered.")]),
        Options { extra_tools: vec![waits], ..Options::default() },
    );
    let runtime = h.runtime.clone();
    let first = h.session;
    let waiting = tokio::spawn(async move { runtime.submit(send(first, "Wait."), &Quiet).await });
    started.acquire().await.unwrap().forget();
    let other = h
        .runtime
        .create_session(
            "/tmp",
            seri_core::FrozenPrompt { text: "Another.".into(), files: Vec::new(), tools: Vec::new() },
        )
        .unwrap()
        .id;
    // Nothing runs in the other session: cancelling it stops nothing.
    assert_eq!(
        h.runtime.submit(Command::Cancel { session_id: other }, &Quiet).await.unwrap(),
        Submitted::Cancelled(false)
    );
    let answered = ran(h.runtime.submit(send(other, "Hello?"), &Quiet).await.unwrap());
    assert_eq!(answered[0].result.as_deref(), Some("The other one answered."), "the other session ran beside the wait");
    assert_eq!(
        h.runtime.submit(Command::Cancel { session_id: first }, &Quiet).await.unwrap(),
        Submitted::Cancelled(true)
    );
    let cancelled = ran(waiting.await.unwrap().unwrap());
    assert_eq!(cancelled[0].status, RunStatus::Cancelled);
    let store = h.store.agent(&AgentId::local());
    assert_eq!(store.runs(first).unwrap()[0].status, RunStatus::Cancelled);
}

/// A message whose run stopped inside a tool call (its process killed; a
/// server that took the job over answers it): `Answer` settles the call and
/// goes on from there, and once the answer is finished, does nothing.
#[tokio::test]
async fn answer_goes_on_with_an_answer_a_stopped_run_left_unfinished() {
    let h = Harness::new(json!([text("Carried on after the interrupted call.")]));
    let agent = h.store.agent(&AgentId::local());
    let posted = agent
        .append(
            h.session,
            [
                EventBody::Message(Message::user("Run the slow thing")),
                EventBody::Message(Message::assistant("")),
                EventBody::ToolCall(seri_core::ToolCall {
                    id: "call_1".into(),
                    name: "bash".into(),
                    arguments: json!({"command": "sleep 60"}),
                }),
            ],
        )
        .unwrap();
    let answer = || Command::Answer { session_id: h.session, event_id: posted[0].id, max_turns: None };
    let outcomes = ran(h.runtime.submit(answer(), &Quiet).await.unwrap());
    assert_eq!(outcomes[0].result.as_deref(), Some("Carried on after the interrupted call."), "{outcomes:?}");
    let events = agent.events(h.session, seri_store::SeqRange::ALL).unwrap();
    let results: Vec<_> = events.iter().filter(|e| matches!(e.body, EventBody::ToolResult(_))).collect();
    assert_eq!(results.len(), 1, "the call was settled once");
    // Answered now: a second Answer (another server late to the job) calls no model.
    let again = ran(h.runtime.submit(answer(), &Quiet).await.unwrap());
    assert_eq!((again[0].status, again[0].turns), (RunStatus::Succeeded, 0), "{again:?}");
    assert_eq!(again[0].result.as_deref(), Some("Carried on after the interrupted call."), "the answer given");
}

/// A message a later message overtook before it was answered (its server
/// was killed, a CLI got the session first and posted its own): `Answer`
/// does not take the later reply for its answer, nor answer out of turn;
/// the run fails, saying why.
#[tokio::test]
async fn answer_never_takes_a_later_messages_reply_for_its_own() {
    let h = Harness::new(json!([text("Never asked for.")]));
    let agent = h.store.agent(&AgentId::local());
    let posted = agent
        .append(
            h.session,
            [
                EventBody::Message(Message::user("First, whose server was killed")),
                EventBody::Message(Message::user("Second, from another client")),
                EventBody::Message(Message::assistant("Reply to the second.")),
            ],
        )
        .unwrap();
    let answer = Command::Answer { session_id: h.session, event_id: posted[0].id, max_turns: None };
    let outcomes = ran(h.runtime.submit(answer, &Quiet).await.unwrap());
    assert_eq!((outcomes[0].status, outcomes[0].turns, outcomes[0].result.as_deref()), (RunStatus::Failed, 0, None));
    let error = outcomes[0].error.as_deref().unwrap_or("");
    assert!(error.contains("a later message (seq 2) was posted"), "{error}");
    assert_eq!(agent.events(h.session, seri_store::SeqRange::ALL).unwrap().len(), 3, "nothing was written");

    // The second message's own Answer finds its reply.
    let answer = Command::Answer { session_id: h.session, event_id: posted[1].id, max_turns: None };
    let outcomes = ran(h.runtime.submit(answer, &Quiet).await.unwrap());
    assert_eq!(outcomes[0].result.as_deref(), Some("Reply to the second."));
}

/// A submission's own switch stops it and nothing else: a second
/// submission waiting for the same session goes on and is answered (a
/// server that lost its claim on one message must not stop another
/// client's message in that session, as `Command::Cancel` would).
#[tokio::test]
async fn a_submissions_own_switch_stops_it_and_not_the_one_waiting_behind_it() {
    let started = Arc::new(tokio::sync::Semaphore::new(0));
    let waits: Arc<dyn seri_tools::Tool> = Arc::new(Waits { started: started.clone() });
    let h = Harness::with(
        json!([call("w1", "wait", json!({})), text("The second one answered.")]),
        Options { extra_tools: vec![waits], ..Options::default() },
    );
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let runtime = h.runtime.clone();
    let session = h.session;
    let first = tokio::spawn(async move { runtime.submit_cancellable(send(session, "Wait."), &Quiet, stopped).await });
    started.acquire().await.unwrap().forget();
    let runtime = h.runtime.clone();
    let second = tokio::spawn(async move { runtime.submit(send(session, "Then me."), &Quiet).await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    stop.send_replace(true);
    let first = ran(first.await.unwrap().unwrap());
    assert_eq!(first[0].status, RunStatus::Cancelled);
    let second = ran(second.await.unwrap().unwrap());
    assert_eq!(
        (second[0].status, second[0].result.as_deref()),
        (RunStatus::Succeeded, Some("The second one answered."))
    );
}

/// A server's job whose message another run posted already (its claim
/// lapsed while that run answered, and this run got the session after it)
/// is answered, never posted a second time.
#[tokio::test]
async fn a_jobs_message_posted_by_another_run_is_answered_not_posted_again() {
    let h = Harness::new(json!([text("Answered once.")]));
    let agent = h.store.agent(&AgentId::local());
    let mut message = Message::user("Hello");
    let job = h.store.enqueue_job(&AgentId::local(), h.session, &json!({}), None).unwrap();
    message.meta_mut().queued_as = Some(job.id.clone());
    let posted = agent.append(h.session, [EventBody::Message(message.clone())]).unwrap()[0].id;
    let claim = seri_store::JobClaim { owner: "first", ttl: Duration::from_secs(30) };
    h.store.claim_next_job(claim).unwrap().unwrap();
    h.store.record_job_posted(&job.id, "first", posted, None).unwrap();
    let send = Command::Send { session_id: h.session, message, lane: Lane::Interactive, max_turns: None };
    let outcomes = ran(h.runtime.submit(send, &Quiet).await.unwrap());
    assert_eq!(outcomes[0].result.as_deref(), Some("Answered once."));
    let hellos = h
        .events(h.session)
        .into_iter()
        .filter(|e| matches!(&e.body, EventBody::Message(m) if m.content == "Hello"))
        .count();
    assert_eq!(hellos, 1, "posted once: {}", h.transcript(h.session));
}
