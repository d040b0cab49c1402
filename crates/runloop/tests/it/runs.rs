//! Whole runs: plain exchanges, tool rounds, errors, budgets, cancellation,
//! retries, pairing, and the prefix stability that keeps provider caches warm.

use std::sync::Arc;

use serde_json::{Value, json};
use seri_core::{AgentId, EventBody, ToolCall};
use seri_runloop::{RunStatus, RuntimeSettings};

use crate::support::{Harness, Options, Waits, call, text};

#[tokio::test]
async fn a_plain_exchange_records_the_answer_with_its_usage() {
    let h = Harness::new(
        json!([{ "text": "Hello there.", "usage": { "input": 120, "cache_read": 0, "cache_write": 0, "output": 5 } }]),
    );
    let outcomes = h.send("Hi!").await;
    assert_eq!(outcomes.len(), 1);
    let outcome = &outcomes[0];
    assert_eq!(outcome.status, RunStatus::Succeeded);
    assert_eq!(outcome.result.as_deref(), Some("Hello there."));
    assert_eq!((outcome.turns, outcome.usage.map(|u| u.input)), (1, Some(120)));
    insta::assert_snapshot!("plain_exchange_transcript", h.transcript(h.session));
    let info = h.store.agent(&AgentId::local()).info(h.session).unwrap();
    assert_eq!(info.last_usage.map(|u| u.prompt_tokens()), Some(120));
    let runs = h.store.agent(&AgentId::local()).runs(h.session).unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].status, seri_core::RunStatus::Succeeded);
}

#[tokio::test]
async fn the_first_request_is_system_then_transcript_then_turn_blocks() {
    let h = Harness::new(json!([text("ok")]));
    h.send("Hi!").await;
    let requests = h.requests();
    assert_eq!(requests.len(), 1);
    let mut request = requests[0].clone();
    // Tool schemas are snapshotted by the tools crate; here only their names matter.
    request["tools"] =
        Value::from(request["tools"].as_array().unwrap().iter().map(|t| t["name"].clone()).collect::<Vec<_>>());
    insta::assert_json_snapshot!("first_request", request);
}

#[tokio::test]
async fn several_tool_rounds_pair_every_call_with_its_result() {
    let h = Harness::new(json!([
        call("c1", "status", json!({ "title": "Greeting", "description": "Saying hello" })),
        call("c2", "plan", json!({ "steps": [{ "text": "Say hello", "status": "in_progress" }] })),
        text("Done."),
    ]));
    let outcome = &h.send("Hi!").await[0];
    assert_eq!((outcome.status, outcome.turns), (RunStatus::Succeeded, 3));
    insta::assert_snapshot!("tool_rounds_transcript", h.transcript(h.session));
    let info = h.store.agent(&AgentId::local()).info(h.session).unwrap();
    assert_eq!(info.title, "Greeting");
    assert_eq!(info.plan.map(|p| p.steps.len()), Some(1));
}

#[tokio::test]
async fn a_tool_error_is_a_result_the_model_reads_and_the_run_goes_on() {
    let h = Harness::new(json!([
        call("c1", "no_such_tool", json!({})),
        call("c2", "status", json!({ "title": 7 })),
        text("Sorry about that."),
    ]));
    let outcome = &h.send("Hi!").await[0];
    assert_eq!(outcome.status, RunStatus::Succeeded);
    let errors: Vec<String> = h
        .events(h.session)
        .into_iter()
        .filter_map(|e| match e.body {
            EventBody::ToolResult(r) if r.is_error => Some(r.content),
            _ => None,
        })
        .collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].contains("no_such_tool"), "{}", errors[0]);
    assert!(errors[1].contains("title"), "the error names the field: {}", errors[1]);
}

#[tokio::test]
async fn running_out_of_turns_ends_the_run_as_max_turns_with_every_call_answered() {
    let settings = RuntimeSettings { max_turns: 2, ..RuntimeSettings::default() };
    let h = Harness::with(
        json!([call("c1", "list", json!({ "path": "." })), call("c2", "list", json!({ "path": "." })), text("never")]),
        Options { settings, ..Options::default() },
    );
    let outcome = &h.send("List forever").await[0];
    assert_eq!((outcome.status, outcome.turns), (RunStatus::MaxTurns, 2));
    assert_eq!(h.requests().len(), 2, "no request beyond the budget");
    let events = h.events(h.session);
    let calls = events.iter().filter(|e| matches!(e.body, EventBody::ToolCall(_))).count();
    let results = events.iter().filter(|e| matches!(e.body, EventBody::ToolResult(_))).count();
    assert_eq!((calls, results), (2, 2));
}

