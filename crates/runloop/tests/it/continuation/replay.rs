//! Replaying a `continue_session` call: the edge for (predecessor, tool call
//! id, initiating message) is the idempotency key, so however a call is
//! executed again (a process that died after the creation transaction) there
//! is one successor, one edge and one copy of its events; and a model that
//! repeats a call id for a new message continues again instead of having
//! that message swallowed.

use serde_json::json;
use seri_core::{AgentId, ContinueReason, EventBody, Handoff, Message, PlanTransfer, ToolCall, ToolCallId};
use seri_runloop::continuation::{ContinuationContext, CreationHooks, continue_session};
use seri_runloop::{ContinuedTo, Lane, RunSpec, RunStatus};
use seri_tools::{ContinuationRequest, RunKind};

use super::{continue_args, continue_call, row_counts};
use crate::support::{Harness, text};

/// The state a process leaves when it dies right after the creation
/// transaction committed: the predecessor has the model's turn and the
/// `continue_session` call but no result, and the successor, its edge and
/// its first two events exist. Built by running the continuation runtime
/// itself, outside a run.
fn died_after_creation(h: &Harness) -> ContinuedTo {
    let store = h.store.agent(&AgentId::local());
    let initiating = store.append(h.session, [EventBody::Message(Message::user("New topic: a hotel in Lisbon."))]);
    let initiating = initiating.unwrap().remove(0);
    let call = ToolCall {
        id: ToolCallId("cont_1".into()),
        name: "continue_session".into(),
        arguments: continue_args("topic_change"),
    };
    store.append(h.session, [EventBody::Message(Message::assistant("")), EventBody::ToolCall(call.clone())]).unwrap();
    let request = ContinuationRequest {
        reason: ContinueReason::TopicChange,
        title: "Trip planning".into(),
        description: "Planning the Lisbon trip".into(),
        handoff: Handoff {
            purpose: Some("Help the person plan a trip to Lisbon.".into()),
            current_request: Some("Find a hotel near the river.".into()),
            ..Handoff::default()
        },
        sources: Vec::new(),
        plan_transfer: PlanTransfer::Omit,
        carried_plan: None,
        initiating_event_id: initiating.id,
        initiating_seq: initiating.seq,
        dry_run: false,
    };
    let hooks = CreationHooks::default();
    let ctx = ContinuationContext {
        store: &store,
        predecessor: h.session,
        call: &call,
        window: 128_000,
        tool_chars: 0,
        hooks: &hooks,
        prompts: None,
    };
    let first = continue_session(&ctx, &request).unwrap();
    // Executing the very same call again, directly, is a replay too.
    assert_eq!(continue_session(&ctx, &request).unwrap(), first);
    assert_eq!(row_counts(h), (2, 1, 3 + 2), "one successor, one edge, two successor events");
    first
}

#[tokio::test]
async fn resuming_a_run_that_died_after_the_creation_transaction_replays_it_and_the_successor_answers() {
    let h = Harness::new(json!([text("Here are three hotels.")]));
    let created = died_after_creation(&h);

    // The run is resumed: no new message, the same user event.
    let initiating = h.events(h.session)[0].id;
    h.runtime.enqueue(RunSpec {
        session_id: h.session,
        kind: RunKind::Interactive,
        lane: Lane::Interactive,
        user_event_ids: vec![initiating],
        max_turns: 10,
        message: None,
    });
    let outcomes = h.runtime.drain(&seri_runloop::Quiet, &h.cancel.1).await;

    assert_eq!(outcomes.len(), 2, "the predecessor's run, then the successor's: {outcomes:?}");
    assert_eq!(outcomes[0].status, RunStatus::Succeeded);
    assert_eq!(outcomes[0].continued_to.as_ref(), Some(&created));
    assert_eq!(outcomes[0].turns, 0, "the predecessor's model was not asked again");
    assert_eq!(
        (outcomes[1].session_id, outcomes[1].result.as_deref()),
        (created.session_id, Some("Here are three hotels."))
    );
    assert_eq!(h.requests().len(), 1, "only the successor's request");
    // The call got its result from the replay; the successor its answer.
    assert_eq!(row_counts(&h), (2, 1, 4 + 3), "no second session, edge or copy");
    let result = match &h.events(h.session)[3].body {
        EventBody::ToolResult(r) => r.clone(),
        other => panic!("expected the call's result, got {other:?}"),
    };
    assert!(!result.is_error, "{}", result.content);
    assert!(result.content.contains(&created.session_id.to_string()), "{}", result.content);
}

#[tokio::test]
async fn a_person_typing_in_the_predecessor_after_the_crash_settles_the_call_and_branches() {
    let h = Harness::new(json!([text("Answered here.")]));
    let created = died_after_creation(&h);
    let outcomes = h.send("Actually, stay here: what about Porto?").await;
    assert_eq!(outcomes.len(), 1, "the person is here now; the successor is not run for them: {outcomes:?}");
    assert_eq!(outcomes[0].result.as_deref(), Some("Answered here."));
    assert_eq!(row_counts(&h), (2, 1, 6 + 2), "the replayed result, the message, the answer; no second successor");
    let successor = h.store.agent(&AgentId::local()).info(created.session_id).unwrap();
    assert_eq!(successor.last_seq, 2, "the successor is a normal session whose message can be run later");
}

#[tokio::test]
async fn a_model_repeating_a_call_id_for_a_new_message_continues_again() {
    // Providers that send no ids, or the same one in every response: the id
    // of an earlier continuation is no replay for another message.
    let h = Harness::new(json!([
        continue_call("cont_1", "topic_change"),
        text("Here are three hotels."),
        continue_call("cont_1", "topic_change"),
        text("Here is a restaurant."),
    ]));
    let first = h.send("New topic: a hotel in Lisbon.").await;
    let created = first[0].continued_to.clone().unwrap();
    assert_eq!(row_counts(&h), (2, 1, 4 + 3));

    let again = h.send("New topic: dinner in Porto.").await;
    assert_eq!(again.len(), 2, "the predecessor continued again, and the new successor answered: {again:?}");
    let second = again[0].continued_to.clone().expect("a second continuation");
    assert_ne!(second.session_id, created.session_id, "a new successor, not the old one");
    assert_eq!(again[1].result.as_deref(), Some("Here is a restaurant."));
    let edges = h.store.agent(&AgentId::local()).continuations_from(h.session).unwrap();
    assert_eq!(edges.len(), 2);
    assert_eq!(edges[0].tool_call_id.as_str(), "cont_1");
    assert!(edges[1].tool_call_id.as_str().starts_with("cont_1-"), "the repeat got a fresh id: {:?}", edges[1]);
}
