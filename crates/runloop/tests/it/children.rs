//! Child runs: `delegate` calls run in parallel with their answers recorded
//! in call order, typed children and `return_result`, a child's own turn
//! budget, what children are not offered, parked turns, cancellation, and a
//! child's failure as the parent's tool error. Each child plays its own
//! script (the script file's `children` list, taken in call order).

use std::sync::Arc;

use serde_json::{Value, json};
use seri_core::{AgentId, Event, EventBody, Message, SessionId, TitleSource};
use seri_prompt::text::verbs;
use seri_runloop::{CHILD_MAX_TURNS, ChildProgress, Lane, RunEvent, RunOutcome, RunSpec, RunStatus, RuntimeSettings};
use seri_store::RunRecord;
use seri_tools::{Delegate, RunKind};

use crate::support::{Harness, Options, Waits, call, text};

/// A parent turn that calls `delegate` once per input, ids `d1`, `d2`, …
fn delegating(inputs: &[Value]) -> Value {
    let calls: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(n, input)| json!({ "id": format!("d{}", n + 1), "name": "delegate", "arguments": input }))
        .collect();
    json!({ "tool_calls": calls })
}

/// A script file: the parent's turns and one script per child.
fn script(parent: Value, children: Vec<Value>) -> Value {
    let children: Vec<Value> = children.into_iter().map(|turns| json!({ "turns": turns })).collect();
    json!({ "turns": parent, "children": children })
}

/// Posts `text` and runs everything queued, keeping every run event.
async fn send_observed(h: &Harness, text: &str) -> (Vec<RunOutcome>, Vec<RunEvent>) {
    let event = h.runtime.post_user_message(h.session, Message::user(text)).unwrap();
    h.runtime.enqueue(RunSpec {
        session_id: h.session,
        kind: RunKind::Interactive,
        lane: Lane::Interactive,
        user_event_ids: vec![event],
        max_turns: h.runtime.settings().max_turns,
        message: None,
    });
    let (events, mut received) = tokio::sync::mpsc::unbounded_channel();
    let outcomes = h.runtime.drain(&events, &h.cancel.1).await;
    drop(events);
    let mut all = Vec::new();
    while let Some(event) = received.recv().await {
        all.push(event);
    }
    (outcomes, all)
}

fn runs(h: &Harness, session: SessionId) -> Vec<RunRecord> {
    h.store.agent(&AgentId::local()).runs(session).unwrap()
}

/// The child sessions of the harness session's first run, in the order
/// their runs started.
fn children_of(h: &Harness) -> Vec<SessionId> {
    let parent = runs(h, h.session)[0].id;
    h.store.agent(&AgentId::local()).child_runs(parent).unwrap().into_iter().map(|r| r.session_id).collect()
}

/// The results the parent's `delegate` calls got, in transcript order.
fn delegate_results(h: &Harness) -> Vec<(String, bool)> {
    h.events(h.session)
        .into_iter()
        .filter_map(|e: Event| match e.body {
            EventBody::ToolResult(r) if r.name == "delegate" => Some((r.content, r.is_error)),
            _ => None,
        })
        .collect()
}

