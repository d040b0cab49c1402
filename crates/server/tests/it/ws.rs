//! The WebSocket: subscriptions, the frames a continuation sends to a
//! second client, origin and token checks, and closing on shutdown.

use serde_json::{Value, json};

use crate::support::{Server, TOKEN, text};

fn continue_call() -> Value {
    json!({ "tool_calls": [{ "id": "c1", "name": "continue_session", "arguments": {
        "reason": "topic_change",
        "title": "Lisbon hotel",
        "description": "Finding a hotel in Lisbon",
        "handoff": { "purpose": "Find a hotel in Lisbon.", "currentRequest": "A hotel near the river." }
    }}]})
}

#[tokio::test]
async fn a_continuation_names_the_successor_and_a_second_client_hears_both_sessions() {
    let server = Server::start(json!([continue_call(), text("Three hotels.")])).await;
    let predecessor = server.session().await;
    let mut watcher = server.ws().await;
    watcher.subscribe(json!({ "type": "subscribe", "account": true })).await;
    watcher.subscribe(json!({ "type": "subscribe", "sessionId": predecessor })).await;
    let answer = server.say(&predecessor, "New topic: a hotel in Lisbon near the river.").await;
    let successor = answer["continuedToSessionId"].as_str().unwrap().to_owned();
    assert_eq!(answer["result"], "Three hotels.");

    let frames = watcher
        .collect_until(|f| {
            f["type"] == "session-change" && f["sessionId"] == successor.as_str() && f["session"]["lastSeq"] == 3
        })
        .await;
    let account = frames
        .iter()
        .find(|f| {
            f["type"] == "account-change" && f["reasons"].as_array().unwrap().contains(&json!("session-continued"))
        })
        .unwrap_or_else(|| panic!("no account-change with session-continued: {frames:#?}"));
    assert_eq!(account["reasons"], json!(["session-updated", "session-continued"]));
    assert_eq!(account["sessionIds"], json!([predecessor, successor]));
    let changed: Vec<&str> =
        frames.iter().filter(|f| f["type"] == "session-change").filter_map(|f| f["sessionId"].as_str()).collect();
    assert!(changed.contains(&predecessor.as_str()) && changed.contains(&successor.as_str()), "{changed:?}");
    let predecessor_view =
        frames.iter().rev().find(|f| f["type"] == "session-change" && f["sessionId"] == predecessor.as_str()).unwrap();
    assert_eq!(predecessor_view["session"]["continuedTo"]["sessionId"], successor.as_str());
    let run_events: Vec<&Value> = frames.iter().filter(|f| f["type"] == "run-event").collect();
    assert!(run_events.iter().any(|f| f["event"]["type"] == "continued"), "{run_events:#?}");

    let edge = server.get_json(&format!("/api/sessions/{successor}")).await;
    let edge_id = edge["session"]["continuedFrom"]["continuationId"].as_str().unwrap().to_owned();
    let edge: Value = server.get_json(&format!("/api/continuations/{edge_id}")).await;
    assert_eq!(edge["predecessorSessionId"], predecessor.as_str());
    assert_eq!(edge["successorSessionId"], successor.as_str());
    assert_eq!(edge["toolCallId"], "c1");
    assert_eq!(edge["reason"], "topic_change");
    assert!(edge["manifest"].is_object(), "{edge}");
    // The call as the runtime parsed it: what a client shows of the handoff.
    assert_eq!(edge["title"], "Lisbon hotel");
    assert_eq!(edge["description"], "Finding a hotel in Lisbon");
    assert_eq!(edge["handoff"]["purpose"], "Find a hotel in Lisbon.");
    assert_eq!(edge["handoff"]["currentRequest"], "A hotel near the river.");
    assert_eq!(edge["handoff"]["extra"], json!({}), "{edge}");
    // The successor answered without reading anything back.
    assert_eq!(edge["recalls"], json!({ "omitted": 0, "notIncluded": 0, "alreadyIncluded": 0, "reads": [] }), "{edge}");
    let other = server
        .http
        .get(format!("{}/api/continuations/{edge_id}", server.url))
        .bearer_auth(&server.other_token)
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), 404);
    server.stop().await;
}

#[tokio::test]
async fn an_upgrade_needs_a_token_and_a_page_of_this_server() {
    let server = Server::start(json!([])).await;
    let ws_url = server.url.replacen("http", "ws", 1);
    let refused = tokio_tungstenite::connect_async(format!("{ws_url}/api/ws")).await;
    assert!(refused.is_err(), "no token, no socket");
    let mut request = tokio_tungstenite::tungstenite::client::IntoClientRequest::into_client_request(format!(
        "{ws_url}/api/ws?token={TOKEN}"
    ))
    .unwrap();
    request.headers_mut().insert("origin", "http://evil.example".parse().unwrap());
    match tokio_tungstenite::connect_async(request).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => assert_eq!(response.status(), 403),
        other => panic!("a foreign page's socket was not refused: {other:?}"),
    }
    let mut own = tokio_tungstenite::tungstenite::client::IntoClientRequest::into_client_request(format!(
        "{ws_url}/api/ws?token={TOKEN}"
    ))
    .unwrap();
    let origin = server.url.clone();
    own.headers_mut().insert("origin", origin.parse().unwrap());
    assert!(tokio_tungstenite::connect_async(own).await.is_ok(), "this server's own page may connect");
    server.stop().await;
}