#[tokio::test]
async fn cancelling_mid_tool_answers_the_call_and_ends_the_run_cancelled() {
    let started = Arc::new(tokio::sync::Semaphore::new(0));
    let h = Harness::with(
        json!([{ "tool_calls": [
            { "id": "c1", "name": "wait", "arguments": {} },
            { "id": "c2", "name": "list", "arguments": { "path": "." } }
        ] }]),
        Options { extra_tools: vec![Arc::new(Waits { started: started.clone() })], ..Options::default() },
    );
    let cancel = h.cancel.0.clone();
    tokio::spawn(async move {
        started.acquire().await.unwrap().forget();
        let _ = cancel.send(true);
    });
    let outcome = &h.send("Wait").await[0];
    assert_eq!(outcome.status, RunStatus::Cancelled);
    insta::assert_snapshot!("cancelled_mid_tool_transcript", h.transcript(h.session));
}

#[tokio::test]
async fn rate_limit_and_server_errors_are_retried_then_the_turn_succeeds() {
    let h = Harness::new(json!([
        { "error": { "kind": "rate_limit" } },
        { "error": { "kind": "server", "message": "overloaded" } },
        text("Made it."),
    ]));
    let outcome = &h.send("Hi!").await[0];
    assert_eq!((outcome.status, outcome.result.as_deref()), (RunStatus::Succeeded, Some("Made it.")));
    assert_eq!(h.requests().len(), 3, "each attempt is a request");
}

#[tokio::test]
async fn auth_and_overflow_errors_fail_the_run_without_a_retry() {
    for kind in ["auth", "context_overflow"] {
        let h = Harness::new(json!([{ "error": { "kind": kind, "message": "no" } }, text("unreached")]));
        let outcome = &h.send("Hi!").await[0];
        assert_eq!(outcome.status, RunStatus::Failed, "{kind}");
        assert_eq!(h.requests().len(), 1, "{kind} is not retried");
        assert!(outcome.error.as_deref().is_some_and(|e| !e.is_empty()));
        let assistant = h
            .events(h.session)
            .iter()
            .filter(|e| matches!(&e.body, EventBody::Message(m) if m.role == seri_core::Role::Assistant))
            .count();
        assert_eq!(assistant, 0, "{kind}: no half-written answer is recorded");
    }
}

#[tokio::test]
async fn a_broken_pairing_is_caught_before_any_request_and_names_the_call() {
    let h = Harness::new(json!([text("unreached")]));
    let store = h.store.agent(&AgentId::local());
    store
        .append(
            h.session,
            [EventBody::ToolResult(seri_core::ToolResult {
                tool_call_id: "call_orphan".into(),
                name: "list".into(),
                content: "x".into(),
                is_error: false,
                facts: None,
            })],
        )
        .unwrap();
    let outcome = &h.send("Hi!").await[0];
    assert_eq!(outcome.status, RunStatus::Failed);
    assert!(outcome.error.as_deref().unwrap().contains("call_orphan"), "{:?}", outcome.error);
    assert!(h.requests().is_empty(), "nothing was sent to the provider");
}

#[tokio::test]
async fn a_call_left_unanswered_by_a_dead_process_is_settled_before_the_next_request() {
    let h = Harness::new(json!([text("Recovered.")]));
    let store = h.store.agent(&AgentId::local());
    store
        .append(
            h.session,
            [EventBody::ToolCall(ToolCall {
                id: "c_dead".into(),
                name: "bash".into(),
                arguments: json!({"command": "make"}),
            })],
        )
        .unwrap();
    let outcome = &h.send("Are you there?").await[0];
    assert_eq!(outcome.status, RunStatus::Succeeded);
    insta::assert_snapshot!("settled_unanswered_call_transcript", h.transcript(h.session));
}

#[tokio::test]
async fn thirty_turns_each_extend_the_previous_request() {
    let mut turns: Vec<Value> = (0..29).map(|i| call(&format!("c{i}"), "list", json!({ "path": "." }))).collect();
    turns.push(text("Listed thirty times."));
    let h = Harness::new(Value::from(turns));
    let outcome = &h.send("List it thirty times").await[0];
    assert_eq!((outcome.status, outcome.turns), (RunStatus::Succeeded, 30));
    let requests = h.requests();
    assert_eq!(requests.len(), 30);
    for pair in requests.windows(2) {
        let (before, after) = (&pair[0], &pair[1]);
        assert_eq!(before["system"], after["system"], "the system prompt is frozen");
        assert_eq!(before["tools"], after["tools"], "the tools do not change");
        let before = before["messages"].as_array().unwrap();
        let after = after["messages"].as_array().unwrap();
        // Everything but the per-turn blocks (the last message) is a prefix
        // of the next request.
        let stable = &before[..before.len() - 1];
        assert_eq!(stable, &after[..stable.len()], "request {} does not extend the one before", after.len());
    }
}

/// A tool named `explode` that panics, the way a bug in a tool or a library
/// it uses would.
struct Explodes;

