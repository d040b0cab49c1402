//! The HTTP routes: a plain turn, reads, paging, auth, bad input, two
//! clients on one session, 202 and cancel, approvals, and the OpenAPI
//! document's freshness.

use serde_json::{Value, json};
use seri_server::ServerConfig;

use crate::support::{Server, TOKEN, text};

#[tokio::test]
async fn health_needs_no_token() {
    let server = Server::start(json!([])).await;
    let health: Value =
        server.http.get(format!("{}/api/health", server.url)).send().await.unwrap().json().await.unwrap();
    assert_eq!(health, json!({ "ok": true, "version": env!("CARGO_PKG_VERSION") }));
    server.stop().await;
}

#[tokio::test]
async fn context_usage_a_provider_did_not_report_is_the_local_estimate_marked_as_one() {
    let server = Server::start(json!([{ "text": "No usage from this server." }])).await;
    let session = server.session().await;
    let shown: Value = server.get_json(&format!("/api/sessions/{session}")).await;
    assert_eq!(shown["contextUsage"], Value::Null, "nothing to measure before the first answer");
    assert_eq!(server.say(&session, "Hi").await["status"], "succeeded");
    let shown: Value = server.get_json(&format!("/api/sessions/{session}")).await;
    let usage = &shown["contextUsage"];
    assert_eq!(usage["estimated"], true, "{shown}");
    assert!(usage["tokens"].as_u64().unwrap() > 0, "unknown is not zero: {shown}");
    assert_eq!(usage["window"], 100_000);
}

#[tokio::test]
async fn a_plain_turn_then_the_session_its_events_and_its_thread() {
    let usage = json!({ "input": 60000, "cache_read": 10000, "cache_write": 0, "output": 20 });
    let server = Server::start(json!([{ "text": "Hello, client.", "usage": usage }])).await;
    let session = server.session().await;
    let answer = server.say(&session, "Hi").await;
    assert_eq!(answer["status"], "succeeded");
    assert_eq!(answer["result"], "Hello, client.");
    assert_eq!(answer["sessionId"], session.as_str());
    assert_eq!(answer["seq"], 1);
    assert!(answer["eventId"].is_string() && answer["runId"].is_string(), "{answer}");
    assert_eq!(answer["continuedToSessionId"], Value::Null);

    let shown: Value = server.get_json(&format!("/api/sessions/{session}")).await;
    assert_eq!(shown["session"]["id"], session.as_str());
    assert_eq!(shown["contextWindow"], 100_000);
    assert_eq!(shown["contextUsage"], json!({ "tokens": 70000, "window": 100000, "percent": 70, "estimated": false }));

    let page: Value = server.get_json(&format!("/api/sessions/{session}/events?limit=1")).await;
    assert_eq!(page["events"].as_array().unwrap().len(), 1);
    assert_eq!(page["events"][0]["seq"], 1);
    assert_eq!(page["events"][0]["event"]["type"], "message");
    assert_eq!(page["events"][0]["event"]["content"], "Hi");
    assert_eq!(page["nextSeq"], 2);
    let rest: Value = server.get_json(&format!("/api/sessions/{session}/events?fromSeq=2")).await;
    assert_eq!(rest["events"][0]["event"]["content"], "Hello, client.");
    assert_eq!(rest["nextSeq"], Value::Null);

    let thread = server.get(&format!("/api/sessions/{session}/thread")).send().await.unwrap();
    assert!(thread.headers()["content-type"].to_str().unwrap().starts_with("text/plain"));
    assert_eq!(thread.text().await.unwrap(), "[1] user: Hi\n[2] assistant: Hello, client.\n");

    let listed: Value = server.get_json("/api/sessions?limit=10").await;
    assert_eq!(listed["sessions"][0]["id"], session.as_str());
    let before = listed["sessions"][0]["updatedAt"].as_str().unwrap().to_owned();
    let older: Value = server.get_json(&format!("/api/sessions?before={before}")).await;
    assert_eq!(older["sessions"], json!([]), "nothing was updated before the only session");
    // The full cursor: the last session's time and id.
    let after_it: Value = server.get_json(&format!("/api/sessions?before={before}&beforeId={session}")).await;
    assert_eq!(after_it["sessions"], json!([]), "nothing comes after the only session");
    let alone = server.get(&format!("/api/sessions?beforeId={session}")).send().await.unwrap();
    assert_eq!(alone.status(), 400, "beforeId without before");
    let bad = server.get(&format!("/api/sessions?before={before}&beforeId=nope")).send().await.unwrap();
    assert_eq!(bad.status(), 400, "beforeId that is no session id");
    server.stop().await;
}