/// The tool names of every logged request whose first message is a child's task starting with `task`.
fn child_request_tools(h: &Harness, task: &str) -> Vec<Vec<String>> {
    h.requests()
        .into_iter()
        .filter(|r| r["messages"][0]["text"].as_str().is_some_and(|t| t.starts_with(task)))
        .map(|r| r["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect())
        .collect()
}

#[tokio::test]
async fn parallel_children_answer_in_call_order_in_their_own_linked_sessions() {
    let h = Harness::with_script(
        script(
            json!([
                delegating(&[
                    json!({ "task": "List the crates.\nOne per line." }),
                    json!({ "task": "Count the tests", "tools": ["list"] }),
                    json!({ "task": "Say hello" }),
                ]),
                text("All three answered."),
            ]),
            vec![
                json!([text("core, store, tools")]),
                json!([call("c1", "list", json!({ "path": "." })), text("No tests here.")]),
                json!([text("Hello.")]),
            ],
        ),
        Options::default(),
    );
    let (outcomes, events) = send_observed(&h, "Split this up").await;
    assert_eq!(outcomes.len(), 1, "children are not queued runs of their own");
    assert_eq!((outcomes[0].status, outcomes[0].turns), (RunStatus::Succeeded, 2));
    assert_eq!(
        delegate_results(&h),
        [("core, store, tools".to_owned(), false), ("No tests here.".to_owned(), false), ("Hello.".to_owned(), false)]
    );
    insta::assert_snapshot!("parallel_children_parent_transcript", h.transcript(h.session));

    let children = children_of(&h);
    assert_eq!(children.len(), 3);
    let store = h.store.agent(&AgentId::local());
    let first = store.info(children[0]).unwrap();
    assert_eq!((first.title.as_str(), first.title_source), ("List the crates.", Some(TitleSource::Agent)));
    assert_eq!(first.parent_run_id, Some(runs(&h, h.session)[0].id));
    insta::assert_snapshot!("child_transcript", h.transcript(children[1]));
    let child_run = &runs(&h, children[1])[0];
    assert_eq!((child_run.kind.as_str(), child_run.status.as_str()), ("delegated_child", "succeeded"));
    assert_eq!(child_request_tools(&h, "Count the tests"), [["list"], ["list"]], "only the tools named");

    // All three started before any of them finished: they ran in parallel.
    let progress: Vec<&ChildProgress> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::ChildProgress(p) => Some(p),
            _ => None,
        })
        .collect();
    let first_finished = progress.iter().position(|p| p.finished.is_some()).unwrap();
    let started_before: std::collections::HashSet<_> =
        progress[..first_finished].iter().map(|p| p.call_id.as_str()).collect();
    assert_eq!(started_before.len(), 3, "{progress:#?}");
    let last_of_second = progress.iter().rev().find(|p| p.call_id.as_str() == "d2").unwrap();
    assert_eq!(
        (last_of_second.turns, last_of_second.last_tool.as_deref(), last_of_second.finished),
        (2, Some("list"), Some(RunStatus::Succeeded))
    );
}

#[tokio::test]
async fn a_child_runs_on_the_model_chosen_in_its_parent() {
    let h = Harness::with_script(
        script(json!([delegating(&[json!({ "task": "Say hello" })]), text("Done.")]), vec![json!([text("hello")])]),
        Options::default(),
    );
    let chosen = seri_core::ModelRef::new("script", "chosen-later");
    h.runtime.set_model(h.session, Some(chosen.clone())).unwrap();
    send_observed(&h, "Go").await;
    let child = children_of(&h)[0];
    let info = h.store.agent(&AgentId::local()).info(child).unwrap();
    assert_eq!(info.model_override, Some(chosen), "the model in force, not the one the parent began with");
}

#[tokio::test]
async fn the_parallel_limit_holds_children_back_until_one_returns() {
    let settings = RuntimeSettings { max_parallel_children: 1, ..RuntimeSettings::default() };
    let h = Harness::with_script(
        script(
            json!([delegating(&[json!({ "task": "One" }), json!({ "task": "Two" })]), text("Done.")]),
            vec![json!([text("1")]), json!([text("2")])],
        ),
        Options { settings, ..Options::default() },
    );
    let (_, events) = send_observed(&h, "Go").await;
    let order: Vec<(String, bool)> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::ChildProgress(p) if p.turns == 0 || p.finished.is_some() => {
                Some((p.call_id.to_string(), p.finished.is_some()))
            }
            _ => None,
        })
        .collect();
    let expected = [("d1", false), ("d1", true), ("d2", false), ("d2", true)].map(|(c, f)| (c.to_owned(), f));
    assert_eq!(order, expected);
    assert_eq!(delegate_results(&h), [("1".to_owned(), false), ("2".to_owned(), false)]);
}