#[async_trait::async_trait]
impl seri_tools::Tool for Explodes {
    fn name(&self) -> &str {
        "explode"
    }
    fn description(&self) -> &str {
        "Panics."
    }
    fn input_schema(&self) -> Value {
        json!({ "type": "object" })
    }
    fn availability(&self, _run: &seri_tools::RunContext) -> seri_tools::Availability {
        seri_tools::Availability::Available
    }
    async fn call(
        &self,
        _ctx: seri_tools::ToolContext<'_>,
        input: Value,
    ) -> Result<seri_tools::ToolOutcome, seri_tools::ToolError> {
        panic!("exploded on {}", input["what"].as_str().unwrap_or_default())
    }
}

#[tokio::test]
async fn a_panicking_tool_fails_its_call_and_the_run_goes_on() {
    let h = Harness::with(
        json!([
            call("c1", "explode", json!({ "what": "x".repeat(100_000) })),
            // globset's matcher used to panic on this glob.
            call("c2", "list", json!({ "path": ".", "glob": "*".repeat(87_000) })),
            text("Carried on."),
        ]),
        Options { extra_tools: vec![Arc::new(Explodes)], ..Options::default() },
    );
    let outcome = &h.send("Go").await[0];
    assert_eq!((outcome.status, outcome.result.as_deref()), (RunStatus::Succeeded, Some("Carried on.")));
    let results: Vec<(String, bool)> = h
        .events(h.session)
        .into_iter()
        .filter_map(|e| match e.body {
            EventBody::ToolResult(r) => Some((r.content, r.is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 2);
    let (exploded, is_error) = &results[0];
    assert!(is_error);
    assert!(exploded.starts_with("`explode` stopped on an internal error in seri"), "{exploded}");
    assert!(exploded.contains("exploded on xxx"), "{exploded}");
    assert!(exploded.len() < 2_000, "the panic's message is cut: {} bytes", exploded.len());
    let (listed, is_error) = &results[1];
    assert!(is_error);
    assert!(listed.starts_with("`glob`: 87000 bytes long"), "{}", &listed[..200.min(listed.len())]);
}

/// A model that sends a call id again in a later turn (some servers count
/// from `call_0` every turn): the repeat gets a fresh id, so every result
/// pairs with its own call across the whole session, the earlier turn's
/// included, and a second run in the session sees the first run's ids.
#[tokio::test]
async fn a_call_id_repeated_in_a_later_turn_or_run_gets_a_fresh_one() {
    let status = |title: &str| json!({ "title": title, "description": "working" });
    let h = Harness::new(json!([
        call("call_0", "status", status("one")),
        call("call_0", "status", status("two")),
        text("Done."),
        call("call_0", "status", status("three")),
        text("Done again."),
    ]));
    h.send("Hi!").await;
    h.send("Again!").await;
    let ids: Vec<String> = h
        .events(h.session)
        .into_iter()
        .filter_map(|e| match e.body {
            EventBody::ToolCall(ToolCall { id, .. }) => Some(id.0),
            _ => None,
        })
        .collect();
    assert_eq!(ids.len(), 3, "{ids:?}");
    assert_eq!(ids[0], "call_0");
    let distinct: std::collections::BTreeSet<&String> = ids.iter().collect();
    assert_eq!(distinct.len(), 3, "every call has an id of its own: {ids:?}");
    assert!(ids[1..].iter().all(|id| id.starts_with("call_0-")), "{ids:?}");
}

/// What a first request of the harness session measures, by the estimate's count.
async fn first_request_chars() -> u64 {
    let h = Harness::new(json!([{ "text": "Hello." }]));
    h.send("Hi!").await;
    let sent: seri_providers::ModelRequest = serde_json::from_value(h.requests()[0].clone()).unwrap();
    seri_providers::request_size::request_chars(&sent)
}

#[tokio::test]
async fn an_answer_records_its_requests_size_and_the_bill_calibrates_the_next_estimate() {
    // The same first request billed at three characters per token, where
    // the uncalibrated estimate assumes four.
    let chars = first_request_chars().await;
    let billed = chars / 3;
    let h = Harness::new(
        json!([{ "text": "Hello.", "usage": { "input": billed, "cache_read": 0, "cache_write": 0, "output": 5 } }]),
    );
    h.send("Hi!").await;
    let sent: seri_providers::ModelRequest = serde_json::from_value(h.requests()[0].clone()).unwrap();
    let answer = h
        .events(h.session)
        .into_iter()
        .find_map(|e| match e.body {
            EventBody::Message(m) if m.role == seri_core::Role::Assistant => Some(m),
            _ => None,
        })
        .unwrap();
    assert_eq!(answer.meta().prompt_chars, Some(seri_providers::request_size::request_chars(&sent)));

    // The next request holds the first, the answer and a new block: within
    // 10% of what was billed, where four characters per token would have
    // estimated a quarter less.
    let estimated = h.runtime.context_report(h.session).unwrap().estimated;
    assert!(chars / 4 < billed - billed / 10);
    assert!(
        (billed - billed / 10..=billed + billed / 10).contains(&estimated),
        "estimated {estimated} tokens after a bill of {billed} for {chars} characters"
    );
}
