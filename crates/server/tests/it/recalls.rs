//! `GET /api/recalls`: how often successors read back their predecessors'
//! threads, across the profile and for one session, as `seri sessions
//! recalls` reports it.
//!
//! A successor's reads name its predecessor's id, which a script written
//! before the predecessor existed cannot know: the sessions are made by
//! runtimes on the server's store, each playing a script written once the
//! ids it names are known; the server then reports what they left.

use std::path::Path;

use serde_json::{Value, json};
use seri_core::{AgentId, FrozenPrompt, Message, SessionId};
use seri_providers::{ProviderKind, Settings, build_provider};
use seri_runloop::{Lane, RunOutcome, RunSpec, Runtime, RuntimeParts, RuntimeSettings};
use seri_tools::{PermissionPolicy, Permissions, RunKind, ToolRegistry};

use crate::support::{Server, text};

/// A runtime of the local agent on the server's store whose model plays `turns`.
fn runtime(server: &Server, dir: &Path, name: &str, turns: Value) -> Runtime {
    let script = dir.join(name);
    std::fs::write(&script, json!({ "turns": turns }).to_string()).unwrap();
    let settings = Settings { script: Some(script), ..Settings::default() };
    let provider = build_provider(ProviderKind::Script, "", &settings, &|_| None).unwrap();
    Runtime::new(RuntimeParts {
        store: server.store.clone(),
        agent: AgentId::local(),
        provider,
        tools: ToolRegistry::with_coding_tools(),
        memory_dir: dir.join("memory"),
        permissions: Permissions::headless(PermissionPolicy::new()),
        settings: RuntimeSettings::default(),
        session_prompts: None,
    })
}

fn new_session(runtime: &Runtime, dir: &Path) -> SessionId {
    let prompt = FrozenPrompt { text: "You are a test agent.".into(), files: Vec::new(), tools: Vec::new() };
    runtime.create_session(dir.to_str().unwrap(), prompt).unwrap().id
}

/// Sends `text` and runs what it queued (a successor's run too).
async fn say(runtime: &Runtime, session: SessionId, text: &str) -> Vec<RunOutcome> {
    let event = runtime.post_user_message(session, Message::user(text)).unwrap();
    runtime.enqueue(RunSpec {
        session_id: session,
        kind: RunKind::Interactive,
        lane: Lane::Interactive,
        user_event_ids: vec![event],
        max_turns: runtime.settings().max_turns,
        message: None,
    });
    let (_cancel, cancelled) = tokio::sync::watch::channel(false);
    runtime.drain(&seri_runloop::Quiet, &cancelled).await
}

fn continue_call(id: &str, reason: &str) -> Value {
    json!({ "tool_calls": [{ "id": id, "name": "continue_session", "arguments": {
        "reason": reason,
        "title": "Lisbon hotel",
        "description": "Finding a hotel in Lisbon",
        "handoff": { "purpose": "Find a hotel in Lisbon.", "currentRequest": "A hotel near the river." }
    }}]})
}

fn read(id: &str, thread: &str, from: u64, to: u64) -> Value {
    json!({ "tool_calls": [{ "id": id, "name": "read", "arguments": {
        "target": format!("thread:{thread}"), "fromSeq": from, "toSeq": to
    }}]})
}