#[tokio::test]
async fn a_missing_or_wrong_token_is_401_and_another_agents_session_is_404_everywhere() {
    let server = Server::start(json!([text("Mine.")])).await;
    let session = server.session().await;
    server.say(&session, "Hi").await;
    let missing = server.http.get(format!("{}/api/sessions", server.url)).send().await.unwrap();
    assert_eq!(missing.status(), 401);
    let body: Value = missing.json().await.unwrap();
    assert_eq!(body["error"]["code"], "unauthorized");
    let wrong = server.http.get(format!("{}/api/sessions", server.url)).bearer_auth("nope").send().await.unwrap();
    assert_eq!(wrong.status(), 401);

    let other = |method: reqwest::Method, path: String| {
        server.http.request(method, format!("{}{path}", server.url)).bearer_auth(&server.other_token)
    };
    let listed: Value = other(reqwest::Method::GET, "/api/sessions".into()).send().await.unwrap().json().await.unwrap();
    assert_eq!(listed["sessions"], json!([]), "another agent sees none of ours");
    let routes = [
        (reqwest::Method::GET, format!("/api/sessions/{session}"), None),
        (reqwest::Method::GET, format!("/api/sessions/{session}/events"), None),
        (reqwest::Method::GET, format!("/api/sessions/{session}/thread"), None),
        (reqwest::Method::POST, format!("/api/sessions/{session}/messages"), Some(json!({ "text": "hijack" }))),
        (reqwest::Method::POST, format!("/api/sessions/{session}/cancel"), Some(json!({}))),
    ];
    for (method, path, body) in routes {
        let mut request = other(method.clone(), path.clone());
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 404, "{method} {path}");
        let missing = server.get(&path.replace(&session, "01a22b56-d880-7000-8000-000000000000")).send().await.unwrap();
        if method == reqwest::Method::GET {
            assert_eq!(missing.status(), 404, "a missing session looks the same: {path}");
        }
    }
    let thread = server.thread(&session).await;
    assert!(!thread.contains("hijack"), "nothing was written: {thread}");
    server.stop().await;
}

#[tokio::test]
async fn bad_input_is_a_4xx_naming_what_was_wrong_and_writes_nothing() {
    let config = ServerConfig { body_limit: 4096, message_body_limit: 4096, ..ServerConfig::default() };
    let server = Server::with(json!([]), config).await;
    let session = server.session().await;
    let messages = format!("{}/api/sessions/{session}/messages", server.url);
    let send_raw = |body: String| {
        server.http.post(&messages).bearer_auth(TOKEN).header("content-type", "application/json").body(body).send()
    };
    let cases = [
        (send_raw("{not json".into()).await.unwrap(), 400, "bad_json"),
        (send_raw(json!({ "text": "hi", "colour": "red" }).to_string()).await.unwrap(), 400, "unknown_field"),
        (send_raw(json!({ "wait": true }).to_string()).await.unwrap(), 400, "bad_json"),
        // serde would read a struct from an array; every body is an object.
        (send_raw(json!(["hi", null]).to_string()).await.unwrap(), 400, "bad_json"),
        (send_raw(json!({ "text": "x".repeat(10_000) }).to_string()).await.unwrap(), 413, "too_large"),
        (send_raw(json!({ "text": "  " }).to_string()).await.unwrap(), 400, "bad_request"),
        (
            server.get(&format!("/api/sessions/{session}/events?fromSeq=5&toSeq=2")).send().await.unwrap(),
            400,
            "bad_range",
        ),
        (server.get(&format!("/api/sessions/{session}/events?fromSeq=abc")).send().await.unwrap(), 400, "bad_query"),
        (server.get(&format!("/api/sessions/{session}/events?limit=0")).send().await.unwrap(), 400, "bad_range"),
        // Past int64, as the document says: not read as "to the end".
        (
            server.get(&format!("/api/sessions/{session}/events?toSeq=9223372036854775808")).send().await.unwrap(),
            400,
            "bad_range",
        ),
        (server.get("/api/sessions?limit=9999").send().await.unwrap(), 400, "bad_query"),
        (server.get("/api/sessions/not-an-id").send().await.unwrap(), 404, "not_found"),
        (server.get("/api/continuations/01a22b56-d880-7000-8000-000000000000").send().await.unwrap(), 404, "not_found"),
        (server.get("/api/no-such-route").send().await.unwrap(), 404, "not_found"),
    ];
    for (response, status, code) in cases {
        assert_eq!(response.status(), status, "{code}");
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["error"]["code"], code, "{body}");
        assert!(!body["error"]["message"].as_str().unwrap().is_empty());
    }
    let events: Value = server.get_json(&format!("/api/sessions/{session}/events")).await;
    assert_eq!(events["events"], json!([]), "nothing was written");
    server.stop().await;
}