#[tokio::test]
async fn a_bad_frame_or_another_agents_session_is_an_error_frame() {
    let server = Server::start(json!([])).await;
    let mut ws = server.ws().await;
    ws.send(json!({ "type": "shout" })).await;
    let refused = ws.next().await.unwrap();
    assert_eq!(refused["type"], "error");
    assert_eq!(refused["error"]["code"], "bad_frame");
    ws.send(json!({ "type": "subscribe", "sessionId": "01a22b56-d880-7000-8000-000000000000" })).await;
    let missing = ws.next().await.unwrap();
    assert_eq!(missing["error"]["code"], "not_found");
    server.stop().await;
}

#[tokio::test]
async fn stopping_the_server_closes_its_sockets() {
    let server = Server::start(json!([])).await;
    let mut ws = server.ws().await;
    ws.subscribe(json!({ "type": "subscribe", "account": true })).await;
    let stopping = tokio::spawn(server.stop());
    assert_eq!(ws.next().await, None, "the socket closed");
    stopping.await.unwrap();
}

#[tokio::test]
async fn a_client_that_falls_behind_is_resynced_never_dropped_and_never_holds_up_a_run() {
    // Big answers, a tiny queue, and a client that reads nothing until the
    // runs are over: more than the socket buffers can hold.
    let big = "x".repeat(3 * 1024 * 1024);
    let mut turns: Vec<Value> = (0..4).map(|_| text(&big)).collect();
    turns.push(text("Short."));
    let config = seri_server::ServerConfig { ws_queue: 1, ..seri_server::ServerConfig::default() };
    let server = Server::with(Value::Array(turns), config).await;
    let session = server.session().await;
    let mut slow = server.ws().await;
    slow.subscribe(json!({ "type": "subscribe", "sessionId": session })).await;
    for i in 0..4 {
        let answer = server.say(&session, &format!("Say a lot, {i}.")).await;
        assert_eq!(answer["status"], "succeeded", "the run finished while the client read nothing");
    }
    // It reads now: what fit in its queue, then a `resync` in place of the
    // frames left out, naming the session to read again.
    let caught_up = slow.collect_until(|f| f["type"] == "resync").await;
    let resync = caught_up.last().expect("frames, then a resync");
    assert_eq!(resync, &json!({ "type": "resync", "sessionId": session }), "{caught_up:#?}");
    // Whatever else it had coming (more of the same) is read.
    while slow.next_within(std::time::Duration::from_secs(2)).await.is_some() {}
    // Still open and following: the next run's frames come as before (its
    // end, or a resync in its place, the queue being one frame long).
    let answer = server.say(&session, "Say little.").await;
    assert_eq!(answer["result"], "Short.");
    let run = answer["runId"].clone();
    let next = slow
        .collect_until(|f| f["type"] == "resync" || (f["runId"] == run && f["event"]["type"] == "run_finished"))
        .await;
    assert!(next.iter().any(|f| f["runId"] == run), "the new run's frames came: {next:#?}");
    server.stop().await;
}

#[tokio::test]
async fn a_burst_on_other_sessions_never_reaches_a_socket() {
    let big = "x".repeat(256 * 1024);
    let mut turns: Vec<Value> = (0..8).map(|_| text(&big)).collect();
    turns.push(text("Quiet."));
    let config = seri_server::ServerConfig { ws_queue: 64, ..seri_server::ServerConfig::default() };
    let server = Server::with(Value::Array(turns), config).await;
    let quiet_session = server.session().await;
    let busy_session = server.session().await;
    let mut quiet = server.ws().await;
    quiet.subscribe(json!({ "type": "subscribe", "sessionId": quiet_session })).await;
    // A client of the busy session that reads nothing, so its queue overflows.
    let mut busy = server.ws().await;
    busy.subscribe(json!({ "type": "subscribe", "sessionId": busy_session })).await;
    for i in 0..8 {
        let answer = server.say(&busy_session, &format!("Say a lot, {i}.")).await;
        assert_eq!(answer["status"], "succeeded");
    }
    let answer = server.say(&quiet_session, "Say little.").await;
    assert_eq!(answer["result"], "Quiet.");
    let frames = quiet.collect_until(|f| f["type"] == "run-event" && f["event"]["type"] == "run_finished").await;
    assert!(
        frames.iter().all(|f| f["sessionId"] == quiet_session.as_str() && f["type"] != "resync"),
        "only its own session's frames, none left out: {frames:#?}"
    );
    assert!(frames.last().is_some_and(|f| f["runId"] == answer["runId"]), "{frames:#?}");
    drop(busy);
    server.stop().await;
}
