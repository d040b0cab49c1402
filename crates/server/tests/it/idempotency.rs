//! `Idempotency-Key` on posted messages: a message posted again under its
//! key (at once, later, waiting or not) is queued and answered once, and
//! every post gets the first one's answer; another message under a used key
//! is refused with 422 naming the key; a malformed key with 400.

use serde_json::{Value, json};

use crate::support::Server;

/// A slow first answer (the posts overlap it) and one that would only be
/// given to a message answered twice.
fn turns() -> Value {
    json!([{ "text": "Once.", "delay_ms": 300 }, { "text": "Twice." }])
}

async fn post(server: &Server, session: &str, key: &str, body: Value) -> (u16, Value) {
    let response = server
        .post(&format!("/api/sessions/{session}/messages"), body)
        .header("Idempotency-Key", key)
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

#[tokio::test]
async fn a_message_posted_again_under_its_key_is_answered_once_with_one_answer() {
    let server = Server::start(turns()).await;
    let session = server.session().await;
    let body = json!({ "text": "Only once, please." });
    let (a, b, c) = tokio::join!(
        post(&server, &session, "key-1", body.clone()),
        post(&server, &session, "key-1", body.clone()),
        post(&server, &session, "\"key-1\"", body.clone()),
    );
    assert_eq!((a.0, b.0, c.0), (200, 200, 200), "{a:?} {b:?} {c:?}");
    assert_eq!((a.1["status"].as_str(), a.1["result"].as_str()), (Some("succeeded"), Some("Once.")), "{a:?}");
    assert_eq!((&a.1, &a.1), (&b.1, &c.1), "every post gets the first one's answer");
    // Later, after the answer: the same answer again, nothing queued.
    let later = post(&server, &session, "key-1", body.clone()).await;
    assert_eq!(later, a);
    let thread = server.thread(&session).await;
    assert_eq!(thread.lines().count(), 2, "one message, one answer: {thread}");
    assert_eq!(server.store.jobs().unwrap().len(), 1);
    // Without waiting: 202 naming the same job and message.
    let (status, accepted) =
        post(&server, &session, "key-1", json!({ "text": "Only once, please.", "wait": false })).await;
    assert_eq!(status, 202, "{accepted}");
    assert_eq!((accepted["eventId"].clone(), accepted["seq"].clone()), (a.1["eventId"].clone(), json!(1)));
    assert_eq!(accepted["jobId"].as_str(), Some(server.store.jobs().unwrap()[0].id.as_str()));
    server.stop().await;
}

#[tokio::test]
async fn posts_not_waiting_under_one_key_are_accepted_as_one_job() {
    let server = Server::start(turns()).await;
    let session = server.session().await;
    let body = json!({ "text": "Fire and forget.", "wait": false });
    let (a, b) = tokio::join!(post(&server, &session, "k", body.clone()), post(&server, &session, "k", body.clone()));
    assert_eq!((a.0, b.0), (202, 202), "{a:?} {b:?}");
    assert_eq!(a.1, b.1, "the same job, message and run");
    // A waiting post under the key gets the job's answer.
    let answered = post(&server, &session, "k", json!({ "text": "Fire and forget." })).await;
    assert_eq!((answered.0, answered.1["result"].as_str()), (200, Some("Once.")), "{answered:?}");
    assert_eq!(answered.1["eventId"], a.1["eventId"]);
    assert_eq!(server.store.jobs().unwrap().len(), 1);
    assert_eq!(server.thread(&session).await.lines().count(), 2);
    server.stop().await;
}

#[tokio::test]
async fn another_message_under_a_used_key_is_422_and_a_bad_key_400() {
    let server = Server::start(turns()).await;
    let (session, other) = (server.session().await, server.session().await);
    let first = post(&server, &session, "k-7", json!({ "text": "One thing." })).await;
    assert_eq!(first.0, 200, "{first:?}");
    let job = server.store.jobs().unwrap()[0].id.clone();
    let (status, refused) = post(&server, &session, "k-7", json!({ "text": "Another thing." })).await;
    assert_eq!(status, 422, "{refused}");
    assert_eq!(refused["error"]["code"], "idempotency_key_reused");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("`k-7`") && message.contains(&job), "{message}");
    // The same text as a script is another message too.
    let (status, _) = post(&server, &session, "k-7", json!({ "text": "One thing.", "runKind": "script" })).await;
    assert_eq!(status, 422);
    // A key is its session's: another session takes it as new.
    let elsewhere = post(&server, &other, "k-7", json!({ "text": "Another thing." })).await;
    assert_eq!((elsewhere.0, elsewhere.1["result"].as_str()), (200, Some("Twice.")), "{elsewhere:?}");
    for bad in ["", "\"\"", "has space", &"x".repeat(256)] {
        let (status, body) = post(&server, &session, bad, json!({ "text": "Hm." })).await;
        assert_eq!((status, body["error"]["code"].as_str()), (400, Some("bad_idempotency_key")), "{bad:?}: {body}");
    }
    assert_eq!(server.store.jobs().unwrap().len(), 2, "nothing refused was queued");
    assert_eq!(server.thread(&session).await.lines().count(), 2);
    server.stop().await;
}
