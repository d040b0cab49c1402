//! One scenario per reason the verb contract names (topic change, phase
//! change, refocus, context pressure, user request): a short conversation,
//! then the message at which the model continues. Each checks the edge, the
//! links both ways, that the predecessor gains only the call and its result,
//! that the provider is not called again for the predecessor, and snapshots
//! the successor's first request.

use serde_json::{Value, json};
use seri_core::{AgentId, ContinueReason, EventBody};
use seri_runloop::{RunOutcome, RunStatus};

use super::logged_request;
use crate::support::{Harness, call, text};

struct Case {
    /// Names the snapshot of the successor's first request.
    name: &'static str,
    reason: ContinueReason,
    /// Exchanges before the message that continues: what the person typed
    /// and what the model answered.
    before: &'static [(&'static str, &'static str)],
    /// The prompt tokens the model reports on its last answer before the
    /// continuation (context pressure).
    prompt_tokens: Option<u64>,
    /// The message at which the model continues.
    message: &'static str,
    arguments: Value,
}

/// Plays `case` and checks what every continuation must do; returns the
/// harness and the outcomes for the checks particular to the case.
async fn check(case: Case) -> (Harness, Vec<RunOutcome>) {
    let mut turns: Vec<Value> = case.before.iter().map(|(_, answer)| text(answer)).collect();
    if let (Some(tokens), Some(last)) = (case.prompt_tokens, turns.last_mut()) {
        last["usage"] = json!({ "input": tokens, "cache_read": 0, "cache_write": 0, "output": 10 });
    }
    turns.push(call("cont_1", "continue_session", case.arguments.clone()));
    turns.push(text("Answered by the successor."));
    let h = Harness::new(Value::from(turns));
    for (message, _) in case.before {
        h.send(message).await;
    }
    let initiating_seq = h.events(h.session).len() as u64 + 1;
    let outcomes = h.send(case.message).await;

    assert_eq!(outcomes.len(), 2, "the predecessor's run, then the successor's: {outcomes:?}");
    let continued = outcomes[0].continued_to.clone().expect("the predecessor continued");
    assert_eq!((outcomes[0].status, continued.reason), (RunStatus::Succeeded, case.reason));
    assert_eq!(outcomes[0].result, None, "the predecessor gave no answer of its own");
    assert_eq!(outcomes[1].session_id, continued.session_id);
    assert_eq!(outcomes[1].result.as_deref(), Some("Answered by the successor."));
    assert_eq!(h.requests().len(), case.before.len() + 2, "no further request for the predecessor");

    let store = h.store.agent(&AgentId::local());
    let edge = store.continuation_into(continued.session_id).unwrap().expect("an edge into the successor");
    assert_eq!((edge.predecessor_session_id, edge.reason), (h.session, case.reason));
    assert_eq!(edge.tool_call_id.as_str(), "cont_1");
    assert_eq!(edge.manifest.initiating_seq.get(), initiating_seq);
    let (predecessor, successor) = (store.info(h.session).unwrap(), store.info(continued.session_id).unwrap());
    let to = predecessor.continued_to.expect("continuedTo");
    let from = successor.continued_from.expect("continuedFrom");
    assert_eq!((to.session_id, to.reason, to.continuation_id), (continued.session_id, case.reason, edge.id));
    assert_eq!((from.session_id, from.reason, from.continuation_id), (h.session, case.reason, edge.id));
    assert_eq!(successor.title, case.arguments["title"].as_str().unwrap());

    // After the initiating message the predecessor has the model's turn and
    // the call's result, nothing else.
    let events = h.events(h.session);
    let kinds: Vec<&str> = events.iter().skip(initiating_seq as usize).map(|e| e.body.kind()).collect();
    assert_eq!(kinds, ["message", "tool_call", "tool_result"]);

    let names = [(h.session, "<PREDECESSOR>"), (continued.session_id, "<SUCCESSOR>")];
    let request = logged_request(&h, case.before.len() + 1, &names);
    insta::assert_json_snapshot!(format!("{}_successor_first_request", case.name), request);
    (h, outcomes)
}

#[tokio::test]
async fn topic_change() {
    check(Case {
        name: "topic_change",
        reason: ContinueReason::TopicChange,
        before: &[("Which museums in Porto open on Mondays?", "Serralves and the Soares dos Reis museum do.")],
        prompt_tokens: None,
        message: "Different thing: a hotel in Lisbon near the river?",
        arguments: json!({
            "reason": "topic_change",
            "title": "Lisbon hotel",
            "description": "Finding a hotel near the river in Lisbon",
            "handoff": {
                "purpose": "Help the person find a hotel in Lisbon.",
                "currentRequest": "A hotel near the river.",
                "cautions": ["The Porto museum question was answered; do not bring it back."]
            }
        }),
    })
    .await;
}

