//! A session's permission mode through the API: read, changed (recorded as
//! an event the transcript shows), in force for the session's next call,
//! and refused for bad input and another agent's session.

use serde_json::{Value, json};

use crate::support::{Server, TOKEN, text};

#[tokio::test]
async fn a_sessions_permission_mode_is_read_changed_and_in_force() {
    let write =
        json!({"tool_calls": [{"id": "w1", "name": "write_file", "arguments": {"path": "plan.txt", "content": "x"}}]});
    let server = Server::start(json!([write, text("My plan: write plan.txt.")])).await;
    let session = server.session().await;
    let path = format!("/api/sessions/{session}/permissions");
    let put = |body: Value, token: &str| {
        server.http.put(format!("{}{path}", server.url)).bearer_auth(token.to_owned()).json(&body).send()
    };
    assert_eq!(server.get_json(&path).await, json!({"mode": "default", "chosen": false}), "the server's until chosen");
    let changed: Value = put(json!({"mode": "plan"}), TOKEN).await.unwrap().json().await.unwrap();
    assert_eq!(changed, json!({"mode": "plan", "chosen": true}));
    assert_eq!(server.get_json(&path).await, changed, "it stays");

    assert_eq!(server.say(&session, "Write plan.txt").await["status"], "succeeded");
    let thread = server.thread(&session).await;
    assert!(thread.starts_with("[1] permission mode: plan\n"), "{thread}");
    assert!(thread.contains("permission denied write_file (plan_mode)"), "{thread}");
    let shown = server.get_json(&format!("/api/sessions/{session}")).await;
    assert_eq!(shown["session"]["permissionMode"], "plan");

    for bad in [json!({"mode": "yolo"}), json!({}), json!({"mode": "plan", "colour": 1})] {
        assert_eq!(put(bad.clone(), TOKEN).await.unwrap().status(), 400, "{bad}");
    }
    assert_eq!(put(json!({"mode": "bypass"}), &server.other_token).await.unwrap().status(), 404);
    let theirs =
        server.http.get(format!("{}{path}", server.url)).bearer_auth(&server.other_token).send().await.unwrap();
    assert_eq!(theirs.status(), 404, "another agent's session is a missing one");
    server.stop().await;
}