#[tokio::test]
async fn two_clients_posting_to_one_session_at_once_are_both_answered_in_turn() {
    let server = Server::start(json!([text("One answer."), text("Another answer.")])).await;
    let session = server.session().await;
    let (a, b) = tokio::join!(server.say(&session, "First client."), server.say(&session, "Second client."));
    assert_eq!((a["status"].as_str(), b["status"].as_str()), (Some("succeeded"), Some("succeeded")));
    let thread = server.thread(&session).await;
    let lines: Vec<&str> = thread.lines().collect();
    assert_eq!(lines.len(), 4, "{thread}");
    // Each message is followed by its answer: never two messages in a row.
    assert!(lines[0].contains("user:") && lines[1].contains("assistant:"), "{thread}");
    assert!(lines[2].contains("user:") && lines[3].contains("assistant:"), "{thread}");
    let seqs = [a["seq"].as_u64().unwrap(), b["seq"].as_u64().unwrap()];
    assert!(seqs == [1, 3] || seqs == [3, 1], "{seqs:?}");
    server.stop().await;
}

#[tokio::test]
async fn without_wait_the_message_is_accepted_with_its_ids_and_answered_later() {
    let server = Server::start(json!([text("Later.")])).await;
    let session = server.session().await;
    let response = server
        .post(&format!("/api/sessions/{session}/messages"), json!({ "text": "No rush.", "wait": false }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 202);
    let accepted: Value = response.json().await.unwrap();
    assert_eq!(accepted["sessionId"], session.as_str());
    assert_eq!(accepted["seq"], 1);
    assert!(accepted["eventId"].is_string() && accepted["runId"].is_string(), "{accepted}");
    // The answer lands without the client waiting for it, and the job the
    // 202 named says so: to its own agent only.
    let job = accepted["jobId"].as_str().unwrap().to_owned();
    for _ in 0..200 {
        let got: Value = server.get_json(&format!("/api/jobs/{job}")).await;
        if got["state"] == "done" {
            assert_eq!((got["id"].as_str(), got["sessionId"].as_str()), (Some(job.as_str()), Some(session.as_str())));
            assert_eq!(
                (got["eventId"].clone(), got["runId"].clone()),
                (accepted["eventId"].clone(), accepted["runId"].clone())
            );
            assert_eq!(
                (got["outcome"]["status"].as_str(), got["outcome"]["result"].as_str()),
                (Some("succeeded"), Some("Later."))
            );
            assert!(server.thread(&session).await.contains("assistant: Later."));
            let theirs = server.http.get(format!("{}/api/jobs/{job}", server.url)).bearer_auth(&server.other_token);
            assert_eq!(theirs.send().await.unwrap().status(), 404, "another agent's job is a missing one");
            assert_eq!(server.get("/api/jobs/no-such-job").send().await.unwrap().status(), 404);
            server.stop().await;
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    panic!("the answer never came");
}

fn bash(id: &str, command: &str) -> Value {
    json!({ "tool_calls": [{ "id": id, "name": "bash", "arguments": { "command": command } }] })
}

#[tokio::test]
async fn cancel_stops_a_run_waiting_on_a_question_and_its_call_gets_a_result() {
    let server = Server::start(json!([bash("b1", "echo never")])).await;
    let session = server.session().await;
    let mut ws = server.ws().await;
    ws.subscribe(json!({ "type": "subscribe", "sessionId": session })).await;
    let waiting = server.say(&session, "Run it.");
    let cancelling = async {
        ws.collect_until(|f| f["type"] == "approval-requested").await;
        let cancelled: Value = server.post_json(&format!("/api/sessions/{session}/cancel"), json!({})).await;
        assert_eq!(cancelled, json!({ "cancelled": true }));
    };
    let (answer, ()) = tokio::join!(waiting, cancelling);
    assert_eq!(answer["status"], "failed");
    assert_eq!(answer["error"], "cancelled");
    let thread = server.thread(&session).await;
    assert!(thread.contains("tool result bash (error): cancelled"), "{thread}");
    let idle: Value = server.post_json(&format!("/api/sessions/{session}/cancel"), json!({})).await;
    assert_eq!(idle, json!({ "cancelled": false }), "nothing runs now");
    server.stop().await;
}

#[tokio::test]
async fn a_refusal_can_say_what_to_do_instead_and_the_model_reads_it() {
    let server = Server::start(json!([bash("b1", "rm -rf build"), text("Kept it.")])).await;
    let session = server.session().await;
    let mut ws = server.ws().await;
    ws.subscribe(json!({ "type": "subscribe", "sessionId": session })).await;
    let waiting = server.say(&session, "Clean up.");
    let answering = async {
        let frames = ws.collect_until(|f| f["type"] == "approval-requested").await;
        let run = frames.last().unwrap()["runId"].as_str().unwrap().to_owned();
        let path = format!("/api/runs/{run}/approvals/b1");
        let both = server.post(&path, json!({ "allow": true, "instead": "no" })).send().await.unwrap();
        assert_eq!(both.status(), 400, "instead is a kind of no");
        let answered = server.post_json(&path, json!({ "allow": false, "instead": "keep build/, it is cached" })).await;
        assert_eq!(answered, json!({ "answered": true }));
    };
    let (answer, ()) = tokio::join!(waiting, answering);
    assert_eq!(answer["result"], "Kept it.");
    let thread = server.thread(&session).await;
    assert!(
        thread.contains("the person declined bash: rm -rf build and said instead: keep build/, it is cached"),
        "{thread}"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_question_is_announced_and_answered_over_the_api() {
    let server = Server::start(json!([bash("b1", "echo allowed"), text("Done.")])).await;
    let session = server.session().await;
    let mut ws = server.ws().await;
    ws.subscribe(json!({ "type": "subscribe", "sessionId": session })).await;
    let waiting = server.say(&session, "Run it.");
    let answering = async {
        let frames = ws.collect_until(|f| f["type"] == "approval-requested").await;
        let asked = frames.last().unwrap().clone();
        assert_eq!(asked["tool"], "bash");
        assert_eq!(asked["callId"], "b1");
        assert_eq!(asked["arguments"], json!({ "command": "echo allowed" }));
        assert_eq!(asked["summary"], "bash: echo allowed");
        let run = asked["runId"].as_str().unwrap().to_owned();
        let wrong =
            server.post(&format!("/api/runs/{run}/approvals/nope"), json!({ "allow": true })).send().await.unwrap();
        assert_eq!(wrong.status(), 404);
        let other = server
            .http
            .post(format!("{}/api/runs/{run}/approvals/b1", server.url))
            .bearer_auth(&server.other_token)
            .json(&json!({ "allow": true }))
            .send()
            .await
            .unwrap();
        assert_eq!(other.status(), 404, "another agent cannot answer our question");
        // A client that arrives now finds the question waiting.
        let waiting = server.get_json(&format!("/api/sessions/{session}/approvals")).await;
        assert_eq!(waiting["approvals"], json!([asked]));
        let theirs = server
            .http
            .get(format!("{}/api/sessions/{session}/approvals", server.url))
            .bearer_auth(&server.other_token)
            .send()
            .await
            .unwrap();
        assert_eq!(theirs.status(), 404, "another agent's session does not exist for them");
        let answered: Value =
            server.post_json(&format!("/api/runs/{run}/approvals/b1"), json!({ "allow": true })).await;
        assert_eq!(answered, json!({ "answered": true }));
        let waiting = server.get_json(&format!("/api/sessions/{session}/approvals")).await;
        assert_eq!(waiting, json!({ "approvals": [] }));
    };
    let (answer, ()) = tokio::join!(waiting, answering);
    assert_eq!(answer["result"], "Done.");
    let thread = server.thread(&session).await;
    assert!(thread.contains("tool result bash: exit code: 0\n  stdout:\n  allowed"), "{thread}");
    server.stop().await;
}

#[tokio::test]
async fn load_many_clients_on_few_sessions_every_message_answered_once() {
    // Bounded: 10 clients x 5 messages on 3 sessions, loopback only.
    let turns: Vec<Value> = (0..50).map(|i| text(&format!("Answer {i}."))).collect();
    let server = Server::start(Value::Array(turns)).await;
    let mut sessions = Vec::new();
    for _ in 0..3 {
        sessions.push(server.session().await);
    }
    let clients = (0..10).map(|c| {
        let (server, session) = (&server, sessions[c % 3].clone());
        async move {
            for m in 0..5 {
                let answer = server.say(&session, &format!("client {c} message {m}")).await;
                assert_eq!(answer["status"], "succeeded", "{answer}");
            }
        }
    });
    futures_util::future::join_all(clients).await;
    let mut answered = 0;
    for session in &sessions {
        let thread = server
            .get(&format!("/api/sessions/{session}/thread?limit=1000"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let lines: Vec<&str> = thread.lines().collect();
        for pair in lines.chunks(2) {
            assert!(pair[0].contains("user: client"), "{thread}");
            assert!(pair.get(1).is_some_and(|l| l.contains("assistant: Answer")), "one answer each: {thread}");
        }
        answered += lines.len() / 2;
    }
    assert_eq!(answered, 50);
    server.stop().await;
}

#[test]
fn the_committed_openapi_document_is_fresh() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("openapi.json");
    let generated = seri_server::openapi::document();
    if std::env::var_os("SERI_UPDATE_OPENAPI").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "crates/server/openapi.json is stale: run `SERI_UPDATE_OPENAPI=1 cargo test -p seri-server openapi` and commit it"
    );
    let document: Value = serde_json::from_str(&generated).unwrap();
    assert_eq!(document["openapi"], "3.1.0");
    for path in ["/api/sessions", "/api/sessions/{id}/messages", "/api/runs/{runId}/approvals/{callId}", "/api/ws"] {
        assert!(document["paths"].get(path).is_some(), "{path} is documented");
    }
}

#[tokio::test]
async fn a_message_sent_as_a_script_is_answered_by_a_run_that_never_continues() {
    let continue_call = json!({ "tool_calls": [{
        "id": "cont_1",
        "name": "continue_session",
        "arguments": { "reason": "topic_change", "title": "Elsewhere", "handoff": { "purpose": "p", "currentRequest": "r" } }
    }] });
    let server = Server::start(json!([continue_call, text("Staying here.")])).await;
    let session = server.session().await;
    let path = format!("/api/sessions/{session}/messages");
    let refused = server.post(&path, json!({ "text": "Nightly check.", "runKind": "robot" })).send().await.unwrap();
    assert_eq!(refused.status(), 400);
    let answer = server.post_json(&path, json!({ "text": "Nightly check.", "runKind": "script" })).await;
    assert_eq!(answer["status"], "succeeded", "{answer}");
    assert_eq!(answer["continuedToSessionId"], Value::Null, "{answer}");
    let thread = server.thread(&session).await;
    assert!(thread.contains("scripts never continue sessions"), "{thread}");
}

#[tokio::test]
async fn a_message_carries_attachments_and_a_bad_one_is_refused_before_anything_is_written() {
    use base64::Engine as _;
    let server = Server::start(json!([text("A picture of a panic.")])).await;
    let session = server.session().await;
    let path = format!("/api/sessions/{session}/messages");
    let refused = [
        (json!([{ "name": "a.png", "data": "not base64!" }]), 400, "attachments[0].data is not base64"),
        (json!([{ "name": "../a.png", "data": "" }]), 400, "attachments[0].name must be a file name"),
        (json!([{ "name": "a.png", "data": "", "colour": "red" }]), 400, "colour"),
    ];
    for (attachments, status, says) in refused {
        let response = server.post(&path, json!({ "text": "see", "attachments": attachments })).send().await.unwrap();
        assert_eq!(response.status(), status, "{says}");
        let body: Value = response.json().await.unwrap();
        assert!(body["error"]["message"].as_str().unwrap().contains(says), "{body}");
    }
    let events: Value = server.get_json(&format!("/api/sessions/{session}/events")).await;
    assert_eq!(events["events"], json!([]), "nothing was written");

    // A 1.5 MiB picture: past the 1 MiB limit of other bodies, within the
    // message body's.
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.resize(1_500_000, 7);
    let data = base64::engine::general_purpose::STANDARD.encode(&png);
    let body = json!({ "text": "What is this?", "attachments": [
        { "name": "panic.png", "data": data },
        { "name": "log.txt", "mediaType": "text/plain", "data": base64::engine::general_purpose::STANDARD.encode("boom") },
    ] });
    let response = server.post(&path, body).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let answer: Value = response.json().await.unwrap();
    assert_eq!(answer["result"], "A picture of a panic.", "{answer}");

    let events: Value = server.get_json(&format!("/api/sessions/{session}/events")).await;
    let attachments = &events["events"][0]["event"]["attachments"];
    assert_eq!((&attachments[0]["mediaType"], &attachments[0]["bytes"]), (&json!("image/png"), &json!(1_500_000)));
    assert_eq!(attachments[1]["mediaType"], "text/plain", "a declared type is kept for other files");
    let id = attachments[0]["id"].as_str().unwrap();
    let stored = server._dir.path().join("profile").join("attachments").join(&session).join(id);
    assert_eq!(std::fs::read(stored).unwrap(), png, "stored byte for byte");
    assert!(server.thread(&session).await.contains(&format!("[attachment:{id} \"panic.png\"]")));
    server.stop().await;
}

#[tokio::test]
async fn a_fork_shares_the_sessions_events_up_to_its_point_and_answers_on_its_own() {
    let server = Server::start(json!([{ "text": "First answer." }, { "text": "The fork's answer." }])).await;
    let session = server.session().await;
    server.say(&session, "First question").await;

    let forked = server.post(&format!("/api/sessions/{session}/fork"), json!({ "atSeq": 1 })).send().await.unwrap();
    assert_eq!(forked.status(), 201);
    let forked: Value = forked.json().await.unwrap();
    let fork = forked["session"]["id"].as_str().unwrap().to_owned();
    assert_eq!(forked["session"]["forkedFrom"]["sessionId"], session.as_str());
    assert_eq!(
        (forked["session"]["forkedFrom"]["forkSeq"].as_u64(), forked["session"]["lastSeq"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(forked["session"]["forkedFrom"]["via"], "api");

    assert_eq!(server.say(&fork, "Second question").await["status"], "succeeded");
    assert_eq!(
        server.thread(&fork).await,
        "[1] user: First question\n[2] user: Second question\n[3] assistant: The fork's answer.\n"
    );
    assert_eq!(server.thread(&session).await, "[1] user: First question\n[2] assistant: First answer.\n");
    let events = server.get_json(&format!("/api/sessions/{fork}/events")).await;
    let seqs: Vec<u64> = events["events"].as_array().unwrap().iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, [1, 2, 3], "{events}");
    let listed = server.get_json("/api/sessions").await;
    let row = listed["sessions"].as_array().unwrap().iter().find(|s| s["id"] == fork.as_str()).cloned().unwrap();
    assert_eq!(row["forkedFrom"]["sessionId"], session.as_str());

    // Past the end, a negative seq, an unknown field, another's session: refused with why.
    let past = server.post(&format!("/api/sessions/{session}/fork"), json!({ "atSeq": 9 })).send().await.unwrap();
    assert_eq!(past.status(), 400);
    let past: Value = past.json().await.unwrap();
    assert!(past["error"]["message"].as_str().unwrap().contains("cannot be forked at seq 9"), "{past}");
    let negative = server.post(&format!("/api/sessions/{session}/fork"), json!({ "atSeq": -1 })).send().await.unwrap();
    assert_eq!(negative.status(), 400);
    let unknown = server.post(&format!("/api/sessions/{session}/fork"), json!({ "at": 1 })).send().await.unwrap();
    assert_eq!(unknown.status(), 400);
    let missing =
        server.post("/api/sessions/01a235a6-4fb0-7000-8000-000000000000/fork", json!({})).send().await.unwrap();
    assert_eq!(missing.status(), 404);
    server.stop().await;
}

#[tokio::test]
async fn a_sessions_sandbox_is_read_and_changed() {
    let server = Server::start(json!([text("Done.")])).await;
    let session = server.session().await;
    let path = format!("/api/sessions/{session}/sandbox");
    let put = |body: Value, token: &str| {
        server.http.put(format!("{}{path}", server.url)).bearer_auth(token.to_owned()).json(&body).send()
    };
    // The server's (no sandbox) until the session changes it.
    let shown = server.get_json(&path).await;
    assert_eq!(shown, json!({"mode": "full-access", "network": true, "description": "full-access (no sandbox)"}));
    let changed: Value =
        put(json!({"mode": "read-only", "network": false}), TOKEN).await.unwrap().json().await.unwrap();
    assert_eq!(changed["mode"], "read-only");
    assert_eq!(changed["network"], false);
    // This server has no launcher, so read-only cannot be enforced: said
    // (and a command is refused rather than run bare).
    assert_eq!(
        changed["description"],
        "read-only, network off (not enforced: seri runs commands without its launcher (refuse))"
    );
    assert_eq!(server.get_json(&path).await, changed, "it stays");
    let only_network: Value = put(json!({"network": true}), TOKEN).await.unwrap().json().await.unwrap();
    assert_eq!((only_network["mode"].as_str(), only_network["network"].as_bool()), (Some("read-only"), Some(true)));
    // Each change is an event of the session, and its read shows the choice.
    let read = server.get_json(&format!("/api/sessions/{session}")).await;
    assert_eq!(
        (&read["session"]["sandboxMode"], &read["session"]["sandboxNetwork"]),
        (&json!("read-only"), &json!(true)),
        "{read}"
    );
    let events = server.get_json(&format!("/api/sessions/{session}/events")).await;
    let changes: Vec<&Value> = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["event"])
        .filter(|e| e["type"] == "sandbox_changed")
        .collect();
    assert_eq!(changes.len(), 2, "{events}");
    assert_eq!((&changes[0]["mode"], &changes[0]["network"]), (&json!("read-only"), &json!(false)));
    assert_eq!((changes[1].get("mode"), &changes[1]["network"]), (None, &json!(true)), "what was left out is left out");
    let thread = server.thread(&session).await;
    assert!(thread.starts_with("[1] sandbox: read-only, network off\n[2] sandbox: network on\n"), "{thread}");

    for bad in [json!({"mode": "open"}), json!({"colour": 1})] {
        let refused = put(bad.clone(), TOKEN).await.unwrap();
        assert_eq!(refused.status(), 400, "{bad}");
    }
    assert_eq!(put(json!({"mode": "full-access"}), &server.other_token).await.unwrap().status(), 404);
    let theirs =
        server.http.get(format!("{}{path}", server.url)).bearer_auth(&server.other_token).send().await.unwrap();
    assert_eq!(theirs.status(), 404, "another agent's session is a missing one");
    server.stop().await;
}