fn count_schema() -> Value {
    json!({
        "type": "object",
        "required": ["count", "files"],
        "additionalProperties": false,
        "properties": { "count": { "type": "integer" }, "files": { "type": "array", "items": { "type": "string" } } }
    })
}

#[tokio::test]
async fn a_typed_child_returns_a_checked_value_after_correcting_an_invalid_one() {
    let h = Harness::with_script(
        script(
            json!([delegating(&[json!({ "task": "Count the TODOs", "resultSchema": count_schema() })]), text("3.")]),
            vec![json!([
                call("r1", "return_result", json!({ "value": { "count": "three", "files": ["a.rs", 7] } })),
                call("r2", "return_result", json!({ "value": { "count": 3, "files": ["a.rs", "b.rs"] } })),
                text("never requested: the run ended with the returned value"),
            ])],
        ),
        Options::default(),
    );
    let outcome = &h.send("How many TODOs?").await[0];
    assert_eq!(outcome.status, RunStatus::Succeeded);
    assert_eq!(delegate_results(&h), [(r#"{"count":3,"files":["a.rs","b.rs"]}"#.to_owned(), false)]);
    let child = children_of(&h)[0];
    insta::assert_snapshot!("typed_child_transcript", h.transcript(child));
    let record = &runs(&h, child)[0];
    assert_eq!((record.kind.as_str(), record.status.as_str()), ("typed_child", "succeeded"));
    assert_eq!(record.result.as_ref().unwrap().returned, Some(json!({ "count": 3, "files": ["a.rs", "b.rs"] })));
    let offered = child_request_tools(&h, "Count the TODOs");
    assert_eq!(offered.len(), 2, "two requests; the run ended after the value was returned");
    assert!(offered[0].contains(&"return_result".to_owned()), "{offered:?}");
    let schema_sent = h
        .requests()
        .into_iter()
        .find_map(|r| r["tools"].as_array().unwrap().iter().find(|t| t["name"] == "return_result").cloned())
        .unwrap();
    assert_eq!(schema_sent["inputSchema"]["properties"]["value"], count_schema());
}

#[tokio::test]
async fn a_typed_child_that_ends_without_returning_is_an_error_for_the_parent() {
    let h = Harness::with_script(
        script(
            json!([delegating(&[json!({ "task": "Count", "resultSchema": count_schema() })]), text("It failed.")]),
            vec![json!([text("There are 3.")])],
        ),
        Options::default(),
    );
    let outcome = &h.send("Count").await[0];
    assert_eq!(outcome.status, RunStatus::Succeeded, "the parent goes on");
    let (result, is_error) = &delegate_results(&h)[0];
    assert!(*is_error);
    assert!(result.starts_with("the typed child run ended without calling return_result"), "{result}");
    assert!(result.contains("There are 3.") && result.contains("thread:"), "{result}");
}

#[tokio::test]
async fn a_child_gets_its_own_budget_and_running_out_is_an_error_result_not_a_hang() {
    // The parent's budget is 2 turns; the child still gets 25.
    let settings = RuntimeSettings { max_turns: 2, ..RuntimeSettings::default() };
    let child: Vec<Value> =
        (0..CHILD_MAX_TURNS + 5).map(|n| call(&format!("l{n}"), "list", json!({ "path": "." }))).collect();
    let h = Harness::with_script(
        script(json!([delegating(&[json!({ "task": "List forever" })]), text("Gave up.")]), vec![Value::from(child)]),
        Options { settings, ..Options::default() },
    );
    let outcome = &h.send("Go").await[0];
    assert_eq!((outcome.status, outcome.turns), (RunStatus::Succeeded, 2));
    let (result, is_error) = &delegate_results(&h)[0];
    assert!(*is_error);
    assert!(
        result.starts_with(&format!("the child run ran out of turns after {CHILD_MAX_TURNS} turns without finishing")),
        "{result}"
    );
    let child = children_of(&h)[0];
    assert_eq!(runs(&h, child)[0].status, seri_core::RunStatus::MaxTurns);
    assert_eq!(child_request_tools(&h, "List forever").len(), CHILD_MAX_TURNS as usize);
    assert!(verbs::DELEGATE.contains(&format!("{CHILD_MAX_TURNS} turns")), "the contract states the budget");
}

#[tokio::test]
async fn a_child_is_offered_neither_continue_session_nor_delegate_and_calling_them_is_refused() {
    let h = Harness::with_script(
        script(
            json!([delegating(&[json!({ "task": "Try everything" })]), text("ok")]),
            vec![json!([
                call(
                    "x1",
                    "continue_session",
                    json!({ "reason": "refocus", "title": "T", "description": "d", "handoff": { "purpose": "p" } })
                ),
                call("x2", "delegate", json!({ "task": "a grandchild" })),
                text("Could not."),
            ])],
        ),
        Options::default(),
    );
    h.send("Go").await;
    let offered = child_request_tools(&h, "Try everything");
    assert!(
        offered.iter().all(|tools| !tools.iter().any(|t| t == "continue_session" || t == "delegate")),
        "{offered:?}"
    );
    let parent_tools = &h.requests()[0]["tools"];
    assert!(parent_tools.as_array().unwrap().iter().any(|t| t["name"] == "delegate"), "the parent is offered it");
    let child = children_of(&h)[0];
    insta::assert_snapshot!("child_refused_verbs_transcript", h.transcript(child));
    assert_eq!(children_of(&h).len(), 1, "no grandchild was started");
    assert!(h.store.agent(&AgentId::local()).continuations_from(child).unwrap().is_empty());
}

#[tokio::test]
async fn continue_session_is_refused_while_the_turns_children_are_parked() {
    let h = Harness::with_script(
        script(
            json!([
                { "tool_calls": [
                    { "id": "d1", "name": "delegate", "arguments": { "task": "Look around" } },
                    { "id": "c1", "name": "continue_session", "arguments": {
                        "reason": "phase_change", "title": "Next", "description": "d", "handoff": { "purpose": "p" } } }
                ] },
                text("Read the child's answer first."),
            ]),
            vec![json!([text("Looked.")])],
        ),
        Options::default(),
    );
    let outcome = &h.send("Look, then move on").await[0];
    assert_eq!((outcome.status, outcome.continued_to.is_none()), (RunStatus::Succeeded, true));
    insta::assert_snapshot!("parked_turn_refuses_continue_transcript", h.transcript(h.session));
    assert!(h.store.agent(&AgentId::local()).continuations_from(h.session).unwrap().is_empty(), "nothing created");
}

#[tokio::test]
async fn cancelling_the_parent_cancels_its_children() {
    let started = Arc::new(tokio::sync::Semaphore::new(0));
    let h = Harness::with_script(
        script(
            json!([delegating(&[json!({ "task": "Wait" }), json!({ "task": "Wait too" })]), text("unreached")]),
            vec![json!([call("w1", "wait", json!({}))]), json!([call("w2", "wait", json!({}))])],
        ),
        Options { extra_tools: vec![Arc::new(Waits { started: started.clone() })], ..Options::default() },
    );
    let cancel = h.cancel.0.clone();
    tokio::spawn(async move {
        // Both children's calls started (in whichever order, however early).
        started.acquire_many(2).await.unwrap().forget();
        let _ = cancel.send(true);
    });
    let outcome = &h.send("Wait twice").await[0];
    assert_eq!(outcome.status, RunStatus::Cancelled);
    insta::assert_snapshot!("cancelled_parent_transcript", h.transcript(h.session));
    for child in children_of(&h) {
        assert_eq!(runs(&h, child)[0].status, seri_core::RunStatus::Cancelled);
        let cancelled = h
            .events(child)
            .into_iter()
            .any(|e| matches!(e.body, EventBody::ToolResult(r) if r.is_error && r.content.starts_with("cancelled")));
        assert!(cancelled, "the child's call got a cancelled result:\n{}", h.transcript(child));
    }
    assert_eq!(children_of(&h).len(), 2);
}

#[tokio::test]
async fn a_childs_provider_failure_is_the_parents_tool_error() {
    let h = Harness::with_script(
        script(
            json!([delegating(&[json!({ "task": "Fail" }), json!({ "task": "Succeed" })]), text("One of two.")]),
            vec![json!([{ "error": { "kind": "auth", "message": "key revoked" } }]), json!([text("Fine.")])],
        ),
        Options::default(),
    );
    let outcome = &h.send("Go").await[0];
    assert_eq!((outcome.status, outcome.result.as_deref()), (RunStatus::Succeeded, Some("One of two.")));
    let results = delegate_results(&h);
    assert!(results[0].1 && results[0].0.starts_with("the child run failed: "), "{results:?}");
    assert!(results[0].0.contains("key revoked"), "{results:?}");
    assert_eq!(results[1], ("Fine.".to_owned(), false));
    assert_eq!(runs(&h, children_of(&h)[0])[0].status, seri_core::RunStatus::Failed);
}

#[tokio::test]
async fn a_bad_delegation_is_an_error_result_and_starts_nothing() {
    let h = Harness::with_script(
        script(
            json!([
                delegating(&[
                    json!({ "task": "Use a tool that does not exist", "tools": ["list", "web_search"] }),
                    json!({ "task": "Continue for me", "tools": ["continue_session"] }),
                    json!({ "task": "" }),
                ]),
                text("Oops."),
            ]),
            vec![],
        ),
        Options::default(),
    );
    h.send("Go").await;
    let results = delegate_results(&h);
    assert!(results.iter().all(|(_, is_error)| *is_error));
    assert!(results[0].0.starts_with("`tools[1]`: there is no tool named `web_search`"), "{results:?}");
    assert!(results[1].0.starts_with("`tools[0]`: `continue_session` is not available to a child run"), "{results:?}");
    assert_eq!(results[2].0, "`task`: empty");
    assert!(children_of(&h).is_empty());
}

#[tokio::test]
async fn with_a_depth_limit_of_two_a_child_delegates_once_more_and_no_further() {
    let h = Harness::with_script(
        json!({
            "turns": [delegating(&[json!({ "task": "Delegate again" })]), text("Done.")],
            "children": [{
                "turns": [
                    call("g1", "delegate", json!({ "task": "Be the grandchild" })),
                    text("The grandchild said: deep."),
                ],
                "children": [{ "turns": [call("g2", "delegate", json!({ "task": "Too deep" })), text("deep")] }]
            }]
        }),
        Options { extra_tools: vec![Arc::new(Delegate::with_max_depth(2))], ..Options::default() },
    );
    let (_, events) = send_observed(&h, "Go").await;
    assert_eq!(delegate_results(&h), [("The grandchild said: deep.".to_owned(), false)]);
    let child = children_of(&h)[0];
    let grandchild_run = &h.store.agent(&AgentId::local()).child_runs(runs(&h, child)[0].id).unwrap()[0];
    assert_eq!(grandchild_run.kind, seri_core::RunKindName::DelegatedChild);
    let refused = h
        .events(grandchild_run.session_id)
        .into_iter()
        .find_map(|e| match e.body {
            EventBody::ToolResult(r) if r.name == "delegate" => Some(r.content),
            _ => None,
        })
        .unwrap();
    assert!(refused.contains("cannot delegate in turn"), "{refused}");
    let sessions: std::collections::HashSet<SessionId> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::ChildProgress(p) => Some(p.session_id),
            _ => None,
        })
        .collect();
    assert_eq!(sessions.len(), 2, "the grandchild's progress reaches the top-level observer too");
}