#[tokio::test]
async fn phase_change() {
    check(Case {
        name: "phase_change",
        reason: ContinueReason::PhaseChange,
        before: &[
            ("Design the export: CSV or JSON?", "JSON, written as a stream so large exports fit in memory."),
            ("Agreed. File names?", "export-<date>.json, one file per day."),
        ],
        prompt_tokens: None,
        message: "The design is settled. Implement it.",
        arguments: json!({
            "reason": "phase_change",
            "title": "Export: implementation",
            "description": "Implementing the agreed JSON export",
            "handoff": {
                "purpose": "Implement the export feature as designed.",
                "currentRequest": "Implement the design.",
                "decisions": ["JSON, streamed", "File names export-<date>.json, one per day"],
                "nextActions": ["Write the streaming writer", "Add the daily file rotation"]
            }
        }),
    })
    .await;
}

#[tokio::test]
async fn refocus_carries_the_cited_range_as_an_excerpt() {
    let (h, outcomes) = check(Case {
        name: "refocus",
        reason: ContinueReason::Refocus,
        before: &[
            ("Three bugs: login flakes, search is slow, the footer is broken.", "Noted all three."),
            ("The login one fails one run in five.", "That points to a race in session setup."),
        ],
        prompt_tokens: None,
        message: "Let's focus only on the login flake.",
        arguments: json!({
            "reason": "refocus",
            "title": "Login flake",
            "description": "Chasing the race in session setup",
            "handoff": {
                "purpose": "Fix the flaky login test.",
                "currentRequest": "Focus on the login flake only.",
                "establishedFacts": ["It fails one run in five"]
            },
            "sources": [{ "kind": "session_events", "fromSeq": 3, "toSeq": 4 }]
        }),
    })
    .await;
    let successor = outcomes[0].continued_to.as_ref().unwrap().session_id;
    let edge = h.store.agent(&AgentId::local()).continuation_into(successor).unwrap().unwrap();
    let excerpts: Vec<(u64, u64)> = edge.manifest.included.iter().map(|r| (r.from_seq.get(), r.to_seq.get())).collect();
    assert!(excerpts.contains(&(3, 4)), "the cited range was loaded: {excerpts:?}");
}

#[tokio::test]
async fn context_pressure_is_what_the_predecessor_was_warned_about() {
    let (h, _) = check(Case {
        name: "context_pressure",
        reason: ContinueReason::ContextPressure,
        before: &[("Summarise the design document.", "Here is the summary of all forty sections.")],
        // 115000 of the scripted model's 128000: past the 85% warning.
        prompt_tokens: Some(115_000),
        message: "Now list the open questions.",
        arguments: json!({
            "reason": "context_pressure",
            "title": "Design document review",
            "description": "Listing the open questions of the design document",
            "handoff": {
                "purpose": "Review the design document with the person.",
                "currentRequest": "List the open questions.",
                "establishedFacts": ["The summary of all forty sections was given"]
            }
        }),
    })
    .await;
    let turn_blocks = |request: &Value| request["messages"].as_array().unwrap().last().unwrap()["text"].clone();
    let continuing = turn_blocks(&h.requests()[1]);
    assert!(continuing.as_str().unwrap().contains(r#"tokens="115000" window="128000" percent="89""#), "{continuing}");
    let first = turn_blocks(&h.requests()[2]);
    // The successor starts fresh: nothing billed yet, so the block is the
    // estimate of its own first request, not the predecessor's figure.
    let first = first.as_str().unwrap();
    let percent: u64 = first
        .split("percent=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or(u64::MAX);
    assert!(percent < 10 && first.contains(r#"estimated="true""#), "the successor starts fresh: {first}");
}

#[tokio::test]
async fn user_request() {
    check(Case {
        name: "user_request",
        reason: ContinueReason::UserRequest,
        before: &[("Draft a packing list for Lisbon.", "Passport, charger, sandals, a light jacket.")],
        prompt_tokens: None,
        message: "Please start a fresh session for the budget.",
        arguments: json!({
            "reason": "user_request",
            "title": "Lisbon budget",
            "description": "Budgeting the Lisbon trip",
            "handoff": {
                "purpose": "Plan the budget of the Lisbon trip.",
                "currentRequest": "The person asked for a fresh session for the budget."
            }
        }),
    })
    .await;
}

/// The run that continued is recorded as succeeded with where it went.
#[tokio::test]
async fn the_continued_run_is_recorded_as_succeeded_with_its_successor() {
    let (h, outcomes) = check(Case {
        name: "no_earlier_exchange",
        reason: ContinueReason::TopicChange,
        before: &[],
        prompt_tokens: None,
        message: "Unrelated: which wine goes with bacalhau?",
        arguments: json!({
            "reason": "topic_change",
            "title": "Wine pairing",
            "description": "Pairing wine with bacalhau",
            "handoff": { "purpose": "Suggest wine.", "currentRequest": "Wine for bacalhau." }
        }),
    })
    .await;
    let continued = outcomes[0].continued_to.clone().unwrap();
    let runs = h.store.agent(&AgentId::local()).runs(h.session).unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].status, seri_core::RunStatus::Succeeded);
    let result = runs[0].result.clone().unwrap();
    let to = result.continued_to.unwrap();
    assert_eq!((to.session_id, to.continuation_id), (continued.session_id, continued.continuation_id));
    assert!(
        !h.events(h.session).iter().any(|e| matches!(&e.body, EventBody::ToolResult(r) if r.is_error)),
        "nothing was refused"
    );
}
