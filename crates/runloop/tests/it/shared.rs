//! A session shared by several runs: the lease that makes a run the only
//! writer of its session, the queue a second run waits in, the refusal
//! `--no-wait` asks for, settling only what a gone holder left, the fence
//! that keeps a holder whose lease was taken over from writing more, and
//! one continuation per turn.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use seri_core::{AgentId, EventBody, Message, RunId, ToolCall, ToolCallId};
use seri_runloop::{BusyPolicy, Lane, RunSpec, RunStatus, RuntimeSettings};
use seri_store::{LeaseAttempt, LeaseOwner, LeaseRequest};
use seri_tools::RunKind;

use crate::continuation::continue_call;
use crate::support::{Harness, Options, Waits, call, text};

fn message_spec(h: &Harness, text: &str) -> RunSpec {
    RunSpec {
        session_id: h.session,
        kind: RunKind::Interactive,
        lane: Lane::Interactive,
        user_event_ids: Vec::new(),
        max_turns: 10,
        message: Some(Message::user(text)),
    }
}

/// Takes the harness session's lease as another process would: one whose
/// holder is this very process (so it is alive), under another instance.
fn hold_as_another_runtime(h: &Harness) -> LeaseOwner {
    let owner = LeaseOwner::this_process("another runtime");
    let attempt = h
        .store
        .agent(&AgentId::local())
        .write(|tx| {
            tx.try_acquire_lease(&LeaseRequest {
                session_id: h.session,
                run_id: None,
                owner: &owner,
                ticket: None,
                ttl: Duration::from_secs(30),
            })
        })
        .unwrap();
    assert_eq!(attempt, LeaseAttempt::Acquired { reaped: Vec::new() });
    owner
}

fn refusing() -> Options {
    Options {
        settings: RuntimeSettings { busy: BusyPolicy::Refuse, ..RuntimeSettings::default() },
        ..Options::default()
    }
}

#[tokio::test]
async fn a_run_told_not_to_wait_is_refused_naming_the_holder_and_writes_nothing() {
    let h = Harness::with(json!([text("never sent")]), refusing());
    hold_as_another_runtime(&h);
    h.runtime.enqueue(message_spec(&h, "Hello?"));
    let outcomes = h.runtime.drain(&seri_runloop::Quiet, &h.cancel.1).await;
    assert_eq!(outcomes[0].status, RunStatus::Failed);
    let error = outcomes[0].error.clone().unwrap();
    let expected = format!("session {} is busy: a write in seri pid {} on host ", h.session, std::process::id());
    assert!(error.starts_with(&expected), "{error}");
    assert!(error.ends_with(" UTC"), "{error}");
    assert!(h.events(h.session).is_empty(), "the message was not posted");
    assert!(h.requests().is_empty(), "nothing was sent to the model");
    assert!(h.store.agent(&AgentId::local()).runs(h.session).unwrap().is_empty(), "no run was recorded");
    // Posting outside a run is refused the same way.
    let err = h.runtime.post_user_message(h.session, Message::user("x")).unwrap_err();
    assert!(err.to_string().starts_with(&expected), "{err}");
}

#[tokio::test]
async fn a_second_run_waits_for_the_first_and_then_runs_on_the_settled_history() {
    let started = Arc::new(tokio::sync::Semaphore::new(0));
    let waits: Arc<dyn seri_tools::Tool> = Arc::new(Waits { started: started.clone() });
    let h = Harness::with(
        json!([call("w1", "wait", json!({})), text("Second answered.")]),
        Options { extra_tools: vec![waits], ..Options::default() },
    );
    let (cancel_first, first_cancel) = tokio::sync::watch::channel(false);
    let runtime = h.runtime.clone();
    let first_spec = message_spec(&h, "First: wait.");
    let first = tokio::spawn(async move { runtime.run(first_spec, &seri_runloop::Quiet, &first_cancel).await });
    started.acquire().await.unwrap().forget();

    // A second runtime on the same store (a second client) sends while the
    // first run is inside its tool call.
    let second = h.runtime.clone();
    let second_spec = message_spec(&h, "Second: hello.");
    let (_keep, second_cancel) = tokio::sync::watch::channel(false);
    let waiting = tokio::spawn(async move { second.run(second_spec, &seri_runloop::Quiet, &second_cancel).await });
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!waiting.is_finished(), "the second run waits while the first holds the session");
    let events = h.events(h.session);
    let kinds: Vec<&str> = events.iter().map(|e| e.body.kind()).collect();
    assert_eq!(kinds, ["message", "message", "tool_call"], "nothing landed inside the first run's turn");

    cancel_first.send(true).unwrap();
    assert_eq!(first.await.unwrap().status, RunStatus::Cancelled);
    let second = waiting.await.unwrap();
    assert_eq!(second.status, RunStatus::Succeeded, "{second:?}");
    assert_eq!(second.result.as_deref(), Some("Second answered."));
    assert_eq!(
        h.transcript(h.session),
        "[1] user: First: wait.\n[2] assistant:\n[3] tool call wait: {}\n[4] tool result wait (error): cancelled: the user interrupted the turn before this tool finished\n[5] user: Second: hello.\n[6] assistant: Second answered.\n",
    );
}