#[tokio::test]
async fn the_profiles_recalls_sum_every_continuation_and_one_sessions_name_its_own() {
    let server = Server::start(json!([])).await;
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();

    // A → B: the successor reads its predecessor's thread back twice.
    let first = runtime(&server, dir, "a1.json", json!([text("First answer.")]));
    let a = new_session(&first, dir);
    say(&first, a, "First question").await;
    let prefix = &a.to_string()[..13];
    let turns = json!([
        continue_call("c1", "topic_change"),
        read("r1", prefix, 1, 2),
        read("r2", prefix, 1, 1),
        text("Three hotels."),
    ]);
    let outcomes = say(&runtime(&server, dir, "a2.json", turns), a, "New topic: a hotel in Lisbon.").await;
    let b = outcomes[0].continued_to.as_ref().expect("a successor").session_id;
    assert_eq!(outcomes.last().unwrap().result.as_deref(), Some("Three hotels."));

    // C → D: a successor that reads nothing back.
    let turns = json!([text("One."), continue_call("c2", "phase_change"), text("Answered.")]);
    let second = runtime(&server, dir, "c.json", turns);
    let c = new_session(&second, dir);
    say(&second, c, "Hi").await;
    let outcomes = say(&second, c, "Next phase").await;
    let d = outcomes[0].continued_to.as_ref().expect("a successor").session_id;

    // The profile: both continuations looked at, the one with reads listed.
    let report = server.get_json("/api/recalls").await;
    assert_eq!((report["continuations"].as_u64(), report["withRecalls"].as_u64()), (Some(2), Some(1)), "{report}");
    let each = report["each"].as_array().unwrap();
    assert_eq!(each.len(), 1, "{report}");
    let one = &each[0];
    assert_eq!(one["predecessorSessionId"], a.to_string());
    assert_eq!(one["successorSessionId"], b.to_string());
    assert_eq!(one["reason"], "topic_change");
    assert!(one["budgetBytes"].as_u64().unwrap() > 0, "{one}");
    let reads: Vec<(u64, u64)> = one["recalls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["fromSeq"].as_u64().unwrap(), r["toSeq"].as_u64().unwrap()))
        .collect();
    assert_eq!(reads, [(1, 2), (1, 1)], "in the order the successor read: {one}");
    // The same figures as the continuation's own route gives.
    let edge = server.get_json(&format!("/api/continuations/{}", one["continuationId"].as_str().unwrap())).await;
    assert_eq!(one["recalls"], edge["recalls"]["reads"], "{edge}");
    let counts = json!({
        "omitted": edge["recalls"]["omitted"],
        "notIncluded": edge["recalls"]["notIncluded"],
        "alreadyIncluded": edge["recalls"]["alreadyIncluded"],
    });
    let total =
        |c: &Value| ["omitted", "notIncluded", "alreadyIncluded"].iter().map(|k| c[k].as_u64().unwrap()).sum::<u64>();
    assert_eq!(total(&counts), 2, "{counts}");
    assert_eq!(one["counts"], counts);
    assert_eq!(report["totals"], counts);
    assert_eq!(report["byReason"]["topic_change"], counts);
    assert_eq!(report["byReason"]["phase_change"], json!({ "omitted": 0, "notIncluded": 0, "alreadyIncluded": 0 }));

    // One session: the continuations into and out of it, reads or not.
    let of_c = server.get_json(&format!("/api/recalls?sessionId={c}")).await;
    assert_eq!((of_c["continuations"].as_u64(), of_c["withRecalls"].as_u64()), (Some(1), Some(0)), "{of_c}");
    assert_eq!(of_c["each"][0]["successorSessionId"], d.to_string());
    assert_eq!(of_c["each"][0]["recalls"], json!([]));
    let of_b = server.get_json(&format!("/api/recalls?sessionId={b}")).await;
    assert_eq!(of_b["each"].as_array().unwrap().len(), 1, "the edge into it: {of_b}");
    assert_eq!(of_b["each"][0]["predecessorSessionId"], a.to_string());
    assert_eq!(of_b["totals"], counts);

    // Another agent sees none of it; bad or unknown ids say so.
    let other: Value = server
        .http
        .get(format!("{}/api/recalls", server.url))
        .bearer_auth(&server.other_token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!((other["continuations"].as_u64(), other["each"].as_array().map(Vec::len)), (Some(0), Some(0)));
    let theirs = server
        .http
        .get(format!("{}/api/recalls?sessionId={a}", server.url))
        .bearer_auth(&server.other_token)
        .send()
        .await
        .unwrap();
    assert_eq!(theirs.status(), 404);
    let bad = server.get("/api/recalls?sessionId=lisbon").send().await.unwrap();
    assert_eq!(bad.status(), 400);
    let bad: Value = bad.json().await.unwrap();
    assert_eq!(bad["error"]["code"], "bad_query");
    assert!(bad["error"]["message"].as_str().unwrap().contains("sessionId must be a session id, not `lisbon`"));
    let missing = server.get("/api/recalls?sessionId=01a22b56-d880-7000-8000-000000000000").send().await.unwrap();
    assert_eq!(missing.status(), 404);
    let unknown = server.get("/api/recalls?limit=3").send().await.unwrap();
    assert_eq!(unknown.status(), 400, "a field this route does not take");
    server.stop().await;
}