#[tokio::test]
async fn a_cancelled_waiter_leaves_the_queue_and_posts_nothing() {
    let h = Harness::new(json!([text("never sent")]));
    hold_as_another_runtime(&h);
    let runtime = h.runtime.clone();
    let spec = message_spec(&h, "Waiting.");
    let (cancel, cancelled) = tokio::sync::watch::channel(false);
    let waiting = tokio::spawn(async move { runtime.run(spec, &seri_runloop::Quiet, &cancelled).await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    cancel.send(true).unwrap();
    assert_eq!(waiting.await.unwrap().status, RunStatus::Cancelled);
    assert!(h.events(h.session).is_empty());
}

/// A turn of `calls` calls that a stopped process left without results,
/// written as that process would have, with its run still `running`.
fn died_mid_turn(h: &Harness, calls: usize) -> RunId {
    let store = h.store.agent(&AgentId::local());
    let run_id = h.store.new_run_id();
    store
        .start_run(&seri_store::RunRecord {
            id: run_id,
            session_id: h.session,
            kind: seri_core::RunKindName::Interactive,
            lane: seri_core::Lane::Interactive,
            parent_run_id: None,
            status: seri_core::RunStatus::Running,
            result: None,
            started_at: h.store.now(),
            finished_at: None,
        })
        .unwrap();
    let mut bodies =
        vec![EventBody::Message(Message::user("Do many things.")), EventBody::Message(Message::assistant(""))];
    bodies.extend((0..calls).map(|i| {
        EventBody::ToolCall(ToolCall { id: ToolCallId(format!("c{i}")), name: "list".into(), arguments: json!({}) })
    }));
    store.append(h.session, bodies).unwrap();
    run_id
}

#[tokio::test]
async fn a_turn_of_300_calls_a_stopped_run_left_is_settled_whole_and_its_run_marked_interrupted() {
    let h = Harness::new(json!([text("Picked up again.")]));
    let dead = died_mid_turn(&h, 300);
    let outcomes = h.send("Go on.").await;
    assert_eq!(outcomes[0].status, RunStatus::Succeeded, "{outcomes:?}");
    let events = h.events(h.session);
    let results: Vec<_> = events.iter().filter(|e| matches!(e.body, EventBody::ToolResult(_))).collect();
    assert_eq!(results.len(), 300, "every call of the turn got its result");
    assert!(
        results
            .iter()
            .all(|e| matches!(&e.body, EventBody::ToolResult(r) if r.is_error && r.content.starts_with("interrupted")))
    );
    let run = h.store.agent(&AgentId::local()).run(dead).unwrap().unwrap();
    assert_eq!(run.status, seri_core::RunStatus::Interrupted, "a run whose process is gone is never left running");
    assert!(run.finished_at.is_some());
}

#[tokio::test]
async fn calls_a_live_holder_is_running_are_never_settled() {
    let h = Harness::new(json!([text("unused")]));
    died_mid_turn(&h, 2);
    hold_as_another_runtime(&h);
    let err = h.runtime.post_user_message(h.session, Message::user("Me too.")).unwrap_err();
    assert!(err.to_string().contains("is busy"), "{err}");
    assert!(h.events(h.session).iter().all(|e| !matches!(e.body, EventBody::ToolResult(_))), "nothing was settled");
    assert_eq!(h.runtime.recover(h.session).unwrap(), None, "a live holder leaves nothing to recover");
    assert!(h.events(h.session).iter().all(|e| !matches!(e.body, EventBody::ToolResult(_))));
}

#[tokio::test]
async fn a_second_continue_session_in_one_turn_is_refused_before_anything_is_created() {
    let mut two = continue_call("cont_a", "topic_change");
    let second = continue_call("cont_b", "phase_change")["tool_calls"][0].clone();
    two["tool_calls"].as_array_mut().unwrap().push(second);
    let h = Harness::new(json!([two, text("Answered in the successor.")]));
    let outcomes = h.send("New topic: a hotel in Lisbon.").await;
    assert_eq!(outcomes.len(), 2, "one successor run: {outcomes:?}");
    assert_eq!(outcomes[1].result.as_deref(), Some("Answered in the successor."));
    let store = h.store.agent(&AgentId::local());
    assert_eq!(store.continuations_from(h.session).unwrap().len(), 1, "one successor, one edge");
    let results: Vec<_> = h
        .events(h.session)
        .into_iter()
        .filter_map(|e| match e.body {
            EventBody::ToolResult(r) => Some(r),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 2, "both calls have a result");
    assert!(!results[0].is_error, "{}", results[0].content);
    assert!(results[1].is_error);
    assert_eq!(results[1].content, seri_prompt::SECOND_CONTINUATION_REFUSED);
}

/// A tool named `gate` that signals `started`, then finishes once `open`
/// is notified.
struct Gate {
    started: Arc<tokio::sync::Notify>,
    open: Arc<tokio::sync::Notify>,
}

#[async_trait::async_trait]
impl seri_tools::Tool for Gate {
    fn name(&self) -> &str {
        "gate"
    }
    fn description(&self) -> &str {
        "Waits until the test opens it."
    }
    fn input_schema(&self) -> serde_json::Value {
        json!({ "type": "object" })
    }
    fn availability(&self, _run: &seri_tools::RunContext) -> seri_tools::Availability {
        seri_tools::Availability::Available
    }
    async fn call(
        &self,
        _ctx: seri_tools::ToolContext<'_>,
        _input: serde_json::Value,
    ) -> Result<seri_tools::ToolOutcome, seri_tools::ToolError> {
        self.started.notify_one();
        self.open.notified().await;
        Ok(seri_tools::ToolOutcome::text("opened"))
    }
}

#[tokio::test]
async fn a_run_whose_lease_was_taken_over_writes_nothing_more() {
    let (started, open) = (Arc::new(tokio::sync::Notify::new()), Arc::new(tokio::sync::Notify::new()));
    let gate: Arc<dyn seri_tools::Tool> = Arc::new(Gate { started: started.clone(), open: open.clone() });
    let h = Harness::with(
        json!([call("g1", "gate", json!({})), text("never")]),
        Options { extra_tools: vec![gate], ..Options::default() },
    );
    let runtime = h.runtime.clone();
    let spec = message_spec(&h, "Through the gate.");
    let (_keep, cancel) = tokio::sync::watch::channel(false);
    let running = tokio::spawn(async move { runtime.run(spec, &seri_runloop::Quiet, &cancel).await });
    started.notified().await;
    // Another host took the session over (its holder's heartbeat had
    // stopped past the lease, as a stalled machine's does): the row now
    // names a live holder elsewhere.
    let db = rusqlite::Connection::open(h.profile.db_path()).unwrap();
    let changed = db
        .execute(
            "UPDATE session_leases SET owner_instance = 'another', owner_host = 'elsewhere.invalid', \
             expires_at = 9000000000000 WHERE session_id = ?1",
            [h.session.to_string()],
        )
        .unwrap();
    assert_eq!(changed, 1);
    open.notify_one();
    let outcome = running.await.unwrap();
    assert_eq!(outcome.status, RunStatus::Failed, "{outcome:?}");
    let error = outcome.error.unwrap();
    assert!(error.contains("is no longer held by this runtime"), "{error}");
    let events = h.events(h.session);
    let kinds: Vec<&str> = events.iter().map(|e| e.body.kind()).collect();
    assert_eq!(kinds, ["message", "message", "tool_call"], "the late result was not written");
}
